//! Class 3: the import limits. Each [`ImportLimits`] field at its value loads and one past it is
//! [`GltfError::Limit`] with both numbers; a mesh instanced on many nodes meets `skinned_vertices`
//! without allocating the outputs; many empty primitive instances meet `primitive_instances`, and a
//! long strip meets `indices`, `triangles` and `allocation_bytes`, before they are allocated; a path
//! that is not a regular file fails before anything is read; and the places where a small file can
//! still make the importer allocate far more than it holds. Work is bounded by counting it (bytes and
//! allocation calls, [`counted`]), never by the clock.

use super::*;
use ispc_skinning::gltf::{ImportLimits, LoadOptions};
use std::time::Instant;

fn with_limits(limits: ImportLimits) -> LoadOptions {
    LoadOptions {
        limits,
        ..Default::default()
    }
}

/// Loads `bytes` with the limits changed by `at` (which loads) and by `past` (one less, which is
/// refused with `Limit { limit, value, max }` and its message).
fn at_and_past(bytes: &[u8], limit: &'static str, value: usize, set: fn(&mut ImportLimits, usize)) {
    let mut limits = ImportLimits::default();
    set(&mut limits, value);
    GltfScene::from_slice_with(bytes, None, &with_limits(limits))
        .unwrap_or_else(|e| panic!("{limit} = {value}: {e}"));
    set(&mut limits, value - 1);
    assert_refused(
        GltfScene::from_slice_with(bytes, None, &with_limits(limits)),
        GltfError::Limit {
            limit,
            value,
            max: value - 1,
        },
        &format!(
            "over the import limit {limit}: the file needs {value}, the limit is {} (raise ImportLimits::{limit} to load it)",
            value - 1
        ),
    );
}

/// The rig with its mesh on a second node too (two instances of three vertices), optionally with
/// normals.
fn two_instances(normals: bool) -> (Builder, Value) {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    doc["nodes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"mesh": 0, "skin": 0}));
    if normals {
        let n = b.f32s(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0], "VEC3");
        doc["meshes"][0]["primitives"][0]["attributes"]["NORMAL"] = json!(n);
    }
    (b, doc)
}

#[test]
fn file_bytes_at_and_one_past_the_limit() {
    let scratch = Scratch::new("file-bytes");
    let mut b = Builder::default();
    let doc = rig(&mut b);
    let glb = b.glb(doc.clone());
    let path = scratch.path().join("rig.glb");
    std::fs::write(&path, &glb).unwrap();
    let n = glb.len();
    let options = |file_bytes| {
        with_limits(ImportLimits {
            file_bytes,
            ..Default::default()
        })
    };
    GltfScene::load_with(&path, &options(n)).unwrap();
    let want = GltfError::Limit {
        limit: "file_bytes",
        value: n,
        max: n - 1,
    };
    let words = format!("over the import limit file_bytes: the file needs {n}, the limit is {} (raise ImportLimits::file_bytes to load it)", n - 1);
    assert_refused(
        GltfScene::load_with(&path, &options(n - 1)),
        want.clone(),
        &words,
    );
    // The same from bytes.
    GltfScene::from_slice_with(&glb, None, &options(n)).unwrap();
    assert_refused(
        GltfScene::from_slice_with(&glb, None, &options(n - 1)),
        want,
        &words,
    );

    // An external buffer file counts on its own: its declared byteLength against the same limit.
    let mut padded = b.clone();
    padded.bin.resize(64 << 10, 0);
    let bin = padded.bin.len();
    let mut doc = padded.document(doc);
    doc["buffers"] = json!([{"byteLength": bin, "uri": "rig.bin"}]);
    std::fs::write(scratch.path().join("rig.bin"), &padded.bin).unwrap();
    let gltf = scratch.path().join("rig.gltf");
    std::fs::write(&gltf, serde_json::to_vec(&doc).unwrap()).unwrap();
    assert!(std::fs::metadata(&gltf).unwrap().len() < bin as u64 - 1);
    GltfScene::load_with(&gltf, &options(bin)).unwrap();
    assert_refused(
        GltfScene::load_with(&gltf, &options(bin - 1)),
        GltfError::Limit {
            limit: "file_bytes",
            value: bin,
            max: bin - 1,
        },
        &format!("over the import limit file_bytes: the file needs {bin}, the limit is {} (raise ImportLimits::file_bytes to load it)", bin - 1),
    );
}

#[test]
fn nodes_at_and_one_past_the_limit() {
    let mut b = Builder::default();
    let doc = rig(&mut b);
    at_and_past(&b.glb(doc), "nodes", 3, |l, v| l.nodes = v);
}

