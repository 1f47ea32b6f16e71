//! The batch transform of positions by one matrix (`transform_points_vec4`, `transform_points_vec3`).

use super::{Runnable, TransformPointsFn, MAX_ITEMS_PER_CALL};
use glam::{Mat4, Vec3, Vec4};

/// `dst[i] = m * (src[i], 1)` for `i < min(src.len(), dst.len())`.
pub(crate) fn transform_points_vec4(isa: Runnable, m: &Mat4, src: &[Vec3], dst: &mut [Vec4]) {
    transform_chunks(isa.kernels().transform_points_vec4, m, src, dst)
}

/// `dst[i] = (m * (src[i], 1)).xyz` for `i < min(src.len(), dst.len())`.
pub(crate) fn transform_points_vec3(isa: Runnable, m: &Mat4, src: &[Vec3], dst: &mut [Vec3]) {
    transform_chunks(isa.kernels().transform_points_vec3, m, src, dst)
}

/// Runs a batch transform kernel over chunks of at most MAX_ITEMS_PER_CALL items. `kernel` must write
/// exactly one `T` (Vec4: 4 floats, Vec3: 3 floats) per item, which the two callers above guarantee by
/// pairing each kernel with its output type.
fn transform_chunks<T>(kernel: TransformPointsFn, m: &Mat4, src: &[Vec3], dst: &mut [T]) {
    let cols = m.to_cols_array();
    for (src, dst) in src
        .chunks(MAX_ITEMS_PER_CALL)
        .zip(dst.chunks_mut(MAX_ITEMS_PER_CALL))
    {
        let n = src.len().min(dst.len());
        // SAFETY: the caller's `isa` proves the CPU runs this kernel's ISA. The kernel reads 3n floats
        // from src (n Vec3, each three contiguous f32) and 16 from `cols`, and writes n items of T to dst
        // (4n floats for Vec4, 3n for Vec3: its full-width Vec3 stores run only while a whole vector fits
        // and its tail stores are masked). n is at most both slice lengths and MAX_ITEMS_PER_CALL, so it
        // fits in i32 and every access is in bounds. The kernel assumes only 4-byte alignment, and src
        // and dst cannot overlap because one is borrowed shared and the other exclusively.
        unsafe {
            kernel(
                src.as_ptr().cast(),
                dst.as_mut_ptr().cast(),
                n as i32,
                cols.as_ptr(),
            )
        }
    }
}
