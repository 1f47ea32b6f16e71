//! Issue 17's glTF files beyond skinned primitives, generated here (JSON plus an embedded base64
//! buffer): rigid meshes under animated joints, static meshes, multi-primitive meshes, and morph targets
//! on skinned and rigid meshes with their weights animated under STEP, LINEAR and CUBICSPLINE, each
//! checked against values computed by hand in the test. Then the typed errors of broken morph data, and
//! RobotExpressive's 19 drawn primitives when `../shared/assets` is present.
#![cfg(feature = "gltf")]

use base64::Engine as _;
use glam::{Quat, Vec3};
use ispc_skinning::gltf::{GltfError, GltfScene, PrimitiveKind, Wrap};
use ispc_skinning::{Backend, Error, Isa, Renormalize};
use serde_json::{json, Value};

/// The hand-computed normals and tangents are unit vectors, so the frames ask for them (the runtime's
/// default leaves skinned and transformed directions as they come).
const UNIT: Renormalize = Renormalize::Precise;

/// Builds a glTF: binary data goes into one buffer, embedded as a base64 data URI.
#[derive(Default)]
struct Builder {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Builder {
    fn raw(&mut self, bytes: &[u8], component: u32, count: usize, ty: &str) -> usize {
        while self.bin.len() % 4 != 0 {
            self.bin.push(0);
        }
        self.views
            .push(json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()}));
        self.bin.extend_from_slice(bytes);
        self.accessors.push(json!({"bufferView": self.views.len() - 1, "componentType": component, "count": count, "type": ty}));
        self.accessors.len() - 1
    }

    fn f32s(&mut self, data: &[f32], ty: &str) -> usize {
        let comps = match ty {
            "SCALAR" => 1,
            "VEC3" => 3,
            "VEC4" => 4,
            _ => panic!("{ty}"),
        };
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let a = self.raw(&bytes, 5126, data.len() / comps, ty);
        if ty == "VEC3" {
            let bound = |f: fn(f32, f32) -> f32, init: f32| -> Vec<f32> {
                (0..3)
                    .map(|c| data.iter().skip(c).step_by(3).copied().fold(init, f))
                    .collect()
            };
            self.accessors[a]["min"] = json!(bound(f32::min, f32::INFINITY));
            self.accessors[a]["max"] = json!(bound(f32::max, f32::NEG_INFINITY));
        }
        a
    }

    fn vec3s(&mut self, v: &[Vec3]) -> usize {
        let f: Vec<f32> = v.iter().flat_map(|p| p.to_array()).collect();
        self.f32s(&f, "VEC3")
    }

    fn u16s(&mut self, data: &[u16], ty: &str) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        self.raw(&bytes, 5123, data.len() / 4, ty)
    }

    fn gltf(&self, mut doc: Value) -> Vec<u8> {
        doc["asset"] = json!({"version": "2.0"});
        doc["bufferViews"] = json!(self.views);
        doc["accessors"] = json!(self.accessors);
        let uri = format!(
            "data:application/octet-stream;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&self.bin)
        );
        doc["buffers"] = json!([{"byteLength": self.bin.len(), "uri": uri}]);
        serde_json::to_vec(&doc).unwrap()
    }
}

fn load(bytes: &[u8]) -> GltfScene {
    GltfScene::from_slice(bytes).unwrap_or_else(|e| panic!("{e}"))
}

fn gltf_err(bytes: &[u8]) -> GltfError {
    match GltfScene::from_slice(bytes) {
        Err(Error::Gltf(e)) => e,
        Err(e) => panic!("expected a glTF error, got {e}"),
        Ok(_) => panic!("expected an error, the file loaded"),
    }
}

/// The reference and every ISA this CPU runs.
fn backends() -> Vec<Backend> {
    std::iter::once(Backend::Reference)
        .chain(Isa::available().into_iter().map(Backend::Isa))
        .collect()
}

fn close(a: Vec3, b: Vec3, what: &str) {
    assert!(a.abs_diff_eq(b, 1e-5), "{what}: got {a}, want {b}");
}

const BASE: [Vec3; 3] = [Vec3::ZERO, Vec3::X, Vec3::Y];
/// Target 0 and target 1 POSITION deltas.
const D0: [Vec3; 3] = [Vec3::X, Vec3::Y, Vec3::Z];
const D1: [Vec3; 3] = [
    Vec3::new(0.0, 2.0, 0.0),
    Vec3::new(0.0, 0.0, 2.0),
    Vec3::new(2.0, 0.0, 0.0),
];

