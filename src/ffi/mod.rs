//! The FFI layer: the only place in the crate with `unsafe`.
//!
//! build.rs links one kernel library per ISA, packaged or compiled by ispc_compile, whose bindgen
//! declarations are in `bindings` (`transform_points_vec4_sse4`, `..._avx2`, ...). Each compiled ISA gets one
//! static `Kernels` table of function pointers, reachable only through a [`Runnable`], which proves
//! that the CPU supports the ISA.
//!
//! One file per kernel family, each with safe wrappers over plain slices, glam values and the checked
//! layouts of [`crate::layout`]; nothing here knows the jobs or decides how work is scheduled. Every
//! wrapper asserts, in release builds too, each precondition its kernel relies on that the types do
//! not already guarantee: a broken one is a bug in the calling job, never an input error, and it
//! panics instead of writing out of bounds. Long inputs are split so that the kernels' 32-bit index
//! arithmetic (ISPC's default `--addressing=32`) never overflows.

#![allow(unsafe_code)]

pub(crate) mod blend;
pub(crate) mod compact;
pub(crate) mod cpuid;
#[cfg(feature = "experiments")]
pub(crate) mod experiments;
pub(crate) mod hierarchy;
pub(crate) mod morph;
pub(crate) mod numeric;
pub(crate) mod palette;
pub(crate) mod sample;
pub(crate) mod skin;
pub(crate) mod transform;

use crate::isa::Isa;
use crate::layout::palette::PaletteMatrix;
use bindings::{FusedMorphArgs, SkinGroupArgs};
use glam::{Mat4, Quat, Vec3, Vec4};

/// The generated declarations: the structs the kernels share (one copy, whichever way the kernels
/// were built, and also in a reference-only build, where nothing calls a kernel), then one module per
/// compiled ISA (`ispc_skinning_avx2::skin_group_avx2`, ...) from ispc_compile, packaged or fresh.
mod bindings {
    #![allow(
        non_upper_case_globals,
        non_camel_case_types,
        non_snake_case,
        dead_code
    )]
    include!(env!("ISPC_SKINNING_TYPES"));
    #[cfg(ispc_sse4)]
    include!(concat!(env!("ISPC_OUT_DIR"), "/ispc_skinning_sse4.rs"));
    #[cfg(ispc_avx2)]
    include!(concat!(env!("ISPC_OUT_DIR"), "/ispc_skinning_avx2.rs"));
    #[cfg(ispc_avx512)]
    include!(concat!(env!("ISPC_OUT_DIR"), "/ispc_skinning_avx512.rs"));
    #[cfg(ispc_neon)]
    include!(concat!(env!("ISPC_OUT_DIR"), "/ispc_skinning_neon.rs"));
    // The deterministic kernels (ispc/det/), one more library per ISA.
    #[cfg(ispc_sse4)]
    include!(concat!(env!("ISPC_OUT_DIR"), "/ispc_skinning_det_sse4.rs"));
    #[cfg(ispc_avx2)]
    include!(concat!(env!("ISPC_OUT_DIR"), "/ispc_skinning_det_avx2.rs"));
    #[cfg(ispc_avx512)]
    include!(concat!(
        env!("ISPC_OUT_DIR"),
        "/ispc_skinning_det_avx512.rs"
    ));
    #[cfg(ispc_neon)]
    include!(concat!(env!("ISPC_OUT_DIR"), "/ispc_skinning_det_neon.rs"));
}

/// The kernels' arrays are plain f32 runs; these layouts are what makes the pointer casts below valid.
const _: () = assert!(std::mem::size_of::<Vec3>() == 12 && std::mem::align_of::<Vec3>() == 4);
const _: () = assert!(std::mem::size_of::<Vec4>() == 16 && std::mem::align_of::<Vec4>() >= 4);
// Mat4 is four Vec4 columns with no padding: 16 contiguous f32, column-major. Quat is x, y, z, w.
const _: () = assert!(std::mem::size_of::<Mat4>() == 64 && std::mem::align_of::<Mat4>() >= 4);
const _: () = assert!(std::mem::size_of::<Quat>() == 16 && std::mem::align_of::<Quat>() >= 4);
// A palette entry is 16 f32 (a row-major 4x4), one 64-byte line.
const _: () = assert!(
    std::mem::size_of::<PaletteMatrix>() == 64 && std::mem::align_of::<PaletteMatrix>() == 64
);