#[test]
fn keys_per_channel_at_and_one_past_the_limit() {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    let t = b.f32s(&[0.0, 0.5, 1.0, 1.5, 2.0], "SCALAR");
    let v = b.f32s(&[0.0; 15], "VEC3");
    doc["animations"][0]["samplers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"input": t, "output": v}));
    doc["animations"][0]["channels"]
        .as_array_mut()
        .unwrap()
        .push(json!({"sampler": 1, "target": {"node": 0, "path": "scale"}}));
    at_and_past(&b.glb(doc), "keys_per_channel", 5, |l, v| {
        l.keys_per_channel = v
    });
}

#[test]
fn skinned_vertices_count_every_instance() {
    let (b, doc) = two_instances(false);
    at_and_past(&b.glb(doc), "skinned_vertices", 6, |l, v| {
        l.skinned_vertices = v
    });
}

#[test]
fn output_bytes_count_every_instance_and_attribute() {
    // 2 instances x 3 vertices x 12 bytes of positions.
    let (b, doc) = two_instances(false);
    at_and_past(&b.glb(doc), "output_bytes", 72, |l, v| l.output_bytes = v);
    // With normals, 24 bytes a vertex.
    let (b, doc) = two_instances(true);
    at_and_past(&b.glb(doc), "output_bytes", 144, |l, v| l.output_bytes = v);
}

/// The amplification: one 3,000-vertex mesh (about 100 kB of buffer) on 2,000 nodes asks for
/// 6,000,000 skinned vertices, 72 MB of positions per frame. With the default limits the 1,399th
/// instance passes 4,194,304 (1,399 x 3,000 = 4,197,000): refused quickly, and the load never holds
/// anything near the outputs' size.
#[test]
fn one_mesh_on_many_nodes_meets_the_vertex_limit_without_allocating_outputs() {
    let v = 3000;
    let mut b = Builder::default();
    let positions: Vec<f32> = (0..3 * v).map(|i| (i % 17) as f32).collect();
    let pos = b.f32s(&positions, "VEC3");
    let joints = b.u8s(&vec![0; 4 * v], "VEC4");
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0].repeat(v), "VEC4");
    let mut nodes = vec![json!({})];
    nodes.extend((0..2000).map(|_| json!({"mesh": 0, "skin": 0})));
    let doc = json!({
        "nodes": nodes,
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}],
        "skins": [{"joints": [0]}]
    });
    let glb = b.glb(doc);
    let start = Instant::now();
    let (result, peak) = peak_alloc(|| GltfScene::from_slice(&glb));
    let elapsed = start.elapsed();
    note(&format!(
        "amplification: {} byte file refused in {elapsed:?}, peak allocation {peak} bytes",
        glb.len()
    ));
    assert_refused(
        result,
        GltfError::Limit {
            limit: "skinned_vertices",
            value: 4_197_000,
            max: 4_194_304,
        },
        "over the import limit skinned_vertices: the file needs 4197000, the limit is 4194304 (raise ImportLimits::skinned_vertices to load it)",
    );
    // The positions alone of the instances before the limit would be 50 MB.
    assert!(peak < 16 << 20, "the load held {peak} bytes at once");
}

/// What a path that is not a regular file must give: `Io { path, message: "not a regular file" }`,
/// before anything is read from it: the load allocates under 64 KiB in all (reading /dev/zero up to
/// the file limit would allocate 512 MiB).
fn not_a_regular_file(path: &Path) {
    let shown = path.display().to_string();
    let (result, work) = counted(|| GltfScene::load(path));
    assert_refused(
        result,
        GltfError::Io {
            path: shown.clone(),
            message: "not a regular file".into(),
        },
        &format!("cannot read '{shown}': not a regular file"),
    );
    assert!(work.total < 64 << 10, "{shown}: {work:?}");
}

#[test]
fn a_directory_is_not_a_regular_file() {
    let scratch = Scratch::new("directory");
    not_a_regular_file(scratch.path());
    let dir = scratch.path().join("looks-like.glb");
    std::fs::create_dir(&dir).unwrap();
    not_a_regular_file(&dir);
}

#[cfg(unix)]
#[test]
fn dev_zero_is_not_a_regular_file() {
    let zero = Path::new("/dev/zero");
    if !zero.exists() {
        note("skipped: /dev/zero is absent here");
        return;
    }
    not_a_regular_file(zero);
}

/// A FIFO: opening it for reading waits for a writer, so the check must come before the open. The
/// load runs on its own thread while the test keeps opening the FIFO's write end, which succeeds
/// only while a reader has it open: the load must never have opened it ([`reads_fifo`]).
#[cfg(unix)]
#[test]
fn a_fifo_is_not_a_regular_file_and_is_not_opened() {
    let scratch = Scratch::new("fifo");
    let fifo = scratch.path().join("pipe.glb");
    let Some(()) = mkfifo(&fifo) else { return };
    let shown = fifo.display().to_string();
    let path = fifo.clone();
    let (result, opened) = reads_fifo(&fifo, move || GltfScene::load(&path).map(|_| ()));
    assert!(
        !opened,
        "GltfScene::load opened the FIFO for reading (and waited for a writer)"
    );
    assert_eq!(
        result,
        Err(Error::Gltf(GltfError::Io {
            path: shown,
            message: "not a regular file".into()
        }))
    );
}

