//! Linear blend skinning with blended ("collapsed") matrices: positions, normals and tangents.
//!
//! [`SkinningJob`] rules, each its own [`Error`]: the palette has at least the mesh's joint count
//! ([`Error::CountMismatch`]); every output has one element per vertex ([`Error::CountMismatch`]); an
//! output of normals or tangents needs them in the mesh ([`Error::AttributeMissing`]); an interleaved
//! output is 4-byte aligned, its stride a multiple of 4 that holds every attribute it writes without
//! overlaps, and its buffer long enough ([`Error::OutputLayout`]); an explicit ISA can run ([`Error::IsaUnavailable`]).
//!
//! Per vertex, with weights w_i and palette rows P_i (3x4 affine): B = sum w_i P_i, then p' = B (p, 1),
//! n' = B3 n and t' = B3 t.xyz with t'.w = t.w (B3 is B's 3x3 part). Normals and tangents are optionally
//! renormalized ([`Renormalize`]). As in every linear blend skinning, B3 is not a rotation when the
//! joints disagree, so n' is exact only for rigid (1-influence) vertices; renormalizing fixes its length.
//! The ISPC path renormalizes in registers as it stores each gang, one vector per lane, so a square root
//! serves a gang of vertices and the result does not depend on the output layout or the thread count.
//!
//! Dual-quaternion skinning ([`SkinningJob::dual_quaternion`], Kavan et al. 2008, in its two-phase
//! form with scale): each entry ([`DualQuatEntry`], from
//! [`dual_quat_palette`](crate::dual_quat_palette)) is a unit dual quaternion (real part r, dual
//! part d) after a symmetric scale-and-shear matrix S. Per vertex, S_b = sum w_i S_i, and the dual
//! quaternions are summed in the vertex's influence order with weight w_i, negated where r_i's dot
//! product with the real parts summed so far is negative (so every term lies in one hemisphere; q
//! and -q are the same motion), then divided by the length of the summed real part (a vertex whose
//! summed real part has a squared length of at most 1e-20 takes the identity motion). Then p' = R
//! (S_b p) + t, n' = R (S_b n) and t' = R (S_b t.xyz), with R and t the normalized dual
//! quaternion's rotation and translation. Joints that twist against each other keep the volume that
//! linear blending loses (no "candy wrapper"). Where S_b is the identity, because every entry the
//! mesh may read (up to its joint count) is rigid ([`DualQuatEntry::is_rigid`], as
//! `dual_quat_palette` stores a rigid motion's) and every vertex's weights sum to 1 within 1e-5
//! ([`SkinnedMesh::weight_sums`]), the first phase is skipped (p' = R p + t), on every backend
//! alike: rigid skeletons skin faster. Its rules are the linear job's, with
//! [`Error::CountMismatch`] for fewer entries than the mesh's joints, [`Error::NotFinite`] for an
//! entry that is not finite, and every skinned vertex checked to be finite
//! ([`Error::ResultNotFinite`]) where the entries, weights and attributes do not bound it.

use crate::backend::{Backend, KernelFamily, Precision, Resolved, Threads};
use crate::error::Error;
use crate::ffi::skin::{self as ffi, Output, Plan, RowsMode};
use crate::layout::bounds::Bounds;
use crate::layout::dual_quat::DualQuatEntry;
use crate::layout::mesh::SKIN_CHUNK;
use crate::layout::output::{overlap, OutputView, Renormalize};
use crate::layout::palette::PaletteMatrix;
use crate::numeric::{self, check_palette};
use crate::reference;
use crate::skinning::mesh::SkinnedMesh;
use glam::{Vec3, Vec4};

