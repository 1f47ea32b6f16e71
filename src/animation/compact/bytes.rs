//! [`CompactClip::to_bytes`] and [`CompactClip::from_bytes`]: the stored form, every field checked as it
//! is read back.
//!
//! Little-endian throughout; a varint is LEB128 (7 bits per byte, low first, at most 5 bytes):
//!
//! | field | bytes |
//! | --- | --- |
//! | magic `ISKCLIP\0`, version 3 (u32) | 12 |
//! | name length (u32), name (UTF-8) | 4 + n |
//! | joints (u32), each joint's level-order index (varint) | 4 + 1 to 5 each |
//! | start, end, rate (f32), frames, weight sets (u32) | 20 |
//! | stored frame times (u32: 0 for uniform frames, else one per frame), the times (f32) | 4 + 4 each |
//! | tracks (u32); each: its joint's step from the previous track's (varint), flags (u8) | 4 + 2 each, mostly |
//! | weight tracks (u32); each: set, targets (varint), flags (u8) | 4 + 3 each, mostly |
//! | constants (u32), the floats | 4 + 4 each |
//! | components (u32); each: min, extent (f32), bit rate (u8) | 4 + 9 each |
//! | segment ranges: per segment of 16 frames, per component, `m` and `e` | 2 per pair |
//! | the frames' records, each `record bits` long (the sum of the bit rates, up to whole bytes) | |
//!
//! A track's flags: bits 0-1 its property (translation, rotation, scale), bit 2 step, bits 3-4 a
//! rotation's rebuilt component, bit 5 animated (else constant). A weight track's: bit 2 step, bit 5
//! animated. Where each track's values are is not stored: constants and components are taken in track
//! order, then weight-track order, and must be used up exactly.
//!
//! A frame's record holds one code per component, low bit first, in the sampling kernel's lane order
//! rather than the components' order: the animated translations' first components (in track order),
//! their second, their third, then the same for rotations and scales, then the weight components in
//! order. So the codes of a gang of tracks lie side by side (version 1 kept the components' order).
//! Each record is whole bytes, its last byte's unused high bits written zero and ignored on load, so
//! that every record starts on a byte and a code's bit within its byte is the same in every frame
//! (version 2 packed the records bit to bit).

use super::bits::{valid_rate, Range, SEGMENT_FRAMES, STREAM_PAD};
use super::frames::uniform_count;
use super::quantize::{offsets_of, record_order};
use super::{
    CompactClip, CompactTrack, CompactWeights, Storage, MAX_COMPACT_FRAMES,
    MAX_COMPACT_WEIGHT_SETS, MAX_SAMPLE_RATE,
};
use crate::animation::Property;
use crate::error::Error;
use crate::layout::hierarchy::MAX_JOINTS;

const MAGIC: &[u8; 8] = b"ISKCLIP\0";
const VERSION: u32 = 3;

/// How far a rotation constant's squared length may be from 1.
const UNIT_SLACK: f32 = 1e-4;