// SkinGroupArgs is shared with ISPC through the generated header: nine i32 (and four bytes of padding),
// five input pointers, then three (pointer, stride) outputs with two flags and the box's pointer, as
// ispc/skin.ispc declares it.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<SkinGroupArgs>() == 136);
// FusedMorphArgs (ispc/skin_morph.ispc): eight i32, five input pointers, 24 delta pointers, 24
// weights, then three output pointers and the box's pointer.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<FusedMorphArgs>() == 392);

/// Largest item count per kernel call. The largest byte offset a kernel computes is 16 bytes times this
/// (a Vec4 output), 256 MiB, far below i32::MAX.
const MAX_ITEMS_PER_CALL: usize = 1 << 24;

type TransformPointsFn =
    unsafe extern "C" fn(src: *const f32, dst: *mut f32, n: i32, m: *const f32);
/// `finite_floats(x, n)` (ispc/numeric.ispc): whether every float is finite.
type ScanFn = unsafe extern "C" fn(*const f32, i32) -> bool;

/// `morph_floats(base, out, n, deltas, weights, targets, accumulate)` (ispc/morph.ispc).
type MorphFloatsFn =
    unsafe extern "C" fn(*const f32, *mut f32, i32, *mut *const f32, *const f32, i32, bool);
/// `morph_rows(base, out, rows, row, stride, deltas, weights, targets, accumulate)` (ispc/morph.ispc).
type MorphRowsFn = unsafe extern "C" fn(
    *const f32,
    *mut f32,
    i32,
    i32,
    i32,
    *mut *const f32,
    *const f32,
    i32,
    bool,
);

/// The two local-to-model kernels return whether every model element they wrote is finite (a false
/// `false` is possible for elements near `f32::MAX`; the caller then checks exactly).
type LtmJointFn =
    unsafe extern "C" fn(*const f32, *mut f32, *const i32, i32, i32, *const f32) -> bool;
type LtmJointTrsFn = unsafe extern "C" fn(
    *const f32,
    *const f32,
    *const f32,
    *mut f32,
    *const i32,
    i32,
    i32,
    *const f32,
) -> bool;
/// `ltm_joint_trs` plus the palette plan: entry starts, (skin, slot) pairs, each entry's inverse bind
/// rows, and one palette pointer per skin.
type LtmPaletteTrsFn = unsafe extern "C" fn(
    *const f32,
    *const f32,
    *const f32,
    *mut f32,
    *const i32,
    i32,
    i32,
    *const f32,
    *const i32,
    *const i32,
    *const f32,
    *mut *mut f32,
) -> bool;
type LtmRootsSoaFn = unsafe extern "C" fn(*const f32, *mut f32, i32, i32, i32, *const f32);
type LtmChildrenSoaFn =
    unsafe extern "C" fn(*const f32, *mut f32, i32, *const u32, *const u32, i32, i32);
type LtmLevelSoaFn = unsafe extern "C" fn(*const f32, *mut f32, i32, *const i32, i32, i32);
/// Returns whether every model element written is finite.
type CrowdLtmTrsFn =
    unsafe extern "C" fn(*const f32, *mut f32, *const f32, i32, *const i32, i32) -> bool;
/// Returns whether every palette element written is finite.
type CrowdPaletteFn =
    unsafe extern "C" fn(*const f32, *const f32, *const u64, i32, i32, *mut f32, bool) -> bool;
type SkinPaletteFn =
    unsafe extern "C" fn(*const f32, *const f32, *const u64, i32, i32, *mut f32) -> bool;
type LevelSumChildrenFn = unsafe extern "C" fn(*mut f32, *const u32, *const u32, i32);
type LevelSumLevelsFn = unsafe extern "C" fn(*mut f32, *const i32, *const u32, i32);
/// One skinning call: the kernel reads its arguments from one struct (see `SkinGroupArgs` in
/// ispc/skin.ispc, of which bindgen made the Rust copy).
type SkinGroupFn = unsafe extern "C" fn(*const SkinGroupArgs);
/// The experimental fused morph + skin call (ispc/skin_variants.ispc), its arguments in one struct.
type SkinMorphFusedFn = unsafe extern "C" fn(*const FusedMorphArgs);
type SkinPBaseFn =
    unsafe extern "C" fn(i32, *const u8, *const u32, *const f32, *const f32, *mut f32);
