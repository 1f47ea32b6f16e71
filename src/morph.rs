//! Morph targets: per-vertex deltas of positions, normals and tangents, blended by weights before
//! skinning (or before a rigid mesh's transform).
//!
//! [`morph_floats`] is the kernel's checked entry point: one attribute stream as flat floats,
//! `out[i] = base[i] + Σ_k weights[k] * deltas[k][i]`. Targets whose weight is zero are skipped (their
//! deltas are never read). The ISPC kernel (`ispc/morph.ispc`) takes at most eight targets per call;
//! more active targets run in batches, each later batch adding onto the output. [`MorphTargets`] holds
//! one mesh's deltas, as glTF `targets` give them.

use crate::backend::{Backend, KernelFamily, Resolved};
use crate::error::Error;
use crate::ffi::morph::{self as ffi, MORPH_BATCH};
use crate::numeric;
use glam::Vec3;

/// `out[i] = base[i] + Σ_k weights[k] * deltas[k][i]` over one attribute stream of flat floats (for
/// example 3 floats per vertex of positions), skipping targets whose weight is zero.
///
/// # Errors
/// - [`Error::LengthMismatch`] when `base` and `out` differ in length;
/// - [`Error::CountMismatch`] when there is not one weight per delta, or a delta is not as long as `out`;
/// - [`Error::NotFinite`] for a weight that is NaN or infinite, or a base or delta float that makes an
///   output not finite; [`Error::ResultNotFinite`] when finite values overflow `f32` together;
/// - [`Error::IsaUnavailable`] for an ISA that cannot run here.
///
/// ```
/// use ispc_skinning::{morph_floats, Backend};
/// let base = [1.0, 2.0, 3.0];
/// let (smile, blink) = ([1.0, 0.0, 0.0], [0.0, 0.0, 2.0]);
/// let mut out = [0.0; 3];
/// morph_floats(Backend::Auto, &base, &[&smile, &blink], &[0.5, 0.25], &mut out)?;
/// assert_eq!(out, [1.5, 2.0, 3.5]);
/// # Ok::<(), ispc_skinning::Error>(())
/// ```
pub fn morph_floats(
    backend: impl Into<Backend>,
    base: &[f32],
    deltas: &[&[f32]],
    weights: &[f32],
    out: &mut [f32],
) -> Result<(), Error> {
    if base.len() != out.len() {
        return Err(Error::LengthMismatch {
            input: base.len(),
            output: out.len(),
        });
    }
    check_count(
        "morph weights (one per target)",
        deltas.len(),
        weights.len(),
    )?;
    for d in deltas {
        check_count(
            "morph delta floats (one per output float)",
            out.len(),
            d.len(),
        )?;
    }
    numeric::check_finite("morph weights", weights, 1)?;
    let backend = backend.into().resolve(KernelFamily::Transform)?;
    run(
        backend,
        base,
        deltas.iter().zip(weights).map(|(d, &w)| (Some(*d), w)),
        out,
    );
    // The numeric rules: the outputs are finite; where one is not, the base or the delta (of a target
    // with a weight) that is not finite is named, or else the overflow.
    if numeric::all_finite_on(backend.runnable(), out) {
        return Ok(());
    }
    numeric::check_finite("morph base", base, 1)?;
    for (d, &w) in deltas.iter().zip(weights) {
        if w != 0.0 {
            numeric::check_finite("morph deltas", d, 1)?;
        }
    }
    numeric::check_result("morph", "morphed floats", out, 1)
}

fn check_count(what: &'static str, expected: usize, got: usize) -> Result<(), Error> {
    if expected == got {
        Ok(())
    } else {
        Err(Error::CountMismatch {
            what,
            expected,
            got,
        })
    }
}

