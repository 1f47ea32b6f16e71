//! One layer of the blending job: a local pose with its weight and optional per-joint weights.

use crate::layout::trs::Trs;

/// One input of a [`BlendingJob`](crate::BlendingJob): a local pose (one translation, rotation and
/// scale per joint, in level order), a weight, and optional per-joint weights. A joint's effective
/// weight is `weight * joint_weights[joint]` (or `weight` without joint weights).
///
/// As a normal layer the pose is a full local pose; as an additive layer it is a delta from a
/// reference pose (see the [`blending` rules](crate::BlendingJob)).
#[derive(Clone, Copy, Debug)]
pub struct BlendLayer<'a> {
    /// The pose (normal layer) or the deltas (additive layer), one entry per joint in level order.
    pub pose: Trs<'a>,
    /// The layer's weight: finite and not negative. A layer of weight 0 is not read.
    pub weight: f32,
    /// Optional per-joint weights, one per joint in level order: finite and not negative.
    pub joint_weights: Option<&'a [f32]>,
}

impl<'a> BlendLayer<'a> {
    /// A layer with one weight for every joint.
    pub fn new(pose: Trs<'a>, weight: f32) -> BlendLayer<'a> {
        BlendLayer {
            pose,
            weight,
            joint_weights: None,
        }
    }

    /// Sets per-joint weights (one per joint, in level order).
    pub fn joint_weights(mut self, joint_weights: &'a [f32]) -> BlendLayer<'a> {
        self.joint_weights = Some(joint_weights);
        self
    }

    /// The weight of joint `j` (in range).
    pub(crate) fn weight_of(&self, j: usize) -> f32 {
        match self.joint_weights {
            Some(jw) => self.weight * jw[j],
            None => self.weight,
        }
    }
}
