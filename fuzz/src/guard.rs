//! Skinning outputs with guard bytes: the target hands the library a slice in the middle of a larger
//! buffer filled with a sentinel, and checks afterwards that nothing outside what the call may write
//! changed. AddressSanitizer does not see the ISPC kernels' stores; this check does.
//!
//! What a call may write: nothing when it returns `Err` (every job validates before any kernel runs);
//! on `Ok`, the given slices of separate streams, and in an interleaved buffer only the attribute bytes
//! of the vertices it skins (the bytes between attributes and after the last vertex stay as they were).

use crate::{Len, Num};
use arbitrary::Arbitrary;
use ispc_skinning::glam::{Vec3, Vec4};
use ispc_skinning::SkinOutput;

/// The largest output buffer a target allocates, in elements or bytes: a length far from the right one
/// tests nothing that one a little off does not.
const CAP: usize = 1 << 16;
/// The sentinel every guarded buffer starts filled with (as f32 it is a NaN no kernel produces).
const SENTINEL: u8 = 0xA5;

/// The output a target asks for, relative to the vertices the call skins.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum OutputSpec {
    Separate {
        positions: Len,
        normals: Option<Len>,
        tangents: Option<Len>,
        /// Guard elements before each stream (after: one more).
        guard: u8,
    },
    Interleaved {
        /// Buffer length, relative to `vertices * stride`.
        len: Len,
        /// Where the slice starts in its backing buffer: any byte, so often not 4-byte aligned.
        start: u8,
        stride: Num,
        positions: Num,
        normals: Option<Num>,
        tangents: Option<Num>,
    },
}

/// The index (plus `base`) of the first byte of `bytes` that is not the sentinel.
///
/// Blocks are compared whole (one `memcmp` each) and only a block that differs is scanned byte by byte:
/// a plain byte loop is instrumented per comparison by the fuzzer's coverage tracing, which made this
/// check more than half of `skinning_job`'s time.
fn first_changed(bytes: &[u8], base: usize) -> Option<usize> {
    const BLOCK: [u8; 256] = [SENTINEL; 256];
    let mut at = base;
    for chunk in bytes.chunks(BLOCK.len()) {
        if chunk != &BLOCK[..chunk.len()] {
            return chunk.iter().position(|&b| b != SENTINEL).map(|i| at + i);
        }
        at += chunk.len();
    }
    None
}

/// A stream of `T` with guard elements around the slice handed over.
pub struct Stream<T> {
    data: Vec<T>,
    start: usize,
    len: usize,
}

impl<T: bytemuck::Pod> Stream<T> {
    fn new(len: usize, guard: usize) -> Stream<T> {
        let total = guard + len + guard + 1;
        let sentinel: T = bytemuck::pod_read_unaligned(&[SENTINEL; 16][..std::mem::size_of::<T>()]);
        let data = vec![sentinel; total];
        Stream {
            data,
            start: guard,
            len,
        }
    }

    fn slice(&mut self) -> &mut [T] {
        &mut self.data[self.start..self.start + self.len]
    }

    /// Panics when an element outside the slice (or any element, when `all`) changed.
    fn check(&self, what: &str, all: bool) {
        let bytes: &[u8] = bytemuck::cast_slice(&self.data);
        let size = std::mem::size_of::<T>();
        let (lo, hi) = (self.start * size, (self.start + self.len) * size);
        let changed =
            |range: std::ops::Range<usize>| first_changed(&bytes[range.clone()], range.start);
        let first = changed(0..lo)
            .or_else(|| changed(hi..bytes.len()))
            .or_else(|| if all { changed(lo..hi) } else { None });
        if let Some(i) = first {
            panic!("{what}: byte {i} changed (the slice is bytes {lo}..{hi}; all={all})");
        }
    }
}