/// Where skinned vertices go.
#[derive(Debug)]
pub enum SkinOutput<'a> {
    /// One stream per attribute, one element per vertex.
    Separate {
        /// Skinned positions.
        positions: &'a mut [Vec3],
        /// Skinned normals, when wanted.
        normals: Option<&'a mut [Vec3]>,
        /// Skinned tangents (w copied from the input), when wanted.
        tangents: Option<&'a mut [Vec4]>,
    },
    /// An interleaved vertex buffer: vertex i starts at byte `i * stride`, each attribute at its offset
    /// (positions and normals 12 bytes, tangents 16), f32, native byte order.
    Interleaved {
        /// The vertex buffer.
        bytes: &'a mut [u8],
        /// Bytes per vertex.
        stride: usize,
        /// Byte offset of the position in a vertex.
        positions: usize,
        /// Byte offset of the normal, when wanted.
        normals: Option<usize>,
        /// Byte offset of the tangent, when wanted.
        tangents: Option<usize>,
    },
}

impl<'a> SkinOutput<'a> {
    /// Skinned positions only, one per vertex.
    pub fn positions(positions: &'a mut [Vec3]) -> SkinOutput<'a> {
        SkinOutput::Separate {
            positions,
            normals: None,
            tangents: None,
        }
    }

    /// Skinned positions and normals, one of each per vertex.
    pub fn positions_normals(positions: &'a mut [Vec3], normals: &'a mut [Vec3]) -> SkinOutput<'a> {
        SkinOutput::Separate {
            positions,
            normals: Some(normals),
            tangents: None,
        }
    }

    /// Skinned positions, normals and tangents, one of each per vertex.
    pub fn positions_normals_tangents(
        positions: &'a mut [Vec3],
        normals: &'a mut [Vec3],
        tangents: &'a mut [Vec4],
    ) -> SkinOutput<'a> {
        SkinOutput::Separate {
            positions,
            normals: Some(normals),
            tangents: Some(tangents),
        }
    }
}

