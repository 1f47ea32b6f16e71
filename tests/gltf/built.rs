//! Small glTF files built by the tests: samplers, world space, influences, scales, several skins,
//! sparse accessors.

use super::*;

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
fn sparse_accessors_and_more_than_sixteen_influences() {
    // 12 influences (three sets) are all kept; of 20 (five sets), the heaviest 16.
    for (total, kept) in [(12usize, 12usize), (20, 16)] {
        sparse_and_many_influences(total, kept);
    }
}

/// One primitive of two vertices with `total` influences each over JOINTS_0.. (joint j weighs j + 1, so
/// the heaviest `kept` are joints total - kept .. total), one position replaced through a sparse accessor.
fn sparse_and_many_influences(total: usize, kept: usize) {
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
    let mut attrs = json!({"POSITION": pos});
    for set in 0..total / 4 {
        let js: Vec<u8> = (0..2)
            .flat_map(|_| (4 * set..4 * set + 4).map(|j| j as u8))
            .collect();
        let ws: Vec<f32> = (0..2)
            .flat_map(|_| (4 * set..4 * set + 4).map(|j| (j + 1) as f32))
            .collect();
        attrs[format!("JOINTS_{set}")] = json!(b.u8s(&js, "VEC4", false));
        attrs[format!("WEIGHTS_{set}")] = json!(b.f32s(&ws, "VEC4"));
    }
    let mut nodes: Vec<Value> = (0..total)
        .map(|j| json!({"translation": [j as f32, 0.0, 0.0]}))
        .collect();
    nodes.push(json!({"mesh": 0, "skin": 0}));
    let doc = json!({
        "nodes": nodes,
        "meshes": [{"primitives": [{"attributes": attrs}]}],
        "skins": [{"joints": (0..total).collect::<Vec<_>>()}]
    });
    let bytes = b.gltf(doc);
    let scene = load(&bytes);
    let p = &scene.primitives()[0];
    assert_eq!(p.bind_positions(), &[Vec3::ZERO, Vec3::new(5.0, 6.0, 7.0)]);
    assert_eq!(p.skinned_mesh().influence_histogram()[kept], 2, "{total}");
    let backends =
        std::iter::once(Backend::Reference).chain(Isa::available().into_iter().map(Backend::from));
    for isa in backends {
        let mut frame = scene.frame_buffers().backend(isa);
        scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
        // The kept joints j with weights j + 1: mean translation sum(j (j + 1)) / sum(j + 1).
        let joints = total - kept..total;
        let sum: f32 = joints.clone().map(|j| (j + 1) as f32).sum();
        let expected: f32 = joints.map(|j| (j * (j + 1)) as f32).sum::<f32>() / sum;
        let got = frame.meshes()[0].positions[0].x;
        assert!(
            (got - expected).abs() < 1e-4,
            "{total} influences on {isa:?}: x {got}, expected {expected}"
        );
    }
    // With influence LOD 1, only the heaviest, the last joint, is left.
    let options = LoadOptions {
        max_influences: 1,
        ..LoadOptions::default()
    };
    let lod = GltfScene::from_slice_with(&bytes, None, &options).unwrap();
    let mut frame = lod.frame_buffers().backend(Backend::Reference);
    lod.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
    assert_eq!(
        frame.meshes()[0].positions[0],
        Vec3::new((total - 1) as f32, 0.0, 0.0)
    );
}

/// A channel without `target.node` is ignored, as the spec says (glTF-Asset-Generator's
/// Animation_NodeMisc has one), leaving a warning, and the channels beside it play; a
/// `KHR_animation_pointer` channel at a node's property plays (more in pointer.rs).
#[test]
fn channels_without_a_node_are_ignored_with_a_warning() {
    let mut b = Builder::default();
    let mut doc = two_joint_rig(&mut b);
    let times = b.f32s(&[0.0, 1.0], "SCALAR");
    let moves = b.f32s(&[0.0, 0.0, 0.0, 2.0, 0.0, 0.0], "VEC3");
    doc["extensionsUsed"] = json!(["KHR_animation_pointer"]);
    doc["animations"] = json!([
        {"name": "mixed", "samplers": [{"input": times, "output": moves}],
         "channels": [
            {"sampler": 0, "target": {"path": "translation"}},
            {"sampler": 0, "target": {"node": 1, "path": "translation"}},
            {"sampler": 0, "target": {"path": "pointer",
             "extensions": {"KHR_animation_pointer": {"pointer": "/nodes/1/translation"}}}}]},
        {"name": "only_ignored", "samplers": [{"input": times, "output": moves}],
         "channels": [{"sampler": 0, "target": {"path": "scale"}}]}
    ]);
    let scene = load(&b.gltf(doc));
    assert_eq!(scene.warnings().len(), 2, "{:?}", scene.warnings());
    assert!(scene.warnings()[0].starts_with("animations[0].channels[0]:"));
    assert!(scene.warnings()[1].starts_with("animations[1].channels[0]:"));
    // The pointer's channel is node 1's translation again (glTF forbids a target twice; the later
    // channel decides, and both move node 1 the same way here).
    let mixed = &scene.clips()[scene.clip_named("mixed").unwrap()];
    assert_eq!(mixed.channels().len(), 2);
    assert!(mixed.channels().iter().all(|c| c.node() == 1));
    assert!(scene.clips()[1].channels().is_empty());
    // The channel that stayed plays: node 1 moves by (1, 0, 0) at t = 0.5 from its rest (0, 1, 0).
    let mut frame = scene.frame_buffers();
    scene
        .evaluate(Some(0), 0.5, Wrap::Clamp, &mut frame)
        .unwrap();
    assert_eq!(frame.local(1).unwrap().0, Vec3::new(1.0, 0.0, 0.0));
    // A file without such channels has no warnings.
    let mut b = Builder::default();
    let plain = two_joint_rig(&mut b);
    assert!(load(&b.gltf(plain)).warnings().is_empty());
}
