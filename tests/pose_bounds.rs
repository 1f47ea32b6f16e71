//! `Character::pose_bounds` and `Character::crowd_pose_bounds`: the box computed from the palettes and
//! each joint's bind box contains every position the frame's stages write, on every backend: for the
//! shared assets at several times of every clip (skipped visibly when absent), and for procedural
//! characters under random poses and placements (mirrored ones too) with normalized, kept (sums from
//! 0.3 to 2, and a vertex without influences), compact and LOD-truncated weights and their kept forms,
//! 40 morph targets at weights from -1.5 to 1.5 and a rigid mesh with its own targets. A box that misses
//! a vertex prints the vertex and the box; without morph weights the box must also stay within a few
//! times the written positions' box (a box of 1e30 would contain everything). Every frame runs with
//! linear blending and with dual quaternions, whose box is computed another way.

mod common;

use common::{backends, scenes, Rng};
use glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    Attribute, Character, CharacterSkin, Frame, MeshInput, MorphTargets, PrepareOptions, RigidMesh,
    Skeleton, SkinnedMesh, Skinning, WeightPolicy,
};

/// Asserts that every position lies inside `bounds`.
fn contains(what: &str, bounds: Option<(Vec3, Vec3)>, positions: &[Vec3]) {
    if positions.is_empty() {
        return;
    }
    let (lo, hi) =
        bounds.unwrap_or_else(|| panic!("{what}: no bounds for {} vertices", positions.len()));
    for (v, p) in positions.iter().enumerate() {
        assert!(
            p.cmpge(lo).all() && p.cmple(hi).all(),
            "{what}: vertex {v} at {p} is outside the pose bounds {lo} .. {hi}"
        );
    }
}

/// Asserts that the pose bounds are not much larger than the written positions' box: each joint's
/// box moved as a box can grow by at most sqrt(3) on an axis, and the morph reach and the weight sums
/// add a little; 3x the largest extent, plus a unit, would still catch a box of 1e30.
///
/// Dual quaternions' box is a cube around the palette translations (see `Character::pose_bounds`),
/// larger: up to 8x the extent plus a unit.
fn not_too_large(
    what: &str,
    skinning: Skinning,
    bounds: Option<(Vec3, Vec3)>,
    written: Option<(Vec3, Vec3)>,
) {
    let (Some((lo, hi)), Some((a, b))) = (bounds, written) else {
        return;
    };
    let size = (b - a).max_element();
    let grow = (a - lo).max(hi - b).max_element();
    let times = match skinning {
        Skinning::Linear => 3.0,
        Skinning::DualQuaternion => 8.0,
    };
    assert!(
        grow <= times * size + 1.0,
        "{what}: pose bounds {lo} .. {hi} are far larger than the written box {a} .. {b}"
    );
}

/// Every position a frame wrote.
fn written(frame: &Frame) -> Vec<Vec3> {
    frame
        .meshes()
        .iter()
        .chain(frame.rigid_meshes())
        .flat_map(|m| m.positions.iter().copied())
        .collect()
}

#[cfg(feature = "gltf")]
#[test]
fn pose_bounds_contain_every_asset_vertex() {
    use ispc_skinning::gltf::{GltfScene, Wrap};
    let Some(dir) = common::assets() else { return };
    for asset in common::SHARED_ASSETS {
        let scene = GltfScene::load(dir.join(asset)).unwrap();
        for (backend, skinning) in backends()
            .into_iter()
            .flat_map(|b| [(b, Skinning::Linear), (b, Skinning::DualQuaternion)])
        {
            let mut frame = scene.frame_buffers().backend(backend).skinning(skinning);
            let mut runs = vec![(None, 0.0)];
            for (c, clip) in scene.clips().iter().enumerate() {
                for k in 0..5 {
                    runs.push((Some(c), clip.start() + clip.duration() * k as f32 / 4.0));
                }
            }
            for (clip, t) in runs {
                scene.evaluate(clip, t, Wrap::Clamp, &mut frame).unwrap();
                let bounds = scene.character().pose_bounds(&frame).unwrap();
                let what = format!("{asset} {backend:?} {skinning:?} clip {clip:?} at {t}");
                contains(&what, bounds, &written(&frame));
                // The box from the written positions lies inside it too, and not far inside.
                if let (Some((lo, hi)), Some((a, b))) = (bounds, frame.bounds()) {
                    assert!(a.cmpge(lo).all() && b.cmple(hi).all(), "{what}");
                }
                not_too_large(&what, skinning, bounds, frame.bounds());
            }
        }
    }
}

