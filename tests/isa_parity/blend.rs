//! Blending checks: the ISPC kernel against the serial reference, with 1 to 4 normal layers, with and
//! without per-joint weights (zeros included), weights low enough to bring in the rest pose, and 0 to 2
//! additive layers; then the crowd job against one job per instance.
//!
//! Tolerance. Both sides compute the same operations in the same order; ISPC may fuse a multiply-add,
//! which changes each accumulation step by at most one rounding of its product. Per joint, with L normal
//! and A additive layers, W the total weight (the threshold if below it) and k = L + A + 4:
//! - translation: `8 k eps (sum_i w_i |t_i| / W + sum_a w_a |dt_a| + |t|)`, the rounding of each term
//!   of the weighted sum, the division and the additive sums;
//! - rotation: `24 k eps` per component. The data keeps every layer's rotation within 1 radian of a
//!   common one (each randomly negated, so the hemisphere correction runs), so |Q| is at least a third of
//!   sum_i w_i |q_i| and the normalization amplifies no rounding by more than 3; the additive products
//!   and nlerps add a few eps each. It also keeps every hemisphere dot product far from 0, so both sides
//!   take the same sign (a sign flip on a dot of 1e-7 would be a legitimate difference, not an error);
//! - scale: `8 k eps (M + |s|)`, with M the blended magnitude `sum_i w_i |s_i| / W` times the additive
//!   factors' magnitudes `prod_a (|1 - w_a| + w_a |ds_a|)`.
//!
//! The weight sums themselves are plain additions of identical products, so the threshold test takes
//! the same branch on both sides. Output slices start at odd offsets and carry guard entries on both
//! sides, which must come back untouched.

use crate::common::Rng;
use crate::harness::{sizes, OFFSETS};
use glam::{Quat, Vec3};
use ispc_skinning::{
    Backend, BlendLayer, BlendingJob, CrowdBlendLayer, CrowdBlendingJob, Isa, Skeleton, Threads,
    Trs, TrsMut,
};

/// One pose: translations, rotations, scales.
struct Pose {
    t: Vec<Vec3>,
    q: Vec<Quat>,
    s: Vec<Vec3>,
}

impl Pose {
    fn trs(&self) -> Trs<'_> {
        Trs::new(&self.t, &self.q, &self.s)
    }
}

/// A pose near the per-joint base rotations: each rotation within 0.5 rad of its base, randomly
/// negated, 0.95 to 1.05 long. `delta` makes small translations and scales near 1 (additive deltas).
fn pose(rng: &mut Rng, base: &[Quat], delta: bool) -> Pose {
    let n = base.len();
    let mut p = Pose {
        t: Vec::with_capacity(n),
        q: Vec::with_capacity(n),
        s: Vec::with_capacity(n),
    };
    for b in base {
        let axis = Vec3::new(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(0.1, 1.0),
        )
        .normalize();
        let mut q = *b * Quat::from_axis_angle(axis, rng.range(-0.5, 0.5));
        if rng.below(2) == 0 {
            q = -q;
        }
        p.q.push(q * rng.range(0.95, 1.05));
        if delta {
            p.t.push(Vec3::new(
                rng.range(-0.2, 0.2),
                rng.range(-0.2, 0.2),
                rng.range(-0.2, 0.2),
            ));
            p.s.push(Vec3::new(
                rng.range(0.8, 1.25),
                rng.range(0.8, 1.25),
                rng.range(0.8, 1.25),
            ));
        } else {
            p.t.push(Vec3::new(
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
            ));
            p.s.push(Vec3::new(
                rng.range(0.5, 2.0),
                rng.range(0.5, 2.0),
                rng.range(0.5, 2.0),
            ));
        }
    }
    p
}

/// Per-joint weights in [0, 1.2], a fifth of them exactly 0.
fn joint_weights(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| {
            if rng.below(5) == 0 {
                0.0
            } else {
                rng.range(0.0, 1.2)
            }
        })
        .collect()
}

/// A case: the layers' poses, weights and joint weights.
struct Case {
    rest: Pose,
    layers: Vec<(Pose, f32, Option<Vec<f32>>)>,
    additive: Vec<(Pose, f32, Option<Vec<f32>>)>,
}

