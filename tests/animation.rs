//! Runtime clips (`ispc_skinning::animation`): the builder's rules, sampling by cursor against sampling
//! by search (the same bits in forward, backward and random time sequences, with the work counted),
//! the interpolation rules, and the glTF importer's clips sampled both ways on the shared assets.

mod common;

use glam::{Quat, Vec3};
use ispc_skinning::{
    Backend, Clip, Error, Interpolation, SamplingContext, SamplingJob, Skeleton, TrsMut, Wrap,
};

/// A chain of `n` joints.
fn chain(n: usize) -> Skeleton {
    let parents: Vec<Option<usize>> = (0..n).map(|j| j.checked_sub(1)).collect();
    Skeleton::from_parents(&parents).unwrap()
}

/// A pose of `n` joints: translations, rotations, scales.
type Pose = (Vec<Vec3>, Vec<Quat>, Vec<Vec3>);

fn rest(n: usize) -> Pose {
    (
        vec![Vec3::ZERO; n],
        vec![Quat::IDENTITY; n],
        vec![Vec3::ONE; n],
    )
}

/// Samples `clip` at `t` over the rest pose with `context`.
fn sample(clip: &Clip, context: &mut SamplingContext, t: f32, wrap: Wrap) -> Pose {
    let (mut tr, mut q, mut s) = rest(clip.joints());
    SamplingJob::new(clip, context, TrsMut::new(&mut tr, &mut q, &mut s))
        .time(t)
        .wrap(wrap)
        .backend(Backend::Reference)
        .run()
        .unwrap();
    (tr, q, s)
}

fn bits(p: &Pose) -> Vec<u32> {
    let mut out = Vec::new();
    for v in p.0.iter().chain(&p.2) {
        out.extend(v.to_array().map(f32::to_bits));
    }
    for q in &p.1 {
        out.extend(q.to_array().map(f32::to_bits));
    }
    out
}

/// A small deterministic generator (xorshift), so the sequences are the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// A procedural clip over `joints` joints: every kind of key, tracks with their own key times and
/// tracks sharing one, keys at irregular times.
fn procedural(joints: usize, keys: usize) -> Clip {
    let skeleton = chain(joints);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let shared: Vec<f32> = (0..keys).map(|k| k as f32 / 30.0).collect();
    let mut b = Clip::builder(&skeleton);
    b.name("procedural");
    let kinds = [
        Interpolation::Step,
        Interpolation::Linear,
        Interpolation::CubicSpline,
    ];
    for j in 0..joints {
        let interpolation = kinds[j % 3];
        let per = if interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        // Every third joint has irregular key times of its own.
        let times: Vec<f32> = if j % 3 == 1 {
            let mut t = 0.0;
            (0..keys + j)
                .map(|_| {
                    t += 0.005 + rng.next() * 0.06;
                    t
                })
                .collect()
        } else {
            shared.clone()
        };
        let v3: Vec<Vec3> = (0..times.len() * per)
            .map(|_| Vec3::new(rng.next(), rng.next(), rng.next()) * 2.0 - Vec3::ONE)
            .collect();
        let quats: Vec<Quat> = (0..times.len() * per)
            .map(|_| {
                Quat::from_xyzw(
                    rng.next() - 0.5,
                    rng.next() - 0.5,
                    rng.next() - 0.5,
                    rng.next() + 0.2,
                )
            })
            .collect();
        b.translation(j, interpolation, &times, &v3).unwrap();
        b.rotation(j, interpolation, &times, &quats).unwrap();
        if j % 2 == 0 {
            b.scale(j, interpolation, &times, &v3).unwrap();
        }
    }
    let w: Vec<f32> = (0..shared.len() * 3 * 4).map(|_| rng.next()).collect();
    b.weights(1, 4, Interpolation::CubicSpline, &shared, &w)
        .unwrap();
    b.build()
}

