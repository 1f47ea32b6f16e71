//! Compact clips sample to the recorded bits on every backend and platform: the fused kernel
//! (`compact_sample`, a seek), the two-step one (`compact_decode` and `compact_interpolate`, playback
//! with a context) and the serial decoder (the reference backend).
//!
//! The clip is not compressed here: the compressor measures in f64 with glam, whose SIMD forms differ
//! between platforms, and its choices need not be the same bits everywhere (only sampling is promised
//! to be). Instead the stored form is written byte by byte from the tests' generator (the format of
//! src/animation/compact/bytes.rs, version 3) and loaded with `CompactClip::from_bytes`, so every
//! platform samples the same bytes. The clip mixes every kind of track, bit rates from 0 to 24 bits,
//! step tracks and each rebuilt rotation component, over 61 frames in four segments; the codes and
//! segment ranges are random.

use crate::common::Rng;
use crate::Hash;
use glam::{Quat, Vec3};
use ispc_skinning::{Backend, CompactClip, CompactContext, CompactSamplingJob, TrsMut, Wrap};

/// The recorded hash of every pose sampled below, as the serial decoder computed it on x86-64 Linux
/// (and every ISA there agreed). The bytes are format version 3's: a change of the format changes
/// them and this hash.
const COMPACT_HASH: u64 = 0x21fc_400d_405a_744c;

const JOINTS: u32 = 41;
/// Uniform frames from 0 to 2.5 s at 24 per second: 61.
const FRAMES: u32 = 61;
const SEGMENT_FRAMES: u32 = 16;
/// Bit rates the components take in turn (0 decodes to its segment's minimum).
const RATES: [u8; 9] = [0, 3, 5, 8, 11, 13, 16, 20, 24];

fn put_u32(out: &mut Vec<u8>, x: u32) {
    out.extend_from_slice(&x.to_le_bytes());
}

fn put_f32(out: &mut Vec<u8>, x: f32) {
    out.extend_from_slice(&x.to_le_bytes());
}

/// The stored clip (every value below 128 is one varint byte).
fn clip_bytes(rng: &mut Rng) -> Vec<u8> {
    let mut out = b"ISKCLIP\0".to_vec();
    put_u32(&mut out, 3);
    put_u32(&mut out, 0); // no name
    put_u32(&mut out, JOINTS);
    out.extend(0..JOINTS as u8); // level order is joint order
    for x in [0.0, 2.5, 24.0] {
        put_f32(&mut out, x);
    }
    put_u32(&mut out, FRAMES);
    put_u32(&mut out, 0); // weight sets
    put_u32(&mut out, 0); // uniform frames
                          // Tracks by joint and property: flags are the property, 4 step, the rebuilt component << 3 and
                          // 32 animated. Joint j has a translation unless j % 4 == 3 (animated where j % 3 != 1), a
                          // rotation unless j % 9 == 8 (constant where j % 5 == 2), a scale where j % 4 == 1 (animated
                          // unless j % 8 == 5); step keys where j % 7 == 2.
    let mut tracks = Vec::new();
    let (mut constants, mut components) = (Vec::new(), 0u32);
    for j in 0..JOINTS {
        let step = if j % 7 == 2 { 4 } else { 0 };
        let mut track = |property: u8, animated: bool, drop: u8| {
            tracks.push((
                j,
                property | step | (drop << 3) | if animated { 32 } else { 0 },
            ));
            if animated {
                components += 3;
            } else if property == 1 {
                // Unit within from_bytes's slack, in plain f32.
                let unit = [
                    [0.0, 0.0, 0.0, 1.0],
                    [0.6, 0.0, 0.8, 0.0],
                    [0.0, -0.8, 0.0, 0.6],
                ];
                constants.extend_from_slice(&unit[j as usize % 3]);
            } else {
                constants.extend((0..3).map(|_| rng.range(-1.5, 1.5)));
            }
        };
        if j % 4 != 3 {
            track(0, j % 3 != 1, 0);
        }
        if j % 9 != 8 {
            track(1, j % 5 != 2, (j % 4) as u8);
        }
        if j % 4 == 1 {
            track(2, j % 8 != 5, 0);
        }
    }
    put_u32(&mut out, tracks.len() as u32);
    let mut previous = 0;
    for &(j, flags) in &tracks {
        out.push((j - previous) as u8);
        out.push(flags);
        previous = j;
    }
    put_u32(&mut out, 0); // weight tracks
    put_u32(&mut out, constants.len() as u32);
    for &c in &constants {
        put_f32(&mut out, c);
    }
    put_u32(&mut out, components);
    let mut record_bits = 0usize;
    for k in 0..components as usize {
        put_f32(&mut out, rng.range(-0.9, 0.2));
        put_f32(&mut out, rng.range(0.0, 0.9));
        let bits = RATES[(k * 7 + k / 5) % RATES.len()];
        out.push(bits);
        record_bits += usize::from(bits);
    }
    for _ in 0..FRAMES.div_ceil(SEGMENT_FRAMES) * components {
        let m = rng.below(200);
        let e = rng.below(256 - m);
        out.extend([m as u8, e as u8]);
    }
    // Records of whole bytes; the bits past the codes are random too (a reader ignores them).
    let frame_bytes = FRAMES as usize * record_bits.div_ceil(8);
    out.extend((0..frame_bytes).map(|_| rng.next_u64() as u8));
    out
}

