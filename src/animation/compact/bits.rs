//! The quantization of a compact clip: bit rates, the ranges values are reduced into, and the bit
//! stream the frames are packed in. The compressor and the decoder share these functions, so that the
//! error the compressor measures is the error the decoder gives.

/// The bit rates a quantized component may have, in the order the compressor tries them. Rate 0 (not
/// in the list) holds a component whose whole range fits in one step of its track's widest component:
/// it decodes to its segment's minimum and is not read from the stream.
pub(crate) const BIT_RATES: [u8; 17] =
    [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 24];

/// Frames per segment: each segment stores its own range for every component, 8 bits per end.
pub(crate) const SEGMENT_FRAMES: usize = 16;

/// Zero bytes past a stream's last bit in memory (not stored): a serial read loads 8 bytes, and the
/// sampling kernel a whole gang's words from a gang's first code.
pub(crate) const STREAM_PAD: usize = crate::layout::compact::STREAM_READ_PAD;

/// `1 / (2^bits - 1)` for 0 to 24 bits (0 for 0 bits, which decode to the minimum).
const INV_TOP: [f32; 25] = {
    let mut t = [0.0f32; 25];
    let mut b = 1;
    while b < 25 {
        t[b] = 1.0 / ((1u32 << b) - 1) as f32;
        b += 1;
    }
    t
};

/// Whether `bits` is a rate a component may have (0 or one of [`BIT_RATES`]).
pub(crate) fn valid_rate(bits: u8) -> bool {
    bits == 0 || BIT_RATES.contains(&bits)
}

/// A component's range in the clip: its smallest value and the extent above it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Range {
    pub(crate) min: f32,
    pub(crate) extent: f32,
}

impl Range {
    /// The range of `values` (finite, not empty: the compressor's samples).
    pub(crate) fn of(values: impl Iterator<Item = f32>) -> Range {
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for v in values {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if lo > hi {
            return Range {
                min: 0.0,
                extent: 0.0,
            };
        }
        Range {
            min: lo,
            extent: hi - lo,
        }
    }

    /// The segment range stored as `(m, e)` in 255ths of this range: from `min + extent * m / 255`,
    /// `extent * e / 255` long.
    /// Multiplied by the f32 nearest 1/255, not divided by 255: the decoder runs this per component
    /// and sample, and a division costs several multiplications (the compressor uses the same
    /// function, so the two agree).
    pub(crate) fn segment(self, m: u8, e: u8) -> Range {
        const INV_255: f32 = 1.0 / 255.0;
        Range {
            min: self.min + self.extent * (f32::from(m) * INV_255),
            extent: self.extent * (f32::from(e) * INV_255),
        }
    }

    /// The 255ths `(m, e)` of a segment range that holds `lo ..= hi` (both inside this range).
    pub(crate) fn segment_of(self, lo: f32, hi: f32) -> (u8, u8) {
        if self.extent <= 0.0 {
            return (0, 0);
        }
        // Divided rather than multiplied by 255 / extent, which is infinite for a subnormal extent
        // (and then 0 * inf is NaN); a NaN would still land on 0 below, where `clamp` with a NaN bound
        // panics.
        let m = ((lo - self.min) / self.extent * 255.0).floor();
        let m = if m >= 0.0 { m.min(255.0) } else { 0.0 };
        let top = ((hi - self.min) / self.extent * 255.0).ceil();
        let top = if top >= m { top.min(255.0) } else { m };
        // Both are whole numbers in 0..=255.
        (m as u8, (top - m) as u8)
    }

    /// The value of quantized `q` at `bits` bits: `q` times the f32 nearest `1 / (2^bits - 1)`, from a
    /// table, rather than a division. At 0 bits `q` is 0 and so is the table's entry, so the value is
    /// `min + extent * 0`: the range's minimum, except +0 for a minimum of -0 under an extent of +0 or
    /// more, which no segment range holds (its minimum is -0 only where its extent is -0). The same
    /// expression for every rate, so that the kernel needs no select for a rate of 0.
    pub(crate) fn decode(self, q: u32, bits: u8) -> f32 {
        let inv = INV_TOP.get(usize::from(bits)).copied().unwrap_or(0.0);
        self.min + self.extent * (q as f32 * inv)
    }

    /// The nearest quantized value of `v` at `bits` bits (1 to 24), clamped into the range.
    pub(crate) fn encode(self, v: f32, bits: u8) -> u32 {
        if bits == 0 || self.extent <= 0.0 {
            return 0;
        }
        let top = ((1u64 << bits) - 1) as f32;
        let q = ((v - self.min) / self.extent * top)
            .round()
            .max(0.0)
            .min(top);
        q as u32
    }
}

/// Reads `bits` (0 to 24) bits at bit `at` of `stream`, least significant first; 0 past its end.
pub(crate) fn read(stream: &[u8], at: usize, bits: u8) -> u32 {
    if bits == 0 {
        return 0;
    }
    let byte = at / 8;
    let mut word = [0u8; 8];
    if let Some(src) = stream.get(byte..byte.saturating_add(8)) {
        word.copy_from_slice(src);
    } else if let Some(src) = stream.get(byte..) {
        word[..src.len()].copy_from_slice(src);
    }
    let word = u64::from_le_bytes(word) >> (at % 8);
    (word & ((1u64 << bits) - 1)) as u32
}

/// A growing bit stream.
#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) bytes: Vec<u8>,
    pub(crate) len: usize,
}

