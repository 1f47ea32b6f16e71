//! Runtime clips (`ispc_skinning::animation`): the builder's rules, sampling by cursor against sampling
//! by search (the same bits in forward, backward and random time sequences, with the work counted),
//! the interpolation rules, and the glTF importer's clips sampled both ways on the shared assets.
//!
//! This file holds the helpers the tests share (a chain skeleton, the rest pose, sampling, a pose's
//! bits, a generator, a procedural clip). Sampling by cursor and by search, interpolation and the glTF
//! clips are checked in `sampling.rs` beside it; the builder's and the sampling job's rules in
//! `rules.rs`; root motion, GPU poses and blended clips played on a character in `playback.rs`; compact
//! clips in `compact.rs`. The five files make one test binary.

#[path = "../common/mod.rs"]
mod common;
mod compact;
mod playback;
mod rules;
mod sampling;

use glam::{Quat, Vec3};
use ispc_skinning::{
    Backend, Clip, Interpolation, SamplingContext, SamplingJob, Skeleton, TrsMut, Wrap,
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