#[test]
fn the_cursor_never_changes_a_bit_and_forward_playback_does_not_search() {
    let clip = procedural(40, 90);
    assert!(
        clip.timelines() < clip.tracks(),
        "shared key times share a timeline"
    );
    let (start, end) = (clip.start(), clip.end());
    let span = end - start;
    let mut rng = Rng(7);
    let forward: Vec<f32> = (0..600)
        .map(|i| start - 0.1 + i as f32 * span / 500.0)
        .collect();
    let backward: Vec<f32> = forward.iter().rev().copied().collect();
    let random: Vec<f32> = (0..300)
        .map(|_| start - 0.2 + rng.next() * (span + 0.4))
        .collect();
    // Key times themselves, and times just off them.
    let at_keys: Vec<f32> = (0..90)
        .flat_map(|k| {
            let t = k as f32 / 30.0;
            [t, f32::from_bits(t.to_bits() + 1), t - 1e-6]
        })
        .collect();
    for (name, times) in [
        ("forward", &forward),
        ("backward", &backward),
        ("random", &random),
        ("at keys", &at_keys),
    ] {
        for wrap in [Wrap::Clamp, Wrap::Loop] {
            let mut kept = SamplingContext::new();
            for &t in times.iter() {
                let a = sample(&clip, &mut kept, t, wrap);
                let b = sample(&clip, &mut SamplingContext::new(), t, wrap);
                assert_eq!(
                    bits(&a),
                    bits(&b),
                    "{name} {wrap:?} t = {t}: cursor and search differ"
                );
                assert!(a.1.iter().all(|q| (q.length() - 1.0).abs() < 1e-5));
            }
            if name == "forward" && wrap == Wrap::Clamp {
                // 600 samples over 90 keys: the cursors step, nothing is searched.
                assert_eq!(kept.searches(), 0, "forward playback searched");
            }
            if name == "random" {
                assert!(kept.searches() > 0, "random seeks are counted");
            }
        }
    }
}

#[test]
fn a_seek_costs_one_search_per_timeline_and_playing_on_costs_none() {
    let clip = procedural(12, 2000);
    let mut c = SamplingContext::new();
    sample(&clip, &mut c, 0.0, Wrap::Clamp);
    assert_eq!(c.searches(), 0, "the start holds the first key");
    sample(&clip, &mut c, clip.end() * 0.9, Wrap::Clamp);
    let after_seek = c.searches();
    assert!(
        after_seek <= clip.timelines() as u64,
        "{after_seek} searches for one seek"
    );
    for i in 1..200 {
        sample(
            &clip,
            &mut c,
            clip.end() * 0.9 + i as f32 / 60.0 * 0.01,
            Wrap::Clamp,
        );
    }
    assert_eq!(
        c.searches(),
        after_seek,
        "forward steps after a seek search nothing"
    );
    // A context follows the clip it is given: another clip starts over, with the same results.
    let other = procedural(12, 50);
    let a = sample(&other, &mut c, 0.7, Wrap::Clamp);
    let b = sample(&other, &mut SamplingContext::new(), 0.7, Wrap::Clamp);
    assert_eq!(bits(&a), bits(&b));
}

