//! The FFI layer: the only place in the crate with `unsafe`.
//!
//! build.rs compiles each ISPC file once per ISA and bindgen turns the generated headers into the
//! declarations in `bindings` (`transform_points_vec4_sse4`, `..._avx2`, ...). Each compiled ISA gets one
//! static [`Kernels`] table of function pointers. A table is reachable only through
//! [`Runnable`](crate::isa::Runnable), which proves that the CPU supports the ISA.
//!
//! Every wrapper here is safe to call with any slices: it never passes a count larger than the slices it
//! was given, and it splits long slices into chunks so that the ISPC kernels' 32-bit index arithmetic
//! (ISPC's default `--addressing=32`) never overflows.

#![allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code
)]

use crate::crowd::{Threads, CROWD_LANES, MODEL_ELEMENTS, TRS_ELEMENTS};
use crate::hierarchy::{SoaMatrices, Trs};
use crate::isa::{Isa, Runnable};
use crate::mesh::{BaseVectorMesh, BoneMajorMesh, InfluenceTable, SkinnedMesh, SKIN_CHUNK};
use crate::palette::PaletteMatrix;
use crate::skeleton::Skeleton;
use crate::skin::OutputView;
use glam::{Mat4, Quat, Vec3, Vec4};
use std::ops::Range;

mod bindings {
    #![allow(
        non_upper_case_globals,
        non_camel_case_types,
        non_snake_case,
        dead_code
    )]
    include!(concat!(env!("OUT_DIR"), "/ispc_bindings.rs"));
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

/// Largest item count per kernel call. The largest byte offset a kernel computes is 16 bytes times this
/// (a Vec4 output), 256 MiB, far below i32::MAX.
pub(crate) const MAX_ITEMS_PER_CALL: usize = 1 << 24;

type TransformPointsFn =
    unsafe extern "C" fn(src: *const f32, dst: *mut f32, n: i32, m: *const f32);

type LtmJointFn = unsafe extern "C" fn(*const f32, *mut f32, *const i32, i32, i32, *const f32);
type LtmJointTrsFn = unsafe extern "C" fn(
    *const f32,
    *const f32,
    *const f32,
    *mut f32,
    *const i32,
    i32,
    i32,
    *const f32,
);
type LtmRootsSoaFn = unsafe extern "C" fn(*const f32, *mut f32, i32, i32, i32, *const f32);
type LtmChildrenSoaFn =
    unsafe extern "C" fn(*const f32, *mut f32, i32, *const u32, *const u32, i32, i32);
type LtmLevelSoaFn = unsafe extern "C" fn(*const f32, *mut f32, i32, *const i32, i32, i32);
type CrowdLtmTrsFn = unsafe extern "C" fn(*const f32, *mut f32, *const f32, i32, *const i32, i32);
type SkinPaletteFn = unsafe extern "C" fn(*const f32, *const f32, *const u32, i32, i32, *mut f32);
type LevelSumChildrenFn = unsafe extern "C" fn(*mut f32, *const u32, *const u32, i32);
type LevelSumLevelsFn = unsafe extern "C" fn(*mut f32, *const i32, *const u32, i32);
type SkinPntFn = unsafe extern "C" fn(
    i32,
    bool,
    i32,
    i32,
    i32,
    *const f32,
    *const u32,
    *const f32,
    *const u32,
    *const f32,
    *mut f32,
    i32,
    *mut f32,
    i32,
    bool,
    *mut f32,
    i32,
    bool,
);
type SkinRigidFn = unsafe extern "C" fn(
    i32,
    i32,
    i32,
    *const f32,
    *const u32,
    *const u32,
    *const f32,
    *mut f32,
    i32,
    *mut f32,
    i32,
    bool,
    *mut f32,
    i32,
    bool,
);
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
type SkinPOnlyFn = unsafe extern "C" fn(
    i32,
    bool,
    bool,
    i32,
    i32,
    i32,
    *const f32,
    *const u32,
    *const f32,
    *const u32,
    *const f32,
    *mut f32,
    i32,
);
type RenormalizeRowsFn = unsafe extern "C" fn(*mut f32, i32, i32, bool, i32);
type TrsToSoaFn = unsafe extern "C" fn(*const f32, *const f32, *const f32, *mut f32, i32, i32);

/// One ISA's kernels.
#[derive(Debug)]
pub(crate) struct Kernels {
    transform_points_vec4: TransformPointsFn,
    transform_points_vec3: TransformPointsFn,
    ltm_joint: LtmJointFn,
    ltm_joint_trs: LtmJointTrsFn,
    ltm_roots_soa: LtmRootsSoaFn,
    ltm_children_soa: LtmChildrenSoaFn,
    ltm_level_soa: LtmLevelSoaFn,
    trs_to_soa: TrsToSoaFn,
    crowd_ltm_trs: CrowdLtmTrsFn,
    skin_palette: SkinPaletteFn,
    level_sum_children: LevelSumChildrenFn,
    level_sum_levels: LevelSumLevelsFn,
    skin_pnt: SkinPntFn,
    skin_rigid: SkinRigidFn,
    skin_p_base: SkinPBaseFn,
    skin_p_bone_major: SkinPBoneMajorFn,
    renormalize_rows: RenormalizeRowsFn,
    skin_p_only: SkinPOnlyFn,
}