impl Case {
    fn new(n: usize, layers: usize, additive: usize, per_joint: bool, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let base: Vec<Quat> = (0..n)
            .map(|_| {
                Quat::from_euler(
                    glam::EulerRot::XYZ,
                    rng.range(-3.0, 3.0),
                    rng.range(-1.5, 1.5),
                    rng.range(-3.0, 3.0),
                )
            })
            .collect();
        let identity = vec![Quat::IDENTITY; n];
        let rest = pose(&mut rng, &base, false);
        let make = |count: usize, delta: bool, rng: &mut Rng| {
            (0..count)
                .map(|i| {
                    let p = pose(rng, if delta { &identity } else { &base }, delta);
                    // Some layers light enough (alone or together) to fall under the threshold.
                    let w = match (i + seed as usize) % 4 {
                        0 => rng.range(0.01, 0.06),
                        1 => 0.0,
                        _ => rng.range(0.2, 1.5),
                    };
                    let jw = (per_joint && i % 2 == 0).then(|| joint_weights(rng, n));
                    (p, w, jw)
                })
                .collect::<Vec<_>>()
        };
        let layers = make(layers, false, &mut rng);
        let additive = make(additive, true, &mut rng);
        Case {
            rest,
            layers,
            additive,
        }
    }

    fn blend_layers(list: &[(Pose, f32, Option<Vec<f32>>)]) -> Vec<BlendLayer<'_>> {
        list.iter()
            .map(|(p, w, jw)| BlendLayer {
                pose: p.trs(),
                weight: *w,
                joint_weights: jw.as_deref(),
            })
            .collect()
    }

    /// The tolerances (translation, rotation, scale) of joint j; see the file comment.
    fn tolerance(&self, j: usize, threshold: f32, out: (Vec3, Quat, Vec3)) -> (f32, f32, f32) {
        let weight = |(_, w, jw): &(Pose, f32, Option<Vec<f32>>)| match jw {
            Some(jw) => *w * jw[j],
            None => *w,
        };
        let k = (self.layers.len() + self.additive.len() + 4) as f32;
        let eps = f32::EPSILON;
        let total: f32 = self.layers.iter().map(weight).sum();
        let rest_w = (threshold - total).max(0.0);
        let w = total.max(threshold);
        let mut mt = rest_w * self.rest.t[j].abs().max_element() / w;
        let mut ms = rest_w * self.rest.s[j].abs().max_element() / w;
        for l in &self.layers {
            mt += weight(l) * l.0.t[j].abs().max_element() / w;
            ms += weight(l) * l.0.s[j].abs().max_element() / w;
        }
        for a in &self.additive {
            let wa = weight(a);
            mt += wa * a.0.t[j].abs().max_element();
            ms *= (1.0 - wa).abs() + wa * a.0.s[j].abs().max_element();
        }
        (
            8.0 * k * eps * (mt + out.0.abs().max_element()),
            24.0 * k * eps,
            8.0 * k * eps * (ms + out.2.abs().max_element()),
        )
    }
}

const GUARD: usize = 2;

/// Runs the single job on `backend` into outputs that start at `offset` inside guarded buffers.
fn run_job(
    skeleton: &Skeleton,
    case: &Case,
    threshold: f32,
    backend: Backend,
    offset: usize,
) -> Result<Pose, String> {
    let n = skeleton.len();
    let len = offset + n + GUARD;
    let sentinel = Vec3::splat(-7.5);
    let (mut t, mut q, mut s) = (
        vec![sentinel; len],
        vec![Quat::from_xyzw(-7.5, -7.5, -7.5, -7.5); len],
        vec![sentinel; len],
    );
    let (layers, additive) = (
        Case::blend_layers(&case.layers),
        Case::blend_layers(&case.additive),
    );
    let r = offset..offset + n;
    let out = TrsMut::new(&mut t[r.clone()], &mut q[r.clone()], &mut s[r.clone()]);
    BlendingJob::new(skeleton, case.rest.trs(), out)
        .layers(&layers)
        .additive_layers(&additive)
        .threshold(threshold)
        .backend(backend)
        .run()
        .map_err(|e| e.to_string())?;
    let guards_ok = (0..len).filter(|i| !r.contains(i)).all(|i| {
        t[i] == sentinel && s[i] == sentinel && q[i] == Quat::from_xyzw(-7.5, -7.5, -7.5, -7.5)
    });
    if !guards_ok {
        return Err(format!("{backend:?} wrote outside its output slices"));
    }
    Ok(Pose {
        t: t[r.clone()].to_vec(),
        q: q[r.clone()].to_vec(),
        s: s[r].to_vec(),
    })
}

