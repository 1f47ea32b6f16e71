//! A skeleton and a skinned mesh from plain arrays, no file format involved: the steps an engine with its
//! own asset pipeline takes. Every index below is in our own joint order; the crate converts.
//!
//! ```sh
//! cargo run --release -p ispc-skinning --example custom_skeleton
//! ```

use ispc_skinning::glam::{Quat, Vec3};
use ispc_skinning::{Character, CharacterSkin, MeshInput, PrepareOptions, Skeleton, SkinnedMesh};

fn main() -> Result<(), ispc_skinning::Error> {
    // 1. The hierarchy, in *our* joint order: 0 = forearm, 1 = upper arm (the root), 2 = hand.
    //    Any order works; None marks a root.
    let skeleton = Skeleton::from_parents(&[Some(1), None, Some(0)])?;

    // 2. The bind pose, in our order: the arm straight along +X, one unit per bone.
    let translations = [Vec3::X, Vec3::ZERO, Vec3::X];
    let rotations = [Quat::IDENTITY; 3];
    let scales = [Vec3::ONE; 3];
    // The skin: skin joint i is our joint i, its inverse bind matrix the inverse of its bind-pose model.
    let skin = CharacterSkin::from_bind_pose(&skeleton, &translations, &rotations, &scales)?;

    // 3. The mesh: five vertices along the bind-pose arm, two influences each (joint indices in our
    //    order, as skin joints); weights are normalized when the mesh is prepared.
    let positions = [0.5, 1.0, 1.5, 2.0, 2.5].map(|x| Vec3::new(x, 0.0, 0.0));
    let joints = [[1u16, 1], [1, 0], [0, 0], [0, 2], [2, 2]];
    let weights = [
        [1.0f32, 0.0],
        [0.5, 0.5],
        [1.0, 0.0],
        [0.5, 0.5],
        [1.0, 0.0],
    ];
    let input = MeshInput::from_influences(&positions, &joints, &weights);
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::default())?;

    // 4. The character: skeleton, rest pose (here the bind pose), skins, and each mesh with its skin.
    let character = Character::new(
        skeleton,
        translations.to_vec(),
        rotations.to_vec(),
        scales.to_vec(),
        vec![skin],
        vec![(mesh, 0)],
    )?;

    // 5. Every frame: pose joints by our own index, then evaluate (model matrices, palette, skinning).
    let mut frame = character.frame_buffers();
    let elbow = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    frame.set_local(0, Vec3::X, elbow, Vec3::ONE)?; // bend the forearm by 90 degrees
    character.evaluate(&mut frame)?;

    let skinned = &frame.meshes()[0].positions;
    for (bind, now) in positions.iter().zip(skinned) {
        println!("bind {bind:.2} -> skinned {now:.2}");
    }
    let hand = frame.model(2).expect("joint 2 exists").w_axis.truncate();
    println!("the hand (our joint 2) is at {hand:.2}");
    if let Some((min, max)) = frame.bounds() {
        println!("bounds of the skinned mesh: {min:.2} .. {max:.2}");
    }
    // The hand's vertex went from (2.5, 0, 0) to 1.5 units up from the elbow at (1, 0, 0).
    assert!(skinned[4].abs_diff_eq(Vec3::new(1.0, 1.5, 0.0), 1e-5));
    Ok(())
}
