//! LocalToModelJob: one test per rule it checks, partial updates, the quaternion policy, and the
//! reference against glam's own math; crowds, palettes, and (feature `experiments`) the SoA entry point.

mod common;
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

mod crowd_rules {
    use super::humanoid;
    use crate::scenes::humanoid_parents;
    use glam::{Mat4, Quat, Vec3};
    use ispc_skinning::{
        CrowdLocalToModelJob, CrowdModels, CrowdPose, Error, Skeleton, Trs, MAX_CROWD_ELEMENTS,
        MAX_CROWD_INSTANCES,
    };

    #[test]
    fn a_pose_made_for_another_skeleton_is_the_wrong_frame() {
        let s = humanoid();
        let other = Skeleton::from_parents(&humanoid_parents(66)).unwrap();
        let pose = CrowdPose::new(&other, 4).unwrap();
        let mut models = CrowdModels::new(&s, 4).unwrap();
        let err = CrowdLocalToModelJob::new(&s, &pose, &mut models)
            .run()
            .unwrap_err();
        assert_eq!(
            err,
            Error::WrongFrame {
                what: "CrowdPose",
                owner: "skeleton",
                part: "joint",
                made_for: 66,
                here: 67
            }
        );
        assert_eq!(
            err.to_string(),
            "wrong frame: this CrowdPose was made for a skeleton with 66 joints; this skeleton has 67"
        );
    }

    #[test]
    fn models_made_for_another_skeleton_are_the_wrong_frame() {
        let s = humanoid();
        let other = Skeleton::from_parents(&humanoid_parents(68)).unwrap();
        let pose = CrowdPose::new(&s, 4).unwrap();
        let mut models = CrowdModels::new(&other, 4).unwrap();
        let before = models.clone();
        let err = CrowdLocalToModelJob::new(&s, &pose, &mut models)
            .run()
            .unwrap_err();
        assert_eq!(
            err,
            Error::WrongFrame {
                what: "CrowdModels",
                owner: "skeleton",
                part: "joint",
                made_for: 68,
                here: 67
            }
        );
        assert!(err
            .to_string()
            .contains("CrowdModels was made for a skeleton with 68 joints"));
        assert_eq!(models, before, "nothing may be written on error");
    }

    #[test]
    fn a_skeleton_with_as_many_joints_in_another_order_is_another_skeleton() {
        // Same joint count, different hierarchy: the pose would be read in the wrong order.
        let chain = Skeleton::from_parents(&[None, Some(0), Some(1)]).unwrap();
        let reversed = Skeleton::from_parents(&[Some(1), Some(2), None]).unwrap();
        let pose = CrowdPose::new(&reversed, 2).unwrap();
        let mut models = CrowdModels::new(&chain, 2).unwrap();
        let err = CrowdLocalToModelJob::new(&chain, &pose, &mut models)
            .validate()
            .unwrap_err();
        assert_eq!(
            err,
            Error::WrongFrame {
                what: "CrowdPose",
                owner: "skeleton",
                part: "joint",
                made_for: 3,
                here: 3
            }
        );
        // A clone of the same skeleton is the same skeleton.
        let same = chain.clone();
        let pose = CrowdPose::new(&same, 2).unwrap();
        CrowdLocalToModelJob::new(&chain, &pose, &mut models)
            .run()
            .unwrap();
    }

    #[test]
    fn model_instance_count_must_match_the_pose() {
        let s = humanoid();
        let pose = CrowdPose::new(&s, 4).unwrap();
        let mut models = CrowdModels::new(&s, 5).unwrap();
        let err = CrowdLocalToModelJob::new(&s, &pose, &mut models)
            .validate()
            .unwrap_err();
        assert_eq!(
            err,
            Error::CountMismatch {
                what: "crowd model instances",
                expected: 4,
                got: 5
            }
        );
    }

    #[test]
    fn one_root_per_instance() {
        let s = humanoid();
        let pose = CrowdPose::new(&s, 4).unwrap();
        let mut models = CrowdModels::new(&s, 4).unwrap();
        let roots = [Mat4::IDENTITY; 3];
        let mut job = CrowdLocalToModelJob::new(&s, &pose, &mut models);
        job.roots = Some(&roots);
        assert_eq!(
            job.validate().unwrap_err(),
            Error::CountMismatch {
                what: "root transforms",
                expected: 4,
                got: 3
            }
        );
    }