#[test]
fn interpolation_follows_gltf() {
    let skeleton = chain(1);
    let times = [1.0, 2.0, 4.0];
    let a = [
        Vec3::ZERO,
        Vec3::new(2.0, 0.0, 0.0),
        Vec3::new(2.0, 4.0, 0.0),
    ];
    let mut b = Clip::builder(&skeleton);
    b.translation(0, Interpolation::Linear, &times, &a).unwrap();
    b.scale(0, Interpolation::Step, &times, &a).unwrap();
    let q = [
        Quat::IDENTITY,
        Quat::from_rotation_y(1.0),
        Quat::from_rotation_y(2.0),
    ];
    b.rotation(0, Interpolation::Linear, &times, &q).unwrap();
    let clip = b.build();
    assert_eq!((clip.start(), clip.end(), clip.duration()), (1.0, 4.0, 3.0));
    let mut c = SamplingContext::new();
    let p = sample(&clip, &mut c, 1.5, Wrap::Clamp);
    assert_eq!(p.0[0], Vec3::new(1.0, 0.0, 0.0), "linear halfway");
    assert_eq!(p.2[0], Vec3::ZERO, "step holds the key before");
    assert!(
        p.1[0].angle_between(Quat::from_rotation_y(0.5)) < 1e-5,
        "slerp"
    );
    let p = sample(&clip, &mut c, 0.0, Wrap::Clamp);
    assert_eq!(p.0[0], Vec3::ZERO, "before the first key: held");
    let p = sample(&clip, &mut c, 9.0, Wrap::Clamp);
    assert_eq!(p.0[0], Vec3::new(2.0, 4.0, 0.0), "after the last key: held");
    // Looping: 4.5 is 1.5 into a clip that starts at 1.
    let p = sample(&clip, &mut c, 4.5, Wrap::Loop);
    assert_eq!(p.0[0], Vec3::new(1.0, 0.0, 0.0));
    // A cubic spline with zero tangents eases: halfway between 0 and 2 is 1, a quarter is below 0.5.
    let mut b = Clip::builder(&skeleton);
    let cubic = [
        Vec3::ZERO,
        Vec3::ZERO,
        Vec3::ZERO,
        Vec3::ZERO,
        Vec3::splat(2.0),
        Vec3::ZERO,
    ];
    b.translation(0, Interpolation::CubicSpline, &[0.0, 1.0], &cubic)
        .unwrap();
    let clip = b.build();
    let half = sample(&clip, &mut c, 0.5, Wrap::Clamp).0[0];
    let quarter = sample(&clip, &mut c, 0.25, Wrap::Clamp).0[0];
    assert!((half - Vec3::ONE).abs().max_element() < 1e-6, "{half}");
    assert!(quarter.x < 0.5 && quarter.x > 0.0, "{quarter}");
    // Joints without a track keep the output's values; weights are sampled when asked for.
    let skeleton = chain(3);
    let mut b = Clip::builder(&skeleton);
    b.weights(
        0,
        2,
        Interpolation::Linear,
        &[0.0, 1.0],
        &[0.0, 1.0, 1.0, 0.0],
    )
    .unwrap();
    let clip = b.build();
    assert_eq!((clip.weight_sets(), clip.weight_targets(0)), (1, Some(2)));
    let (mut t, mut r, mut s) = (
        vec![Vec3::X; 3],
        vec![Quat::IDENTITY; 3],
        vec![Vec3::ONE; 3],
    );
    let mut w = vec![vec![9.0; 2]];
    SamplingJob::new(&clip, &mut c, TrsMut::new(&mut t, &mut r, &mut s))
        .time(0.25)
        .weights(&mut w)
        .run()
        .unwrap();
    assert_eq!(t, vec![Vec3::X; 3]);
    assert_eq!(w[0], vec![0.25, 0.75]);
}

#[test]
fn the_builder_names_every_broken_rule() {
    let skeleton = chain(2);
    let mut b = Clip::builder(&skeleton);
    let v = [Vec3::ZERO, Vec3::ONE];
    fn err<T>(r: Result<T, Error>) -> Error {
        r.map(|_| ()).unwrap_err()
    }
    assert_eq!(
        err(b.translation(2, Interpolation::Linear, &[0.0, 1.0], &v)),
        Error::JointOutOfRange {
            joint: 2,
            joints: 2
        }
    );
    assert!(matches!(
        err(b.translation(0, Interpolation::Linear, &[0.0], &v)),
        Error::KeyCount {
            keys: 1,
            values: 6,
            per_key: 3,
            ..
        }
    ));
    assert!(matches!(
        err(b.translation(0, Interpolation::CubicSpline, &[0.0, 1.0], &v)),
        Error::KeyCount { per_key: 9, .. }
    ));
    assert!(matches!(
        err(b.translation(0, Interpolation::Linear, &[], &[])),
        Error::KeyCount { keys: 0, .. }
    ));
    assert_eq!(
        err(b.translation(1, Interpolation::Linear, &[1.0, 1.0], &v)),
        Error::KeyTimes {
            what: "translation keys",
            index: 1,
            key: 1
        }
    );
    assert_eq!(
        err(b.translation(1, Interpolation::Linear, &[f32::NAN, 1.0], &v)),
        Error::KeyTimes {
            what: "translation keys",
            index: 1,
            key: 0
        }
    );
    assert_eq!(
        err(b.translation(1, Interpolation::Linear, &[-3e38, 3e38], &v)),
        Error::KeyTimes {
            what: "translation keys",
            index: 1,
            key: 1
        }
    );
    assert!(matches!(
        err(b.translation(
            0,
            Interpolation::Linear,
            &[0.0, 1.0],
            &[Vec3::ZERO, Vec3::INFINITY]
        )),
        Error::KeyNotFinite {
            index: 0,
            key: 1,
            ..
        }
    ));
    for bad in [
        Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        Quat::from_xyzw(1e-20, 0.0, 0.0, 0.0),
    ] {
        assert!(matches!(
            err(b.rotation(1, Interpolation::Step, &[0.0], &[bad])),
            Error::KeyRotation {
                joint: 1,
                key: 0,
                ..
            }
        ));
    }
    // A cubic key's tangents may be zero; its value may not.
    let tangents = [
        Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        Quat::IDENTITY,
        Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
    ];
    b.rotation(1, Interpolation::CubicSpline, &[0.0], &tangents)
        .unwrap();
    assert_eq!(
        err(b.rotation(1, Interpolation::Step, &[0.0], &[Quat::IDENTITY])),
        Error::DuplicateTrack {
            what: "rotation keys",
            index: 1
        }
    );
    assert!(matches!(
        err(b.weights(0, 0, Interpolation::Step, &[0.0], &[])),
        Error::KeyCount { .. }
    ));
    // A clip's span must stay finite across tracks.
    b.scale(0, Interpolation::Step, &[-3e38], &[Vec3::ONE])
        .unwrap();
    assert!(matches!(
        err(b.scale(1, Interpolation::Step, &[3e38], &[Vec3::ONE])),
        Error::KeyTimes { index: 1, .. }
    ));
    // The errors added nothing.
    let clip = b.build();
    assert_eq!(clip.tracks(), 2);
    // Every error prints its rule.
    let e = Error::KeyTimes {
        what: "translation keys",
        index: 1,
        key: 1,
    };
    assert!(e.to_string().contains("strictly increasing"), "{e}");
}

