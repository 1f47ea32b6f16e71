//! Blending: N layers of local TRS poses into one, with per-joint weights, a rest-pose fallback below a
//! weight threshold, and additive layers on top.
//!
//! [`BlendingJob`] follows ozz-animation's `BlendingJob`: the same passes, the same threshold rule and
//! the same additive equation, so a pose blended here and there agrees within rounding.
//! (ozz-animation-rs 0.11 differs in one place: it multiplies an additive layer's rotation on the
//! right, `q * dq`, where ozz's C++ and this crate multiply on the left.) Per joint `j`, with `w_i = layers[i].weight * joint_weights_i[j]` (or `layers[i].weight`
//! when the layer has no joint weights):
//!
//! 1. **Normal layers**, in order: `T += w_i t_i`, `S += w_i s_i`, `W += w_i`, and `Q += w_i q_i'` where
//!    `q_i'` is `q_i`, negated when `dot(Q, q_i) < 0` (hemisphere correction against the sum so far, as
//!    ozz does: the first contributing quaternion sets the hemisphere, and later ones follow the
//!    running sum).
//! 2. **Threshold.** When `W < threshold`, the rest pose is added the same way with weight
//!    `threshold - W`, and `W = threshold`. A joint that no layer reaches (zero layers, zero weights,
//!    per-joint weights of 0) therefore comes out as the rest pose, and a joint with a little weight is
//!    pulled towards the rest pose: with `W = 0.04` and the default threshold 0.1, 40% layers and 60%
//!    rest pose. Above the threshold the rest pose plays no part. ozz computes the same thing; its
//!    job-wide shortcut when no layer has joint weights gives the same result.
//! 3. **Normalization:** `t = T r`, `s = S r` with `r = 1 / W` (as ozz computes it), `q = Q / |Q|` (the
//!    identity where `Q` is zero). Input
//!    quaternions need not be unit length; their length acts as an extra weight on the rotation, as in
//!    ozz.
//! 4. **Additive layers**, in order, each with its own `w_a` (layer weight times joint weight):
//!    `t += w_a dt`, `q = nlerp(identity, dq, w_a) * q` and `s *= (1 - w_a) + w_a ds`, where `dq` is
//!    first put on the `w >= 0` side and the nlerp is `normalize((w_a dq.xyz, 1 + w_a (dq.w - 1)))`.
//!    The delta rotation multiplies on the left: it is applied after the blended rotation, in the parent
//!    joint's frame, as ozz does. Additive layers are **already deltas** (as in ozz, whose offline
//!    `AdditiveAnimationBuilder` makes them): translation and rotation relative to a reference pose
//!    (`dt = t - t_ref`, `dq = q * q_ref^-1`) and scale as a ratio (`ds = s / s_ref`). The identity
//!    delta is `(0, identity, 1)`. Weights above 1 extrapolate.
//!
//! A layer whose weight is exactly 0 is not read. The output is in level order like every input.
//!
//! **Rules**, each an [`Error`] variant, checked before anything is computed; nothing panics:
//! - every layer's translations, rotations, scales and joint weights, normal or additive, have one entry
//!   per joint: [`Error::BlendLayerCount`], naming the layer and the stream;
//! - the rest pose and the output streams have one entry per joint: [`Error::CountMismatch`];
//! - every layer weight and every per-joint weight (and their product) is finite, not negative, and
//!   zero or a normal float (not a denormal):
//!   [`Error::BlendWeight`], naming the layer and, for a per-joint weight, the joint. (ozz clamps
//!   negative weights to 0 and subtracts additive layers of negative weight; here both are errors,
//!   since a negative weight is more often a bug than a request. Subtract an additive layer by giving its
//!   inverse deltas.)
//! - the threshold is a normal float greater than zero (at least `f32::MIN_POSITIVE`, finite):
//!   [`Error::BlendThreshold`];
//! - every float of the rest pose and of every layer's pose is finite: [`Error::BlendValue`]; at every
//!   joint the normal layers' weights sum to a finite value, and each additive layer's weight is
//!   finite: [`Error::BlendWeightSum`]. [`validate`](BlendingJob::validate) checks them all;
//!   [`run`](BlendingJob::run) checks the pose it blended and searches the inputs only where a float of
//!   it is not finite;
//! - the blended pose is finite: finite inputs whose weighted sums overflow `f32` are
//!   [`Error::ResultNotFinite`];
//! - an explicit ISA can run here: [`Error::IsaUnavailable`].
//!
//! **Zero layers** is valid, as in ozz: every joint comes out as the rest pose (then the additive layers
//! apply).
//!
//! The ISPC kernel (`ispc/blend.ispc`) takes one gang of joints at a time and loops over the layers
//! inside each gang (rotations one joint per lane, translations and scales in memory order; see
//! docs/BLENDING.md); the serial reference is [`reference::blend`]. They compute the same operations in the
//! same order and differ only where ISPC fuses a multiply-add.

