//! A compact clip's tracks in the compact sampling kernel's layout (`compact_sample` in
//! ispc/det/compact.ispc): the tracks grouped by property, animated or constant, and each group's
//! components stored c-major (entry `base + c * n + j` for component `c` of track `j`), so that the
//! lanes, across a group's tracks, read their tables with contiguous loads. A frame record holds the
//! animated components' codes in the same lane order ([`lane_order`]), one after the other, so that a
//! gang's codes lie in a few consecutive words; records are whole bytes, so each code's bit within its
//! byte is the same in every frame, and its mask and scale are stored for that bit (the kernel reads
//! a code in place); the segment ranges are copied into lane order. A
//! decoded frame (`compact_decode`, kept by a `CompactContext`) holds the lane components in the same
//! order, then the rebuilt rotation components ([`CompactLanes::decoded_len`]).

/// Ints per group in [`CompactLanes::groups`]: kind (0, 1, 2 animated translations, rotations and
/// scales; 3, 4, 5 constant ones), track count `n`, the first entry of its components (animated) or
/// values (constant), the index of its first track in the levels and flags, and its first level when
/// its levels are consecutive (its outputs one contiguous run), else -1.
pub(crate) const COMPACT_GROUP_INTS: usize = 5;

/// Bits per component code at most (bits.rs's widest rate).
const MAX_BITS: u8 = 24;

/// A stored component as [`CompactLanes::new`] takes it: its first bit in a frame record, its bit rate
/// (0 to 24), and its range over the clip.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LaneComponent {
    pub(crate) offset: usize,
    pub(crate) bits: u8,
    pub(crate) min: f32,
    pub(crate) extent: f32,
}

/// A track's values as [`CompactLanes::new`] takes them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LaneValue {
    /// One value for every time (a rotation already normalized; 3 floats used otherwise).
    Constant([f32; 4]),
    /// The index of its first stored component: 3 components from there.
    Animated(usize),
}

/// A track as [`CompactLanes::new`] takes it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LaneTrack {
    pub(crate) level: usize,
    /// 0 translation, 1 rotation, 2 scale.
    pub(crate) property: usize,
    pub(crate) step: bool,
    /// A rotation's rebuilt component, 0 to 3.
    pub(crate) drop: u8,
    pub(crate) value: LaneValue,
}

/// What the stream of frames looks like, as [`CompactLanes::new`] checks it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LaneStream<'a> {
    pub(crate) frames: usize,
    pub(crate) record_bits: usize,
    pub(crate) stream_len: usize,
    /// Per segment of 16 frames, per stored component: `(m, e)`.
    pub(crate) segment_ranges: &'a [u8],
    pub(crate) components: &'a [LaneComponent],
}

/// Frames per segment (bits.rs's `SEGMENT_FRAMES`).
pub(crate) const SEGMENT_FRAMES: usize = 16;

/// Bytes the kernel may read past the last frame record's last byte: a whole gang's words (16 lanes of
/// 4 bytes), loaded from the word of the gang's first code (`unit` in ispc/det/compact.ispc).
pub(crate) const STREAM_READ_PAD: usize = 64;

/// Entries every per-lane table (and a decoded frame) holds past its last real one, zeros: a whole
/// gang of at most 16 lanes reads a group's tables from any of its tracks, so that a group smaller
/// than a gang, or a group's last tracks, are computed with every lane on and every lane's values real
/// (only the stores are masked). A masked gang leaves its inactive lanes' registers undefined, and
/// denormal garbage there costs a microcode assist per operation on Intel cores: sampling a clip of 6
/// tracks on AVX-512 took twice as long as on AVX2 (measured on a Xeon, 2026-12-07).
pub(crate) const TABLE_PAD: usize = 16;

/// `TABLE_PAD` zeros appended to a table.
fn pad<T: Copy + Default>(v: &mut Vec<T>) {
    v.resize(v.len() + TABLE_PAD, T::default());
}

/// The animated components in lane order, the order of the kernel's tables and of a frame record's
/// codes: animated translations, then rotations, then scales; within each, component 0 of every such
/// track (in track order), then component 1, then 2. `tracks` gives each track's property (0
/// translation, 1 rotation, 2 scale) and, for an animated track, its first stored component.
pub(crate) fn lane_order(tracks: &[(usize, Option<usize>)]) -> Vec<usize> {
    let mut order = Vec::new();
    for property in 0..3 {
        for c in 0..3 {
            for &(p, first) in tracks {
                if let (true, Some(k)) = (p == property, first) {
                    order.push(k.saturating_add(c));
                }
            }
        }
    }
    order
}

