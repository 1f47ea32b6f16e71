//! Palettes for a whole crowd: `palette[instance][i] = model[instance][joints[i]] * inverse_bind[i]`.
//!
//! [`CrowdPaletteJob`] rules, each its own [`Error`]: the models were made for the skeleton
//! ([`Error::WrongFrame`]); the palettes were made for as many instances as the models hold
//! ([`Error::CountMismatch`]) and for one entry per inverse bind matrix ([`Error::CountMismatch`]); the
//! skin's joints are one per inverse bind matrix ([`Error::CountMismatch`]), each a joint of the
//! skeleton ([`Error::SkinJointOutOfRange`]); an explicit ISA can run ([`Error::IsaUnavailable`]).
//!
//! The ISPC kernel reads one AoSoA block of models at a time with the lanes across instances, so the
//! product is plain vector arithmetic, and writes each instance's palette contiguously for the skinning
//! kernels. With [`Threads::All`] blocks are spread over rayon's pool; the result is bit-identical.

use crate::backend::{Backend, KernelFamily, Precision, Resolved, Threads};
use crate::crowd_buffers::{check_crowd_size, CrowdModels};
use crate::error::Error;
use crate::ffi::palette as ffi;
use crate::layout::crowd::{block_tasks, CROWD_LANES, MAX_CROWD_JOINTS, MODEL_ELEMENTS};
use crate::layout::palette::PaletteMatrix;
use crate::local_to_model::crowd::CrowdLocalToModelJob;
use crate::numeric;
use crate::reference;
use crate::skeleton::Skeleton;
use glam::Mat4;
use rayon::prelude::*;

/// Crowd palettes of at least this many bytes are written with non-temporal stores: they do not fit in
/// cache anyway, and a streaming store skips reading each line before overwriting it whole (the crowd
/// of 10,000 rig instances writes 43 MB per skin; see docs/RESULTS.md). Smaller ones stay in cache for
/// whatever reads them next (the skinning, an upload).
pub(crate) const STREAM_PALETTE_BYTES: usize = 8 << 20;

/// Whether palettes of `entries` entries for `instances` instances are written streaming.
fn stream(entries: usize, instances: usize) -> bool {
    entries
        .saturating_mul(instances)
        .saturating_mul(std::mem::size_of::<PaletteMatrix>())
        >= STREAM_PALETTE_BYTES
}

/// The palettes of one skin for every instance of a crowd: instance `i`'s palette is one contiguous
/// run of entries, as [`SkinningJob`](crate::SkinningJob) and
/// [`CrowdSkinningJob`](crate::CrowdSkinningJob) read it.
#[derive(Clone, Debug, PartialEq)]
pub struct CrowdPalettes {
    entries: usize,
    instances: usize,
    data: Vec<PaletteMatrix>,
}

impl CrowdPalettes {
    /// Identity palettes of `entries` entries (the skin's joint count) for `instances` instances.
    ///
    /// # Errors
    /// [`Error::TooManyJoints`] past [`MAX_CROWD_JOINTS`] entries,
    /// [`Error::TooManyInstances`] past the crowd limits.
    pub fn new(entries: usize, instances: usize) -> Result<CrowdPalettes, Error> {
        if entries > MAX_CROWD_JOINTS {
            return Err(Error::TooManyJoints {
                joints: entries,
                max: MAX_CROWD_JOINTS,
            });
        }
        check_crowd_size(instances, entries, "palette entry")?;
        Ok(CrowdPalettes {
            entries,
            instances,
            data: vec![PaletteMatrix::IDENTITY; entries * instances],
        })
    }

    /// Entries per palette (the skin's joint count).
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Number of instances.
    pub fn instances(&self) -> usize {
        self.instances
    }

    /// The palette of one instance, or `None` out of range.
    pub fn instance(&self, instance: usize) -> Option<&[PaletteMatrix]> {
        if instance >= self.instances {
            return None;
        }
        self.data
            .get(instance * self.entries..(instance + 1) * self.entries)
    }

