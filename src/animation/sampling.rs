//! [`SamplingJob`] and its per-instance [`SamplingContext`].

use super::clip::Clip;
use super::curve::{locate_from, Located};
use super::{Property, Wrap};
use crate::backend::{Backend, KernelFamily, Precision, Resolved};
use crate::error::Error;
use crate::ffi::sample as ffi;
use crate::layout::pose_tracks::PoseTracks;
use crate::layout::tracks::LocatedKeys;
use crate::layout::trs::TrsMut;
use crate::numeric;
use crate::skeleton::OwnerId;
use glam::Quat;

/// What one character (one instance of a crowd) remembers between samples of a clip: per timeline, the
/// key interval the last time fell in, so that forward playback steps instead of searching (see the
/// [module docs](crate::animation#layout)).
///
/// A context follows the clip it is used with: given another clip, it starts over for that one. It
/// never changes a result, only the work: a sample gives the same bits from any context.
#[derive(Clone, Debug, Default)]
pub struct SamplingContext {
    clip: Option<OwnerId>,
    cursors: Vec<u32>,
    located: Vec<Located>,
    /// The located keys in the kernels' form.
    keys: LocatedKeys,
    searches: u64,
}

impl SamplingContext {
    /// An empty context; it sizes itself for the first clip it samples.
    pub fn new() -> SamplingContext {
        SamplingContext::default()
    }

    /// How many times, over this context's life, a timeline's keys were searched (binary search)
    /// rather than stepped to: forward playback keeps it near zero, each seek or step back adds one
    /// per timeline.
    pub fn searches(&self) -> u64 {
        self.searches
    }

    /// Where the last sample's time fell on `timeline` (the first key for one it did not locate).
    fn located_on(&self, timeline: u32) -> Located {
        self.located
            .get(timeline as usize)
            .copied()
            .unwrap_or(Located::Key(0))
    }

    /// Makes the cursors this clip's, starting over when they were another clip's.
    fn follow(&mut self, clip: &Clip) {
        if self.clip != Some(clip.id) || self.cursors.len() != clip.timelines.len() {
            self.clip = Some(clip.id);
            self.cursors.clear();
            self.cursors.resize(clip.timelines.len(), 0);
        }
    }
}

/// Samples a [`Clip`] at one time into a local pose in level order (see the [module
/// docs](crate::animation)). Joints without a track keep what the output held.
#[derive(Debug)]
pub struct SamplingJob<'a> {
    /// The clip.
    pub clip: &'a Clip,
    /// The time, in the clip's key times; mapped into its span by `wrap`. 0 by default.
    pub time: f32,
    /// What a time outside the clip's span means; [`Wrap::Clamp`] by default.
    pub wrap: Wrap,
    /// The cursors of this character (or instance).
    pub context: &'a mut SamplingContext,
    /// Output: the local pose, one entry per joint of the clip's skeleton, in level order.
    pub output: TrsMut<'a>,
    /// Output: morph-target weights, one set per [`Clip::weight_sets`] with one weight per target of
    /// that set; empty (the default) to leave weights unsampled.
    pub weights: &'a mut [Vec<f32>],
    /// Who samples the translation, rotation and scale tracks; [`Backend::Auto`] by default. The
    /// kernels agree with the reference within the tolerance documented in tests/isa_parity (ISPC's
    /// `acos` and `sin`, fused multiply-adds); weights are sampled by the reference.
    pub backend: Backend,
    /// [`Precision::Fast`] (default) or [`Precision::Deterministic`]: the same bits on every backend
    /// and platform (the tracks are sampled by the reference in portable arithmetic: its own `acos`
    /// and `sin`, and dot products summed in one order, whatever the backend).
    pub precision: Precision,
}

