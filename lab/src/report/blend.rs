//! The blending rows of the report: `blend_2layers` (two normal layers, weights 0.3 and 0.7) and
//! `blend_additive` (the same two layers, the first with per-joint weights, plus one additive layer) on
//! 120 and 1,000 joints, and `crowd_blend` (256 instances of 64 joints, the `blend_additive` layers with
//! a weight per instance), each ISA beside the serial reference in the same round-robin. The poses are
//! `scenes::blend_scene`'s, which the ozz-animation-rs peer blends too under `bench --peers`.

use crate::report::peer::{self, Job, Peer};
use crate::report::row::{backends, push_rows, Row};
use crate::report::timing::{median_ns_per_call, Budget};
use glam::{Quat, Vec3};
use indicatif::ProgressBar;
use ispc_skinning::{
    Backend, BlendLayer, BlendingJob, CrowdBlendLayer, CrowdBlendingJob, Isa, Skeleton, Trs, TrsMut,
};
use scenes::{
    additive_delta_pose, animated_pose, blend_scene, humanoid_parents, upper_body_mask,
    BLEND_WEIGHTS,
};

/// One pose's streams.
struct Pose {
    t: Vec<Vec3>,
    q: Vec<Quat>,
    s: Vec<Vec3>,
}

impl Pose {
    fn from((t, q, s): scenes::Pose) -> Pose {
        Pose { t, q, s }
    }

    fn trs(&self) -> Trs<'_> {
        Trs::new(&self.t, &self.q, &self.s)
    }

    fn zeroed(n: usize) -> Pose {
        Pose {
            t: vec![Vec3::ZERO; n],
            q: vec![Quat::IDENTITY; n],
            s: vec![Vec3::ONE; n],
        }
    }
}

