//! Sampling checks: the ISPC sampling kernels (`SamplingJob` on an ISA) against the serial reference
//! (`SamplingJob` on `Backend::Reference`), with the joints' tracks cycling through step, linear and
//! cubic keys, some on a shared timeline and some on their own, sampled before the first key, at key
//! times, between keys and after the last, playing forward, backward and at random.
//!
//! Tolerance. Step keys and held keys are copied: the same bits. Linear translations and scales are
//! `(1 - u) a + u b` on both sides, and a cubic value is four products summed; ISPC may fuse a
//! multiply-add, one rounding per term: with values and tangents in [-1, 1] and key intervals below
//! 0.1, `8 eps` (about 1e-6) absolute. Rotations: the kernels compute slerp's weights with Eberly's
//! polynomial in the keys' dot product (ispc/sample.ispc, `slerp_weights`), the reference with `acos` and
//! `sin`; the polynomial's relative error is near 1e-7. Measured on the Xeon VM (2026-11-26) over the
//! 67-joint rig's four clips at 2,000 times each: at most 3.2e-7 per rotation component on SSE4, AVX2
//! and AVX-512 (1.2e-7 with ISPC's `acos` and `sin` before); vec3 at most 1.2e-7. The check allows 1e-6
//! and 2e-5. Joints without a track must
//! come back with the bits they had.

use crate::common::Rng;
use crate::harness::sizes;
use glam::{Quat, Vec3};
use ispc_skinning::{
    Backend, Clip, Interpolation, Isa, SamplingContext, SamplingJob, Skeleton, TrsMut, Wrap,
};

const KINDS: [Interpolation; 3] = [
    Interpolation::Step,
    Interpolation::Linear,
    Interpolation::CubicSpline,
];

/// Which joints of a test clip have tracks, and with which interpolation.
#[derive(Clone, Copy)]
enum Shape {
    /// Joints `j % 4 != 3` have tracks (the others keep the output's value), each with its own
    /// interpolation; even joints share one timeline, odd ones have their own times: groups of one
    /// track in the single-pose kernel.
    Mixed,
    /// Every joint but `j % 50 == 49` on the shared timeline, the interpolation changing every 37
    /// joints: long groups, with full gangs and tails of every lane width.
    Runs,
}

impl Shape {
    fn tracked(self, j: usize) -> bool {
        match self {
            Shape::Mixed => j % 4 != 3,
            Shape::Runs => j % 50 != 49,
        }
    }

    fn kind(self, j: usize) -> Interpolation {
        match self {
            Shape::Mixed => KINDS[(j / 2) % 3],
            Shape::Runs => KINDS[(j / 37) % 3],
        }
    }
}

/// A clip over `n` chained joints, tracks as `shape` says.
fn clip(n: usize, shape: Shape, rng: &mut Rng) -> (Skeleton, Clip) {
    // Size 0 is a clip without tracks (a skeleton has at least one joint).
    let parents: Vec<Option<usize>> = (0..n.max(1)).map(|j| j.checked_sub(1)).collect();
    let skeleton = Skeleton::from_parents(&parents).unwrap();
    let shared: Vec<f32> = (0..12).map(|k| k as f32 * 0.05).collect();
    let mut b = Clip::builder(&skeleton);
    for j in (0..n).filter(|&j| shape.tracked(j)) {
        let kind = shape.kind(j);
        let per = if kind == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        let times: Vec<f32> = if j % 2 == 0 || matches!(shape, Shape::Runs) {
            shared.clone()
        } else {
            let mut t = rng.range(-0.05, 0.05);
            (0..2 + j % 9)
                .map(|_| {
                    t += rng.range(0.01, 0.1);
                    t
                })
                .collect()
        };
        let v3 = |rng: &mut Rng| -> Vec<Vec3> {
            (0..times.len() * per)
                .map(|_| {
                    Vec3::new(
                        rng.range(-1.0, 1.0),
                        rng.range(-1.0, 1.0),
                        rng.range(-1.0, 1.0),
                    )
                })
                .collect()
        };
        let q: Vec<Quat> = (0..times.len() * per)
            .map(|_| {
                Quat::from_xyzw(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(0.2, 1.0),
                )
            })
            .collect();
        let (t, s) = (v3(rng), v3(rng));
        b.translation(j, kind, &times, &t).unwrap();
        b.rotation(j, kind, &times, &q).unwrap();
        b.scale(j, kind, &times, &s).unwrap();
    }
    (skeleton, b.build())
}

type Pose = (Vec<Vec3>, Vec<Quat>, Vec<Vec3>);

