//! `KHR_animation_pointer` channels: a pointer at a node's translation, rotation, scale or morph weights
//! plays exactly as the plain channel it means, one at a mesh's weights as the plain weights channels
//! of the nodes that show them (bounded); a pointer at anything else is ignored with a warning
//! (escaped, shortened); a pointer at a node that does not exist, or one that is not a string, names
//! its JSON path.

use super::*;

/// The two-joint rig with a morph target on its mesh (vertex 1 moves by +2 in z at weight 1) and one
/// animation of four samplers: translation, rotation, scale (of node 1) and the mesh node's weights,
/// with linear, step and cubic-spline keys. `targets` gives each channel's target, in that order.
fn rig_with(targets: [Value; 4], extras: Value) -> Vec<u8> {
    let mut b = Builder::default();
    let mut doc = two_joint_rig(&mut b);
    let delta = b.f32s(&[0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0], "VEC3");
    doc["meshes"][0]["primitives"][0]["targets"] = json!([{"POSITION": delta}]);
    doc["nodes"][2]["weights"] = json!([0.0]);
    let times = b.f32s(&[0.0, 1.0, 2.0], "SCALAR");
    let moves = b.f32s(&[0.0, 1.0, 0.0, 2.0, 1.0, 0.0, 2.0, 3.0, 1.0], "VEC3");
    let turn = std::f32::consts::FRAC_1_SQRT_2;
    let turns = b.f32s(
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, turn, turn, 0.0, 0.0, 1.0, 0.0],
        "VEC4",
    );
    // Cubic spline: in-tangent, value, out-tangent per key.
    let sizes = b.f32s(
        &[
            0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.5, 0.0, 0.0, //
            0.0, 0.0, 0.0, 2.0, 1.0, 1.0, 0.0, 0.0, 0.0, //
            0.0, 0.0, 0.0, 1.0, 1.5, 1.0, 0.0, 0.0, 0.0,
        ],
        "VEC3",
    );
    let weights = b.f32s(&[0.0, 1.0, 0.25], "SCALAR");
    let [t, r, s, w] = targets;
    doc["animations"] = json!([{
        "samplers": [
            {"input": times, "output": moves},
            {"input": times, "output": turns, "interpolation": "STEP"},
            {"input": times, "output": sizes, "interpolation": "CUBICSPLINE"},
            {"input": times, "output": weights}
        ],
        "channels": [
            {"sampler": 0, "target": t},
            {"sampler": 1, "target": r},
            {"sampler": 2, "target": s},
            {"sampler": 3, "target": w}
        ]
    }]);
    if let Value::Object(extras) = extras {
        for (k, v) in extras {
            doc[k] = v;
        }
    }
    b.gltf(doc)
}

fn plain(node: usize, path: &str) -> Value {
    json!({"node": node, "path": path})
}

fn pointer(p: &str) -> Value {
    json!({"path": "pointer", "extensions": {"KHR_animation_pointer": {"pointer": p}}})
}

/// Every local transform, morph weight and skinned position of the scene at `t`, as bits.
fn bits_at(scene: &GltfScene, t: f32) -> Vec<u32> {
    let mut frame = scene.frame_buffers().backend(Backend::Reference);
    scene.evaluate(Some(0), t, Wrap::Clamp, &mut frame).unwrap();
    let mut out = Vec::new();
    for node in 0..3 {
        let (tr, q, s) = frame.local(node).unwrap();
        out.extend(
            tr.to_array()
                .iter()
                .chain(&q.to_array())
                .chain(&s.to_array())
                .map(|x| x.to_bits()),
        );
    }
    out.extend(frame.mesh_weights(0).unwrap().iter().map(|x| x.to_bits()));
    for p in &frame.meshes()[0].positions {
        out.extend(p.to_array().map(f32::to_bits));
    }
    out
}

