//! The stages of a [`Frame`] on a [`Character`], one call each and together: local to model, the
//! palettes, skinning, the rigid meshes, and `evaluate_pose` / `evaluate` (local to model and the
//! palettes in one kernel pass where they can be).

use super::{Character, Frame};
use crate::backend::{KernelFamily, Precision, Resolved};
use crate::error::Error;
use crate::layout::output::{Skinning, VertexOutputs};
use crate::layout::trs::Trs;
use crate::local_to_model::LocalToModelJob;
use crate::numeric::{self, check_palette};
use crate::palette::{self, dual_quat_palette, PaletteJob};
use crate::skinning::job::{check_skinned, SkinningJob};
use crate::skinning::mesh::SkinnedMesh;

impl Character {
    /// Stage 2 of a frame: every joint's model matrix from the frame's local pose
    /// ([`LocalToModelJob`]), with [`Frame::root`] as the job's root.
    ///
    /// # Errors
    /// [`Error::WrongFrame`] for a frame made by another character, [`Error::IsaUnavailable`].
    pub fn local_to_model(&self, frame: &mut Frame) -> Result<(), Error> {
        self.check_frame(frame)?;
        self.local_to_model_checked(frame)
    }

    /// [`Character::local_to_model`] on a frame `check_frame` accepted.
    fn local_to_model_checked(&self, frame: &mut Frame) -> Result<(), Error> {
        let Frame {
            translations,
            rotations,
            scales,
            models,
            root,
            backend,
            precision,
            ..
        } = frame;
        LocalToModelJob::new(
            &self.skeleton,
            Trs {
                translations,
                rotations,
                scales,
            },
            models,
        )
        .root(*root)
        .backend(*backend)
        .precision(*precision)
        .run()
        .map(|_| ())
        .map_err(|e| self.in_your_order(e))
    }

    /// `e` from a job over the frame's level-order pose, with its joint index put in your order.
    fn in_your_order(&self, e: Error) -> Error {
        let yours = |level: usize| self.skeleton.original_index(level).unwrap_or(level);
        match e {
            Error::NotFinite { what, index, value } => Error::NotFinite {
                what,
                index: yours(index),
                value,
            },
            Error::RotationLength {
                what,
                index,
                squared_length,
            } => Error::RotationLength {
                what,
                index: yours(index),
                squared_length,
            },
            Error::ResultNotFinite { stage, what, index } => Error::ResultNotFinite {
                stage,
                what,
                index: yours(index),
            },
            other => other,
        }
    }

    /// Stage 3 of a frame: each skin's palette, `model(joint) * inverse_bind(joint)` ([`PaletteJob`]),
    /// from the frame's model matrices.
    ///
    /// # Errors
    /// [`Error::WrongFrame`] for a frame made by another character, [`Error::IsaUnavailable`].
    pub fn palettes(&self, frame: &mut Frame) -> Result<(), Error> {
        self.check_frame(frame)?;
        self.palettes_checked(frame)
    }

    /// [`Character::palettes`] on a frame `check_frame` accepted.
    fn palettes_checked(&self, frame: &mut Frame) -> Result<(), Error> {
        for ((skin, levels), palette) in self
            .skins
            .iter()
            .zip(&self.skin_levels)
            .zip(&mut frame.palettes)
        {
            PaletteJob::new(&frame.models, &skin.inverse_binds, palette)
                .joints(levels)
                .backend(frame.backend)
                .precision(frame.precision)
                .run()
                .map_err(|e| match e {
                    Error::NotFinite {
                        what: "model matrices",
                        ..
                    } => self.in_your_order(e),
                    other => other,
                })?;
        }
        Ok(())
    }

