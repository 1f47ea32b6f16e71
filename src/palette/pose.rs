//! One character's model matrices and palettes in one kernel pass (`ltm_palette_trs`): each joint's
//! palette entries are computed right after its model matrix, while it is in registers, and fill the
//! cycles the joint loop's chain of dependent products leaves idle.

use crate::backend::{Backend, Resolved};
use crate::error::Error;
use crate::ffi::hierarchy as ffi;
use crate::layout::palette::{PaletteMatrix, PalettePlan};
use crate::layout::trs::Trs;
use crate::skeleton::Skeleton;
use glam::Mat4;

/// The local-to-model job of `trs` under `root` into `models` and, in the same pass, the palettes of
/// `plan` (`palettes[s][i] = models[j] * inverse_binds[s][i]` for each entry `(s, i)` of level joint
/// `j`, the inverse binds the plan holds), with the same bits as [`LocalToModelJob`](crate::LocalToModelJob) then
/// [`PaletteJob`](super::PaletteJob) per skin on the same ISA.
///
/// Returns `Ok(true)` when that is done and every value is proven finite, `Ok(false)` where the
/// caller must run the two jobs instead (which then name what broke a rule): on the reference, where
/// the root is not finite (its bottom row, which the kernel does not read, included), or where the
/// kernel reports a value that is not finite. The caller has checked the lengths (the FFI asserts them).
///
/// # Errors
/// [`Error::IsaUnavailable`] for an explicit ISA this CPU cannot run.
#[allow(clippy::too_many_arguments)]
pub(crate) fn models_and_palettes(
    skeleton: &Skeleton,
    trs: Trs<'_>,
    root: &Mat4,
    models: &mut [Mat4],
    backend: Backend,
    plan: &PalettePlan,
    palettes: &mut [Vec<PaletteMatrix>],
) -> Result<bool, Error> {
    let Resolved::Ispc(isa) = backend.resolve()? else {
        return Ok(false);
    };
    if !root.is_finite() {
        return Ok(false);
    }
    Ok(ffi::ltm_palette_trs(
        isa,
        skeleton.kernel_order(),
        trs,
        root,
        models,
        plan,
        palettes,
    ))
}
