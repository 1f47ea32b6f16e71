//! The cases of glTF-Asset-Generator's Animation_NodeMisc set, built here on the two-joint rig (the
//! set's own files are not in the shared assets): channels with different start and end times, a
//! non-zero start, a single key, a channel overriding a node's rotation, a translation channel on a
//! rotated node, and two animations each animating one property. Case 08 (a channel without a node) is
//! `built.rs`'s `channels_without_a_node_are_ignored_with_a_warning`.

use super::*;

/// One LINEAR channel on node 1: path, key times, values.
type Keys<'a> = (&'a str, &'a [f32], &'a [f32]);

/// The rig with node 1 at rest rotation `rest` and one animation per entry of `animations`, each a
/// list of channels on node 1.
fn rig(rest: Quat, animations: &[&[Keys<'_>]]) -> GltfScene {
    let mut b = Builder::default();
    let mut doc = two_joint_rig(&mut b);
    doc["nodes"][1]["rotation"] = json!(rest.to_array());
    let mut anims = Vec::new();
    for channels in animations {
        let mut samplers = Vec::new();
        let mut targets = Vec::new();
        for (k, (path, times, values)) in channels.iter().enumerate() {
            let ty = if *path == "rotation" { "VEC4" } else { "VEC3" };
            let input = b.f32s(times, "SCALAR");
            let output = b.f32s(values, ty);
            samplers.push(json!({"input": input, "output": output}));
            targets.push(json!({"sampler": k, "target": {"node": 1, "path": path}}));
        }
        anims.push(json!({"samplers": samplers, "channels": targets}));
    }
    doc["animations"] = json!(anims);
    load(&b.gltf(doc))
}

/// Node 1's local transform with clip `clip` at time `t`, clamped.
fn local_at(scene: &GltfScene, clip: usize, t: f32) -> (Vec3, Quat, Vec3) {
    let mut frame = scene.frame_buffers().backend(Backend::Reference);
    scene
        .evaluate(Some(clip), t, Wrap::Clamp, &mut frame)
        .unwrap();
    frame.local(1).unwrap()
}

fn close_q(a: Quat, b: Quat) -> bool {
    (a.dot(b).abs() - 1.0).abs() < 1e-6
}

#[test]
fn animation_node_misc_cases() {
    let quarter_x = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
    let eighth_x = Quat::from_rotation_x(std::f32::consts::FRAC_PI_4);
    let rot = |q: Quat| q.to_array();
    let two = |a: Quat, b: Quat| [rot(a), rot(b)].concat();
    let rest_t = Vec3::new(0.0, 1.0, 0.0);

    // 01: one rotation channel starting at 1.0: before its first key it holds that key.
    let s = rig(
        Quat::IDENTITY,
        &[&[("rotation", &[1.0, 3.0], &two(Quat::IDENTITY, quarter_x))]],
    );
    assert_eq!((s.clips()[0].start(), s.clips()[0].end()), (1.0, 3.0));
    assert!(close_q(local_at(&s, 0, 0.0).1, Quat::IDENTITY));
    assert!(close_q(local_at(&s, 0, 2.0).1, eighth_x));
    assert!(close_q(local_at(&s, 0, 9.0).1, quarter_x));

    // 02: translation over [2, 6] and rotation over [1, 5]: the clip spans [1, 6], and each channel
    // holds its end keys outside its own span.
    let s = rig(
        Quat::IDENTITY,
        &[&[
            ("translation", &[2.0, 6.0], &[0.0, 0.0, 0.0, 4.0, 0.0, 0.0]),
            ("rotation", &[1.0, 5.0], &two(Quat::IDENTITY, quarter_x)),
        ]],
    );
    assert_eq!((s.clips()[0].start(), s.clips()[0].end()), (1.0, 6.0));
    let (t, q, _) = local_at(&s, 0, 1.5);
    assert_eq!(t, Vec3::ZERO);
    assert!(close_q(
        q,
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_2 / 8.0)
    ));
    let (t, q, _) = local_at(&s, 0, 5.5);
    assert!((t - Vec3::new(3.5, 0.0, 0.0)).length() < 1e-6);
    assert!(close_q(q, quarter_x));

    // 03: a single key: its value at every time, clamped or looped, and a clip of no duration.
    let s = rig(
        Quat::IDENTITY,
        &[&[("translation", &[0.0], &[-0.1, 0.0, 0.0])]],
    );
    assert_eq!(s.clips()[0].duration(), 0.0);
    for t in [-1.0, 0.0, 0.5, 7.0] {
        assert_eq!(local_at(&s, 0, t).0, Vec3::new(-0.1, 0.0, 0.0));
        let mut frame = s.frame_buffers().backend(Backend::Reference);
        s.evaluate(Some(0), t, Wrap::Loop, &mut frame).unwrap();
        assert_eq!(
            frame.local(1).unwrap().0,
            Vec3::new(-0.1, 0.0, 0.0),
            "loop at {t}"
        );
    }

    // 05: a constant rotation channel overrides the node's own rotation.
    let rest = Quat::from_xyzw(0.0, 0.5, 0.0, 0.866).normalize();
    let other = Quat::from_xyzw(0.0, -0.5, 0.0, 0.866).normalize();
    let s = rig(rest, &[&[("rotation", &[0.0, 1.0], &two(other, other))]]);
    for t in [0.0, 0.5, 2.0] {
        assert!(close_q(local_at(&s, 0, t).1, other), "t = {t}");
    }

    // 06: a translation channel on a rotated node keeps the node's rotation.
    let s = rig(
        rest,
        &[&[("translation", &[0.0, 2.0], &[0.0, 0.0, 0.0, 0.0, 2.0, 0.0])]],
    );
    let (t, q, sc) = local_at(&s, 0, 1.0);
    assert_eq!(t, Vec3::new(0.0, 1.0, 0.0));
    assert!(close_q(q, rest));
    assert_eq!(sc, Vec3::ONE);

    // 07: two animations, one property each; the other property stays at rest in each.
    let s = rig(
        Quat::IDENTITY,
        &[
            &[("rotation", &[0.0, 2.0], &two(Quat::IDENTITY, quarter_x))],
            &[("translation", &[0.0, 2.0], &[0.0, 0.0, 0.0, 2.0, 0.0, 0.0])],
        ],
    );
    let (t, q, _) = local_at(&s, 0, 1.0);
    assert_eq!(t, rest_t);
    assert!(close_q(q, eighth_x));
    let (t, q, _) = local_at(&s, 1, 1.0);
    assert_eq!(t, Vec3::new(1.0, 0.0, 0.0));
    assert!(close_q(q, Quat::IDENTITY));
}
