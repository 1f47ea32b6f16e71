// The deterministic build of hierarchy.ispc (Precision::Deterministic): local to model and the
// palettes, of one character and of crowds, compiled with --opt=disable-fma and
// -DISA_SUFFIX=_det_<isa> (see det_skin.ispc). Each lane computes one matrix element with the pairing
// src/reference/hierarchy.rs's affine_mul writes, (a0 b0 + t) + (a1 b1 + a2 b2) (the crowd kernels
// switch to it under ISK_DETERMINISTIC), and the TRS matrix with the reference's operations
// (2 / |q|^2 is an IEEE division); lanes only move values between them, so every ISA gives the
// reference's bits.

#define ISK_DETERMINISTIC 1
#include "hierarchy.ispc"
