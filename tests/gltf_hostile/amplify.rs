//! Class 3, continued: small files that ask for far more memory or time than they hold. The module
//! docs promise that "nothing allocates more than a small multiple of the file's own data", and the
//! read budget says how much: [`READ_BUDGET_SLACK`] components plus four per byte. Each test here
//! holds a load to that budget (in f32s) plus 16 MiB for the JSON and the scene, [`budget`], and
//! bounds the work of the loads that could repeat it by counting the bytes they allocate in all
//! ([`counted`]), never by the clock.

use super::*;
use ispc_skinning::gltf::READ_BUDGET_SLACK;
use std::time::Instant;

/// The most bytes a load of a `file`-byte file may hold at once: the read budget in f32s, the JSON
/// tree the importer checks and reads its document from (documented as at most 48 bytes per
/// byte of JSON: a `serde_json::Value` is 32 bytes, and an array of one-digit numbers spends two bytes
/// of JSON on each; the file's size bounds the JSON's), plus 16 MiB.
fn budget(file: usize) -> usize {
    4 * (READ_BUDGET_SLACK + 4 * file) + 48 * file + (16 << 20)
}

/// Loads and returns the result, asserting the allocation stays inside [`budget`].
fn within_budget(name: &str, bytes: &[u8]) -> Result<GltfScene, Error> {
    let start = Instant::now();
    let (result, peak) = peak_alloc(|| GltfScene::from_slice(bytes));
    let (elapsed, file) = (start.elapsed(), bytes.len());
    note(&format!(
        "{name}: a {file}-byte file, {elapsed:?}, peak allocation {peak} bytes ({:.0}x the file)",
        peak as f64 / file as f64
    ));
    assert!(
        peak <= budget(file),
        "{name}: the load held {peak} bytes at once, over the budget of {} for a {file}-byte file",
        budget(file)
    );
    result
}

/// The same key accessors on 400 channels: every channel keeps its own copy of the keys, while the
/// read budget counts each accessor once.
#[test]
fn channels_sharing_one_sampler_stay_inside_the_read_budget() {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    let k = 16_384;
    let times: Vec<f32> = (0..k).map(|i| i as f32).collect();
    let t = b.f32s(&times, "SCALAR");
    let v = b.f32s(&vec![0.0; 3 * k], "VEC3");
    doc["animations"][0]["samplers"] = json!([{"input": t, "output": v}]);
    let channel = json!({"sampler": 0, "target": {"node": 1, "path": "translation"}});
    doc["animations"][0]["channels"] = json!(vec![channel; 400]);
    let bytes = b.glb(doc);
    // Either shared keys load, or the copies meet the budget: both hold the budget.
    match within_budget("400 channels on one sampler", &bytes) {
        Ok(scene) => assert_eq!(scene.clips()[0].channels().len(), 400),
        Err(Error::Gltf(GltfError::AccessorTooLarge { .. })) => {}
        Err(e) => panic!("{e}"),
    }
}

/// `JOINTS_9999999` next to JOINTS_0: the sets must come in pairs from 0, so the answer is that
/// JOINTS_1 is missing, found without reserving room for ten million sets.
#[test]
fn a_huge_attribute_set_number_reserves_nothing() {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    let attributes = &mut doc["meshes"][0]["primitives"][0]["attributes"];
    attributes["JOINTS_9999999"] = json!(1);
    attributes["WEIGHTS_9999999"] = json!(2);
    let bytes = b.glb(doc);
    let result = within_budget("JOINTS_9999999", &bytes);
    assert_refused(
        result,
        GltfError::MissingAttribute {
            mesh: 0,
            primitive: 0,
            attribute: "JOINTS_1".into(),
        },
        "mesh 0 primitive 0: attribute JOINTS_1 is missing",
    );
}

/// `JOINTS_4294967295` (a valid set number for the gltf crate, a u32) asks for 2^32 sets: 96 GiB for
/// the joints alone, which the allocator refuses, and Rust then aborts the process. The load runs in
/// a child process (this test binary again) so that an abort fails this test, not the suite.
#[test]
fn a_set_number_of_u32_max_does_not_abort_the_process() {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    let attributes = &mut doc["meshes"][0]["primitives"][0]["attributes"];
    attributes["JOINTS_4294967295"] = json!(1);
    attributes["WEIGHTS_4294967295"] = json!(2);
    let bytes = b.glb(doc);
    if std::env::var_os("GLTF_HOSTILE_CHILD").is_some() {
        assert_refused(
            GltfScene::from_slice(&bytes),
            GltfError::MissingAttribute {
                mesh: 0,
                primitive: 0,
                attribute: "JOINTS_1".into(),
            },
            "mesh 0 primitive 0: attribute JOINTS_1 is missing",
        );
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "amplify::a_set_number_of_u32_max_does_not_abort_the_process",
            "--include-ignored",
            "--test-threads=1",
        ])
        .env("GLTF_HOSTILE_CHILD", "1")
        .output()
        .unwrap();
    if child_cannot_start(&out, "a_set_number_of_u32_max_does_not_abort_the_process") {
        return;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the child load ended with {}: {}",
        out.status,
        stderr.lines().take(3).collect::<Vec<_>>().join(" | ")
    );
}

