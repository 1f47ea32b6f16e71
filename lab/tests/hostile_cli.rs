//! Class 7 of issue 15: `ispc-skinning skin` on hostile files. Each one exits with status 1 (a run
//! still going after [`QUICK`] is killed as hung), prints exactly one line on stderr (`ispc-skinning: error: ...`, no panic), and
//! writes no output file; the limit flags turn a file that loads into one that is refused, naming
//! the limit; and paths that are not regular files fail without waiting for a writer.
#![cfg(feature = "gltf")]

mod common;

use common::binary;
use serde_json::{json, Value};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A hang guard, not a speed bound: a run still going after this long is killed and fails the test
/// (a refusal that loops forever would otherwise hang the suite). It is generous, so that no machine
/// or emulator is too slow for it; how much work a refusal does is bounded by counting it, in the
/// library's tests (tests/gltf_hostile counts the bytes and allocations of the same loads).
const QUICK: Duration = Duration::from_secs(120);

/// A scratch directory of one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "ispc-skinning-hostile-cli-{}-{test}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// ---------------------------------------------------------------------------------------------------
// Small files: one buffer, written as a GLB BIN chunk or as an external file.

#[derive(Default)]
struct Builder {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Builder {
    fn add(&mut self, bytes: &[u8], component: u32, count: usize, ty: &str) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        self.views
            .push(json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()}));
        self.bin.extend_from_slice(bytes);
        self.accessors.push(json!({"bufferView": self.views.len() - 1, "componentType": component, "count": count, "type": ty}));
        self.accessors.len() - 1
    }

    fn f32s(&mut self, data: &[f32], ty: &str, per: usize) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let a = self.add(&bytes, 5126, data.len() / per, ty);
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

    fn document(&self, mut doc: Value, uri: Option<&str>) -> Value {
        doc["asset"] = json!({"version": "2.0"});
        doc["bufferViews"] = json!(self.views);
        doc["accessors"] = json!(self.accessors);
        doc["buffers"] = match uri {
            Some(uri) => json!([{"byteLength": self.bin.len(), "uri": uri}]),
            None => json!([{"byteLength": self.bin.len()}]),
        };
        doc
    }

    /// A GLB with the buffer as its BIN chunk.
    fn glb(&self, doc: Value) -> Vec<u8> {
        let mut json = serde_json::to_vec(&self.document(doc, None)).unwrap();
        while !json.len().is_multiple_of(4) {
            json.push(b' ');
        }
        let mut bin = self.bin.clone();
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let total = 12 + 8 + json.len() + 8 + bin.len();
        let mut out = Vec::new();
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&json);
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
        out
    }
}

