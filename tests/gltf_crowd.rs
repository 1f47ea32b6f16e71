//! glTF crowds: `GltfScene::sample_crowd` and `evaluate_crowd` against `sample` and `evaluate` one
//! instance at a time, on a small animated file built here and on CesiumMan from the shared assets
//! (skipped visibly when they are absent), and the batch's rules: one clip and one time per instance,
//! each clip in range and each time finite (the error names the instance), a pose made for this scene's
//! skeleton, and nothing written when a rule fails.
#![cfg(feature = "gltf")]

mod common;

use base64::Engine as _;
use glam::{Mat4, Quat, Vec3};
use ispc_skinning::gltf::{GltfError, GltfScene, Wrap};
use ispc_skinning::{
    Backend, CrowdFrame, CrowdPose, Error, Skeleton, Threads, MAX_CROWD_INSTANCES,
};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------------
// A small animated file (the minimal part of tests/gltf/'s builder).

/// Builds a glTF whose binary data is one buffer embedded as a base64 data URI.
#[derive(Default)]
struct Builder {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Builder {
    fn raw(&mut self, bytes: &[u8], component: u32, count: usize, ty: &str) -> usize {
        while self.bin.len() % 4 != 0 {
            self.bin.push(0);
        }
        self.views
            .push(json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()}));
        self.bin.extend_from_slice(bytes);
        self.accessors.push(json!({"bufferView": self.views.len() - 1, "componentType": component, "count": count, "type": ty}));
        self.accessors.len() - 1
    }

    fn comps(ty: &str) -> usize {
        match ty {
            "SCALAR" => 1,
            "VEC3" => 3,
            "VEC4" => 4,
            _ => panic!("{ty}"),
        }
    }

    fn f32s(&mut self, data: &[f32], ty: &str) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let a = self.raw(&bytes, 5126, data.len() / Self::comps(ty), ty);
        // The spec (and the gltf crate's validation) requires bounds on POSITION accessors.
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

    fn u16s(&mut self, data: &[u16], ty: &str) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        self.raw(&bytes, 5123, data.len() / Self::comps(ty), ty)
    }

    fn gltf(&self, mut doc: Value) -> Vec<u8> {
        doc["asset"] = json!({"version": "2.0"});
        doc["bufferViews"] = json!(self.views);
        doc["accessors"] = json!(self.accessors);
        let uri = format!(
            "data:application/octet-stream;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&self.bin)
        );
        doc["buffers"] = json!([{"byteLength": self.bin.len(), "uri": uri}]);
        serde_json::to_vec(&doc).unwrap()
    }
}

/// tests/gltf/'s two-joint rig: node 0 (joint, root), node 1 (joint, child of 0), node 2 (skinned
/// mesh, a root whose own transform must not apply). Level order is 0, 2, 1, so node 1 is not at its
/// level index. Three vertices: on joint 0, on joint 1, half each. Three clips:
/// - "slide": LINEAR translation of node 1 over [0, 2];
/// - "turn": LINEAR rotation of node 0 over [0, 2] (identity to 90 degrees about z), STEP scale of node 1;
/// - "bob": CUBICSPLINE translation of node 0 over [0.5, 1.5].
fn animated_rig() -> Vec<u8> {
    let mut b = Builder::default();
    let pos = b.f32s(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0], "VEC3");
    let joints = b.u16s(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0], "VEC4");
    let weights = b.f32s(
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0],
        "VEC4",
    );
    let t3 = b.f32s(&[0.0, 1.0, 2.0], "SCALAR");
    let slide = b.f32s(&[0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 2.0, -1.0], "VEC3");
    let t2 = b.f32s(&[0.0, 2.0], "SCALAR");
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let turn = b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, s, s], "VEC4");
    let grow = b.f32s(&[1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0, 0.5, 3.0], "VEC3");
    let tb = b.f32s(&[0.5, 1.5], "SCALAR");
    // In-tangent, value, out-tangent per key.
    let bob = b.f32s(
        &[
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, -1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0,
            0.0,
        ],
        "VEC3",
    );
    let doc = json!({
        "nodes": [
            {"children": [1]},
            {"translation": [0.0, 1.0, 0.0]},
            {"mesh": 0, "skin": 0, "translation": [100.0, 0.0, 0.0]}
        ],
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}],
        "skins": [{"joints": [0, 1]}],
        "scenes": [{"nodes": [0, 2]}],
        "scene": 0,
        "animations": [
            {"name": "slide", "samplers": [{"input": t3, "output": slide}],
             "channels": [{"sampler": 0, "target": {"node": 1, "path": "translation"}}]},
            {"name": "turn", "samplers": [
                {"input": t2, "output": turn},
                {"input": t3, "output": grow, "interpolation": "STEP"}],
             "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}},
                          {"sampler": 1, "target": {"node": 1, "path": "scale"}}]},
            {"name": "bob", "samplers": [{"input": tb, "output": bob, "interpolation": "CUBICSPLINE"}],
             "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]}
        ]
    });
    b.gltf(doc)
}

