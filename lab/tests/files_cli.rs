//! Issue 31, the command's half: outputs never replace an input (by device and inode, through links and
//! other extensions, nor a file the glTF names), a write that fails leaves the old file whole, names
//! from a file reach the terminal with their control characters escaped, and `--blend` is bounded.
//! Every test builds its own small files; none needs the shared assets.
#![cfg(feature = "gltf")]

mod common;

use common::binary;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A scratch directory of one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "ispc-skinning-files-cli-{}-{test}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// The temporary files a write left behind.
    fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The vertices of the rig: 40 triangles, enough that its JSON output passes 1 KiB.
const VERTICES: usize = 120;

/// A skinned rig: joint node 0 (translated by a two-key clip), the mesh on node 1. Returns the JSON
/// document (its one buffer at `uri`, or the GLB BIN chunk when `None`) and the buffer's bytes.
fn rig(uri: Option<&str>, name: &str) -> (Value, Vec<u8>) {
    let mut bin = Vec::new();
    let positions: Vec<f32> = (0..3 * VERTICES).map(|i| (i % 7) as f32 * 0.25).collect();
    bin.extend(positions.iter().flat_map(|f| f.to_le_bytes()));
    let joints = bin.len();
    bin.extend(std::iter::repeat_n(0u8, 4 * VERTICES));
    let weights = bin.len();
    bin.extend(
        [1.0f32, 0.0, 0.0, 0.0]
            .repeat(VERTICES)
            .iter()
            .flat_map(|f| f.to_le_bytes()),
    );
    let times = bin.len();
    bin.extend([0.0f32, 1.0].iter().flat_map(|f| f.to_le_bytes()));
    let values = bin.len();
    bin.extend(
        [0.0f32, 0.0, 0.0, 0.0, 1.0, 0.0]
            .iter()
            .flat_map(|f| f.to_le_bytes()),
    );
    let view = |offset: usize, length: usize| json!({"buffer": 0, "byteOffset": offset, "byteLength": length});
    let mut buffer = json!({"byteLength": bin.len()});
    if let Some(uri) = uri {
        buffer["uri"] = json!(uri);
    }
    let doc = json!({
        "asset": {"version": "2.0"},
        "buffers": [buffer],
        "bufferViews": [view(0, joints), view(joints, weights - joints), view(weights, times - weights),
                        view(times, 8), view(values, 24)],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": VERTICES, "type": "VEC3",
             "min": [0.0, 0.0, 0.0], "max": [1.5, 1.5, 1.5]},
            {"bufferView": 1, "componentType": 5121, "count": VERTICES, "type": "VEC4"},
            {"bufferView": 2, "componentType": 5126, "count": VERTICES, "type": "VEC4"},
            {"bufferView": 3, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [1.0]},
            {"bufferView": 4, "componentType": 5126, "count": 2, "type": "VEC3"}
        ],
        "nodes": [{"name": name}, {"name": name, "mesh": 0, "skin": 0}],
        "meshes": [{"name": name, "primitives": [{"attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}}]}],
        "skins": [{"name": name, "joints": [0]}],
        "animations": [{"name": name, "samplers": [{"input": 3, "output": 4}],
                        "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]}]
    });
    (doc, bin)
}

/// The rig as GLB bytes.
fn glb(name: &str) -> Vec<u8> {
    let (doc, mut bin) = rig(None, name);
    let mut json = serde_json::to_vec(&doc).unwrap();
    while json.len() % 4 != 0 {
        json.push(b' ');
    }
    while bin.len() % 4 != 0 {
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

/// Writes the rig as a JSON glTF at `path`, its buffer in the file `bin` beside it.
fn write_gltf(path: &Path, bin_name: &str, name: &str) {
    let (doc, bin) = rig(Some(bin_name), name);
    std::fs::write(path, serde_json::to_vec(&doc).unwrap()).unwrap();
    std::fs::write(path.parent().unwrap().join(bin_name), bin).unwrap();
}

fn skin(args: &[&str]) -> Output {
    binary()
        .arg("skin")
        .args(args)
        .output()
        .expect("run the ispc-skinning binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn an_output_that_is_the_input_is_refused_and_the_input_kept() {
    let dir = Scratch::new("same");
    // A JSON glTF named .json, whose buffer is a file named data.obj.
    let json_gltf = dir.join("rig.json");
    write_gltf(&json_gltf, "data.obj", "rig");
    // A GLB named .png.
    let glb_png = dir.join("rig.png");
    std::fs::write(&glb_png, glb("rig")).unwrap();
    let mut cases: Vec<(PathBuf, PathBuf)> = vec![
        (json_gltf.clone(), json_gltf.clone()),
        (json_gltf.clone(), dir.join("./rig.json")),
        (glb_png.clone(), glb_png.clone()),
        // The external buffer the input names.
        (json_gltf.clone(), dir.join("data.obj")),
    ];
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&json_gltf, dir.join("link.obj")).unwrap();
        cases.push((json_gltf.clone(), dir.join("link.obj")));
        std::os::unix::fs::symlink(&glb_png, dir.join("link.json")).unwrap();
        cases.push((glb_png.clone(), dir.join("link.json")));
        std::fs::hard_link(&json_gltf, dir.join("hard.png")).unwrap();
        cases.push((json_gltf.clone(), dir.join("hard.png")));
        std::fs::hard_link(&glb_png, dir.join("hard.obj")).unwrap();
        cases.push((glb_png.clone(), dir.join("hard.obj")));
        // The input reached through a link, the output by its own name.
        cases.push((dir.join("link.json"), glb_png.clone()));
    }
    let before: Vec<Vec<u8>> = ["rig.json", "data.obj", "rig.png"]
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect();
    for (input, out) in &cases {
        let run = skin(&[s(input), "--out", s(out)]);
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{input:?} -> {out:?}: {stderr}");
        assert!(
            stderr.contains("--out") && stderr.contains("refusing to overwrite the input"),
            "{input:?} -> {out:?}: {stderr}"
        );
        let after: Vec<Vec<u8>> = ["rig.json", "data.obj", "rig.png"]
            .iter()
            .map(|f| std::fs::read(dir.join(f)).unwrap())
            .collect();
        assert!(after == before, "{input:?} -> {out:?} changed an input");
        assert!(dir.leftovers().is_empty(), "{:?}", dir.leftovers());
    }
    // Another output of the same files is written, and the inputs still load.
    for input in [&json_gltf, &glb_png] {
        let out = dir.join("out.json");
        let run = skin(&[s(input), "--out", s(&out)]);
        assert!(run.status.success(), "{}", text(&run.stderr));
        let written: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(
            written["meshes"][0]["positions"].as_array().unwrap().len(),
            VERTICES
        );
    }
}

/// A file size limit (`ulimit -f`, with SIGXFSZ ignored so the write fails with EFBIG) stops the write
/// part way, as a full disk would: the old file stays whole and no temporary file is left.
#[cfg(unix)]
#[test]
fn a_write_that_fails_leaves_the_old_file_whole() {
    let dir = Scratch::new("fails");
    let input = dir.join("rig.glb");
    std::fs::write(&input, glb("rig")).unwrap();
    for name in ["old.json", "old.obj", "old.png"] {
        let out = dir.join(name);
        let old = format!("the old {name}, which the failed write must keep\n").repeat(4);
        std::fs::write(&out, &old).unwrap();
        let bin = binary();
        let mut command = std::process::Command::new("/bin/sh");
        command
            .arg("-c")
            .arg("ulimit -f 1 && trap '' XFSZ && exec \"$@\"")
            .arg("sh")
            .arg(bin.get_program())
            .args(bin.get_args())
            .args(["skin", s(&input), "--out", s(&out)]);
        let run = command.output().unwrap();
        let stderr = text(&run.stderr);
        assert!(
            !run.status.success(),
            "{name}: the write should have failed"
        );
        assert!(stderr.contains("cannot write"), "{name}: {stderr}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), old, "{name}");
        assert!(dir.leftovers().is_empty(), "{name}: {:?}", dir.leftovers());
        // Without the limit the same command replaces it.
        let run = skin(&[s(&input), "--out", s(&out)]);
        assert!(run.status.success(), "{}", text(&run.stderr));
        assert_ne!(std::fs::read(&out).unwrap(), old.as_bytes(), "{name}");
        assert!(
            std::fs::metadata(&out).unwrap().len() > 1024,
            "{name}: too small to test"
        );
    }
}

const HOSTILE: &str = "Bone\u{1b}]0;owned\u{7}\u{1b}[2J\u{1b}[1;31mred\u{9b}2K\r\nfake: line";

/// No ESC, BEL, CR or C1 control byte reaches the terminal; the escaped form does.
fn assert_escaped(what: &str, run: &Output) {
    for (stream, bytes) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        let shown = text(bytes);
        // Line breaks are the command's own; every other control character would be the file's.
        let raw = shown.chars().find(|c| c.is_control() && *c != '\n');
        assert!(raw.is_none(), "{what}: raw {raw:?} on {stream}: {shown:?}");
    }
    let all = text(&run.stdout) + &text(&run.stderr);
    assert!(
        all.contains("\\u{1b}]0;owned\\u{7}\\u{1b}[2J"),
        "{what}: {all}"
    );
}

#[test]
fn names_from_the_file_reach_the_terminal_escaped() {
    let dir = Scratch::new("names");
    let file = dir.join("hostile.glb");
    // Every name in the file (nodes, mesh, skin, animation) holds title, erase and colour escapes.
    std::fs::write(&file, glb(HOSTILE)).unwrap();
    // The summary prints the clip's name.
    let run = skin(&[s(&file)]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_escaped("summary", &run);
    // A clip name that is not there lists the file's clip names.
    let run = skin(&[s(&file), "--clip-name", "Walk"]);
    assert_eq!(run.status.code(), Some(2));
    assert_escaped("--clip-name", &run);
    // An extension the file requires, in the library's error.
    let (mut doc, bin) = rig(Some("rig.bin"), "rig");
    doc["extensionsRequired"] = json!([HOSTILE]);
    doc["extensionsUsed"] = json!([HOSTILE]);
    std::fs::write(dir.join("rig.bin"), &bin).unwrap();
    let ext = dir.join("extension.gltf");
    std::fs::write(&ext, serde_json::to_vec(&doc).unwrap()).unwrap();
    let run = skin(&[s(&ext)]);
    assert_eq!(run.status.code(), Some(1));
    assert_escaped("extensionsRequired", &run);
    // A buffer URI that names no file, in the library's error.
    // (No ':' in it, which would make it a URI scheme that is refused without being quoted.)
    let (doc, _) = rig(Some("Bone\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}2K.bin"), "rig");
    let uri = dir.join("uri.gltf");
    std::fs::write(&uri, serde_json::to_vec(&doc).unwrap()).unwrap();
    let run = skin(&[s(&uri)]);
    assert_eq!(run.status.code(), Some(1));
    assert_escaped("buffer uri", &run);
}

#[test]
fn blend_takes_at_most_64_entries() {
    let dir = Scratch::new("blend");
    let file = dir.join("rig.glb");
    std::fs::write(&file, glb("rig")).unwrap();
    let list = |n: usize| vec!["0:1"; n].join(",");
    let run = skin(&[s(&file), "--blend", &list(64)]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    for n in [65, 20_000] {
        let run = skin(&[s(&file), "--blend", &list(n)]);
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{n}: {stderr}");
        assert!(
            stderr.contains("--blend takes at most 64") && stderr.contains(&format!("not {n}")),
            "{n}: {stderr}"
        );
        assert!(run.stdout.is_empty());
    }
}

#[test]
fn bench_refuses_outputs_over_its_input_before_measuring() {
    let dir = Scratch::new("bench");
    let file = dir.join("rig.glb");
    let bytes = glb("rig");
    std::fs::write(&file, &bytes).unwrap();
    let chart = dir.join("chart.svg");
    for (args, words) in [
        (vec!["--json", s(&file)], "--json"),
        (vec!["--plot", s(&file)], "--plot"),
        (
            vec!["--json", s(&chart), "--plot", s(&chart)],
            "--json and --plot name the same file",
        ),
        // An option that only a section left out would use.
        (vec!["--only", "compact"], "--only leaves out"),
    ] {
        let run = binary()
            .args(["bench", "--quick", "--gltf", s(&file)])
            .args(&args)
            .output()
            .expect("run the ispc-skinning binary");
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(words), "{args:?}: {stderr}");
        // Refused before the first row: nothing measured, nothing written.
        assert!(run.stdout.is_empty(), "{args:?}: {}", text(&run.stdout));
        assert_eq!(std::fs::read(&file).unwrap(), bytes);
        assert!(!chart.exists());
    }
    // --peers with no section that has the peer's rows.
    let run = binary()
        .args(["bench", "--quick", "--peers", "--only", "compact,morph"])
        .output()
        .expect("run the ispc-skinning binary");
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no section that --only names"), "{stderr}");
    assert!(run.stdout.is_empty(), "{}", text(&run.stdout));
}

/// `ISPC_SKINNING_ISA`, which `Backend::Auto` follows, naming an ISA that cannot run here (or none) is
/// a request that cannot be carried out, as `--isa` is: exit status 2 and a message that names the
/// variable, never blamed on the file (exit 1); `bench` refuses it before its first row.
#[test]
fn an_isa_override_that_cannot_run_is_a_usage_error() {
    let dir = Scratch::new("isa-env");
    let file = dir.join("rig.glb");
    std::fs::write(&file, glb("rig")).unwrap();
    let foreign = if cfg!(target_arch = "aarch64") {
        "avx512"
    } else {
        "neon"
    };
    let mut cases = vec![foreign.to_string(), "bogus".to_string()];
    cases.extend(
        ispc_skinning::Isa::compiled()
            .into_iter()
            .filter(|i| !i.is_available())
            .map(|i| i.name().to_string()),
    );
    for name in &cases {
        for args in [vec!["skin", s(&file)], vec!["bench", "--quick"]] {
            let run = binary()
                .args(&args)
                .env("ISPC_SKINNING_ISA", name)
                .output()
                .expect("run the ispc-skinning binary");
            let stderr = text(&run.stderr);
            assert_eq!(run.status.code(), Some(2), "{name} {args:?}: {stderr}");
            assert!(
                stderr.contains("ISPC_SKINNING_ISA") && !stderr.contains("rig.glb"),
                "{name} {args:?}: {stderr}"
            );
            assert!(
                run.stdout.is_empty(),
                "{name} {args:?}: {}",
                text(&run.stdout)
            );
        }
    }
    // The same file plays when the variable names an ISA that runs here.
    for isa in ispc_skinning::Isa::available() {
        let run = binary()
            .args(["skin", s(&file)])
            .env("ISPC_SKINNING_ISA", isa.name())
            .output()
            .expect("run the ispc-skinning binary");
        assert!(
            run.status.success(),
            "{}: {}",
            isa.name(),
            text(&run.stderr)
        );
    }
}
