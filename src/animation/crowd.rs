//! [`CrowdSamplingJob`]: every instance of a crowd samples its own clip at its own time, straight into a
//! [`CrowdPose`].
//!
//! Instances in a row that play the same clip form a run, and each run is one call of the crowd kernel
//! (ispc/sample.ispc), the lanes across instances: every track of every property is interpolated for 4,
//! 8 or 16 instances at once (SSE4 and NEON, AVX2, AVX-512) and written as one contiguous row of the
//! pose's AoSoA blocks. With
//! [`Threads::All`] the instances are split at block boundaries over rayon's pool. Rust first locates
//! each instance's time on each of its clip's timelines, with one cursor per instance and timeline
//! ([`CrowdSamplingContext`]), so forward playback steps rather than searches, as in [`SamplingJob`](
//! super::SamplingJob). Give instances that share a clip neighbouring indices: a crowd of 10,000
//! instances playing four clips in four blocks is four runs, while clips that alternate instance by
//! instance make a run of one instance each (correct, only slower).
//!
//! Results are those of one [`SamplingJob`](super::SamplingJob) per instance on the same backend: the
//! same bits on the reference; on an ISA the same formulas, but the single-character kernel evaluates
//! slerp's weight polynomial in another order and the compiler may fuse multiply-adds differently (a
//! last-bit difference, tested within 1e-6). Joints without a track keep what the pose held. Morph
//! weights are not part of a crowd pose and are not sampled here.

use super::clip::Clip;
use super::curve::{locate_from, Located};
use super::{Property, Wrap};
use crate::backend::{Backend, KernelFamily, Precision, Resolved, Threads};
use crate::crowd_buffers::CrowdPose;
use crate::error::Error;
use crate::ffi::sample as ffi;
use crate::layout::crowd::{block_tasks, CROWD_LANES, TRS_ELEMENTS, TRS_FIRST_ELEMENT};
use crate::layout::tracks::CrowdLocatedKeys;
use crate::skeleton::OwnerId;
use rayon::prelude::*;

/// One instance's cursors: the clip they follow and one key index per timeline.
#[derive(Clone, Debug, Default)]
struct Cursors {
    clip: Option<OwnerId>,
    keys: Vec<u32>,
}

/// One task's buffers: where each instance of the current run fell on each timeline, in both forms.
#[derive(Clone, Debug, Default)]
struct RunScratch {
    /// Instance-major, for the reference.
    located: Vec<Located>,
    /// Timeline-major, for the kernel.
    keys: CrowdLocatedKeys,
    searches: u64,
    /// One block of a pose, for [`CrowdSamplingJob::run_blocks`].
    block: Vec<f32>,
}

/// What every instance of a crowd remembers between samples: per instance and timeline of its clip,
/// the key interval its last time fell in. Like [`SamplingContext`](super::SamplingContext), it changes
/// the work only, never a result.
#[derive(Clone, Debug, Default)]
pub struct CrowdSamplingContext {
    instances: Vec<Cursors>,
    /// One per task; each counts its own searches.
    tasks: Vec<RunScratch>,
}

impl CrowdSamplingContext {
    /// An empty context; it sizes itself for the first crowd it samples.
    pub fn new() -> CrowdSamplingContext {
        CrowdSamplingContext::default()
    }

    /// How many times, over this context's life, a timeline's keys were searched rather than stepped
    /// to, over every instance.
    pub fn searches(&self) -> u64 {
        self.tasks.iter().map(|t| t.searches).sum()
    }
}

/// Samples a clip per instance of a crowd, each at its own time, into a [`CrowdPose`].
#[derive(Debug)]
pub struct CrowdSamplingJob<'a> {
    /// One clip for every instance, or one clip per instance; each built for the pose's skeleton.
    pub clips: &'a [&'a Clip],
    /// One time per instance, in its clip's key times; mapped into the clip's span by `wrap`.
    pub times: &'a [f32],
    /// What a time outside a clip's span means; [`Wrap::Clamp`] by default.
    pub wrap: Wrap,
    /// The cursors of every instance.
    pub context: &'a mut CrowdSamplingContext,
    /// Output: every instance's local pose.
    pub output: &'a mut CrowdPose,
    /// Who samples; [`Backend::Auto`] by default. The kernels agree with the reference within the
    /// tolerance of [`SamplingJob`](super::SamplingJob).
    pub backend: Backend,
    /// One thread (the default), or the instances split at block boundaries over rayon's pool.
    pub threads: Threads,
    /// [`Precision::Fast`] (default) or [`Precision::Deterministic`]: the same bits on every backend
    /// and platform, those of a deterministic [`SamplingJob`](super::SamplingJob) per instance (the
    /// serial reference in portable arithmetic, whatever the backend).
    pub precision: Precision,
}

