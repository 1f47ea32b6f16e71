//! Sampling by cursor against sampling by search: the cursor never changes a bit in forward, backward
//! and random time sequences, forward playback does not search, and a seek costs one search per
//! timeline (the work counted); interpolation follows glTF (LINEAR with slerp, STEP, CUBICSPLINE,
//! held before the first and after the last key, looping, untracked joints left alone, morph weights
//! sampled when asked for); and the glTF importer's clips sample to the importer's bits on the shared
//! assets.

use super::{bits, chain, procedural, sample, Rng};
#[cfg(feature = "gltf")]
use crate::common;
use glam::{Quat, Vec3};
#[cfg(feature = "gltf")]
use ispc_skinning::Backend;
use ispc_skinning::{Clip, Interpolation, SamplingContext, SamplingJob, TrsMut, Wrap};

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
