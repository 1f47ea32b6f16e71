//! Compact clips (`ispc_skinning::animation::compact`): the error bound on the shared assets and on a
//! long procedural clip, with sizes printed; sampling rules; storing and loading, bit for bit, and
//! hostile bytes refused without a panic.

use super::common;
use super::{chain, rest, Pose};
use common::scenes::{exported_keys, humanoid_parents};
use glam::{Quat, Vec3};
use ispc_skinning::{
    Backend, Clip, ClipLayer, CompactClip, CompactContext, CompactSamplingJob, Compression, Error,
    Interpolation, Isa, Skeleton, Trs, TrsMut, Wrap,
};

/// Samples a compact clip at `t` over `base`.
fn sample_compact(clip: &CompactClip, base: &Pose, t: f32, wrap: Wrap) -> Pose {
    let (mut tr, mut q, mut s) = base.clone();
    CompactSamplingJob::new(clip, TrsMut::new(&mut tr, &mut q, &mut s))
        .time(t)
        .wrap(wrap)
        .run()
        .unwrap();
    (tr, q, s)
}

fn trs(p: &Pose) -> Trs<'_> {
    Trs::new(&p.0, &p.1, &p.2)
}

/// The long clip of `scenes::exported_keys` (67 joints, 30 s, 60 Hz), its skeleton and rest pose.
fn exported_clip() -> (Skeleton, Clip, Pose) {
    let skeleton = Skeleton::from_parents(&humanoid_parents(67)).unwrap();
    let keys = exported_keys(67, 30.0, 60.0);
    let mut b = Clip::builder(&skeleton);
    for j in 0..67 {
        b.translation(j, Interpolation::Linear, &keys.times, &keys.translations[j])
            .and_then(|b| b.rotation(j, Interpolation::Linear, &keys.times, &keys.rotations[j]))
            .and_then(|b| b.scale(j, Interpolation::Linear, &keys.times, &keys.scales[j]))
            .unwrap();
    }
    let first: Vec<Vec3> = keys.translations.iter().map(|t| t[0]).collect();
    let rest = (
        skeleton.to_level_order(&first).unwrap(),
        vec![Quat::IDENTITY; 67],
        vec![Vec3::ONE; 67],
    );
    (skeleton, b.build(), rest)
}

#[test]
fn a_long_clip_is_ten_times_smaller_within_the_bound() {
    let (skeleton, clip, rest) = exported_clip();
    let settings = Compression::default();
    let compact = clip.compress(&skeleton, trs(&rest), &settings).unwrap();
    let error = compact
        .error(&clip, &skeleton, trs(&rest), settings.distance)
        .unwrap();
    let (raw, size) = (clip.key_bytes(), compact.stored_size());
    // The rotations' keys alone, the part that moves: 4 floats per joint and key.
    let rotations = 16 * 67 * compact.frames();
    eprintln!(
        "long clip, 67 joints, 30 s at 60 Hz: {raw} raw bytes, {size} compact ({:.1}:1; {:.1}:1 against the rotations' keys alone), {} frames of {} bits, max error {:.2e}, p99 {:.2e} ({} points)",
        raw as f64 / size as f64,
        rotations as f64 / size as f64,
        compact.frames(),
        compact.frame_bits(),
        error.max,
        error.p99,
        error.points
    );
    assert!(error.max <= f64::from(settings.tolerance), "{error:?}");
    assert!(raw >= 10 * size, "{raw} raw bytes, {size} compact");
    assert_eq!(compact.frames(), 1801);
}