/// The buffers of one [`OutputSpec`], ready to hand over as a [`SkinOutput`] and to check after.
pub enum GuardedOutput {
    Separate {
        positions: Stream<Vec3>,
        normals: Option<Stream<Vec3>>,
        tangents: Option<Stream<Vec4>>,
    },
    Interleaved {
        backing: Vec<u8>,
        start: usize,
        len: usize,
        stride: usize,
        offsets: [Option<usize>; 3],
    },
}

impl GuardedOutput {
    /// Buffers for a call that skins `vertices` vertices.
    pub fn new(spec: &OutputSpec, vertices: usize) -> GuardedOutput {
        match *spec {
            OutputSpec::Separate {
                positions,
                normals,
                tangents,
                guard,
            } => {
                let guard = guard as usize % 8;
                let len = |l: Len| l.resolve_capped(vertices, CAP);
                GuardedOutput::Separate {
                    positions: Stream::new(len(positions), guard),
                    normals: normals.map(|l| Stream::new(len(l), guard)),
                    tangents: tangents.map(|l| Stream::new(len(l), guard)),
                }
            }
            OutputSpec::Interleaved {
                len,
                start,
                stride,
                positions,
                normals,
                tangents,
            } => {
                let stride = stride.get();
                let expected = vertices.saturating_mul(stride);
                let (start, len) = (start as usize, len.resolve_capped(expected, CAP));
                GuardedOutput::Interleaved {
                    backing: vec![SENTINEL; start + len + 16],
                    start,
                    len,
                    stride,
                    offsets: [
                        Some(positions.get()),
                        normals.map(Num::get),
                        tangents.map(Num::get),
                    ],
                }
            }
        }
    }

    /// The output to hand to a job.
    pub fn output(&mut self) -> SkinOutput<'_> {
        match self {
            GuardedOutput::Separate {
                positions,
                normals,
                tangents,
            } => SkinOutput::Separate {
                positions: positions.slice(),
                normals: normals.as_mut().map(Stream::slice),
                tangents: tangents.as_mut().map(Stream::slice),
            },
            GuardedOutput::Interleaved {
                backing,
                start,
                len,
                stride,
                offsets,
            } => SkinOutput::Interleaved {
                bytes: &mut backing[*start..*start + *len],
                stride: *stride,
                positions: offsets[0].unwrap_or(0),
                normals: offsets[1],
                tangents: offsets[2],
            },
        }
    }

    /// Panics when the call wrote anything it may not have: anything at all after `Err`, anything
    /// outside the slices after `Ok`, and in an interleaved buffer any byte that is not an attribute of
    /// one of the first `vertices` vertices.
    pub fn check(&self, ok: bool, vertices: usize) {
        match self {
            GuardedOutput::Separate {
                positions,
                normals,
                tangents,
            } => {
                positions.check("positions", !ok);
                if let Some(n) = normals {
                    n.check("normals", !ok);
                }
                if let Some(t) = tangents {
                    t.check("tangents", !ok);
                }
            }
            GuardedOutput::Interleaved {
                backing,
                start,
                len,
                stride,
                offsets,
            } => {
                // A copy of the buffer in which every byte the call may write is reset to the
                // sentinel: then one block compare finds any other change.
                let mut scrubbed = backing.clone();
                if ok {
                    for (offset, size) in offsets.iter().zip([12, 12, 16]) {
                        let Some(offset) = offset else { continue };
                        for v in 0..vertices {
                            let at = v * stride + offset;
                            assert!(
                                at + size <= *len,
                                "Ok for an interleaved layout whose vertex {v} (offset {offset}, \
                                 stride {stride}) lies outside the {len}-byte buffer"
                            );
                            scrubbed[start + at..start + at + size].fill(SENTINEL);
                        }
                    }
                }
                let changed = first_changed(&scrubbed, 0);
                if let Some(i) = changed {
                    panic!(
                        "interleaved output: byte {i} of the backing buffer changed (slice \
                         {start}..{}, stride {stride}, offsets {offsets:?}, {vertices} vertices, \
                         ok={ok})",
                        start + len
                    );
                }
            }
        }
    }
}
