//! The morph targets of a skinned mesh ([`SkinnedMorph`]), kept in the prepared mesh's own layout so
//! that a frame morphs its bind pose in place, with no allocation and no new preparation.
//!
//! A prepared mesh holds its vertices grouped by influence count, each group in AoSoA blocks of
//! [`SKIN_BLOCK`] vertices (px py pz nx ny nz tx ty tz tw runs; see `InfluenceGroup`). When the targets
//! are attached, each target's deltas are permuted once into that vertex order and packed the same way,
//! one attribute at a time: per block, the x, y and z runs of the block's vertices (48 floats). The
//! per-frame morph of one attribute of one group is then a straight stream over packed deltas, written
//! at the attribute's rows of the blocks (`morph_rows` in ispc/morph.ispc), and the skinning kernels read
//! the morphed vertices exactly where they read the bind pose. The handedness run and the padding are
//! never written, so they keep the prepared mesh's values.
//!
//! The morphed blocks go into the frame's own copy of the prepared mesh
//! ([`Frame`](crate::Frame) makes it once), so the shared [`Character`](crate::Character) stays
//! immutable. The result is the same, float for float, as morphing the vertices in mesh order and
//! preparing the mesh again: preparation copies each attribute float into its block unchanged, and
//! each morphed float is the same sum, base first and then the targets in order.

use crate::backend::{Resolved, Threads};
use crate::error::Error;
use crate::ffi::morph::{self as ffi, MORPH_BATCH};
use crate::layout::bounds::Bounds;
use crate::layout::mesh::{padded, MAX_INFLUENCES, SKIN_BLOCK};
use crate::layout::output::Renormalize;
use crate::layout::palette::PaletteMatrix;
use crate::morph::{run_rows, MorphStream, MorphTargets};
use crate::skinning::mesh::SkinnedMesh;
use crate::SkinnedVertices;

/// The attributes a target can move, with the offset of their first run in a block's runs.
const STREAMS: [(MorphStream, usize); 3] = [
    (MorphStream::Positions, 0),
    (MorphStream::Normals, 3),
    (MorphStream::Tangents, 6),
];

/// Floats of one attribute (three runs) per block.
const ROW: usize = 3 * SKIN_BLOCK;

/// A skinned mesh's morph targets: as given (mesh order, for
/// [`Character::mesh_morph_targets`](crate::Character::mesh_morph_targets)) and permuted into the
/// prepared mesh's blocks for the frame's morph (see the [module docs](crate::character::morph)).
#[derive(Clone, Debug)]
pub(crate) struct SkinnedMorph {
    pub(crate) targets: MorphTargets,
    /// Blocks of each influence group, as the mesh the deltas were permuted for has them.
    group_blocks: [usize; MAX_INFLUENCES + 1],
    /// Per attribute (positions, normals, tangents), per target: its deltas for every group in turn,
    /// [`ROW`] floats per block (zero for the padding), or `None` when the target does not move the
    /// attribute or the mesh does not have it.
    deltas: [Vec<Option<Vec<f32>>>; 3],
    /// Each target's largest delta coordinate over its streams (see `morphed_magnitude`).
    delta_magnitudes: Vec<f64>,
}