fn rig_scene() -> GltfScene {
    GltfScene::from_slice(&animated_rig()).unwrap_or_else(|e| panic!("{e}"))
}

/// The crowd sizes every check runs at: empty, one, around a block of 16 lanes, and several blocks.
const CROWDS: [usize; 6] = [0, 1, 15, 16, 17, 40];

/// Instance `i`'s clip, time (before, inside and after each clip's span) and root.
fn instance(scene: &GltfScene, i: usize) -> (usize, f32, Mat4) {
    let clip = i % scene.clips().len();
    let time = -0.6 + 0.173 * i as f32;
    let root = Mat4::from_scale_rotation_translation(
        Vec3::splat(1.0 + 0.05 * (i % 4) as f32),
        Quat::from_rotation_y(0.3 * i as f32),
        Vec3::new(2.0 * i as f32, 0.0, -(i as f32)),
    );
    (clip, time, root)
}

fn batch(scene: &GltfScene, instances: usize) -> (Vec<usize>, Vec<f32>, Vec<Mat4>) {
    let mut clips = Vec::new();
    let mut times = Vec::new();
    let mut roots = Vec::new();
    for i in 0..instances {
        let (c, t, r) = instance(scene, i);
        clips.push(c);
        times.push(t);
        roots.push(r);
    }
    (clips, times, roots)
}

/// Largest distance between two position lists, and the largest coordinate magnitude of the first.
fn max_diff(a: &[Vec3], b: &[Vec3]) -> (f32, f32) {
    assert_eq!(a.len(), b.len());
    let d = a
        .iter()
        .zip(b)
        .map(|(x, y)| (*x - *y).abs().max_element())
        .fold(0.0, f32::max);
    let m = a.iter().map(|x| x.abs().max_element()).fold(0.0, f32::max);
    (d, m)
}

// ---------------------------------------------------------------------------------------------------
// Against one instance at a time.

/// Every node of every instance of a sampled crowd is what `sample` writes for that instance alone,
/// exactly (the same channels and the same arithmetic), whatever the threads.
fn check_sample_crowd(scene: &GltfScene, instances: usize, wrap: Wrap) {
    let (clips, times, _) = batch(scene, instances);
    let mut one = CrowdPose::new(scene.skeleton(), instances).unwrap();
    let mut all = one.clone();
    scene
        .sample_crowd(&clips, &times, wrap, Threads::One, &mut one)
        .unwrap();
    scene
        .sample_crowd(&clips, &times, wrap, Threads::All, &mut all)
        .unwrap();
    assert!(
        one == all,
        "instances={instances} {wrap:?}: threads changed the pose"
    );
    let mut frame = scene.frame_buffers();
    for i in 0..instances {
        scene
            .sample(Some(clips[i]), times[i], wrap, &mut frame)
            .unwrap();
        for node in 0..scene.node_count() {
            assert_eq!(
                one.joint(i, node),
                frame.local(node),
                "instances={instances} {wrap:?} instance {i} (clip {}, time {}) node {node}",
                clips[i],
                times[i]
            );
        }
    }
}

