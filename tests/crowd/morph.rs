//! Morph targets of skinned meshes in a crowd (`CrowdFrame::set_mesh_weights`, stage 4 of
//! `evaluate_crowd`): each instance's vertices are what a single frame with its pose, root and weights
//! writes, on every backend, on one thread and on the pool, with linear blending and dual quaternions,
//! fast and deterministic. A deterministic crowd has the frame's bits (both morph, then skin, on
//! deterministic kernels); a fast one agrees within 1e-5 of the coordinates' size (its palettes come
//! from the crowd kernels, and a fast linear frame fuses the morph into the skinning pass). The crowd's
//! boxes hold the morphed vertices, and `set_mesh_weights` keeps its rules.

use super::backends_here;
use crate::common::{random_vec3, scenes, Rng};
use glam::{Mat4, Quat, Vec3, Vec4};
use ispc_skinning::{
    Attribute, Character, Error, MeshInput, MorphTargets, Precision, PrepareOptions, SkinnedMesh,
    Skinning, Threads, Trs, VertexOutputs,
};

const JOINTS: usize = 12;
const VERTICES: usize = 45;
const TARGETS: usize = 3;

/// A 12-joint humanoid with one skinned mesh of 45 vertices (one to four influences, normals and
/// tangents) and three morph targets: one moves every attribute, one positions only, one normals and
/// tangents only.
fn character(rng: &mut Rng) -> Character {
    let (skeleton, t, q, s, skin) = super::upright_rig(JOINTS);
    let positions: Vec<Vec3> = (0..VERTICES).map(|_| random_vec3(rng, -1.0..1.0)).collect();
    let normals: Vec<Vec3> = (0..VERTICES)
        .map(|_| random_vec3(rng, -1.0..1.0).normalize_or(Vec3::Y))
        .collect();
    let tangents: Vec<Vec4> = normals
        .iter()
        .enumerate()
        .map(|(i, n)| {
            n.any_orthonormal_vector()
                .extend(if i % 2 == 0 { 1.0 } else { -1.0 })
        })
        .collect();
    let mut joints = Vec::new();
    let mut weights = Vec::new();
    for v in 0..VERTICES {
        let k = v % 4 + 1;
        let mut j = [0u16; 4];
        let mut w = [0.0f32; 4];
        for slot in 0..k {
            j[slot] = ((v + 3 * slot) % JOINTS) as u16;
            w[slot] = rng.range(0.1, 1.0);
        }
        let sum: f32 = w.iter().sum();
        joints.push(j);
        weights.push(w.map(|x| x / sum));
    }
    let input = MeshInput::new(
        Attribute::vec3(&positions),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    )
    .normals(Attribute::vec3(&normals))
    .tangents(Attribute::vec4(&tangents));
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(JOINTS)).unwrap();
    let deltas = |rng: &mut Rng, r: f32| -> Vec<Vec3> {
        (0..VERTICES).map(|_| random_vec3(rng, -r..r)).collect()
    };
    let targets = MorphTargets::new(
        VERTICES,
        vec![Some(deltas(rng, 0.3)), Some(deltas(rng, 0.2)), None],
        vec![Some(deltas(rng, 0.2)), None, Some(deltas(rng, 0.1))],
        vec![Some(deltas(rng, 0.2)), None, Some(deltas(rng, 0.1))],
    )
    .unwrap();
    Character::new(skeleton, t, q, s, vec![skin], vec![(mesh, 0)])
        .unwrap()
        .with_mesh_morph_targets(0, targets)
        .unwrap()
}

/// Asserts `got` equals `want`: bit for bit where `exact`, else within 1e-5 of the largest coordinate.
fn same<T: AsRef<[f32; N]> + std::fmt::Debug, const N: usize>(
    what: &str,
    got: &[T],
    want: &[T],
    exact: bool,
) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let size = want
        .iter()
        .flat_map(|w| *w.as_ref())
        .fold(1.0f32, |m, x| m.max(x.abs()));
    for (v, (g, w)) in got.iter().zip(want).enumerate() {
        for (a, b) in g.as_ref().iter().zip(w.as_ref()) {
            let ok = if exact {
                a.to_bits() == b.to_bits()
            } else {
                (a - b).abs() <= 1e-5 * size
            };
            assert!(ok, "{what}: vertex {v}: {g:?}, the frame's {w:?}");
        }
    }
}