    /// Stage 4 of a frame: skins every mesh with its skin's palette ([`SkinningJob`]), with the
    /// frame's [`Frame::renormalize`] and [`Frame::threads`], writing the streams [`Frame::outputs`]
    /// asks for. With [`Skinning::DualQuaternion`](crate::Skinning::DualQuaternion) it converts each
    /// skin's palette first ([`dual_quat_palette`](crate::dual_quat_palette)) and skins with
    /// [`SkinningJob::dual_quaternion`]; a morphed mesh is then morphed first and skinned after (the
    /// fused morph and skin pass is linear only).
    ///
    /// # Errors
    /// [`Error::WrongFrame`] for a frame made by another character, [`Error::IsaUnavailable`], and
    /// those of [`SkinningJob`] and [`dual_quat_palette`](crate::dual_quat_palette).
    pub fn skin(&self, frame: &mut Frame) -> Result<(), Error> {
        self.skin_stage(frame, true)
    }

    /// [`Character::skin`], with the fused morph + skin pass allowed (`fuse`) or not: without it, every
    /// morphed mesh takes the pre-pass, which the lab measures against the fused pass.
    pub(crate) fn skin_stage(&self, frame: &mut Frame, fuse: bool) -> Result<(), Error> {
        self.check_frame(frame)?;
        // Each mesh's box is known again once the stage has written the mesh (see Frame::mesh_bounds).
        frame.mesh_bounds.fill(None);
        let dual = frame.skinning == Skinning::DualQuaternion;
        if dual {
            for (palette, entries) in frame.palettes.iter().zip(&mut frame.dual_quats) {
                dual_quat_palette(palette, entries)?;
            }
        }
        // Who morphs, decided once (an error surfaces only where a mesh is morphed).
        let morphing = morph_backend(frame, KernelFamily::Skinning);
        for (((((mesh, &skin), out), (morph, weights)), copy), known) in self
            .meshes
            .iter()
            .zip(&self.mesh_skins)
            .zip(&mut frame.meshes)
            .zip(self.mesh_morphs.iter().zip(&frame.mesh_weights))
            .zip(&mut frame.morphed)
            .zip(&mut frame.mesh_bounds)
        {
            // A mesh with morph weights is morphed and skinned in one pass where that pass covers the
            // call, else morphed into the frame's copy, in place, and that copy skinned; a mesh without
            // them skins the shared mesh's bind pose as it is.
            let skinned: &SkinnedMesh = match (morph, copy) {
                (Some(m), Some(c)) if weights.iter().any(|&w| w != 0.0) => {
                    let backend = morphing.clone()?;
                    let palette = &frame.palettes[skin];
                    // Morph weights are checked where they are set; a frame's are checked again here,
                    // since the morph's bound on the morphed attributes needs them finite.
                    let Some(magnitude) = m.morphed_magnitude(mesh, weights) else {
                        return Err(numeric::check_finite("morph weights", weights, 1)
                            .err()
                            .unwrap_or(Error::NotFinite {
                                what: "morph weights",
                                index: 0,
                                value: f32::NAN,
                            }));
                    };
                    // The fused pass writes every stream the mesh has.
                    let fused = if fuse
                        && !dual
                        && frame.outputs == VertexOutputs::All
                        && frame.precision == Precision::Fast
                    {
                        m.skin_fused(
                            backend,
                            mesh,
                            palette,
                            weights,
                            frame.renormalize,
                            frame.threads,
                            out,
                        )
                    } else {
                        None
                    };
                    if let Some(bounds) = fused {
                        // The fused pass has no bound to prove: its outputs are checked.
                        let used = palette.get(..mesh.joint_count()).unwrap_or(palette);
                        check_palette(used)?;
                        check_skinned(&out.output(), mesh.vertex_count())?;
                        *known = Some(bounds);
                        continue;
                    }
                    m.morph_into(backend, mesh, weights, c)?;
                    c.set_magnitude(magnitude);
                    c
                }
                _ => mesh,
            };
            let output = out.output_for(frame.outputs);
            let job = if dual {
                SkinningJob::dual_quaternion(skinned, &frame.dual_quats[skin], output)
            } else {
                SkinningJob::new(skinned, &frame.palettes[skin], output)
            };
            *known = Some(
                job.renormalize(frame.renormalize)
                    .threads(frame.threads)
                    .backend(frame.backend)
                    .precision(frame.precision)
                    .run_boxed()?,
            );
        }
        Ok(())
    }