#[test]
fn pointers_at_node_properties_play_as_the_plain_channels() {
    let required = json!({
        "extensionsUsed": ["KHR_animation_pointer"],
        "extensionsRequired": ["KHR_animation_pointer"]
    });
    let plain_file = rig_with(
        [
            plain(1, "translation"),
            plain(1, "rotation"),
            plain(1, "scale"),
            plain(2, "weights"),
        ],
        json!({}),
    );
    let pointed_file = rig_with(
        [
            pointer("/nodes/1/translation"),
            pointer("/nodes/1/rotation"),
            pointer("/nodes/1/scale"),
            pointer("/nodes/2/weights"),
        ],
        required,
    );
    let plain_scene = load(&plain_file);
    let pointed = load(&pointed_file);
    assert!(pointed.warnings().is_empty(), "{:?}", pointed.warnings());
    assert_eq!(pointed.clips()[0].channels().len(), 3);
    for t in [-1.0, 0.0, 0.3, 1.0, 1.5, 2.0, 3.0] {
        assert_eq!(bits_at(&plain_scene, t), bits_at(&pointed, t), "t = {t}");
    }
    // The channels do move things: node 1 at t = 0.5, and the morph at t = 1.
    let mut frame = pointed.frame_buffers();
    pointed
        .evaluate(Some(0), 0.5, Wrap::Clamp, &mut frame)
        .unwrap();
    assert_eq!(frame.local(1).unwrap().0, Vec3::new(1.0, 1.0, 0.0));
    pointed
        .evaluate(Some(0), 1.0, Wrap::Clamp, &mut frame)
        .unwrap();
    assert_eq!(frame.mesh_weights(0).unwrap(), &[1.0]);
    // A pointer and a plain channel mixed in one animation play as two plain ones.
    let mixed = rig_with(
        [
            plain(1, "translation"),
            pointer("/nodes/1/rotation"),
            plain(1, "scale"),
            pointer("/nodes/2/weights"),
        ],
        json!({}),
    );
    assert_eq!(bits_at(&load(&mixed), 0.7), bits_at(&plain_scene, 0.7));
}

#[test]
fn other_pointers_are_ignored_with_a_warning() {
    let long = format!("/materials/0/{}", "x".repeat(100));
    for p in [
        "/nodes/1/matrix",
        "/nodes/1/extensions/KHR_node_visibility/visible",
        // Node 2, the mesh's only node, has weights of its own: nothing shows the mesh's.
        "/meshes/0/weights",
        "/materials/0/pbrMetallicRoughness/baseColorFactor",
        "/nodes/01/translation",
        "/nodes/1/translation/0",
        "/nodes//translation",
        "nodes/1/translation",
        "/nodes/+1/translation",
        "/nodes/1/\u{1b}]0;owned\u{7}",
        &long,
    ] {
        let file = rig_with(
            [
                pointer(p),
                plain(1, "rotation"),
                plain(1, "scale"),
                plain(2, "weights"),
            ],
            json!({}),
        );
        let scene = load(&file);
        let w = scene.warnings();
        assert_eq!(w.len(), 1, "{p}: {w:?}");
        assert!(
            w[0].starts_with("animations[0].channels[0]: KHR_animation_pointer '")
                && w[0].ends_with("; ignored"),
            "{p}: {}",
            w[0]
        );
        assert!(!w[0].chars().any(char::is_control), "{p}: {}", w[0]);
        assert!(w[0].len() < 250, "{p}: {}", w[0]);
        // The three plain channels stay and play.
        assert_eq!(scene.clips()[0].channels().len(), 2, "{p}");
        assert!(scene.clips()[0].weight_channels().len() == 1, "{p}");
    }
    // A target without a node and without a pointer: ignored, as before.
    let file = rig_with(
        [
            json!({"path": "translation"}),
            plain(1, "rotation"),
            plain(1, "scale"),
            plain(2, "weights"),
        ],
        json!({}),
    );
    let scene = load(&file);
    assert_eq!(scene.warnings().len(), 1);
    assert!(scene.warnings()[0].contains("no target node"));
}

#[test]
fn a_pointer_at_no_node_or_not_a_string_names_its_path() {
    for (target, reason) in [
        (
            pointer("/nodes/3/translation"),
            "the pointer names a node that does not exist",
        ),
        (
            pointer("/nodes/99999999999999999999999/translation"),
            "the pointer names a node that does not exist",
        ),
        (
            json!({"path": "pointer", "extensions": {"KHR_animation_pointer": {"pointer": 7}}}),
            "a string is expected",
        ),
    ] {
        let file = rig_with(
            [
                target,
                plain(1, "rotation"),
                plain(1, "scale"),
                plain(2, "weights"),
            ],
            json!({}),
        );
        let e = gltf_err(&file);
        assert_eq!(
            e,
            GltfError::Json {
                path: "animations[0].channels[0].target.extensions.KHR_animation_pointer.pointer"
                    .into(),
                reason
            },
            "{e}"
        );
    }
}

