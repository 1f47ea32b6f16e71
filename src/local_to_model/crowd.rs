//! Crowds: local-to-model for many instances of one skeleton in one call.
//!
//! A crowd's poses are stored in AoSoA blocks of [`CROWD_LANES`] instances: within a block, each element
//! (say the x translation of joint 7) of the 16 instances is one contiguous 64-byte run. The kernel puts
//! the SIMD lanes across instances; since every instance shares the skeleton, a joint's parent is the same
//! for all lanes and every load and store is a plain vector access. Blocks rather than plain SoA over all
//! instances: a plain SoA array of 256 instances has a 1 KiB power-of-two stride between elements, and
//! L1 set conflicts doubled its cost on this machine class (see the notes).
//!
//! [`CrowdPose`] and [`CrowdModels`] are made for one skeleton and speak its user order: joint `j` is
//! the joint the skeleton's parent array calls `j`; the blocks inside are in level order. They belong
//! to that skeleton (and its clones): another skeleton refuses them even with the same hierarchy.
//!
//! [`CrowdLocalToModelJob`] follows the ozz job shape. Its rules: the pose and the models were made for
//! this skeleton ([`Error::WrongFrame`]) and have the same instance count ([`Error::CountMismatch`]);
//! per-instance root transforms, when given, are one per instance ([`Error::CountMismatch`]); an explicit
//! ISA can run ([`Error::IsaUnavailable`]). With [`Threads::All`] the blocks are spread over rayon's thread
//! pool; each block is computed exactly as on one thread, so the results are bit-identical.

use crate::backend::{Backend, Resolved, Threads};
use crate::error::Error;
use crate::ffi::hierarchy as ffi;
pub use crate::layout::crowd::{
    CROWD_LANES, MAX_CROWD_ELEMENTS, MAX_CROWD_INSTANCES, MAX_CROWD_JOINTS,
};
use crate::layout::crowd::{MODEL_ELEMENTS, TRS_ELEMENTS};
use crate::layout::trs::Trs;
use crate::numeric;
use crate::reference;
use crate::skeleton::{OwnerId, Skeleton};
use glam::{Mat4, Quat, Vec3};

pub(crate) fn blocks(instances: usize) -> usize {
    instances.div_ceil(CROWD_LANES)
}

/// Checks a crowd buffer's size against [`MAX_CROWD_INSTANCES`] and [`MAX_CROWD_ELEMENTS`]; the
/// error names the instance count, what each instance holds and the largest count allowed.
pub(crate) fn check_crowd_size(
    instances: usize,
    per_instance: usize,
    unit: &'static str,
) -> Result<(), Error> {
    let max = MAX_CROWD_INSTANCES.min(MAX_CROWD_ELEMENTS / per_instance.max(1));
    if instances > max {
        return Err(Error::TooManyInstances {
            instances,
            per_instance,
            unit,
            max,
        });
    }
    Ok(())
}

/// The skeleton a crowd buffer was made for: its identity, and the level index of each joint.
#[derive(Clone, Debug, PartialEq)]
struct Owner {
    id: OwnerId,
    level_of: Vec<usize>,
}

impl Owner {
    fn new(skeleton: &Skeleton, instances: usize) -> Result<Owner, Error> {
        if skeleton.len() > MAX_CROWD_JOINTS {
            return Err(Error::TooManyJoints {
                joints: skeleton.len(),
                max: MAX_CROWD_JOINTS,
            });
        }
        check_crowd_size(instances, skeleton.len(), "joint")?;
        Ok(Owner {
            id: skeleton.id(),
            level_of: skeleton.level_order().to_vec(),
        })
    }

    fn joints(&self) -> usize {
        self.level_of.len()
    }

    /// [`Error::WrongFrame`] unless `skeleton` is the one these buffers were made for (or a clone):
    /// the joints first, then the identity.
    fn check(&self, what: &'static str, skeleton: &Skeleton) -> Result<(), Error> {
        let wrong = |part, made_for, here| Error::WrongFrame {
            what,
            owner: "skeleton",
            part,
            made_for,
            here,
        };
        if self.level_of != skeleton.level_order() {
            return Err(wrong("joint", self.joints(), skeleton.len()));
        }
        if self.id != skeleton.id() {
            return Err(wrong(
                Error::OWNER_ID,
                self.id.number(),
                skeleton.id().number(),
            ));
        }
        Ok(())
    }

