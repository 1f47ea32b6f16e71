//! The serial references of the seeds' positions-only methods and of the fused morph and skin.

// Written like the seeds' C: explicit index loops over rows and columns are the point of a reference.
#![allow(clippy::needless_range_loop)]

use super::meshes::{BaseVectorMesh, BoneMajorMesh};
use crate::ffi::morph::ActiveTargets;
use crate::layout::mesh::{padded, KernelMesh, SKIN_BLOCK};
use crate::layout::palette::PaletteMatrix;
use crate::SkinnedVertices;
use glam::Vec3;

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

/// The fused morph and skin, vertex by vertex: each attribute of each vertex is its bind value plus the
/// weighted deltas of `active[s]` in target order (read from the packed rows, `3 * SKIN_BLOCK` floats
/// per block, every group in turn), then transformed as [`crate::reference::skin`] transforms it, without
/// renormalization. Outputs go to the vertices' original indices.
pub(crate) fn skin_morph_fused(
    mesh: &KernelMesh,
    palette: &[PaletteMatrix],
    active: [&ActiveTargets<'_>; 3],
    out: &mut SkinnedVertices,
) {
    let mut start = 0;
    for g in mesh.groups() {
        let k = g.influences;
        for (v, &original) in g.vertices.iter().enumerate() {
            let mut a = g.attributes(v);
            let row = start + v / SKIN_BLOCK * 3 * SKIN_BLOCK + v % SKIN_BLOCK;
            for (s, targets) in active.iter().enumerate() {
                for &(d, w) in targets.iter() {
                    for c in 0..3 {
                        a[3 * s + c] += w * d[row + c * SKIN_BLOCK];
                    }
                }
            }
            let mut b = [[0.0f32; 4]; 3];
            for i in 0..k {
                let (j, w) = g.table.get(k * v + i);
                for r in 0..3 {
                    for c in 0..4 {
                        b[r][c] += w * palette[j as usize].rows[r][c];
                    }
                }
            }
            let apply = |x: &[f32], t: f32| -> [f32; 3] {
                std::array::from_fn(|r| {
                    b[r][0] * x[0] + b[r][1] * x[1] + b[r][2] * x[2] + b[r][3] * t
                })
            };
            let o = original as usize;
            out.positions[o] = Vec3::from(apply(&a[0..3], 1.0));
            if let Some(n) = out.normals.as_mut() {
                n[o] = Vec3::from(apply(&a[3..6], 0.0));
            }
            if let Some(t) = out.tangents.as_mut() {
                t[o] = Vec3::from(apply(&a[6..9], 0.0)).extend(a[9]);
            }
        }
        start += padded(g.vertices.len()) / SKIN_BLOCK * 3 * SKIN_BLOCK;
    }
}
