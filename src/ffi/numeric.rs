//! The numeric rules' scans (`finite_floats`, `rotations_ok` in ispc/numeric.ispc): whether every
//! float is finite, whether every quaternion's squared length is normal (or it is exactly zero).

use super::{Runnable, ScanFn, MAX_ITEMS_PER_CALL};
use glam::Quat;

/// Whether every float of `xs` is finite.
pub(crate) fn finite_floats(isa: Runnable, xs: &[f32]) -> bool {
    scan(isa.kernels().finite_floats, xs, 1)
}

/// Whether every quaternion of `rotations` meets the rotation rule.
pub(crate) fn rotations_ok(isa: Runnable, rotations: &[Quat]) -> bool {
    scan(
        isa.kernels().rotations_ok,
        bytemuck::cast_slice(rotations),
        4,
    )
}

/// Runs a scan kernel over chunks of at most MAX_ITEMS_PER_CALL items of `per_item` floats each; true
/// when every chunk passes.
fn scan(kernel: ScanFn, floats: &[f32], per_item: usize) -> bool {
    floats.chunks(MAX_ITEMS_PER_CALL * per_item).all(|chunk| {
        let n = chunk.len() / per_item;
        // SAFETY: the caller's `isa` proves the CPU runs this kernel's ISA. The kernel reads
        // n * per_item floats from `chunk` (n whole items, at most MAX_ITEMS_PER_CALL, so n fits in
        // i32 and every read is in bounds; a quaternion slice holds whole items) and writes nothing.
        // It assumes only 4-byte alignment, which any f32 slice has.
        unsafe { kernel(chunk.as_ptr(), n as i32) }
    })
}

/// Whether every float of every palette entry is finite.
pub(crate) fn finite_palette(
    isa: Runnable,
    palette: &[crate::layout::palette::PaletteMatrix],
) -> bool {
    palette.chunks(MAX_ITEMS_PER_CALL).all(|chunk| {
        // SAFETY: as in `scan`: a PaletteMatrix is 16 contiguous f32 (repr(C), its size asserted in
        // the module root), so the chunk is 16 * len readable floats, len at most MAX_ITEMS_PER_CALL,
        // and 16 * len fits in i32. The kernel writes nothing.
        unsafe { (isa.kernels().finite_floats)(chunk.as_ptr().cast(), (16 * chunk.len()) as i32) }
    })
}
