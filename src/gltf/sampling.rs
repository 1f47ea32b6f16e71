//! Animation clips and their sampling: [`Wrap`], [`Property`], [`Interpolation`], [`Channel`] and
//! [`Clip`], with the glTF spec's step, linear (slerp) and cubic-spline interpolation.

use glam::Quat;

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
    /// The node's level-order index in the scene's skeleton.
    pub(super) level: usize,
    pub(super) property: Property,
    pub(super) interpolation: Interpolation,
    pub(super) times: Vec<f32>,
    /// Components per key, flattened: 3 (translation, scale) or 4 (rotation) per value, and for
    /// `CUBICSPLINE` three values per key (in-tangent, value, out-tangent).
    pub(super) values: Vec<f32>,
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
        let v = self.values.get(start..start + c)?;
        let mut out = [0.0; 4];
        out[..c].copy_from_slice(v);
        Some(out)
    }

    /// The value at time `t` (see the module docs), padded with zeros to four components.
    pub fn sample(&self, t: f32) -> [f32; 4] {
        let c = self.components();
        let n = self.times.len();
        let key = |k: usize| self.key_value(k).unwrap_or([0.0; 4]);
        // A channel has at least one key (checked when loaded).
        let (Some(&first), Some(&last)) = (self.times.first(), self.times.last()) else {
            return [0.0; 4];
        };
        if t.is_nan() || t <= first {
            return key(0);
        }
        if t >= last {
            return key(n - 1);
        }
        // times[k] <= t < times[k + 1], with 0 <= k < n - 1 because first < t < last.
        let k = self.times.partition_point(|&x| x <= t).saturating_sub(1);
        let (t0, t1) = (self.times[k], self.times[k + 1]);
        let dt = t1 - t0;
        let u = (t - t0) / dt;
        match self.interpolation {
            Interpolation::Step => key(k),
            Interpolation::Linear if u == 0.0 => key(k),
            Interpolation::Linear => {
                let (a, b) = (key(k), key(k + 1));
                if self.property == Property::Rotation {
                    slerp(Quat::from_array(a), Quat::from_array(b), u).to_array()
                } else {
                    std::array::from_fn(|i| (1.0 - u) * a[i] + u * b[i])
                }
            }
            Interpolation::CubicSpline => {
                let s = 3 * c;
                let get = |k: usize, part: usize, i: usize| {
                    if i < c {
                        self.values[k * s + part * c + i]
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
                    unit(Quat::from_array(out)).to_array()
                } else {
                    out
                }
            }
        }
    }
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

    /// The translation, rotation and scale channels (morph-target weight channels are not kept).
    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    /// The time that is sampled for `t`: clamped into the span, or wrapped into `[start, end)`.
    pub fn wrap_time(&self, t: f32, wrap: Wrap) -> f32 {
        let span = self.end - self.start;
        match wrap {
            Wrap::Clamp => t.clamp(self.start, self.end),
            Wrap::Loop if span > 0.0 => {
                let w = self.start + (t - self.start).rem_euclid(span);
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
