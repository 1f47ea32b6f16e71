//! `skin FILE --blend CLIP:WEIGHT,...`: one clip at weight 1 poses the character as `--clip` does, two
//! layers of the same clip change nothing, a blend of two clips lies between them, and bad weights or
//! clips end with status 2 and the rule's message. Skipped when `shared/assets` is absent.
#![cfg(feature = "gltf")]

mod common;

use common::binary;
use serde_json::Value;
use std::path::PathBuf;

fn fox() -> Option<PathBuf> {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/assets/Fox/Fox.glb");
    if !file.is_file() {
        eprintln!(
            "skipped: {} is absent, so --blend is not run",
            file.display()
        );
        return None;
    }
    Some(file)
}

/// The skinned positions `skin` writes as JSON with `args`.
fn positions(file: &PathBuf, args: &[&str], tag: &str) -> Vec<f64> {
    let out = std::env::temp_dir().join(format!(
        "ispc-skinning-blend-{}-{tag}.json",
        std::process::id()
    ));
    let run = binary()
        .arg("skin")
        .arg(file)
        .args(args)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run the ispc-skinning binary");
    assert!(
        run.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    std::fs::remove_file(&out).ok();
    json["meshes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["positions"].as_array().unwrap().clone())
        .flat_map(|p| p.as_array().unwrap().clone())
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn blending_one_clip_poses_as_the_clip_does() {
    let Some(fox) = fox() else { return };
    let clip = positions(&fox, &["--clip", "1", "--time", "0.4"], "clip");
    let one = positions(&fox, &["--blend", "1:1", "--time", "0.4"], "one");
    let twice = positions(&fox, &["--blend", "1:0.5,Walk:2", "--time", "0.4"], "twice");
    // The Fox is about 100 units tall: a normalized quaternion and w t / w differ from the clip's
    // values by rounding only.
    assert!(max_diff(&clip, &one) < 1e-3, "{}", max_diff(&clip, &one));
    assert!(
        max_diff(&clip, &twice) < 1e-3,
        "{}",
        max_diff(&clip, &twice)
    );
}

#[test]
fn a_blend_of_two_clips_differs_from_each() {
    let Some(fox) = fox() else { return };
    let a = positions(&fox, &["--clip", "0", "--time", "0.7"], "a");
    let b = positions(&fox, &["--clip", "2", "--time", "0.7"], "b");
    let mix = positions(&fox, &["--blend", "0:0.5,2:0.5", "--time", "0.7"], "mix");
    assert!(max_diff(&a, &mix) > 0.1 && max_diff(&b, &mix) > 0.1);
}

#[test]
fn bad_blends_are_refused() {
    let Some(fox) = fox() else { return };
    for (arg, message) in [
        ("0:-1", "invalid blend weight: layer 0 has weight -1"),
        ("0:1,1:NaN", "invalid blend weight: layer 1 has weight NaN"),
        ("7:1", "no clip '7'"),
        ("0", "--blend takes CLIP:WEIGHT"),
    ] {
        let out = binary()
            .arg("skin")
            .arg(&fox)
            .args(["--blend", arg])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{arg}: {stderr}");
        assert!(stderr.contains(message), "{arg}: {stderr}");
    }
}
