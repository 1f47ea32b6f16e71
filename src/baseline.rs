//! The second benchmark baseline: the per-item glam loop a user would write (`isa: "glam"` in reports).
//!
//! These are written the way a careful user of glam would write them (whole-vector glam operations,
//! the matrix converted once outside the loop). They are not used by the crate itself; they exist so that
//! the report can show what the ISPC kernels gain over idiomatic glam, compiled with the same flags.

use glam::{Affine3A, Mat4, Vec3, Vec4};

/// `dst[i] = m * src[i].extend(1.0)`.
pub fn transform_points_vec4(m: &Mat4, src: &[Vec3], dst: &mut [Vec4]) {
    let m = *m;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        *d = m * s.extend(1.0);
    }
}

/// `dst[i] = Affine3A::from_mat4(m).transform_point3(src[i])` (the bottom row of `m` is ignored).
pub fn transform_points_vec3(m: &Mat4, src: &[Vec3], dst: &mut [Vec3]) {
    let a = Affine3A::from_mat4(*m);
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        *d = a.transform_point3(*s);
    }
}
