//! glTF import, sampling and whole frames: on the shared real assets (skipped when absent) and on small
//! files that the tests build themselves, including broken ones.
#![cfg(feature = "gltf")]

mod common;

use base64::Engine as _;
use glam::{Mat4, Quat, Vec3};
use ispc_skinning::gltf::{GltfError, GltfScene, Interpolation, LoadOptions, Property, Wrap};
use ispc_skinning::{Backend, Error, Frame, Isa, Renormalize};
use serde_json::{json, Value};
use std::path::PathBuf;

// ---------------------------------------------------------------------------------------------------
// The shared assets.

const ASSETS: [&str; 5] = [
    "SimpleSkin/SimpleSkin.gltf",
    "RiggedSimple/RiggedSimple.glb",
    "RiggedFigure/RiggedFigure.glb",
    "CesiumMan/CesiumMan.glb",
    "Fox/Fox.glb",
];

/// The asset paths, or `None` when the assets folder is absent, as on a fresh machine; the test then
/// returns early and `common::assets` reports the skip on stderr.
fn assets() -> Option<Vec<PathBuf>> {
    let dir = common::assets()?;
    Some(ASSETS.iter().map(|a| dir.join(a)).collect())
}

/// Largest distance between two position lists, and the largest coordinate magnitude of the first.
fn max_diff(a: &[Vec3], b: &[Vec3]) -> (f32, f32) {
    assert_eq!(a.len(), b.len());
    let d = a
        .iter()
        .zip(b)
        .map(|(x, y)| (*x - *y).abs().max_element())
        .fold(0.0, f32::max);
    let m = a.iter().map(|x| x.abs().max_element()).fold(0.0, f32::max);
    (d, m)
}

/// Bind pose: every joint's world matrix set to the inverse of its inverse bind matrix makes every
/// palette entry the identity (up to rounding), so the skinned positions are the input positions.
/// Tolerance: 1e-5 of the mesh's extent plus 1e-5, the rounding of a matrix inverse and two products.
#[test]
fn bind_pose_reproduces_the_input_positions() {
    let Some(paths) = assets() else { return };
    for path in paths {
        let scene = GltfScene::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(!scene.primitives().is_empty(), "{}", path.display());
        for backend in common::backends() {
            let mut frame = scene.frame_buffers().backend(backend);
            scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
            // A skin's joints are node indices; the frame's model matrices are written in level order.
            for skin in scene.skins() {
                for (&node, ibm) in skin.joints().iter().zip(skin.inverse_binds()) {
                    let level = scene.level_index(node).unwrap();
                    frame.level_models_mut()[level] = ibm.inverse();
                    assert_eq!(frame.model(node), Some(ibm.inverse()));
                    assert_eq!(scene.world_matrix(&frame, node), Some(ibm.inverse()));
                }
            }
            scene.palettes(&mut frame).unwrap();
            scene.skin(&mut frame).unwrap();
            for (p, out) in scene.primitives().iter().zip(frame.meshes()) {
                let (d, m) = max_diff(p.bind_positions(), &out.positions);
                assert!(
                    d <= 1e-5 * m + 1e-5,
                    "{} {backend:?} node {}: bind pose off by {d} (extent {m})",
                    path.display(),
                    p.node()
                );
            }
        }
    }
}

/// The rest pose is not assumed to be the bind pose: RiggedSimple's differ, and skinning its rest pose
/// must move vertices away from the bind positions.
#[test]
fn rest_pose_is_not_the_bind_pose_for_rigged_simple() {
    let Some(paths) = assets() else { return };
    let scene = GltfScene::load(&paths[1]).unwrap();
    let mut frame = scene.frame_buffers().backend(Backend::Reference);
    scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
    let p = &scene.primitives()[0];
    let (d, m) = max_diff(p.bind_positions(), &frame.meshes()[0].positions);
    assert!(d > 1e-3 * m, "rest pose skinned like the bind pose ({d})");
}

/// Animated frames at several times of every clip of every asset: the reference and every ISA this CPU
/// runs agree. Tolerance: 2e-5 of the mesh's extent plus 1e-5 for positions (different operation orders
/// and FMA over a chain of up to ~10 matrix products), 1e-4 for unit normals.
#[test]
fn every_backend_agrees_on_animated_frames() {
    let Some(paths) = assets() else { return };
    for path in paths {
        let scene = GltfScene::load(&path).unwrap();
        assert!(!scene.clips().is_empty(), "{}", path.display());
        for (c, clip) in scene.clips().iter().enumerate() {
            for f in [0.0, 0.13, 0.5, 0.77, 1.0, 1.3] {
                let t = clip.start() + f * clip.duration();
                let mut reference = scene.frame_buffers().backend(Backend::Reference);
                scene
                    .evaluate(Some(c), t, Wrap::Loop, &mut reference)
                    .unwrap();
                for isa in Isa::available() {
                    let mut frame = scene.frame_buffers().backend(isa);
                    scene.evaluate(Some(c), t, Wrap::Loop, &mut frame).unwrap();
                    for (r, o) in reference.meshes().iter().zip(frame.meshes()) {
                        let (d, m) = max_diff(&r.positions, &o.positions);
                        assert!(
                            d <= 2e-5 * m + 1e-5,
                            "{} clip {c} t {t} {isa}: positions differ by {d} (extent {m})",
                            path.display()
                        );
                        if let (Some(rn), Some(on)) = (&r.normals, &o.normals) {
                            let (d, _) = max_diff(rn, on);
                            assert!(d <= 1e-4, "{} {isa}: normals differ by {d}", path.display());
                        }
                    }
                }
                // The animation moves something: a frame is not just the rest pose everywhere.
                assert!(reference
                    .meshes()
                    .iter()
                    .flat_map(|m| &m.positions)
                    .all(|p| p.is_finite()));
            }
        }
    }
}