#[test]
fn the_job_checks_its_output_and_time() {
    let clip = procedural(4, 5);
    let mut c = SamplingContext::new();
    let (mut t, mut q, mut s) = rest(3);
    let e = SamplingJob::new(&clip, &mut c, TrsMut::new(&mut t, &mut q, &mut s)).run();
    assert!(
        matches!(
            e,
            Err(Error::CountMismatch {
                expected: 4,
                got: 3,
                ..
            })
        ),
        "{e:?}"
    );
    let (mut t, mut q, mut s) = rest(4);
    let e = SamplingJob::new(&clip, &mut c, TrsMut::new(&mut t, &mut q, &mut s))
        .time(f32::NAN)
        .run();
    assert!(
        matches!(
            e,
            Err(Error::NotFinite {
                what: "sampling time",
                ..
            })
        ),
        "{e:?}"
    );
    let mut w = vec![vec![0.0; 4]];
    let e = SamplingJob::new(&clip, &mut c, TrsMut::new(&mut t, &mut q, &mut s))
        .weights(&mut w)
        .run();
    assert!(
        matches!(
            e,
            Err(Error::CountMismatch {
                what: "sampled weight sets",
                ..
            })
        ),
        "{e:?}"
    );
    let mut w = vec![vec![], vec![0.0; 3]];
    let e = SamplingJob::new(&clip, &mut c, TrsMut::new(&mut t, &mut q, &mut s))
        .weights(&mut w)
        .run();
    assert!(
        matches!(
            e,
            Err(Error::CountMismatch {
                what: "sampled morph weights",
                ..
            })
        ),
        "{e:?}"
    );
    // Finite keys whose cubic tangents overflow over a long interval: an error, not inf.
    let skeleton = chain(1);
    let mut b = Clip::builder(&skeleton);
    let huge = [
        Vec3::ZERO,
        Vec3::ZERO,
        Vec3::splat(3e38),
        Vec3::ZERO,
        Vec3::ZERO,
        Vec3::ZERO,
    ];
    b.translation(0, Interpolation::CubicSpline, &[0.0, 1e6], &huge)
        .unwrap();
    let clip = b.build();
    let (mut t, mut q, mut s) = rest(1);
    let e = SamplingJob::new(&clip, &mut c, TrsMut::new(&mut t, &mut q, &mut s))
        .time(5e5)
        .run();
    assert!(
        matches!(
            e,
            Err(Error::ResultNotFinite {
                stage: "sampling",
                ..
            })
        ),
        "{e:?}"
    );
}