/// The palette a [`SkinningJob`] reads, which also chooses the skinning method.
#[derive(Clone, Copy, Debug)]
pub enum SkinPalette<'a> {
    /// Palette matrices (from [`PaletteJob`](crate::PaletteJob)): linear blend skinning.
    Linear(&'a [PaletteMatrix]),
    /// Dual-quaternion entries (from [`dual_quat_palette`](crate::dual_quat_palette)): dual-quaternion
    /// skinning (see the [module docs](crate::skinning::job)).
    DualQuaternion(&'a [DualQuatEntry]),
}

impl SkinPalette<'_> {
    /// The number of entries.
    pub fn len(&self) -> usize {
        match self {
            SkinPalette::Linear(p) => p.len(),
            SkinPalette::DualQuaternion(p) => p.len(),
        }
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Skins a prepared mesh with a palette.
#[derive(Debug)]
pub struct SkinningJob<'a> {
    /// The prepared mesh.
    pub mesh: &'a SkinnedMesh,
    /// The palette, at least the mesh's joint count of entries: matrices for linear blend skinning
    /// ([`SkinningJob::new`]) or dual-quaternion entries ([`SkinningJob::dual_quaternion`]).
    pub palette: SkinPalette<'a>,
    /// Renormalization of normals and tangents; [`Renormalize::None`] by default (see [`Renormalize`]).
    pub renormalize: Renormalize,
    /// The ISA; [`Backend::Auto`] by default.
    pub backend: Backend,
    /// [`Precision::Fast`] (default) or [`Precision::Deterministic`]: the serial reference's bits on
    /// every backend and platform.
    pub precision: Precision,
    /// One thread (default) or rayon's pool, chunks of vertices per task; the result is bit-identical.
    /// The serial reference always runs on one thread.
    pub threads: Threads,
    /// Non-temporal (streaming) stores, for meshes too large for the cache: the output lines are not read
    /// before they are written, which saves the write-allocate traffic. The kernels write a small block
    /// of vertices into a cache-resident buffer, which is then streamed to the output. It takes effect on
    /// x86-64 when [`SkinnedMesh::streams_sequentially`] holds and the output is separate streams or an
    /// interleaved buffer whose stride the written attributes fill exactly (otherwise the bytes between
    /// them would be overwritten); elsewhere ordinary stores are used. The result is the same bits
    /// either way. Off by default: for meshes that fit in the cache it only adds a copy, and on the
    /// machine the README's results come from it was 15% to 30% slower than ordinary stores at 1M
    /// vertices too (the copy-out phases carry no prefetched loads). Use it to keep a large output from
    /// evicting other data from the caches, and measure.
    pub streaming: bool,
    /// Output.
    pub output: SkinOutput<'a>,
}

impl<'a> SkinningJob<'a> {
    /// A job with no renormalization ([`Renormalize::None`], the default), one thread and the
    /// automatic ISA.
    pub fn new(
        mesh: &'a SkinnedMesh,
        palette: &'a [PaletteMatrix],
        output: SkinOutput<'a>,
    ) -> SkinningJob<'a> {
        SkinningJob {
            mesh,
            palette: SkinPalette::Linear(palette),
            renormalize: Renormalize::default(),
            backend: Backend::Auto,
            precision: Precision::Fast,
            threads: Threads::One,
            streaming: false,
            output,
        }
    }

    /// A dual-quaternion skinning job (see the [module docs](crate::skinning::job)) with the entries of
    /// [`dual_quat_palette`](crate::dual_quat_palette), no renormalization, one thread and the automatic
    /// ISA; every other setting is the linear job's.
    pub fn dual_quaternion(
        mesh: &'a SkinnedMesh,
        entries: &'a [DualQuatEntry],
        output: SkinOutput<'a>,
    ) -> SkinningJob<'a> {
        SkinningJob {
            palette: SkinPalette::DualQuaternion(entries),
            ..SkinningJob::new(mesh, &[], output)
        }
    }

    /// Sets who runs the job (an [`Isa`](crate::Isa) converts): `SkinningJob::new(..).backend(isa)`.
    pub fn backend(mut self, backend: impl Into<Backend>) -> SkinningJob<'a> {
        self.backend = backend.into();
        self
    }

    /// Sets the precision: [`Precision::Deterministic`] gives the serial reference's bits on every
    /// backend and platform.
    /// `validate` and `run` then refuse a thread (the caller's, or with `Threads::All` one of rayon's
    /// pool) whose floating-point mode is not the default ([`Error::FloatEnvironment`]).
    pub fn precision(mut self, precision: Precision) -> SkinningJob<'a> {
        self.precision = precision;
        self
    }

    /// Sets the threads the job uses.
    pub fn threads(mut self, threads: Threads) -> SkinningJob<'a> {
        self.threads = threads;
        self
    }

    /// Sets the renormalization of skinned normals and tangents.
    pub fn renormalize(mut self, renormalize: Renormalize) -> SkinningJob<'a> {
        self.renormalize = renormalize;
        self
    }

    /// Turns streaming stores on or off (see [`SkinningJob::streaming`](#structfield.streaming)).
    pub fn streaming(mut self, streaming: bool) -> SkinningJob<'a> {
        self.streaming = streaming;
        self
    }

    /// Checks every rule (see the [module docs](crate::skinning::job)) without computing anything.
    pub fn validate(&self) -> Result<(), Error> {
        self.plan()?;
        match self.palette {
            SkinPalette::Linear(p) => check_palette(p.get(..self.mesh.joint_count()).unwrap_or(p)),
            SkinPalette::DualQuaternion(p) => {
                check_dual_quats(p.get(..self.mesh.joint_count()).unwrap_or(p))
            }
        }
    }

    /// Every rule but the palette's floats, which `run` checks with the bound it proves.
    fn plan(&self) -> Result<(), Error> {
        if self.palette.len() < self.mesh.joint_count() {
            return Err(Error::CountMismatch {
                what: "palette entries (at least the mesh's joint count)",
                expected: self.mesh.joint_count(),
                got: self.palette.len(),
            });
        }
        check_output(self.mesh, &self.output, self.mesh.vertex_count())?;
        self.backend
            .resolve(KernelFamily::Skinning)?
            .with_precision_on(self.precision, self.threads)
            .map(|_| ())
    }

    /// Validates, then skins every vertex.
    ///
    /// # Errors
    /// Those of [`run_with_bounds`](Self::run_with_bounds).
    pub fn run(&mut self) -> Result<(), Error> {
        self.run_job(false).map(|_| ())
    }

    /// Validates, skins every vertex, and returns the axis-aligned box of the skinned positions as
    /// (min, max), or `None` for a mesh without vertices. The kernels keep the box as they write the
    /// positions (six minimum and maximum instructions per gang of vertices), so it costs no second
    /// pass over the output; the serial reference computes it from its output. It is the box of
    /// exactly the floats written, on every ISA and thread count.
    ///
    /// The numeric rules: the palette entries the mesh uses are finite ([`Error::NotFinite`], naming
    /// the entry), and the skinned vertices are finite ([`Error::ResultNotFinite`]). The second is
    /// proven before the run from the palette's and the mesh's largest elements, and only where that
    /// bound cannot prove it (very large values, or [`Renormalize::Fast`], whose estimate has no
    /// bound for tiny vectors) are the outputs checked after it.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] for a palette shorter than the mesh's joint count or an output without
    /// one element per vertex; [`Error::AttributeMissing`] for normals or tangents the mesh lacks;
    /// [`Error::OutputLayout`] for an interleaved buffer that is not 4-byte aligned, whose stride is not
    /// a multiple of 4 holding every attribute without overlaps, or that is too short;
    /// [`Error::IsaUnavailable`] for an explicit ISA this CPU cannot run; and the two numeric rules
    /// above.
    pub fn run_with_bounds(&mut self) -> Result<Option<(Vec3, Vec3)>, Error> {
        self.run_boxed().map(Bounds::get)
    }

    /// [`run_with_bounds`](Self::run_with_bounds) with the box in the kernels' form.
    pub(crate) fn run_boxed(&mut self) -> Result<Bounds, Error> {
        self.run_job(true)
    }

    /// Validates and skins; the box of the positions where `boxed` (the kernels keep it anyway; the
    /// reference reads its output for it only when asked), else [`Bounds::EMPTY`].
    fn run_job(&mut self, boxed: bool) -> Result<Bounds, Error> {
        self.plan()?;
        let resolved = self
            .backend
            .resolve(KernelFamily::Skinning)?
            .with_precision(self.precision)?;

        let used = match self.palette {
            SkinPalette::Linear(p) => p.get(..self.mesh.joint_count()).unwrap_or(p),
            SkinPalette::DualQuaternion(p) => {
                let used = p.get(..self.mesh.joint_count()).unwrap_or(p);
                check_dual_quats(used)?;
                let (real, all) = dual_quat_magnitudes(used);
                let proven = self.mesh.dual_quat_bounded_by(real, all)
                    && self.renormalize != Renormalize::Fast;
                let bounds = self.skin(resolved, boxed)?;
                if !proven {
                    check_skinned(&self.output, self.mesh.vertex_count())?;
                }
                return Ok(bounds);
            }
        };
        let proven = match numeric::palette_magnitude(used) {
            Some(m) => self.mesh.bounded_by(m) && self.renormalize != Renormalize::Fast,
            // No magnitude means a float that is not finite, which check_palette names; should it
            // find none, the run goes on unproven and its outputs are checked.
            None => {
                check_palette(used)?;
                false
            }
        };
        let bounds = self.skin(resolved, boxed)?;
        if !proven {
            check_skinned(&self.output, self.mesh.vertex_count())?;
        }
        Ok(bounds)
    }

    /// Skins every vertex on `resolved` and returns the box of the positions (on the reference only
    /// where `boxed`, else empty); the rules are checked.
    fn skin(&mut self, resolved: Resolved, boxed: bool) -> Result<Bounds, Error> {
        let view = match &mut self.output {
            SkinOutput::Separate {
                positions,
                normals,
                tangents,
            } => OutputView::Separate {
                positions: bytemuck::cast_slice_mut(&mut positions[..]),
                normals: normals
                    .as_mut()
                    .map(|n| bytemuck::cast_slice_mut(&mut n[..])),
                tangents: tangents
                    .as_mut()
                    .map(|t| bytemuck::cast_slice_mut(&mut t[..])),
            },
            SkinOutput::Interleaved {
                bytes,
                stride,
                positions,
                normals,
                tangents,
            } => OutputView::Interleaved {
                // Validated: 4-byte aligned; a trailing partial float (never written) is cut off.
                floats: bytemuck::try_cast_slice_mut({
                    let whole = bytes.len() / 4 * 4;
                    &mut bytes[..whole]
                })
                .map_err(|_| Error::OutputLayout {
                    reason: "the interleaved buffer must be 4-byte aligned",
                })?,
                stride: *stride / 4,
                positions: *positions / 4,
                normals: normals.map(|o| o / 4),
                tangents: tangents.map(|o| o / 4),
            },
        };
        let mesh = &self.mesh.kernel;
        let Resolved::Ispc(isa) = resolved else {
            match self.palette {
                SkinPalette::Linear(p) => reference::skin(mesh, p, self.renormalize, view),
                SkinPalette::DualQuaternion(p) => {
                    let scaled = dual_quat_scaled(p, self.mesh);
                    reference::skin_dq(mesh, p, scaled, self.renormalize, view)
                }
            }
            return Ok(if boxed {
                skinned_bounds(&self.output, mesh.vertex_count())
            } else {
                Bounds::EMPTY
            });
        };
        // The scheduling decisions, made here and carried out by the FFI: chunks of SKIN_CHUNK
        // vertices on rayon's pool for `Threads::All`; streaming only where both the output layout and
        // the vertex order allow it; renormalization inside the kernel, as it stores each gang.
        let out = Output::new(view, mesh.vertex_count());
        let parallel_chunk = (self.threads == Threads::All).then_some(SKIN_CHUNK);
        let rows = match self.renormalize {
            Renormalize::None => None,
            Renormalize::Precise => Some(RowsMode::Precise),
            Renormalize::Fast => Some(RowsMode::Fast),
        };
        let stream = self.streaming && out.can_stream() && self.mesh.streams_sequentially();
        let plan = Plan {
            parallel_chunk,
            stream,
            rows,
        };
        if mesh.vertex_count() == 0 {
            return Ok(Bounds::EMPTY);
        }
        let entries = match self.palette {
            SkinPalette::Linear(p) => ffi::Entries::Linear(p),
            SkinPalette::DualQuaternion(p) => ffi::Entries::DualQuaternion {
                entries: p,
                scaled: dual_quat_scaled(p, self.mesh),
            },
        };
        Ok(ffi::skin_mesh(isa, mesh, entries, &out, plan))
    }
}