/// One channel's raw keys: target node, "t", "r" or "s", key times, values (padded to four).
type RawChannel = (usize, &'static str, Vec<f32>, Vec<[f32; 4]>);

/// The raw keyframes of every channel, read with the gltf crate's own reader (an independent decoder).
fn raw_channels(path: &std::path::Path) -> Vec<Vec<RawChannel>> {
    let gltf = gltf::Gltf::open(path).unwrap();
    let buffers: Vec<Vec<u8>> = gltf
        .buffers()
        .map(|b| match b.source() {
            gltf::buffer::Source::Bin => gltf.blob.clone().unwrap(),
            gltf::buffer::Source::Uri(uri) => {
                let (_, data) = uri.split_once(";base64,").unwrap();
                base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap()
            }
        })
        .collect();
    gltf.animations()
        .map(|a| {
            a.channels()
                .filter_map(|ch| {
                    let reader = ch.reader(|b| Some(&buffers[b.index()]));
                    let times: Vec<f32> = reader.read_inputs()?.collect();
                    let (what, values): (&str, Vec<[f32; 4]>) = match reader.read_outputs()? {
                        gltf::animation::util::ReadOutputs::Translations(t) => {
                            ("t", t.map(|v| [v[0], v[1], v[2], 0.0]).collect())
                        }
                        gltf::animation::util::ReadOutputs::Rotations(r) => {
                            ("r", r.into_f32().collect())
                        }
                        gltf::animation::util::ReadOutputs::Scales(s) => {
                            ("s", s.map(|v| [v[0], v[1], v[2], 0.0]).collect())
                        }
                        _ => return None,
                    };
                    Some((ch.target().node().index(), what, times, values))
                })
                .collect()
        })
        .collect()
}

/// At the first and the last key time of each channel, sampling gives the keyed value exactly
/// (rotations: the key normalized, bit for bit as glam normalizes it).
#[test]
fn first_and_last_key_times_reproduce_the_keys_exactly() {
    let Some(paths) = assets() else { return };
    for path in paths {
        let scene = GltfScene::load(&path).unwrap();
        let raw = raw_channels(&path);
        assert_eq!(raw.len(), scene.clips().len());
        let mut frame = scene.frame_buffers();
        for (c, channels) in raw.iter().enumerate() {
            assert_eq!(channels.len(), scene.clips()[c].channels().len());
            for (node, what, times, values) in channels {
                for k in [0, times.len() - 1] {
                    scene
                        .sample(Some(c), times[k], Wrap::Clamp, &mut frame)
                        .unwrap();
                    let v = values[k];
                    // The frame reads back by node index.
                    let (t, r, s) = frame.local(*node).unwrap();
                    match *what {
                        "t" => assert_eq!(t, Vec3::new(v[0], v[1], v[2])),
                        "s" => assert_eq!(s, Vec3::new(v[0], v[1], v[2])),
                        _ => assert_eq!(r, Quat::from_array(v).normalize()),
                    }
                }
            }
        }
    }
}

#[test]
fn equal_key_times_share_one_track_and_sample_as_each_channel_alone() {
    let Some(paths) = assets() else { return };
    for path in paths {
        let scene = GltfScene::load(&path).unwrap();
        let mut frame = scene.frame_buffers();
        for (c, clip) in scene.clips().iter().enumerate() {
            let channels = clip.channels();
            // Equal key times are one array, whichever accessors they came from.
            for a in channels {
                for b in channels {
                    assert_eq!(
                        a.times() == b.times(),
                        a.times().as_ptr() == b.times().as_ptr(),
                        "{}",
                        path.display()
                    );
                }
            }
            // The scene looks a time up once per shared array; every channel still samples as it does
            // alone, between keys and on them.
            let (start, span) = (clip.start(), clip.duration());
            for i in 0..=16 {
                let t = start + span * i as f32 / 16.0;
                scene.sample(Some(c), t, Wrap::Clamp, &mut frame).unwrap();
                for ch in channels {
                    let v = ch.sample(t);
                    let (tr, r, s) = frame.local(ch.node()).unwrap();
                    match ch.property() {
                        Property::Translation => assert_eq!(tr, Vec3::new(v[0], v[1], v[2])),
                        Property::Scale => assert_eq!(s, Vec3::new(v[0], v[1], v[2])),
                        Property::Rotation => assert_eq!(r, Quat::from_array(v)),
                    }
                }
            }
        }
    }
    // CesiumMan's 57 channels read 19 time accessors with equal contents.
    let Some(paths) = assets() else { return };
    let scene = GltfScene::load(&paths[3]).unwrap();
    let channels = scene.clips()[0].channels();
    assert_eq!(channels.len(), 57);
    assert!(channels
        .iter()
        .all(|ch| ch.times().as_ptr() == channels[0].times().as_ptr()));
}

#[test]
fn fox_clips_are_found_by_name() {
    let Some(paths) = assets() else { return };
    let scene = GltfScene::load(&paths[4]).unwrap();
    let names: Vec<_> = scene.clips().iter().map(|c| c.name().unwrap()).collect();
    assert_eq!(names, ["Survey", "Walk", "Run"]);
    assert_eq!(scene.find_clip("Run"), Some(2));
    let walk = &scene.clips()[1];
    assert!(
        (walk.duration() - 0.708).abs() < 0.01,
        "{}",
        walk.duration()
    );
}

#[test]
fn loading_from_bytes_equals_loading_from_the_path() {
    let Some(paths) = assets() else { return };
    // SimpleSkin's buffers are data URIs and the rest are GLB, so every asset loads from bytes alone.
    for path in paths {
        let a = GltfScene::load(&path).unwrap();
        let b = GltfScene::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let mut fa = a.frame_buffers().backend(Backend::Reference);
        let mut fb = b.frame_buffers().backend(Backend::Reference);
        a.evaluate(Some(0), 0.3, Wrap::Loop, &mut fa).unwrap();
        b.evaluate(Some(0), 0.3, Wrap::Loop, &mut fb).unwrap();
        assert_eq!(fa.meshes(), fb.meshes());
    }
}

// ---------------------------------------------------------------------------------------------------
// Small files built here.

/// Builds a glTF: binary data goes into one buffer, embedded as a base64 data URI (or a GLB BIN chunk).
#[derive(Default)]
struct Builder {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Builder {
    fn raw(
        &mut self,
        bytes: &[u8],
        component: u32,
        count: usize,
        ty: &str,
        normalized: bool,
    ) -> usize {
        while self.bin.len() % 4 != 0 {
            self.bin.push(0);
        }
        self.views
            .push(json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()}));
        self.bin.extend_from_slice(bytes);
        let mut a = json!({"bufferView": self.views.len() - 1, "componentType": component, "count": count, "type": ty});
        if normalized {
            a["normalized"] = json!(true);
        }
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    fn comps(ty: &str) -> usize {
        match ty {
            "SCALAR" => 1,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            _ => panic!("{ty}"),
        }
    }

    fn f32s(&mut self, data: &[f32], ty: &str) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let a = self.raw(&bytes, 5126, data.len() / Self::comps(ty), ty, false);
        // The spec (and the gltf crate's validation) requires bounds on POSITION accessors.
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

    fn u8s(&mut self, data: &[u8], ty: &str, normalized: bool) -> usize {
        self.raw(data, 5121, data.len() / Self::comps(ty), ty, normalized)
    }

    fn u16s(&mut self, data: &[u16], ty: &str, normalized: bool) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        self.raw(&bytes, 5123, data.len() / Self::comps(ty), ty, normalized)
    }

    fn document(&self, mut doc: Value) -> Value {
        doc["asset"] = json!({"version": "2.0"});
        doc["bufferViews"] = json!(self.views);
        doc["accessors"] = json!(self.accessors);
        doc
    }

    /// A .gltf with the buffer as a data URI.
    fn gltf(&self, doc: Value) -> Vec<u8> {
        let mut doc = self.document(doc);
        let uri = format!(
            "data:application/octet-stream;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&self.bin)
        );
        doc["buffers"] = json!([{"byteLength": self.bin.len(), "uri": uri}]);
        serde_json::to_vec(&doc).unwrap()
    }

    /// A .glb with the buffer as the BIN chunk.
    fn glb(&self, doc: Value) -> Vec<u8> {
        let mut doc = self.document(doc);
        doc["buffers"] = json!([{"byteLength": self.bin.len()}]);
        let mut json = serde_json::to_vec(&doc).unwrap();
        while json.len() % 4 != 0 {
            json.push(b' ');
        }
        let mut bin = self.bin.clone();
        while bin.len() % 4 != 0 {
            bin.push(0);
        }
        let total = 12 + 8 + json.len() + 8 + bin.len();
        let mut out = Vec::new();
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&json);
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
        out
    }
}