macro_rules! kernel_table {
    ($suffix:ident) => {
        pastey::paste! {
            Kernels {
                transform_points_vec4: bindings::[<transform_points_vec4_ $suffix>],
                transform_points_vec3: bindings::[<transform_points_vec3_ $suffix>],
                ltm_joint: bindings::[<ltm_joint_ $suffix>],
                ltm_joint_trs: bindings::[<ltm_joint_trs_ $suffix>],
                ltm_roots_soa: bindings::[<ltm_roots_soa_ $suffix>],
                ltm_children_soa: bindings::[<ltm_children_soa_ $suffix>],
                ltm_level_soa: bindings::[<ltm_level_soa_ $suffix>],
                trs_to_soa: bindings::[<trs_to_soa_ $suffix>],
                crowd_ltm_trs: bindings::[<crowd_ltm_trs_ $suffix>],
                skin_palette: bindings::[<skin_palette_ $suffix>],
                level_sum_children: bindings::[<level_sum_children_ $suffix>],
                level_sum_levels: bindings::[<level_sum_levels_ $suffix>],
                skin_pnt: bindings::[<skin_pnt_ $suffix>],
                skin_rigid: bindings::[<skin_rigid_ $suffix>],
                skin_p_base: bindings::[<skin_p_base_ $suffix>],
                skin_p_bone_major: bindings::[<skin_p_bone_major_ $suffix>],
                renormalize_rows: bindings::[<renormalize_rows_ $suffix>],
                skin_p_only: bindings::[<skin_p_only_ $suffix>],
            }
        }
    };
}

#[cfg(ispc_sse4)]
static SSE4: Kernels = kernel_table!(sse4);
#[cfg(ispc_avx2)]
static AVX2: Kernels = kernel_table!(avx2);
#[cfg(ispc_avx512)]
static AVX512: Kernels = kernel_table!(avx512);
#[cfg(ispc_neon)]
static NEON: Kernels = kernel_table!(neon);

