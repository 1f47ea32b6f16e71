//! Linear blend skinning with blended matrices, vertex by vertex.

// Written like the seeds' C: explicit index loops over rows and columns are the point of a reference.
#![allow(clippy::needless_range_loop)]

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
