//! Stage 1 of a frame from clips: [`ClipLayer`]s sampled and blended into the frame's local pose and
//! morph weights by [`Character::play`].

use super::frame::LayerScratch;
use super::{Character, Frame};
use crate::animation::{AnyClip, CompactSamplingJob, SamplingJob, Wrap};
use crate::blending::BlendingJob;
use crate::error::Error;
use crate::layout::blend::BlendLayer;
use crate::layout::trs::{Trs, TrsMut};
use glam::{Quat, Vec3};

/// The meshes one weight set of a clip drives in [`Character::play`]: by skinned and rigid mesh index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct MorphSet {
    pub(crate) skinned: Vec<usize>,
    pub(crate) rigid: Vec<usize>,
}

impl MorphSet {
    /// Skinned mesh `mesh` alone: a built character's set `mesh`.
    pub(crate) fn skinned(mesh: usize) -> MorphSet {
        MorphSet {
            skinned: vec![mesh],
            rigid: Vec::new(),
        }
    }
}

/// One clip played in a frame: the clip, its time and wrap, its weight, and optional per-joint weights
/// (a mask). Layers are blended by [`BlendingJob`]'s rules: the same weights, threshold and additive
/// equation.
#[derive(Clone, Copy, Debug)]
pub struct ClipLayer<'a> {
    /// The clip, of f32 keys or compact; built for this character's skeleton (or one with the same
    /// joint order).
    pub clip: AnyClip<'a>,
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
    /// `clip` (a [`Clip`](crate::Clip) or a [`CompactClip`](crate::CompactClip)) at `time`, looping,
    /// with weight 1 on every joint.
    pub fn new(clip: impl Into<AnyClip<'a>>, time: f32) -> ClipLayer<'a> {
        ClipLayer {
            clip: clip.into(),
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
    /// Stage 1 from clips: samples every layer ([`SamplingJob`], or [`CompactSamplingJob`] for a
    /// compact clip, on the frame's backend) and blends them into the frame's local pose
    /// ([`BlendingJob`] on the frame's backend, the rest pose as its fallback), then the additive
    /// layers on top. Each normal layer's joints without a track hold the rest pose; an additive
    /// clip holds deltas (see [`BlendingJob`]), and its joints without a track hold the identity delta.
    ///
    /// Morph weights: a clip's weight set `i` drives skinned mesh `i` of a character built with
    /// [`Character::new`] (for a glTF scene's character, set `n` is node `n`'s morph weights, every
    /// instance of its mesh, as [`GltfScene::runtime_clip`](crate::gltf::GltfScene::runtime_clip) numbers
    /// them). A set some layer samples is blended as the pose is, by layer weight: the weighted mean of
    /// the normal layers that sample it (where their weights sum to more than zero; else the mesh's
    /// default weights, as the pose falls back to the rest pose), then each additive layer's weights
    /// times its layer weight added; per-joint weights do not apply to morph weights. A set no layer samples keeps the frame's weights, so weights set by hand (before
    /// `play`, for sets the clips do not drive, or after it, for any set) are never overwritten.
    ///
    /// The frame keeps one cursor per layer position: keep a clip at the same position from frame to
    /// frame for forward playback without searching (a clip at another position is correct, only
    /// searched).
    ///
    /// # Errors
    /// [`Error::WrongFrame`]; [`Error::ClipSkeleton`] for a clip built for a skeleton of another joint
    /// order; [`Error::CountMismatch`] for joint weights that are not one per joint, for a clip's
    /// weight set beyond the character's sets, and for a set whose target count is not its meshes'
    /// weight count; [`Error::ResultNotFinite`] for blended morph weights that overflow (no weight is
    /// written then); the errors of
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
            self.check_clip_order(layer.clip.level_of(), layer.clip.joints())?;
            if let Some(w) = layer.joint_weights {
                if w.len() != n {
                    return Err(Error::CountMismatch {
                        what: "clip layer joint weights",
                        expected: n,
                        got: w.len(),
                    });
                }
            }
            self.check_morph_sets(frame, layer.clip)?;
        }
        let count = layers.len().saturating_add(additive.len());
        if frame.layers.len() < count {
            frame.layers.resize_with(count, LayerScratch::default);
        }
        let (rest_t, rest_q, rest_s) = self.level_rest();
        let (backend, precision) = (frame.backend, frame.precision);
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
            let clip = layer.clip;
            scratch.weights.resize_with(clip.weight_sets(), Vec::new);
            for (set, w) in scratch.weights.iter_mut().enumerate() {
                w.clear();
                w.resize(clip.weight_targets(set).unwrap_or(0), 0.0);
            }
            let output = TrsMut::new(
                &mut scratch.translations,
                &mut scratch.rotations,
                &mut scratch.scales,
            );
            let weights = &mut scratch.weights[..clip.weight_sets()];
            match clip {
                AnyClip::Keys(keys) => SamplingJob::new(keys, &mut scratch.context, output)
                    .time(layer.time)
                    .wrap(layer.wrap)
                    .weights(weights)
                    .backend(backend)
                    .precision(precision)
                    .run()?,
                AnyClip::Compact(compact) => CompactSamplingJob::new(compact, output)
                    .time(layer.time)
                    .wrap(layer.wrap)
                    .weights(weights)
                    .backend(backend)
                    .context(&mut scratch.compact)
                    .run()?,
            }
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
        .precision(frame.precision)
        .run()?;
        self.blend_morph_weights(frame, layers, additive)
    }

    /// The character with `sets` as its weight sets (the glTF importer's: set n is node n's meshes).
    #[cfg(feature = "gltf")]
    pub(crate) fn with_morph_sets(mut self, sets: Vec<MorphSet>) -> Character {
        self.morph_sets = sets;
        self
    }

    /// Every weight set `clip` samples names a set of this character whose meshes each have one weight
    /// per target of the set.
    fn check_morph_sets(&self, frame: &Frame, clip: AnyClip<'_>) -> Result<(), Error> {
        for set in 0..clip.weight_sets() {
            let Some(targets) = clip.weight_targets(set) else {
                continue;
            };
            let Some(meshes) = self.morph_sets.get(set) else {
                return Err(Error::CountMismatch {
                    what: "morph weight sets (a clip's weight set beyond the character's)",
                    expected: self.morph_sets.len(),
                    got: set.saturating_add(1),
                });
            };
            let skinned = meshes.skinned.iter().map(|&m| frame.mesh_weights.get(m));
            let rigid = meshes.rigid.iter().map(|&m| frame.rigid_weights.get(m));
            for got in skinned.chain(rigid) {
                let got = got.map_or(0, Vec::len);
                if got != targets {
                    return Err(Error::CountMismatch {
                        what: "morph weights of a mesh a clip's weight set drives",
                        expected: targets,
                        got,
                    });
                }
            }
        }
        Ok(())
    }

    /// The sampled weight sets (in the frame's layer scratch) blended into the meshes' weights (see
    /// [`Character::play`]); every set's counts were checked by `check_morph_sets`. Every result is
    /// computed and checked before any is written, so an error leaves the weights as they were.
    fn blend_morph_weights(
        &self,
        frame: &mut Frame,
        layers: &[ClipLayer<'_>],
        additive: &[ClipLayer<'_>],
    ) -> Result<(), Error> {
        let sets = layers
            .iter()
            .chain(additive)
            .map(|l| l.clip.weight_sets())
            .max()
            .unwrap_or(0);
        // (rigid, mesh, weights) for every mesh a sampled set drives.
        let mut results: Vec<(bool, usize, Vec<f32>)> = Vec::new();
        let mut mean: Vec<f32> = Vec::new();
        for set in 0..sets {
            let Some(meshes) = self.morph_sets.get(set) else {
                continue;
            };
            let sampled = |i: usize| -> Option<&[f32]> {
                let w = frame.layers.get(i)?.weights.get(set)?;
                (!w.is_empty()).then_some(w.as_slice())
            };
            let mut total = 0.0f32;
            mean.clear();
            for (i, layer) in layers.iter().enumerate() {
                let Some(w) = sampled(i).filter(|_| layer.weight > 0.0) else {
                    continue;
                };
                mean.resize(w.len(), 0.0);
                for (m, &v) in mean.iter_mut().zip(w) {
                    *m += layer.weight * v;
                }
                total += layer.weight;
            }
            let normal = total > 0.0;
            for m in &mut mean {
                *m /= total;
            }
            let deltas: Vec<(f32, &[f32])> = additive
                .iter()
                .enumerate()
                .filter_map(|(i, layer)| Some((layer.weight, sampled(layers.len() + i)?)))
                .collect();
            if !normal && deltas.is_empty() {
                continue;
            }
            // The base: the normal layers' mean, else (additive layers only) the mesh's default
            // weights, as the pose's additive layers go on the rest pose, so that playing the same
            // layers again gives the same weights.
            let skinned = meshes.skinned.iter().map(|&m| (false, m));
            let rigid = meshes.rigid.iter().map(|&m| (true, m));
            for (is_rigid, m) in skinned.chain(rigid) {
                let defaults = if is_rigid {
                    &self.rigid_default_weights
                } else {
                    &self.mesh_default_weights
                };
                let mut out = if normal {
                    mean.clone()
                } else {
                    defaults.get(m).cloned().unwrap_or_default()
                };
                for &(weight, d) in &deltas {
                    for (o, &v) in out.iter_mut().zip(d) {
                        *o += weight * v;
                    }
                }
                if let Some(index) = out.iter().position(|v| !v.is_finite()) {
                    return Err(Error::ResultNotFinite {
                        stage: "clip layers",
                        what: "morph weights",
                        index,
                    });
                }
                results.push((is_rigid, m, out));
            }
        }
        for (is_rigid, m, w) in results {
            let outputs = if is_rigid {
                &mut frame.rigid_weights
            } else {
                &mut frame.mesh_weights
            };
            if let Some(out) = outputs.get_mut(m) {
                for (o, v) in out.iter_mut().zip(w) {
                    *o = v;
                }
            }
        }
        Ok(())
    }
}