/// A triangle with two morph targets: POSITION deltas D0 and D1, and a NORMAL delta of +X on target 0
/// (the base normal is +Z). With `skinned`, the vertices are skinned by a two-joint rig whose second
/// joint is one unit up (vertex 0 on joint 0, vertex 1 on joint 1, vertex 2 half on each).
fn morph_triangle(b: &mut Builder, skinned: bool) -> Value {
    let pos = b.vec3s(&BASE);
    let nrm = b.vec3s(&[Vec3::Z; 3]);
    let d0 = b.vec3s(&D0);
    let d1 = b.vec3s(&D1);
    let n0 = b.vec3s(&[Vec3::X; 3]);
    let mut attributes = json!({"POSITION": pos, "NORMAL": nrm});
    let targets = json!([{"POSITION": d0, "NORMAL": n0}, {"POSITION": d1}]);
    if skinned {
        attributes["JOINTS_0"] = json!(b.u16s(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0], "VEC4"));
        attributes["WEIGHTS_0"] = json!(b.f32s(
            &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0],
            "VEC4"
        ));
        json!({
            "nodes": [
                {"children": [1]},
                {"translation": [0.0, 1.0, 0.0]},
                {"mesh": 0, "skin": 0}
            ],
            "meshes": [{"primitives": [{"attributes": attributes, "targets": targets}]}],
            "skins": [{"joints": [0, 1]}],
            "scenes": [{"nodes": [0, 2]}],
            "scene": 0
        })
    } else {
        json!({
            "nodes": [{"mesh": 0, "translation": [10.0, 0.0, 0.0]}],
            "meshes": [{"primitives": [{"attributes": attributes, "targets": targets}]}],
            "scenes": [{"nodes": [0]}],
            "scene": 0
        })
    }
}

/// Adds a weights animation on `node` with two keys at t = 0 and t = 1.
fn animate_weights(
    b: &mut Builder,
    doc: &mut Value,
    node: usize,
    interpolation: &str,
    values: &[f32],
) {
    let times = b.f32s(&[0.0, 1.0], "SCALAR");
    let out = b.f32s(values, "SCALAR");
    doc["animations"] = json!([{
        "samplers": [{"input": times, "output": out, "interpolation": interpolation}],
        "channels": [{"sampler": 0, "target": {"node": node, "path": "weights"}}]
    }]);
}

/// The triangle's expected world vertices for weights `w`: morphed, then placed by `place` (the rigid
/// node's translation, or the skinning of the rig).
fn expected(w: [f32; 2], skinned: bool) -> ([Vec3; 3], Vec3) {
    let morphed: [Vec3; 3] = std::array::from_fn(|i| BASE[i] + w[0] * D0[i] + w[1] * D1[i]);
    let placed = if skinned {
        // Joint 1 is one unit up: vertex 1 follows it, vertex 2 half of it.
        [morphed[0], morphed[1] + Vec3::Y, morphed[2] + 0.5 * Vec3::Y]
    } else {
        morphed.map(|p| p + Vec3::new(10.0, 0.0, 0.0))
    };
    (placed, (Vec3::Z + w[0] * Vec3::X).normalize())
}

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

