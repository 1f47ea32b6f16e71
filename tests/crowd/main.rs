//! Crowds against the single-character path, and the size limits of crowd buffers. The crowd jobs
//! (`CrowdPaletteJob`, `CrowdSkinningJob`) and their rules are checked in `jobs.rs` beside this file; crowd
//! frames of another character (the wrong frame) and the message of too many palette entries in
//! `frames.rs`; `CrowdFrame::outputs` in `outputs.rs`; rigid meshes in `rigid.rs`; skinned meshes'
//! morph targets in `morph.rs`. The rigs and helpers the tests share are in `fixtures.rs`, the
//! tolerances in `tolerance.rs`, and the allocation counter in `tracking.rs`. The nine files make one
//! test binary.
//!
//! A crowd of N instances of a character (N = 0, 1, 15, 16, 17, 40: empty, one, around a block of 16
//! lanes, and several blocks), each posed differently and placed by its own root, evaluated by
//! `Character::evaluate_crowd` on every backend, must give what `Character::evaluate` gives for each
//! instance alone: model matrices, palettes, positions, normals and tangents, with and without
//! renormalization. `Threads::One` and `Threads::All` give the same bits.
//!
//! Tolerances are those of the ISA parity harness (tests/isa_parity): a model matrix may differ by
//! 8 eps (d + 2) A_j per element (hierarchy.rs: A_j the product of absolute values along the path, d
//! the depth); a palette entry by that bound carried through the inverse bind plus 8 eps |M| |IB| (the
//! palette check); a skinned component by the palette difference carried through the blend plus
//! (k + 4) eps S (skin.rs), and a renormalized one by that over the raw length plus 4 eps per side
//! (the renormalize check).
//!
//! Crowd buffers past the size limits fail before anything is allocated: this test binary counts the
//! largest allocation its thread makes while a call runs.
// Index loops read several parallel arrays (joints, palettes, vertices) at once.
#![allow(clippy::needless_range_loop)]

#[path = "../common/mod.rs"]
mod common;
mod fixtures;
mod frames;
mod jobs;
mod morph;
mod outputs;
mod rigid;
mod tolerance;
mod tracking;
use common::scenes;

use fixtures::{backends_here, crowd_bits, instance, pose_crowd, rig, upright_rig};
use glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    Backend, Character, CharacterSkin, CrowdModels, CrowdPalettes, CrowdPose, Error, Frame,
    PaletteMatrix, Renormalize, Skeleton, Threads, Trs, MAX_CROWD_ELEMENTS, MAX_CROWD_INSTANCES,
    MAX_CROWD_JOINTS,
};
use tolerance::{abs, check_matrix, check_vertices, model_tolerances, EPS};
use tracking::largest_allocation;

// ---------------------------------------------------------------------------------------------------
// The crowd path against the single-character path.

