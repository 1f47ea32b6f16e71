//! Animation clips of any origin, and sampling them into a local pose.
//!
//! A [`Clip`] holds, for the joints of one [`Skeleton`](crate::Skeleton), translation, rotation and
//! scale tracks, and morph-weight tracks, each with its own key times and [`Interpolation`] (glTF 2.0's
//! step, linear with slerp for rotations, and cubic spline). It is built from plain arrays with
//! [`ClipBuilder`], in your own joint order; every array is checked as it enters. The glTF importer
//! makes the same clips ([`GltfScene::runtime_clip`](crate::gltf::GltfScene::runtime_clip)), and both
//! sample through the same functions, so they give the same bits.
//!
//! [`SamplingJob`] writes a clip's value at one time into a local pose in level order (the form
//! [`BlendingJob`](crate::BlendingJob) and [`LocalToModelJob`](crate::LocalToModelJob) take), on an ISPC
//! kernel with the lanes across tracks or on the serial reference (its [`Backend`](crate::Backend)). Joints
//! without a track keep what the output held, so fill it with the rest pose first (as
//! [`Character::level_rest`](crate::Character::level_rest) gives it) for glTF's rule, "a channel
//! overrides the node's own value".
//!
//! ```
//! use ispc_skinning::glam::{Quat, Vec3};
//! use ispc_skinning::{Clip, Interpolation, SamplingContext, SamplingJob, Skeleton, TrsMut, Wrap};
//!
//! let skeleton = Skeleton::from_parents(&[None, Some(0)])?;
//! let mut clip = Clip::builder(&skeleton);
//! clip.rotation(1, Interpolation::Linear, &[0.0, 1.0], &[Quat::IDENTITY, Quat::from_rotation_z(1.0)])?;
//! let clip = clip.build();
//!
//! let (mut t, mut q, mut s) = (vec![Vec3::ZERO; 2], vec![Quat::IDENTITY; 2], vec![Vec3::ONE; 2]);
//! let mut context = SamplingContext::new();
//! SamplingJob::new(&clip, &mut context, TrsMut::new(&mut t, &mut q, &mut s))
//!     .time(0.5)
//!     .wrap(Wrap::Loop)
//!     .run()?;
//! let level = skeleton.level_index(1).unwrap();
//! assert!(q[level].angle_between(Quat::from_rotation_z(0.5)) < 1e-5);
//! # Ok::<(), ispc_skinning::Error>(())
//! ```
//!
//! # Layout
//! A clip keeps every key time in one array and every key value in another, track after track, and its
//! tracks sorted by the level-order joint they drive, so sampling walks memory forward. Tracks whose key
//! times are equal (an exporter's one time array behind a joint's translation, rotation and scale, or
//! behind every joint) share one timeline: where a time falls among those keys is found once per
//! timeline, not once per track. A [`SamplingContext`] remembers, per timeline, the interval the last
//! time fell in; playing forward moves each cursor by at most a few keys per frame (amortized O(1) per
//! timeline), and a jump or a step back is one binary search (O(log keys)). The cursor changes the work
//! only: a sample gives the same bits from any cursor, as from a fresh context.
//!
//! For the single-pose kernel the clip keeps a second copy of its translation, rotation and scale
//! values, grouped by property, timeline and interpolation and stored key-major across each group's
//! tracks, so that the kernel's lanes (across a group's tracks) load each key contiguously: the
//! translation, rotation and scale values take twice their raw size.
//!
//! # Rules
//! Each an [`Error`](crate::Error) variant, checked by the builder when a track is added:
//! - the joint exists: [`Error::JointOutOfRange`](crate::Error::JointOutOfRange) (in your order);
//! - a joint has at most one track per property, a weight set one track:
//!   [`Error::DuplicateTrack`](crate::Error::DuplicateTrack);
//! - a track has at least one key, and one value per key (three for
//!   [`Interpolation::CubicSpline`]: in-tangent, value, out-tangent; times the target count for
//!   weights): [`Error::KeyCount`](crate::Error::KeyCount);
//! - key times are finite and strictly increasing, and the span of the whole clip is finite:
//!   [`Error::KeyTimes`](crate::Error::KeyTimes);
//! - every value is finite: [`Error::NotFinite`](crate::Error::NotFinite); every rotation key (the value
//!   of a cubic key; tangents may be anything finite) has a normal squared length:
//!   [`Error::RotationLength`](crate::Error::RotationLength). Step and linear rotation keys are stored
//!   normalized, as glTF requires of them;
//! - the clip holds at most [`MAX_CLIP_FLOATS`] floats (times and values together):
//!   [`Error::TooManyKeys`](crate::Error::TooManyKeys).
//!
//! [`SamplingJob`] checks that the output has one entry per joint of the clip's skeleton
//! ([`Error::CountMismatch`](crate::Error::CountMismatch)), that the time is finite
//! ([`Error::NotFinite`](crate::Error::NotFinite)), and that a weight output, when given, has one set per
//! weight set of the clip and one weight per target.