impl Writer {
    /// Appends the low `bits` bits of `q`.
    pub(crate) fn push(&mut self, q: u32, bits: u8) {
        for b in 0..usize::from(bits) {
            let at = self.len + b;
            if at / 8 >= self.bytes.len() {
                self.bytes.push(0);
            }
            if q >> b & 1 == 1 {
                self.bytes[at / 8] |= 1 << (at % 8);
            }
        }
        self.len += usize::from(bits);
    }

    /// Zero bits up to the next byte: a frame record ends there (records are whole bytes).
    pub(crate) fn align_to_byte(&mut self) {
        self.len = self.len.next_multiple_of(8);
    }

    /// The stream, padded by [`STREAM_PAD`] bytes.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.bytes.resize(self.len.div_ceil(8) + STREAM_PAD, 0);
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip_at_every_offset_and_rate() {
        let mut w = Writer::default();
        let mut written = Vec::new();
        for (i, &bits) in BIT_RATES.iter().cycle().take(200).enumerate() {
            let q = (i as u32).wrapping_mul(2_654_435_761) & ((1u32 << bits) - 1);
            written.push((w.len, q, bits));
            w.push(q, bits);
        }
        let stream = w.finish();
        for (at, q, bits) in written {
            assert_eq!(read(&stream, at, bits), q, "at bit {at}, {bits} bits");
        }
        assert_eq!(read(&stream, 1 << 40, 24), 0);
    }

    #[test]
    fn segment_ranges_hold_their_values() {
        let r = Range {
            min: -2.0,
            extent: 5.0,
        };
        for (lo, hi) in [(-2.0, 3.0), (0.1, 0.2), (2.9, 3.0), (-2.0, -2.0)] {
            let (m, e) = r.segment_of(lo, hi);
            let s = r.segment(m, e);
            assert!(
                s.min <= lo && s.min + s.extent >= hi - 1e-6,
                "{lo} {hi}: {s:?}"
            );
        }
        // A subnormal extent (255 / extent is infinite) still gives a range.
        let tiny = Range {
            min: 0.0,
            extent: 1.5e-44,
        };
        assert_eq!(tiny.segment_of(0.0, 1.5e-44), (0, 255));
        for bits in BIT_RATES {
            let q = r.encode(1.2345, bits);
            let step = r.extent / ((1u64 << bits) - 1) as f32;
            assert!(
                (r.decode(q, bits) - 1.2345).abs() <= step * 0.5 + 1e-6,
                "{bits} bits"
            );
        }
    }
}