    /// The level index of joint `joint` (your order) of instance `instance`, checked.
    fn level(&self, instance: usize, instances: usize, joint: usize) -> Result<usize, Error> {
        if instance >= instances {
            return Err(Error::InstanceOutOfRange {
                instance,
                instances,
            });
        }
        self.level_of
            .get(joint)
            .copied()
            .ok_or(Error::JointOutOfRange {
                joint,
                joints: self.joints(),
            })
    }
}

/// The local poses (translation, rotation, scale per joint) of every instance of a crowd.
#[derive(Clone, Debug, PartialEq)]
pub struct CrowdPose {
    owner: Owner,
    instances: usize,
    data: Vec<f32>,
}

impl CrowdPose {
    /// A crowd of `instances` poses of `skeleton`, every joint at the identity.
    ///
    /// # Errors
    /// [`Error::TooManyJoints`] past [`MAX_CROWD_JOINTS`], [`Error::TooManyInstances`] past
    /// [`MAX_CROWD_INSTANCES`] or [`MAX_CROWD_ELEMENTS`] joints in all.
    pub fn new(skeleton: &Skeleton, instances: usize) -> Result<CrowdPose, Error> {
        let owner = Owner::new(skeleton, instances)?;
        let mut data = vec![0.0; blocks(instances) * owner.joints() * TRS_ELEMENTS * CROWD_LANES];
        for chunk in data.chunks_exact_mut(TRS_ELEMENTS * CROWD_LANES) {
            // Element 6 is the quaternion's w and 7..10 the scale: identity.
            chunk[6 * CROWD_LANES..].fill(1.0);
        }
        Ok(CrowdPose {
            owner,
            instances,
            data,
        })
    }

    /// Joints per instance.
    pub fn joints(&self) -> usize {
        self.owner.joints()
    }

    /// Number of instances.
    pub fn instances(&self) -> usize {
        self.instances
    }

    fn index(&self, instance: usize, level: usize, element: usize) -> usize {
        let (b, lane) = (instance / CROWD_LANES, instance % CROWD_LANES);
        ((b * self.joints() + level) * TRS_ELEMENTS + element) * CROWD_LANES + lane
    }

    /// Sets one joint (your index) of one instance.
    ///
    /// # Errors
    /// [`Error::InstanceOutOfRange`] or [`Error::JointOutOfRange`]; [`Error::NotFinite`] or
    /// [`Error::RotationLength`] for a value that breaks the numeric rules, naming the joint.
    pub fn set_joint(
        &mut self,
        instance: usize,
        joint: usize,
        t: Vec3,
        q: Quat,
        s: Vec3,
    ) -> Result<(), Error> {
        let level = self.owner.level(instance, self.instances, joint)?;
        numeric::check_trs("local", &Trs::new(&[t], &[q], &[s]))
            .map_err(|e| numeric::at_index(e, joint))?;
        self.set_level(
            instance,
            level,
            [t.x, t.y, t.z, q.x, q.y, q.z, q.w, s.x, s.y, s.z],
        );
        Ok(())
    }

    /// Writes the ten elements of a level-order joint of an instance (both in range).
    pub(crate) fn set_level(&mut self, instance: usize, level: usize, values: [f32; TRS_ELEMENTS]) {
        for (e, v) in values.into_iter().enumerate() {
            let i = self.index(instance, level, e);
            self.data[i] = v;
        }
    }