impl SkinnedMorph {
    /// The targets of `mesh`, permuted into its blocks.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when the targets are for another vertex count.
    pub(crate) fn new(mesh: &SkinnedMesh, targets: MorphTargets) -> Result<SkinnedMorph, Error> {
        if targets.vertex_count() != mesh.vertex_count() {
            return Err(Error::CountMismatch {
                what: "morph target vertices (one per mesh vertex)",
                expected: mesh.vertex_count(),
                got: targets.vertex_count(),
            });
        }
        let groups = mesh.kernel.groups();
        let group_blocks = std::array::from_fn(|k| padded(groups[k].vertices.len()) / SKIN_BLOCK);
        let total: usize = group_blocks.iter().sum();
        let present = [true, mesh.has_normals(), mesh.has_tangents()];
        let deltas = std::array::from_fn(|s| {
            let (stream, _) = STREAMS[s];
            targets
                .deltas(stream)
                .iter()
                .map(|d| {
                    let d = d.as_ref().filter(|_| present[s])?;
                    let mut packed = vec![0.0f32; total * ROW];
                    let mut start = 0;
                    for g in groups {
                        for (v, &original) in g.vertices.iter().enumerate() {
                            let at = start + v / SKIN_BLOCK * ROW + v % SKIN_BLOCK;
                            let delta = d[original as usize];
                            for c in 0..3 {
                                packed[at + c * SKIN_BLOCK] = delta[c];
                            }
                        }
                        start += padded(g.vertices.len()) / SKIN_BLOCK * ROW;
                    }
                    Some(packed)
                })
                .collect()
        });
        let delta_magnitudes = (0..targets.count())
            .map(|t| {
                deltas
                    .iter()
                    .filter_map(|stream: &Vec<Option<Vec<f32>>>| stream.get(t)?.as_deref())
                    .fold(0.0f64, |m, d| {
                        m.max(crate::numeric::max_magnitude(d).unwrap_or(f64::INFINITY))
                    })
            })
            .collect();
        Ok(SkinnedMorph {
            targets,
            group_blocks,
            deltas,
            delta_magnitudes,
        })
    }

    /// Number of vertices.
    /// The largest magnitude a morph with `weights` can give the mesh's attributes: the base's plus
    /// each weighted target's largest delta. `None` when a weight is not finite.
    pub(crate) fn morphed_magnitude(&self, mesh: &SkinnedMesh, weights: &[f32]) -> Option<f64> {
        let mut magnitude = mesh.magnitude();
        for (&w, streams) in weights.iter().zip(self.targets_magnitude()) {
            if !w.is_finite() {
                return None;
            }
            magnitude += f64::from(w.abs()) * streams;
        }
        Some(magnitude)
    }