impl<'a> SamplingJob<'a> {
    /// A job sampling `clip` at time 0, clamped, into `output`, without weights.
    pub fn new(
        clip: &'a Clip,
        context: &'a mut SamplingContext,
        output: TrsMut<'a>,
    ) -> SamplingJob<'a> {
        SamplingJob {
            clip,
            time: 0.0,
            wrap: Wrap::Clamp,
            context,
            output,
            weights: &mut [],
            backend: Backend::Auto,
            precision: Precision::Fast,
        }
    }

    /// Sets who samples (an [`Isa`](crate::Isa) converts).
    pub fn backend(mut self, backend: impl Into<Backend>) -> SamplingJob<'a> {
        self.backend = backend.into();
        self
    }

    /// Sets the precision: [`Precision::Deterministic`] gives the same bits on every backend and
    /// platform (portable arithmetic on the serial reference).
    /// `validate` and `run` then refuse a thread (the caller's, or with `Threads::All` one of rayon's
    /// pool) whose floating-point mode is not the default ([`Error::FloatEnvironment`]).
    pub fn precision(mut self, precision: Precision) -> SamplingJob<'a> {
        self.precision = precision;
        self
    }

    /// Sets the time.
    pub fn time(mut self, time: f32) -> SamplingJob<'a> {
        self.time = time;
        self
    }

    /// Sets the wrap mode.
    pub fn wrap(mut self, wrap: Wrap) -> SamplingJob<'a> {
        self.wrap = wrap;
        self
    }

    /// Sets the weight output.
    pub fn weights(mut self, weights: &'a mut [Vec<f32>]) -> SamplingJob<'a> {
        self.weights = weights;
        self
    }

    /// Checks every rule without sampling: the output has one entry per joint, the time is finite,
    /// a weight output has one set per weight set of the clip and one weight per target, and an
    /// explicit ISA can run here.
    pub fn validate(&self) -> Result<(), Error> {
        self.checked().map(|_| ())
    }

    /// The rules of `validate`; on success, who samples.
    fn checked(&self) -> Result<Resolved, Error> {
        let resolved = self
            .backend
            .resolve(KernelFamily::Sampling)?
            .without_det_kernels(self.precision)?;
        let joints = self.clip.joints;
        for (what, got) in [
            ("sampled translations", self.output.translations.len()),
            ("sampled rotations", self.output.rotations.len()),
            ("sampled scales", self.output.scales.len()),
        ] {
            if got != joints {
                return Err(Error::CountMismatch {
                    what,
                    expected: joints,
                    got,
                });
            }
        }
        if !self.time.is_finite() {
            return Err(Error::NotFinite {
                what: "sampling time",
                index: 0,
                value: self.time,
            });
        }
        if self.weights.is_empty() {
            return Ok(resolved);
        }
        if self.weights.len() != self.clip.weight_sets {
            return Err(Error::CountMismatch {
                what: "sampled weight sets",
                expected: self.clip.weight_sets,
                got: self.weights.len(),
            });
        }
        for w in &self.clip.weights {
            let got = self.weights.get(w.set as usize).map_or(0, Vec::len);
            if got != w.targets as usize {
                return Err(Error::CountMismatch {
                    what: "sampled morph weights",
                    expected: w.targets as usize,
                    got,
                });
            }
        }
        Ok(resolved)
    }

    /// Samples the clip (after [`validate`](SamplingJob::validate)).
    ///
    /// # Errors
    /// The rules of `validate`; [`Error::ResultNotFinite`] where finite keys overflow `f32` together
    /// (a cubic spline's tangents times a long key interval); the outputs are then unspecified.
    pub fn run(self) -> Result<(), Error> {
        let resolved = self.checked()?;
        let SamplingJob {
            clip,
            time,
            wrap,
            context,
            mut output,
            weights,
            backend: _,
            precision,
        } = self;
        let t = clip.wrap_time(time, wrap);
        context.follow(clip);
        context.located.clear();
        for (i, cursor) in context.cursors.iter_mut().enumerate() {
            let (at, searched) = locate_from(clip.timeline(i as u32), t, cursor);
            context.searches += u64::from(searched);
            context.located.push(at);
        }
        if let (Resolved::Ispc(isa), Some(kernel)) = (resolved, &clip.pose_kernel) {
            kernel_sample(isa, clip, kernel, context, output.reborrow())?;
        } else {
            let portable = precision == Precision::Deterministic;
            reference_sample(clip, context, output.reborrow(), portable)?;
        }
        sample_weights(clip, context, weights)
    }
}