    /// Sets every joint of one instance from streams in your joint order.
    ///
    /// # Errors
    /// [`Error::InstanceOutOfRange`], or [`Error::CountMismatch`] when a stream does not have one entry
    /// per joint; [`Error::NotFinite`] or [`Error::RotationLength`] naming the first joint (your
    /// index) that breaks the numeric rules, and then nothing is written.
    pub fn set_instance(&mut self, instance: usize, trs: Trs<'_>) -> Result<(), Error> {
        if instance >= self.instances {
            return Err(Error::InstanceOutOfRange {
                instance,
                instances: self.instances,
            });
        }
        for (what, len) in [
            ("local translations", trs.translations.len()),
            ("local rotations", trs.rotations.len()),
            ("local scales", trs.scales.len()),
        ] {
            if len != self.joints() {
                return Err(Error::CountMismatch {
                    what,
                    expected: self.joints(),
                    got: len,
                });
            }
        }
        numeric::check_trs("local", &trs)?;
        for j in 0..self.joints() {
            let (t, q, s) = (trs.translations[j], trs.rotations[j], trs.scales[j]);
            let level = self.owner.level_of[j];
            self.set_level(
                instance,
                level,
                [t.x, t.y, t.z, q.x, q.y, q.z, q.w, s.x, s.y, s.z],
            );
        }
        Ok(())
    }

    /// One joint (your index) of one instance, or `None` out of range.
    pub fn joint(&self, instance: usize, joint: usize) -> Option<(Vec3, Quat, Vec3)> {
        let level = self.owner.level(instance, self.instances, joint).ok()?;
        Some(self.level_joint(instance, level))
    }

    /// A level-order joint of an instance (both in range).
    fn level_joint(&self, instance: usize, level: usize) -> (Vec3, Quat, Vec3) {
        let v = |e| self.data[self.index(instance, level, e)];
        (
            Vec3::new(v(0), v(1), v(2)),
            Quat::from_xyzw(v(3), v(4), v(5), v(6)),
            Vec3::new(v(7), v(8), v(9)),
        )
    }

    /// The AoSoA blocks, each `joints * TRS_ELEMENTS * CROWD_LANES` floats in level order, for the
    /// crate's batch writers (the glTF crowd sampler, [`CrowdPose::fill_blocks`]).
    pub(crate) fn blocks_mut(&mut self) -> std::slice::ChunksMut<'_, f32> {
        let size = (self.joints() * TRS_ELEMENTS * CROWD_LANES).max(1);
        self.data.chunks_mut(size)
    }

    /// [`CrowdPose::blocks_mut`] as a parallel iterator.
    #[cfg_attr(not(feature = "gltf"), allow(dead_code))]
    pub(crate) fn par_blocks_mut(&mut self) -> rayon::slice::ChunksMut<'_, f32> {
        use rayon::prelude::*;
        let size = (self.joints() * TRS_ELEMENTS * CROWD_LANES).max(1);
        self.data.par_chunks_mut(size)
    }

    /// Every block (padding lanes included) set to `block`, one block of [`level_block`]'s form for
    /// this pose's joints.
    pub(crate) fn fill_blocks(&mut self, block: &[f32]) {
        for b in self.blocks_mut() {
            if b.len() == block.len() {
                b.copy_from_slice(block);
            }
        }
    }

    /// The floats, AoSoA (see the module docs), for the crowd sampling kernels.
    pub(crate) fn data_mut(&mut self) -> &mut [f32] {
        &mut self.data
    }

    /// Every instance's pose into instance-major level-order streams (`instances * joints` entries
    /// each, resized to that).
    pub(crate) fn to_streams(&self, t: &mut Vec<Vec3>, q: &mut Vec<Quat>, s: &mut Vec<Vec3>) {
        let n = self.instances * self.joints();
        t.resize(n, Vec3::ZERO);
        q.resize(n, Quat::IDENTITY);
        s.resize(n, Vec3::ONE);
        for i in 0..self.instances {
            for l in 0..self.joints() {
                let (a, b, c) = self.level_joint(i, l);
                let at = i * self.joints() + l;
                t[at] = a;
                q[at] = b;
                s[at] = c;
            }
        }
    }

    /// Every instance's pose from instance-major level-order streams of `instances * joints` entries
    /// (the caller's own buffers, checked by the blending job that wrote them; shorter streams leave
    /// the rest as it was).
    pub(crate) fn set_from_streams(&mut self, t: &[Vec3], q: &[Quat], s: &[Vec3]) {
        let joints = self.joints();
        for (at, ((a, b), c)) in t.iter().zip(q).zip(s).enumerate() {
            let (i, l) = (at / joints.max(1), at % joints.max(1));
            if i < self.instances {
                self.set_level(i, l, [a.x, a.y, a.z, b.x, b.y, b.z, b.w, c.x, c.y, c.z]);
            }
        }
    }

    /// The level index of each joint of the skeleton the pose was made for.
    pub(crate) fn level_order(&self) -> &[usize] {
        &self.owner.level_of
    }

    /// [`Error::WrongFrame`] unless this pose was made for `skeleton`.
    pub(crate) fn check_owner(&self, skeleton: &Skeleton) -> Result<(), Error> {
        self.owner.check("CrowdPose", skeleton)
    }
}