/// The box of the first `n` positions of a validated output, read back serially: the reference's box
/// (see [`SkinningJob::run_with_bounds`]).
pub(crate) fn skinned_bounds(output: &SkinOutput<'_>, n: usize) -> Bounds {
    match output {
        SkinOutput::Separate { positions, .. } => {
            Bounds::of(positions.get(..n).unwrap_or(positions))
        }
        SkinOutput::Interleaved {
            bytes,
            stride,
            positions,
            ..
        } => {
            // Validated: 4-byte aligned, the position inside the stride, the buffer long enough.
            let floats: &[f32] =
                bytemuck::try_cast_slice(&bytes[..bytes.len() / 4 * 4]).unwrap_or(&[]);
            let at = positions / 4;
            floats
                .chunks((stride / 4).max(1))
                .take(n)
                .filter_map(|vertex| vertex.get(at..at + 3))
                .fold(Bounds::EMPTY, |b, p| {
                    b.merge(Bounds::of(&[Vec3::new(p[0], p[1], p[2])]))
                })
        }
    }
}

/// How far from 1 a mesh's weight sums may be for dual-quaternion skinning to skip its
/// scale-and-shear phase: normalized f32 weights sum to 1 within a few units in the last place, and
/// normalized compact ones within about 1e-6.
const UNIT_WEIGHT_SUM: f32 = 1e-5;