pub mod crowd;

use crate::backend::{Backend, KernelFamily, Precision, Resolved};
use crate::error::Error;
use crate::ffi::blend as ffi;
use crate::ffi::Runnable;
use crate::layout::blend::BlendLayer;
use crate::layout::trs::{Trs, TrsMut};
use crate::numeric;
use crate::reference;
use crate::skeleton::Skeleton;

/// ozz-animation's default threshold.
pub const DEFAULT_BLEND_THRESHOLD: f32 = 0.1;

/// Blends layers of local poses into one local pose (see the [module docs](crate::blending) for the rules).
#[derive(Debug)]
pub struct BlendingJob<'a> {
    /// The skeleton: its joint count is the count every stream must have.
    pub skeleton: &'a Skeleton,
    /// The rest pose, in level order: the fallback below the threshold.
    pub rest_pose: Trs<'a>,
    /// The layers blended by weight.
    pub layers: &'a [BlendLayer<'a>],
    /// The additive layers (deltas), applied on top in order.
    pub additive_layers: &'a [BlendLayer<'a>],
    /// The total weight below which the rest pose fills in; [`DEFAULT_BLEND_THRESHOLD`] by default.
    pub threshold: f32,
    /// Who runs the job; [`Backend::Auto`] by default.
    pub backend: Backend,
    /// [`Precision::Fast`] (default) or [`Precision::Deterministic`]: the same bits on every backend
    /// and platform (the serial reference's arithmetic, which is plain f32 Rust, runs whatever the
    /// backend).
    pub precision: Precision,
    /// Output: the blended local pose, one entry per joint in level order.
    pub output: TrsMut<'a>,
}

impl<'a> BlendingJob<'a> {
    /// A job with no layers (it outputs the rest pose), the default threshold and the automatic
    /// backend.
    pub fn new(skeleton: &'a Skeleton, rest_pose: Trs<'a>, output: TrsMut<'a>) -> BlendingJob<'a> {
        BlendingJob {
            skeleton,
            rest_pose,
            layers: &[],
            additive_layers: &[],
            threshold: DEFAULT_BLEND_THRESHOLD,
            backend: Backend::Auto,
            precision: Precision::Fast,
            output,
        }
    }

    /// Sets the layers blended by weight.
    pub fn layers(mut self, layers: &'a [BlendLayer<'a>]) -> BlendingJob<'a> {
        self.layers = layers;
        self
    }

    /// Sets the additive layers.
    pub fn additive_layers(mut self, additive: &'a [BlendLayer<'a>]) -> BlendingJob<'a> {
        self.additive_layers = additive;
        self
    }

    /// Sets the threshold.
    pub fn threshold(mut self, threshold: f32) -> BlendingJob<'a> {
        self.threshold = threshold;
        self
    }

    /// Sets who runs the job (an [`Isa`](crate::Isa) converts).
    pub fn backend(mut self, backend: impl Into<Backend>) -> BlendingJob<'a> {
        self.backend = backend.into();
        self
    }

    /// Sets the precision: [`Precision::Deterministic`] gives the same bits on every backend and
    /// platform (the serial reference runs).
    /// `validate` and `run` then refuse a thread (the caller's, or with `Threads::All` one of rayon's
    /// pool) whose floating-point mode is not the default ([`Error::FloatEnvironment`]).
    pub fn precision(mut self, precision: Precision) -> BlendingJob<'a> {
        self.precision = precision;
        self
    }

    /// Checks every rule (see the [module docs](crate::blending)) without computing anything, the numeric rules on
    /// every pose float and weight sum included.
    pub fn validate(&self) -> Result<(), Error> {
        self.plan()?;
        check_floats(
            self.skeleton.len(),
            self.rest_pose,
            self.layers,
            self.additive_layers,
            None,
        )
    }

    fn plan(&self) -> Result<Resolved, Error> {
        check_inputs(
            self.skeleton.len(),
            self.rest_pose,
            self.layers,
            self.additive_layers,
            self.threshold,
        )?;
        let n = self.skeleton.len();
        for (what, got) in [
            ("output translations", self.output.translations.len()),
            ("output rotations", self.output.rotations.len()),
            ("output scales", self.output.scales.len()),
        ] {
            check_count(what, n, got)?;
        }
        // Deterministic blends run the reference: plain scalar f32 arithmetic in a fixed order.
        self.backend
            .resolve(KernelFamily::Blending)?
            .without_det_kernels(self.precision)
    }

    /// Validates, then blends into the output.
    pub fn run(&mut self) -> Result<(), Error> {
        let resolved = self.plan()?;
        match resolved {
            Resolved::Ispc(isa) => ffi::blend_trs(
                isa,
                self.layers,
                self.additive_layers,
                self.rest_pose,
                self.threshold,
                self.output.reborrow(),
            ),
            Resolved::Reference => reference::blend(
                self.layers,
                self.additive_layers,
                self.rest_pose,
                self.threshold,
                self.output.reborrow(),
            ),
        }
        let out = &self.output;
        if output_finite(resolved.runnable(), out) {
            return Ok(());
        }
        let n = self.skeleton.len();
        check_floats(n, self.rest_pose, self.layers, self.additive_layers, None)?;
        Err(Error::ResultNotFinite {
            stage: "blending",
            what: "blended pose",
            index: first_not_finite(out),
        })
    }
}