/// Morph targets of the procedural character's mesh.
const TARGETS: usize = 40;

/// How the procedural character's weights are prepared.
#[derive(Clone, Copy, Debug)]
enum Weights {
    Normalized,
    /// Kept as given, each vertex's scaled by a factor from 0.3 to 2 (to 1 when compact, whose weights
    /// are unorm16), vertex 0 without influences.
    Kept,
    Compact,
    /// At most two influences per vertex.
    Lod,
    /// Kept as given (as `Kept`) and compact.
    KeptCompact,
    /// Kept as given (as `Kept`) and at most two per vertex.
    KeptLod,
}

/// The scenes crate's character (20 joints, 228 vertices) with its mesh prepared as `weights` says,
/// morph targets on it, and a rigid box with its own targets on joint 3.
fn character(weights: Weights, rng: &mut Rng) -> Character {
    let c = scenes::character(20, 3, 4);
    let n = c.parents.len();
    let skeleton = Skeleton::from_parents(&c.parents).unwrap();
    let mut w = c.weights.clone();
    let mut options = PrepareOptions::new(n);
    match weights {
        Weights::Normalized => {}
        Weights::Kept | Weights::KeptCompact | Weights::KeptLod => {
            options.weights = WeightPolicy::Keep;
            if matches!(weights, Weights::KeptCompact) {
                options = options.compact_influences(true);
            }
            if matches!(weights, Weights::KeptLod) {
                options = options.max_influences(2);
            }
            for vw in &mut w {
                // Compact weights are unorm16: each at most 1.
                let s = rng.range(
                    0.3,
                    if matches!(weights, Weights::KeptCompact) {
                        1.0
                    } else {
                        2.0
                    },
                );
                *vw = vw.map(|x| x * s);
            }
            w[0] = [0.0; 4];
        }
        Weights::Compact => options = options.compact_influences(true),
        Weights::Lod => options = options.max_influences(2),
    }
    let input = MeshInput::new(
        Attribute::vec3(&c.positions),
        Attribute::joints_u16(&c.joints),
        Attribute::weights_f32(&w),
    )
    .normals(Attribute::vec3(&c.normals));
    let mesh = SkinnedMesh::prepare(&input, &options).unwrap();
    let skin = CharacterSkin {
        joints: (0..n).collect(),
        inverse_binds: c.inverse_binds.clone(),
    };
    let v = c.positions.len();
    let deltas = |rng: &mut Rng, count: usize| -> Vec<Vec3> {
        (0..count)
            .map(|_| {
                Vec3::new(
                    rng.range(-0.3, 0.3),
                    rng.range(-0.3, 0.3),
                    rng.range(-0.3, 0.3),
                )
            })
            .collect()
    };
    // 40 targets (one moving no position), so that the morph's own rounding counts.
    let positions = (0..TARGETS)
        .map(|t| (t != 1).then(|| deltas(rng, v)))
        .collect();
    let targets =
        MorphTargets::new(v, positions, vec![None; TARGETS], vec![None; TARGETS]).unwrap();
    let cube: Vec<Vec3> = (0..8)
        .map(|i| Vec3::new((i & 1) as f32, ((i >> 1) & 1) as f32, (i >> 2) as f32) - 0.5)
        .collect();
    let rigid_targets =
        MorphTargets::new(8, vec![Some(deltas(rng, 8))], vec![None], vec![None]).unwrap();
    let rigid = RigidMesh::new(cube, None, None)
        .unwrap()
        .with_morph_targets(rigid_targets)
        .unwrap();
    Character::new(
        skeleton,
        c.bind_translations.clone(),
        vec![Quat::IDENTITY; n],
        vec![Vec3::ONE; n],
        vec![skin],
        vec![(mesh, 0)],
    )
    .unwrap()
    .with_mesh_morph_targets(0, targets)
    .unwrap()
    .with_rigid_meshes(vec![(rigid, 3)])
    .unwrap()
}

