//! Ownership, not shape (issue 31): every buffer made for an owner (a `Frame` or `CrowdFrame` for a
//! character, a `CrowdPose` or `CrowdModels` for a skeleton) is refused by every other owner with
//! `Error::WrongFrame`, even when every count matches, and accepted by a clone of its owner. The glTF
//! scenes' share of the rule is in tests/gltf_crowd.rs.

use glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    Attribute, Character, CharacterSkin, CrowdFrame, CrowdLocalToModelJob, CrowdModels,
    CrowdPaletteJob, CrowdPalettes, CrowdPose, Error, Frame, MeshInput, MorphTargets,
    PrepareOptions, RigidMesh, Skeleton, SkinnedMesh,
};

/// Two vertices on a two-joint arm, with normals, so that a morph moves them visibly.
fn mesh() -> SkinnedMesh {
    let positions = [Vec3::X, Vec3::new(2.0, 0.0, 0.0)];
    let normals = [Vec3::Y; 2];
    let joints = [[0u16, 1, 0, 0]; 2];
    let weights = [[0.5f32, 0.5, 0.0, 0.0]; 2];
    let input = MeshInput::new(
        Attribute::vec3(&positions),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    )
    .normals(Attribute::vec3(&normals));
    SkinnedMesh::prepare(&input, &PrepareOptions::new(2)).unwrap()
}

/// A character: one skinned mesh with one morph target (moving every vertex by `delta`) and one rigid
/// mesh on joint 1. Two calls with different deltas give characters of exactly the same shape.
fn character(delta: Vec3) -> Character {
    let skeleton = Skeleton::from_parents(&[None, Some(0)]).unwrap();
    let (t, q, s) = (
        vec![Vec3::ZERO, Vec3::X],
        vec![Quat::IDENTITY; 2],
        vec![Vec3::ONE; 2],
    );
    let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s).unwrap();
    let targets = MorphTargets::new(2, vec![Some(vec![delta; 2])], vec![None], vec![None]).unwrap();
    let rigid = RigidMesh::new(vec![Vec3::Z], None, None).unwrap();
    Character::new(skeleton, t, q, s, vec![skin], vec![(mesh(), 0)])
        .unwrap()
        .with_mesh_morph_targets(0, targets)
        .unwrap()
        .with_rigid_meshes(vec![(rigid, 1)])
        .unwrap()
}

/// What a refused stage must leave untouched.
fn snapshot(frame: &Frame) -> String {
    format!(
        "{:?} {:?} {:?} {:?} {:?}",
        frame.level_pose(),
        frame.level_models(),
        frame.palettes(),
        frame.meshes(),
        frame.rigid_meshes()
    )
}

/// `err` is the identity form of `WrongFrame` for `what` of an `owner`, and says so in words.
fn is_identity_error(err: &Error, what: &str, owner: &str) {
    match err {
        Error::WrongFrame {
            what: w,
            owner: o,
            part,
            made_for,
            here,
        } => {
            assert_eq!((*w, *o, *part), (what, owner, Error::OWNER_ID), "{err}");
            assert_ne!(made_for, here, "two owners have the same identity: {err}");
        }
        other => panic!("not WrongFrame: {other}"),
    }
    let words = err.to_string();
    assert!(
        words.starts_with(&format!(
            "wrong frame: this {what} was made for another {owner} of the same shape"
        )),
        "{words}"
    );
    assert!(words.contains("or a clone of it"), "{words}");
}

/// Every stage of `c` refuses `frame` (a frame of another character), and writes nothing.
fn every_stage_refuses(c: &Character, frame: &mut Frame) {
    let before = snapshot(frame);
    for (stage, err) in [
        ("evaluate", c.evaluate(frame).unwrap_err()),
        ("local_to_model", c.local_to_model(frame).unwrap_err()),
        ("palettes", c.palettes(frame).unwrap_err()),
        ("skin", c.skin(frame).unwrap_err()),
        ("rigid", c.rigid(frame).unwrap_err()),
    ] {
        is_identity_error(&err, "Frame", "character");
        assert!(!stage.is_empty());
    }
    assert_eq!(snapshot(frame), before, "a refused frame was written");
}

