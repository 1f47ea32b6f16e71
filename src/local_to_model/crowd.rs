//! Crowds: local-to-model for many instances of one skeleton in one call.
//!
//! A crowd's poses and models ([`CrowdPose`], [`CrowdModels`], in `crate::crowd_buffers`) are stored in
//! AoSoA blocks of [`CROWD_LANES`] instances. The kernel puts the SIMD lanes across instances; since
//! every instance shares the skeleton, a joint's parent is the same for all lanes and every load and
//! store is a plain vector access. Blocks rather than plain SoA over all instances: a plain SoA array of
//! 256 instances has a 1 KiB power-of-two stride between elements, and L1 set conflicts doubled its cost
//! on this machine class (see the notes).
//!
//! [`CrowdLocalToModelJob`] follows the ozz job shape. Its rules: the pose and the models were made for
//! this skeleton ([`Error::WrongFrame`]) and have the same instance count ([`Error::CountMismatch`]);
//! per-instance root transforms, when given, are one per instance ([`Error::CountMismatch`]); an explicit
//! ISA can run ([`Error::IsaUnavailable`]). With [`Threads::All`] the blocks are spread over rayon's thread
//! pool; each block is computed exactly as on one thread, so the results are bit-identical. With
//! [`Precision::Deterministic`] the kernels built without fused multiply-adds sum each element in the
//! serial reference's order, so every ISA gives the reference's bits.

use crate::backend::{Backend, KernelFamily, Precision, Resolved, Threads};
pub(crate) use crate::crowd_buffers::{CrowdModels, CrowdPose};
use crate::error::Error;
use crate::ffi::hierarchy as ffi;
use crate::layout::crowd::{block_tasks, CROWD_LANES, MAX_CROWD_JOINTS};
use crate::layout::crowd::{MODEL_ELEMENTS, TRS_ELEMENTS};
use crate::layout::trs::Trs;
use crate::numeric;
use crate::reference;
use crate::skeleton::Skeleton;
use glam::{Mat4, Quat, Vec3};

/// One task of [`CrowdLocalToModelJob::compute_blocks`]: its index, its run of model and pose blocks,
/// and the caller's state for it.
type Task<'a, T> = (usize, ((&'a mut [f32], &'a [f32]), T));

/// Model matrices for every instance of a crowd.
#[derive(Debug)]
pub struct CrowdLocalToModelJob<'a> {
    /// The shared hierarchy.
    pub skeleton: &'a Skeleton,
    /// Every instance's local pose.
    pub locals: &'a CrowdPose,
    /// Root transform of each instance (its place in the world); identity for all when `None`.
    pub roots: Option<&'a [Mat4]>,
    /// The ISA; [`Backend::Reference`] runs the per-instance serial reference.
    pub backend: Backend,
    /// One thread or rayon's pool.
    pub threads: Threads,
    /// [`Precision::Fast`] (default) or [`Precision::Deterministic`]: the serial reference's bits on
    /// every backend and platform (the deterministic kernels, lanes across instances).
    pub precision: Precision,
    /// Output: every instance's model matrices.
    pub models: &'a mut CrowdModels,
}

