//! Whether a frame belongs to a character: every count of its buffers, then the character's identity.

use super::frame::SkinnedVertices;
use super::{Character, Frame};
use crate::error::Error;
use crate::skinning::mesh::SkinnedMesh;
use std::sync::Arc;

impl Character {
    /// [`Error::ClipSkeleton`] for a clip (`level_of`: its joints' levels, `clip_joints` of them)
    /// built for a skeleton of another joint order than this character's, naming the first joint that
    /// differs (the shorter count where one order begins the other).
    pub(crate) fn check_clip_order(
        &self,
        level_of: &[u32],
        clip_joints: usize,
    ) -> Result<(), Error> {
        let n = self.skeleton.len();
        let joint = crate::skeleton::order_difference(
            level_of.iter().map(|&l| l as usize),
            self.level_of.iter().copied(),
        );
        joint.map_or(Ok(()), |joint| {
            Err(Error::ClipSkeleton {
                joint,
                clip_joints,
                joints: n,
            })
        })
    }

    /// [`Error::WrongFrame`] naming the first part of the frame that does not fit this character, then
    /// a frame of another character (its identity) whose counts all match.
    pub(crate) fn check_frame(&self, frame: &Frame) -> Result<(), Error> {
        let wrong = |part, made_for, here| Error::WrongFrame {
            what: "Frame",
            owner: self.nouns.owner,
            part,
            made_for,
            here,
        };
        // The frame shares its character's order (one allocation) unless it is another's.
        if !Arc::ptr_eq(&frame.level_of, &self.level_of) && *frame.level_of != *self.level_of {
            return Err(wrong(
                self.nouns.joint,
                frame.level_of.len(),
                self.level_of.len(),
            ));
        }
        if frame.palettes.len() != self.skins.len() {
            return Err(wrong("skin", frame.palettes.len(), self.skins.len()));
        }
        for (palette, skin) in frame.palettes.iter().zip(&self.skins) {
            if palette.len() != skin.joints.len() {
                return Err(wrong("skin joint", palette.len(), skin.joints.len()));
            }
        }
        if frame.meshes.len() != self.meshes.len() {
            return Err(wrong("mesh", frame.meshes.len(), self.meshes.len()));
        }
        for (out, mesh) in frame.meshes.iter().zip(&self.meshes) {
            check_output(out, mesh, 1)
                .map_err(|(part, made_for, here)| wrong(part, made_for, here))?;
        }
        if frame.rigid.len() != self.rigid.len() {
            return Err(wrong("rigid mesh", frame.rigid.len(), self.rigid.len()));
        }
        for (out, mesh) in frame.rigid.iter().zip(&self.rigid) {
            let got = (
                out.positions.len(),
                out.normals.as_ref().map(Vec::len),
                out.tangents.as_ref().map(Vec::len),
            );
            let want = mesh.output_lengths(1);
            if got != want {
                return Err(wrong("rigid mesh vertex", got.0, want.0));
            }
        }
        for (got, want) in [
            (&frame.mesh_weights, &self.mesh_default_weights),
            (&frame.rigid_weights, &self.rigid_default_weights),
        ] {
            if got.len() != want.len() {
                return Err(wrong("morph weight vector", got.len(), want.len()));
            }
            for (g, w) in got.iter().zip(want) {
                if g.len() != w.len() {
                    return Err(wrong("morph weight", g.len(), w.len()));
                }
            }
        }
        // The morphed copies: one per mesh with targets, grouped as the mesh is (the morph checks the
        // groups again before it writes).
        let copies = |m: &[Option<SkinnedMesh>]| m.iter().flatten().count();
        let (made_for, here) = (
            copies(&frame.morphed),
            self.mesh_morphs.iter().flatten().count(),
        );
        if frame.morphed.len() != self.meshes.len() || made_for != here {
            return Err(wrong("morphed mesh", made_for, here));
        }
        for ((copy, mesh), morph) in frame
            .morphed
            .iter()
            .zip(&self.meshes)
            .zip(&self.mesh_morphs)
        {
            match (copy, morph) {
                (Some(c), Some(m)) if m.fits(c) => {}
                (None, None) => {}
                _ => {
                    let len = copy.as_ref().map_or(0, |c| c.vertex_count());
                    return Err(wrong("morphed mesh vertex", len, mesh.vertex_count()));
                }
            }
        }
        let room = frame.scratch.positions.len();
        let needed = self.scratch_room();
        if room < needed {
            return Err(wrong("scratch vertex", room, needed));
        }
        // Every count matches: the frame is still another character's when the identity differs (its
        // morphed copies hold that character's meshes, for one).
        if frame.owner != self.id {
            return Err(wrong(
                Error::OWNER_ID,
                frame.owner.number(),
                self.id.number(),
            ));
        }
        Ok(())
    }
}

/// Whether a frame's output of one mesh (for `instances` instances) fits the mesh: as many vertices,
/// and normal and tangent streams exactly where the mesh has them. The mismatch, as
/// [`Error::WrongFrame`]'s part and counts (per instance), otherwise.
pub(crate) fn check_output(
    out: &SkinnedVertices,
    mesh: &SkinnedMesh,
    instances: usize,
) -> Result<(), (&'static str, usize, usize)> {
    let v = mesh.vertex_count().saturating_mul(instances);
    let per_instance = |len: usize| len.checked_div(instances).unwrap_or(len);
    if out.positions.len() != v {
        return Err((
            "vertex",
            per_instance(out.positions.len()),
            mesh.vertex_count(),
        ));
    }
    for (part, stream, present) in [
        (
            "mesh normal stream",
            out.normals.as_ref().map(Vec::len),
            mesh.has_normals(),
        ),
        (
            "mesh tangent stream",
            out.tangents.as_ref().map(Vec::len),
            mesh.has_tangents(),
        ),
    ] {
        if stream.is_some() != present {
            return Err((part, usize::from(stream.is_some()), usize::from(present)));
        }
        if let Some(len) = stream.filter(|&len| len != v) {
            return Err(("vertex", per_instance(len), mesh.vertex_count()));
        }
    }
    Ok(())
}
