//! Where a compact clip's frames lie in time, and where a time falls among them.
//!
//! Frames are uniform (`rate` frames per second from the start, and a last frame at the end, which may
//! come sooner), or, for a clip whose keys are not on one grid, the clip's key times themselves, stored.

use super::MAX_COMPACT_FRAMES;
use crate::animation::clip::Clip;
use crate::error::Error;

/// Where a time falls among a compact clip's frames: frame `i` and the fraction `alpha` of the way to
/// frame `i + 1` (`i + 1` is a frame whenever the clip has two).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FrameAt {
    pub(crate) i: usize,
    pub(crate) alpha: f32,
}

/// A clip's frame placement.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frames<'a> {
    pub(crate) start: f32,
    pub(crate) end: f32,
    /// Uniform frames per second (unused with explicit times).
    pub(crate) rate: f32,
    pub(crate) count: usize,
    /// The frame times when they are stored (strictly increasing, from start to end); empty for
    /// uniform frames.
    pub(crate) explicit: &'a [f32],
}

impl Frames<'_> {
    /// Every frame's time.
    pub(crate) fn times(&self) -> Vec<f32> {
        if !self.explicit.is_empty() {
            return self.explicit.to_vec();
        }
        uniform_times(self.start, self.end, self.rate).unwrap_or_else(|_| vec![self.start])
    }

    /// Where time `t` (inside the span, after wrapping) falls among the frames.
    pub(crate) fn locate(&self, t: f32) -> FrameAt {
        const FIRST: FrameAt = FrameAt { i: 0, alpha: 0.0 };
        if self.count < 2 {
            return FIRST;
        }
        let last = self.count - 2;
        if !self.explicit.is_empty() {
            let times = self.explicit;
            // NaN and times at or before the first frame hold it.
            if t.is_nan() || times.first().is_none_or(|&f| t <= f) {
                return FIRST;
            }
            let i = times
                .partition_point(|&x| x <= t)
                .saturating_sub(1)
                .min(last);
            return match (times.get(i), times.get(i + 1)) {
                (Some(&a), Some(&b)) if b > a => FrameAt {
                    i,
                    alpha: ((t - a) / (b - a)).clamp(0.0, 1.0),
                },
                _ => FrameAt { i, alpha: 1.0 },
            };
        }
        // In f64: past a thousand frames an f32 ulp of f is larger than the snap below.
        let f = (f64::from(t) - f64::from(self.start)) * f64::from(self.rate);
        if f.is_nan() || f <= 0.0 {
            return FIRST;
        }
        if f < last as f64 {
            // 0 < f < last: the floor is a frame before the last interval. A time on a frame can
            // compute f a rounding below it: within 1e-4 of a frame below counts as on it, so that a
            // step track changes at the key the clip changes at. (`as` truncates, which for a
            // positive value is the floor, without a call to libm's.)
            let i = ((f + 1e-4) as usize).min(last);
            return FrameAt {
                i,
                alpha: (f - i as f64).max(0.0) as f32,
            };
        }
        // The last interval, from frame `last` to the end.
        let t0 = uniform_time(self.start, self.end, self.rate, last);
        let span = self.end - t0;
        let alpha = if span > 0.0 {
            ((t - t0) / span).clamp(0.0, 1.0)
        } else {
            1.0
        };
        FrameAt { i: last, alpha }
    }
}

/// Uniform frame `i`'s time, before the last frame: `start + i / rate`, computed in f64.
fn uniform_time(start: f32, end: f32, rate: f32, i: usize) -> f32 {
    ((f64::from(start) + i as f64 / f64::from(rate)) as f32).min(end)
}