/// The rig of [`rig_with`] with the weights channel's target `weights`, edited: node 2 leaves its own
/// weights out, node 3 draws the same mesh without weights of its own, node 4 draws it with its own
/// (0.5), so a pointer at the mesh's weights drives nodes 2 and 3, not 4. `extra` targets get one
/// more channel each on the weights sampler.
fn three_instances(
    weights: Value,
    extra: &[Value],
    limits_nodes: Option<usize>,
) -> Result<GltfScene, Error> {
    let mut doc = three_instances_doc(weights);
    for target in extra {
        doc["animations"][0]["channels"]
            .as_array_mut()
            .unwrap()
            .push(json!({"sampler": 3, "target": target}));
    }
    let mut options = LoadOptions::default();
    if let Some(n) = limits_nodes {
        options.limits.nodes = n;
    }
    GltfScene::from_slice_with(&serde_json::to_vec(&doc).unwrap(), None, &options)
}

/// The document of [`three_instances`], before its extra channels.
fn three_instances_doc(weights: Value) -> Value {
    let bytes = rig_with(
        [
            plain(1, "translation"),
            plain(1, "rotation"),
            plain(1, "scale"),
            weights,
        ],
        json!({}),
    );
    let mut doc: Value = serde_json::from_slice(&bytes).unwrap();
    doc["nodes"][2].as_object_mut().unwrap().remove("weights");
    let nodes = doc["nodes"].as_array_mut().unwrap();
    nodes.push(json!({"mesh": 0, "skin": 0}));
    nodes.push(json!({"mesh": 0, "skin": 0, "weights": [0.5]}));
    doc["scenes"][0]["nodes"] = json!([0, 2, 3, 4]);
    doc
}

/// Every skinned position and every instance's morph weights at `t`, as bits.
fn instance_bits(scene: &GltfScene, t: f32) -> Vec<u32> {
    let mut frame = scene.frame_buffers().backend(Backend::Reference);
    scene.evaluate(Some(0), t, Wrap::Clamp, &mut frame).unwrap();
    let mut out = Vec::new();
    for (i, m) in frame.meshes().iter().enumerate() {
        out.extend(frame.mesh_weights(i).unwrap().iter().map(|x| x.to_bits()));
        for p in &m.positions {
            out.extend(p.to_array().map(f32::to_bits));
        }
    }
    out
}