/// The morph of one stream, lengths already checked: targets without deltas (`None`) or with a zero
/// weight are skipped. Nothing allocates.
fn run<'a>(
    backend: Resolved,
    base: &[f32],
    targets: impl Iterator<Item = (Option<&'a [f32]>, f32)>,
    out: &mut [f32],
) {
    let active = targets.filter_map(|(d, w)| Some((d?, w)).filter(|_| w != 0.0));
    match backend {
        Resolved::Reference => {
            // The sum of reference::morph_floats: in target order, base first.
            out.copy_from_slice(base);
            for (d, w) in active {
                for (o, &x) in out.iter_mut().zip(d) {
                    *o += w * x;
                }
            }
        }
        Resolved::Ispc(isa) => in_batches(active, |first, deltas, weights| {
            ffi::morph_floats(isa, first.then_some(base), deltas, weights, out);
        }),
    }
}

/// Hands the active targets to `call` in batches of at most [`MORPH_BATCH`] (the most one kernel call
/// takes), `first` set for the first batch only, which starts from the base while later batches
/// accumulate onto the output. With no active target there is still one empty first batch, the copy
/// of the base. Nothing allocates.
fn in_batches<'a>(
    active: impl Iterator<Item = (&'a [f32], f32)>,
    mut call: impl FnMut(bool, &[&'a [f32]], &[f32]),
) {
    let mut deltas: [&[f32]; MORPH_BATCH] = [&[]; MORPH_BATCH];
    let mut weights = [0.0f32; MORPH_BATCH];
    let mut filled = 0;
    let mut first = true;
    for (d, w) in active {
        deltas[filled] = d;
        weights[filled] = w;
        filled += 1;
        if filled == MORPH_BATCH {
            call(first, &deltas, &weights);
            (filled, first) = (0, false);
        }
    }
    // The last partial batch, or the copy of the base when no target is active.
    if filled > 0 || first {
        call(first, &deltas[..filled], &weights[..filled]);
    }
}

/// [`run`] over strided rows (`(rows, row, stride)`): row r of `out` and `base` starts at float
/// `r * stride`, row r of each delta at `r * row`; the floats between rows are neither read nor written.
/// The caller has checked the lengths (`base` and `out` hold `(rows - 1) * stride + row` floats or more,
/// every delta `rows * row`, `0 < row <= stride`). Nothing allocates.
pub(crate) fn run_rows<'a>(
    backend: Resolved,
    base: &[f32],
    targets: impl Iterator<Item = (Option<&'a [f32]>, f32)>,
    (rows, row, stride): (usize, usize, usize),
    out: &mut [f32],
) {
    let active = targets.filter_map(|(d, w)| Some((d?, w)).filter(|_| w != 0.0));
    match backend {
        Resolved::Reference => {
            // The sum of reference::morph_floats, row by row: in target order, base first.
            for r in 0..rows {
                let at = r * stride..r * stride + row;
                out[at.clone()].copy_from_slice(&base[at]);
            }
            for (d, w) in active {
                for r in 0..rows {
                    let o = &mut out[r * stride..r * stride + row];
                    for (o, &x) in o.iter_mut().zip(&d[r * row..(r + 1) * row]) {
                        *o += w * x;
                    }
                }
            }
        }
        Resolved::Ispc(isa) => in_batches(active, |first, deltas, weights| {
            let b = first.then_some(base);
            ffi::morph_rows(isa, b, deltas, weights, rows, row, stride, out);
        }),
    }
}

/// One mesh's morph targets: for each target, optional deltas of positions, normals and tangents (xyz;
/// glTF morphs no handedness), one per vertex.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphTargets {
    vertex_count: usize,
    positions: Vec<Option<Vec<Vec3>>>,
    normals: Vec<Option<Vec<Vec3>>>,
    tangents: Vec<Option<Vec<Vec3>>>,
    /// Per target, the largest absolute position delta on each axis over the vertices (zero where
    /// the target moves no position): how far a weight of 1 can move a vertex, for pose bounds.
    reach: Vec<Vec3>,
}

/// Which stream of a mesh a morph applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MorphStream {
    Positions,
    Normals,
    Tangents,
}

