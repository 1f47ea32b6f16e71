//! Local-to-model kernels of the product: one joint at a time with the gang across the matrix
//! (`ltm_joint`, `ltm_joint_trs`, and `ltm_palette_trs` with the skinning palettes), and crowds in
//! AoSoA blocks (`crowd_ltm_trs`).

use super::Runnable;
use crate::layout::crowd::{CROWD_LANES, MAX_CROWD_JOINTS, MODEL_ELEMENTS, TRS_ELEMENTS};
use crate::layout::hierarchy::{LevelOrder, MAX_JOINTS};
use crate::layout::palette::{PaletteMatrix, PalettePlan, MAX_PLAN_SKINS};
use crate::layout::trs::Trs;
use glam::Mat4;
use std::ops::Range;

/// `joints` as the kernels' i32 bounds; it must lie inside `0..n`.
pub(super) fn checked_range(joints: &Range<usize>, n: usize) -> (i32, i32) {
    assert!(
        joints.start <= joints.end && joints.end <= n,
        "joint range {joints:?} inside 0..{n}"
    );
    // n <= MAX_JOINTS (a LevelOrder invariant), so both ends fit in i32.
    (joints.start as i32, joints.end as i32)
}

/// Horizontal local-to-model over `joints` (in order), matrices as `Mat4` (16 floats each).
/// `locals` and `models` hold one matrix per joint and `joints` lies inside the skeleton (asserted).
/// Returns the kernel's word that every model element written is finite (`false` may be a false alarm
/// for elements near `f32::MAX`).
pub(crate) fn ltm_joint(
    isa: Runnable,
    order: &LevelOrder,
    locals: &[Mat4],
    root: &Mat4,
    models: &mut [Mat4],
    joints: Range<usize>,
) -> bool {
    let n = order.len();
    let (begin, end) = checked_range(&joints, n);
    assert!(
        locals.len() == n && models.len() == n,
        "one local and one model matrix per joint"
    );
    let root = root.to_cols_array();
    // SAFETY: `isa` proves the CPU runs the kernel. For each joint j in [begin, end) < n the kernel reads
    // locals[j] and models[parents[j]] (16 floats each) and writes models[j]; the LevelOrder invariants guarantee
    // parents[j] is -1 (then it reads the 16 floats of `root`) or a joint index below j, and both slices
    // hold n matrices of 16 contiguous f32 (asserted above). n <= MAX_JOINTS = 2^24 keeps every byte
    // offset (at most 64 * n) inside ISPC's 32-bit addressing. `parents` holds n i32.
    unsafe {
        (isa.pick(|k| k.ltm_joint, |d| d.ltm_joint))(
            locals.as_ptr().cast(),
            models.as_mut_ptr().cast(),
            order.parents().as_ptr(),
            begin,
            end,
            root.as_ptr(),
        )
    }
}

/// The kernels' pointers to a pose's translations, rotations and scales, after asserting that each,
/// and the `models` count, is one per joint (`n`).
fn trs_pointers(trs: Trs<'_>, n: usize, models: usize) -> [*const f32; 3] {
    let Trs {
        translations,
        rotations,
        scales,
    } = trs;
    assert!(
        translations.len() == n && rotations.len() == n && scales.len() == n && models == n,
        "one translation, rotation, scale and model matrix per joint"
    );
    [
        translations.as_ptr().cast(),
        rotations.as_ptr().cast(),
        scales.as_ptr().cast(),
    ]
}

/// [`ltm_joint`] with translation, rotation and scale per joint, with the same return value.
pub(crate) fn ltm_joint_trs(
    isa: Runnable,
    order: &LevelOrder,
    trs: Trs<'_>,
    root: &Mat4,
    models: &mut [Mat4],
    joints: Range<usize>,
) -> bool {
    let n = order.len();
    let (begin, end) = checked_range(&joints, n);
    let [translations, rotations, scales] = trs_pointers(trs, n, models.len());
    let root = root.to_cols_array();
    // SAFETY: as in ltm_joint; per joint j the kernel reads 3 floats of translations[j], 4 of
    // rotations[j] and 3 of scales[j] (masked loads touch only those lanes), all slices holding n items
    // (asserted in trs_pointers). The TRS reads cover whole gangs: a block's last gang is the one ending at the block's
    // end, up to a gang width before `begin`, and only where that end is at least a gang width, so every
    // joint read lies in 0..n. The pointers are the slices' starts, never offset to `begin`.
    unsafe {
        (isa.pick(|k| k.ltm_joint_trs, |d| d.ltm_joint_trs))(
            translations,
            rotations,
            scales,
            models.as_mut_ptr().cast(),
            order.parents().as_ptr(),
            begin,
            end,
            root.as_ptr(),
        )
    }
}

