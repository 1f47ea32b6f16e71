//! The arithmetic of one animated value: where a time falls among key times (by search, or by a cursor
//! that steps forward), and step, linear (slerp) and cubic-spline interpolation as glTF 2.0 defines
//! them. The runtime [`Clip`](super::Clip) and the glTF importer's channels both sample through these
//! functions, so the two give the same bits.

use super::Interpolation;
use glam::{Quat, Vec4};

/// Where a time falls among a track's keys.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Located {
    /// At (or clamped to) key `k`.
    Key(usize),
    /// Between key `k` and key `k + 1`, at the fraction `u` of the interval.
    Between { k: usize, u: f32 },
}

impl Located {
    /// The form the sampling kernels read (ispc/sample.ispc): the key, the fraction, the interval
    /// `times[k + 1] - times[k]` and whether the key is held (1) rather than interpolated (0).
    /// Timelines hold at most `MAX_CLIP_FLOATS` keys, so the key fits in `i32`.
    pub(crate) fn kernel_form(self, times: &[f32]) -> (i32, f32, f32, i32) {
        match self {
            Located::Key(k) => (k as i32, 0.0, 0.0, 1),
            Located::Between { k, u } => {
                let span = match (times.get(k), times.get(k + 1)) {
                    (Some(&t0), Some(&t1)) => t1 - t0,
                    _ => 0.0,
                };
                (k as i32, u, span, 0)
            }
        }
    }
}

/// How many keys a cursor steps forward before it searches the rest instead: forward playback at any
/// frame rate moves one key or less per frame on real clips, and a jump further than this costs one
/// binary search, O(log keys).
const FORWARD_STEPS: usize = 4;

/// Where `t` falls among strictly increasing key times (binary search). A NaN time, or one at or before
/// the first key, holds the first key; one at or after the last holds the last.
pub(crate) fn locate(times: &[f32], t: f32) -> Located {
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
    between(times, k, t)
}

/// [`locate`] starting from a cursor, the interval the last time fell in: it steps forward while `t` is
/// past the interval (at most [`FORWARD_STEPS`] keys), and searches otherwise. The cursor is updated.
/// The result is the same as [`locate`]'s for every cursor value: the cursor changes the work only.
/// Returns whether it had to search.
pub(crate) fn locate_from(times: &[f32], t: f32, cursor: &mut u32) -> (Located, bool) {
    let n = times.len();
    let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
        return (Located::Key(0), false);
    };
    if t.is_nan() || t <= first {
        *cursor = 0;
        return (Located::Key(0), false);
    }
    if t >= last {
        *cursor = (n - 1) as u32;
        return (Located::Key(n - 1), false);
    }
    // Here n >= 2 and first < t < last: the answer k is in 0..n-1.
    let mut k = (*cursor as usize).min(n - 2);
    let mut searched = false;
    if times[k] <= t {
        let mut steps = 0;
        while times[k + 1] <= t {
            k += 1;
            steps += 1;
            if steps == FORWARD_STEPS && times[k + 1] <= t {
                // Far ahead: search the keys after k (the last key is > t, so k stays below n - 1).
                k += times[k + 1..].partition_point(|&x| x <= t);
                searched = true;
                break;
            }
        }
    } else {
        // Backwards: search the keys before k.
        k = times[..k].partition_point(|&x| x <= t).saturating_sub(1);
        searched = true;
    }
    *cursor = k as u32;
    (between(times, k, t), searched)
}

/// `Between { k, u }` for times[k] <= t < times[k + 1] (the caller guarantees both keys exist).
fn between(times: &[f32], k: usize, t: f32) -> Located {
    let (t0, t1) = (times[k], times[k + 1]);
    Located::Between {
        k,
        u: (t - t0) / (t1 - t0),
    }
}

