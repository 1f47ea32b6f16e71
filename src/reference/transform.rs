//! The batch transform of positions by one matrix.

// Written like the seeds' C: explicit index loops over rows and columns are the point of a reference.
#![allow(clippy::needless_range_loop)]

use glam::{Mat4, Vec3, Vec4};

/// `dst[i] = m * (src[i].x, src[i].y, src[i].z, 1)`, the seed's `TransformVec3Pos_C`.
pub fn transform_points_vec4(m: &Mat4, src: &[Vec3], dst: &mut [Vec4]) {
    // Column-major: m[4 * column + row].
    let m = m.to_cols_array();
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let (x, y, z) = (s.x, s.y, s.z);
        d.x = m[0] * x + m[4] * y + m[8] * z + m[12];
        d.y = m[1] * x + m[5] * y + m[9] * z + m[13];
        d.z = m[2] * x + m[6] * y + m[10] * z + m[14];
        d.w = m[3] * x + m[7] * y + m[11] * z + m[15];
    }
}

/// `dst[i] = (m * (src[i], 1)).xyz`: the affine use. The bottom row of `m` is ignored and no perspective
/// divide happens.
pub fn transform_points_vec3(m: &Mat4, src: &[Vec3], dst: &mut [Vec3]) {
    let m = m.to_cols_array();
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let (x, y, z) = (s.x, s.y, s.z);
        d.x = m[0] * x + m[4] * y + m[8] * z + m[12];
        d.y = m[1] * x + m[5] * y + m[9] * z + m[13];
        d.z = m[2] * x + m[6] * y + m[10] * z + m[14];
    }
}
