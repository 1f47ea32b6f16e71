//! Crowd frames of another character, and the message of too many palette entries.
//!
//! A crowd frame is used with the character it was made for: a crowd frame of a character with another
//! skeleton (refused by `Character::evaluate_crowd` and by each crowd stage), another number of skins
//! or meshes, or the same skeleton with other skin joints, vertex counts or normal streams gives
//! `Error::WrongFrame`, whose message names the part that differs, and nothing is written.
//! `Error::TooManyInstances` counts palette entries with the right plural. Crowds against the
//! single-character path and the size limits of crowd buffers (with a counting allocator) are checked
//! in `main.rs`.

use super::rig;

use glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    Attribute, Character, CharacterSkin, CrowdPalettes, Error, MeshInput, PrepareOptions, Skeleton,
    SkinnedMesh, MAX_CROWD_INSTANCES,
};

// ---------------------------------------------------------------------------------------------------
// Frames of another character.

#[test]
fn a_crowd_frame_of_another_character_is_the_wrong_frame() {
    let rig = rig();
    let c = &rig.character;
    // Another skeleton.
    let other = Character::new(
        Skeleton::from_parents(&[None, Some(0), Some(1)]).unwrap(),
        vec![Vec3::ZERO; 3],
        vec![Quat::IDENTITY; 3],
        vec![Vec3::ONE; 3],
        vec![],
        vec![],
    )
    .unwrap();
    let mut crowd = other.crowd_buffers(4).unwrap();
    for err in [
        c.evaluate_crowd(&mut crowd).unwrap_err(),
        c.crowd_local_to_model(&mut crowd).unwrap_err(),
        c.crowd_palettes(&mut crowd).unwrap_err(),
        c.crowd_skin(&mut crowd).unwrap_err(),
    ] {
        // Named as what was given, a crowd frame of a character (its pose inside is not what the
        // caller passed).
        assert_eq!(
            err,
            Error::WrongFrame {
                what: "CrowdFrame",
                owner: "character",
                part: "joint",
                made_for: 3,
                here: 20
            }
        );
        assert_eq!(
            err.to_string(),
            "wrong frame: this CrowdFrame was made for a character with 3 joints; this character has 20"
        );
    }
    // The same skeleton with one skin and no mesh.
    let skeleton = c.skeleton().clone();
    let n = rig.n;
    let one_skin = Character::new(
        skeleton.clone(),
        vec![Vec3::ZERO; n],
        vec![Quat::IDENTITY; n],
        vec![Vec3::ONE; n],
        vec![c.skins()[0].clone()],
        vec![],
    )
    .unwrap();
    let mut crowd = one_skin.crowd_buffers(4).unwrap();
    let before = crowd.models().clone();
    let err = c.evaluate_crowd(&mut crowd).unwrap_err();
    assert_eq!(
        err,
        Error::WrongFrame {
            what: "CrowdFrame",
            owner: "character",
            part: "skin",
            made_for: 1,
            here: 2
        }
    );
    assert_eq!(
        err.to_string(),
        "wrong frame: this CrowdFrame was made for a character with 1 skin; this character has 2"
    );
    assert_eq!(crowd.models(), &before, "nothing may be written");
    // The same skeleton and skins, one mesh.
    let one_mesh = Character::new(
        skeleton,
        vec![Vec3::ZERO; n],
        vec![Quat::IDENTITY; n],
        vec![Vec3::ONE; n],
        c.skins().to_vec(),
        vec![(c.mesh(0).unwrap().clone(), 0)],
    )
    .unwrap();
    let mut crowd = one_mesh.crowd_buffers(4).unwrap();
    let err = c.evaluate_crowd(&mut crowd).unwrap_err();
    assert_eq!(
        err,
        Error::WrongFrame {
            what: "CrowdFrame",
            owner: "character",
            part: "mesh",
            made_for: 1,
            here: 2
        }
    );
    assert!(
        err.to_string().contains("1 mesh; this character has 2"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------------
// Two library gaps these tests found, now fixed: the plural of "palette entry", and crowd frames of
// another character with the same skeleton.

/// `Error::TooManyInstances` counts palette entries with the right plural.
#[test]
fn the_too_many_instances_message_spells_palette_entries() {
    let err = CrowdPalettes::new(20, MAX_CROWD_INSTANCES + 1).unwrap_err();
    assert!(
        err.to_string().contains("of 20 palette entries each"),
        "{err}"
    );
}

/// Error::WrongFrame's rule covers crowd frames ("a frame (or crowd frame, crowd pose, ...) is used
/// with the character ... it was made for"): a crowd frame of another character with the same skeleton
/// is refused before anything is written when its skin joints, vertices or normal streams differ.
#[test]
fn a_crowd_frame_of_a_character_with_other_meshes_is_the_wrong_frame() {
    let skeleton = Skeleton::from_parents(&[None, Some(0)]).unwrap();
    let positions = [Vec3::X, Vec3::Y];
    let joints = [[0u16, 1, 0, 0]; 2];
    let weights = [[0.5f32, 0.5, 0.0, 0.0]; 2];
    let normals = [Vec3::Z; 2];
    let prepare = |v: usize, with_normals: bool| {
        let input = MeshInput::new(
            Attribute::vec3(&positions[..v]),
            Attribute::joints_u16(&joints[..v]),
            Attribute::weights_f32(&weights[..v]),
        );
        let input = if with_normals {
            input.normals(Attribute::vec3(&normals[..v]))
        } else {
            input
        };
        SkinnedMesh::prepare(&input, &PrepareOptions::new(2)).unwrap()
    };
    let skin = |joints: Vec<usize>| CharacterSkin {
        inverse_binds: vec![Mat4::IDENTITY; joints.len()],
        joints,
    };
    let character = |skin: CharacterSkin, mesh: SkinnedMesh| {
        Character::new(
            skeleton.clone(),
            vec![Vec3::ZERO; 2],
            vec![Quat::IDENTITY; 2],
            vec![Vec3::ONE; 2],
            vec![skin],
            vec![(mesh, 0)],
        )
        .unwrap()
    };
    let this = character(skin(vec![0, 1]), prepare(2, false));
    for (other, part, made_for, here) in [
        (
            character(skin(vec![0, 1, 1]), prepare(2, false)),
            "skin joint",
            3,
            2,
        ),
        (
            character(skin(vec![0, 1]), prepare(1, false)),
            "vertex",
            1,
            2,
        ),
        (
            character(skin(vec![0, 1]), prepare(2, true)),
            "mesh normal stream",
            1,
            0,
        ),
    ] {
        let mut crowd = other.crowd_buffers(3).unwrap();
        crowd
            .pose_mut()
            .set_joint(1, 0, Vec3::X, Quat::IDENTITY, Vec3::ONE)
            .unwrap();
        let before = crowd.models().clone();
        let err = this.evaluate_crowd(&mut crowd).unwrap_err();
        assert_eq!(
            err,
            Error::WrongFrame {
                what: "CrowdFrame",
                owner: "character",
                part,
                made_for,
                here
            }
        );
        assert_eq!(crowd.models(), &before, "nothing may be written");
    }
    // And the other way round: a frame without normals for a mesh with normals.
    let lit = character(skin(vec![0, 1]), prepare(2, true));
    let mut crowd = this.crowd_buffers(3).unwrap();
    assert_eq!(
        lit.evaluate_crowd(&mut crowd).unwrap_err(),
        Error::WrongFrame {
            what: "CrowdFrame",
            owner: "character",
            part: "mesh normal stream",
            made_for: 0,
            here: 1
        }
    );
}