/// Node 0 is a joint of a skin and rotates; node 1, its child, carries a two-primitive mesh without a
/// skin (rigid); node 2, a scene root that nothing animates, carries the same mesh (static); node 3
/// is outside the scene and is not drawn.
#[test]
fn rigid_and_static_meshes_and_multi_primitive_meshes() {
    let mut b = Builder::default();
    let pos = b.vec3s(&BASE);
    let nrm = b.vec3s(&[Vec3::Z; 3]);
    let pos2 = b.vec3s(&[Vec3::ZERO, Vec3::Z, Vec3::X]);
    let rig_pos = b.vec3s(&[Vec3::ZERO; 3]);
    let joints = b.u16s(&[0; 12], "VEC4");
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0].repeat(3), "VEC4");
    let times = b.f32s(&[0.0, 1.0], "SCALAR");
    let angle = std::f32::consts::FRAC_PI_2;
    let q = Quat::from_rotation_z(angle);
    let rotations = b.f32s(&[0.0, 0.0, 0.0, 1.0, q.x, q.y, q.z, q.w], "VEC4");
    let doc = json!({
        "nodes": [
            {"children": [1]},
            {"mesh": 0, "translation": [1.0, 0.0, 0.0], "scale": [2.0, 1.0, 1.0]},
            {"mesh": 0, "translation": [0.0, 0.0, 5.0]},
            {"mesh": 0},
            {"mesh": 1, "skin": 0}
        ],
        "meshes": [
            {"primitives": [
                {"attributes": {"POSITION": pos, "NORMAL": nrm}},
                {"attributes": {"POSITION": pos2}}
            ]},
            {"primitives": [{"attributes": {"POSITION": rig_pos, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}
        ],
        "skins": [{"joints": [0]}],
        "animations": [{
            "samplers": [{"input": times, "output": rotations}],
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}]
        }],
        "scenes": [{"nodes": [0, 2, 4]}],
        "scene": 0
    });
    let scene = load(&b.gltf(doc));
    let rigid: Vec<_> = scene
        .rigid_primitives()
        .iter()
        .map(|p| (p.node(), p.primitive(), p.is_animated()))
        .collect();
    assert_eq!(
        rigid,
        [(1, 0, true), (1, 1, true), (2, 0, false), (2, 1, false)]
    );
    for backend in backends() {
        let mut frame = scene.frame_buffers().backend(backend).renormalize(UNIT);
        scene
            .evaluate(Some(0), 1.0, Wrap::Clamp, &mut frame)
            .unwrap();
        let drawn = scene.drawn(&frame).unwrap();
        let listed: Vec<_> = drawn
            .iter()
            .map(|d| (d.node, d.primitive, d.kind))
            .collect();
        assert_eq!(
            listed,
            [
                (1, 0, PrimitiveKind::Rigid),
                (1, 1, PrimitiveKind::Rigid),
                (2, 0, PrimitiveKind::Static),
                (2, 1, PrimitiveKind::Static),
                (4, 0, PrimitiveKind::Skinned),
            ]
        );
        // Node 1 at t = 1: world = Rz(90) * T(1, 0, 0) * S(2, 1, 1). (x, y, z) -> (-y, 2x + 1, z).
        let world = |p: Vec3| Vec3::new(-p.y, 2.0 * p.x + 1.0, p.z);
        let r = frame.rigid_meshes();
        for (i, &p) in BASE.iter().enumerate() {
            close(r[0].positions[i], world(p), "rigid primitive 0");
        }
        for (i, &p) in [Vec3::ZERO, Vec3::Z, Vec3::X].iter().enumerate() {
            close(r[1].positions[i], world(p), "rigid primitive 1");
            close(
                r[3].positions[i],
                p + Vec3::new(0.0, 0.0, 5.0),
                "static primitive 1",
            );
        }
        // The normal +Z stays +Z (the rotation is about Z); a second primitive has no normals.
        for &n in r[0].normals.as_ref().unwrap() {
            close(n, Vec3::Z, "rigid normal");
        }
        assert!(r[1].normals.is_none());
    }
}