    /// Every palette, instance after instance.
    pub fn as_slice(&self) -> &[PaletteMatrix] {
        &self.data
    }
}

/// Computes one skin's palette for every instance of a crowd from its [`CrowdModels`].
#[derive(Debug)]
pub struct CrowdPaletteJob<'a> {
    /// The skeleton the models were made for.
    pub skeleton: &'a Skeleton,
    /// Every instance's model matrices.
    pub models: &'a CrowdModels,
    /// The skeleton joint (level-order index) of each skin joint.
    pub joints: &'a [usize],
    /// The inverse bind matrix of each skin joint.
    pub inverse_binds: &'a [Mat4],
    /// Who runs the job; [`Backend::Auto`] by default.
    pub backend: Backend,
    /// One thread (default) or rayon's pool.
    pub threads: Threads,
    /// [`Precision::Fast`] (default) or [`Precision::Deterministic`]: the serial reference's bits on
    /// every backend and platform.
    pub precision: Precision,
    /// Output: one palette per instance.
    pub palettes: &'a mut CrowdPalettes,
}

impl<'a> CrowdPaletteJob<'a> {
    /// A job on one thread with the automatic ISA. `joints` are level-order indices
    /// ([`Skeleton::level_indices`] converts yours).
    pub fn new(
        skeleton: &'a Skeleton,
        models: &'a CrowdModels,
        joints: &'a [usize],
        inverse_binds: &'a [Mat4],
        palettes: &'a mut CrowdPalettes,
    ) -> CrowdPaletteJob<'a> {
        CrowdPaletteJob {
            skeleton,
            models,
            joints,
            inverse_binds,
            backend: Backend::Auto,
            threads: Threads::One,
            precision: Precision::Fast,
            palettes,
        }
    }

    /// Sets who runs the job (an [`Isa`](crate::Isa) converts).
    pub fn backend(mut self, backend: impl Into<Backend>) -> CrowdPaletteJob<'a> {
        self.backend = backend.into();
        self
    }

    /// Sets the threads the job uses.
    pub fn threads(mut self, threads: Threads) -> CrowdPaletteJob<'a> {
        self.threads = threads;
        self
    }

    /// Sets the precision: [`Precision::Deterministic`] gives the serial reference's bits on every
    /// backend and platform.
    /// `validate` and `run` then refuse a thread (the caller's, or with `Threads::All` one of rayon's
    /// pool) whose floating-point mode is not the default ([`Error::FloatEnvironment`]).
    pub fn precision(mut self, precision: Precision) -> CrowdPaletteJob<'a> {
        self.precision = precision;
        self
    }

    /// The backend that runs the job, with its precision's kernels (and, for
    /// [`Precision::Deterministic`], the floating-point mode of the threads it runs on checked).
    fn resolved(&self) -> Result<Resolved, Error> {
        self.backend
            .resolve(KernelFamily::Crowd)?
            .with_precision_on(self.precision, self.threads)
    }

    /// Checks every rule (see the [module docs](crate::palette::crowd)) without computing anything.
    pub fn validate(&self) -> Result<(), Error> {
        self.models.check_owner(self.skeleton)?;
        let count = self.inverse_binds.len();
        for (what, expected, got) in [
            (
                "crowd palette instances (one per model instance)",
                self.models.instances(),
                self.palettes.instances,
            ),
            (
                "crowd palette entries (one per inverse bind matrix)",
                count,
                self.palettes.entries,
            ),
            (
                "skin joints (one per inverse bind matrix)",
                count,
                self.joints.len(),
            ),
        ] {
            if expected != got {
                return Err(Error::CountMismatch {
                    what,
                    expected,
                    got,
                });
            }
        }
        if let Some((skin_joint, &joint)) = self
            .joints
            .iter()
            .enumerate()
            .find(|(_, &j)| j >= self.skeleton.len())
        {
            return Err(Error::SkinJointOutOfRange {
                skin_joint,
                joint,
                joints: self.skeleton.len(),
            });
        }
        self.resolved().map(|_| ())
    }

    /// Validates, then computes every instance's palette.
    pub fn run(&mut self) -> Result<(), Error> {
        self.validate()?;
        let count = self.inverse_binds.len();
        if count == 0 || self.palettes.instances == 0 {
            return Ok(());
        }
        let (joints, inverse_binds) = (self.joints, self.inverse_binds);
        let per_block = count * CROWD_LANES;
        let (models, block) = self.models.block_data();
        // Whether the kernels found every element they wrote finite; the reference is scanned.
        let kernels_finite = match self.resolved()? {
            Resolved::Ispc(isa) => {
                let stream = stream(count, self.palettes.instances);
                let work = |(models, palettes): (&[f32], &mut [PaletteMatrix])| {
                    ffi::crowd_palette(isa, models, inverse_binds, joints, palettes, stream)
                };
                let palettes = &mut self.palettes.data;
                // Every block runs (no short-circuit): a block past a non-finite one is still written.
                match self.threads {
                    Threads::One => models
                        .chunks(block)
                        .zip(palettes.chunks_mut(per_block))
                        .map(work)
                        .fold(true, |a, b| a & b),
                    Threads::All => models
                        .par_chunks(block)
                        .zip(palettes.par_chunks_mut(per_block))
                        .map(work)
                        .reduce(|| true, |a, b| a & b),
                }
            }
            Resolved::Reference => {
                // One instance at a time through AoS arrays, as the single-character reference.
                let mut models = vec![Mat4::IDENTITY; self.skeleton.len()];
                let level = self.skeleton.original_order();
                for (i, palette) in self.palettes.data.chunks_mut(count).enumerate() {
                    for (l, m) in models.iter_mut().enumerate() {
                        *m = self.models.model(i, level[l]).unwrap_or(Mat4::IDENTITY);
                    }
                    reference::skin_palette(&models, inverse_binds, Some(joints), palette);
                }
                numeric::all_finite_palette_on(None, &self.palettes.data)
            }
        };
        // The numeric rules, as the single job checks them: the palettes computed are finite, and
        // where one is not, the input that broke a rule is named, or else the overflow.
        if kernels_finite {
            return Ok(());
        }
        // A kernel's `false` may be a false alarm (its per-lane sums overflowed): the scan decides.
        let Some(index) = numeric::first_not_finite_palette(&self.palettes.data) else {
            return Ok(());
        };
        numeric::check_finite(
            "inverse bind matrices",
            bytemuck::cast_slice(self.inverse_binds),
            16,
        )?;
        Err(Error::ResultNotFinite {
            stage: "crowd palette",
            what: "palette entries (instance * entries + entry)",
            index,
        })
    }
}

