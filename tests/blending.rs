//! BlendingJob and CrowdBlendingJob: hand-computed cases on every backend (the reference and every ISA
//! that runs here), and one test per rule (each typed error).

mod common;

use common::backends;
use glam::{Quat, Vec3};
use ispc_skinning::{
    Backend, BlendLayer, BlendingJob, CrowdBlendLayer, CrowdBlendingJob, Error, Skeleton, Trs,
    TrsMut,
};
use std::f32::consts::FRAC_PI_2;

/// Rounding of a few operations on values of order 1-10.
const TOL: f32 = 2e-6;

fn skeleton(n: usize) -> Skeleton {
    Skeleton::from_parents(&(0..n).map(|j| j.checked_sub(1)).collect::<Vec<_>>()).unwrap()
}

/// A pose of n joints, all the same transform.
struct Pose {
    t: Vec<Vec3>,
    q: Vec<Quat>,
    s: Vec<Vec3>,
}

impl Pose {
    fn uniform(n: usize, t: Vec3, q: Quat, s: Vec3) -> Pose {
        Pose {
            t: vec![t; n],
            q: vec![q; n],
            s: vec![s; n],
        }
    }

    fn identity(n: usize) -> Pose {
        Pose::uniform(n, Vec3::ZERO, Quat::IDENTITY, Vec3::ONE)
    }

    fn trs(&self) -> Trs<'_> {
        Trs::new(&self.t, &self.q, &self.s)
    }
}