/// The model matrices of every instance of a crowd (output of [`CrowdLocalToModelJob`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CrowdModels {
    owner: Owner,
    instances: usize,
    data: Vec<f32>,
}

impl CrowdModels {
    /// Zeroed storage for `instances` model matrices of each joint of `skeleton`.
    ///
    /// # Errors
    /// As [`CrowdPose::new`].
    pub fn new(skeleton: &Skeleton, instances: usize) -> Result<CrowdModels, Error> {
        let owner = Owner::new(skeleton, instances)?;
        let data = vec![0.0; blocks(instances) * owner.joints() * MODEL_ELEMENTS * CROWD_LANES];
        Ok(CrowdModels {
            owner,
            instances,
            data,
        })
    }

    /// Joints per instance.
    pub fn joints(&self) -> usize {
        self.owner.joints()
    }

    /// Number of instances.
    pub fn instances(&self) -> usize {
        self.instances
    }

    /// The model matrix of one joint (your index) of one instance, or `None` out of range.
    pub fn model(&self, instance: usize, joint: usize) -> Option<Mat4> {
        let level = self.owner.level(instance, self.instances, joint).ok()?;
        Some(self.level_model(instance, level))
    }

    fn level_model(&self, instance: usize, level: usize) -> Mat4 {
        let (b, lane) = (instance / CROWD_LANES, instance % CROWD_LANES);
        let j = self.joints();
        let at = |e: usize| self.data[((b * j + level) * MODEL_ELEMENTS + e) * CROWD_LANES + lane];
        let mut c = [0.0f32; 16];
        for r in 0..3 {
            for col in 0..4 {
                c[4 * col + r] = at(4 * r + col);
            }
        }
        c[15] = 1.0;
        Mat4::from_cols_array(&c)
    }

    /// Copies one instance's model matrices into `out`, in your joint order.
    ///
    /// # Errors
    /// [`Error::InstanceOutOfRange`], or [`Error::CountMismatch`] when `out` does not have one matrix
    /// per joint.
    pub fn instance_models(&self, instance: usize, out: &mut [Mat4]) -> Result<(), Error> {
        if instance >= self.instances {
            return Err(Error::InstanceOutOfRange {
                instance,
                instances: self.instances,
            });
        }
        if out.len() != self.joints() {
            return Err(Error::CountMismatch {
                what: "model matrices",
                expected: self.joints(),
                got: out.len(),
            });
        }
        for (m, &level) in out.iter_mut().zip(&self.owner.level_of) {
            *m = self.level_model(instance, level);
        }
        Ok(())
    }

    /// The AoSoA blocks in level order, and the floats of one block
    /// (`joints * MODEL_ELEMENTS * CROWD_LANES`, at least 1 so that it can size chunks).
    pub(crate) fn block_data(&self) -> (&[f32], usize) {
        (
            &self.data,
            (self.joints() * MODEL_ELEMENTS * CROWD_LANES).max(1),
        )
    }

