//! Morph weights on a rigid and a skinned triangle: animated under STEP, LINEAR and CUBICSPLINE (on
//! every backend, in a frame and in a crowd whose instances sample their own times), blended by
//! `Character::play` (layers, additive layers, weights set by hand, refused weight sets), the mesh's
//! default weights overridden by the node's, and sparse morph deltas on top of zeros.

use super::{
    animate_weights, backends, close, expected, load, morph_triangle, Builder, BASE, UNIT,
};
use glam::Vec3;
use ispc_skinning::gltf::{GltfScene, Wrap};
use ispc_skinning::Error;
use serde_json::json;

/// Runs the clip at `time` on every backend and checks the triangle against `expected(w)`.
fn check_frame(scene: &GltfScene, skinned: bool, time: f32, w: [f32; 2], what: &str) {
    for backend in backends() {
        let mut frame = scene.frame_buffers().backend(backend).renormalize(UNIT);
        scene
            .evaluate(Some(0), time, Wrap::Clamp, &mut frame)
            .unwrap();
        let out = if skinned {
            assert_eq!(frame.mesh_weights(0).unwrap(), &w, "{what}");
            &frame.meshes()[0]
        } else {
            assert_eq!(frame.rigid_weights(0).unwrap(), &w, "{what}");
            &frame.rigid_meshes()[0]
        };
        let (want, normal) = expected(w, skinned);
        for (i, (&got, &want)) in out.positions.iter().zip(&want).enumerate() {
            close(got, want, &format!("{what} {} vertex {i}", backend.name()));
        }
        for &n in out.normals.as_ref().unwrap() {
            close(n, normal, &format!("{what} {} normal", backend.name()));
        }
        // A crowd samples each instance's weights from its clip as the frame does, and morphs with them:
        // instances 0 and 2 at `time`, instance 1 at time 0, which a single frame gives here.
        let mut crowd = scene
            .crowd_buffers(3)
            .unwrap()
            .backend(backend)
            .renormalize(UNIT);
        scene
            .evaluate_crowd(&[0, 0, 0], &[time, 0.0, time], Wrap::Clamp, &mut crowd)
            .unwrap();
        let mut at_zero = scene.frame_buffers().backend(backend).renormalize(UNIT);
        scene
            .evaluate(Some(0), 0.0, Wrap::Clamp, &mut at_zero)
            .unwrap();
        let zero = if skinned {
            (
                crowd.mesh_weights(0, 1),
                at_zero.mesh_weights(0),
                crowd.positions(0, 1),
                &at_zero.meshes()[0],
            )
        } else {
            (
                crowd.rigid_weights(0, 1),
                at_zero.rigid_weights(0),
                crowd.rigid_positions(0, 1),
                &at_zero.rigid_meshes()[0],
            )
        };
        assert_eq!(zero.0, zero.1, "{what} crowd instance 1 at time 0");
        for (v, (&got, &want)) in zero.2.unwrap().iter().zip(&zero.3.positions).enumerate() {
            close(
                got,
                want,
                &format!("{what} crowd instance 1 at time 0, vertex {v}"),
            );
        }
        for i in [0, 2] {
            let at = format!("{what} {} crowd instance {i}", backend.name());
            let (positions, normals) = if skinned {
                assert_eq!(crowd.mesh_weights(0, i).unwrap(), &w, "{at}");
                (crowd.positions(0, i), crowd.normals(0, i))
            } else {
                assert_eq!(crowd.rigid_weights(0, i).unwrap(), &w, "{at}");
                (crowd.rigid_positions(0, i), crowd.rigid_normals(0, i))
            };
            for (v, (&got, &want)) in positions.unwrap().iter().zip(&want).enumerate() {
                close(got, want, &format!("{at} vertex {v}"));
            }
            for &n in normals.unwrap() {
                close(n, normal, &format!("{at} normal"));
            }
        }
    }
}

