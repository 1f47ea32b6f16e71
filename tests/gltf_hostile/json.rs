//! Class 1: documents the gltf crate panicked on (or would follow out of range) are refused by the
//! importer's own JSON check with [`GltfError::Json`], naming the JSON path, in a .gltf and in the same
//! JSON inside a GLB container.

use super::*;

const NAMES_NOTHING: &str = "the index names no object of its kind";
const NOT_AN_INDEX: &str = "an index must be a non-negative integer";
const NOT_ALLOWED: &str = "the value is not one the spec allows";
const NOT_A_UINT: &str = "a non-negative integer is expected";

/// A change to the rig's document.
type Edit = Box<dyn Fn(&mut Value)>;

/// Sets the value at a JSON pointer (creating the last key of an object when it is absent).
fn set(pointer: &'static str, value: Value) -> Edit {
    Box::new(move |d: &mut Value| {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        let target = d
            .pointer_mut(parent)
            .unwrap_or_else(|| panic!("no {parent} in the rig"));
        match target {
            Value::Array(items) => items[key.parse::<usize>().unwrap()] = value.clone(),
            Value::Object(map) => {
                map.insert(key.to_string(), value.clone());
            }
            other => panic!("{parent} is {other}"),
        }
    })
}

/// Removes the key at a JSON pointer.
fn remove(pointer: &'static str) -> Edit {
    Box::new(move |d: &mut Value| {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        let map = d.pointer_mut(parent).unwrap().as_object_mut().unwrap();
        assert!(map.remove(key).is_some(), "{pointer} is not in the rig");
    })
}

