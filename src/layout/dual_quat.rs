//! The dual-quaternion palette entry the dual-quaternion skinning kernel reads, and its construction from
//! a palette matrix.
//!
//! A palette entry M (model times inverse bind, affine) is split as M = [R | t] S: a rigid motion (the
//! rotation R and the translation t) after a symmetric scale-and-shear matrix S in bind space. R is the
//! rotation nearest to M's 3x3 part A in the sense that maximizes trace(R^T A) (the polar decomposition's
//! rotation when det A > 0), so S = R^T A is symmetric. It is the eigenvector of the largest eigenvalue
//! of Horn's symmetric 4x4 matrix (the quaternion form of that maximization), found in f64 by Jacobi
//! rotations: no inverse is needed, so singular parts (a scale of zero, which glTF files use to hide
//! meshes) and mirrored ones (det A < 0, where S then has a negative eigenvalue) decompose too.

use crate::layout::palette::PaletteMatrix;
use glam::{DMat3, DQuat, DVec3, Mat3, Quat, Vec3};

/// How far (in each element) a palette matrix's scale and shear may be from the identity for
/// [`DualQuatEntry::from_palette`] to store it as the identity: rotations composed in `f32` down a
/// skeleton and multiplied by inverse bind matrices read from a file are orthonormal only within a few
/// times 1e-6.
pub const DUAL_QUAT_RIGID_TOLERANCE: f64 = 1e-5;

/// One entry of a dual-quaternion palette: 16 floats, 64 bytes, 64-byte aligned (the stride of
/// [`PaletteMatrix`], so one mesh skins with either).
///
/// The floats, in order: the rigid motion's unit dual quaternion, real part `x y z w` then dual part
/// `x y z w` (the dual part is `(t, 0) * real / 2` for the translation `t`); then the symmetric
/// scale-and-shear matrix `S` as `s00 s01 s02 s11 s12 s22`; then two zeros. A vertex `p` of a single
/// influence moves to `R (S p) + t`, which is the palette matrix's `M p` (within rounding, and within
/// [`DUAL_QUAT_RIGID_TOLERANCE`] of `|p|` per element of an `S` stored as the identity); a GPU shader
/// reads the entry as four `vec4`s.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub struct DualQuatEntry {
    floats: [f32; 16],
}

impl DualQuatEntry {
    /// The identity: no rotation, no translation, `S` the identity.
    pub const IDENTITY: DualQuatEntry = DualQuatEntry {
        floats: [
            0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0,
        ],
    };

    /// The entry of a palette matrix `M`, split as `M = [R | t] S`: `R` is the rotation that maximizes
    /// trace(R^T A) for `M`'s 3x3 part `A` (the polar decomposition's rotation where det A > 0), found
    /// as the eigenvector of the largest eigenvalue of Horn's symmetric 4x4 matrix (Jacobi rotations in
    /// f64), so `S = R^T A` is symmetric; a zero scale and a mirror decompose too (a mirror's `S` has a
    /// negative eigenvalue). An `S` within [`DUAL_QUAT_RIGID_TOLERANCE`] of the identity in every
    /// element is stored as the identity exactly ([`DualQuatEntry::is_rigid`]). The real part has
    /// `w >= 0`. The
    /// floats are finite for every finite palette entry whose elements stay below about 1e37 (larger
    /// ones can overflow `S`; [`dual_quat_palette`](crate::dual_quat_palette) names such an entry).
    pub fn from_palette(m: &PaletteMatrix) -> DualQuatEntry {
        let r = &m.rows;
        let a = DMat3::from_cols(
            DVec3::new(r[0][0] as f64, r[1][0] as f64, r[2][0] as f64),
            DVec3::new(r[0][1] as f64, r[1][1] as f64, r[2][1] as f64),
            DVec3::new(r[0][2] as f64, r[1][2] as f64, r[2][2] as f64),
        );
        let t = DVec3::new(r[0][3] as f64, r[1][3] as f64, r[2][3] as f64);
        let mut q = rotation_of(a);
        if q.w < 0.0 {
            q = -q;
        }
        // S = R^T A, symmetrized (its skew part is the search's residual).
        let s = DMat3::from_quat(q).transpose() * a;
        let sym = |i: usize, j: usize| 0.5 * (s.col(j)[i] + s.col(i)[j]);
        // A rigid motion's S within the rounding of its f32 matrix is stored as the identity exactly,
        // which lets the kernels skip the scale-and-shear phase (see `is_rigid`).
        let near_identity = (0..3).all(|i| {
            (0..3).all(|j| {
                (sym(i, j) - if i == j { 1.0 } else { 0.0 }).abs() <= DUAL_QUAT_RIGID_TOLERANCE
            })
        });
        let sym = |i: usize, j: usize| {
            if near_identity {
                f64::from(u8::from(i == j))
            } else {
                sym(i, j)
            }
        };
        let real = q;
        // (t, 0) * real / 2: w = -t . r / 2, xyz = (w t + t x r) / 2.
        let rv = DVec3::new(real.x, real.y, real.z);
        let dual_v = 0.5 * (real.w * t + t.cross(rv));
        let dual_w = -0.5 * t.dot(rv);
        DualQuatEntry {
            floats: [
                real.x as f32,
                real.y as f32,
                real.z as f32,
                real.w as f32,
                dual_v.x as f32,
                dual_v.y as f32,
                dual_v.z as f32,
                dual_w as f32,
                sym(0, 0) as f32,
                sym(0, 1) as f32,
                sym(0, 2) as f32,
                sym(1, 1) as f32,
                sym(1, 2) as f32,
                sym(2, 2) as f32,
                0.0,
                0.0,
            ],
        }
    }

