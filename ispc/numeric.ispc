// The fast half of the numeric rules (src/numeric.rs): one vectorized pass that answers only "every
// value is fine". Where it says no, the Rust side searches the values serially and names the first one
// that breaks a rule, so these kernels never need to say which.
//
// A scan in baseline x86-64 Rust (SSE2, four floats a step) costs several times as much as these on the
// ISA that runs the job. Local to model checks its outputs inside its own kernels instead (see
// sum_finite in hierarchy.ispc): a scan right after the kernel waits for its stores to drain.

#include "common.isph"

// The exponent bits of a float: all ones for NaN and the infinities, and for nothing else.
#define EXPONENT 0x7f800000

// Whether each of the n floats of x is finite. Integer tests on the bits, so that no floating-point
// optimization can reason NaN away.
export uniform bool EXPORT(finite_floats)(uniform const float x[], uniform int n)
{
    varying int bad = 0;
    foreach (i = 0 ... n) {
        bad |= (intbits(x[i]) & EXPONENT) == EXPONENT ? 1 : 0;
    }
    return reduce_max(bad) == 0;
}

// Whether one quaternion meets the rotation rule: its squared length is a normal float (NaN fails).
static inline varying bool rotation_ok(varying float x, varying float y, varying float z, varying float w)
{
    const varying float n = x * x + y * y + z * z + w * w;
    return n >= floatbits(0x00800000) && n <= floatbits(0x7f7fffff);
}

// Whether each of the n quaternions of q (x, y, z, w: four floats each) meets the rotation rule. Whole
// gangs de-interleave one contiguous run of quaternions.
export uniform bool EXPORT(rotations_ok)(uniform const float q[], uniform int n)
{
    varying bool ok = true;
    uniform int i = 0;
    for (; i + programCount <= n; i += programCount) {
        varying float x, y, z, w;
        aos_to_soa4(&q[4 * i], &x, &y, &z, &w);
        ok = and(ok, rotation_ok(x, y, z, w));
    }
    // The tail: copied after identity padding into a whole gang's run, so that it de-interleaves the
    // same way (strided loads in a partial gang compile to gathers, slow on every x86 ISA).
    if (i < n) {
        uniform float tail[4 * programCount];
        foreach (k = 0 ... programCount) {
            tail[4 * k] = tail[4 * k + 1] = tail[4 * k + 2] = 0.0f;
            tail[4 * k + 3] = 1.0f;
        }
        foreach (k = 0 ... 4 * (n - i))
            tail[k] = q[4 * i + k];
        varying float x, y, z, w;
        aos_to_soa4(tail, &x, &y, &z, &w);
        ok = and(ok, rotation_ok(x, y, z, w));
    }
    return all(ok);
}