impl CompactClip {
    /// The clip as bytes, to store and load with [`from_bytes`](CompactClip::from_bytes) (the format is
    /// described in the source, `src/animation/compact/bytes.rs`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.stored_size());
        out.extend_from_slice(MAGIC);
        put_u32(&mut out, VERSION);
        let name = self.name.as_deref().unwrap_or("");
        put_len(&mut out, name.len());
        out.extend_from_slice(name.as_bytes());
        put_len(&mut out, self.joints);
        for &l in &self.level_of {
            put_varint(&mut out, l);
        }
        for x in [self.start, self.end, self.rate] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        put_len(&mut out, self.frames);
        put_len(&mut out, self.weight_sets);
        put_len(&mut out, self.times.len());
        for t in &self.times {
            out.extend_from_slice(&t.to_le_bytes());
        }
        put_len(&mut out, self.tracks.len());
        let mut previous = 0;
        for t in &self.tracks {
            // Sorted by joint: the step from the previous track's joint, mostly 0 or 1.
            put_varint(&mut out, t.level - previous);
            previous = t.level;
            let property = t.property.index() as u8;
            out.push(property | flags(t.step, t.storage) | (t.drop & 3) << 3);
        }
        put_len(&mut out, self.weights.len());
        for w in &self.weights {
            put_varint(&mut out, w.set);
            put_varint(&mut out, w.targets);
            out.push(flags(w.step, w.storage));
        }
        put_len(&mut out, self.constants.len());
        for c in &self.constants {
            out.extend_from_slice(&c.to_le_bytes());
        }
        put_len(&mut out, self.ranges.len());
        for (r, &bits) in self.ranges.iter().zip(&self.rates) {
            out.extend_from_slice(&r.min.to_le_bytes());
            out.extend_from_slice(&r.extent.to_le_bytes());
            out.push(bits);
        }
        out.extend_from_slice(&self.segment_ranges);
        out.extend_from_slice(self.stored_stream());
        out
    }

    /// The stream's bytes that are stored: every record, without the padding kept in memory.
    fn stored_stream(&self) -> &[u8] {
        let len = self.frames.saturating_mul(self.record_bits).div_ceil(8);
        self.stream.get(..len).unwrap_or(&self.stream)
    }

    /// How many bytes [`to_bytes`](CompactClip::to_bytes) writes.
    pub fn stored_size(&self) -> usize {
        12 + 4
            + self.name.as_deref().map_or(0, str::len)
            + 4
            + self.level_of.iter().map(|&l| varint_len(l)).sum::<usize>()
            + 20
            + 4
            + 4 * self.times.len()
            + 4
            + self.tracks.len()
            + self
                .tracks
                .iter()
                .scan(0, |previous, t| {
                    let step = t.level - *previous;
                    *previous = t.level;
                    Some(varint_len(step))
                })
                .sum::<usize>()
            + 4
            + self
                .weights
                .iter()
                .map(|w| 1 + varint_len(w.set) + varint_len(w.targets))
                .sum::<usize>()
            + 4
            + 4 * self.constants.len()
            + 4
            + 9 * self.ranges.len()
            + self.segment_ranges.len()
            + self.stored_stream().len()
    }

    /// Loads a clip stored by [`to_bytes`](CompactClip::to_bytes), checking every field: any byte
    /// string gets a clip or an error, never a panic, and what is allocated is proportional to the
    /// bytes given (a count is checked against the bytes left before anything is reserved for it).
    /// Only the current version (3) loads: bytes of an earlier version are refused with the rule
    /// "the version is 3"; compress the clip again to store it anew.
    ///
    /// # Errors
    /// [`Error::CompactBytes`], naming the rule a field breaks, its byte offset and its value.
    pub fn from_bytes(bytes: &[u8]) -> Result<CompactClip, Error> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(8, "the magic bytes ISKCLIP\\0")? != MAGIC {
            return Err(r.fail("the magic bytes ISKCLIP\\0", 0.0));
        }
        let version = r.u32("the version")?;
        if version != VERSION {
            return Err(r.fail("the version is 3", f64::from(version)));
        }
        let name_len = r.count("the name's length", 1, usize::MAX)?;
        let name = std::str::from_utf8(r.take(name_len, "the name")?)
            .map_err(|_| r.fail("the name is UTF-8", name_len as f64))?;
        let name = (!name.is_empty()).then(|| name.to_string());
        let joints = r.count("the joint count", 1, MAX_JOINTS)?;
        let mut level_of = Vec::with_capacity(joints);
        let mut seen = vec![false; joints];
        for _ in 0..joints {
            let l = r.varint("a joint's level-order index")?;
            match seen.get_mut(l as usize) {
                Some(s) if !*s => *s = true,
                _ => {
                    return Err(r.fail(
                        "the level-order indices are a permutation of the joints",
                        f64::from(l),
                    ))
                }
            }
            level_of.push(l);
        }
        let start = r.f32("the start time")?;
        let end = r.f32("the end time")?;
        let rate = r.f32("the sample rate")?;
        if !(start.is_finite() && end.is_finite() && end >= start && (end - start).is_finite()) {
            return Err(r.fail(
                "start and end are finite, start <= end, and the span is finite",
                f64::from(end),
            ));
        }
        let frames = r.u32("the frame count")? as usize;
        let weight_sets = r.u32("the weight set count")? as usize;
        let stored = r.count("the stored frame times", 4, MAX_COMPACT_FRAMES)?;
        let mut times = Vec::with_capacity(stored);
        for _ in 0..stored {
            times.push(r.f32("a frame time")?);
        }
        if stored == 0 {
            // Uniform frames: the count is the one the span and rate give.
            if !(rate > 0.0 && rate <= MAX_SAMPLE_RATE) {
                return Err(r.fail(
                    "a uniform clip's sample rate is in (0, 1000]",
                    f64::from(rate),
                ));
            }
            let expected = uniform_count(start, end, rate)
                .map_err(|_| r.fail("the frame count fits its limit", frames as f64))?;
            if frames != expected {
                return Err(r.fail(
                    "the frame count is the one the span and rate give",
                    frames as f64,
                ));
            }
        } else {
            let increasing = times.windows(2).all(|p| p[0] < p[1]);
            if rate != 0.0
                || stored != frames
                || stored < 2
                || times.first() != Some(&start)
                || times.last() != Some(&end)
                || !increasing
            {
                return Err(r.fail(
                    "stored frame times: rate 0, one per frame (2 or more), strictly increasing from start to end",
                    stored as f64,
                ));
            }
        }

        let track_count = r.count("the track count", 2, 3 * joints)?;
        let mut tracks: Vec<CompactTrack> = Vec::with_capacity(track_count);
        // Where each track's values are: constants and components taken in order.
        let (mut next_constant, mut next_component) = (0usize, 0usize);
        let mut place = |animated: bool, constant_floats: usize, components: usize| {
            let at = if animated {
                &mut next_component
            } else {
                &mut next_constant
            };
            let index = *at;
            *at = at.saturating_add(if animated {
                components
            } else {
                constant_floats
            });
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            if animated {
                Storage::Animated(index)
            } else {
                Storage::Constant(index)
            }
        };
        for _ in 0..track_count {
            let step = r.varint("a track's joint, as the step from the previous track's")?;
            let level = tracks.last().map_or(0, |t| t.level).saturating_add(step);
            if level as usize >= joints {
                return Err(r.fail("a track's joint is one of the clip's", f64::from(level)));
            }
            let f = r.u8("a track's flags")?;
            let property = match f & 3 {
                0 => Property::Translation,
                1 => Property::Rotation,
                2 => Property::Scale,
                p => return Err(r.fail("a track's property is 0, 1 or 2", f64::from(p))),
            };
            let drop = f >> 3 & 3;
            if f & 0xc0 != 0 || (drop != 0 && property != Property::Rotation) {
                return Err(r.fail(
                    "a track's flags: bits 6 and 7 clear, and a rebuilt component only for a rotation",
                    f64::from(f),
                ));
            }
            let rotation = property == Property::Rotation;
            let storage = place(f & 32 != 0, if rotation { 4 } else { 3 }, 3);
            if let Some(prev) = tracks.last() {
                if (prev.level, prev.property as u8) >= (level, property as u8) {
                    return Err(r.fail(
                        "tracks are sorted by joint and property, one per pair",
                        f64::from(level),
                    ));
                }
            }
            tracks.push(CompactTrack {
                level,
                property,
                step: f & 4 != 0,
                drop,
                storage,
            });
        }

        let weight_count = r.count("the weight track count", 3, usize::MAX)?;
        let mut weights: Vec<CompactWeights> = Vec::with_capacity(weight_count);
        for _ in 0..weight_count {
            let set = r.varint("a weight track's set")?;
            let targets = r.varint("a weight track's target count")?;
            if targets == 0 {
                return Err(r.fail("a weight track has targets", 0.0));
            }
            let f = r.u8("a weight track's flags")?;
            if f & !(4 | 32) != 0 {
                return Err(r.fail("a weight track's flags: only bits 2 and 5", f64::from(f)));
            }
            if weights.last().is_some_and(|p| p.set >= set) {
                return Err(r.fail(
                    "weight tracks are sorted by set, one per set",
                    f64::from(set),
                ));
            }
            let storage = place(f & 32 != 0, targets as usize, targets as usize);
            weights.push(CompactWeights {
                set,
                targets,
                step: f & 4 != 0,
                storage,
            });
        }
        let sets = weights
            .last()
            .map_or(0, |w| (w.set as usize).saturating_add(1));
        if sets > MAX_COMPACT_WEIGHT_SETS {
            return Err(r.fail(
                "at most MAX_COMPACT_WEIGHT_SETS (65,536) weight sets",
                sets as f64,
            ));
        }
        if weight_sets != sets {
            return Err(r.fail(
                "the weight set count is one more than the last set",
                weight_sets as f64,
            ));
        }

        let constant_count = r.count("the constant count", 4, usize::MAX)?;
        let mut constants = Vec::with_capacity(constant_count);
        for _ in 0..constant_count {
            let c = r.f32("a constant")?;
            if !c.is_finite() {
                return Err(r.fail("constants are finite", f64::from(c)));
            }
            constants.push(c);
        }

        let component_count = r.count("the component count", 9, usize::MAX)?;
        let mut ranges = Vec::with_capacity(component_count);
        let mut rates = Vec::with_capacity(component_count);
        for _ in 0..component_count {
            let min = r.f32("a component's minimum")?;
            let extent = r.f32("a component's extent")?;
            // Half of f32's range, so that no decoded value nor difference of two overflows.
            if !(min.is_finite() && extent >= 0.0 && min.abs() + extent <= f32::MAX / 2.0) {
                return Err(r.fail(
                    "a component's range is finite, its extent >= 0 and |min| + extent <= f32::MAX / 2",
                    f64::from(extent),
                ));
            }
            let bits = r.u8("a component's bit rate")?;
            if !valid_rate(bits) {
                return Err(r.fail("a bit rate is 0, 3 to 16, 18, 20 or 24", f64::from(bits)));
            }
            ranges.push(Range { min, extent });
            rates.push(bits);
        }

        if next_constant != constants.len() || next_component != ranges.len() {
            return Err(r.fail(
                "the tracks use every constant and component, in order",
                next_constant.max(next_component) as f64,
            ));
        }
        for t in &tracks {
            if let (Property::Rotation, Storage::Constant(c)) = (t.property, t.storage) {
                let c = c as usize;
                let len2 = constants
                    .get(c..c + 4)
                    .map_or(0.0, |q| q.iter().map(|x| x * x).sum::<f32>());
                if len2.is_nan() || (len2 - 1.0).abs() > UNIT_SLACK {
                    return Err(r.fail("a constant rotation has unit length", f64::from(len2)));
                }
            }
        }

        let segments = frames.div_ceil(SEGMENT_FRAMES);
        let pairs = segments
            .checked_mul(component_count)
            .and_then(|p| p.checked_mul(2))
            .ok_or_else(|| r.fail("the segment ranges fit in the bytes left", 0.0))?;
        let segment_ranges = r.take(pairs, "the segment ranges")?.to_vec();
        for (i, pair) in segment_ranges.chunks_exact(2).enumerate() {
            if u16::from(pair[0]) + u16::from(pair[1]) > 255 {
                return Err(r.fail(
                    "a segment range lies inside its component's range (m + e <= 255)",
                    i as f64,
                ));
            }
        }
        let order = record_order(&tracks, rates.len());
        let (offsets, record_bits) = offsets_of(&rates, &order);
        let stream_len = frames
            .checked_mul(record_bits)
            .map(|b| b.div_ceil(8))
            .ok_or_else(|| r.fail("the frames fit in the bytes left", 0.0))?;
        // Taken before anything is reserved: the bytes must hold every record.
        let frames_bytes = r.take(stream_len, "the frames")?;
        let mut stream = Vec::with_capacity(stream_len.saturating_add(STREAM_PAD));
        stream.extend_from_slice(frames_bytes);
        stream.resize(stream_len.saturating_add(STREAM_PAD), 0);
        if r.at != bytes.len() {
            return Err(r.fail("nothing follows the frames", (bytes.len() - r.at) as f64));
        }
        Ok(CompactClip {
            name,
            joints,
            level_of,
            start,
            end,
            rate,
            frames,
            times,
            tracks,
            weights,
            weight_sets,
            constants,
            ranges,
            rates,
            offsets,
            record_bits,
            segment_ranges,
            stream,
            lanes: std::sync::OnceLock::new(),
            id: crate::skeleton::OwnerId::new(),
        })
    }
}