#[test]
fn pose_bounds_contain_every_vertex_of_random_poses() {
    let mut rng = Rng::new(7);
    for weights in [
        Weights::Normalized,
        Weights::Kept,
        Weights::Compact,
        Weights::Lod,
        Weights::KeptCompact,
        Weights::KeptLod,
    ] {
        let c = character(weights, &mut rng);
        let n = c.skeleton().len();
        for (backend, skinning) in backends()
            .into_iter()
            .flat_map(|b| [(b, Skinning::Linear), (b, Skinning::DualQuaternion)])
        {
            let mut frame = c.frame_buffers().backend(backend).skinning(skinning);
            for round in 0..12 {
                let (t, q, s) =
                    scenes::animated_pose(n, 0.37 * round as f32, round % 2 == 1, round);
                frame.set_pose(&t, &q, &s).unwrap();
                frame.root = common::random_transform(&mut rng, 0.5..2.0, -50.0..50.0);
                if round % 3 == 2 {
                    // A mirror: palettes with a negative determinant.
                    frame.root *= Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
                }
                let mw: Vec<f32> = (0..TARGETS)
                    .map(|_| {
                        if round == 0 {
                            0.0
                        } else {
                            rng.range(-1.5, 1.5)
                        }
                    })
                    .collect();
                frame.set_mesh_weights(0, &mw).unwrap();
                frame.set_rigid_weights(0, &[rng.range(-1.5, 1.5)]).unwrap();
                c.evaluate(&mut frame).unwrap();
                let what = format!("{weights:?} {backend:?} {skinning:?} round {round}");
                let bounds = c.pose_bounds(&frame).unwrap();
                contains(&what, bounds, &written(&frame));
                if round == 0 {
                    // Without morph weights (whose reach adds up over 40 targets).
                    not_too_large(&what, skinning, bounds, frame.bounds());
                }
            }
        }
    }
}

#[test]
fn crowd_pose_bounds_contain_every_instance() {
    let mut rng = Rng::new(9);
    for weights in [
        Weights::Normalized,
        Weights::Kept,
        Weights::Compact,
        Weights::KeptLod,
    ] {
        let c = character(weights, &mut rng);
        let n = c.skeleton().len();
        for (backend, skinning) in backends()
            .into_iter()
            .flat_map(|b| [(b, Skinning::Linear), (b, Skinning::DualQuaternion)])
        {
            let mut crowd = c
                .crowd_buffers(17)
                .unwrap()
                .backend(backend)
                .skinning(skinning);
            let mut poses = Vec::new();
            for i in 0..17 {
                let (t, q, s) = scenes::animated_pose(n, 0.41 * i as f32, true, 30 + i as u64);
                for j in 0..n {
                    crowd.pose_mut().set_joint(i, j, t[j], q[j], s[j]).unwrap();
                }
                crowd.roots_mut()[i] = common::random_transform(&mut rng, 0.5..2.0, -50.0..50.0);
                poses.push((t, q, s));
            }
            c.evaluate_crowd(&mut crowd).unwrap();
            let bounds = c.crowd_pose_bounds(&crowd).unwrap();
            assert_eq!(bounds.len(), 17);
            let mut frame = c.frame_buffers().backend(backend).skinning(skinning);
            for (i, (b, (t, q, s))) in bounds.iter().zip(&poses).enumerate() {
                let what = format!("{weights:?} {backend:?} {skinning:?} instance {i}");
                contains(&what, *b, crowd.positions(0, i).unwrap());
                // Each instance's box is the one `pose_bounds` gives a frame with its pose and root
                // under the same method (up to the crowd kernels' rounding; the two methods' boxes
                // differ by far more).
                frame.set_pose(t, q, s).unwrap();
                frame.root = crowd.roots()[i];
                c.evaluate_pose(&mut frame).unwrap();
                let (Some((lo, hi)), Some((flo, fhi))) = (*b, c.pose_bounds(&frame).unwrap())
                else {
                    panic!("{what}: no box for a skinned mesh");
                };
                let off = (lo - flo).abs().max((hi - fhi).abs()).max_element();
                let size = (fhi - flo).max_element();
                assert!(
                    off <= 1e-3 * (size + 1.0),
                    "{what}: crowd box {lo} .. {hi}, frame box {flo} .. {fhi}"
                );
            }
        }
    }
    // Another character's crowd frame is refused.
    let other = character(Weights::Lod, &mut rng);
    let crowd = other.crowd_buffers(2).unwrap();
    let c = character(Weights::Normalized, &mut rng);
    assert!(c.crowd_pose_bounds(&crowd).is_err());
    assert!(c.pose_bounds(&other.frame_buffers()).is_err());
}

