//! Meshes that are not skinned: [`RigidMesh`], which follows one joint's model matrix (a glTF mesh node
//! without a skin, under an animated node or not).
//!
//! A rigid mesh's world vertices each frame are, with `M` the joint's model matrix:
//! - positions `M * (p, 1)`, through the batch transform kernel ([`transform_points3`]);
//! - normals `N * n` with `N` the inverse transpose of M's upper 3x3 (so that they stay perpendicular
//!   to the surface under non-uniform scale), through the same kernel with `N` as a matrix without
//!   translation; a singular M (a zero scale) uses its cofactor matrix, the inverse transpose times
//!   the determinant, which gives the same directions;
//! - tangents `M3 * t.xyz` (tangents lie in the surface, so they take M itself), through the same
//!   kernel; the handedness `w` is negated when M mirrors (negative determinant), so that
//!   `cross(n, t) * w` still gives the transformed bitangent;
//! - normals and tangents are then made unit length as the frame's [`Renormalize`] asks, like skinned
//!   ones (`Fast` and `Precise` both divide by the length here; `None` leaves them as transformed).
//!
//! Morph targets are applied first, in mesh space: base plus the weighted deltas of the targets whose
//! weight is not zero ([`MorphTargets`]), then the transform.

use crate::backend::Resolved;
use crate::error::Error;
use crate::layout::bounds::Bounds;
use crate::layout::output::{Renormalize, VertexOutputs};
use crate::morph::{MorphStream, MorphTargets};
use crate::numeric;
use crate::transform::transform_points3;
use glam::{Mat3, Mat4, Vec3, Vec4};

use super::frame::{Scratch, SkinnedVertices};

/// Where [`RigidMesh::evaluate`] writes: one element per vertex of the mesh in each stream it has.
pub(crate) struct RigidOut<'a> {
    pub(crate) positions: &'a mut [Vec3],
    pub(crate) normals: Option<&'a mut [Vec3]>,
    pub(crate) tangents: Option<&'a mut [Vec4]>,
}

/// A mesh that moves rigidly with one joint of a [`Character`](crate::Character): positions, optional
/// normals and tangents in the joint's space, and optional morph targets.
#[derive(Clone, Debug, PartialEq)]
pub struct RigidMesh {
    positions: Vec<Vec3>,
    normals: Option<Vec<Vec3>>,
    tangents: Option<Vec<Vec3>>,
    handedness: Vec<f32>,
    morph: Option<MorphTargets>,
    /// The box (min, max) of the positions, `None` without vertices (for pose bounds).
    bounds: Option<(Vec3, Vec3)>,
}

impl RigidMesh {
    /// A rigid mesh from its vertices (tangents with their handedness in w).
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when normals or tangents do not have one entry per position;
    /// [`Error::NotFinite`] for a NaN or infinite coordinate, naming the vertex.
    pub fn new(
        positions: Vec<Vec3>,
        normals: Option<Vec<Vec3>>,
        tangents: Option<Vec<Vec4>>,
    ) -> Result<RigidMesh, Error> {
        let n = positions.len();
        for (what, len) in [
            (
                "rigid mesh normals (one per vertex)",
                normals.as_ref().map(Vec::len),
            ),
            (
                "rigid mesh tangents (one per vertex)",
                tangents.as_ref().map(Vec::len),
            ),
        ] {
            if let Some(len) = len.filter(|&l| l != n) {
                return Err(Error::CountMismatch {
                    what,
                    expected: n,
                    got: len,
                });
            }
        }
        numeric::check_finite("rigid mesh positions", bytemuck::cast_slice(&positions), 3)?;
        if let Some(normals) = &normals {
            numeric::check_finite("rigid mesh normals", bytemuck::cast_slice(normals), 3)?;
        }
        if let Some(tangents) = &tangents {
            numeric::check_finite("rigid mesh tangents", bytemuck::cast_slice(tangents), 4)?;
        }
        let handedness = tangents
            .as_ref()
            .map_or_else(Vec::new, |t| t.iter().map(|t| t.w).collect());
        let bounds = Bounds::of(&positions).get();
        Ok(RigidMesh {
            positions,
            normals,
            tangents: tangents.map(|t| t.iter().map(|t| t.truncate()).collect()),
            handedness,
            morph: None,
            bounds,
        })
    }

