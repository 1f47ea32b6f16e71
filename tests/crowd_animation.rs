//! Crowds from clips: `Character::crowd_play` (and under it `CrowdSamplingJob`, the lanes across
//! instances) against one `Character::play` per instance, on every backend: each instance its own clip
//! and time, blended layers with per-instance weights, a mask and an additive layer; and the rules the
//! crowd calls check.

mod common;

use glam::{Quat, Vec3};
use ispc_skinning::{
    Backend, Character, CharacterSkin, Clip, ClipLayer, CrowdClipLayer, CrowdPose,
    CrowdSamplingContext, CrowdSamplingJob, Error, Interpolation, Skeleton,
};

/// A branching skeleton (your order and level order differ) with one skin and no mesh.
fn character() -> (Skeleton, Character) {
    let parents = [Some(2), Some(2), None, Some(0), Some(1), Some(4)];
    let skeleton = Skeleton::from_parents(&parents).unwrap();
    let n = parents.len();
    let skin = CharacterSkin {
        joints: (0..n).collect(),
        inverse_binds: vec![glam::Mat4::IDENTITY; n],
    };
    let character = Character::new(
        skeleton.clone(),
        vec![Vec3::new(0.0, 1.0, 0.0); n],
        vec![Quat::from_rotation_y(0.1); n],
        vec![Vec3::ONE; n],
        vec![skin],
        vec![],
    )
    .unwrap();
    (skeleton, character)
}

/// A clip turning about `axis`; joint 5 has no track (it holds the rest pose), joint 3 only a
/// rotation, the others linear rotations and cubic translations.
fn clip(skeleton: &Skeleton, axis: Vec3, speed: f32) -> Clip {
    let mut b = Clip::builder(skeleton);
    let times = [0.0, 0.4, 1.0];
    for j in 0..5 {
        let q: Vec<Quat> = times
            .iter()
            .map(|t| Quat::from_axis_angle(axis, speed * (j + 1) as f32 * t))
            .collect();
        b.rotation(j, Interpolation::Linear, &times, &q).unwrap();
        if j != 3 {
            let t: Vec<Vec3> = (0..9).map(|k| axis * (k as f32 * 0.1 + j as f32)).collect();
            b.translation(j, Interpolation::CubicSpline, &times, &t)
                .unwrap();
        }
    }
    b.build()
}

/// Whether the crowd's instance `i` matches a frame's level-order pose within the tolerance of
/// tests/isa_parity/sample.rs (the crowd and single kernels may fuse multiply-adds differently).
fn close(
    skeleton: &Skeleton,
    crowd: &CrowdPose,
    i: usize,
    frame: &ispc_skinning::Frame,
) -> Result<(), String> {
    let (t, q, s) = frame.level_pose();
    for j in 0..skeleton.len() {
        let l = skeleton.level_index(j).unwrap();
        let (ct, cq, cs) = crowd.joint(i, j).unwrap();
        let dv = (ct - t[l])
            .abs()
            .max_element()
            .max((cs - s[l]).abs().max_element());
        // Components, either sign (angle_between's acos is too coarse near 1).
        let (a, b) = (glam::Vec4::from(cq), glam::Vec4::from(q[l]));
        let dq = (a - b).abs().max_element().min((a + b).abs().max_element());
        if !(dv <= 1e-5 && dq <= 2e-5) {
            return Err(format!(
                "instance {i}, joint {j}: crowd {:?}, single {:?}: {dv:e}, rotation components {dq:e}",
                (ct, cq, cs),
                (t[l], q[l], s[l])
            ));
        }
    }
    Ok(())
}

#[test]
fn every_instance_plays_its_own_clip_and_time_as_a_single_frame_would() {
    let (skeleton, character) = character();
    let (walk, wave) = (clip(&skeleton, Vec3::X, 1.0), clip(&skeleton, Vec3::Z, 2.5));
    for backend in common::backends() {
        // 37 instances: runs of clips that start inside a block of 16 and cross blocks.
        let instances = 37;
        let clips: Vec<&Clip> = (0..instances)
            .map(|i| if (i / 7) % 2 == 0 { &walk } else { &wave })
            .collect();
        let mut crowd = character.crowd_buffers(instances).unwrap().backend(backend);
        let mut frame = character.frame_buffers().backend(backend);
        for step in 0..3 {
            let times: Vec<f32> = (0..instances)
                .map(|i| i as f32 * 0.07 + step as f32 * 0.02)
                .collect();
            character
                .crowd_play(&mut crowd, &[CrowdClipLayer::new(&clips, &times)], &[])
                .unwrap();
            for i in 0..instances {
                character
                    .play(&mut frame, &[ClipLayer::new(clips[i], times[i])], &[])
                    .unwrap();
                close(&skeleton, crowd.pose(), i, &frame)
                    .unwrap_or_else(|e| panic!("{}, step {step}: {e}", backend.name()));
            }
        }
        // The later stages run on the played poses.
        character.evaluate_crowd_pose(&mut crowd).unwrap();
    }
}

