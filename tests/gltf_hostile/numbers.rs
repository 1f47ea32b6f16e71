//! Issue 31's rules for the importer: a node `matrix` is a TRS (shear and a bottom row other than
//! 0 0 0 1 are refused, a reflection is not); node rotations and rotation keys have a squared length
//! that is a normal f32; vertex attributes are finite; and every public function of `gltf` that
//! takes an index answers `usize::MAX` without overflowing (these run in debug builds too, where an
//! overflowing `+` panics).

use super::*;
use ispc_skinning::gltf::{Property, Wrap, MATRIX_SHEAR_TOLERANCE};
use ispc_skinning::{Backend, Threads};

/// The rig with node 1's translation replaced by `matrix` (column-major, as glTF writes it).
fn rig_with_matrix(matrix: [f32; 16]) -> Vec<u8> {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    doc["nodes"][1] = json!({"matrix": matrix});
    // The animation would overwrite node 1's pose; the matrix alone is under test.
    doc.as_object_mut().unwrap().remove("animations");
    b.glb(doc)
}

/// Columns `c0`, `c1`, `c2` and translation `t`, bottom row 0 0 0 1.
fn columns(c0: [f32; 3], c1: [f32; 3], c2: [f32; 3], t: [f32; 3]) -> [f32; 16] {
    [
        c0[0], c0[1], c0[2], 0.0, c1[0], c1[1], c1[2], 0.0, c2[0], c2[1], c2[2], 0.0, t[0], t[1],
        t[2], 1.0,
    ]
}

fn node_matrix_error(bytes: &[u8]) -> (usize, &'static str, f32, String) {
    match gltf_err(GltfScene::from_slice(bytes)) {
        e @ GltfError::NodeMatrix {
            node,
            reason,
            off_by,
        } => (node, reason, off_by, e.to_string()),
        e => panic!("expected NodeMatrix, got {e:?}: {e}"),
    }
}