#[cfg(feature = "gltf")]
#[test]
fn gltf_clips_sample_to_the_same_bits_as_the_importer() {
    use ispc_skinning::gltf::GltfScene;
    use ispc_skinning::Property;
    let Some(dir) = common::assets() else { return };
    let mut checked = 0;
    for asset in common::SHARED_ASSETS {
        let scene = GltfScene::load(dir.join(asset)).unwrap();
        let mut frame = scene.frame_buffers();
        for c in 0..scene.clips().len() {
            let clip = scene.runtime_clip(c).unwrap();
            let gltf_clip = &scene.clips()[c];
            assert_eq!(clip.start(), gltf_clip.start(), "{asset} clip {c}");
            assert_eq!(clip.end(), gltf_clip.end(), "{asset} clip {c}");
            // One context per wrap mode: looping jumps back at the end, which is a search.
            let mut contexts = [SamplingContext::new(), SamplingContext::new()];
            let span = clip.duration();
            for i in 0..240 {
                let t = clip.start() - 0.05 + i as f32 * (span + 0.1) / 200.0;
                for (wrap, context) in [Wrap::Clamp, Wrap::Loop].into_iter().zip(&mut contexts) {
                    scene.sample(Some(c), t, wrap, &mut frame).unwrap();
                    let (rt, rq, rs) = scene.character().level_rest();
                    let (mut tr, mut q, mut s) = (rt.to_vec(), rq.to_vec(), rs.to_vec());
                    SamplingJob::new(&clip, context, TrsMut::new(&mut tr, &mut q, &mut s))
                        .time(t)
                        .wrap(wrap)
                        .backend(Backend::Reference)
                        .run()
                        .unwrap();
                    let (ft, fq, fs) = frame.level_pose();
                    let want = bits(&(ft.to_vec(), fq.to_vec(), fs.to_vec()));
                    assert_eq!(bits(&(tr, q, s)), want, "{asset} clip {c} t = {t} {wrap:?}");
                    checked += 1;
                }
            }
            assert_eq!(
                contexts[0].searches(),
                0,
                "{asset} clip {c}: forward playback searched"
            );
        }
    }
    assert!(checked > 0);
    // Properties come through as the importer has them.
    let scene = GltfScene::load(dir.join("CesiumMan/CesiumMan.glb")).unwrap();
    let clip = scene.runtime_clip(0).unwrap();
    let rotations = scene.clips()[0]
        .channels()
        .iter()
        .filter(|c| c.property() == Property::Rotation)
        .count();
    assert!(rotations > 0 && clip.tracks() == scene.clips()[0].channels().len());
    assert!(
        clip.timelines() < clip.tracks(),
        "CesiumMan's equal key times share timelines"
    );
}

#[test]
fn root_motion_accumulates_over_cycles_and_yaw_follows_the_rotation() {
    // A root walking 2 m along +Z per 1 s cycle while turning 0.5 rad about +Y.
    let skeleton = chain(2);
    let mut b = Clip::builder(&skeleton);
    let times = [0.0, 0.5, 1.0];
    let walk = [
        Vec3::ZERO,
        Vec3::new(0.0, 0.1, 1.0),
        Vec3::new(0.0, 0.0, 2.0),
    ];
    b.translation(0, Interpolation::Linear, &times, &walk)
        .unwrap();
    let turn = [0.0, 0.25, 0.5].map(Quat::from_rotation_y);
    b.rotation(0, Interpolation::Linear, &times, &turn).unwrap();
    let clip = b.build();
    let close = |a: f32, b: f32| (a - b).abs() < 1e-5;
    let (m, yaw) = clip.root_motion(0, 0.25, 0.75, Wrap::Loop).unwrap();
    assert!(
        close(m.z, 1.0) && close(m.y, 0.0) && close(yaw, 0.25),
        "{m} {yaw}"
    );
    // From half a cycle to two and a half: two cycles, 4 m and 1 rad.
    let (m, yaw) = clip.root_motion(0, 0.5, 2.5, Wrap::Loop).unwrap();
    assert!(close(m.z, 4.0) && close(yaw, 1.0), "{m} {yaw}");
    // Backwards is the opposite motion.
    let (back, yaw_back) = clip.root_motion(0, 2.5, 0.5, Wrap::Loop).unwrap();
    assert!(close(back.z, -4.0) && close(yaw_back, -1.0));
    // Clamped: no more than the clip holds.
    let (m, _) = clip.root_motion(0, -3.0, 7.0, Wrap::Clamp).unwrap();
    assert!(close(m.z, 2.0));
    // A joint without tracks does not move; bad input is an error.
    assert_eq!(
        clip.root_motion(1, 0.0, 3.0, Wrap::Loop).unwrap(),
        (Vec3::ZERO, 0.0)
    );
    assert!(matches!(
        clip.root_motion(2, 0.0, 1.0, Wrap::Loop),
        Err(Error::JointOutOfRange { .. })
    ));
    assert!(matches!(
        clip.root_motion(0, 0.0, f32::INFINITY, Wrap::Loop),
        Err(Error::NotFinite {
            what: "root motion times",
            index: 1,
            ..
        })
    ));
}