/// A two-joint rig: node 0 (joint, root), node 1 (joint, child of 0), node 2 (skinned mesh, with its
/// own transform, which must not apply). Three vertices on joint 0, joint 1, and half each.
fn two_joint_rig(b: &mut Builder) -> Value {
    let pos = b.f32s(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0], "VEC3");
    let joints = b.u16s(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0], "VEC4", false);
    let weights = b.f32s(
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0],
        "VEC4",
    );
    json!({
        "nodes": [
            {"children": [1]},
            {"translation": [0.0, 1.0, 0.0]},
            {"mesh": 0, "skin": 0, "translation": [100.0, 0.0, 0.0]}
        ],
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}],
        "skins": [{"joints": [0, 1]}],
        "scenes": [{"nodes": [0, 2]}],
        "scene": 0
    })
}

fn load(bytes: &[u8]) -> GltfScene {
    GltfScene::from_slice(bytes).unwrap_or_else(|e| panic!("{e}"))
}

/// Asserts that loading gives a glTF error matching the pattern, printing the error otherwise.
macro_rules! expect_err {
    ($bytes:expr, $($pattern:tt)+) => {{
        let e = gltf_err($bytes);
        assert!(matches!(&e, $($pattern)+), "got: {e}");
    }};
}

fn gltf_err(bytes: &[u8]) -> GltfError {
    match GltfScene::from_slice(bytes) {
        Err(Error::Gltf(e)) => e,
        Err(e) => panic!("expected a glTF error, got {e}"),
        Ok(_) => panic!("expected an error, the file loaded"),
    }
}

#[test]
fn step_and_cubic_spline_samplers_match_hand_computed_values() {
    let mut b = Builder::default();
    let mut doc = two_joint_rig(&mut b);
    let t_step = b.f32s(&[0.0, 1.0, 2.0], "SCALAR");
    let v_step = b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0], "VEC3");
    let t_cubic = b.f32s(&[0.0, 2.0], "SCALAR");
    // Key 0: in-tangent 0, value 0, out-tangent (1,0,0). Key 1: in-tangent (3,0,0), value (2,0,0).
    let v_cubic = b.f32s(
        &[
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 3.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0,
            0.0,
        ],
        "VEC3",
    );
    let s = std::f32::consts::FRAC_1_SQRT_2;
    // Rotation from the identity to 90 degrees about z, zero tangents.
    let v_cubic_rot = b.f32s(
        &[
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
            0.0, s, s, 0.0, 0.0, 0.0, 0.0,
        ],
        "VEC4",
    );
    // LINEAR rotation whose second key is the negated 90-degree quaternion: the shorter arc is the same.
    let v_lin_rot = b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -s, -s], "VEC4");
    doc["animations"] = json!([
        {"name": "step", "samplers": [{"input": t_step, "output": v_step, "interpolation": "STEP"}],
         "channels": [{"sampler": 0, "target": {"node": 1, "path": "translation"}}]},
        {"name": "cubic", "samplers": [
            {"input": t_cubic, "output": v_cubic, "interpolation": "CUBICSPLINE"},
            {"input": t_cubic, "output": v_cubic_rot, "interpolation": "CUBICSPLINE"}],
         "channels": [{"sampler": 0, "target": {"node": 1, "path": "translation"}},
                      {"sampler": 1, "target": {"node": 0, "path": "rotation"}}]},
        {"name": "linear", "samplers": [{"input": t_cubic, "output": v_lin_rot}],
         "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}]}
    ]);
    let scene = load(&b.gltf(doc));
    assert_eq!(scene.clips().len(), 3);
    assert_eq!(
        scene.clips()[0].channels()[0].interpolation(),
        Interpolation::Step
    );
    assert_eq!(
        scene.clips()[1].channels()[1].property(),
        Property::Rotation
    );
    let mut frame = scene.frame_buffers();
    let mut at = |clip: usize, t: f32, wrap: Wrap| {
        scene.sample(Some(clip), t, wrap, &mut frame).unwrap();
        (frame.local(1).unwrap().0, frame.local(0).unwrap().1)
    };
    // STEP holds each key until the next.
    for (t, x) in [
        (0.0, 0.0),
        (0.5, 0.0),
        (1.0, 1.0),
        (1.99, 1.0),
        (2.0, 2.0),
        (7.0, 2.0),
    ] {
        assert_eq!(
            at(0, t, Wrap::Clamp).0,
            Vec3::new(x, 0.0, 0.0),
            "step at {t}"
        );
    }
    // Loop: 2.5 wraps to 0.5 in the span [0, 2).
    assert_eq!(at(0, 2.5, Wrap::Loop).0, Vec3::ZERO);
    assert_eq!(at(0, 3.0, Wrap::Loop).0, Vec3::X);
    // CUBICSPLINE at t = 1 (u = 0.5, interval 2): 0.5*0 + 0.125*2*1 + 0.5*2 - 0.125*2*3 = 0.5.
    let (t, q) = at(1, 1.0, Wrap::Clamp);
    assert!((t - Vec3::new(0.5, 0.0, 0.0)).length() < 1e-6, "{t}");
    // Rotation: 0.5*identity + 0.5*q90, normalized, is the 45-degree rotation.
    let expected = Quat::from_rotation_z(std::f32::consts::FRAC_PI_4);
    assert!(q.dot(expected).abs() > 1.0 - 1e-6, "{q}");
    assert!((q.length() - 1.0).abs() < 1e-6);
    // At u = 0.25: h00 = 0.84375, h01 = 0.15625, values blended then normalized.
    let (t, _) = at(1, 0.5, Wrap::Clamp);
    let expected_x = 0.140625 * 2.0 + 0.15625 * 2.0 - 0.046875 * 2.0 * 3.0;
    assert!((t.x - expected_x).abs() < 1e-6, "{} vs {expected_x}", t.x);
    // LINEAR rotation is a slerp along the shorter arc: a quarter of the way is 22.5 degrees.
    let (_, q) = at(2, 0.5, Wrap::Clamp);
    let expected = Quat::from_rotation_z(std::f32::consts::FRAC_PI_8);
    assert!(q.dot(expected).abs() > 1.0 - 1e-6, "{q}");
}