/// Whether every float of a blended pose is finite (one summing pass, see [`numeric::all_finite`]).
pub(crate) fn output_finite(isa: Option<Runnable>, out: &TrsMut<'_>) -> bool {
    numeric::all_finite_on(isa, bytemuck::cast_slice(out.translations))
        && numeric::all_finite_on(isa, bytemuck::cast_slice(out.rotations))
        && numeric::all_finite_on(isa, bytemuck::cast_slice(out.scales))
}

/// The first entry of a blended pose holding a float that is not finite.
pub(crate) fn first_not_finite(out: &TrsMut<'_>) -> usize {
    let t = out.translations.iter().position(|v| !v.is_finite());
    let q = out.rotations.iter().position(|v| !v.is_finite());
    let s = out.scales.iter().position(|v| !v.is_finite());
    [t, q, s].into_iter().flatten().min().unwrap_or(0)
}

/// The numeric rules on the floats of one blend (an instance's, in a crowd): every pose float finite
/// ([`Error::BlendValue`]), and at every joint each weighted product and the sum of the normal layers'
/// finite ([`Error::BlendWeightSum`]). Entries are reported as `offset + joint`.
pub(crate) fn check_floats(
    joints: usize,
    rest: Trs<'_>,
    layers: &[BlendLayer<'_>],
    additive: &[BlendLayer<'_>],
    instance: Option<usize>,
) -> Result<(), Error> {
    let offset = instance.map_or(0, |i| i.saturating_mul(joints));
    let value = |layer, additive, pose: &Trs<'_>| -> Result<(), Error> {
        let streams: [(&'static str, &[f32], usize); 3] = [
            ("translations", bytemuck::cast_slice(pose.translations), 3),
            ("rotations", bytemuck::cast_slice(pose.rotations), 4),
            ("scales", bytemuck::cast_slice(pose.scales), 3),
        ];
        for (stream, floats, per) in streams {
            if let Some(at) = (!numeric::all_finite(floats))
                .then(|| floats.iter().position(|x| !x.is_finite()))
                .flatten()
            {
                return Err(Error::BlendValue {
                    layer,
                    additive,
                    stream,
                    entry: offset.saturating_add(at / per),
                    value: floats[at],
                });
            }
        }
        Ok(())
    };
    value(None, false, &rest)?;
    for (list, is_additive) in [(layers, false), (additive, true)] {
        for (i, l) in list.iter().enumerate() {
            value(Some(i), is_additive, &l.pose)?;
        }
    }
    let weight = |l: &BlendLayer<'_>, j: usize| {
        l.weight
            * l.joint_weights
                .and_then(|w| w.get(j))
                .copied()
                .unwrap_or(1.0)
    };
    for j in 0..joints {
        let sum: f32 = layers.iter().map(|l| weight(l, j)).sum();
        if !sum.is_finite() || additive.iter().any(|l| !weight(l, j).is_finite()) {
            return Err(Error::BlendWeightSum { joint: j, instance });
        }
    }
    Ok(())
}

fn check_count(what: &'static str, expected: usize, got: usize) -> Result<(), Error> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::CountMismatch {
            what,
            expected,
            got,
        })
    }
}