#[test]
fn blended_layers_with_instance_weights_masks_and_additive_clips_match_single_frames() {
    let (skeleton, character) = character();
    let (walk, wave) = (clip(&skeleton, Vec3::X, 1.0), clip(&skeleton, Vec3::Z, 2.5));
    let mut add = Clip::builder(&skeleton);
    add.rotation(
        2,
        Interpolation::Step,
        &[0.0],
        &[Quat::from_rotation_x(0.3)],
    )
    .unwrap();
    let add = add.build();
    let n = skeleton.len();
    let mut mask = vec![1.0; n];
    mask[4] = 0.0;
    for backend in common::backends() {
        let instances = 21;
        let times: Vec<f32> = (0..instances).map(|i| i as f32 * 0.05).collect();
        let fade: Vec<f32> = (0..instances).map(|i| i as f32 / 20.0).collect();
        let rest: Vec<f32> = fade.iter().map(|f| 1.0 - f).collect();
        let (one_walk, one_wave, one_add) = ([&walk], [&wave], [&add]);
        let mut crowd = character.crowd_buffers(instances).unwrap().backend(backend);
        character
            .crowd_play(
                &mut crowd,
                &[
                    CrowdClipLayer::new(&one_walk, &times).weights(&rest),
                    CrowdClipLayer::new(&one_wave, &times)
                        .weights(&fade)
                        .joint_weights(&mask),
                ],
                &[CrowdClipLayer::new(&one_add, &times)],
            )
            .unwrap();
        let mut frame = character.frame_buffers().backend(backend);
        for i in 0..instances {
            character
                .play(
                    &mut frame,
                    &[
                        ClipLayer::new(&walk, times[i]).weight(rest[i]),
                        ClipLayer::new(&wave, times[i])
                            .weight(fade[i])
                            .joint_weights(&mask),
                    ],
                    &[ClipLayer::new(&add, times[i])],
                )
                .unwrap();
            close(&skeleton, crowd.pose(), i, &frame)
                .unwrap_or_else(|e| panic!("{}: {e}", backend.name()));
        }
    }
}

