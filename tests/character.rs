//! `Character` on a hand-built two-joint rig, without glTF: the frame chain against a hand computation,
//! the root placement, every rule of `Character::new`, and frames that belong to another character.

use glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    Attribute, Backend, Character, CharacterSkin, Error, Frame, MeshInput, PrepareOptions,
    Renormalize, Skeleton, SkinnedMesh, Threads,
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
    assert_eq!(frame.joints(), 2);
    for j in 0..2 {
        assert_eq!(frame.local(j), Some((t[j], r[j], s[j])), "joint {j}");
        assert_eq!(frame.model(j), Some(Mat4::IDENTITY), "joint {j}");
    }
    assert_eq!(frame.local(2), None);
    assert_eq!(frame.model(2), None);
    // This rig's level order is its own order.
    assert_eq!(frame.level_pose(), (&t[..], &r[..], &s[..]));
    assert_eq!(frame.level_models(), &[Mat4::IDENTITY; 2]);
    let mut models = [Mat4::ZERO; 2];
    frame.copy_models(&mut models).unwrap();
    assert_eq!(models, [Mat4::IDENTITY; 2]);
    assert_eq!(frame.palettes().len(), 1);
    assert_eq!(frame.palettes()[0].len(), 2);
    assert_eq!(frame.meshes().len(), 1);
    assert_eq!(frame.mesh(0).unwrap().positions, vec![Vec3::ZERO]);
    assert!(frame.mesh(1).is_none());
    assert!(frame.meshes()[0].normals.is_none() && frame.meshes()[0].tangents.is_none());
    assert_eq!(frame.bounds(), Some((Vec3::ZERO, Vec3::ZERO)));
    // The options and their defaults.
    assert_eq!(frame.root, Mat4::IDENTITY);
    assert_eq!(frame.backend, Backend::Auto);
    assert_eq!(frame.renormalize, Renormalize::None);
    assert_eq!(frame.threads, Threads::One);
    let root = Mat4::from_translation(Vec3::Z);
    let built = c
        .frame_buffers()
        .backend(Backend::Reference)
        .renormalize(Renormalize::Fast)
        .threads(Threads::All)
        .root(root);
    assert_eq!(
        (built.backend, built.renormalize, built.threads, built.root),
        (Backend::Reference, Renormalize::Fast, Threads::All, root)
    );
}

#[test]
fn frame_setters_check_their_input() {
    let c = rig();
    let mut frame = c.frame_buffers();
    assert_eq!(
        frame
            .set_local(2, Vec3::ZERO, Quat::IDENTITY, Vec3::ONE)
            .unwrap_err(),
        Error::JointOutOfRange {
            joint: 2,
            joints: 2
        }
    );
    let (t, r, s) = rest();
    assert_eq!(
        frame.set_pose(&t[..1], &r, &s).unwrap_err(),
        Error::CountMismatch {
            what: "local translations (one per joint)",
            expected: 2,
            got: 1
        }
    );
    assert!(matches!(
        frame.set_pose(&t, &r[..1], &s).unwrap_err(),
        Error::CountMismatch { what, .. } if what.contains("rotations")
    ));
    assert!(matches!(
        frame.set_pose(&t, &r, &s[..1]).unwrap_err(),
        Error::CountMismatch { what, .. } if what.contains("scales")
    ));
    // Nothing was written by the refused calls.
    assert_eq!(frame.level_pose(), (&t[..], &r[..], &s[..]));
    let mut three = [Mat4::ZERO; 3];
    assert_eq!(
        frame.copy_models(&mut three).unwrap_err(),
        Error::CountMismatch {
            what: "model matrices (one per joint)",
            expected: 2,
            got: 3
        }
    );
    assert_eq!(three, [Mat4::ZERO; 3]);
    frame
        .set_local(1, Vec3::Z, Quat::IDENTITY, Vec3::splat(2.0))
        .unwrap();
    assert_eq!(
        frame.local(1),
        Some((Vec3::Z, Quat::IDENTITY, Vec3::splat(2.0)))
    );
    assert_eq!(frame.local(0), Some((t[0], r[0], s[0])));
}

