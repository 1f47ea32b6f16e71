//! Stage 4 of a [`CrowdFrame`]: every skinned mesh of every instance, morphed first with that
//! instance's own weights where the mesh has morph targets.
//!
//! A mesh none of whose instances has a weight other than zero skins its bind pose for the whole crowd
//! in one [`CrowdSkinningJob`]. Otherwise each instance runs what a single [`Frame`](crate::Frame)'s
//! skin stage runs for it: the morph of the bind pose into a copy of the prepared mesh (where one of
//! its weights is not zero), then [`SkinningJob`] with its palette (converted to dual quaternions
//! first where the frame asks). A deterministic crowd thus has the bits of a deterministic frame; a
//! fast one agrees with a fast frame within the skinning tolerance (its palettes come from the crowd
//! kernels, and a fast frame may fuse the morph into the skinning pass where `Character::skin` can).
//! On [`Threads::All`] the instances are split into one run per thread of rayon's pool, each with its
//! own copy of the mesh.

use super::crowd::{instance_range, set_instance_weights, CrowdFrame};
use super::frame::SkinnedVertices;
use super::morph::SkinnedMorph;
use super::Character;
use crate::backend::{Backend, KernelFamily, Precision, Resolved, Threads};
use crate::error::Error;
use crate::layout::dual_quat::DualQuatEntry;
use crate::layout::output::{Renormalize, Skinning, VertexOutputs};
use crate::layout::palette::PaletteMatrix;
use crate::palette::dual_quat_palette;
use crate::skinning::crowd::{in_crowd, CrowdSkinningJob};
use crate::skinning::job::{SkinOutput, SkinningJob};
use crate::skinning::mesh::SkinnedMesh;
use glam::{Vec3, Vec4};

impl CrowdFrame {
    /// One instance's morph weights of skinned mesh `mesh` (empty when it has no morph targets);
    /// `None` out of range. A new crowd frame starts every instance at the character's weights
    /// ([`Character::with_mesh_morph_targets`]). [`Character::crowd_play`] samples no morph weights;
    /// [`GltfScene::evaluate_crowd`](crate::gltf::GltfScene::evaluate_crowd) samples them from each
    /// instance's clip, replacing what was set.
    pub fn mesh_weights(&self, mesh: usize, instance: usize) -> Option<&[f32]> {
        super::crowd::run(self.mesh_weights.get(mesh)?, self.instances(), instance)
    }

    /// Sets one instance's morph weights of skinned mesh `mesh`, one per morph target (mesh, then
    /// instance, as in [`positions`](CrowdFrame::positions)). Negative and large weights are allowed;
    /// a morph whose result overflows is refused by the skin stage.
    ///
    /// # Errors
    /// [`Error::NotFinite`] for a NaN or infinite weight; [`Error::InstanceOutOfRange`];
    /// [`Error::CountMismatch`] when `mesh` names no skinned mesh or `weights` does not have one
    /// weight per target.
    pub fn set_mesh_weights(
        &mut self,
        mesh: usize,
        instance: usize,
        weights: &[f32],
    ) -> Result<(), Error> {
        let instances = self.instances();
        set_instance_weights(
            (&mut self.mesh_weights, &self.mesh_targets),
            "skinned meshes",
            (mesh, instance, instances),
            weights,
        )
    }
}

/// How a crowd frame skins, copied out of it so that its buffers can be borrowed apart.
#[derive(Clone, Copy)]
struct How {
    backend: Backend,
    threads: Threads,
    precision: Precision,
    skinning: Skinning,
    renormalize: Renormalize,
    outputs: VertexOutputs,
}