/// The checked tables of one compact clip.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct CompactLanes {
    groups: Vec<i32>,
    levels: Vec<i32>,
    flags: Vec<i32>,
    offsets: Vec<i32>,
    masks: Vec<i32>,
    invs: Vec<f32>,
    mins: Vec<f32>,
    extents: Vec<f32>,
    /// Per segment, per lane component: `m | e << 8`.
    segments: Vec<u16>,
    constants: Vec<f32>,
    /// Lane components per segment row.
    lane_components: usize,
    frames: usize,
    record_bits: usize,
    stream_len: usize,
    joints: usize,
}

/// What one kernel call is given for one frame: its record's first byte (records are whole bytes) and
/// its segment's row's first entry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FrameRecord {
    pub(crate) byte: usize,
    pub(crate) segment: i32,
}

impl CompactLanes {
    /// The tables of `tracks`, or `None` when one breaks an invariant the kernel relies on: a level
    /// below `joints`, a property 0 to 2, a drop 0 to 3, an animated track's three components among
    /// `stream.components`, records of whole bytes (`record_bits` a multiple of 8), each component's
    /// code inside a frame record (`offset + bits <= record_bits`, bits at most 24), the animated
    /// components' codes one after the other in [`lane_order`], one `(m, e)` per segment and
    /// component, a stream holding every record and [`STREAM_READ_PAD`] bytes past the last record's
    /// last byte, and every index the kernel computes in `i32`.
    pub(crate) fn new(
        tracks: &[LaneTrack],
        joints: usize,
        stream: LaneStream<'_>,
    ) -> Option<CompactLanes> {
        let fits = |x: usize| i32::try_from(x).ok();
        fits(joints.checked_mul(4)?)?;
        // The kernel reads a code at its offset from its record's first byte.
        if stream.record_bits % 8 != 0 {
            return None;
        }
        fits(stream.record_bits)?;
        fits(stream.stream_len)?;
        let segments = stream.frames.div_ceil(SEGMENT_FRAMES).max(1);
        let stored = stream.components.len();
        if stream.segment_ranges.len() != segments.checked_mul(stored)?.checked_mul(2)? {
            return None;
        }
        // Every record, and a gang's words from the word of the last code a gang may start at.
        let last_byte = stream.frames.max(1).checked_mul(stream.record_bits)? / 8;
        if stream.stream_len < last_byte.checked_add(STREAM_READ_PAD)? {
            return None;
        }
        for c in stream.components {
            if c.bits > MAX_BITS || c.offset.checked_add(usize::from(c.bits))? > stream.record_bits
            {
                return None;
            }
        }
        for t in tracks {
            if t.level >= joints || t.property > 2 || t.drop > 3 {
                return None;
            }
            if let LaneValue::Animated(k) = t.value {
                if k.checked_add(3)? > stored {
                    return None;
                }
            }
        }
        let mut lanes = CompactLanes {
            frames: stream.frames,
            record_bits: stream.record_bits,
            stream_len: stream.stream_len,
            joints,
            ..CompactLanes::default()
        };
        // Animated groups first: their components in lane order.
        let pairs: Vec<(usize, Option<usize>)> = tracks
            .iter()
            .map(|t| match t.value {
                LaneValue::Animated(k) => (t.property, Some(k)),
                LaneValue::Constant(_) => (t.property, None),
            })
            .collect();
        let order = lane_order(&pairs);
        let mut animated = 0usize;
        for kind in 0..6usize {
            let members: Vec<&LaneTrack> = tracks
                .iter()
                .filter(|t| {
                    let animated = matches!(t.value, LaneValue::Animated(_));
                    t.property == kind % 3 && animated == (kind < 3)
                })
                .collect();
            if members.is_empty() {
                continue;
            }
            let n = members.len();
            let first = lanes.levels.len();
            let base = if kind < 3 {
                let b = animated;
                animated = animated.checked_add(n.checked_mul(3)?)?;
                b
            } else {
                lanes.constants.len()
            };
            let consecutive = members
                .windows(2)
                .all(|w| w[0].level.checked_add(1) == Some(w[1].level));
            let l0 = if consecutive {
                fits(members[0].level)?
            } else {
                -1
            };
            for x in [kind, n, base, first] {
                lanes.groups.push(fits(x)?);
            }
            lanes.groups.push(l0);
            for t in &members {
                lanes.levels.push(fits(t.level)?);
                lanes
                    .flags
                    .push(i32::from(t.step) | (i32::from(t.drop) << 1));
            }
            let c = if kind == 4 { 4 } else { 3 };
            for comp in 0..c {
                for t in &members {
                    if let LaneValue::Constant(v) = t.value {
                        lanes.constants.push(v[comp]);
                    }
                }
            }
        }
        fits(order.len())?;
        // The kernel reads a gang's codes from the words of the first (`unit`): each code starts where
        // the one before it in lane order ends.
        for w in order.windows(2) {
            let (a, b) = (stream.components.get(w[0])?, stream.components.get(w[1])?);
            if a.offset.checked_add(usize::from(a.bits))? != b.offset {
                return None;
            }
        }
        for &k in &order {
            let c = stream.components.get(k)?;
            lanes.offsets.push(fits(c.offset)?);
            // The code read in place, at bit `s` of the 32 bits from its byte: its mask there, and
            // 2^-s / (2^bits - 1) (`unit` in the kernel; both scalings by 2^s are exact: the code
            // shifted is below 2^31, and the scale stays a normal float).
            let s = (c.offset % 8) as u32;
            let mask = if c.bits == 0 { 0 } else { (1u32 << c.bits) - 1 };
            lanes.masks.push(i32::try_from(mask << s).ok()?);
            let inv = if c.bits == 0 { 0.0 } else { 1.0 / mask as f32 };
            lanes.invs.push(inv / (1u32 << s) as f32);
            lanes.mins.push(c.min);
            lanes.extents.push(c.extent);
        }
        lanes.lane_components = order.len();
        fits(segments.checked_mul(order.len())?.checked_add(TABLE_PAD)?)?;
        for s in 0..segments {
            for &k in &order {
                let at = (s * stored + k) * 2;
                let m = *stream.segment_ranges.get(at)?;
                let e = *stream.segment_ranges.get(at + 1)?;
                lanes.segments.push(u16::from(m) | (u16::from(e) << 8));
            }
        }
        for v in [
            &mut lanes.levels,
            &mut lanes.flags,
            &mut lanes.offsets,
            &mut lanes.masks,
        ] {
            pad(v);
        }
        for v in [
            &mut lanes.invs,
            &mut lanes.mins,
            &mut lanes.extents,
            &mut lanes.constants,
        ] {
            pad(v);
        }
        pad(&mut lanes.segments);
        // Every index the kernel computes, into the padded tables and a decoded frame
        // (`decoded_len`, from the padded levels), fits in i32.
        fits(lanes.constants.len())?;
        fits(lanes.offsets.len())?;
        fits(lanes.decoded_len())?;
        Some(lanes)
    }

