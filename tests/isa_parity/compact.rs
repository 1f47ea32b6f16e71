//! Compact sampling: `CompactSamplingJob` on each ISA (ispc/det/compact.ispc) against the serial
//! decoder (`Backend::Reference`), on clips whose joints mix every kind of compact track: animated and
//! constant translations, rotations and scales, linear and step, rotations rebuilding each of the four
//! components, and joints without tracks, over frames that cross 16-frame segments; besides, a clip of
//! one frame, one whose keys are not on one grid (stored frame times) and one whose every track is
//! constant. Sampled before the first frame, on frames, between them, after the last, and looped.
//!
//! Tolerance: none. The kernel is built without fused multiply-adds and computes the serial decoder's
//! operations in its order (ispc/det/compact.ispc), so every value must have the same bits, and joints
//! without a track must keep the bits they had.

use crate::common::Rng;
use crate::harness::sizes;
use glam::{Quat, Vec3};
use ispc_skinning::{
    Backend, Clip, CompactClip, CompactContext, CompactSamplingJob, Compression, Interpolation,
    Isa, Skeleton, Trs, TrsMut, Wrap,
};

type Pose = (Vec<Vec3>, Vec<Quat>, Vec<Vec3>);

/// A clip over `n` joints in a tree four wide (joint `j`'s parent is `(j - 1) / 4`, so level order is
/// joint order and the depth is a handful: the compressor's chain walks stay short): joint `j` has an animated (j % 3 == 0), constant (1) or no (2)
/// translation; a rotation unless j % 5 == 4, constant where j % 7 == 3, about an axis and by angles
/// that make every component the largest somewhere; an animated scale where j % 4 == 1; step keys
/// where j % 6 == 2. Keys at `times` (the size cases: 40 at 30 per second, three segments of
/// frames); `still` holds every track at its first value (every track constant).
fn clip(n: usize, times: &[f32], still: bool, rng: &mut Rng) -> (Skeleton, Clip, Pose) {
    let parents: Vec<Option<usize>> = (0..n.max(1))
        .map(|j| j.checked_sub(1).map(|p| p / 4))
        .collect();
    let skeleton = Skeleton::from_parents(&parents).unwrap();
    let keys = times.len();
    // Key k's step along each track: 0 for a still clip.
    let at = |k: usize| if still { 0.0 } else { k as f32 };
    let mut b = Clip::builder(&skeleton);
    for j in 0..n {
        let kind = if j % 6 == 2 {
            Interpolation::Step
        } else {
            Interpolation::Linear
        };
        let base = Vec3::new(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        );
        match j % 3 {
            0 => {
                let t: Vec<Vec3> = (0..keys)
                    .map(|k| base + Vec3::new((at(k) * 0.2).sin(), 0.1 * at(k), 0.3) * 0.2)
                    .collect();
                b.translation(j, kind, times, &t).unwrap();
            }
            1 => {
                b.translation(j, kind, times, &vec![base; keys]).unwrap();
            }
            _ => {}
        }
        if j % 5 != 4 {
            let axis = Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            )
            .try_normalize()
            .unwrap_or(Vec3::Y);
            let start = rng.range(-3.0, 3.0);
            let q: Vec<Quat> = (0..keys)
                .map(|k| {
                    let angle = if j % 7 == 3 {
                        start
                    } else {
                        start + 0.15 * at(k)
                    };
                    Quat::from_axis_angle(axis, angle)
                })
                .collect();
            b.rotation(j, kind, times, &q).unwrap();
        }
        if j % 4 == 1 {
            let s: Vec<Vec3> = (0..keys)
                .map(|k| Vec3::splat(1.0 + 0.01 * at(k)) + base * 0.1)
                .collect();
            b.scale(j, kind, times, &s).unwrap();
        }
    }
    let m = n.max(1);
    let rest = (
        vec![Vec3::ZERO; m],
        vec![Quat::IDENTITY; m],
        vec![Vec3::ONE; m],
    );
    (skeleton, b.build(), rest)
}

fn sample(clip: &CompactClip, t: f32, wrap: Wrap, backend: Backend) -> Result<Pose, String> {
    sample_with(clip, t, wrap, backend, None)
}

fn sample_with(
    clip: &CompactClip,
    t: f32,
    wrap: Wrap,
    backend: Backend,
    context: Option<&mut CompactContext>,
) -> Result<Pose, String> {
    let n = clip.joints();
    // A recognisable pose underneath: joints without tracks must keep it.
    let (mut tr, mut q, mut s) = (
        vec![Vec3::splat(7.0); n],
        vec![Quat::from_xyzw(0.5, 0.5, 0.5, 0.5); n],
        vec![Vec3::splat(3.0); n],
    );
    let mut job = CompactSamplingJob::new(clip, TrsMut::new(&mut tr, &mut q, &mut s))
        .time(t)
        .wrap(wrap)
        .backend(backend);
    job.context = context;
    job.run().map_err(|e| format!("t = {t}: {e}"))?;
    Ok((tr, q, s))
}

fn bits(p: &Pose) -> Vec<u32> {
    let mut out = Vec::new();
    for v in &p.0 {
        out.extend(v.to_array().map(f32::to_bits));
    }
    for q in &p.1 {
        out.extend(q.to_array().map(f32::to_bits));
    }
    for v in &p.2 {
        out.extend(v.to_array().map(f32::to_bits));
    }
    out
}

/// One compressed clip per harness size, with the times to sample it, built once for every ISA's test:
/// the compressor, not the sampling, is most of this check's time.
struct Case {
    name: String,
    clip: CompactClip,
    times: Vec<f32>,
}