impl<'a> CrowdSamplingJob<'a> {
    /// A job sampling `clips` (one, or one per instance) at `times` (one per instance), clamped, on one
    /// thread.
    pub fn new(
        clips: &'a [&'a Clip],
        times: &'a [f32],
        context: &'a mut CrowdSamplingContext,
        output: &'a mut CrowdPose,
    ) -> CrowdSamplingJob<'a> {
        CrowdSamplingJob {
            clips,
            times,
            wrap: Wrap::Clamp,
            context,
            output,
            backend: Backend::Auto,
            threads: Threads::One,
            precision: Precision::Fast,
        }
    }

    /// Sets the wrap mode.
    pub fn wrap(mut self, wrap: Wrap) -> CrowdSamplingJob<'a> {
        self.wrap = wrap;
        self
    }

    /// Sets who samples (an [`Isa`](crate::Isa) converts).
    pub fn backend(mut self, backend: impl Into<Backend>) -> CrowdSamplingJob<'a> {
        self.backend = backend.into();
        self
    }

    /// Sets the threads.
    pub fn threads(mut self, threads: Threads) -> CrowdSamplingJob<'a> {
        self.threads = threads;
        self
    }

    /// Sets the precision: [`Precision::Deterministic`] gives the same bits on every backend and
    /// platform.
    /// `validate` and `run` then refuse a thread (the caller's, or with `Threads::All` one of rayon's
    /// pool) whose floating-point mode is not the default ([`Error::FloatEnvironment`]).
    pub fn precision(mut self, precision: Precision) -> CrowdSamplingJob<'a> {
        self.precision = precision;
        self
    }

    /// Who samples: the backend, or for [`Precision::Deterministic`] the serial reference (after the
    /// floating-point mode of the threads it runs on is checked).
    fn resolved(&self) -> Result<Resolved, Error> {
        self.backend
            .resolve(KernelFamily::Crowd)?
            .without_det_kernels_on(self.precision, self.threads)
    }

    /// Checks every rule without sampling: one time per instance, each finite; one clip, or one per
    /// instance, each built for the pose's skeleton; an explicit ISA can run here.
    ///
    /// # Errors
    /// [`Error::CountMismatch`], [`Error::NotFinite`] naming the instance, [`Error::ClipSkeleton`],
    /// [`Error::IsaUnavailable`].
    pub fn validate(&self) -> Result<(), Error> {
        self.resolved()?;
        let instances = self.output.instances();
        if self.times.len() != instances {
            return Err(Error::CountMismatch {
                what: "crowd sampling times",
                expected: instances,
                got: self.times.len(),
            });
        }
        if self.clips.len() != 1 && self.clips.len() != instances {
            return Err(Error::CountMismatch {
                what: "crowd sampling clips",
                expected: instances,
                got: self.clips.len(),
            });
        }
        if let Some(i) = self.times.iter().position(|t| !t.is_finite()) {
            return Err(Error::NotFinite {
                what: "crowd sampling time",
                index: i,
                value: self.times[i],
            });
        }
        let order = self.output.level_order();
        let mut last: Option<&Clip> = None;
        for clip in self.clips {
            if last.is_some_and(|l| std::ptr::eq(l, *clip)) {
                continue;
            }
            last = Some(clip);
            clip.check_joint_order(order)?;
        }
        Ok(())
    }

    /// Samples every instance (after [`validate`](CrowdSamplingJob::validate)).
    ///
    /// # Errors
    /// The rules of `validate`; [`Error::ResultNotFinite`] naming the first instance whose finite keys
    /// overflow `f32` together; the pose is then unspecified.
    pub fn run(self) -> Result<(), Error> {
        self.validate()?;
        let resolved = self.resolved()?;
        let portable = self.precision == Precision::Deterministic;
        let instances = self.output.instances();
        let joints = self.output.joints();
        let context = self.context;
        if context.instances.len() != instances {
            context.instances.resize_with(instances, Cursors::default);
        }
        // Instances per task: whole blocks, one task per thread of the pool.
        let (per_task_blocks, task_count) = block_tasks(instances, self.threads.tasks());
        let per_task = per_task_blocks * CROWD_LANES;
        if context.tasks.len() < task_count {
            context.tasks.resize_with(task_count, RunScratch::default);
        }
        let floats_per_task = per_task_blocks * joints * TRS_ELEMENTS * CROWD_LANES;
        let (clips, times, wrap) = (self.clips, self.times, self.wrap);
        let work = |(task, ((cursors, out), scratch)): Unit<'_>| {
            let range = 0..cursors.len();
            let start = task * per_task;
            sample_range(
                clips,
                (times, wrap),
                cursors,
                scratch,
                (resolved, portable, out, joints),
                range,
                (start, 0),
            )
        };
        let units = context
            .instances
            .chunks_mut(per_task)
            .zip(self.output.data_mut().chunks_mut(floats_per_task.max(1)))
            .zip(context.tasks.iter_mut())
            .enumerate();
        match self.threads {
            Threads::One => units.into_iter().try_for_each(work),
            Threads::All => {
                let units: Vec<_> = units.collect();
                let results: Vec<Result<(), Error>> = units.into_par_iter().map(work).collect();
                results.into_iter().collect()
            }
        }
    }
}