/// Morph weights near `f32::MAX` overflow the box: a typed error, never `Ok` with infinities (or a box
/// from which a NaN was dropped).
#[test]
fn an_overflowing_box_is_an_error() {
    for skinning in [Skinning::Linear, Skinning::DualQuaternion] {
        overflowing_box(skinning);
    }
}

fn overflowing_box(skinning: Skinning) {
    let mut rng = Rng::new(3);
    let c = character(Weights::Normalized, &mut rng);
    let mut frame = c.frame_buffers().skinning(skinning);
    c.evaluate_pose(&mut frame).unwrap();
    let mut huge = [0.0; TARGETS];
    huge[0] = f32::MAX;
    huge[2] = f32::MAX;
    frame.set_mesh_weights(0, &huge).unwrap();
    assert!(matches!(
        c.pose_bounds(&frame),
        Err(ispc_skinning::Error::ResultNotFinite {
            stage: "pose bounds",
            index: 0,
            ..
        })
    ));
    frame.set_mesh_weights(0, &[0.0; TARGETS]).unwrap();
    assert!(c.pose_bounds(&frame).unwrap().is_some());
}

/// A mesh whose every vertex is without influences (kept weights of zero) skins to the origin, with
/// either method: the box holds the origin although no joint has a box.
#[test]
fn a_mesh_without_influences_is_bounded_at_the_origin() {
    let c = scenes::character(6, 2, 4);
    let n = c.parents.len();
    let mut options = PrepareOptions::new(n);
    options.weights = WeightPolicy::Keep;
    let zero = vec![[0.0f32; 4]; c.positions.len()];
    let input = MeshInput::new(
        Attribute::vec3(&c.positions),
        Attribute::joints_u16(&c.joints),
        Attribute::weights_f32(&zero),
    );
    let mesh = SkinnedMesh::prepare(&input, &options).unwrap();
    let skin = CharacterSkin {
        joints: (0..n).collect(),
        inverse_binds: c.inverse_binds.clone(),
    };
    let character = Character::new(
        Skeleton::from_parents(&c.parents).unwrap(),
        c.bind_translations.clone(),
        vec![Quat::IDENTITY; n],
        vec![Vec3::ONE; n],
        vec![skin],
        vec![(mesh, 0)],
    )
    .unwrap();
    for backend in backends() {
        for skinning in [Skinning::Linear, Skinning::DualQuaternion] {
            let mut frame = character
                .frame_buffers()
                .backend(backend)
                .skinning(skinning);
            frame.root = Mat4::from_translation(Vec3::splat(40.0));
            character.evaluate(&mut frame).unwrap();
            let bounds = character.pose_bounds(&frame).unwrap();
            contains(
                &format!("{backend:?} {skinning:?}"),
                bounds,
                &written(&frame),
            );
        }
    }
}