fn cases() -> Result<&'static [Case], String> {
    static CASES: std::sync::OnceLock<Result<Vec<Case>, String>> = std::sync::OnceLock::new();
    let built = CASES.get_or_init(|| {
        let mut rng = Rng::new(0xc0c0);
        // Sizes up to 1000 joints: every gang width and remainder. The large size (65,536 joints) is
        // left out: compressing it measures every joint at every frame (minutes), and the kernel's
        // loops are the same at 1,000. Under qemu (CI sets ISPC_SKINNING_PARITY_LARGE there) the
        // compressor, serial and emulated, is most of the cost: up to 65 joints, every gang width and
        // remainder still.
        let most = if std::env::var_os("ISPC_SKINNING_PARITY_LARGE").is_some() {
            65
        } else {
            1000
        };
        let grid: Vec<f32> = (0..40).map(|k| k as f32 / 30.0).collect();
        // Besides the sizes: a clip of one frame (one key per track, so its tracks are constant: it
        // checks the frame lookup, not animated groups, which the sizes cover with every remainder),
        // one whose keys are not on one grid (its frames are its key times, stored, and found by a
        // binary search), and one whose every track is constant (no animated group, no stream).
        let uneven = [0.0, 0.05, 0.3, 0.32, 0.7, 0.71, 1.2, 1.25];
        // Each shape with what its compressed clip must be.
        type Shape<'a> = (String, usize, &'a [f32], bool, fn(&CompactClip) -> bool);
        let shapes = sizes()
            .iter()
            .copied()
            .filter(|&n| n <= most)
            .map(|n| -> Shape<'_> { (format!("{n} joints"), n, &grid[..], false, |_| true) })
            .chain([
                (
                    "one frame, 13 joints".to_string(),
                    13,
                    &[0.25][..],
                    false,
                    (|c| c.frames() == 1) as fn(&CompactClip) -> bool,
                ),
                (
                    "uneven keys, 13 joints".to_string(),
                    13,
                    &uneven[..],
                    false,
                    |c| c.sample_rate().is_none(),
                ),
                (
                    "constant tracks, 13 joints".to_string(),
                    13,
                    &grid[..],
                    true,
                    |c| c.constant_tracks() == c.tracks(),
                ),
            ]);
        let mut cases = Vec::new();
        for (name, n, keys, still, shaped) in shapes {
            let (skeleton, raw, rest) = clip(n, keys, still, &mut rng);
            let trs = Trs::new(&rest.0, &rest.1, &rest.2);
            let compact = raw
                .compress(&skeleton, trs, &Compression::default())
                .map_err(|e| format!("{name}: {e}"))?;
            if !shaped(&compact) {
                return Err(format!("{name}: the compressed clip is not of that shape"));
            }
            let end = compact.end();
            let mut times = vec![
                -0.5,
                0.0,
                end,
                end + 1.0,
                1.0 / 30.0,
                0.5 / 30.0,
                15.5 / 30.0,
                16.0 / 30.0,
                0.31,
            ];
            times.extend((0..24).map(|_| rng.range(-0.2, end + 0.2)));
            cases.push(Case {
                name,
                clip: compact,
                times,
            });
        }
        Ok(cases)
    });
    built.as_ref().map(Vec::as_slice).map_err(Clone::clone)
}

pub fn check_compact_sample(isa: Isa) -> Result<String, String> {
    let mut samples = 0;
    for case in cases()? {
        let (n, compact) = (&case.name, &case.clip);
        for &t in &case.times {
            for wrap in [Wrap::Clamp, Wrap::Loop] {
                let want = sample(compact, t, wrap, Backend::Reference)?;
                let got = sample(compact, t, wrap, Backend::Isa(isa))?;
                let (w, g) = (bits(&want), bits(&got));
                if let Some(i) = (0..w.len()).find(|&i| w[i] != g[i]) {
                    return Err(format!(
                        "{n}, t = {t}, {wrap:?}: float {i} of the pose is {} on {isa}, {} on the serial decoder",
                        f32::from_bits(g[i]),
                        f32::from_bits(w[i])
                    ));
                }
                samples += 1;
            }
        }
        // With a context (compact_decode, then compact_interpolate from the kept frames): played
        // forward and backward at 1/60 s and 1/90 s per call (the same frames, one of them, or none
        // kept), then the random times, on one context.
        let end = compact.end();
        let mut played: Vec<f32> = Vec::new();
        for step in [1.0 / 60.0, 1.0 / 90.0] {
            let calls = (end / step) as usize + 2;
            played.extend((0..calls).map(|k| k as f32 * step));
            played.extend((0..calls).map(|k| end - k as f32 * step));
        }
        played.extend(&case.times);
        let mut context = CompactContext::new();
        for &t in &played {
            let want = sample(compact, t, Wrap::Clamp, Backend::Reference)?;
            let got = sample_with(
                compact,
                t,
                Wrap::Clamp,
                Backend::Isa(isa),
                Some(&mut context),
            )?;
            let (w, g) = (bits(&want), bits(&got));
            if let Some(i) = (0..w.len()).find(|&i| w[i] != g[i]) {
                return Err(format!(
                    "{n}, t = {t}, with a context: float {i} of the pose is {} on {isa}, {} on the serial decoder",
                    f32::from_bits(g[i]),
                    f32::from_bits(w[i])
                ));
            }
            samples += 1;
        }
        // Each frame decoded about once per pass: 4 passes over the frames, 2 per random time.
        let most = 4 * compact.frames() as u64 + 8 + 2 * case.times.len() as u64;
        if compact.frames() > 1 && (context.decodes() == 0 || context.decodes() > most) {
            return Err(format!(
                "{n}: the context decoded {} frames over {} calls (at most {most} expected)",
                context.decodes(),
                played.len()
            ));
        }
    }
    Ok(format!("{samples} poses, the same bits"))
}