/// Runs the job on `backend` and returns the output.
fn blend(
    backend: Backend,
    rest: &Pose,
    layers: &[BlendLayer<'_>],
    additive: &[BlendLayer<'_>],
    threshold: f32,
) -> Pose {
    let n = rest.t.len();
    let s = skeleton(n);
    let mut out = Pose::uniform(
        n,
        Vec3::NAN,
        Quat::from_xyzw(f32::NAN, 0.0, 0.0, 0.0),
        Vec3::NAN,
    );
    BlendingJob::new(
        &s,
        rest.trs(),
        TrsMut::new(&mut out.t, &mut out.q, &mut out.s),
    )
    .layers(layers)
    .additive_layers(additive)
    .threshold(threshold)
    .backend(backend)
    .run()
    .unwrap();
    out
}

fn assert_joint(ctx: &str, out: &Pose, j: usize, t: Vec3, q: Quat, s: Vec3) {
    assert!(
        out.t[j].abs_diff_eq(t, TOL),
        "{ctx}: joint {j} translation {} expected {t}",
        out.t[j]
    );
    assert!(
        out.q[j].abs_diff_eq(q, TOL),
        "{ctx}: joint {j} rotation {} expected {q}",
        out.q[j]
    );
    assert!(
        out.s[j].abs_diff_eq(s, TOL),
        "{ctx}: joint {j} scale {} expected {s}",
        out.s[j]
    );
}

#[test]
fn two_layers_a_quarter_and_three_quarters() {
    let n = 19; // more than a gang of every width: whole and partial gangs
    let rest = Pose::uniform(n, Vec3::splat(100.0), Quat::IDENTITY, Vec3::splat(7.0));
    let a = Pose::uniform(n, Vec3::ZERO, Quat::IDENTITY, Vec3::ONE);
    let b = Pose::uniform(
        n,
        Vec3::new(4.0, 8.0, -4.0),
        Quat::from_rotation_z(FRAC_PI_2),
        Vec3::splat(3.0),
    );
    // 0.25 * 0 + 0.75 * (4, 8, -4) = (3, 6, -3); 0.25 * 1 + 0.75 * 3 = 2.5. The rotation sum is
    // 0.25 (0, 0, 0, 1) + 0.75 (0, 0, sin 45, cos 45) = (0, 0, 0.53033, 0.78033), a rotation about z
    // by 2 atan(0.53033 / 0.78033) = 68.4 degrees once normalized.
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let angle = 2.0 * (0.75 * h).atan2(0.25 + 0.75 * h);
    for backend in backends() {
        let layers = [
            BlendLayer::new(a.trs(), 0.25),
            BlendLayer::new(b.trs(), 0.75),
        ];
        let out = blend(backend, &rest, &layers, &[], 0.1);
        for j in 0..n {
            assert_joint(
                &format!("{backend:?}"),
                &out,
                j,
                Vec3::new(3.0, 6.0, -3.0),
                Quat::from_rotation_z(angle),
                Vec3::splat(2.5),
            );
        }
        // Only the ratio of the weights matters above the threshold.
        let layers = [BlendLayer::new(a.trs(), 1.0), BlendLayer::new(b.trs(), 3.0)];
        let out = blend(backend, &rest, &layers, &[], 0.1);
        assert_joint(
            &format!("{backend:?} x4"),
            &out,
            0,
            Vec3::new(3.0, 6.0, -3.0),
            Quat::from_rotation_z(angle),
            Vec3::splat(2.5),
        );
    }
}

#[test]
fn hemisphere_correction_negates_an_opposite_quaternion() {
    let n = 5;
    let rest = Pose::identity(n);
    let a = Pose::uniform(n, Vec3::ZERO, Quat::from_rotation_z(0.5), Vec3::ONE);
    // The same kind of rotation given as its negative (the same rotation, the other hemisphere).
    let b = Pose::uniform(n, Vec3::ZERO, -Quat::from_rotation_z(1.0), Vec3::ONE);
    for backend in backends() {
        let layers = [BlendLayer::new(a.trs(), 0.5), BlendLayer::new(b.trs(), 0.5)];
        let out = blend(backend, &rest, &layers, &[], 0.1);
        // Equal weights: the nlerp midpoint of 0.5 and 1.0 rad is exactly 0.75 rad. Without the
        // correction the sum would be (0, 0, sin .25 - sin .5, cos .25 - cos .5), about 0.44 rad
        // the other way.
        for j in 0..n {
            assert_joint(
                &format!("{backend:?}"),
                &out,
                j,
                Vec3::ZERO,
                Quat::from_rotation_z(0.75),
                Vec3::ONE,
            );
        }
    }
}

#[test]
fn an_additive_layer_on_a_known_base() {
    let n = 9;
    let rest = Pose::identity(n);
    let base = Pose::uniform(
        n,
        Vec3::new(1.0, 2.0, 3.0),
        Quat::from_rotation_x(FRAC_PI_2),
        Vec3::splat(2.0),
    );
    let delta = Pose::uniform(
        n,
        Vec3::new(0.0, 1.0, 0.0),
        Quat::from_rotation_z(FRAC_PI_2),
        Vec3::new(1.5, 1.0, 1.0),
    );
    // The same delta rotation on the w < 0 side: put back on w >= 0 first, so the same result.
    let negated = Pose {
        q: delta.q.iter().map(|q| -*q).collect(),
        t: delta.t.clone(),
        s: delta.s.clone(),
    };
    for backend in backends() {
        for (name, d) in [("delta", &delta), ("negated delta", &negated)] {
            let layers = [BlendLayer::new(base.trs(), 1.0)];
            let additive = [BlendLayer::new(d.trs(), 0.5)];
            let out = blend(backend, &rest, &layers, &additive, 0.1);
            // t = (1, 2, 3) + 0.5 (0, 1, 0); half of a 90-degree z delta is 45 degrees, applied after
            // (left of) the base rotation; s = 2 * (0.5 + 0.5 * (1.5, 1, 1)).
            for j in 0..n {
                assert_joint(
                    &format!("{backend:?} {name}"),
                    &out,
                    j,
                    Vec3::new(1.0, 2.5, 3.0),
                    Quat::from_rotation_z(FRAC_PI_2 / 2.0) * Quat::from_rotation_x(FRAC_PI_2),
                    Vec3::new(2.5, 2.0, 2.0),
                );
            }
        }
        // Weight 1 applies the whole delta; an additive layer also applies over the rest pose alone.
        let additive = [BlendLayer::new(delta.trs(), 1.0)];
        let out = blend(backend, &rest, &[], &additive, 0.1);
        assert_joint(
            &format!("{backend:?} full delta on rest"),
            &out,
            0,
            Vec3::new(0.0, 1.0, 0.0),
            Quat::from_rotation_z(FRAC_PI_2),
            Vec3::new(1.5, 1.0, 1.0),
        );
    }
}

#[test]
fn below_the_threshold_the_rest_pose_fills_in() {
    let n = 17;
    let rest = Pose::uniform(n, Vec3::ZERO, Quat::IDENTITY, Vec3::splat(2.0));
    let layer = Pose::uniform(n, Vec3::new(10.0, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE);
    for backend in backends() {
        // Weight 0.04 < 0.1: the rest pose gets 0.06, so t = 0.4 * 10 and s = 0.4 * 1 + 0.6 * 2.
        let layers = [BlendLayer::new(layer.trs(), 0.04)];
        let out = blend(backend, &rest, &layers, &[], 0.1);
        for j in 0..n {
            assert_joint(
                &format!("{backend:?}"),
                &out,
                j,
                Vec3::new(4.0, 0.0, 0.0),
                Quat::IDENTITY,
                Vec3::splat(1.6),
            );
        }
        // With a threshold of 0.01 the same layer is above it and alone.
        let out = blend(backend, &rest, &layers, &[], 0.01);
        assert_joint(
            &format!("{backend:?} low threshold"),
            &out,
            3,
            Vec3::new(10.0, 0.0, 0.0),
            Quat::IDENTITY,
            Vec3::ONE,
        );
        // Weight 0: the layer is not read, and the output is the rest pose.
        let layers = [BlendLayer::new(layer.trs(), 0.0)];
        let out = blend(backend, &rest, &layers, &[], 0.1);
        assert_joint(
            &format!("{backend:?} zero weight"),
            &out,
            16,
            Vec3::ZERO,
            Quat::IDENTITY,
            Vec3::splat(2.0),
        );
    }
}

#[test]
fn zero_layers_give_the_rest_pose() {
    let n = 6;
    let mut rest = Pose::identity(n);
    for j in 0..n {
        rest.t[j] = Vec3::new(j as f32, 1.0, -2.0);
        rest.q[j] = Quat::from_rotation_y(0.1 * j as f32);
        rest.s[j] = Vec3::new(1.0, 2.0, 0.5 + j as f32);
    }
    for backend in backends() {
        let out = blend(backend, &rest, &[], &[], 0.1);
        for j in 0..n {
            assert_joint(
                &format!("{backend:?}"),
                &out,
                j,
                rest.t[j],
                rest.q[j],
                rest.s[j],
            );
        }
    }
}

#[test]
fn per_joint_weights_zero_a_joint() {
    let n = 3;
    let rest = Pose::uniform(n, Vec3::splat(-50.0), Quat::IDENTITY, Vec3::ONE);
    let a = Pose::uniform(n, Vec3::new(2.0, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE);
    let b = Pose::uniform(n, Vec3::new(0.0, 4.0, 0.0), Quat::IDENTITY, Vec3::ONE);
    // Layer a reaches joint 0 fully, joint 1 not at all, joint 2 at a quarter.
    let mask = [1.0, 0.0, 0.25];
    for backend in backends() {
        let layers = [
            BlendLayer::new(a.trs(), 1.0).joint_weights(&mask),
            BlendLayer::new(b.trs(), 1.0),
        ];
        let out = blend(backend, &rest, &layers, &[], 0.1);
        let ctx = format!("{backend:?}");
        assert_joint(
            &ctx,
            &out,
            0,
            Vec3::new(1.0, 2.0, 0.0),
            Quat::IDENTITY,
            Vec3::ONE,
        );
        assert_joint(
            &ctx,
            &out,
            1,
            Vec3::new(0.0, 4.0, 0.0),
            Quat::IDENTITY,
            Vec3::ONE,
        );
        // (0.25 * 2, 1 * 4) / 1.25
        assert_joint(
            &ctx,
            &out,
            2,
            Vec3::new(0.4, 3.2, 0.0),
            Quat::IDENTITY,
            Vec3::ONE,
        );
        // An additive layer masked to joint 2 only.
        let delta = Pose::uniform(n, Vec3::new(0.0, 0.0, 1.0), Quat::IDENTITY, Vec3::ONE);
        let only_last = [0.0, 0.0, 1.0];
        let additive = [BlendLayer::new(delta.trs(), 1.0).joint_weights(&only_last)];
        let out = blend(backend, &rest, &layers, &additive, 0.1);
        assert_joint(
            &ctx,
            &out,
            1,
            Vec3::new(0.0, 4.0, 0.0),
            Quat::IDENTITY,
            Vec3::ONE,
        );
        assert_joint(
            &ctx,
            &out,
            2,
            Vec3::new(0.4, 3.2, 1.0),
            Quat::IDENTITY,
            Vec3::ONE,
        );
    }
}

#[test]
fn crowd_instances_blend_with_their_own_weights() {
    let (n, instances) = (4, 3);
    let s = skeleton(n);
    let rest = Pose::identity(n);
    let a = Pose::uniform(n * instances, Vec3::ZERO, Quat::IDENTITY, Vec3::ONE);
    let b = Pose::uniform(
        n * instances,
        Vec3::new(8.0, 0.0, 0.0),
        Quat::IDENTITY,
        Vec3::ONE,
    );
    let (wa, wb) = ([1.0, 0.5, 0.0], [0.0, 0.5, 1.0]);
    for backend in backends() {
        let layers = [
            CrowdBlendLayer::new(a.trs(), &wa),
            CrowdBlendLayer::new(b.trs(), &wb),
        ];
        let mut out = Pose::identity(n * instances);
        CrowdBlendingJob::new(
            &s,
            instances,
            rest.trs(),
            TrsMut::new(&mut out.t, &mut out.q, &mut out.s),
        )
        .layers(&layers)
        .backend(backend)
        .run()
        .unwrap();
        for (i, x) in [0.0, 4.0, 8.0].into_iter().enumerate() {
            for j in 0..n {
                assert_joint(
                    &format!("{backend:?} instance {i}"),
                    &out,
                    i * n + j,
                    Vec3::new(x, 0.0, 0.0),
                    Quat::IDENTITY,
                    Vec3::ONE,
                );
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Rules: each a typed error.

/// Validates a job over 4 joints with the given layers, threshold and output size.
fn validate(
    layers: &[BlendLayer<'_>],
    additive: &[BlendLayer<'_>],
    threshold: f32,
    outputs: usize,
) -> Result<(), Error> {
    let s = skeleton(4);
    let rest = Pose::identity(4);
    let mut out = Pose::identity(outputs);
    let mut job = BlendingJob::new(
        &s,
        rest.trs(),
        TrsMut::new(&mut out.t, &mut out.q, &mut out.s),
    )
    .layers(layers)
    .additive_layers(additive)
    .threshold(threshold);
    let checked = job.validate();
    // run() checks the same rules, on every backend.
    for backend in backends() {
        job.backend = backend;
        assert_eq!(format!("{:?}", job.run()), format!("{checked:?}"));
    }
    checked
}

#[test]
fn a_nan_or_negative_layer_weight_is_rejected() {
    let p = Pose::identity(4);
    for w in [f32::NAN, -0.5, f32::INFINITY, -f32::INFINITY] {
        let layers = [BlendLayer::new(p.trs(), 1.0), BlendLayer::new(p.trs(), w)];
        let err = validate(&layers, &[], 0.1, 4).unwrap_err();
        assert!(
            matches!(err, Error::BlendWeight { layer: 1, additive: false, joint: None, weight } if weight.to_bits() == w.to_bits()),
            "{err:?}"
        );
        assert!(err.to_string().contains("layer 1 has weight"), "{err}");
        // The same on an additive layer.
        let additive = [BlendLayer::new(p.trs(), w)];
        let err = validate(&[], &additive, 0.1, 4).unwrap_err();
        assert!(
            matches!(
                err,
                Error::BlendWeight {
                    layer: 0,
                    additive: true,
                    joint: None,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("additive layer 0"), "{err}");
    }
}

#[test]
fn a_nan_or_negative_joint_weight_is_rejected() {
    let p = Pose::identity(4);
    for bad in [f32::NAN, -1.0e-6] {
        let jw = [1.0, 0.5, bad, 0.0];
        let layers = [BlendLayer::new(p.trs(), 1.0).joint_weights(&jw)];
        let err = validate(&layers, &[], 0.1, 4).unwrap_err();
        assert!(
            matches!(
                err,
                Error::BlendWeight {
                    layer: 0,
                    additive: false,
                    joint: Some(2),
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("at joint 2"), "{err}");
        let additive = [BlendLayer::new(p.trs(), 1.0).joint_weights(&jw)];
        let err = validate(&[], &additive, 0.1, 4).unwrap_err();
        assert!(
            matches!(
                err,
                Error::BlendWeight {
                    layer: 0,
                    additive: true,
                    joint: Some(2),
                    ..
                }
            ),
            "{err:?}"
        );
    }
    // A product of two finite weights that overflows is rejected as well.
    let jw = [1.0, 1.0, 1.0, 3.0e38];
    let layers = [BlendLayer::new(p.trs(), 2.0).joint_weights(&jw)];
    let err = validate(&layers, &[], 0.1, 4).unwrap_err();
    assert!(
        matches!(err, Error::BlendWeight { joint: Some(3), .. }),
        "{err:?}"
    );
}

#[test]
fn layers_with_the_wrong_joint_count_are_rejected() {
    let p = Pose::identity(4);
    let short = Pose::identity(3);
    let mixed = Trs::new(&p.t, &short.q, &p.s);
    let layers = [BlendLayer::new(p.trs(), 1.0), BlendLayer::new(mixed, 1.0)];
    assert_eq!(
        validate(&layers, &[], 0.1, 4),
        Err(Error::BlendLayerCount {
            layer: 1,
            additive: false,
            what: "rotations",
            expected: 4,
            got: 3
        })
    );
    let additive = [BlendLayer::new(short.trs(), 1.0)];
    assert_eq!(
        validate(&[], &additive, 0.1, 4),
        Err(Error::BlendLayerCount {
            layer: 0,
            additive: true,
            what: "translations",
            expected: 4,
            got: 3
        })
    );
    let jw = [1.0; 5];
    let layers = [BlendLayer::new(p.trs(), 1.0).joint_weights(&jw)];
    let err = validate(&layers, &[], 0.1, 4).unwrap_err();
    assert_eq!(
        err,
        Error::BlendLayerCount {
            layer: 0,
            additive: false,
            what: "joint weights",
            expected: 4,
            got: 5
        }
    );
    assert!(
        err.to_string()
            .contains("layer 0 has 5 joint weights, but the skeleton has 4 joints"),
        "{err}"
    );
}

#[test]
fn an_output_or_rest_pose_of_the_wrong_size_is_rejected() {
    assert_eq!(
        validate(&[], &[], 0.1, 5),
        Err(Error::CountMismatch {
            what: "output translations",
            expected: 4,
            got: 5
        })
    );
    let s = skeleton(4);
    let rest = Pose::identity(3);
    let mut out = Pose::identity(4);
    let err = BlendingJob::new(
        &s,
        rest.trs(),
        TrsMut::new(&mut out.t, &mut out.q, &mut out.s),
    )
    .run()
    .unwrap_err();
    assert_eq!(
        err,
        Error::CountMismatch {
            what: "rest pose translations",
            expected: 4,
            got: 3
        }
    );
}

#[test]
fn a_threshold_that_is_not_finite_and_positive_is_rejected() {
    for t in [0.0, -0.1, f32::NAN, f32::INFINITY] {
        let err = validate(&[], &[], t, 4).unwrap_err();
        assert!(
            matches!(err, Error::BlendThreshold { threshold } if threshold.to_bits() == t.to_bits()),
            "{err:?}"
        );
    }
    assert_eq!(validate(&[], &[], 1.0e-30, 4), Ok(()));
}

#[test]
fn crowd_rules() {
    let (n, instances) = (4, 2);
    let s = skeleton(n);
    let rest = Pose::identity(n);
    let poses = Pose::identity(n * instances);
    let run = |layers: &[CrowdBlendLayer<'_>], outputs: usize| {
        let mut out = Pose::identity(outputs);
        CrowdBlendingJob::new(
            &s,
            instances,
            rest.trs(),
            TrsMut::new(&mut out.t, &mut out.q, &mut out.s),
        )
        .layers(layers)
        .run()
    };
    let w = [1.0, 0.5];
    assert_eq!(run(&[CrowdBlendLayer::new(poses.trs(), &w)], 8), Ok(()));
    assert_eq!(
        run(&[CrowdBlendLayer::new(poses.trs(), &w[..1])], 8),
        Err(Error::BlendLayerCount {
            layer: 0,
            additive: false,
            what: "instance weights",
            expected: 2,
            got: 1
        })
    );
    let one = Pose::identity(n);
    assert_eq!(
        run(&[CrowdBlendLayer::new(one.trs(), &w)], 8),
        Err(Error::BlendLayerCount {
            layer: 0,
            additive: false,
            what: "translations",
            expected: 8,
            got: 4
        })
    );
    let nan = [1.0, f32::NAN];
    assert!(matches!(
        run(&[CrowdBlendLayer::new(poses.trs(), &nan)], 8),
        Err(Error::BlendWeight { layer: 0, .. })
    ));
    let jw = [1.0, -1.0, 1.0, 1.0];
    assert!(matches!(
        run(
            &[CrowdBlendLayer::new(poses.trs(), &w).joint_weights(&jw)],
            8
        ),
        Err(Error::BlendWeight {
            layer: 0,
            joint: Some(1),
            ..
        })
    ));
    assert_eq!(
        run(&[], 7),
        Err(Error::CountMismatch {
            what: "crowd output translations",
            expected: 8,
            got: 7
        })
    );
}
