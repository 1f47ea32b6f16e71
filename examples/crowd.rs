//! A crowd from a glTF character: 500 instances, each blending two clips at its own times and weights
//! and standing at its own place, sampled, blended, posed and skinned in a few calls per frame.
//!
//! ```sh
//! cargo run --release -p ispc-skinning --example crowd [path/to/character.glb]
//! ```
//!
//! Without an argument it loads `../shared/assets/CesiumMan/CesiumMan.glb` beside the repository; if
//! that file is missing it says so and exits successfully. With a file of one clip (CesiumMan), the two
//! layers are that clip at two phases; with two or more (Fox: survey, walk, run) they are clips 0 and 1.

use ispc_skinning::glam::{Mat4, Quat, Vec3};
use ispc_skinning::gltf::GltfScene;
use ispc_skinning::{ClipLayer, CrowdClipLayer};
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

    // The scene's clips as runtime clips (the same layout as clips built from your own arrays).
    let character = scene.character();
    let first = scene.runtime_clip(0)?;
    let second = scene.runtime_clip(1.min(scene.clips().len() - 1))?;

    // Buffers for the whole crowd, allocated once: poses, model matrices, palettes, skinned vertices.
    // Every stage spreads its work over rayon's threads by default.
    let mut crowd = scene.crowd_buffers(INSTANCES)?;
    // Each instance's place in the world: a grid of 25 x 20, each turned its own way.
    for (i, root) in crowd.roots_mut().iter_mut().enumerate() {
        let at = Vec3::new((i % 25) as f32 * 2.0, 0.0, (i / 25) as f32 * 2.0);
        *root = Mat4::from_rotation_translation(Quat::from_rotation_y(i as f32), at);
    }
    // Two layers per instance: each its own times (spread out, so that they do not march in step)
    // and its own mix of the two clips, from all the first to all the second across the crowd.
    let mut times: Vec<f32> = (0..INSTANCES).map(|i| i as f32 * 0.037).collect();
    let mut later: Vec<f32> = times.iter().map(|t| t + 0.5).collect();
    let mix: Vec<f32> = (0..INSTANCES)
        .map(|i| i as f32 / (INSTANCES - 1) as f32)
        .collect();
    let rest: Vec<f32> = mix.iter().map(|m| 1.0 - m).collect();
    let (first_clips, second_clips) = ([&first], [&second]);

    // Per frame: sample and blend every instance, then local to model, palettes and skinning.
    const FRAMES: u32 = 20;
    let start = Instant::now();
    for _ in 0..FRAMES {
        times.iter_mut().for_each(|t| *t += 1.0 / 60.0);
        later.iter_mut().for_each(|t| *t += 1.0 / 60.0);
        let layers = [
            CrowdClipLayer::new(&first_clips, &times).weights(&rest),
            CrowdClipLayer::new(&second_clips, &later).weights(&mix),
        ];
        character.crowd_play(&mut crowd, &layers, &[])?;
        character.evaluate_crowd(&mut crowd)?;
    }
    let per_frame = start.elapsed() / FRAMES;
    let vertices: usize = scene.primitives().iter().map(|p| p.vertex_count()).sum();
    println!(
        "{INSTANCES} x {} ({vertices} vertices each), two clips blended per instance: {per_frame:?} per frame",
        path.file_name().unwrap_or_default().to_string_lossy(),
    );

    // Each instance's results, by instance: skinned vertices per mesh.
    let check = 123;
    let (min, max) = crowd.bounds(check).expect("the instance has vertices");
    println!("instance {check} stands inside {min:.2} .. {max:.2}");

    // The same instance on the single-character path gives the same vertices.
    let mut frame = character.frame_buffers();
    frame.root = crowd.roots()[check];
    let layers = [
        ClipLayer::new(&first, times[check]).weight(rest[check]),
        ClipLayer::new(&second, later[check]).weight(mix[check]),
    ];
    character.play(&mut frame, &layers, &[])?;
    character.evaluate(&mut frame)?;
    let single = &frame.meshes()[0].positions;
    let from_crowd = crowd.positions(0, check).expect("instance and mesh exist");
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
