//! A crowd from a glTF character: 500 instances, each playing its own clip at its own time and standing
//! at its own place, sampled, posed and skinned in one call per frame.
//!
//! ```sh
//! cargo run --release -p ispc-skinning --example crowd [path/to/character.glb]
//! ```
//!
//! Without an argument it loads `../shared/assets/CesiumMan/CesiumMan.glb` beside the repository; if
//! that file is missing it says so and exits successfully.

use ispc_skinning::glam::{Mat4, Quat, Vec3};
use ispc_skinning::gltf::{GltfScene, Wrap};
use std::path::PathBuf;
use std::time::Instant;

const INSTANCES: usize = 500;

fn main() -> Result<(), ispc_skinning::Error> {
    let path = match std::env::args_os().nth(1) {
        Some(arg) => PathBuf::from(arg),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/assets/CesiumMan/CesiumMan.glb"),
    };
    if !path.is_file() {
        println!(
            "crowd: {} is missing; pass a .gltf or .glb file",
            path.display()
        );
        return Ok(());
    }
    let scene = GltfScene::load(&path)?;
    if scene.clips().is_empty() {
        println!("crowd: {} has no animation clip", path.display());
        return Ok(());
    }

    // Buffers for the whole crowd, allocated once: poses, model matrices, palettes, skinned vertices.
    // Every stage spreads its work over rayon's threads by default.
    let mut crowd = scene.crowd_buffers(INSTANCES)?;
    // Each instance's place in the world: a grid of 25 x 20, each turned its own way.
    for (i, root) in crowd.roots_mut().iter_mut().enumerate() {
        let at = Vec3::new((i % 25) as f32 * 2.0, 0.0, (i / 25) as f32 * 2.0);
        *root = Mat4::from_rotation_translation(Quat::from_rotation_y(i as f32), at);
    }
    // Each instance's clip (clips in turn) and time (spread out, so that they do not march in step).
    let clips: Vec<usize> = (0..INSTANCES).map(|i| i % scene.clips().len()).collect();
    let mut times: Vec<f32> = (0..INSTANCES).map(|i| i as f32 * 0.037).collect();

    // One call per frame: sample every instance, then local to model, palettes and skinning.
    scene.evaluate_crowd(&clips, &times, Wrap::Loop, &mut crowd)?;
    const FRAMES: u32 = 20;
    let start = Instant::now();
    for _ in 0..FRAMES {
        times.iter_mut().for_each(|t| *t += 1.0 / 60.0);
        scene.evaluate_crowd(&clips, &times, Wrap::Loop, &mut crowd)?;
    }
    let per_frame = start.elapsed() / FRAMES;
    let vertices: usize = scene.primitives().iter().map(|p| p.vertex_count()).sum();
    println!(
        "{INSTANCES} x {} ({vertices} vertices each): {per_frame:?} per frame",
        path.file_name().unwrap_or_default().to_string_lossy(),
    );

    // Each instance's results, by instance: skinned vertices per primitive, world matrices per node.
    let check = 123;
    let (min, max) = crowd.bounds(check).expect("the instance has vertices");
    println!("instance {check} stands inside {min:.2} .. {max:.2}");

    // The same instance on the single-character path gives the same vertices.
    let mut frame = scene.frame_buffers().root(crowd.roots()[check]);
    scene.evaluate(Some(clips[check]), times[check], Wrap::Loop, &mut frame)?;
    let single = &frame.meshes()[0].positions;
    let from_crowd = crowd
        .positions(0, check)
        .expect("instance and primitive exist");
    let worst = single
        .iter()
        .zip(from_crowd)
        .map(|(a, b)| (*a - *b).abs().max_element())
        .fold(0.0, f32::max);
    // Different kernels may round differently, so compare with a tolerance.
    assert!(worst < 1e-3, "instance {check} differs by {worst}");
    println!("instance {check} matches a single-character frame (largest difference {worst:e})");
    Ok(())
}
