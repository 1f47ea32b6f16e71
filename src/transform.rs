//! Batch transform of positions by one matrix (the snippet seed): `[Vec3]` in, `[Vec4]` or `[Vec3]` out.

use crate::backend::{Backend, KernelFamily, Resolved};
use crate::error::Error;
use crate::ffi::transform as ffi;
use crate::numeric;
use crate::reference;
use glam::{Mat4, Vec3, Vec4};

/// The numeric rules of both forms: the matrix is finite before the run; after it, the outputs are,
/// and where one is not, the input point that is not finite is named, or else the overflow.
fn check_matrix(m: &Mat4) -> Result<(), Error> {
    numeric::check_finite("transform matrix", &m.to_cols_array(), 16)
}

fn check_result(isa: Resolved, src: &[Vec3], dst: &[f32], per: usize) -> Result<(), Error> {
    if numeric::all_finite_on(isa.runnable(), dst) {
        return Ok(());
    }
    numeric::check_finite("points", bytemuck::cast_slice(src), 3)?;
    numeric::check_result("transform", "points", dst, per)
}

fn check_lengths(input: usize, output: usize) -> Result<(), Error> {
    if input == output {
        Ok(())
    } else {
        Err(Error::LengthMismatch { input, output })
    }
}

/// Transforms each position `p` (w = 1) by `m`: `dst[i] = m * (src[i], 1)`.
///
/// `m` may be any 4x4 matrix, projective ones included; the full homogeneous result is written.
///
/// # Errors
/// - [`Error::LengthMismatch`] when `dst.len() != src.len()`;
/// - [`Error::NotFinite`] for a matrix element, or a point that reaches a non-finite output, that is
///   NaN or infinite; [`Error::ResultNotFinite`] when finite values overflow `f32` together;
/// - [`Error::IsaUnavailable`] when `backend` names an ISA that cannot run here (or `ISPC_SKINNING_ISA`
///   does, for [`Backend::Auto`]).
///
/// ```
/// use glam::{Mat4, Vec3, Vec4};
/// use ispc_skinning::{transform_points, Backend};
/// let m = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
/// let src = [Vec3::ZERO, Vec3::X];
/// let mut dst = [Vec4::ZERO; 2];
/// transform_points(Backend::Auto, &m, &src, &mut dst)?;
/// assert_eq!(dst[1], Vec4::new(2.0, 2.0, 3.0, 1.0));
/// # Ok::<(), ispc_skinning::Error>(())
/// ```
pub fn transform_points(
    backend: impl Into<Backend>,
    m: &Mat4,
    src: &[Vec3],
    dst: &mut [Vec4],
) -> Result<(), Error> {
    check_lengths(src.len(), dst.len())?;
    check_matrix(m)?;
    let resolved = backend.into().resolve(KernelFamily::Transform)?;
    match resolved {
        Resolved::Reference => reference::transform_points_vec4(m, src, dst),
        Resolved::Ispc(isa) => ffi::transform_points_vec4(isa, m, src, dst),
    }
    check_result(resolved, src, bytemuck::cast_slice(dst), 4)
}

/// The affine form: `dst[i] = (m * (src[i], 1)).xyz`. The bottom row of `m` is ignored, so for an affine
/// matrix this is the transformed point; no perspective divide happens.
///
/// # Errors
/// As for [`transform_points`].
pub fn transform_points3(
    backend: impl Into<Backend>,
    m: &Mat4,
    src: &[Vec3],
    dst: &mut [Vec3],
) -> Result<(), Error> {
    check_lengths(src.len(), dst.len())?;
    check_matrix(m)?;
    let resolved = backend.into().resolve(KernelFamily::Transform)?;
    match resolved {
        Resolved::Reference => reference::transform_points_vec3(m, src, dst),
        Resolved::Ispc(isa) => ffi::transform_points_vec3(isa, m, src, dst),
    }
    check_result(resolved, src, bytemuck::cast_slice(dst), 3)
}