fn put_u32(out: &mut Vec<u8>, x: u32) {
    out.extend_from_slice(&x.to_le_bytes());
}

/// A count the clip's own limits keep below 2^32.
fn put_len(out: &mut Vec<u8>, n: usize) {
    put_u32(out, u32::try_from(n).unwrap_or(u32::MAX));
}

/// `x` in LEB128: 7 bits per byte, low first, the high bit set on every byte but the last.
fn put_varint(out: &mut Vec<u8>, mut x: u32) {
    while x >= 0x80 {
        out.push((x & 0x7f) as u8 | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

/// The bytes of `x` in LEB128.
fn varint_len(x: u32) -> usize {
    match x {
        0..0x80 => 1,
        0x80..0x4000 => 2,
        0x4000..0x20_0000 => 3,
        0x20_0000..0x1000_0000 => 4,
        _ => 5,
    }
}

/// A track's step and animated flags (bits 2 and 5).
fn flags(step: bool, storage: Storage) -> u8 {
    u8::from(step) << 2 | u8::from(matches!(storage, Storage::Animated(_))) << 5
}

/// Reads fields in turn; every error names the rule and where.
struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    fn fail(&self, rule: &'static str, value: f64) -> Error {
        Error::CompactBytes {
            rule,
            offset: self.at,
            value,
        }
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'b [u8], Error> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                self.fail(
                    match what {
                        "the magic bytes ISKCLIP\\0" => "the bytes hold the magic bytes",
                        _ => "the bytes hold every field (none is cut short)",
                    },
                    n as f64,
                )
            })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, Error> {
        Ok(self.take(1, what)?[0])
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, Error> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A LEB128 `u32`: at most 5 bytes, the fifth holding at most 4 bits.
    fn varint(&mut self, what: &'static str) -> Result<u32, Error> {
        let mut x = 0u32;
        for i in 0..5 {
            let b = self.u8(what)?;
            if i == 4 && b > 0x0f {
                return Err(self.fail("a variable-length integer fits 32 bits", f64::from(b)));
            }
            x |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(x);
            }
        }
        Ok(x)
    }

    fn f32(&mut self, what: &'static str) -> Result<f32, Error> {
        Ok(f32::from_bits(self.u32(what)?))
    }

    /// A count of items of at least `each` bytes: at most `max`, and no more than the bytes left hold
    /// (so that nothing is allocated beyond the input's size).
    fn count(&mut self, what: &'static str, each: usize, max: usize) -> Result<usize, Error> {
        let n = self.u32(what)? as usize;
        let left = self.bytes.len() - self.at;
        if n > max || n.saturating_mul(each) > left {
            return Err(self.fail(
                "a count is within its limit and the bytes left hold its items",
                n as f64,
            ));
        }
        Ok(n)
    }
}
