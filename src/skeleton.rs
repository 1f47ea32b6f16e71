//! A joint hierarchy re-indexed in level order (breadth first).
//!
//! Level order puts the children of every joint next to each other, and the joints of every level next to
//! each other (the level-order seed). Both facts are what the kernels use: a joint's children are one
//! contiguous range, a level is one contiguous range, and the parent of a joint always comes before it,
//! so one forward pass computes every model matrix. Descendants of one joint are also contiguous within
//! each level, which makes a subtree a short list of ranges (see [`Skeleton::subtree_ranges`]).
//!
//! Every array a job takes or returns is indexed in this level order. [`Skeleton::level_index`] and
//! [`Skeleton::original_index`] convert joint indices; [`Skeleton::to_level_order`] and
//! [`Skeleton::to_original_order`] reorder whole arrays.

use crate::error::Error;
use crate::layout::hierarchy::LevelOrder;
pub use crate::layout::hierarchy::MAX_JOINTS;
use std::ops::Range;

/// A joint hierarchy (a tree or a forest) in level order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skeleton {
    /// Parents, children and levels in level order, checked for the kernels. Each joint's parent is
    /// smaller than its own index; the children of joint j are one range, empty for a leaf, which
    /// sits where its children would be, so the children of a range of joints are one range too.
    order: LevelOrder,
    /// Level-order index of each original joint, and the reverse.
    level_of_original: Vec<u32>,
    original_of_level: Vec<u32>,
    /// Joint names in level order, when given.
    names: Option<Vec<String>>,
}

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
        Ok(Skeleton {
            order: LevelOrder::new(parents_level, child_start, child_end, level_start),
            level_of_original,
            original_of_level: order,
            names: None,
        })
    }

    /// Builds a skeleton from `-1`-for-root parent indices (the ozz-animation and many engines' form).
    ///
    /// # Errors
    /// As [`Skeleton::from_parents`]; any negative value other than -1 is [`Error::ParentOutOfRange`].
    pub fn from_parent_indices(parents: &[i32]) -> Result<Skeleton, Error> {
        let mut converted = Vec::with_capacity(parents.len());
        for (joint, &p) in parents.iter().enumerate() {
            converted.push(match p {
                -1 => None,
                p if p < 0 => {
                    return Err(Error::ParentOutOfRange {
                        joint,
                        parent: p as usize,
                        joints: parents.len(),
                    })
                }
                p => Some(p as usize),
            });
        }
        Skeleton::from_parents(&converted)
    }

    /// Attaches joint names, given in the *original* order of the parent array.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when there is not exactly one name per joint.
    pub fn with_names(mut self, names: Vec<String>) -> Result<Skeleton, Error> {
        if names.len() != self.len() {
            return Err(Error::CountMismatch {
                what: "joint names",
                expected: self.len(),
                got: names.len(),
            });
        }
        self.names = Some(self.to_level_order(&names)?);
        Ok(self)
    }

    /// Number of joints.
    pub fn len(&self) -> usize {
        self.order.parents().len()
    }

    /// Always false: a skeleton has at least one joint.
    pub fn is_empty(&self) -> bool {
        self.order.parents().is_empty()
    }

    /// Parent of each joint in level order, `-1` for roots. A parent index is always smaller than its
    /// child's index.
    pub fn parents(&self) -> &[i32] {
        self.order.parents()
    }

    /// Parent of a level-order joint, `None` for a root (or for an index out of range).
    pub fn parent(&self, joint: usize) -> Option<usize> {
        self.order
            .parents()
            .get(joint)
            .and_then(|&p| usize::try_from(p).ok())
    }

    /// The level-order children of a joint: always one contiguous range (empty for a leaf or an index
    /// out of range).
    pub fn children(&self, joint: usize) -> Range<usize> {
        match (
            self.order.child_ranges().0.get(joint),
            self.order.child_ranges().1.get(joint),
        ) {
            (Some(&s), Some(&e)) => s as usize..e as usize,
            _ => 0..0,
        }
    }

    /// Number of levels (the depth of the deepest joint plus one).
    pub fn level_count(&self) -> usize {
        self.order.level_starts().len() - 1
    }

    /// The joints of one level: a contiguous range (empty past the last level).
    pub fn level(&self, level: usize) -> Range<usize> {
        match (
            self.order.level_starts().get(level),
            self.order.level_starts().get(level + 1),
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

    /// The roots (level 0).
    pub fn roots(&self) -> Range<usize> {
        self.level(0)
    }

    /// Level-order index of a joint of the original parent array.
    pub fn level_index(&self, original: usize) -> Option<usize> {
        self.level_of_original.get(original).map(|&i| i as usize)
    }

    /// The level-order index of each joint in `originals` (indices into the original parent array),
    /// in the `u32` form [`PaletteJob::joints`](crate::PaletteJob::joints) takes: the joint remap of
    /// a skin whose joints are given in the user's own order.
    ///
    /// # Errors
    /// [`Error::JointOutOfRange`] naming the first index that is not a joint.
    pub fn level_indices(&self, originals: &[usize]) -> Result<Vec<u32>, Error> {
        originals
            .iter()
            .map(|&joint| {
                self.level_of_original
                    .get(joint)
                    .copied()
                    .ok_or(Error::JointOutOfRange {
                        joint,
                        joints: self.len(),
                    })
            })
            .collect()
    }

    /// Original index of a level-order joint.
    pub fn original_index(&self, level_order: usize) -> Option<usize> {
        self.original_of_level.get(level_order).map(|&i| i as usize)
    }

    /// The permutation from level order to original order: `original_order()[level] = original`.
    pub fn original_order(&self) -> &[u32] {
        &self.original_of_level
    }

    /// Name of a level-order joint, when names were attached.
    pub fn name(&self, joint: usize) -> Option<&str> {
        self.names.as_ref()?.get(joint).map(String::as_str)
    }

    /// Level-order index of the joint with this name.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.as_ref()?.iter().position(|n| n == name)
    }

    /// Reorders per-joint data given in original order into level order.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when `data` does not have one item per joint.
    pub fn to_level_order<T: Clone>(&self, data: &[T]) -> Result<Vec<T>, Error> {
        self.check_count("per-joint data", data.len())?;
        Ok(self
            .original_of_level
            .iter()
            .map(|&o| data[o as usize].clone())
            .collect())
    }

    /// Reorders per-joint data given in level order back into original order.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when `data` does not have one item per joint.
    pub fn to_original_order<T: Clone>(&self, data: &[T]) -> Result<Vec<T>, Error> {
        self.check_count("per-joint data", data.len())?;
        Ok(self
            .level_of_original
            .iter()
            .map(|&l| data[l as usize].clone())
            .collect())
    }

    /// The joints of the subtree rooted at `joint` (itself included): one contiguous range per level,
    /// in level order, so processing the ranges in turn visits every parent before its children.
    /// Empty when `joint` is out of range.
    pub fn subtree_ranges(&self, joint: usize) -> Vec<Range<usize>> {
        let mut ranges = Vec::new();
        if joint >= self.len() {
            return ranges;
        }
        let mut range = joint..joint + 1;
        while !range.is_empty() {
            ranges.push(range.clone());
            // Children of a contiguous range are contiguous: from the first joint's children start to
            // the last joint's children end.
            range = self.order.child_ranges().0[range.start] as usize
                ..self.order.child_ranges().1[range.end - 1] as usize;
        }
        ranges
    }

    /// The checked level-order arrays the kernels read.
    pub(crate) fn level_order(&self) -> &LevelOrder {
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