fn sample(
    clip: &Clip,
    context: &mut SamplingContext,
    t: f32,
    backend: Backend,
) -> Result<Pose, String> {
    let n = clip.joints();
    // A recognisable pose underneath: joints without tracks must keep it.
    let (mut tr, mut q, mut s) = (
        vec![Vec3::splat(7.0); n],
        vec![Quat::from_xyzw(0.5, 0.5, 0.5, 0.5); n],
        vec![Vec3::splat(3.0); n],
    );
    SamplingJob::new(clip, context, TrsMut::new(&mut tr, &mut q, &mut s))
        .time(t)
        .wrap(Wrap::Clamp)
        .backend(backend)
        .run()
        .map_err(|e| format!("t = {t}: {e}"))?;
    Ok((tr, q, s))
}

pub fn check_sample(isa: Isa) -> Result<String, String> {
    let mut rng = Rng::new(0x5a3);
    let (mut worst_v, mut worst_q) = (0.0f32, 0.0f32);
    let mut samples = 0;
    // Sizes up to 1000 joints (tracks): every gang width and remainder, and a large clip. The time
    // sequences are short so that the check stays seconds under qemu's emulated CPUs in CI.
    let shapes = sizes()
        .iter()
        .copied()
        .filter(|&n| n <= 1000)
        .flat_map(|n| [(n, Shape::Mixed), (n, Shape::Runs)]);
    for (n, shape) in shapes {
        let (skeleton, clip) = clip(n, shape, &mut rng);
        let forward: Vec<f32> = (0..16).map(|i| -0.1 + i as f32 * 0.05).collect();
        let backward: Vec<f32> = forward.iter().rev().copied().collect();
        let keys: Vec<f32> = (0..12).map(|k| k as f32 * 0.05).collect();
        let random: Vec<f32> = (0..8).map(|_| rng.range(-0.2, 1.2)).collect();
        for times in [&forward, &backward, &keys, &random] {
            let (mut on_isa, mut on_ref) = (SamplingContext::new(), SamplingContext::new());
            for &t in times.iter() {
                let got = sample(&clip, &mut on_isa, t, Backend::Isa(isa))?;
                let want = sample(&clip, &mut on_ref, t, Backend::Reference)?;
                samples += 1;
                for j in 0..clip.joints() {
                    let l = skeleton.level_index(j).unwrap();
                    if !shape.tracked(j) || j >= n {
                        let same =
                            got.0[l] == want.0[l] && got.1[l] == want.1[l] && got.2[l] == want.2[l];
                        if !same {
                            return Err(format!(
                                "{n} joints, t = {t}: joint {j} has no track but changed"
                            ));
                        }
                        continue;
                    }
                    let dv = (got.0[l] - want.0[l])
                        .abs()
                        .max_element()
                        .max((got.2[l] - want.2[l]).abs().max_element());
                    let dq = (glam::Vec4::from(got.1[l]) - glam::Vec4::from(want.1[l]))
                        .abs()
                        .max_element();
                    worst_v = worst_v.max(dv);
                    worst_q = worst_q.max(dq);
                    // NaN fails both comparisons, so it is reported too.
                    let within = dv <= 1e-6 && dq <= 2e-5;
                    if !within {
                        return Err(format!(
                            "{n} joints, joint {j} ({:?}), t = {t}: translation/scale differ by {dv:e} (tolerance 1e-6), rotation by {dq:e} (2e-5)\n  isa: {:?} {:?} {:?}\n  ref: {:?} {:?} {:?}",
                            shape.kind(j), got.0[l], got.1[l], got.2[l], want.0[l], want.1[l], want.2[l]
                        ));
                    }
                }
            }
        }
    }
    Ok(format!(
        "{samples} samples; worst difference {worst_v:e} (vec3), {worst_q:e} (rotation)"
    ))
}