#[test]
fn skinned_output_is_world_space_without_the_mesh_node_transform() {
    let mut b = Builder::default();
    let doc = two_joint_rig(&mut b);
    let scene = load(&b.glb(doc));
    let mut frame = scene.frame_buffers();
    for backend in common::backends() {
        frame.backend = backend;
        scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
        // Identity inverse binds: joint 1 sits at (0,1,0), so its vertices move up by one; the mesh
        // node's translation of 100 does not apply.
        let p = &frame.meshes()[0].positions;
        assert_eq!(p[0], Vec3::ZERO, "{backend:?}");
        assert_eq!(p[1], Vec3::new(0.0, 2.0, 0.0), "{backend:?}");
        assert_eq!(p[2], Vec3::new(1.0, 0.5, 0.0), "{backend:?}");
        assert_eq!(
            scene.world_matrix(&frame, 2),
            Some(Mat4::from_translation(Vec3::new(100.0, 0.0, 0.0)))
        );
    }
}

/// Eight influences over JOINTS_0/1 and WEIGHTS_0/1, u8 joints and unorm8/unorm16 weights: joint j
/// translates by (j, 0, 0), so a vertex moves by its weighted mean of j.
#[test]
fn eight_influences_u8_joints_and_unorm_weights() {
    let mut b = Builder::default();
    let pos = b.f32s(&[0.0; 9], "VEC3");
    // Vertex 0: joints 0..8, weight 1/8 each (unorm16 8191.875 -> 8192, normalized anyway).
    // Vertex 1: joint 3 only. Vertex 2: joints 2 and 6, unorm8 128 and 127.
    let j0 = b.u8s(&[0, 1, 2, 3, 3, 0, 0, 0, 2, 6, 0, 0], "VEC4", false);
    let j1 = b.u8s(&[4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0], "VEC4", false);
    let w0 = b.u16s(
        &[8192, 8192, 8192, 8192, 65535, 0, 0, 0, 32768, 32767, 0, 0],
        "VEC4",
        true,
    );
    let w1 = b.u16s(
        &[8192, 8192, 8192, 8192, 0, 0, 0, 0, 0, 0, 0, 0],
        "VEC4",
        true,
    );
    let w0_u8 = b.u8s(
        &[32, 32, 32, 32, 255, 0, 0, 0, 128, 127, 0, 0],
        "VEC4",
        true,
    );
    let w1_u8 = b.u8s(&[32, 32, 32, 32, 0, 0, 0, 0, 0, 0, 0, 0], "VEC4", true);
    let nodes: Vec<Value> = (0..8)
        .map(|j| json!({"translation": [j as f32, 0.0, 0.0]}))
        .chain([json!({"mesh": 0, "skin": 0}), json!({"mesh": 1, "skin": 0})])
        .collect();
    let doc = json!({
        "nodes": nodes,
        "meshes": [
            {"primitives": [{"attributes": {"POSITION": pos, "JOINTS_0": j0, "JOINTS_1": j1, "WEIGHTS_0": w0, "WEIGHTS_1": w1}}]},
            {"primitives": [{"attributes": {"POSITION": pos, "JOINTS_0": j0, "JOINTS_1": j1, "WEIGHTS_0": w0_u8, "WEIGHTS_1": w1_u8}}]}
        ],
        "skins": [{"joints": [0, 1, 2, 3, 4, 5, 6, 7]}]
    });
    let scene = load(&b.gltf(doc));
    assert_eq!(scene.primitives().len(), 2);
    assert_eq!(
        scene.primitives()[0].skinned_mesh().influence_histogram()[8],
        1
    );
    for backend in common::backends() {
        let mut frame = scene.frame_buffers().backend(backend);
        scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
        for out in frame.meshes() {
            let p = &out.positions;
            assert!((p[0].x - 3.5).abs() < 1e-5, "{backend:?}: {}", p[0]);
            assert!((p[1].x - 3.0).abs() < 1e-6, "{backend:?}: {}", p[1]);
        }
        // unorm8 128/255 and 127/255 normalized: 2*128/255 + 6*127/255; unorm16 likewise.
        let expected = (2.0 * 128.0 + 6.0 * 127.0) / 255.0;
        assert!((frame.meshes()[1].positions[2].x - expected).abs() < 1e-5);
        let expected = (2.0 * 32768.0 + 6.0 * 32767.0) / 65535.0;
        assert!((frame.meshes()[0].positions[2].x - expected).abs() < 1e-5);
    }
}

