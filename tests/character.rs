//! `Character` on a hand-built two-joint rig, without glTF: the frame chain against a hand computation,
//! the root placement, every rule of `Character::new`, and frames that belong to another character.

use glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    Attribute, Backend, Character, CharacterSkin, Error, MeshInput, PrepareOptions, Skeleton,
    SkinnedMesh,
};
use std::f32::consts::FRAC_PI_2;

const BACKENDS: [Backend; 2] = [Backend::Reference, Backend::Auto];

/// One vertex at (1, 0, 0), half on joint 0 and half on joint 1, prepared for `joint_count` joints.
fn mesh(joint_count: usize) -> SkinnedMesh {
    let positions = [Vec3::X];
    let joints = [[0u16, 1, 0, 0]];
    let weights = [[0.5f32, 0.5, 0.0, 0.0]];
    let input = MeshInput::new(
        Attribute::vec3(&positions),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    );
    SkinnedMesh::prepare(&input, &PrepareOptions::new(joint_count)).unwrap()
}

/// The rest pose: the root translated by (1, 0, 0); its child translated by (0, 1, 0) and turned 90
/// degrees about Z.
fn rest() -> (Vec<Vec3>, Vec<Quat>, Vec<Vec3>) {
    (
        vec![Vec3::X, Vec3::Y],
        vec![Quat::IDENTITY, Quat::from_rotation_z(FRAC_PI_2)],
        vec![Vec3::ONE; 2],
    )
}

/// Joint 1's inverse bind matrix moves the vertex down by 1 before the child's transform.
fn skin() -> CharacterSkin {
    CharacterSkin {
        joints: vec![0, 1],
        inverse_binds: vec![
            Mat4::IDENTITY,
            Mat4::from_translation(Vec3::new(0.0, -1.0, 0.0)),
        ],
    }
}

fn two_joints() -> Skeleton {
    Skeleton::from_parents(&[None, Some(0)]).unwrap()
}

fn rig() -> Character {
    let (t, r, s) = rest();
    Character::new(two_joints(), t, r, s, vec![skin()], vec![(mesh(2), 0)]).unwrap()
}

fn close(a: Vec3, b: Vec3) -> bool {
    (a - b).abs().max_element() < 1e-5
}

#[test]
fn accessors_report_the_parts() {
    let c = rig();
    assert_eq!(c.skeleton().len(), 2);
    assert_eq!(c.skins(), &[skin()]);
    assert_eq!(c.mesh_count(), 1);
    assert_eq!(c.mesh(0).map(SkinnedMesh::vertex_count), Some(1));
    assert!(c.mesh(1).is_none());
    assert_eq!(c.mesh_skin(0), Some(0));
    assert_eq!(c.mesh_skin(1), None);
    let (t, r, s) = rest();
    assert_eq!(c.rest_pose(1), Some((t[1], r[1], s[1])));
    assert_eq!(c.rest_pose(2), None);
    let frame = c.frame_buffers();
    assert_eq!(frame.translations, t);
    assert_eq!(frame.rotations, r);
    assert_eq!(frame.scales, s);
    assert_eq!(frame.models, vec![Mat4::IDENTITY; 2]);
    assert_eq!(frame.palettes.len(), 1);
    assert_eq!(frame.palettes[0].len(), 2);
    assert_eq!(frame.meshes.len(), 1);
    assert_eq!(frame.meshes[0].positions, vec![Vec3::ZERO]);
    assert!(frame.meshes[0].normals.is_none() && frame.meshes[0].tangents.is_none());
    assert_eq!(frame.root, Mat4::IDENTITY);
}

#[test]
fn evaluate_matches_a_hand_computation() {
    // model0 = T(1,0,0): the vertex goes to (2, 0, 0).
    // model1 = T(1,0,0) T(0,1,0) Rz(90); with the inverse bind T(0,-1,0) the vertex goes
    // (1,0,0) -> (1,-1,0) -> Rz(90): (1,1,0) -> (1,2,0) -> (2,2,0).
    // Half and half: (2, 1, 0).
    let c = rig();
    for backend in BACKENDS {
        let mut frame = c.frame_buffers();
        c.evaluate(backend, &mut frame).unwrap();
        assert!(
            close(frame.models[0].w_axis.truncate(), Vec3::X),
            "{backend:?}"
        );
        assert!(close(
            frame.models[1].w_axis.truncate(),
            Vec3::new(1.0, 1.0, 0.0)
        ));
        assert!(close(frame.models[1].x_axis.truncate(), Vec3::Y));
        let p = frame.meshes[0].positions[0];
        assert!(close(p, Vec3::new(2.0, 1.0, 0.0)), "{backend:?}: {p}");
    }
}

#[test]
fn the_stages_run_one_at_a_time_and_read_the_edited_pose() {
    let c = rig();
    let mut frame = c.frame_buffers();
    // The child straightened: model1 = T(1,1,0), palette1 = T(1,0,0), so both joints move the vertex
    // to (2, 0, 0).
    frame.rotations[1] = Quat::IDENTITY;
    c.local_to_model(Backend::Reference, &mut frame).unwrap();
    c.palettes(Backend::Reference, &mut frame).unwrap();
    c.skin(Backend::Reference, &mut frame).unwrap();
    assert!(close(
        frame.meshes[0].positions[0],
        Vec3::new(2.0, 0.0, 0.0)
    ));
}

