//! The rigs and helpers the crowd tests share: the upright rig of the rigid-mesh and morph-target
//! tests, the backends to compare (each ISA this CPU cannot run named once per test on the real
//! stderr), the scenes crate's character with two skins and two meshes in an order that is not its
//! level order, each instance's pose and root (also applied to a whole crowd frame), and everything a
//! crowd frame holds as bits, to compare two runs exactly.

use crate::common::{backends, scenes};
use glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    Attribute, Backend, Character, CharacterSkin, CrowdFrame, Isa, MeshInput, PrepareOptions,
    Skeleton, SkinnedMesh,
};
use std::cell::Cell;
use std::io::Write as _;

/// A `joints`-joint humanoid standing up the y axis (joint j at 0.2 j, unrotated, unscaled) and its skin
/// bound where it rests: the rig of the rigid-mesh and morph-target crowd tests.
pub(crate) fn upright_rig(
    joints: usize,
) -> (Skeleton, Vec<Vec3>, Vec<Quat>, Vec<Vec3>, CharacterSkin) {
    let skeleton = Skeleton::from_parents(&scenes::humanoid_parents(joints)).unwrap();
    let t: Vec<Vec3> = (0..joints)
        .map(|j| Vec3::new(0.0, 0.2 * j as f32, 0.0))
        .collect();
    let (q, s) = (vec![Quat::IDENTITY; joints], vec![Vec3::ONE; joints]);
    let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s).unwrap();
    (skeleton, t, q, s, skin)
}

thread_local! {
    static REPORTED: Cell<bool> = const { Cell::new(false) };
}

/// The backends to compare; every ISA this CPU cannot run (or this build lacks) is named on the real
/// stderr (past libtest's capture) as not run, once per test, so that a pass never hides it.
pub(crate) fn backends_here() -> Vec<Backend> {
    if !REPORTED.with(|r| r.replace(true)) {
        for isa in Isa::ALL {
            if let Err(e) = isa.runnable() {
                let thread = std::thread::current();
                let _ = writeln!(
                    std::io::stderr(),
                    "not run: {}: {isa}: {e}",
                    thread.name().unwrap_or("a test")
                );
            }
        }
    }
    backends()
}

/// One mesh's skin-joint indices and weights per vertex, as the tolerance needs them.
pub(crate) struct Influences {
    pub(crate) joints: Vec<[usize; 4]>,
    pub(crate) weights: Vec<[f32; 4]>,
}

/// The scenes crate's character (20 joints, 228 vertices) in its own joint order, which is not its
/// level order, with two skins and two meshes: skin 0 names every joint in order and skins mesh 0
/// (positions, normals, tangents); skin 1 names them in reverse and skins mesh 1 (the same vertices,
/// positions only, joint indices reversed to match).
pub(crate) struct Rig {
    pub(crate) character: Character,
    pub(crate) influences: [Influences; 2],
    pub(crate) n: usize,
}

pub(crate) fn rig() -> Rig {
    let c = scenes::character(20, 3, 4);
    let n = c.parents.len();
    let skeleton = Skeleton::from_parents(&c.parents).unwrap();
    assert_ne!(
        skeleton.original_order(),
        (0..n).collect::<Vec<_>>(),
        "the rig's order should differ from its level order"
    );
    let full = MeshInput::new(
        Attribute::vec3(&c.positions),
        Attribute::joints_u16(&c.joints),
        Attribute::weights_f32(&c.weights),
    )
    .normals(Attribute::vec3(&c.normals))
    .tangents(Attribute::vec4(&c.tangents));
    let mesh0 = SkinnedMesh::prepare(&full, &PrepareOptions::new(n)).unwrap();
    let reversed: Vec<[u16; 4]> = c
        .joints
        .iter()
        .map(|j| j.map(|j| (n - 1) as u16 - j))
        .collect();
    let bare = MeshInput::new(
        Attribute::vec3(&c.positions),
        Attribute::joints_u16(&reversed),
        Attribute::weights_f32(&c.weights),
    );
    let mesh1 = SkinnedMesh::prepare(&bare, &PrepareOptions::new(n)).unwrap();
    let skin0 = CharacterSkin {
        joints: (0..n).collect(),
        inverse_binds: c.inverse_binds.clone(),
    };
    let skin1 = CharacterSkin {
        joints: (0..n).rev().collect(),
        inverse_binds: c.inverse_binds.iter().rev().copied().collect(),
    };
    let character = Character::new(
        skeleton,
        c.bind_translations.clone(),
        vec![Quat::IDENTITY; n],
        vec![Vec3::ONE; n],
        vec![skin0, skin1],
        vec![(mesh0, 0), (mesh1, 1)],
    )
    .unwrap();
    let influences = |joints: &[[u16; 4]]| Influences {
        joints: joints.iter().map(|j| j.map(usize::from)).collect(),
        weights: c.weights.clone(),
    };
    Rig {
        character,
        influences: [influences(&c.joints), influences(&reversed)],
        n,
    }
}

/// A local pose in the user's order: translations, rotations, scales.
pub(crate) type Pose = (Vec<Vec3>, Vec<Quat>, Vec<Vec3>);

/// Instance `i`'s pose (user order) and root.
pub(crate) fn instance(n: usize, i: usize) -> (Pose, Mat4) {
    let pose = scenes::animated_pose(n, 0.37 * i as f32, true, 100 + i as u64);
    let root = Mat4::from_scale_rotation_translation(
        Vec3::splat(1.0 + 0.01 * i as f32),
        Quat::from_rotation_y(0.1 * i as f32),
        Vec3::new(i as f32, 0.0, -((i % 5) as f32)),
    );
    (pose, root)
}

/// Everything a crowd frame holds after a frame, as bits, to compare two runs exactly.
pub(crate) fn crowd_bits(rig: &Rig, frame: &CrowdFrame) -> Vec<u32> {
    let mut bits = Vec::new();
    let mut models = vec![Mat4::ZERO; rig.n];
    for i in 0..frame.instances() {
        frame.models().instance_models(i, &mut models).unwrap();
        bits.extend(
            models
                .iter()
                .flat_map(|m| m.to_cols_array().map(f32::to_bits)),
        );
    }
    for skin in 0..2 {
        let palettes = frame.palettes(skin).unwrap().as_slice();
        bits.extend(
            palettes
                .iter()
                .flat_map(|p| p.rows.concat().into_iter().map(f32::to_bits)),
        );
    }
    for mesh in 0..2 {
        let out = frame.mesh(mesh).unwrap();
        bits.extend(
            out.positions
                .iter()
                .flat_map(|p| p.to_array().map(f32::to_bits)),
        );
        for n in out.normals.iter().flatten() {
            bits.extend(n.to_array().map(f32::to_bits));
        }
        for t in out.tangents.iter().flatten() {
            bits.extend(t.to_array().map(f32::to_bits));
        }
    }
    bits
}

/// Poses every instance of `frame` as [`instance`] does (pose and root).
pub(crate) fn pose_crowd(rig: &Rig, frame: &mut CrowdFrame) {
    for i in 0..frame.instances() {
        let ((t, q, s), root) = instance(rig.n, i);
        for j in 0..rig.n {
            frame.pose_mut().set_joint(i, j, t[j], q[j], s[j]).unwrap();
        }
        frame.roots_mut()[i] = root;
    }
}