impl CrowdSamplingJob<'_> {
    /// The kernel form of [`run`](CrowdSamplingJob::run) for a pass that runs the later stages block
    /// by block: block by block (whole blocks of [`CROWD_LANES`] instances, `per_task_blocks` to a
    /// task, one state per task, as [`block_tasks`] splits them),
    /// samples the block into one block of scratch and calls `after(&mut states[task], block index
    /// within the task, the block)` on the same thread, while the block is in cache. The output pose
    /// is not written (it gives the shape only).
    ///
    /// The scratch holds `under` (one block of the pose's layout) wherever the clips write nothing:
    /// it is set to `under` before each block unless every clip writes every joint, and before a
    /// block with fewer than [`CROWD_LANES`] instances, so that the lanes past the last instance,
    /// which the later kernels compute too, hold `under` and not a previous block's values.
    ///
    /// Returns whether every value sampled was finite and every `after` returned true. Returns false
    /// before any work where the job breaks a rule of [`validate`](CrowdSamplingJob::validate) that
    /// the pass relies on (one time per instance, one clip or one per instance), the backend is not an
    /// ISA, a clip has no kernel form, `under` is not one block or `states` is not one per task. The
    /// caller falls back to the stages on false.
    pub(crate) fn run_blocks<T: Send>(
        self,
        under: &[f32],
        per_task_blocks: usize,
        states: Vec<T>,
        after: impl Fn(&mut T, usize, &[f32]) -> bool + Sync,
    ) -> bool {
        let Ok(resolved @ Resolved::Ispc(_)) = self.resolved() else {
            return false;
        };
        let (instances, joints) = (self.output.instances(), self.output.joints());
        let block_floats = joints * TRS_ELEMENTS * CROWD_LANES;
        if under.len() != block_floats
            || self.times.len() != instances
            || (self.clips.len() != 1 && self.clips.len() != instances)
            || self.clips.iter().any(|c| c.crowd_kernel.is_none())
        {
            return false;
        }
        let refill = !self.clips.iter().all(|c| c.covers_every_joint());
        let per_task = per_task_blocks.max(1) * CROWD_LANES;
        let tasks = states.len();
        if instances.div_ceil(per_task) != tasks {
            return false;
        }
        let context = self.context;
        if context.instances.len() != instances {
            context.instances.resize_with(instances, Cursors::default);
        }
        if context.tasks.len() < tasks {
            context.tasks.resize_with(tasks, RunScratch::default);
        }
        let (clips, times, wrap) = (self.clips, self.times, self.wrap);
        let work = |(task, ((cursors, scratch), mut state)): (
            usize,
            ((&mut [Cursors], &mut RunScratch), T),
        )| {
            let fresh = scratch.block.len() != block_floats;
            if fresh {
                scratch.block.clear();
                scratch.block.extend_from_slice(under);
            }
            let mut finite = true;
            for k in 0..cursors.len().div_ceil(CROWD_LANES) {
                let first = k * CROWD_LANES;
                let range = first..(first + CROWD_LANES).min(cursors.len());
                if (refill || range.len() < CROWD_LANES) && (k > 0 || !fresh) {
                    scratch.block.copy_from_slice(under);
                }
                let mut block = std::mem::take(&mut scratch.block);
                let out = (resolved, false, block.as_mut_slice(), joints);
                let at = (task * per_task, first);
                finite &=
                    sample_range(clips, (times, wrap), cursors, scratch, out, range, at).is_ok();
                finite = finite && after(&mut state, k, &block);
                scratch.block = block;
                if !finite {
                    break;
                }
            }
            finite
        };
        let units = context
            .instances
            .chunks_mut(per_task.max(1))
            .zip(context.tasks.iter_mut())
            .zip(states)
            .enumerate();
        match self.threads {
            Threads::One => units.map(work).fold(true, |a, b| a & b),
            Threads::All => {
                let units: Vec<_> = units.collect();
                units
                    .into_par_iter()
                    .map(work)
                    .reduce(|| true, |a, b| a & b)
            }
        }
    }
}

