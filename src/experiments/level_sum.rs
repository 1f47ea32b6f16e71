//! The level-order seed's own micro-benchmark: for a level-order tree, add each bone's float4 position
//! to its children's. The seed ran 100 iterations over 40,000 bones with three methods, reproduced here.
//!
//! A fourth method, [`level_by_level_sum`], is not in the seed: ISPC over each whole level, with no
//! branch on one parent's child count. It wins on deep trees with few children per bone, where the
//! seed's per-parent method loses to the serial loop.
//!
//! The two serial methods use glam's `Vec4`, whose `+` is one SSE (or NEON) instruction: the seed's
//! "fair" comparison, where the serial C++ used `_mm_add_ps`.

use crate::backend::{Backend, KernelFamily, Resolved};
use crate::error::Error;
use crate::ffi::experiments as ffi;
use crate::skeleton::Skeleton;
use glam::Vec4;

/// The seed's `LevelOrderSum`: for each bone in level order, add it to each of its (contiguous) children.
pub fn level_order_sum(skeleton: &Skeleton, data: &mut [Vec4]) {
    if data.len() != skeleton.len() {
        return;
    }
    for i in 0..data.len() {
        let parent = data[i];
        for c in skeleton.level_children(i) {
            data[c] += parent;
        }
    }
}

/// The seed's `RegularTraverseSum`: for each non-root bone in level order, add its parent.
pub fn regular_traverse_sum(skeleton: &Skeleton, data: &mut [Vec4]) {
    if data.len() != skeleton.len() {
        return;
    }
    for (i, &p) in skeleton.level_parents().iter().enumerate() {
        if let Some(p) = p {
            data[i] += data[p];
        }
    }
}

/// The seed's `ParallelLevelOrder`: ISPC `foreach` over each bone's children. With
/// [`Backend::Reference`] (or no runnable ISA) it runs [`level_order_sum`].
///
/// # Errors
/// [`Error::CountMismatch`] when `data` does not have one entry per bone; [`Error::IsaUnavailable`]
/// for an explicit ISA that cannot run.
pub fn parallel_level_order_sum(
    backend: impl Into<Backend>,
    skeleton: &Skeleton,
    data: &mut [Vec4],
) -> Result<(), Error> {
    skeleton.check_count("bone positions", data.len())?;
    match backend.into().resolve(KernelFamily::LocalToModel)? {
        Resolved::Ispc(isa) => ffi::level_sum_children(isa, skeleton.kernel_order(), data),
        Resolved::Reference => level_order_sum(skeleton, data),
    }
    Ok(())
}

/// ISPC over each whole level: every bone of a level adds its parent's float4, a vector of bones at a
/// time. Because a level's parents are non-decreasing, one or two contiguous loads hold a vector's
/// parents and a permute puts each under its child, with no gather. With
/// [`Backend::Reference`] (or no runnable ISA) it runs [`regular_traverse_sum`].
///
/// # Errors
/// As [`parallel_level_order_sum`].
pub fn level_by_level_sum(
    backend: impl Into<Backend>,
    skeleton: &Skeleton,
    data: &mut [Vec4],
) -> Result<(), Error> {
    skeleton.check_count("bone positions", data.len())?;
    match backend.into().resolve(KernelFamily::LocalToModel)? {
        Resolved::Ispc(isa) => ffi::level_sum_levels(isa, skeleton.kernel_order(), data),
        Resolved::Reference => regular_traverse_sum(skeleton, data),
    }
    Ok(())
}
