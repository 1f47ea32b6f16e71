//! Skeleton construction: one test per invalid case, then the level-order invariants on many shapes.
// Index loops read several parallel arrays (original and level order) at once; indices are clearer here.
#![allow(clippy::needless_range_loop)]

mod common;

use common::shuffled_tree;
use ispc_skinning::{Error, Skeleton};

fn check_invariants(original: &[Option<usize>], s: &Skeleton) {
    let n = original.len();
    assert_eq!(s.len(), n);
    // The user-order methods give back the parent array as given.
    assert_eq!(s.parents(), original);
    for orig in 0..n {
        assert_eq!(s.parent(orig), original[orig], "joint {orig}");
    }
    // The permutations are inverse to each other and the parent relation is preserved.
    for orig in 0..n {
        let lvl = s.level_index(orig).unwrap();
        assert_eq!(s.original_index(lvl), Some(orig));
        assert_eq!(s.level_order()[orig], lvl);
        assert_eq!(s.original_order()[lvl], orig);
        let want = original[orig].map(|p| s.level_index(p).unwrap());
        assert_eq!(s.level_parent(lvl), want, "joint {orig}");
        assert_eq!(s.level_parents()[lvl], want, "joint {orig}");
    }
    // Parents come before children; children are exactly the contiguous range.
    for j in 0..n {
        if let Some(p) = s.level_parent(j) {
            assert!(p < j);
            assert!(
                s.level_children(p).contains(&j),
                "joint {j} not in its parent's children range"
            );
        }
        for c in s.level_children(j) {
            assert_eq!(s.level_parent(c), Some(j));
        }
    }
    let children_total: usize = (0..n).map(|j| s.level_children(j).len()).sum();
    assert_eq!(children_total, n - s.level(0).len());
    // In the user's order, the children of a joint are the joints whose parent it is, in the parent
    // array's relative order.
    let mut kids = vec![Vec::new(); n];
    for (j, p) in original.iter().enumerate() {
        if let Some(p) = *p {
            kids[p].push(j);
        }
    }
    for j in 0..n {
        assert_eq!(s.children(j).collect::<Vec<_>>(), kids[j], "joint {j}");
    }
    // Levels are contiguous, cover every joint, and a joint's level is its parent's plus one.
    let mut level_of = vec![usize::MAX; n];
    let mut next = 0;
    for (k, level) in s.levels().enumerate() {
        assert_eq!(level.start, next);
        assert_eq!(s.level(k), level);
        next = level.end;
        for j in level {
            level_of[j] = k;
            match s.level_parent(j) {
                Some(p) => assert_eq!(level_of[p] + 1, k),
                None => assert_eq!(k, 0),
            }
        }
    }
    assert_eq!(next, n);
    assert_eq!(s.level_count(), s.levels().count());
    // Roots keep their original relative order, in both orders.
    let roots: Vec<usize> = (0..n).filter(|&j| original[j].is_none()).collect();
    let level_roots: Vec<usize> = s.level(0).map(|j| s.original_index(j).unwrap()).collect();
    assert_eq!(roots, level_roots);
    assert_eq!(s.roots().collect::<Vec<_>>(), roots);
}

#[test]
fn empty_skeleton_is_an_error() {
    assert_eq!(
        Skeleton::from_parents(&[]).unwrap_err(),
        Error::EmptySkeleton
    );
}

#[test]
fn parent_out_of_range_names_the_joint() {
    let err = Skeleton::from_parents(&[None, Some(0), Some(7)]).unwrap_err();
    assert_eq!(
        err,
        Error::ParentOutOfRange {
            joint: 2,
            parent: 7,
            joints: 3
        }
    );
    assert!(err.to_string().contains("joint 2"));
}

#[test]
fn negative_parent_index_other_than_minus_one_is_refused_as_given() {
    let err = Skeleton::from_parent_indices(&[-1, 0, -5]).unwrap_err();
    assert_eq!(
        err,
        Error::NegativeParent {
            joint: 2,
            parent: -5
        }
    );
    // The message shows the value given, not its wrap-around as an unsigned index.
    assert_eq!(
        err.to_string(),
        "negative parent: joint 2 names parent -5; only -1 (a root) may be negative"
    );
    assert!(matches!(
        Skeleton::from_parent_indices(&[i32::MIN]).unwrap_err(),
        Error::NegativeParent {
            joint: 0,
            parent: i32::MIN
        }
    ));
}

#[test]
fn own_parent_names_the_joint() {
    assert_eq!(
        Skeleton::from_parents(&[None, Some(1)]).unwrap_err(),
        Error::SelfParent { joint: 1 }
    );
}

#[test]
fn cycle_names_a_joint_on_the_cycle() {
    // 0 is a root; 1 -> 2 -> 3 -> 1 is a cycle; 4 hangs below the cycle.
    let parents = [None, Some(3), Some(1), Some(2), Some(2)];
    match Skeleton::from_parents(&parents).unwrap_err() {
        Error::Cycle { joint } => assert!(
            [1, 2, 3].contains(&joint),
            "joint {joint} is not on the cycle"
        ),
        other => panic!("expected a cycle, got {other:?}"),
    }
}

