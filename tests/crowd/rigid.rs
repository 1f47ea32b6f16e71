//! Rigid meshes in a crowd (`Character::crowd_rigid`, stage 5 of `evaluate_crowd`): each instance's copy
//! of every rigid mesh has the bits of a single frame's rigid stage run on that instance's model
//! matrices and morph weights, on every backend, with `Threads::One` and `All`; the crowd's boxes
//! (`CrowdFrame::bounds`, `Character::crowd_pose_bounds`) hold them; `set_rigid_weights` keeps its rules.

use super::backends_here;
use crate::common::{random_vec3, scenes, Rng};
use glam::{Mat4, Vec3};
use ispc_skinning::{
    Attribute, Character, Error, MeshInput, MorphTargets, PrepareOptions, RigidMesh, SkinnedMesh,
    Threads, Trs, VertexOutputs,
};

const JOINTS: usize = 12;

/// A 12-joint humanoid with one skinned triangle and two rigid meshes: a cube with normals, tangents
/// and two morph targets on joint 7, and a plain quad on joint 3.
fn character(rng: &mut Rng) -> Character {
    let (skeleton, t, q, s, skin) = super::upright_rig(JOINTS);
    let positions = [Vec3::ZERO, Vec3::X, Vec3::Y];
    let mesh = SkinnedMesh::prepare(
        &MeshInput::new(
            Attribute::vec3(&positions),
            Attribute::joints_u16(&[[0u16, 1, 0, 0], [1, 2, 0, 0], [2, 0, 0, 0]]),
            Attribute::weights_f32(&[
                [0.5f32, 0.5, 0.0, 0.0],
                [0.7, 0.3, 0.0, 0.0],
                [1.0, 0.0, 0.0, 0.0],
            ]),
        ),
        &PrepareOptions::default(),
    )
    .unwrap();
    let cube: Vec<Vec3> = (0..8)
        .map(|i| Vec3::new((i & 1) as f32, ((i >> 1) & 1) as f32, (i >> 2) as f32) - 0.5)
        .collect();
    let normals: Vec<Vec3> = cube.iter().map(|p| p.normalize()).collect();
    let tangents: Vec<glam::Vec4> = normals
        .iter()
        .enumerate()
        .map(|(i, n)| {
            n.any_orthonormal_vector()
                .extend(if i % 2 == 0 { 1.0 } else { -1.0 })
        })
        .collect();
    let deltas =
        |rng: &mut Rng| -> Vec<Vec3> { (0..8).map(|_| random_vec3(rng, -0.3..0.3)).collect() };
    let targets = MorphTargets::new(
        8,
        vec![Some(deltas(rng)), Some(deltas(rng))],
        vec![Some(deltas(rng)), None],
        vec![None, None],
    )
    .unwrap();
    let plated = RigidMesh::new(cube, Some(normals), Some(tangents))
        .unwrap()
        .with_morph_targets(targets)
        .unwrap();
    let quad = RigidMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::ONE], None, None).unwrap();
    Character::new(skeleton, t, q, s, vec![skin], vec![(mesh, 0)])
        .unwrap()
        .with_rigid_meshes(vec![(plated, 7), (quad, 3)])
        .unwrap()
}

fn bits(v: &[Vec3]) -> Vec<u32> {
    v.iter()
        .flat_map(|x| x.to_array().map(f32::to_bits))
        .collect()
}

