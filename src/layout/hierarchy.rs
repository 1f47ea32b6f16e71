//! The hierarchy layout the local-to-model kernels read: parent indices in level order, each joint's
//! contiguous children, and the level bounds. [`LevelOrder::new`] checks every invariant the kernels
//! rely on once, when a skeleton is built; its fields are private, so one that exists is safe to read.

/// Largest joint count, 16,777,216. The kernels index with ISPC's 32-bit addressing, and a joint's
/// matrix starts at byte 64 * joint, which must stay below 2^31 (there is no small cap: ozz stops at
/// 1,024).
pub const MAX_JOINTS: usize = 1 << 24;

/// A joint hierarchy in level order whose invariants hold (see [`LevelOrder::new`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LevelOrder {
    parents: Vec<i32>,
    child_start: Vec<u32>,
    child_end: Vec<u32>,
    level_start: Vec<u32>,
}

impl LevelOrder {
    /// Checks the invariants and wraps the arrays. A broken one is a bug in the skeleton builder, not
    /// an input error, so it panics, in release builds too:
    /// - 1 to [`MAX_JOINTS`] joints;
    /// - `parents[j]` is -1 (a root) or a joint below `j`;
    /// - joint j's children are `child_start[j]..child_end[j]`, with `j < start <= end <= n`, and each
    ///   child's parent is j;
    /// - `level_start` rises from 0 to n, and level 0 holds exactly the roots.
    pub(crate) fn new(
        parents: Vec<i32>,
        child_start: Vec<u32>,
        child_end: Vec<u32>,
        level_start: Vec<u32>,
    ) -> LevelOrder {
        let n = parents.len();
        assert!((1..=MAX_JOINTS).contains(&n), "1 to MAX_JOINTS joints");
        assert!(
            child_start.len() == n && child_end.len() == n,
            "a child range per joint"
        );
        for (j, &p) in parents.iter().enumerate() {
            assert!(
                p == -1 || (0..j as i32).contains(&p),
                "joint {j}: its parent comes before it"
            );
            let (s, e) = (child_start[j] as usize, child_end[j] as usize);
            assert!(
                j < s && s <= e && e <= n,
                "joint {j}: children after it, inside the skeleton"
            );
            assert!(
                parents[s..e].iter().all(|&c| c == j as i32),
                "joint {j}: its children's parent"
            );
        }
        assert!(level_start.first() == Some(&0) && level_start.last() == Some(&(n as u32)));
        assert!(
            level_start.windows(2).all(|w| w[0] < w[1]),
            "levels are non-empty and rising"
        );
        let roots = level_start[1] as usize;
        assert!(
            parents
                .iter()
                .enumerate()
                .all(|(j, &p)| (p == -1) == (j < roots)),
            "level 0 is the roots"
        );
        LevelOrder {
            parents,
            child_start,
            child_end,
            level_start,
        }
    }

    /// Number of joints.
    pub(crate) fn len(&self) -> usize {
        self.parents.len()
    }

    /// Parent of each joint, -1 for a root; always below the joint's own index.
    pub(crate) fn parents(&self) -> &[i32] {
        &self.parents
    }

    /// Children start and end (exclusive) of every joint.
    pub(crate) fn child_ranges(&self) -> (&[u32], &[u32]) {
        (&self.child_start, &self.child_end)
    }

    /// Level k is `level_starts()[k]..level_starts()[k + 1]`.
    pub(crate) fn level_starts(&self) -> &[u32] {
        &self.level_start
    }
}