#[test]
fn a_pose_for_the_gpu_stops_after_the_palettes() {
    use ispc_skinning::glam::Mat4;
    use ispc_skinning::{palette_rows_3x4, Character, CharacterSkin, PaletteMatrix};
    let skeleton = chain(3);
    let rest_t = vec![Vec3::new(0.0, 1.0, 0.0); 3];
    let skin = CharacterSkin {
        joints: (0..3).collect(),
        inverse_binds: vec![Mat4::IDENTITY; 3],
    };
    let character = Character::new(
        skeleton,
        rest_t.clone(),
        vec![Quat::IDENTITY; 3],
        vec![Vec3::ONE; 3],
        vec![skin],
        vec![],
    )
    .unwrap();
    let mut frame = character.frame_buffers();
    character.evaluate_pose(&mut frame).unwrap();
    let palette = &frame.palettes()[0];
    assert_eq!(
        palette[2].to_mat4(),
        Mat4::from_translation(Vec3::new(0.0, 3.0, 0.0))
    );
    let mut rows = vec![[[0.0f32; 4]; 3]; 3];
    palette_rows_3x4(palette, &mut rows).unwrap();
    assert_eq!(
        rows[2][1],
        [0.0, 1.0, 0.0, 3.0],
        "row 1 of joint 2: y gets +3"
    );
    assert_eq!(std::mem::size_of_val(&rows[0]), 48);
    assert!(matches!(
        palette_rows_3x4(palette, &mut rows[..2]),
        Err(Error::LengthMismatch {
            input: 3,
            output: 2
        })
    ));
    assert_eq!(
        PaletteMatrix::IDENTITY.to_rows_3x4()[0],
        [1.0, 0.0, 0.0, 0.0]
    );
}

/// A character of `n` chained joints with one skin over all of them and no mesh.
fn character(skeleton: Skeleton) -> ispc_skinning::Character {
    use ispc_skinning::glam::Mat4;
    let n = skeleton.len();
    let skin = ispc_skinning::CharacterSkin {
        joints: (0..n).collect(),
        inverse_binds: vec![Mat4::IDENTITY; n],
    };
    ispc_skinning::Character::new(
        skeleton,
        vec![Vec3::new(0.0, 1.0, 0.0); n],
        vec![Quat::IDENTITY; n],
        vec![Vec3::ONE; n],
        vec![skin],
        vec![],
    )
    .unwrap()
}

