//! The rigid meshes of a [`CrowdFrame`]: every instance's copy of each [`RigidMesh`](super::RigidMesh)
//! (a helmet, a weapon, a robot's plates), morphed with that instance's weights and moved by that
//! instance's model matrix of the mesh's joint, as a single [`Frame`](crate::Frame)'s rigid stage does
//! for one character ([`Character::rigid`]), with the same bits.

use super::crowd::{instance_range, set_instance_weights, CrowdFrame};
use super::frame::SkinnedVertices;
use super::Character;
use crate::backend::KernelFamily;
use crate::error::Error;
use glam::{Vec3, Vec4};

impl CrowdFrame {
    /// Every instance's world-space vertices of rigid mesh `mesh` (after
    /// [`Character::crowd_rigid`]), instance after instance; `None` past the last rigid mesh.
    pub fn rigid(&self, mesh: usize) -> Option<&SkinnedVertices> {
        self.rigid.get(mesh)
    }

    /// One instance's world-space positions of rigid mesh `mesh`; `None` out of range.
    pub fn rigid_positions(&self, mesh: usize, instance: usize) -> Option<&[Vec3]> {
        super::crowd::run(&self.rigid.get(mesh)?.positions, self.instances(), instance)
    }

    /// One instance's world-space normals of rigid mesh `mesh`; `None` out of range or for a mesh
    /// without normals.
    pub fn rigid_normals(&self, mesh: usize, instance: usize) -> Option<&[Vec3]> {
        super::crowd::run(
            self.rigid.get(mesh)?.normals.as_ref()?,
            self.instances(),
            instance,
        )
    }

    /// One instance's world-space tangents of rigid mesh `mesh`; `None` out of range or for a mesh
    /// without tangents.
    pub fn rigid_tangents(&self, mesh: usize, instance: usize) -> Option<&[Vec4]> {
        super::crowd::run(
            self.rigid.get(mesh)?.tangents.as_ref()?,
            self.instances(),
            instance,
        )
    }

    /// One instance's morph weights of rigid mesh `mesh` (empty when it has no morph targets); `None`
    /// out of range. A new crowd frame starts every instance at the character's weights.
    /// [`Character::crowd_play`] samples no morph weights;
    /// [`GltfScene::evaluate_crowd`](crate::gltf::GltfScene::evaluate_crowd) samples them from each
    /// instance's clip, replacing what was set.
    pub fn rigid_weights(&self, mesh: usize, instance: usize) -> Option<&[f32]> {
        super::crowd::run(self.rigid_weights.get(mesh)?, self.instances(), instance)
    }

    /// Sets one instance's morph weights of rigid mesh `mesh`, one per morph target (the same order of
    /// arguments as [`rigid_positions`](CrowdFrame::rigid_positions): mesh, then instance).
    ///
    /// # Errors
    /// [`Error::NotFinite`] for a NaN or infinite weight; [`Error::InstanceOutOfRange`];
    /// [`Error::CountMismatch`] when `mesh` names no rigid mesh or `weights` does not have one weight
    /// per target.
    pub fn set_rigid_weights(
        &mut self,
        mesh: usize,
        instance: usize,
        weights: &[f32],
    ) -> Result<(), Error> {
        let instances = self.instances();
        set_instance_weights(
            (&mut self.rigid_weights, &self.rigid_targets),
            "rigid meshes",
            (mesh, instance, instances),
            weights,
        )
    }
}

impl Character {
    /// Crowd stage 5: every instance's rigid meshes (added with [`Character::with_rigid_meshes`]),
    /// each morphed with the instance's weights ([`CrowdFrame::set_rigid_weights`]) when any is not
    /// zero and moved by the instance's model matrix of its joint (so
    /// [`crowd_local_to_model`](Character::crowd_local_to_model) or
    /// [`evaluate_crowd_pose`](Character::evaluate_crowd_pose) first), writing the streams
    /// [`CrowdFrame::outputs`](CrowdFrame#structfield.outputs) asks for (the others keep what they
    /// held) and renormalizing as [`CrowdFrame::renormalize`](CrowdFrame#structfield.renormalize) says.
    /// Instance by instance, each with the bits of a [`Frame`](crate::Frame)'s
    /// [`rigid`](Character::rigid) stage for the same model matrices and weights; on one thread whatever
    /// the frame's threads (the meshes are small next to the skinned ones).
    ///
    /// # Errors
    /// [`Error::WrongFrame`], [`Error::IsaUnavailable`]; [`Error::NotFinite`] naming the points when
    /// morph weights are so large that the morphed or moved vertices overflow, as for a frame.
    pub fn crowd_rigid(&self, frame: &mut CrowdFrame) -> Result<(), Error> {
        self.check_crowd(frame)?;
        if self.rigid.is_empty() {
            return Ok(());
        }
        // No deterministic kernels here: a deterministic frame runs the serial reference.
        let backend = frame
            .backend
            .resolve(KernelFamily::Transform)?
            .without_det_kernels(frame.precision)?;
        let instances = frame.instances();
        // check_crowd proved every length below; a failed lookup is reported, never skipped.
        let broken = |what: &'static str, got: usize| Error::CountMismatch {
            what,
            expected: instances,
            got,
        };
        for (m, (mesh, &joint)) in self.rigid.iter().zip(&self.rigid_joints).enumerate() {
            let targets = *frame
                .rigid_targets
                .get(m)
                .ok_or(broken("rigid mesh morph targets", m))?;
            let weights = frame
                .rigid_weights
                .get(m)
                .ok_or(broken("rigid mesh morph weights", m))?;
            let all = frame
                .rigid
                .get_mut(m)
                .ok_or(broken("rigid mesh outputs", m))?;
            for i in 0..instances {
                let model = frame
                    .models
                    .model(i, joint)
                    .ok_or(broken("crowd model matrices", i))?;
                let w = instance_range(i, targets)
                    .and_then(|range| weights.get(range))
                    .ok_or(broken("rigid mesh morph weights", i))?;
                let got = all.positions.len();
                let out = mesh
                    .out_for(all, i, instances)
                    .ok_or(broken("rigid mesh vertices", got))?;
                mesh.evaluate(
                    backend,
                    &model,
                    w,
                    (frame.outputs, frame.renormalize),
                    &mut frame.rigid_scratch,
                    out,
                )?;
            }
        }
        Ok(())
    }
}