/// Every instance of an evaluated crowd is what `evaluate` gives for it alone with the same root:
/// world matrices and skinned vertices within tests/gltf/'s backend tolerance (2e-5 of the extent
/// plus 1e-5 for positions, 1e-4 for unit normals).
fn check_evaluate_crowd(scene: &GltfScene, instances: usize, wrap: Wrap, backend: Backend) {
    let (clips, times, roots) = batch(scene, instances);
    let mut crowd: CrowdFrame = scene.crowd_buffers(instances).unwrap().backend(backend);
    crowd.roots_mut().copy_from_slice(&roots);
    scene
        .evaluate_crowd(&clips, &times, wrap, &mut crowd)
        .unwrap();
    let mut frame = scene.frame_buffers().backend(backend);
    for i in 0..instances {
        let ctx = format!(
            "{backend:?} instances={instances} {wrap:?} instance {i} (clip {}, time {})",
            clips[i], times[i]
        );
        frame.root = roots[i];
        scene
            .evaluate(Some(clips[i]), times[i], wrap, &mut frame)
            .unwrap();
        for node in 0..scene.node_count() {
            let (got, want) = (
                crowd.models().model(i, node).unwrap(),
                scene.world_matrix(&frame, node).unwrap(),
            );
            let scale = want
                .to_cols_array()
                .iter()
                .fold(1.0f32, |m, x| m.max(x.abs()));
            assert!(
                got.abs_diff_eq(want, 2e-5 * scale),
                "{ctx} node {node}:\n{got}\n{want}"
            );
        }
        for (mesh, want) in frame.meshes().iter().enumerate() {
            let got = crowd.positions(mesh, i).unwrap();
            let (d, m) = max_diff(&want.positions, got);
            assert!(
                d <= 2e-5 * m + 1e-5,
                "{ctx} mesh {mesh}: positions differ by {d} (extent {m})"
            );
            match (&want.normals, crowd.normals(mesh, i)) {
                (Some(w), Some(g)) => {
                    let (d, _) = max_diff(w, g);
                    assert!(d <= 1e-4, "{ctx} mesh {mesh}: normals differ by {d}");
                }
                (None, None) => {}
                _ => panic!("{ctx} mesh {mesh}: normals in one output only"),
            }
        }
    }
}

#[test]
fn sample_crowd_equals_sample_per_instance() {
    let scene = rig_scene();
    assert_eq!(scene.clips().len(), 3);
    // Node 1 is not at its level index, so a crowd pose read in the wrong order would show.
    assert_ne!(scene.level_index(1), Some(1));
    for instances in CROWDS {
        for wrap in [Wrap::Clamp, Wrap::Loop] {
            check_sample_crowd(&scene, instances, wrap);
        }
    }
}

#[test]
fn evaluate_crowd_equals_evaluate_per_instance() {
    let scene = rig_scene();
    for instances in CROWDS {
        for wrap in [Wrap::Clamp, Wrap::Loop] {
            for backend in common::backends() {
                check_evaluate_crowd(&scene, instances, wrap, backend);
            }
        }
    }
}

#[test]
fn crowd_buffers_start_at_the_rest_pose() {
    let scene = rig_scene();
    let crowd = scene.crowd_buffers(17).unwrap();
    for i in 0..17 {
        for node in 0..scene.node_count() {
            assert_eq!(crowd.pose().joint(i, node), scene.rest_pose(node));
        }
    }
    let err = scene.crowd_buffers(MAX_CROWD_INSTANCES + 1).unwrap_err();
    assert!(
        matches!(err, Error::TooManyInstances { instances, .. } if instances == MAX_CROWD_INSTANCES + 1),
        "{err}"
    );
}

