//! The palette entry layout the skinning kernels read: a row-major 4x4 whose rows 0..2 are the affine
//! 3x4 rows, 64 bytes and 64-byte aligned, so that one entry is exactly one cache line.

use crate::layout::hierarchy::MAX_JOINTS;
use glam::Mat4;

/// One palette entry: a row-major 4x4 whose rows 0..2 are the affine 3x4 rows, 64-byte aligned.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub struct PaletteMatrix {
    /// `rows[r][c]` is the element at row r, column c; `rows[3]` is (0, 0, 0, 1).
    pub rows: [[f32; 4]; 4],
}

impl PaletteMatrix {
    /// The identity.
    pub const IDENTITY: PaletteMatrix = PaletteMatrix {
        rows: [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ],
    };

    /// The entry of an affine matrix (its bottom row is taken as (0, 0, 0, 1)).
    pub fn from_mat4(m: Mat4) -> PaletteMatrix {
        let mut rows = m.transpose().to_cols_array_2d();
        rows[3] = [0.0, 0.0, 0.0, 1.0];
        PaletteMatrix { rows }
    }

    /// The three affine rows, 48 bytes: the form a GPU skinning shader usually reads (three `vec4`
    /// rows, `p' = (dot(r0, p), dot(r1, p), dot(r2, p))` for `p = (x, y, z, 1)`).
    pub fn to_rows_3x4(&self) -> [[f32; 4]; 3] {
        [self.rows[0], self.rows[1], self.rows[2]]
    }

    /// The entry as a glam matrix.
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_cols_array_2d(&self.rows).transpose()
    }
}

impl Default for PaletteMatrix {
    fn default() -> PaletteMatrix {
        PaletteMatrix::IDENTITY
    }
}

impl From<Mat4> for PaletteMatrix {
    /// The entry of an affine matrix, as [`PaletteMatrix::from_mat4`].
    fn from(m: Mat4) -> PaletteMatrix {
        PaletteMatrix::from_mat4(m)
    }
}

impl From<PaletteMatrix> for Mat4 {
    /// The entry as a glam matrix, as [`PaletteMatrix::to_mat4`].
    fn from(p: PaletteMatrix) -> Mat4 {
        p.to_mat4()
    }
}

/// Most skins [`PalettePlan`] takes; a character with more skins runs its palettes as a separate stage.
pub(crate) const MAX_PLAN_SKINS: usize = 8;

/// Where each joint's skinning palette entries go, for the kernel that computes the model matrices and
/// the palettes in one pass (`ltm_palette_trs`): for level joint `j`, entries `entry_start[j] ..
/// entry_start[j + 1]`, each `(skin, slot)` with its inverse bind matrix's rows 0..2 (row-major, the
/// form the kernel multiplies by). Built once per character, checked, so that the kernel's every index
/// is in range: `entry_start` starts at 0, never decreases and ends at `entries.len()` (and
/// `ib_rows.len()`), every skin is below `skin_lens.len()` (at most [`MAX_PLAN_SKINS`]) and every slot
/// below its skin's length, and everything fits the kernels' `i32`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PalettePlan {
    entry_start: Vec<i32>,
    entries: Vec<[i32; 2]>,
    ib_rows: Vec<[[f32; 4]; 3]>,
    skin_lens: Vec<usize>,
}

impl PalettePlan {
    /// The plan of skins whose entries name level joints (`skins[s][slot]` below `joints`), with one
    /// inverse bind matrix per entry (`inverse_binds[s][slot]`), or `None` where a joint is out of
    /// range, the counts differ, there are more than [`MAX_PLAN_SKINS`] skins, a skin has more than
    /// `MAX_JOINTS` entries or a count passes `i32`.
    pub(crate) fn new(
        joints: usize,
        skins: &[Vec<usize>],
        inverse_binds: &[&[Mat4]],
    ) -> Option<PalettePlan> {
        let counts_match = inverse_binds.len() == skins.len()
            && skins
                .iter()
                .zip(inverse_binds)
                .all(|(s, ib)| s.len() == ib.len());
        // A longer skin is refused by the palette job (Error::TooManyJoints), which then runs instead.
        let lengths_fit = skins.iter().all(|s| s.len() <= MAX_JOINTS);
        if skins.len() > MAX_PLAN_SKINS || !counts_match || !lengths_fit {
            return None;
        }
        let mut counts = vec![0usize; joints];
        for &j in skins.iter().flatten() {
            *counts.get_mut(j)? += 1;
        }
        let mut entry_start = Vec::with_capacity(joints.saturating_add(1));
        let mut total = 0usize;
        entry_start.push(0);
        for c in &counts {
            total = total.checked_add(*c)?;
            entry_start.push(i32::try_from(total).ok()?);
        }
        let mut next: Vec<usize> = entry_start.iter().map(|&s| s as usize).collect();
        let mut entries = vec![[0i32; 2]; total];
        let mut ib_rows = vec![[[0.0f32; 4]; 3]; total];
        for (s, (skin, binds)) in skins.iter().zip(inverse_binds).enumerate() {
            for (slot, (&j, ib)) in skin.iter().zip(binds.iter()).enumerate() {
                let at = next.get_mut(j)?;
                *entries.get_mut(*at)? = [i32::try_from(s).ok()?, i32::try_from(slot).ok()?];
                *ib_rows.get_mut(*at)? = PaletteMatrix::from_mat4(*ib).to_rows_3x4();
                *at += 1;
            }
        }
        Some(PalettePlan {
            entry_start,
            entries,
            ib_rows,
            skin_lens: skins.iter().map(Vec::len).collect(),
        })
    }

    /// The joints planned for.
    pub(crate) fn joints(&self) -> usize {
        self.entry_start.len().saturating_sub(1)
    }

    /// Each skin's entry count.
    pub(crate) fn skin_lens(&self) -> &[usize] {
        &self.skin_lens
    }

    /// `entry_start`, one more than the joints.
    pub(crate) fn entry_start(&self) -> &[i32] {
        &self.entry_start
    }

    /// The `(skin, slot)` entries, joint by joint.
    pub(crate) fn entries(&self) -> &[[i32; 2]] {
        &self.entries
    }

    /// Each entry's inverse bind matrix, rows 0..2, in the order of [`entries`](PalettePlan::entries).
    pub(crate) fn ib_rows(&self) -> &[[[f32; 4]; 3]] {
        &self.ib_rows
    }
}
