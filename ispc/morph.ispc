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