#[test]
fn a_node_matrix_with_shear_is_refused_naming_the_node() {
    // The second column leans 45 degrees towards the first: |cos| = 1/sqrt(2).
    let sheared = columns(
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [0.0, 1.0, 0.0],
    );
    let (node, reason, off_by, words) = node_matrix_error(&rig_with_matrix(sheared));
    assert_eq!((node, reason), (1, "shear"));
    assert!(
        (off_by - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6,
        "{off_by}"
    );
    assert_eq!(
        words,
        format!("node 1: its matrix is not a translation, rotation and scale (shear off by {off_by}); glTF node matrices must decompose into TRS")
    );
    // A shear just past the tolerance, on a scaled column, is still refused.
    let lean = 2.0 * MATRIX_SHEAR_TOLERANCE;
    let slight = columns([3.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, lean, 1.0], [0.0; 3]);
    let (node, reason, _, _) = node_matrix_error(&rig_with_matrix(slight));
    assert_eq!((node, reason), (1, "shear"));
}

#[test]
fn a_node_matrix_whose_bottom_row_is_not_0001_is_refused() {
    let mut projective = columns([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0; 3]);
    projective[3] = 0.5; // row 3 of column 0
    let (node, reason, off_by, _) = node_matrix_error(&rig_with_matrix(projective));
    assert_eq!((node, reason, off_by), (1, "bottom row", 0.5));
    let mut w = columns([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0; 3]);
    w[15] = 2.0;
    let (node, reason, off_by, words) = node_matrix_error(&rig_with_matrix(w));
    assert_eq!((node, reason, off_by), (1, "bottom row", 1.0));
    assert_eq!(words, "node 1: its matrix is not a translation, rotation and scale (bottom row off by 1); glTF node matrices must decompose into TRS");
}

/// A reflection (negative scale), a rotation written with six digits, and a zero scale are TRS
/// matrices: they load, and the node's world matrix is the file's matrix.
#[test]
fn a_node_matrix_with_negative_scale_or_rounding_loads() {
    let (s, c) = (0.309017_f32, 0.951057_f32); // 18 degrees about z, six digits
    let cases = [
        columns(
            [-2.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 2.0, 3.0],
        ),
        columns([c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, -0.5], [0.0, 1.0, 0.0]),
        columns([0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0; 3]),
    ];
    for m in cases {
        let scene =
            GltfScene::from_slice(&rig_with_matrix(m)).unwrap_or_else(|e| panic!("{m:?}: {e}"));
        let mut frame = scene.frame_buffers().backend(Backend::Reference);
        scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
        let world = scene.world_matrix(&frame, 1).unwrap().to_cols_array();
        for (got, want) in world.iter().zip(m) {
            assert!((got - want).abs() < 1e-5, "{m:?}: {world:?}");
        }
    }
}

/// The squared lengths the rule refuses: zero, an underflow to a subnormal or zero, an overflow.
const BAD_ROTATIONS: [([f32; 4], &str); 4] = [
    ([0.0, 0.0, 0.0, 0.0], "0e0"),
    ([1e-20, 0.0, 0.0, 0.0], "1e-40"),
    ([0.0, 0.0, 1e-19, 0.0], "1e-38"),
    ([1e20, 0.0, 0.0, 0.0], "inf"),
];

#[test]
fn a_node_rotation_whose_squared_length_is_not_normal_is_refused() {
    for (q, shown) in BAD_ROTATIONS {
        let mut b = Builder::default();
        let mut doc = rig(&mut b);
        doc["nodes"][0]["rotation"] = json!(q);
        let length_squared = glam::Quat::from_array(q).length_squared();
        assert!(!length_squared.is_normal());
        let words = format!("node 0: its rotation's squared length is {shown}; a rotation quaternion's squared length must be a normal f32 (from 1.1754944e-38 to 3.4028235e38)");
        assert_refused(
            GltfScene::from_slice(&b.glb(doc)),
            GltfError::NodeRotation {
                node: 0,
                length_squared,
            },
            &words,
        );
    }
    // Far from unit length but with a normal squared length: loads, used as q/|q|.
    for q in [
        [1e-18, 0.0, 0.0, 0.0],
        [0.0, 1e18, 0.0, 0.0],
        [0.0, 0.0, 0.0, 3.0],
    ] {
        let mut b = Builder::default();
        let mut doc = rig(&mut b);
        doc["nodes"][0]["rotation"] = json!(q);
        GltfScene::from_slice(&b.glb(doc)).unwrap_or_else(|e| panic!("{q:?}: {e}"));
    }
}

/// A rig whose animation rotates node 1 with keys `values` (two keys, or two cubic triples).
fn rotation_clip(values: &[f32], interpolation: &str) -> Vec<u8> {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    let times = b.f32s(&[0.0, 1.0], "SCALAR");
    let keys = b.f32s(values, "VEC4");
    let anim = &mut doc["animations"][0];
    anim["samplers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"input": times, "output": keys, "interpolation": interpolation}));
    anim["channels"]
        .as_array_mut()
        .unwrap()
        .push(json!({"sampler": 1, "target": {"node": 1, "path": "rotation"}}));
    b.glb(doc)
}

#[test]
fn a_rotation_key_whose_squared_length_is_not_normal_is_refused() {
    for (q, shown) in BAD_ROTATIONS {
        let length_squared = glam::Quat::from_array(q).length_squared();
        for interpolation in ["LINEAR", "STEP"] {
            let values = [[0.0, 0.0, 0.0, 1.0], q].concat();
            assert_refused(
                GltfScene::from_slice(&rotation_clip(&values, interpolation)),
                GltfError::RotationKey {
                    animation: 0,
                    channel: 1,
                    key: 1,
                    length_squared,
                },
                &format!("animation 0 channel 1: rotation key 1 has squared length {shown}; a rotation quaternion's squared length must be a normal f32 (from 1.1754944e-38 to 3.4028235e38)"),
            );
        }
        // CUBICSPLINE: in-tangent, value, out-tangent per key; the value is checked.
        let zero = [0.0; 4];
        let values = [zero, q, zero, zero, [0.0, 0.0, 0.0, 1.0], zero].concat();
        assert_eq!(
            gltf_err(GltfScene::from_slice(&rotation_clip(
                &values,
                "CUBICSPLINE"
            ))),
            GltfError::RotationKey {
                animation: 0,
                channel: 1,
                key: 0,
                length_squared,
            }
        );
    }
    // Zero tangents are ordinary: a cubic clip with unit values and zero tangents loads and samples
    // finite unit rotations.
    let zero = [0.0; 4];
    let unit = [0.0, 0.0, 0.0, 1.0];
    let values = [zero, unit, zero, zero, [0.0, 1.0, 0.0, 0.0], zero].concat();
    let scene = GltfScene::from_slice(&rotation_clip(&values, "CUBICSPLINE")).unwrap();
    let ch = &scene.clips()[0].channels()[1];
    assert_eq!(ch.property(), Property::Rotation);
    let q = glam::Vec4::from_array(ch.sample(0.5));
    assert!(q.is_finite() && (q.length() - 1.0).abs() < 1e-5, "{q}");
}

/// The rig's mesh with attribute `name` (`POSITION`, `NORMAL` or `TANGENT`) holding a non-finite
/// value at vertex 2; `skinned: false` draws the mesh rigidly (no skin on its node).
fn non_finite_attribute(name: &str, bad: f32, skinned: bool) -> Vec<u8> {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    let (ty, mut data) = match name {
        "TANGENT" => ("VEC4", [1.0, 0.0, 0.0, 1.0].repeat(3)),
        _ => ("VEC3", [0.0, 0.0, 1.0].repeat(3)),
    };
    let stride = data.len() / 3;
    data[2 * stride + 1] = bad;
    // Not through `f32s`, whose VEC3 bounds would carry the non-finite value into the JSON.
    let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
    let a = b.raw(&bytes, 5126, 3, ty);
    if name == "POSITION" {
        b.accessors[a]["min"] = json!([0.0, 0.0, 0.0]);
        b.accessors[a]["max"] = json!([1.0, 1.0, 1.0]);
    }
    doc["meshes"][0]["primitives"][0]["attributes"][name] = json!(a);
    if !skinned {
        doc["nodes"][2] = json!({"mesh": 0});
    }
    b.glb(doc)
}

#[test]
fn non_finite_positions_normals_and_tangents_are_refused() {
    for name in ["POSITION", "NORMAL", "TANGENT"] {
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            for skinned in [true, false] {
                assert_refused(
                    GltfScene::from_slice(&non_finite_attribute(name, bad, skinned)),
                    GltfError::AttributeValue {
                        mesh: 0,
                        primitive: 0,
                        attribute: name,
                        vertex: 2,
                    },
                    &format!("mesh 0 primitive 0: the {name} of vertex 2 is not finite"),
                );
            }
        }
    }
}

/// The rig with a translation (STEP) and a rotation (CUBICSPLINE) channel on node 1.
fn keyed_scene() -> GltfScene {
    let zero = [0.0; 4];
    let unit = [0.0, 0.0, 0.0, 1.0];
    let values = [zero, unit, zero, zero, unit, zero].concat();
    GltfScene::from_slice(&rotation_clip(&values, "CUBICSPLINE")).unwrap()
}

#[test]
fn channel_key_value_at_usize_max_is_none() {
    let scene = keyed_scene();
    let clip = &scene.clips()[0];
    let (translation, rotation) = (&clip.channels()[0], &clip.channels()[1]);
    assert_eq!(rotation.property(), Property::Rotation);
    assert_eq!(translation.key_value(1), Some([0.0, 2.0, 0.0, 0.0]));
    assert_eq!(rotation.key_value(1), Some([0.0, 0.0, 0.0, 1.0]));
    // usize::MAX / 3 is a key whose start (3k = usize::MAX) fits in a usize but whose end does not,
    // for the translation's three components a key; the others overflow earlier or not at all.
    for k in [
        usize::MAX,
        usize::MAX / 3,
        usize::MAX / 12,
        usize::MAX / 4,
        2,
    ] {
        assert_eq!(translation.key_value(k), None, "{k}");
        assert_eq!(rotation.key_value(k), None, "{k}");
    }
}

#[test]
fn scene_node_lookups_at_usize_max_are_none() {
    let scene = keyed_scene();
    assert_eq!(scene.level_index(usize::MAX), None);
    assert_eq!(scene.node_name(usize::MAX), None);
    assert_eq!(scene.rest_pose(usize::MAX), None);
    let frame = scene.frame_buffers();
    assert_eq!(scene.world_matrix(&frame, usize::MAX), None);
}

#[test]
fn sampling_clip_usize_max_is_clip_out_of_range() {
    let scene = keyed_scene();
    let mut frame = scene.frame_buffers();
    let want = Error::Gltf(GltfError::ClipOutOfRange {
        clip: usize::MAX,
        clips: 1,
    });
    assert_eq!(
        scene.sample(Some(usize::MAX), 0.0, Wrap::Loop, &mut frame),
        Err(want.clone())
    );
    assert_eq!(
        scene.evaluate(Some(usize::MAX), 0.0, Wrap::Loop, &mut frame),
        Err(want)
    );
}

#[test]
fn crowd_clip_usize_max_is_instance_clip_out_of_range() {
    let scene = keyed_scene();
    let mut frame = scene.crowd_buffers(2).unwrap();
    let want = Error::Gltf(GltfError::InstanceClipOutOfRange {
        instance: 1,
        clip: usize::MAX,
        clips: 1,
    });
    let clips = [0, usize::MAX];
    assert_eq!(
        scene.sample_crowd(
            &clips,
            &[0.0; 2],
            Wrap::Loop,
            Threads::One,
            frame.pose_mut()
        ),
        Err(want.clone())
    );
    assert_eq!(
        scene.evaluate_crowd(&clips, &[0.0; 2], Wrap::Loop, &mut frame),
        Err(want)
    );
}