fn compare(ctx: &str, case: &Case, threshold: f32, got: &Pose, want: &Pose) -> Result<(), String> {
    for j in 0..want.t.len() {
        let (tt, tq, ts) = case.tolerance(j, threshold, (want.t[j], want.q[j], want.s[j]));
        let dt = (got.t[j] - want.t[j]).abs().max_element();
        let dq = (glam::Vec4::from(got.q[j]) - glam::Vec4::from(want.q[j]))
            .abs()
            .max_element();
        let ds = (got.s[j] - want.s[j]).abs().max_element();
        // `d <= tol` is false for a NaN, so a NaN fails.
        let within = dt <= tt && dq <= tq && ds <= ts;
        if !within {
            return Err(format!(
                "{ctx}: joint {j}: ispc ({}, {}, {}) reference ({}, {}, {}); |diff| t {dt} (tol {tt}), q {dq} (tol {tq}), s {ds} (tol {ts})",
                got.t[j], got.q[j], got.s[j], want.t[j], want.q[j], want.s[j]
            ));
        }
    }
    Ok(())
}

/// The single job on one ISA against the reference: every size, 1 to 4 layers, with and without joint
/// weights, 0 to 2 additive layers, at odd output offsets.
pub fn check_blend(isa: Isa) -> Result<String, String> {
    let mut cases = 0;
    for (si, &n) in sizes().iter().enumerate() {
        // A skeleton of n joints (a chain: blending ignores the hierarchy); an empty one cannot exist,
        // so size 0 is covered by the crowd check's zero instances.
        if n == 0 {
            continue;
        }
        let skeleton = Skeleton::from_parents(
            &(0..n)
                .map(|j| j.checked_sub(1))
                .collect::<Vec<Option<usize>>>(),
        )
        .map_err(|e| e.to_string())?;
        let big = n > 1000;
        for layers in 1..=4 {
            for additive in 0..=2 {
                for per_joint in [false, true] {
                    if big && (layers + additive) % 2 == 1 {
                        continue; // the largest size on half the configurations keeps the run short
                    }
                    let seed = (si * 100 + layers * 10 + additive * 2 + per_joint as usize) as u64;
                    let case = Case::new(n, layers, additive, per_joint, seed);
                    let threshold = if seed % 3 == 0 { 0.5 } else { 0.1 };
                    let offset = OFFSETS[cases % OFFSETS.len()];
                    let want = run_job(&skeleton, &case, threshold, Backend::Reference, 0)?;
                    let got = run_job(&skeleton, &case, threshold, isa.into(), offset)?;
                    let ctx = format!(
                        "blend {isa} n={n} layers={layers} additive={additive} per_joint={per_joint} threshold={threshold} offset={offset}"
                    );
                    compare(&ctx, &case, threshold, &got, &want)?;
                    cases += 1;
                }
            }
        }
    }
    // No layers at all: the rest pose (normalized) on every joint.
    let skeleton = Skeleton::from_parents(&[None, Some(0), Some(1), Some(1), Some(0)])
        .map_err(|e| e.to_string())?;
    let mut case = Case::new(5, 0, 1, false, 99);
    case.additive.clear();
    let want = run_job(&skeleton, &case, 0.1, Backend::Reference, 0)?;
    let got = run_job(&skeleton, &case, 0.1, isa.into(), 1)?;
    compare(&format!("blend {isa} no layers"), &case, 0.1, &got, &want)?;
    Ok(format!("{} cases", cases + 1))
}