/// One skin's part of [`models_and_palettes`]: its joints (level order), inverse binds and palettes.
pub(crate) struct SkinPalettes<'a> {
    pub joints: &'a [usize],
    pub inverse_binds: &'a [Mat4],
    pub palettes: &'a mut CrowdPalettes,
}

impl SkinPalettes<'_> {
    /// This skin's [`CrowdPaletteJob`] over the models of `models_job`, on its backend and threads.
    fn job<'b>(&'b mut self, models_job: &'b CrowdLocalToModelJob<'_>) -> CrowdPaletteJob<'b> {
        CrowdPaletteJob::new(
            models_job.skeleton,
            models_job.models,
            self.joints,
            self.inverse_binds,
            self.palettes,
        )
        .backend(models_job.backend)
        .threads(models_job.threads)
        .precision(models_job.precision)
    }
}

/// Crowd local to model, then every skin's palettes, fused per block on ISPC: each block's palettes
/// are computed right after its models, on the same thread, while the models are still in cache (run
/// one stage after the other, the palettes read back every model from memory: a crowd of 10,000 rig
/// instances holds 32 MB of them). Same bits as [`CrowdLocalToModelJob::run`] then
/// [`CrowdPaletteJob::run`] per skin, which it runs instead on the reference and, to name the value,
/// where a kernel reports a value that is not finite.
///
/// # Errors
/// Those of the two jobs, checked before anything is computed.
pub(crate) fn models_and_palettes(
    mut models_job: CrowdLocalToModelJob<'_>,
    skins: &mut [SkinPalettes<'_>],
) -> Result<(), Error> {
    models_job.validate()?;
    for skin in skins.iter_mut() {
        skin.job(&models_job).validate()?;
    }
    if let Resolved::Ispc(isa) = models_job.resolved()? {
        let (per_task, tasks) = models_job.tasks();
        let specs = skin_specs(skins);
        let parts = skins
            .iter_mut()
            .map(|s| (&mut *s.palettes, s.inverse_binds.len()));
        let states = task_runs(parts, per_task, tasks);
        let finite = models_job.compute_blocks(isa, states, |state, block, models| {
            block_palettes(isa, &specs, state, block, models)
        });
        if finite {
            return Ok(());
        }
    }
    models_job.run()?;
    for skin in skins.iter_mut() {
        skin.job(&models_job).run()?;
    }
    Ok(())
}

/// Per skin: its joints (level order), inverse binds, and whether its palettes are written streaming.
type SkinSpec<'a> = (&'a [usize], &'a [Mat4], bool);

fn skin_specs<'a>(skins: &[SkinPalettes<'a>]) -> Vec<SkinSpec<'a>> {
    skins
        .iter()
        .map(|s| {
            let streaming = stream(s.inverse_binds.len(), s.palettes.instances);
            (s.joints, s.inverse_binds, streaming)
        })
        .collect()
}

