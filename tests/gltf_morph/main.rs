//! Issue 17's glTF files beyond skinned primitives, generated here (JSON plus an embedded base64
//! buffer): rigid meshes under animated joints, static meshes, multi-primitive meshes, and morph targets
//! on skinned and rigid meshes with their weights animated under STEP, LINEAR and CUBICSPLINE, each
//! checked against values computed by hand in the test. Then the typed errors of broken morph data, and
//! RobotExpressive's 19 drawn primitives when `../shared/assets` is present.
//!
//! This file holds the glTF builder and the morph triangle the tests share; animated and default
//! morph weights are checked in `weights.rs` beside it, rigid, static and multi-primitive meshes in
//! `rigid.rs`, broken morph data in `broken.rs`, and RobotExpressive in `asset.rs`. The five files make
//! one test binary.
#![cfg(feature = "gltf")]

mod asset;
mod broken;
mod rigid;
mod weights;

use base64::Engine as _;
use glam::Vec3;
use ispc_skinning::gltf::{GltfError, GltfScene};
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