/// The translation, rotation and scale tracks on the kernel, which reports whether what it wrote is
/// finite; where it is not, the tracks' joints are searched for the first one.
fn kernel_sample(
    isa: crate::ffi::Runnable,
    clip: &Clip,
    kernel: &PoseTracks,
    context: &mut SamplingContext,
    output: TrsMut<'_>,
) -> Result<(), Error> {
    let keys = &mut context.keys;
    keys.key.clear();
    keys.frac.clear();
    keys.span.clear();
    keys.held.clear();
    keys.keys.clear();
    for (i, at) in context.located.iter().enumerate() {
        let times = clip.timeline(i as u32);
        let (k, u, span, held) = at.kernel_form(times);
        keys.key.push(k);
        keys.frac.push(u);
        keys.span.push(span);
        keys.held.push(held);
        keys.keys.push(times.len() as i32);
    }
    let TrsMut {
        translations,
        rotations,
        scales,
    } = output;
    let t: &mut [f32] = bytemuck::cast_slice_mut(translations);
    let q: &mut [f32] = bytemuck::cast_slice_mut(rotations);
    let s: &mut [f32] = bytemuck::cast_slice_mut(scales);
    if ffi::sample_pose(isa, kernel, keys, t, q, s) {
        return Ok(());
    }
    for track in &clip.tracks {
        let (floats, c): (&[f32], usize) = match track.property {
            Property::Translation => (t, 3),
            Property::Rotation => (q, 4),
            Property::Scale => (s, 3),
        };
        let at = track.level as usize * c;
        let value = floats.get(at..at + c).unwrap_or(&[]);
        if !numeric::all_finite(value) {
            return Err(Error::ResultNotFinite {
                stage: "sampling",
                what: "local pose",
                index: track.level as usize,
            });
        }
    }
    Ok(())
}

/// The translation, rotation and scale tracks on the serial reference, in portable arithmetic where
/// `portable` (`Precision::Deterministic`).
fn reference_sample(
    clip: &Clip,
    context: &SamplingContext,
    output: TrsMut<'_>,
    portable: bool,
) -> Result<(), Error> {
    let located = |timeline: u32| context.located_on(timeline);
    for track in &clip.tracks {
        let keys = clip.keys_of(track);
        let at = located(track.timeline);
        let v = if portable {
            keys.sample_portable(at)
        } else {
            keys.sample_at(at)
        };
        let level = track.level as usize;
        if !v.is_finite() {
            return Err(Error::ResultNotFinite {
                stage: "sampling",
                what: "local pose",
                index: level,
            });
        }
        // Every level index is below the joint count (the builder mapped it from the skeleton),
        // which validate() compared with each output.
        match track.property {
            Property::Translation => {
                if let Some(o) = output.translations.get_mut(level) {
                    *o = v.truncate();
                }
            }
            Property::Rotation => {
                if let Some(o) = output.rotations.get_mut(level) {
                    *o = Quat::from_vec4(v);
                }
            }
            Property::Scale => {
                if let Some(o) = output.scales.get_mut(level) {
                    *o = v.truncate();
                }
            }
        }
    }
    Ok(())
}

/// The weight tracks, on the serial reference.
fn sample_weights(
    clip: &Clip,
    context: &SamplingContext,
    weights: &mut [Vec<f32>],
) -> Result<(), Error> {
    let located = |timeline: u32| context.located_on(timeline);
    for w in &clip.weights {
        let keys = clip.weight_keys_of(w);
        let Some(out) = weights.get_mut(w.set as usize) else {
            continue;
        };
        keys.sample_into(located(w.timeline), out);
        if let Some(i) = out.iter().position(|x| !x.is_finite()) {
            return Err(Error::ResultNotFinite {
                stage: "sampling",
                what: "morph weights",
                index: i,
            });
        }
    }
    Ok(())
}