/// How many uniform frames a clip from `start` to `end` has at `rate` frames per second: frame `i` at
/// `start + i / rate`, and a last frame at `end` where the span is not a whole number of frames (within
/// 1e-4 of a frame); 1 for an empty span.
///
/// # Errors
/// [`Error::TooManyKeys`] past [`MAX_COMPACT_FRAMES`].
pub(crate) fn uniform_count(start: f32, end: f32, rate: f32) -> Result<usize, Error> {
    let span = f64::from(end) - f64::from(start);
    if !(span > 0.0 && rate > 0.0 && rate.is_finite()) {
        return Ok(1);
    }
    let m = span * f64::from(rate);
    let whole = (m + 1e-4).floor();
    let frames = if (m - whole).abs() <= 1e-4 {
        whole + 1.0
    } else {
        whole + 2.0
    };
    if frames.is_nan() || frames > MAX_COMPACT_FRAMES as f64 {
        return Err(Error::TooManyKeys {
            what: "compact clip frames",
            floats: if frames.is_finite() {
                frames as usize
            } else {
                usize::MAX
            },
            max: MAX_COMPACT_FRAMES,
        });
    }
    // Between 2 and 2^20.
    Ok((frames as usize).max(2))
}

/// The times of [`uniform_count`]'s frames.
pub(crate) fn uniform_times(start: f32, end: f32, rate: f32) -> Result<Vec<f32>, Error> {
    let n = uniform_count(start, end, rate)?;
    if n == 1 {
        return Ok(vec![start]);
    }
    Ok((0..n)
        .map(|i| {
            if i + 1 == n {
                end
            } else {
                uniform_time(start, end, rate, i)
            }
        })
        .collect())
}

/// Every key time of the clip, sorted, once each.
pub(crate) fn key_times(clip: &Clip) -> Vec<f32> {
    let mut keys: Vec<f32> = Vec::new();
    for i in 0..clip.timelines.len() {
        keys.extend_from_slice(clip.timeline(i as u32));
    }
    keys.sort_by(f32::total_cmp);
    keys.dedup();
    keys
}

/// Uniform frame times with each one within 1e-4 of a frame of a key moved onto the key: `start + i /
/// rate` rounds to either side of a key's time, and a step track sampled a rounding before its key
/// holds the previous key.
pub(crate) fn snapped(mut times: Vec<f32>, keys: &[f32], rate: f64) -> Vec<f32> {
    let near = 1e-4 / rate;
    for t in &mut times {
        let i = keys.partition_point(|&k| k < *t);
        for k in [i.checked_sub(1), Some(i)].into_iter().flatten() {
            if let Some(&key) = keys.get(k) {
                if (f64::from(key) - f64::from(*t)).abs() <= near {
                    *t = key;
                }
            }
        }
    }
    times
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_frames_end_at_the_end() {
        assert_eq!(uniform_count(0.0, 1.0, 24.0).unwrap(), 25);
        assert_eq!(uniform_count(0.0, 1.01, 24.0).unwrap(), 26);
        assert_eq!(uniform_count(1.0, 1.0, 24.0).unwrap(), 1);
        let times = uniform_times(0.0, 1.01, 24.0).unwrap();
        assert_eq!(*times.last().unwrap(), 1.01);
        let f = Frames {
            start: 0.0,
            end: 1.01,
            rate: 24.0,
            count: times.len(),
            explicit: &[],
        };
        assert_eq!(f.locate(-1.0), FrameAt { i: 0, alpha: 0.0 });
        assert_eq!(f.locate(1.01), FrameAt { i: 24, alpha: 1.0 });
        let mid = f.locate(0.5 / 24.0);
        assert_eq!(mid.i, 0);
        assert!((mid.alpha - 0.5).abs() < 1e-5);
        assert!(uniform_count(0.0, 1e6, 60.0).is_err());
    }

    #[test]
    fn explicit_frames_are_searched() {
        let times = [0.0, 0.1, 0.5, 0.6];
        let f = Frames {
            start: 0.0,
            end: 0.6,
            rate: 0.0,
            count: 4,
            explicit: &times,
        };
        assert_eq!(f.locate(0.0), FrameAt { i: 0, alpha: 0.0 });
        assert_eq!(f.locate(0.5), FrameAt { i: 2, alpha: 0.0 });
        assert_eq!(f.locate(0.6), FrameAt { i: 2, alpha: 1.0 });
        let at = f.locate(0.3);
        assert_eq!(at.i, 1);
        assert!((at.alpha - 0.5).abs() < 1e-5);
        assert_eq!(f.locate(f32::NAN), FrameAt { i: 0, alpha: 0.0 });
    }
}
