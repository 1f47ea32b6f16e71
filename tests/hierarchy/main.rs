//! LocalToModelJob: one test per rule it checks, partial updates, the quaternion policy, and the
//! reference against glam's own math; crowds, palettes, and (feature `experiments`) the SoA entry point.
//!
//! The crowd job's rules are checked in `crowd_rules.rs` beside this file, the palette job's in
//! `palette_rules.rs`, and the SoA entry point's in `soa_rules.rs`; the four files make one test
//! binary.

#[path = "../common/mod.rs"]
mod common;
mod crowd_rules;
mod palette_rules;
#[cfg(feature = "experiments")]
mod soa_rules;
use common::scenes;

use glam::{Affine3A, EulerRot, Mat4, Quat, Vec3};
use ispc_skinning::reference::trs_matrix;
use ispc_skinning::{Backend, Error, Isa, LocalToModelJob, Locals, Method, Skeleton, Trs};
use scenes::{animated_pose, humanoid_parents};

fn humanoid() -> Skeleton {
    Skeleton::from_parents(&humanoid_parents(67)).unwrap()
}

fn pose(n: usize) -> (Vec<Vec3>, Vec<Quat>, Vec<Vec3>) {
    animated_pose(n, 0.4, true, 3)
}

#[test]
fn locals_of_the_wrong_length_are_rejected() {
    let s = humanoid();
    let locals = vec![Mat4::IDENTITY; 66];
    let mut models = vec![Mat4::ZERO; 67];
    let err = LocalToModelJob::new(&s, Locals::Matrices(&locals), &mut models)
        .run()
        .unwrap_err();
    assert_eq!(
        err,
        Error::CountMismatch {
            what: "local matrices",
            expected: 67,
            got: 66
        }
    );
    assert!(
        models.iter().all(|m| *m == Mat4::ZERO),
        "nothing may be written on error"
    );
}

#[test]
fn each_trs_stream_is_checked() {
    let s = humanoid();
    let (t, q, sc) = pose(67);
    let mut models = vec![Mat4::ZERO; 67];
    for (which, trs) in [
        (
            "local translations",
            Trs {
                translations: &t[1..],
                rotations: &q,
                scales: &sc,
            },
        ),
        (
            "local rotations",
            Trs {
                translations: &t,
                rotations: &q[1..],
                scales: &sc,
            },
        ),
        (
            "local scales",
            Trs {
                translations: &t,
                rotations: &q,
                scales: &sc[1..],
            },
        ),
    ] {
        let err = LocalToModelJob::new(&s, Locals::Trs(trs), &mut models)
            .validate()
            .unwrap_err();
        assert_eq!(
            err,
            Error::CountMismatch {
                what: which,
                expected: 67,
                got: 66
            }
        );
    }
}

#[test]
fn output_of_the_wrong_length_is_rejected() {
    let s = humanoid();
    let locals = vec![Mat4::IDENTITY; 67];
    let mut models = vec![Mat4::ZERO; 68];
    let err = LocalToModelJob::new(&s, Locals::Matrices(&locals), &mut models)
        .validate()
        .unwrap_err();
    assert_eq!(
        err,
        Error::CountMismatch {
            what: "model matrices",
            expected: 67,
            got: 68
        }
    );
}

#[test]
fn from_out_of_range_is_rejected() {
    let s = humanoid();
    let locals = vec![Mat4::IDENTITY; 67];
    let mut models = vec![Mat4::ZERO; 67];
    let mut job = LocalToModelJob::new(&s, Locals::Matrices(&locals), &mut models);
    job.from = Some(67);
    assert_eq!(
        job.run().unwrap_err(),
        Error::JointOutOfRange {
            joint: 67,
            joints: 67
        }
    );
}

#[test]
fn an_unavailable_isa_is_rejected_for_ispc_methods() {
    let s = humanoid();
    let locals = vec![Mat4::IDENTITY; 67];
    let mut models = vec![Mat4::ZERO; 67];
    let foreign = if cfg!(target_arch = "aarch64") {
        Isa::Avx2
    } else {
        Isa::Neon
    };
    let mut job = LocalToModelJob::new(&s, Locals::Matrices(&locals), &mut models);
    job.method = Method::IspcJoint;
    job.backend = foreign.into();
    assert!(matches!(job.run().unwrap_err(), Error::IsaUnavailable { isa, .. } if isa == foreign));
}