/// Each of `tasks` tasks' palettes of every skin (given as its palettes and entry count): the runs of
/// its `per_task` blocks.
fn task_runs<'p>(
    skins: impl Iterator<Item = (&'p mut CrowdPalettes, usize)>,
    per_task: usize,
    tasks: usize,
) -> Vec<Vec<&'p mut [PaletteMatrix]>> {
    let mut runs: Vec<_> = skins
        .map(|(palettes, entries)| {
            let per_block = entries * CROWD_LANES;
            palettes.data.chunks_mut((per_block * per_task).max(1))
        })
        .collect();
    (0..tasks)
        .map(|_| {
            runs.iter_mut()
                .map(|r| r.next().unwrap_or_default())
                .collect()
        })
        .collect()
}

/// Where block `k`'s palettes lie in a task's run of `len` entries, for a skin of `entries` entries.
fn block_range(len: usize, k: usize, entries: usize) -> std::ops::Range<usize> {
    let per_block = entries * CROWD_LANES;
    let start = (k * per_block).min(len);
    start..(start + per_block).min(len)
}

/// Every skin's palettes of block `k` of a task (`runs`, one per skin) from the block's `models`.
/// Returns whether everything written is finite.
fn block_palettes(
    isa: crate::ffi::Runnable,
    specs: &[SkinSpec<'_>],
    runs: &mut [&mut [PaletteMatrix]],
    k: usize,
    models: &[f32],
) -> bool {
    let mut finite = true;
    for (&(joints, inverse_binds, stream), run) in specs.iter().zip(runs.iter_mut()) {
        let range = block_range(run.len(), k, inverse_binds.len());
        if let Some(palettes) = run.get_mut(range) {
            finite &= ffi::crowd_palette(isa, models, inverse_binds, joints, palettes, stream);
        }
    }
    finite
}

/// Local to model and every skin's palettes for one block at a time, for a pass that produces each
/// block's local pose just before (the fused crowd pass of
/// [`Character::crowd_play_palettes`](crate::Character::crowd_play_palettes)): the same kernels, so the
/// same bits, as [`models_and_palettes`], with the block's models in a scratch block instead of the
/// crowd's models, split into tasks as [`block_tasks`] splits the instances.
pub(crate) struct BlockStages<'a> {
    isa: crate::ffi::Runnable,
    skeleton: &'a Skeleton,
    roots: &'a [Mat4],
    instances: usize,
    per_task: usize,
    specs: Vec<SkinSpec<'a>>,
}