/// The rig, edited, as .gltf bytes and as .glb bytes.
fn forms(edit: &dyn Fn(&mut Value)) -> [(&'static str, Vec<u8>); 2] {
    let mut b = Builder::default();
    let doc = rig(&mut b);
    let mut gltf = b.gltf_doc(doc.clone());
    let mut glb_doc = b.glb_doc(doc);
    edit(&mut gltf);
    edit(&mut glb_doc);
    [
        ("gltf", serde_json::to_vec(&gltf).unwrap()),
        (
            "glb",
            glb(&serde_json::to_vec(&glb_doc).unwrap(), Some(&b.bin)),
        ),
    ]
}

/// Each edit must be refused, as .gltf and as .glb, with exactly `Json { path, reason }` and the
/// message `bad glTF JSON at {path}: {reason}`; a panic is reported as such, naming the case.
fn refused(cases: Vec<(Edit, &str, &'static str)>) {
    let mut failures = Vec::new();
    for (edit, path, reason) in &cases {
        for (form, bytes) in forms(edit.as_ref()) {
            let want = Error::Gltf(GltfError::Json {
                path: path.to_string(),
                reason,
            });
            let got = std::panic::catch_unwind(|| GltfScene::from_slice(&bytes));
            match got {
                Err(_) => failures.push(format!("{form} {path}: PANICKED")),
                Ok(Ok(_)) => failures.push(format!("{form} {path}: loaded")),
                Ok(Err(e)) if e != want => {
                    failures.push(format!("{form} {path}: got {e:?} ({e}), want {want:?}"))
                }
                Ok(Err(e)) => {
                    assert_eq!(
                        e.to_string(),
                        format!("glTF: bad glTF JSON at {path}: {reason}")
                    );
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_unedited_rig_loads_as_gltf_and_as_glb() {
    for (form, bytes) in forms(&|_| {}) {
        let scene = GltfScene::from_slice(&bytes).unwrap_or_else(|e| panic!("{form}: {e}"));
        assert_eq!(scene.node_count(), 3, "{form}");
        assert_eq!(scene.clips().len(), 1, "{form}");
        assert_eq!(scene.primitives().len(), 1, "{form}");
    }
}

/// The fields the importer reads whose type the index check does not cover (names, `weights`,
/// `normalized`, `extensionsRequired`) are typed when the document is read: a wrong type is
/// `GltfError::Json` with its path, as the gltf crate's derived model refused them before (with a parse
/// error). `extras` is free-form and never refused.
#[test]
fn wrongly_typed_fields_the_importer_reads_name_their_path() {
    const STRING: &str = "a string is expected";
    const NUMBERS: &str = "an array of numbers is expected";
    refused(vec![
        (set("/nodes/0/name", json!(5)), "nodes[0].name", STRING),
        (set("/skins/0/name", json!([])), "skins[0].name", STRING),
        (
            set("/animations/0/name", json!(true)),
            "animations[0].name",
            STRING,
        ),
        (
            set("/nodes/2/weights", json!(["a"])),
            "nodes[2].weights",
            NUMBERS,
        ),
        (
            set("/meshes/0/weights", json!(1.0)),
            "meshes[0].weights",
            NUMBERS,
        ),
        (
            set("/accessors/0/normalized", json!("yes")),
            "accessors[0].normalized",
            "a boolean is expected",
        ),
        (
            set("/extensionsRequired", json!("KHR_mesh_quantization")),
            "extensionsRequired",
            "an array of strings is expected",
        ),
        (
            set("/extensionsRequired", json!([7])),
            "extensionsRequired[0]",
            STRING,
        ),
    ]);
    // null is an optional field left out, as before.
    for (form, bytes) in forms(&|d| {
        d["nodes"][0]["name"] = json!(null);
        d["nodes"][2]["weights"] = json!(null);
    }) {
        let scene = GltfScene::from_slice(&bytes).unwrap_or_else(|e| panic!("{form}: {e}"));
        assert_eq!(scene.node_name(0), None, "{form}");
    }
    for extras in [
        json!(5),
        json!({"targetNames": 3}),
        json!({"targetNames": [1, "a"]}),
    ] {
        for (form, bytes) in forms(&|d| d["meshes"][0]["extras"] = extras.clone()) {
            let scene = GltfScene::from_slice(&bytes).unwrap_or_else(|e| panic!("{form}: {e}"));
            assert!(scene.target_names(0).is_empty(), "{form}");
        }
    }
}

/// The GLB container, read by the importer itself: a chunk of an unknown type between JSON and BIN is
/// skipped (the spec says to ignore it); a first chunk that is not JSON, a chunk longer than the
/// declared length (u32::MAX included) and a chunk header cut off are `GltfError::Glb`, naming the
/// rule; bytes past the declared length are not read.
#[test]
fn glb_chunks_are_read_by_the_rules() {
    let mut b = Builder::default();
    let doc = rig(&mut b);
    let good = b.glb(doc);
    let (json, bin) = glb_chunks(&good).unwrap();
    let bin = bin.unwrap();
    let chunk = |kind: &[u8; 4], data: &[u8]| {
        let mut c = (data.len() as u32).to_le_bytes().to_vec();
        c.extend_from_slice(kind);
        c.extend_from_slice(data);
        c
    };
    let container = |chunks: &[Vec<u8>], extra: &[u8]| {
        let body: Vec<u8> = chunks.concat();
        let mut out = b"glTF".to_vec();
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&((12 + body.len()) as u32).to_le_bytes());
        out.extend_from_slice(&body);
        out.extend_from_slice(extra);
        out
    };
    let loads = |bytes: &[u8], what: &str| {
        let scene = GltfScene::from_slice(bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(scene.primitives().len(), 1, "{what}");
    };
    loads(&good, "as written");
    let unknown = chunk(b"XTRA", &[1, 2, 3, 4]);
    loads(
        &container(
            &[
                chunk(b"JSON", &json),
                unknown.clone(),
                chunk(b"BIN\0", &bin),
            ],
            &[],
        ),
        "an unknown chunk before BIN",
    );
    loads(
        &container(
            &[chunk(b"JSON", &json), chunk(b"BIN\0", &bin)],
            b"trailing bytes",
        ),
        "bytes past the declared length",
    );
    let refused = |bytes: Vec<u8>, reason: &'static str| {
        assert_eq!(
            gltf_err(GltfScene::from_slice(&bytes)),
            GltfError::Glb { reason },
            "{reason}"
        );
    };
    refused(
        container(&[chunk(b"BIN\0", &bin), chunk(b"JSON", &json)], &[]),
        "the first chunk is not JSON",
    );
    let mut long = container(&[chunk(b"JSON", &json)], &[]);
    long[12..16].copy_from_slice(&(json.len() as u32 + 4).to_le_bytes());
    refused(long.clone(), "a chunk runs past the declared length");
    long[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    refused(long, "a chunk runs past the declared length");
    refused(
        container(&[chunk(b"JSON", &json), vec![8, 0, 0, 0]], &[]),
        "a chunk header runs past the declared length",
    );
    let mut bin_long = container(&[chunk(b"JSON", &json), chunk(b"BIN\0", &bin)], &[]);
    let at = 20 + json.len();
    bin_long[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    refused(bin_long, "a chunk runs past the declared length");
}

/// The gltf crate panicked on a target path that is not one of the spec's four strings.
#[test]
fn an_animation_target_path_outside_the_spec() {
    let path = "animations[0].channels[0].target.path";
    let pointer = "/animations/0/channels/0/target/path";
    refused(vec![
        (set(pointer, json!("matrix")), path, NOT_ALLOWED),
        (set(pointer, json!("TRANSLATION")), path, NOT_ALLOWED),
        (set(pointer, json!("")), path, NOT_ALLOWED),
        (set(pointer, json!(0)), path, NOT_ALLOWED),
    ]);
}

/// The gltf crate panicked on an animation target node out of range.
#[test]
fn an_animation_target_node_out_of_range() {
    let path = "animations[0].channels[0].target.node";
    let pointer = "/animations/0/channels/0/target/node";
    refused(vec![
        (set(pointer, json!(3)), path, NAMES_NOTHING),
        (set(pointer, json!(99)), path, NAMES_NOTHING),
        (set(pointer, json!(u64::MAX)), path, NAMES_NOTHING),
    ]);
}

/// The gltf crate panicked inside its own validation on a primitive attribute naming no accessor.
#[test]
fn a_primitive_attribute_accessor_out_of_range() {
    let at = "meshes[0].primitives[0].attributes";
    refused(vec![
        (
            set("/meshes/0/primitives/0/attributes/POSITION", json!(6)),
            &format!("{at}.POSITION"),
            NAMES_NOTHING,
        ),
        (
            set(
                "/meshes/0/primitives/0/attributes/POSITION",
                json!(1u64 << 40),
            ),
            &format!("{at}.POSITION"),
            NAMES_NOTHING,
        ),
        (
            set("/meshes/0/primitives/0/attributes/JOINTS_0", json!(6)),
            &format!("{at}.JOINTS_0"),
            NAMES_NOTHING,
        ),
        (
            set("/meshes/0/primitives/0/attributes/NORMAL", json!(6)),
            &format!("{at}.NORMAL"),
            NAMES_NOTHING,
        ),
    ]);
}

/// One index out of range for each kind of object an index can name. The rig has 6 accessors, 6 views,
/// 1 buffer, 3 nodes, 1 mesh, 1 skin, 1 sampler per animation, 1 scene and no camera, material,
/// texture, image or texture sampler.
#[test]
fn one_index_out_of_range_of_every_kind() {
    let prim = "meshes[0].primitives[0]";
    refused(vec![
        (
            set("/accessors/0/bufferView", json!(6)),
            "accessors[0].bufferView",
            NAMES_NOTHING,
        ),
        (
            set("/bufferViews/0/buffer", json!(1)),
            "bufferViews[0].buffer",
            NAMES_NOTHING,
        ),
        (
            set("/nodes/0/children", json!([1, 3])),
            "nodes[0].children[1]",
            NAMES_NOTHING,
        ),
        (
            set("/nodes/2/mesh", json!(1)),
            "nodes[2].mesh",
            NAMES_NOTHING,
        ),
        (
            set("/nodes/2/skin", json!(1)),
            "nodes[2].skin",
            NAMES_NOTHING,
        ),
        (
            set("/nodes/1/camera", json!(0)),
            "nodes[1].camera",
            NAMES_NOTHING,
        ),
        (
            set("/skins/0/joints", json!([0, 3])),
            "skins[0].joints[1]",
            NAMES_NOTHING,
        ),
        (
            set("/skins/0/inverseBindMatrices", json!(6)),
            "skins[0].inverseBindMatrices",
            NAMES_NOTHING,
        ),
        (
            set("/skins/0/skeleton", json!(3)),
            "skins[0].skeleton",
            NAMES_NOTHING,
        ),
        (
            set("/animations/0/samplers/0/input", json!(6)),
            "animations[0].samplers[0].input",
            NAMES_NOTHING,
        ),
        (
            set("/animations/0/samplers/0/output", json!(6)),
            "animations[0].samplers[0].output",
            NAMES_NOTHING,
        ),
        (
            set("/animations/0/channels/0/sampler", json!(1)),
            "animations[0].channels[0].sampler",
            NAMES_NOTHING,
        ),
        (
            set("/scenes/0/nodes", json!([0, 3])),
            "scenes[0].nodes[1]",
            NAMES_NOTHING,
        ),
        (set("/scene", json!(1)), "scene", NAMES_NOTHING),
        (
            set("/meshes/0/primitives/0/indices", json!(6)),
            &format!("{prim}.indices"),
            NAMES_NOTHING,
        ),
        (
            set("/meshes/0/primitives/0/material", json!(0)),
            &format!("{prim}.material"),
            NAMES_NOTHING,
        ),
        (
            set("/meshes/0/primitives/0/targets", json!([{"POSITION": 6}])),
            &format!("{prim}.targets[0].POSITION"),
            NAMES_NOTHING,
        ),
        (
            set(
                "/accessors/0/sparse",
                json!({"count": 1, "indices": {"bufferView": 6, "componentType": 5121}, "values": {"bufferView": 0}}),
            ),
            "accessors[0].sparse.indices.bufferView",
            NAMES_NOTHING,
        ),
        (
            set(
                "/accessors/0/sparse",
                json!({"count": 1, "indices": {"bufferView": 1, "componentType": 5121}, "values": {"bufferView": 6}}),
            ),
            "accessors[0].sparse.values.bufferView",
            NAMES_NOTHING,
        ),
        (
            set(
                "/materials",
                json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]),
            ),
            "materials[0].pbrMetallicRoughness.baseColorTexture.index",
            NAMES_NOTHING,
        ),
        (
            set("/materials", json!([{"normalTexture": {"index": 0}}])),
            "materials[0].normalTexture.index",
            NAMES_NOTHING,
        ),
        (
            set("/textures", json!([{"source": 0}])),
            "textures[0].source",
            NAMES_NOTHING,
        ),
        (
            set("/textures", json!([{"sampler": 0}])),
            "textures[0].sampler",
            NAMES_NOTHING,
        ),
        (
            set(
                "/images",
                json!([{"bufferView": 6, "mimeType": "image/png"}]),
            ),
            "images[0].bufferView",
            NAMES_NOTHING,
        ),
    ]);
}

#[test]
fn unknown_enum_values() {
    refused(vec![
        (
            set("/accessors/0/type", json!("VEC5")),
            "accessors[0].type",
            NOT_ALLOWED,
        ),
        (
            set("/accessors/0/componentType", json!(1234)),
            "accessors[0].componentType",
            NOT_ALLOWED,
        ),
        (
            set("/animations/0/samplers/0/interpolation", json!("CUBIC")),
            "animations[0].samplers[0].interpolation",
            NOT_ALLOWED,
        ),
        (
            set("/meshes/0/primitives/0/mode", json!(7)),
            "meshes[0].primitives[0].mode",
            NOT_ALLOWED,
        ),
        (
            set(
                "/accessors/0/sparse",
                json!({"count": 1, "indices": {"bufferView": 1, "componentType": 5126}, "values": {"bufferView": 0}}),
            ),
            "accessors[0].sparse.indices.componentType",
            NOT_ALLOWED,
        ),
    ]);
}

#[test]
fn missing_required_fields() {
    refused(vec![
        (
            remove("/accessors/0/count"),
            "accessors[0].count",
            "a required integer is missing",
        ),
        (
            remove("/buffers/0/byteLength"),
            "buffers[0].byteLength",
            "a required integer is missing",
        ),
        (remove("/asset"), "asset", "a required object is missing"),
        (
            remove("/asset/version"),
            "asset.version",
            "a required string is missing",
        ),
        (
            remove("/accessors/0/componentType"),
            "accessors[0].componentType",
            "a required value is missing",
        ),
        (
            remove("/accessors/0/type"),
            "accessors[0].type",
            "a required value is missing",
        ),
        (
            remove("/bufferViews/0/buffer"),
            "bufferViews[0].buffer",
            "a required index is missing",
        ),
        (
            remove("/bufferViews/0/byteLength"),
            "bufferViews[0].byteLength",
            "a required integer is missing",
        ),
        (
            remove("/skins/0/joints"),
            "skins[0].joints",
            "a required array is missing",
        ),
        (
            remove("/animations/0/samplers/0/input"),
            "animations[0].samplers[0].input",
            "a required index is missing",
        ),
        (
            remove("/animations/0/channels/0/sampler"),
            "animations[0].channels[0].sampler",
            "a required index is missing",
        ),
        (
            remove("/animations/0/channels/0/target"),
            "animations[0].channels[0].target",
            "a required object is missing",
        ),
        (
            remove("/animations/0/channels/0/target/path"),
            "animations[0].channels[0].target.path",
            "a required value is missing",
        ),
        (
            remove("/meshes/0/primitives/0/attributes"),
            "meshes[0].primitives[0].attributes",
            "a required object is missing",
        ),
        (
            set("/meshes/0/primitives", json!([])),
            "meshes[0].primitives",
            "a mesh needs at least one primitive",
        ),
    ]);
}

/// -1, 1.5, "0", null and true where an index (or a count) goes.
#[test]
fn negative_and_non_integer_indices() {
    let mut cases = Vec::new();
    for bad in [json!(-1), json!(1.5), json!("0"), json!(null), json!(true)] {
        for (pointer, path) in [
            (
                "/animations/0/channels/0/target/node",
                "animations[0].channels[0].target.node",
            ),
            ("/accessors/0/bufferView", "accessors[0].bufferView"),
            ("/skins/0/joints/1", "skins[0].joints[1]"),
            ("/nodes/0/children/0", "nodes[0].children[0]"),
            ("/scene", "scene"),
            ("/nodes/2/mesh", "nodes[2].mesh"),
            (
                "/meshes/0/primitives/0/attributes/POSITION",
                "meshes[0].primitives[0].attributes.POSITION",
            ),
            (
                "/animations/0/channels/0/sampler",
                "animations[0].channels[0].sampler",
            ),
        ] {
            cases.push((set(pointer, bad.clone()), path, NOT_AN_INDEX));
        }
        for (pointer, path) in [
            ("/accessors/0/count", "accessors[0].count"),
            ("/buffers/0/byteLength", "buffers[0].byteLength"),
            ("/bufferViews/0/byteOffset", "bufferViews[0].byteOffset"),
        ] {
            cases.push((set(pointer, bad.clone()), path, NOT_A_UINT));
        }
    }
    refused(cases);
}

/// JSON nested 100,000 deep is a parse error (the parser's recursion limit), not a stack overflow,
/// as .gltf and inside a GLB.
#[test]
fn deeply_nested_json_is_a_parse_error() {
    let deep = format!(
        "{{\"asset\": {{\"version\": \"2.0\"}}, \"nodes\": [{{}}], \"extras\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    for bytes in [deep.clone().into_bytes(), glb(deep.as_bytes(), None)] {
        let e = gltf_err(GltfScene::from_slice(&bytes));
        let GltfError::Parse { message } = &e else {
            panic!("{e:?}")
        };
        assert!(message.starts_with("recursion limit exceeded"), "{message}");
        assert_eq!(
            Error::Gltf(e.clone()).to_string(),
            format!("glTF: not a valid glTF 2.0 file: {message}")
        );
    }
}