    /// [`Error::WrongFrame`] unless these models were made for `skeleton`.
    pub(crate) fn check_owner(&self, skeleton: &Skeleton) -> Result<(), Error> {
        self.owner.check("CrowdModels", skeleton)
    }
}

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

    /// Checks every rule (see the module docs) without computing anything.
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
        let n = self.locals.instances;
        if self.models.instances != n {
            return Err(Error::CountMismatch {
                what: "crowd model instances",
                expected: n,
                got: self.models.instances,
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
        self.backend.resolve().map(|_| ())
    }

    /// Validates, then computes every instance's model matrices.
    ///
    /// The roots are checked to be finite ([`Error::NotFinite`]); the poses hold only checked values
    /// ([`CrowdPose::set_joint`], [`CrowdPose::set_instance`]). The model matrices computed are checked
    /// to be finite: finite poses whose products overflow `f32` are [`Error::ResultNotFinite`], naming
    /// the instance.
    pub fn run(&mut self) -> Result<(), Error> {
        let isa = self.backend.resolve()?.runnable();
        // The kernels report whether what they wrote is finite; the reference is scanned.
        let finite = self.compute()?;
        if finite && (isa.is_some() || numeric::all_finite_on(isa, &self.models.data)) {
            return Ok(());
        }
        let at = self
            .models
            .data
            .iter()
            .position(|x| !x.is_finite())
            .unwrap_or(0);
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
        let isa = match self.backend.resolve()? {
            Resolved::Ispc(isa) => isa,
            Resolved::Reference => {
                self.run_reference();
                return Ok(true);
            }
        };
        let skeleton = self.skeleton;
        let lsize = skeleton.len() * TRS_ELEMENTS * CROWD_LANES;
        let msize = skeleton.len() * MODEL_ELEMENTS * CROWD_LANES;
        if lsize == 0 {
            return Ok(true);
        }
        // One contiguous run of blocks per thread: a block is about a microsecond of work, too little to
        // be a task of its own.
        let block_count = blocks(self.locals.instances);
        let per_task = match self.threads {
            Threads::One => block_count.max(1),
            Threads::All => block_count.div_ceil(rayon::current_num_threads()).max(1),
        };
        let roots = self.roots.unwrap_or(&[]);
        // Block b's roots: the instances of that block that have one (none when no roots are given).
        let block_roots = move |b: usize| {
            roots
                .get(b * CROWD_LANES..)
                .map_or(&[][..], |r| &r[..r.len().min(CROWD_LANES)])
        };
        let all_finite = std::sync::atomic::AtomicBool::new(true);
        let work = |(t, (m, l)): (usize, (&mut [f32], &[f32]))| {
            let mut finite = true;
            for (k, (m, l)) in m.chunks_mut(msize).zip(l.chunks(lsize)).enumerate() {
                finite &= ffi::crowd_ltm_trs(
                    isa,
                    skeleton.kernel_order(),
                    l,
                    block_roots(t * per_task + k),
                    m,
                );
            }
            if !finite {
                all_finite.store(false, std::sync::atomic::Ordering::Relaxed);
            }
        };
        let (models, locals) = (&mut self.models.data, &self.locals.data);
        let mut tasks = models
            .chunks_mut(msize * per_task)
            .zip(locals.chunks(lsize * per_task))
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
        Ok(all_finite.into_inner())
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
        for i in 0..self.locals.instances {
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
                        self.models.data
                            [((b * j + k) * MODEL_ELEMENTS + 4 * r + col) * CROWD_LANES + lane] =
                            c[4 * col + r];
                    }
                }
            }
        }
    }
}

/// One AoSoA block of `CROWD_LANES` instances all at one level-order pose (translations, rotations,
/// scales): what a crowd's blocks start from (the glTF crowd sampler, `Character::crowd_rest`).
pub(crate) fn level_block(pose: (&[Vec3], &[Quat], &[Vec3])) -> Vec<f32> {
    let (t, q, s) = pose;
    let mut block = vec![0.0; t.len() * TRS_ELEMENTS * CROWD_LANES];
    for (j, ((t, q), s)) in t.iter().zip(q).zip(s).enumerate() {
        let values = [t.x, t.y, t.z, q.x, q.y, q.z, q.w, s.x, s.y, s.z];
        for (e, v) in values.into_iter().enumerate() {
            let at = (j * TRS_ELEMENTS + e) * CROWD_LANES;
            block[at..at + CROWD_LANES].fill(v);
        }
    }
    block
}
