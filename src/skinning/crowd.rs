//! Skinning one mesh for every instance of a crowd in one call.
//!
//! [`CrowdSkinningJob`] runs [`SkinningJob`] once per instance, each with that instance's palette from
//! [`CrowdPalettes`] and that instance's run of the output: instance `i`'s vertices are elements
//! `i * v .. (i + 1) * v` of each output stream (`v` the mesh's vertex count), or bytes
//! `i * v * stride ..` of an interleaved buffer. With [`Threads::All`] instances are spread over rayon's
//! pool, one instance per task, each skinned exactly as on one thread. With
//! [`Skinning::DualQuaternion`] each instance's palette is converted ([`dual_quat_palette`]) and the
//! instance skinned with [`SkinningJob::dual_quaternion`], the same bits as those two calls.
//!
//! Rules, each its own [`Error`]: the palettes have at least the mesh's joint count per instance
//! ([`Error::CountMismatch`]); every output holds `instances * v` elements ([`Error::CountMismatch`]),
//! or an interleaved buffer follows [`SkinningJob`]'s rules for `instances * v` vertices; normals or
//! tangents asked of a mesh without them ([`Error::AttributeMissing`]); an explicit ISA can run
//! ([`Error::IsaUnavailable`]).

use crate::backend::{Backend, KernelFamily, Precision, Threads};
use crate::error::Error;
use crate::layout::dual_quat::DualQuatEntry;
use crate::layout::output::{Renormalize, Skinning};
use crate::palette::crowd::CrowdPalettes;
use crate::palette::dual_quat_palette;
use crate::skinning::job::{check_output, SkinOutput, SkinningJob};
use crate::skinning::mesh::SkinnedMesh;
use glam::Vec3;

/// Skins a prepared mesh for every instance of a crowd.
#[derive(Debug)]
pub struct CrowdSkinningJob<'a> {
    /// The prepared mesh.
    pub mesh: &'a SkinnedMesh,
    /// One palette per instance.
    pub palettes: &'a CrowdPalettes,
    /// Renormalization of normals and tangents; [`Renormalize::default()`], as for [`SkinningJob`].
    pub renormalize: Renormalize,
    /// Linear blend skinning (the default) or dual quaternions, converted from each instance's
    /// palette.
    pub skinning: Skinning,
    /// Who runs the job; [`Backend::Auto`] by default.
    pub backend: Backend,
    /// One thread (default) or rayon's pool, one instance per task.
    pub threads: Threads,
    /// [`Precision::Fast`] (default) or [`Precision::Deterministic`]: the serial reference's bits on
    /// every backend and platform, as for [`SkinningJob`].
    pub precision: Precision,
    /// Output: every instance's vertices, instance after instance.
    pub output: SkinOutput<'a>,
}

