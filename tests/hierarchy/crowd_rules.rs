//! The rules of `CrowdLocalToModelJob`, `CrowdPose` and `CrowdModels`: a pose or models made for
//! another skeleton (or one with as many joints in another order) is the wrong frame and nothing is
//! written, instance and root counts must match, too many instances is an error before anything is
//! allocated, the setters check instance, joint and stream lengths, joints are in the user's order,
//! an empty crowd is fine, and the reference backend equals the default.

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