/// A chain of 65,536 nodes, the default `nodes` limit, each a child of the one before: it loads and
/// evaluates on the reference and on the automatic backend (no recursion over the depth: the test's
/// thread has the default stack), and the work is linear in the nodes, counted: the load allocates at
/// most 4 KiB and 16 allocation calls per node in all (work per node that grew with the depth would
/// count 65,536 times more), and an evaluation after the first allocates nothing.
#[test]
fn a_chain_as_deep_as_the_node_limit_loads_and_evaluates_in_linear_work() {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    let n = ImportLimits::default().nodes;
    let mut nodes = doc["nodes"].as_array().unwrap().clone();
    for i in 3..n {
        let mut node = json!({"translation": [0.0, 1.0, 0.0]});
        if i + 1 < n {
            node["children"] = json!([i + 1]);
        }
        nodes.push(node);
    }
    nodes[1]["children"] = json!([3]);
    doc["nodes"] = json!(nodes);
    // Joint 1 is the deepest node: 65,534 levels down, 65,534 up.
    doc["skins"][0]["joints"] = json!([0, n - 1]);
    let glb = b.glb(doc);
    let start = Instant::now();
    let (scene, load) = counted(|| GltfScene::from_slice(&glb).unwrap());
    assert_eq!(scene.node_count(), n);
    for backend in [
        ispc_skinning::Backend::Reference,
        ispc_skinning::Backend::Auto,
    ] {
        let mut frame = scene.frame_buffers().backend(backend);
        let mut evaluate =
            || scene.evaluate(Some(0), 0.5, ispc_skinning::gltf::Wrap::Clamp, &mut frame);
        // The first evaluation may set up the thread pool; the next must allocate nothing.
        evaluate().unwrap();
        let (result, run) = counted(&mut evaluate);
        result.unwrap();
        assert_eq!(
            run.total, 0,
            "{backend:?}: an evaluation allocated: {run:?}"
        );
        // Vertex 1 is on the deepest joint: node 1 at 1.5 (animated), then 65,533 steps of 1.
        let y = frame.meshes()[0].positions[1].y;
        assert_eq!(y, 1.0 + 1.5 + 65_533.0, "{backend:?}");
    }
    note(&format!(
        "a chain of {n} nodes: load {load:?}; loaded and evaluated twice in {:?}",
        start.elapsed()
    ));
    assert!(
        load.total <= 4096 * n && load.calls <= 16 * n,
        "the load of {n} nodes did more than linear work: {load:?}"
    );
}

#[test]
fn primitive_instances_count_every_instance() {
    let (b, doc) = two_instances(false);
    at_and_past(&b.glb(doc), "primitive_instances", 2, |l, v| {
        l.primitive_instances = v
    });
}

/// The rig's primitive has no index accessor: its three implicit indices make one triangle.
#[test]
fn indices_and_triangles_at_and_one_past_the_limit() {
    let (b, doc) = two_instances(false);
    // The mesh is read once for both instances.
    at_and_past(&b.glb(doc.clone()), "indices", 3, |l, v| l.indices = v);
    at_and_past(&b.glb(doc), "triangles", 1, |l, v| l.triangles = v);
    // A strip of 6 indices makes 4 triangles, a fan too, a list 2.
    for (mode, triangles) in [(5, 4), (6, 4), (4, 2)] {
        let mut b = Builder::default();
        let mut doc = rig(&mut b);
        let indices = b.u8s(&[0, 1, 2, 0, 1, 2], "SCALAR");
        doc["meshes"][0]["primitives"][0]["indices"] = json!(indices);
        doc["meshes"][0]["primitives"][0]["mode"] = json!(mode);
        at_and_past(&b.glb(doc.clone()), "indices", 6, |l, v| l.indices = v);
        at_and_past(&b.glb(doc), "triangles", triangles, |l, v| l.triangles = v);
    }
}

/// The documented estimate for the two-instance rig: 512 bytes for each of its 4 nodes, 4 for each
/// of the 73 accessor components read (9 position, 12 joint, 12 weight, 32 inverse bind, 2 time and
/// 6 translation key components), 4 for each of 3 indices and 12 for the triangle, and 512 plus its
/// 36 output bytes (3 positions) for each of the 2 instances.
#[test]
fn allocation_bytes_at_and_one_past_the_limit() {
    let (b, doc) = two_instances(false);
    let estimate = 4 * 512 + 4 * 73 + (3 * 4 + 12) + 2 * (512 + 36);
    at_and_past(&b.glb(doc), "allocation_bytes", estimate, |l, v| {
        l.allocation_bytes = v
    });
}