    /// Frame `f`'s record (`f` below the frame count, else the last frame's).
    pub(crate) fn record(&self, f: usize) -> FrameRecord {
        let f = f.min(self.frames.saturating_sub(1));
        FrameRecord {
            byte: f * (self.record_bits / 8),
            segment: ((f / SEGMENT_FRAMES) * self.lane_components) as i32,
        }
    }

    /// Whether the kernel's reads for `r` stay inside the stream and the segment rows: its first byte
    /// at or before the last record's, and a whole segment row from its segment entry.
    pub(crate) fn holds(&self, r: FrameRecord) -> bool {
        let last = self.frames.max(1).saturating_sub(1) * (self.record_bits / 8);
        let rows = self.segments.len().saturating_sub(TABLE_PAD);
        r.byte <= last
            && usize::try_from(r.segment).is_ok_and(|s| {
                s.checked_add(self.lane_components)
                    .is_some_and(|end| end <= rows)
            })
    }

    pub(crate) fn joints(&self) -> usize {
        self.joints
    }
    /// Stored components per frame, in lane order.
    pub(crate) fn lane_components(&self) -> usize {
        self.lane_components
    }
    /// Floats of one decoded frame (`compact_decode`): the lane components, then one rebuilt component
    /// per track (at `lane_components + first + j` for track `j` of the animated rotation group whose
    /// first track is `first`; the other tracks' entries unused), then [`TABLE_PAD`] floats that a
    /// gang reads and never writes.
    pub(crate) fn decoded_len(&self) -> usize {
        // `levels` holds one entry per track, then the padding.
        self.lane_components + self.levels.len()
    }
    pub(crate) fn stream_len(&self) -> usize {
        self.stream_len
    }
    /// The tables below each hold [`TABLE_PAD`] zeros past their real entries (`segments` past its
    /// last row).
    pub(crate) fn groups(&self) -> &[i32] {
        &self.groups
    }
    pub(crate) fn levels(&self) -> &[i32] {
        &self.levels
    }
    pub(crate) fn flags(&self) -> &[i32] {
        &self.flags
    }
    pub(crate) fn offsets(&self) -> &[i32] {
        &self.offsets
    }
    pub(crate) fn masks(&self) -> &[i32] {
        &self.masks
    }
    pub(crate) fn invs(&self) -> &[f32] {
        &self.invs
    }
    pub(crate) fn mins(&self) -> &[f32] {
        &self.mins
    }
    pub(crate) fn extents(&self) -> &[f32] {
        &self.extents
    }
    pub(crate) fn segments(&self) -> &[u16] {
        &self.segments
    }
    pub(crate) fn constants(&self) -> &[f32] {
        &self.constants
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two animated translations of 8-bit components over 2 frames (12 bytes), their codes at
    /// `offsets`, in a stream of `stream_len` bytes, records `record_bits` long.
    fn lanes_with(
        offsets: [usize; 6],
        record_bits: usize,
        stream_len: usize,
    ) -> Option<CompactLanes> {
        let tracks = [0, 1].map(|j| LaneTrack {
            level: j,
            property: 0,
            step: false,
            drop: 0,
            value: LaneValue::Animated(3 * j),
        });
        let components = offsets.map(|offset| LaneComponent {
            offset,
            bits: 8,
            min: 0.0,
            extent: 1.0,
        });
        CompactLanes::new(
            &tracks,
            2,
            LaneStream {
                frames: 2,
                record_bits,
                stream_len,
                segment_ranges: &[0; 12],
                components: &components,
            },
        )
    }

    #[test]
    fn codes_must_lie_in_lane_order() {
        // Lane order: x of both tracks, then y, then z.
        assert_eq!(
            lane_order(&[(0, Some(0)), (1, None), (0, Some(3))]),
            [0, 3, 1, 4, 2, 5]
        );
        let padded = 12 + STREAM_READ_PAD;
        let lanes = lanes_with([0, 16, 32, 8, 24, 40], 48, padded).expect("codes in lane order");
        assert_eq!(lanes.offsets()[..6], [0, 8, 16, 24, 32, 40]);
        // Every table padded with zeros for a whole gang's reads.
        assert_eq!(lanes.offsets().len(), 6 + TABLE_PAD);
        assert!(lanes.offsets()[6..].iter().all(|&o| o == 0));
        assert_eq!(lanes.levels().len(), 2 + TABLE_PAD);
        assert_eq!(lanes.segments().len(), 6 + TABLE_PAD);
        assert_eq!(lanes.decoded_len(), 6 + 2 + TABLE_PAD);
        // Track by track (version 1's order), a gang's codes are not side by side.
        assert!(lanes_with([0, 8, 16, 24, 32, 40], 48, padded).is_none());
        // A gang's words are read past the last record.
        assert!(lanes_with([0, 16, 32, 8, 24, 40], 48, padded - 1).is_none());
        // Records of whole bytes only (version 2 packed them bit to bit).
        assert!(lanes_with([0, 16, 32, 8, 24, 40], 52, padded + 1).is_none());
        assert!(lanes_with([0, 16, 32, 8, 24, 40], 56, padded + 2).is_some());
        assert_eq!(lanes.record(1).byte, 6);
    }

    #[test]
    fn codes_are_read_in_place() {
        // Codes at bits 3 and 14 of their records: each at bit offset % 8 of the 32 bits from its
        // byte, its mask and scale there (the scale exact: 2^-s / 255).
        let tracks = [LaneTrack {
            level: 0,
            property: 0,
            step: false,
            drop: 0,
            value: LaneValue::Animated(0),
        }];
        let components = [(3, 8), (11, 3), (14, 10)].map(|(offset, bits)| LaneComponent {
            offset,
            bits,
            min: 0.0,
            extent: 1.0,
        });
        let lanes = CompactLanes::new(
            &tracks,
            1,
            LaneStream {
                frames: 1,
                record_bits: 24,
                stream_len: 3 + STREAM_READ_PAD,
                segment_ranges: &[0; 6],
                components: &components,
            },
        )
        .expect("codes side by side");
        assert_eq!(lanes.masks()[..3], [255 << 3, 7 << 3, 1023 << 6]);
        assert_eq!(
            lanes.invs()[..3],
            [1.0 / 255.0 / 8.0, 1.0 / 7.0 / 8.0, 1.0 / 1023.0 / 64.0]
        );
    }
}
