//! The FFI layer: the only place in the crate with `unsafe`.
//!
//! build.rs compiles each ISPC file once per ISA and bindgen turns the generated headers into the
//! declarations in `bindings` (`transform_points_vec4_sse4`, `..._avx2`, ...). Each compiled ISA gets one
//! static [`Kernels`] table of function pointers. A table is reachable only through
//! [`Runnable`](crate::isa::Runnable), which proves that the CPU supports the ISA.
//!
//! Every wrapper here is safe to call with any slices: it never passes a count larger than the slices it
//! was given, and it splits long slices into chunks so that the ISPC kernels' 32-bit index arithmetic
//! (ISPC's default `--addressing=32`) never overflows.

#![allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code
)]

use crate::isa::{Isa, Runnable};
use glam::{Mat4, Vec3, Vec4};

mod bindings {
    #![allow(
        non_upper_case_globals,
        non_camel_case_types,
        non_snake_case,
        dead_code
    )]
    include!(concat!(env!("OUT_DIR"), "/ispc_bindings.rs"));
}

/// The kernels' arrays are plain f32 runs; these layouts are what makes the pointer casts below valid.
const _: () = assert!(std::mem::size_of::<Vec3>() == 12 && std::mem::align_of::<Vec3>() == 4);
const _: () = assert!(std::mem::size_of::<Vec4>() == 16 && std::mem::align_of::<Vec4>() >= 4);

/// Largest item count per kernel call. The largest byte offset a kernel computes is 16 bytes times this
/// (a Vec4 output), 256 MiB, far below i32::MAX.
pub(crate) const MAX_ITEMS_PER_CALL: usize = 1 << 24;

type TransformPointsFn =
    unsafe extern "C" fn(src: *const f32, dst: *mut f32, n: i32, m: *const f32);

/// One ISA's kernels.
#[derive(Debug)]
pub(crate) struct Kernels {
    transform_points_vec4: TransformPointsFn,
    transform_points_vec3: TransformPointsFn,
}

macro_rules! kernel_table {
    ($suffix:ident) => {
        pastey::paste! {
            Kernels {
                transform_points_vec4: bindings::[<transform_points_vec4_ $suffix>],
                transform_points_vec3: bindings::[<transform_points_vec3_ $suffix>],
            }
        }
    };
}

#[cfg(ispc_sse4)]
static SSE4: Kernels = kernel_table!(sse4);
#[cfg(ispc_avx2)]
static AVX2: Kernels = kernel_table!(avx2);
#[cfg(ispc_avx512)]
static AVX512: Kernels = kernel_table!(avx512);
#[cfg(ispc_neon)]
static NEON: Kernels = kernel_table!(neon);

/// The kernel table of an ISA, or `None` when this build does not contain it.
pub(crate) fn kernels_for(isa: Isa) -> Option<&'static Kernels> {
    match isa {
        #[cfg(ispc_sse4)]
        Isa::Sse4 => Some(&SSE4),
        #[cfg(ispc_avx2)]
        Isa::Avx2 => Some(&AVX2),
        #[cfg(ispc_avx512)]
        Isa::Avx512 => Some(&AVX512),
        #[cfg(ispc_neon)]
        Isa::Neon => Some(&NEON),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// `dst[i] = m * (src[i], 1)` for `i < min(src.len(), dst.len())`.
pub(crate) fn transform_points_vec4(isa: Runnable, m: &Mat4, src: &[Vec3], dst: &mut [Vec4]) {
    let kernel = isa.kernels().transform_points_vec4;
    let cols = m.to_cols_array();
    for (src, dst) in src
        .chunks(MAX_ITEMS_PER_CALL)
        .zip(dst.chunks_mut(MAX_ITEMS_PER_CALL))
    {
        let n = src.len().min(dst.len());
        // SAFETY: `isa` proves the CPU runs this kernel's ISA. The kernel reads 3n floats from src (n Vec3,
        // each three contiguous f32), writes 4n floats to dst (n Vec4) and reads 16 floats from `cols`;
        // n is at most both slice lengths and at most MAX_ITEMS_PER_CALL, so it fits in i32 and every
        // access is in bounds. The kernel assumes only 4-byte alignment, which f32 data always has, and
        // src and dst cannot overlap because one is borrowed shared and the other exclusively.
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

/// `dst[i] = (m * (src[i], 1)).xyz` for `i < min(src.len(), dst.len())`.
pub(crate) fn transform_points_vec3(isa: Runnable, m: &Mat4, src: &[Vec3], dst: &mut [Vec3]) {
    let kernel = isa.kernels().transform_points_vec3;
    let cols = m.to_cols_array();
    for (src, dst) in src
        .chunks(MAX_ITEMS_PER_CALL)
        .zip(dst.chunks_mut(MAX_ITEMS_PER_CALL))
    {
        let n = src.len().min(dst.len());
        // SAFETY: as in transform_points_vec4, with 3n floats written to dst (n Vec3). The kernel's full
        // width stores stay inside [dst, dst + 3n): its main loop runs only while a whole vector fits, and
        // its tail stores are masked to the remaining items.
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
