//! The second benchmark baseline: the per-item glam loop a user would write (`isa: "glam"` in reports).
//!
//! These are written the way a careful user of glam would write them (whole-vector glam operations,
//! the matrix converted once outside the loop). They are not used by the crate itself; they exist so that
//! the report can show what the ISPC kernels gain over idiomatic glam, compiled with the same flags.

use ispc_skinning::{Skeleton, Trs};
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

/// Local to model as a glam user writes it: `models[j] = models[parent] * locals[j]` with `Mat4`.
pub fn local_to_model(skeleton: &Skeleton, locals: &[Mat4], root: &Mat4, models: &mut [Mat4]) {
    let n = skeleton.len().min(locals.len()).min(models.len());
    for j in 0..n {
        let parent = match skeleton.parent(j) {
            Some(p) => models[p],
            None => *root,
        };
        models[j] = parent * locals[j];
    }
}

/// Local to model from TRS as a glam user writes it: affine matrices (`Affine3A`, cheaper than `Mat4`
/// for this), built with `from_scale_rotation_translation` from the normalized rotation (the crate's
/// quaternion policy, so both compute the same thing).
pub fn local_to_model_trs(
    skeleton: &Skeleton,
    trs: Trs<'_>,
    root: &Affine3A,
    models: &mut [Affine3A],
) {
    let n = skeleton
        .len()
        .min(trs.translations.len())
        .min(trs.rotations.len())
        .min(trs.scales.len())
        .min(models.len());
    for j in 0..n {
        let local = Affine3A::from_scale_rotation_translation(
            trs.scales[j],
            trs.rotations[j].normalize(),
            trs.translations[j],
        );
        let parent = match skeleton.parent(j) {
            Some(p) => models[p],
            None => *root,
        };
        models[j] = parent * local;
    }
}

/// Skinning as a glam user writes it, four influences per vertex: blend the joints' matrices
/// (`Mat4 * f32`, `Mat4 + Mat4`), then `transform_point3` / `transform_vector3`. Normals and tangents are
/// skinned when their outputs are given (tangent w copied).
#[allow(clippy::too_many_arguments)]
pub fn skin4(
    positions: &[Vec3],
    normals: &[Vec3],
    tangents: &[Vec4],
    joints: &[[u16; 4]],
    weights: &[[f32; 4]],
    palette: &[Mat4],
    out_positions: &mut [Vec3],
    mut out_normals: Option<&mut [Vec3]>,
    mut out_tangents: Option<&mut [Vec4]>,
) {
    for (i, ((p, j), w)) in positions.iter().zip(joints).zip(weights).enumerate() {
        let get = |k: usize| palette.get(j[k] as usize).copied().unwrap_or(Mat4::ZERO);
        let m = get(0) * w[0] + get(1) * w[1] + get(2) * w[2] + get(3) * w[3];
        if let Some(o) = out_positions.get_mut(i) {
            *o = m.transform_point3(*p);
        }
        if let (Some(out), Some(n)) = (out_normals.as_deref_mut(), normals.get(i)) {
            if let Some(o) = out.get_mut(i) {
                *o = m.transform_vector3(*n);
            }
        }
        if let (Some(out), Some(t)) = (out_tangents.as_deref_mut(), tangents.get(i)) {
            if let Some(o) = out.get_mut(i) {
                *o = m.transform_vector3(t.truncate()).extend(t.w);
            }
        }
    }
}