#[test]
fn evaluate_matches_a_hand_computation() {
    // model0 = T(1,0,0): the vertex goes to (2, 0, 0).
    // model1 = T(1,0,0) T(0,1,0) Rz(90); with the inverse bind T(0,-1,0) the vertex goes
    // (1,0,0) -> (1,-1,0) -> Rz(90): (1,1,0) -> (1,2,0) -> (2,2,0).
    // Half and half: (2, 1, 0).
    let c = rig();
    for backend in BACKENDS {
        let mut frame = c.frame_buffers().backend(backend);
        c.evaluate(&mut frame).unwrap();
        let model = |j| frame.model(j).unwrap();
        assert!(close(model(0).w_axis.truncate(), Vec3::X), "{backend:?}");
        assert!(close(model(1).w_axis.truncate(), Vec3::new(1.0, 1.0, 0.0)));
        assert!(close(model(1).x_axis.truncate(), Vec3::Y));
        let p = frame.meshes()[0].positions[0];
        assert!(close(p, Vec3::new(2.0, 1.0, 0.0)), "{backend:?}: {p}");
        // The palette is model * inverse bind.
        let palette = &frame.palettes()[0];
        assert!(palette[1]
            .to_mat4()
            .abs_diff_eq(model(1) * skin().inverse_binds[1], 1e-6));
        assert_eq!(frame.bounds(), Some((p, p)));
    }
}

#[test]
fn the_stages_run_one_at_a_time_and_read_the_edited_pose() {
    let c = rig();
    let mut frame = c.frame_buffers();
    frame.backend = Backend::Reference;
    // The child straightened: model1 = T(1,1,0), palette1 = T(1,0,0), so both joints move the vertex
    // to (2, 0, 0).
    frame
        .set_local(1, Vec3::Y, Quat::IDENTITY, Vec3::ONE)
        .unwrap();
    c.local_to_model(&mut frame).unwrap();
    assert!(close(
        frame.model(1).unwrap().w_axis.truncate(),
        Vec3::new(1.0, 1.0, 0.0)
    ));
    c.palettes(&mut frame).unwrap();
    c.skin(&mut frame).unwrap();
    assert!(close(
        frame.meshes()[0].positions[0],
        Vec3::new(2.0, 0.0, 0.0)
    ));
    // A whole pose at once, and model matrices posed by hand before the palettes.
    let (t, r, s) = rest();
    frame.set_pose(&t, &r, &s).unwrap();
    assert_eq!(frame.local(1), Some((t[1], r[1], s[1])));
    frame.level_models_mut()[1] = Mat4::from_translation(Vec3::new(1.0, 1.0, 0.0));
    c.palettes(&mut frame).unwrap();
    c.skin(&mut frame).unwrap();
    assert!(close(
        frame.meshes()[0].positions[0],
        Vec3::new(2.0, 0.0, 0.0)
    ));
}