/// The rules on everything but the output: the rest pose and every layer hold `joints` entries per
/// stream, every weight is finite and not negative, the threshold is finite and positive.
pub(crate) fn check_inputs(
    joints: usize,
    rest: Trs<'_>,
    layers: &[BlendLayer<'_>],
    additive: &[BlendLayer<'_>],
    threshold: f32,
) -> Result<(), Error> {
    // A normal threshold: a denormal one would make the rest pose's weight overflow when divided by.
    if !(f32::MIN_POSITIVE..=f32::MAX).contains(&threshold) {
        return Err(Error::BlendThreshold { threshold });
    }
    for (what, got) in [
        ("rest pose translations", rest.translations.len()),
        ("rest pose rotations", rest.rotations.len()),
        ("rest pose scales", rest.scales.len()),
    ] {
        check_count(what, joints, got)?;
    }
    let all = layers
        .iter()
        .enumerate()
        .map(|(i, l)| (i, false, l))
        .chain(additive.iter().enumerate().map(|(i, l)| (i, true, l)));
    for (layer, is_additive, l) in all {
        let streams = [
            ("translations", l.pose.translations.len()),
            ("rotations", l.pose.rotations.len()),
            ("scales", l.pose.scales.len()),
            (
                "joint weights",
                l.joint_weights.map_or(joints, <[f32]>::len),
            ),
        ];
        for (what, got) in streams {
            if got != joints {
                return Err(Error::BlendLayerCount {
                    layer,
                    additive: is_additive,
                    what,
                    expected: joints,
                    got,
                });
            }
        }
        // Zero, or a normal float: a denormal weight is too small to blend and only risks overflow
        // where it is divided by.
        let bad = |w: f32| !(w == 0.0 || (f32::MIN_POSITIVE..=f32::MAX).contains(&w));
        if bad(l.weight) {
            return Err(Error::BlendWeight {
                layer,
                additive: is_additive,
                joint: None,
                weight: l.weight,
            });
        }
        if let Some(jw) = l.joint_weights {
            // A product that overflows to infinity is as bad as an infinite weight. The scan is
            // branch-free over blocks (`&`, not `||`, and no early exit inside a block), so that it
            // vectorizes: the early-exit `position` over every joint cost about a third of an ISA's
            // blend_additive call. The first bad joint is looked up only when there is one.
            // `l.weight` is finite and not negative (checked above), so for a finite w >= 0 the
            // product is not negative and not NaN either: three comparisons decide.
            let w0 = l.weight;
            let good = |w: f32| {
                ((w == 0.0) | (f32::MIN_POSITIVE..f32::INFINITY).contains(&w))
                    & (w * w0 < f32::INFINITY)
            };
            let all_good = jw
                .chunks(256)
                .all(|c| c.iter().fold(true, |ok, &w| ok & good(w)));
            if let Some(joint) = (!all_good)
                .then(|| jw.iter().position(|&w| bad(w) || bad(w * w0)))
                .flatten()
            {
                return Err(Error::BlendWeight {
                    layer,
                    additive: is_additive,
                    joint: Some(joint),
                    weight: jw[joint],
                });
            }
        }
    }
    let weights: Vec<(f32, Option<&[f32]>)> =
        layers.iter().map(|l| (l.weight, l.joint_weights)).collect();
    check_weight_sums(joints, &weights).map_err(|joint| Error::BlendWeightSum {
        joint,
        instance: None,
    })
}

/// The first joint at which the normal layers' weights (`(layer weight, joint weights)`, each checked
/// finite and not negative) sum to infinity, or `Ok`. A block of joints at a time, so that nothing
/// allocates and the additions vectorize.
pub(crate) fn check_weight_sums(
    joints: usize,
    layers: &[(f32, Option<&[f32]>)],
) -> Result<(), usize> {
    const BLOCK: usize = 256;
    let mut sums = [0.0f32; BLOCK];
    for start in (0..joints).step_by(BLOCK) {
        let end = joints.min(start.saturating_add(BLOCK));
        let block = &mut sums[..end - start];
        block.fill(0.0);
        for &(w0, jw) in layers {
            match jw.and_then(|jw| jw.get(start..end)) {
                Some(jw) => block.iter_mut().zip(jw).for_each(|(s, &w)| *s += w0 * w),
                None => block.iter_mut().for_each(|s| *s += w0),
            }
        }
        if let Some(j) = block.iter().position(|s| !s.is_finite()) {
            return Err(start + j);
        }
    }
    Ok(())
}