impl MorphTargets {
    /// Targets for a mesh of `vertex_count` vertices. The three vectors have one entry per target
    /// (`None` where the target does not move that attribute), and every delta one entry per vertex.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] naming the vector or the delta whose length is wrong;
    /// [`Error::NotFinite`] for a delta that is NaN or infinite (naming the vertex).
    pub fn new(
        vertex_count: usize,
        positions: Vec<Option<Vec<Vec3>>>,
        normals: Vec<Option<Vec<Vec3>>>,
        tangents: Vec<Option<Vec<Vec3>>>,
    ) -> Result<MorphTargets, Error> {
        let targets = positions.len();
        check_count(
            "morph normal targets (one per target)",
            targets,
            normals.len(),
        )?;
        check_count(
            "morph tangent targets (one per target)",
            targets,
            tangents.len(),
        )?;
        for d in positions.iter().chain(&normals).chain(&tangents).flatten() {
            check_count("morph deltas (one per vertex)", vertex_count, d.len())?;
        }
        for (what, stream) in [
            ("morph position deltas", &positions),
            ("morph normal deltas", &normals),
            ("morph tangent deltas", &tangents),
        ] {
            for d in stream.iter().flatten() {
                numeric::check_finite(what, bytemuck::cast_slice(d), 3)?;
            }
        }
        let reach = positions
            .iter()
            .map(|d| {
                d.iter()
                    .flatten()
                    .fold(Vec3::ZERO, |m, delta| m.max(delta.abs()))
            })
            .collect();
        Ok(MorphTargets {
            vertex_count,
            positions,
            normals,
            tangents,
            reach,
        })
    }

    /// Per target, the largest absolute position delta on each axis (see the field).
    pub(crate) fn reach(&self) -> &[Vec3] {
        &self.reach
    }

    /// Number of targets.
    pub fn count(&self) -> usize {
        self.positions.len()
    }

    /// Number of vertices each delta has.
    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    /// The same targets with their vertices reordered: vertex `i` of the result is vertex `order[i]`
    /// of these. The caller passes a permutation of `0..vertex_count`. glTF loading uses it
    /// ([`VertexOrder::ByInfluenceCount`](crate::gltf::VertexOrder::ByInfluenceCount)).
    #[cfg(feature = "gltf")]
    pub(crate) fn permuted(&self, order: &[u32]) -> MorphTargets {
        let gather = |streams: &[Option<Vec<Vec3>>]| -> Vec<Option<Vec<Vec3>>> {
            streams
                .iter()
                .map(|d| {
                    d.as_ref()
                        .map(|d| order.iter().map(|&v| d[v as usize]).collect())
                })
                .collect()
        };
        MorphTargets {
            vertex_count: self.vertex_count,
            positions: gather(&self.positions),
            normals: gather(&self.normals),
            tangents: gather(&self.tangents),
            // The same deltas in another vertex order reach as far.
            reach: self.reach.clone(),
        }
    }

    /// Whether any target has deltas for this stream.
    pub(crate) fn moves(&self, stream: MorphStream) -> bool {
        self.deltas(stream).iter().any(Option::is_some)
    }

    /// Each target's deltas of one stream (`None` where the target does not move it).
    pub(crate) fn deltas(&self, stream: MorphStream) -> &[Option<Vec<Vec3>>] {
        match stream {
            MorphStream::Positions => &self.positions,
            MorphStream::Normals => &self.normals,
            MorphStream::Tangents => &self.tangents,
        }
    }

    /// `out = base + Σ weights[k] * deltas[k]` for one stream. The caller has checked that `base` and
    /// `out` have one entry per vertex and that there is one weight per target.
    pub(crate) fn apply(
        &self,
        backend: Resolved,
        stream: MorphStream,
        weights: &[f32],
        base: &[Vec3],
        out: &mut [Vec3],
    ) {
        let targets = self
            .deltas(stream)
            .iter()
            .zip(weights)
            .map(|(d, &w)| (d.as_deref().map(bytemuck::cast_slice::<Vec3, f32>), w));
        run(
            backend,
            bytemuck::cast_slice(base),
            targets,
            bytemuck::cast_slice_mut(out),
        );
    }
}
