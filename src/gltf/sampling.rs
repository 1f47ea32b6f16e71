//! Animation clips and their sampling: [`Wrap`], [`Property`], [`Interpolation`], [`Channel`] and
//! [`Clip`], with the glTF spec's step, linear (slerp) and cubic-spline interpolation.

use glam::{Quat, Vec4};

/// What a time outside a clip's span means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Wrap {
    /// Hold the first key before the clip and the last key after it.
    #[default]
    Clamp,
    /// Repeat the clip: the time is taken modulo the clip's duration, so `end` maps to `start`.
    Loop,
}

/// The node property a channel animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Property {
    /// Translation (VEC3).
    Translation,
    /// Rotation (a quaternion, x y z w).
    Rotation,
    /// Scale (VEC3).
    Scale,
}

/// How a sampler interpolates between keys (the glTF names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// `STEP`.
    Step,
    /// `LINEAR` (slerp for rotations).
    Linear,
    /// `CUBICSPLINE`.
    CubicSpline,
}

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

    /// The value at time `t` (see the module docs), padded with zeros to four components.
    pub fn sample(&self, t: f32) -> [f32; 4] {
        self.sample_at(self.locate(t)).to_array()
    }

    /// Where `t` falls among the key times; the same for every channel of the same track.
    pub(super) fn locate(&self, t: f32) -> Located {
        locate(&self.times, t)
    }

    /// The value of key `k` padded with zeros (zeros past the last key): [`Channel::key_value`]
    /// without the `Option` and the copy of a variable-length slice, for the samplers' inner loops. A
    /// `Vec4` stays in one register where an array went through the stack.
    #[inline(always)]
    fn key(&self, k: usize) -> Vec4 {
        let c = self.components();
        let (stride, offset) = match self.interpolation {
            Interpolation::CubicSpline => (3 * c, c),
            _ => (c, 0),
        };
        let i = k.saturating_mul(stride).saturating_add(offset);
        // One bounds check per key, with the length known to the compiler in each arm.
        let at = |n: usize| self.values.get(i..i.saturating_add(n));
        match c {
            4 => at(4).map_or(Vec4::ZERO, |v| Vec4::new(v[0], v[1], v[2], v[3])),
            _ => at(3).map_or(Vec4::ZERO, |v| Vec4::new(v[0], v[1], v[2], 0.0)),
        }
    }

    /// The value at a located time (see [`Channel::locate`]), padded with zeros to four components.
    #[inline(always)]
    pub(super) fn sample_at(&self, at: Located) -> Vec4 {
        let (k, u) = match at {
            Located::Key(k) => return self.key(k),
            Located::Between { k, u } => (k, u),
        };
        match self.interpolation {
            Interpolation::Step => self.key(k),
            // The next key exists wherever `locate` puts a time between two keys; a located value from
            // elsewhere that names the last key holds it.
            _ if k + 1 >= self.times.len() => self.key(k),
            Interpolation::Linear if u == 0.0 => self.key(k),
            Interpolation::Linear => {
                let (a, b) = (self.key(k), self.key(k + 1));
                if self.property == Property::Rotation {
                    Vec4::from(slerp(Quat::from_vec4(a), Quat::from_vec4(b), u))
                } else {
                    a * (1.0 - u) + b * u
                }
            }
            Interpolation::CubicSpline => self.cubic(k, u),
        }
    }

    /// The cubic Hermite spline of glTF between keys `k` and `k + 1` (both exist) at `u`; rotations are
    /// normalized.
    fn cubic(&self, k: usize, u: f32) -> Vec4 {
        let c = self.components();
        let dt = match (self.times.get(k), self.times.get(k + 1)) {
            (Some(&t0), Some(&t1)) => t1 - t0,
            _ => 0.0,
        };
        let s = 3 * c;
        let get = |k: usize, part: usize, i: usize| {
            if i < c {
                self.values
                    .get(k * s + part * c + i)
                    .copied()
                    .unwrap_or(0.0)
            } else {
                0.0
            }
        };
        let (u2, u3) = (u * u, u * u * u);
        let h00 = 2.0 * u3 - 3.0 * u2 + 1.0;
        let h10 = u3 - 2.0 * u2 + u;
        let h01 = -2.0 * u3 + 3.0 * u2;
        let h11 = u3 - u2;
        let out: [f32; 4] = std::array::from_fn(|i| {
            h00 * get(k, 1, i)
                + h10 * dt * get(k, 2, i)
                + h01 * get(k + 1, 1, i)
                + h11 * dt * get(k + 1, 0, i)
        });
        if self.property == Property::Rotation {
            Vec4::from(unit(Quat::from_array(out)))
        } else {
            Vec4::from_array(out)
        }
    }
}