/// The crowd form (`CrowdSamplingJob`, lanes across instances): every instance count of the harness up
/// to 1,000, two clips of one 23-joint skeleton (shapes `Mixed` and `Runs`) given to the instances in
/// runs of five (so runs start inside a block of 16 and cross blocks), each instance at its own time:
/// three frames forward, one at random, and one at random times clamped to the clip (held before the
/// first key and after the last, where the kernel's loads reach the clip's padding). Against the
/// reference crowd job with the tolerance above, and against one `SamplingJob` per instance on the same
/// ISA within 1e-6 (the same formulas, but the single-pose kernel evaluates slerp's polynomial in
/// Estrin's form and the compiler may fuse multiply-adds differently: 1 ulp seen on AVX2 and AVX-512).
/// Joints without a track keep the pose's identity.
pub fn check_crowd_sample(isa: Isa) -> Result<String, String> {
    use ispc_skinning::{CrowdPose, CrowdSamplingContext, CrowdSamplingJob};
    let mut rng = Rng::new(0xc70d);
    let (skeleton, a) = clip(23, Shape::Mixed, &mut rng);
    // Another clip of a chain of 23 joints: the same joint order, so `skeleton` takes it.
    let (_, b) = clip(23, Shape::Runs, &mut rng);
    let (mut worst_v, mut worst_q, mut worst_single, mut compared) =
        (0.0f32, 0.0f32, 0.0f32, 0usize);
    for &n in sizes().iter().filter(|&&n| n <= 1000) {
        let clips: Vec<&Clip> = (0..n)
            .map(|i| if (i / 5) % 2 == 0 { &a } else { &b })
            .collect();
        let (mut on_isa, mut on_ref) = (
            CrowdPose::new(&skeleton, n).unwrap(),
            CrowdPose::new(&skeleton, n).unwrap(),
        );
        let (mut cx_isa, mut cx_ref) = (CrowdSamplingContext::new(), CrowdSamplingContext::new());
        let mut singles: Vec<SamplingContext> = (0..n).map(|_| SamplingContext::new()).collect();
        let offsets: Vec<f32> = (0..n).map(|_| rng.range(-0.1, 0.7)).collect();
        for frame in 0..5 {
            let times: Vec<f32> = if frame < 3 {
                offsets.iter().map(|o| o + frame as f32 * 0.03).collect()
            } else {
                (0..n).map(|_| rng.range(-0.3, 1.2)).collect()
            };
            // The last frame clamps: most instances before the first key or after the last, held
            // there, so the kernel's loads past a held last key reach the clip's padding.
            let wrap = if frame == 4 { Wrap::Clamp } else { Wrap::Loop };
            CrowdSamplingJob::new(&clips, &times, &mut cx_isa, &mut on_isa)
                .wrap(wrap)
                .backend(isa)
                .run()
                .map_err(|e| format!("{n} instances, frame {frame}: {e}"))?;
            CrowdSamplingJob::new(&clips, &times, &mut cx_ref, &mut on_ref)
                .wrap(wrap)
                .backend(Backend::Reference)
                .run()
                .map_err(|e| format!("{n} instances, frame {frame} (reference): {e}"))?;
            for i in 0..n {
                // One SamplingJob per instance on the same ISA, over the identity pose.
                let m = skeleton.len();
                let (mut t, mut q, mut s) = (
                    vec![Vec3::ZERO; m],
                    vec![Quat::IDENTITY; m],
                    vec![Vec3::ONE; m],
                );
                SamplingJob::new(
                    clips[i],
                    &mut singles[i],
                    TrsMut::new(&mut t, &mut q, &mut s),
                )
                .time(times[i])
                .wrap(wrap)
                .backend(isa)
                .run()
                .map_err(|e| format!("{n} instances, instance {i}: {e}"))?;
                for j in 0..m {
                    let l = skeleton.level_index(j).unwrap();
                    let got = on_isa.joint(i, j).unwrap();
                    let want = on_ref.joint(i, j).unwrap();
                    // The same per-lane arithmetic, compiled into another loop: with FMA the
                    // compiler may fuse differently, so the last bits may differ (seen: 1 ulp).
                    let single = (t[l], q[l], s[l]);
                    let ds = (got.0 - single.0)
                        .abs()
                        .max_element()
                        .max((got.2 - single.2).abs().max_element())
                        .max(
                            (glam::Vec4::from(got.1) - glam::Vec4::from(single.1))
                                .abs()
                                .max_element(),
                        );
                    worst_single = worst_single.max(ds);
                    // NaN fails the comparison, so it is reported too.
                    let within = ds <= 1e-6;
                    if !within {
                        return Err(format!(
                            "{n} instances, instance {i}, joint {j}, t = {}: the crowd kernel gave {got:?}, one SamplingJob on {isa} {single:?} (tolerance 1e-6)",
                            times[i]
                        ));
                    }
                    let shape = if (i / 5) % 2 == 0 {
                        Shape::Mixed
                    } else {
                        Shape::Runs
                    };
                    if !shape.tracked(j) && got != (Vec3::ZERO, Quat::IDENTITY, Vec3::ONE) {
                        return Err(format!("{n} instances, instance {i}: joint {j} has no track but changed: {got:?}"));
                    }
                    let dv = (got.0 - want.0)
                        .abs()
                        .max_element()
                        .max((got.2 - want.2).abs().max_element());
                    let dq = (glam::Vec4::from(got.1) - glam::Vec4::from(want.1))
                        .abs()
                        .max_element();
                    worst_v = worst_v.max(dv);
                    worst_q = worst_q.max(dq);
                    compared += 1;
                    if !(dv <= 1e-6 && dq <= 2e-5) {
                        return Err(format!(
                            "{n} instances, instance {i}, joint {j}, t = {}: translation/scale differ from the reference by {dv:e} (tolerance 1e-6), rotation by {dq:e} (2e-5)\n  isa: {got:?}\n  ref: {want:?}",
                            times[i]
                        ));
                    }
                }
            }
        }
    }
    Ok(format!(
        "{compared} joints compared; worst difference {worst_v:e} (vec3), {worst_q:e} (rotation) from the reference, {worst_single:e} from one SamplingJob per instance"
    ))
}
