//! A crowd's buffers: the local poses ([`CrowdPose`]) and model matrices ([`CrowdModels`]) of many
//! instances of one skeleton, in AoSoA blocks of [`CROWD_LANES`] instances (within a block, each element
//! of a joint, say the x translation of joint 7, of the 16 instances is one contiguous 64-byte run).
//! Every crowd stage reads or writes them: the crowd sampler writes poses,
//! the crowd blend and local to model read them, local to model writes the models and the palettes read
//! them, so they sit below the stages, beside the skeleton they belong to.
//!
//! Both are made for one skeleton and speak its user order: joint `j` is the joint the skeleton's parent
//! array calls `j`; the blocks inside are in level order. They belong to that skeleton (and its
//! clones): another skeleton refuses them even with the same hierarchy.

use crate::error::Error;
use crate::layout::crowd::{
    CROWD_LANES, MAX_CROWD_ELEMENTS, MAX_CROWD_INSTANCES, MAX_CROWD_JOINTS, MODEL_ELEMENTS,
    TRS_ELEMENTS,
};
use crate::layout::trs::Trs;
use crate::numeric;
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
    pub(crate) fn level_joint(&self, instance: usize, level: usize) -> (Vec3, Quat, Vec3) {
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

    /// The floats, AoSoA (see the [module docs](crate::crowd_buffers)), for the crowd kernels.
    pub(crate) fn data(&self) -> &[f32] {
        &self.data
    }

    /// The floats, AoSoA (see the [module docs](crate::crowd_buffers)), for the crowd sampling kernels.
    pub(crate) fn data_mut(&mut self) -> &mut [f32] {
        &mut self.data
    }

    /// Every instance's pose into instance-major level-order streams (`instances * joints` entries
    /// each, resized to that), block by block, on rayon's pool when `parallel`.
    pub(crate) fn to_streams(
        &self,
        t: &mut Vec<Vec3>,
        q: &mut Vec<Quat>,
        s: &mut Vec<Vec3>,
        parallel: bool,
    ) {
        use rayon::prelude::*;
        let joints = self.joints();
        let n = self.instances * joints;
        t.resize(n, Vec3::ZERO);
        q.resize(n, Quat::IDENTITY);
        s.resize(n, Vec3::ONE);
        if joints == 0 {
            return;
        }
        let (size, per_block) = (joints * TRS_ELEMENTS * CROWD_LANES, joints * CROWD_LANES);
        let unit = |(block, ((t, q), s)): StreamsOfBlock<'_>| {
            block_to_streams(block, joints, (t, q, s));
        };
        if parallel {
            let streams = t
                .par_chunks_mut(per_block)
                .zip(q.par_chunks_mut(per_block))
                .zip(s.par_chunks_mut(per_block));
            self.data.par_chunks(size).zip(streams).for_each(unit);
        } else {
            let streams = t
                .chunks_mut(per_block)
                .zip(q.chunks_mut(per_block))
                .zip(s.chunks_mut(per_block));
            self.data.chunks(size).zip(streams).for_each(unit);
        }
    }

    /// Every instance's pose from instance-major level-order streams of `instances * joints` entries
    /// (the caller's own buffers, checked by the blending job that wrote them; shorter streams leave
    /// the rest as it was), block by block, on rayon's pool when `parallel`.
    pub(crate) fn set_from_streams(&mut self, t: &[Vec3], q: &[Quat], s: &[Vec3], parallel: bool) {
        use rayon::prelude::*;
        let joints = self.joints();
        if joints == 0 {
            return;
        }
        let n = (self.instances * joints)
            .min(t.len())
            .min(q.len())
            .min(s.len());
        let (t, q, s) = (&t[..n], &q[..n], &s[..n]);
        let (size, per_block) = (joints * TRS_ELEMENTS * CROWD_LANES, joints * CROWD_LANES);
        let unit = |(block, ((t, q), s)): BlockOfStreams<'_>| {
            block_from_streams(block, joints, (t, q, s));
        };
        if parallel {
            let streams = t
                .par_chunks(per_block)
                .zip(q.par_chunks(per_block))
                .zip(s.par_chunks(per_block));
            self.data.par_chunks_mut(size).zip(streams).for_each(unit);
        } else {
            let streams = t
                .chunks(per_block)
                .zip(q.chunks(per_block))
                .zip(s.chunks(per_block));
            self.data.chunks_mut(size).zip(streams).for_each(unit);
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

/// One block's floats to write and the streams of its instances (up to [`CROWD_LANES`] of them).
type BlockOfStreams<'a> = (&'a mut [f32], ((&'a [Vec3], &'a [Quat]), &'a [Vec3]));
/// One block's floats and the streams of its instances to write.
type StreamsOfBlock<'a> = (
    &'a [f32],
    ((&'a mut [Vec3], &'a mut [Quat]), &'a mut [Vec3]),
);

/// One block's AoSoA floats into its instances' streams (the inverse of [`block_from_streams`]).
fn block_to_streams(
    block: &[f32],
    joints: usize,
    (t, q, s): (&mut [Vec3], &mut [Quat], &mut [Vec3]),
) {
    if joints == 0 {
        return;
    }
    let stride = TRS_ELEMENTS * CROWD_LANES;
    let instances = t
        .chunks_exact_mut(joints)
        .zip(q.chunks_exact_mut(joints))
        .zip(s.chunks_exact_mut(joints));
    for (lane, ((t, q), s)) in instances.take(CROWD_LANES).enumerate() {
        for (joint, ((a, b), c)) in block.chunks_exact(stride).zip(t.iter_mut().zip(q).zip(s)) {
            let mut v = [0.0f32; TRS_ELEMENTS];
            for (lanes, o) in joint.chunks_exact(CROWD_LANES).zip(&mut v) {
                if let Some(&x) = lanes.get(lane) {
                    *o = x;
                }
            }
            *a = Vec3::new(v[0], v[1], v[2]);
            *b = Quat::from_xyzw(v[3], v[4], v[5], v[6]);
            *c = Vec3::new(v[7], v[8], v[9]);
        }
    }
}

/// One block's instances (instance-major level-order streams, at most [`CROWD_LANES`] instances of
/// `joints` entries) into its AoSoA floats: element `e` of level `l` of lane `i` at
/// `(l * TRS_ELEMENTS + e) * CROWD_LANES + i`.
pub(crate) fn block_from_streams(
    block: &mut [f32],
    joints: usize,
    (t, q, s): (&[Vec3], &[Quat], &[Vec3]),
) {
    if joints == 0 {
        return;
    }
    let stride = TRS_ELEMENTS * CROWD_LANES;
    let instances = t
        .chunks_exact(joints)
        .zip(q.chunks_exact(joints))
        .zip(s.chunks_exact(joints));
    for (lane, ((t, q), s)) in instances.take(CROWD_LANES).enumerate() {
        for (joint, ((a, b), c)) in block.chunks_exact_mut(stride).zip(t.iter().zip(q).zip(s)) {
            let values = [a.x, a.y, a.z, b.x, b.y, b.z, b.w, c.x, c.y, c.z];
            for (lanes, v) in joint.chunks_exact_mut(CROWD_LANES).zip(values) {
                if let Some(o) = lanes.get_mut(lane) {
                    *o = v;
                }
            }
        }
    }
}

/// The model matrices of every instance of a crowd (output of [`CrowdLocalToModelJob`](crate::CrowdLocalToModelJob)).
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

    /// The floats, AoSoA (see the [module docs](crate::crowd_buffers)).
    pub(crate) fn data(&self) -> &[f32] {
        &self.data
    }

    /// The floats, AoSoA (see the [module docs](crate::crowd_buffers)), for the crowd local-to-model job.
    pub(crate) fn data_mut(&mut self) -> &mut [f32] {
        &mut self.data
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Streams and blocks convert both ways, serially and on the pool, for crowds around a block.
    #[test]
    fn streams_and_blocks_round_trip() {
        let parents: Vec<Option<usize>> = (0..5usize).map(|j| j.checked_sub(1)).collect();
        let skeleton = Skeleton::from_parents(&parents).expect("a chain");
        for instances in [0usize, 1, 15, 16, 17, 33] {
            let n = instances * 5;
            let t: Vec<Vec3> = (0..n).map(|i| Vec3::splat(i as f32)).collect();
            let q: Vec<Quat> = (0..n).map(|i| Quat::from_rotation_z(i as f32)).collect();
            let s: Vec<Vec3> = (0..n).map(|i| Vec3::splat(1.0 + i as f32)).collect();
            for parallel in [false, true] {
                let mut pose = CrowdPose::new(&skeleton, instances).expect("a crowd");
                pose.set_from_streams(&t, &q, &s, parallel);
                for i in 0..instances {
                    for l in 0..5 {
                        let at = i * 5 + l;
                        assert_eq!(pose.level_joint(i, l), (t[at], q[at], s[at]));
                    }
                }
                let (mut t2, mut q2, mut s2) = (Vec::new(), Vec::new(), Vec::new());
                pose.to_streams(&mut t2, &mut q2, &mut s2, !parallel);
                assert_eq!((t2, q2, s2), (t.clone(), q.clone(), s.clone()));
            }
        }
    }
}