/// `q / |q|`, or the identity for a zero (or non-finite) length. The length is summed x, y, z, w in
/// order (`portable::unit`), not by glam's SIMD dot product, whose order differs between platforms: the
/// importers and the clip builder normalize stored keys with it, and stored keys must be the same bits
/// everywhere for `Precision::Deterministic` to be.
pub(crate) fn unit(q: Quat) -> Quat {
    super::portable::unit(Vec4::from(q))
}

/// Spherical interpolation along the shorter arc, normalized; a normalized lerp for nearly equal keys,
/// where slerp's division by sin(angle) loses precision.
pub(crate) fn slerp(a: Quat, b: Quat, u: f32) -> Quat {
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

/// One track's keys as stored: `components` floats per value (3 for translation and scale, 4 for a
/// rotation, x y z w), one value per key, or for [`Interpolation::CubicSpline`] three (in-tangent,
/// value, out-tangent).
#[derive(Clone, Copy)]
pub(crate) struct Keys<'a> {
    pub(crate) times: &'a [f32],
    pub(crate) values: &'a [f32],
    pub(crate) components: usize,
    pub(crate) interpolation: Interpolation,
    pub(crate) rotation: bool,
}

impl Keys<'_> {
    /// The value of key `k` padded with zeros (zeros past the last key). A `Vec4` stays in one register.
    #[inline(always)]
    pub(crate) fn key(&self, k: usize) -> Vec4 {
        self.part(k, if self.cubic() { 1 } else { 0 })
    }

    fn cubic(&self) -> bool {
        self.interpolation == Interpolation::CubicSpline
    }

    /// Part `part` (0 in-tangent, 1 value, 2 out-tangent of a cubic key; 0 otherwise) of key `k`.
    #[inline(always)]
    fn part(&self, k: usize, part: usize) -> Vec4 {
        let c = self.components;
        let stride = if self.cubic() { 3 * c } else { c };
        let i = k.saturating_mul(stride).saturating_add(part * c);
        // One bounds check per key, with the length known to the compiler in each arm.
        let at = |n: usize| self.values.get(i..i.saturating_add(n));
        match c {
            4 => at(4).map_or(Vec4::ZERO, |v| Vec4::new(v[0], v[1], v[2], v[3])),
            _ => at(3).map_or(Vec4::ZERO, |v| Vec4::new(v[0], v[1], v[2], 0.0)),
        }
    }

    /// The value at a located time, padded with zeros to four components.
    #[inline(always)]
    pub(crate) fn sample_at(&self, at: Located) -> Vec4 {
        self.sample(at, false)
    }

    /// [`sample_at`](Self::sample_at) in portable arithmetic (`super::portable`), the same bits on
    /// every platform, for `Precision::Deterministic`.
    pub(crate) fn sample_portable(&self, at: Located) -> Vec4 {
        self.sample(at, true)
    }

    /// The value at a located time; rotations interpolated portably where `portable` (normalizing,
    /// `unit`, is portable either way).
    #[inline(always)]
    fn sample(&self, at: Located, portable: bool) -> Vec4 {
        let (k, u) = match at {
            Located::Key(k) => return self.held(k),
            Located::Between { k, u } => (k, u),
        };
        match self.interpolation {
            Interpolation::Step => self.key(k),
            // The next key exists wherever `locate` puts a time between two keys; a located value from
            // elsewhere that names the last key holds it.
            _ if k + 1 >= self.times.len() => self.held(k),
            Interpolation::Linear if u == 0.0 => self.key(k),
            Interpolation::Linear => {
                let (a, b) = (self.key(k), self.key(k + 1));
                if self.rotation && portable {
                    Vec4::from(super::portable::slerp(a, b, u))
                } else if self.rotation {
                    Vec4::from(slerp(Quat::from_vec4(a), Quat::from_vec4(b), u))
                } else {
                    a * (1.0 - u) + b * u
                }
            }
            Interpolation::CubicSpline => self.cubic_at(k, u),
        }
    }

    /// Key `k` held (at its time, or outside the keys): step and linear rotation keys are stored
    /// normalized, and a cubic key's value (which glTF does not require to be unit) is normalized here,
    /// as between keys.
    #[inline(always)]
    fn held(&self, k: usize) -> Vec4 {
        let v = self.key(k);
        if self.rotation && self.cubic() {
            Vec4::from(unit(Quat::from_vec4(v)))
        } else {
            v
        }
    }

    /// The cubic Hermite spline of glTF between keys `k` and `k + 1` (both exist) at `u`, its tangents
    /// scaled by the key interval; rotations are normalized.
    fn cubic_at(&self, k: usize, u: f32) -> Vec4 {
        let dt = match (self.times.get(k), self.times.get(k + 1)) {
            (Some(&t0), Some(&t1)) => t1 - t0,
            _ => 0.0,
        };
        let (v0, b0) = (self.part(k, 1).to_array(), self.part(k, 2).to_array());
        let (v1, a1) = (
            self.part(k + 1, 1).to_array(),
            self.part(k + 1, 0).to_array(),
        );
        let (u2, u3) = (u * u, u * u * u);
        let h00 = 2.0 * u3 - 3.0 * u2 + 1.0;
        let h10 = u3 - 2.0 * u2 + u;
        let h01 = -2.0 * u3 + 3.0 * u2;
        let h11 = u3 - u2;
        let out: [f32; 4] = std::array::from_fn(|i| {
            h00 * v0[i] + h10 * dt * b0[i] + h01 * v1[i] + h11 * dt * a1[i]
        });
        if self.rotation {
            Vec4::from(unit(Quat::from_array(out)))
        } else {
            Vec4::from_array(out)
        }
    }
}

