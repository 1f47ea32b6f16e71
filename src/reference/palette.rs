//! The skinning palette.

// Written like the seeds' C: explicit index loops over rows and columns are the point of a reference.
#![allow(clippy::needless_range_loop)]

use super::hierarchy::affine_mul;
use crate::layout::palette::PaletteMatrix;
use glam::Mat4;

/// The skinning palette: `palette[i] = models[joints[i]] * inverse_binds[i]` (joint i without a remap),
/// stored row-major with an exact (0, 0, 0, 1) last row. Entries whose joint is out of range are left
/// as they are.
pub fn skin_palette(
    models: &[Mat4],
    inverse_binds: &[Mat4],
    joints: Option<&[usize]>,
    palette: &mut [PaletteMatrix],
) {
    for (i, (ib, out)) in inverse_binds.iter().zip(palette.iter_mut()).enumerate() {
        let m = match joints {
            Some(j) => j.get(i).copied(),
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
