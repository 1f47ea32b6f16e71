//! Local to model, matrix by matrix, from local matrices or TRS.

// Written like the seeds' C: explicit index loops over rows and columns are the point of a reference.
#![allow(clippy::needless_range_loop)]

use crate::layout::trs::Trs;
use glam::{Mat4, Quat, Vec3};
use std::ops::Range;

/// A column-major 4x4 matrix as 16 floats: element (row r, column c) is at `[4 * c + r]`, the layout of
/// `Mat4::to_cols_array`.
pub type Matrix = [f32; 16];

/// `p * l` for affine matrices: both bottom rows are taken as (0, 0, 0, 1), and the result's bottom row is
/// exactly that.
///
/// Each element is summed as `(p[r] l[4c] + t) + (p[4 + r] l[4c + 1] + p[8 + r] l[4c + 2])`, with
/// `t = p[12 + r]` in column 3 and `+0.0` elsewhere: the kernels' pairing (ispc/hierarchy.ispc's
/// `multiply_columns`, two short chains), so that the kernels built without fused multiply-adds give
/// these bits exactly (`Precision::Deterministic`).
pub fn affine_mul(p: &Matrix, l: &Matrix) -> Matrix {
    let mut out = [0.0f32; 16];
    for c in 0..4 {
        for r in 0..3 {
            let t = if c == 3 { p[12 + r] } else { 0.0 };
            out[4 * c + r] =
                (p[r] * l[4 * c] + t) + (p[4 + r] * l[4 * c + 1] + p[8 + r] * l[4 * c + 2]);
        }
    }
    out[15] = 1.0;
    out
}

/// The inverse of an affine matrix (its bottom row taken as (0, 0, 0, 1)): the 3x3 part's adjugate over
/// its determinant, and the translation `-(A^-1 t)`, written out in f32 one operation at a time, so it
/// gives the same bits on every platform (glam's `Mat4::inverse` sums its determinant in a SIMD order
/// that differs between x86-64 and AArch64). A singular matrix gives infinities or NaN, which the
/// caller checks.
pub fn affine_inverse(m: &Matrix) -> Matrix {
    // a(r, c) = m[4c + r].
    let a = |r: usize, c: usize| m[4 * c + r];
    let cof =
        |r0: usize, r1: usize, c0: usize, c1: usize| a(r0, c0) * a(r1, c1) - a(r0, c1) * a(r1, c0);
    // Cofactors of the first row, then the determinant along it.
    let c00 = cof(1, 2, 1, 2);
    let c01 = -cof(1, 2, 0, 2);
    let c02 = cof(1, 2, 0, 1);
    let det = a(0, 0) * c00 + a(0, 1) * c01 + a(0, 2) * c02;
    let inv_det = 1.0 / det;
    // inverse(r, c) = cofactor(c, r) / det.
    let inv = [
        [c00, -cof(0, 2, 1, 2), cof(0, 1, 1, 2)],
        [c01, cof(0, 2, 0, 2), -cof(0, 1, 0, 2)],
        [c02, -cof(0, 2, 0, 1), cof(0, 1, 0, 1)],
    ]
    .map(|row| row.map(|x| x * inv_det));
    let mut out = [0.0f32; 16];
    for r in 0..3 {
        for c in 0..3 {
            out[4 * c + r] = inv[r][c];
        }
        out[12 + r] = -(inv[r][0] * m[12] + inv[r][1] * m[13] + inv[r][2] * m[14]);
    }
    out[15] = 1.0;
    out
}