#[cfg(feature = "gltf")]
#[test]
fn every_shared_clip_stays_within_the_bound() {
    use ispc_skinning::gltf::GltfScene;
    let Some(dir) = common::assets() else { return };
    let settings = Compression::default();
    for file in [
        "CesiumMan/CesiumMan.glb",
        "Fox/Fox.glb",
        "RiggedFigure/RiggedFigure.glb",
        "RiggedSimple/RiggedSimple.glb",
        "RobotExpressive/RobotExpressive.glb",
        "SimpleSkin/SimpleSkin.gltf",
    ] {
        let scene = GltfScene::load(dir.join(file)).unwrap();
        let (t, q, s) = scene.character().level_rest();
        let rest = Trs::new(t, q, s);
        for c in 0..scene.clips().len() {
            let clip = scene.runtime_clip(c).unwrap();
            let compact = clip.compress(scene.skeleton(), rest, &settings).unwrap();
            let error = compact
                .error(&clip, scene.skeleton(), rest, settings.distance)
                .unwrap();
            let (raw, size) = (clip.key_bytes(), compact.stored_size());
            eprintln!(
                "{file} clip {c} ({}): {raw} raw bytes, {size} compact ({:.1}:1), {} frames at {}, {} of {} tracks constant, max error {:.2e}, p99 {:.2e}, weights {:.1e}",
                clip.name().unwrap_or(""),
                raw as f64 / size as f64,
                compact.frames(),
                compact
                    .sample_rate()
                    .map_or("the key times".to_string(), |r| format!("{r} fps")),
                compact.constant_tracks(),
                compact.tracks(),
                error.max,
                error.p99,
                error.weights
            );
            assert!(
                error.max <= f64::from(settings.tolerance),
                "{file} clip {c}: {error:?}"
            );
            assert!(
                error.weights <= f64::from(settings.weight_tolerance),
                "{file} clip {c}: {error:?}"
            );
            // ozz-animation's default optimizer settings (1 mm at 10 cm), for docs/RESULTS.md.
            let loose = Compression {
                tolerance: 1e-3,
                distance: 0.1,
                ..Compression::default()
            };
            let coarse = clip.compress(scene.skeleton(), rest, &loose).unwrap();
            let coarse_error = coarse
                .error(&clip, scene.skeleton(), rest, loose.distance)
                .unwrap();
            eprintln!(
                "  at 1 mm / 10 cm: {} bytes, max error {:.2e}",
                coarse.stored_size(),
                coarse_error.max
            );
            assert!(
                coarse_error.max <= 1e-3,
                "{file} clip {c}: {coarse_error:?}"
            );
            // Stored and loaded, it samples the same bits.
            let loaded = CompactClip::from_bytes(&compact.to_bytes()).unwrap();
            assert_eq!(loaded, compact);
            let base: Pose = (t.to_vec(), q.to_vec(), s.to_vec());
            for k in 0..20 {
                let time = clip.start() + clip.duration() * k as f32 / 19.0;
                assert_eq!(
                    bits(&sample_compact(&compact, &base, time, Wrap::Clamp)),
                    bits(&sample_compact(&loaded, &base, time, Wrap::Clamp))
                );
            }
        }
    }
}

fn bits(p: &Pose) -> Vec<u32> {
    let mut v = Vec::new();
    for x in &p.0 {
        v.extend(x.to_array().map(f32::to_bits));
    }
    for x in &p.1 {
        v.extend(x.to_array().map(f32::to_bits));
    }
    for x in &p.2 {
        v.extend(x.to_array().map(f32::to_bits));
    }
    v
}

/// A small clip with every kind of track: step, linear and cubic, translation, rotation, scale, a
/// constant track and morph weights, on a chain of 3 joints.
fn mixed_clip() -> (Skeleton, Clip, Pose) {
    mixed_clip_with(true)
}

