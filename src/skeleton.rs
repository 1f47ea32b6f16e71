//! A joint hierarchy re-indexed in level order (breadth first).
//!
//! Level order puts the children of every joint next to each other, and the joints of every level next to
//! each other (the level-order seed). Both facts are what the kernels use: a joint's children are one
//! contiguous range, a level is one contiguous range, and the parent of a joint always comes before it,
//! so one forward pass computes every model matrix. Descendants of one joint are also contiguous within
//! each level, which makes a subtree a short list of ranges (see [`Skeleton::subtree_ranges`]).
//!
//! # Two orders, one index type
//! A joint index is always a `usize`. Unless a name says `level`, it is *your* index: the position in
//! the parent array you built the skeleton from (for glTF, the node index). [`Skeleton::parent`],
//! [`Skeleton::children`], [`Skeleton::name`], [`Character`](crate::Character), [`Frame`](crate::Frame)
//! and the crowd types all speak your order and convert inside.
//!
//! The jobs ([`LocalToModelJob`](crate::LocalToModelJob), [`PaletteJob`](crate::PaletteJob),
//! [`CrowdLocalToModelJob`](crate::CrowdLocalToModelJob)) are the fast path: their per-joint arrays are
//! in level order, so that they never permute. [`Skeleton::level_index`] and
//! [`Skeleton::original_index`] convert one index, [`Skeleton::level_indices`] a list (a skin's joints),
//! and [`Skeleton::to_level_order`] / [`Skeleton::to_original_order`] whole arrays; the `level_*`
//! methods walk the level order itself.
//!
//! ```
//! use ispc_skinning::Skeleton;
//!
//! // Your order: 0 = hand, 1 = forearm, 2 = upper arm (the root).
//! let arm = Skeleton::from_parents(&[Some(1), Some(2), None])?;
//! assert_eq!(arm.parent(0), Some(1)); // your indices in, your indices out
//! assert_eq!(arm.roots().collect::<Vec<_>>(), [2]);
//! // Level order puts the root first: the jobs' fast path.
//! assert_eq!(arm.level_index(2), Some(0));
//! assert_eq!(arm.to_level_order(&["hand", "forearm", "upper arm"])?, ["upper arm", "forearm", "hand"]);
//! # Ok::<(), ispc_skinning::Error>(())
//! ```

use crate::error::Error;
use crate::layout::hierarchy::LevelOrder;
pub use crate::layout::hierarchy::MAX_JOINTS;
use crate::layout::trs::Trs;
use crate::numeric;
use crate::reference;
use glam::{Mat4, Quat, Vec3};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// The identity of an owner of buffers (a [`Skeleton`], a [`Character`](crate::Character), and so a
/// glTF scene): a number no other owner made in this process has, given at construction from one
/// global counter. A clone keeps it (a clone is the same data, so its buffers fit); anything that
/// builds a changed owner gives the result a new one. Buffers record their owner's identity, and every
/// stage refuses a buffer of another owner ([`Error::WrongFrame`]) even when every count matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct OwnerId(u64);