#[test]
fn a_pointer_at_a_meshs_weights_drives_the_nodes_that_show_them() {
    let pointed = three_instances(pointer("/meshes/0/weights"), &[], None).unwrap();
    assert!(pointed.warnings().is_empty(), "{:?}", pointed.warnings());
    let plain_file = three_instances(plain(2, "weights"), &[plain(3, "weights")], None).unwrap();
    assert_eq!(pointed.primitives().len(), 3);
    for t in [0.0, 0.5, 1.0, 1.7, 2.5] {
        assert_eq!(
            instance_bits(&plain_file, t),
            instance_bits(&pointed, t),
            "t = {t}"
        );
    }
    // At t = 1 the clip's weight is 1 on nodes 2 and 3; node 4 keeps its own 0.5.
    let mut frame = pointed.frame_buffers();
    pointed
        .evaluate(Some(0), 1.0, Wrap::Clamp, &mut frame)
        .unwrap();
    let by_node: Vec<(usize, f32)> = pointed
        .primitives()
        .iter()
        .enumerate()
        .map(|(i, p)| (p.node(), frame.mesh_weights(i).unwrap()[0]))
        .collect();
    assert_eq!(by_node, [(2, 1.0), (3, 1.0), (4, 0.5)]);

    // A mesh that does not exist names the pointer's path.
    let e = match three_instances(pointer("/meshes/1/weights"), &[], None) {
        Err(Error::Gltf(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        e,
        GltfError::Json {
            path: "animations[0].channels[3].target.extensions.KHR_animation_pointer.pointer"
                .into(),
            reason: "the pointer names a mesh that does not exist"
        }
    );
    // The node channels the pointers become count against ImportLimits::nodes (5 nodes here): three
    // pointers of two nodes each ask for 6.
    let pointers = [pointer("/meshes/0/weights"), pointer("/meshes/0/weights")];
    match three_instances(pointer("/meshes/0/weights"), &pointers, Some(5)) {
        Err(Error::Gltf(GltfError::Limit { limit, value, max })) => {
            assert_eq!((limit, value, max), ("nodes", 6, 5))
        }
        other => panic!("{other:?}"),
    }
    assert!(three_instances(pointer("/meshes/0/weights"), &pointers[..1], Some(5)).is_ok());
}

/// One animation mixing, in file order, a pointer at the mesh's weights (two nodes), a plain rotation
/// channel, an ignored pointer and a pointer at node 1's translation: the warning names the file's
/// channel 2, and the rest play. With bad rotation keys, the error names the file's channel 1, not
/// its index after the rewrite (2, after the two channels the mesh pointer became).
#[test]
fn mixed_pointers_keep_the_files_channel_indices() {
    let material = pointer("/materials/0/pbrMetallicRoughness/baseColorFactor");
    let channels = |rotation_sampler: usize| {
        json!([
            {"sampler": 3, "target": pointer("/meshes/0/weights")},
            {"sampler": rotation_sampler, "target": plain(1, "rotation")},
            {"sampler": 0, "target": material.clone()},
            {"sampler": 0, "target": pointer("/nodes/1/translation")}
        ])
    };
    let mut doc = three_instances_doc(plain(2, "weights"));
    doc["animations"][0]["channels"] = channels(1);
    let scene = load(&serde_json::to_vec(&doc).unwrap());
    assert_eq!(scene.warnings().len(), 1, "{:?}", scene.warnings());
    assert!(
        scene.warnings()[0]
            .starts_with("animations[0].channels[2]: KHR_animation_pointer '/materials/"),
        "{}",
        scene.warnings()[0]
    );
    let clip = &scene.clips()[0];
    let mut weighted: Vec<usize> = clip.weight_channels().iter().map(|w| w.node()).collect();
    weighted.sort_unstable();
    assert_eq!(weighted, [2, 3]);
    let mut moved: Vec<(usize, Property)> = clip
        .channels()
        .iter()
        .map(|c| (c.node(), c.property()))
        .collect();
    moved.sort_by_key(|&(n, p)| (n, p as u8));
    assert_eq!(moved, [(1, Property::Translation), (1, Property::Rotation)]);

    // The same channels on a file whose rotation keys are zero quaternions.
    let mut b = Builder::default();
    let mut doc = two_joint_rig(&mut b);
    let delta = b.f32s(&[0.0; 9], "VEC3");
    doc["meshes"][0]["primitives"][0]["targets"] = json!([{"POSITION": delta}]);
    doc["nodes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"mesh": 0, "skin": 0}));
    let times = b.f32s(&[0.0, 1.0], "SCALAR");
    let moves = b.f32s(&[0.0; 6], "VEC3");
    let zeros = b.f32s(&[0.0; 8], "VEC4");
    let weights = b.f32s(&[0.0, 1.0], "SCALAR");
    doc["animations"] = json!([{
        "samplers": [
            {"input": times, "output": moves},
            {"input": times, "output": zeros},
            {"input": times, "output": weights},
            {"input": times, "output": weights}
        ],
        "channels": channels(1)
    }]);
    match gltf_err(&b.gltf(doc.clone())) {
        GltfError::RotationKey {
            animation,
            channel,
            key,
            ..
        } => assert_eq!((animation, channel, key), (0, 1, 0)),
        e => panic!("{e}"),
    }
    // The bad rotation in an animation without pointers (channel 1), before one with them.
    let rewritten = doc["animations"][0].clone();
    let mut plain_first = rewritten.clone();
    plain_first["channels"] = json!([
        {"sampler": 0, "target": plain(1, "translation")},
        {"sampler": 1, "target": plain(1, "rotation")}
    ]);
    let mut pointers_next = rewritten;
    pointers_next["channels"] = json!([
        {"sampler": 3, "target": pointer("/meshes/0/weights")},
        {"sampler": 0, "target": material.clone()}
    ]);
    doc["animations"] = json!([plain_first, pointers_next]);
    match gltf_err(&b.gltf(doc)) {
        GltfError::RotationKey {
            animation, channel, ..
        } => assert_eq!((animation, channel), (0, 1)),
        e => panic!("{e}"),
    }
}