#[test]
fn evaluate_crowd_matches_evaluate_per_instance_on_every_backend() {
    let rig = rig();
    let input = scenes::character(20, 3, 4);
    let c = &rig.character;
    let n = rig.n;
    for instances in [0usize, 1, 15, 16, 17, 40] {
        let poses: Vec<_> = (0..instances).map(|i| instance(n, i)).collect();
        for backend in backends_here() {
            for mode in [Renormalize::None, Renormalize::Precise] {
                // One instance at a time, with the same pose and root.
                let singles: Vec<Frame> = poses
                    .iter()
                    .map(|((t, q, s), root)| {
                        let mut frame = c
                            .frame_buffers()
                            .backend(backend)
                            .renormalize(mode)
                            .root(*root);
                        frame.set_pose(t, q, s).unwrap();
                        c.evaluate(&mut frame).unwrap();
                        frame
                    })
                    .collect();
                let raws: Vec<Frame> = poses
                    .iter()
                    .map(|((t, q, s), root)| {
                        let mut frame = c
                            .frame_buffers()
                            .backend(backend)
                            .renormalize(Renormalize::None)
                            .root(*root);
                        frame.set_pose(t, q, s).unwrap();
                        c.evaluate(&mut frame).unwrap();
                        frame
                    })
                    .collect();
                let mut runs = Vec::new();
                for threads in [Threads::One, Threads::All] {
                    let mut crowd = c
                        .crowd_buffers(instances)
                        .unwrap()
                        .backend(backend)
                        .threads(threads)
                        .renormalize(mode);
                    assert_eq!(crowd.instances(), instances);
                    for (i, ((t, q, s), root)) in poses.iter().enumerate() {
                        let trs = Trs {
                            translations: t,
                            rotations: q,
                            scales: s,
                        };
                        crowd.pose_mut().set_instance(i, trs).unwrap();
                        crowd.roots_mut()[i] = *root;
                    }
                    c.evaluate_crowd(&mut crowd).unwrap();
                    runs.push(crowd_bits(&rig, &crowd));
                    if threads == Threads::All {
                        break;
                    }
                    let skeleton = c.skeleton();
                    for (i, (((t, q, s), root), single)) in poses.iter().zip(&singles).enumerate() {
                        let ctx = |what: &str| {
                            format!(
                                "{backend:?} {mode:?} instances={instances} instance={i} {what}"
                            )
                        };
                        let tols = model_tolerances(skeleton, t, q, s, *root);
                        for j in 0..n {
                            check_matrix(
                                &|| ctx(&format!("model of joint {j}")),
                                crowd.models().model(i, j).unwrap(),
                                single.model(j).unwrap(),
                                tols[j],
                            );
                        }
                        for skin in 0..2 {
                            let got = crowd.palettes(skin).unwrap().instance(i).unwrap();
                            let want = &single.palettes()[skin];
                            assert_eq!(got.len(), want.len());
                            let joints = &c.skins()[skin].joints;
                            let ibs = &c.skins()[skin].inverse_binds;
                            for e in 0..want.len() {
                                let m = single.model(joints[e]).unwrap();
                                let ib = abs(ibs[e]);
                                let tol = tols[joints[e]] * ib + abs(m) * ib * (8.0 * EPS);
                                check_matrix(
                                    &|| ctx(&format!("skin {skin} palette entry {e}")),
                                    got[e].to_mat4(),
                                    want[e].to_mat4(),
                                    tol,
                                );
                            }
                        }
                        for mesh in 0..2 {
                            let skin = c.mesh_skin(mesh).unwrap();
                            let raw = &raws[i].meshes()[mesh];
                            let raw = match (mode, &raw.normals, &raw.tangents) {
                                (Renormalize::None, ..) => None,
                                (_, Some(n), Some(t)) => Some((&n[..], &t[..])),
                                _ => None,
                            };
                            let want = &single.meshes()[mesh];
                            check_vertices(
                                &ctx(&format!("mesh {mesh}")),
                                &rig.influences[mesh],
                                &input,
                                &single.palettes()[skin],
                                crowd.palettes(skin).unwrap().instance(i).unwrap(),
                                (
                                    crowd.positions(mesh, i).unwrap(),
                                    crowd.normals(mesh, i),
                                    crowd.tangents(mesh, i),
                                ),
                                (
                                    &want.positions,
                                    want.normals.as_deref(),
                                    want.tangents.as_deref(),
                                ),
                                raw,
                            );
                        }
                        let (lo, hi) = crowd.bounds(i).unwrap();
                        let (want_lo, want_hi) = single.bounds().unwrap();
                        assert!(
                            lo.abs_diff_eq(want_lo, 1e-4) && hi.abs_diff_eq(want_hi, 1e-4),
                            "{}",
                            ctx("bounds")
                        );
                    }
                    // Nothing past the last instance.
                    assert!(crowd.positions(0, instances).is_none());
                    assert!(crowd.palettes(0).unwrap().instance(instances).is_none());
                    assert!(crowd.models().model(instances, 0).is_none());
                    assert!(crowd.bounds(instances).is_none());
                    // Mesh 1 has no normals or tangents.
                    assert!(crowd.normals(1, 0).is_none() && crowd.tangents(1, 0).is_none());
                    assert_eq!(crowd.mesh(0).unwrap().positions.len(), instances * 228);
                    assert!(crowd.palettes(2).is_none() && crowd.mesh(2).is_none());
                }
                assert!(
                    runs[0] == runs[1],
                    "{backend:?} {mode:?} instances={instances}: Threads::All changed the bits"
                );
            }
        }
    }
}