/// The kernel table of an ISA, or `None` when this build does not contain it.
pub(crate) fn kernels_for(isa: Isa) -> Option<&'static Kernels> {
    match isa {
        #[cfg(ispc_sse4)]
        Isa::Sse4 => Some(&SSE4),
        #[cfg(ispc_avx2)]
        Isa::Avx2 => Some(&AVX2),
        #[cfg(ispc_avx512)]
        Isa::Avx512 => Some(&AVX512),
        #[cfg(ispc_neon)]
        Isa::Neon => Some(&NEON),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// `dst[i] = m * (src[i], 1)` for `i < min(src.len(), dst.len())`.
pub(crate) fn transform_points_vec4(isa: Runnable, m: &Mat4, src: &[Vec3], dst: &mut [Vec4]) {
    transform_chunks(isa.kernels().transform_points_vec4, m, src, dst)
}

/// `dst[i] = (m * (src[i], 1)).xyz` for `i < min(src.len(), dst.len())`.
pub(crate) fn transform_points_vec3(isa: Runnable, m: &Mat4, src: &[Vec3], dst: &mut [Vec3]) {
    transform_chunks(isa.kernels().transform_points_vec3, m, src, dst)
}

/// Runs a batch transform kernel over chunks of at most MAX_ITEMS_PER_CALL items. `kernel` must write
/// exactly one `T` (Vec4: 4 floats, Vec3: 3 floats) per item, which the two callers above guarantee by
/// pairing each kernel with its output type.
fn transform_chunks<T>(kernel: TransformPointsFn, m: &Mat4, src: &[Vec3], dst: &mut [T]) {
    let cols = m.to_cols_array();
    for (src, dst) in src
        .chunks(MAX_ITEMS_PER_CALL)
        .zip(dst.chunks_mut(MAX_ITEMS_PER_CALL))
    {
        let n = src.len().min(dst.len());
        // SAFETY: the caller's `isa` proves the CPU runs this kernel's ISA. The kernel reads 3n floats
        // from src (n Vec3, each three contiguous f32) and 16 from `cols`, and writes n items of T to dst
        // (4n floats for Vec4, 3n for Vec3: its full-width Vec3 stores run only while a whole vector fits
        // and its tail stores are masked). n is at most both slice lengths and MAX_ITEMS_PER_CALL, so it
        // fits in i32 and every access is in bounds. The kernel assumes only 4-byte alignment, and src
        // and dst cannot overlap because one is borrowed shared and the other exclusively.
        unsafe {
            kernel(
                src.as_ptr().cast(),
                dst.as_mut_ptr().cast(),
                n as i32,
                cols.as_ptr(),
            )
        }
    }
}

/// `joints` when it lies inside `0..n`, else `None` (the wrappers then do nothing).
fn checked_range(joints: &Range<usize>, n: usize) -> Option<(i32, i32)> {
    (joints.start <= joints.end && joints.end <= n)
        .then_some((joints.start as i32, joints.end as i32))
}

/// Horizontal local-to-model over `joints` (in order), matrices as `Mat4` (16 floats each).
/// Does nothing unless `locals` and `models` have one matrix per joint and `joints` is in range.
pub(crate) fn ltm_joint(
    isa: Runnable,
    skeleton: &Skeleton,
    locals: &[Mat4],
    root: &Mat4,
    models: &mut [Mat4],
    joints: Range<usize>,
) {
    let n = skeleton.len();
    let Some((begin, end)) = checked_range(&joints, n) else {
        return;
    };
    if locals.len() != n || models.len() != n {
        return;
    }
    let root = root.to_cols_array();
    // SAFETY: `isa` proves the CPU runs the kernel. For each joint j in [begin, end) < n the kernel reads
    // locals[j] and models[parents[j]] (16 floats each) and writes models[j]; the skeleton guarantees
    // parents[j] is -1 (then it reads the 16 floats of `root`) or a joint index below j, and both slices
    // hold n matrices of 16 contiguous f32 (asserted above). n <= MAX_JOINTS = 2^24 keeps every byte
    // offset (at most 64 * n) inside ISPC's 32-bit addressing. `parents` holds n i32.
    unsafe {
        (isa.kernels().ltm_joint)(
            locals.as_ptr().cast(),
            models.as_mut_ptr().cast(),
            skeleton.parents().as_ptr(),
            begin,
            end,
            root.as_ptr(),
        )
    }
}

/// [`ltm_joint`] with translation, rotation and scale per joint.
pub(crate) fn ltm_joint_trs(
    isa: Runnable,
    skeleton: &Skeleton,
    trs: Trs<'_>,
    root: &Mat4,
    models: &mut [Mat4],
    joints: Range<usize>,
) {
    let n = skeleton.len();
    let Some((begin, end)) = checked_range(&joints, n) else {
        return;
    };
    if trs.translations.len() != n
        || trs.rotations.len() != n
        || trs.scales.len() != n
        || models.len() != n
    {
        return;
    }
    let root = root.to_cols_array();
    // SAFETY: as in ltm_joint; per joint j the kernel reads 3 floats of translations[j], 4 of
    // rotations[j] and 3 of scales[j] (masked loads touch only those lanes), all slices holding n items.
    unsafe {
        (isa.kernels().ltm_joint_trs)(
            trs.translations.as_ptr().cast(),
            trs.rotations.as_ptr().cast(),
            trs.scales.as_ptr().cast(),
            models.as_mut_ptr().cast(),
            skeleton.parents().as_ptr(),
            begin,
            end,
            root.as_ptr(),
        )
    }
}

/// Roots in `joints`: model = root * local, on SoA matrices of `skeleton.len()` joints.
pub(crate) fn ltm_roots_soa(
    isa: Runnable,
    n: usize,
    local: &SoaMatrices,
    root: &Mat4,
    model: &mut SoaMatrices,
    joints: Range<usize>,
) {
    let Some((begin, end)) = checked_range(&joints, n) else {
        return;
    };
    if !local.fits(n) || !model.fits(n) {
        return;
    }
    let root = root.to_cols_array();
    // SAFETY: `isa` proves the CPU runs the kernel. It reads and writes element e of joint j at
    // e * n + j for e < 12 and j in [begin, end) within n, inside both 12n-float buffers, and reads the
    // 16 floats of `root`. 12n floats are below 2^31 bytes for n <= MAX_JOINTS.
    unsafe {
        (isa.kernels().ltm_roots_soa)(
            local.data.as_ptr(),
            model.data.as_mut_ptr(),
            n as i32,
            begin,
            end,
            root.as_ptr(),
        )
    }
}

/// The seed's per-parent foreach: for each parent in `parents`, its children's model matrices.
pub(crate) fn ltm_children_soa(
    isa: Runnable,
    skeleton: &Skeleton,
    local: &SoaMatrices,
    model: &mut SoaMatrices,
    parents: Range<usize>,
) {
    let n = skeleton.len();
    let Some((begin, end)) = checked_range(&parents, n) else {
        return;
    };
    if !local.fits(n) || !model.fits(n) {
        return;
    }
    let (starts, ends) = skeleton.child_ranges();
    // SAFETY: `isa` proves the CPU runs the kernel. For each parent p in [begin, end) < n it reads
    // child_start[p] and child_end[p] (n u32 each); the skeleton guarantees p < start <= end <= n, so
    // every element index e * n + j (e < 12, j < n) lies inside both 12n-float buffers.
    unsafe {
        (isa.kernels().ltm_children_soa)(
            local.data.as_ptr(),
            model.data.as_mut_ptr(),
            n as i32,
            starts.as_ptr(),
            ends.as_ptr(),
            begin,
            end,
        )
    }
}

/// One level (or a contiguous part of one) below the roots: each lane gathers its parent.
pub(crate) fn ltm_level_soa(
    isa: Runnable,
    skeleton: &Skeleton,
    local: &SoaMatrices,
    model: &mut SoaMatrices,
    joints: Range<usize>,
) {
    let n = skeleton.len();
    let Some((begin, end)) = checked_range(&joints, n) else {
        return;
    };
    if !local.fits(n) || !model.fits(n) || joints.clone().any(|j| skeleton.parent(j).is_none()) {
        return;
    }
    // SAFETY: `isa` proves the CPU runs the kernel. Every joint j in [begin, end) < n has a parent
    // 0 <= parents[j] < j (checked just above and guaranteed by the skeleton), so all gathers and
    // stores use indices e * n + k with e < 12 and k < n, inside both 12n-float buffers.
    unsafe {
        (isa.kernels().ltm_level_soa)(
            local.data.as_ptr(),
            model.data.as_mut_ptr(),
            n as i32,
            skeleton.parents().as_ptr(),
            begin,
            end,
        )
    }
}

/// Local matrices in SoA from translation, rotation and scale, for all n joints.
pub(crate) fn trs_to_soa(isa: Runnable, trs: Trs<'_>, local: &mut SoaMatrices) {
    let n = local.stride;
    if trs.translations.len() != n
        || trs.rotations.len() != n
        || trs.scales.len() != n
        || !local.fits(n)
    {
        return;
    }
    // SAFETY: `isa` proves the CPU runs the kernel. For j < n it reads 3, 4 and 3 floats of the n-item
    // slices and writes local.data[e * n + j] for e < 12, inside the 12n-float buffer.
    unsafe {
        (isa.kernels().trs_to_soa)(
            trs.translations.as_ptr().cast(),
            trs.rotations.as_ptr().cast(),
            trs.scales.as_ptr().cast(),
            local.data.as_mut_ptr(),
            n as i32,
            n as i32,
        )
    }
}

/// One AoSoA block of a crowd: the model matrices of `CROWD_LANES` instances for every joint, with
/// the root transforms of the block's first `roots.len()` (at most CROWD_LANES) instances.
/// Does nothing unless the slices are exactly one block for this skeleton.
pub(crate) fn crowd_ltm_trs(
    isa: Runnable,
    skeleton: &Skeleton,
    locals: &[f32],
    roots: &[Mat4],
    models: &mut [f32],
) {
    let j = skeleton.len();
    if locals.len() != j * TRS_ELEMENTS * CROWD_LANES
        || models.len() != j * MODEL_ELEMENTS * CROWD_LANES
        || roots.len() > CROWD_LANES
    {
        return;
    }
    // SAFETY: `isa` proves the CPU runs the kernel. For joint j < n it reads the 10 * 16 floats of
    // locals and writes the 12 * 16 floats of models at offset (j * E) * 16, inside the slices checked
    // above; the parent is -1 (then it reads, for lanes below roots.len() only, the 16 floats of that
    // lane's root Mat4) or below j. The crowd caps joints at MAX_CROWD_JOINTS, so the largest byte
    // offset, 768 * n, stays inside 32-bit addressing.
    unsafe {
        (isa.kernels().crowd_ltm_trs)(
            locals.as_ptr(),
            models.as_mut_ptr(),
            roots.as_ptr().cast(),
            roots.len() as i32,
            skeleton.parents().as_ptr(),
            j as i32,
        )
    }
}

/// `palette[i] = (models[joints[i]] * inverse_binds[i])` row-major. Does nothing unless the palette
/// and inverse binds have the same length, `joints` (if any) too, and every index is in range.
pub(crate) fn skin_palette(
    isa: Runnable,
    models: &[Mat4],
    inverse_binds: &[Mat4],
    joints: Option<&[u32]>,
    palette: &mut [PaletteMatrix],
) {
    let count = inverse_binds.len();
    if palette.len() != count
        || count > crate::skeleton::MAX_JOINTS
        || models.len() > crate::skeleton::MAX_JOINTS
    {
        return;
    }
    let in_range = match joints {
        Some(j) => j.len() == count && j.iter().all(|&m| (m as usize) < models.len()),
        None => count <= models.len(),
    };
    if !in_range {
        return;
    }
    let (ptr, use_joints) = match joints {
        Some(j) => (j.as_ptr(), 1),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: `isa` proves the CPU runs the kernel. For i < count it reads inverse_binds[i] and
    // models[m] (16 floats each) with m = joints[i] (checked < models.len() above) or m = i < count <=
    // models.len(), and writes the 16 floats of palette[i]; the joint table is read only when use_joints
    // is set, and then holds count u32. Offsets stay below 64 * MAX_JOINTS bytes (32-bit addressing).
    unsafe {
        (isa.kernels().skin_palette)(
            models.as_ptr().cast(),
            inverse_binds.as_ptr().cast(),
            ptr,
            use_joints,
            count as i32,
            palette.as_mut_ptr().cast(),
        )
    }
}

/// The level-order seed's ParallelLevelOrder: for each joint, add its float4 to its children's.
pub(crate) fn level_sum_children(isa: Runnable, skeleton: &Skeleton, data: &mut [Vec4]) {
    let n = skeleton.len();
    if data.len() != n {
        return;
    }
    let (starts, ends) = skeleton.child_ranges();
    // SAFETY: `isa` proves the CPU runs the kernel. For each joint i < n it reads data[i] and updates the
    // 4 floats of every child in child_start[i]..child_end[i], a range inside 0..n by the skeleton's
    // construction; data holds n Vec4 (16 contiguous bytes each).
    unsafe {
        (isa.kernels().level_sum_children)(
            data.as_mut_ptr().cast(),
            starts.as_ptr(),
            ends.as_ptr(),
            n as i32,
        )
    }
}

/// The seed's sum level by level: each bone of levels 1.. adds its parent's float4.
pub(crate) fn level_sum_levels(isa: Runnable, skeleton: &Skeleton, data: &mut [Vec4]) {
    if data.len() != skeleton.len() {
        return;
    }
    let levels = skeleton.level_starts();
    // SAFETY: `isa` proves the CPU runs the kernel. levels holds level_count + 1 increasing bounds ending
    // at n, so every bone b the kernel visits is below n, and it reads parents[b] (n i32) and data at
    // 4 * parents[b], a bone before b. Its vector loads of parents read 1 or 2 vectors' worth of bones
    // from a parent p only where the block's highest parent plus that many bones is at most n (checked in
    // the kernel, so this holds for any parents below n). Stores touch only bones below each level's end
    // (the last window is masked). data holds n Vec4 of 16 contiguous bytes.
    unsafe {
        (isa.kernels().level_sum_levels)(
            data.as_mut_ptr().cast(),
            skeleton.parents().as_ptr(),
            levels.as_ptr(),
            (levels.len() - 1) as i32,
        )
    }
}

/// Skins every influence group of a prepared mesh into a validated output. Does nothing unless the
/// palette covers the mesh's joints and the output holds every vertex it writes.
pub(crate) fn skin_pnt(
    isa: Runnable,
    mesh: &SkinnedMesh,
    palette: &[PaletteMatrix],
    renormalize: crate::skin::Renormalize,
    threads: Threads,
    streaming: bool,
    out: OutputView<'_>,
) {
    // renormalize_rows' modes: 0 none, 1 precise, 2 fast.
    let rows_mode = match renormalize {
        crate::skin::Renormalize::None => 0,
        crate::skin::Renormalize::Precise => 1,
        crate::skin::Renormalize::Fast => 2,
    };
    let n = mesh.vertex_count();
    if palette.len() < mesh.joint_count() || n == 0 {
        return;
    }
    // Output pointers, float strides, and the number of floats each pointer may be written at.
    let null = std::ptr::null_mut();
    // Streaming needs whole output lines: separate streams, or an interleaved stride that the written
    // attributes fill exactly. `whole` holds the interleaved buffer's base and stride in that case.
    let mut whole: Option<(*mut f32, usize)> = None;
    let mut stream_layout = false;
    let mut separate = false;
    // Where the kernel writes inside a streaming block's scratch buffer: separate streams at 0, 3 * STAGE
    // and 6 * STAGE (3, 3 and 4 floats per vertex); interleaved at the attribute offsets.
    let mut scratch_at = (0, 3 * STAGE, 6 * STAGE);
    let (pos, ps, nrm, ns, wn, tng, ts, wt) = match out {
        OutputView::Separate {
            positions,
            normals,
            tangents,
        } => {
            let (wn, wt) = (normals.is_some(), tangents.is_some());
            if positions.len() < 3 * n
                || normals.as_ref().is_some_and(|x| x.len() < 3 * n)
                || tangents.as_ref().is_some_and(|x| x.len() < 4 * n)
            {
                return;
            }
            let nrm = normals.map_or(null, |x| x.as_mut_ptr());
            let tng = tangents.map_or(null, |x| x.as_mut_ptr());
            stream_layout = true;
            separate = true;
            (positions.as_mut_ptr(), 3, nrm, 3, wn, tng, 4, wt)
        }
        OutputView::Interleaved {
            floats,
            stride,
            positions,
            normals,
            tangents,
        } => {
            let fits = |o: Option<usize>, size: usize| o.is_none_or(|o| o + size <= stride);
            if floats.len() < n * stride
                || !fits(Some(positions), 3)
                || !fits(normals, 3)
                || !fits(tangents, 4)
            {
                return;
            }
            let base = floats.as_mut_ptr();
            // The attributes fill the stride exactly when their sizes add up to it and no two overlap
            // (each ends inside the stride, checked above).
            let attrs = [(Some(positions), 3), (normals, 3), (tangents, 4)];
            let filled: usize = attrs.iter().filter(|a| a.0.is_some()).map(|a| a.1).sum();
            if filled == stride && !crate::skin::overlap(&attrs) {
                whole = Some((base, stride));
                stream_layout = true;
                scratch_at = (positions, normals.unwrap_or(0), tangents.unwrap_or(0));
            }
            // SAFETY (pointer offsets only, nothing is accessed here): every offset is below stride, and
            // the buffer holds n >= 1 strides, so each pointer stays inside the buffer.
            let at = |o: usize| unsafe { base.add(o) };
            (
                at(positions),
                stride,
                normals.map_or(null, at),
                stride,
                normals.is_some(),
                tangents.map_or(null, at),
                stride,
                tangents.is_some(),
            )
        }
    };
    // The kernel computes out_index * stride in 32-bit arithmetic.
    if n.checked_mul(ps.max(ns).max(ts))
        .is_none_or(|x| x > (i32::MAX as usize) / 4)
    {
        return;
    }
    let outputs = OutputPointers { pos, nrm, tng };
    let whole = whole.map(|(base, stride)| {
        (
            OutputPointers {
                pos: base,
                nrm: null,
                tng: null,
            },
            stride,
        )
    });
    let stream =
        streaming && cfg!(target_arch = "x86_64") && stream_layout && mesh.streams_sequentially();
    // Normals and tangents are renormalized by renormalize_rows, one vector per lane, after the skinning
    // kernel: in each streaming block before it is streamed out, otherwise over the whole output once
    // every group is done.
    for g in &mesh.groups {
        let count = g.vertices.len();
        let k = g.influences;
        if count == 0
            || g.blocks.len() != g.block() * count
            || (g.positions_only && (wn || wt))
            || g.table.len() != k * count
            || (g.rigid() && k != 1)
        {
            continue;
        }
        // The original index of the group's first vertex; a contiguous group's vertex v is first + v.
        let first = g.vertices[0] as usize;
        let chunk = |range: std::ops::Range<usize>| {
            let o = outputs;
            let targets = Targets {
                pos: o.pos,
                ps,
                nrm: o.nrm,
                ns,
                wn,
                tng: o.tng,
                ts,
                wt,
            };
            // SAFETY: `isa` proves the CPU runs the kernel. For v in `range` (inside 0..count) it reads
            // blocks[Bv..Bv+B] (B = g.block()), influences [k*v..k*v+k] of g.table (joints and weights, or
            // only packed words or rigid joints; lengths checked above; the pointers are offset to range.start) and palette entries joints[..] < mesh.joint_count() <=
            // palette.len() (validated by SkinnedMesh::prepare, 16 floats each). It writes, at
            // out = vertices[v] < n (for a contiguous group, first + v is that same index), 3 floats at pos + out * ps, 3 at nrm + out * ns when wn, and 4 at
            // tng + out * ts when wt: inside the separate streams (3n, 3n, 4n floats) or, interleaved,
            // inside vertex out's stride (offset + size <= stride, n strides in the buffer). Separate
            // streams are distinct &mut slices; interleaved pointers write disjoint floats of one buffer.
            // Chunks of any group write distinct vertices, because `vertices` over all groups is a
            // permutation of 0..n (SkinnedMesh::prepare puts each vertex in exactly one group once), so
            // chunks running on several threads never write the same float. All float offsets stay
            // below 2^31 / 4 (checked above) for 32-bit addressing.
            unsafe {
                skin_block(
                    isa,
                    g,
                    palette,
                    range.start,
                    range.len(),
                    if g.contiguous {
                        Indices::From(first + range.start)
                    } else {
                        Indices::Listed(g.vertices.as_ptr().add(range.start))
                    },
                    &targets,
                )
            }
        };
        // Streaming: each block of STAGE vertices is skinned into `scratch`, laid out like the output
        // with the block's first vertex at index 0, then streamed out.
        let staged = |range: std::ops::Range<usize>| {
            // Whole copies, so that the closure captures the Sync wrappers, not their pointer fields.
            let (outputs, whole) = (outputs, whole);
            let floats_per_vertex = whole.map_or(10, |(_, stride)| stride);
            let mut scratch = vec![0.0f32; STAGE * floats_per_vertex];
            let s = scratch.as_mut_ptr();
            // SAFETY (pointer offsets only): every offset is inside scratch (below 10 * STAGE for
            // separate streams, below the stride for interleaved attributes).
            let (sp, sn, st) = unsafe {
                (
                    s.add(scratch_at.0),
                    s.add(scratch_at.1),
                    s.add(scratch_at.2),
                )
            };
            for block in range.clone().step_by(STAGE) {
                let len = STAGE.min(range.end - block);
                let dst = first + block;
                let targets = Targets {
                    pos: sp,
                    ps,
                    nrm: sn,
                    ns,
                    wn,
                    tng: st,
                    ts,
                    wt,
                };
                // SAFETY: as in `chunk` above, except that vertex v of the block (v < len <= STAGE)
                // goes to index v of scratch (first = 0): 3 floats at sp + v * ps, 3 at sn + v * ns and
                // 4 at st + v * ts, inside scratch (separate: segments of 3, 3 and 4 floats times STAGE;
                // interleaved: offset + size <= stride, STAGE strides), which only this closure uses.
                // The inputs are read at block..block + len, inside the group (range lies in 0..count).
                unsafe { skin_block(isa, g, palette, block, len, Indices::From(0), &targets) }
                if rows_mode != 0 {
                    // SAFETY: the kernel wrote `len` normals at sn + v * ns and tangents at st + v * ts
                    // (v < len), inside scratch (see above). For separate streams (`packed`) the row
                    // kernel touches each vector's whole stride (3 or 4 floats), which is that vector's
                    // own; otherwise its x, y and z only.
                    let packed = whole.is_none();
                    unsafe {
                        if wn {
                            (isa.kernels().renormalize_rows)(
                                sn, len as i32, ns as i32, packed, rows_mode,
                            );
                        }
                        if wt {
                            (isa.kernels().renormalize_rows)(
                                st, len as i32, ts as i32, packed, rows_mode,
                            );
                        }
                    }
                }
                // SAFETY: the group is contiguous, so its vertices are first..first + count, all below
                // n; the block's outputs are vertices dst..dst + len. Separate: 3 (3, 4) floats per
                // vertex from dst on, inside the 3n (3n, 4n) float streams. Interleaved: `len` whole
                // strides from vertex dst, inside the n strides of the buffer, and the attributes fill
                // the stride, so every float copied was written by the kernel above. Other threads work
                // on other vertices, and scratch is this closure's own.
                unsafe {
                    match whole {
                        None => {
                            stream_copy(sp, outputs.pos.add(3 * dst), 3 * len);
                            if wn {
                                stream_copy(sn, outputs.nrm.add(3 * dst), 3 * len);
                            }
                            if wt {
                                stream_copy(st, outputs.tng.add(4 * dst), 4 * len);
                            }
                        }
                        Some((base, stride)) => {
                            stream_copy(s, base.pos.add(stride * dst), stride * len)
                        }
                    }
                }
            }
            stream_fence();
        };
        let run = |range: std::ops::Range<usize>| {
            if stream {
                staged(range)
            } else {
                chunk(range)
            }
        };
        match threads {
            Threads::One => run(0..count),
            Threads::All => {
                use rayon::prelude::*;
                let ranges: Vec<_> = (0..count)
                    .step_by(SKIN_CHUNK)
                    .map(|s| s..(s + SKIN_CHUNK).min(count))
                    .collect();
                ranges.into_par_iter().for_each(run);
            }
        }
    }
    if rows_mode != 0 && !stream {
        let rows = |range: std::ops::Range<usize>| {
            let o = outputs;
            // SAFETY: `isa` proves the CPU runs the kernel. Vertex v's normal is at nrm + v * ns and its
            // tangent at tng + v * ts, inside the output for every v < n (checked above: separate streams
            // of 3n and 4n floats, or n interleaved strides holding each attribute); `range` lies inside
            // 0..n. With separate streams (`packed`) the row kernel touches each vector's own 3 or 4
            // floats; interleaved, only its x, y and z. Every group has finished writing (this runs after
            // the group loop), and parallel ranges cover disjoint vertices.
            unsafe {
                if wn {
                    (isa.kernels().renormalize_rows)(
                        o.nrm.add(ns * range.start),
                        range.len() as i32,
                        ns as i32,
                        separate,
                        rows_mode,
                    );
                }
                if wt {
                    (isa.kernels().renormalize_rows)(
                        o.tng.add(ts * range.start),
                        range.len() as i32,
                        ts as i32,
                        separate,
                        rows_mode,
                    );
                }
            }
        };
        let ranges = (0..n)
            .step_by(SKIN_CHUNK)
            .map(|s| s..(s + SKIN_CHUNK).min(n));
        match threads {
            Threads::One => ranges.for_each(rows),
            Threads::All => {
                use rayon::prelude::*;
                ranges.collect::<Vec<_>>().into_par_iter().for_each(rows);
            }
        }
    }
}

/// Where a skinning kernel writes: vertex index o's position at `pos + o * ps` (3 floats), its normal at
/// `nrm + o * ns` (3 floats, when `wn`) and its tangent at `tng + o * ts` (4 floats, when `wt`).
struct Targets {
    pos: *mut f32,
    ps: usize,
    nrm: *mut f32,
    ns: usize,
    wn: bool,
    tng: *mut f32,
    ts: usize,
    wt: bool,
}

/// Output indices of a block of vertices: listed (vertex v of the block goes to `list[v]`), or
/// consecutive from a first index (the kernels then read no index).
#[derive(Clone, Copy)]
enum Indices {
    Listed(*const u32),
    From(usize),
}

/// Skins vertices `start..start + len` of group `g` with its kernel (the rigid one when the group is
/// rigid), writing vertex `start + v`'s outputs at the index `indices` gives for v.
///
/// # Safety
/// `isa` must be runnable (its `Runnable` proves it); `start + len` is at most the group's vertex count
/// and its vectors have their documented lengths (`g.block()` block floats and k influences per
/// vertex, where a rigid group has k = 1); a positions-only group is not asked for normals or tangents;
/// every joint index is below `palette.len()`; a listed `indices` points at `len` indices, and a
/// consecutive one has `first + len` within i32; for each index o, the
/// floats `out` names for o are valid for writes and written by nobody else during the call; and every
/// byte offset `4 * o * stride` fits in i32 (ISPC's 32-bit addressing).
unsafe fn skin_block(
    isa: Runnable,
    g: &crate::mesh::InfluenceGroup,
    palette: &[PaletteMatrix],
    start: usize,
    len: usize,
    indices: Indices,
    out: &Targets,
) {
    let k = g.influences;
    // The kernels' encoding: a negative first means "read vertices".
    let (vertices, first) = match indices {
        Indices::Listed(v) => (v, -1),
        Indices::From(f) => (g.vertices.as_ptr(), f as i32),
    };
    // Vertices the kernel may prefetch from `start` on: the rest of the group, across block and chunk
    // boundaries, so that a streaming block's last vertices also find their successors' inputs on the
    // way. 0 (no prefetching) for groups that fit in the cache, where the prefetches only cost time.
    let count = g.vertices.len();
    let readable = if g.input_bytes() >= PREFETCH_MIN_BYTES {
        count.saturating_sub(start).min(i32::MAX as usize) as i32
    } else {
        0
    };
    // A compact group's kernels read its packed influences where the joints would be, and a rigid
    // group's kernel only its joints: neither reads (or prefetches) weights, so they get a null weight
    // pointer.
    let (rigid, compact) = (g.rigid(), g.compact());
    let (joints, weights) = match &g.table {
        InfluenceTable::F32 { joints, weights } => (
            &joints[..],
            // SAFETY: an f32 table holds k weights per vertex (none for k = 0, where the offset is 0),
            // and start is at most the vertex count.
            unsafe { weights.as_ptr().add(k * start) },
        ),
        InfluenceTable::Compact(joints) | InfluenceTable::Rigid(joints) => {
            (&joints[..], std::ptr::null())
        }
    };
    // SAFETY: the caller's contract; the pointer offsets stay inside the group's vectors because
    // start + len is at most its vertex count, and each table holds k influences per vertex. The kernels
    // prefetch (never load) inputs of vertices below `readable`, counted from `start`, which the group's
    // vectors also hold.
    unsafe {
        if g.positions_only {
            // Positions only (the caller never asks a positions-only mesh for normals or tangents).
            (isa.kernels().skin_p_only)(
                k as i32,
                rigid,
                compact,
                first,
                len as i32,
                readable,
                g.blocks.as_ptr().add(4 * start),
                joints.as_ptr().add(k * start),
                weights,
                vertices,
                palette.as_ptr().cast(),
                out.pos,
                out.ps as i32,
            )
        } else if rigid {
            // The rigid kernel reads one joint per vertex and no weights.
            (isa.kernels().skin_rigid)(
                first,
                len as i32,
                readable,
                g.blocks.as_ptr().add(12 * start),
                joints.as_ptr().add(start),
                vertices,
                palette.as_ptr().cast(),
                out.pos,
                out.ps as i32,
                out.nrm,
                out.ns as i32,
                out.wn,
                out.tng,
                out.ts as i32,
                out.wt,
            )
        } else {
            (isa.kernels().skin_pnt)(
                k as i32,
                compact,
                first,
                len as i32,
                readable,
                g.blocks.as_ptr().add(12 * start),
                joints.as_ptr().add(k * start),
                weights,
                vertices,
                palette.as_ptr().cast(),
                out.pos,
                out.ps as i32,
                out.nrm,
                out.ns as i32,
                out.wn,
                out.tng,
                out.ts as i32,
                out.wt,
            )
        }
    }
}

/// Groups whose inputs (blocks, joints and weights) reach this many bytes are skinned with software
/// prefetching (see PREFETCH_AHEAD in ispc/skin.ispc). In the experiment that chose it, prefetching was
/// neutral at 65,536 vertices with 4 influences (5 MiB of input) and 20% faster at 131,072 (10 MiB):
/// the hardware prefetchers keep up while the data comes from the L3 cache, not from memory.
const PREFETCH_MIN_BYTES: usize = 4 << 20;

/// Vertices per streaming block: their outputs (at most 40 bytes each) stay in the L1 cache.
const STAGE: usize = 256;

/// Copies `n` floats from `src` to `dst`, with non-temporal stores wherever `dst` is 16-byte aligned
/// (x86-64; elsewhere a plain copy).
///
/// # Safety
/// `src` must be valid for `n` reads and `dst` for `n` writes, and the two ranges must not overlap.
unsafe fn stream_copy(src: *const f32, dst: *mut f32, n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_loadu_ps, _mm_stream_ps};
        let mut i = 0;
        // SAFETY: every index is below n (the caller's contract); _mm_stream_ps gets a 16-byte aligned
        // address (the head loop ends there), and SSE is part of the x86-64 baseline.
        unsafe {
            while i < n && (dst.add(i) as usize) % 16 != 0 {
                *dst.add(i) = *src.add(i);
                i += 1;
            }
            while i + 4 <= n {
                _mm_stream_ps(dst.add(i), _mm_loadu_ps(src.add(i)));
                i += 4;
            }
            while i < n {
                *dst.add(i) = *src.add(i);
                i += 1;
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, n)
    }
}

/// Orders this thread's streaming stores before anything it does next (they are weakly ordered).
fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence has no preconditions; SSE is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}

