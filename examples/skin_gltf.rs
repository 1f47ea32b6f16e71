//! Load a glTF character, play its first animation clip and skin it on the CPU.
//!
//! ```sh
//! cargo run --release -p ispc-skinning --example skin_gltf [path/to/character.glb]
//! ```
//!
//! Without an argument it loads `../shared/assets/CesiumMan/CesiumMan.glb` beside the repository; if
//! that file is missing it says so and exits successfully.

use ispc_skinning::gltf::{GltfScene, Wrap};
use ispc_skinning::Backend;
use std::path::PathBuf;

fn main() -> Result<(), ispc_skinning::Error> {
    let path = match std::env::args_os().nth(1) {
        Some(arg) => PathBuf::from(arg),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/assets/CesiumMan/CesiumMan.glb"),
    };
    if !path.is_file() {
        println!(
            "skin_gltf: {} is missing; pass a .gltf or .glb file to skin it",
            path.display()
        );
        return Ok(());
    }

    // Loading validates the file once and prepares every skinned primitive for the kernels.
    let scene = GltfScene::load(&path)?;
    // A frame runs on Backend::Auto unless told otherwise (`frame.backend`): ISPC_SKINNING_ISA if set,
    // else the best ISA the CPU supports, else the serial Rust reference.
    println!(
        "{}: {} primitive(s), {} clip(s), skinning with {}",
        path.display(),
        scene.primitives().len(),
        scene.clips().len(),
        Backend::selected()?.name()
    );

    // One set of buffers per character, reused every frame: poses, matrices, palettes and outputs.
    let mut frame = scene.frame_buffers();
    // Clip 0 if there is one; `None` poses the character at rest.
    let clip = (!scene.clips().is_empty()).then_some(0);
    let duration = clip.map_or(0.0, |c| scene.clips()[c].duration());

    for step in 0..4 {
        let t = step as f32 * duration / 4.0;
        // Sample the clip at t, compute model matrices and palettes, and skin every primitive.
        scene.evaluate(clip, t, Wrap::Loop, &mut frame)?;
        println!("t = {t:.3} s");
        for (primitive, skinned) in scene.primitives().iter().zip(frame.meshes()) {
            let Some((min, max)) = skinned.bounds() else {
                continue;
            };
            println!(
                "  node {} mesh {} primitive {}: {} vertices, min {min:.3}, max {max:.3}",
                primitive.node(),
                primitive.mesh(),
                primitive.primitive(),
                skinned.positions.len()
            );
        }
    }
    Ok(())
}
