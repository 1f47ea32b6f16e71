//! The serial references of the seeds' positions-only methods.

// Written like the seeds' C: explicit index loops over rows and columns are the point of a reference.
#![allow(clippy::needless_range_loop)]

use super::meshes::{BaseVectorMesh, BoneMajorMesh};
use crate::layout::palette::PaletteMatrix;
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