/// Appends the `blend_2layers`, `blend_additive` and `crowd_blend` rows; with a peer, ozz-animation-rs
/// blends the same poses (`scenes::blend_scene`) in the round-robins of the first two.
pub fn rows(
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    progress: &ProgressBar,
    mut peer: Option<&mut Peer>,
) {
    let who = backends(isas);
    let [wa, wb, wd] = BLEND_WEIGHTS;
    for n in [120, 1000] {
        let skeleton = Skeleton::from_parents(&humanoid_parents(n)).expect("valid rig");
        let scene = blend_scene(n);
        let (rest, a, b, d) = (
            Pose::from(scene.rest),
            Pose::from(scene.a),
            Pose::from(scene.b),
            Pose::from(scene.delta),
        );
        let jw = scene.mask;
        for (kernel, additive) in [("blend_2layers", false), ("blend_additive", true)] {
            progress.set_message(format!("{kernel}, {n} joints"));
            let layers = if additive {
                [
                    BlendLayer::new(a.trs(), wa).joint_weights(&jw),
                    BlendLayer::new(b.trs(), wb),
                ]
            } else {
                [BlendLayer::new(a.trs(), wa), BlendLayer::new(b.trs(), wb)]
            };
            let added = [BlendLayer::new(d.trs(), wd)];
            let added: &[BlendLayer<'_>] = if additive { &added } else { &[] };
            let mut outs: Vec<Pose> = who.iter().map(|_| Pose::zeroed(n)).collect();
            let (s, rest, layers) = (&skeleton, &rest, &layers);
            let mut candidates: Vec<Box<dyn FnMut() + '_>> = who
                .iter()
                .zip(outs.iter_mut())
                .map(|((_, backend), out)| {
                    let backend: Backend = *backend;
                    Box::new(move || {
                        BlendingJob::new(
                            s,
                            rest.trs(),
                            TrsMut::new(&mut out.t, &mut out.q, &mut out.s),
                        )
                        .layers(layers)
                        .additive_layers(added)
                        .backend(backend)
                        .run()
                        .expect("valid blend")
                    }) as Box<dyn FnMut()>
                })
                .collect();
            let job = Job {
                kernel,
                size: n,
                influences: None,
                file: None,
            };
            let times = peer::median_ns_per_call(peer.as_deref_mut(), job, budget, &mut candidates);
            drop(candidates);
            push_rows(rows, kernel, &who, &times, n, None);
        }
    }
    crowd_rows(budget, &who, rows, progress);
}

/// 256 instances of a 64-joint rig, one thread.
fn crowd_rows(
    budget: Budget,
    who: &[(String, Backend)],
    rows: &mut Vec<Row>,
    progress: &ProgressBar,
) {
    let (n, instances) = (64, 256);
    progress.set_message(format!("crowd_blend, {instances} x {n}"));
    let skeleton = Skeleton::from_parents(&humanoid_parents(n)).expect("valid rig");
    let rest = Pose::from(animated_pose(n, 0.0, true, 1));
    let many = |time: f32, seed: u64, delta: bool| {
        let mut p = Pose {
            t: Vec::new(),
            q: Vec::new(),
            s: Vec::new(),
        };
        for i in 0..instances {
            let one = Pose::from(if delta {
                additive_delta_pose(n, seed + i as u64)
            } else {
                animated_pose(n, time + 0.01 * i as f32, true, seed)
            });
            p.t.extend(one.t);
            p.q.extend(one.q);
            p.s.extend(one.s);
        }
        p
    };
    let (a, b, d) = (many(0.4, 2, false), many(1.1, 3, false), many(0.0, 4, true));
    let wa: Vec<f32> = (0..instances)
        .map(|i| i as f32 / instances as f32)
        .collect();
    let wb: Vec<f32> = wa.iter().map(|w| 1.0 - w).collect();
    let wd = vec![0.5f32; instances];
    let jw = upper_body_mask(n);
    let layers = [
        CrowdBlendLayer::new(a.trs(), &wa).joint_weights(&jw),
        CrowdBlendLayer::new(b.trs(), &wb),
    ];
    let added = [CrowdBlendLayer::new(d.trs(), &wd)];
    let mut outs: Vec<Pose> = who.iter().map(|_| Pose::zeroed(n * instances)).collect();
    let (s, rest, layers, added) = (&skeleton, &rest, &layers, &added);
    let mut candidates: Vec<Box<dyn FnMut() + '_>> = who
        .iter()
        .zip(outs.iter_mut())
        .map(|((_, backend), out)| {
            let backend: Backend = *backend;
            Box::new(move || {
                CrowdBlendingJob::new(
                    s,
                    instances,
                    rest.trs(),
                    TrsMut::new(&mut out.t, &mut out.q, &mut out.s),
                )
                .layers(layers)
                .additive_layers(added)
                .backend(backend)
                .run()
                .expect("valid crowd blend")
            }) as Box<dyn FnMut()>
        })
        .collect();
    let times = median_ns_per_call(budget, &mut candidates);
    drop(candidates);
    push_rows(rows, "crowd_blend", who, &times, n * instances, None);
}

/// Prints the best ISA of each blending row against the reference.
pub fn print_summary(rows: &[Row]) {
    for kernel in ["blend_2layers", "blend_additive", "crowd_blend"] {
        let mut sizes: Vec<usize> = rows
            .iter()
            .filter(|r| r.kernel == kernel)
            .map(|r| r.size)
            .collect();
        sizes.dedup();
        for size in sizes {
            let best = rows
                .iter()
                .filter(|r| {
                    r.kernel == kernel && r.size == size && Isa::from_name(&r.isa).is_some()
                })
                .min_by(|a, b| a.ns_per_item.total_cmp(&b.ns_per_item));
            if let Some(b) = best {
                println!(
                    "{kernel}, {size} joints: best ISA {} {:.2} ns/joint, {:.2}x the reference ({:.2} ns)",
                    b.isa,
                    b.ns_per_item,
                    b.speedup(),
                    b.reference_ns_per_item
                );
            }
        }
    }
    println!();
}
