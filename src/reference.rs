//! The serial reference: plain scalar f32 Rust, written for clarity like the seeds' C versions.
//!
//! These functions are the truth that every ISPC kernel is tested against, and the baseline that every
//! "speedup" is measured against. They are always compiled. They take whole slices and process
//! `min(input.len(), output.len())` items; the checked entry points (for example
//! [`transform_points`](crate::transform_points)) validate lengths before calling them.

// Written like the seeds' C: explicit index loops over rows and columns are the point of a reference.
#![allow(clippy::needless_range_loop)]

use crate::hierarchy::Trs;
use crate::mesh::{BaseVectorMesh, BoneMajorMesh, SkinnedMesh};
use crate::palette::PaletteMatrix;
use crate::skeleton::Skeleton;
use crate::skin::{OutputView, Renormalize};
use glam::{Mat4, Quat, Vec3, Vec4};
use std::ops::Range;

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

/// A column-major 4x4 matrix as 16 floats: element (row r, column c) is at `[4 * c + r]`, the layout of
/// `Mat4::to_cols_array`.
pub type Matrix = [f32; 16];

/// `p * l` for affine matrices: both bottom rows are taken as (0, 0, 0, 1), and the result's bottom row is
/// exactly that.
pub fn affine_mul(p: &Matrix, l: &Matrix) -> Matrix {
    let mut out = [0.0f32; 16];
    for c in 0..4 {
        for r in 0..3 {
            let mut v = p[r] * l[4 * c] + p[4 + r] * l[4 * c + 1] + p[8 + r] * l[4 * c + 2];
            if c == 3 {
                v += p[12 + r];
            }
            out[4 * c + r] = v;
        }
    }
    out[15] = 1.0;
    out
}

