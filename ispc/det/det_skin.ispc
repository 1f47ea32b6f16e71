// The deterministic build of skin.ispc (Precision::Deterministic): the same kernel, compiled with
// --opt=disable-fma (build.rs's ISPC_DET_FLAGS; tools/cross-kernels runs llc with -fp-contract=off) and
// with -DISA_SUFFIX=_det_<isa>, so that its exports are skin_group_det_avx2 and so on, beside the fast
// library's. ISK_DETERMINISTIC makes the one approximation IEEE: renormalization divides by the square
// root whatever the mode.
//
// Why this gives the serial reference's bits on every ISA and gang width: every value the kernel
// computes is one vertex's (or one matrix element's) own chain of operations, in the order the
// reference writes (src/reference/skinning.rs follows the kernel's order: the blend from the first
// product, each row from its translation or from +0.0, the dual quaternions' sums from +0.0); lanes
// only move values (transposes, stores), never combine them; and without fused multiply-adds each
// operation rounds as IEEE 754 says, as Rust's scalar operations do.

#define ISK_DETERMINISTIC 1
#include "skin.ispc"