#[test]
fn the_reference_backend_makes_ispc_methods_fall_back() {
    let s = humanoid();
    let locals = vec![Mat4::IDENTITY; 67];
    let mut models = vec![Mat4::ZERO; 67];
    let mut job = LocalToModelJob::new(&s, Locals::Matrices(&locals), &mut models);
    job.method = Method::IspcJoint;
    job.backend = Backend::Reference;
    assert_eq!(job.run().unwrap(), Method::Reference);
}

/// `Method::Auto` is the horizontal kernel on whatever ISA the backend resolves to, and the reference
/// where it resolves to none. `Backend::Auto` honours `ISPC_SKINNING_ISA`, so the expectation follows
/// `Backend::selected()`, not the CPU (`Isa::detect()` ignores the variable).
#[test]
fn auto_picks_the_horizontal_kernel_where_an_isa_runs() {
    let s = humanoid();
    let locals = vec![Mat4::IDENTITY; 67];
    let mut models = vec![Mat4::ZERO; 67];
    let selected = Backend::selected().unwrap();
    for backend in [Backend::Auto, selected]
        .into_iter()
        .chain(common::backends())
    {
        let mut job = LocalToModelJob::new(&s, Locals::Matrices(&locals), &mut models);
        job.backend = backend;
        let ran = job.run().unwrap();
        let resolved = if backend == Backend::Auto {
            selected
        } else {
            backend
        };
        let want = match resolved {
            Backend::Isa(_) => Method::IspcJoint,
            _ => Method::Reference,
        };
        assert_eq!(
            ran, want,
            "{backend:?} (Backend::Auto selects {selected:?})"
        );
    }
}

fn run(
    s: &Skeleton,
    locals: Locals<'_>,
    method: Method,
    root: Mat4,
    from: Option<usize>,
    models: &mut [Mat4],
) {
    let mut job = LocalToModelJob::new(s, locals, models);
    job.method = method;
    job.root = root;
    job.from = from;
    job.backend = Backend::Reference;
    job.run().unwrap();
}

#[test]
fn reference_partial_updates_touch_only_the_subtree() {
    let s = humanoid();
    let (t, q, sc) = pose(67);
    let trs = Trs {
        translations: &t,
        rotations: &q,
        scales: &sc,
    };
    let mut full = vec![Mat4::ZERO; 67];
    run(
        &s,
        Locals::Trs(trs),
        Method::Reference,
        Mat4::IDENTITY,
        None,
        &mut full,
    );
    for from in [0, 5, 30, 66] {
        let mut partial = vec![Mat4::from_cols_array(&[7.0; 16]); 67];
        // The subtree root's parent must already be in the output. `from` and the job's arrays are
        // in level order.
        if let Some(p) = s.level_parent(from) {
            partial[p] = full[p];
        }
        run(
            &s,
            Locals::Trs(trs),
            Method::Reference,
            Mat4::IDENTITY,
            Some(from),
            &mut partial,
        );
        let sub: Vec<usize> = s.level_subtree(from).into_iter().flatten().collect();
        for j in 0..67 {
            if sub.contains(&j) {
                assert_eq!(partial[j], full[j], "from {from}: joint {j}");
            } else if Some(j) != s.level_parent(from) {
                assert_eq!(
                    partial[j],
                    Mat4::from_cols_array(&[7.0; 16]),
                    "from {from}: joint {j} touched"
                );
            }
        }
    }
}

#[test]
fn affine3a_input_equals_mat4_input() {
    let s = humanoid();
    let (t, q, sc) = pose(67);
    let mats: Vec<Mat4> = (0..67)
        .map(|j| Mat4::from_cols_array(&trs_matrix(t[j], q[j], sc[j])))
        .collect();
    let affs: Vec<Affine3A> = mats.iter().map(|m| Affine3A::from_mat4(*m)).collect();
    for method in [Method::Auto, Method::Reference, Method::IspcJoint] {
        let mut a = vec![Mat4::ZERO; 67];
        let mut b = vec![Mat4::ZERO; 67];
        let mut job = LocalToModelJob::new(&s, Locals::Matrices(&mats), &mut a);
        job.method = method;
        job.run().unwrap();
        let mut job = LocalToModelJob::new(&s, Locals::Affines(&affs), &mut b);
        job.method = method;
        job.run().unwrap();
        assert_eq!(a, b, "{method:?}");
    }
}