/// The file: 65,536 nodes each instancing a mesh of 1,024 primitives without vertices (a
/// 750 KB file) passed every limit and allocated about 16 GB. Each instance is counted, empty or not,
/// so the 65,537th is refused, holding no more than the file's budget.
#[test]
fn empty_primitives_on_many_nodes_meet_the_instance_limit_before_allocating() {
    let mut b = Builder::default();
    let empty = b.raw(&[], 5126, 0, "VEC3");
    b.accessors[empty]["min"] = json!([0.0, 0.0, 0.0]);
    b.accessors[empty]["max"] = json!([0.0, 0.0, 0.0]);
    let primitive = json!({"attributes": {"POSITION": empty}});
    let doc = json!({
        "nodes": vec![json!({"mesh": 0}); 1 << 16],
        "meshes": [{"primitives": vec![primitive; 1024]}],
    });
    let glb = b.glb(doc);
    let (result, work) = counted(|| GltfScene::from_slice(&glb));
    note(&format!(
        "65,536 nodes x 1,024 empty primitives: a {}-byte file, {work:?}",
        glb.len()
    ));
    assert_refused(
        result,
        GltfError::Limit {
            limit: "primitive_instances",
            value: 65_537,
            max: 65_536,
        },
        "over the import limit primitive_instances: the file needs 65537, the limit is 65536 (raise ImportLimits::primitive_instances to load it)",
    );
    // The JSON tree of the file (documented at up to 48 bytes per byte) and the instances counted
    // before the refusal, far from the 16 GB of the file's 67 million instances.
    assert!(
        work.peak <= 48 * glb.len() + (64 << 20),
        "the load held {} bytes at once",
        work.peak
    );
}

/// A triangle strip of 16,777,217 one-byte indices (a 16 MiB file, one past the `indices` limit):
/// refused before the indices (64 MiB as u32) and their triangles (192 MiB) are made. The issue's
/// 100 MB strip took 1.8 GB.
#[test]
fn a_long_strip_meets_the_index_limit_before_allocating() {
    let n = ImportLimits::default().indices + 1;
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    let indices = b.u8s(&vec![0; n], "SCALAR");
    doc["meshes"][0]["primitives"][0]["indices"] = json!(indices);
    doc["meshes"][0]["primitives"][0]["mode"] = json!(5);
    let glb = b.glb(doc);
    let (result, work) = counted(|| GltfScene::from_slice(&glb));
    note(&format!("a strip of {n} indices: {work:?}"));
    assert_refused(
        result,
        GltfError::Limit {
            limit: "indices",
            value: n,
            max: n - 1,
        },
        &format!("over the import limit indices: the file needs {n}, the limit is {} (raise ImportLimits::indices to load it)", n - 1),
    );
    // The buffer (one copy of the file's bytes) and the JSON, not the 256 MiB of indices and
    // triangles.
    assert!(
        work.peak <= 2 * glb.len() + (16 << 20),
        "the load held {} bytes at once",
        work.peak
    );
}

/// Limits raised for a large strip: the triangle limit, then the predicted allocation, still refuse
/// it before anything is made for it.
#[test]
fn a_long_strip_meets_the_triangle_and_allocation_limits_before_allocating() {
    let n = 1 << 20;
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    let indices = b.u8s(&vec![0; n], "SCALAR");
    doc["meshes"][0]["primitives"][0]["indices"] = json!(indices);
    doc["meshes"][0]["primitives"][0]["mode"] = json!(5);
    let glb = b.glb(doc);
    let limits = ImportLimits {
        triangles: n - 3,
        ..Default::default()
    };
    let (result, work) = counted(|| GltfScene::from_slice_with(&glb, None, &with_limits(limits)));
    assert_eq!(
        gltf_err(result),
        GltfError::Limit {
            limit: "triangles",
            value: n - 2,
            max: n - 3
        }
    );
    assert!(work.peak <= 2 * glb.len() + (1 << 20), "{work:?}");
    // 4 bytes an index and 12 a triangle are 16 MiB here: a 16 MiB estimate refuses it.
    let limits = ImportLimits {
        allocation_bytes: 16 << 20,
        ..Default::default()
    };
    let (result, work) = counted(|| GltfScene::from_slice_with(&glb, None, &with_limits(limits)));
    match gltf_err(result) {
        GltfError::Limit {
            limit: "allocation_bytes",
            value,
            max,
        } => assert!(value > max && max == 16 << 20, "{value} {max}"),
        e => panic!("{e}"),
    }
    assert!(work.peak <= 2 * glb.len() + (1 << 20), "{work:?}");
}
