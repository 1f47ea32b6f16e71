//! `compact_clip`: compact clips stored as bytes and loaded back, from arbitrary bytes or from a clip
//! compressed here and then mutated.
//!
//! Either the input's raw bytes go to `CompactClip::from_bytes`, or a clip of 1 to 8 chained joints
//! (rotation, translation and scale tracks, step, linear or cubic, 1 to 40 keys from the input's
//! floats, made finite, and within +-8 unless the input asks for extremes; optionally morph weights) is compressed with settings from the input, stored,
//! loaded back (it must equal what was stored), and its bytes mutated at the input's offsets before
//! loading again. Every load returns `Ok` or a typed `Err`, never a panic or an allocation the bytes do
//! not back; every loaded clip samples at the input's times (any finite time, both wraps) with every
//! output float finite, and the compact kernel (`Backend::Auto`) writes the serial decoder's bits.
#![no_main]

use arbitrary::Arbitrary;
use ispc_skinning::glam::{Quat, Vec3};
use ispc_skinning::{
    Backend, Clip, CompactClip, CompactContext, CompactSamplingJob, Compression, Interpolation,
    Skeleton, Trs, TrsMut, Wrap,
};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Build {
    joints: u8,
    keys: u8,
    interpolation: u8,
    weights: bool,
    tolerance: u8,
    rate: Option<u8>,
    /// Keep the floats' magnitudes (finite ones) instead of clamping them to +-8.
    extreme: bool,
    floats: Vec<f32>,
}

#[derive(Arbitrary, Debug)]
struct Input {
    raw: Vec<u8>,
    build: Option<Build>,
    mutations: Vec<(u16, u8)>,
    times: Vec<f32>,
}

/// The i-th float of the input, finite, and within +-8 unless `extreme`.
fn float(floats: &[f32], i: usize, extreme: bool) -> f32 {
    let x = floats.get(i % floats.len().max(1)).copied().unwrap_or(0.5);
    match (x.is_finite(), extreme) {
        (false, _) => 1.0,
        (true, true) => x,
        (true, false) => x.clamp(-8.0, 8.0),
    }
}

/// A compressed clip's bytes, or `None` where compression refused its input.
fn compressed(b: &Build) -> Option<Vec<u8>> {
    let joints = 1 + b.joints as usize % 8;
    let keys = 1 + b.keys as usize % 40;
    let parents: Vec<Option<usize>> = (0..joints).map(|j| j.checked_sub(1)).collect();
    let skeleton = Skeleton::from_parents(&parents).ok()?;
    let interpolation = match b.interpolation % 3 {
        0 => Interpolation::Step,
        1 => Interpolation::Linear,
        _ => Interpolation::CubicSpline,
    };
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    let times: Vec<f32> = (0..keys).map(|k| k as f32 / 24.0).collect();
    let mut i = 0;
    let mut next = || {
        i += 1;
        float(&b.floats, i, b.extreme)
    };
    let mut clip = Clip::builder(&skeleton);
    for j in 0..joints {
        let t: Vec<Vec3> = (0..keys * per_key)
            .map(|_| Vec3::new(next(), next(), next()))
            .collect();
        let q: Vec<Quat> = (0..keys * per_key)
            .map(|_| Quat::from_xyzw(next(), next(), next(), 1.0 + next().abs()))
            .collect();
        let s: Vec<Vec3> = (0..keys * per_key)
            .map(|_| Vec3::new(next(), next(), next()))
            .collect();
        clip.translation(j, interpolation, &times, &t).ok()?;
        clip.rotation(j, interpolation, &times, &q).ok()?;
        clip.scale(j, interpolation, &times, &s).ok()?;
    }
    if b.weights {
        let w: Vec<f32> = (0..2 * keys * per_key).map(|_| next()).collect();
        clip.weights(0, 2, interpolation, &times, &w).ok()?;
    }
    let clip = clip.build();
    let rest = (
        vec![Vec3::Y; joints],
        vec![Quat::IDENTITY; joints],
        vec![Vec3::ONE; joints],
    );
    let settings = Compression {
        tolerance: 1e-5 * (1 + b.tolerance as u32) as f32,
        sample_rate: b.rate.map(|r| 1.0 + f32::from(r)),
        ..Compression::default()
    };
    let compact = clip
        .compress(&skeleton, Trs::new(&rest.0, &rest.1, &rest.2), &settings)
        .ok()?;
    let bytes = compact.to_bytes();
    assert_eq!(bytes.len(), compact.stored_size());
    let loaded = CompactClip::from_bytes(&bytes).expect("a stored clip loads");
    assert!(loaded == compact, "a stored clip loads unchanged");
    Some(bytes)
}

/// Samples a loaded clip at the input's times; every float written must be finite, and the kernel
/// (`Backend::Auto`) must write the serial decoder's bits.
fn sample(clip: &CompactClip, times: &[f32]) {
    let n = clip.joints();
    let (mut t, mut q, mut s) = (
        vec![Vec3::ZERO; n],
        vec![Quat::IDENTITY; n],
        vec![Vec3::ONE; n],
    );
    let mut weights: Vec<Vec<f32>> = (0..clip.weight_sets())
        .map(|set| vec![0.0; clip.weight_targets(set).unwrap_or(0)])
        .collect();
    let mut context = CompactContext::new();
    for (k, &time) in times.iter().take(16).enumerate() {
        let wrap = if k % 2 == 0 { Wrap::Clamp } else { Wrap::Loop };
        let (mut rt, mut rq, mut rs) = (t.clone(), q.clone(), s.clone());
        let reference = CompactSamplingJob::new(clip, TrsMut::new(&mut rt, &mut rq, &mut rs))
            .time(time)
            .wrap(wrap)
            .backend(Backend::Reference)
            .run()
            .is_ok();
        // On the kernel with a context kept over the times (the frames it keeps, decoded or not).
        let ok = CompactSamplingJob::new(clip, TrsMut::new(&mut t, &mut q, &mut s))
            .time(time)
            .wrap(wrap)
            .weights(&mut weights)
            .context(&mut context)
            .run()
            .is_ok();
        assert_eq!(ok, time.is_finite(), "sampling at {time}");
        assert_eq!(ok, reference, "the reference at {time}");
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let floats = |t: &[Vec3], q: &[Quat], s: &[Vec3]| -> Vec<f32> {
            t.iter()
                .chain(s)
                .flat_map(|v| v.to_array())
                .chain(q.iter().flat_map(|v| v.to_array()))
                .collect()
        };
        assert_eq!(
            bits(&floats(&t, &q, &s)),
            bits(&floats(&rt, &rq, &rs)),
            "the kernel and the serial decoder at {time}"
        );
        let floats = t
            .iter()
            .chain(&s)
            .flat_map(|v| v.to_array())
            .chain(q.iter().flat_map(|v| v.to_array()))
            .chain(weights.iter().flatten().copied());
        for x in floats {
            assert!(x.is_finite(), "a sample at {time} wrote {x}");
        }
    }
}

fuzz_target!(|input: Input| {
    let bytes = match &input.build {
        Some(b) => match compressed(b) {
            Some(mut bytes) => {
                for &(at, v) in input.mutations.iter().take(8) {
                    if let Some(byte) = bytes.get_mut(at as usize) {
                        *byte = v;
                    }
                }
                bytes
            }
            None => return,
        },
        None => input.raw.clone(),
    };
    if let Ok(clip) = CompactClip::from_bytes(&bytes) {
        sample(&clip, &input.times);
    }
});
