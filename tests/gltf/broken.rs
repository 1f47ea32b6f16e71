//! Broken files and bad requests: each gives the error that names its rule and changes nothing.

use super::*;

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

    // Missing POSITION.
    let mut d = doc.clone();
    d["meshes"][0]["primitives"][0]["attributes"]
        .as_object_mut()
        .unwrap()
        .remove("POSITION");
    expect_err!(&b.gltf(d), GltfError::MissingAttribute { mesh: 0, primitive: 0, attribute } if attribute == "POSITION");

    // A second set named other than JOINTS_n/WEIGHTS_n with n in plain decimal: JOINTS_01 and
    // WEIGHTS_+1 are no set's names (left out as unknown attributes are), so the file has one set.
    // (Read as set 1, either would have asked for its missing partner.)
    for name in ["JOINTS_01", "WEIGHTS_+1"] {
        let mut d = doc.clone();
        d["meshes"][0]["primitives"][0]["attributes"][name] = json!(1);
        assert_eq!(load(&b.gltf(d)).primitives().len(), 1, "{name}");
    }

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
