//! Crowd stage 1 from clips: [`CrowdClipLayer`]s sampled ([`CrowdSamplingJob`], lanes across
//! instances) and blended ([`CrowdBlendingJob`]) into a [`CrowdFrame`]'s pose by
//! [`Character::crowd_play`].

use super::crowd::{CrowdFrame, CrowdParts};
use super::frame::CrowdLayerScratch;
use super::Character;
use crate::animation::{
    Clip, CompactClip, CompactContext, CompactSamplingJob, CrowdSamplingJob, Wrap,
};
use crate::backend::{Backend, KernelFamily, Precision, Threads};
use crate::blending::crowd::{CrowdBlendLayer, CrowdBlendingJob};
use crate::crowd_buffers::{block_from_streams, level_block, CrowdPose};
use crate::error::Error;
use crate::layout::crowd::CROWD_LANES;
use crate::layout::trs::{Trs, TrsMut};
use glam::{Quat, Vec3};

/// One layer of a crowd: a clip per instance (or one for all), each instance's time, its weight, and
/// optional per-joint weights shared by every instance. Layers blend by [`CrowdBlendingJob`]'s rules.
#[derive(Clone, Copy, Debug)]
pub struct CrowdClipLayer<'a> {
    /// One clip for every instance, or one per instance; each built for this character's skeleton.
    /// Give instances that share a clip neighbouring indices (see [`CrowdSamplingJob`]). Empty for a
    /// layer of compact clips.
    pub clips: &'a [&'a Clip],
    /// Compact clips in place of `clips` ([`CrowdClipLayer::compact`]): one for every instance, or one
    /// per instance, each instance sampled by [`CompactSamplingJob`] on the frame's backend. Empty (the
    /// default) for a layer of `clips`; a layer may not have both.
    pub compact: &'a [&'a CompactClip],
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
            compact: &[],
            wrap: Wrap::Loop,
            weights: None,
            joint_weights: None,
        }
    }

    /// Compact `clips` (one, or one per instance) at `times` (one per instance), looping, weight 1.
    pub fn compact(clips: &'a [&'a CompactClip], times: &'a [f32]) -> CrowdClipLayer<'a> {
        CrowdClipLayer {
            compact: clips,
            ..CrowdClipLayer::new(&[], times)
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
    /// A layer of compact clips ([`CrowdClipLayer::compact`]) samples each instance with
    /// [`CompactSamplingJob`] (its kernel, lanes across tracks, on the frame's backend; instances in
    /// chunks on the frame's threads), each instance with its own
    /// [`CompactContext`](crate::CompactContext) kept by the frame, so that instances playing on
    /// decode each frame once.
    ///
    /// # Errors
    /// [`Error::WrongFrame`]; [`Error::CountMismatch`] for times or weights that are not one per
    /// instance, clips that are not one or one per instance (or a layer with both clips and compact
    /// clips), or joint weights that are not one per joint; [`Error::ClipSkeleton`] for a compact
    /// clip of another joint order; [`Error::NotFinite`] for a time that is not finite (naming the
    /// instance); [`Error::FloatEnvironment`] when a deterministic frame samples a compact layer on
    /// a thread (the calling one, or on [`Threads::All`] one of the pool's) whose floating-point mode
    /// is not the default; the errors of
    /// [`CrowdSamplingJob`], [`CompactSamplingJob`] and [`CrowdBlendingJob`].
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
            self.check_compact_layer(layer, instances)?;
        }
        let (backend, threads, precision) = (frame.backend, frame.threads, frame.precision);
        // Compact layers are sampled instance by instance (`sample_compact`): the backend and, for a
        // deterministic frame, the floating-point mode of the threads they run on (the calling one,
        // and on the pool every pool thread) are checked once, before anything is written.
        if layers.iter().chain(additive).any(|l| !l.compact.is_empty()) {
            backend.resolve(KernelFamily::Sampling)?;
            if precision == Precision::Deterministic {
                crate::numeric::check_float_environment_of(threads == Threads::All)?;
            }
        }
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
            if scratch.layers.is_empty() {
                scratch.layers.push(CrowdLayerScratch::default());
            }
            if full(layer) && !layer.compact.is_empty() {
                let contexts = &mut scratch.layers[0].compact;
                let how = (backend, threads);
                return sample_compact_into(
                    layer,
                    self.level_rest(),
                    instances,
                    how,
                    contexts,
                    pose,
                );
            }
            if full(layer) {
                // The rest pose underneath, unless every clip writes every joint.
                if !layer.clips.iter().all(|c| c.covers_every_joint()) {
                    pose.fill_blocks(&scratch.rest_block);
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
        // The identity pose under additive compact layers, built once per call (in streams; the
        // raw layers' is `identity_block`, in the crowd's block layout).
        let identity = if additive.iter().any(|l| !l.compact.is_empty()) {
            (
                vec![Vec3::ZERO; n],
                vec![Quat::IDENTITY; n],
                vec![Vec3::ONE; n],
            )
        } else {
            Default::default()
        };
        for (i, (layer, s)) in layers
            .iter()
            .chain(additive)
            .zip(scratch.layers.iter_mut())
            .enumerate()
        {
            if !layer.compact.is_empty() {
                let under = if i < layers.len() {
                    self.level_rest()
                } else {
                    (&identity.0[..], &identity.1[..], &identity.2[..])
                };
                let out = (&mut s.translations, &mut s.rotations, &mut s.scales);
                let how = (backend, threads);
                sample_compact(layer, under, instances, how, &mut s.compact, out)?;
                s.joint_weights.clear();
                if let Some(w) = layer.joint_weights {
                    self.weights_in_level_order(w, &mut s.joint_weights);
                }
                continue;
            }
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
            let (t, q, r) = (&mut s.translations, &mut s.rotations, &mut s.scales);
            sampled.to_streams(t, q, r, threads == Threads::All);
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
        let (t, q, s) = (&scratch.translations, &scratch.rotations, &scratch.scales);
        pose.set_from_streams(t, q, s, threads == Threads::All);
        Ok(())
    }
}

impl Character {
    /// A compact layer's checks: its clips one or one per instance (and no raw clips beside them),
    /// each of this character's joint order, and its times finite.
    fn check_compact_layer(
        &self,
        layer: &CrowdClipLayer<'_>,
        instances: usize,
    ) -> Result<(), Error> {
        if layer.compact.is_empty() {
            return Ok(());
        }
        let clips = layer.compact.len();
        if !layer.clips.is_empty() || (clips != 1 && clips != instances) {
            return Err(Error::CountMismatch {
                what:
                    "crowd layer compact clips (one, or one per instance, and no clips beside them)",
                expected: instances,
                got: clips.saturating_add(layer.clips.len()),
            });
        }
        if layer.times.len() != instances {
            return Err(Error::CountMismatch {
                what: "crowd clip layer times",
                expected: instances,
                got: layer.times.len(),
            });
        }
        // Checked here, before any instance is sampled, to name the instance (as a raw layer's
        // CrowdSamplingJob does).
        if let Some((index, &value)) = layer.times.iter().enumerate().find(|(_, t)| !t.is_finite())
        {
            return Err(Error::NotFinite {
                what: "crowd sampling time",
                index,
                value,
            });
        }
        for clip in layer.compact {
            self.check_clip_order(&clip.level_of, clip.joints())?;
        }
        Ok(())
    }
}

/// Every instance of a compact layer sampled over `under` (level order) into instance-major streams,
/// each with its own context of decoded frames (`contexts`, one per instance, kept by the frame): in
/// turn on [`Threads::One`], in chunks of instances on rayon's pool on [`Threads::All`] (each instance
/// samples to the same bits either way on threads in the default floating-point mode, which
/// `crowd_play` checks for a deterministic frame).
fn sample_compact(
    layer: &CrowdClipLayer<'_>,
    under: (&[Vec3], &[Quat], &[Vec3]),
    instances: usize,
    (backend, threads): (Backend, Threads),
    contexts: &mut Vec<CompactContext>,
    (t, q, s): (&mut Vec<Vec3>, &mut Vec<Quat>, &mut Vec<Vec3>),
) -> Result<(), Error> {
    let n = under.0.len().max(1);
    let total = instances.saturating_mul(under.0.len());
    t.resize(total, Vec3::ZERO);
    q.resize(total, Quat::IDENTITY);
    s.resize(total, Vec3::ONE);
    contexts.resize_with(instances, CompactContext::new);
    let work = |(i, (((t, q), s), context)): CompactUnit<'_>| {
        sample_instance(layer, under, backend, i, (t, q, s), context)
    };
    match threads {
        Threads::One => t
            .chunks_mut(n)
            .zip(q.chunks_mut(n))
            .zip(s.chunks_mut(n))
            .zip(contexts.iter_mut())
            .enumerate()
            .try_for_each(work),
        Threads::All => {
            use rayon::prelude::*;
            t.par_chunks_mut(n)
                .zip(q.par_chunks_mut(n))
                .zip(s.par_chunks_mut(n))
                .zip(contexts.par_iter_mut())
                .enumerate()
                .with_min_len(COMPACT_INSTANCES_PER_TASK)
                .try_for_each(work)
        }
    }
}

/// Instance `i` of a compact layer sampled over `under` (level order) into its level-order streams,
/// with its own context; nothing where the layer has no clip or time for it.
fn sample_instance(
    layer: &CrowdClipLayer<'_>,
    under: (&[Vec3], &[Quat], &[Vec3]),
    backend: Backend,
    i: usize,
    (t, q, s): (&mut [Vec3], &mut [Quat], &mut [Vec3]),
    context: &mut CompactContext,
) -> Result<(), Error> {
    let (Some(clip), Some(&time)) = (
        layer.compact.get(i).or(layer.compact.first()),
        layer.times.get(i),
    ) else {
        return Ok(());
    };
    // The pose under the clip, on the thread that samples this instance (none where the clip writes
    // every joint).
    if !clip.covers_every_joint() {
        t.iter_mut().zip(under.0).for_each(|(o, &u)| *o = u);
        q.iter_mut().zip(under.1).for_each(|(o, &u)| *o = u);
        s.iter_mut().zip(under.2).for_each(|(o, &u)| *o = u);
    }
    CompactSamplingJob::new(clip, TrsMut::new(t, q, s))
        .time(time)
        .wrap(layer.wrap)
        .backend(backend)
        .context(context)
        .run()
}

/// A compact layer alone at full weight, straight into the crowd's pose: each block of
/// [`CROWD_LANES`] instances sampled into a block's worth of streams, then set into its block, so the
/// crowd-sized streams are neither written nor read back (in turn on [`Threads::One`], blocks on
/// rayon's pool on [`Threads::All`]; the same bits either way, as in [`sample_compact`]).
fn sample_compact_into(
    layer: &CrowdClipLayer<'_>,
    under: (&[Vec3], &[Quat], &[Vec3]),
    instances: usize,
    (backend, threads): (Backend, Threads),
    contexts: &mut Vec<CompactContext>,
    pose: &mut CrowdPose,
) -> Result<(), Error> {
    let n = under.0.len();
    if n == 0 {
        return Ok(());
    }
    contexts.resize_with(instances, CompactContext::new);
    type Streams = (Vec<Vec3>, Vec<Quat>, Vec<Vec3>);
    let work =
        |(t, q, s): &mut Streams,
         (b, (block, contexts)): (usize, (&mut [f32], &mut [CompactContext]))| {
            let count = contexts.len().saturating_mul(n);
            t.resize(count, Vec3::ZERO);
            q.resize(count, Quat::IDENTITY);
            s.resize(count, Vec3::ONE);
            let units = t
                .chunks_mut(n)
                .zip(q.chunks_mut(n))
                .zip(s.chunks_mut(n))
                .zip(contexts.iter_mut());
            for (k, (((t, q), s), context)) in units.enumerate() {
                let i = b.saturating_mul(CROWD_LANES).saturating_add(k);
                sample_instance(layer, under, backend, i, (t, q, s), context)?;
            }
            block_from_streams(block, n, (t, q, s));
            Ok(())
        };
    match threads {
        Threads::One => {
            let mut streams = Streams::default();
            pose.blocks_mut()
                .zip(contexts.chunks_mut(CROWD_LANES))
                .enumerate()
                .try_for_each(|unit| work(&mut streams, unit))
        }
        Threads::All => {
            use rayon::prelude::*;
            pose.par_blocks_mut()
                .zip(contexts.par_chunks_mut(CROWD_LANES))
                .enumerate()
                .with_min_len(COMPACT_INSTANCES_PER_TASK / CROWD_LANES)
                .try_for_each_init(Streams::default, work)
        }
    }
}

/// One instance of a compact layer: its index, its pose streams and its context.
type CompactUnit<'a> = (
    usize,
    (
        ((&'a mut [Vec3], &'a mut [Quat]), &'a mut [Vec3]),
        &'a mut CompactContext,
    ),
);

/// The fewest instances of a compact layer one task of the pool samples: each takes a few hundred
/// nanoseconds, so fewer would cost more in scheduling than they save.
const COMPACT_INSTANCES_PER_TASK: usize = 32;