    /// Each target's largest delta coordinate, over every stream.
    fn targets_magnitude(&self) -> impl Iterator<Item = f64> + '_ {
        self.delta_magnitudes.iter().copied()
    }

    pub(crate) fn vertex_count(&self) -> usize {
        self.targets.vertex_count()
    }

    /// Whether these deltas were permuted for a mesh with `mesh`'s groups.
    pub(crate) fn fits(&self, mesh: &SkinnedMesh) -> bool {
        let groups = mesh.kernel.groups();
        mesh.vertex_count() == self.vertex_count()
            && (0..=MAX_INFLUENCES)
                .all(|k| padded(groups[k].vertices.len()) / SKIN_BLOCK == self.group_blocks[k])
    }

    /// Morphs and skins `mesh` in one pass (`skin_morph_fused` in ispc/skin_morph.ispc) when that pass
    /// covers the call, and returns the box of the positions written where it ran (`None`: it did not). It covers an ISA backend, no renormalization, one
    /// thread, no compact influence group, at most [`MORPH_BATCH`] targets with a weight that is not
    /// zero per attribute, and a call that passes every rule of the skinning job (one weight per target,
    /// the mesh these deltas were packed for, a palette that covers its joints, one output per vertex
    /// for exactly the attributes it has). Otherwise nothing is written and the caller runs the
    /// pre-pass ([`morph_into`](Self::morph_into)) and the skinning job, which report any broken rule.
    /// The fused pass gives the same floats as the pre-pass then skinning: the same sums in the same
    /// order (tests/morph_in_place.rs checks it bit for bit on every ISA).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn skin_fused(
        &self,
        backend: Resolved,
        mesh: &SkinnedMesh,
        palette: &[PaletteMatrix],
        weights: &[f32],
        renormalize: Renormalize,
        threads: Threads,
        out: &mut SkinnedVertices,
    ) -> Option<Bounds> {
        let Resolved::Ispc(isa) = backend else {
            return None;
        };
        let n = mesh.vertex_count();
        let covered = renormalize == Renormalize::None
            && threads == Threads::One
            && weights.len() == self.targets.count()
            && self.fits(mesh)
            && palette.len() >= mesh.joint_count()
            && out.positions.len() == n
            && out.normals.as_ref().map(Vec::len) == mesh.has_normals().then_some(n)
            && out.tangents.as_ref().map(Vec::len) == mesh.has_tangents().then_some(n)
            && mesh.kernel.groups().iter().all(|g| !g.compact())
            // A mesh with tangents and no normals holds zero normals in its blocks, which the fused
            // kernel would write to a normal stream the frame does not have (runtime_numeric fuzz).
            && (mesh.has_normals() || !mesh.has_tangents());
        if !covered {
            return None;
        }
        let (active, counts) = self.active_targets(weights)?;
        let [p, nm, t] = &active;
        let bounds = ffi::skin_morph_fused(
            isa,
            &mesh.kernel,
            palette,
            [&p[..counts[0]], &nm[..counts[1]], &t[..counts[2]]],
            bytemuck::cast_slice_mut(&mut out.positions[..]),
            out.normals.as_deref_mut().map(bytemuck::cast_slice_mut),
            out.tangents.as_deref_mut().map(bytemuck::cast_slice_mut),
        );
        Some(bounds)
    }

    /// The targets of each attribute (positions, normals, tangents) whose weight is not zero, in target
    /// order, as (packed rows, weight) on the stack, and how many each attribute has: what the fused
    /// pass reads. `None` when an attribute has more than [`MORPH_BATCH`].
    #[allow(clippy::type_complexity)]
    pub(crate) fn active_targets(
        &self,
        weights: &[f32],
    ) -> Option<([[(&[f32], f32); MORPH_BATCH]; 3], [usize; 3])> {
        let empty: &[f32] = &[];
        let mut active = [[(empty, 0.0f32); MORPH_BATCH]; 3];
        let mut counts = [0usize; 3];
        for ((slots, count), targets) in active.iter_mut().zip(&mut counts).zip(&self.deltas) {
            for (d, &w) in targets.iter().zip(weights) {
                if let (Some(d), true) = (d, w != 0.0) {
                    *slots.get_mut(*count)? = (d.as_slice(), w);
                    *count += 1;
                }
            }
        }
        Some((active, counts))
    }

    /// Writes `mesh`'s bind attributes morphed by `weights` into the blocks of `out`, a copy of `mesh`:
    /// every attribute that some target moves, base plus the weighted deltas of the targets whose
    /// weight is not zero (the others are not read). Nothing allocates.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when there is not one weight per target, or when `mesh` or `out` is not
    /// the mesh these targets were attached to.
    pub(crate) fn morph_into(
        &self,
        backend: Resolved,
        mesh: &SkinnedMesh,
        weights: &[f32],
        out: &mut SkinnedMesh,
    ) -> Result<(), Error> {
        if weights.len() != self.targets.count() {
            return Err(Error::CountMismatch {
                what: "skinned mesh morph weights (one per target)",
                expected: self.targets.count(),
                got: weights.len(),
            });
        }
        for m in [mesh, &*out] {
            let fits = self.fits(m) && m.kernel.components() == mesh.kernel.components();
            if !fits {
                return Err(Error::CountMismatch {
                    what: "morphed mesh vertices (the mesh the morph targets were attached to)",
                    expected: self.vertex_count(),
                    got: m.vertex_count(),
                });
            }
        }
        let stride = mesh.kernel.components() * SKIN_BLOCK;
        for (s, &(_, first_run)) in STREAMS.iter().enumerate() {
            let targets = &self.deltas[s];
            if targets.iter().all(Option::is_none) {
                // No target moves this attribute: the copy's bind values are never overwritten.
                continue;
            }
            let offset = first_run * SKIN_BLOCK;
            let mut start = 0;
            for ((base, dst), &blocks) in mesh
                .kernel
                .groups()
                .iter()
                .zip(out.kernel.blocks_mut())
                .zip(&self.group_blocks)
            {
                let range = start..start + blocks * ROW;
                start = range.end;
                if blocks == 0 {
                    continue;
                }
                let active = targets
                    .iter()
                    .zip(weights)
                    .map(|(d, &w)| (d.as_deref().map(|d| &d[range.clone()]), w));
                run_rows(
                    backend,
                    &base.blocks[offset..],
                    active,
                    (blocks, ROW, stride),
                    &mut dst[offset..],
                );
            }
        }
        Ok(())
    }
}