/// [`mixed_clip`], with or without its morph weights.
fn mixed_clip_with(weights: bool) -> (Skeleton, Clip, Pose) {
    let skeleton = chain(3);
    let times: Vec<f32> = (0..25).map(|k| 0.5 + k as f32 / 24.0).collect();
    let mut b = Clip::builder(&skeleton);
    let q: Vec<Quat> = times
        .iter()
        .map(|&t| Quat::from_rotation_y(2.0 * t))
        .collect();
    b.rotation(0, Interpolation::Linear, &times, &q).unwrap();
    let t: Vec<Vec3> = times
        .iter()
        .map(|&t| Vec3::new(t.sin(), 1.0, 0.0))
        .collect();
    b.translation(1, Interpolation::Step, &times, &t).unwrap();
    let cubic: Vec<Vec3> = times
        .iter()
        .flat_map(|&t| [Vec3::ZERO, Vec3::splat(1.0 + 0.2 * t.cos()), Vec3::ZERO])
        .collect();
    b.scale(2, Interpolation::CubicSpline, &times, &cubic)
        .unwrap();
    b.translation(
        2,
        Interpolation::Linear,
        &times,
        &vec![Vec3::Y; times.len()],
    )
    .unwrap();
    if weights {
        let w: Vec<f32> = times.iter().flat_map(|&t| [t.sin().abs(), 0.25]).collect();
        b.weights(0, 2, Interpolation::Linear, &times, &w).unwrap();
    }
    let clip = b.build();
    let (t, q, s) = rest(3);
    (skeleton, clip, (t, q, s))
}

#[test]
fn every_track_kind_samples_near_the_clip_in_both_directions() {
    let (skeleton, clip, base) = mixed_clip();
    let compact = clip
        .compress(&skeleton, trs(&base), &Compression::default())
        .unwrap();
    assert!(compact.constant_tracks() >= 1, "the constant translation");
    let error = compact.error(&clip, &skeleton, trs(&base), 0.03).unwrap();
    assert!(error.max <= 1e-4 && error.weights <= 1e-3, "{error:?}");
    let mut context = ispc_skinning::SamplingContext::new();
    let mut weights = vec![vec![0.0; 2]];
    let mut raw_weights = vec![vec![0.0; 2]];
    // Forward, backward, and outside the span both ways, clamped and looped.
    let times: Vec<f32> = (0..200)
        .map(|i| -0.5 + i as f32 * 0.011)
        .chain((0..200).rev().map(|i| -0.5 + i as f32 * 0.013))
        .collect();
    for wrap in [Wrap::Clamp, Wrap::Loop] {
        for &time in &times {
            let got = sample_compact(&compact, &base, time, wrap);
            let (mut t, mut q, mut s) = base.clone();
            ispc_skinning::SamplingJob::new(
                &clip,
                &mut context,
                TrsMut::new(&mut t, &mut q, &mut s),
            )
            .time(time)
            .wrap(wrap)
            .weights(&mut raw_weights)
            .run()
            .unwrap();
            {
                let (mut t2, mut q2, mut s2) = base.clone();
                CompactSamplingJob::new(&compact, TrsMut::new(&mut t2, &mut q2, &mut s2))
                    .time(time)
                    .wrap(wrap)
                    .weights(&mut weights)
                    .run()
                    .unwrap();
            }
            // Within what the model-space bound allows of each local value: the step track switches
            // at the same keys (they fall on frames); the cubic scale of the last joint moves only its
            // virtual points, 0.03 away, so its error may reach 1e-4 / 0.03 (relative).
            for j in 0..3 {
                assert!(
                    (got.0[j] - t[j]).length() <= 1e-4,
                    "{wrap:?} t={time} joint {j}: {:?} {:?}",
                    got.0[j],
                    t[j]
                );
                assert!(
                    got.1[j].angle_between(q[j]) <= 1e-3,
                    "{wrap:?} t={time} joint {j}"
                );
                assert!(
                    (got.2[j] - s[j]).length() <= 4e-3,
                    "{wrap:?} t={time} joint {j}: {:?} {:?}",
                    got.2[j],
                    s[j]
                );
            }
            for (a, b) in weights[0].iter().zip(&raw_weights[0]) {
                assert!((a - b).abs() <= 1e-3, "{wrap:?} t={time}: {a} {b}");
            }
        }
    }
}