/// Joint node 0 and the skinned mesh on node 1: one triangle, all on joint 0, translated by a
/// two-key animation. Two nodes.
fn rig(b: &mut Builder) -> Value {
    let pos = b.f32s(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0], "VEC3", 3);
    let joints = b.add(&[0; 12], 5121, 3, "VEC4");
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0].repeat(3), "VEC4", 4);
    let times = b.f32s(&[0.0, 1.0], "SCALAR", 1);
    let values = b.f32s(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3", 3);
    json!({
        "nodes": [{}, {"mesh": 0, "skin": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}],
        "skins": [{"joints": [0]}],
        "animations": [{"samplers": [{"input": times, "output": values}],
                        "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]}]
    })
}

/// The rig as a GLB, edited.
fn rig_glb(edit: impl FnOnce(&mut Builder, &mut Value)) -> Vec<u8> {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    edit(&mut b, &mut doc);
    b.glb(doc)
}

/// One hostile file of each class, written into `dir`, with a phrase its error message must hold.
fn hostile_files(dir: &Scratch) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut write = |name: &str, bytes: Vec<u8>, words: &str| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        files.push((path, words.to_string()));
    };
    // Class 1: what panicked inside the gltf crate.
    write(
        "target-path.glb",
        rig_glb(|_, d| d["animations"][0]["channels"][0]["target"]["path"] = json!("matrix")),
        "bad glTF JSON at animations[0].channels[0].target.path: the value is not one the spec allows",
    );
    write(
        "target-node.glb",
        rig_glb(|_, d| d["animations"][0]["channels"][0]["target"]["node"] = json!(7)),
        "bad glTF JSON at animations[0].channels[0].target.node: the index names no object of its kind",
    );
    write(
        "attribute.glb",
        rig_glb(|_, d| d["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(99)),
        "bad glTF JSON at meshes[0].primitives[0].attributes.POSITION",
    );
    write(
        "negative.glb",
        rig_glb(|_, d| d["nodes"][1]["skin"] = json!(-1)),
        "bad glTF JSON at nodes[1].skin: an index must be a non-negative integer",
    );
    // Class 2: a buffer outside the directory (the file it names exists and would load).
    let mut b = Builder::default();
    let doc = rig(&mut b);
    std::fs::create_dir_all(dir.join("asset")).unwrap();
    std::fs::write(dir.join("secret.bin"), &b.bin).unwrap();
    let outside =
        "buffer 0: an external buffer path must stay inside the directory of the .gltf file";
    for (name, uri, words) in [
        ("asset/dotdot.gltf", "../secret.bin", outside),
        ("asset/encoded.gltf", "%2E%2E%2Fsecret.bin", outside),
        (
            "asset/scheme.gltf",
            "file:///etc/passwd",
            "buffer 0: only data URIs and relative file paths are supported",
        ),
    ] {
        let text = serde_json::to_vec(&b.document(doc.clone(), Some(uri))).unwrap();
        write(name, text, words);
    }
    // Class 3: one 3,000-vertex mesh on 2,000 nodes.
    let mut b = Builder::default();
    let v = 3000;
    let positions: Vec<f32> = (0..3 * v).map(|i| (i % 17) as f32).collect();
    let pos = b.f32s(&positions, "VEC3", 3);
    let joints = b.add(&vec![0; 4 * v], 5121, v, "VEC4");
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0].repeat(v), "VEC4", 4);
    let mut nodes = vec![json!({})];
    nodes.extend((0..2000).map(|_| json!({"mesh": 0, "skin": 0})));
    let doc = json!({
        "nodes": nodes,
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}],
        "skins": [{"joints": [0]}]
    });
    write(
        "amplified.glb",
        b.glb(doc),
        "over the import limit skinned_vertices: the file needs 4197000, the limit is 4194304",
    );
    // Class 4: finite key times whose span overflows.
    write(
        "span.glb",
        rig_glb(|b, d| {
            let t = b.f32s(&[-3e38, 3e38], "SCALAR", 1);
            d["animations"][0]["samplers"][0]["input"] = json!(t);
        }),
        "animation 0 sampler 0: key time 1 is not finite or not greater than the one before",
    );
    files
}

// ---------------------------------------------------------------------------------------------------
// Running the command.

/// What a run did.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `skin ARGS`, killing it past `limit`: `None` when it had to be killed.
fn skin_within(args: &[&str], limit: Duration) -> Option<Run> {
    skin_in(None, args, limit)
}

/// [`skin_within`] in the directory `cwd`, when given.
fn skin_in(cwd: Option<&Path>, args: &[&str], limit: Duration) -> Option<Run> {
    let start = Instant::now();
    let mut command = binary();
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let mut child: Child = command
        .arg("skin")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the ispc-skinning binary");
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stdout = String::new();
            let mut stderr = String::new();
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut stdout)
                .unwrap();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            return Some(Run {
                code: status.code(),
                stdout,
                stderr,
            });
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The command refuses the file: status 1 (killed as hung past [`QUICK`]), one stderr line starting with
/// `ispc-skinning: error:` that holds `words`, no panic, and no `out` written.
fn refused(args: &[&str], words: &str, out: Option<&Path>) {
    refused_in(None, args, words, out)
}

