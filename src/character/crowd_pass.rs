//! Crowd stages 1 to 3 from clips in one pass, palettes only: [`Character::crowd_play_palettes`].
//!
//! [`Character::crowd_play`] then [`Character::evaluate_crowd_pose`] write every instance's local pose
//! and models to the frame, then read them back: a crowd of 10,000 instances of a 67-joint rig holds
//! 27 MB of poses and 32 MB of models, far past the caches. A GPU-skinning crowd needs the palettes
//! only, so the pass samples one block of instances (16) into a block of scratch, runs local to model
//! into another and the palettes from it while both are in the nearest caches, then moves on: the
//! only stream to memory is the palettes. The kernels are the stages' own, so the palettes have the
//! same bits.

use super::crowd::{CrowdFrame, CrowdParts};
use super::crowd_play::CrowdClipLayer;
use super::frame::CrowdLayerScratch;
use super::Character;
use crate::animation::CrowdSamplingJob;
use crate::crowd_buffers::level_block;
use crate::error::Error;
use crate::local_to_model::crowd::CrowdLocalToModelJob;
use crate::palette::crowd::{BlockStages, SkinPalettes};

impl Character {
    /// Crowd stages 1 to 3 from clips, for a GPU-skinned crowd: every instance's palettes
    /// ([`CrowdFrame::palettes`]) from `layers` and `additive` as [`crowd_play`](Character::crowd_play)
    /// plays them, with the frame's roots, as [`evaluate_crowd_pose`](Character::evaluate_crowd_pose)
    /// computes them, and the same bits.
    ///
    /// Where one layer plays at weight 1 everywhere (per-instance weights, if given, all exactly 1; no
    /// per-joint weights, no additive layer: a crowd in which every instance plays its own clip) on an
    /// ISA, with [`Precision::Fast`](crate::Precision::Fast), the three stages run block by block (16
    /// instances), each block's pose and models in scratch that stays in cache, and **the frame's pose
    /// and models are not written**: they keep what they held. Otherwise (a deterministic frame among
    /// them: its sampling has no fused form), and wherever a value is not finite (so that the stages
    /// name it), this is `crowd_play` then `evaluate_crowd_pose`, which write them. Call those two when
    /// you need the pose or the models.
    ///
    /// # Errors
    /// Those of [`crowd_play`](Character::crowd_play) and
    /// [`evaluate_crowd_pose`](Character::evaluate_crowd_pose). After an error the palettes are
    /// unspecified: a pass that met a value that is not finite may have written some of them before
    /// the two calls ran and reported it.
    pub fn crowd_play_palettes(
        &self,
        frame: &mut CrowdFrame,
        layers: &[CrowdClipLayer<'_>],
        additive: &[CrowdClipLayer<'_>],
    ) -> Result<(), Error> {
        if !self.crowd_pass(frame, layers, additive) {
            self.crowd_play(frame, layers, additive)?;
            self.evaluate_crowd_pose(frame)?;
        }
        Ok(())
    }

    /// The pass, where it applies and every rule holds; false (the stages then run, and report any
    /// error) otherwise, or after a value that is not finite.
    fn crowd_pass(
        &self,
        frame: &mut CrowdFrame,
        layers: &[CrowdClipLayer<'_>],
        additive: &[CrowdClipLayer<'_>],
    ) -> bool {
        let ([layer], []) = (layers, additive) else {
            return false;
        };
        let instances = frame.instances();
        let full = layer.joint_weights.is_none()
            && layer
                .weights
                .is_none_or(|w| w.len() == instances && w.iter().all(|&x| x == 1.0));
        if !full || self.check_crowd(frame).is_err() {
            return false;
        }
        let (backend, threads, precision) = (frame.backend, frame.threads, frame.precision);
        let CrowdParts {
            pose,
            play,
            models,
            roots,
            palettes,
        } = frame.parts_mut();
        if play.rest_block.is_empty() {
            play.rest_block = level_block(self.level_rest());
        }
        if play.layers.is_empty() {
            play.layers.push(CrowdLayerScratch::default());
        }
        let skins: Vec<SkinPalettes<'_>> = self
            .skins
            .iter()
            .zip(&self.skin_levels)
            .zip(palettes.iter_mut())
            .map(|((skin, joints), palettes)| SkinPalettes {
                joints,
                inverse_binds: &skin.inverse_binds,
                palettes,
            })
            .collect();
        let stages = {
            // Validated here; its models give the shape only and are not written.
            let models_job = CrowdLocalToModelJob::new(&self.skeleton, pose, models)
                .roots(roots)
                .backend(backend)
                .threads(threads)
                .precision(precision);
            BlockStages::new(&models_job, &self.skeleton, roots, skins, threads.tasks())
        };
        let Some((stages, states)) = stages else {
            return false;
        };
        let sampling =
            CrowdSamplingJob::new(layer.clips, layer.times, &mut play.layers[0].context, pose)
                .wrap(layer.wrap)
                .backend(backend)
                .threads(threads)
                .precision(precision);
        if sampling.validate().is_err() {
            return false;
        }
        sampling.run_blocks(
            &play.rest_block,
            stages.per_task(),
            states,
            |state, k, block| stages.run(state, k, block),
        )
    }
}
