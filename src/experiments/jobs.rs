//! Jobs for the seeds' positions-only methods: van Waveren's base vectors and bone-major lists.

use super::meshes::{BaseVectorMesh, BoneMajorMesh};
use super::reference;
use crate::backend::{Backend, KernelFamily, Resolved, Threads};
use crate::error::Error;
use crate::ffi::experiments as ffi;
use crate::layout::mesh::SKIN_CHUNK;
use crate::layout::palette::PaletteMatrix;
use glam::Vec3;

/// van Waveren's positions-only skinning from weighted base vectors (section 3 of his paper), a measured
/// alternative to [`SkinningJob`](crate::SkinningJob) for meshes that need positions only (collision, shadows, ray tracing).
///
/// Rules, each its own [`Error`]: the palette has at least the mesh's joint count and `positions` one
/// element per vertex ([`Error::CountMismatch`]); an explicit ISA can run ([`Error::IsaUnavailable`]).
/// Positions are written in original vertex order.
#[derive(Debug)]
pub struct BaseVectorJob<'a> {
    /// The mesh, from [`BaseVectorMesh::from_mesh`].
    pub mesh: &'a BaseVectorMesh,
    /// Palette rows, at least the mesh's joint count.
    pub palette: &'a [PaletteMatrix],
    /// The ISA; [`Backend::Auto`] by default.
    pub backend: Backend,
    /// One thread (default) or rayon's pool in vertex chunks; the result is bit-identical.
    pub threads: Threads,
    /// Skinned positions, one per vertex.
    pub positions: &'a mut [Vec3],
}

impl<'a> BaseVectorJob<'a> {
    /// A job on one thread with the automatic ISA.
    pub fn new(
        mesh: &'a BaseVectorMesh,
        palette: &'a [PaletteMatrix],
        positions: &'a mut [Vec3],
    ) -> BaseVectorJob<'a> {
        BaseVectorJob {
            mesh,
            palette,
            backend: Backend::Auto,
            threads: Threads::One,
            positions,
        }
    }

    /// Checks every rule without computing anything.
    pub fn validate(&self) -> Result<(), Error> {
        check_positions_only(
            self.mesh.joint_count(),
            self.mesh.vertex_count(),
            self.palette.len(),
            self.positions.len(),
        )?;
        self.backend.resolve(KernelFamily::Skinning).map(|_| ())
    }

    /// Validates, then skins every vertex.
    pub fn run(&mut self) -> Result<(), Error> {
        self.validate()?;
        match self.backend.resolve(KernelFamily::Skinning)? {
            Resolved::Ispc(isa) => {
                let m = self.mesh;
                ffi::skin_p_base(
                    isa,
                    &m.counts,
                    &m.joints,
                    &m.bases,
                    &m.chunk_firsts,
                    SKIN_CHUNK,
                    self.palette,
                    self.threads == Threads::All,
                    bytemuck::cast_slice_mut(&mut self.positions[..]),
                )
            }
            Resolved::Reference => reference::skin_p_base(self.mesh, self.palette, self.positions),
        }
        Ok(())
    }
}

/// Bone-major accumulation (the VFP seed), positions only: for each joint, its list of (vertex, weight)
/// is transformed and added into the output. Kept as a measured comparison: it reads its inputs
/// contiguously but must gather and scatter the output, and it runs on one thread, because every joint
/// writes vertices that other joints also write.
///
/// Rules, each its own [`Error`]: the palette has at least the mesh's joint count and `positions` one
/// element per vertex ([`Error::CountMismatch`]); the mesh has at most 178,956,970 vertices and list
/// entries, because the kernel addresses the whole mesh with 32-bit offsets ([`Error::OutputLayout`]);
/// an explicit ISA can run ([`Error::IsaUnavailable`]).
#[derive(Debug)]
pub struct BoneMajorJob<'a> {
    /// The mesh, from [`BoneMajorMesh::from_mesh`].
    pub mesh: &'a BoneMajorMesh,
    /// Palette rows, at least the mesh's joint count.
    pub palette: &'a [PaletteMatrix],
    /// The ISA; [`Backend::Auto`] by default.
    pub backend: Backend,
    /// Skinned positions, one per vertex.
    pub positions: &'a mut [Vec3],
}

impl<'a> BoneMajorJob<'a> {
    /// A job with the automatic ISA.
    pub fn new(
        mesh: &'a BoneMajorMesh,
        palette: &'a [PaletteMatrix],
        positions: &'a mut [Vec3],
    ) -> BoneMajorJob<'a> {
        BoneMajorJob {
            mesh,
            palette,
            backend: Backend::Auto,
            positions,
        }
    }

    /// Checks every rule without computing anything.
    pub fn validate(&self) -> Result<(), Error> {
        check_positions_only(
            self.mesh.joint_count(),
            self.mesh.vertex_count(),
            self.palette.len(),
            self.positions.len(),
        )?;
        // The kernel makes one call over the whole mesh with 32-bit byte offsets.
        if self.mesh.vertex_count() > BONE_MAJOR_MAX_VERTICES
            || self.mesh.entry_count() > BONE_MAJOR_MAX_VERTICES
        {
            return Err(Error::OutputLayout {
                reason: "bone-major skinning handles at most 178,956,970 vertices and list entries",
            });
        }
        self.backend.resolve(KernelFamily::Skinning).map(|_| ())
    }

    /// Validates, then skins every vertex.
    pub fn run(&mut self) -> Result<(), Error> {
        self.validate()?;
        match self.backend.resolve(KernelFamily::Skinning)? {
            Resolved::Ispc(isa) => {
                let m = self.mesh;
                ffi::skin_p_bone_major(
                    isa,
                    m.vertex_count(),
                    &m.starts,
                    &m.vertex,
                    &m.weight,
                    &m.px,
                    &m.py,
                    &m.pz,
                    self.palette,
                    bytemuck::cast_slice_mut(&mut self.positions[..]),
                )
            }
            Resolved::Reference => {
                reference::skin_p_bone_major(self.mesh, self.palette, self.positions)
            }
        }
        Ok(())
    }
}

/// Most vertices (and list entries) a bone-major job takes: 12 bytes each stay below 2^31.
const BONE_MAJOR_MAX_VERTICES: usize = (i32::MAX as usize) / 12;

fn check_positions_only(
    joints: usize,
    vertices: usize,
    palette: usize,
    positions: usize,
) -> Result<(), Error> {
    if palette < joints {
        return Err(Error::CountMismatch {
            what: "palette entries (at least the mesh's joint count)",
            expected: joints,
            got: palette,
        });
    }
    if positions != vertices {
        return Err(Error::CountMismatch {
            what: "skinned positions",
            expected: vertices,
            got: positions,
        });
    }
    Ok(())
}