/// Whether dual-quaternion skinning of `mesh` with `entries` runs its first phase, the blended scale
/// and shear. It is skipped where it is the identity: every entry up to the mesh's joint count has
/// an `S` that is exactly the identity (as [`dual_quat_palette`](crate::dual_quat_palette) stores a
/// rigid motion's), and every vertex's weights sum to 1 within [`UNIT_WEIGHT_SUM`]. The blended `S` would
/// then be the identity times the weight sum; without it the vertex moves by the normalized dual
/// quaternion alone. Both backends and the reference take the same decision, so the bits agree.
pub(crate) fn dual_quat_scaled(entries: &[DualQuatEntry], mesh: &SkinnedMesh) -> bool {
    let (low, high) = mesh.weight_sums();
    let unit = |x: f32| (x - 1.0).abs() <= UNIT_WEIGHT_SUM;
    let used = entries.get(..mesh.joint_count()).unwrap_or(entries);
    !(unit(low) && unit(high) && used.iter().all(DualQuatEntry::is_rigid))
}

/// The largest magnitude of any float of the entries' real parts, and of any float of the entries
/// (validated finite).
fn dual_quat_magnitudes(entries: &[DualQuatEntry]) -> (f64, f64) {
    let (real, all) = entries.iter().fold((0.0f32, 0.0f32), |(r, a), e| {
        let f = e.as_floats();
        let most = |xs: &[f32], m: f32| xs.iter().fold(m, |m, x| m.max(x.abs()));
        (most(&f[..4], r), most(f, a))
    });
    (f64::from(real), f64::from(all))
}