type SkinPBoneMajorFn = unsafe extern "C" fn(
    i32,
    *const u32,
    *const u32,
    *const f32,
    *const f32,
    *const f32,
    *const f32,
    *const f32,
    *mut f32,
);
/// One blend: per-layer pointer arrays (translations, rotations, scales, joint weights or null), the
/// weights, the normal and additive layer counts, the rest pose, the threshold, the outputs and the joints.
type BlendTrsFn = unsafe extern "C" fn(
    *const *const f32,
    *const *const f32,
    *const *const f32,
    *const *const f32,
    *const f32,
    i32,
    i32,
    *const f32,
    *const f32,
    *const f32,
    f32,
    *mut f32,
    *mut f32,
    *mut f32,
    i32,
);
/// A clip's pose sampled (ispc/sample.ispc `sample_pose`): the transposed values, the groups and their
/// count, the tracks' levels, per-timeline key, fraction, interval and held flag, and the translation,
/// rotation and scale outputs; returns whether every value written is finite.
type SamplePoseFn = unsafe extern "C" fn(
    *const f32,
    *const i32,
    i32,
    *const i32,
    *const i32,
    *const f32,
    *const f32,
    *const i32,
    *mut f32,
    *mut f32,
    *mut f32,
) -> bool;
/// The crowd form (lanes across instances): values; per merged track level, interpolation, timeline,
/// offset and element; the track count, the first instance and the instance count; the located arrays;
/// the joint count and the crowd pose written.
type SampleCrowdFn = unsafe extern "C" fn(
    *const f32,
    *const i32,
    *const i32,
    *const i32,
    *const i32,
    *const i32,
    i32,
    i32,
    i32,
    *const i32,
    *const f32,
    *const f32,
    *const i32,
    i32,
    *mut f32,
) -> bool;
/// A compact clip's pose sampled (ispc/det/compact.ispc `compact_sample`): the stream; per frame its
/// record's byte and segment row; alpha; the lane tables (offsets, masks in place, 2^-(offset % 8) /
/// (2^bits - 1), minimums, extents, segment ranges, constants); the groups and their count; levels and
/// flags; the translation, rotation and scale outputs.
type CompactSampleFn = unsafe extern "C" fn(
    *const u8,
    i32,
    i32,
    i32,
    i32,
    f32,
    *const i32,
    *const i32,
    *const f32,
    *const f32,
    *const f32,
    *const u16,
    *const f32,
    *const i32,
    i32,
    *const i32,
    *const i32,
    *mut f32,
    *mut f32,
    *mut f32,
);
/// One compact frame decoded (ispc/det/compact.ispc `compact_decode`): the stream; the record's byte
/// and segment row; the lane tables (as `CompactSampleFn`'s); the lane component count; the groups and
/// their count; the decoded frame.
type CompactDecodeFn = unsafe extern "C" fn(
    *const u8,
    i32,
    i32,
    *const i32,
    *const i32,
    *const f32,
    *const f32,
    *const f32,
    *const u16,
    i32,
    *const i32,
    i32,
    *mut f32,
);
/// A compact clip's pose between two decoded frames (ispc/det/compact.ispc `compact_interpolate`): the
/// two frames, the lane component count, alpha, the constants, the groups and their count, levels and
/// flags, the translation, rotation and scale outputs.
type CompactInterpolateFn = unsafe extern "C" fn(
    *const f32,
    *const f32,
    i32,
    f32,
    *const f32,
    *const i32,
    i32,
    *const i32,
    *const i32,
    *mut f32,
    *mut f32,
    *mut f32,
);
type TrsToSoaFn = unsafe extern "C" fn(*const f32, *const f32, *const f32, *mut f32, i32, i32);

