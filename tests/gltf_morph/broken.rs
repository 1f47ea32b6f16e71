//! Broken morph data: typed errors, never a panic. Morph target counts that differ between
//! primitives, delta accessors of the wrong count, type or value, weights channels whose key count
//! does not match the targets, and mesh or node weights of the wrong length are refused, with
//! messages that say why.

use super::{animate_weights, gltf_err, morph_triangle, Builder};
use glam::Vec3;
use ispc_skinning::gltf::GltfError;
use serde_json::json;

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