#[test]
fn settings_and_sampling_rules() {
    let (skeleton, clip, base) = mixed_clip();
    for (settings, name) in [
        (
            Compression {
                tolerance: 0.0,
                ..Compression::default()
            },
            "tolerance",
        ),
        (
            Compression {
                tolerance: f32::NAN,
                ..Compression::default()
            },
            "tolerance",
        ),
        (
            Compression {
                distance: -1.0,
                ..Compression::default()
            },
            "distance",
        ),
        (
            Compression {
                weight_tolerance: f32::INFINITY,
                ..Compression::default()
            },
            "weight tolerance",
        ),
        (
            Compression {
                sample_rate: Some(0.0),
                ..Compression::default()
            },
            "sample rate",
        ),
        (
            Compression {
                sample_rate: Some(5000.0),
                ..Compression::default()
            },
            "sample rate",
        ),
    ] {
        match clip.compress(&skeleton, trs(&base), &settings) {
            Err(Error::CompressionSetting { setting, .. }) => assert_eq!(setting, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    // Another skeleton, a short rest pose, a rest pose that is not finite.
    let other = Skeleton::from_parents(&[Some(1), None, Some(1)]).unwrap();
    assert!(matches!(
        clip.compress(&other, trs(&base), &Compression::default()),
        Err(Error::ClipSkeleton { .. })
    ));
    let short = (base.0[..2].to_vec(), base.1.clone(), base.2.clone());
    assert!(matches!(
        clip.compress(&skeleton, trs(&short), &Compression::default()),
        Err(Error::CountMismatch { .. })
    ));
    let mut nan = base.clone();
    nan.0[1].x = f32::NAN;
    assert!(matches!(
        clip.compress(&skeleton, trs(&nan), &Compression::default()),
        Err(Error::NotFinite { .. })
    ));
    // A rate that would pass the frame limit.
    let long = {
        let mut b = Clip::builder(&skeleton);
        b.translation(
            0,
            Interpolation::Linear,
            &[0.0, 1e6],
            &[Vec3::ZERO, Vec3::ONE],
        )
        .unwrap();
        b.build()
    };
    assert!(matches!(
        long.compress(
            &skeleton,
            trs(&base),
            &Compression {
                sample_rate: Some(60.0),
                ..Compression::default()
            }
        ),
        Err(Error::TooManyKeys { .. })
    ));
    // The job's rules.
    let compact = clip
        .compress(&skeleton, trs(&base), &Compression::default())
        .unwrap();
    let (mut t, mut q, mut s) = (
        vec![Vec3::ZERO; 2],
        vec![Quat::IDENTITY; 3],
        vec![Vec3::ONE; 3],
    );
    assert!(matches!(
        CompactSamplingJob::new(&compact, TrsMut::new(&mut t, &mut q, &mut s)).run(),
        Err(Error::CountMismatch { .. })
    ));
    let (mut t, mut q, mut s) = base.clone();
    assert!(matches!(
        CompactSamplingJob::new(&compact, TrsMut::new(&mut t, &mut q, &mut s))
            .time(f32::NAN)
            .run(),
        Err(Error::NotFinite { .. })
    ));
    let mut wrong = vec![vec![0.0; 3]];
    assert!(matches!(
        CompactSamplingJob::new(&compact, TrsMut::new(&mut t, &mut q, &mut s))
            .weights(&mut wrong)
            .run(),
        Err(Error::CountMismatch { .. })
    ));
}

#[test]
fn hostile_bytes_are_refused_without_a_panic() {
    let (skeleton, clip, base) = mixed_clip();
    let compact = clip
        .compress(&skeleton, trs(&base), &Compression::default())
        .unwrap();
    let bytes = compact.to_bytes();
    assert_eq!(bytes.len(), compact.stored_size());
    assert_eq!(CompactClip::from_bytes(&bytes).unwrap(), compact);
    // Every truncation, and a byte more.
    for n in 0..bytes.len() {
        assert!(
            matches!(
                CompactClip::from_bytes(&bytes[..n]),
                Err(Error::CompactBytes { .. })
            ),
            "{n} bytes"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    match CompactClip::from_bytes(&longer) {
        Err(Error::CompactBytes { rule, .. }) => assert_eq!(rule, "nothing follows the frames"),
        other => panic!("{other:?}"),
    }
    // Every byte changed in turn, to several values: a clip that samples finite values, or an error.
    let (t, q, s) = base.clone();
    for i in 0..bytes.len() {
        for v in [0u8, 1, 2, 0x7f, 0x80, 0xff, bytes[i] ^ 0x40] {
            let mut b = bytes.clone();
            b[i] = v;
            if let Ok(c) = CompactClip::from_bytes(&b) {
                let (mut t2, mut q2, mut s2) = (t.clone(), q.clone(), s.clone());
                let mut weights: Vec<Vec<f32>> = (0..c.weight_sets())
                    .map(|set| vec![0.0; c.weight_targets(set).unwrap_or(0)])
                    .collect();
                for time in [-1.0, 0.5, 0.77, 1.5, 9.0] {
                    CompactSamplingJob::new(&c, TrsMut::new(&mut t2, &mut q2, &mut s2))
                        .time(time)
                        .weights(&mut weights)
                        .run()
                        .unwrap();
                    let floats = bits(&(t2.clone(), q2.clone(), s2.clone()));
                    assert!(
                        floats.iter().all(|&x| f32::from_bits(x).is_finite())
                            && weights.iter().flatten().all(|w| w.is_finite()),
                        "byte {i} = {v}: a sample is not finite"
                    );
                }
            }
        }
    }
    // Counts that promise more than the bytes hold are refused before anything is allocated.
    let mut huge = bytes.clone();
    let joints_at = 12 + 4 + clip.name().map_or(0, str::len);
    huge[joints_at..joints_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        CompactClip::from_bytes(&huge),
        Err(Error::CompactBytes { .. })
    ));
}

#[test]
fn a_frame_plays_a_compact_clip_blended_with_raw_ones() {
    // The chain of the mixed clip (no morph weights: the character has no meshes) on a character
    // whose rest pose is the compressor's.
    let (skeleton, clip, _) = mixed_clip_with(false);
    let character = super::playback::character(skeleton.clone());
    let (t, q, s) = character.level_rest();
    let compact = clip
        .compress(&skeleton, Trs::new(t, q, s), &Compression::default())
        .unwrap();
    let models = |layers: &[ClipLayer<'_>]| {
        let mut frame = character.frame_buffers();
        character.play(&mut frame, layers, &[]).unwrap();
        character.evaluate(&mut frame).unwrap();
        (0..3).map(|j| frame.model(j).unwrap()).collect::<Vec<_>>()
    };
    for time in [0.5, 0.73, 1.0, 1.49] {
        // Alone, the compact clip's joints are where the raw clip's are, within the bound.
        let raw = models(&[ClipLayer::new(&clip, time)]);
        let packed = models(&[ClipLayer::new(&compact, time)]);
        for (a, b) in raw.iter().zip(&packed) {
            let d = (a.w_axis - b.w_axis).length();
            assert!(d <= 1e-4, "t={time}: {d}");
        }
        // Blended half and half with the raw clip, too.
        let half = models(&[
            ClipLayer::new(&clip, time).weight(0.5),
            ClipLayer::new(&compact, time).weight(0.5),
        ]);
        for (a, b) in raw.iter().zip(&half) {
            let d = (a.w_axis - b.w_axis).length();
            assert!(d <= 1e-4, "t={time}: {d}");
        }
    }
    // A compact clip of another skeleton's joint order is refused.
    let other = Skeleton::from_parents(&[Some(1), None, Some(1)]).unwrap();
    let other_character = super::playback::character(other);
    let mut frame = other_character.frame_buffers();
    assert!(matches!(
        other_character.play(&mut frame, &[ClipLayer::new(&compact, 0.5)], &[]),
        Err(Error::ClipSkeleton { .. })
    ));
}

#[test]
fn extreme_clips_compress_within_limits_or_are_refused() {
    let skeleton = chain(1);
    let base = rest(1);
    let settings = Compression::default();
    // Values whose range would overflow f32 when decoded are refused, by name.
    for x in [3e38f32, 1e38] {
        let mut b = Clip::builder(&skeleton);
        b.translation(
            0,
            Interpolation::Linear,
            &[0.0, 1.0],
            &[Vec3::X * -x, Vec3::X * x],
        )
        .unwrap();
        match b.build().compress(&skeleton, trs(&base), &settings) {
            Err(Error::CompactValue { what, value, .. }) => {
                assert_eq!(what, "translation keys");
                assert!(value.abs() > ispc_skinning::MAX_COMPACT_VALUE);
            }
            other => panic!("{x}: {other:?}"),
        }
    }
    // Just inside the limit, the clip stores, loads back and samples finite values.
    let big = ispc_skinning::MAX_COMPACT_VALUE;
    let mut b = Clip::builder(&skeleton);
    b.translation(
        0,
        Interpolation::Linear,
        &[0.0, 1.0],
        &[Vec3::X * -big, Vec3::X * big],
    )
    .unwrap();
    let compact = b
        .build()
        .compress(&skeleton, trs(&base), &settings)
        .unwrap();
    let loaded = CompactClip::from_bytes(&compact.to_bytes()).unwrap();
    for time in [0.0, 0.3, 1.0] {
        let p = sample_compact(&loaded, &base, time, Wrap::Clamp);
        assert!(p.0[0].is_finite(), "{time}: {:?}", p.0[0]);
    }
    // Two keys 1/240 s apart in a clip of over an hour: its key times, not a million uniform frames.
    let mut b = Clip::builder(&skeleton);
    b.translation(
        0,
        Interpolation::Linear,
        &[0.0, 1.0 / 240.0, 4400.0],
        &[Vec3::ZERO, Vec3::X, Vec3::Y],
    )
    .unwrap();
    let sparse = b
        .build()
        .compress(&skeleton, trs(&base), &settings)
        .unwrap();
    assert!(sparse.frames() <= 3 * 8, "{} frames", sparse.frames());
    assert_eq!(sparse.sample_rate(), None);
}

#[test]
fn weight_tracks_alone_keep_their_frames() {
    // Weights alternating 0 and 1 at 30 keys a second: no coarser frames meet the weight tolerance.
    let skeleton = chain(1);
    let base = rest(1);
    let times: Vec<f32> = (0..31).map(|k| k as f32 / 30.0).collect();
    let w: Vec<f32> = (0..31).map(|k| (k % 2) as f32).collect();
    let mut b = Clip::builder(&skeleton);
    b.weights(0, 1, Interpolation::Linear, &times, &w).unwrap();
    let clip = b.build();
    let compact = clip
        .compress(&skeleton, trs(&base), &Compression::default())
        .unwrap();
    assert_eq!(compact.frames(), 31);
    let error = compact.error(&clip, &skeleton, trs(&base), 0.03).unwrap();
    assert!(error.weights <= 1e-3, "{error:?}");
}

#[test]
fn names_of_any_length_round_trip_and_weight_sets_are_bounded() {
    let (skeleton, _, base) = mixed_clip();
    let mut b = Clip::builder(&skeleton);
    b.name("n".repeat(10_000));
    b.rotation(
        0,
        Interpolation::Linear,
        &[0.0, 1.0],
        &[Quat::IDENTITY, Quat::from_rotation_x(1.0)],
    )
    .unwrap();
    let compact = b
        .build()
        .compress(&skeleton, trs(&base), &Compression::default())
        .unwrap();
    let loaded = CompactClip::from_bytes(&compact.to_bytes()).unwrap();
    assert_eq!(loaded.name().map(str::len), Some(10_000));
    // A clip whose weight set is numbered 2^16 is refused by the compressor.
    let mut b = Clip::builder(&skeleton);
    b.weights(1 << 16, 1, Interpolation::Step, &[0.0], &[0.5])
        .unwrap();
    assert!(matches!(
        b.build()
            .compress(&skeleton, trs(&base), &Compression::default()),
        Err(Error::TooManyKeys { .. })
    ));
}

/// `compact` sampled at `time` on `backend`, with `context` when given.
fn sample_on(
    compact: &CompactClip,
    base: &Pose,
    time: f32,
    backend: Backend,
    context: Option<&mut CompactContext>,
) -> Vec<u32> {
    let (mut t, mut q, mut s) = base.clone();
    let mut job = CompactSamplingJob::new(compact, TrsMut::new(&mut t, &mut q, &mut s))
        .time(time)
        .backend(backend);
    job.context = context;
    job.run().unwrap();
    bits(&(t, q, s))
}

#[test]
fn a_context_decodes_each_frame_once_played_forward_or_backward() {
    let Some(isa) = Isa::detect() else {
        eprintln!("skipped: no ISA runs here, and the serial decoder keeps no frames in a context");
        return;
    };
    let (skeleton, clip, base) = mixed_clip();
    let compact = clip
        .compress(&skeleton, trs(&base), &Compression::default())
        .unwrap();
    let frames = compact.frames() as u64;
    assert!(frames > 16, "{frames} frames: a test of reuse needs a few");
    let (start, end) = (clip.start(), compact.end());
    // 24 frames per second played at 48 calls per second, forward then backward: each frame is
    // decoded once per pass, and the values are the serial decoder's bits.
    let calls = ((end - start) * 48.0) as usize;
    let forward: Vec<f32> = (0..=calls).map(|k| start + k as f32 / 48.0).collect();
    let mut context = CompactContext::new();
    for (pass, times) in [forward.clone(), forward.iter().rev().copied().collect()]
        .iter()
        .enumerate()
    {
        let before = context.decodes();
        for &time in times {
            let got = sample_on(&compact, &base, time, Backend::Isa(isa), Some(&mut context));
            let want = sample_on(&compact, &base, time, Backend::Reference, None);
            assert_eq!(got, want, "pass {pass}, t = {time}");
        }
        let decoded = context.decodes() - before;
        assert!(
            decoded <= frames + 1,
            "pass {pass}: {decoded} frames decoded over {} calls of a {frames}-frame clip",
            times.len()
        );
    }
    assert!(context.decodes() >= frames, "{}", context.decodes());
    // A seek (no frame shared with the call before) decodes in place and keeps nothing; the call
    // after it, between the same frames, decodes both into the context; the next one there, none.
    let before = context.decodes();
    let seek = start + 0.3 * (end - start);
    for (k, kept) in [(0, 0), (1, 2), (2, 2)] {
        let time = seek + k as f32 * 1e-4;
        let got = sample_on(&compact, &base, time, Backend::Isa(isa), Some(&mut context));
        assert_eq!(
            got,
            sample_on(&compact, &base, time, Backend::Reference, None)
        );
        assert_eq!(context.decodes() - before, kept, "call {k} after the seek");
    }
    // Another clip of the same tracks and frames but other bits (a looser tolerance): the context
    // starts over for it, plays it right, and starts over again back on the first.
    let loose = Compression {
        tolerance: 1e-2,
        ..Compression::default()
    };
    let other = clip.compress(&skeleton, trs(&base), &loose).unwrap();
    assert_eq!(other.frames(), compact.frames());
    assert_ne!(
        sample_on(&other, &base, seek, Backend::Reference, None),
        sample_on(&compact, &base, seek, Backend::Reference, None),
        "the two clips must differ for this check"
    );
    for (clip, name) in [
        (&other, "the other clip"),
        (&compact, "the first clip again"),
    ] {
        for k in 0..6 {
            let time = seek + k as f32 / 48.0;
            assert_eq!(
                sample_on(clip, &base, time, Backend::Isa(isa), Some(&mut context)),
                sample_on(clip, &base, time, Backend::Reference, None),
                "{name}, call {k}"
            );
        }
    }
    // The serial decoder leaves the context as it is.
    let before = context.decodes();
    sample_on(
        &compact,
        &base,
        0.77,
        Backend::Reference,
        Some(&mut context),
    );
    assert_eq!(context.decodes(), before);
}