#[test]
fn the_root_places_the_whole_character() {
    let c = rig();
    let root = Mat4::from_translation(Vec3::new(0.0, 0.0, 5.0)) * Mat4::from_rotation_y(FRAC_PI_2);
    for backend in BACKENDS {
        let mut frame = c.frame_buffers();
        frame.root = root;
        c.evaluate(backend, &mut frame).unwrap();
        let expected = root.transform_point3(Vec3::new(2.0, 1.0, 0.0));
        let p = frame.meshes[0].positions[0];
        assert!(close(p, expected), "{backend:?}: {p}, expected {expected}");
        assert!(close(
            frame.models[0].w_axis.truncate(),
            root.transform_point3(Vec3::X)
        ));
    }
}

#[test]
fn new_checks_every_rule() {
    let (t, r, s) = rest();
    let new = |t: Vec<Vec3>,
               r: Vec<Quat>,
               s: Vec<Vec3>,
               skins: Vec<CharacterSkin>,
               meshes: Vec<(SkinnedMesh, usize)>| {
        Character::new(two_joints(), t, r, s, skins, meshes).unwrap_err()
    };
    let one = |err: Error| {
        assert!(
            matches!(
                err,
                Error::CountMismatch {
                    expected: 2,
                    got: 1,
                    ..
                }
            ),
            "{err}"
        );
    };
    // Rest pose: one entry per skeleton joint.
    one(new(
        t[..1].to_vec(),
        r.clone(),
        s.clone(),
        vec![skin()],
        vec![],
    ));
    one(new(
        t.clone(),
        r[..1].to_vec(),
        s.clone(),
        vec![skin()],
        vec![],
    ));
    one(new(
        t.clone(),
        r.clone(),
        s[..1].to_vec(),
        vec![skin()],
        vec![],
    ));
    // A skin joint names a skeleton joint.
    let mut bad = skin();
    bad.joints[1] = 2;
    assert_eq!(
        new(t.clone(), r.clone(), s.clone(), vec![bad], vec![]),
        Error::SkinJointOutOfRange {
            skin_joint: 1,
            joint: 2,
            joints: 2
        }
    );
    // One inverse bind matrix per skin joint.
    let mut bad = skin();
    bad.inverse_binds.pop();
    let err = new(t.clone(), r.clone(), s.clone(), vec![bad], vec![]);
    one(err.clone());
    assert!(err.to_string().contains("inverse bind"), "{err}");
    // A mesh names one of the skins.
    assert_eq!(
        new(
            t.clone(),
            r.clone(),
            s.clone(),
            vec![skin()],
            vec![(mesh(2), 1)]
        ),
        Error::SkinOutOfRange {
            mesh: 0,
            skin: 1,
            skins: 1
        }
    );
    // A mesh prepared for two joints cannot use a one-joint skin.
    let small = CharacterSkin {
        joints: vec![0],
        inverse_binds: vec![Mat4::IDENTITY],
    };
    assert_eq!(
        new(
            t,
            r,
            s,
            vec![skin(), small],
            vec![(mesh(2), 0), (mesh(2), 1)]
        ),
        Error::SkinTooSmall {
            mesh: 1,
            mesh_joints: 2,
            skin_joints: 1
        }
    );
}

#[test]
fn a_frame_of_another_character_is_refused_in_words() {
    let c = rig();
    // Another skeleton: one joint.
    let single = Character::new(
        Skeleton::from_parents(&[None]).unwrap(),
        vec![Vec3::ZERO],
        vec![Quat::IDENTITY],
        vec![Vec3::ONE],
        vec![],
        vec![],
    )
    .unwrap();
    let mut other = single.frame_buffers();
    for err in [
        c.evaluate(Backend::Auto, &mut other).unwrap_err(),
        c.local_to_model(Backend::Auto, &mut other).unwrap_err(),
        c.palettes(Backend::Auto, &mut other).unwrap_err(),
        c.skin(Backend::Auto, &mut other).unwrap_err(),
    ] {
        assert!(matches!(err, Error::CountMismatch { .. }), "{err}");
        assert!(err.to_string().contains("another character"), "{err}");
    }
    // The same skeleton and skin, but a mesh with a different vertex count.
    let (t, r, s) = rest();
    let positions = [Vec3::X, Vec3::Y];
    let joints = [[0u16; 4]; 2];
    let weights = [[1.0f32, 0.0, 0.0, 0.0]; 2];
    let input = MeshInput::new(
        Attribute::vec3(&positions),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    );
    let two = SkinnedMesh::prepare(&input, &PrepareOptions::new(2)).unwrap();
    let twin = Character::new(two_joints(), t, r, s, vec![skin()], vec![(two, 0)]).unwrap();
    let mut other = twin.frame_buffers();
    let err = c.evaluate(Backend::Auto, &mut other).unwrap_err();
    assert_eq!(
        err,
        Error::CountMismatch {
            what: "a mesh output's positions, one per vertex (is the Frame from another character, or resized?)",
            expected: 1,
            got: 2
        }
    );
    // Its own frame still works after the refusals.
    let mut frame = c.frame_buffers();
    c.evaluate(Backend::Auto, &mut frame).unwrap();
}