#[test]
fn the_crowd_calls_name_every_broken_rule() {
    let (skeleton, character) = character();
    let walk = clip(&skeleton, Vec3::X, 1.0);
    let mut crowd = character.crowd_buffers(4).unwrap();
    let one = [&walk];
    let four = [0.0f32; 4];
    let too_few = [0.0f32; 3];
    let err = |r: Result<(), Error>| r.unwrap_err();
    assert!(matches!(
        err(character.crowd_play(&mut crowd, &[CrowdClipLayer::new(&one, &too_few)], &[])),
        Error::CountMismatch {
            what: "crowd sampling times",
            expected: 4,
            got: 3
        }
    ));
    let two = [&walk, &walk];
    assert!(matches!(
        err(character.crowd_play(&mut crowd, &[CrowdClipLayer::new(&two, &four)], &[])),
        Error::CountMismatch {
            what: "crowd sampling clips",
            expected: 4,
            got: 2
        }
    ));
    let nan = [0.0, f32::NAN, 0.0, 0.0];
    assert!(matches!(
        err(character.crowd_play(&mut crowd, &[CrowdClipLayer::new(&one, &nan)], &[])),
        Error::NotFinite {
            what: "crowd sampling time",
            index: 1,
            ..
        }
    ));
    assert!(matches!(
        err(character.crowd_play(
            &mut crowd,
            &[CrowdClipLayer::new(&one, &four).weights(&[1.0])],
            &[]
        )),
        Error::CountMismatch {
            what: "crowd clip layer weights",
            ..
        }
    ));
    assert!(matches!(
        err(character.crowd_play(
            &mut crowd,
            &[CrowdClipLayer::new(&one, &four).joint_weights(&[1.0])],
            &[]
        )),
        Error::CountMismatch {
            what: "crowd clip layer joint weights",
            ..
        }
    ));
    assert!(matches!(
        err(character.crowd_play(
            &mut crowd,
            &[
                CrowdClipLayer::new(&one, &four),
                CrowdClipLayer::new(&one, &four).weights(&[1.0, -1.0, 0.0, 0.0]),
            ],
            &[]
        )),
        Error::BlendWeight { .. }
    ));
    // A clip of another joint order, and a crowd frame of another character of the same shape.
    let other =
        Skeleton::from_parents(&[None, Some(0), Some(0), Some(1), Some(2), Some(3)]).unwrap();
    let foreign = clip(&other, Vec3::Y, 1.0);
    let foreign = [&foreign];
    assert!(matches!(
        err(character.crowd_play(&mut crowd, &[CrowdClipLayer::new(&foreign, &four)], &[])),
        Error::ClipSkeleton { .. }
    ));
    let (_, twin) = self::character();
    let mut twin_crowd = twin.crowd_buffers(4).unwrap();
    assert!(matches!(
        err(character.crowd_play(&mut twin_crowd, &[CrowdClipLayer::new(&one, &four)], &[])),
        Error::WrongFrame { .. }
    ));
    // The job on its own: a pose of another instance count.
    let mut pose = CrowdPose::new(&skeleton, 5).unwrap();
    let mut context = CrowdSamplingContext::new();
    assert!(matches!(
        CrowdSamplingJob::new(&one, &four, &mut context, &mut pose)
            .backend(Backend::Reference)
            .run(),
        Err(Error::CountMismatch {
            what: "crowd sampling times",
            expected: 5,
            got: 4
        })
    ));
}

#[test]
fn forward_playback_of_a_crowd_does_not_search() {
    let (skeleton, _) = character();
    let walk = clip(&skeleton, Vec3::X, 1.0);
    let one = [&walk];
    let instances = 50;
    let mut pose = CrowdPose::new(&skeleton, instances).unwrap();
    let mut context = CrowdSamplingContext::new();
    let mut searches = Vec::new();
    for frame in 0..30 {
        let times: Vec<f32> = (0..instances)
            .map(|i| i as f32 * 0.001 + frame as f32 / 60.0)
            .collect();
        CrowdSamplingJob::new(&one, &times, &mut context, &mut pose)
            .run()
            .unwrap();
        searches.push(context.searches());
    }
    // Every timeline moves at most one key per frame: stepping, never searching.
    assert_eq!(searches.last(), searches.first(), "{searches:?}");
}

/// The crowd sampling kernel reports finiteness from per-lane sums; large finite keys (2e38 on two
/// axes, whose sum overflows) make it scan rather than fail, and the pose holds them.
#[test]
fn large_finite_keys_play_in_a_crowd() {
    let (skeleton, character) = character();
    let mut b = Clip::builder(&skeleton);
    let big = Vec3::new(2e38, 2e38, -2e38);
    b.translation(0, Interpolation::Linear, &[0.0, 1.0], &[big, big])
        .unwrap();
    let clip = b.build();
    for backend in common::backends() {
        let instances = 21;
        let clips = vec![&clip; instances];
        let times: Vec<f32> = (0..instances).map(|i| i as f32 * 0.04).collect();
        let mut crowd = character.crowd_buffers(instances).unwrap().backend(backend);
        character
            .crowd_play(&mut crowd, &[CrowdClipLayer::new(&clips, &times)], &[])
            .unwrap_or_else(|e| panic!("{}: {e}", backend.name()));
        for i in 0..instances {
            // The interpolation of two equal keys, within a few ulps.
            let got = crowd.pose().joint(i, 0).unwrap().0;
            assert!(
                (got - big).abs().max_element() <= 2e38 * 4.0 * f32::EPSILON,
                "{}: instance {i}: {got}",
                backend.name()
            );
        }
    }
}

