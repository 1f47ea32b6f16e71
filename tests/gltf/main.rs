//! glTF import, sampling and whole frames: on the shared real assets (skipped when absent) and on small
//! files that the tests build themselves, including broken ones.
#![cfg(feature = "gltf")]

#[path = "../common/mod.rs"]
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
/// (rotations: the key normalized, bit for bit, as the importer normalizes it).
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
                        _ => {
                            // The key normalized with its length summed x, y, z, w in order, the
                            // same bits on every platform (glam's SIMD dot product sums in another
                            // order on x86-64).
                            let inv = 1.0
                                / (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]).sqrt();
                            assert_eq!(
                                r,
                                Quat::from_xyzw(v[0] * inv, v[1] * inv, v[2] * inv, v[3] * inv)
                            )
                        }
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

// The files built here, the broken files (each gives the error that names its rule), names, and a
// frame called stage by stage, and KHR_animation_pointer channels.
mod broken;
mod built;
mod names;
mod node_misc;
mod pointer;
mod skin_cases;
mod stages;