    /// Stage 5 of a frame: every rigid mesh, morphed by the frame's weights (where it has targets and
    /// a weight is not zero) and transformed by its joint's model matrix; see [`RigidMesh`](super::RigidMesh) for how
    /// normals and tangents transform.
    ///
    /// # Errors
    /// [`Error::WrongFrame`] for a frame made by another character, [`Error::IsaUnavailable`].
    pub fn rigid(&self, frame: &mut Frame) -> Result<(), Error> {
        self.check_frame(frame)?;
        if self.rigid.is_empty() {
            return Ok(());
        }
        let backend = morph_backend(frame, KernelFamily::Transform)?;
        for (((mesh, &level), out), weights) in self
            .rigid
            .iter()
            .zip(&self.rigid_levels)
            .zip(&mut frame.rigid)
            .zip(&frame.rigid_weights)
        {
            // check_frame proved the lengths; a mismatch would be a bug, reported as the frame's.
            let got = out.positions.len();
            let out = mesh.out_for(out, 0, 1).ok_or(Error::CountMismatch {
                what: "rigid mesh vertices",
                expected: mesh.vertex_count(),
                got,
            })?;
            mesh.evaluate(
                backend,
                &frame.models[level],
                weights,
                (frame.outputs, frame.renormalize),
                &mut frame.scratch,
                out,
            )?;
        }
        Ok(())
    }

    /// Stages 2 and 3 from the frame's local pose, [`local_to_model`](Character::local_to_model)
    /// then [`palettes`](Character::palettes), and no vertex work: the pose a GPU-skinned character
    /// needs ([`Frame::palettes`], [`palette_rows_3x4`](crate::palette_rows_3x4) for upload).
    ///
    /// On an ISA the two stages run as one pass over the joints, each joint's palette entries computed
    /// right after its model matrix, with the same bits as the two stages called one after the other
    /// (which is what runs on the reference, for more than eight skins, and where a value is not
    /// finite, so that the error is the same too). After an error the model matrices and palettes hold
    /// whatever was computed before it: use them only after `Ok`.
    ///
    /// # Errors
    /// Those of the two stages.
    pub fn evaluate_pose(&self, frame: &mut Frame) -> Result<(), Error> {
        self.check_frame(frame)?;
        if self.pose_fused(frame) {
            return Ok(());
        }
        self.local_to_model_checked(frame)?;
        self.palettes_checked(frame)
    }

    /// Stages 2 and 3 in one kernel pass (see `palette::pose`), on a frame already checked; `false`
    /// where the two stages must run instead (the reference, a value that is not finite, a plan that
    /// does not exist).
    fn pose_fused(&self, frame: &mut Frame) -> bool {
        let Some(plan) = &self.palette_plan else {
            return false;
        };
        // The fused pass has no deterministic form: the two stages' deterministic kernels run instead.
        if frame.precision == Precision::Deterministic {
            return false;
        }
        let Frame {
            translations,
            rotations,
            scales,
            models,
            root,
            backend,
            palettes,
            ..
        } = frame;
        palette::pose::models_and_palettes(
            &self.skeleton,
            Trs {
                translations,
                rotations,
                scales,
            },
            root,
            models,
            *backend,
            plan,
            palettes,
        )
    }

    /// Stages 2 to 5 from the frame's local pose: [`local_to_model`](Character::local_to_model),
    /// [`palettes`](Character::palettes), [`skin`](Character::skin), then [`rigid`](Character::rigid).
    ///
    /// # Errors
    /// Those of the four stages.
    pub fn evaluate(&self, frame: &mut Frame) -> Result<(), Error> {
        self.evaluate_pose(frame)?;
        self.skin(frame)?;
        self.rigid(frame)
    }
}

/// Who runs a frame's morph targets and rigid meshes, which have no deterministic kernels: the frame's
/// backend, or for [`Precision::Deterministic`] the serial reference.
fn morph_backend(frame: &Frame, family: KernelFamily) -> Result<Resolved, Error> {
    frame
        .backend
        .resolve(family)?
        .without_det_kernels(frame.precision)
}