/// Every pose of the clip on `backend`, hashed: seeks (no context) at frames, between them, before and
/// after the clip, clamped and looped; then played forward and backward with a context.
fn poses_hash(clip: &CompactClip, backend: Backend) -> Result<u64, String> {
    let n = JOINTS as usize;
    let (mut t, mut q, mut s) = (
        vec![Vec3::ZERO; n],
        vec![Quat::IDENTITY; n],
        vec![Vec3::ONE; n],
    );
    let mut h = Hash::new();
    let mut add = |t: &[Vec3], q: &[Quat], s: &[Vec3]| {
        h.floats(t.iter().flat_map(|v| v.to_array()));
        h.floats(q.iter().flat_map(|v| v.to_array()));
        h.floats(s.iter().flat_map(|v| v.to_array()));
    };
    let mut times: Vec<f32> = (0..=FRAMES * 3).map(|i| i as f32 / 72.0).collect();
    times.extend([-0.3, 2.6, 3.7, 1.0 / 3.0, 0.7123]);
    for &time in &times {
        for wrap in [Wrap::Clamp, Wrap::Loop] {
            CompactSamplingJob::new(clip, TrsMut::new(&mut t, &mut q, &mut s))
                .time(time)
                .wrap(wrap)
                .backend(backend)
                .run()
                .map_err(|e| format!("t = {time}: {e}"))?;
            add(&t, &q, &s);
        }
    }
    let mut context = CompactContext::new();
    let played = (0..150).map(|i| i as f32 / 60.0);
    for time in played.clone().chain(played.rev()) {
        CompactSamplingJob::new(clip, TrsMut::new(&mut t, &mut q, &mut s))
            .time(time)
            .backend(backend)
            .context(&mut context)
            .run()
            .map_err(|e| format!("t = {time}, with a context: {e}"))?;
        add(&t, &q, &s);
    }
    // On an ISA the context holds frames only where the kernels ran (a clip without kernel tables
    // would fall back to the serial decoder and match the hash trivially).
    if let (Backend::Isa(isa), 0) = (backend, context.decodes()) {
        return Err(format!("{isa}: the compact kernels did not run"));
    }
    Ok(h.0)
}

#[test]
fn compact_sampling_is_the_recorded_bits_on_every_backend() {
    let bytes = clip_bytes(&mut Rng::new(36));
    let clip = CompactClip::from_bytes(&bytes).unwrap();
    assert_eq!(
        (clip.frames(), clip.tracks(), clip.constant_tracks()),
        (61, 78, 23)
    );
    // The poses move: a seek at two times gives other values for most joints.
    let at = |time: f32| {
        let n = JOINTS as usize;
        let (mut t, mut q, mut s) = (
            vec![Vec3::ZERO; n],
            vec![Quat::IDENTITY; n],
            vec![Vec3::ONE; n],
        );
        CompactSamplingJob::new(&clip, TrsMut::new(&mut t, &mut q, &mut s))
            .time(time)
            .run()
            .unwrap();
        q
    };
    let (a, b) = (at(0.3), at(1.9));
    let moved = a.iter().zip(&b).filter(|(a, b)| a != b).count();
    assert!(moved > 25, "{moved} of {JOINTS} rotations moved");
    let mut failures = Vec::new();
    for backend in crate::reported_backends("compact sampling, ") {
        let got = poses_hash(&clip, backend).unwrap();
        println!(
            "deterministic: {} compact sampling: {got:#018x}",
            backend.name()
        );
        if got != COMPACT_HASH {
            failures.push(format!(
                "{}: hash {got:#018x}, recorded {COMPACT_HASH:#018x}",
                backend.name()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "compact sampling differs from the recorded bits:\n{}",
        failures.join("\n")
    );
}