/// [`Error::NotFinite`] for the first dual-quaternion entry holding a float that is not finite, naming
/// the value.
pub(crate) fn check_dual_quats(entries: &[DualQuatEntry]) -> Result<(), Error> {
    for (index, e) in entries.iter().enumerate() {
        if let Some(&value) = e.as_floats().iter().find(|x| !x.is_finite()) {
            return Err(Error::NotFinite {
                what: "dual-quaternion palette",
                index,
                value,
            });
        }
    }
    Ok(())
}

/// [`Error::ResultNotFinite`] for the first of the `n` skinned vertices of `output` with a coordinate
/// that is not finite (a tangent's w is copied from the mesh, so it is finite).
pub(crate) fn check_skinned(output: &SkinOutput<'_>, n: usize) -> Result<(), Error> {
    let bad = |floats: &[f32], per: usize| {
        (!numeric::all_finite(floats))
            .then(|| floats.iter().position(|x| !x.is_finite()).unwrap_or(0) / per)
    };
    let first = match output {
        SkinOutput::Separate {
            positions,
            normals,
            tangents,
        } => [
            bad(bytemuck::cast_slice(positions), 3),
            normals
                .as_ref()
                .and_then(|n| bad(bytemuck::cast_slice(n), 3)),
            tangents
                .as_ref()
                .and_then(|t| bad(bytemuck::cast_slice(t), 4)),
        ]
        .into_iter()
        .flatten()
        .min(),
        SkinOutput::Interleaved {
            bytes,
            stride,
            positions,
            normals,
            tangents,
        } => {
            // Validated: 4-byte aligned, attributes inside the stride, the buffer long enough.
            let floats: &[f32] =
                bytemuck::try_cast_slice(&bytes[..bytes.len() / 4 * 4]).unwrap_or(&[]);
            let (stride, attrs) = (
                *stride / 4,
                [(Some(*positions), 3), (*normals, 3), (*tangents, 3)],
            );
            floats.chunks(stride.max(1)).take(n).position(|vertex| {
                attrs.iter().any(|&(offset, n)| {
                    offset.is_some_and(|o| {
                        vertex
                            .get(o / 4..o / 4 + n)
                            .is_some_and(|a| a.iter().any(|x| !x.is_finite()))
                    })
                })
            })
        }
    };
    match first {
        Some(index) => Err(Error::ResultNotFinite {
            stage: "skinning",
            what: "skinned vertices",
            index,
        }),
        None => Ok(()),
    }
}