/// The bug of b8e69ac: a frame of character A, used with a same-shaped character B whose morph ran,
/// skinned B with A's mesh. Now B refuses it at every stage, and each character skins its own.
#[test]
fn a_frame_of_a_same_shaped_character_is_refused_by_every_stage() {
    let a = character(Vec3::Y);
    let b = character(Vec3::new(0.0, 0.0, 5.0));
    for (this, other) in [(&a, &b), (&b, &a)] {
        let mut frame = other.frame_buffers();
        frame.set_mesh_weights(0, &[1.0]).unwrap();
        every_stage_refuses(this, &mut frame);
    }
    // Each one's own frame gives its own morph.
    for (c, delta) in [(&a, Vec3::Y), (&b, Vec3::new(0.0, 0.0, 5.0))] {
        let mut frame = c.frame_buffers();
        frame.set_mesh_weights(0, &[1.0]).unwrap();
        c.evaluate(&mut frame).unwrap();
        let p = frame.meshes()[0].positions[0];
        assert!(p.abs_diff_eq(Vec3::X + delta, 1e-5), "{p}");
    }
}

#[test]
fn a_clone_of_the_character_takes_its_frames() {
    let a = character(Vec3::Y);
    let clone = a.clone();
    let mut frame = a.frame_buffers();
    frame.set_mesh_weights(0, &[0.5]).unwrap();
    clone.evaluate(&mut frame).unwrap();
    let by_clone = snapshot(&frame);
    a.evaluate(&mut frame).unwrap();
    assert_eq!(snapshot(&frame), by_clone);
    // And a frame of the clone is a frame of the original.
    let mut frame = clone.frame_buffers();
    a.evaluate(&mut frame).unwrap();
}

/// A character built from another (`with_*`) is another character: here one with no rigid mesh added,
/// so every count of its frames matches the original's, and only the identity tells them apart.
#[test]
fn a_character_built_from_another_is_another_character() {
    let a = character(Vec3::Y);
    let built = a.clone().with_rigid_meshes(vec![]).unwrap();
    let mut frame = a.frame_buffers();
    every_stage_refuses(&built, &mut frame);
    let mut frame = built.frame_buffers();
    every_stage_refuses(&a, &mut frame);
}

fn crowd_snapshot(crowd: &CrowdFrame) -> String {
    format!(
        "{:?} {:?} {:?} {:?}",
        crowd.pose(),
        crowd.models(),
        crowd.palettes(0),
        crowd.mesh(0)
    )
}

#[test]
fn a_crowd_frame_of_a_same_shaped_character_is_refused_by_every_stage() {
    let a = character(Vec3::Y);
    let b = character(Vec3::Z);
    let mut crowd = a.crowd_buffers(3).unwrap();
    let before = crowd_snapshot(&crowd);
    for err in [
        b.evaluate_crowd(&mut crowd).unwrap_err(),
        b.crowd_local_to_model(&mut crowd).unwrap_err(),
        b.crowd_palettes(&mut crowd).unwrap_err(),
        b.crowd_skin(&mut crowd).unwrap_err(),
    ] {
        is_identity_error(&err, "CrowdFrame", "character");
    }
    assert_eq!(
        crowd_snapshot(&crowd),
        before,
        "a refused crowd was written"
    );
    // A clone takes it.
    a.clone().evaluate_crowd(&mut crowd).unwrap();
}

/// A crowd frame of a character on another skeleton is named as a `CrowdFrame` of a character (it was
/// named as the `CrowdPose` inside it).
#[test]
fn a_crowd_frame_of_another_skeleton_is_named_as_a_crowd_frame() {
    let a = character(Vec3::Y);
    let three = Character::new(
        Skeleton::from_parents(&[None, Some(0), Some(1)]).unwrap(),
        vec![Vec3::ZERO; 3],
        vec![Quat::IDENTITY; 3],
        vec![Vec3::ONE; 3],
        vec![],
        vec![],
    )
    .unwrap();
    let mut crowd = three.crowd_buffers(2).unwrap();
    let err = a.evaluate_crowd(&mut crowd).unwrap_err();
    assert_eq!(
        err,
        Error::WrongFrame {
            what: "CrowdFrame",
            owner: "character",
            part: "joint",
            made_for: 3,
            here: 2
        }
    );
    assert_eq!(
        err.to_string(),
        "wrong frame: this CrowdFrame was made for a character with 3 joints; this character has 2"
    );
}

