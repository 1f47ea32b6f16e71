//! The morph-target pre-pass (`morph_floats`): one attribute stream, base plus weighted deltas.

use super::{MorphFloatsFn, Runnable, MAX_ITEMS_PER_CALL};

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