impl<'a> CrowdLocalToModelJob<'a> {
    /// A job with identity roots, the automatic ISA and one thread.
    pub fn new(
        skeleton: &'a Skeleton,
        locals: &'a CrowdPose,
        models: &'a mut CrowdModels,
    ) -> CrowdLocalToModelJob<'a> {
        CrowdLocalToModelJob {
            skeleton,
            locals,
            roots: None,
            backend: Backend::Auto,
            threads: Threads::One,
            precision: Precision::Fast,
            models,
        }
    }

    /// Sets one root transform per instance (each instance's placement).
    pub fn roots(mut self, roots: &'a [Mat4]) -> CrowdLocalToModelJob<'a> {
        self.roots = Some(roots);
        self
    }

    /// Sets who runs the job (an [`Isa`](crate::Isa) converts).
    pub fn backend(mut self, backend: impl Into<Backend>) -> CrowdLocalToModelJob<'a> {
        self.backend = backend.into();
        self
    }

    /// Sets the threads the job uses.
    pub fn threads(mut self, threads: Threads) -> CrowdLocalToModelJob<'a> {
        self.threads = threads;
        self
    }

    /// Sets the precision: [`Precision::Deterministic`] gives the serial reference's bits on every
    /// backend and platform.
    /// `validate` and `run` then refuse a thread (the caller's, or with `Threads::All` one of rayon's
    /// pool) whose floating-point mode is not the default ([`Error::FloatEnvironment`]).
    pub fn precision(mut self, precision: Precision) -> CrowdLocalToModelJob<'a> {
        self.precision = precision;
        self
    }

    /// The backend that runs the job, with its precision's kernels (and, for
    /// [`Precision::Deterministic`], the floating-point mode of the threads it runs on checked).
    pub(crate) fn resolved(&self) -> Result<Resolved, Error> {
        self.backend
            .resolve(KernelFamily::Crowd)?
            .with_precision_on(self.precision, self.threads)
    }

    /// Checks every rule (see the [module docs](crate::local_to_model::crowd)) without computing anything.
    pub fn validate(&self) -> Result<(), Error> {
        let j = self.skeleton.len();
        if j > MAX_CROWD_JOINTS {
            return Err(Error::TooManyJoints {
                joints: j,
                max: MAX_CROWD_JOINTS,
            });
        }
        self.locals.check_owner(self.skeleton)?;
        self.models.check_owner(self.skeleton)?;
        let n = self.locals.instances();
        if self.models.instances() != n {
            return Err(Error::CountMismatch {
                what: "crowd model instances",
                expected: n,
                got: self.models.instances(),
            });
        }
        if let Some(roots) = self.roots {
            if roots.len() != n {
                return Err(Error::CountMismatch {
                    what: "root transforms",
                    expected: n,
                    got: roots.len(),
                });
            }
            numeric::check_finite("root transforms", bytemuck::cast_slice(roots), 16)?;
        }
        self.resolved().map(|_| ())
    }

    /// Validates, then computes every instance's model matrices.
    ///
    /// The roots are checked to be finite ([`Error::NotFinite`]); the poses hold only checked values
    /// ([`CrowdPose::set_joint`], [`CrowdPose::set_instance`]). The model matrices computed are checked
    /// to be finite: finite poses whose products overflow `f32` are [`Error::ResultNotFinite`], naming
    /// the instance.
    pub fn run(&mut self) -> Result<(), Error> {
        let isa = self.resolved()?.runnable();
        // The kernels report whether what they wrote is finite; the reference is scanned.
        // A kernel's `false` may be a false alarm (its per-lane sums overflowed): the scan decides.
        let finite = self.compute()?;
        if finite && isa.is_some() {
            return Ok(());
        }
        let Some(at) = self.models.data().iter().position(|x| !x.is_finite()) else {
            return Ok(());
        };
        // Data index ((block * joints + joint) * MODEL_ELEMENTS + element) * CROWD_LANES + lane.
        let per_block = self.skeleton.len().max(1) * MODEL_ELEMENTS * CROWD_LANES;
        Err(Error::ResultNotFinite {
            stage: "crowd local to model",
            what: "instances",
            index: at / per_block * CROWD_LANES + at % CROWD_LANES,
        })
    }

    /// Validates, then computes every instance's model matrices (the numeric check is `run`'s).
    /// Returns whether the kernels found every element they wrote finite (true on the reference,
    /// which `run` scans).
    fn compute(&mut self) -> Result<bool, Error> {
        self.validate()?;
        let isa = match self.resolved()? {
            Resolved::Ispc(isa) => isa,
            Resolved::Reference => {
                self.run_reference();
                return Ok(true);
            }
        };
        let tasks = self.tasks().1;
        Ok(self.compute_blocks(isa, vec![(); tasks], |_, _, _| true))
    }

    /// How the blocks are split between tasks: (blocks per task, tasks), as [`block_tasks`] splits
    /// them.
    pub(crate) fn tasks(&self) -> (usize, usize) {
        block_tasks(self.locals.instances(), self.threads.tasks())
    }

    /// The kernels over every block, task `t` (of [`Self::tasks`]) running its blocks in order; after
    /// each block, on the same thread and while its models are still in cache, `after(&mut
    /// states[t], block index within the task, the block's models)` (a later stage fused in, such as
    /// the palettes). Returns whether every kernel and every `after` found what it wrote finite. The
    /// caller has validated the job.
    pub(crate) fn compute_blocks<T: Send>(
        &mut self,
        isa: crate::ffi::Runnable,
        states: Vec<T>,
        after: impl Fn(&mut T, usize, &[f32]) -> bool + Sync,
    ) -> bool {
        let skeleton = self.skeleton;
        let lsize = skeleton.len() * TRS_ELEMENTS * CROWD_LANES;
        let msize = skeleton.len() * MODEL_ELEMENTS * CROWD_LANES;
        if lsize == 0 {
            return true;
        }
        let per_task = self.tasks().0;
        let roots = self.roots.unwrap_or(&[]);
        // Block b's roots: the instances of that block that have one (none when no roots are given).
        let block_roots = move |b: usize| {
            roots
                .get(b * CROWD_LANES..)
                .map_or(&[][..], |r| &r[..r.len().min(CROWD_LANES)])
        };
        let all_finite = std::sync::atomic::AtomicBool::new(true);
        let work = |(t, ((m, l), mut state)): Task<'_, T>| {
            let mut finite = true;
            for (k, (m, l)) in m.chunks_mut(msize).zip(l.chunks(lsize)).enumerate() {
                finite &= ffi::crowd_ltm_trs(
                    isa,
                    skeleton.kernel_order(),
                    l,
                    block_roots(t * per_task + k),
                    m,
                );
                finite &= after(&mut state, k, m);
            }
            if !finite {
                all_finite.store(false, std::sync::atomic::Ordering::Relaxed);
            }
        };
        let (models, locals) = (self.models.data_mut(), self.locals.data());
        let mut tasks = models
            .chunks_mut(msize * per_task)
            .zip(locals.chunks(lsize * per_task))
            .zip(states)
            .enumerate();
        match self.threads {
            Threads::One => tasks.for_each(work),
            // The calling thread runs the first run of blocks itself while the pool runs the others: a
            // parallel iterator called from outside the pool would hand every run to a worker and block,
            // and the two wake-ups cost a noticeable share of a call that takes tens of microseconds.
            Threads::All => rayon::in_place_scope(|scope| {
                let first = tasks.next();
                for task in tasks {
                    scope.spawn(move |_| work(task));
                }
                if let Some(task) = first {
                    work(task);
                }
            }),
        }
        all_finite.into_inner()
    }

    /// The serial reference, one instance at a time through AoS arrays.
    fn run_reference(&mut self) {
        let j = self.skeleton.len();
        let (mut t, mut q, mut s) = (
            vec![Vec3::ZERO; j],
            vec![Quat::IDENTITY; j],
            vec![Vec3::ONE; j],
        );
        let mut models = vec![Mat4::ZERO; j];
        for i in 0..self.locals.instances() {
            for k in 0..j {
                (t[k], q[k], s[k]) = self.locals.level_joint(i, k);
            }
            let root = self
                .roots
                .and_then(|r| r.get(i))
                .copied()
                .unwrap_or(Mat4::IDENTITY);
            let trs = Trs {
                translations: &t,
                rotations: &q,
                scales: &s,
            };
            reference::local_to_model_trs(
                self.skeleton.level_parents(),
                trs,
                &root,
                &mut models,
                0..j,
            );
            let (b, lane) = (i / CROWD_LANES, i % CROWD_LANES);
            for (k, m) in models.iter().enumerate() {
                let c = m.to_cols_array();
                for r in 0..3 {
                    for col in 0..4 {
                        self.models.data_mut()
                            [((b * j + k) * MODEL_ELEMENTS + 4 * r + col) * CROWD_LANES + lane] =
                            c[4 * col + r];
                    }
                }
            }
        }
    }
}