#[test]
fn animated_morph_weights_under_every_interpolation_on_rigid_and_skinned_meshes() {
    for skinned in [false, true] {
        let node = if skinned { 2 } else { 0 };
        let kind = if skinned { "skinned" } else { "rigid" };
        // LINEAR: key 0 = (0, 0), key 1 = (1, 0.5); at t = 0.25, (0.25, 0.125).
        let mut b = Builder::default();
        let mut doc = morph_triangle(&mut b, skinned);
        animate_weights(&mut b, &mut doc, node, "LINEAR", &[0.0, 0.0, 1.0, 0.5]);
        let scene = load(&b.gltf(doc));
        check_frame(
            &scene,
            skinned,
            0.25,
            [0.25, 0.125],
            &format!("{kind} LINEAR"),
        );
        check_frame(
            &scene,
            skinned,
            1.0,
            [1.0, 0.5],
            &format!("{kind} LINEAR end"),
        );
        check_frame(
            &scene,
            skinned,
            0.0,
            [0.0, 0.0],
            &format!("{kind} LINEAR zero"),
        );

        // STEP: key 0 = (0.5, 0) holds until t = 1, where key 1 = (1, 1) starts.
        let mut b = Builder::default();
        let mut doc = morph_triangle(&mut b, skinned);
        animate_weights(&mut b, &mut doc, node, "STEP", &[0.5, 0.0, 1.0, 1.0]);
        let scene = load(&b.gltf(doc));
        check_frame(&scene, skinned, 0.75, [0.5, 0.0], &format!("{kind} STEP"));
        check_frame(
            &scene,
            skinned,
            1.0,
            [1.0, 1.0],
            &format!("{kind} STEP end"),
        );

        // CUBICSPLINE, per key: in-tangents (2), values (2), out-tangents (2).
        // key 0: in (0, 0), value (0, 0), out (1, 0); key 1: in (0, 2), value (1, 1), out (0, 0).
        // At u = 0.5 (dt = 1): h00 = 0.5, h10 = 0.125, h01 = 0.5, h11 = -0.125, so
        // w0 = 0.125 * 1 + 0.5 * 1 = 0.625 and w1 = 0.5 * 1 - 0.125 * 2 = 0.25.
        let mut b = Builder::default();
        let mut doc = morph_triangle(&mut b, skinned);
        let keys = [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 1.0, 1.0, 0.0, 0.0];
        animate_weights(&mut b, &mut doc, node, "CUBICSPLINE", &keys);
        let scene = load(&b.gltf(doc));
        check_frame(
            &scene,
            skinned,
            0.5,
            [0.625, 0.25],
            &format!("{kind} CUBICSPLINE"),
        );
        check_frame(
            &scene,
            skinned,
            1.0,
            [1.0, 1.0],
            &format!("{kind} CUBICSPLINE end"),
        );
    }
}

/// `Character::play` of the scene's runtime clip drives the node's morph weights (weight set n is node
/// n): one layer gives the sampled weights; two normal layers their weighted mean; an additive layer
/// adds its weights times its layer weight; a clip without weight tracks, and weights set by hand
/// after `play`, are left alone; a clip's set that the character does not have is refused.
#[test]
fn played_clips_blend_the_nodes_morph_weights() {
    use ispc_skinning::{ClipLayer, Wrap as ClipWrap};
    for skinned in [false, true] {
        let node = if skinned { 2 } else { 0 };
        let mut b = Builder::default();
        let mut doc = morph_triangle(&mut b, skinned);
        // LINEAR: (0, 0) at t = 0, (1, 0.5) at t = 1.
        animate_weights(&mut b, &mut doc, node, "LINEAR", &[0.0, 0.0, 1.0, 0.5]);
        let scene = load(&b.gltf(doc));
        let clip = scene.runtime_clip(0).unwrap();
        let character = scene.character();
        let weights = |frame: &ispc_skinning::Frame| -> Vec<f32> {
            if skinned {
                frame.mesh_weights(0).unwrap().to_vec()
            } else {
                frame.rigid_weights(0).unwrap().to_vec()
            }
        };
        let at = |t: f32| ClipLayer::new(&clip, t).wrap(ClipWrap::Clamp);
        for backend in backends() {
            let what = format!(
                "{} {}",
                if skinned { "skinned" } else { "rigid" },
                backend.name()
            );
            let mut frame = scene.frame_buffers().backend(backend);
            character.play(&mut frame, &[at(0.25)], &[]).unwrap();
            assert_eq!(weights(&frame), [0.25, 0.125], "{what}: one layer");
            character
                .play(
                    &mut frame,
                    &[at(0.25).weight(1.0), at(1.0).weight(3.0)],
                    &[],
                )
                .unwrap();
            let want = [(0.25 + 3.0) / 4.0, (0.125 + 1.5) / 4.0];
            let got = weights(&frame);
            for (g, w) in got.iter().zip(want) {
                assert!(
                    (g - w).abs() < 1e-6,
                    "{what}: two layers {got:?}, want {want:?}"
                );
            }
            character
                .play(&mut frame, &[at(0.25)], &[at(1.0).weight(0.5)])
                .unwrap();
            assert_eq!(weights(&frame), [0.75, 0.375], "{what}: additive");
            // Additive layers alone go on the mesh's default weights (zeros here), not on what the
            // frame holds: playing them twice gives the same weights.
            for _ in 0..2 {
                character
                    .play(&mut frame, &[], &[at(1.0).weight(0.5)])
                    .unwrap();
                assert_eq!(weights(&frame), [0.5, 0.25], "{what}: additive alone");
            }

            // Weights set by hand after play stay for evaluate; a clip without weight tracks keeps them.
            if skinned {
                frame.set_mesh_weights(0, &[0.5, 0.5]).unwrap();
            } else {
                frame.set_rigid_weights(0, &[0.5, 0.5]).unwrap();
            }
            let mut still = ispc_skinning::Clip::builder(scene.skeleton());
            still
                .translation(
                    0,
                    ispc_skinning::Interpolation::Linear,
                    &[0.0],
                    &[Vec3::new(10.0, 0.0, 0.0)],
                )
                .unwrap();
            let still = still.build();
            character
                .play(&mut frame, &[ClipLayer::new(&still, 0.0)], &[])
                .unwrap();
            assert_eq!(weights(&frame), [0.5, 0.5], "{what}: by hand");

            // A weight set beyond the character's, and one of the wrong target count.
            let mut far = ispc_skinning::Clip::builder(scene.skeleton());
            far.weights(
                50,
                2,
                ispc_skinning::Interpolation::Step,
                &[0.0],
                &[1.0, 1.0],
            )
            .unwrap();
            let far = far.build();
            let e = character
                .play(&mut frame, &[ClipLayer::new(&far, 0.0)], &[])
                .unwrap_err();
            assert!(
                matches!(e, Error::CountMismatch { got: 51, .. }),
                "{what}: {e}"
            );
            let mut three = ispc_skinning::Clip::builder(scene.skeleton());
            three
                .weights(
                    node,
                    3,
                    ispc_skinning::Interpolation::Step,
                    &[0.0],
                    &[1.0, 1.0, 1.0],
                )
                .unwrap();
            let three = three.build();
            let e = character
                .play(&mut frame, &[ClipLayer::new(&three, 0.0)], &[])
                .unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::CountMismatch {
                        expected: 3,
                        got: 2,
                        ..
                    }
                ),
                "{what}: {e}"
            );
            assert_eq!(
                weights(&frame),
                [0.5, 0.5],
                "{what}: a refused play writes no weights"
            );
        }
    }
}