/// The crowd job: on one ISA, with one thread and with rayon's pool, bit-identical to one single job
/// per instance on the same ISA; and with the reference backend, to the reference.
pub fn check_crowd_blend(isa: Isa) -> Result<String, String> {
    let joints = 23;
    let skeleton = Skeleton::from_parents(
        &(0..joints)
            .map(|j: usize| j.checked_sub(1).map(|p| p / 2))
            .collect::<Vec<Option<usize>>>(),
    )
    .map_err(|e| e.to_string())?;
    let mut checked = 0;
    for instances in [0, 1, 5, 17] {
        let cases: Vec<Case> = (0..instances)
            .map(|i| Case::new(joints, 2, 1, true, 500 + i as u64))
            .collect();
        // The crowd's layers: case i's layer k is instance i of crowd layer k. Joint weights are shared,
        // so every instance takes instance 0's (or none when there are no instances).
        let flat = |pick: &dyn Fn(&Case) -> &Pose| Pose {
            t: cases.iter().flat_map(|c| pick(c).t.clone()).collect(),
            q: cases.iter().flat_map(|c| pick(c).q.clone()).collect(),
            s: cases.iter().flat_map(|c| pick(c).s.clone()).collect(),
        };
        let shared = Case::new(joints, 2, 1, true, 499);
        let (p0, p1, a0) = (
            flat(&|c| &c.layers[0].0),
            flat(&|c| &c.layers[1].0),
            flat(&|c| &c.additive[0].0),
        );
        let w = |k: usize, add: bool| -> Vec<f32> {
            cases
                .iter()
                .map(|c| if add { c.additive[k].1 } else { c.layers[k].1 })
                .collect()
        };
        let (w0, w1, wa) = (w(0, false), w(1, false), w(0, true));
        let jw = shared.layers[0].2.clone();
        let mut layer0 = CrowdBlendLayer::new(p0.trs(), &w0);
        if let Some(jw) = jw.as_deref() {
            layer0 = layer0.joint_weights(jw);
        }
        let layers = [layer0, CrowdBlendLayer::new(p1.trs(), &w1)];
        let additive = [CrowdBlendLayer::new(a0.trs(), &wa)];
        for (backend, threads) in [
            (Backend::Isa(isa), Threads::One),
            (Backend::Isa(isa), Threads::All),
            (Backend::Reference, Threads::All),
        ] {
            let total = instances * joints;
            let (mut t, mut q, mut s) = (
                vec![Vec3::NAN; total],
                vec![Quat::from_xyzw(f32::NAN, 0.0, 0.0, 0.0); total],
                vec![Vec3::NAN; total],
            );
            CrowdBlendingJob::new(
                &skeleton,
                instances,
                shared.rest.trs(),
                TrsMut::new(&mut t, &mut q, &mut s),
            )
            .layers(&layers)
            .additive_layers(&additive)
            .backend(backend)
            .threads(threads)
            .run()
            .map_err(|e| e.to_string())?;
            for (i, c) in cases.iter().enumerate() {
                // The same instance through the single job.
                let mut single = Case {
                    rest: Pose {
                        t: shared.rest.t.clone(),
                        q: shared.rest.q.clone(),
                        s: shared.rest.s.clone(),
                    },
                    layers: Vec::new(),
                    additive: Vec::new(),
                };
                let copy = |p: &Pose| Pose {
                    t: p.t.clone(),
                    q: p.q.clone(),
                    s: p.s.clone(),
                };
                single
                    .layers
                    .push((copy(&c.layers[0].0), c.layers[0].1, jw.clone()));
                single
                    .layers
                    .push((copy(&c.layers[1].0), c.layers[1].1, None));
                single
                    .additive
                    .push((copy(&c.additive[0].0), c.additive[0].1, None));
                let want = run_job(&skeleton, &single, 0.1, backend, 0)?;
                let r = i * joints..(i + 1) * joints;
                let same = t[r.clone()] == want.t[..]
                    && q[r.clone()] == want.q[..]
                    && s[r.clone()] == want.s[..];
                if !same {
                    return Err(format!(
                        "crowd blend {backend:?} {threads:?} instances={instances}: instance {i} differs from the single job"
                    ));
                }
            }
            checked += 1;
        }
    }
    Ok(format!("{checked} crowd runs"))
}
