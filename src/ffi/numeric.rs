//! The numeric rules' scan (`finite_floats` in ispc/numeric.ispc): whether every float is finite.

use super::{Runnable, MAX_ITEMS_PER_CALL};

/// Whether every float of `xs` is finite.
pub(crate) fn finite_floats(isa: Runnable, xs: &[f32]) -> bool {
    xs.chunks(MAX_ITEMS_PER_CALL).all(|chunk| {
        // SAFETY: the caller's `isa` proves the CPU runs this kernel's ISA. The kernel reads
        // chunk.len() floats (at most MAX_ITEMS_PER_CALL, so it fits in i32 and every read is in
        // bounds) and writes nothing. It assumes only 4-byte alignment, which any f32 slice has.
        unsafe { (isa.exact_kernels().finite_floats)(chunk.as_ptr(), chunk.len() as i32) }
    })
}

/// Whether every float of every palette entry is finite.
pub(crate) fn finite_palette(
    isa: Runnable,
    palette: &[crate::layout::palette::PaletteMatrix],
) -> bool {
    palette.chunks(MAX_ITEMS_PER_CALL).all(|chunk| {
        // SAFETY: as in `finite_floats`: a PaletteMatrix is 16 contiguous f32 (repr(C), its size asserted in
        // the module root), so the chunk is 16 * len readable floats, len at most MAX_ITEMS_PER_CALL,
        // and 16 * len fits in i32. The kernel writes nothing.
        unsafe {
            (isa.exact_kernels().finite_floats)(chunk.as_ptr().cast(), (16 * chunk.len()) as i32)
        }
    })
}
