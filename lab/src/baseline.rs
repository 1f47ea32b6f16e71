//! The report's baselines: the per-item glam loops a user would write (`isa: "glam"` in reports), and
//! the seeds' serial methods that lost to the library's (`isa: "serial"`).
//!
//! The glam loops are written the way a careful user of glam would write them (whole-vector glam
//! operations, the matrix converted once outside the loop). The library does not use any of this; it
//! exists so that the report can show what the ISPC kernels gain over idiomatic glam and over the
//! seeds' methods, compiled with the same flags.

use glam::{Affine3A, Mat4, Vec3, Vec4};
use ispc_skinning::reference::affine_mul;
use ispc_skinning::{Skeleton, Trs};

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
        let parent = match skeleton.level_parent(j) {
            Some(p) => models[p],
            None => *root,
        };
        models[j] = parent * locals[j];
    }
}

/// Local to model the seed's serial way (its `LevelOrderSum`): the roots from `root`, then each parent in
/// level order writes its contiguous range of children, `models[c] = models[p] * locals[c]`.
///
/// It uses the reference's affine product, so it computes exactly what the serial reference computes;
/// only the traversal differs. Joints past the end of `locals` or `models` are left as they are.
pub fn local_to_model_serial_children(
    skeleton: &Skeleton,
    locals: &[Mat4],
    root: &Mat4,
    models: &mut [Mat4],
) {
    let n = skeleton.len().min(locals.len()).min(models.len());
    let root = root.to_cols_array();
    for r in skeleton.level(0).filter(|&r| r < n) {
        models[r] = Mat4::from_cols_array(&affine_mul(&root, &locals[r].to_cols_array()));
    }
    for p in 0..n {
        let parent = models[p].to_cols_array();
        for c in skeleton.level_children(p).filter(|&c| c < n) {
            models[c] = Mat4::from_cols_array(&affine_mul(&parent, &locals[c].to_cols_array()));
        }
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
        let parent = match skeleton.level_parent(j) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use ispc_skinning::reference::trs_matrix;
    use ispc_skinning::{Backend, LocalToModelJob, Locals, Method};
    use scenes::{animated_pose, humanoid_parents, level_tree};

    /// The serial per-parent traversal computes the serial reference's matrices bit for bit, on a
    /// humanoid and on a wide level tree with several roots.
    #[test]
    fn serial_children_equals_the_reference() {
        for parents in [humanoid_parents(67), level_tree(2000, 9, 3)] {
            let skeleton = Skeleton::from_parents(&parents).unwrap();
            let n = skeleton.len();
            let (t, q, s) = animated_pose(n, 0.7, true, 5);
            let locals: Vec<Mat4> = (0..n)
                .map(|j| Mat4::from_cols_array(&trs_matrix(t[j], q[j], s[j])))
                .collect();
            let root = Mat4::from_translation(Vec3::new(0.5, 1.0, -2.0));
            let mut expect = vec![Mat4::ZERO; n];
            let mut job = LocalToModelJob::new(&skeleton, Locals::Matrices(&locals), &mut expect);
            (job.root, job.method, job.backend) = (root, Method::Reference, Backend::Reference);
            job.run().unwrap();
            let mut got = vec![Mat4::ZERO; n];
            local_to_model_serial_children(&skeleton, &locals, &root, &mut got);
            assert_eq!(got, expect);
        }
    }
}