/// Morph-target weights: `targets` floats per key (three blocks of `targets` for a cubic key:
/// in-tangents, values, out-tangents), sampled weight by weight with the same rules as [`Keys`].
#[derive(Clone, Copy)]
pub(crate) struct WeightKeys<'a> {
    pub(crate) times: &'a [f32],
    pub(crate) values: &'a [f32],
    pub(crate) targets: usize,
    pub(crate) interpolation: Interpolation,
}

impl WeightKeys<'_> {
    /// Weight `i` of key `k`, `part` 0, 1, 2 choosing a cubic key's in-tangent, value and out-tangent.
    /// Zero past the data.
    fn get(&self, k: usize, part: usize, i: usize) -> f32 {
        let n = self.targets;
        let at = match self.interpolation {
            Interpolation::CubicSpline => k * 3 * n + part * n + i,
            _ => k * n + i,
        };
        self.values.get(at).copied().unwrap_or(0.0)
    }

    /// Writes the weights at a located time into `out` (the first `min(out.len(), targets)`).
    pub(crate) fn sample_into(&self, at: Located, out: &mut [f32]) {
        let (k, u) = match at {
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

/// The time sampled for `t` in a clip spanning `start..=end`: clamped into the span, or wrapped into
/// `[start, end)`.
pub(crate) fn wrap_time(start: f32, end: f32, t: f32, wrap: super::Wrap) -> f32 {
    let span = end - start;
    match wrap {
        super::Wrap::Clamp => t.clamp(start, end),
        super::Wrap::Loop if span > 0.0 => {
            let d = t - start;
            let w = if d.is_finite() {
                start + d.rem_euclid(span)
            } else {
                // A finite time far from a clip of huge keys overflows `t - start` in f32; f64 holds the
                // difference of any two finite f32 exactly enough to wrap it.
                let (t, s, span) = (f64::from(t), f64::from(start), f64::from(span));
                (s + (t - s).rem_euclid(span)) as f32
            };
            // Rounding can land exactly on `end` for times just below a multiple of the span.
            if w >= end {
                start
            } else {
                w
            }
        }
        super::Wrap::Loop => start,
    }
}
