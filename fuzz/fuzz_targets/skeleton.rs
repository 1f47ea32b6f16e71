//! `skeleton`: arbitrary parent arrays, then the conversions and a local-to-model job.
//!
//! `Skeleton::from_parents` (`Option<usize>` parents) and `Skeleton::from_parent_indices` (`-1` for a
//! root) return `Ok` or a typed `Err`, and agree on the same array. A skeleton that builds keeps its
//! promises: the two orders are inverse permutations, a parent comes before its children in level
//! order, levels and children are contiguous ranges, and per-joint data survives the round trip
//! between the orders. `level_indices` fails exactly for indices out of range. Then a
//! `LocalToModelJob` on arbitrary locals (matrices, affines or TRS, possibly of the wrong length), an
//! arbitrary root, subtree, method and backend returns `Ok` or a typed `Err`.
#![no_main]

use arbitrary::Arbitrary;
use ispc_skinning::glam::{Affine3A, Mat4, Quat, Vec3};
use ispc_skinning::{Error, LocalToModelJob, Locals, Method, Skeleton};
use ispc_skinning_fuzz::{FuzzBackend, Len};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Parent {
    Root,
    Joint(u16),
    Any(usize),
}

#[derive(Arbitrary, Debug)]
struct Input {
    parents: Vec<Parent>,
    queries: Vec<u16>,
    /// Local TRS values, repeated over the joints (raw floats: NaN and infinities included).
    locals: Vec<[f32; 10]>,
    form: u8,
    locals_len: Len,
    models_len: Len,
    from: Option<u16>,
    root: Option<[f32; 16]>,
    method: u8,
    backend: FuzzBackend,
}

fuzz_target!(|input: Input| {
    let options: Vec<Option<usize>> = input
        .parents
        .iter()
        .map(|p| match *p {
            Parent::Root => None,
            Parent::Joint(j) => Some(j as usize),
            Parent::Any(j) => Some(j),
        })
        .collect();
    let indices: Vec<i32> = input
        .parents
        .iter()
        .map(|p| match *p {
            Parent::Root => -1,
            Parent::Joint(j) => j as i32,
            Parent::Any(j) => j as i32,
        })
        .collect();
    let from_options = Skeleton::from_parents(&options);
    let from_indices = Skeleton::from_parent_indices(&indices);
    // The two forms describe the same array unless an `Any` parent does not fit an i32.
    if options.iter().flatten().all(|&p| p <= i32::MAX as usize) {
        match (&from_options, &from_indices) {
            (Ok(a), Ok(b)) => assert_eq!(a.level_order(), b.level_order()),
            (Err(a), Err(b)) => assert_eq!(a, b),
            (a, b) => panic!("the two parent forms disagree: {a:?} / {b:?}"),
        }
    }
    let Ok(skeleton) = from_options else { return };
    check_invariants(&skeleton, &options, &input.queries);
    local_to_model(&skeleton, &input);
});

fn check_invariants(skeleton: &Skeleton, parents: &[Option<usize>], queries: &[u16]) {
    let n = skeleton.len();
    assert_eq!(n, parents.len());
    let (level_of, original_of) = (skeleton.level_order(), skeleton.original_order());
    for j in 0..n {
        assert_eq!(original_of[level_of[j]], j);
        assert_eq!(skeleton.level_index(j), Some(level_of[j]));
        let expected = parents[j].map(|p| level_of[p]);
        assert_eq!(skeleton.level_parent(level_of[j]), expected);
        assert!(
            expected.is_none_or(|p| p < level_of[j]),
            "a parent after its child"
        );
    }
    let mut next = 0;
    for level in skeleton.levels() {
        assert_eq!(level.start, next);
        next = level.end;
    }
    assert_eq!(next, n);
    for l in 0..n {
        for c in skeleton.level_children(l) {
            assert_eq!(skeleton.level_parent(c), Some(l));
        }
    }
    let data: Vec<usize> = (0..n).collect();
    let level = skeleton.to_level_order(&data).unwrap();
    assert_eq!(skeleton.to_original_order(&level).unwrap(), data);
    assert!(skeleton.to_level_order(&data[1..]).is_err());

    let queries: Vec<usize> = queries.iter().map(|&q| q as usize).collect();
    let in_range = queries.iter().all(|&q| q < n);
    assert_eq!(skeleton.level_indices(&queries).is_ok(), in_range);
    for &q in &queries {
        let _ = skeleton.children(q).count();
        let subtree = skeleton.level_subtree(q);
        assert_eq!(subtree.is_empty(), q >= n);
    }
}

fn local_to_model(skeleton: &Skeleton, input: &Input) {
    let n = skeleton.len();
    let count = input.locals_len.resolve_capped(n, n + 64);
    let value = |i: usize| input.locals.get(i % input.locals.len().max(1)).copied();
    let trs = |i: usize| match value(i) {
        Some(v) => (
            Vec3::new(v[0], v[1], v[2]),
            Quat::from_xyzw(v[3], v[4], v[5], v[6]),
            Vec3::new(v[7], v[8], v[9]),
        ),
        None => (Vec3::ZERO, Quat::IDENTITY, Vec3::ONE),
    };
    let (t, q, s): (Vec<Vec3>, Vec<Quat>, Vec<Vec3>) = (
        (0..count).map(|i| trs(i).0).collect(),
        (0..count).map(|i| trs(i).1).collect(),
        (0..count).map(|i| trs(i).2).collect(),
    );
    let matrices: Vec<Mat4> = (0..count)
        .map(|i| {
            let (t, q, s) = trs(i);
            Mat4::from_scale_rotation_translation(s, q, t)
        })
        .collect();
    let affines: Vec<Affine3A> = matrices.iter().map(|&m| Affine3A::from_mat4(m)).collect();
    let locals = match input.form % 3 {
        0 => Locals::Matrices(&matrices),
        1 => Locals::Affines(&affines),
        _ => Locals::trs(&t, &q, &s),
    };
    let mut models = vec![Mat4::IDENTITY; input.models_len.resolve_capped(n, n + 64)];
    let method = [Method::Auto, Method::Reference, Method::IspcJoint][input.method as usize % 3];
    let mut job = LocalToModelJob::new(skeleton, locals, &mut models)
        .method(method)
        .backend(input.backend.get());
    if let Some(root) = input.root {
        job = job.root(Mat4::from_cols_array(&root));
    }
    if let Some(from) = input.from {
        job = job.from_joint(from as usize);
    }
    let result = job.run();
    let sizes_ok = count == n && models.len() == n && input.from.is_none_or(|f| (f as usize) < n);
    if !sizes_ok {
        assert!(result.is_err(), "wrong sizes accepted");
    }
    if sizes_ok && input.backend.can_run() {
        // Valid sizes can still break the numeric rules (docs/DESIGN.md, "Numeric rules").
        assert!(
            matches!(
                result,
                Ok(_)
                    | Err(Error::NotFinite { .. }
                        | Error::RotationLength { .. }
                        | Error::ResultNotFinite { .. })
            ),
            "a valid local-to-model job failed: {result:?}"
        );
    }
    if let Err(Error::IsaUnavailable { .. }) = result {
        assert!(!input.backend.can_run());
    }
}