mod clip;
pub mod compact;
mod crowd;
pub(crate) mod curve;
mod portable;
mod sampling;

pub use clip::{Clip, ClipBuilder, MAX_CLIP_FLOATS};
pub use compact::{
    ClipError, CompactClip, CompactContext, CompactSamplingJob, Compression, MAX_COMPACT_FRAMES,
    MAX_COMPACT_VALUE, MAX_COMPACT_WEIGHT_SETS, MAX_COMPRESSION_POINTS, MAX_SAMPLE_RATE,
};
pub use crowd::{CrowdSamplingContext, CrowdSamplingJob};
pub use sampling::{SamplingContext, SamplingJob};

/// A clip a [`ClipLayer`](crate::ClipLayer) plays: its keys as built ([`Clip`]) or in compact form
/// ([`CompactClip`]). Both convert into it, so `ClipLayer::new(&clip, t)` takes either.
#[derive(Clone, Copy, Debug)]
pub enum AnyClip<'a> {
    /// A clip of f32 keys, sampled by [`SamplingJob`] on the frame's backend, with the frame's cursor.
    Keys(&'a Clip),
    /// A compact clip, sampled by [`CompactSamplingJob`] (the serial decoder, whose bits are the same
    /// on every backend and platform).
    Compact(&'a CompactClip),
}

impl<'a> From<&'a Clip> for AnyClip<'a> {
    fn from(clip: &'a Clip) -> AnyClip<'a> {
        AnyClip::Keys(clip)
    }
}

impl<'a> From<&'a CompactClip> for AnyClip<'a> {
    fn from(clip: &'a CompactClip) -> AnyClip<'a> {
        AnyClip::Compact(clip)
    }
}

impl<'a> AnyClip<'a> {
    /// The joints of the skeleton the clip was built for.
    pub fn joints(&self) -> usize {
        match self {
            AnyClip::Keys(c) => c.joints(),
            AnyClip::Compact(c) => c.joints(),
        }
    }

    /// How many weight sets a sampled weight output must have.
    pub fn weight_sets(&self) -> usize {
        match self {
            AnyClip::Keys(c) => c.weight_sets(),
            AnyClip::Compact(c) => c.weight_sets(),
        }
    }

    /// The number of morph targets weight set `set` has; `None` for a set no track drives.
    pub fn weight_targets(&self, set: usize) -> Option<usize> {
        match self {
            AnyClip::Keys(c) => c.weight_targets(set),
            AnyClip::Compact(c) => c.weight_targets(set),
        }
    }

    /// Each joint's level-order index, in the skeleton's original order.
    pub(crate) fn level_of(&self) -> &'a [u32] {
        match self {
            AnyClip::Keys(c) => &c.level_of,
            AnyClip::Compact(c) => &c.level_of,
        }
    }
}

/// What a time outside a clip's span means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Wrap {
    /// Hold the first key before the clip and the last key after it.
    #[default]
    Clamp,
    /// Repeat the clip: the time is taken modulo the clip's duration, so `end` maps to `start`.
    Loop,
}

/// The joint property a track animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Property {
    /// Translation (three floats).
    Translation,
    /// Rotation (a quaternion, x y z w).
    Rotation,
    /// Scale (three floats).
    Scale,
}

impl Property {
    /// Floats per value: 3, or 4 for a rotation.
    pub(crate) fn components(self) -> usize {
        match self {
            Property::Rotation => 4,
            _ => 3,
        }
    }

    /// The property's number in the kernels' tables and the compact stored form: 0 translation, 1
    /// rotation, 2 scale.
    pub(crate) fn index(self) -> usize {
        match self {
            Property::Translation => 0,
            Property::Rotation => 1,
            Property::Scale => 2,
        }
    }

    /// The name errors use: "translation keys", ...
    pub(crate) fn keys_name(self) -> &'static str {
        match self {
            Property::Translation => "translation keys",
            Property::Rotation => "rotation keys",
            Property::Scale => "scale keys",
        }
    }
}

/// How a track interpolates between keys (the glTF names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// `STEP`: the key at or before the time.
    Step,
    /// `LINEAR`: `(1 - u) a + u b`, slerp for rotations.
    Linear,
    /// `CUBICSPLINE`: glTF's cubic Hermite spline, tangents scaled by the key interval, rotations
    /// normalized.
    CubicSpline,
}

impl Interpolation {
    /// Values per key: 3 for a cubic spline (in-tangent, value, out-tangent), else 1.
    pub(crate) fn values_per_key(self) -> usize {
        match self {
            Interpolation::CubicSpline => 3,
            _ => 1,
        }
    }

    /// The sampling kernels' code: 0 step, 1 linear, 2 cubic (ispc/sample.ispc's STEP, LINEAR, CUBIC).
    pub(crate) fn kernel_code(self) -> i32 {
        match self {
            Interpolation::Step => 0,
            Interpolation::Linear => 1,
            Interpolation::CubicSpline => 2,
        }
    }
}
