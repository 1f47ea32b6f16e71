//! Animation clips and their sampling: [`Wrap`], [`Property`], [`Interpolation`], [`Channel`] and
//! [`Clip`], with the glTF spec's step, linear (slerp) and cubic-spline interpolation.

use glam::Vec4;

use crate::animation::curve::{self, Keys, WeightKeys};
pub(super) use crate::animation::curve::{unit, Located};
pub use crate::animation::{Interpolation, Property, Wrap};

/// One animated property of one node.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    pub(super) node: usize,
    /// Channels of a clip with the same track have the same key times.
    pub(super) track: usize,
    /// The node's level-order index in the scene's skeleton.
    pub(super) level: usize,
    pub(super) property: Property,
    pub(super) interpolation: Interpolation,
    pub(super) times: std::sync::Arc<[f32]>,
    /// Components per key, flattened: 3 (translation, scale) or 4 (rotation) per value, and for
    /// `CUBICSPLINE` three values per key (in-tangent, value, out-tangent).
    pub(super) values: std::sync::Arc<[f32]>,
}

impl Channel {
    /// The glTF node it animates.
    pub fn node(&self) -> usize {
        self.node
    }

    /// The property it animates.
    pub fn property(&self) -> Property {
        self.property
    }

    /// The interpolation.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Key times, strictly increasing.
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    fn components(&self) -> usize {
        match self.property {
            Property::Rotation => 4,
            _ => 3,
        }
    }

    /// The value of key `k` as stored (rotation keys of `STEP` and `LINEAR` samplers normalized), padded
    /// with zeros to four components; `None` past the last key.
    pub fn key_value(&self, k: usize) -> Option<[f32; 4]> {
        let c = self.components();
        let (stride, offset) = match self.interpolation {
            Interpolation::CubicSpline => (3 * c, c),
            _ => (c, 0),
        };
        let start = k.checked_mul(stride)?.checked_add(offset)?;
        let v = self.values.get(start..start.checked_add(c)?)?;
        let mut out = [0.0; 4];
        out[..c].copy_from_slice(v);
        Some(out)
    }

    /// The value at time `t` (see the [module docs](crate::animation)), padded with zeros to four components.
    pub fn sample(&self, t: f32) -> [f32; 4] {
        self.sample_at(self.locate(t)).to_array()
    }

    /// Where `t` falls among the key times; the same for every channel of the same track.
    pub(super) fn locate(&self, t: f32) -> Located {
        curve::locate(&self.times, t)
    }

    /// The keys as the shared sampler reads them.
    fn keys(&self) -> Keys<'_> {
        Keys {
            times: &self.times,
            values: &self.values,
            components: self.components(),
            interpolation: self.interpolation,
            rotation: self.property == Property::Rotation,
        }
    }

    /// The value at a located time (see [`Channel::locate`]), padded with zeros to four components.
    #[inline(always)]
    pub(super) fn sample_at(&self, at: Located) -> Vec4 {
        self.keys().sample_at(at)
    }

    /// [`sample_at`](Self::sample_at) in portable arithmetic (`Precision::Deterministic`).
    pub(super) fn sample_portable(&self, at: Located) -> Vec4 {
        self.keys().sample_portable(at)
    }
}

/// The morph-target weights of one node, animated (a glTF channel with the `weights` path).
///
/// Each key holds one weight per morph target of the node's mesh; a `CUBICSPLINE` key holds three
/// blocks of that many weights: in-tangents, values, out-tangents. Sampling follows the same rules as
/// [`Channel::sample`] for each weight: `STEP` the key at or before the time, `LINEAR` `(1 - u) a + u b`,
/// `CUBICSPLINE` the Hermite spline with tangents scaled by the key interval; the ends are held.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightChannel {
    pub(super) node: usize,
    pub(super) interpolation: Interpolation,
    pub(super) times: std::sync::Arc<[f32]>,
    /// `targets` floats per key (three blocks of `targets` for `CUBICSPLINE`).
    pub(super) values: std::sync::Arc<[f32]>,
    pub(super) targets: usize,
    /// The scene's outputs this channel drives: skinned primitive instances, then rigid ones.
    pub(super) skinned: Vec<usize>,
    pub(super) rigid: Vec<usize>,
}

impl WeightChannel {
    /// The glTF node whose mesh's weights it animates.
    pub fn node(&self) -> usize {
        self.node
    }

    /// The interpolation.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Key times, strictly increasing.
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// Weights per key: the morph target count of the node's mesh.
    pub fn targets(&self) -> usize {
        self.targets
    }

    /// Writes the weights at time `t` into `out` (the first `min(out.len(), targets)` of them).
    pub fn sample_into(&self, t: f32, out: &mut [f32]) {
        let keys = WeightKeys {
            times: &self.times,
            values: &self.values,
            targets: self.targets,
            interpolation: self.interpolation,
        };
        keys.sample_into(curve::locate(&self.times, t), out);
    }
}

/// One glTF animation.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    pub(super) name: Option<String>,
    pub(super) start: f32,
    pub(super) end: f32,
    pub(super) channels: Vec<Channel>,
    /// The morph-target weight channels.
    pub(super) weights: Vec<WeightChannel>,
    /// The number of distinct key-time arrays (tracks) of the channels.
    pub(super) tracks: usize,
}

impl Clip {
    /// The animation's name, when it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The earliest key time of any channel (0 for a clip without channels).
    pub fn start(&self) -> f32 {
        self.start
    }

    /// The latest key time of any channel (0 for a clip without channels).
    pub fn end(&self) -> f32 {
        self.end
    }

    /// `end - start`.
    pub fn duration(&self) -> f32 {
        self.end - self.start
    }

    /// The translation, rotation and scale channels.
    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    /// The morph-target weight channels.
    pub fn weight_channels(&self) -> &[WeightChannel] {
        &self.weights
    }

    /// The time that is sampled for `t`: clamped into the span, or wrapped into `[start, end)`.
    pub fn wrap_time(&self, t: f32, wrap: Wrap) -> f32 {
        curve::wrap_time(self.start, self.end, t, wrap)
    }
}