/// The output rules of [`SkinningJob`] for an output of `n` vertices skinned from `mesh` (`n` is the
/// mesh's vertex count for one job, instances times it for a crowd): element counts, the interleaved
/// layout, the per-call size limit and the attributes the mesh must have.
pub(crate) fn check_output(
    mesh: &SkinnedMesh,
    output: &SkinOutput<'_>,
    n: usize,
) -> Result<(), Error> {
    let (wants_normals, wants_tangents) = match output {
        SkinOutput::Separate {
            positions,
            normals,
            tangents,
        } => {
            let counts = [
                ("skinned positions", Some(positions.len())),
                ("skinned normals", normals.as_ref().map(|x| x.len())),
                ("skinned tangents", tangents.as_ref().map(|x| x.len())),
            ];
            for (what, len) in counts {
                if let Some(len) = len {
                    if len != n {
                        return Err(Error::CountMismatch {
                            what,
                            expected: n,
                            got: len,
                        });
                    }
                }
            }
            (normals.is_some(), tangents.is_some())
        }
        SkinOutput::Interleaved {
            bytes,
            stride,
            positions,
            normals,
            tangents,
        } => {
            check_interleaved(bytes, *stride, *positions, *normals, *tangents, n)?;
            (normals.is_some(), tangents.is_some())
        }
    };
    // The kernels compute vertex * stride in 32-bit float offsets, within one call's run of the mesh's
    // vertices.
    let stride_floats = match output {
        SkinOutput::Separate { .. } => 4,
        SkinOutput::Interleaved { stride, .. } => stride / 4,
    };
    if mesh
        .vertex_count()
        .checked_mul(stride_floats)
        .is_none_or(|x| x > (i32::MAX as usize) / 4)
    {
        return Err(Error::OutputLayout {
            reason: "the output is too large: vertex count times stride must stay below 2 GiB",
        });
    }
    if wants_normals && !mesh.has_normals() {
        return Err(Error::AttributeMissing {
            attribute: "normals",
        });
    }
    if wants_tangents && !mesh.has_tangents() {
        return Err(Error::AttributeMissing {
            attribute: "tangents",
        });
    }
    Ok(())
}

/// The rules of an interleaved output (see the [module docs](crate::skinning::job)).
fn check_interleaved(
    bytes: &[u8],
    stride: usize,
    positions: usize,
    normals: Option<usize>,
    tangents: Option<usize>,
    n: usize,
) -> Result<(), Error> {
    let attrs = [(Some(positions), 12), (normals, 12), (tangents, 16)];
    if stride == 0 || stride % 4 != 0 {
        return Err(Error::OutputLayout {
            reason: "the stride must be a non-zero multiple of 4 bytes",
        });
    }
    if bytes.as_ptr() as usize % 4 != 0 {
        return Err(Error::OutputLayout {
            reason: "the interleaved buffer must be 4-byte aligned",
        });
    }
    for (offset, size) in attrs {
        if let Some(o) = offset {
            if o % 4 != 0 || o.checked_add(size).is_none_or(|end| end > stride) {
                return Err(Error::OutputLayout {
                    reason:
                        "every attribute offset must be a multiple of 4 and fit inside the stride",
                });
            }
        }
    }
    // Every attribute is checked to end inside the stride above, so the sums in `overlap` cannot
    // overflow.
    if overlap(&attrs) {
        return Err(Error::OutputLayout {
            reason: "the attributes of an interleaved vertex must not overlap",
        });
    }
    let needed = n.checked_mul(stride).ok_or(Error::OutputLayout {
        reason: "the buffer size overflows",
    })?;
    if bytes.len() < needed {
        return Err(Error::OutputLayout {
            reason: "the interleaved buffer is shorter than vertex count times stride",
        });
    }
    Ok(())
}
