//! The two ways of skinning a morphed mesh, each on its own: [`FusedMorphJob`] runs the fused morph +
//! skin pass that [`Character::skin`] takes where it covers the call (one pass per influence group,
//! the morph applied on the way), as a job of its own that the ISA parity harness checks against the
//! frame's pipeline; [`skin_with_prepass`] runs the skin stage with the pre-pass into the frame's copy
//! of the prepared mesh for every morphed mesh, so that the lab measures the two in the same run.

use super::reference;
use crate::backend::{Backend, KernelFamily, Resolved};
use crate::error::Error;
use crate::ffi::morph as ffi;
use crate::ffi::morph::MORPH_BATCH;
use crate::layout::palette::PaletteMatrix;
use crate::{Character, Frame, SkinnedVertices};

/// [`Character::skin`] with the morph pre-pass for every morphed mesh, never the fused pass the product
/// takes where it covers the call: the lab's `morph_skin_prepass` rows, the measured alternative.
///
/// # Errors
/// Those of [`Character::skin`].
pub fn skin_with_prepass(character: &Character, frame: &mut Frame) -> Result<(), Error> {
    character.skin_stage(frame, false)
}

/// Morphs and skins one mesh of a [`Character`] in one pass: every attribute the mesh has, its bind value
/// plus the weighted deltas of the targets whose weight is not zero, times the vertex's blended palette
/// matrix, without renormalization ([`Renormalize::None`](crate::Renormalize::None), the crate's
/// default). The outputs are in original vertex order, as [`Character::skin`] writes them.
///
/// Rules, each its own [`Error`]: `mesh` names a skinned mesh of the character, `weights` has one weight
/// per morph target of it (none for a mesh without targets), the palette has at least the mesh's joint
/// count, and `output` has one position per vertex and normals and tangents exactly where the mesh has
/// them ([`Error::CountMismatch`]); the mesh's influences are not compact and at most 8 targets per
/// attribute have a weight that is not zero, the experiment's limits ([`Error::OutputLayout`]); an
/// explicit ISA can run ([`Error::IsaUnavailable`]).
#[derive(Debug)]
pub struct FusedMorphJob<'a> {
    /// The character.
    pub character: &'a Character,
    /// Which of its skinned meshes.
    pub mesh: usize,
    /// The mesh's skin palette (a [`Frame`](crate::Frame)'s, after [`Character::palettes`]).
    pub palette: &'a [PaletteMatrix],
    /// One weight per morph target of the mesh.
    pub weights: &'a [f32],
    /// The ISA; [`Backend::Auto`] by default.
    pub backend: Backend,
    /// The skinned vertices.
    pub output: &'a mut SkinnedVertices,
}

impl<'a> FusedMorphJob<'a> {
    /// A job with the automatic ISA.
    pub fn new(
        character: &'a Character,
        mesh: usize,
        palette: &'a [PaletteMatrix],
        weights: &'a [f32],
        output: &'a mut SkinnedVertices,
    ) -> FusedMorphJob<'a> {
        FusedMorphJob {
            character,
            mesh,
            palette,
            weights,
            backend: Backend::Auto,
            output,
        }
    }

    /// Sets who runs the job.
    pub fn backend(mut self, backend: impl Into<Backend>) -> FusedMorphJob<'a> {
        self.backend = backend.into();
        self
    }

    /// Checks every rule without computing anything.
    pub fn validate(&self) -> Result<(), Error> {
        let c = self.character;
        let Some(mesh) = c.mesh(self.mesh) else {
            return Err(Error::CountMismatch {
                what: "skinned meshes (the fused mesh index)",
                expected: c.mesh_count(),
                got: self.mesh + 1,
            });
        };
        let morph = c.mesh_morph(self.mesh);
        let targets = morph.map_or(0, |m| m.targets.count());
        let n = mesh.vertex_count();
        let counts = [
            (
                "morph weights (one per target)",
                targets,
                self.weights.len(),
            ),
            (
                "palette entries (at least the mesh's joint count)",
                mesh.joint_count(),
                self.palette.len().min(mesh.joint_count()),
            ),
            ("skinned positions", n, self.output.positions.len()),
            (
                "skinned normals (where the mesh has them)",
                if mesh.has_normals() { n } else { 0 },
                self.output.normals.as_ref().map_or(0, Vec::len),
            ),
            (
                "skinned tangents (where the mesh has them)",
                if mesh.has_tangents() { n } else { 0 },
                self.output.tangents.as_ref().map_or(0, Vec::len),
            ),
        ];
        for (what, expected, got) in counts {
            if expected != got {
                return Err(Error::CountMismatch {
                    what,
                    expected,
                    got,
                });
            }
        }
        // A zero-vertex mesh's output is empty either way; otherwise present means as long as the mesh.
        if self.output.normals.is_some() != mesh.has_normals()
            || self.output.tangents.is_some() != mesh.has_tangents()
        {
            return Err(Error::OutputLayout {
                reason: "the fused job writes normals and tangents exactly where the mesh has them",
            });
        }
        if mesh.kernel.groups().iter().any(|g| g.compact()) {
            return Err(Error::OutputLayout {
                reason: "the fused morph experiment does not read compact influences",
            });
        }
        if morph.is_some_and(|m| m.active_targets(self.weights).is_none()) {
            return Err(Error::OutputLayout {
                reason: "the fused morph pass takes at most 8 weighted targets per attribute",
            });
        }
        self.backend.resolve(KernelFamily::Skinning).map(|_| ())
    }

    /// Validates, then morphs and skins every vertex.
    pub fn run(&mut self) -> Result<(), Error> {
        self.validate()?;
        let resolved = self.backend.resolve(KernelFamily::Skinning)?;
        let mesh = &self
            .character
            .mesh(self.mesh)
            .expect("validated above")
            .kernel;
        let morph = self.character.mesh_morph(self.mesh);
        let empty = ([[(&[][..], 0.0f32); MORPH_BATCH]; 3], [0usize; 3]);
        // validate() has checked that no attribute has more than MORPH_BATCH weighted targets.
        let (active, counts) = morph
            .and_then(|m| m.active_targets(self.weights))
            .unwrap_or(empty);
        let [p, nm, t] = &active;
        let lists = [&p[..counts[0]], &nm[..counts[1]], &t[..counts[2]]];
        let out = &mut *self.output;
        match resolved {
            Resolved::Ispc(isa) => {
                // The box of the positions is the product's (Frame::bounds); the experiment drops it.
                ffi::skin_morph_fused(
                    isa,
                    mesh,
                    self.palette,
                    lists,
                    bytemuck::cast_slice_mut(&mut out.positions[..]),
                    out.normals.as_deref_mut().map(bytemuck::cast_slice_mut),
                    out.tangents.as_deref_mut().map(bytemuck::cast_slice_mut),
                );
            }
            Resolved::Reference => reference::skin_morph_fused(mesh, self.palette, lists, out),
        }
        Ok(())
    }
}