#[test]
fn crowd_buffers_start_at_the_rest_pose_with_the_frame_defaults() {
    let rig = rig();
    let c = &rig.character;
    let crowd = c.crowd_buffers(17).unwrap();
    assert_eq!(crowd.backend, Backend::Auto);
    assert_eq!(crowd.threads, Threads::All);
    assert_eq!(crowd.renormalize, Renormalize::None);
    assert_eq!(crowd.outputs, c.frame_buffers().outputs);
    assert_eq!(crowd.roots(), &[Mat4::IDENTITY; 17]);
    assert_eq!(crowd.pose().instances(), 17);
    assert_eq!(crowd.pose().joints(), rig.n);
    for i in 0..17 {
        for j in 0..rig.n {
            assert_eq!(
                crowd.pose().joint(i, j),
                c.rest_pose(j),
                "instance {i} joint {j}"
            );
        }
    }
    assert_eq!(crowd.palettes(0).unwrap().entries(), rig.n);
    assert_eq!(
        crowd.palettes(1).unwrap().as_slice(),
        &vec![PaletteMatrix::IDENTITY; rig.n * 17][..]
    );
    // The rest pose evaluated as a crowd is the rest pose evaluated alone.
    let mut crowd = crowd.backend(Backend::Reference);
    c.evaluate_crowd(&mut crowd).unwrap();
    let mut frame = c.frame_buffers().backend(Backend::Reference);
    c.evaluate(&mut frame).unwrap();
    for i in 0..17 {
        assert_eq!(
            crowd.positions(1, i).unwrap(),
            &frame.meshes()[1].positions[..]
        );
    }
}

#[test]
fn the_crowd_stages_one_at_a_time_equal_evaluate_crowd() {
    let rig = rig();
    let c = &rig.character;
    let mut whole = c.crowd_buffers(20).unwrap();
    pose_crowd(&rig, &mut whole);
    let mut staged = whole.clone();
    c.evaluate_crowd(&mut whole).unwrap();
    c.crowd_local_to_model(&mut staged).unwrap();
    c.crowd_palettes(&mut staged).unwrap();
    c.crowd_skin(&mut staged).unwrap();
    assert!(crowd_bits(&rig, &whole) == crowd_bits(&rig, &staged));
}

/// `evaluate_crowd_pose` runs local to model and the palettes fused per block of instances; on every
/// backend, on one thread and on the pool, around a block's width and over several blocks, it gives
/// the bits of the two stages run one after the other.
#[test]
fn the_fused_crowd_pose_equals_the_two_stages_on_every_backend() {
    let rig = rig();
    let c = &rig.character;
    for instances in [0usize, 1, 15, 16, 17, 40] {
        for backend in backends_here() {
            for threads in [Threads::One, Threads::All] {
                let mut fused = c
                    .crowd_buffers(instances)
                    .unwrap()
                    .backend(backend)
                    .threads(threads);
                pose_crowd(&rig, &mut fused);
                let mut staged = fused.clone();
                c.evaluate_crowd_pose(&mut fused).unwrap();
                c.crowd_local_to_model(&mut staged).unwrap();
                c.crowd_palettes(&mut staged).unwrap();
                assert!(
                    crowd_bits(&rig, &fused) == crowd_bits(&rig, &staged),
                    "{backend:?} {threads:?} instances={instances}: fused and staged differ"
                );
            }
        }
    }
}

