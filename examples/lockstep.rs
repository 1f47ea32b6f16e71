//! A lock-step game's pose and skin: `Precision::Deterministic` gives the same bits on every backend,
//! ISA and platform, so two machines that run the same inputs can compare a hash of the result (a
//! desync check) or trust a server's hit test to match what a client drew.
//!
//! A two-bone arm swings on a clip; each backend this CPU runs evaluates the frame, and the example
//! prints each one's hash of the skinned positions with both precisions. The deterministic hashes agree
//! (and match those of any other machine); the fast ones may differ in their last bits.
//!
//! ```sh
//! cargo run --release -p ispc-skinning --example lockstep
//! ```

use ispc_skinning::glam::{Quat, Vec3};
use ispc_skinning::{
    Backend, Character, CharacterSkin, ClipLayer, Interpolation, Isa, MeshInput, Precision,
    PrepareOptions, Skeleton, SkinnedMesh,
};

fn main() -> Result<(), ispc_skinning::Error> {
    // Shoulder at the origin, elbow at x = 1; the arm is a line of vertices from x = 0 to 2, weighted
    // between the two joints by where they lie.
    let skeleton = Skeleton::from_parents(&[None, Some(0)])?;
    let positions: Vec<Vec3> = (0..64)
        .map(|i| Vec3::new(i as f32 / 32.0, 0.1, 0.0))
        .collect();
    let joints: Vec<[u16; 2]> = vec![[0, 1]; positions.len()];
    let weights: Vec<[f32; 2]> = positions
        .iter()
        .map(|p| {
            let w = (p.x - 0.5).clamp(0.0, 1.0);
            [1.0 - w, w]
        })
        .collect();
    let mesh = SkinnedMesh::prepare(
        &MeshInput::from_influences(&positions, &joints, &weights),
        &PrepareOptions::new(2),
    )?;
    let (t, q, s) = (
        vec![Vec3::ZERO, Vec3::X],
        vec![Quat::IDENTITY; 2],
        vec![Vec3::ONE; 2],
    );
    let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s)?;
    let character = Character::new(skeleton.clone(), t, q, s, vec![skin], vec![(mesh, 0)])?;

    // The elbow bends from 0 to 2 radians and back over one second, slerped between keys.
    let mut clip = ispc_skinning::Clip::builder(&skeleton);
    let bend = |a: f32| Quat::from_rotation_z(a);
    clip.rotation(
        1,
        Interpolation::Linear,
        &[0.0, 0.5, 1.0],
        &[bend(0.0), bend(2.0), bend(0.0)],
    )?;
    let clip = clip.build();

    let mut backends = vec![Backend::Reference];
    backends.extend(Isa::available().into_iter().map(Backend::Isa));
    for precision in [Precision::Deterministic, Precision::Fast] {
        println!("{}:", precision.name());
        for &backend in &backends {
            let mut frame = character
                .frame_buffers()
                .backend(backend)
                .precision(precision);
            let mut hash = 0xcbf2_9ce4_8422_2325u64;
            for step in 0..60 {
                let layer = ClipLayer::new(&clip, step as f32 / 60.0);
                character.play(&mut frame, &[layer], &[])?;
                character.evaluate(&mut frame)?;
                for p in &frame.meshes()[0].positions {
                    for x in p.to_array() {
                        for b in x.to_bits().to_le_bytes() {
                            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                        }
                    }
                }
            }
            println!(
                "  {:<9} 60 frames, positions hash {hash:#018x}",
                backend.name()
            );
        }
    }
    Ok(())
}