impl Character {
    /// Crowd stage 4: every mesh of every instance ([`CrowdSkinningJob`]), with linear blending or,
    /// as [`CrowdFrame::skinning`](CrowdFrame#structfield.skinning) asks, dual quaternions converted
    /// from each instance's palette. A mesh with morph targets is morphed first with each instance's
    /// weights ([`CrowdFrame::set_mesh_weights`]) into a copy of the prepared mesh (one per thread of
    /// the pool), then skinned, as a single [`Frame`](crate::Frame)'s skin stage does when it morphs
    /// before it skins: a deterministic crowd has the bits of a deterministic frame with the same pose,
    /// root and weights; a fast one agrees with a fast frame within the skinning tolerance (its
    /// palettes come from the crowd kernels, and a fast frame may fuse the morph into the skinning).
    ///
    /// # Errors
    /// [`Error::WrongFrame`], [`Error::CountMismatch`] for outputs that were resized,
    /// [`Error::IsaUnavailable`], [`Error::FloatEnvironment`] for a deterministic frame; those of
    /// [`CrowdSkinningJob`], whose [`Error::ResultNotFinite`] counts its vertex across the crowd
    /// (`instance * v + vertex`), a morph whose finite weights overflow included; and
    /// [`Error::NotFinite`] for a weight that is not finite (counted across the crowd,
    /// `instance * targets + target`).
    pub fn crowd_skin(&self, frame: &mut CrowdFrame) -> Result<(), Error> {
        self.check_crowd(frame)?;
        // A mesh's boxes are known again once the stage has written it (see CrowdFrame::mesh_bounds).
        for m in &mut frame.mesh_bounds {
            m.known = false;
        }
        let how = How {
            backend: frame.backend,
            threads: frame.threads,
            precision: frame.precision,
            skinning: frame.skinning,
            renormalize: frame.renormalize,
            outputs: frame.outputs,
        };
        for ((((mesh, &skin), out), m), (morph, (weights, copies))) in self
            .meshes
            .iter()
            .zip(&self.mesh_skins)
            .zip(&mut frame.meshes)
            .zip(&mut frame.mesh_bounds)
            .zip(
                self.mesh_morphs
                    .iter()
                    .zip(frame.mesh_weights.iter().zip(&mut frame.morphed)),
            )
        {
            let palettes = frame.palettes.get(skin).ok_or(Error::CountMismatch {
                what: "crowd palettes (one per skin)",
                expected: skin.saturating_add(1),
                got: frame.palettes.len(),
            })?;
            match morph {
                Some(morph) if weights.iter().any(|&w| w != 0.0) => {
                    let morphed = Morphed {
                        mesh,
                        morph,
                        weights,
                        palettes: (palettes.as_slice(), palettes.entries()),
                    };
                    morphed.skin(how, copies, out, &mut m.boxes)?;
                }
                _ => {
                    CrowdSkinningJob::new(mesh, palettes, out.output_for(how.outputs))
                        .renormalize(how.renormalize)
                        .skinning(how.skinning)
                        .backend(how.backend)
                        .threads(how.threads)
                        .precision(how.precision)
                        .run_with_bounds(&mut m.boxes)?;
                }
            }
            m.known = true;
        }
        Ok(())
    }
}

/// A skinned mesh with morph targets and every instance's weights and palettes.
struct Morphed<'a> {
    mesh: &'a SkinnedMesh,
    morph: &'a SkinnedMorph,
    /// Every instance's weights in turn, one per target each.
    weights: &'a [f32],
    /// Every instance's palette in turn, and the entries of each.
    palettes: (&'a [PaletteMatrix], usize),
}

/// One run of instances: its first instance, its copy of the mesh, and its part of each output
/// stream and of the boxes.
type Run<'a> = (
    usize,
    &'a mut SkinnedMesh,
    (
        &'a mut [Vec3],
        Option<&'a mut [Vec3]>,
        Option<&'a mut [Vec4]>,
    ),
    &'a mut [Option<(Vec3, Vec3)>],
);