/// One task: its index, its instances' cursors, its whole blocks of the pose, its scratch.
type Unit<'a> = (
    usize,
    ((&'a mut [Cursors], &'a mut [f32]), &'a mut RunScratch),
);

/// Instance `i`'s clip: the only one, or its own.
fn clip_of<'c>(clips: &[&'c Clip], i: usize) -> &'c Clip {
    if clips.len() == 1 {
        clips[0]
    } else {
        clips[i]
    }
}

/// Samples the instances `range` of a task (indices within the task; `at` = (the task's first
/// instance, the first instance of `out`'s first block, a multiple of [`CROWD_LANES`] within the
/// task)), run by run, into `out` = (backend, whether the reference samples in portable arithmetic,
/// blocks of a pose, joints).
fn sample_range(
    clips: &[&Clip],
    (times, wrap): (&[f32], Wrap),
    cursors: &mut [Cursors],
    scratch: &mut RunScratch,
    (resolved, portable, out, joints): (Resolved, bool, &mut [f32], usize),
    range: std::ops::Range<usize>,
    (start, base): (usize, usize),
) -> Result<(), Error> {
    let mut first = range.start;
    while first < range.end {
        let clip = clip_of(clips, start + first);
        let mut end = first + 1;
        while end < range.end && std::ptr::eq(clip_of(clips, start + end), clip) {
            end += 1;
        }
        let run_times = times.get(start + first..start + end).unwrap_or(&[]);
        let run_cursors = cursors.get_mut(first..end).unwrap_or(&mut []);
        locate_run(scratch, clip, run_cursors, run_times, wrap);
        // The run within `out`, and the instance of out's first lane.
        let (from, to, origin) = (
            first.saturating_sub(base),
            end.saturating_sub(base),
            start + base,
        );
        match (resolved, &clip.crowd_kernel) {
            (Resolved::Ispc(isa), Some(kernel)) => {
                if !ffi::sample_crowd_tracks(isa, &clip.values, kernel, &scratch.keys, from, out) {
                    first_not_finite(clip, out, joints, from..to, origin)?;
                }
            }
            _ => reference_run(clip, scratch, (out, joints), from, origin, portable)?,
        }
        first = end;
    }
    Ok(())
}