impl OwnerId {
    /// A new identity. The counter is 64 bits wide: it cannot wrap in any process's life.
    pub(crate) fn new() -> OwnerId {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        OwnerId(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The identity as [`Error::WrongFrame`] reports it (saturated on targets whose `usize` is
    /// narrower than 64 bits).
    pub(crate) fn number(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

/// The first joint whose level-order place differs between two joint orders (`a[j]` and `b[j]`: joint
/// `j`'s place in each), or the shorter count where one order begins the other; `None` when they are
/// the same. What [`Error::ClipSkeleton`](crate::Error::ClipSkeleton) names for a clip of another
/// skeleton.
pub(crate) fn order_difference(
    a: impl ExactSizeIterator<Item = usize>,
    b: impl ExactSizeIterator<Item = usize>,
) -> Option<usize> {
    let (la, lb) = (a.len(), b.len());
    a.zip(b)
        .position(|(x, y)| x != y)
        .or((la != lb).then(|| la.min(lb)))
}

/// A joint hierarchy (a tree or a forest) in level order.
///
/// Two skeletons compare equal when they hold the same hierarchy (and names); buffers made for one
/// ([`CrowdPose`](crate::CrowdPose), [`CrowdModels`](crate::CrowdModels)) are still refused by the
/// other, unless it is a clone: a skeleton's identity is given at construction and kept by clones.
#[derive(Clone, Debug)]
pub struct Skeleton {
    /// Who this skeleton is, for the buffers made for it.
    id: OwnerId,
    /// Parents, children and levels in level order, checked for the kernels. Each joint's parent is
    /// smaller than its own index; the children of joint j are one range, empty for a leaf, which
    /// sits where its children would be, so the children of a range of joints are one range too.
    order: LevelOrder,
    /// The parent array as given (your order), and the same hierarchy in level order.
    parents: Vec<Option<usize>>,
    level_parents: Vec<Option<usize>>,
    /// Level-order index of each of your joints, and the reverse.
    level_of_original: Vec<usize>,
    original_of_level: Vec<usize>,
    /// Joint names in your order, when given.
    names: Option<Vec<String>>,
}

impl PartialEq for Skeleton {
    /// The same hierarchy and names; the identity is not compared (see [`Skeleton`]).
    fn eq(&self, other: &Skeleton) -> bool {
        self.order == other.order
            && self.parents == other.parents
            && self.level_parents == other.level_parents
            && self.level_of_original == other.level_of_original
            && self.original_of_level == other.original_of_level
            && self.names == other.names
    }
}

impl Eq for Skeleton {}

impl Skeleton {
    /// Builds a skeleton from a parent array in any order (glTF node order, depth first, or arbitrary).
    /// `parents[j]` is the parent of joint `j`, or `None` for a root; several roots make a forest.
    ///
    /// Children keep their original relative order, and roots come first in their original order.
    ///
    /// # Errors
    /// [`Error::EmptySkeleton`], [`Error::TooManyJoints`], [`Error::ParentOutOfRange`],
    /// [`Error::SelfParent`] and [`Error::Cycle`], each naming the joint (by its original index).
    pub fn from_parents(parents: &[Option<usize>]) -> Result<Skeleton, Error> {
        let n = parents.len();
        if n == 0 {
            return Err(Error::EmptySkeleton);
        }
        if n > MAX_JOINTS {
            return Err(Error::TooManyJoints {
                joints: n,
                max: MAX_JOINTS,
            });
        }
        for (joint, &parent) in parents.iter().enumerate() {
            match parent {
                Some(p) if p >= n => {
                    return Err(Error::ParentOutOfRange {
                        joint,
                        parent: p,
                        joints: n,
                    })
                }
                Some(p) if p == joint => return Err(Error::SelfParent { joint }),
                _ => {}
            }
        }

        // Children of each original joint, in original order (counting sort: O(n)).
        let mut first = vec![0u32; n + 1];
        for p in parents.iter().flatten() {
            first[p + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut fill = first.clone();
        let mut kids = vec![0u32; n - parents.iter().filter(|p| p.is_none()).count()];
        for (joint, parent) in parents.iter().enumerate() {
            if let Some(p) = *parent {
                kids[fill[p] as usize] = joint as u32;
                fill[p] += 1;
            }
        }

        // Breadth-first from all roots at once: the queue order is the level order.
        let mut order: Vec<u32> = (0..n as u32)
            .filter(|&j| parents[j as usize].is_none())
            .collect();
        order.reserve(n - order.len());
        let mut child_start = Vec::with_capacity(n);
        let mut child_end = Vec::with_capacity(n);
        let mut level_start = vec![0u32];
        let mut level_end = order.len();
        let mut head = 0;
        while head < order.len() {
            if head == level_end {
                level_start.push(head as u32);
                level_end = order.len();
            }
            let j = order[head] as usize;
            child_start.push(order.len() as u32);
            order.extend_from_slice(&kids[first[j] as usize..first[j + 1] as usize]);
            child_end.push(order.len() as u32);
            head += 1;
        }
        if order.len() < n {
            return Err(Error::Cycle {
                joint: cycle_member(parents, &order),
            });
        }
        level_start.push(n as u32);

        let mut level_of_original = vec![0u32; n];
        for (level, &orig) in order.iter().enumerate() {
            level_of_original[orig as usize] = level as u32;
        }
        let parents_level = order
            .iter()
            .map(|&orig| parents[orig as usize].map_or(-1, |p| level_of_original[p] as i32))
            .collect();
        let level_parents = order
            .iter()
            .map(|&orig| parents[orig as usize].map(|p| level_of_original[p] as usize))
            .collect();
        Ok(Skeleton {
            id: OwnerId::new(),
            order: LevelOrder::new(parents_level, child_start, child_end, level_start),
            parents: parents.to_vec(),
            level_parents,
            level_of_original: level_of_original.iter().map(|&l| l as usize).collect(),
            original_of_level: order.iter().map(|&o| o as usize).collect(),
            names: None,
        })
    }

    /// Builds a skeleton from `-1`-for-root parent indices (the ozz-animation and many engines' form).
    ///
    /// # Errors
    /// As [`Skeleton::from_parents`]; any negative value other than -1 is [`Error::NegativeParent`].
    pub fn from_parent_indices(parents: &[i32]) -> Result<Skeleton, Error> {
        let mut converted = Vec::with_capacity(parents.len());
        for (joint, &p) in parents.iter().enumerate() {
            converted.push(match p {
                -1 => None,
                p if p < 0 => return Err(Error::NegativeParent { joint, parent: p }),
                p => Some(p as usize),
            });
        }
        Skeleton::from_parents(&converted)
    }

    /// Attaches joint names, one per joint in your order. An empty name is a joint without one (a glTF
    /// node without `name`): [`Skeleton::name`] gives `None` for it and no lookup finds it. Names may
    /// repeat; a lookup finds the first joint, in your order, that has the name. The skeleton keeps its
    /// identity: names change nothing that the buffers made for it hold.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when there is not exactly one name per joint.
    pub fn with_names(mut self, names: Vec<String>) -> Result<Skeleton, Error> {
        self.check_count("joint names", names.len())?;
        self.names = Some(names);
        Ok(self)
    }

    /// Number of joints.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// Always false: a skeleton has at least one joint.
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    // ---- Your order: the indices of the parent array the skeleton was built from. ----

    /// The parent of every joint, as given to [`Skeleton::from_parents`] (`None` for a root).
    pub fn parents(&self) -> &[Option<usize>] {
        &self.parents
    }

    /// The parent of a joint, `None` for a root or an index out of range.
    pub fn parent(&self, joint: usize) -> Option<usize> {
        self.parents.get(joint).copied().flatten()
    }

    /// The children of a joint, in your order (none for a leaf or an index out of range).
    pub fn children(&self, joint: usize) -> impl Iterator<Item = usize> + '_ {
        let level = self.level_index(joint).unwrap_or(self.len());
        self.level_children(level)
            .map(|l| self.original_of_level[l])
    }

    /// The roots, in your order.
    pub fn roots(&self) -> impl Iterator<Item = usize> + '_ {
        self.level(0).map(|l| self.original_of_level[l])
    }

    /// The name of a joint (your index), when names were attached and this one is not empty.
    pub fn name(&self, joint: usize) -> Option<&str> {
        let name = self.names.as_ref()?.get(joint)?;
        (!name.is_empty()).then_some(name.as_str())
    }

    /// The joint (your index) with this name: the first in your order if several share it, `None` for
    /// an empty name or one no joint has. A skeleton loaded from glTF has its nodes' names.
    pub fn find(&self, name: &str) -> Option<usize> {
        if name.is_empty() {
            return None;
        }
        self.names.as_ref()?.iter().position(|n| n == name)
    }

    /// [`Skeleton::find`] as a `Result`, for code that treats a missing joint as an error.
    ///
    /// # Errors
    /// [`Error::NameNotFound`] (`what: "joint"`) when no joint has the name, the name is empty, or the
    /// skeleton has no names.
    pub fn joint_named(&self, name: &str) -> Result<usize, Error> {
        self.find(name).ok_or_else(|| Error::NameNotFound {
            what: "joint",
            name: name.to_string(),
        })
    }

    // ---- Between the two orders. ----

    /// The level-order index of a joint, or `None` for an index out of range.
    pub fn level_index(&self, joint: usize) -> Option<usize> {
        self.level_of_original.get(joint).copied()
    }

    /// The level-order index of each joint in `joints` (your indices): for example the joint remap
    /// that [`PaletteJob::joints`](crate::PaletteJob::joints) takes for a skin given in your order.
    ///
    /// # Errors
    /// [`Error::JointOutOfRange`] naming the first index that is not a joint.
    pub fn level_indices(&self, joints: &[usize]) -> Result<Vec<usize>, Error> {
        joints
            .iter()
            .map(|&joint| {
                self.level_index(joint).ok_or(Error::JointOutOfRange {
                    joint,
                    joints: self.len(),
                })
            })
            .collect()
    }

    /// The joint (your index) at a level-order index, or `None` out of range.
    pub fn original_index(&self, level: usize) -> Option<usize> {
        self.original_of_level.get(level).copied()
    }

    /// The permutation from level order to your order: `original_order()[level] = joint`.
    pub fn original_order(&self) -> &[usize] {
        &self.original_of_level
    }

    /// The permutation from your order to level order: `level_order()[joint] = level`.
    pub fn level_order(&self) -> &[usize] {
        &self.level_of_original
    }

    /// Reorders per-joint data given in your order into level order.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when `data` does not have one item per joint.
    pub fn to_level_order<T: Clone>(&self, data: &[T]) -> Result<Vec<T>, Error> {
        self.check_count("per-joint data", data.len())?;
        Ok(self
            .original_of_level
            .iter()
            .map(|&o| data[o].clone())
            .collect())
    }

    /// Reorders per-joint data given in level order back into your order.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when `data` does not have one item per joint.
    pub fn to_original_order<T: Clone>(&self, data: &[T]) -> Result<Vec<T>, Error> {
        self.check_count("per-joint data", data.len())?;
        Ok(self
            .level_of_original
            .iter()
            .map(|&l| data[l].clone())
            .collect())
    }

    /// The model matrix of every joint in a pose, in your joint order: a bind pose's matrices, whose
    /// inverses are the inverse bind matrices ([`Skeleton::inverse_bind_matrices`]). The local
    /// transforms are in your joint order too. Computed with the serial reference, for load time.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when a stream does not have one entry per joint; [`Error::NotFinite`] and
    /// [`Error::RotationLength`] for a float or rotation that breaks the numeric rules (your joint
    /// index); [`Error::ResultNotFinite`] when finite transforms overflow `f32` down the hierarchy.
    pub fn bind_pose_models(
        &self,
        translations: &[Vec3],
        rotations: &[Quat],
        scales: &[Vec3],
    ) -> Result<Vec<Mat4>, Error> {
        if translations.len() == self.len()
            && rotations.len() == self.len()
            && scales.len() == self.len()
        {
            numeric::check_trs("bind", &Trs::new(translations, rotations, scales))?;
        }
        let t = self.to_level_order(translations)?;
        let q = self.to_level_order(rotations)?;
        let s = self.to_level_order(scales)?;
        let mut models = vec![Mat4::IDENTITY; self.len()];
        let trs = Trs {
            translations: &t,
            rotations: &q,
            scales: &s,
        };
        let all = 0..self.len();
        reference::local_to_model_trs(&self.level_parents, trs, &Mat4::IDENTITY, &mut models, all);
        let models = self.to_original_order(&models)?;
        numeric::check_result(
            "bind pose",
            "model matrices",
            bytemuck::cast_slice(&models),
            16,
        )?;
        Ok(models)
    }

    /// The inverse bind matrix of every joint of a skin bound in a pose (local transforms in your
    /// joint order): the inverses of [`Skeleton::bind_pose_models`], in your joint order.
    ///
    /// # Errors
    /// Those of [`Skeleton::bind_pose_models`], and [`Error::Singular`] for a joint whose bind pose
    /// model matrix has no finite inverse (a zero scale on it or an ancestor).
    pub fn inverse_bind_matrices(
        &self,
        translations: &[Vec3],
        rotations: &[Quat],
        scales: &[Vec3],
    ) -> Result<Vec<Mat4>, Error> {
        // The portable inverse: the same bits on every platform, so that characters built on different
        // machines skin alike (Precision::Deterministic).
        let inverses: Vec<Mat4> = self
            .bind_pose_models(translations, rotations, scales)?
            .iter()
            .map(|m| Mat4::from_cols_array(&reference::affine_inverse(&m.to_cols_array())))
            .collect();
        match inverses
            .iter()
            .position(|m| !numeric::all_finite(&m.to_cols_array()))
        {
            Some(index) => Err(Error::Singular {
                what: "bind pose model matrices",
                index,
            }),
            None => Ok(inverses),
        }
    }

    // ---- Level order: the fast path the jobs take. ----

    /// The parent of every joint in level order (`None` for a root). A parent's level index is always
    /// smaller than its child's.
    pub fn level_parents(&self) -> &[Option<usize>] {
        &self.level_parents
    }

    /// The parent of a level-order joint, `None` for a root (or for an index out of range).
    pub fn level_parent(&self, level: usize) -> Option<usize> {
        self.level_parents.get(level).copied().flatten()
    }

    /// The level-order children of a level-order joint: always one contiguous range (empty for a leaf
    /// or an index out of range).
    pub fn level_children(&self, level: usize) -> Range<usize> {
        let (starts, ends) = self.order.child_ranges();
        match (starts.get(level), ends.get(level)) {
            (Some(&s), Some(&e)) => s as usize..e as usize,
            _ => 0..0,
        }
    }

    /// Number of levels (the depth of the deepest joint plus one).
    pub fn level_count(&self) -> usize {
        self.order.level_starts().len() - 1
    }

    /// The joints of one level, as level-order indices: a contiguous range (empty past the last level).
    /// Level 0 holds the roots.
    pub fn level(&self, level: usize) -> Range<usize> {
        let starts = self.order.level_starts();
        match (
            starts.get(level),
            level.checked_add(1).and_then(|next| starts.get(next)),
        ) {
            (Some(&s), Some(&e)) => s as usize..e as usize,
            _ => 0..0,
        }
    }

    /// Every level, root level first.
    pub fn levels(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        self.order
            .level_starts()
            .windows(2)
            .map(|w| w[0] as usize..w[1] as usize)
    }

    /// The subtree rooted at a level-order joint (itself included): one contiguous range of
    /// level-order joints per level, so processing the ranges in turn visits every parent before its
    /// children. Empty when `level` is out of range.
    pub fn level_subtree(&self, level: usize) -> Vec<Range<usize>> {
        let mut ranges = Vec::new();
        if level >= self.len() {
            return ranges;
        }
        let (starts, ends) = self.order.child_ranges();
        let mut range = level..level + 1;
        while !range.is_empty() {
            ranges.push(range.clone());
            // Children of a contiguous range are contiguous: from the first joint's children start to
            // the last joint's children end.
            range = starts[range.start] as usize..ends[range.end - 1] as usize;
        }
        ranges
    }

    /// This skeleton's identity (kept by clones; see [`OwnerId`]).
    pub(crate) fn id(&self) -> OwnerId {
        self.id
    }

    /// The checked level-order arrays the kernels read.
    pub(crate) fn kernel_order(&self) -> &LevelOrder {
        &self.order
    }

    pub(crate) fn check_count(&self, what: &'static str, got: usize) -> Result<(), Error> {
        if got == self.len() {
            Ok(())
        } else {
            Err(Error::CountMismatch {
                what,
                expected: self.len(),
                got,
            })
        }
    }
}

/// A joint on a cycle, given that the joints in `reached` are exactly those reachable from a root.
/// Following parents from any unreached joint never reaches a root, so it must enter a cycle; the
/// first joint seen twice is on it.
fn cycle_member(parents: &[Option<usize>], reached: &[u32]) -> usize {
    let mut seen = vec![false; parents.len()];
    for &j in reached {
        seen[j as usize] = true;
    }
    let mut on_path = vec![false; parents.len()];
    let mut j = (0..parents.len()).find(|&j| !seen[j]).unwrap_or(0);
    // Every unreached joint has a parent (roots are reached), and the walk is bounded by n steps.
    for _ in 0..=parents.len() {
        if on_path[j] {
            break;
        }
        on_path[j] = true;
        match parents[j] {
            Some(p) => j = p,
            None => break,
        }
    }
    j
}

#[cfg(test)]
mod tests {
    use super::order_difference;

    #[test]
    fn order_difference_names_the_first_joint_that_differs() {
        let d = |a: &[usize], b: &[usize]| order_difference(a.iter().copied(), b.iter().copied());
        assert_eq!(d(&[0, 2, 1], &[0, 2, 1]), None);
        assert_eq!(d(&[0, 2, 1], &[0, 1, 2]), Some(1));
        // One order begins the other: the shorter count.
        assert_eq!(d(&[0, 1, 2], &[0, 1]), Some(2));
        assert_eq!(d(&[], &[0]), Some(0));
        // A joint that differs before the shorter one ends comes first.
        assert_eq!(d(&[1, 0, 2], &[0, 1]), Some(0));
    }
}