/// 2,000 skins sharing one inverse-bind accessor of 65,536 matrices (4 MB): a skin that read the
/// whole accessor again (the budget counts it once, and each read is freed) would make the work grow
/// with skins times accessor size without bound, 8 GB of reads here. Counted: everything the load
/// allocates in all stays under twice the budget of the file, so the accessor is read a bounded
/// number of times, not once per skin.
#[test]
fn skins_sharing_one_inverse_bind_accessor_are_read_once() {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    let ibm = b.f32s(&glam::Mat4::IDENTITY.to_cols_array().repeat(65_536), "MAT4");
    let mut skins = vec![doc["skins"][0].clone()];
    skins.extend((0..2000).map(|_| json!({"joints": [0], "inverseBindMatrices": ibm})));
    doc["skins"] = json!(skins);
    let bytes = b.glb(doc);
    let (scene, work) = counted(|| within_budget("2,000 skins sharing 65,536 matrices", &bytes));
    let scene = scene.unwrap();
    assert_eq!(scene.skins().len(), 2001);
    note(&format!("2,000 skins sharing 65,536 matrices: {work:?}"));
    let accessor = 65_536 * 64;
    assert!(
        work.total <= 2 * budget(bytes.len()) && work.total < 100 * accessor,
        "the load allocated {} bytes in all for a {}-byte file: the shared accessor is read once per skin",
        work.total,
        bytes.len()
    );
}

/// A million empty nodes (3 MB of `{},`) is refused by the `nodes` limit, but only after the JSON
/// check and the gltf crate have both built every node.
#[test]
fn a_million_empty_nodes_are_refused_before_they_are_built() {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    let mut nodes = doc["nodes"].as_array().unwrap().clone();
    nodes.extend(std::iter::repeat_n(json!({}), 1_000_000));
    doc["nodes"] = json!(nodes);
    let bytes = b.glb(doc);
    let result = within_budget("1,000,000 empty nodes", &bytes);
    assert_refused(
        result,
        GltfError::Limit {
            limit: "nodes",
            value: 1_000_003,
            max: 65_536,
        },
        "over the import limit nodes: the file needs 1000003, the limit is 65536 (raise ImportLimits::nodes to load it)",
    );
}

/// A skin of a million joints written as `0,` (2 MB) without inverse bind matrices: each would become
/// a 64-byte identity matrix, several times over. The spec's rule that a skin names each joint once
/// (so at most the node count) refuses it, at the second joint.
#[test]
fn a_skin_of_a_million_joints_stays_inside_the_budget() {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    let mut skins = vec![doc["skins"][0].clone()];
    skins.push(json!({"joints": vec![0; 1_000_000]}));
    doc["skins"] = json!(skins);
    let bytes = b.glb(doc);
    match within_budget("a skin of 1,000,000 joints", &bytes) {
        Ok(scene) => assert_eq!(scene.skins()[1].joints().len(), 1_000_000),
        Err(Error::Gltf(GltfError::Limit { .. })) => {}
        Err(Error::Gltf(GltfError::Json { path, reason })) => {
            assert_eq!(path, "skins[1].joints[1]");
            assert_eq!(reason, "a skin names each joint once");
        }
        Err(e) => panic!("{e}"),
    }
}

/// What a fixed importer may answer for the buffers below: the file loads (sharing the bytes), or it
/// is refused with a buffer or limit error; either way inside the budget.
fn shared_or_refused(result: Result<GltfScene, Error>) {
    match result {
        Ok(_)
        | Err(Error::Gltf(
            GltfError::Buffer { .. } | GltfError::Limit { .. } | GltfError::AccessorTooLarge { .. },
        )) => {}
        Err(e) => panic!("{e}"),
    }
}

/// A GLB whose 100 buffers all leave out `uri`: each is taken to be the 1 MiB BIN chunk (the spec
/// allows that only for the first buffer), and each gets its own copy.
#[test]
fn glb_buffers_without_uri_do_not_copy_the_bin_chunk_each() {
    let mut b = Builder::default();
    let doc = rig(&mut b);
    b.bin.resize(1 << 20, 0);
    let mut doc = b.glb_doc(doc);
    doc["buffers"] = json!(vec![json!({"byteLength": b.bin.len()}); 100]);
    let bytes = glb(&serde_json::to_vec(&doc).unwrap(), Some(&b.bin));
    shared_or_refused(within_budget("100 buffers on one BIN chunk", &bytes));
}