/// Compact clips in a crowd: a layer of compact clips alone (each instance its own clip and time), and
/// blended with a raw layer under a compact additive one, match one `Character::play` per instance
/// with the same layers; a compact layer's rules are checked.
#[test]
fn compact_clips_play_in_a_crowd_as_in_single_frames() {
    let (skeleton, character) = character();
    let (walk, wave) = (clip(&skeleton, Vec3::X, 1.0), clip(&skeleton, Vec3::Z, 2.5));
    let (t, q, s) = character.level_rest();
    let rest = ispc_skinning::Trs::new(t, q, s);
    let settings = ispc_skinning::Compression::default();
    let packed_walk = walk.compress(&skeleton, rest, &settings).unwrap();
    let packed_wave = wave.compress(&skeleton, rest, &settings).unwrap();
    let mut add = Clip::builder(&skeleton);
    add.rotation(
        2,
        Interpolation::Linear,
        &[0.0, 1.0],
        &[Quat::IDENTITY, Quat::from_rotation_x(0.3)],
    )
    .unwrap();
    let identity = (
        vec![Vec3::ZERO; skeleton.len()],
        vec![Quat::IDENTITY; skeleton.len()],
        vec![Vec3::ONE; skeleton.len()],
    );
    let identity = ispc_skinning::Trs::new(&identity.0, &identity.1, &identity.2);
    let packed_add = add
        .build()
        .compress(&skeleton, identity, &settings)
        .unwrap();
    for backend in common::backends() {
        let instances = 19;
        let clips: Vec<&ispc_skinning::CompactClip> = (0..instances)
            .map(|i| {
                if i % 3 == 0 {
                    &packed_wave
                } else {
                    &packed_walk
                }
            })
            .collect();
        let mut crowd = character.crowd_buffers(instances).unwrap().backend(backend);
        let mut frame = character.frame_buffers().backend(backend);
        // Played on for a few calls (each instance's context keeps its decoded frames), forward for
        // most instances and backward for every fourth.
        let at = |call: usize, i: usize| {
            let dt = call as f32 / 60.0;
            i as f32 * 0.07 + if i % 4 == 3 { 1.0 - dt } else { dt }
        };
        for call in 0..8 {
            let times: Vec<f32> = (0..instances).map(|i| at(call, i)).collect();
            character
                .crowd_play(&mut crowd, &[CrowdClipLayer::compact(&clips, &times)], &[])
                .unwrap();
            for i in 0..instances {
                character
                    .play(&mut frame, &[ClipLayer::new(clips[i], times[i])], &[])
                    .unwrap();
                close(&skeleton, crowd.pose(), i, &frame)
                    .unwrap_or_else(|e| panic!("{}, alone, call {call}: {e}", backend.name()));
            }
        }
        let times: Vec<f32> = (0..instances).map(|i| i as f32 * 0.07).collect();
        let fade: Vec<f32> = (0..instances).map(|i| i as f32 / 18.0).collect();
        let (one_wave, one_add) = ([&wave], [&packed_add]);
        character
            .crowd_play(
                &mut crowd,
                &[
                    CrowdClipLayer::compact(&clips, &times),
                    CrowdClipLayer::new(&one_wave, &times).weights(&fade),
                ],
                &[CrowdClipLayer::compact(&one_add, &times)],
            )
            .unwrap();
        for i in 0..instances {
            character
                .play(
                    &mut frame,
                    &[
                        ClipLayer::new(clips[i], times[i]),
                        ClipLayer::new(&wave, times[i]).weight(fade[i]),
                    ],
                    &[ClipLayer::new(&packed_add, times[i])],
                )
                .unwrap();
            close(&skeleton, crowd.pose(), i, &frame)
                .unwrap_or_else(|e| panic!("{}, blended: {e}", backend.name()));
        }
    }
    // The rules: one clip or one per instance, not beside raw clips, times per instance, the joint
    // order of the character.
    let mut crowd = character.crowd_buffers(4).unwrap();
    let four = [0.0f32; 4];
    let two = [&packed_walk, &packed_walk];
    let err = |r: Result<(), Error>| r.unwrap_err();
    assert!(matches!(
        err(character.crowd_play(&mut crowd, &[CrowdClipLayer::compact(&two, &four)], &[])),
        Error::CountMismatch {
            expected: 4,
            got: 2,
            ..
        }
    ));
    let one = [&packed_walk];
    let raw = [&walk];
    let both = CrowdClipLayer {
        clips: &raw,
        ..CrowdClipLayer::compact(&one, &four)
    };
    assert!(matches!(
        err(character.crowd_play(&mut crowd, &[both], &[])),
        Error::CountMismatch { .. }
    ));
    assert!(matches!(
        err(character.crowd_play(
            &mut crowd,
            &[CrowdClipLayer::compact(&one, &four[..3])],
            &[]
        )),
        Error::CountMismatch {
            what: "crowd clip layer times",
            ..
        }
    ));
    let nan = [0.0, 0.0, f32::NAN, 0.0];
    assert!(matches!(
        err(character.crowd_play(&mut crowd, &[CrowdClipLayer::compact(&one, &nan)], &[])),
        Error::NotFinite {
            what: "crowd sampling time",
            index: 2,
            ..
        }
    ));
    let chain =
        Skeleton::from_parents(&[None, Some(0), Some(1), Some(2), Some(3), Some(4)]).unwrap();
    let other = chain_clip(&chain)
        .compress(
            &chain,
            ispc_skinning::Trs::new(&[Vec3::ZERO; 6], &[Quat::IDENTITY; 6], &[Vec3::ONE; 6]),
            &settings,
        )
        .unwrap();
    let other = [&other];
    assert!(matches!(
        err(character.crowd_play(&mut crowd, &[CrowdClipLayer::compact(&other, &four)], &[])),
        Error::ClipSkeleton { .. }
    ));
}

