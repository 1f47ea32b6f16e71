//! Meshes without a skin: a rigid two-primitive mesh under an animated joint, the same mesh static
//! under an unanimated scene root, a node outside the scene that is not drawn, and rigid normals and
//! tangents under non-uniform and mirroring scale (inverse transpose, renormalized, handedness
//! flipped), on every backend.

use super::{backends, close, load, Builder, BASE, UNIT};
use glam::{Quat, Vec3};
use ispc_skinning::gltf::{PrimitiveKind, Wrap};
use serde_json::json;

/// Node 0 is a joint of a skin and rotates; node 1, its child, carries a two-primitive mesh without a
/// skin (rigid); node 2, a scene root that nothing animates, carries the same mesh (static); node 3
/// is outside the scene and is not drawn.
#[test]
fn rigid_and_static_meshes_and_multi_primitive_meshes() {
    let mut b = Builder::default();
    let pos = b.vec3s(&BASE);
    let nrm = b.vec3s(&[Vec3::Z; 3]);
    let pos2 = b.vec3s(&[Vec3::ZERO, Vec3::Z, Vec3::X]);
    let rig_pos = b.vec3s(&[Vec3::ZERO; 3]);
    let joints = b.u16s(&[0; 12], "VEC4");
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0].repeat(3), "VEC4");
    let times = b.f32s(&[0.0, 1.0], "SCALAR");
    let angle = std::f32::consts::FRAC_PI_2;
    let q = Quat::from_rotation_z(angle);
    let rotations = b.f32s(&[0.0, 0.0, 0.0, 1.0, q.x, q.y, q.z, q.w], "VEC4");
    let doc = json!({
        "nodes": [
            {"children": [1]},
            {"mesh": 0, "translation": [1.0, 0.0, 0.0], "scale": [2.0, 1.0, 1.0]},
            {"mesh": 0, "translation": [0.0, 0.0, 5.0]},
            {"mesh": 0},
            {"mesh": 1, "skin": 0}
        ],
        "meshes": [
            {"primitives": [
                {"attributes": {"POSITION": pos, "NORMAL": nrm}},
                {"attributes": {"POSITION": pos2}}
            ]},
            {"primitives": [{"attributes": {"POSITION": rig_pos, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}
        ],
        "skins": [{"joints": [0]}],
        "animations": [{
            "samplers": [{"input": times, "output": rotations}],
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}]
        }],
        "scenes": [{"nodes": [0, 2, 4]}],
        "scene": 0
    });
    let scene = load(&b.gltf(doc));
    let rigid: Vec<_> = scene
        .rigid_primitives()
        .iter()
        .map(|p| (p.node(), p.primitive(), p.is_animated()))
        .collect();
    assert_eq!(
        rigid,
        [(1, 0, true), (1, 1, true), (2, 0, false), (2, 1, false)]
    );
    for backend in backends() {
        let mut frame = scene.frame_buffers().backend(backend).renormalize(UNIT);
        scene
            .evaluate(Some(0), 1.0, Wrap::Clamp, &mut frame)
            .unwrap();
        let drawn = scene.drawn(&frame).unwrap();
        let listed: Vec<_> = drawn
            .iter()
            .map(|d| (d.node, d.primitive, d.kind))
            .collect();
        assert_eq!(
            listed,
            [
                (1, 0, PrimitiveKind::Rigid),
                (1, 1, PrimitiveKind::Rigid),
                (2, 0, PrimitiveKind::Static),
                (2, 1, PrimitiveKind::Static),
                (4, 0, PrimitiveKind::Skinned),
            ]
        );
        // Node 1 at t = 1: world = Rz(90) * T(1, 0, 0) * S(2, 1, 1). (x, y, z) -> (-y, 2x + 1, z).
        let world = |p: Vec3| Vec3::new(-p.y, 2.0 * p.x + 1.0, p.z);
        let r = frame.rigid_meshes();
        for (i, &p) in BASE.iter().enumerate() {
            close(r[0].positions[i], world(p), "rigid primitive 0");
        }
        for (i, &p) in [Vec3::ZERO, Vec3::Z, Vec3::X].iter().enumerate() {
            close(r[1].positions[i], world(p), "rigid primitive 1");
            close(
                r[3].positions[i],
                p + Vec3::new(0.0, 0.0, 5.0),
                "static primitive 1",
            );
        }
        // The normal +Z stays +Z (the rotation is about Z); a second primitive has no normals.
        for &n in r[0].normals.as_ref().unwrap() {
            close(n, Vec3::Z, "rigid normal");
        }
        assert!(r[1].normals.is_none());
    }
}

/// Non-uniform scale: normals take the inverse transpose, tangents the matrix, both renormalized, and
/// a mirroring scale flips the tangent's handedness.
#[test]
fn rigid_normals_and_tangents_under_non_uniform_and_mirroring_scale() {
    let mut b = Builder::default();
    let pos = b.vec3s(&BASE);
    // A normal on the diagonal of the xy plane, and a tangent along the other diagonal.
    let n = Vec3::new(1.0, 1.0, 0.0).normalize();
    let t = Vec3::new(1.0, -1.0, 0.0).normalize();
    let nrm = b.vec3s(&[n; 3]);
    let tan = b.f32s(&[t.x, t.y, t.z, 1.0].repeat(3), "VEC4");
    let doc = json!({
        "nodes": [{"mesh": 0, "scale": [-2.0, 1.0, 1.0]}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos, "NORMAL": nrm, "TANGENT": tan}}]}],
        "scenes": [{"nodes": [0]}]
    });
    let scene = load(&b.gltf(doc));
    for backend in backends() {
        let mut frame = scene.frame_buffers().backend(backend).renormalize(UNIT);
        scene.evaluate(None, 0.0, Wrap::Clamp, &mut frame).unwrap();
        let out = &frame.rigid_meshes()[0];
        // Inverse transpose of diag(-2, 1, 1) is diag(-0.5, 1, 1).
        let want_n = Vec3::new(-0.5 * n.x, n.y, 0.0).normalize();
        let want_t = Vec3::new(-2.0 * t.x, t.y, 0.0).normalize();
        for (&got_n, got_t) in out
            .normals
            .as_ref()
            .unwrap()
            .iter()
            .zip(out.tangents.as_ref().unwrap())
        {
            close(got_n, want_n, "normal");
            close(got_t.truncate(), want_t, "tangent");
            assert_eq!(got_t.w, -1.0, "mirrored handedness");
            assert!(
                got_n.dot(got_t.truncate()).abs() < 1e-5,
                "still perpendicular"
            );
        }
    }
}