    /// An entry of 16 floats in the order above, as given (for entries made elsewhere, or read back from
    /// a GPU buffer). Nothing is checked here; the jobs that read an entry require all 16 floats finite
    /// (the two last, unused, included), and skin a real part that is not unit as the formulas say
    /// (the blended real part is normalized per vertex).
    pub fn from_floats(floats: [f32; 16]) -> DualQuatEntry {
        DualQuatEntry { floats }
    }

    /// The real part (the rotation), `x y z w`.
    pub fn real(&self) -> Quat {
        let f = &self.floats;
        Quat::from_xyzw(f[0], f[1], f[2], f[3])
    }

    /// The dual part, `x y z w`.
    pub fn dual(&self) -> Quat {
        let f = &self.floats;
        Quat::from_xyzw(f[4], f[5], f[6], f[7])
    }

    /// The translation `t = 2 dual * conj(real)` (its vector part).
    pub fn translation(&self) -> Vec3 {
        let t = self.dual() * self.real().conjugate() * 2.0;
        Vec3::new(t.x, t.y, t.z)
    }

    /// True when `S` is exactly the identity: a rigid motion, whose dual-quaternion skinning skips the
    /// scale-and-shear phase (where the mesh's weights sum to 1, see
    /// [`SkinningJob::dual_quaternion`](crate::SkinningJob::dual_quaternion)).
    /// [`DualQuatEntry::from_palette`] stores every `S` within [`DUAL_QUAT_RIGID_TOLERANCE`] of the
    /// identity, in each element, as the identity.
    pub fn is_rigid(&self) -> bool {
        self.floats[8..14] == [1.0, 0.0, 0.0, 1.0, 0.0, 1.0]
    }

    /// The symmetric scale-and-shear matrix `S`.
    pub fn scale_shear(&self) -> Mat3 {
        let f = &self.floats;
        Mat3::from_cols_array(&[f[8], f[9], f[10], f[9], f[11], f[12], f[10], f[12], f[13]])
    }

    /// The 16 floats as the kernel and a GPU read them (see [`DualQuatEntry`]).
    pub fn as_floats(&self) -> &[f32; 16] {
        &self.floats
    }
}

impl Default for DualQuatEntry {
    fn default() -> DualQuatEntry {
        DualQuatEntry::IDENTITY
    }
}

/// The rotation R that maximizes trace(R^T a) (see [`DualQuatEntry::from_palette`]), as a unit
/// quaternion: the eigenvector of the largest eigenvalue of Horn's symmetric 4x4 matrix of `a` (B. K. P.
/// Horn, "Closed-form solution of absolute orientation using unit quaternions", 1987), found by Jacobi
/// rotations.
fn rotation_of(a: DMat3) -> DQuat {
    // The maximizer is invariant to a positive scale of `a`; dividing by the largest element keeps the
    // sums far from overflow.
    let largest = a.to_cols_array().iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if largest == 0.0 || !largest.is_finite() {
        return DQuat::IDENTITY;
    }
    let a = a * (1.0 / largest);
    // trace(R^T a) = q^T N q with s = a^T (s_ij = a_ji) and q = (w, x, y, z).
    let s = |i: usize, j: usize| a.col(i)[j];
    let (sxx, sxy, sxz) = (s(0, 0), s(0, 1), s(0, 2));
    let (syx, syy, syz) = (s(1, 0), s(1, 1), s(1, 2));
    let (szx, szy, szz) = (s(2, 0), s(2, 1), s(2, 2));
    let n = [
        [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
        [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
        [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
        [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
    ];
    let v = largest_eigenvector(n);
    let q = DQuat::from_xyzw(v[1], v[2], v[3], v[0]);
    let len = q.length();
    if len > 0.0 && len.is_finite() {
        q * (1.0 / len)
    } else {
        DQuat::IDENTITY
    }
}

/// Sweeps of Jacobi rotations at most; they converge quadratically, in a handful for a 4x4 matrix, and
/// the bound keeps the work of one entry fixed.
const MAX_SWEEPS: usize = 32;

/// The eigenvector of the largest eigenvalue of the symmetric `m`, by cyclic Jacobi rotations.
fn largest_eigenvector(mut m: [[f64; 4]; 4]) -> [f64; 4] {
    let mut v = [[0.0f64; 4]; 4];
    for (i, row) in v.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    let scale: f64 = m.iter().flatten().map(|x| x * x).sum();
    for _ in 0..MAX_SWEEPS {
        let off: f64 = (0..4)
            .flat_map(|p| (0..4).filter(move |&q| q != p).map(move |q| (p, q)))
            .map(|(p, q)| m[p][q] * m[p][q])
            .sum();
        if off <= 1e-30 * scale {
            break;
        }
        for p in 0..3 {
            for q in p + 1..4 {
                if m[p][q].abs() <= 1e-300 {
                    continue;
                }
                // The rotation in the (p, q) plane that zeroes m[p][q] (Numerical Recipes' form).
                let theta = (m[q][q] - m[p][p]) / (2.0 * m[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for row in m.iter_mut() {
                    let (kp, kq) = (row[p], row[q]);
                    row[p] = c * kp - s * kq;
                    row[q] = s * kp + c * kq;
                }
                let (rp, rq) = (m[p], m[q]);
                m[p] = std::array::from_fn(|k| c * rp[k] - s * rq[k]);
                m[q] = std::array::from_fn(|k| s * rp[k] + c * rq[k]);
                for row in v.iter_mut() {
                    let (kp, kq) = (row[p], row[q]);
                    row[p] = c * kp - s * kq;
                    row[q] = s * kp + c * kq;
                }
            }
        }
    }
    let best = (0..4).fold(0, |b, i| if m[i][i] > m[b][b] { i } else { b });
    [v[0][best], v[1][best], v[2][best], v[3][best]]
}