/// One ISA's kernels. Without the `experiments` feature the experiments' entries are never read.
#[derive(Debug)]
#[cfg_attr(not(feature = "experiments"), allow(dead_code))]
pub(crate) struct Kernels {
    transform_points_vec4: TransformPointsFn,
    transform_points_vec3: TransformPointsFn,
    morph_floats: MorphFloatsFn,
    morph_rows: MorphRowsFn,
    ltm_joint: LtmJointFn,
    ltm_joint_trs: LtmJointTrsFn,
    ltm_palette_trs: LtmPaletteTrsFn,
    ltm_roots_soa: LtmRootsSoaFn,
    ltm_children_soa: LtmChildrenSoaFn,
    ltm_level_soa: LtmLevelSoaFn,
    trs_to_soa: TrsToSoaFn,
    crowd_ltm_trs: CrowdLtmTrsFn,
    skin_palette: SkinPaletteFn,
    crowd_palette: CrowdPaletteFn,
    level_sum_children: LevelSumChildrenFn,
    level_sum_levels: LevelSumLevelsFn,
    skin_group: SkinGroupFn,
    skin_morph_fused: SkinMorphFusedFn,
    skin_p_base: SkinPBaseFn,
    skin_p_bone_major: SkinPBoneMajorFn,
    blend_trs: BlendTrsFn,
    finite_floats: ScanFn,
    sample_pose: SamplePoseFn,
    sample_crowd_tracks: SampleCrowdFn,
}

#[cfg(ispc_kernels)]
macro_rules! kernel_table {
    ($suffix:ident) => {
        pastey::paste! {
            {
            use bindings::[<ispc_skinning_ $suffix>] as isa;
            Kernels {
                transform_points_vec4: isa::[<transform_points_vec4_ $suffix>],
                transform_points_vec3: isa::[<transform_points_vec3_ $suffix>],
                morph_floats: isa::[<morph_floats_ $suffix>],
                morph_rows: isa::[<morph_rows_ $suffix>],
                ltm_joint: isa::[<ltm_joint_ $suffix>],
                ltm_joint_trs: isa::[<ltm_joint_trs_ $suffix>],
                ltm_palette_trs: isa::[<ltm_palette_trs_ $suffix>],
                ltm_roots_soa: isa::[<ltm_roots_soa_ $suffix>],
                ltm_children_soa: isa::[<ltm_children_soa_ $suffix>],
                ltm_level_soa: isa::[<ltm_level_soa_ $suffix>],
                trs_to_soa: isa::[<trs_to_soa_ $suffix>],
                crowd_ltm_trs: isa::[<crowd_ltm_trs_ $suffix>],
                skin_palette: isa::[<skin_palette_ $suffix>],
                crowd_palette: isa::[<crowd_palette_ $suffix>],
                level_sum_children: isa::[<level_sum_children_ $suffix>],
                level_sum_levels: isa::[<level_sum_levels_ $suffix>],
                skin_group: isa::[<skin_group_ $suffix>],
                skin_morph_fused: isa::[<skin_morph_fused_ $suffix>],
                skin_p_base: isa::[<skin_p_base_ $suffix>],
                skin_p_bone_major: isa::[<skin_p_bone_major_ $suffix>],
                blend_trs: isa::[<blend_trs_ $suffix>],
                finite_floats: isa::[<finite_floats_ $suffix>],
                sample_pose: isa::[<sample_pose_ $suffix>],
                sample_crowd_tracks: isa::[<sample_crowd_tracks_ $suffix>],
            }
            }
        }
    };
}

/// One ISA's deterministic kernels (ispc/det/: skin.ispc and hierarchy.ispc built again without fused
/// multiply-adds, exporting `name_det_<isa>`): the fast kernels' code and signatures, and the serial
/// reference's bits.
#[derive(Debug)]
pub(crate) struct DetKernels {
    ltm_joint: LtmJointFn,
    ltm_joint_trs: LtmJointTrsFn,
    crowd_ltm_trs: CrowdLtmTrsFn,
    skin_palette: SkinPaletteFn,
    crowd_palette: CrowdPaletteFn,
    skin_group: SkinGroupFn,
    compact_sample: CompactSampleFn,
    compact_decode: CompactDecodeFn,
    compact_interpolate: CompactInterpolateFn,
}

#[cfg(ispc_kernels)]
macro_rules! det_table {
    ($suffix:ident) => {
        pastey::paste! {
            {
            use bindings::[<ispc_skinning_det_ $suffix>] as isa;
            DetKernels {
                ltm_joint: isa::[<ltm_joint_det_ $suffix>],
                ltm_joint_trs: isa::[<ltm_joint_trs_det_ $suffix>],
                crowd_ltm_trs: isa::[<crowd_ltm_trs_det_ $suffix>],
                skin_palette: isa::[<skin_palette_det_ $suffix>],
                crowd_palette: isa::[<crowd_palette_det_ $suffix>],
                skin_group: isa::[<skin_group_det_ $suffix>],
                compact_sample: isa::[<compact_sample_det_ $suffix>],
                compact_decode: isa::[<compact_decode_det_ $suffix>],
                compact_interpolate: isa::[<compact_interpolate_det_ $suffix>],
            }
            }
        }
    };
}

