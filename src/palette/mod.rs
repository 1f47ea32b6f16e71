//! The skinning palette: `palette[i] = model[joints[i]] * inverse_bind[i]` for each skin joint.
//!
//! Layout, chosen for the skinning kernels: each entry is a row-major 4x4 ([`PaletteMatrix`]), 64 bytes
//! and 64-byte aligned, whose rows 0..2 are the affine 3x4 rows and whose row 3 is (0, 0, 0, 1).
//! - One entry is exactly one cache line, so reading a joint's matrix touches one line (a 64-byte-aligned
//!   palette ran 10 to 20% faster than a 16-byte-aligned one on this machine class).
//! - Rows, because a skinned coordinate is a dot product of one row with (p, 1), and blending rows of
//!   several joints needs the same three 16-byte loads per joint whatever the kernel; it is also the
//!   float3x4 layout GPUs use, so the same palette can be uploaded as is.
//!
//! [`PaletteJob`] rules, each its own [`Error`]: one inverse bind matrix per palette entry
//! ([`Error::CountMismatch`]); the joint remap, when given, has one entry per palette entry
//! ([`Error::CountMismatch`]) and each names an existing model matrix ([`Error::SkinJointOutOfRange`]);
//! without a remap, skin joint i is skeleton joint i, so there must be at least as many model matrices
//! ([`Error::CountMismatch`]); an explicit ISA can run ([`Error::IsaUnavailable`]); every model and
//! inverse bind matrix is finite ([`Error::NotFinite`]: `validate` checks them all, `run` checks the
//! palette it computed and names the input only where an entry is not finite); the palette is finite
//! ([`Error::ResultNotFinite`] where finite matrices overflow `f32` together).

pub mod crowd;
pub(crate) mod pose;

use crate::backend::{Backend, KernelFamily, Precision, Resolved};
use crate::error::Error;
use crate::ffi::palette as ffi;
use crate::layout::dual_quat::DualQuatEntry;
use crate::layout::hierarchy::MAX_JOINTS;
use crate::layout::palette::PaletteMatrix;
use crate::numeric;
use crate::reference;
use glam::Mat4;

/// Computes a skinning palette from model matrices and inverse bind matrices.
#[derive(Debug)]
pub struct PaletteJob<'a> {
    /// Model matrices of the skeleton (level order, from [`LocalToModelJob`](crate::LocalToModelJob)).
    pub models: &'a [Mat4],
    /// Inverse bind matrix of each skin joint.
    pub inverse_binds: &'a [Mat4],
    /// Skin joint i uses model matrix `joints[i]`, a level-order joint like the models (glTF skins name a
    /// subset of nodes; [`Skeleton::level_indices`](crate::Skeleton::level_indices) converts a skin given
    /// in your order). `None`: joint i.
    pub joints: Option<&'a [usize]>,
    /// The ISA; [`Backend::Auto`] by default.
    pub backend: Backend,
    /// [`Precision::Fast`] (default) or [`Precision::Deterministic`]: the serial reference's bits on
    /// every backend and platform.
    pub precision: Precision,
    /// Output: one entry per skin joint.
    pub palette: &'a mut [PaletteMatrix],
}