    #[test]
    fn too_many_instances_is_an_error_before_anything_is_allocated() {
        let s = humanoid();
        // Past the instance limit: an allocation of that many poses would be 40 GiB.
        let err = CrowdPose::new(&s, MAX_CROWD_INSTANCES + 1).unwrap_err();
        let max = MAX_CROWD_INSTANCES.min(MAX_CROWD_ELEMENTS / 67);
        assert_eq!(
            err,
            Error::TooManyInstances {
                instances: MAX_CROWD_INSTANCES + 1,
                per_instance: 67,
                unit: "joint",
                max
            }
        );
        assert!(err.to_string().starts_with("too many instances"), "{err}");
        // Past the element limit with fewer instances than the instance limit.
        let err = CrowdModels::new(&s, max + 1).unwrap_err();
        assert!(
            matches!(err, Error::TooManyInstances { instances, max: m, .. } if instances == max + 1 && m == max),
            "{err:?}"
        );
        assert!(CrowdModels::new(&s, usize::MAX).is_err());
    }

    #[test]
    fn setters_check_instance_joint_and_stream_lengths() {
        let s = Skeleton::from_parents(&[Some(2), Some(0), None]).unwrap();
        let mut pose = CrowdPose::new(&s, 2).unwrap();
        assert_eq!(pose.joints(), 3);
        assert_eq!(pose.instances(), 2);
        assert_eq!(
            pose.set_joint(2, 0, Vec3::ZERO, Quat::IDENTITY, Vec3::ONE)
                .unwrap_err(),
            Error::InstanceOutOfRange {
                instance: 2,
                instances: 2
            }
        );
        assert_eq!(
            pose.set_joint(0, 3, Vec3::ZERO, Quat::IDENTITY, Vec3::ONE)
                .unwrap_err(),
            Error::JointOutOfRange {
                joint: 3,
                joints: 3
            }
        );
        let t = [Vec3::ZERO; 2];
        let q = [Quat::IDENTITY; 3];
        let sc = [Vec3::ONE; 3];
        let err = pose
            .set_instance(
                1,
                Trs {
                    translations: &t,
                    rotations: &q,
                    scales: &sc,
                },
            )
            .unwrap_err();
        assert_eq!(
            err,
            Error::CountMismatch {
                what: "local translations",
                expected: 3,
                got: 2
            }
        );
        pose.set_joint(1, 2, Vec3::X, Quat::from_rotation_z(0.5), Vec3::splat(2.0))
            .unwrap();
        assert_eq!(
            pose.joint(1, 2),
            Some((Vec3::X, Quat::from_rotation_z(0.5), Vec3::splat(2.0)))
        );
        assert_eq!(
            pose.joint(0, 0),
            Some((Vec3::ZERO, Quat::IDENTITY, Vec3::ONE)),
            "new poses are the identity"
        );
        assert_eq!(pose.joint(2, 0), None);
        assert_eq!(pose.joint(0, 3), None);
    }

    #[test]
    fn joints_are_in_the_users_order() {
        // Joint 2 is the root and joint 1 the leaf: level order is 2, 0, 1.
        let s = Skeleton::from_parents(&[Some(2), Some(0), None]).unwrap();
        let mut pose = CrowdPose::new(&s, 3).unwrap();
        let t = [Vec3::X, Vec3::Y, Vec3::Z];
        let q = [Quat::IDENTITY; 3];
        let sc = [Vec3::ONE; 3];
        pose.set_instance(
            1,
            Trs {
                translations: &t,
                rotations: &q,
                scales: &sc,
            },
        )
        .unwrap();
        for j in 0..3 {
            assert_eq!(pose.joint(1, j), Some((t[j], q[j], sc[j])), "joint {j}");
        }
        let mut models = CrowdModels::new(&s, 3).unwrap();
        CrowdLocalToModelJob::new(&s, &pose, &mut models)
            .run()
            .unwrap();
        // Joint j's model translation is the sum of the translations from the root down to it.
        let want = [Vec3::Z + Vec3::X, Vec3::Z + Vec3::X + Vec3::Y, Vec3::Z];
        let mut all = [Mat4::ZERO; 3];
        models.instance_models(1, &mut all).unwrap();
        for j in 0..3 {
            assert_eq!(
                models.model(1, j),
                Some(Mat4::from_translation(want[j])),
                "joint {j}"
            );
            assert_eq!(all[j], Mat4::from_translation(want[j]), "joint {j}");
        }
        // The other instances are at the identity pose.
        assert_eq!(models.model(0, 1), Some(Mat4::IDENTITY));
        assert_eq!(models.model(3, 0), None);
        assert_eq!(models.model(0, 3), None);
        assert_eq!(
            models.instance_models(3, &mut all).unwrap_err(),
            Error::InstanceOutOfRange {
                instance: 3,
                instances: 3
            }
        );
        assert_eq!(
            models.instance_models(0, &mut all[..2]).unwrap_err(),
            Error::CountMismatch {
                what: "model matrices",
                expected: 3,
                got: 2
            }
        );
    }

