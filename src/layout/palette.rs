//! The palette entry layout the skinning kernels read: a row-major 4x4 whose rows 0..2 are the affine
//! 3x4 rows, 64 bytes and 64-byte aligned, so that one entry is exactly one cache line.

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
