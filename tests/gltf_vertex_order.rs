//! `VertexOrder::ByInfluenceCount`: a scene whose skinned vertices are sorted by influence count gives,
//! vertex for vertex, what the file's order gives. Checked on every backend, on the shared assets
//! (skipped when absent) and on a generated skinned mesh with morph targets whose influence counts
//! alternate, so that sorting moves vertices, deltas and triangle indices.
#![cfg(feature = "gltf")]

mod common;

use base64::Engine as _;
use glam::Vec3;
use ispc_skinning::gltf::{GltfScene, LoadOptions, VertexOrder, Wrap};
use serde_json::json;

const ASSETS: [&str; 6] = common::SHARED_ASSETS;

fn sorted() -> LoadOptions {
    LoadOptions {
        vertex_order: VertexOrder::ByInfluenceCount,
        ..LoadOptions::default()
    }
}

/// Checks that `by_count` holds `file`'s skinned primitives in influence-count order: the bind
/// positions and triangles map back through `file_indices`, each primitive's counts never decrease, and
/// at every time of every clip each backend's skinned positions, normals and tangents equal the file
/// order's at the mapped vertex. The two scenes run the same kernels on the same vertices, only grouped
/// differently, so the tolerance is a few ulps of the coordinates (1e-5 relative, plus 1e-6): a vertex
/// promoted to a larger count in file order adds exact zeros, which can still change the rounding of a
/// fused multiply-add chain.
fn check_same(file: &GltfScene, by_count: &GltfScene, what: &str) {
    assert_eq!(file.primitives().len(), by_count.primitives().len());
    let mut maps = Vec::new();
    for (i, (a, b)) in file
        .primitives()
        .iter()
        .zip(by_count.primitives())
        .enumerate()
    {
        assert!(a.file_indices().is_none(), "{what}: file order has no map");
        let n = a.vertex_count();
        assert_eq!(n, b.vertex_count());
        let map: Vec<usize> = match b.file_indices() {
            Some(m) => m.iter().map(|&v| v as usize).collect(),
            None => (0..n).collect(),
        };
        let mut seen = vec![false; n];
        for &v in &map {
            assert!(!std::mem::replace(&mut seen[v], true), "{what}: {v} twice");
        }
        for (k, &v) in map.iter().enumerate() {
            assert_eq!(b.bind_positions()[k], a.bind_positions()[v], "{what}");
        }
        for (ta, tb) in a.triangles().iter().zip(b.triangles()) {
            assert_eq!(*ta, tb.map(|k| map[k as usize] as u32), "{what}");
        }
        let h = b.skinned_mesh().influence_histogram();
        assert_eq!(h, a.skinned_mesh().influence_histogram(), "{what}");
        assert!(
            b.skinned_mesh().streams_sequentially(),
            "{what} primitive {i}: every influence group is one range"
        );
        maps.push(map);
    }
    let clips: Vec<Option<usize>> = if file.clips().is_empty() {
        vec![None]
    } else {
        (0..file.clips().len()).map(Some).collect()
    };
    for clip in clips {
        let duration = clip.map_or(0.0, |c| file.clips()[c].duration());
        for step in 0..4 {
            let time = duration * step as f32 / 3.0;
            for backend in common::backends() {
                let mut fa = file.frame_buffers().backend(backend);
                let mut fb = by_count.frame_buffers().backend(backend);
                file.evaluate(clip, time, Wrap::Clamp, &mut fa).unwrap();
                by_count.evaluate(clip, time, Wrap::Clamp, &mut fb).unwrap();
                for (m, map) in maps.iter().enumerate() {
                    let (a, b) = (&fa.meshes()[m], &fb.meshes()[m]);
                    let near = |x: Vec3, y: Vec3, attr: &str, k: usize| {
                        let tol = 1e-5 * x.abs().max_element().max(1.0) + 1e-6;
                        assert!(
                            (x - y).abs().max_element() <= tol,
                            "{what} clip {clip:?} t={time} {} mesh {m} {attr} of vertex {k}: \
                             by count {y}, file order {x}, tolerance {tol}",
                            backend.name()
                        );
                    };
                    for (k, &v) in map.iter().enumerate() {
                        near(a.positions[v], b.positions[k], "position", k);
                        if let (Some(na), Some(nb)) = (&a.normals, &b.normals) {
                            near(na[v], nb[k], "normal", k);
                        }
                        if let (Some(ta), Some(tb)) = (&a.tangents, &b.tangents) {
                            near(ta[v].truncate(), tb[k].truncate(), "tangent", k);
                            assert_eq!(ta[v].w, tb[k].w, "{what}: handedness");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_shared_assets_skin_the_same_in_influence_count_order() {
    let Some(dir) = common::assets() else { return };
    let mut moved = 0;
    for asset in ASSETS {
        let path = dir.join(asset);
        let file = GltfScene::load(&path).unwrap_or_else(|e| panic!("{asset}: {e}"));
        let by_count =
            GltfScene::load_with(&path, &sorted()).unwrap_or_else(|e| panic!("{asset}: {e}"));
        moved += by_count
            .primitives()
            .iter()
            .filter(|p| p.file_indices().is_some())
            .count();
        check_same(&file, &by_count, asset);
    }
    // CesiumMan's counts change every few vertices, so at least its primitive is reordered.
    assert!(moved > 0, "no asset was reordered: the test checks nothing");
}

/// Six vertices of a strip whose influence counts alternate 2, 1, 2, 1, ... on a two-joint rig, two
/// morph targets moving positions and normals, and an animated joint and animated weights: sorting
/// moves every other vertex, its deltas and the triangles' indices.
fn alternating_morph_strip() -> Vec<u8> {
    let n = 6;
    let pos: Vec<f32> = (0..n)
        .flat_map(|i| [i as f32, (i % 2) as f32, 0.0])
        .collect();
    let nrm: Vec<f32> = (0..n).flat_map(|_| [0.0, 0.0, 1.0]).collect();
    let d0: Vec<f32> = (0..n).flat_map(|i| [0.1 * i as f32, 0.0, 0.2]).collect();
    let n0: Vec<f32> = (0..n).flat_map(|i| [0.05 * i as f32, 0.1, 0.0]).collect();
    let d1: Vec<f32> = (0..n).flat_map(|i| [0.0, -0.3, 0.01 * i as f32]).collect();
    let joints: Vec<u16> = (0..n)
        .flat_map(|i| {
            if i % 2 == 0 {
                [0, 1, 0, 0]
            } else {
                [1, 0, 0, 0]
            }
        })
        .collect();
    let weights: Vec<f32> = (0..n)
        .flat_map(|i| {
            if i % 2 == 0 {
                [0.25 + 0.1 * i as f32, 0.75 - 0.1 * i as f32, 0.0, 0.0]
            } else {
                [1.0, 0.0, 0.0, 0.0]
            }
        })
        .collect();
    let indices: Vec<u16> = vec![0, 1, 2, 3, 4, 5];
    let times = [0.0f32, 1.0];
    let rotation = [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.38268343, 0.9238795];
    let morph = [0.0f32, 0.0, 1.0, 0.5];
    let mut bin = Vec::new();
    let mut views = Vec::new();
    let mut push = |bytes: Vec<u8>| {
        while bin.len() % 4 != 0 {
            bin.push(0);
        }
        views.push(json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len()}));
        bin.extend(bytes);
        views.len() - 1
    };
    let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let u = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let views_of = [
        push(f(&pos)),
        push(f(&nrm)),
        push(f(&d0)),
        push(f(&n0)),
        push(f(&d1)),
        push(u(&joints)),
        push(f(&weights)),
        push(u(&indices)),
        push(f(&times)),
        push(f(&rotation)),
        push(f(&morph)),
    ];
    let acc = |view: usize, component: u32, count: usize, ty: &str| json!({"bufferView": views_of[view], "componentType": component, "count": count, "type": ty});
    let mut position = acc(0, 5126, n, "VEC3");
    position["min"] = json!([0.0, 0.0, 0.0]);
    position["max"] = json!([5.0, 1.0, 0.0]);
    let mut delta0 = acc(2, 5126, n, "VEC3");
    delta0["min"] = json!([0.0, 0.0, 0.2]);
    delta0["max"] = json!([0.5, 0.0, 0.2]);
    let mut delta1 = acc(4, 5126, n, "VEC3");
    delta1["min"] = json!([0.0, -0.3, 0.0]);
    delta1["max"] = json!([0.0, -0.3, 0.05]);
    let accessors = json!([
        position,
        acc(1, 5126, n, "VEC3"),
        delta0,
        acc(3, 5126, n, "VEC3"),
        delta1,
        acc(5, 5123, n, "VEC4"),
        acc(6, 5126, n, "VEC4"),
        acc(7, 5123, 6, "SCALAR"),
        {"bufferView": views_of[8], "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [1.0]},
        acc(9, 5126, 2, "VEC4"),
        acc(10, 5126, 4, "SCALAR"),
    ]);
    let uri = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bin)
    );
    let doc = json!({
        "asset": {"version": "2.0"},
        "nodes": [
            {"children": [1]},
            {"translation": [0.0, 1.0, 0.0]},
            {"mesh": 0, "skin": 0}
        ],
        "meshes": [{"primitives": [{
            "attributes": {"POSITION": 0, "NORMAL": 1, "JOINTS_0": 5, "WEIGHTS_0": 6},
            "targets": [{"POSITION": 2, "NORMAL": 3}, {"POSITION": 4}],
            "indices": 7,
            "mode": 5
        }]}],
        "skins": [{"joints": [0, 1]}],
        "animations": [{
            "samplers": [
                {"input": 8, "output": 9, "interpolation": "LINEAR"},
                {"input": 8, "output": 10, "interpolation": "LINEAR"}
            ],
            "channels": [
                {"sampler": 0, "target": {"node": 1, "path": "rotation"}},
                {"sampler": 1, "target": {"node": 2, "path": "weights"}}
            ]
        }],
        "scenes": [{"nodes": [0, 2]}],
        "scene": 0,
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": bin.len(), "uri": uri}]
    });
    serde_json::to_vec(&doc).unwrap()
}

#[test]
fn a_morphed_strip_with_alternating_counts_skins_the_same_in_influence_count_order() {
    let bytes = alternating_morph_strip();
    let file = GltfScene::from_slice(&bytes).unwrap_or_else(|e| panic!("{e}"));
    let by_count =
        GltfScene::from_slice_with(&bytes, None, &sorted()).unwrap_or_else(|e| panic!("{e}"));
    // Stable: the one-influence vertices 1, 3, 5 first, then 0, 2, 4.
    assert_eq!(
        by_count.primitives()[0].file_indices(),
        Some(&[1, 3, 5, 0, 2, 4][..])
    );
    check_same(&file, &by_count, "alternating strip");
}