/// The affine matrix `T * R * S` of a translation, a rotation and a (possibly non-uniform) scale.
///
/// Quaternion policy: the rotation is that of `q / |q|`, so quaternions that are not unit length (as
/// keyframes often are, by a few 1e-4) still give a pure rotation. A quaternion whose squared length is
/// not a normal `f32` (zero, `|q|` below about 1.1e-19 or above about 1.8e19) gives NaN, as the kernels
/// do, so that the jobs refuse it (`Error::RotationLength`).
pub fn trs_matrix(t: Vec3, q: Quat, s: Vec3) -> Matrix {
    let (x, y, z, w) = (q.x, q.y, q.z, q.w);
    let n = x * x + y * y + z * z + w * w;
    // The rotation rule (the kernels' rotation_scale): a normal |q|^2; anything else (zero included)
    // is NaN, which the jobs' finiteness checks turn into Error::RotationLength.
    let s2 = if (f32::MIN_POSITIVE..=f32::MAX).contains(&n) {
        2.0 / n
    } else {
        f32::NAN
    };
    let mut m = [0.0f32; 16];
    // Column 0: the rotated x axis times scale.x, and so on.
    m[0] = (1.0 - s2 * (y * y + z * z)) * s.x;
    m[1] = s2 * (x * y + z * w) * s.x;
    m[2] = s2 * (x * z - y * w) * s.x;
    m[4] = s2 * (x * y - z * w) * s.y;
    m[5] = (1.0 - s2 * (x * x + z * z)) * s.y;
    m[6] = s2 * (y * z + x * w) * s.y;
    m[8] = s2 * (x * z + y * w) * s.z;
    m[9] = s2 * (y * z - x * w) * s.z;
    m[10] = (1.0 - s2 * (x * x + y * y)) * s.z;
    m[12] = t.x;
    m[13] = t.y;
    m[14] = t.z;
    m[15] = 1.0;
    m
}

/// Local to model over a level-order parent array ([`Skeleton::level_parents`](crate::Skeleton::level_parents):
/// `parents[j]` is `None` for a root, else a joint before j; a parent with no model matrix counts as a
/// root): for each joint of `joints`, in order,
/// `model[j] = model[parent[j]] * local[j]`, or `root * local[j]` for a root. Any topological order
/// works; level order is one. Matrices are affine (see [`affine_mul`]).
pub fn local_to_model(
    parents: &[Option<usize>],
    locals: &[Mat4],
    root: &Mat4,
    models: &mut [Mat4],
    joints: Range<usize>,
) {
    let root = root.to_cols_array();
    for j in clamp(joints, parents.len(), locals.len(), models.len()) {
        let parent = parents[j]
            .and_then(|p| models.get(p))
            .map_or(root, Mat4::to_cols_array);
        models[j] = Mat4::from_cols_array(&affine_mul(&parent, &locals[j].to_cols_array()));
    }
}

/// [`local_to_model`] with each local transform given as translation, rotation and scale
/// ([`trs_matrix`]).
pub fn local_to_model_trs(
    parents: &[Option<usize>],
    trs: Trs<'_>,
    root: &Mat4,
    models: &mut [Mat4],
    joints: Range<usize>,
) {
    let root = root.to_cols_array();
    let n = trs
        .translations
        .len()
        .min(trs.rotations.len())
        .min(trs.scales.len());
    for j in clamp(joints, parents.len(), n, models.len()) {
        let local = trs_matrix(trs.translations[j], trs.rotations[j], trs.scales[j]);
        let parent = parents[j]
            .and_then(|p| models.get(p))
            .map_or(root, Mat4::to_cols_array);
        models[j] = Mat4::from_cols_array(&affine_mul(&parent, &local));
    }
}

/// `joints` limited to what every array holds, so no index can be out of bounds.
fn clamp(joints: Range<usize>, n: usize, a: usize, b: usize) -> Range<usize> {
    let end = joints.end.min(n).min(a).min(b);
    joints.start.min(end)..end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_inverse_inverts() {
        let m = trs_matrix(
            Vec3::new(1.0, -2.0, 0.5),
            Quat::from_xyzw(0.3, -0.2, 0.1, 0.9),
            Vec3::new(1.5, 0.5, 2.0),
        );
        let p = affine_mul(&m, &affine_inverse(&m));
        let want = Mat4::from_cols_array(&m).inverse();
        for (i, (&x, &y)) in affine_inverse(&m)
            .iter()
            .zip(&want.to_cols_array())
            .enumerate()
        {
            assert!(
                (x - y).abs() <= 1e-5 * (1.0 + y.abs()),
                "element {i}: {x} against glam's {y}"
            );
        }
        for (i, &x) in p.iter().enumerate() {
            let identity = if i % 5 == 0 { 1.0 } else { 0.0 };
            assert!((x - identity).abs() < 1e-5, "m * m^-1 element {i} is {x}");
        }
        // Singular: no finite inverse.
        let flat = trs_matrix(Vec3::ZERO, Quat::IDENTITY, Vec3::new(1.0, 0.0, 1.0));
        assert!(!affine_inverse(&flat).iter().all(|x| x.is_finite()));
    }
}