    /// Adds morph targets, applied before the transform.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when the targets are for another vertex count.
    pub fn with_morph_targets(mut self, targets: MorphTargets) -> Result<RigidMesh, Error> {
        if targets.vertex_count() != self.positions.len() {
            return Err(Error::CountMismatch {
                what: "morph target vertices (one per mesh vertex)",
                expected: self.positions.len(),
                got: targets.vertex_count(),
            });
        }
        self.morph = Some(targets);
        Ok(self)
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// The positions, in the joint's space.
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Whether the mesh has normals.
    pub fn has_normals(&self) -> bool {
        self.normals.is_some()
    }

    /// Whether the mesh has tangents.
    pub fn has_tangents(&self) -> bool {
        self.tangents.is_some()
    }

    /// The morph targets, when there are any.
    pub fn morph_targets(&self) -> Option<&MorphTargets> {
        self.morph.as_ref()
    }

    /// The box (min, max) of the unmorphed positions, `None` without vertices.
    pub(crate) fn bounds(&self) -> Option<(Vec3, Vec3)> {
        self.bounds
    }

    /// The lengths of this mesh's outputs (positions, normals, tangents) for `instances` instances (1
    /// for a frame), as [`RigidMesh::zeroed_output`] makes them; every frame checks them without
    /// allocating.
    pub(crate) fn output_lengths(&self, instances: usize) -> (usize, Option<usize>, Option<usize>) {
        let n = self.positions.len().saturating_mul(instances);
        (
            n,
            self.normals.as_ref().map(|_| n),
            self.tangents.as_ref().map(|_| n),
        )
    }

    /// The streams of `out` for [`RigidMesh::evaluate`], or `None` when they do not have this mesh's
    /// lengths for `instance` of `instances` (a frame holds one instance).
    pub(crate) fn out_for<'a>(
        &self,
        out: &'a mut SkinnedVertices,
        instance: usize,
        instances: usize,
    ) -> Option<RigidOut<'a>> {
        let n = self.positions.len();
        let range = instance.checked_mul(n)?..instance.checked_add(1)?.checked_mul(n)?;
        let lengths = (
            out.positions.len(),
            out.normals.as_ref().map(Vec::len),
            out.tangents.as_ref().map(Vec::len),
        );
        if lengths != self.output_lengths(instances) {
            return None;
        }
        let normals = match out.normals.as_mut() {
            Some(v) => Some(v.get_mut(range.clone())?),
            None => None,
        };
        let tangents = match out.tangents.as_mut() {
            Some(v) => Some(v.get_mut(range.clone())?),
            None => None,
        };
        Some(RigidOut {
            positions: out.positions.get_mut(range)?,
            normals,
            tangents,
        })
    }

    /// Zeroed world-space outputs for `instances` instances of this mesh (1 for a frame; a crowd's
    /// count is bounded by `check_crowd_size` first, so the product fits).
    pub(crate) fn zeroed_output(&self, instances: usize) -> SkinnedVertices {
        let n = self.positions.len() * instances;
        SkinnedVertices {
            positions: vec![Vec3::ZERO; n],
            normals: self.normals.as_ref().map(|_| vec![Vec3::ZERO; n]),
            tangents: self.tangents.as_ref().map(|_| vec![Vec4::ZERO; n]),
        }
    }

    /// One frame of this mesh: morph with `weights` (when any is not zero), then transform by `model`
    /// into `out` (one element per vertex in each stream, as [`RigidMesh::zeroed_output`] shapes them,
    /// or one instance's run of a crowd's), writing the streams `outputs` asks for and renormalizing as
    /// `renormalize` says. `scratch` has room for the mesh.
    pub(crate) fn evaluate(
        &self,
        backend: Resolved,
        model: &Mat4,
        weights: &[f32],
        (outputs, renormalize): (VertexOutputs, Renormalize),
        scratch: &mut Scratch,
        out: RigidOut<'_>,
    ) -> Result<(), Error> {
        let n = self.positions.len();
        let Scratch {
            positions: mp,
            normals: mn,
            tangents: mt,
            transformed,
            ..
        } = scratch;
        let (mp, mn, mt, transformed) = (
            &mut mp[..n],
            &mut mn[..n],
            &mut mt[..n],
            &mut transformed[..n],
        );
        let morph = self
            .morph
            .as_ref()
            .filter(|_| weights.iter().any(|&w| w != 0.0));
        let positions: &[Vec3] = match morph {
            Some(m) if m.moves(MorphStream::Positions) => {
                m.apply(
                    backend,
                    MorphStream::Positions,
                    weights,
                    &self.positions,
                    mp,
                );
                mp
            }
            _ => &self.positions,
        };
        transform_points3(backend.backend(), model, positions, out.positions)?;
        let m3 = Mat3::from_mat4(*model);
        let det = m3.determinant();
        if let (true, Some(base), Some(dst)) = (outputs.normals(), &self.normals, out.normals) {
            let normals: &[Vec3] = match morph {
                Some(m) if m.moves(MorphStream::Normals) => {
                    m.apply(backend, MorphStream::Normals, weights, base, mn);
                    mn
                }
                _ => base,
            };
            let cofactor = Mat3::from_cols(
                m3.y_axis.cross(m3.z_axis),
                m3.z_axis.cross(m3.x_axis),
                m3.x_axis.cross(m3.y_axis),
            );
            let normal_matrix = if det.is_normal() {
                cofactor * (1.0 / det)
            } else {
                cofactor
            };
            transform_points3(
                backend.backend(),
                &Mat4::from_mat3(normal_matrix),
                normals,
                dst,
            )?;
            if renormalize != Renormalize::None {
                dst.iter_mut().for_each(|v| *v = v.normalize_or_zero());
            }
        }
        if let (true, Some(base), Some(dst)) = (outputs.tangents(), &self.tangents, out.tangents) {
            let tangents: &[Vec3] = match morph {
                Some(m) if m.moves(MorphStream::Tangents) => {
                    m.apply(backend, MorphStream::Tangents, weights, base, mt);
                    mt
                }
                _ => base,
            };
            transform_points3(
                backend.backend(),
                &Mat4::from_mat3(m3),
                tangents,
                transformed,
            )?;
            let flip = if det < 0.0 { -1.0 } else { 1.0 };
            for ((d, t), &w) in dst.iter_mut().zip(&*transformed).zip(&self.handedness) {
                let t = if renormalize == Renormalize::None {
                    *t
                } else {
                    t.normalize_or_zero()
                };
                *d = t.extend(w * flip);
            }
        }
        Ok(())
    }
}