/// [`refused`] in the directory `cwd`, when given.
fn refused_in(cwd: Option<&Path>, args: &[&str], words: &str, out: Option<&Path>) {
    let run = skin_in(cwd, args, QUICK)
        .unwrap_or_else(|| panic!("skin {args:?} was still running after {QUICK:?}"));
    let stderr = &run.stderr;
    assert_eq!(run.code, Some(1), "skin {args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "skin {args:?}: {stderr:?}");
    assert!(
        stderr.starts_with("ispc-skinning: error: ") && stderr.ends_with('\n'),
        "skin {args:?}: {stderr:?}"
    );
    assert!(
        stderr.contains(words),
        "skin {args:?}: {stderr:?} lacks {words:?}"
    );
    assert!(!stderr.contains("panicked"), "skin {args:?}: {stderr}");
    assert!(run.stdout.is_empty(), "skin {args:?}: {}", run.stdout);
    if let Some(out) = out {
        assert!(!out.exists(), "skin {args:?} wrote {}", out.display());
    }
}

fn succeeds(args: &[&str]) -> Run {
    let run = skin_within(args, Duration::from_secs(60)).expect("finishes");
    assert_eq!(run.code, Some(0), "skin {args:?}: {}", run.stderr);
    run
}

// ---------------------------------------------------------------------------------------------------
// The tests.

#[test]
fn hostile_files_of_every_class_exit_1_with_one_line_and_no_output() {
    let dir = Scratch::new("classes");
    for (file, words) in hostile_files(&dir) {
        for ext in ["json", "png", "obj"] {
            let out = dir.join(&format!("x.{ext}"));
            refused(&[s(&file), "--out", s(&out)], &words, Some(&out));
        }
        refused(&[s(&file)], &words, None);
    }
}

/// The rig itself is fine with the default limits, so the refusals below are the flags'.
#[test]
fn the_limit_flags_refuse_what_the_defaults_accept() {
    let dir = Scratch::new("flags");
    let file = dir.join("rig.glb");
    std::fs::write(&file, rig_glb(|_, _| {})).unwrap();
    let (json_out, png_out) = (dir.join("x.json"), dir.join("x.png"));
    let f = s(&file);
    succeeds(&[f, "--out", s(&json_out)]);
    succeeds(&[f, "--out", s(&png_out)]);
    std::fs::remove_file(&json_out).unwrap();
    std::fs::remove_file(&png_out).unwrap();
    refused(
        &[f, "--max-nodes", "1", "--out", s(&json_out)],
        "over the import limit nodes: the file needs 2, the limit is 1",
        Some(&json_out),
    );
    refused(
        &[f, "--max-keys", "1", "--out", s(&json_out)],
        "over the import limit keys_per_channel: the file needs 2, the limit is 1",
        Some(&json_out),
    );
    refused(
        &[f, "--max-vertices", "2", "--out", s(&json_out)],
        "over the import limit skinned_vertices: the file needs 3, the limit is 2",
        Some(&json_out),
    );
    let size = std::fs::metadata(&file).unwrap().len();
    let limit = (size - 1).to_string();
    refused(
        &[f, "--max-file-bytes", &limit, "--out", s(&json_out)],
        &format!("over the import limit file_bytes: the file needs {size}, the limit is {limit}"),
        Some(&json_out),
    );
    // 36 bytes of positions fit in 100, the JSON text does not: the CLI's own cap on what it writes.
    refused(
        &[f, "--max-output-bytes", "100", "--out", s(&json_out)],
        "the output passed --max-output-bytes 100",
        Some(&json_out),
    );
    refused(
        &[f, "--max-output-bytes", "35", "--out", s(&json_out)],
        "over the import limit output_bytes: the file needs 36, the limit is 35",
        Some(&json_out),
    );
    refused(
        &[f, "--max-render-work", "10", "--out", s(&png_out)],
        "over --max-render-work 10",
        Some(&png_out),
    );
}

#[test]
fn the_limit_flags_on_cesium_man() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/assets");
    if !dir.is_dir() {
        eprintln!(
            "skipped: {} is absent, so CesiumMan is not run",
            dir.display()
        );
        return;
    }
    let cesium = dir.join("CesiumMan/CesiumMan.glb");
    let scratch = Scratch::new("cesium");
    let (json_out, png_out) = (scratch.join("x.json"), scratch.join("x.png"));
    let f = s(&cesium);
    refused(
        &[f, "--max-output-bytes", "100", "--out", s(&json_out)],
        "over the import limit output_bytes",
        Some(&json_out),
    );
    refused(
        &[f, "--max-render-work", "10", "--out", s(&png_out)],
        "over --max-render-work 10",
        Some(&png_out),
    );
    succeeds(&[f, "--out", s(&json_out)]);
    succeeds(&[f, "--out", s(&png_out)]);
    assert!(json_out.is_file() && png_out.is_file());
}

#[test]
fn a_directory_and_dev_zero_are_refused_at_once() {
    let dir = Scratch::new("not-files");
    let out = dir.join("x.json");
    let sub = dir.join("looks-like.glb");
    std::fs::create_dir(&sub).unwrap();
    refused(
        &[s(&sub), "--out", s(&out)],
        &format!("cannot read '{}': not a regular file", sub.display()),
        Some(&out),
    );
    if Path::new("/dev/zero").exists() {
        refused(
            &["/dev/zero", "--out", s(&out)],
            "cannot read '/dev/zero': not a regular file",
            Some(&out),
        );
    } else {
        eprintln!("skipped: /dev/zero is absent here");
    }
}

