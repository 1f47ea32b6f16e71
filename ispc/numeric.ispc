// The fast half of the numeric rules (src/numeric.rs): one vectorized pass that answers only "every
// float is finite". Where it says no, the Rust side searches the floats serially and names the first one
// that breaks a rule, so the kernel never needs to say which.
//
// A scan in baseline x86-64 Rust (SSE2, four floats a step) costs several times as much as this one on
// the ISA that runs the job. Local to model checks its outputs inside its own kernels instead (see
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