#[test]
fn the_root_places_the_whole_character() {
    let c = rig();
    let root = Mat4::from_translation(Vec3::new(0.0, 0.0, 5.0)) * Mat4::from_rotation_y(FRAC_PI_2);
    for backend in BACKENDS {
        let mut frame = c.frame_buffers().backend(backend);
        frame.root = root;
        c.evaluate(&mut frame).unwrap();
        let expected = root.transform_point3(Vec3::new(2.0, 1.0, 0.0));
        let p = frame.meshes()[0].positions[0];
        assert!(close(p, expected), "{backend:?}: {p}, expected {expected}");
        assert!(close(
            frame.model(0).unwrap().w_axis.truncate(),
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

/// What a refused stage must leave untouched: the pose, models, palettes and skinned vertices.
fn snapshot(frame: &Frame) -> String {
    format!(
        "{:?} {:?} {:?} {:?}",
        frame.level_pose(),
        frame.level_models(),
        frame.palettes(),
        frame.meshes()
    )
}

/// Every stage refuses `frame` with `want`, writes nothing, and says so in words.
fn refused_by_every_stage(c: &Character, frame: &mut Frame, want: &Error, words: &str) {
    let before = snapshot(frame);
    for (stage, err) in [
        ("evaluate", c.evaluate(frame).unwrap_err()),
        ("local_to_model", c.local_to_model(frame).unwrap_err()),
        ("palettes", c.palettes(frame).unwrap_err()),
        ("skin", c.skin(frame).unwrap_err()),
    ] {
        assert_eq!(&err, want, "{stage}");
        assert_eq!(err.to_string(), words, "{stage}");
    }
    assert_eq!(snapshot(frame), before, "a refused frame was written");
}

/// A skin over the first `joints` joints with identity inverse binds.
fn identity_skin(joints: usize) -> CharacterSkin {
    CharacterSkin {
        joints: (0..joints).collect(),
        inverse_binds: vec![Mat4::IDENTITY; joints],
    }
}

#[test]
fn a_frame_of_another_character_is_refused_in_words() {
    let c = rig();
    // Another skeleton: three joints.
    let three = Character::new(
        Skeleton::from_parents(&[None, Some(0), Some(1)]).unwrap(),
        vec![Vec3::ZERO; 3],
        vec![Quat::IDENTITY; 3],
        vec![Vec3::ONE; 3],
        vec![],
        vec![],
    )
    .unwrap();
    refused_by_every_stage(
        &c,
        &mut three.frame_buffers(),
        &Error::WrongFrame {
            what: "Frame",
            owner: "character",
            part: "joint",
            made_for: 3,
            here: 2,
        },
        "wrong frame: this Frame was made for a character with 3 joints; this character has 2",
    );
    // As many joints in another order: the frame's pose would be read in the wrong order.
    let (t, r, s) = rest();
    let reversed = Character::new(
        Skeleton::from_parents(&[Some(1), None]).unwrap(),
        t.clone(),
        r.clone(),
        s.clone(),
        vec![skin()],
        vec![(mesh(2), 0)],
    )
    .unwrap();
    refused_by_every_stage(
        &c,
        &mut reversed.frame_buffers(),
        &Error::WrongFrame {
            what: "Frame",
            owner: "character",
            part: "joint",
            made_for: 2,
            here: 2,
        },
        "wrong frame: this Frame was made for a character with 2 joints; this character has 2",
    );
    // The same skeleton with no skin.
    let skinless = Character::new(
        two_joints(),
        t.clone(),
        r.clone(),
        s.clone(),
        vec![],
        vec![],
    )
    .unwrap();
    refused_by_every_stage(
        &c,
        &mut skinless.frame_buffers(),
        &Error::WrongFrame {
            what: "Frame",
            owner: "character",
            part: "skin",
            made_for: 0,
            here: 1,
        },
        "wrong frame: this Frame was made for a character with 0 skins; this character has 1",
    );
    // The same skeleton and skin count, but a skin of one joint.
    let small = Character::new(
        two_joints(),
        t.clone(),
        r.clone(),
        s.clone(),
        vec![identity_skin(1)],
        vec![],
    )
    .unwrap();
    refused_by_every_stage(
        &c,
        &mut small.frame_buffers(),
        &Error::WrongFrame {
            what: "Frame",
            owner: "character",
            part: "skin joint",
            made_for: 1,
            here: 2,
        },
        "wrong frame: this Frame was made for a character with 1 skin joint; this character has 2",
    );
    // The same skeleton and skin, but no mesh.
    let meshless = Character::new(
        two_joints(),
        t.clone(),
        r.clone(),
        s.clone(),
        vec![skin()],
        vec![],
    )
    .unwrap();
    refused_by_every_stage(
        &c,
        &mut meshless.frame_buffers(),
        &Error::WrongFrame {
            what: "Frame",
            owner: "character",
            part: "mesh",
            made_for: 0,
            here: 1,
        },
        "wrong frame: this Frame was made for a character with 0 meshes; this character has 1",
    );
    // The same skeleton and skin, but a mesh with a different vertex count.
    let positions = [Vec3::X, Vec3::Y];
    let joints = [[0u16; 4]; 2];
    let weights = [[1.0f32, 0.0, 0.0, 0.0]; 2];
    let input = MeshInput::new(
        Attribute::vec3(&positions),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    );
    let two = SkinnedMesh::prepare(&input, &PrepareOptions::new(2)).unwrap();
    let twin = Character::new(
        two_joints(),
        t.clone(),
        r.clone(),
        s.clone(),
        vec![skin()],
        vec![(two, 0)],
    )
    .unwrap();
    refused_by_every_stage(
        &c,
        &mut twin.frame_buffers(),
        &Error::WrongFrame {
            what: "Frame",
            owner: "character",
            part: "vertex",
            made_for: 2,
            here: 1,
        },
        "wrong frame: this Frame was made for a character with 2 vertices; this character has 1",
    );
    // The same vertex count, but the other mesh has normals: its frame holds a normal stream this
    // character's mesh does not write.
    let normals = [Vec3::Z];
    let with_normals = SkinnedMesh::prepare(
        &MeshInput::new(
            Attribute::vec3(&[Vec3::X]),
            Attribute::joints_u16(&[[0u16, 1, 0, 0]]),
            Attribute::weights_f32(&[[0.5f32, 0.5, 0.0, 0.0]]),
        )
        .normals(Attribute::vec3(&normals)),
        &PrepareOptions::new(2),
    )
    .unwrap();
    let lit = Character::new(two_joints(), t, r, s, vec![skin()], vec![(with_normals, 0)]).unwrap();
    refused_by_every_stage(
        &c,
        &mut lit.frame_buffers(),
        &Error::WrongFrame {
            what: "Frame",
            owner: "character",
            part: "mesh normal stream",
            made_for: 1,
            here: 0,
        },
        "wrong frame: this Frame was made for a character with 1 mesh normal stream; this character has 0",
    );
    // Its own frame still works after the refusals, and so does a clone of the character.
    let mut frame = c.frame_buffers();
    c.evaluate(&mut frame).unwrap();
    c.clone().evaluate(&mut frame).unwrap();
}