/// Non-uniform scale, a non-joint ancestor that moves the skin, and inverse bind matrices that are not
/// the rest pose: the result equals the glam product world(joint) * ibm * p.
#[test]
fn non_uniform_scale_and_a_non_joint_ancestor() {
    let mut b = Builder::default();
    let pos = b.f32s(&[1.0, 2.0, 3.0, -1.0, 0.5, 0.0], "VEC3");
    let nrm = b.f32s(&[0.0, 1.0, 0.0, 1.0, 0.0, 0.0], "VEC3");
    let joints = b.u16s(&[1, 0, 0, 0, 0, 1, 0, 0], "VEC4", false);
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0, 0.25, 0.75, 0.0, 0.0], "VEC4");
    let ibm0 = Mat4::from_translation(Vec3::new(0.0, -1.0, 0.0));
    let ibm1 = Mat4::from_rotation_x(0.3) * Mat4::from_translation(Vec3::new(0.0, -2.0, 0.5));
    let ibms: Vec<f32> = [ibm0, ibm1]
        .iter()
        .flat_map(|m| m.to_cols_array())
        .collect();
    let ibm = b.f32s(&ibms, "MAT4");
    let r = Quat::from_rotation_y(0.7);
    let doc = json!({
        "nodes": [
            {"children": [1], "translation": [0.0, 5.0, 0.0], "scale": [1.0, 2.0, 1.0]},
            {"children": [2], "rotation": r.to_array(), "scale": [2.0, 1.0, 0.5]},
            {"translation": [0.0, 1.0, 1.0]},
            {"mesh": 0, "skin": 0}
        ],
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos, "NORMAL": nrm, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}],
        "skins": [{"joints": [1, 2], "inverseBindMatrices": ibm, "skeleton": 1}]
    });
    let scene = load(&b.gltf(doc));
    assert_eq!(scene.skins()[0].skeleton_root(), Some(1));
    let root = Mat4::from_scale_rotation_translation(
        Vec3::new(1.0, 2.0, 1.0),
        Quat::IDENTITY,
        Vec3::new(0.0, 5.0, 0.0),
    );
    let w1 = root * Mat4::from_scale_rotation_translation(Vec3::new(2.0, 1.0, 0.5), r, Vec3::ZERO);
    let w2 = w1 * Mat4::from_translation(Vec3::new(0.0, 1.0, 1.0));
    let (m0, m1) = (w1 * ibm0, w2 * ibm1);
    let p0 = m1.transform_point3(Vec3::new(1.0, 2.0, 3.0));
    let q = Vec3::new(-1.0, 0.5, 0.0);
    let p1 = 0.25 * m0.transform_point3(q) + 0.75 * m1.transform_point3(q);
    for backend in common::backends() {
        // Unit normals are asked for (the default leaves them as blended).
        let mut frame = scene
            .frame_buffers()
            .backend(backend)
            .renormalize(Renormalize::Precise);
        scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
        let out = &frame.meshes()[0];
        assert!(
            (out.positions[0] - p0).length() < 1e-5,
            "{backend:?}: {} vs {p0}",
            out.positions[0]
        );
        assert!(
            (out.positions[1] - p1).length() < 1e-5,
            "{backend:?}: {} vs {p1}",
            out.positions[1]
        );
        // Normals go through the blended 3x3 part and are renormalized.
        let n0 = m1.transform_vector3(Vec3::Y).normalize();
        let got = out.normals.as_ref().unwrap()[0];
        assert!((got - n0).length() < 1e-5, "{backend:?}: {got} vs {n0}");
    }
}

/// Two skins over shared joints, one mesh instanced on two nodes (one per skin), plus a mesh with two
/// primitives: entries come sorted by node, then primitive.
#[test]
fn several_skins_and_a_mesh_instanced_on_several_nodes() {
    let mut b = Builder::default();
    let pos = b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    let joints = b.u16s(&[0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0], "VEC4", false);
    let weights = b.f32s(
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
        "VEC4",
    );
    let shift = Mat4::from_translation(Vec3::new(0.0, 0.0, -10.0)).to_cols_array();
    let ibm: Vec<f32> = shift.iter().chain(shift.iter()).copied().collect();
    let ibm = b.f32s(&ibm, "MAT4");
    let indices = b.u16s(&[0, 1, 2], "SCALAR", false);
    let prim = json!({"attributes": {"POSITION": pos, "JOINTS_0": joints, "WEIGHTS_0": weights}, "indices": indices});
    let doc = json!({
        "nodes": [
            {"mesh": 1, "skin": 1},
            {"translation": [1.0, 0.0, 0.0]},
            {"translation": [0.0, 1.0, 0.0], "children": [1]},
            {"mesh": 0, "skin": 0},
            {"mesh": 0, "skin": 1}
        ],
        "meshes": [{"primitives": [prim]}, {"primitives": [prim, prim]}],
        "skins": [{"joints": [2, 1]}, {"joints": [2, 1], "inverseBindMatrices": ibm}]
    });
    let scene = load(&b.gltf(doc));
    let keys: Vec<_> = scene
        .primitives()
        .iter()
        .map(|p| (p.node(), p.mesh(), p.primitive(), p.skin()))
        .collect();
    assert_eq!(
        keys,
        [(0, 1, 0, 1), (0, 1, 1, 1), (3, 0, 0, 0), (4, 0, 0, 1)]
    );
    assert_eq!(scene.primitives()[2].triangles(), &[[0, 1, 2]]);
    let mut frame = scene.frame_buffers();
    scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
    // Joint 0 is node 2 at (0,1,0); joint 1 is node 1 at (1,1,0). Skin 1 also shifts by -10 in z.
    let skin0 = [
        Vec3::new(0.0, 1.0, 0.0),
        Vec3::new(2.0, 1.0, 0.0),
        Vec3::new(1.0, 2.0, 0.0),
    ];
    let skin1 = skin0.map(|p| p - Vec3::new(0.0, 0.0, 10.0));
    assert_eq!(frame.meshes()[2].positions, skin0);
    for i in [0, 1, 3] {
        assert_eq!(frame.meshes()[i].positions, skin1, "entry {i}");
    }
}

