//! Crowd stage 1 from clips: [`CrowdClipLayer`]s sampled ([`CrowdSamplingJob`], lanes across
//! instances) and blended ([`CrowdBlendingJob`]) into a [`CrowdFrame`]'s pose by
//! [`Character::crowd_play`].

use super::crowd::{CrowdFrame, CrowdParts};
use super::frame::CrowdLayerScratch;
use super::Character;
use crate::animation::{Clip, CrowdSamplingJob, Wrap};
use crate::blending::crowd::{CrowdBlendLayer, CrowdBlendingJob};
use crate::crowd_buffers::{level_block, CrowdPose};
use crate::error::Error;
use crate::layout::trs::{Trs, TrsMut};
use glam::{Quat, Vec3};

/// One layer of a crowd: a clip per instance (or one for all), each instance's time, its weight, and
/// optional per-joint weights shared by every instance. Layers blend by [`CrowdBlendingJob`]'s rules.
#[derive(Clone, Copy, Debug)]
pub struct CrowdClipLayer<'a> {
    /// One clip for every instance, or one per instance; each built for this character's skeleton.
    /// Give instances that share a clip neighbouring indices (see [`CrowdSamplingJob`]).
    pub clips: &'a [&'a Clip],
    /// One time per instance.
    pub times: &'a [f32],
    /// What a time outside a clip means; [`Wrap::Loop`] by default.
    pub wrap: Wrap,
    /// One weight per instance (finite, not negative), or `None` (the default) for 1 everywhere.
    pub weights: Option<&'a [f32]>,
    /// Optional per-joint weights, one per joint in your joint order, for every instance.
    pub joint_weights: Option<&'a [f32]>,
}

impl<'a> CrowdClipLayer<'a> {
    /// `clips` (one, or one per instance) at `times` (one per instance), looping, weight 1.
    pub fn new(clips: &'a [&'a Clip], times: &'a [f32]) -> CrowdClipLayer<'a> {
        CrowdClipLayer {
            clips,
            times,
            wrap: Wrap::Loop,
            weights: None,
            joint_weights: None,
        }
    }

    /// Sets one weight per instance.
    pub fn weights(mut self, weights: &'a [f32]) -> CrowdClipLayer<'a> {
        self.weights = Some(weights);
        self
    }

    /// Sets the wrap mode.
    pub fn wrap(mut self, wrap: Wrap) -> CrowdClipLayer<'a> {
        self.wrap = wrap;
        self
    }