/// A FIFO given as FILE: the command must fail, not wait for a writer. The child is killed past the
/// hang guard [`QUICK`], so a regression cannot hang the suite.
#[cfg(unix)]
#[test]
fn a_fifo_is_refused_at_once() {
    let dir = Scratch::new("fifo");
    let fifo = dir.join("pipe.glb");
    match std::process::Command::new("mkfifo").arg(&fifo).status() {
        Ok(status) if status.success() => {}
        other => {
            eprintln!("skipped: mkfifo is unavailable here ({other:?})");
            return;
        }
    }
    let out = dir.join("x.json");
    refused(
        &[s(&fifo), "--out", s(&out)],
        &format!("cannot read '{}': not a regular file", fifo.display()),
        Some(&out),
    );
}

/// One triangle repeated 1,000,000 times by a u8 index buffer (3 MB), on 4,000 nodes: 12,000 skinned
/// vertices, far inside every import limit, but 4,000,000,000 triangles to write or draw.
fn many_triangles(dir: &Scratch) -> PathBuf {
    let mut b = Builder::default();
    let pos = b.f32s(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0], "VEC3", 3);
    let joints = b.add(&[0; 12], 5121, 3, "VEC4");
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0].repeat(3), "VEC4", 4);
    let triangles = 1_000_000;
    let indices = b.add(
        &[0u8, 1, 2].repeat(triangles),
        5121,
        3 * triangles,
        "SCALAR",
    );
    let mut nodes = vec![json!({})];
    nodes.extend((0..4000).map(|_| json!({"mesh": 0, "skin": 0})));
    let doc = json!({
        "nodes": nodes,
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos, "JOINTS_0": joints, "WEIGHTS_0": weights}, "indices": indices}]}],
        "skins": [{"joints": [0]}]
    });
    let file = dir.join("triangles.glb");
    std::fs::write(&file, b.glb(doc)).unwrap();
    file
}

/// The OBJ writer checks its size as it goes, so it stops at --max-output-bytes, here 32 MiB (the
/// default 256 MiB takes about 1.5 s in release, too long for a debug build's 5 s).
#[test]
fn many_triangles_on_many_instances_stop_the_obj_at_the_output_cap() {
    let dir = Scratch::new("triangles-obj");
    let file = many_triangles(&dir);
    let out = dir.join("x.obj");
    refused(
        &[s(&file), "--max-output-bytes", "33554432", "--out", s(&out)],
        "the output passed --max-output-bytes 33554432",
        Some(&out),
    );
}

/// The render budget must refuse the picture as quickly, counting no further than the budget.
#[test]
fn many_triangles_on_many_instances_are_refused_quickly_as_a_picture() {
    let dir = Scratch::new("triangles-png");
    let file = many_triangles(&dir);
    let out = dir.join("x.png");
    refused(
        &[s(&file), "--out", s(&out)],
        "over --max-render-work 268435456",
        Some(&out),
    );
}

/// A buffer that is a symbolic link out of the directory is refused whether FILE is given with its
/// directory or, from inside that directory, by its bare name.
#[cfg(unix)]
#[test]
fn a_symlink_out_is_refused_for_a_bare_file_name() {
    let dir = Scratch::new("symlink");
    let mut b = Builder::default();
    let doc = rig(&mut b);
    let asset = dir.join("asset");
    std::fs::create_dir_all(&asset).unwrap();
    std::fs::write(dir.join("secret.bin"), &b.bin).unwrap();
    std::os::unix::fs::symlink("../secret.bin", asset.join("link.bin")).unwrap();
    let text = serde_json::to_vec(&b.document(doc, Some("link.bin"))).unwrap();
    std::fs::write(asset.join("model.gltf"), text).unwrap();
    let out = dir.join("x.json");
    let words =
        "buffer 0: an external buffer path must stay inside the directory of the .gltf file";
    refused(
        &[s(&asset.join("model.gltf")), "--out", s(&out)],
        words,
        Some(&out),
    );
    refused_in(
        Some(&asset),
        &["./model.gltf", "--out", s(&out)],
        words,
        Some(&out),
    );
    refused_in(
        Some(&asset),
        &["model.gltf", "--out", s(&out)],
        words,
        Some(&out),
    );
}