impl<'a> CrowdSkinningJob<'a> {
    /// A job on one thread with the automatic ISA and the default renormalization.
    pub fn new(
        mesh: &'a SkinnedMesh,
        palettes: &'a CrowdPalettes,
        output: SkinOutput<'a>,
    ) -> CrowdSkinningJob<'a> {
        CrowdSkinningJob {
            mesh,
            palettes,
            renormalize: Renormalize::default(),
            skinning: Skinning::Linear,
            backend: Backend::Auto,
            threads: Threads::One,
            precision: Precision::Fast,
            output,
        }
    }

    /// Sets who runs the job (an [`Isa`](crate::Isa) converts).
    pub fn backend(mut self, backend: impl Into<Backend>) -> CrowdSkinningJob<'a> {
        self.backend = backend.into();
        self
    }

    /// Sets the threads the job uses.
    pub fn threads(mut self, threads: Threads) -> CrowdSkinningJob<'a> {
        self.threads = threads;
        self
    }

    /// Sets the renormalization of normals and tangents.
    pub fn renormalize(mut self, renormalize: Renormalize) -> CrowdSkinningJob<'a> {
        self.renormalize = renormalize;
        self
    }

    /// Sets linear blend skinning or dual quaternions.
    pub fn skinning(mut self, skinning: Skinning) -> CrowdSkinningJob<'a> {
        self.skinning = skinning;
        self
    }

    /// Sets the precision: [`Precision::Deterministic`] gives the serial reference's bits on every
    /// backend and platform.
    /// `validate` and `run` then refuse a thread (the caller's, or with `Threads::All` one of rayon's
    /// pool) whose floating-point mode is not the default ([`Error::FloatEnvironment`]).
    pub fn precision(mut self, precision: Precision) -> CrowdSkinningJob<'a> {
        self.precision = precision;
        self
    }

    /// Checks every rule (see the [module docs](crate::skinning::crowd)) without computing anything.
    pub fn validate(&self) -> Result<(), Error> {
        if self.palettes.entries() < self.mesh.joint_count() {
            return Err(Error::CountMismatch {
                what: "crowd palette entries (at least the mesh's joint count)",
                expected: self.mesh.joint_count(),
                got: self.palettes.entries(),
            });
        }
        // Crowd buffers are bounded (MAX_CROWD_ELEMENTS), but a hand-made count could still overflow.
        let n = self
            .palettes
            .instances()
            .checked_mul(self.mesh.vertex_count())
            .ok_or(Error::OutputLayout {
                reason: "instances times vertices overflows",
            })?;
        check_output(self.mesh, &self.output, n)?;
        self.backend
            .resolve(KernelFamily::Skinning)?
            .with_precision_on(self.precision, self.threads)
            .map(|_| ())
    }

    /// Validates, then skins every instance.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] for palettes with fewer entries than the mesh's joint count or an
    /// output without `instances * v` elements; an interleaved buffer breaking
    /// [`SkinningJob::run_with_bounds`]'s layout rules for `instances * v` vertices
    /// ([`Error::OutputLayout`]); [`Error::AttributeMissing`]; [`Error::IsaUnavailable`]; and that
    /// job's numeric rules per instance, and for dual quaternions those of [`dual_quat_palette`]: an
    /// [`Error::ResultNotFinite`] counts its vertex (or palette entry) across the crowd, `i * v +
    /// vertex` for instance `i` (`i * entries + entry`).
    pub fn run(&mut self) -> Result<(), Error> {
        self.run_into(None)
    }

    /// Validates, skins every instance, and writes each instance's box of skinned positions to
    /// `bounds[instance]` as (min, max) (`None` for a mesh without vertices), as
    /// [`SkinningJob::run_with_bounds`] gives it: kept by the kernels as they write the positions, read
    /// from the output on the serial reference.
    ///
    /// # Errors
    /// Those of [`run`](Self::run), and [`Error::CountMismatch`] unless `bounds` has one entry per
    /// instance (then nothing is written).
    pub fn run_with_bounds(&mut self, bounds: &mut [Option<(Vec3, Vec3)>]) -> Result<(), Error> {
        let instances = self.palettes.instances();
        if bounds.len() != instances {
            return Err(Error::CountMismatch {
                what: "crowd bounds (one per instance)",
                expected: instances,
                got: bounds.len(),
            });
        }
        self.run_into(Some(bounds))
    }

    /// Skins every instance, writing its box to `bounds[instance]` where given (one per instance,
    /// checked by the caller).
    fn run_into(&mut self, bounds: Option<&mut [Option<(Vec3, Vec3)>]>) -> Result<(), Error> {
        self.validate()?;
        let v = self.mesh.vertex_count();
        let instances = self.palettes.instances();
        if v == 0 || instances == 0 {
            if let Some(b) = bounds {
                b.fill(None);
            }
            return Ok(());
        }
        let entries = self.palettes.entries();
        let palettes = self.palettes.as_slice();
        let (mesh, renormalize, backend) = (self.mesh, self.renormalize, self.backend);
        let (precision, skinning) = (self.precision, self.skinning);
        let job = |i: usize, output: SkinOutput<'_>, slot: Option<&mut Option<(Vec3, Vec3)>>| {
            let palette = &palettes[i * entries..(i + 1) * entries];
            // The instance's dual quaternions, where it skins with them (about 100 ns per entry,
            // next to tens of microseconds of vertices).
            let mut dual = Vec::new();
            let job = match skinning {
                Skinning::Linear => SkinningJob::new(mesh, palette, output),
                Skinning::DualQuaternion => {
                    dual.resize(entries, DualQuatEntry::IDENTITY);
                    dual_quat_palette(palette, &mut dual).map_err(|e| in_crowd(e, i, entries))?;
                    SkinningJob::dual_quaternion(mesh, &dual, output)
                }
            };
            let b = job
                .renormalize(renormalize)
                .backend(backend)
                .precision(precision)
                .run_with_bounds()
                .map_err(|e| in_crowd(e, i, v))?;
            if let Some(slot) = slot {
                *slot = b;
            }
            Ok(())
        };
        let mut slots = bounds.map(|b| b.iter_mut());
        let runs = instance_runs(&mut self.output, v, instances)
            .map(move |out| (out, slots.as_mut().and_then(Iterator::next)));
        match self.threads {
            Threads::One => runs
                .enumerate()
                .try_for_each(|(i, (out, slot))| job(i, out, slot)),
            // One task per instance; every instance was validated above, so an error here is a
            // numeric one, and the lowest instance's is returned, as on one thread.
            Threads::All => {
                let first_error = std::sync::Mutex::new(None::<(usize, Error)>);
                rayon::in_place_scope(|scope| {
                    for (i, (out, slot)) in runs.enumerate() {
                        let (job, first_error) = (&job, &first_error);
                        scope.spawn(move |_| {
                            if let Err(e) = job(i, out, slot) {
                                if let Ok(mut first) = first_error.lock() {
                                    if first.as_ref().is_none_or(|(j, _)| i < *j) {
                                        *first = Some((i, e));
                                    }
                                }
                            }
                        });
                    }
                });
                match first_error.into_inner() {
                    Ok(Some((_, e))) => Err(e),
                    _ => Ok(()),
                }
            }
        }
    }
}

