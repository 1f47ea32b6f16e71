//! `Character::crowd_play_palettes`: crowd stages 1 to 3 from clips in one pass, block by block, on the
//! ISAs. Held to `crowd_play` then `evaluate_crowd_pose` (the same kernels): the same palettes, bit for
//! bit, on every backend this CPU runs, at crowd sizes around the 16-instance block, on one thread and
//! on the pool, with and without roots, with two skins (one naming a joint twice and leaving others
//! out), with one clip for all and with runs of clips that start inside a block, with a clip that
//! leaves a joint without a track; the frame's pose and models untouched where the pass ran; and the
//! same errors as the two calls.

mod common;

use common::{random_transform, Rng};
use glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    Backend, Character, CharacterSkin, Clip, CrowdClipLayer, CrowdFrame, Error, Interpolation,
    Skeleton, Threads,
};

/// A branching skeleton (your order and level order differ) with two skins and random inverse binds.
fn character() -> (Skeleton, Character) {
    let parents = [Some(2), Some(2), None, Some(0), Some(1), Some(4), Some(5)];
    let skeleton = Skeleton::from_parents(&parents).unwrap();
    let n = parents.len();
    let mut rng = Rng::new(7);
    let mut skin = |joints: Vec<usize>| CharacterSkin {
        inverse_binds: joints
            .iter()
            .map(|_| random_transform(&mut rng, 0.5..2.0, -3.0..3.0))
            .collect(),
        joints,
    };
    let skins = vec![skin((0..n).rev().collect()), skin(vec![4, 1, 4, 6])];
    let character = Character::new(
        skeleton.clone(),
        vec![Vec3::new(0.0, 1.0, 0.0); n],
        vec![Quat::from_rotation_y(0.1); n],
        vec![Vec3::ONE; n],
        skins,
        vec![],
    )
    .unwrap();
    (skeleton, character)
}

/// A clip turning about `axis` with linear rotations, cubic translations and linear scales on every
/// joint, except joint 6 when `gap` (it then holds the rest pose).
fn clip(skeleton: &Skeleton, axis: Vec3, speed: f32, gap: bool) -> Clip {
    let mut b = Clip::builder(skeleton);
    let times = [0.0, 0.4, 1.0];
    for j in 0..skeleton.len() {
        if gap && j == 6 {
            continue;
        }
        let q: Vec<Quat> = times
            .iter()
            .map(|t| Quat::from_axis_angle(axis, speed * (j + 1) as f32 * t))
            .collect();
        b.rotation(j, Interpolation::Linear, &times, &q).unwrap();
        let t: Vec<Vec3> = (0..9).map(|k| axis * (k as f32 * 0.1 + j as f32)).collect();
        b.translation(j, Interpolation::CubicSpline, &times, &t)
            .unwrap();
        let s: Vec<Vec3> = times.iter().map(|t| Vec3::splat(1.0 + 0.2 * t)).collect();
        b.scale(j, Interpolation::Linear, &times, &s).unwrap();
    }
    b.build()
}

/// An entry's rows, flat.
fn flat(rows: [[f32; 4]; 4]) -> [f32; 16] {
    let mut out = [0.0; 16];
    for (o, v) in out.iter_mut().zip(rows.iter().flatten()) {
        *o = *v;
    }
    out
}

/// Every skin's palettes of every instance.
fn palettes(character: &Character, frame: &CrowdFrame) -> Vec<Vec<[f32; 16]>> {
    (0..character.skins().len())
        .map(|s| {
            frame
                .palettes(s)
                .unwrap()
                .as_slice()
                .iter()
                .map(|p| flat(p.rows))
                .collect()
        })
        .collect()
}