/// Locates the times of one run of instances (all playing `clip`) on every timeline of the clip,
/// moving each instance's cursors, into the scratch's two forms.
fn locate_run(
    scratch: &mut RunScratch,
    clip: &Clip,
    cursors: &mut [Cursors],
    times: &[f32],
    wrap: Wrap,
) {
    let timelines = clip.timelines.len();
    let count = times.len();
    let keys = &mut scratch.keys;
    let n = timelines * count;
    keys.count = count;
    keys.key.resize(n, 0);
    keys.frac.resize(n, 0.0);
    keys.span.resize(n, 0.0);
    keys.held.resize(n, 0);
    keys.keys.clear();
    keys.keys
        .extend((0..timelines).map(|tl| clip.timeline(tl as u32).len() as i32));
    scratch.located.clear();
    for (r, (&time, cursors)) in times.iter().zip(cursors).enumerate() {
        if cursors.clip != Some(clip.id) || cursors.keys.len() != timelines {
            cursors.clip = Some(clip.id);
            cursors.keys.clear();
            cursors.keys.resize(timelines, 0);
        }
        let t = clip.wrap_time(time, wrap);
        for (tl, cursor) in cursors.keys.iter_mut().enumerate() {
            let line = clip.timeline(tl as u32);
            let (at, searched) = locate_from(line, t, cursor);
            scratch.searches += u64::from(searched);
            scratch.located.push(at);
            let (k, u, span, held) = at.kernel_form(line);
            let l = tl * count + r;
            keys.key[l] = k;
            keys.frac[l] = u;
            keys.span[l] = span;
            keys.held[l] = held;
        }
    }
}

/// The element of a crowd pose's joint where a property starts.
fn element(property: Property) -> usize {
    let [t, r, s] = TRS_FIRST_ELEMENT.map(|e| e as usize);
    match property {
        Property::Translation => t,
        Property::Rotation => r,
        Property::Scale => s,
    }
}

/// The float index, in a task's whole blocks of a crowd pose, of element `e` of level `level` of the
/// task's instance `i`.
fn slot(joints: usize, i: usize, level: usize, e: usize) -> usize {
    ((i / CROWD_LANES * joints + level) * TRS_ELEMENTS + e) * CROWD_LANES + i % CROWD_LANES
}

/// One run on the serial reference: each instance's tracks in turn, from the located keys, in portable
/// arithmetic where `portable` (`Precision::Deterministic`). `first` is the run's first instance within
/// the task's blocks `out` (of a pose of `joints` joints), which start at instance `start`.
fn reference_run(
    clip: &Clip,
    scratch: &RunScratch,
    (out, joints): (&mut [f32], usize),
    first: usize,
    start: usize,
    portable: bool,
) -> Result<(), Error> {
    let timelines = clip.timelines.len();
    for (r, located) in scratch.located.chunks(timelines.max(1)).enumerate() {
        let i = first + r;
        for track in &clip.tracks {
            let at = located
                .get(track.timeline as usize)
                .copied()
                .unwrap_or(Located::Key(0));
            let keys = clip.keys_of(track);
            let v = if portable {
                keys.sample_portable(at)
            } else {
                keys.sample_at(at)
            };
            if !v.is_finite() {
                return Err(Error::ResultNotFinite {
                    stage: "crowd sampling",
                    what: "crowd pose",
                    index: start + i,
                });
            }
            let e = element(track.property);
            for (c, value) in v.to_array()[..track.property.components()]
                .iter()
                .enumerate()
            {
                if let Some(o) = out.get_mut(slot(joints, i, track.level as usize, e + c)) {
                    *o = *value;
                }
            }
        }
    }
    Ok(())
}

/// The first instance of `run` (within the task's blocks `out`, which start at instance `start`) with
/// a non-finite value where a track of `clip` wrote.
fn first_not_finite(
    clip: &Clip,
    out: &[f32],
    joints: usize,
    run: std::ops::Range<usize>,
    start: usize,
) -> Result<(), Error> {
    for i in run {
        for track in &clip.tracks {
            let e = element(track.property);
            let finite = (0..track.property.components()).all(|c| {
                out.get(slot(joints, i, track.level as usize, e + c))
                    .is_none_or(|v| v.is_finite())
            });
            if !finite {
                return Err(Error::ResultNotFinite {
                    stage: "crowd sampling",
                    what: "crowd pose",
                    index: start + i,
                });
            }
        }
    }
    Ok(())
}