/// The kernels report finiteness from per-lane sums; sums of large finite values overflow, and the
/// job then scans instead of failing: models and palettes of 2e38 (finite, three of them per
/// instance) are Ok, while a product that overflows is named by the stage, fused or not.
#[test]
fn large_finite_crowd_results_are_ok_and_overflow_is_named() {
    // A root and three leaves, each leaf 2e38 from the root.
    let skeleton = Skeleton::from_parents(&[None, Some(0), Some(0), Some(0)]).unwrap();
    let t = [
        Vec3::ZERO,
        Vec3::new(2e38, 0.0, 0.0),
        Vec3::new(0.0, 2e38, 0.0),
        Vec3::new(-2e38, 0.0, 0.0),
    ];
    let (q, s) = ([Quat::IDENTITY; 4], [Vec3::ONE; 4]);
    let skin = CharacterSkin::from_bind_pose(&skeleton, &[Vec3::ZERO; 4], &q, &s).unwrap();
    let c = Character::new(
        skeleton,
        t.to_vec(),
        q.to_vec(),
        s.to_vec(),
        vec![skin],
        vec![],
    )
    .unwrap();
    for backend in backends_here() {
        let mut crowd = c.crowd_buffers(20).unwrap().backend(backend);
        assert_eq!(c.evaluate_crowd_pose(&mut crowd), Ok(()), "{backend:?}");
        let palettes = crowd.palettes(0).unwrap().as_slice();
        assert!(palettes
            .iter()
            .all(|p| p.rows.concat().iter().all(|x| x.is_finite())));
        assert_eq!(palettes[20 * 4 - 3].rows[0][3], 2e38, "{backend:?}");
        // Instance 17's root scaled by 1e3: its leaves land past f32::MAX.
        crowd.roots_mut()[17] = Mat4::from_scale(Vec3::splat(1e3));
        for r in [
            c.evaluate_crowd_pose(&mut crowd),
            c.crowd_local_to_model(&mut crowd),
        ] {
            assert!(
                matches!(
                    r,
                    Err(Error::ResultNotFinite {
                        stage: "crowd local to model",
                        index: 17,
                        ..
                    })
                ),
                "{backend:?}: {r:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Size limits.

#[test]
fn too_many_instances_fail_before_anything_is_allocated() {
    let rig = rig();
    let skeleton = rig.character.skeleton();
    let n = rig.n;
    let over = MAX_CROWD_INSTANCES + 1;
    let (err, bytes) = largest_allocation(|| CrowdPose::new(skeleton, over).unwrap_err());
    assert_eq!(
        err,
        Error::TooManyInstances {
            instances: over,
            per_instance: n,
            unit: "joint",
            max: MAX_CROWD_INSTANCES.min(MAX_CROWD_ELEMENTS / n),
        }
    );
    assert!(err.to_string().starts_with("too many instances"), "{err}");
    assert!(
        bytes < 1024,
        "CrowdPose::new allocated {bytes} bytes before failing"
    );
    let (err, bytes) = largest_allocation(|| CrowdModels::new(skeleton, over).unwrap_err());
    assert!(
        matches!(err, Error::TooManyInstances { instances, unit: "joint", .. } if instances == over),
        "{err}"
    );
    assert!(
        bytes < 1024,
        "CrowdModels::new allocated {bytes} bytes before failing"
    );
    let (err, bytes) = largest_allocation(|| CrowdPalettes::new(n, over).unwrap_err());
    assert_eq!(
        err,
        Error::TooManyInstances {
            instances: over,
            per_instance: n,
            unit: "palette entry",
            max: MAX_CROWD_INSTANCES.min(MAX_CROWD_ELEMENTS / n),
        }
    );
    assert!(err.to_string().starts_with("too many instances"), "{err}");
    assert!(
        bytes < 1024,
        "CrowdPalettes::new allocated {bytes} bytes before failing"
    );
    // The character's buffers: 456 vertices (skinned and rigid) per instance bound the count below
    // the instance limit, so a count between the two is refused too.
    let per_instance = 2 * 228;
    let max = MAX_CROWD_INSTANCES.min(MAX_CROWD_ELEMENTS / per_instance);
    assert!(max < MAX_CROWD_INSTANCES);
    for instances in [max + 1, over, usize::MAX] {
        let (err, bytes) =
            largest_allocation(|| rig.character.crowd_buffers(instances).unwrap_err());
        assert_eq!(
            err,
            Error::TooManyInstances {
                instances,
                per_instance,
                unit: "vertex",
                max,
            }
        );
        assert!(
            err.to_string().contains(&format!(
                "of 456 vertices each asked for, but at most {max} fit"
            )),
            "{err}"
        );
        assert!(
            bytes < 1024,
            "crowd_buffers allocated {bytes} bytes before failing"
        );
    }
    // At the limit itself a buffer is made: a one-joint skeleton's pose at the instance limit is
    // 40 MiB.
    let single = Skeleton::from_parents(&[None]).unwrap();
    let pose = CrowdPose::new(&single, MAX_CROWD_INSTANCES).unwrap();
    assert_eq!(pose.instances(), MAX_CROWD_INSTANCES);
    assert!(matches!(
        CrowdPose::new(&single, MAX_CROWD_INSTANCES + 1).unwrap_err(),
        Error::TooManyInstances {
            max: MAX_CROWD_INSTANCES,
            ..
        }
    ));
    // The counter sees the allocations of a crowd that is made.
    let (_, bytes) = largest_allocation(|| CrowdPose::new(skeleton, 16).unwrap());
    assert!(
        bytes >= 16 * n * 10 * 4,
        "the allocation counter saw only {bytes} bytes"
    );
    // Too many joints or palette entries for a crowd.
    let err = CrowdPalettes::new(MAX_CROWD_JOINTS + 1, 1).unwrap_err();
    assert_eq!(
        err,
        Error::TooManyJoints {
            joints: MAX_CROWD_JOINTS + 1,
            max: MAX_CROWD_JOINTS
        }
    );
}