/// The affine matrix `T * R * S` of a translation, a rotation and a (possibly non-uniform) scale.
///
/// Quaternion policy: the rotation is that of `q / |q|`, so quaternions that are not unit length (as
/// keyframes often are, by a few 1e-4) still give a pure rotation. A zero quaternion gives the identity.
pub fn trs_matrix(t: Vec3, q: Quat, s: Vec3) -> Matrix {
    let (x, y, z, w) = (q.x, q.y, q.z, q.w);
    let n = x * x + y * y + z * z + w * w;
    let s2 = if n > 0.0 { 2.0 / n } else { 0.0 };
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

/// Local to model over the parents, in level order: for each joint of `joints`, in order,
/// `model[j] = model[parent[j]] * local[j]`, or `root * local[j]` for a root. Any topological order
/// works; level order is one. Matrices are affine (see [`affine_mul`]).
pub fn local_to_model(
    skeleton: &Skeleton,
    locals: &[Mat4],
    root: &Mat4,
    models: &mut [Mat4],
    joints: Range<usize>,
) {
    let root = root.to_cols_array();
    for j in clamp(joints, skeleton, locals.len(), models.len()) {
        let parent = match skeleton.parent(j) {
            Some(p) => models[p].to_cols_array(),
            None => root,
        };
        models[j] = Mat4::from_cols_array(&affine_mul(&parent, &locals[j].to_cols_array()));
    }
}

/// [`local_to_model`] with each local transform given as translation, rotation and scale
/// ([`trs_matrix`]).
pub fn local_to_model_trs(
    skeleton: &Skeleton,
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
    for j in clamp(joints, skeleton, n, models.len()) {
        let local = trs_matrix(trs.translations[j], trs.rotations[j], trs.scales[j]);
        let parent = match skeleton.parent(j) {
            Some(p) => models[p].to_cols_array(),
            None => root,
        };
        models[j] = Mat4::from_cols_array(&affine_mul(&parent, &local));
    }
}

/// The level-order seed's `LevelOrderSum` applied to matrices: for each parent in `parents`, the
/// children (one contiguous range) get `model[c] = model[p] * local[c]`. Roots are not children of
/// anything; [`local_to_model`] computes them.
pub fn local_to_model_children(
    skeleton: &Skeleton,
    locals: &[Mat4],
    models: &mut [Mat4],
    parents: Range<usize>,
) {
    for p in clamp(parents, skeleton, locals.len(), models.len()) {
        let parent = models[p].to_cols_array();
        for c in skeleton.children(p) {
            if c < locals.len() && c < models.len() {
                models[c] = Mat4::from_cols_array(&affine_mul(&parent, &locals[c].to_cols_array()));
            }
        }
    }
}

/// `joints` limited to what every array holds, so no index can be out of bounds.
fn clamp(joints: Range<usize>, skeleton: &Skeleton, a: usize, b: usize) -> Range<usize> {
    let end = joints.end.min(skeleton.len()).min(a).min(b);
    joints.start.min(end)..end
}

/// The skinning palette: `palette[i] = models[joints[i]] * inverse_binds[i]` (joint i without a remap),
/// stored row-major with an exact (0, 0, 0, 1) last row. Entries whose joint is out of range are left
/// as they are.
pub fn skin_palette(
    models: &[Mat4],
    inverse_binds: &[Mat4],
    joints: Option<&[u32]>,
    palette: &mut [PaletteMatrix],
) {
    for (i, (ib, out)) in inverse_binds.iter().zip(palette.iter_mut()).enumerate() {
        let m = match joints {
            Some(j) => j.get(i).map(|&j| j as usize),
            None => Some(i),
        };
        if let Some(model) = m.and_then(|m| models.get(m)) {
            let product = affine_mul(&model.to_cols_array(), &ib.to_cols_array());
            for r in 0..4 {
                for c in 0..4 {
                    out.rows[r][c] = product[4 * c + r];
                }
            }
        }
    }
}

/// Linear blend skinning with blended matrices, vertex by vertex, written for clarity (see
/// [`crate::skin`] for the math). Outputs go to the vertices' original indices.
pub(crate) fn skin(
    mesh: &SkinnedMesh,
    palette: &[PaletteMatrix],
    renormalize: Renormalize,
    mut out: OutputView<'_>,
) {
    let (want_n, want_t) = (out.wants_normals(), out.wants_tangents());
    for g in &mesh.groups {
        let k = g.influences;
        for (v, &original) in g.vertices.iter().enumerate() {
            // The blended 3x4 matrix: sum of weight times palette rows.
            let mut b = [[0.0f32; 4]; 3];
            for i in 0..k {
                let (j, w) = g.table.get(k * v + i);
                let j = j as usize;
                for r in 0..3 {
                    for c in 0..4 {
                        b[r][c] += w * palette[j].rows[r][c];
                    }
                }
            }
            let p = g.position(v);
            let mut position = [0.0f32; 3];
            for r in 0..3 {
                position[r] = b[r][0] * p[0] + b[r][1] * p[1] + b[r][2] * p[2] + b[r][3];
            }
            let mut normal = [0.0f32; 3];
            if want_n {
                let n = g.normal(v);
                for r in 0..3 {
                    normal[r] = b[r][0] * n[0] + b[r][1] * n[1] + b[r][2] * n[2];
                }
                renormalize3(&mut normal, renormalize);
            }
            let mut tangent = [0.0f32; 4];
            if want_t {
                let t = g.tangent(v);
                let mut xyz = [0.0f32; 3];
                for r in 0..3 {
                    xyz[r] = b[r][0] * t[0] + b[r][1] * t[1] + b[r][2] * t[2];
                }
                renormalize3(&mut xyz, renormalize);
                tangent = [xyz[0], xyz[1], xyz[2], t[3]];
            }
            out.write(original as usize, position, normal, tangent);
        }
    }
}

/// Unit length again (both modes compute the precise result here; the fast mode's approximation is the
/// kernels' business, bounded by the tests). A zero vector stays zero.
fn renormalize3(v: &mut [f32; 3], mode: Renormalize) {
    if mode == Renormalize::None {
        return;
    }
    let len2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if len2 > 0.0 {
        let inv = 1.0 / len2.sqrt();
        v.iter_mut().for_each(|x| *x *= inv);
    }
}

/// van Waveren's positions-only skinning from weighted base vectors, vertex by vertex: the position is
/// the sum over the vertex's influences of palette matrix times `w * (p, 1)`.
pub(crate) fn skin_p_base(
    mesh: &BaseVectorMesh,
    palette: &[PaletteMatrix],
    positions: &mut [Vec3],
) {
    let mut f = 0;
    for (v, &count) in mesh.counts.iter().enumerate() {
        let mut p = [0.0f32; 3];
        for _ in 0..count {
            let m = &palette[mesh.joints[f] as usize].rows;
            let b = mesh.bases[f];
            for r in 0..3 {
                p[r] += m[r][0] * b[0] + m[r][1] * b[1] + m[r][2] * b[2] + m[r][3] * b[3];
            }
            f += 1;
        }
        positions[v] = Vec3::from(p);
    }
}

/// Bone-major accumulation (the VFP seed), positions only: the output starts at zero, and each joint adds
/// its weighted transform of every vertex on its list.
pub(crate) fn skin_p_bone_major(
    mesh: &BoneMajorMesh,
    palette: &[PaletteMatrix],
    positions: &mut [Vec3],
) {
    positions.fill(Vec3::ZERO);
    for b in 0..mesh.list_count() {
        let m = &palette[b].rows;
        for e in mesh.starts[b] as usize..mesh.starts[b + 1] as usize {
            let (x, y, z, w) = (mesh.px[e], mesh.py[e], mesh.pz[e], mesh.weight[e]);
            let out = &mut positions[mesh.vertex[e] as usize];
            out.x += w * (m[0][0] * x + m[0][1] * y + m[0][2] * z + m[0][3]);
            out.y += w * (m[1][0] * x + m[1][1] * y + m[1][2] * z + m[1][3]);
            out.z += w * (m[2][0] * x + m[2][1] * y + m[2][2] * z + m[2][3]);
        }
    }
}