#[cfg(ispc_sse4)]
static SSE4_DET: DetKernels = det_table!(sse4);
#[cfg(ispc_avx2)]
static AVX2_DET: DetKernels = det_table!(avx2);
#[cfg(ispc_avx512)]
static AVX512_DET: DetKernels = det_table!(avx512);
#[cfg(ispc_neon)]
static NEON_DET: DetKernels = det_table!(neon);

#[cfg(ispc_sse4)]
static SSE4: Kernels = kernel_table!(sse4);
#[cfg(ispc_avx2)]
static AVX2: Kernels = kernel_table!(avx2);
#[cfg(ispc_avx512)]
static AVX512: Kernels = kernel_table!(avx512);
#[cfg(ispc_neon)]
static NEON: Kernels = kernel_table!(neon);

/// The kernel tables of an ISA, or `None` when this build does not contain it.
fn kernels_for(isa: Isa) -> Option<(&'static Kernels, &'static DetKernels)> {
    match isa {
        #[cfg(ispc_sse4)]
        Isa::Sse4 => Some((&SSE4, &SSE4_DET)),
        #[cfg(ispc_avx2)]
        Isa::Avx2 => Some((&AVX2, &AVX2_DET)),
        #[cfg(ispc_avx512)]
        Isa::Avx512 => Some((&AVX512, &AVX512_DET)),
        #[cfg(ispc_neon)]
        Isa::Neon => Some((&NEON, &NEON_DET)),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// Proof that an ISA's kernels are linked into this binary and that this CPU can execute them.
/// Only [`Isa::runnable`](crate::Isa::runnable) hands one out, so holding it makes a kernel call safe
/// with respect to the ISA.
#[derive(Clone, Copy, Debug)]
pub struct Runnable {
    isa: Isa,
    kernels: &'static Kernels,
    det: &'static DetKernels,
    /// Whether the kernels with a deterministic form run it (Precision::Deterministic).
    deterministic: bool,
}

impl Runnable {
    /// The proof for `isa`, or `None` when its kernels are not linked or the CPU lacks a feature.
    pub(crate) fn new(isa: Isa) -> Option<Runnable> {
        let (kernels, det) = kernels_for(isa)?;
        isa.is_available().then_some(Runnable {
            isa,
            kernels,
            det,
            deterministic: false,
        })
    }

    /// The same ISA with the deterministic kernels (ispc/det/) in place of the fast ones, for the
    /// kernels that have one (local to model, palettes, skinning). Only the jobs that cover
    /// [`Precision::Deterministic`](crate::Precision::Deterministic) ask for it.
    pub(crate) fn deterministic(self) -> Runnable {
        Runnable {
            deterministic: true,
            ..self
        }
    }

    /// `det`'s kernel from the deterministic table when this proof asks for it, else `fast`'s from the
    /// fast one: for the wrappers of kernels that have both forms.
    fn pick<F>(
        self,
        fast: impl FnOnce(&'static Kernels) -> F,
        det: impl FnOnce(&'static DetKernels) -> F,
    ) -> F {
        if self.deterministic {
            det(self.det)
        } else {
            fast(self.kernels)
        }
    }

    /// The ISA this proof is for.
    pub fn isa(self) -> Isa {
        self.isa
    }

    /// The fast kernels, for a wrapper whose kernel has no deterministic form. A deterministic job
    /// runs such a stage on the serial reference and never reaches one; asserted, since reaching one
    /// would silently break the mode's promise of the reference's bits.
    fn kernels(self) -> &'static Kernels {
        assert!(
            !self.deterministic,
            "a kernel without a deterministic form, called for Precision::Deterministic"
        );
        self.kernels
    }

    /// The deterministic table, with either proof, for the kernels that have only that form (the
    /// compact decoder, which gives the serial decoder's bits in every precision).
    fn det_only_kernels(self) -> &'static DetKernels {
        self.det
    }

    /// The fast table for kernels whose results no precision changes (the finiteness scans), with
    /// either proof.
    fn exact_kernels(self) -> &'static Kernels {
        self.kernels
    }
}