#[test]
fn all_joints_in_a_cycle_without_root() {
    assert!(matches!(
        Skeleton::from_parents(&[Some(1), Some(0)]).unwrap_err(),
        Error::Cycle { .. }
    ));
}

#[test]
fn names_count_must_match() {
    let s = Skeleton::from_parents(&[None, Some(0)]).unwrap();
    let err = s.clone().with_names(vec!["a".into()]).unwrap_err();
    assert_eq!(
        err,
        Error::CountMismatch {
            what: "joint names",
            expected: 2,
            got: 1
        }
    );
}

#[test]
fn names_are_in_the_users_order() {
    // Original order: child first, so level order swaps the two joints; names stay with their joint.
    let s = Skeleton::from_parents(&[Some(1), None])
        .unwrap()
        .with_names(vec!["hand".into(), "hips".into()])
        .unwrap();
    assert_eq!(s.name(0), Some("hand"));
    assert_eq!(s.name(1), Some("hips"));
    assert_eq!(s.name(2), None);
    assert_eq!(s.find("hand"), Some(0));
    assert_eq!(s.find("hips"), Some(1));
    assert_eq!(s.find("head"), None);
    // The level-order root is the user's joint 1, "hips".
    assert_eq!(s.name(s.original_index(0).unwrap()), Some("hips"));
    // Without names, nothing is named.
    let plain = Skeleton::from_parents(&[Some(1), None]).unwrap();
    assert_eq!(plain.name(0), None);
    assert_eq!(plain.find("hand"), None);
}

#[test]
fn single_joint() {
    let s = Skeleton::from_parents(&[None]).unwrap();
    check_invariants(&[None], &s);
    assert_eq!(s.level_count(), 1);
    assert_eq!(s.level_children(0), 1..1);
    assert_eq!(s.children(0).count(), 0);
}

#[test]
fn deep_chain_of_2000_levels() {
    let parents: Vec<Option<usize>> = (0..2000usize).map(|i| i.checked_sub(1)).collect();
    let s = Skeleton::from_parents(&parents).unwrap();
    check_invariants(&parents, &s);
    assert_eq!(s.level_count(), 2000);
}

#[test]
fn wide_fan_of_1500_children() {
    let parents: Vec<Option<usize>> = (0..1501)
        .map(|i| if i == 0 { None } else { Some(0) })
        .collect();
    let s = Skeleton::from_parents(&parents).unwrap();
    check_invariants(&parents, &s);
    assert_eq!(s.level_children(0), 1..1501);
    assert!(s.children(0).eq(1..1501));
}

#[test]
fn random_forests_in_shuffled_order() {
    for (n, roots, seed) in [(2, 1, 1), (17, 3, 2), (120, 1, 3), (67, 2, 4), (5000, 7, 5)] {
        let parents = shuffled_tree(n, roots, seed);
        let s = Skeleton::from_parents(&parents).unwrap();
        check_invariants(&parents, &s);
        assert_eq!(s.roots().count(), roots);
        assert_eq!(s.level(0).len(), roots);
    }
}

#[test]
fn one_hundred_thousand_joints() {
    let parents = shuffled_tree(100_000, 1, 99);
    let s = Skeleton::from_parents(&parents).unwrap();
    check_invariants(&parents, &s);
}

#[test]
fn reordering_round_trips() {
    let parents = shuffled_tree(50, 2, 7);
    let s = Skeleton::from_parents(&parents).unwrap();
    let data: Vec<usize> = (0..50).collect();
    let level = s.to_level_order(&data).unwrap();
    assert_eq!(s.to_original_order(&level).unwrap(), data);
    assert_eq!(
        s.to_level_order(&data[..3]).unwrap_err(),
        Error::CountMismatch {
            what: "per-joint data",
            expected: 50,
            got: 3
        }
    );
}

#[test]
fn level_subtree_covers_exactly_the_descendants() {
    let parents = shuffled_tree(300, 2, 11);
    let s = Skeleton::from_parents(&parents).unwrap();
    for j in 0..s.len() {
        let mut in_subtree = vec![false; s.len()];
        for k in 0..s.len() {
            let mut a = Some(k);
            while let Some(x) = a {
                if x == j {
                    in_subtree[k] = true;
                    break;
                }
                a = s.level_parent(x);
            }
        }
        let ranges = s.level_subtree(j);
        let mut covered = vec![false; s.len()];
        for r in &ranges {
            for k in r.clone() {
                covered[k] = true;
            }
        }
        assert_eq!(covered, in_subtree, "subtree of {j}: {ranges:?}");
    }
    assert!(s.level_subtree(s.len()).is_empty());
}

#[test]
fn level_indices_map_the_users_joints_and_name_a_bad_one() {
    // Joint 0's parent is 2, so in level order 2 comes first.
    let s = Skeleton::from_parents(&[Some(2), Some(0), None]).unwrap();
    assert_eq!(s.level_indices(&[2, 0, 1]).unwrap(), vec![0, 1, 2]);
    assert_eq!(s.level_indices(&[1, 1]).unwrap(), vec![2, 2]);
    assert_eq!(s.level_indices(&[]).unwrap(), Vec::<usize>::new());
    assert_eq!(
        s.level_indices(&[0, 3]).unwrap_err(),
        Error::JointOutOfRange {
            joint: 3,
            joints: 3
        }
    );
}
