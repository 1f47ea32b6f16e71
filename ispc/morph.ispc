// Morph targets (glTF `targets`): one attribute stream of a mesh, base + sum_k w_k * delta_k.
//
// The attribute is a flat float stream (3 floats per vertex for positions, normals and tangent xyz), so
// the kernel is a plain SoA-friendly foreach over floats: every lane reads contiguous floats of the base
// and of each delta, with no gather, and the result is one contiguous store. Rust passes only the targets
// whose weight is not zero, at most MORPH_BATCH of them per call (an array of pointers, one per target);
// more active targets take several calls, the later ones accumulating onto `out` instead of `base`.
//
// The sum is taken in target order, base first, as the serial reference does; ISPC may fuse each
// multiply-add, which the parity test's tolerance allows for.

#include "common.isph"

// out[i] = (accumulate ? out[i] : base[i]) + sum_{k < targets} weights[k] * deltas[k][i], for i in [0, n).
// base, out and every deltas[k] hold at least n floats; base is not read when accumulate is set.
export void EXPORT(morph_floats)(uniform const float base[], uniform float out[], uniform int n,
                                 uniform const float *uniform deltas[], uniform const float weights[],
                                 uniform int targets, uniform bool accumulate)
{
    if (accumulate) {
        foreach (i = 0 ... n) {
            float acc = out[i];
            for (uniform int k = 0; k < targets; ++k)
                acc += weights[k] * deltas[k][i];
            out[i] = acc;
        }
    } else {
        foreach (i = 0 ... n) {
            float acc = base[i];
            for (uniform int k = 0; k < targets; ++k)
                acc += weights[k] * deltas[k][i];
            out[i] = acc;
        }
    }
}

// The same sum over strided rows, for one attribute of a prepared mesh's AoSoA blocks (see
// InfluenceGroup in src/layout/mesh.rs): row r of the output starts at out + r * stride, row r of the
// base at base + r * stride, and row r of each delta at deltas[k] + r * row, packed. With row = 48 (x, y
// and z runs of 16 vertices) and stride the block's floats, the skinning pass reads the morphed vertices
// where it reads the bind pose, and neither the prepared mesh's other attributes nor its padding are
// touched. Every ISA's gang width divides 48, so no row needs a masked tail.
//
// out[r*stride + j] = (accumulate ? out : base)[r*stride + j] + sum_{k < targets} weights[k] * deltas[k][r*row + j]
// for r in [0, rows), j in [0, row). base and out hold at least (rows - 1) * stride + row floats, every
// deltas[k] rows * row; base is not read when accumulate is set.
export void EXPORT(morph_rows)(uniform const float base[], uniform float out[], uniform int rows,
                               uniform int row, uniform int stride,
                               uniform const float *uniform deltas[], uniform const float weights[],
                               uniform int targets, uniform bool accumulate)
{
    uniform const float *uniform from = accumulate ? (uniform const float *uniform)out : base;
    for (uniform int r = 0; r < rows; ++r) {
        uniform int o = r * stride;
        uniform int d = r * row;
        foreach (j = 0 ... row) {
            float acc = from[o + j];
            for (uniform int k = 0; k < targets; ++k)
                acc += weights[k] * deltas[k][d + j];
            out[o + j] = acc;
        }
    }
}
