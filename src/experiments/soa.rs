//! The seeds' SoA local-to-model traversals: per parent and per level, on matrices stored as a
//! structure of arrays. Both lost to the product's joint-at-a-time kernel on every shape measured.

use crate::backend::{Backend, KernelFamily, Resolved};
use crate::error::Error;
use crate::ffi::experiments as ffi;
use crate::layout::trs::Trs;
use crate::reference;
use crate::skeleton::Skeleton;
use glam::Mat4;
use std::ops::Range;

fn to_soa(m: &[Mat4], soa: &mut SoaMatrices, joints: Range<usize>) {
    let stride = soa.stride;
    for j in joints {
        let c = m[j].to_cols_array();
        for r in 0..3 {
            for col in 0..4 {
                soa.data[(4 * r + col) * stride + j] = c[4 * col + r];
            }
        }
    }
}

fn from_soa(soa: &SoaMatrices, m: &mut [Mat4], joints: Range<usize>) {
    let stride = soa.stride;
    for j in joints {
        let mut c = [0.0f32; 16];
        for r in 0..3 {
            for col in 0..4 {
                c[4 * col + r] = soa.data[(4 * r + col) * stride + j];
            }
        }
        c[15] = 1.0;
        m[j] = Mat4::from_cols_array(&c);
    }
}

/// Affine matrices of many joints as a structure of arrays: twelve arrays (rows 0..2 times columns 0..3)
/// of one float per joint. This is the layout of the SoA traversals ([`SoaMethod`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SoaMatrices {
    /// Element (row r, column c) of joint j is `data[(4 * r + c) * stride + j]`.
    pub(crate) data: Vec<f32>,
    pub(crate) stride: usize,
}

impl SoaMatrices {
    /// Identity-free zeroed storage for `joints` matrices.
    pub fn zeroed(joints: usize) -> SoaMatrices {
        SoaMatrices {
            data: vec![0.0; 12 * joints],
            stride: joints,
        }
    }

    /// The matrices of a `Mat4` slice (bottom rows dropped).
    pub fn from_mat4(matrices: &[Mat4]) -> SoaMatrices {
        let mut soa = SoaMatrices::zeroed(matrices.len());
        to_soa(matrices, &mut soa, 0..matrices.len());
        soa
    }

    /// Number of matrices.
    pub fn len(&self) -> usize {
        self.stride
    }

    /// True when there are no matrices.
    pub fn is_empty(&self) -> bool {
        self.stride == 0
    }

    /// One matrix as a `Mat4` (bottom row (0, 0, 0, 1)), or `None` past the end.
    pub fn get(&self, joint: usize) -> Option<Mat4> {
        (joint < self.stride).then(|| {
            let mut c = [0.0f32; 16];
            for r in 0..3 {
                for col in 0..4 {
                    c[4 * col + r] = self.data[(4 * r + col) * self.stride + joint];
                }
            }
            c[15] = 1.0;
            Mat4::from_cols_array(&c)
        })
    }

    /// Writes every matrix into `out`.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when `out` does not have one matrix per entry.
    pub fn to_mat4(&self, out: &mut [Mat4]) -> Result<(), Error> {
        if out.len() != self.stride {
            return Err(Error::CountMismatch {
                what: "matrices",
                expected: self.stride,
                got: out.len(),
            });
        }
        from_soa(self, out, 0..self.stride);
        Ok(())
    }
}

/// The seeds' SoA traversals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SoaMethod {
    /// ISPC `foreach` over each parent's children (the seed's `ParallelLevelOrder`).
    Children,
    /// ISPC `foreach` over a whole level at a time; each lane gathers its parent.
    Level,
}

impl SoaMethod {
    /// Short name used in reports and bench ids (`ispc_children`, `ispc_level`).
    pub fn name(self) -> &'static str {
        match self {
            SoaMethod::Children => "ispc_children",
            SoaMethod::Level => "ispc_level",
        }
    }
}

/// Local to model on SoA matrices with one of the seeds' SoA traversals. With a backend that resolves
/// to the serial reference, it runs the reference through `Mat4` conversions.
///
/// # Errors
/// [`Error::CountMismatch`] when `locals` or `models` do not have one matrix per joint, and
/// [`Error::IsaUnavailable`] for an explicit ISA that cannot run.
pub fn local_to_model_soa(
    skeleton: &Skeleton,
    locals: &SoaMatrices,
    root: &Mat4,
    models: &mut SoaMatrices,
    method: SoaMethod,
    backend: Backend,
) -> Result<(), Error> {
    let n = skeleton.len();
    skeleton.check_count("local matrices", locals.len())?;
    skeleton.check_count("model matrices", models.len())?;
    let isa = match backend.resolve(KernelFamily::LocalToModel)? {
        Resolved::Ispc(isa) => isa,
        Resolved::Reference => {
            let mut l = vec![Mat4::ZERO; n];
            let mut m = vec![Mat4::ZERO; n];
            locals.to_mat4(&mut l)?;
            reference::local_to_model(skeleton.level_parents(), &l, root, &mut m, 0..n);
            *models = SoaMatrices::from_mat4(&m);
            return Ok(());
        }
    };
    let order = skeleton.kernel_order();
    let (l, m) = (&locals.data[..], &mut models.data[..]);
    ffi::ltm_roots_soa(isa, n, l, root, m, skeleton.level(0));
    for (k, level) in skeleton.levels().enumerate() {
        match method {
            SoaMethod::Level if k > 0 => ffi::ltm_level_soa(isa, order, l, m, level),
            SoaMethod::Level => {}
            SoaMethod::Children => ffi::ltm_children_soa(isa, order, l, m, level),
        }
    }
    Ok(())
}

/// Local matrices in SoA from translation, rotation and scale, with the ISPC conversion kernel (the
/// reference computes [`reference::trs_matrix`] per joint).
///
/// # Errors
/// [`Error::CountMismatch`] when the streams differ in length, and [`Error::IsaUnavailable`].
pub fn trs_to_soa(trs: Trs<'_>, backend: Backend) -> Result<SoaMatrices, Error> {
    let n = trs.translations.len();
    for (what, len) in [
        ("rotations", trs.rotations.len()),
        ("scales", trs.scales.len()),
    ] {
        if len != n {
            return Err(Error::CountMismatch {
                what,
                expected: n,
                got: len,
            });
        }
    }
    let mut soa = SoaMatrices::zeroed(n);
    match backend.resolve(KernelFamily::LocalToModel)? {
        Resolved::Ispc(isa) => ffi::trs_to_soa(
            isa,
            trs.translations,
            trs.rotations,
            trs.scales,
            &mut soa.data,
        ),
        Resolved::Reference => {
            let m: Vec<Mat4> = (0..n)
                .map(|j| {
                    Mat4::from_cols_array(&reference::trs_matrix(
                        trs.translations[j],
                        trs.rotations[j],
                        trs.scales[j],
                    ))
                })
                .collect();
            to_soa(&m, &mut soa, 0..n);
        }
    }
    Ok(soa)
}