#[test]
fn a_frame_plays_blended_clips_with_masks_and_additive_layers() {
    use ispc_skinning::{BlendLayer, BlendingJob, ClipLayer, Trs};
    // A branching skeleton, so that your order and level order differ.
    let parents = [Some(2), Some(2), None, Some(0), Some(1)];
    let skeleton = Skeleton::from_parents(&parents).unwrap();
    let character = character(skeleton.clone());
    let n = parents.len();
    let make = |axis: Vec3, scale: f32| {
        let mut b = Clip::builder(&skeleton);
        for j in 0..n {
            let q = [
                Quat::IDENTITY,
                Quat::from_axis_angle(axis, scale * (j + 1) as f32 * 0.3),
            ];
            let t = [Vec3::ZERO, axis * scale * j as f32];
            b.rotation(j, Interpolation::Linear, &[0.0, 1.0], &q)
                .unwrap();
            b.translation(j, Interpolation::Linear, &[0.0, 1.0], &t)
                .unwrap();
        }
        b.build()
    };
    let (walk, wave) = (make(Vec3::X, 1.0), make(Vec3::Y, 2.0));
    let mut frame = character.frame_buffers().backend(Backend::Reference);

    // One layer of weight 1: the clip's pose (blending normalizes the rotation once more).
    character
        .play(&mut frame, &[ClipLayer::new(&walk, 0.4)], &[])
        .unwrap();
    let (sampled_t, sampled_q, _) = sample_over(&character, &walk, 0.4);
    let (ft, fq, _) = frame.level_pose();
    for j in 0..n {
        assert!((ft[j] - sampled_t[j]).abs().max_element() < 1e-6);
        assert!(fq[j].angle_between(sampled_q[j]) < 1e-5);
    }

    // Two layers with a mask: exactly BlendingJob over the two sampled poses.
    let mut mask = vec![1.0; n];
    mask[3] = 0.0; // joint 3 (your order) follows the walk only
    let layers = [
        ClipLayer::new(&walk, 0.4).weight(0.5),
        ClipLayer::new(&wave, 0.7).weight(0.5).joint_weights(&mask),
    ];
    character.play(&mut frame, &layers, &[]).unwrap();
    let a = sample_over(&character, &walk, 0.4);
    let b = sample_over(&character, &wave, 0.7);
    let level_mask: Vec<f32> = (0..n)
        .map(|l| mask[skeleton.original_index(l).unwrap()])
        .collect();
    let (rt, rq, rs) = character.level_rest();
    let (mut t, mut q, mut s) = rest(n);
    let blend = [
        BlendLayer::new(Trs::new(&a.0, &a.1, &a.2), 0.5),
        BlendLayer::new(Trs::new(&b.0, &b.1, &b.2), 0.5).joint_weights(&level_mask),
    ];
    BlendingJob::new(
        &skeleton,
        Trs::new(rt, rq, rs),
        TrsMut::new(&mut t, &mut q, &mut s),
    )
    .layers(&blend)
    .backend(Backend::Reference)
    .run()
    .unwrap();
    let (ft, fq, fs) = frame.level_pose();
    assert_eq!(
        bits(&(ft.to_vec(), fq.to_vec(), fs.to_vec())),
        bits(&(t, q, s))
    );
    let three = skeleton.level_index(3).unwrap();
    assert!(
        frame.level_pose().1[three].angle_between(a.1[three]) < 1e-5,
        "masked joint follows the walk"
    );

    // An additive clip of deltas: a quarter turn about Z on joint 2 (the root), added in full.
    let mut add = Clip::builder(&skeleton);
    add.rotation(
        2,
        Interpolation::Step,
        &[0.0],
        &[Quat::from_rotation_z(0.25)],
    )
    .unwrap();
    let add = add.build();
    character
        .play(
            &mut frame,
            &[ClipLayer::new(&walk, 0.0)],
            &[ClipLayer::new(&add, 0.0)],
        )
        .unwrap();
    let root = skeleton.level_index(2).unwrap();
    assert!(frame.level_pose().1[root].angle_between(Quat::from_rotation_z(0.25)) < 1e-5);
    assert!(
        frame.level_pose().1[skeleton.level_index(0).unwrap()].angle_between(Quat::IDENTITY) < 1e-5
    );

    // The later stages run on the played pose.
    character.evaluate_pose(&mut frame).unwrap();

    // A clip of a skeleton with another joint order is refused; so is a frame of another character.
    let other = Skeleton::from_parents(&[None, Some(0), Some(0), Some(1), Some(2)]).unwrap();
    let mut b = Clip::builder(&other);
    b.scale(0, Interpolation::Step, &[0.0], &[Vec3::ONE])
        .unwrap();
    let foreign = b.build();
    assert!(matches!(
        character.play(&mut frame, &[ClipLayer::new(&foreign, 0.0)], &[]),
        Err(Error::ClipSkeleton { .. })
    ));
    let twin = self::character(skeleton.clone());
    let mut twin_frame = twin.frame_buffers();
    assert!(matches!(
        character.play(&mut twin_frame, &[ClipLayer::new(&walk, 0.0)], &[]),
        Err(Error::WrongFrame { .. })
    ));
    assert!(matches!(
        character.play(
            &mut frame,
            &[ClipLayer::new(&walk, 0.0).joint_weights(&[1.0])],
            &[]
        ),
        Err(Error::CountMismatch {
            what: "clip layer joint weights",
            ..
        })
    ));
    assert!(matches!(
        character.play(&mut frame, &[ClipLayer::new(&walk, 0.0).weight(-1.0)], &[]),
        Err(Error::BlendWeight { .. })
    ));
}

/// `clip` at `t` (looping) over `character`'s rest pose, in level order.
fn sample_over(character: &ispc_skinning::Character, clip: &Clip, t: f32) -> Pose {
    let (rt, rq, rs) = character.level_rest();
    let (mut tr, mut q, mut s) = (rt.to_vec(), rq.to_vec(), rs.to_vec());
    SamplingJob::new(
        clip,
        &mut SamplingContext::new(),
        TrsMut::new(&mut tr, &mut q, &mut s),
    )
    .time(t)
    .wrap(Wrap::Loop)
    .backend(Backend::Reference)
    .run()
    .unwrap();
    (tr, q, s)
}