/// The output pointers of one skinning call, shared by the parallel chunks.
#[derive(Clone, Copy)]
struct OutputPointers {
    pos: *mut f32,
    nrm: *mut f32,
    tng: *mut f32,
}

// SAFETY: the pointers are only used by skin_pnt's chunks, which write disjoint vertices (see the SAFETY
// comment there) into buffers that outlive the call (they are borrowed for all of skin_pnt).
unsafe impl Send for OutputPointers {}
unsafe impl Sync for OutputPointers {}

/// van Waveren's weighted base vectors, positions only: `positions` (3 floats per vertex, original
/// order) gets `sum palette[joints[f]] * bases[f]` over each vertex's influences. Does nothing unless the
/// palette covers the mesh's joints and `positions` holds 3 floats per vertex.
pub(crate) fn skin_p_base(
    isa: Runnable,
    mesh: &BaseVectorMesh,
    palette: &[PaletteMatrix],
    threads: Threads,
    positions: &mut [f32],
) {
    let n = mesh.vertex_count();
    let total = mesh.joints.len();
    let chunks = n.div_ceil(SKIN_CHUNK);
    if palette.len() < mesh.joint_count()
        || positions.len() < 3 * n
        || n == 0
        || mesh.bases.len() != total
        || mesh.chunk_firsts.len() != chunks + 1
        || mesh.chunk_firsts[chunks] != total
    {
        return;
    }
    let out = OutputPointers {
        pos: positions.as_mut_ptr(),
        nrm: std::ptr::null_mut(),
        tng: std::ptr::null_mut(),
    };
    let chunk = |c: usize| {
        let o = out;
        let (start, end) = (c * SKIN_CHUNK, ((c + 1) * SKIN_CHUNK).min(n));
        let first = mesh.chunk_firsts[c];
        // SAFETY: `isa` proves the CPU runs the kernel. BaseVectorMesh::from_mesh (its only constructor)
        // makes the counts sum to `total` and chunk_firsts[c] the sum of the counts before vertex `start`
        // (its last entry equals `total`, checked above), so the influences of vertices start..end
        // are first..first + sum(counts[start..end]) <= total: joints (1 u32 each) and bases (4 f32 each)
        // are read inside their vectors. Every joint index is below mesh.joint_count() <= palette.len()
        // (validated by SkinnedMesh::prepare), 16 floats per entry. It writes 3 floats per vertex at
        // pos + 3 * start onwards, inside positions (3n floats). Chunks cover disjoint vertex ranges, so
        // threads never write the same float. Every pointer is offset to its chunk, so the kernel's
        // own offsets stay below 16 bytes times 8 influences times SKIN_CHUNK, far below 2^31.
        unsafe {
            (isa.kernels().skin_p_base)(
                (end - start) as i32,
                mesh.counts.as_ptr().add(start),
                mesh.joints.as_ptr().add(first),
                mesh.bases.as_ptr().add(first).cast(),
                palette.as_ptr().cast(),
                o.pos.add(3 * start),
            )
        }
    };
    match threads {
        Threads::One => (0..chunks).for_each(chunk),
        Threads::All => {
            use rayon::prelude::*;
            (0..chunks).into_par_iter().for_each(chunk);
        }
    }
}