// The kernel's int32 offset of an entry's inverse bind rows, 12 e, for every entry a plan can hold.
const _: () = assert!(12 * MAX_PLAN_SKINS * MAX_JOINTS <= i32::MAX as usize);

/// [`ltm_joint_trs`] over every joint, with each skin's palette computed in the same pass:
/// `palettes[s][i] = models[j] * inverse bind` (row-major, as `skin_palette` writes it) for each entry
/// `(s, i)` of joint `j` in `plan`, with the plan's inverse bind of that entry. The plan must be for
/// this skeleton's joint count, and `palettes` must have one palette per planned skin, each of the
/// planned length (asserted). Returns whether every model and palette element written is finite (`false` may be a
/// false alarm for elements near `f32::MAX`).
pub(crate) fn ltm_palette_trs(
    isa: Runnable,
    order: &LevelOrder,
    trs: Trs<'_>,
    root: &Mat4,
    models: &mut [Mat4],
    plan: &PalettePlan,
    palettes: &mut [Vec<PaletteMatrix>],
) -> bool {
    let n = order.len();
    let (begin, end) = checked_range(&(0..n), n);
    let [translations, rotations, scales] = trs_pointers(trs, n, models.len());
    let lens = plan.skin_lens();
    assert!(
        plan.joints() == n
            && lens.len() <= MAX_PLAN_SKINS
            && palettes.len() == lens.len()
            && lens
                .iter()
                .zip(palettes.iter())
                .all(|(&len, p)| len <= MAX_JOINTS && p.len() == len),
        "a palette plan for this skeleton, with one palette entry per planned slot"
    );
    let mut outs = [std::ptr::null_mut::<f32>(); MAX_PLAN_SKINS];
    for (slot, p) in outs.iter_mut().zip(palettes.iter_mut()) {
        *slot = p.as_mut_ptr().cast();
    }
    let root = root.to_cols_array();
    // SAFETY: as in ltm_joint_trs for the models, over 0..n. The palette plan's invariants (PalettePlan:
    // entry_start has n + 1 non-decreasing entries from 0 to entries.len() == ib_rows.len(), every
    // entry's skin s is below lens.len() and its slot i below lens[s]) and the lengths asserted above put
    // every entry e's read of the 12 floats of ib_rows[e] and its 16-float write of palettes[s] at 16 i
    // inside those slices; outs holds a valid pointer for every planned skin (the null ones past
    // lens.len() are never read). A skin is at most MAX_JOINTS entries (asserted), so the kernel's int32
    // float offsets stay in range: 16 i below 16 MAX_JOINTS, and 12 e below 12 MAX_PLAN_SKINS MAX_JOINTS
    // (checked at compile time below the imports).
    unsafe {
        (isa.kernels().ltm_palette_trs)(
            translations,
            rotations,
            scales,
            models.as_mut_ptr().cast(),
            order.parents().as_ptr(),
            begin,
            end,
            root.as_ptr(),
            plan.entry_start().as_ptr(),
            plan.entries().as_ptr().cast(),
            plan.ib_rows().as_ptr().cast(),
            outs.as_mut_ptr(),
        )
    }
}

/// One AoSoA block of a crowd: the model matrices of `CROWD_LANES` instances for every joint, with
/// the root transforms of the block's first `roots.len()` (at most CROWD_LANES) instances.
/// The slices must be exactly one block for this skeleton (asserted). Returns whether every model
/// element written is finite.
pub(crate) fn crowd_ltm_trs(
    isa: Runnable,
    order: &LevelOrder,
    locals: &[f32],
    roots: &[Mat4],
    models: &mut [f32],
) -> bool {
    let j = order.len();
    assert!(
        j <= MAX_CROWD_JOINTS,
        "a crowd has at most MAX_CROWD_JOINTS joints"
    );
    assert!(
        locals.len() == j * TRS_ELEMENTS * CROWD_LANES
            && models.len() == j * MODEL_ELEMENTS * CROWD_LANES
            && roots.len() <= CROWD_LANES,
        "exactly one AoSoA block of poses and models, at most one root per lane"
    );
    // SAFETY: `isa` proves the CPU runs the kernel. For joint j < n it reads the 10 * 16 floats of
    // locals and writes the 12 * 16 floats of models at offset (j * E) * 16, inside the slices checked
    // above; the parent is -1 (then it reads, for lanes below roots.len() only, the 16 floats of that
    // lane's root Mat4) or below j. Joints are at most MAX_CROWD_JOINTS (asserted), so the largest byte
    // offset, 768 * n, stays inside 32-bit addressing.
    unsafe {
        (isa.pick(|k| k.crowd_ltm_trs, |d| d.crowd_ltm_trs))(
            locals.as_ptr(),
            models.as_mut_ptr(),
            roots.as_ptr().cast(),
            roots.len() as i32,
            order.parents().as_ptr(),
            j as i32,
        )
    }
}