/// Where `t` falls among strictly increasing key times.
fn locate(times: &[f32], t: f32) -> Located {
    // A channel has at least one key (checked when loaded).
    let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
        return Located::Key(0);
    };
    if t.is_nan() || t <= first {
        return Located::Key(0);
    }
    if t >= last {
        return Located::Key(times.len() - 1);
    }
    // times[k] <= t < times[k + 1], with 0 <= k < n - 1 because first < t < last.
    let k = times.partition_point(|&x| x <= t).saturating_sub(1);
    let (t0, t1) = (times[k], times[k + 1]);
    Located::Between {
        k,
        u: (t - t0) / (t1 - t0),
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

    /// Weight `i` of key `k` (the value block for `CUBICSPLINE`), `part` 0, 1, 2 choosing the
    /// in-tangent, value and out-tangent of a `CUBICSPLINE` key. Zero past the data (never reached: the
    /// counts are checked when loaded).
    fn get(&self, k: usize, part: usize, i: usize) -> f32 {
        let n = self.targets;
        let at = match self.interpolation {
            Interpolation::CubicSpline => k * 3 * n + part * n + i,
            _ => k * n + i,
        };
        self.values.get(at).copied().unwrap_or(0.0)
    }

    /// Writes the weights at time `t` into `out` (the first `min(out.len(), targets)` of them).
    pub fn sample_into(&self, t: f32, out: &mut [f32]) {
        let (k, u) = match locate(&self.times, t) {
            Located::Key(k) => (k, None),
            Located::Between { k, u } => (k, Some(u)),
        };
        let dt = match (self.times.get(k), self.times.get(k + 1)) {
            (Some(&t0), Some(&t1)) => t1 - t0,
            _ => 0.0,
        };
        for (i, o) in out.iter_mut().enumerate().take(self.targets) {
            *o = match (self.interpolation, u) {
                (Interpolation::Step, _) | (_, None) => self.get(k, 1, i),
                (Interpolation::Linear, Some(u)) => {
                    self.get(k, 1, i) * (1.0 - u) + self.get(k + 1, 1, i) * u
                }
                (Interpolation::CubicSpline, Some(u)) => {
                    let (u2, u3) = (u * u, u * u * u);
                    (2.0 * u3 - 3.0 * u2 + 1.0) * self.get(k, 1, i)
                        + (u3 - 2.0 * u2 + u) * dt * self.get(k, 2, i)
                        + (-2.0 * u3 + 3.0 * u2) * self.get(k + 1, 1, i)
                        + (u3 - u2) * dt * self.get(k + 1, 0, i)
                }
            };
        }
    }
}

/// Where a time falls among a channel's keys.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Located {
    /// At (or clamped to) key `k`.
    Key(usize),
    /// Between key `k` and key `k + 1`, at the fraction `u` of the interval.
    Between { k: usize, u: f32 },
}

/// `q / |q|`, or the identity for a zero (or non-finite) length, the crate's quaternion policy.
pub(super) fn unit(q: Quat) -> Quat {
    let len = q.length();
    if len > 0.0 && len.is_finite() {
        q.normalize()
    } else {
        Quat::IDENTITY
    }
}

/// Spherical interpolation along the shorter arc, normalized; a normalized lerp for nearly equal keys,
/// where slerp's division by sin(angle) loses precision.
fn slerp(a: Quat, b: Quat, u: f32) -> Quat {
    let mut d = a.dot(b);
    let b = if d < 0.0 {
        d = -d;
        -b
    } else {
        b
    };
    if d > 0.9995 {
        return unit(a * (1.0 - u) + b * u);
    }
    let theta = d.min(1.0).acos();
    let s = theta.sin();
    let wa = ((1.0 - u) * theta).sin() / s;
    let wb = (u * theta).sin() / s;
    unit(a * wa + b * wb)
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
        let span = self.end - self.start;
        match wrap {
            Wrap::Clamp => t.clamp(self.start, self.end),
            Wrap::Loop if span > 0.0 => {
                let d = t - self.start;
                let w = if d.is_finite() {
                    self.start + d.rem_euclid(span)
                } else {
                    // A finite time far from a clip of huge keys overflows `t - start` in f32; f64
                    // holds the difference of any two finite f32 exactly enough to wrap it.
                    let (t, start, span) = (f64::from(t), f64::from(self.start), f64::from(span));
                    (start + (t - start).rem_euclid(span)) as f32
                };
                // Rounding can land exactly on `end` for times just below a multiple of the span.
                if w >= self.end {
                    self.start
                } else {
                    w
                }
            }
            Wrap::Loop => self.start,
        }
    }
}
