//! Linear blend skinning with blended matrices, vertex by vertex.

// Written like the seeds' C: explicit index loops over rows and columns are the point of a reference.
#![allow(clippy::needless_range_loop)]

use crate::layout::dual_quat::DualQuatEntry;
use crate::layout::mesh::KernelMesh;
use crate::layout::output::{OutputView, Renormalize};
use crate::layout::palette::PaletteMatrix;

/// Linear blend skinning with blended matrices, vertex by vertex, written for clarity (see
/// [`SkinningJob`](crate::SkinningJob) for the math). Outputs go to the vertices' original indices.
pub(crate) fn skin(
    mesh: &KernelMesh,
    palette: &[PaletteMatrix],
    renormalize: Renormalize,
    mut out: OutputView<'_>,
) {
    let (want_n, want_t) = (out.wants_normals(), out.wants_tangents());
    for g in mesh.groups() {
        let k = g.influences;
        for (v, &original) in g.vertices.iter().enumerate() {
            // The blended 3x4 matrix: sum of weight times palette rows, from the first product (zero
            // without influences), in influence order.
            let mut b = [[0.0f32; 4]; 3];
            for i in 0..k {
                let (j, w) = g.table.get(k * v + i);
                let j = j as usize;
                for r in 0..3 {
                    for c in 0..4 {
                        let t = w * palette[j].rows[r][c];
                        b[r][c] = if i == 0 { t } else { b[r][c] + t };
                    }
                }
            }
            // Each output row summed from the translation (positions) or from +0.0 (directions), then
            // x, y, z: the kernels' order (ispc/skin.ispc's skin_gang), so that the kernels built
            // without fused multiply-adds give these bits exactly (`Precision::Deterministic`).
            let p = g.position(v);
            let mut position = [0.0f32; 3];
            for r in 0..3 {
                position[r] = b[r][3] + b[r][0] * p[0] + b[r][1] * p[1] + b[r][2] * p[2];
            }
            let direction = |x: [f32; 3]| -> [f32; 3] {
                std::array::from_fn(|r| 0.0 + b[r][0] * x[0] + b[r][1] * x[1] + b[r][2] * x[2])
            };
            let mut normal = [0.0f32; 3];
            if want_n {
                normal = direction(g.normal(v));
                renormalize3(&mut normal, renormalize);
            }
            let mut tangent = [0.0f32; 4];
            if want_t {
                let t = g.tangent(v);
                let mut xyz = direction([t[0], t[1], t[2]]);
                renormalize3(&mut xyz, renormalize);
                tangent = [xyz[0], xyz[1], xyz[2], t[3]];
            }
            out.write(original as usize, position, normal, tangent);
        }
    }
}

/// Dual-quaternion skinning (two-phase, with scale), vertex by vertex, written for clarity (see
/// [`SkinningJob`](crate::SkinningJob) for the math; the kernel is ispc/skin.ispc's blend_dq). Outputs
/// go to the vertices' original indices. Without `scaled` (the job's `dual_quat_scaled`), phase 1, the
/// identity then, is skipped.
pub(crate) fn skin_dq(
    mesh: &KernelMesh,
    entries: &[DualQuatEntry],
    scaled: bool,
    renormalize: Renormalize,
    mut out: OutputView<'_>,
) {
    let (want_n, want_t) = (out.wants_normals(), out.wants_tangents());
    for g in mesh.groups() {
        let k = g.influences;
        for (v, &original) in g.vertices.iter().enumerate() {
            // Phase 1's blended scale and shear (s00 s01 s02 s11 s12 s22) and phase 2's dual quaternion
            // (real part r, dual part d), each influence's sign chosen against the real parts summed
            // before it (the dot product summed in pairs, as the kernel does).
            let mut s = [0.0f32; 6];
            let mut r = [0.0f32; 4];
            let mut d = [0.0f32; 4];
            for i in 0..k {
                let (j, w) = g.table.get(k * v + i);
                let e = entries[j as usize].as_floats();
                let dot = (e[0] * r[0] + e[1] * r[1]) + (e[2] * r[2] + e[3] * r[3]);
                let sw = if dot < 0.0 { -w } else { w };
                for c in 0..4 {
                    r[c] += sw * e[c];
                    d[c] += sw * e[4 + c];
                }
                for c in 0..6 {
                    s[c] += w * e[8 + c];
                }
            }
            // Normalized by the real part's length; the identity motion where it (nearly) vanishes.
            let len2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3];
            if len2 > DQ_MIN_LEN2 {
                let inv = 1.0 / len2.sqrt();
                r.iter_mut().chain(d.iter_mut()).for_each(|x| *x *= inv);
            } else {
                r = [0.0, 0.0, 0.0, 1.0];
                d = [0.0; 4];
            }
            let moved = |x: [f32; 3]| rotate(&r, if scaled { scale_shear(&s, x) } else { x });
            let p = moved(g.position(v));
            // The translation 2 (w d - d.w r + r x d).
            let t = [
                2.0 * (r[3] * d[0] - d[3] * r[0] + (r[1] * d[2] - r[2] * d[1])),
                2.0 * (r[3] * d[1] - d[3] * r[1] + (r[2] * d[0] - r[0] * d[2])),
                2.0 * (r[3] * d[2] - d[3] * r[2] + (r[0] * d[1] - r[1] * d[0])),
            ];
            let position = [p[0] + t[0], p[1] + t[1], p[2] + t[2]];
            let mut normal = [0.0f32; 3];
            if want_n {
                normal = moved(g.normal(v));
                renormalize3(&mut normal, renormalize);
            }
            let mut tangent = [0.0f32; 4];
            if want_t {
                let t = g.tangent(v);
                let mut xyz = moved([t[0], t[1], t[2]]);
                renormalize3(&mut xyz, renormalize);
                tangent = [xyz[0], xyz[1], xyz[2], t[3]];
            }
            out.write(original as usize, position, normal, tangent);
        }
    }
}

/// Squared lengths of a blended real part at or below this take the identity motion (DQ_MIN_LEN2 in
/// ispc/skin.ispc).
const DQ_MIN_LEN2: f32 = 1e-20;

/// S x for the symmetric s (s00 s01 s02 s11 s12 s22).
fn scale_shear(s: &[f32; 6], x: [f32; 3]) -> [f32; 3] {
    [
        s[0] * x[0] + s[1] * x[1] + s[2] * x[2],
        s[1] * x[0] + s[3] * x[1] + s[4] * x[2],
        s[2] * x[0] + s[4] * x[1] + s[5] * x[2],
    ]
}

/// x rotated by the unit quaternion q (x y z w): x + 2 r x (r x x + w x), r = q.xyz.
fn rotate(q: &[f32; 4], x: [f32; 3]) -> [f32; 3] {
    let c = [
        q[1] * x[2] - q[2] * x[1] + q[3] * x[0],
        q[2] * x[0] - q[0] * x[2] + q[3] * x[1],
        q[0] * x[1] - q[1] * x[0] + q[3] * x[2],
    ];
    [
        x[0] + 2.0 * (q[1] * c[2] - q[2] * c[1]),
        x[1] + 2.0 * (q[2] * c[0] - q[0] * c[2]),
        x[2] + 2.0 * (q[0] * c[1] - q[1] * c[0]),
    ]
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