    /// Sets per-joint weights (one per joint, in your joint order).
    pub fn joint_weights(mut self, joint_weights: &'a [f32]) -> CrowdClipLayer<'a> {
        self.joint_weights = Some(joint_weights);
        self
    }
}

impl Character {
    /// Crowd stage 1 from clips: samples every layer for every instance ([`CrowdSamplingJob`], the
    /// lanes across instances) and blends them into the frame's pose ([`CrowdBlendingJob`]), then the
    /// additive layers, on the frame's backend and threads. Each normal layer's joints without a track
    /// hold the rest pose; an additive clip holds deltas, and its joints without a track the identity.
    ///
    /// One normal layer with weight 1 everywhere and no additive layer is sampled straight into the
    /// pose, without a blend (the common crowd: every instance plays its own clip). Clips' morph weight
    /// tracks are not sampled for a crowd (a single frame's [`play`](Character::play) samples them):
    /// set each instance's weights with [`CrowdFrame::set_mesh_weights`] and
    /// [`CrowdFrame::set_rigid_weights`].
    ///
    /// # Errors
    /// [`Error::WrongFrame`]; [`Error::CountMismatch`] for times or weights that are not one per
    /// instance, clips that are not one or one per instance, or joint weights that are not one per
    /// joint; the errors of [`CrowdSamplingJob`] and [`CrowdBlendingJob`].
    pub fn crowd_play(
        &self,
        frame: &mut CrowdFrame,
        layers: &[CrowdClipLayer<'_>],
        additive: &[CrowdClipLayer<'_>],
    ) -> Result<(), Error> {
        self.check_crowd(frame)?;
        let (n, instances) = (self.skeleton.len(), frame.instances());
        for layer in layers.iter().chain(additive) {
            if let Some(w) = layer.weights {
                if w.len() != instances {
                    return Err(Error::CountMismatch {
                        what: "crowd clip layer weights",
                        expected: instances,
                        got: w.len(),
                    });
                }
            }
            if let Some(w) = layer.joint_weights {
                if w.len() != n {
                    return Err(Error::CountMismatch {
                        what: "crowd clip layer joint weights",
                        expected: n,
                        got: w.len(),
                    });
                }
            }
        }
        let (backend, threads, precision) = (frame.backend, frame.threads, frame.precision);
        let CrowdParts {
            pose,
            play: scratch,
            ..
        } = frame.parts_mut();
        if scratch.rest_block.is_empty() {
            scratch.rest_block = level_block(self.level_rest());
        }
        let full = |l: &CrowdClipLayer<'_>| {
            l.joint_weights.is_none() && l.weights.is_none_or(|w| w.iter().all(|&x| x == 1.0))
        };
        if let ([layer], []) = (layers, additive) {
            if full(layer) {
                // The rest pose underneath, unless every clip writes every joint.
                if !layer.clips.iter().all(|c| c.covers_every_joint()) {
                    pose.fill_blocks(&scratch.rest_block);
                }
                if scratch.layers.is_empty() {
                    scratch.layers.push(CrowdLayerScratch::default());
                }
                return CrowdSamplingJob::new(
                    layer.clips,
                    layer.times,
                    &mut scratch.layers[0].context,
                    pose,
                )
                .wrap(layer.wrap)
                .backend(backend)
                .threads(threads)
                .precision(precision)
                .run();
            }
        }
        let count = layers.len().saturating_add(additive.len());
        if scratch.layers.len() < count {
            scratch
                .layers
                .resize_with(count, CrowdLayerScratch::default);
        }
        if !additive.is_empty() && scratch.identity_block.is_empty() {
            scratch.identity_block = level_block((
                &vec![Vec3::ZERO; n],
                &vec![Quat::IDENTITY; n],
                &vec![Vec3::ONE; n],
            ));
        }
        for (i, (layer, s)) in layers
            .iter()
            .chain(additive)
            .zip(scratch.layers.iter_mut())
            .enumerate()
        {
            let under = if i < layers.len() {
                &scratch.rest_block
            } else {
                &scratch.identity_block
            };
            let sampled = match &mut s.pose {
                Some(p) => p,
                slot => slot.insert(CrowdPose::new(&self.skeleton, instances)?),
            };
            sampled.fill_blocks(under);
            CrowdSamplingJob::new(layer.clips, layer.times, &mut s.context, sampled)
                .wrap(layer.wrap)
                .backend(backend)
                .threads(threads)
                .precision(precision)
                .run()?;
            sampled.to_streams(&mut s.translations, &mut s.rotations, &mut s.scales);
            s.joint_weights.clear();
            if let Some(w) = layer.joint_weights {
                self.weights_in_level_order(w, &mut s.joint_weights);
            }
        }
        scratch.ones.clear();
        scratch.ones.resize(instances, 1.0);
        let blend: Vec<CrowdBlendLayer<'_>> = layers
            .iter()
            .chain(additive)
            .zip(&scratch.layers)
            .map(|(layer, s)| CrowdBlendLayer {
                poses: Trs::new(&s.translations, &s.rotations, &s.scales),
                weights: layer.weights.unwrap_or(&scratch.ones),
                joint_weights: layer.joint_weights.map(|_| s.joint_weights.as_slice()),
            })
            .collect();
        let (normal, deltas) = blend.split_at(layers.len().min(blend.len()));
        let total = instances.saturating_mul(n);
        scratch.translations.resize(total, Vec3::ZERO);
        scratch.rotations.resize(total, Quat::IDENTITY);
        scratch.scales.resize(total, Vec3::ONE);
        let (rest_t, rest_q, rest_s) = self.level_rest();
        CrowdBlendingJob::new(
            &self.skeleton,
            instances,
            Trs::new(rest_t, rest_q, rest_s),
            TrsMut::new(
                &mut scratch.translations,
                &mut scratch.rotations,
                &mut scratch.scales,
            ),
        )
        .layers(normal)
        .additive_layers(deltas)
        .backend(backend)
        .threads(threads)
        .precision(precision)
        .run()?;
        pose.set_from_streams(&scratch.translations, &scratch.rotations, &scratch.scales);
        Ok(())
    }
}