impl<'a> PaletteJob<'a> {
    /// A job with no joint remap and the automatic ISA.
    pub fn new(
        models: &'a [Mat4],
        inverse_binds: &'a [Mat4],
        palette: &'a mut [PaletteMatrix],
    ) -> PaletteJob<'a> {
        PaletteJob {
            models,
            inverse_binds,
            joints: None,
            backend: Backend::Auto,
            precision: Precision::Fast,
            palette,
        }
    }

    /// Sets the joint remap: palette entry i uses model matrix `joints[i]`.
    pub fn joints(mut self, joints: &'a [usize]) -> PaletteJob<'a> {
        self.joints = Some(joints);
        self
    }

    /// Sets who runs the job (an [`Isa`](crate::Isa) converts).
    pub fn backend(mut self, backend: impl Into<Backend>) -> PaletteJob<'a> {
        self.backend = backend.into();
        self
    }

    /// Sets the precision: [`Precision::Deterministic`] gives the serial reference's bits on every
    /// backend and platform.
    /// `validate` and `run` then refuse a thread (the caller's, or with `Threads::All` one of rayon's
    /// pool) whose floating-point mode is not the default ([`Error::FloatEnvironment`]).
    pub fn precision(mut self, precision: Precision) -> PaletteJob<'a> {
        self.precision = precision;
        self
    }

    /// Checks every rule (see the [module docs](crate::palette)) without computing anything.
    pub fn validate(&self) -> Result<(), Error> {
        self.plan()?;
        self.check_floats()
    }

    /// The rules on counts, indices and the backend (everything but the floats).
    fn plan(&self) -> Result<(), Error> {
        let count = self.inverse_binds.len();
        if self.palette.len() != count {
            return Err(Error::CountMismatch {
                what: "palette entries",
                expected: count,
                got: self.palette.len(),
            });
        }
        // The kernel indexes palette entries and model matrices with 32-bit offsets.
        let most = count.max(self.models.len());
        if most > MAX_JOINTS {
            return Err(Error::TooManyJoints {
                joints: most,
                max: MAX_JOINTS,
            });
        }
        match self.joints {
            Some(joints) => {
                if joints.len() != count {
                    return Err(Error::CountMismatch {
                        what: "skin joint remap",
                        expected: count,
                        got: joints.len(),
                    });
                }
                if let Some((skin_joint, &joint)) = joints
                    .iter()
                    .enumerate()
                    .find(|(_, &j)| j >= self.models.len())
                {
                    return Err(Error::SkinJointOutOfRange {
                        skin_joint,
                        joint,
                        joints: self.models.len(),
                    });
                }
            }
            None if self.models.len() < count => {
                return Err(Error::CountMismatch {
                    what: "model matrices",
                    expected: count,
                    got: self.models.len(),
                });
            }
            None => {}
        }
        self.backend
            .resolve(KernelFamily::LocalToModel)?
            .with_precision(self.precision)
            .map(|_| ())
    }

    /// The numeric rules on the inputs: every model matrix and inverse bind matrix is finite.
    fn check_floats(&self) -> Result<(), Error> {
        numeric::check_finite("model matrices", bytemuck::cast_slice(self.models), 16)?;
        numeric::check_finite(
            "inverse bind matrices",
            bytemuck::cast_slice(self.inverse_binds),
            16,
        )
    }

    /// Validates, then computes the palette.
    ///
    /// The palette computed is checked to be finite; where an entry is not, the inputs are searched
    /// ([`Error::NotFinite`] naming the matrix), or else the product overflowed
    /// ([`Error::ResultNotFinite`]).
    pub fn run(&mut self) -> Result<(), Error> {
        self.plan()?;
        let resolved = self
            .backend
            .resolve(KernelFamily::LocalToModel)?
            .with_precision(self.precision)?;
        // The kernel reports whether what it wrote is finite (a false alarm only where sums overflow:
        // then the exact scan decides); the reference's output gets one pass.
        let finite = match resolved {
            Resolved::Ispc(isa) => {
                ffi::skin_palette(
                    isa,
                    self.models,
                    self.inverse_binds,
                    self.joints,
                    self.palette,
                ) || numeric::all_finite_palette_on(Some(isa), self.palette)
            }
            Resolved::Reference => {
                reference::skin_palette(self.models, self.inverse_binds, self.joints, self.palette);
                numeric::all_finite_palette(self.palette)
            }
        };
        if finite {
            return Ok(());
        }
        self.check_floats()?;
        Err(Error::ResultNotFinite {
            stage: "palette",
            what: "palette entries",
            index: numeric::first_not_finite_palette(self.palette).unwrap_or(0),
        })
    }
}

/// Copies a palette into `out` as 3x4 rows, 48 bytes per entry (see [`PaletteMatrix::to_rows_3x4`]),
/// ready for a GPU upload (`bytemuck::cast_slice(out)` gives the bytes).
///
/// # Errors
/// [`Error::LengthMismatch`] unless `out` has one entry per palette entry.
pub fn palette_rows_3x4(palette: &[PaletteMatrix], out: &mut [[[f32; 4]; 3]]) -> Result<(), Error> {
    if palette.len() != out.len() {
        return Err(Error::LengthMismatch {
            input: palette.len(),
            output: out.len(),
        });
    }
    for (o, p) in out.iter_mut().zip(palette) {
        *o = p.to_rows_3x4();
    }
    Ok(())
}

/// Converts a palette into dual-quaternion entries for [`SkinningJob::dual_quaternion`] or a GPU's
/// dual-quaternion skinning: `out[i]` is [`DualQuatEntry::from_palette`] of `palette[i]` (its rigid
/// motion and its symmetric scale and shear, see [`DualQuatEntry`]). Serial: a few hundred
/// floating-point operations per entry, on the calling thread.
///
/// # Errors
/// [`Error::LengthMismatch`] unless `out` has one entry per palette entry; [`Error::NotFinite`] for a
/// palette entry whose affine rows hold a float that is not finite (naming the entry and the value);
/// [`Error::ResultNotFinite`] where a finite entry's elements are so large (about 1e37) that its scale
/// and shear overflow `f32`.
///
/// [`SkinningJob::dual_quaternion`]: crate::SkinningJob::dual_quaternion
pub fn dual_quat_palette(
    palette: &[PaletteMatrix],
    out: &mut [DualQuatEntry],
) -> Result<(), Error> {
    if palette.len() != out.len() {
        return Err(Error::LengthMismatch {
            input: palette.len(),
            output: out.len(),
        });
    }
    numeric::check_palette(palette)?;
    for (i, (o, p)) in out.iter_mut().zip(palette).enumerate() {
        *o = DualQuatEntry::from_palette(p);
        if !o.as_floats().iter().all(|x| x.is_finite()) {
            return Err(Error::ResultNotFinite {
                stage: "dual-quaternion palette",
                what: "dual-quaternion palette entries",
                index: i,
            });
        }
    }
    Ok(())
}