/// An error of instance `i`'s single-character job, its item counted across the crowd (`i * per +
/// item`, as every crowd error counts them) so that it names the instance too.
pub(crate) fn in_crowd(e: Error, i: usize, per: usize) -> Error {
    match e {
        Error::ResultNotFinite { stage, what, index } => Error::ResultNotFinite {
            stage,
            what,
            index: i.saturating_mul(per).saturating_add(index),
        },
        other => other,
    }
}

/// Each instance's run of a validated crowd output: `v` vertices of every stream, or `v` strides of an
/// interleaved buffer, for `instances` instances.
fn instance_runs<'o>(
    output: &'o mut SkinOutput<'_>,
    v: usize,
    instances: usize,
) -> impl Iterator<Item = SkinOutput<'o>> {
    let mut separate = None;
    let mut interleaved = None;
    match output {
        SkinOutput::Separate {
            positions,
            normals,
            tangents,
        } => {
            separate = Some((
                positions.chunks_mut(v),
                normals.as_deref_mut().map(|n| n.chunks_mut(v)),
                tangents.as_deref_mut().map(|t| t.chunks_mut(v)),
            ))
        }
        SkinOutput::Interleaved {
            bytes,
            stride,
            positions,
            normals,
            tangents,
        } => {
            interleaved = Some((
                bytes.chunks_mut(v * *stride),
                (*stride, *positions, *normals, *tangents),
            ))
        }
    }
    (0..instances).map_while(move |_| {
        if let Some((p, n, t)) = &mut separate {
            return Some(SkinOutput::Separate {
                positions: p.next()?,
                normals: match n {
                    Some(n) => Some(n.next()?),
                    None => None,
                },
                tangents: match t {
                    Some(t) => Some(t.next()?),
                    None => None,
                },
            });
        }
        let (chunks, (stride, positions, normals, tangents)) = interleaved.as_mut()?;
        Some(SkinOutput::Interleaved {
            bytes: chunks.next()?,
            stride: *stride,
            positions: *positions,
            normals: *normals,
            tangents: *tangents,
        })
    })
}
