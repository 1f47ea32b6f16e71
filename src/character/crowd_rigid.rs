//! The rigid meshes of a [`CrowdFrame`]: every instance's copy of each [`RigidMesh`](super::RigidMesh)
//! (a helmet, a weapon, a robot's plates), morphed with that instance's weights and moved by that
//! instance's model matrix of the mesh's joint, as a single [`Frame`](crate::Frame)'s rigid stage does
//! for one character ([`Character::rigid`]), with the same bits.

use super::crowd::CrowdFrame;
use super::frame::SkinnedVertices;
use super::Character;
use crate::backend::KernelFamily;
use crate::error::Error;
use crate::numeric;
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
    pub fn rigid_weights(&self, instance: usize, mesh: usize) -> Option<&[f32]> {
        super::crowd::run(self.rigid_weights.get(mesh)?, self.instances(), instance)
    }

    /// Sets one instance's morph weights of rigid mesh `mesh`, one per morph target.
    ///
    /// # Errors
    /// [`Error::NotFinite`] for a NaN or infinite weight; [`Error::InstanceOutOfRange`];
    /// [`Error::CountMismatch`] when `mesh` names no rigid mesh or `weights` does not have one weight
    /// per target.
    pub fn set_rigid_weights(
        &mut self,
        instance: usize,
        mesh: usize,
        weights: &[f32],
    ) -> Result<(), Error> {
        numeric::check_finite("morph weights", weights, 1)?;
        if instance >= self.instances() {
            return Err(Error::InstanceOutOfRange {
                instance,
                instances: self.instances(),
            });
        }
        let meshes = self.rigid_weights.len();
        let targets = self.rigid_targets.get(mesh).copied();
        let (Some(all), Some(targets)) = (self.rigid_weights.get_mut(mesh), targets) else {
            return Err(Error::CountMismatch {
                what: "rigid meshes",
                expected: meshes,
                got: mesh.saturating_add(1),
            });
        };
        if weights.len() != targets {
            return Err(Error::CountMismatch {
                what: "morph weights (one per target)",
                expected: targets,
                got: weights.len(),
            });
        }
        // instance < instances and the vector holds instances * targets weights (check_crowd).
        let range = instance * targets..(instance + 1) * targets;
        let dst = all.get_mut(range).ok_or(Error::CountMismatch {
            what: "morph weights (one per target)",
            expected: targets,
            got: 0,
        })?;
        dst.copy_from_slice(weights);
        Ok(())
    }
}

impl Character {
    /// Crowd stage 5: every instance's rigid meshes (added with [`Character::with_rigid_meshes`]),
    /// each morphed with the instance's weights ([`CrowdFrame::set_rigid_weights`]) when any is not
    /// zero and moved by the instance's model matrix of its joint, writing the streams
    /// [`CrowdFrame::outputs`](CrowdFrame#structfield.outputs) asks for. Instance by instance, each with
    /// the bits of a [`Frame`](crate::Frame)'s [`rigid`](Character::rigid) stage for the same model
    /// matrices and weights; one thread (the meshes are small next to the skinned ones).
    ///
    /// # Errors
    /// [`Error::WrongFrame`], [`Error::IsaUnavailable`].
    pub fn crowd_rigid(&self, frame: &mut CrowdFrame) -> Result<(), Error> {
        self.check_crowd(frame)?;
        if self.rigid.is_empty() {
            return Ok(());
        }
        let backend = frame.backend.resolve(KernelFamily::Transform)?;
        let instances = frame.instances();
        for (m, (mesh, &joint)) in self.rigid.iter().zip(&self.rigid_joints).enumerate() {
            let targets = frame.rigid_targets.get(m).copied().unwrap_or(0);
            for i in 0..instances {
                let model = frame
                    .models()
                    .model(i, joint)
                    .ok_or(Error::InstanceOutOfRange {
                        instance: i,
                        instances,
                    })?;
                let weights = frame
                    .rigid_weights
                    .get(m)
                    .and_then(|w| w.get(i * targets..(i + 1) * targets))
                    .unwrap_or(&[]);
                let (Some(all), scratch) = (frame.rigid.get_mut(m), &mut frame.rigid_scratch)
                else {
                    break;
                };
                let got = all.positions.len();
                let out = mesh
                    .out_for(all, i, instances)
                    .ok_or(Error::CountMismatch {
                        what: "rigid mesh vertices",
                        expected: mesh.vertex_count().saturating_mul(instances),
                        got,
                    })?;
                mesh.evaluate(
                    backend,
                    &model,
                    weights,
                    (frame.outputs, frame.renormalize),
                    scratch,
                    out,
                )?;
            }
        }
        Ok(())
    }
}