/// A compact layer sampled on rayon's pool (instances in chunks, each with its own context) gives the
/// bits one thread gives, call after call, on every backend: 300 instances make several chunks.
#[test]
fn a_compact_crowd_on_the_pool_samples_the_bits_of_one_thread() {
    let (skeleton, character) = character();
    let (t, q, s) = character.level_rest();
    let rest = ispc_skinning::Trs::new(t, q, s);
    let settings = ispc_skinning::Compression::default();
    let walk = clip(&skeleton, Vec3::X, 1.0)
        .compress(&skeleton, rest, &settings)
        .unwrap();
    let wave = clip(&skeleton, Vec3::Z, 2.5)
        .compress(&skeleton, rest, &settings)
        .unwrap();
    let instances = 300;
    let clips: Vec<&ispc_skinning::CompactClip> = (0..instances)
        .map(|i| if i % 3 == 0 { &wave } else { &walk })
        .collect();
    let bits = |f: &ispc_skinning::CrowdFrame, i: usize, j: usize| {
        let (t, q, s) = f.pose().joint(i, j).unwrap();
        let all = [
            t.to_array(),
            [q.x, q.y, q.z],
            [q.w, s.x, s.y],
            [s.z, 0.0, 0.0],
        ];
        all.map(|a| a.map(f32::to_bits))
    };
    for backend in common::backends() {
        // A deterministic frame on the pool (its threads' floating-point mode checked) against the
        // default precision on one thread: compact sampling has one arithmetic.
        let frames = |threads, precision| {
            character
                .crowd_buffers(instances)
                .unwrap()
                .backend(backend)
                .threads(threads)
                .precision(precision)
        };
        let (mut one, mut all) = (
            frames(ispc_skinning::Threads::One, ispc_skinning::Precision::Fast),
            frames(
                ispc_skinning::Threads::All,
                ispc_skinning::Precision::Deterministic,
            ),
        );
        for call in 0..6 {
            let times: Vec<f32> = (0..instances)
                .map(|i| i as f32 * 0.013 + call as f32 / 60.0)
                .collect();
            for frame in [&mut one, &mut all] {
                character
                    .crowd_play(frame, &[CrowdClipLayer::compact(&clips, &times)], &[])
                    .unwrap();
            }
            for i in 0..instances {
                for j in 0..skeleton.len() {
                    assert_eq!(
                        bits(&one, i, j),
                        bits(&all, i, j),
                        "{}, call {call}, instance {i}, joint {j}",
                        backend.name()
                    );
                }
            }
        }
    }
}

/// A clip of a six-joint chain (another joint order than `character`'s).
fn chain_clip(chain: &Skeleton) -> Clip {
    let mut b = Clip::builder(chain);
    b.rotation(
        1,
        Interpolation::Linear,
        &[0.0, 1.0],
        &[Quat::IDENTITY, Quat::from_rotation_z(1.0)],
    )
    .unwrap();
    b.build()
}
