//! A skeleton and a skinned mesh from plain arrays, no file format involved: the steps an engine with its
//! own asset pipeline takes every frame.
//!
//! ```sh
//! cargo run --release -p ispc-skinning --example custom_skeleton
//! ```

use ispc_skinning::glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    Attribute, LocalToModelJob, Locals, MeshInput, PaletteJob, PaletteMatrix, PrepareOptions,
    Skeleton, SkinOutput, SkinnedMesh, SkinningJob, Trs,
};

fn main() -> Result<(), ispc_skinning::Error> {
    // 1. The hierarchy, in *our* joint order: 0 = forearm, 1 = upper arm (the root), 2 = hand.
    //    Any order works; None marks a root.
    let parents = [Some(1), None, Some(0)];
    let skeleton = Skeleton::from_parents(&parents)?;
    // The crate re-indexes joints breadth first ("level order"); it keeps both permutations.
    for ours in 0..parents.len() {
        println!(
            "our joint {ours} is level-order joint {}",
            skeleton.level_index(ours).unwrap()
        );
    }

    // 2. This frame's local transforms, in our order: each bone 1 unit along +X from its parent,
    //    the elbow (forearm) bent by 90 degrees.
    let translations = [Vec3::X, Vec3::ZERO, Vec3::X];
    let rotations = [
        Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
        Quat::IDENTITY,
        Quat::IDENTITY,
    ];
    let scales = [Vec3::ONE; 3];
    // Every job takes per-joint arrays in level order: convert once.
    let t = skeleton.to_level_order(&translations)?;
    let q = skeleton.to_level_order(&rotations)?;
    let s = skeleton.to_level_order(&scales)?;

    // 3. Local to model: each joint's matrix in the character's space (level order).
    let mut models = vec![Mat4::ZERO; skeleton.len()];
    let trs = Trs {
        translations: &t,
        rotations: &q,
        scales: &s,
    };
    LocalToModelJob::new(&skeleton, Locals::Trs(trs), &mut models).run()?;

    // 4. The skinning palette. The mesh's influences name joints in our order, and the inverse bind
    //    matrices are in that order too, so `joints` maps each skin joint to its level-order model.
    //    Bind pose: the arm straight along +X, joints at x = 0 (upper arm), 1 (forearm), 2 (hand).
    let inverse_binds = [
        Mat4::from_translation(Vec3::new(-1.0, 0.0, 0.0)), // forearm
        Mat4::IDENTITY,                                    // upper arm
        Mat4::from_translation(Vec3::new(-2.0, 0.0, 0.0)), // hand
    ];
    let remap = skeleton.level_indices(&[0, 1, 2])?; // skin joint i is our joint i
    let mut palette = vec![PaletteMatrix::IDENTITY; inverse_binds.len()];
    PaletteJob::new(&models, &inverse_binds, &mut palette)
        .joints(&remap)
        .run()?;

    // 5. The mesh: five vertices along the bind-pose arm, with up to 4 influences each (joint indices
    //    in our order, into the palette above; weights are normalized on prepare).
    let positions = [
        Vec3::new(0.5, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(1.5, 0.0, 0.0),
        Vec3::new(2.0, 0.0, 0.0),
        Vec3::new(2.5, 0.0, 0.0),
    ];
    let joints = [
        [1u16, 0, 0, 0],
        [1, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 2, 0, 0],
        [2, 0, 0, 0],
    ];
    let weights = [
        [1.0f32, 0.0, 0.0, 0.0],
        [0.5, 0.5, 0.0, 0.0], // the elbow: half upper arm, half forearm
        [1.0, 0.0, 0.0, 0.0],
        [0.5, 0.5, 0.0, 0.0], // the wrist
        [1.0, 0.0, 0.0, 0.0],
    ];
    let input = MeshInput::new(
        Attribute::vec3(&positions),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    );
    // Validate and convert once, when the mesh is loaded; the palette has 3 entries.
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(palette.len()))?;

    // 6. Skin, every frame.
    let mut skinned = vec![Vec3::ZERO; positions.len()];
    SkinningJob::new(&mesh, &palette, SkinOutput::positions(&mut skinned)).run()?;
    for (bind, now) in positions.iter().zip(&skinned) {
        println!("bind {bind:.2} -> skinned {now:.2}");
    }
    // The hand's vertex went from (2.5, 0, 0) to 1.5 units up from the elbow at (1, 0, 0).
    assert!(skinned[4].abs_diff_eq(Vec3::new(1.0, 1.5, 0.0), 1e-5));
    Ok(())
}
