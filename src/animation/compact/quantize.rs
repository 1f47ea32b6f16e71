//! Quantizing a track's frames at a level (a constant, or a bit rate with clip and segment ranges), as
//! the compressor tries levels and packs the one it keeps; the decoded values are what the decoder
//! rebuilds from the packed bits.

use super::bits::{Range, BIT_RATES, SEGMENT_FRAMES};
use super::decode::{dot, rotation_of, unit};
use super::{CompactTrack, Storage};
use crate::layout::compact::lane_order;
use glam::Vec4;

/// Levels a track may have: 0 is one constant value, level `l > 0` stores every frame at
/// `BIT_RATES[l - 1]` bits per component.
pub(crate) const LEVELS: usize = BIT_RATES.len() + 1;

/// One track quantized at one level: what the clip stores and what it decodes to.
#[derive(Clone)]
pub(crate) struct Quantized {
    /// `None` for a constant.
    pub(crate) stored: Option<Stored>,
    /// The constant's floats (4 for a rotation), or empty.
    pub(crate) constant: Vec<f32>,
    /// The value of each frame as the decoder rebuilds it.
    pub(crate) decoded: Vec<Vec4>,
}

#[derive(Clone)]
pub(crate) struct Stored {
    pub(crate) ranges: Vec<Range>,
    pub(crate) rates: Vec<u8>,
    /// Per segment, per component: `(m, e)`.
    pub(crate) segments: Vec<[u8; 2]>,
    /// Per frame, per component.
    pub(crate) q: Vec<u32>,
}

/// Quantizes a track's frame samples at `level`: `n` components stored per frame, those of a
/// translation, scale or weight set, or for a rotation (`drop: Some(d)`, samples with component `d`
/// not negative) the three components other than `d`.
pub(crate) fn quantize(samples: &[Vec4], n: usize, drop: Option<u8>, level: usize) -> Quantized {
    let frames = samples.len();
    let rotation = drop.is_some();
    if level == 0 {
        let value = if rotation {
            let first = samples.first().copied().unwrap_or(Vec4::W);
            let sum = samples.iter().fold(Vec4::ZERO, |acc, &q| {
                acc + if dot(q, first) < 0.0 { -q } else { q }
            });
            unit(sum)
        } else {
            let mut c = [0.0; 4];
            for (i, x) in c.iter_mut().enumerate().take(n) {
                let r = Range::of(samples.iter().map(|v| v[i]));
                *x = r.min + r.extent * 0.5;
            }
            Vec4::from(c)
        };
        return Quantized {
            stored: None,
            constant: value.to_array()[..if rotation { 4 } else { n }].to_vec(),
            decoded: vec![value; frames],
        };
    }
    let bits = BIT_RATES[level - 1];
    let stored: Vec<Vec4> = match drop {
        Some(d) => samples.iter().map(|&v| kept(v, d)).collect(),
        None => samples.to_vec(),
    };
    let samples = &stored[..];
    let ranges: Vec<Range> = (0..n)
        .map(|c| Range::of(samples.iter().map(|v| v[c])))
        .collect();
    // The level's bits go to the component with the largest range; each other component gets the
    // fewest bits whose step is no coarser (0 where its whole range is within one step): a knee turns
    // about one axis, and its other two components, constant to a few ulps, cost nothing per frame.
    let widest = ranges.iter().map(|r| r.extent).fold(0.0f32, f32::max);
    let step = widest / ((1u64 << bits) - 1) as f32;
    let rates: Vec<u8> = ranges
        .iter()
        .map(|r| {
            if r.extent <= step {
                return 0;
            }
            BIT_RATES
                .iter()
                .copied()
                .filter(|&b| b <= bits)
                .find(|&b| r.extent / ((1u64 << b) - 1) as f32 <= step)
                .unwrap_or(bits)
        })
        .collect();
    let segment_count = frames.div_ceil(SEGMENT_FRAMES);
    let mut segments = Vec::with_capacity(segment_count * n);
    let mut q = vec![0u32; frames * n];
    let mut decoded = vec![Vec4::ZERO; frames];
    for s in 0..segment_count {
        let run = s * SEGMENT_FRAMES..((s + 1) * SEGMENT_FRAMES).min(frames);
        for c in 0..n {
            let seg = Range::of(samples[run.clone()].iter().map(|v| v[c]));
            let (m, e) = ranges[c].segment_of(seg.min, seg.min + seg.extent);
            segments.push([m, e]);
            let within = ranges[c].segment(m, e);
            for f in run.clone() {
                let code = within.encode(samples[f][c], rates[c]);
                q[f * n + c] = code;
                decoded[f][c] = within.decode(code, rates[c]);
            }
        }
    }
    if let Some(d) = drop {
        for v in &mut decoded {
            *v = rotation_of([v.x, v.y, v.z], d);
        }
    }
    Quantized {
        stored: Some(Stored {
            ranges,
            rates,
            segments,
            q,
        }),
        constant: Vec::new(),
        decoded,
    }
}