#[test]
fn mesh_weights_are_the_default_and_node_weights_override_them() {
    for skinned in [false, true] {
        let node = if skinned { 2 } else { 0 };
        let mut b = Builder::default();
        let mut doc = morph_triangle(&mut b, skinned);
        doc["meshes"][0]["weights"] = json!([0.5, 0.25]);
        let scene = load(&b.gltf(doc.clone()));
        let mut frame = scene.frame_buffers();
        scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
        let out = if skinned {
            &frame.meshes()[0]
        } else {
            &frame.rigid_meshes()[0]
        };
        let (want, _) = expected([0.5, 0.25], skinned);
        for (&got, &want) in out.positions.iter().zip(&want) {
            close(got, want, "mesh weights");
        }
        doc["nodes"][node]["weights"] = json!([0.0, 1.0]);
        let scene = load(&b.gltf(doc));
        let mut frame = scene.frame_buffers();
        scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
        let out = if skinned {
            &frame.meshes()[0]
        } else {
            &frame.rigid_meshes()[0]
        };
        let (want, _) = expected([0.0, 1.0], skinned);
        for (&got, &want) in out.positions.iter().zip(&want) {
            close(got, want, "node weights");
        }
    }
}

#[test]
fn sparse_morph_deltas_apply_on_top_of_zeros() {
    // Target 1 as a sparse accessor without a buffer view: zeros, with vertex 2 set to (0, 0, 4).
    let mut b = Builder::default();
    let mut doc = morph_triangle(&mut b, false);
    let idx = b.raw(&[2u8, 0, 0, 0], 5121, 1, "SCALAR");
    let vals = b.f32s(&[0.0, 0.0, 4.0], "SCALAR");
    let (iview, vview) = (
        b.accessors[idx]["bufferView"].clone(),
        b.accessors[vals]["bufferView"].clone(),
    );
    b.accessors.push(json!({"componentType": 5126, "count": 3, "type": "VEC3",
        "sparse": {"count": 1, "indices": {"bufferView": iview, "componentType": 5121}, "values": {"bufferView": vview}}}));
    doc["meshes"][0]["primitives"][0]["targets"][1]["POSITION"] = json!(b.accessors.len() - 1);
    doc["meshes"][0]["weights"] = json!([0.0, 0.5]);
    let scene = load(&b.gltf(doc));
    for backend in backends() {
        let mut frame = scene.frame_buffers().backend(backend).renormalize(UNIT);
        scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
        let p = &frame.rigid_meshes()[0].positions;
        let t = Vec3::new(10.0, 0.0, 0.0);
        close(p[0], BASE[0] + t, "vertex 0");
        close(p[1], BASE[1] + t, "vertex 1");
        close(p[2], BASE[2] + Vec3::new(0.0, 0.0, 2.0) + t, "vertex 2");
    }
}