/// A pose of another skeleton put into this character's own crowd frame (through `pose_mut`) is named
/// as the pose: a `CrowdPose` of a skeleton.
#[test]
fn a_pose_of_another_skeleton_put_into_a_crowd_frame_is_refused() {
    let a = character(Vec3::Y);
    let b = character(Vec3::Y);
    let mut crowd = a.crowd_buffers(2).unwrap();
    *crowd.pose_mut() = b.crowd_buffers(2).unwrap().pose().clone();
    for err in [
        a.evaluate_crowd(&mut crowd).unwrap_err(),
        a.crowd_local_to_model(&mut crowd).unwrap_err(),
        a.crowd_palettes(&mut crowd).unwrap_err(),
        a.crowd_skin(&mut crowd).unwrap_err(),
    ] {
        is_identity_error(&err, "CrowdPose", "skeleton");
    }
    // A pose of the character's own skeleton (a clone of it) is taken.
    *crowd.pose_mut() = CrowdPose::new(&a.skeleton().clone(), 2).unwrap();
    a.evaluate_crowd(&mut crowd).unwrap();
}

/// Two skeletons from the same parents are equal as data, yet each refuses the other's crowd buffers
/// in every job; a clone takes them.
#[test]
fn crowd_buffers_of_a_same_shaped_skeleton_are_refused_by_every_job() {
    let s1 = Skeleton::from_parents(&[None, Some(0), Some(0)]).unwrap();
    let s2 = Skeleton::from_parents(&[None, Some(0), Some(0)]).unwrap();
    assert_eq!(s1, s2, "the same hierarchy is the same data");
    let ib = [Mat4::IDENTITY; 3];
    let joints = [0, 1, 2];
    // A pose of s2 in s1's job.
    let pose2 = CrowdPose::new(&s2, 4).unwrap();
    let mut models1 = CrowdModels::new(&s1, 4).unwrap();
    let before = models1.clone();
    let err = CrowdLocalToModelJob::new(&s1, &pose2, &mut models1)
        .run()
        .unwrap_err();
    is_identity_error(&err, "CrowdPose", "skeleton");
    assert_eq!(models1, before, "nothing may be written");
    // Models of s2 in s1's job, for local-to-model and for palettes.
    let pose1 = CrowdPose::new(&s1, 4).unwrap();
    let mut models2 = CrowdModels::new(&s2, 4).unwrap();
    let err = CrowdLocalToModelJob::new(&s1, &pose1, &mut models2)
        .validate()
        .unwrap_err();
    is_identity_error(&err, "CrowdModels", "skeleton");
    let mut palettes = CrowdPalettes::new(3, 4).unwrap();
    let err = CrowdPaletteJob::new(&s1, &models2, &joints, &ib, &mut palettes)
        .run()
        .unwrap_err();
    is_identity_error(&err, "CrowdModels", "skeleton");
    assert_eq!(
        palettes,
        CrowdPalettes::new(3, 4).unwrap(),
        "nothing written"
    );
    // A clone of s1 takes s1's buffers in every job.
    let clone = s1.clone();
    CrowdLocalToModelJob::new(&clone, &pose1, &mut models1)
        .run()
        .unwrap();
    CrowdPaletteJob::new(&clone, &models1, &joints, &ib, &mut palettes)
        .run()
        .unwrap();
    // Names do not change what the buffers hold: the named skeleton keeps its identity.
    let named = s1
        .clone()
        .with_names(vec!["a".into(), "b".into(), "c".into()])
        .unwrap();
    CrowdLocalToModelJob::new(&named, &pose1, &mut models1)
        .run()
        .unwrap();
}
