//! The real asset: RobotExpressive (from `../shared/assets`, skipped visibly when absent) draws its 19
//! primitives, 15 of them rigid and some with three morph targets, at any clip and time, finite, and
//! every ISA agrees with the reference within 1e-5 of the scene's size.

use ispc_skinning::gltf::{GltfScene, Wrap};
use ispc_skinning::{Backend, Isa};

#[test]
fn robot_expressive_draws_all_19_primitives_at_any_clip_and_time() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/assets/RobotExpressive/RobotExpressive.glb");
    if !path.is_file() {
        eprintln!("skipped: {} is absent", path.display());
        return;
    }
    let scene = GltfScene::load(&path).unwrap();
    assert_eq!(scene.primitives().len(), 4);
    assert_eq!(scene.rigid_primitives().len(), 15);
    // The head meshes have 3 morph targets each.
    let morphed = scene
        .rigid_primitives()
        .iter()
        .filter(|p| {
            p.rigid_mesh()
                .morph_targets()
                .is_some_and(|m| m.count() == 3)
        })
        .count();
    assert!(morphed > 0);
    let mut reference = scene.frame_buffers().backend(Backend::Reference);
    for clip in 0..scene.clips().len() {
        let t = scene.clips()[clip].duration() * 0.37;
        scene
            .evaluate(Some(clip), t, Wrap::Clamp, &mut reference)
            .unwrap();
        let drawn = scene.drawn(&reference).unwrap();
        assert_eq!(drawn.len(), 19, "clip {clip}");
        for d in &drawn {
            assert!(
                d.vertices.positions.iter().all(|p| p.is_finite()),
                "clip {clip} node {}",
                d.node
            );
        }
        let size = reference
            .bounds()
            .map(|(lo, hi)| (hi - lo).length())
            .unwrap();
        for isa in Isa::available() {
            let mut frame = scene.frame_buffers().backend(isa);
            scene
                .evaluate(Some(clip), t, Wrap::Clamp, &mut frame)
                .unwrap();
            for (r, o) in reference.rigid_meshes().iter().zip(frame.rigid_meshes()) {
                for (a, b) in r.positions.iter().zip(&o.positions) {
                    assert!((*a - *b).length() <= 1e-5 * size, "{isa} clip {clip}");
                }
            }
        }
    }
}