/// One task's part of [`BlockStages`]: its index, its blocks' palettes (one run per skin) and a
/// block of models.
pub(crate) struct BlockTask<'a> {
    task: usize,
    palettes: Vec<&'a mut [PaletteMatrix]>,
    models: Vec<f32>,
}

impl<'a> BlockStages<'a> {
    /// The stages and one [`BlockTask`] per task of at most `threads`, or `None` where a rule of
    /// `models_job` or of a skin's [`CrowdPaletteJob`] is broken, the backend is not an ISA, or
    /// `skeleton` and `roots` are not the ones `models_job` was given (the job is only validated: its
    /// models are not written).
    pub(crate) fn new(
        models_job: &CrowdLocalToModelJob<'_>,
        skeleton: &'a Skeleton,
        roots: &'a [Mat4],
        mut skins: Vec<SkinPalettes<'a>>,
        threads: usize,
    ) -> Option<(BlockStages<'a>, Vec<BlockTask<'a>>)> {
        let job_roots = models_job.roots.unwrap_or(&[]);
        if !std::ptr::eq(models_job.skeleton, skeleton)
            || job_roots.as_ptr() != roots.as_ptr()
            || job_roots.len() != roots.len()
        {
            return None;
        }
        models_job.validate().ok()?;
        for skin in skins.iter_mut() {
            skin.job(models_job).validate().ok()?;
        }
        let Ok(Resolved::Ispc(isa)) = models_job.resolved() else {
            return None;
        };
        let instances = models_job.locals.instances();
        let (per_task, tasks) = block_tasks(instances, threads);
        let specs = skin_specs(&skins);
        let parts = skins
            .into_iter()
            .map(|s| (s.palettes, s.inverse_binds.len()));
        let block_models = skeleton.len() * MODEL_ELEMENTS * CROWD_LANES;
        let states = task_runs(parts, per_task, tasks)
            .into_iter()
            .enumerate()
            .map(|(task, palettes)| BlockTask {
                task,
                palettes,
                models: vec![0.0; block_models],
            })
            .collect();
        let stages = BlockStages {
            isa,
            skeleton,
            roots,
            instances,
            per_task,
            specs,
        };
        Some((stages, states))
    }

    /// Blocks per task, for the pass that calls [`run`](BlockStages::run).
    pub(crate) fn per_task(&self) -> usize {
        self.per_task
    }

    /// Block `k` of `state`'s task from its local pose `locals` (one block): its models into the
    /// task's scratch, then each skin's palettes. Returns whether everything written is finite, and
    /// false where the block is past the crowd or its palettes are not where the split puts them.
    pub(crate) fn run(&self, state: &mut BlockTask<'_>, k: usize, locals: &[f32]) -> bool {
        let b = state.task * self.per_task + k;
        let lanes = self
            .instances
            .saturating_sub(b * CROWD_LANES)
            .min(CROWD_LANES);
        if lanes == 0 {
            return false;
        }
        let roots = self
            .roots
            .get(b * CROWD_LANES..)
            .map_or(&[][..], |r| &r[..r.len().min(CROWD_LANES)]);
        let placed = self
            .specs
            .iter()
            .zip(&state.palettes)
            .all(|(&(_, ib, _), run)| {
                block_range(run.len(), k, ib.len()).len() == lanes * ib.len()
            });
        if !placed {
            return false;
        }
        let order = self.skeleton.kernel_order();
        let models = &mut state.models;
        crate::ffi::hierarchy::crowd_ltm_trs(self.isa, order, locals, roots, models)
            & block_palettes(self.isa, &self.specs, &mut state.palettes, k, models)
    }
}