/// Bone-major accumulation, positions only: zeroes `positions` (3 floats per vertex) and adds, joint
/// after joint, each entry's weighted transformed position. Does nothing unless the palette covers the
/// mesh's joints and `positions` holds 3 floats per vertex.
pub(crate) fn skin_p_bone_major(
    isa: Runnable,
    mesh: &BoneMajorMesh,
    palette: &[PaletteMatrix],
    positions: &mut [f32],
) {
    let n = mesh.vertex_count();
    let bones = mesh.list_count();
    let total = mesh.vertex.len();
    let consistent = [&mesh.weight, &mesh.px, &mesh.py, &mesh.pz]
        .iter()
        .all(|a| a.len() == total);
    if palette.len() < bones
        || positions.len() < 3 * n
        || !consistent
        || mesh.starts.first() != Some(&0)
        || mesh.starts.last().map(|&s| s as usize) != Some(total)
        || mesh.starts.windows(2).any(|w| w[0] > w[1])
        || 12 * n > i32::MAX as usize
        || 4 * total > i32::MAX as usize
    {
        return;
    }
    positions[..3 * n].fill(0.0);
    // SAFETY: `isa` proves the CPU runs the kernel. starts has bones + 1 non-decreasing entries from 0 to
    // `total` (checked above), so entries starts[b]..starts[b + 1] index inside vertex, weight, px, py and
    // pz (each `total` long, checked). Palette entries 0..bones are read (bones <= palette.len()).
    // BoneMajorMesh::from_mesh (its only constructor) takes every vertex index from a SkinnedMesh of n
    // vertices, so each is below n and the 3 floats read and written at pos + 3 * vertex lie inside
    // positions (3n floats); within one joint's list the vertices are distinct (BoneMajorMesh merges
    // duplicates), so one step's lanes never write the same float. Offsets stay below 2^31 (checked).
    unsafe {
        (isa.kernels().skin_p_bone_major)(
            bones as i32,
            mesh.starts.as_ptr(),
            mesh.vertex.as_ptr(),
            mesh.weight.as_ptr(),
            mesh.px.as_ptr(),
            mesh.py.as_ptr(),
            mesh.pz.as_ptr(),
            palette.as_ptr().cast(),
            positions.as_mut_ptr(),
        )
    }
}
