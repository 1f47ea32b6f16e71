// Batch transform of positions by one 4x4 matrix (the "transform Vec3 by Matrix4x4" snippet seed).
//
// Layout choice: the textbook SPMD version puts one vertex in each lane and reads src[i].x with a stride of
// three floats, which compiles to gathers and scatters and ran slower than scalar code on this machine
// class. Here the gang is spread *horizontally*: each group of four lanes holds the four output components
// of one vertex, so a gang of W lanes handles W/4 vertices at once. The input of those vertices is one
// contiguous, unaligned vector load; x, y and z are broadcast into their group with constant shuffles; three
// fused multiply-adds with the matrix columns produce the result, and the result is one contiguous store.
// There is not a single gather or scatter in the loop, and the code is the same for every gang width.

#include "common.isph"

// Lane layout helpers: lane l works on vertex l / 4 of the group, output component l % 4.
static inline varying int vertex_of_lane() { return programIndex >> 2; }
static inline varying int component_of_lane() { return programIndex & 3; }

// Column c of the matrix, replicated into every group of four lanes.
static inline varying float matrix_column(uniform const float m[16], uniform int c)
{
    return m[4 * c + component_of_lane()];
}

// M * (x, y, z, 1) for the W/4 vertices whose 3*W/4 floats start the vector `packed`.
static inline varying float transform_group(varying float packed, varying float c0, varying float c1,
                                            varying float c2, varying float c3)
{
    const varying int v3 = 3 * vertex_of_lane();
    const varying float x = shuffle(packed, v3);
    const varying float y = shuffle(packed, v3 + 1);
    const varying float z = shuffle(packed, v3 + 2);
    return c3 + x * c0 + y * c1 + z * c2;
}

// Each main loop below handles four groups (programCount vertices) per iteration. A one-group loop is so
// short that its speed depended on where the linker happened to place it (0.30 or 0.55 ns per vertex for
// the same AVX2 code, measured here); four independent groups give the out-of-order core enough work
// that placement stops mattering, and they let transform_points_vec3 store three whole vectors.

// dst[i] = M * (src[i], 1) for i in [0, n). src holds 3n floats, dst holds 4n floats.
export void EXPORT(transform_points_vec4)(uniform const float src[], uniform float dst[], uniform int n,
                                          uniform const float m[16])
{
    const uniform int per_group = programCount / 4;
    const varying float c0 = matrix_column(m, 0);
    const varying float c1 = matrix_column(m, 1);
    const varying float c2 = matrix_column(m, 2);
    const varying float c3 = matrix_column(m, 3);

    uniform int i = 0;
    // A group's full-width load reads programCount floats from 3i, a little past the 3*per_group floats it
    // needs, so each unmasked loop runs only while its last load stays inside src.
    for (; 3 * (i + 3 * per_group) + programCount <= 3 * n; i += 4 * per_group) {
        dst[4 * i + programIndex] = transform_group(src[3 * i + programIndex], c0, c1, c2, c3);
        dst[4 * (i + per_group) + programIndex] =
            transform_group(src[3 * (i + per_group) + programIndex], c0, c1, c2, c3);
        dst[4 * (i + 2 * per_group) + programIndex] =
            transform_group(src[3 * (i + 2 * per_group) + programIndex], c0, c1, c2, c3);
        dst[4 * (i + 3 * per_group) + programIndex] =
            transform_group(src[3 * (i + 3 * per_group) + programIndex], c0, c1, c2, c3);
    }
    for (; 3 * i + programCount <= 3 * n; i += per_group) {
        dst[4 * i + programIndex] = transform_group(src[3 * i + programIndex], c0, c1, c2, c3);
    }
    // Tail: masked loads and stores touch exactly the remaining vertices.
    for (; i < n; i += per_group) {
        const uniform int left = n - i;
        varying float packed = 0.0f;
        if (programIndex < 3 * left)
            packed = src[3 * i + programIndex];
        const varying float out = transform_group(packed, c0, c1, c2, c3);
        if (programIndex < 4 * left)
            dst[4 * i + programIndex] = out;
    }
}

// Where lane l of packed output vector k (k = 0, 1, 2) comes from, when four groups of results r0..r3
// (4*per_group vertices, x y z w each) are packed into 3*programCount floats of x y z. Output float
// j = k*programCount + l is component j % 3 of vertex j / 3, which lies in group k or k + 1; the index
// selects from the pair (r_k, r_k+1) as the two-source shuffle expects.
static inline varying int pack_index(uniform int k)
{
    const uniform int per_group = programCount / 4;
    const varying int j = k * programCount + programIndex;
    const varying int vertex = j / 3;
    const varying int group = vertex / per_group;
    return (group - k) * programCount + (vertex % per_group) * 4 + j % 3;
}

// dst[i] = (M * (src[i], 1)).xyz for i in [0, n): the affine case, 3n floats in and 3n floats out.
// The w row of the matrix is not used, and no perspective divide happens.
export void EXPORT(transform_points_vec3)(uniform const float src[], uniform float dst[], uniform int n,
                                          uniform const float m[16])
{
    const uniform int per_group = programCount / 4;
    const varying float c0 = matrix_column(m, 0);
    const varying float c1 = matrix_column(m, 1);
    const varying float c2 = matrix_column(m, 2);
    const varying float c3 = matrix_column(m, 3);
    const varying int p0 = pack_index(0);
    const varying int p1 = pack_index(1);
    const varying int p2 = pack_index(2);
    // Compaction for a single group: lane l takes component l % 3 of vertex l / 3. Lanes at and past
    // 3*per_group only matter as padding (the index is kept in range).
    const varying int pack = (4 * (programIndex / 3) + programIndex % 3) % programCount;

    uniform int i = 0;
    // Four groups make exactly three whole output vectors, so these stores never overlap.
    for (; 3 * (i + 3 * per_group) + programCount <= 3 * n; i += 4 * per_group) {
        const varying float r0 = transform_group(src[3 * i + programIndex], c0, c1, c2, c3);
        const varying float r1 = transform_group(src[3 * (i + per_group) + programIndex], c0, c1, c2, c3);
        const varying float r2 = transform_group(src[3 * (i + 2 * per_group) + programIndex], c0, c1, c2, c3);
        const varying float r3 = transform_group(src[3 * (i + 3 * per_group) + programIndex], c0, c1, c2, c3);
        dst[3 * i + programIndex] = shuffle(r0, r1, p0);
        dst[3 * i + programCount + programIndex] = shuffle(r1, r2, p1);
        dst[3 * i + 2 * programCount + programIndex] = shuffle(r2, r3, p2);
    }
    // Single groups: the padding lanes of each full-width store land on the next vertices, which the
    // following iteration (or the masked tail) overwrites; the loop runs only while the store fits in dst.
    for (; 3 * i + programCount <= 3 * n; i += per_group) {
        const varying float out = transform_group(src[3 * i + programIndex], c0, c1, c2, c3);
        dst[3 * i + programIndex] = shuffle(out, pack);
    }
    for (; i < n; i += per_group) {
        const uniform int left = n - i;
        varying float packed = 0.0f;
        if (programIndex < 3 * left)
            packed = src[3 * i + programIndex];
        const varying float out = shuffle(transform_group(packed, c0, c1, c2, c3), pack);
        if (programIndex < 3 * min(left, per_group))
            dst[3 * i + programIndex] = out;
    }
}