#[test]
fn the_pass_gives_the_bits_of_play_then_evaluate_crowd_pose() {
    let (skeleton, character) = character();
    let walk = clip(&skeleton, Vec3::X, 1.0, false);
    let wave = clip(&skeleton, Vec3::Z, 2.5, true);
    let mut rng = Rng::new(11);
    for backend in common::backends() {
        for instances in [1, 15, 16, 17, 31, 33, 50] {
            for threads in [Threads::One, Threads::All] {
                for (shared, with_roots) in [(true, false), (false, true), (false, false)] {
                    // Runs of 7 instances, which start inside blocks of 16.
                    let clips: Vec<&Clip> = if shared {
                        vec![&walk]
                    } else {
                        (0..instances)
                            .map(|i| if (i / 7) % 2 == 0 { &walk } else { &wave })
                            .collect()
                    };
                    let make = || {
                        let mut f = character
                            .crowd_buffers(instances)
                            .unwrap()
                            .backend(backend)
                            .threads(threads);
                        if with_roots {
                            let mut r = Rng::new(instances as u64);
                            for root in f.roots_mut() {
                                *root = random_transform(&mut r, 0.5..2.0, -5.0..5.0);
                            }
                        }
                        f
                    };
                    let (mut staged, mut pass) = (make(), make());
                    let rest_models = pass.models().clone();
                    for step in 0..3 {
                        let times: Vec<f32> = (0..instances)
                            .map(|i| i as f32 * 0.07 + step as f32 * 0.31 + rng.range(0.0, 0.01))
                            .collect();
                        let layer = [CrowdClipLayer::new(&clips, &times)];
                        character.crowd_play(&mut staged, &layer, &[]).unwrap();
                        character.evaluate_crowd_pose(&mut staged).unwrap();
                        character
                            .crowd_play_palettes(&mut pass, &layer, &[])
                            .unwrap();
                        let (a, b) = (palettes(&character, &staged), palettes(&character, &pass));
                        for (s, (a, b)) in a.iter().zip(&b).enumerate() {
                            for (e, (x, y)) in a.iter().zip(b).enumerate() {
                                let same = x.iter().zip(y).all(|(x, y)| x.to_bits() == y.to_bits());
                                assert!(
                                    same,
                                    "{}, {instances} instances, {threads:?}, shared {shared}, roots {with_roots}, \
                                     step {step}, skin {s}, entry {e}: stages {x:?}, pass {y:?}",
                                    backend.name()
                                );
                            }
                        }
                        if let Backend::Isa(_) = backend {
                            // The pass ran: the pose and models keep what they held.
                            assert!(
                                *pass.models() == rest_models,
                                "{}: the pass wrote the models",
                                backend.name()
                            );
                            assert_eq!(
                                pass.pose(),
                                make().pose(),
                                "{}: the pass wrote the pose",
                                backend.name()
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn blended_and_weighted_layers_run_the_two_calls() {
    let (skeleton, character) = character();
    let (walk, wave) = (
        clip(&skeleton, Vec3::X, 1.0, false),
        clip(&skeleton, Vec3::Z, 2.5, true),
    );
    let instances = 20;
    let times: Vec<f32> = (0..instances).map(|i| i as f32 * 0.05).collect();
    let half = vec![0.5; instances];
    let (walks, waves) = ([&walk], [&wave]);
    for backend in common::backends() {
        let mut staged = character.crowd_buffers(instances).unwrap().backend(backend);
        let mut pass = character.crowd_buffers(instances).unwrap().backend(backend);
        let layers = [
            CrowdClipLayer::new(&walks, &times).weights(&half),
            CrowdClipLayer::new(&waves, &times),
        ];
        character.crowd_play(&mut staged, &layers, &[]).unwrap();
        character.evaluate_crowd_pose(&mut staged).unwrap();
        character
            .crowd_play_palettes(&mut pass, &layers, &[])
            .unwrap();
        assert_eq!(
            palettes(&character, &staged),
            palettes(&character, &pass),
            "{}",
            backend.name()
        );
        // The two calls ran: the pose is the played one.
        assert_eq!(staged.pose(), pass.pose(), "{}", backend.name());
    }
}

#[test]
fn the_pass_reports_the_errors_of_the_two_calls() {
    let (skeleton, character) = character();
    let walk = clip(&skeleton, Vec3::X, 1.0, false);
    let clips = [&walk];
    let instances = 18;
    for backend in common::backends() {
        let name = backend.name();
        let mut frame = character.crowd_buffers(instances).unwrap().backend(backend);
        // A time that is not finite: crowd_play's error, naming the instance.
        let mut times = vec![0.25; instances];
        times[17] = f32::NAN;
        let layer = [CrowdClipLayer::new(&clips, &times)];
        let expected = character.crowd_play(&mut frame, &layer, &[]).unwrap_err();
        let got = character
            .crowd_play_palettes(&mut frame, &layer, &[])
            .unwrap_err();
        assert_eq!(format!("{got:?}"), format!("{expected:?}"), "{name}");
        // Too few times.
        let short = [CrowdClipLayer::new(&clips, &times[..3])];
        assert!(
            matches!(
                character.crowd_play_palettes(&mut frame, &short, &[]),
                Err(Error::CountMismatch { .. })
            ),
            "{name}"
        );
        // A root that is not finite: evaluate_crowd_pose's error.
        times[17] = 0.5;
        frame.roots_mut()[16] = Mat4::from_translation(Vec3::splat(f32::INFINITY));
        let layer = [CrowdClipLayer::new(&clips, &times)];
        character.crowd_play(&mut frame, &layer, &[]).unwrap();
        let expected = character.evaluate_crowd_pose(&mut frame).unwrap_err();
        let got = character
            .crowd_play_palettes(&mut frame, &layer, &[])
            .unwrap_err();
        assert_eq!(format!("{got:?}"), format!("{expected:?}"), "{name}");
        // Another character's frame, though of the same shape.
        let (_, other) = self::character();
        let mut foreign = other.crowd_buffers(instances).unwrap().backend(backend);
        assert!(
            matches!(
                character.crowd_play_palettes(&mut foreign, &layer, &[]),
                Err(Error::WrongFrame { .. })
            ),
            "{name}"
        );
    }
}

/// Both frames given the same calls, then their palettes compared bit for bit.
fn same_palettes(character: &Character, staged: &CrowdFrame, pass: &CrowdFrame, what: &str) {
    let (a, b) = (palettes(character, staged), palettes(character, pass));
    for (s, (a, b)) in a.iter().zip(&b).enumerate() {
        for (e, (x, y)) in a.iter().zip(b).enumerate() {
            let same = x.iter().zip(y).all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(
                same,
                "{what}, skin {s}, entry {e}: stages {x:?}, pass {y:?}"
            );
        }
    }
}

#[test]
fn tasks_of_several_blocks_on_a_pool_and_changes_between_calls_keep_the_bits() {
    let (skeleton, character) = character();
    let walk = clip(&skeleton, Vec3::X, 1.0, false);
    let wave = clip(&skeleton, Vec3::Z, 2.5, true);
    for backend in common::backends() {
        // Pools of 2 and 3 threads: tasks of several blocks each, the last block partial.
        for (threads, instances) in [(2, 67), (3, 100), (2, 16)] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let make = || {
                    let mut f = character
                        .crowd_buffers(instances)
                        .unwrap()
                        .backend(backend)
                        .threads(Threads::All);
                    let mut r = Rng::new(3);
                    for root in f.roots_mut() {
                        *root = random_transform(&mut r, 0.5..2.0, -5.0..5.0);
                    }
                    f
                };
                let (mut staged, mut pass) = (make(), make());
                let mixed: Vec<&Clip> = (0..instances)
                    .map(|i| if (i / 5) % 3 == 0 { &wave } else { &walk })
                    .collect();
                let walks = [&walk];
                // Coverage and threads change from call to call on the same frames.
                for (step, (clips, threads)) in [
                    (&walks[..], Threads::All),
                    (&mixed[..], Threads::All),
                    (&walks[..], Threads::One),
                    (&mixed[..], Threads::One),
                    (&walks[..], Threads::All),
                ]
                .into_iter()
                .enumerate()
                {
                    staged.threads = threads;
                    pass.threads = threads;
                    let times: Vec<f32> = (0..instances)
                        .map(|i| i as f32 * 0.013 + step as f32 * 0.21)
                        .collect();
                    let layer = [CrowdClipLayer::new(clips, &times)];
                    character.crowd_play(&mut staged, &layer, &[]).unwrap();
                    character.evaluate_crowd_pose(&mut staged).unwrap();
                    character
                        .crowd_play_palettes(&mut pass, &layer, &[])
                        .unwrap();
                    let what = format!(
                        "{}, pool {threads:?} of {}, {instances} instances, step {step}",
                        backend.name(),
                        rayon::current_num_threads()
                    );
                    same_palettes(&character, &staged, &pass, &what);
                }
            });
        }
    }
}

#[test]
fn a_value_that_overflows_inside_the_pass_is_reported_by_the_two_calls() {
    let (skeleton, character) = character();
    let walk = clip(&skeleton, Vec3::X, 1.0, false);
    let clips = [&walk];
    let instances = 50;
    let times: Vec<f32> = (0..instances).map(|i| i as f32 * 0.02).collect();
    let layer = [CrowdClipLayer::new(&clips, &times)];
    for backend in common::backends() {
        let name = backend.name();
        let make = || {
            character
                .crowd_buffers(instances)
                .unwrap()
                .backend(backend)
                .threads(Threads::One)
        };
        let (mut staged, mut pass) = (make(), make());
        // A finite root whose products overflow, on an instance of the third block: the pass has
        // written two blocks' palettes when the models are found not finite.
        let huge = Mat4::from_scale(Vec3::splat(1e38));
        staged.roots_mut()[40] = huge;
        pass.roots_mut()[40] = huge;
        character.crowd_play(&mut staged, &layer, &[]).unwrap();
        let expected = character.evaluate_crowd_pose(&mut staged).unwrap_err();
        assert!(
            matches!(expected, Error::ResultNotFinite { .. }),
            "{name}: {expected:?}"
        );
        let got = character
            .crowd_play_palettes(&mut pass, &layer, &[])
            .unwrap_err();
        assert_eq!(format!("{got:?}"), format!("{expected:?}"), "{name}");
        // The next frame, with the root back, is the two calls' again.
        staged.roots_mut()[40] = Mat4::IDENTITY;
        pass.roots_mut()[40] = Mat4::IDENTITY;
        character.crowd_play(&mut staged, &layer, &[]).unwrap();
        character.evaluate_crowd_pose(&mut staged).unwrap();
        character
            .crowd_play_palettes(&mut pass, &layer, &[])
            .unwrap();
        same_palettes(&character, &staged, &pass, name);
    }
}

#[test]
fn weights_of_one_take_the_pass_and_empty_or_short_inputs_match_the_two_calls() {
    let (skeleton, character) = character();
    let walk = clip(&skeleton, Vec3::X, 1.0, false);
    let clips = [&walk];
    for backend in common::backends() {
        let name = backend.name();
        // Weights given, all exactly 1: the pass runs (on an ISA, the pose is left as it was).
        let instances = 20;
        let times: Vec<f32> = (0..instances).map(|i| i as f32 * 0.03).collect();
        let ones = vec![1.0; instances];
        let layer = [CrowdClipLayer::new(&clips, &times).weights(&ones)];
        let mut staged = character.crowd_buffers(instances).unwrap().backend(backend);
        let mut pass = character.crowd_buffers(instances).unwrap().backend(backend);
        let rest = pass.pose().clone();
        character.crowd_play(&mut staged, &layer, &[]).unwrap();
        character.evaluate_crowd_pose(&mut staged).unwrap();
        character
            .crowd_play_palettes(&mut pass, &layer, &[])
            .unwrap();
        same_palettes(&character, &staged, &pass, name);
        if let Backend::Isa(_) = backend {
            assert!(*pass.pose() == rest, "{name}: the pass did not run");
        }
        // Weights of the wrong length, and too few times: crowd_play's errors.
        for (weights, count) in [(&ones[..3], instances), (&ones[..], 3)] {
            let layer = [CrowdClipLayer::new(&clips, &times[..count]).weights(weights)];
            let expected = character.crowd_play(&mut staged, &layer, &[]).unwrap_err();
            let got = character
                .crowd_play_palettes(&mut pass, &layer, &[])
                .unwrap_err();
            assert_eq!(format!("{got:?}"), format!("{expected:?}"), "{name}");
        }
        // No instances at all.
        let mut empty = character.crowd_buffers(0).unwrap().backend(backend);
        character
            .crowd_play_palettes(&mut empty, &[CrowdClipLayer::new(&clips, &[])], &[])
            .unwrap();
    }
}
