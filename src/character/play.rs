//! Stage 1 of a frame from clips: [`ClipLayer`]s sampled and blended into the frame's local pose by
//! [`Character::play`].

use super::frame::LayerScratch;
use super::{Character, Frame};
use crate::animation::{Clip, SamplingJob, Wrap};
use crate::blending::BlendingJob;
use crate::error::Error;
use crate::layout::blend::BlendLayer;
use crate::layout::trs::{Trs, TrsMut};
use glam::{Quat, Vec3};

/// One clip played in a frame: the clip, its time and wrap, its weight, and optional per-joint weights
/// (a mask). Layers are blended by [`BlendingJob`]'s rules: the same weights, threshold and additive
/// equation.
#[derive(Clone, Copy, Debug)]
pub struct ClipLayer<'a> {
    /// The clip; built for this character's skeleton (or one with the same joint order).
    pub clip: &'a Clip,
    /// The time in the clip.
    pub time: f32,
    /// What a time outside the clip means; [`Wrap::Loop`] by default, as a game plays a cycle.
    pub wrap: Wrap,
    /// The layer's weight: finite, not negative, zero or normal. 1 by default.
    pub weight: f32,
    /// Optional per-joint weights, one per joint in your joint order (0 leaves a joint to the other
    /// layers, for example an upper-body mask).
    pub joint_weights: Option<&'a [f32]>,
}

impl<'a> ClipLayer<'a> {
    /// `clip` at `time`, looping, with weight 1 on every joint.
    pub fn new(clip: &'a Clip, time: f32) -> ClipLayer<'a> {
        ClipLayer {
            clip,
            time,
            wrap: Wrap::Loop,
            weight: 1.0,
            joint_weights: None,
        }
    }

    /// Sets the weight.
    pub fn weight(mut self, weight: f32) -> ClipLayer<'a> {
        self.weight = weight;
        self
    }

    /// Sets the wrap mode.
    pub fn wrap(mut self, wrap: Wrap) -> ClipLayer<'a> {
        self.wrap = wrap;
        self
    }

    /// Sets per-joint weights (one per joint, in your joint order).
    pub fn joint_weights(mut self, joint_weights: &'a [f32]) -> ClipLayer<'a> {
        self.joint_weights = Some(joint_weights);
        self
    }
}

impl Character {
    /// Stage 1 from clips: samples every layer ([`SamplingJob`]) and blends them into the frame's local
    /// pose ([`BlendingJob`]), both on the frame's backend ( the rest pose as its fallback), then the additive
    /// layers on top. Each normal layer's joints without a track hold the rest pose; an additive
    /// clip holds deltas (see [`BlendingJob`]), and its joints without a track hold the identity delta.
    /// Morph weights are left as they are, so weights set by hand stay.
    ///
    /// The frame keeps one cursor per layer position: keep a clip at the same position from frame to
    /// frame for forward playback without searching (a clip at another position is correct, only
    /// searched).
    ///
    /// # Errors
    /// [`Error::WrongFrame`]; [`Error::ClipSkeleton`] for a clip built for a skeleton of another joint
    /// order; [`Error::CountMismatch`] for joint weights that are not one per joint; the errors of
    /// [`SamplingJob`] and [`BlendingJob`] (weights, threshold, results), with joints in level order.
    pub fn play(
        &self,
        frame: &mut Frame,
        layers: &[ClipLayer<'_>],
        additive: &[ClipLayer<'_>],
    ) -> Result<(), Error> {
        self.check_frame(frame)?;
        let n = self.skeleton.len();
        for layer in layers.iter().chain(additive) {
            if let Some(joint) = (0..n).find(|&j| {
                layer.clip.level_of.get(j).map(|&l| l as usize) != self.level_of.get(j).copied()
            }) {
                return Err(Error::ClipSkeleton {
                    joint,
                    clip_joints: layer.clip.joints,
                    joints: n,
                });
            }
            if let Some(w) = layer.joint_weights {
                if w.len() != n {
                    return Err(Error::CountMismatch {
                        what: "clip layer joint weights",
                        expected: n,
                        got: w.len(),
                    });
                }
            }
        }
        let count = layers.len().saturating_add(additive.len());
        if frame.layers.len() < count {
            frame.layers.resize_with(count, LayerScratch::default);
        }
        let (rest_t, rest_q, rest_s) = self.level_rest();
        let backend = frame.backend;
        for (i, (layer, scratch)) in layers
            .iter()
            .chain(additive)
            .zip(frame.layers.iter_mut())
            .enumerate()
        {
            let is_additive = i >= layers.len();
            scratch.translations.clear();
            scratch.rotations.clear();
            scratch.scales.clear();
            if is_additive {
                scratch.translations.resize(n, Vec3::ZERO);
                scratch.rotations.resize(n, Quat::IDENTITY);
                scratch.scales.resize(n, Vec3::ONE);
            } else {
                scratch.translations.extend_from_slice(rest_t);
                scratch.rotations.extend_from_slice(rest_q);
                scratch.scales.extend_from_slice(rest_s);
            }
            scratch.joint_weights.clear();
            if let Some(w) = layer.joint_weights {
                self.weights_in_level_order(w, &mut scratch.joint_weights);
            }
            SamplingJob::new(
                layer.clip,
                &mut scratch.context,
                TrsMut::new(
                    &mut scratch.translations,
                    &mut scratch.rotations,
                    &mut scratch.scales,
                ),
            )
            .time(layer.time)
            .wrap(layer.wrap)
            .backend(backend)
            .run()?;
        }
        let blend: Vec<BlendLayer<'_>> = layers
            .iter()
            .chain(additive)
            .zip(&frame.layers)
            .map(|(layer, scratch)| BlendLayer {
                pose: Trs::new(&scratch.translations, &scratch.rotations, &scratch.scales),
                weight: layer.weight,
                joint_weights: layer
                    .joint_weights
                    .map(|_| scratch.joint_weights.as_slice()),
            })
            .collect();
        let (normal, deltas) = blend.split_at(layers.len().min(blend.len()));
        BlendingJob::new(
            &self.skeleton,
            Trs::new(rest_t, rest_q, rest_s),
            TrsMut::new(
                &mut frame.translations,
                &mut frame.rotations,
                &mut frame.scales,
            ),
        )
        .layers(normal)
        .additive_layers(deltas)
        .backend(frame.backend)
        .run()
    }
}
