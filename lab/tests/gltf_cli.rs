//! The `skin` command on every shared asset (skipped when `shared/assets` beside the repository is
//! absent): JSON, OBJ and PNG outputs checked against the library and against what a picture of the
//! character must show.
#![cfg(feature = "gltf")]

mod common;

use common::binary;
use ispc_skinning::gltf::{GltfScene, Wrap};
use serde_json::Value;
use std::path::{Path, PathBuf};

const ASSETS: [&str; 6] = [
    "SimpleSkin/SimpleSkin.gltf",
    "RiggedSimple/RiggedSimple.glb",
    "RiggedFigure/RiggedFigure.glb",
    "CesiumMan/CesiumMan.glb",
    "Fox/Fox.glb",
    "RobotExpressive/RobotExpressive.glb",
];

fn assets() -> Option<Vec<PathBuf>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/assets");
    if !dir.is_dir() {
        eprintln!(
            "skipped: {} is absent, so the skin command is not run on real assets",
            dir.display()
        );
        return None;
    }
    Some(ASSETS.iter().map(|a| dir.join(a)).collect())
}

fn skin(args: &[&str]) -> std::process::Output {
    binary()
        .arg("skin")
        .args(args)
        .output()
        .expect("run the ispc-skinning binary")
}

fn skin_ok(args: &[&str]) -> String {
    let out = skin(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "skin {args:?}: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A scratch directory of one test (tests run in parallel, and each removes its own at the end).
fn out_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ispc-skinning-cli-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The JSON has exactly the documented shape, lists every drawn primitive (skinned, rigid and static),
/// and its positions are the library's, bit for bit (the numbers are written in Rust's shortest
/// round-trip form).
/// A JSON array of numbers (a written position) as f32s.
fn floats(j: &Value) -> Vec<f32> {
    j.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

#[test]
fn json_output_matches_the_library_for_every_asset() {
    let Some(paths) = assets() else { return };
    let dir = out_dir("json_output_matches_the_library_for_every_asset");
    for path in paths {
        let scene = GltfScene::load(&path).unwrap();
        let time = scene.clips()[0].duration() * 0.4;
        let out = dir.join("frame.json");
        skin_ok(&[s(&path), "--time", &time.to_string(), "--out", s(&out)]);
        let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys.len(), 5, "{keys:?}");
        assert_eq!(v["asset"], path.file_name().unwrap().to_str().unwrap());
        assert_eq!(v["clip"], 0);
        assert_eq!(v["clips"], Value::Null);
        assert_eq!(v["time"].as_f64().unwrap() as f32, time);
        let mut frame = scene.frame_buffers();
        scene
            .evaluate(Some(0), time, Wrap::Clamp, &mut frame)
            .unwrap();
        let meshes = v["meshes"].as_array().unwrap();
        let drawn = scene.drawn(&frame).unwrap();
        assert_eq!(
            meshes.len(),
            scene.primitives().len() + scene.rigid_primitives().len()
        );
        assert_eq!(meshes.len(), drawn.len());
        for (m, d) in meshes.iter().zip(&drawn) {
            let f = d.vertices;
            let keys = 6 + usize::from(f.tangents.is_some());
            assert_eq!(m.as_object().unwrap().len(), keys);
            assert_eq!(m["node"], d.node);
            assert_eq!(m["mesh"], d.mesh);
            assert_eq!(m["primitive"], d.primitive);
            assert_eq!(m["kind"], d.kind.name());
            let positions = m["positions"].as_array().unwrap();
            assert_eq!(positions.len(), f.positions.len());
            for (j, q) in positions.iter().zip(&f.positions) {
                assert_eq!(floats(j), q.to_array(), "{}", path.display());
            }
            match &f.normals {
                Some(n) => assert_eq!(m["normals"].as_array().unwrap().len(), n.len()),
                None => assert!(m["normals"].is_null()),
            }
            if let Some(t) = &f.tangents {
                assert_eq!(m["tangents"].as_array().unwrap().len(), t.len());
                assert_eq!(m["tangents"][0].as_array().unwrap().len(), 4);
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--skinning dq` writes the positions of a frame that skins with dual quaternions, and they differ
/// from linear blending's where joints bend.
#[test]
fn dual_quaternion_json_matches_the_library() {
    let Some(paths) = assets() else { return };
    let dir = out_dir("dual_quaternion_json_matches_the_library");
    for path in paths {
        let scene = GltfScene::load(&path).unwrap();
        let time = scene.clips()[0].duration() * 0.4;
        let out = dir.join("frame.json");
        skin_ok(&[
            s(&path),
            "--time",
            &time.to_string(),
            "--skinning",
            "dq",
            "--out",
            s(&out),
        ]);
        let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        let mut frame = scene
            .frame_buffers()
            .skinning(ispc_skinning::Skinning::DualQuaternion);
        scene
            .evaluate(Some(0), time, Wrap::Clamp, &mut frame)
            .unwrap();
        let mut linear = scene.frame_buffers();
        scene
            .evaluate(Some(0), time, Wrap::Clamp, &mut linear)
            .unwrap();
        let (drawn, lbs) = (scene.drawn(&frame).unwrap(), scene.drawn(&linear).unwrap());
        let mut differ = false;
        for ((m, d), l) in v["meshes"].as_array().unwrap().iter().zip(&drawn).zip(&lbs) {
            for (j, (q, p)) in m["positions"]
                .as_array()
                .unwrap()
                .iter()
                .zip(d.vertices.positions.iter().zip(&l.vertices.positions))
            {
                assert_eq!(floats(j), q.to_array(), "{}", path.display());
                differ |= q != p;
            }
        }
        assert!(
            differ,
            "{}: dual quaternions gave linear blending's positions",
            path.display()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--deterministic` writes the same bytes whoever runs the kernels: the reference and every ISA this
/// CPU runs, with linear and dual-quaternion skinning.
#[test]
fn deterministic_json_is_the_same_bytes_on_every_backend() {
    let Some(paths) = assets() else { return };
    let dir = out_dir("deterministic_json_is_the_same_bytes_on_every_backend");
    let mut backends = vec![vec!["--reference"]];
    for isa in ispc_skinning::Isa::available() {
        backends.push(vec!["--isa", isa.name()]);
    }
    for path in paths {
        let scene = GltfScene::load(&path).unwrap();
        let time = (scene.clips()[0].duration() * 0.37).to_string();
        for skinning in ["lbs", "dq"] {
            let mut first: Option<Vec<u8>> = None;
            for backend in &backends {
                let out = dir.join("frame.json");
                let mut args = vec![s(&path), "--time", &time, "--skinning", skinning];
                args.extend(["--deterministic", "--out", s(&out)]);
                args.extend(backend.iter().copied());
                skin_ok(&args);
                let bytes = std::fs::read(&out).unwrap();
                std::fs::remove_file(&out).unwrap();
                match &first {
                    None => first = Some(bytes),
                    Some(want) => assert!(
                        *want == bytes,
                        "{} {skinning}: {backend:?} wrote other bytes than --reference",
                        path.display()
                    ),
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rest_pose_json_has_a_null_clip() {
    let Some(paths) = assets() else { return };
    let dir = out_dir("rest_pose_json_has_a_null_clip");
    let out = dir.join("rest.json");
    skin_ok(&[
        s(&paths[1]),
        "--clip",
        "none",
        "--reference",
        "--out",
        s(&out),
    ]);
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert!(v["clip"].is_null());
    assert_eq!(v["time"], 0);
    assert!(v["meshes"][0]["normals"].is_array());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `compress` writes every clip of a file as a clip set, and `skin --clips` plays it: each skinned
/// vertex within 5 mm of where the file's own clip puts it (the joints are within 0.01 cm, virtual
/// points 3 cm around them too; a vertex farther from its joints moves by the angle times its
/// distance). The set is never written over the input, and a set of another skeleton or a damaged
/// one is refused with a message.
#[test]
fn compressed_clips_play_near_the_file_clips() {
    let Some(paths) = assets() else { return };
    let dir = out_dir("compressed_clips_play_near_the_file_clips");
    for (file, clip) in [(&paths[3], "0"), (&paths[5], "12")] {
        let set = dir.join("set.clips");
        let out = binary()
            .args(["compress", s(file), s(&set)])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("wrote"));
        for time in ["0.3", "0.77"] {
            let (raw, packed) = (dir.join("raw.json"), dir.join("packed.json"));
            skin_ok(&[s(file), "--clip", clip, "--time", time, "--out", s(&raw)]);
            skin_ok(&[
                s(file),
                "--clips",
                s(&set),
                "--clip",
                clip,
                "--time",
                time,
                "--out",
                s(&packed),
            ]);
            let read =
                |p: &Path| -> Value { serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap() };
            let (a, b) = (read(&raw), read(&packed));
            assert_eq!(a["clips"], Value::Null);
            assert_eq!(b["clips"], "set.clips");
            let (ma, mb) = (
                a["meshes"].as_array().unwrap(),
                b["meshes"].as_array().unwrap(),
            );
            assert_eq!(ma.len(), mb.len());
            let mut worst = 0.0f32;
            for (x, y) in ma.iter().zip(mb) {
                for (p, q) in x["positions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .zip(y["positions"].as_array().unwrap())
                {
                    let (p, q) = (floats(p), floats(q));
                    let d = p
                        .iter()
                        .zip(&q)
                        .map(|(u, v)| (u - v) * (u - v))
                        .sum::<f32>()
                        .sqrt();
                    worst = worst.max(d);
                }
            }
            assert!(worst <= 5e-3, "{} at {time}: {worst}", s(file));
        }
        // The set may not replace the input.
        let out = binary()
            .args(["compress", s(file), s(file)])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // CesiumMan's set on RobotExpressive: another skeleton.
    let cesium = dir.join("cesium.clips");
    assert!(binary()
        .args(["compress", s(&paths[3]), s(&cesium)])
        .output()
        .unwrap()
        .status
        .success());
    let out = skin(&[s(&paths[5]), "--clips", s(&cesium)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("another skeleton"));
    // A damaged set: cut short.
    let bytes = std::fs::read(&cesium).unwrap();
    let cut = dir.join("cut.clips");
    std::fs::write(&cut, &bytes[..bytes.len() - 9]).unwrap();
    let out = skin(&[s(&paths[3]), "--clips", s(&cut)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--clips"));
    // Not a regular file (a device would never end), and a set over --max-file-bytes.
    #[cfg(unix)]
    {
        let out = skin(&[s(&paths[3]), "--clips", "/dev/zero"]);
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a regular file"));
    }
    let out = skin(&[
        s(&paths[3]),
        "--clips",
        s(&cesium),
        "--max-file-bytes",
        "100",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.contains("--clips") && err.contains("--max-file-bytes"),
        "{err}"
    );
    // Settings the library refuses are usage errors, refused while the arguments are parsed.
    for bad in [
        ["--sample-rate", "1001"],
        ["--tolerance", "0"],
        ["--distance", "-1"],
    ] {
        let out = binary()
            .args(["compress", s(&paths[3]), s(&cut), bad[0], bad[1]])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The OBJ has one object per primitive, a v (and vn) line per vertex and an f line per triangle.
#[test]
fn obj_output_for_every_asset() {
    let Some(paths) = assets() else { return };
    let dir = out_dir("obj_output_for_every_asset");
    for path in paths {
        let scene = GltfScene::load(&path).unwrap();
        let out = dir.join("frame.obj");
        skin_ok(&[s(&path), "--clip", "0", "--time", "0.5", "--out", s(&out)]);
        let text = std::fs::read_to_string(&out).unwrap();
        let count = |prefix: &str| text.lines().filter(|l| l.starts_with(prefix)).count();
        let mut frame = scene.frame_buffers();
        scene
            .evaluate(Some(0), 0.5, Wrap::Clamp, &mut frame)
            .unwrap();
        let drawn = scene.drawn(&frame).unwrap();
        let vertices: usize = drawn.iter().map(|d| d.vertices.positions.len()).sum();
        let triangles: usize = drawn.iter().map(|d| d.triangles.len()).sum();
        let normals: usize = drawn
            .iter()
            .filter_map(|d| d.vertices.normals.as_ref().map(Vec::len))
            .sum();
        assert!(triangles > 0, "{}", path.display());
        assert_eq!(count("o "), drawn.len());
        assert_eq!(count("v "), vertices);
        assert_eq!(count("f "), triangles);
        assert_eq!(count("vn "), normals);
        // Every face index names a vertex of the file (1-based).
        for l in text.lines().filter(|l| l.starts_with("f ")) {
            for w in l.split_whitespace().skip(1) {
                let i: usize = w.split('/').next().unwrap().parse().unwrap();
                assert!((1..=vertices).contains(&i), "{l}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Reads a PNG written by the command: (width, height, RGB pixels).
fn read_png(path: &Path) -> (usize, usize, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width as usize, info.height as usize, buf)
}

/// The silhouette (pixels that are not the background): its pixel count and bounding box.
fn silhouette(w: usize, h: usize, rgb: &[u8]) -> (usize, [usize; 4]) {
    let background = rgb[..3].to_vec();
    let mut count = 0;
    let mut bbox = [usize::MAX, usize::MAX, 0, 0];
    for y in 0..h {
        for x in 0..w {
            let i = 3 * (y * w + x);
            if rgb[i..i + 3] != background[..] {
                count += 1;
                bbox = [
                    bbox[0].min(x),
                    bbox[1].min(y),
                    bbox[2].max(x),
                    bbox[3].max(y),
                ];
            }
        }
    }
    (count, bbox)
}

/// Every asset gives a 512 x 512 picture with a silhouette that the camera fit keeps off the borders
/// (a 5% margin) and stretches over about 90% of the image in the character's larger dimension.
#[test]
fn png_pictures_frame_every_character() {
    let Some(paths) = assets() else { return };
    let dir = out_dir("png_pictures_frame_every_character");
    for path in paths {
        let out = dir.join("frame.png");
        skin_ok(&[s(&path), "--time", "0.5", "--out", s(&out)]);
        let (w, h, rgb) = read_png(&out);
        assert_eq!((w, h), (512, 512));
        let (count, [x0, y0, x1, y1]) = silhouette(w, h, &rgb);
        let name = path.display();
        assert!(count > 0, "{name}: empty picture");
        // The corner pixel is background, so the silhouette cannot touch the borders.
        assert!(
            x0 >= 20 && y0 >= 20 && x1 <= 491 && y1 <= 491,
            "{name}: bbox {x0},{y0}..{x1},{y1}"
        );
        let larger = (x1 - x0 + 1).max(y1 - y0 + 1);
        assert!(
            (440..=470).contains(&larger),
            "{name}: silhouette spans {larger} px"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// CesiumMan at mid-clip: a standing figure, taller than wide, centred, covering a sensible share of
/// the picture (not a few stray triangles, not a filled square).
#[test]
fn png_of_cesium_man_at_mid_clip() {
    let Some(paths) = assets() else { return };
    let dir = out_dir("png_of_cesium_man_at_mid_clip");
    let path = &paths[3];
    let scene = GltfScene::load(path).unwrap();
    let clip = &scene.clips()[0];
    let mid = clip.start() + 0.5 * clip.duration();
    let out = dir.join("cesium.png");
    skin_ok(&[s(path), "--time", &mid.to_string(), "--out", s(&out)]);
    let (w, h, rgb) = read_png(&out);
    let (count, [x0, y0, x1, y1]) = silhouette(w, h, &rgb);
    let (bw, bh) = (x1 - x0 + 1, y1 - y0 + 1);
    assert!(
        bh > bw,
        "a standing figure is taller than wide: {bw} x {bh}"
    );
    assert!((440..=470).contains(&bh), "height fills 90%: {bh}");
    let centre = ((x0 + x1) / 2, (y0 + y1) / 2);
    assert!(
        centre.0.abs_diff(256) <= 8 && centre.1.abs_diff(256) <= 8,
        "centred: {centre:?}"
    );
    let fraction = count as f64 / (w * h) as f64;
    assert!(
        (0.05..0.5).contains(&fraction),
        "covers {fraction} of the image"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// RobotExpressive: all 19 drawn primitives (4 skinned hands, 15 rigid parts) in the JSON, and the
/// picture from another view is still framed and differs from the front view.
#[test]
fn robot_expressive_outputs_every_primitive_from_any_view() {
    let Some(paths) = assets() else { return };
    let dir = out_dir("robot_expressive_outputs_every_primitive_from_any_view");
    let path = &paths[5];
    let text = skin_ok(&[s(path), "--clip-name", "Running", "--time", "0.3"]);
    assert!(
        text.contains("19 primitives (4 skinned, 15 rigid, 0 static)"),
        "{text}"
    );
    let out = dir.join("robot.json");
    skin_ok(&[s(path), "--clip", "5", "--time", "0.7", "--out", s(&out)]);
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let meshes = v["meshes"].as_array().unwrap();
    assert_eq!(meshes.len(), 19);
    let rigid = meshes.iter().filter(|m| m["kind"] == "rigid").count();
    assert_eq!(rigid, 15);
    let mut pictures = Vec::new();
    for (azimuth, elevation) in [("0", "0"), ("90", "30"), ("-135", "-20")] {
        let png = dir.join(format!("robot{azimuth}.png"));
        skin_ok(&[
            s(path),
            "--time",
            "0.5",
            "--azimuth",
            azimuth,
            "--elevation",
            elevation,
            "--out",
            s(&png),
        ]);
        let (w, h, rgb) = read_png(&png);
        let (count, [x0, y0, x1, y1]) = silhouette(w, h, &rgb);
        assert!(count > 0);
        let larger = (x1 - x0 + 1).max(y1 - y0 + 1);
        assert!(
            (440..=470).contains(&larger),
            "{azimuth}: spans {larger} px"
        );
        pictures.push(rgb);
    }
    assert_ne!(pictures[0], pictures[1]);
    assert_ne!(pictures[1], pictures[2]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn summary_without_out_and_named_clips() {
    let Some(paths) = assets() else { return };
    let text = skin_ok(&[s(&paths[4]), "--clip-name", "Walk", "--time", "0.2"]);
    assert!(text.contains("clip:      1 (Walk)"), "{text}");
    assert!(text.contains("1728 vertices"), "{text}");
    assert!(text.contains("backend:"), "{text}");
    assert!(text.contains("skinning:  linear blend (lbs)"), "{text}");
    assert!(text.contains(" ms "), "{text}");
}

/// Bad requests exit with status 2 and a message, never a panic; a file that cannot be read exits
/// with status 1.
#[test]
fn bad_requests_fail_with_a_message() {
    let dir = out_dir("bad_requests_fail_with_a_message");
    let missing = dir.join("missing.glb");
    let out = skin(&[s(&missing)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "skin missing.glb: {stderr}");
    assert!(
        stderr.contains("error:") && stderr.lines().count() == 1,
        "{stderr}"
    );
    let mut cases: Vec<Vec<String>> = vec![
        vec![],
        vec!["a.glb".into(), "b.glb".into()],
        vec!["a.glb".into(), "--time".into()],
        vec!["a.glb".into(), "--time".into(), "soon".into()],
        vec!["a.glb".into(), "--isa".into(), "mmx".into()],
        vec![
            "a.glb".into(),
            "--isa".into(),
            "sse4".into(),
            "--reference".into(),
        ],
        vec!["a.glb".into(), "--bogus".into()],
        vec!["a.glb".into(), "--azimuth".into(), "inf".into()],
        vec!["a.glb".into(), "--elevation".into(), "up".into()],
    ];
    if let Some(paths) = assets() {
        let f = s(&paths[3]).to_string();
        cases.push(vec![f.clone(), "--clip".into(), "7".into()]);
        cases.push(vec![f.clone(), "--clip-name".into(), "Dance".into()]);
        cases.push(vec![
            f.clone(),
            "--out".into(),
            s(&dir.join("x.txt")).into(),
        ]);
    }
    for args in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = skin(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "skin {args:?}: {stderr}");
        assert!(stderr.contains("error:"), "skin {args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "skin {args:?}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn info_lists_the_gltf_feature() {
    let out = binary().arg("info").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().find(|l| l.starts_with("features:")).unwrap();
    assert!(line.contains("gltf"), "{line}");
}