/// The three components of `q` other than `d`, in order.
pub(crate) fn kept(q: Vec4, d: u8) -> Vec4 {
    let a = q.to_array();
    let mut out = [0.0; 4];
    let mut i = 0;
    for (c, x) in a.into_iter().enumerate() {
        if c != usize::from(d) {
            out[i] = x;
            i += 1;
        }
    }
    Vec4::from(out)
}

/// The component a rotation track rebuilds from the other three: the one whose smallest magnitude
/// over the frames is largest, so that `sqrt(1 - a² - b² - c²)` stays well conditioned (a rotation
/// near half a turn has `w` near 0, where rebuilding `w` turned a 24-bit error into 1e-3 radians).
pub(crate) fn drop_of(samples: &[Vec4]) -> u8 {
    let mut best = (f32::NEG_INFINITY, 3u8);
    for d in [3u8, 0, 1, 2] {
        let least = samples
            .iter()
            .map(|v| v[usize::from(d)].abs())
            .fold(f32::INFINITY, f32::min);
        if least > best.0 {
            best = (least, d);
        }
    }
    best.1
}

/// A weight track's samples quantized at `level` (as [`quantize`], `targets` components, more than
/// four allowed): decoded values are read back with [`weight_at`].
pub(crate) fn quantize_weights(samples: &[Vec<f32>], targets: usize, level: usize) -> Quantized {
    // Quantize each target as its own one-component track and gather them.
    let frames = samples.len();
    let mut stored: Option<Stored> = (level > 0).then(|| Stored {
        ranges: Vec::new(),
        rates: Vec::new(),
        segments: vec![[0, 0]; frames.div_ceil(SEGMENT_FRAMES) * targets],
        q: vec![0; frames * targets],
    });
    let mut constant_values = Vec::with_capacity(targets);
    let mut decoded = vec![Vec4::ZERO; frames * targets];
    for c in 0..targets {
        let column: Vec<Vec4> = samples
            .iter()
            .map(|s| Vec4::new(s.get(c).copied().unwrap_or(0.0), 0.0, 0.0, 0.0))
            .collect();
        let q = quantize(&column, 1, None, level);
        for f in 0..frames {
            decoded[f * targets + c] = q.decoded[f];
        }
        constant_values.extend(q.constant.first().copied());
        if let (Some(st), Some(one)) = (stored.as_mut(), q.stored) {
            st.ranges.push(one.ranges[0]);
            st.rates.push(one.rates[0]);
            for (s, seg) in one.segments.iter().enumerate() {
                st.segments[s * targets + c] = *seg;
            }
            for (f, code) in one.q.iter().enumerate() {
                st.q[f * targets + c] = *code;
            }
        }
    }
    Quantized {
        stored,
        constant: if level == 0 {
            constant_values
        } else {
            Vec::new()
        },
        decoded,
    }
}

/// The order of a frame record's codes: the animated tracks' components in the sampling kernel's lane
/// order ([`lane_order`]), so that a gang's codes lie side by side, then every other component (morph
/// weights) in index order. Each of the `components` once (an index out of range or repeated, which
/// checked tracks never give, is left to its place in index order).
pub(crate) fn record_order(tracks: &[CompactTrack], components: usize) -> Vec<usize> {
    let pairs: Vec<(usize, Option<usize>)> = tracks
        .iter()
        .map(|t| match t.storage {
            Storage::Animated(k) => (t.property.index(), Some(k as usize)),
            Storage::Constant(_) => (t.property.index(), None),
        })
        .collect();
    let mut placed = vec![false; components];
    let mut order = Vec::with_capacity(components);
    for k in lane_order(&pairs).into_iter().chain(0..components) {
        if let Some(p) = placed.get_mut(k) {
            if !*p {
                *p = true;
                order.push(k);
            }
        }
    }
    order
}

/// Each component's first bit in a frame's record, its codes in `order` (each component once:
/// [`record_order`]), and the record's bits: the sum of the rates, up to whole bytes, so that every
/// record starts on a byte and the kernel finds a code's bit within its byte in its tables.
pub(crate) fn offsets_of(rates: &[u8], order: &[usize]) -> (Vec<usize>, usize) {
    let mut offsets = vec![0usize; rates.len()];
    let mut at = 0usize;
    for &k in order {
        if let (Some(o), Some(&r)) = (offsets.get_mut(k), rates.get(k)) {
            *o = at;
            at += usize::from(r);
        }
    }
    (offsets, at.next_multiple_of(8))
}