    #[test]
    fn an_empty_crowd_is_fine() {
        let s = humanoid();
        let pose = CrowdPose::new(&s, 0).unwrap();
        let mut models = CrowdModels::new(&s, 0).unwrap();
        CrowdLocalToModelJob::new(&s, &pose, &mut models)
            .run()
            .unwrap();
    }

    #[test]
    fn the_reference_backend_equals_the_default() {
        let s = humanoid();
        let mut pose = CrowdPose::new(&s, 20).unwrap();
        for i in 0..20 {
            let (t, q, sc) = super::pose(67);
            let q: Vec<Quat> = q
                .iter()
                .map(|q| *q * Quat::from_rotation_y(i as f32 * 0.1))
                .collect();
            pose.set_instance(
                i,
                Trs {
                    translations: &t,
                    rotations: &q,
                    scales: &sc,
                },
            )
            .unwrap();
        }
        let mut a = CrowdModels::new(&s, 20).unwrap();
        let mut b = CrowdModels::new(&s, 20).unwrap();
        CrowdLocalToModelJob::new(&s, &pose, &mut a).run().unwrap();
        let mut job = CrowdLocalToModelJob::new(&s, &pose, &mut b);
        job.backend = ispc_skinning::Backend::Reference;
        job.run().unwrap();
        for i in 0..20 {
            for j in 0..67 {
                assert!(
                    a.model(i, j)
                        .unwrap()
                        .abs_diff_eq(b.model(i, j).unwrap(), 1e-5),
                    "instance {i} joint {j}"
                );
            }
        }
    }
}

mod palette_rules {
    use glam::Mat4;
    use ispc_skinning::{Error, PaletteJob, PaletteMatrix};

    #[test]
    fn palette_length_must_match_inverse_binds() {
        let models = [Mat4::IDENTITY; 4];
        let ib = [Mat4::IDENTITY; 3];
        let mut palette = [PaletteMatrix::IDENTITY; 2];
        let err = PaletteJob::new(&models, &ib, &mut palette)
            .run()
            .unwrap_err();
        assert_eq!(
            err,
            Error::CountMismatch {
                what: "palette entries",
                expected: 3,
                got: 2
            }
        );
    }

    #[test]
    fn remap_length_must_match() {
        let models = [Mat4::IDENTITY; 4];
        let ib = [Mat4::IDENTITY; 3];
        let mut palette = [PaletteMatrix::IDENTITY; 3];
        let joints = [0usize, 1];
        let mut job = PaletteJob::new(&models, &ib, &mut palette);
        job.joints = Some(&joints);
        assert_eq!(
            job.validate().unwrap_err(),
            Error::CountMismatch {
                what: "skin joint remap",
                expected: 3,
                got: 2
            }
        );
    }

    #[test]
    fn remapped_joint_out_of_range_names_the_skin_joint() {
        let models = [Mat4::IDENTITY; 4];
        let ib = [Mat4::IDENTITY; 3];
        let mut palette = [PaletteMatrix::IDENTITY; 3];
        let joints = [0usize, 9, 1];
        let mut job = PaletteJob::new(&models, &ib, &mut palette);
        job.joints = Some(&joints);
        assert_eq!(
            job.run().unwrap_err(),
            Error::SkinJointOutOfRange {
                skin_joint: 1,
                joint: 9,
                joints: 4
            }
        );
    }

    #[test]
    fn without_remap_there_must_be_a_model_per_skin_joint() {
        let models = [Mat4::IDENTITY; 2];
        let ib = [Mat4::IDENTITY; 3];
        let mut palette = [PaletteMatrix::IDENTITY; 3];
        let err = PaletteJob::new(&models, &ib, &mut palette)
            .validate()
            .unwrap_err();
        assert_eq!(
            err,
            Error::CountMismatch {
                what: "model matrices",
                expected: 3,
                got: 2
            }
        );
    }

