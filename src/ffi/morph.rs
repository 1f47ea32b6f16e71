//! The morph-target pre-pass (`morph_floats`): one attribute stream, base plus weighted deltas.

use super::{MorphFloatsFn, MorphRowsFn, Runnable, MAX_ITEMS_PER_CALL};

/// Most targets one kernel call takes (the kernel reads an array of this many delta pointers at most).
pub(crate) const MORPH_BATCH: usize = 8;

/// `out[i] = b[i] + Σ_k weights[k] * deltas[k][i]`, where `b` is `base` or, when `base` is `None`, `out`
/// itself (accumulating a later batch of targets onto an earlier one).
///
/// # Panics
/// When a length does not match: `base` and every delta must be as long as `out`, there must be one
/// weight per delta, and at most [`MORPH_BATCH`] deltas. These are the calling job's checks.
pub(crate) fn morph_floats(
    isa: Runnable,
    base: Option<&[f32]>,
    deltas: &[&[f32]],
    weights: &[f32],
    out: &mut [f32],
) {
    let kernel: MorphFloatsFn = isa.kernels().morph_floats;
    let n = out.len();
    assert!(
        deltas.len() <= MORPH_BATCH,
        "morph batch of {}",
        deltas.len()
    );
    assert_eq!(deltas.len(), weights.len(), "one weight per morph target");
    if let Some(b) = base {
        assert_eq!(b.len(), n, "morph base length");
    }
    for d in deltas {
        assert_eq!(d.len(), n, "morph delta length");
    }
    let mut start = 0;
    while start < n {
        let len = (n - start).min(MAX_ITEMS_PER_CALL);
        let mut pointers = [std::ptr::null::<f32>(); MORPH_BATCH];
        for (p, d) in pointers.iter_mut().zip(deltas) {
            *p = d[start..start + len].as_ptr();
        }
        let chunk = &mut out[start..start + len];
        let accumulate = base.is_none();
        // Not read when accumulating; any valid pointer will do.
        let base_ptr = base.map_or(chunk.as_ptr(), |b| b[start..start + len].as_ptr());
        // SAFETY: the caller's `isa` proves the CPU runs this kernel's ISA. The kernel reads `len` floats
        // from `base_ptr` (only when not accumulating: then it is a subslice of `base` of exactly `len`
        // floats, asserted above) and from each of the first `deltas.len()` pointers (each a subslice of a
        // delta of exactly `len` floats, asserted above), `deltas.len()` floats from `weights`, and reads and
        // writes `len` floats of `chunk`. `len` is at most MAX_ITEMS_PER_CALL, so it fits in i32, and
        // `deltas.len() <= MORPH_BATCH` pointers are filled (the kernel only reads the pointer array, a local). `chunk` is borrowed exclusively, so no input
        // overlaps it except `base_ptr` while accumulating, which the kernel does not read. The kernel
        // assumes only 4-byte alignment.
        unsafe {
            kernel(
                base_ptr,
                chunk.as_mut_ptr(),
                len as i32,
                pointers.as_mut_ptr(),
                weights.as_ptr(),
                deltas.len() as i32,
                accumulate,
            )
        }
        start += len;
    }
}

/// [`morph_floats`] over `rows` strided rows of `row` floats: row r of `out` (and of `base`) starts at
/// float `r * stride`, row r of each delta at `r * row` (the deltas are packed). This is one attribute
/// of a prepared mesh's AoSoA blocks (`out` starting at the attribute's first run), so the morph writes
/// straight into the layout the skinning kernels read, touching nothing between the rows.
///
/// # Panics
/// When a length does not match: `0 < row <= stride`, `out` (and `base`) hold at least
/// `(rows - 1) * stride + row` floats, every delta exactly `rows * row`, one weight per delta, at most
/// [`MORPH_BATCH`] deltas. These are the calling job's checks.
#[allow(clippy::too_many_arguments)]
pub(crate) fn morph_rows(
    isa: Runnable,
    base: Option<&[f32]>,
    deltas: &[&[f32]],
    weights: &[f32],
    rows: usize,
    row: usize,
    stride: usize,
    out: &mut [f32],
) {
    let kernel: MorphRowsFn = isa.kernels().morph_rows;
    assert!(
        deltas.len() <= MORPH_BATCH,
        "morph batch of {}",
        deltas.len()
    );
    assert_eq!(deltas.len(), weights.len(), "one weight per morph target");
    assert!(
        row > 0 && row <= stride && stride <= MAX_ITEMS_PER_CALL,
        "morph rows of {row} floats every {stride}"
    );
    if rows == 0 {
        return;
    }
    let span = (rows - 1) * stride + row;
    assert!(out.len() >= span, "morph rows output length");
    if let Some(b) = base {
        assert!(b.len() >= span, "morph rows base length");
    }
    for d in deltas {
        assert_eq!(d.len(), rows * row, "morph rows delta length");
    }
    // Whole rows per call, so that no float index of a call reaches MAX_ITEMS_PER_CALL.
    let per_call = MAX_ITEMS_PER_CALL / stride;
    let mut start = 0;
    while start < rows {
        let len = (rows - start).min(per_call);
        let (first, floats) = (start * stride, (len - 1) * stride + row);
        let mut pointers = [std::ptr::null::<f32>(); MORPH_BATCH];
        for (p, d) in pointers.iter_mut().zip(deltas) {
            *p = d[start * row..(start + len) * row].as_ptr();
        }
        let chunk = &mut out[first..first + floats];
        let accumulate = base.is_none();
        // Not read when accumulating; any valid pointer will do.
        let base_ptr = base.map_or(chunk.as_ptr(), |b| b[first..first + floats].as_ptr());
        // SAFETY: the caller's `isa` proves the CPU runs this kernel's ISA. The kernel reads and writes
        // floats `r * stride + j` (r < len, j < row) of `chunk`, whose last one is
        // `(len - 1) * stride + row - 1 < floats`, its length; it reads the same floats of `base_ptr`
        // (only when not accumulating: then a subslice of `base` of exactly `floats` floats, asserted
        // above), `len * row` floats from each of the first `deltas.len()` pointers (each a subslice of
        // exactly that many, asserted above) and `deltas.len()` floats from `weights`. `len * stride` is
        // at most MAX_ITEMS_PER_CALL, so every index fits in i32, as do `row <= stride` and
        // `deltas.len() <= MORPH_BATCH`. `chunk` is borrowed exclusively, so no input overlaps it except
        // `base_ptr` while accumulating, which the kernel does not read. The kernel assumes only 4-byte
        // alignment.
        unsafe {
            kernel(
                base_ptr,
                chunk.as_mut_ptr(),
                len as i32,
                row as i32,
                stride as i32,
                pointers.as_mut_ptr(),
                weights.as_ptr(),
                deltas.len() as i32,
                accumulate,
            )
        }
        start += len;
    }
}
