//! One character's model matrices and palettes in one kernel pass (`ltm_palette_trs`): each joint's
//! palette entries are computed right after its model matrix, while it is in registers, and fill the
//! cycles the joint loop's chain of dependent products leaves idle.

use crate::backend::{Backend, KernelFamily, Resolved};
use crate::ffi::hierarchy as ffi;
use crate::layout::palette::{PaletteMatrix, PalettePlan};
use crate::layout::trs::Trs;
use crate::skeleton::Skeleton;
use glam::Mat4;

/// The local-to-model job of `trs` under `root` into `models` and, in the same pass, the palettes of
/// `plan` (`palettes[s][i] = models[j] * inverse_binds[s][i]` for each entry `(s, i)` of level joint
/// `j`, the inverse binds the plan holds), with the same bits as
/// [`LocalToModelJob`](crate::LocalToModelJob) then [`PaletteJob`](super::PaletteJob) per skin on the
/// same ISA.
///
/// Returns `true` when that is done and every value is proven finite, `false` where the caller must
/// run the two jobs instead, which then name what broke a rule in their own order: on the reference,
/// where the backend does not resolve to a runnable ISA, where the root is not finite (its bottom row,
/// which the products ignore, included), or where the kernel reports a value that is not finite (the
/// models and palettes are then overwritten with whatever the kernel computed). The caller has checked
/// the lengths (the FFI asserts them).
pub(crate) fn models_and_palettes(
    skeleton: &Skeleton,
    trs: Trs<'_>,
    root: &Mat4,
    models: &mut [Mat4],
    backend: Backend,
    plan: &PalettePlan,
    palettes: &mut [Vec<PaletteMatrix>],
) -> bool {
    let Ok(Resolved::Ispc(isa)) = backend.resolve(KernelFamily::LocalToModel) else {
        return false;
    };
    root.is_finite()
        && ffi::ltm_palette_trs(
            isa,
            skeleton.kernel_order(),
            trs,
            root,
            models,
            plan,
            palettes,
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Isa;
    use crate::local_to_model::LocalToModelJob;
    use crate::palette::PaletteJob;
    use glam::{Quat, Vec3};

    /// The pass runs (returns `true`) on every ISA here and gives the two jobs' bits: a 70-joint tree
    /// (a whole 64-joint block and a partial one), two skins, one naming joints twice and leaving some
    /// out. tests/fused_pose.rs compares the same through `Character`, where a fallback would hide
    /// whether the pass ran at all.
    #[test]
    fn the_pass_runs_and_gives_the_two_jobs_bits() {
        let n = 70;
        let parents: Vec<Option<usize>> =
            (0..n).map(|j| (j > 0).then(|| (j * 7 + 3) % j)).collect();
        let skeleton = Skeleton::from_parents(&parents).unwrap();
        let f = |j: usize, k: usize| ((j * 13 + k * 7) % 17) as f32 / 17.0 - 0.5;
        let t: Vec<Vec3> = (0..n)
            .map(|j| Vec3::new(f(j, 0), f(j, 1), f(j, 2)))
            .collect();
        let q: Vec<Quat> = (0..n)
            .map(|j| Quat::from_xyzw(f(j, 3), f(j, 4), f(j, 5), 1.0))
            .collect();
        let s: Vec<Vec3> = (0..n).map(|j| Vec3::splat(1.0 + f(j, 6))).collect();
        let skins: Vec<Vec<usize>> = vec![
            (0..n).rev().collect(),
            (0..n / 2).map(|i| (i * 5) % n).collect(),
        ];
        let binds: Vec<Vec<Mat4>> = skins
            .iter()
            .map(|skin| {
                skin.iter()
                    .map(|&j| Mat4::from_translation(Vec3::new(f(j, 7), 1.0, f(j, 8))))
                    .collect()
            })
            .collect();
        let bind_slices: Vec<&[Mat4]> = binds.iter().map(Vec::as_slice).collect();
        let plan = PalettePlan::new(n, &skins, &bind_slices).unwrap();
        let root = Mat4::from_translation(Vec3::new(0.5, -1.0, 2.0));
        let isas = Isa::available();
        for &isa in &isas {
            let mut models = vec![Mat4::ZERO; n];
            let mut palettes: Vec<Vec<PaletteMatrix>> = skins
                .iter()
                .map(|s| vec![PaletteMatrix::IDENTITY; s.len()])
                .collect();
            let ran = models_and_palettes(
                &skeleton,
                Trs::new(&t, &q, &s),
                &root,
                &mut models,
                Backend::Isa(isa),
                &plan,
                &mut palettes,
            );
            assert!(ran, "{isa:?}: the pass fell back");
            let mut staged = vec![Mat4::ZERO; n];
            LocalToModelJob::new(&skeleton, Trs::new(&t, &q, &s), &mut staged)
                .root(root)
                .backend(isa)
                .run()
                .unwrap();
            let bits = |m: &[Mat4]| -> Vec<u32> {
                m.iter()
                    .flat_map(|m| m.to_cols_array())
                    .map(f32::to_bits)
                    .collect()
            };
            assert_eq!(bits(&models), bits(&staged), "{isa:?}: models");
            for ((skin, ib), got) in skins.iter().zip(&binds).zip(&palettes) {
                let mut want = vec![PaletteMatrix::IDENTITY; skin.len()];
                PaletteJob::new(&staged, ib, &mut want)
                    .joints(skin)
                    .backend(isa)
                    .run()
                    .unwrap();
                let rows = |p: &[PaletteMatrix]| -> Vec<u32> {
                    p.iter()
                        .flat_map(|e| e.rows.into_iter().flatten())
                        .map(f32::to_bits)
                        .collect()
                };
                assert_eq!(rows(got), rows(&want), "{isa:?}: palettes");
            }
        }
        eprintln!("the one-pass pose ran on {isas:?}");
    }
}