#[test]
fn sparse_accessors_and_more_than_eight_influences() {
    let mut b = Builder::default();
    let pos = b.f32s(&[0.0; 6], "VEC3");
    // Sparse: vertex 1's position is replaced by (5, 6, 7).
    let sparse_idx: Vec<u8> = vec![1, 0, 0, 0];
    while b.bin.len() % 4 != 0 {
        b.bin.push(0);
    }
    b.views
        .push(json!({"buffer": 0, "byteOffset": b.bin.len(), "byteLength": 1}));
    b.bin.extend_from_slice(&sparse_idx);
    let iview = b.views.len() - 1;
    b.views
        .push(json!({"buffer": 0, "byteOffset": b.bin.len(), "byteLength": 12}));
    for f in [5.0f32, 6.0, 7.0] {
        b.bin.extend_from_slice(&f.to_le_bytes());
    }
    let vview = b.views.len() - 1;
    b.accessors[pos]["sparse"] = json!({"count": 1, "indices": {"bufferView": iview, "componentType": 5121}, "values": {"bufferView": vview}});
    // 12 influences over JOINTS_0..2: joint j weighs j + 1, so the heaviest eight are joints 4..12.
    let j: Vec<u8> = (0..12).chain(0..12).collect();
    let w: Vec<f32> = (0..12)
        .map(|j| (j + 1) as f32)
        .chain((0..12).map(|j| (j + 1) as f32))
        .collect();
    let mut attrs = json!({"POSITION": pos});
    for set in 0..3 {
        let js: Vec<u8> = (0..2)
            .flat_map(|v| j[v * 12 + 4 * set..v * 12 + 4 * set + 4].to_vec())
            .collect();
        let ws: Vec<f32> = (0..2)
            .flat_map(|v| w[v * 12 + 4 * set..v * 12 + 4 * set + 4].to_vec())
            .collect();
        attrs[format!("JOINTS_{set}")] = json!(b.u8s(&js, "VEC4", false));
        attrs[format!("WEIGHTS_{set}")] = json!(b.f32s(&ws, "VEC4"));
    }
    let mut nodes: Vec<Value> = (0..12)
        .map(|j| json!({"translation": [j as f32, 0.0, 0.0]}))
        .collect();
    nodes.push(json!({"mesh": 0, "skin": 0}));
    let doc = json!({
        "nodes": nodes,
        "meshes": [{"primitives": [{"attributes": attrs}]}],
        "skins": [{"joints": (0..12).collect::<Vec<_>>()}]
    });
    let bytes = b.gltf(doc);
    let scene = load(&bytes);
    let p = &scene.primitives()[0];
    assert_eq!(p.bind_positions(), &[Vec3::ZERO, Vec3::new(5.0, 6.0, 7.0)]);
    assert_eq!(p.skinned_mesh().influence_histogram()[8], 2);
    let mut frame = scene.frame_buffers().backend(Backend::Reference);
    scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
    // Joints 4..12 with weights 5..=12 (sum 68): mean translation sum(j (j+1)) / 68.
    let expected: f32 = (4..12).map(|j| (j * (j + 1)) as f32).sum::<f32>() / 68.0;
    assert!((frame.meshes()[0].positions[0].x - expected).abs() < 1e-5);
    // With influence LOD 1, only the heaviest, joint 11, is left.
    let options = LoadOptions {
        max_influences: 1,
        ..LoadOptions::default()
    };
    let lod = GltfScene::from_slice_with(&bytes, None, &options).unwrap();
    let mut frame = lod.frame_buffers().backend(Backend::Reference);
    lod.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
    assert_eq!(frame.meshes()[0].positions[0], Vec3::new(11.0, 0.0, 0.0));
}

// ---------------------------------------------------------------------------------------------------
// Broken files: each gives the error that names its rule.

