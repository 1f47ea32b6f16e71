//! The glTF runner shared by `gltf_json` and `gltf_glb`: load bytes, and if they load, evaluate a
//! frame and a small crowd on `Backend::Auto` and `Backend::Reference`.

use ispc_skinning::gltf::{GltfScene, Wrap};
use ispc_skinning::{Backend, Error, Threads};

/// Crowd instances per loaded scene.
const INSTANCES: usize = 3;
/// Skinned vertices (all instances) past which the crowd is skipped: the crowd triples a frame's
/// output, and a file may legitimately ask for up to `MAX_SKINNED_VERTICES` in one frame; that
/// multiplier is the harness's, not the file's.
const CROWD_VERTEX_BUDGET: usize = 1 << 22;

/// Loads `data` with [`GltfScene::from_slice`]. A load returns `Ok` or a typed `Err`; a loaded scene
/// must evaluate a frame (clip 0 or the rest pose, at a time taken from the input's last bytes) and,
/// when it has clips, a crowd of three instances, on both backends, with `Ok`, or with
/// [`Error::ResultNotFinite`] where the file's finite values overflow `f32` together (a chain of huge
/// scales or translations: the numeric rules refuse such a result instead of returning it).
pub fn load_and_run(data: &[u8]) {
    let Ok(scene) = GltfScene::from_slice(data) else {
        return;
    };
    // The last four bytes choose the time (finite, in [-0.5, 3.5] s) and the wrap mode.
    let tail = data.len().saturating_sub(4);
    let mut word = [0u8; 4];
    word[..data.len() - tail].copy_from_slice(&data[tail..]);
    let bits = u32::from_le_bytes(word);
    let time = (bits >> 1) as f32 / (u32::MAX >> 1) as f32 * 4.0 - 0.5;
    let wrap = if bits & 1 == 0 {
        Wrap::Clamp
    } else {
        Wrap::Loop
    };
    let clip = (!scene.clips().is_empty()).then_some(0);

    for (backend, threads) in [
        (Backend::Auto, Threads::All),
        (Backend::Reference, Threads::One),
    ] {
        let mut frame = scene.frame_buffers();
        frame.backend = backend;
        frame.threads = threads;
        match scene.evaluate(clip, time, wrap, &mut frame) {
            Ok(()) => {}
            Err(Error::ResultNotFinite { .. }) => continue,
            Err(e) => panic!(
                "a loaded scene fails to evaluate clip {clip:?} at {time} on {backend:?}: {e}"
            ),
        }
        assert_eq!(frame.meshes().len(), scene.primitives().len());

        let vertices: usize = frame.meshes().iter().map(|m| m.positions.len()).sum();
        if scene.clips().is_empty() || vertices.saturating_mul(INSTANCES) > CROWD_VERTEX_BUDGET {
            continue;
        }
        // Each instance plays a clip of its own at a time of its own.
        let clips: Vec<usize> = (0..INSTANCES).map(|i| i % scene.clips().len()).collect();
        let times: Vec<f32> = (0..INSTANCES).map(|i| time + 0.37 * i as f32).collect();
        let mut crowd = match scene.crowd_buffers(INSTANCES) {
            Ok(crowd) => crowd,
            Err(_) => continue,
        };
        crowd.backend = backend;
        crowd.threads = threads;
        match scene.evaluate_crowd(&clips, &times, wrap, &mut crowd) {
            Ok(()) | Err(Error::ResultNotFinite { .. }) => {}
            Err(e) => panic!("a loaded scene fails to evaluate a crowd on {backend:?}: {e}"),
        }
    }
}
