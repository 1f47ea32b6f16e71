//! Cases of glTF-Asset-Generator's Animation_Skin and Animation_SkinType sets, built here on the
//! two-joint rig (the sets' own files are not in the shared assets): a skin without inverse bind
//! matrices (Animation_Skin_03: the rig has none), a joint that is a root of its own rather than a
//! child of the other joint (Animation_Skin_06), a node that is not a joint between two joints
//! (Animation_Skin_09), and every joint and weight component type of
//! Animation_SkinType (u8 or u16 joints; f32, normalized u8 or normalized u16 weights). The skinned
//! mesh node's transform and its parent's are ignored (Animation_Skin_02) in `built.rs`; two skins
//! sharing a joint (Animation_Skin_07) too.

use super::*;

/// The rig's vertices at the end (t = 1) of a clip that turns joint 1 a quarter around z, with the joints
/// and weights written as `joints_u8` and `weights` ("f32", "u8" or "u16") say, and joint 1 placed
/// at (0, 1, 0) as `joint1` says: "child" of joint 0, a "root", or "between": a child of a node that
/// is not a joint, itself a child of joint 0.
fn skinned(joints_u8: bool, weights: &str, joint1: &str) -> Vec<Vec3> {
    let mut b = Builder::default();
    let mut doc = two_joint_rig(&mut b);
    let joints = [0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0];
    let w = [
        1.0f32, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0,
    ];
    let j = if joints_u8 {
        b.u8s(&joints.map(|x: u16| x as u8), "VEC4", false)
    } else {
        b.u16s(&joints, "VEC4", false)
    };
    let w = match weights {
        "f32" => b.f32s(&w, "VEC4"),
        "u8" => b.u8s(&w.map(|x| (x * 255.0).round() as u8), "VEC4", true),
        _ => b.u16s(&w.map(|x| (x * 65535.0).round() as u16), "VEC4", true),
    };
    let attributes = &mut doc["meshes"][0]["primitives"][0]["attributes"];
    attributes["JOINTS_0"] = json!(j);
    attributes["WEIGHTS_0"] = json!(w);
    match joint1 {
        "root" => {
            doc["nodes"][0] = json!({});
            doc["scenes"][0]["nodes"] = json!([0, 1, 2]);
        }
        "between" => {
            doc["nodes"][0] = json!({"children": [3]});
            doc["nodes"][1]["translation"] = json!([0.0, 0.5, 0.0]);
            doc["nodes"]
                .as_array_mut()
                .unwrap()
                .push(json!({"children": [1], "translation": [0.0, 0.5, 0.0]}));
        }
        _ => {}
    }
    let times = b.f32s(&[0.0, 1.0], "SCALAR");
    let quarter = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let turns = b.f32s(&[[0.0, 0.0, 0.0, 1.0], quarter.to_array()].concat(), "VEC4");
    doc["animations"] = json!([{
        "samplers": [{"input": times, "output": turns}],
        "channels": [{"sampler": 0, "target": {"node": 1, "path": "rotation"}}]
    }]);
    let scene = load(&b.gltf(doc));
    let mut frame = scene.frame_buffers().backend(Backend::Reference);
    scene
        .evaluate(Some(0), 1.0, Wrap::Clamp, &mut frame)
        .unwrap();
    frame.meshes()[0].positions.clone()
}

#[test]
fn animation_skin_and_skin_type_cases() {
    // Joint 1 sits at (0, 1, 0) and has turned a quarter around z at t = 1; without inverse bind
    // matrices (identity) a vertex on joint 1 moves as joint 1's model matrix moves the origin's
    // offset: vertex 1 at (0, 1, 0) goes to (0, 1, 0) + R (0, 1, 0) = (-1, 1, 0).
    let reference = skinned(false, "f32", "child");
    let close = |a: Vec3, b: Vec3, tol: f32| (a - b).abs().max_element() <= tol;
    assert!(close(reference[0], Vec3::ZERO, 1e-6), "{reference:?}");
    assert!(
        close(reference[1], Vec3::new(-1.0, 1.0, 0.0), 1e-6),
        "{reference:?}"
    );
    // A joint that is a root of its own, or under a node that is not a joint, at the same place,
    // skins the same vertices.
    for joint1 in ["root", "between"] {
        let got = skinned(false, "f32", joint1);
        for (a, b) in got.iter().zip(&reference) {
            assert!(
                close(*a, *b, 1e-6),
                "{joint1}: {got:?} against {reference:?}"
            );
        }
    }
    // Every component type: the same vertices, within the weights' quantization (0.5 as 128/255 in
    // u8 is 0.002 off, and the weights are renormalized to sum to one).
    for joints_u8 in [false, true] {
        for weights in ["f32", "u8", "u16"] {
            let got = skinned(joints_u8, weights, "child");
            for (a, b) in got.iter().zip(&reference) {
                assert!(
                    close(*a, *b, 4e-3),
                    "joints u8 {joints_u8}, weights {weights}: {got:?} against {reference:?}"
                );
            }
        }
    }
}
