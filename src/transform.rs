//! Batch transform of positions by one matrix (the snippet seed): `[Vec3]` in, `[Vec4]` or `[Vec3]` out.

use crate::backend::{Backend, Resolved};
use crate::error::Error;
use crate::ffi::transform as ffi;
use crate::reference;
use glam::{Mat4, Vec3, Vec4};

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
    match backend.into().resolve()? {
        Resolved::Reference => reference::transform_points_vec4(m, src, dst),
        Resolved::Ispc(isa) => ffi::transform_points_vec4(isa, m, src, dst),
    }
    Ok(())
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
    match backend.into().resolve()? {
        Resolved::Reference => reference::transform_points_vec3(m, src, dst),
        Resolved::Ispc(isa) => ffi::transform_points_vec3(isa, m, src, dst),
    }
    Ok(())
}