/// Non-uniform scale: normals take the inverse transpose, tangents the matrix, both renormalized, and
/// a mirroring scale flips the tangent's handedness.
#[test]
fn rigid_normals_and_tangents_under_non_uniform_and_mirroring_scale() {
    let mut b = Builder::default();
    let pos = b.vec3s(&BASE);
    // A normal on the diagonal of the xy plane, and a tangent along the other diagonal.
    let n = Vec3::new(1.0, 1.0, 0.0).normalize();
    let t = Vec3::new(1.0, -1.0, 0.0).normalize();
    let nrm = b.vec3s(&[n; 3]);
    let tan = b.f32s(&[t.x, t.y, t.z, 1.0].repeat(3), "VEC4");
    let doc = json!({
        "nodes": [{"mesh": 0, "scale": [-2.0, 1.0, 1.0]}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos, "NORMAL": nrm, "TANGENT": tan}}]}],
        "scenes": [{"nodes": [0]}]
    });
    let scene = load(&b.gltf(doc));
    for backend in backends() {
        let mut frame = scene.frame_buffers().backend(backend).renormalize(UNIT);
        scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
        let out = &frame.rigid_meshes()[0];
        // Inverse transpose of diag(-2, 1, 1) is diag(-0.5, 1, 1).
        let want_n = Vec3::new(-0.5 * n.x, n.y, 0.0).normalize();
        let want_t = Vec3::new(-2.0 * t.x, t.y, 0.0).normalize();
        for (&got_n, got_t) in out
            .normals
            .as_ref()
            .unwrap()
            .iter()
            .zip(out.tangents.as_ref().unwrap())
        {
            close(got_n, want_n, "normal");
            close(got_t.truncate(), want_t, "tangent");
            assert_eq!(got_t.w, -1.0, "mirrored handedness");
            assert!(
                got_n.dot(got_t.truncate()).abs() < 1e-5,
                "still perpendicular"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Broken morph data: typed errors, never a panic.

#[test]
fn morph_target_counts_that_differ_between_primitives_are_refused() {
    let mut b = Builder::default();
    let mut doc = morph_triangle(&mut b, false);
    let prim = doc["meshes"][0]["primitives"][0].clone();
    let mut second = prim.clone();
    second["targets"] = json!([prim["targets"][0].clone()]);
    doc["meshes"][0]["primitives"] = json!([prim, second]);
    let e = gltf_err(&b.gltf(doc));
    assert_eq!(
        e,
        GltfError::MorphTargetCounts {
            mesh: 0,
            primitive: 1,
            targets: 1,
            first: 2
        }
    );
    assert!(
        e.to_string()
            .contains("primitive 1 has 1 morph target but primitive 0 has 2"),
        "{e}"
    );
}

#[test]
fn delta_accessors_of_the_wrong_count_type_or_value_are_refused() {
    // Two deltas for three vertices.
    let mut b = Builder::default();
    let mut doc = morph_triangle(&mut b, false);
    let short = b.vec3s(&[Vec3::X, Vec3::Y]);
    doc["meshes"][0]["primitives"][0]["targets"][1]["POSITION"] = json!(short);
    let e = gltf_err(&b.gltf(doc));
    assert_eq!(
        e,
        GltfError::MorphDeltas {
            mesh: 0,
            primitive: 0,
            target: 1,
            attribute: "POSITION",
            count: 2,
            vertices: 3
        },
        "{e}"
    );
    // VEC4 deltas.
    let mut b = Builder::default();
    let mut doc = morph_triangle(&mut b, false);
    let vec4 = b.f32s(&[0.0; 12], "VEC4");
    doc["meshes"][0]["primitives"][0]["targets"][0]["NORMAL"] = json!(vec4);
    let e = gltf_err(&b.gltf(doc));
    assert!(
        matches!(
            &e,
            GltfError::AccessorFormat {
                usage: "morph target NORMAL deltas",
                ..
            }
        ),
        "{e}"
    );
    // A NaN delta.
    let mut b = Builder::default();
    let mut doc = morph_triangle(&mut b, false);
    let bytes: Vec<u8> = [0.0f32, 0.0, 0.0, 0.0, f32::NAN, 0.0, 0.0, 0.0, 0.0]
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    let nan = b.raw(&bytes, 5126, 3, "VEC3");
    doc["meshes"][0]["primitives"][0]["targets"][0]["POSITION"] = json!(nan);
    let e = gltf_err(&b.gltf(doc));
    assert_eq!(
        e,
        GltfError::MorphDeltaValue {
            mesh: 0,
            primitive: 0,
            target: 0,
            attribute: "POSITION",
            vertex: 1
        },
        "{e}"
    );
}

#[test]
fn weights_channels_whose_key_count_does_not_match_the_targets_are_refused() {
    for (interpolation, values) in [
        ("LINEAR", 3usize), // not 2 keys x 2 targets
        ("STEP", 2),        // one weight per key
        ("CUBICSPLINE", 4), // needs 3 x 2 x 2 = 12
    ] {
        let mut b = Builder::default();
        let mut doc = morph_triangle(&mut b, false);
        animate_weights(&mut b, &mut doc, 0, interpolation, &vec![0.5; values]);
        let e = gltf_err(&b.gltf(doc));
        assert_eq!(
            e,
            GltfError::WeightKeys {
                animation: 0,
                sampler: 0,
                node: 0,
                times: 2,
                values,
                targets: 2
            },
            "{interpolation}"
        );
        assert!(
            e.to_string().contains("one output per key and target"),
            "{e}"
        );
    }
    // A weights channel on a node whose mesh has no targets.
    let mut b = Builder::default();
    let mut doc = morph_triangle(&mut b, false);
    doc["meshes"][0]["primitives"][0]
        .as_object_mut()
        .unwrap()
        .remove("targets");
    animate_weights(&mut b, &mut doc, 0, "LINEAR", &[0.0, 1.0]);
    assert!(matches!(
        gltf_err(&b.gltf(doc)),
        GltfError::WeightKeys { targets: 0, .. }
    ));
}

#[test]
fn mesh_and_node_weights_of_the_wrong_length_are_refused() {
    let mut b = Builder::default();
    let mut doc = morph_triangle(&mut b, false);
    doc["meshes"][0]["weights"] = json!([0.5]);
    let e = gltf_err(&b.gltf(doc.clone()));
    assert_eq!(
        e,
        GltfError::MorphWeights {
            mesh: 0,
            node: None,
            weights: 1,
            targets: 2
        }
    );
    doc["meshes"][0]["weights"] = json!([0.5, 0.5]);
    doc["nodes"][0]["weights"] = json!([0.5, 0.5, 0.5]);
    let e = gltf_err(&b.gltf(doc));
    assert_eq!(
        e,
        GltfError::MorphWeights {
            mesh: 0,
            node: Some(0),
            weights: 3,
            targets: 2
        }
    );
    assert!(
        e.to_string()
            .contains("node 0 (mesh 0): 3 weights for 2 morph targets"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------------
// The real asset.

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