#[test]
fn broken_files_give_the_error_naming_their_rule() {
    // An accessor longer than its buffer view.
    let mut b = Builder::default();
    let doc = two_joint_rig(&mut b);
    b.accessors[0]["count"] = json!(1_000_000_000u64);
    expect_err!(
        &b.gltf(doc),
        GltfError::AccessorOutOfBounds { accessor: 0, .. }
    );

    // A buffer view past the end of its buffer.
    let mut b = Builder::default();
    let doc = two_joint_rig(&mut b);
    b.views[0]["byteLength"] = json!(4096);
    expect_err!(
        &b.gltf(doc),
        GltfError::BufferViewOutOfBounds { view: 0, .. }
    );

    // Many distinct accessors over the same bytes, one per mesh: more data than the file holds.
    let mut b = Builder::default();
    let mut d = two_joint_rig(&mut b);
    let n = 10_000;
    let big = b.f32s(&vec![0.0; 3 * n], "VEC3");
    let joints = b.u16s(&vec![0; 4 * n], "VEC4", false);
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0].repeat(n), "VEC4");
    let aliases: Vec<usize> = (0..250)
        .map(|_| {
            b.accessors.push(b.accessors[big].clone());
            b.accessors.len() - 1
        })
        .collect();
    // 250 x 30,000 components from 360 kB: past 4 per byte plus the slack.
    d["meshes"] = json!(aliases
        .iter()
        .map(|&a| json!({"primitives": [{"attributes": {"POSITION": a, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}))
        .collect::<Vec<_>>());
    let mut nodes: Vec<Value> = (0..250).map(|m| json!({"mesh": m, "skin": 0})).collect();
    nodes.extend([json!({"children": [251]}), json!({})]);
    d["nodes"] = json!(nodes);
    d["skins"] = json!([{"joints": [250, 251]}]);
    d["scenes"] = json!([]);
    d.as_object_mut().unwrap().remove("scene");
    expect_err!(&b.gltf(d), GltfError::AccessorTooLarge { .. });

    // An accessor with no data behind it and a huge count.
    let mut b = Builder::default();
    let doc = two_joint_rig(&mut b);
    // (Without a buffer view an accessor must be sparse; the sparse part itself is tiny.)
    let idx = b.u8s(&[0, 0, 0, 0], "SCALAR", false);
    let vals = b.f32s(&[1.0, 2.0, 3.0], "VEC3");
    let (iview, vview) = (
        b.accessors[idx]["bufferView"].clone(),
        b.accessors[vals]["bufferView"].clone(),
    );
    b.accessors[0] = json!({"componentType": 5126, "count": 4_000_000_000u64, "type": "VEC3", "min": [0, 0, 0], "max": [0, 0, 0],
        "sparse": {"count": 1, "indices": {"bufferView": iview, "componentType": 5121}, "values": {"bufferView": vview}}});
    let e = gltf_err(&b.gltf(doc));
    assert!(
        matches!(e, GltfError::AccessorTooLarge { accessor: 0, .. }),
        "{e}"
    );

    // A joint index outside the skin (the skin has 2 joints).
    let mut b = Builder::default();
    let doc = two_joint_rig(&mut b);
    let bad = b.u16s(&[0, 0, 0, 0, 7, 0, 0, 0, 0, 1, 0, 0], "VEC4", false);
    let mut d = doc.clone();
    d["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"] = json!(bad);
    match gltf_err(&b.gltf(d)) {
        GltfError::Primitive { error, .. } => assert!(
            matches!(
                *error,
                Error::VertexJointOutOfRange {
                    vertex: 1,
                    joint: 7,
                    joints: 2
                }
            ),
            "{error}"
        ),
        e => panic!("{e}"),
    }

    // Missing POSITION (the gltf crate's schema check already requires it).
    let mut d = doc.clone();
    d["meshes"][0]["primitives"][0]["attributes"]
        .as_object_mut()
        .unwrap()
        .remove("POSITION");
    expect_err!(&b.gltf(d), GltfError::Parse { message } if message.contains("POSITION"));

    // JOINTS_1 without WEIGHTS_1.
    let mut d = doc.clone();
    d["meshes"][0]["primitives"][0]["attributes"]["JOINTS_1"] = json!(1);
    expect_err!(&b.gltf(d), GltfError::MissingAttribute { attribute, .. } if attribute == "WEIGHTS_1");

    // A wrong accessor type: JOINTS_0 given as the f32 weights.
    let mut d = doc.clone();
    d["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"] = json!(2);
    expect_err!(
        &b.gltf(d),
        GltfError::AccessorFormat {
            usage: "JOINTS_n",
            accessor: 2,
            ..
        }
    );

    // A cycle of children, a node that is its own child, and a node with two parents.
    let mut d = doc.clone();
    d["nodes"][1]["children"] = json!([0]);
    expect_err!(&b.gltf(d), GltfError::NodeCycle { .. });
    let mut d = doc.clone();
    d["nodes"][1]["children"] = json!([1]);
    expect_err!(&b.gltf(d), GltfError::NodeCycle { node: 1 });
    let mut d = doc.clone();
    d["nodes"][2]["children"] = json!([1]);
    expect_err!(
        &b.gltf(d),
        GltfError::NodeParents {
            node: 1,
            first: 0,
            second: 2
        }
    );
    let mut d = doc.clone();
    d["nodes"][0]["children"] = json!([1, 1]);
    expect_err!(&b.gltf(d), GltfError::NodeParents { node: 1, .. });

    // Too few inverse bind matrices.
    let mut b2 = Builder::default();
    let mut d = two_joint_rig(&mut b2);
    let one = b2.f32s(&Mat4::IDENTITY.to_cols_array(), "MAT4");
    d["skins"][0]["inverseBindMatrices"] = json!(one);
    expect_err!(&b2.gltf(d), GltfError::InverseBindMatrices { skin: 0, .. });

    // Animation keys: NaN values, times not increasing, NaN times, output count mismatch.
    let anim = |b: &mut Builder, times: &[f32], values: &[f32]| {
        let mut d = two_joint_rig(b);
        let t = b.f32s(times, "SCALAR");
        let v = b.f32s(values, "VEC3");
        d["animations"] = json!([{"samplers": [{"input": t, "output": v}],
            "channels": [{"sampler": 0, "target": {"node": 1, "path": "translation"}}]}]);
        b.gltf(d)
    };
    let mut b = Builder::default();
    let f = anim(&mut b, &[0.0, 1.0], &[0.0, 0.0, 0.0, f32::NAN, 0.0, 0.0]);
    expect_err!(
        &f,
        GltfError::KeyValue {
            animation: 0,
            sampler: 0,
            key: 1
        }
    );
    let mut b = Builder::default();
    let f = anim(&mut b, &[0.0, 1.0, 1.0], &[0.0; 9]);
    expect_err!(&f, GltfError::KeyTimes { key: 2, .. });
    let mut b = Builder::default();
    let f = anim(&mut b, &[0.0, 2.0, 1.0], &[0.0; 9]);
    expect_err!(&f, GltfError::KeyTimes { key: 2, .. });
    let mut b = Builder::default();
    let f = anim(&mut b, &[0.0, f32::NAN], &[0.0; 6]);
    expect_err!(&f, GltfError::KeyTimes { key: 1, .. });
    let mut b = Builder::default();
    let f = anim(&mut b, &[0.0, 1.0], &[0.0; 9]);
    expect_err!(
        &f,
        GltfError::KeyCount {
            times: 2,
            values: 3,
            ..
        }
    );

    // Sparse index out of range.
    let mut b = Builder::default();
    let doc = two_joint_rig(&mut b);
    let idx = b.u8s(&[9, 0, 0, 0], "SCALAR", false);
    let iview = b.accessors[idx]["bufferView"].clone();
    let vals = b.f32s(&[1.0, 2.0, 3.0], "VEC3");
    let vview = b.accessors[vals]["bufferView"].clone();
    b.accessors[0]["sparse"] = json!({"count": 1, "indices": {"bufferView": iview, "componentType": 5121}, "values": {"bufferView": vview}});
    expect_err!(
        &b.gltf(doc),
        GltfError::SparseIndexOutOfRange {
            accessor: 0,
            index: 9,
            count: 3
        }
    );

    // Containers: garbage, a GLB header whose length is shorter than itself, a truncated GLB, no nodes.
    expect_err!(b"not a gltf", GltfError::Parse { .. });
    let mut glb = b"glTF".to_vec();
    glb.extend_from_slice(&2u32.to_le_bytes());
    glb.extend_from_slice(&4u32.to_le_bytes());
    expect_err!(&glb, GltfError::Glb { .. });
    let mut b = Builder::default();
    let doc = two_joint_rig(&mut b);
    let glb = b.glb(doc);
    expect_err!(&glb[..glb.len() - 8], GltfError::Glb { .. });
    expect_err!(br#"{"asset": {"version": "2.0"}}"#, GltfError::NoNodes);

    // An external buffer loaded from bytes, and a required compression extension.
    let doc = br#"{"asset": {"version": "2.0"}, "nodes": [{}], "buffers": [{"byteLength": 4, "uri": "x.bin"}]}"#;
    expect_err!(doc, GltfError::Buffer { buffer: 0, .. });
    let doc = br#"{"asset": {"version": "2.0"}, "nodes": [{}], "extensionsUsed": ["KHR_draco_mesh_compression"], "extensionsRequired": ["KHR_draco_mesh_compression"]}"#;
    expect_err!(doc, GltfError::UnsupportedExtension { name } if name == "KHR_draco_mesh_compression");
}

/// What a refused request must leave untouched: the pose, world matrices, palettes and vertices.
fn snapshot(frame: &Frame) -> String {
    format!(
        "{:?} {:?} {:?} {:?}",
        frame.level_pose(),
        frame.level_models(),
        frame.palettes(),
        frame.meshes()
    )
}

#[test]
fn bad_requests_are_errors() {
    let mut b = Builder::default();
    let doc = two_joint_rig(&mut b);
    let scene = load(&b.gltf(doc));
    let mut frame = scene.frame_buffers();
    let before = snapshot(&frame);
    let err = scene
        .evaluate(Some(0), 0.0, Wrap::Clamp, &mut frame)
        .unwrap_err();
    assert_eq!(
        err,
        Error::Gltf(GltfError::ClipOutOfRange { clip: 0, clips: 0 })
    );
    for time in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let err = scene
            .evaluate(None, time, Wrap::Clamp, &mut frame)
            .unwrap_err();
        assert_eq!(err, Error::Gltf(GltfError::TimeNotFinite), "{time}");
    }
    assert_eq!(
        snapshot(&frame),
        before,
        "a refused request wrote the frame"
    );
    // Its own frame still works.
    scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
}

/// A frame made for another scene is refused by every stage, in words, and nothing is written.
#[test]
fn a_frame_of_another_scene_is_the_wrong_frame() {
    let mut b = Builder::default();
    let doc = two_joint_rig(&mut b);
    let scene = load(&b.gltf(doc.clone()));
    // One node more.
    let mut bigger = doc.clone();
    bigger["nodes"].as_array_mut().unwrap().push(json!({}));
    let bigger = load(&b.gltf(bigger));
    // The same nodes, without the skin (and so without a skinned primitive).
    let mut skinless = doc;
    skinless["nodes"][2].as_object_mut().unwrap().remove("skin");
    skinless.as_object_mut().unwrap().remove("skins");
    let skinless = load(&b.gltf(skinless));
    for (other, want, words) in [
        (
            &bigger,
            Error::WrongFrame {
                what: "Frame",
                owner: "scene",
                part: "node",
                made_for: 4,
                here: 3,
            },
            "wrong frame: this Frame was made for a scene with 4 nodes; this scene has 3",
        ),
        (
            &skinless,
            Error::WrongFrame {
                what: "Frame",
                owner: "scene",
                part: "skin",
                made_for: 0,
                here: 1,
            },
            "wrong frame: this Frame was made for a scene with 0 skins; this scene has 1",
        ),
    ] {
        let mut frame = other.frame_buffers();
        let before = snapshot(&frame);
        for (stage, err) in [
            (
                "evaluate",
                scene
                    .evaluate(None, 0.0, Wrap::Clamp, &mut frame)
                    .unwrap_err(),
            ),
            (
                "sample",
                scene
                    .sample(None, 0.0, Wrap::Clamp, &mut frame)
                    .unwrap_err(),
            ),
            (
                "local_to_model",
                scene.local_to_model(&mut frame).unwrap_err(),
            ),
            ("palettes", scene.palettes(&mut frame).unwrap_err()),
            ("skin", scene.skin(&mut frame).unwrap_err()),
        ] {
            assert_eq!(err, want, "{stage}");
            assert_eq!(err.to_string(), words, "{stage}");
        }
        assert_eq!(snapshot(&frame), before, "a refused frame was written");
    }
}

#[test]
fn external_buffer_files_load_relative_to_the_gltf() {
    let mut b = Builder::default();
    let doc = two_joint_rig(&mut b);
    let mut doc = b.document(doc);
    let dir = std::env::temp_dir().join(format!("ispc-skinning-gltf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("rig data.bin"), &b.bin).unwrap();
    doc["buffers"] = json!([{"byteLength": b.bin.len(), "uri": "rig%20data.bin"}]);
    std::fs::write(dir.join("rig.gltf"), serde_json::to_vec(&doc).unwrap()).unwrap();
    let scene = GltfScene::load(dir.join("rig.gltf")).unwrap();
    assert_eq!(scene.primitives()[0].bind_positions()[1], Vec3::Y);
    // A declared length longer than the file is an error, not a short read.
    doc["buffers"][0]["byteLength"] = json!(b.bin.len() + 4);
    std::fs::write(dir.join("rig.gltf"), serde_json::to_vec(&doc).unwrap()).unwrap();
    let err = GltfScene::load(dir.join("rig.gltf")).unwrap_err();
    assert!(
        matches!(err, Error::Gltf(GltfError::Buffer { buffer: 0, .. })),
        "{err}"
    );
    let err = GltfScene::load(dir.join("missing.gltf")).unwrap_err();
    assert!(matches!(err, Error::Gltf(GltfError::Io { .. })), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// KHR_mesh_quantization: normalized i16 positions, with harmless required extensions alongside.
#[test]
fn quantized_positions_and_harmless_required_extensions() {
    let mut b = Builder::default();
    let mut doc = two_joint_rig(&mut b);
    let q = b.raw(
        &[32767i16, 0, 0, 0, -32767, 16384]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>(),
        5122,
        2,
        "VEC3",
        true,
    );
    b.accessors[q]["min"] = json!([0, -32767, 0]);
    b.accessors[q]["max"] = json!([32767, 0, 16384]);
    let joints = b.u16s(&[0, 0, 0, 0, 1, 0, 0, 0], "VEC4", false);
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], "VEC4");
    doc["meshes"][0]["primitives"][0]["attributes"] =
        json!({"POSITION": q, "JOINTS_0": joints, "WEIGHTS_0": weights});
    doc["extensionsUsed"] = json!(["KHR_mesh_quantization", "KHR_materials_unlit"]);
    doc["extensionsRequired"] = json!(["KHR_mesh_quantization", "KHR_materials_unlit"]);
    let scene = load(&b.gltf(doc));
    assert_eq!(
        scene.primitives()[0].bind_positions(),
        &[Vec3::X, Vec3::new(0.0, -1.0, 16384.0 / 32767.0)]
    );
}