/// A .gltf whose 100 buffers all name the same 1 MiB file beside it: the file_bytes limit holds for
/// each, and each is read into its own copy.
#[test]
fn buffers_naming_one_external_file_do_not_read_it_each() {
    let scratch = Scratch::new("same-external-file");
    let mut b = Builder::default();
    let doc = rig(&mut b);
    b.bin.resize(1 << 20, 0);
    std::fs::write(scratch.path().join("data.bin"), &b.bin).unwrap();
    let mut doc = b.document(doc);
    doc["buffers"] = json!(vec![
        json!({"byteLength": b.bin.len(), "uri": "data.bin"});
        100
    ]);
    let gltf = serde_json::to_vec(&doc).unwrap();
    let path = scratch.path().join("model.gltf");
    std::fs::write(&path, &gltf).unwrap();
    let on_disk = gltf.len() + b.bin.len();
    let start = Instant::now();
    let (result, peak) = peak_alloc(|| GltfScene::load(&path));
    note(&format!(
        "100 buffers naming one file: {on_disk} bytes on disk, {:?}, peak allocation {peak} bytes",
        start.elapsed()
    ));
    assert!(
        peak <= budget(on_disk),
        "the load held {peak} bytes at once, over the budget of {} for {on_disk} bytes on disk",
        budget(on_disk)
    );
    shared_or_refused(result);
}

/// The rig with a morph target on its mesh, `extra` more nodes drawing that mesh (none with weights of
/// its own), and a weights sampler of `keys` keys: the ground for pointers at the mesh's weights.
fn morph_rig(b: &mut Builder, extra: usize, keys: usize) -> Value {
    let mut doc = rig(b);
    let delta = b.f32s(&[0.0; 9], "VEC3");
    doc["meshes"][0]["primitives"][0]["targets"] = json!([{"POSITION": delta}]);
    let nodes = doc["nodes"].as_array_mut().unwrap();
    nodes.extend((0..extra).map(|_| json!({"mesh": 0, "skin": 0})));
    let times: Vec<f32> = (0..keys).map(|i| i as f32).collect();
    let t = b.f32s(&times, "SCALAR");
    let w = b.f32s(&vec![0.5; keys], "SCALAR");
    doc["animations"][0]["samplers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"input": t, "output": w}));
    doc
}

fn mesh_pointer(extras: &Value) -> Value {
    json!({"sampler": 1, "extras": extras, "target": {"path": "pointer",
        "extensions": {"KHR_animation_pointer": {"pointer": "/meshes/0/weights"}}}})
}

/// One `KHR_animation_pointer` channel at a mesh drawn by 1,001 nodes, carrying 1 MB of `extras`, on a
/// sampler of 65,536 weight keys: it becomes 1,001 plain weights channels, each a new small object (not
/// a copy of the channel's extras, 1 GB in all) sharing one read of the keys (not 1,001 reads, 262 MB).
#[test]
fn a_pointer_at_a_meshs_weights_shares_its_keys_and_leaves_its_extras() {
    let mut b = Builder::default();
    let mut doc = morph_rig(&mut b, 1_000, 65_536);
    let extras = json!({"blob": "x".repeat(1 << 20)});
    doc["animations"][0]["channels"]
        .as_array_mut()
        .unwrap()
        .push(mesh_pointer(&extras));
    let bytes = b.glb(doc);
    let scene = within_budget("a mesh pointer on 1,001 nodes", &bytes).unwrap();
    assert_eq!(scene.clips()[0].weight_channels().len(), 1_001);
}

/// 20,000 pointers at the weights of a mesh drawn by 4,001 nodes would become 80 million channels:
/// refused by the node limit (65,536 by default) as they are counted, before any is made.
#[test]
fn pointers_at_a_meshs_weights_meet_the_node_limit_before_expanding() {
    let mut b = Builder::default();
    let mut doc = morph_rig(&mut b, 3_998, 4);
    let channel = mesh_pointer(&json!(null));
    doc["animations"][0]["channels"]
        .as_array_mut()
        .unwrap()
        .extend(std::iter::repeat_n(channel, 20_000));
    let bytes = b.glb(doc);
    match within_budget("20,000 mesh pointers on 4,001 nodes", &bytes) {
        Err(Error::Gltf(GltfError::Limit { limit, value, max })) => {
            assert_eq!(limit, "nodes");
            assert_eq!(max, 1 << 16);
            // Refused at the first pointer that passes the limit.
            assert!(value > max && value <= max + 4_001, "{value}");
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}
