//! Names come through: nodes as the skeleton's joint names, morph targets from `extras.targetNames`,
//! clips; each lookup has a typed error.

use super::*;

#[test]
fn node_target_and_clip_names_come_through_on_robot_expressive() {
    let Some(dir) = common::assets() else { return };
    let scene = GltfScene::load(dir.join("RobotExpressive/RobotExpressive.glb")).unwrap();
    let skeleton = scene.skeleton();
    // Every node's name is its joint's name (a glTF scene's joints are its nodes, in file order).
    for node in 0..scene.node_count() {
        let name = scene.node_name(node).unwrap();
        assert_eq!(skeleton.name(node), Some(name));
        assert_eq!(skeleton.find(name), Some(node), "names are unique here");
    }
    let shoulder = skeleton.joint_named("ShoulderR").unwrap();
    assert_eq!(scene.node_name(shoulder), Some("ShoulderR"));
    match skeleton.joint_named("NoSuchJoint") {
        Err(e @ Error::NameNotFound { what: "joint", .. }) => {
            assert_eq!(e.to_string(), "no joint named 'NoSuchJoint'")
        }
        other => panic!("{other:?}"),
    }
    // The face meshes (3, 4 and 5) name their three targets.
    for mesh in 3..6 {
        assert_eq!(scene.target_names(mesh), ["Angry", "Surprised", "Sad"]);
        assert_eq!(scene.target_named(mesh, "Sad").unwrap(), 2);
    }
    assert!(scene.target_names(0).is_empty());
    assert!(scene.target_names(usize::MAX).is_empty());
    assert!(matches!(
        scene.target_named(3, "Happy"),
        Err(Error::NameNotFound {
            what: "morph target",
            ..
        })
    ));
    assert_eq!(
        scene.clip_named("Idle").unwrap(),
        scene.find_clip("Idle").unwrap()
    );
    assert!(matches!(
        scene.clip_named("Moonwalk"),
        Err(Error::NameNotFound { what: "clip", .. })
    ));
}

/// Unnamed nodes have no name and no lookup finds them (an empty name included), a repeated name finds
/// its first node, and `targetNames` counts only as an array of one string per target.
#[test]
fn unnamed_repeated_and_malformed_names() {
    let mut b = Builder::default();
    let pos = b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    let delta = b.f32s(&[0.0; 9], "VEC3");
    let times = b.f32s(&[0.0, 1.0, 2.0], "SCALAR");
    let mesh = |extras: Value| {
        json!({"primitives": [{"attributes": {"POSITION": pos}, "targets": [{"POSITION": delta}, {"POSITION": delta}]}],
               "extras": extras})
    };
    let doc = json!({
        "nodes": [
            {"children": [1, 2, 3, 4, 5]},
            {"name": "Arm"},
            {"name": "Arm", "mesh": 0},
            {"mesh": 1},
            {"name": "Leg", "mesh": 2},
            {"name": ""}
        ],
        "animations": [{"name": "", "samplers": [{"input": times, "output": pos}],
                        "channels": [{"sampler": 0, "target": {"node": 1, "path": "translation"}}]}],
        "meshes": [
            mesh(json!({"targetNames": ["Smile", "Blink"]})),
            mesh(json!({"targetNames": ["OnlyOne"]})),
            mesh(json!({"targetNames": ["Smile", 7]}))
        ],
        "scenes": [{"nodes": [0]}],
        "scene": 0
    });
    let scene = load(&b.glb(doc));
    let skeleton = scene.skeleton();
    assert_eq!(skeleton.name(0), None);
    assert_eq!(skeleton.name(2), Some("Arm"));
    assert_eq!(skeleton.find("Arm"), Some(1));
    assert_eq!(skeleton.find(""), None);
    assert!(skeleton.joint_named("").is_err());
    assert_eq!(skeleton.find("Leg"), Some(4));
    // A name that is the empty string is no name, for nodes and clips alike.
    assert_eq!(skeleton.name(5), None);
    assert_eq!(scene.node_name(5), None);
    assert_eq!(scene.find_clip(""), None);
    assert!(scene.clip_named("").is_err());
    assert_eq!(scene.target_names(0), ["Smile", "Blink"]);
    assert_eq!(scene.target_named(0, "Blink").unwrap(), 1);
    assert!(scene.target_named(0, "").is_err());
    // One name for two targets, and a name that is not a string: no names.
    assert!(scene.target_names(1).is_empty());
    assert!(scene.target_names(2).is_empty());
    // A name that is hostile text is escaped in the message.
    let e = skeleton.joint_named("a\u{1b}[2Jb").unwrap_err().to_string();
    assert!(!e.contains('\u{1b}'), "{e}");
}