    #[test]
    fn entries_are_aligned_rows_of_the_product() {
        assert_eq!(std::mem::align_of::<PaletteMatrix>(), 64);
        let m = Mat4::from_translation(glam::Vec3::new(1.0, 2.0, 3.0));
        let ib = Mat4::from_scale(glam::Vec3::splat(2.0));
        let mut palette = [PaletteMatrix::IDENTITY; 1];
        PaletteJob::new(&[m], &[ib], &mut palette).run().unwrap();
        assert_eq!(
            palette[0].rows,
            [
                [2.0, 0.0, 0.0, 1.0],
                [0.0, 2.0, 0.0, 2.0],
                [0.0, 0.0, 2.0, 3.0],
                [0.0, 0.0, 0.0, 1.0]
            ]
        );
        assert_eq!(palette[0].to_mat4(), m * ib);
        assert_eq!(PaletteMatrix::from_mat4(m * ib), palette[0]);
        assert_eq!(palette.as_ptr() as usize % 64, 0);
    }
}

/// The SoA entry point's rules; its kernels are checked on every ISA by the parity harness.
#[cfg(feature = "experiments")]
mod soa_rules {
    use super::{humanoid, pose};
    use glam::{Mat4, Vec3};
    use ispc_skinning::experiments::{local_to_model_soa, SoaMatrices, SoaMethod};
    use ispc_skinning::reference::trs_matrix;
    use ispc_skinning::{Backend, Error, Isa};

    fn locals() -> Vec<Mat4> {
        let (t, q, sc) = pose(67);
        (0..67)
            .map(|j| Mat4::from_cols_array(&trs_matrix(t[j], q[j], sc[j])))
            .collect()
    }

    #[test]
    fn the_reference_backend_gives_the_reference_result() {
        let s = humanoid();
        let locals = locals();
        let root = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
        let mut want = vec![Mat4::ZERO; 67];
        ispc_skinning::reference::local_to_model(
            s.level_parents(),
            &locals,
            &root,
            &mut want,
            0..67,
        );
        for method in [SoaMethod::Children, SoaMethod::Level] {
            let mut models = SoaMatrices::zeroed(67);
            local_to_model_soa(
                &s,
                &SoaMatrices::from_mat4(&locals),
                &root,
                &mut models,
                method,
                Backend::Reference,
            )
            .unwrap();
            let mut got = vec![Mat4::ZERO; 67];
            models.to_mat4(&mut got).unwrap();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn counts_must_match_the_skeleton() {
        let s = humanoid();
        let root = Mat4::IDENTITY;
        let mut models = SoaMatrices::zeroed(67);
        let short = SoaMatrices::zeroed(66);
        let err = local_to_model_soa(
            &s,
            &short,
            &root,
            &mut models,
            SoaMethod::Level,
            Backend::Auto,
        )
        .unwrap_err();
        assert_eq!(
            err,
            Error::CountMismatch {
                what: "local matrices",
                expected: 67,
                got: 66
            }
        );
        let mut long = SoaMatrices::zeroed(68);
        let locals = SoaMatrices::from_mat4(&locals());
        let err = local_to_model_soa(
            &s,
            &locals,
            &root,
            &mut long,
            SoaMethod::Children,
            Backend::Auto,
        )
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
    fn an_unavailable_isa_is_rejected() {
        let s = humanoid();
        let locals = SoaMatrices::from_mat4(&locals());
        let mut models = SoaMatrices::zeroed(67);
        let foreign = if cfg!(target_arch = "aarch64") {
            Isa::Avx2
        } else {
            Isa::Neon
        };
        let err = local_to_model_soa(
            &s,
            &locals,
            &Mat4::IDENTITY,
            &mut models,
            SoaMethod::Level,
            foreign.into(),
        )
        .unwrap_err();
        assert!(matches!(err, Error::IsaUnavailable { isa, .. } if isa == foreign));
    }

    #[test]
    fn conversions_round_trip() {
        let locals = locals();
        let soa = SoaMatrices::from_mat4(&locals);
        assert_eq!(soa.len(), 67);
        let mut back = vec![Mat4::ZERO; 67];
        soa.to_mat4(&mut back).unwrap();
        assert_eq!(
            back, locals,
            "affine matrices survive AoS -> SoA -> AoS bit for bit"
        );
        assert!(matches!(
            soa.to_mat4(&mut back[1..]),
            Err(Error::CountMismatch { .. })
        ));
    }
}