#[test]
fn each_instance_morphs_and_skins_as_a_frame_would() {
    let mut rng = Rng::new(77);
    let character = character(&mut rng);
    for instances in [0usize, 1, 17] {
        // Every instance's pose, root and weights (instance 0 and every fourth keep zero weights).
        let mut setup = Vec::new();
        for i in 0..instances {
            let pose = scenes::animated_pose(JOINTS, 0.3 * i as f32, true, i as u64);
            let root = Mat4::from_rotation_translation(
                Quat::from_rotation_y(0.1 * i as f32),
                random_vec3(&mut rng, -5.0..5.0),
            );
            let w: Vec<f32> = if i % 4 == 0 {
                vec![0.0; TARGETS]
            } else {
                (0..TARGETS).map(|_| rng.range(-1.5, 1.5)).collect()
            };
            setup.push((pose, root, w));
        }
        for backend in backends_here() {
            for threads in [Threads::One, Threads::All] {
                for (skinning, precision) in [
                    (Skinning::Linear, Precision::Fast),
                    (Skinning::DualQuaternion, Precision::Fast),
                    (Skinning::Linear, Precision::Deterministic),
                    (Skinning::DualQuaternion, Precision::Deterministic),
                ] {
                    let exact = precision == Precision::Deterministic;
                    let mut crowd = character
                        .crowd_buffers(instances)
                        .unwrap()
                        .backend(backend)
                        .threads(threads)
                        .skinning(skinning)
                        .precision(precision);
                    for (i, ((t, q, s), root, w)) in setup.iter().enumerate() {
                        let trs = Trs {
                            translations: t,
                            rotations: q,
                            scales: s,
                        };
                        crowd.pose_mut().set_instance(i, trs).unwrap();
                        crowd.roots_mut()[i] = *root;
                        crowd.set_mesh_weights(0, i, w).unwrap();
                    }
                    character.evaluate_crowd(&mut crowd).unwrap();
                    let boxes = character.crowd_pose_bounds(&crowd).unwrap();
                    let mut frame = character
                        .frame_buffers()
                        .backend(backend)
                        .skinning(skinning)
                        .precision(precision);
                    for (i, ((t, q, s), root, w)) in setup.iter().enumerate() {
                        let what = format!(
                            "{backend:?} {threads:?} {skinning:?} {precision:?} instance {i} of {instances}"
                        );
                        assert_eq!(crowd.mesh_weights(0, i), Some(&w[..]), "{what}");
                        frame.set_pose(t, q, s).unwrap();
                        frame.root = *root;
                        frame.set_mesh_weights(0, w).unwrap();
                        character.evaluate(&mut frame).unwrap();
                        let want = &frame.meshes()[0];
                        let p = crowd.positions(0, i).unwrap();
                        same(&format!("{what} positions"), p, &want.positions, exact);
                        same(
                            &format!("{what} normals"),
                            crowd.normals(0, i).unwrap(),
                            want.normals.as_deref().unwrap(),
                            exact,
                        );
                        same(
                            &format!("{what} tangents"),
                            crowd.tangents(0, i).unwrap(),
                            want.tangents.as_deref().unwrap(),
                            exact,
                        );
                        // The instance's boxes, the skin stage's and the pose's, hold every vertex.
                        let (lo, hi) = crowd.bounds(i).unwrap();
                        let (plo, phi) = boxes[i].unwrap();
                        for v in p {
                            assert!(
                                v.cmpge(lo).all() && v.cmple(hi).all(),
                                "{what}: {v} outside bounds"
                            );
                            assert!(
                                v.cmpge(plo).all() && v.cmple(phi).all(),
                                "{what}: {v} outside pose bounds {plo} .. {phi}"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Streams left out (`VertexOutputs`) keep what they held in a morphed crowd too, and the written ones
/// are the full crowd's.
#[test]
fn a_morphed_crowd_writes_only_the_streams_asked_for() {
    let mut rng = Rng::new(19);
    let character = character(&mut rng);
    let instances = 5;
    let mut full = character.crowd_buffers(instances).unwrap();
    for i in 0..instances {
        let (t, q, s) = scenes::animated_pose(JOINTS, 0.2 * i as f32, true, 40 + i as u64);
        let trs = Trs {
            translations: &t,
            rotations: &q,
            scales: &s,
        };
        full.pose_mut().set_instance(i, trs).unwrap();
        full.set_mesh_weights(0, i, &[0.5, -0.25 * i as f32, 1.0])
            .unwrap();
    }
    let mut partial = full.clone();
    character.evaluate_crowd(&mut full).unwrap();
    for (outputs, normals, tangents) in [
        (VertexOutputs::Positions, false, false),
        (VertexOutputs::PositionsAndNormals, true, false),
    ] {
        for threads in [Threads::One, Threads::All] {
            let mut crowd = partial.clone().outputs(outputs).threads(threads);
            character.evaluate_crowd(&mut crowd).unwrap();
            let what = format!("{outputs:?} {threads:?}");
            let (got, want) = (crowd.mesh(0).unwrap(), full.mesh(0).unwrap());
            assert_eq!(got.positions, want.positions, "{what}");
            let zeros = |n: usize| vec![Vec3::ZERO; n];
            let n = VERTICES * instances;
            let want_normals = if normals {
                want.normals.clone().unwrap()
            } else {
                zeros(n)
            };
            assert_eq!(got.normals.as_ref().unwrap(), &want_normals, "{what}");
            if !tangents {
                assert!(
                    got.tangents
                        .as_ref()
                        .unwrap()
                        .iter()
                        .all(|t| *t == Vec4::ZERO),
                    "{what}"
                );
            }
        }
    }
    partial = partial.outputs(VertexOutputs::All);
    character.evaluate_crowd(&mut partial).unwrap();
    assert_eq!(partial.mesh(0), full.mesh(0));
}

#[test]
fn mesh_weights_of_a_crowd_keep_their_rules() {
    let mut rng = Rng::new(5);
    let character = character(&mut rng);
    let mut crowd = character.crowd_buffers(4).unwrap();
    assert_eq!(crowd.mesh_weights(0, 3), Some(&[0.0; TARGETS][..]));
    assert_eq!(crowd.mesh_weights(0, 4), None);
    assert_eq!(crowd.mesh_weights(1, 0), None);
    assert_eq!(
        crowd.set_mesh_weights(0, 4, &[1.0; TARGETS]),
        Err(Error::InstanceOutOfRange {
            instance: 4,
            instances: 4
        })
    );
    assert_eq!(
        crowd.set_mesh_weights(1, 0, &[]),
        Err(Error::CountMismatch {
            what: "skinned meshes",
            expected: 1,
            got: 2
        })
    );
    assert_eq!(
        crowd.set_mesh_weights(0, 0, &[1.0]),
        Err(Error::CountMismatch {
            what: "morph weights (one per target)",
            expected: TARGETS,
            got: 1
        })
    );
    assert!(matches!(
        crowd.set_mesh_weights(0, 0, &[f32::INFINITY, 0.0, 0.0]),
        Err(Error::NotFinite { .. })
    ));
    // Nothing changed by the refused calls; one instance's weights leave the others alone.
    crowd.set_mesh_weights(0, 2, &[0.25, -0.5, 2.0]).unwrap();
    for i in 0..4 {
        let want: &[f32] = if i == 2 {
            &[0.25, -0.5, 2.0]
        } else {
            &[0.0; TARGETS]
        };
        assert_eq!(crowd.mesh_weights(0, i), Some(want));
    }
    // Weights whose morphed and skinned vertices overflow f32 (half of f32::MAX, placed by a root
    // that scales by 4) are refused by the skin stage, naming the instance.
    crowd.roots_mut()[1] = Mat4::from_scale(Vec3::splat(4.0));
    crowd
        .set_mesh_weights(0, 1, &[f32::MAX, f32::MAX, 0.0])
        .unwrap();
    let r = character.evaluate_crowd(&mut crowd);
    let named = match &r {
        // Counted across the crowd: instance 1's vertices are 45 to 89.
        Err(Error::ResultNotFinite { index, .. }) => (VERTICES..2 * VERTICES).contains(index),
        _ => false,
    };
    assert!(named, "{r:?}");
}