#[test]
fn the_reference_matches_glam() {
    // glam's own TRS and matrix products, recursively, agree with the reference within rounding.
    let s = Skeleton::from_parents(&humanoid_parents(120)).unwrap();
    let (t, q, sc) = pose(120);
    let mut models = vec![Mat4::ZERO; 120];
    run(
        &s,
        Locals::Trs(Trs {
            translations: &t,
            rotations: &q,
            scales: &sc,
        }),
        Method::Reference,
        Mat4::IDENTITY,
        None,
        &mut models,
    );
    let mut glam_models = vec![Mat4::IDENTITY; 120];
    for j in 0..120 {
        let local = Mat4::from_scale_rotation_translation(sc[j], q[j].normalize(), t[j]);
        // The job's arrays are in level order, so the recursion follows the level-order parents.
        glam_models[j] = match s.level_parent(j) {
            Some(p) => glam_models[p] * local,
            None => local,
        };
    }
    for j in 0..120 {
        assert!(
            models[j].abs_diff_eq(glam_models[j], 1e-4),
            "joint {j}:\n{}\n{}",
            models[j],
            glam_models[j]
        );
    }
}

#[test]
fn non_unit_quaternions_rotate_like_their_normalized_form() {
    let q = Quat::from_euler(EulerRot::XYZ, 0.4, -1.2, 2.0);
    for k in [0.5f32, 0.9998, 1.0, 1.0002, 3.0] {
        let scaled = Quat::from_xyzw(q.x * k, q.y * k, q.z * k, q.w * k);
        let m = Mat4::from_cols_array(&trs_matrix(Vec3::ZERO, scaled, Vec3::ONE));
        assert!(m.abs_diff_eq(Mat4::from_quat(q), 1e-6), "scale {k}: {m}");
    }
    // The zero quaternion has no rotation: the reference gives NaN, which the jobs refuse as
    // Error::RotationLength (tests/numbers.rs), as the kernels do.
    let m = Mat4::from_cols_array(&trs_matrix(
        Vec3::X,
        Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        Vec3::ONE,
    ));
    assert!(
        m.x_axis.is_nan() && m.y_axis.is_nan() && m.z_axis.is_nan(),
        "{m}"
    );
}

#[test]
fn every_method_treats_non_unit_quaternions_the_same() {
    let s = humanoid();
    let (t, mut q, sc) = pose(67);
    q.iter_mut()
        .enumerate()
        .for_each(|(i, r)| *r *= 1.0 + 0.01 * (i % 7) as f32);
    q[3] = Quat::from_xyzw(0.0, 0.0, 3e-19, 4e-19);
    let trs = Trs {
        translations: &t,
        rotations: &q,
        scales: &sc,
    };
    let mut want = vec![Mat4::ZERO; 67];
    run(
        &s,
        Locals::Trs(trs),
        Method::Reference,
        Mat4::IDENTITY,
        None,
        &mut want,
    );
    // The SoA methods take matrices only, so the quaternion policy is the AoS job's TRS conversion.
    for isa in Isa::available() {
        let mut got = vec![Mat4::ZERO; 67];
        let mut job = LocalToModelJob::new(&s, Locals::Trs(trs), &mut got);
        job.method = Method::IspcJoint;
        job.backend = isa.into();
        job.run().unwrap();
        for j in 0..67 {
            let diff = (got[j] - want[j])
                .to_cols_array()
                .iter()
                .fold(0.0f32, |m, d| m.max(d.abs()));
            let scale = want[j]
                .to_cols_array()
                .iter()
                .fold(0.0f32, |m, d| m.max(d.abs()));
            assert!(
                diff <= 1e-5,
                "{isa} joint {j}: max |diff| {diff}, max |element| {scale}"
            );
        }
    }
}