impl Morphed<'_> {
    /// Morphs and skins every instance into `out`, its box into `boxes`, with `copies` to morph into
    /// (one more per thread of the pool where `how` runs on it).
    fn skin(
        &self,
        how: How,
        copies: &mut Vec<SkinnedMesh>,
        out: &mut SkinnedVertices,
        boxes: &mut [Option<(Vec3, Vec3)>],
    ) -> Result<(), Error> {
        let (palettes, entries) = self.palettes;
        let instances = boxes.len();
        let v = self.mesh.vertex_count();
        // Who morphs: the frame's backend, or the serial reference for a deterministic frame (no
        // deterministic morph kernels), which checks the threads' floating-point mode.
        let morphing = how
            .backend
            .resolve(KernelFamily::Skinning)?
            .without_det_kernels_on(how.precision, how.threads)?;
        if v == 0 || instances == 0 {
            boxes.fill(None);
            return Ok(());
        }
        let targets = self.morph.targets.count();
        let tasks = match how.threads {
            Threads::One => 1,
            Threads::All => rayon::current_num_threads().clamp(1, instances),
        };
        while copies.len() < tasks {
            copies.push(self.mesh.clone());
        }
        let per_task = instances.div_ceil(tasks);
        let span = per_task.saturating_mul(v);
        let SkinnedVertices {
            positions,
            normals,
            tangents,
        } = out;
        let normals = normals.as_deref_mut().filter(|_| how.outputs.normals());
        let tangents = tangents.as_deref_mut().filter(|_| how.outputs.tangents());
        let mut normals = normals.map(|n| n.chunks_mut(span));
        let mut tangents = tangents.map(|t| t.chunks_mut(span));
        let mut runs = positions
            .chunks_mut(span)
            .zip(boxes.chunks_mut(per_task))
            .zip(copies.iter_mut())
            .enumerate()
            .map(|(k, ((p, b), copy))| {
                let n = normals.as_mut().and_then(Iterator::next);
                let t = tangents.as_mut().and_then(Iterator::next);
                (k * per_task, copy, (p, n, t), b)
            });
        let run = |(first, copy, (p, n, t), b): Run<'_>| -> Result<(), Error> {
            let mut dual = Vec::new();
            let mut n = n.map(|n| n.chunks_mut(v));
            let mut t = t.map(|t| t.chunks_mut(v));
            for (k, (p, slot)) in p.chunks_mut(v).zip(b.iter_mut()).enumerate() {
                let i = first + k;
                let output = SkinOutput::Separate {
                    positions: p,
                    normals: n.as_mut().and_then(Iterator::next),
                    tangents: t.as_mut().and_then(Iterator::next),
                };
                let weights = instance_run(self.weights, i, targets, "morph weights")?;
                let palette = instance_run(palettes, i, entries, "crowd palettes")?;
                *slot = self.skin_instance(
                    (morphing, how),
                    (palette, weights),
                    (&mut *copy, &mut dual),
                    output,
                    i,
                )?;
            }
            Ok(())
        };
        match how.threads {
            Threads::One => runs.try_for_each(run),
            Threads::All => {
                let runs: Vec<Run<'_>> = runs.collect();
                let mut results: Vec<Result<(), Error>> = Vec::new();
                results.resize_with(runs.len(), || Ok(()));
                rayon::scope(|scope| {
                    for (r, result) in runs.into_iter().zip(results.iter_mut()) {
                        let run = &run;
                        scope.spawn(move |_| *result = run(r));
                    }
                });
                // The first run's error, as on one thread.
                results.into_iter().collect()
            }
        }
    }

    /// Instance `i`: its bind pose morphed by `weights` into `copy` where one is not zero, then
    /// skinned with `palette` into `output`, as a single frame's skin stage does; its box.
    fn skin_instance(
        &self,
        (morphing, how): (Resolved, How),
        (palette, weights): (&[PaletteMatrix], &[f32]),
        (copy, dual): (&mut SkinnedMesh, &mut Vec<DualQuatEntry>),
        output: SkinOutput<'_>,
        i: usize,
    ) -> Result<Option<(Vec3, Vec3)>, Error> {
        let (mesh, morph) = (self.mesh, self.morph);
        let skinned: &SkinnedMesh = if weights.iter().any(|&w| w != 0.0) {
            // Weights are checked where they are set; the morph's bound needs them finite.
            let Some(magnitude) = morph.morphed_magnitude(mesh, weights) else {
                let first = weights.iter().position(|w| !w.is_finite()).unwrap_or(0);
                return Err(Error::NotFinite {
                    what: "morph weights",
                    index: i.saturating_mul(weights.len()).saturating_add(first),
                    value: weights.get(first).copied().unwrap_or(f32::NAN),
                });
            };
            morph.morph_into(morphing, mesh, weights, copy)?;
            copy.set_magnitude(magnitude);
            copy
        } else {
            mesh
        };
        let entries = palette.len();
        let job = match how.skinning {
            Skinning::Linear => SkinningJob::new(skinned, palette, output),
            Skinning::DualQuaternion => {
                dual.resize(entries, DualQuatEntry::IDENTITY);
                dual_quat_palette(palette, dual).map_err(|e| in_crowd(e, i, entries))?;
                SkinningJob::dual_quaternion(skinned, dual, output)
            }
        };
        job.renormalize(how.renormalize)
            .backend(how.backend)
            .precision(how.precision)
            .run_with_bounds()
            .map_err(|e| in_crowd(e, i, mesh.vertex_count()))
    }
}

/// Instance `i`'s run of `per` items in `all`; [`Error::CountMismatch`] naming `what` where `all` is
/// too short (the frame's checks prove it is not; a failed lookup is reported, never skipped).
fn instance_run<'a, T>(
    all: &'a [T],
    i: usize,
    per: usize,
    what: &'static str,
) -> Result<&'a [T], Error> {
    instance_range(i, per)
        .and_then(|range| all.get(range))
        .ok_or(Error::CountMismatch {
            what,
            expected: i.saturating_add(1).saturating_mul(per),
            got: all.len(),
        })
}
