// Two positions-only skinning methods from the seeds, kept as measured alternatives to the blended-matrix
// kernels in skin.ispc.
//
// Palette entries are row-major 4x4 (16 floats, 64-byte aligned; rows 0..2 are the affine 3x4), the same
// palette every skinning kernel reads.

#include "common.isph"

#include "rows.isph"

// van Waveren's positions-only skinning from weighted base vectors, with a variable influence count per
// vertex. Vertex v (in original order) has counts[v] influences; influence f (running over all vertices)
// is palette joint joints[f] with the weighted base vector bases[4f..4f+4] = w * (p, 1). The position is
// sum_f palette[joints[f]] * bases[f]. As in the seed, the horizontal additions of each row's dot product
// wait until every influence is in: per influence, each chunk costs one multiply-add.
export void EXPORT(skin_p_base)(uniform int count, uniform const uint8 counts[], uniform const uint32 joints[],
                                uniform const float bases[], uniform const float palette[], uniform float pos[])
{
    uniform int f = 0;
    for (uniform int v = 0; v < count; v++) {
        varying float acc[CHUNKS];
#pragma unroll
        for (uniform int ch = 0; ch < CHUNKS; ch++)
            acc[ch] = 0.0f;
        const uniform int n = counts[v];
        for (uniform int i = 0; i < n; i++, f++) {
            // The base vector, repeated in every group of four lanes (one per matrix row).
            varying float raw = 0.0f;
            if (programIndex < 4)
                raw = bases[4 * f + programIndex];
            const varying float b = shuffle(raw, programIndex & 3);
            const uniform float * uniform m = palette + 16 * joints[f];
#pragma unroll
            for (uniform int ch = 0; ch < CHUNKS; ch++)
                acc[ch] += m[ch * programCount + programIndex] * b;
        }
        const varying float p = row_sums(acc);
        if (programIndex < 3)
            pos[3 * v + programIndex] = p;
    }
}

// Bone-major accumulation (the VFP seed): for each bone, the list of (vertex, weight) it moves, and the
// positions are summed into the output bone after bone. Bone b's entries are [starts[b], starts[b + 1]);
// entry e names vertex vertex[e] with weight weight[e], and carries that vertex's bind position in px[e],
// py[e], pz[e] (copied per entry at prepare time, so the inputs are contiguous loads; only the output is
// gathered and scattered). A vertex appears at most once per bone, so the lanes of one step never write
// the same vertex. pos must be zero on entry (vertices no bone moves stay zero).
export void EXPORT(skin_p_bone_major)(uniform int bones, uniform const uint32 starts[], uniform const uint32 vertex[],
                                      uniform const float weight[], uniform const float px[], uniform const float py[],
                                      uniform const float pz[], uniform const float palette[], uniform float pos[])
{
    for (uniform int b = 0; b < bones; b++) {
        const uniform float * uniform m = palette + 16 * b;
        const uniform float m00 = m[0], m01 = m[1], m02 = m[2], m03 = m[3];
        const uniform float m10 = m[4], m11 = m[5], m12 = m[6], m13 = m[7];
        const uniform float m20 = m[8], m21 = m[9], m22 = m[10], m23 = m[11];
        foreach (e = starts[b]...starts[b + 1]) {
            const float x = px[e], y = py[e], z = pz[e], w = weight[e];
            const int o = 3 * (int)vertex[e];
            pos[o] += w * (m00 * x + m01 * y + m02 * z + m03);
            pos[o + 1] += w * (m10 * x + m11 * y + m12 * z + m13);
            pos[o + 2] += w * (m20 * x + m21 * y + m22 * z + m23);
        }
    }
}
