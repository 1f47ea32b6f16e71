//! The `blend_2layers` and `blend_additive` workloads on ozz-animation-rs's BlendingJob: the lab's
//! blending poses (`scenes::blend_scene`), the rest pose in the skeleton (ozz takes its fallback from
//! there), two normal layers of weights 0.3 and 0.7 and, for `blend_additive`, per-joint weights on the
//! first layer and one additive layer of weight 0.5. Checked at setup against the library's serial
//! reference on the same poses.

use crate::archive;
use crate::workload::Workload;
use crate::workloads::{ozz_skeleton, soa};
use glam30 as g;
use ispc_skinning::{Backend, BlendLayer, BlendingJob as OurJob, Skeleton, Trs, TrsMut};
use ozz_animation_rs::{BlendingJob, BlendingLayer, Skeleton as OzzSkeleton, SoaTransform};
use scenes::{blend_scene, Pose, BLEND_WEIGHTS};
use std::rc::Rc;

/// The job is built once and kept, as an application keeps one per character: it owns its buffers
/// (`Vec`, so no `RefCell` borrow per call) and its context (the per-joint accumulated weights), so a
/// call allocates nothing and measures the blend alone.
type Job = BlendingJob<Rc<OzzSkeleton>, Vec<SoaTransform>, Vec<SoaTransform>>;

struct Blend(Job);

impl Workload for Blend {
    fn run(&mut self) {
        self.0
            .run()
            .expect("the blending job was validated at setup");
    }
}

fn to_soa((t, q, s): &Pose) -> Vec<SoaTransform> {
    soa(t, q, s)
}

fn trs((t, q, s): &Pose) -> Trs<'_> {
    Trs::new(t, q, s)
}

/// `blend_2layers` or `blend_additive` on `n` joints, checked against the library's reference.
///
/// # Errors
/// An unknown kernel, a rig ozz cannot hold, or a pose that disagrees with the reference.
pub fn blending(kernel: &str, n: usize) -> Result<Box<dyn Workload>, String> {
    let additive = match kernel {
        "blend_2layers" => false,
        "blend_additive" => true,
        _ => return Err(format!("unknown blending kernel {kernel}")),
    };
    if n == 0 || n > i16::MAX as usize {
        return Err(format!("{kernel}: {n} joints is outside ozz's range"));
    }
    let parents = scenes::humanoid_parents(n);
    let skeleton = Skeleton::from_parents(&parents).map_err(|e| format!("reference rig: {e}"))?;
    let scene = blend_scene(n);
    let [wa, wb, wd] = BLEND_WEIGHTS;
    // The library's poses are in the skeleton's level order, so ozz's skeleton is built in that order.
    let (rt, rq, rs) = &scene.rest;
    let rest: Vec<archive::Trs> = (0..n)
        .map(|j| (rt[j].to_array(), rq[j].to_array(), rs[j].to_array()))
        .collect();
    let ozz = Rc::new(ozz_skeleton(skeleton.level_parents(), &rest)?);

    let mut job = Job::default();
    job.set_skeleton(ozz.clone());
    job.set_output(vec![SoaTransform::default(); ozz.num_soa_joints()]);
    let mut first = BlendingLayer::with_weight(to_soa(&scene.a), wa);
    if additive {
        // ozz's joint weights are SoA too: one Vec4 per block of four joints, 0 past the last joint.
        first.joint_weights = (0..n.div_ceil(4))
            .map(|b| {
                g::Vec4::from_array(std::array::from_fn(|i| {
                    scene.mask.get(4 * b + i).copied().unwrap_or(0.0)
                }))
            })
            .collect();
    }
    job.layers_mut().push(first);
    job.layers_mut()
        .push(BlendingLayer::with_weight(to_soa(&scene.b), wb));
    if additive {
        job.additive_layers_mut()
            .push(BlendingLayer::with_weight(to_soa(&scene.delta), wd));
    }
    if !job.validate() {
        return Err(format!("{kernel} {n}: ozz-rs rejects the blending job"));
    }
    let mut w = Blend(job);
    w.run();

    // The library's serial reference on the same poses (the normal layers; the additive one below).
    let a = BlendLayer::new(trs(&scene.a), wa);
    let layers = [
        if additive {
            a.joint_weights(&scene.mask)
        } else {
            a
        },
        BlendLayer::new(trs(&scene.b), wb),
    ];
    let (mut t, mut q, mut s) = (
        vec![glam::Vec3::ZERO; n],
        vec![glam::Quat::IDENTITY; n],
        vec![glam::Vec3::ONE; n],
    );
    OurJob::new(
        &skeleton,
        trs(&scene.rest),
        TrsMut::new(&mut t, &mut q, &mut s),
    )
    .layers(&layers)
    .backend(Backend::Reference)
    .run()
    .map_err(|e| format!("reference blend: {e}"))?;
    if additive {
        // ozz-animation-rs 0.11 multiplies the additive rotation on the right (`out * delta`: in the
        // joint's own frame), where ozz-animation's C++ and this library multiply on the left
        // (`delta * out`: in the parent's frame). Both are one quaternion product per joint, so the
        // timings compare the same work; the check applies the additive layer here in ozz-rs's order,
        // on the library's blend of the normal layers, with the same equation otherwise.
        let (dt, dq, ds) = &scene.delta;
        for j in 0..n {
            t[j] += wd * dt[j];
            let d = if dq[j].w < 0.0 { -dq[j] } else { dq[j] };
            let i = glam::Quat::from_xyzw(wd * d.x, wd * d.y, wd * d.z, (d.w - 1.0) * wd + 1.0);
            q[j] *= i.normalize();
            s[j] *= (1.0 - wd) + wd * ds[j];
        }
    }

    let out = w.0.output().ok_or("the job has its output")?;
    let err = (0..n)
        .map(|j| {
            let o = &out[j / 4];
            let (ot, oq, os) = (
                o.translation.vec3(j % 4),
                o.rotation.quat(j % 4),
                o.scale.vec3(j % 4),
            );
            let d3 = |a: g::Vec3, b: glam::Vec3| (a - g::Vec3::from_array(b.to_array())).length();
            // Both sides normalize the same sum, so the quaternions agree in sign as well.
            let dq = (g::Vec4::from(oq) - g::Vec4::from_array(q[j].to_array())).length();
            // f32::max drops a NaN, so a NaN anywhere counts as an infinite difference.
            [d3(ot, t[j]), d3(os, s[j]), dq]
                .into_iter()
                .map(|d| if d.is_nan() { f32::INFINITY } else { d })
                .fold(0.0f32, f32::max)
        })
        .fold(0.0f32, f32::max);
    // Translations are within 0.3 units and scales near 1; both sides compute in f32 with different
    // operation orders (ISPC-style fused multiply-adds are not in either).
    if err >= 1e-5 {
        return Err(format!(
            "{kernel} {n}: ozz-rs output differs from the reference by {err}"
        ));
    }
    Ok(Box::new(w))
}