#[test]
fn cesium_man_crowds_equal_one_instance_at_a_time() {
    let Some(dir) = common::assets() else { return };
    let scene = GltfScene::load(dir.join("CesiumMan/CesiumMan.glb")).unwrap();
    assert!(!scene.clips().is_empty());
    for instances in [1, 17] {
        check_sample_crowd(&scene, instances, Wrap::Loop);
        for backend in common::backends() {
            check_evaluate_crowd(&scene, instances, Wrap::Loop, backend);
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Rules.

/// What a refused batch must leave untouched in a crowd frame.
fn snapshot(crowd: &CrowdFrame) -> String {
    format!(
        "{:?} {:?} {:?} {:?}",
        crowd.pose(),
        crowd.models(),
        crowd.palettes(0),
        crowd.mesh(0)
    )
}

/// `sample_crowd` and `evaluate_crowd` both refuse the batch with `want`, whose message contains
/// `words`, and write nothing.
fn refused(
    scene: &GltfScene,
    clips: &[usize],
    times: &[f32],
    want: &dyn Fn(&Error) -> bool,
    words: &str,
) {
    let mut crowd = scene.crowd_buffers(8).unwrap();
    crowd
        .pose_mut()
        .set_joint(3, 1, Vec3::splat(7.0), Quat::IDENTITY, Vec3::ONE)
        .unwrap();
    let before = snapshot(&crowd);
    for threads in [Threads::One, Threads::All] {
        let err = scene
            .sample_crowd(clips, times, Wrap::Loop, threads, crowd.pose_mut())
            .unwrap_err();
        assert!(want(&err), "sample_crowd: {err:?}");
        assert!(err.to_string().contains(words), "sample_crowd: {err}");
    }
    let err = scene
        .evaluate_crowd(clips, times, Wrap::Loop, &mut crowd)
        .unwrap_err();
    assert!(want(&err), "evaluate_crowd: {err:?}");
    assert!(err.to_string().contains(words), "evaluate_crowd: {err}");
    assert_eq!(snapshot(&crowd), before, "a refused batch wrote the crowd");
}

#[test]
fn one_clip_and_one_time_per_instance() {
    let scene = rig_scene();
    let (clips, times, _) = batch(&scene, 8);
    refused(
        &scene,
        &clips[..7],
        &times,
        &|e| {
            *e == Error::CountMismatch {
                what: "clips (one per crowd instance)",
                expected: 8,
                got: 7,
            }
        },
        "count mismatch: clips (one per crowd instance): 8 expected, but 7 given",
    );
    let nine: Vec<f32> = times.iter().copied().chain([0.0]).collect();
    refused(
        &scene,
        &clips,
        &nine,
        &|e| {
            *e == Error::CountMismatch {
                what: "sample times (one per crowd instance)",
                expected: 8,
                got: 9,
            }
        },
        "sample times (one per crowd instance): 8 expected, but 9 given",
    );
}

#[test]
fn a_clip_out_of_range_names_its_instance() {
    let scene = rig_scene();
    let (mut clips, times, _) = batch(&scene, 8);
    clips[5] = 3;
    refused(
        &scene,
        &clips,
        &times,
        &|e| {
            *e == Error::Gltf(GltfError::InstanceClipOutOfRange {
                instance: 5,
                clip: 3,
                clips: 3,
            })
        },
        "instance 5 asks for clip 3, which does not exist: the file has 3 clips",
    );
    // Several bad instances: the first is named.
    clips[2] = usize::MAX;
    refused(
        &scene,
        &clips,
        &times,
        &|e| {
            *e == Error::Gltf(GltfError::InstanceClipOutOfRange {
                instance: 2,
                clip: usize::MAX,
                clips: 3,
            })
        },
        "instance 2 asks for clip",
    );
}

#[test]
fn a_time_that_is_not_finite_names_its_instance() {
    let scene = rig_scene();
    let (clips, times, _) = batch(&scene, 8);
    let mut nan = times.clone();
    nan[3] = f32::NAN;
    refused(
        &scene,
        &clips,
        &nan,
        &|e| matches!(e, Error::Gltf(GltfError::InstanceTimeNotFinite { instance: 3, time }) if time.is_nan()),
        "instance 3's sample time is NaN; it must be finite",
    );
    for (instance, time) in [(0, f32::INFINITY), (7, f32::NEG_INFINITY)] {
        let mut bad = times.clone();
        bad[instance] = time;
        refused(
            &scene,
            &clips,
            &bad,
            &|e| *e == Error::Gltf(GltfError::InstanceTimeNotFinite { instance, time }),
            &format!("instance {instance}'s sample time is {time}; it must be finite"),
        );
    }
}

#[test]
fn a_pose_made_for_another_skeleton_is_the_wrong_frame() {
    let scene = rig_scene();
    let (clips, times, _) = batch(&scene, 4);
    // Another node count, and the same node count in another order.
    for (other, made_for) in [
        (Skeleton::from_parents(&[None, Some(0)]).unwrap(), 2),
        (
            Skeleton::from_parents(&[None, Some(0), Some(1)]).unwrap(),
            3,
        ),
    ] {
        let mut pose = CrowdPose::new(&other, 4).unwrap();
        let before = pose.clone();
        let err = scene
            .sample_crowd(&clips, &times, Wrap::Clamp, Threads::One, &mut pose)
            .unwrap_err();
        assert_eq!(
            err,
            Error::WrongFrame {
                what: "CrowdPose",
                owner: "skeleton",
                part: "joint",
                made_for,
                here: 3
            }
        );
        assert_eq!(
            err.to_string(),
            format!("wrong frame: this CrowdPose was made for a skeleton with {made_for} joints; this skeleton has 3")
        );
        assert!(pose == before, "a refused batch wrote the pose");
    }
    // A crowd frame of another scene: the rig with one node more.
    let mut b: Value = serde_json::from_slice(&animated_rig()).unwrap();
    b["nodes"].as_array_mut().unwrap().push(json!({}));
    let bigger = GltfScene::from_slice(&serde_json::to_vec(&b).unwrap()).unwrap();
    let mut crowd = bigger.crowd_buffers(4).unwrap();
    let before = snapshot(&crowd);
    let err = scene
        .evaluate_crowd(&clips, &times, Wrap::Clamp, &mut crowd)
        .unwrap_err();
    assert_eq!(
        err,
        Error::WrongFrame {
            what: "CrowdFrame",
            owner: "scene",
            part: "node",
            made_for: 4,
            here: 3
        }
    );
    assert_eq!(
        err.to_string(),
        "wrong frame: this CrowdFrame was made for a scene with 4 nodes; this scene has 3"
    );
    assert_eq!(snapshot(&crowd), before, "a refused batch wrote the crowd");
}

/// `err` is `WrongFrame` for `what` of an `owner` whose counts all match: only the identity differs.
fn identity_error(err: &Error, what: &str, owner: &str) {
    match err {
        Error::WrongFrame {
            what: w,
            owner: o,
            part,
            made_for,
            here,
        } => {
            assert_eq!((*w, *o, *part), (what, owner, Error::OWNER_ID), "{err}");
            assert_ne!(made_for, here, "{err}");
        }
        other => panic!("not WrongFrame: {other}"),
    }
    assert!(
        err.to_string().starts_with(&format!(
            "wrong frame: this {what} was made for another {owner} of the same shape"
        )),
        "{err}"
    );
}

/// Ownership, not shape (issue 31): two scenes loaded from the same bytes have the same shape, yet each
/// refuses the other's frames at every stage, `drawn` included (it paired this scene's triangles with
/// the other scene's vertices), and the other's crowd frames and poses; a clone takes them.
#[test]
fn a_frame_of_a_scene_loaded_from_the_same_bytes_is_refused_everywhere() {
    let bytes = animated_rig();
    let a = GltfScene::from_slice(&bytes).unwrap();
    let b = GltfScene::from_slice(&bytes).unwrap();
    let mut frame = b.frame_buffers();
    b.evaluate(Some(0), 0.25, Wrap::Clamp, &mut frame).unwrap();
    let before = format!("{:?} {:?}", frame.level_pose(), frame.meshes());
    for err in [
        a.evaluate(Some(0), 0.5, Wrap::Clamp, &mut frame)
            .unwrap_err(),
        a.sample(Some(0), 0.5, Wrap::Clamp, &mut frame).unwrap_err(),
        a.local_to_model(&mut frame).unwrap_err(),
        a.palettes(&mut frame).unwrap_err(),
        a.skin(&mut frame).unwrap_err(),
        a.character().rigid(&mut frame).unwrap_err(),
        a.drawn(&frame).map(|_| ()).unwrap_err(),
    ] {
        identity_error(&err, "Frame", "scene");
    }
    assert_eq!(
        format!("{:?} {:?}", frame.level_pose(), frame.meshes()),
        before,
        "a refused frame was written"
    );
    assert_eq!(a.world_matrix(&frame, 0), None, "another scene's matrix");
    assert!(b.world_matrix(&frame, 0).is_some());
    // Crowds: the frame, and a pose sampled on its own.
    let (clips, times, _) = batch(&a, 4);
    let mut crowd = b.crowd_buffers(4).unwrap();
    let before = snapshot(&crowd);
    for err in [
        a.evaluate_crowd(&clips, &times, Wrap::Clamp, &mut crowd)
            .unwrap_err(),
        a.character().evaluate_crowd(&mut crowd).unwrap_err(),
    ] {
        identity_error(&err, "CrowdFrame", "scene");
    }
    assert_eq!(snapshot(&crowd), before, "a refused crowd was written");
    let mut pose = CrowdPose::new(b.skeleton(), 4).unwrap();
    let err = a
        .sample_crowd(&clips, &times, Wrap::Clamp, Threads::One, &mut pose)
        .unwrap_err();
    identity_error(&err, "CrowdPose", "skeleton");
    // A clone of b is b.
    let clone = b.clone();
    clone
        .evaluate(Some(0), 0.5, Wrap::Clamp, &mut frame)
        .unwrap();
    assert_eq!(
        clone.drawn(&frame).unwrap().len(),
        b.drawn(&frame).unwrap().len()
    );
    clone
        .evaluate_crowd(&clips, &times, Wrap::Clamp, &mut crowd)
        .unwrap();
    clone
        .sample_crowd(&clips, &times, Wrap::Clamp, Threads::One, &mut pose)
        .unwrap();
}