#[test]
fn each_instance_draws_its_rigid_meshes_as_a_frame_would() {
    let mut rng = Rng::new(41);
    let character = character(&mut rng);
    let levels = character
        .skeleton()
        .level_indices(&(0..JOINTS).collect::<Vec<_>>())
        .unwrap();
    for instances in [0usize, 1, 17] {
        for backend in backends_here() {
            for threads in [Threads::One, Threads::All] {
                let mut crowd = character
                    .crowd_buffers(instances)
                    .unwrap()
                    .backend(backend)
                    .threads(threads);
                let mut weights = Vec::new();
                for i in 0..instances {
                    let (t, q, s) = scenes::animated_pose(JOINTS, 0.3 * i as f32, true, i as u64);
                    let trs = Trs {
                        translations: &t,
                        rotations: &q,
                        scales: &s,
                    };
                    crowd.pose_mut().set_instance(i, trs).unwrap();
                    crowd.roots_mut()[i] = Mat4::from_translation(random_vec3(&mut rng, -5.0..5.0));
                    // Instance 0 keeps the character's weights (all zero: no morph).
                    let w = if i == 0 {
                        vec![0.0, 0.0]
                    } else {
                        vec![rng.range(-1.0, 1.0), if i % 3 == 0 { 0.0 } else { 0.5 }]
                    };
                    crowd.set_rigid_weights(0, i, &w).unwrap();
                    weights.push(w);
                }
                character.evaluate_crowd(&mut crowd).unwrap();
                let boxes = character.crowd_pose_bounds(&crowd).unwrap();
                for i in 0..instances {
                    assert_eq!(crowd.rigid_weights(0, i), Some(&weights[i][..]));
                    // A single frame's rigid stage on this instance's model matrices and weights.
                    let mut frame = character.frame_buffers().backend(backend);
                    for j in 0..JOINTS {
                        frame.level_models_mut()[levels[j]] = crowd.models().model(i, j).unwrap();
                    }
                    frame.set_rigid_weights(0, &weights[i]).unwrap();
                    character.rigid(&mut frame).unwrap();
                    for (m, want) in frame.rigid_meshes().iter().enumerate() {
                        let at = || format!("{backend:?} {threads:?} instance {i} rigid mesh {m}");
                        let got = crowd.rigid_positions(m, i).unwrap();
                        assert_eq!(bits(got), bits(&want.positions), "{}", at());
                        match &want.normals {
                            Some(n) => {
                                assert_eq!(
                                    bits(crowd.rigid_normals(m, i).unwrap()),
                                    bits(n),
                                    "{}",
                                    at()
                                )
                            }
                            None => assert!(crowd.rigid_normals(m, i).is_none(), "{}", at()),
                        }
                        if let Some(t) = &want.tangents {
                            let got = crowd.rigid_tangents(m, i).unwrap();
                            let flat = |v: &[glam::Vec4]| -> Vec<u32> {
                                v.iter()
                                    .flat_map(|x| x.to_array().map(f32::to_bits))
                                    .collect()
                            };
                            assert_eq!(flat(got), flat(t), "{}", at());
                        }
                        // The instance's boxes hold every rigid position.
                        let (lo, hi) = crowd.bounds(i).unwrap();
                        let (plo, phi) = boxes[i].unwrap();
                        for p in got {
                            assert!(
                                p.cmpge(lo).all() && p.cmple(hi).all(),
                                "{}: {p} outside bounds",
                                at()
                            );
                            assert!(
                                p.cmpge(plo).all() && p.cmple(phi).all(),
                                "{}: {p} outside pose bounds",
                                at()
                            );
                        }
                    }
                }
                assert!(crowd.rigid_positions(0, instances).is_none());
                assert!(crowd.rigid(2).is_none());
            }
        }
    }
}

#[test]
fn rigid_weights_of_a_crowd_keep_their_rules() {
    let mut rng = Rng::new(3);
    let character = character(&mut rng);
    let mut crowd = character.crowd_buffers(4).unwrap();
    assert_eq!(crowd.rigid_weights(0, 3), Some(&[0.0, 0.0][..]));
    assert_eq!(crowd.rigid_weights(1, 3), Some(&[][..]));
    assert_eq!(crowd.rigid_weights(0, 4), None);
    assert_eq!(
        crowd.set_rigid_weights(0, 4, &[1.0, 1.0]),
        Err(Error::InstanceOutOfRange {
            instance: 4,
            instances: 4
        })
    );
    assert_eq!(
        crowd.set_rigid_weights(2, 0, &[]),
        Err(Error::CountMismatch {
            what: "rigid meshes",
            expected: 2,
            got: 3
        })
    );
    assert_eq!(
        crowd.set_rigid_weights(0, 0, &[1.0]),
        Err(Error::CountMismatch {
            what: "morph weights (one per target)",
            expected: 2,
            got: 1
        })
    );
    assert!(matches!(
        crowd.set_rigid_weights(0, 0, &[f32::NAN, 0.0]),
        Err(Error::NotFinite { .. })
    ));
    // Nothing changed by the refused calls; one instance's weights leave the others alone.
    crowd.set_rigid_weights(0, 2, &[0.25, -0.5]).unwrap();
    for i in 0..4 {
        let want: &[f32] = if i == 2 { &[0.25, -0.5] } else { &[0.0, 0.0] };
        assert_eq!(crowd.rigid_weights(0, i), Some(want));
    }
}

#[test]
fn positions_only_keep_the_other_streams_and_a_foreign_frame_is_refused() {
    let character = character(&mut Rng::new(9));
    // The same shapes (same seed), another character.
    let other = self::character(&mut Rng::new(9));
    let mut crowd = character
        .crowd_buffers(3)
        .unwrap()
        .outputs(VertexOutputs::Positions);
    character.evaluate_crowd(&mut crowd).unwrap();
    for i in 0..3 {
        assert!(crowd
            .rigid_positions(0, i)
            .unwrap()
            .iter()
            .any(|p| *p != Vec3::ZERO));
        // Streams left out keep what they held: zeros in new buffers.
        assert!(crowd
            .rigid_normals(0, i)
            .unwrap()
            .iter()
            .all(|n| *n == Vec3::ZERO));
        assert!(crowd
            .rigid_tangents(0, i)
            .unwrap()
            .iter()
            .all(|t| *t == glam::Vec4::ZERO));
        // The quad has neither normals nor tangents.
        assert!(crowd.rigid_normals(1, i).is_none() && crowd.rigid_tangents(1, i).is_none());
    }
    for result in [
        other.crowd_rigid(&mut crowd),
        other.evaluate_crowd(&mut crowd),
        other.crowd_pose_bounds(&crowd).map(|_| ()),
    ] {
        assert!(
            matches!(result, Err(Error::WrongFrame { .. })),
            "{result:?}"
        );
    }
}
