//! Blending of local poses: the serial twin of `ispc/blend.ispc` (the rules are in the
//! [`BlendingJob`](crate::BlendingJob) docs).

use crate::layout::blend::BlendLayer;
use crate::layout::trs::{Trs, TrsMut};
use glam::{Quat, Vec3, Vec4};

/// Blends `layers`, falls back on `rest` where a joint's total weight is below `threshold`, then applies
/// the `additive` layers, joint by joint. Processes as many joints as the shortest stream holds (the
/// checked entry point, [`BlendingJob`](crate::BlendingJob), requires them all equal).
pub fn blend(
    layers: &[BlendLayer<'_>],
    additive: &[BlendLayer<'_>],
    rest: Trs<'_>,
    threshold: f32,
    out: TrsMut<'_>,
) {
    let n = joints(layers.iter().chain(additive), rest, &out);
    for j in 0..n {
        let (t, q, s) = blend_joint(layers, additive, rest, threshold, j);
        out.translations[j] = t;
        out.rotations[j] = q;
        out.scales[j] = s;
    }
}

fn joints<'a>(
    layers: impl Iterator<Item = &'a BlendLayer<'a>>,
    rest: Trs<'_>,
    out: &TrsMut<'_>,
) -> usize {
    let lens = |t: &Trs<'_>| {
        t.translations
            .len()
            .min(t.rotations.len())
            .min(t.scales.len())
    };
    let mut n = lens(&rest)
        .min(out.translations.len())
        .min(out.rotations.len())
        .min(out.scales.len());
    for l in layers {
        n = n.min(lens(&l.pose));
        if let Some(jw) = l.joint_weights {
            n = n.min(jw.len());
        }
    }
    n
}

/// The running weighted sums of one joint.
struct Sums {
    t: Vec3,
    q: Vec4,
    s: Vec3,
    weight: f32,
}

impl Sums {
    /// Adds pose `j` of `pose` with weight `w`; its quaternion is negated when it points away from the
    /// sum so far (hemisphere correction, as ozz-animation does).
    fn add(&mut self, pose: &Trs<'_>, j: usize, w: f32) {
        let p = pose.rotations[j];
        let q = Vec4::new(p.x, p.y, p.z, p.w);
        let d = self.q.x * q.x + self.q.y * q.y + self.q.z * q.z + self.q.w * q.w;
        let wq = if d < 0.0 { -w } else { w };
        self.t += w * pose.translations[j];
        self.q += wq * q;
        self.s += w * pose.scales[j];
        self.weight += w;
    }
}

/// `q / |q|`, or the identity for a zero quaternion (as the ISPC kernel computes it).
fn normalize(q: Vec4) -> Quat {
    let n = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    if n > 0.0 {
        let inv = 1.0 / n.sqrt();
        Quat::from_xyzw(q.x * inv, q.y * inv, q.z * inv, q.w * inv)
    } else {
        Quat::IDENTITY
    }
}

/// The Hamilton product `a * b`, written out in the kernel's order.
fn mul(a: Quat, b: Quat) -> Quat {
    Quat::from_xyzw(
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    )
}

/// One joint: blended translation, rotation and scale.
pub(crate) fn blend_joint(
    layers: &[BlendLayer<'_>],
    additive: &[BlendLayer<'_>],
    rest: Trs<'_>,
    threshold: f32,
    j: usize,
) -> (Vec3, Quat, Vec3) {
    let mut sums = Sums {
        t: Vec3::ZERO,
        q: Vec4::ZERO,
        s: Vec3::ZERO,
        weight: 0.0,
    };
    for layer in layers.iter().filter(|l| l.weight != 0.0) {
        sums.add(&layer.pose, j, layer.weight_of(j));
    }
    // Below the threshold the rest pose makes up the difference, so the total is the threshold.
    if sums.weight < threshold {
        sums.add(&rest, j, threshold - sums.weight);
        sums.weight = threshold;
    }
    // One reciprocal and two products, as the kernel and ozz compute it (not two divisions).
    let inv = 1.0 / sums.weight;
    let mut t = sums.t * inv;
    let mut q = normalize(sums.q);
    let mut s = sums.s * inv;
    for layer in additive.iter().filter(|l| l.weight != 0.0) {
        let w = layer.weight_of(j);
        t += w * layer.pose.translations[j];
        // The delta on the w >= 0 side, then nlerp from the identity by w, applied after the rotation.
        let d = layer.pose.rotations[j];
        let d = if d.w < 0.0 { -d } else { d };
        let i = normalize(Vec4::new(d.x * w, d.y * w, d.z * w, (d.w - 1.0) * w + 1.0));
        q = mul(i, q);
        s *= (1.0 - w) + w * layer.pose.scales[j];
    }
    (t, q, s)
}
