//! [`CrowdFrame`]: one frame of many instances of a [`Character`], each with its own pose and place.
//!
//! The stages are those of a single frame, each one call for the whole crowd:
//! 1. pose: [`Character::crowd_play`] with clip layers (each instance its own clip and time), or
//!    [`CrowdFrame::pose_mut`] ([`CrowdPose::set_joint`], [`CrowdPose::set_instance`]), or the glTF
//!    batch sampler (`GltfScene::sample_crowd`);
//! 2. [`Character::crowd_local_to_model`]: [`CrowdLocalToModelJob`] with [`CrowdFrame::roots_mut`]
//!    placing each instance;
//! 3. [`Character::crowd_palettes`]: [`CrowdPaletteJob`] per skin;
//! 4. [`Character::crowd_skin`]: [`CrowdSkinningJob`](crate::CrowdSkinningJob) per mesh, and a
//!    mesh with morph targets morphed first with each instance's own weights
//!    ([`CrowdFrame::set_mesh_weights`]);
//! 5. [`Character::crowd_rigid`]: every instance's rigid meshes, morphed with its own weights
//!    ([`CrowdFrame::set_rigid_weights`]) and moved by its model matrices.
//!
//! [`Character::evaluate_crowd`] runs stages 2 to 5 with the frame's backend and threads. Each
//! instance gets what a single [`Frame`](crate::Frame) with its pose, root and weights gets.
//!
//! ```
//! use ispc_skinning::glam::{Mat4, Quat, Vec3};
//! use ispc_skinning::{Character, CharacterSkin, MeshInput, PrepareOptions, Skeleton, SkinnedMesh};
//!
//! // A two-joint arm with one vertex at its tip, bound where it rests.
//! let skeleton = Skeleton::from_parents(&[None, Some(0)])?;
//! let (t, q, s) = ([Vec3::ZERO, Vec3::X], [Quat::IDENTITY; 2], [Vec3::ONE; 2]);
//! let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s)?;
//! let mesh = SkinnedMesh::prepare(
//!     &MeshInput::from_influences(&[Vec3::new(2.0, 0.0, 0.0)], &[[1u16]], &[[1.0f32]]),
//!     &PrepareOptions::default(),
//! )?;
//! let character = Character::new(skeleton, t.to_vec(), q.to_vec(), s.to_vec(), vec![skin], vec![(mesh, 0)])?;
//!
//! // 100 instances in a row along z, each bending its elbow a little more.
//! let mut crowd = character.crowd_buffers(100)?;
//! for i in 0..100 {
//!     crowd.roots_mut()[i] = Mat4::from_translation(Vec3::new(0.0, 0.0, i as f32));
//!     let bend = Quat::from_rotation_z(0.01 * i as f32);
//!     crowd.pose_mut().set_joint(i, 1, Vec3::X, bend, Vec3::ONE)?; // your joint 1
//! }
//! character.evaluate_crowd(&mut crowd)?;
//! let tip = crowd.positions(0, 42).unwrap()[0]; // mesh 0, instance 42
//! let bend = Quat::from_rotation_z(0.42);
//! assert!(tip.abs_diff_eq(Vec3::new(1.0, 0.0, 42.0) + bend * Vec3::X, 1e-5));
//! # Ok::<(), ispc_skinning::Error>(())
//! ```

use super::check::check_output;
use super::frame::{CrowdPlayScratch, Scratch, SkinnedVertices};
use super::Character;
use crate::backend::{Backend, Precision, Threads};
use crate::crowd_buffers::{check_crowd_size, level_block, CrowdModels, CrowdPose};
use crate::error::Error;
use crate::layout::bounds::Bounds;
use crate::layout::output::{Renormalize, Skinning, VertexOutputs};
use crate::local_to_model::crowd::CrowdLocalToModelJob;
use crate::numeric;
use crate::palette::crowd::{models_and_palettes, CrowdPaletteJob, CrowdPalettes, SkinPalettes};
use crate::skeleton::OwnerId;
use crate::skinning::mesh::SkinnedMesh;
use glam::{Mat4, Vec3, Vec4};

/// Everything one frame of a crowd writes, allocated once by [`Character::crowd_buffers`] and reused,
/// plus how the crowd's jobs run (public fields with builder-style setters, as on [`Frame`](crate::Frame)).
#[derive(Clone, Debug)]
pub struct CrowdFrame {
    /// The character that made the frame (the only one, with its clones, that takes it).
    owner: OwnerId,
    instances: usize,
    pose: CrowdPose,
    roots: Vec<Mat4>,
    pub(crate) models: CrowdModels,
    pub(crate) palettes: Vec<CrowdPalettes>,
    /// One output per mesh, every instance's vertices in turn.
    pub(crate) meshes: Vec<SkinnedVertices>,
    /// Per mesh, each instance's box of skinned positions as the skin stage's kernels returned it.
    pub(crate) mesh_bounds: Vec<MeshBoxes>,
    /// Per skinned mesh, every instance's morph weights in turn, `mesh_targets[m]` each (none for a
    /// mesh without morph targets; see crowd_skin.rs).
    pub(crate) mesh_weights: Vec<Vec<f32>>,
    /// Morph targets of each skinned mesh.
    pub(crate) mesh_targets: Vec<usize>,
    /// Per skinned mesh with morph targets, copies of the prepared mesh that the skin stage morphs in
    /// place: one per task running at once, made when first needed and kept.
    pub(crate) morphed: Vec<Vec<SkinnedMesh>>,
    /// One output per rigid mesh, every instance's vertices in turn (see crowd_rigid.rs).
    pub(crate) rigid: Vec<SkinnedVertices>,
    /// Per rigid mesh, every instance's morph weights in turn, `rigid_targets[m]` each.
    pub(crate) rigid_weights: Vec<Vec<f32>>,
    /// Morph targets of each rigid mesh.
    pub(crate) rigid_targets: Vec<usize>,
    /// Room for the rigid stage's morph and transforms, sized for the largest rigid mesh.
    pub(crate) rigid_scratch: Scratch,
    /// Buffers of [`Character::crowd_play`].
    play: CrowdPlayScratch,
    /// Who runs the jobs; [`Backend::Auto`] by default.
    pub backend: Backend,
    /// Threads of every stage but the rigid meshes'; [`Threads::All`] by default (a crowd is many
    /// independent instances).
    pub threads: Threads,
    /// Renormalization of the normals and tangents the skin and rigid stages write;
    /// [`Renormalize::default()`], as for a [`Frame`](crate::Frame).
    pub renormalize: Renormalize,
    /// Which attributes the skin and rigid stages write; [`VertexOutputs::All`] by default, as for a
    /// [`Frame`](crate::Frame). Streams left out keep what they held (zeros in new buffers); the
    /// buffers stay, so the frame can ask for them again.
    pub outputs: VertexOutputs,
    /// How the skin stage skins: [`Skinning::Linear`] by default, or dual quaternions converted from
    /// each instance's palettes, as for a [`Frame`](crate::Frame).
    pub skinning: Skinning,
    /// [`Precision::Fast`] by default, or [`Precision::Deterministic`]: every crowd stage then writes
    /// the same bits on every backend and platform, each instance those of a deterministic
    /// [`Frame`](crate::Frame) with the same pose, root and weights (sampling and blending in portable
    /// Rust, local to model, palettes and skinning on the deterministic kernels, rigid meshes on the
    /// serial reference; [`Character::crowd_play_palettes`] runs its stages one after the other).
    pub precision: Precision,
}

/// One mesh's boxes in a [`CrowdFrame`], one per instance.
#[derive(Clone, Debug)]
pub(crate) struct MeshBoxes {
    /// Whether the skin stage has written the mesh since the frame was made or since a stage that
    /// failed; if not, [`CrowdFrame::bounds`] reads the positions.
    pub(crate) known: bool,
    /// Each instance's box, `None` for a mesh without vertices.
    pub(crate) boxes: Vec<Option<(Vec3, Vec3)>>,
}

/// A [`CrowdFrame`]'s buffers, borrowed apart.
pub(crate) struct CrowdParts<'a> {
    pub(crate) pose: &'a mut CrowdPose,
    pub(crate) play: &'a mut CrowdPlayScratch,
    pub(crate) models: &'a mut CrowdModels,
    pub(crate) roots: &'a [Mat4],
    pub(crate) palettes: &'a mut [CrowdPalettes],
}

impl CrowdFrame {
    /// Sets who runs the jobs (an [`Isa`](crate::Isa) converts).
    pub fn backend(mut self, backend: impl Into<Backend>) -> CrowdFrame {
        self.backend = backend.into();
        self
    }

    /// Sets the threads of every stage.
    pub fn threads(mut self, threads: Threads) -> CrowdFrame {
        self.threads = threads;
        self
    }

    /// Sets the renormalization of skinned normals and tangents.
    pub fn renormalize(mut self, renormalize: Renormalize) -> CrowdFrame {
        self.renormalize = renormalize;
        self
    }

    /// Sets linear blend skinning or dual quaternions for the skin stage.
    pub fn skinning(mut self, skinning: Skinning) -> CrowdFrame {
        self.skinning = skinning;
        self
    }

    /// Sets the precision (see [`CrowdFrame::precision`](#structfield.precision)).
    pub fn precision(mut self, precision: Precision) -> CrowdFrame {
        self.precision = precision;
        self
    }

    /// Sets which attributes the skin stage writes (positions only for the colliders or ray-picks of
    /// a crowd).
    pub fn outputs(mut self, outputs: VertexOutputs) -> CrowdFrame {
        self.outputs = outputs;
        self
    }

    /// Number of instances.
    pub fn instances(&self) -> usize {
        self.instances
    }

    /// Every buffer at once, borrowed apart (the crowd's play and its fused pass).
    pub(crate) fn parts_mut(&mut self) -> CrowdParts<'_> {
        CrowdParts {
            pose: &mut self.pose,
            play: &mut self.play,
            models: &mut self.models,
            roots: &self.roots,
            palettes: &mut self.palettes,
        }
    }

    /// Every instance's local pose (it starts at the character's rest pose).
    pub fn pose(&self) -> &CrowdPose {
        &self.pose
    }

    /// Every instance's local pose, to write.
    pub fn pose_mut(&mut self) -> &mut CrowdPose {
        &mut self.pose
    }

    /// Each instance's placement in the world (identity to start with).
    pub fn roots(&self) -> &[Mat4] {
        &self.roots
    }

    /// Each instance's placement in the world, to write.
    pub fn roots_mut(&mut self) -> &mut [Mat4] {
        &mut self.roots
    }

    /// Every instance's model matrices, after [`Character::crowd_local_to_model`].
    pub fn models(&self) -> &CrowdModels {
        &self.models
    }

    /// The palettes of skin `skin` for every instance, after [`Character::crowd_palettes`].
    pub fn palettes(&self, skin: usize) -> Option<&CrowdPalettes> {
        self.palettes.get(skin)
    }

    /// The skinned positions of mesh `mesh` of instance `instance`, after [`Character::crowd_skin`].
    pub fn positions(&self, mesh: usize, instance: usize) -> Option<&[Vec3]> {
        let out = self.meshes.get(mesh)?;
        run(&out.positions, self.instances, instance)
    }

    /// The skinned normals of one mesh of one instance, when the mesh has normals.
    pub fn normals(&self, mesh: usize, instance: usize) -> Option<&[Vec3]> {
        let out = self.meshes.get(mesh)?;
        run(out.normals.as_deref()?, self.instances, instance)
    }

    /// The skinned tangents of one mesh of one instance, when the mesh has tangents.
    pub fn tangents(&self, mesh: usize, instance: usize) -> Option<&[Vec4]> {
        let out = self.meshes.get(mesh)?;
        run(out.tangents.as_deref()?, self.instances, instance)
    }

    /// Mesh `mesh`'s skinned vertices of every instance, instance after instance (each instance's run
    /// is the mesh's vertex count long).
    pub fn mesh(&self, mesh: usize) -> Option<&SkinnedVertices> {
        self.meshes.get(mesh)
    }

    /// The bounding box of one instance's positions over every mesh, skinned and rigid, as (min, max);
    /// `None` for an instance that does not exist or meshes without vertices. The skinned meshes'
    /// boxes come from the skin stage, whose kernels keep them while they write the positions
    /// ([`CrowdSkinningJob::run_with_bounds`](crate::CrowdSkinningJob::run_with_bounds)); a mesh the
    /// stage has not written, and the rigid meshes, are read here.
    pub fn bounds(&self, instance: usize) -> Option<(Vec3, Vec3)> {
        if instance >= self.instances {
            return None;
        }
        let rigid = (0..self.rigid.len())
            .filter_map(|m| Bounds::of(self.rigid_positions(m, instance)?).get());
        (0..self.meshes.len())
            .filter_map(|m| match self.mesh_bounds.get(m) {
                Some(MeshBoxes { known: true, boxes }) => *boxes.get(instance)?,
                _ => Bounds::of(self.positions(m, instance)?).get(),
            })
            .chain(rigid)
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
    }
}

/// Whether a crowd frame's morph weights of each mesh (skinned or rigid) fit the character: as many
/// targets per mesh as its default weights have (`defaults`), and one run of them per instance. The
/// mismatch otherwise, as [`Error::WrongFrame`]'s part (`parts`: the targets', the weights') and counts
/// per instance.
fn check_weights(
    (weights, targets): (&[Vec<f32>], &[usize]),
    defaults: &[Vec<f32>],
    instances: usize,
    (target_part, weight_part): (&'static str, &'static str),
) -> Result<(), (&'static str, usize, usize)> {
    for ((w, &got), want) in weights
        .iter()
        .zip(targets)
        .zip(defaults.iter().map(Vec::len))
    {
        if got != want {
            return Err((target_part, got, want));
        }
        if w.len() != got.saturating_mul(instances) {
            let per_instance = w.len().checked_div(instances).unwrap_or(w.len());
            return Err((weight_part, per_instance, got));
        }
    }
    Ok(())
}

/// Instance `i`'s run of `per` items in a stream of instances, `i * per .. (i + 1) * per`; `None`
/// where that overflows. The one place a crowd's per-instance ranges are computed.
pub(crate) fn instance_range(i: usize, per: usize) -> Option<std::ops::Range<usize>> {
    let start = i.checked_mul(per)?;
    Some(start..start.checked_add(per)?)
}

/// Instance `instance`'s run of a stream holding `instances` equal runs.
pub(crate) fn run<T>(all: &[T], instances: usize, instance: usize) -> Option<&[T]> {
    if instance >= instances {
        return None;
    }
    let v = all.len() / instances;
    all.get(instance_range(instance, v)?)
}

/// Sets instance `instance`'s weights of mesh `mesh` in `all` (each mesh's weights, instance after
/// instance, `targets[mesh]` each), for the skinned and the rigid meshes' setters; `meshes` names the
/// kind in an error.
pub(crate) fn set_instance_weights(
    (all, targets): (&mut [Vec<f32>], &[usize]),
    meshes: &'static str,
    (mesh, instance, instances): (usize, usize, usize),
    weights: &[f32],
) -> Result<(), Error> {
    numeric::check_finite("morph weights", weights, 1)?;
    if instance >= instances {
        return Err(Error::InstanceOutOfRange {
            instance,
            instances,
        });
    }
    let count = all.len();
    let (Some(all), Some(&targets)) = (all.get_mut(mesh), targets.get(mesh)) else {
        return Err(Error::CountMismatch {
            what: meshes,
            expected: count,
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
    let dst = instance_range(instance, targets)
        .and_then(|range| all.get_mut(range))
        .ok_or(Error::CountMismatch {
            what: "morph weights (one per target)",
            expected: targets,
            got: 0,
        })?;
    dst.copy_from_slice(weights);
    Ok(())
}

impl Character {
    /// Buffers for a crowd of `instances` instances of this character: every instance at the rest
    /// pose and at the origin, identity palettes, zeroed vertex outputs, [`Backend::Auto`],
    /// [`Threads::All`] and the default [`Renormalize`].
    ///
    /// # Errors
    /// [`Error::TooManyJoints`] for a skeleton over [`MAX_CROWD_JOINTS`](crate::MAX_CROWD_JOINTS);
    /// [`Error::TooManyInstances`] past [`MAX_CROWD_INSTANCES`](crate::MAX_CROWD_INSTANCES), or when the
    /// instances' joints, palette entries, vertices (skinned and rigid) or morph weights (skinned and
    /// rigid) would pass [`MAX_CROWD_ELEMENTS`](crate::MAX_CROWD_ELEMENTS).
    ///
    /// Every instance starts at the character's morph weights; a skinned mesh with morph targets also
    /// gets one copy of its prepared mesh to morph (the skin stage adds one per thread of rayon's pool
    /// the first time it morphs on [`Threads::All`], and keeps them).
    pub fn crowd_buffers(&self, instances: usize) -> Result<CrowdFrame, Error> {
        let vertices = self
            .meshes
            .iter()
            .map(|m| m.vertex_count())
            .chain(self.rigid.iter().map(|m| m.vertex_count()))
            .fold(0usize, usize::saturating_add);
        check_crowd_size(instances, vertices, "vertex")?;
        let rigid_targets: Vec<usize> = self.rigid_default_weights.iter().map(Vec::len).collect();
        let mesh_targets: Vec<usize> = self.mesh_default_weights.iter().map(Vec::len).collect();
        let weights = rigid_targets
            .iter()
            .chain(&mesh_targets)
            .fold(0usize, |s, &t| s.saturating_add(t));
        check_crowd_size(instances, weights, "morph weight")?;
        let pose = self.crowd_rest(instances)?;
        let palettes = self
            .skins
            .iter()
            .map(|skin| CrowdPalettes::new(skin.joints.len(), instances))
            .collect::<Result<_, _>>()?;
        let meshes = self
            .meshes
            .iter()
            .map(|mesh| SkinnedVertices::zeroed(mesh, mesh.vertex_count() * instances))
            .collect();
        Ok(CrowdFrame {
            owner: self.id(),
            instances,
            pose,
            roots: vec![Mat4::IDENTITY; instances],
            models: CrowdModels::new(&self.skeleton, instances)?,
            palettes,
            meshes,
            mesh_bounds: vec![
                MeshBoxes {
                    known: false,
                    boxes: vec![None; instances],
                };
                self.meshes.len()
            ],
            rigid: self
                .rigid
                .iter()
                .map(|m| m.zeroed_output(instances))
                .collect(),
            rigid_weights: self
                .rigid_default_weights
                .iter()
                .map(|w| w.repeat(instances))
                .collect(),
            rigid_targets,
            mesh_weights: self
                .mesh_default_weights
                .iter()
                .map(|w| w.repeat(instances))
                .collect(),
            mesh_targets,
            morphed: self
                .meshes
                .iter()
                .zip(&self.mesh_morphs)
                .map(|(mesh, morph)| morph.iter().map(|_| SkinnedMesh::clone(mesh)).collect())
                .collect(),
            rigid_scratch: Scratch::with_room(self.scratch_room()),
            play: CrowdPlayScratch::default(),
            backend: Backend::Auto,
            threads: Threads::All,
            renormalize: Renormalize::default(),
            outputs: VertexOutputs::default(),
            skinning: Skinning::Linear,
            precision: Precision::Fast,
        })
    }

    /// Every instance at the rest pose, every block (padding lanes included) one copy of the rest
    /// block.
    pub(crate) fn crowd_rest(&self, instances: usize) -> Result<CrowdPose, Error> {
        let mut rest = CrowdPose::new(&self.skeleton, instances)?;
        rest.fill_blocks(&level_block(self.level_rest()));
        Ok(rest)
    }

    /// [`Error::WrongFrame`] unless the crowd frame was made by this character (or a clone): the
    /// frame's counts first, then its pose (which [`CrowdFrame::pose_mut`] can replace by a pose of
    /// another skeleton), then the frame's identity.
    pub(crate) fn check_crowd(&self, frame: &CrowdFrame) -> Result<(), Error> {
        let wrong = |part, made_for, here| Error::WrongFrame {
            what: "CrowdFrame",
            owner: self.nouns.owner,
            part,
            made_for,
            here,
        };
        // A frame of another character is named as one, not by the pose inside it.
        if frame.owner != self.id() && frame.pose.level_order() != self.skeleton.level_order() {
            return Err(wrong(
                self.nouns.joint,
                frame.pose.joints(),
                self.skeleton.len(),
            ));
        }
        if frame.palettes.len() != self.skins.len() {
            return Err(wrong("skin", frame.palettes.len(), self.skins.len()));
        }
        for (palettes, skin) in frame.palettes.iter().zip(&self.skins) {
            if palettes.entries() != skin.joints.len() || palettes.instances() != frame.instances {
                return Err(wrong("skin joint", palettes.entries(), skin.joints.len()));
            }
        }
        if frame.meshes.len() != self.meshes.len() {
            return Err(wrong("mesh", frame.meshes.len(), self.meshes.len()));
        }
        for (out, mesh) in frame.meshes.iter().zip(&self.meshes) {
            check_output(out, mesh, frame.instances)
                .map_err(|(part, made_for, here)| wrong(part, made_for, here))?;
        }
        if frame.rigid.len() != self.rigid.len() {
            return Err(wrong("rigid mesh", frame.rigid.len(), self.rigid.len()));
        }
        if frame.rigid_targets.len() != self.rigid.len()
            || frame.rigid_weights.len() != self.rigid.len()
        {
            return Err(wrong(
                "rigid morph weight vector",
                frame.rigid_targets.len(),
                self.rigid.len(),
            ));
        }
        check_weights(
            (&frame.rigid_weights, &frame.rigid_targets),
            &self.rigid_default_weights,
            frame.instances,
            ("rigid morph target", "rigid morph weight"),
        )
        .map_err(|(part, made_for, here)| wrong(part, made_for, here))?;
        for (out, mesh) in frame.rigid.iter().zip(&self.rigid) {
            let per_instance = |len: usize| len.checked_div(frame.instances).unwrap_or(len);
            if out.positions.len() != mesh.vertex_count().saturating_mul(frame.instances) {
                return Err(wrong(
                    "rigid mesh vertex",
                    per_instance(out.positions.len()),
                    mesh.vertex_count(),
                ));
            }
            for (part, made_for, here) in [
                (
                    "rigid mesh normal stream",
                    out.normals.is_some(),
                    mesh.has_normals(),
                ),
                (
                    "rigid mesh tangent stream",
                    out.tangents.is_some(),
                    mesh.has_tangents(),
                ),
            ] {
                if made_for != here {
                    return Err(wrong(part, usize::from(made_for), usize::from(here)));
                }
            }
        }
        if frame.mesh_targets.len() != self.meshes.len()
            || frame.mesh_weights.len() != self.meshes.len()
            || frame.morphed.len() != self.meshes.len()
        {
            return Err(wrong(
                "morph weight vector",
                frame.mesh_targets.len(),
                self.meshes.len(),
            ));
        }
        check_weights(
            (&frame.mesh_weights, &frame.mesh_targets),
            &self.mesh_default_weights,
            frame.instances,
            ("morph target", "morph weight"),
        )
        .map_err(|(part, made_for, here)| wrong(part, made_for, here))?;
        for ((copies, morph), mesh) in frame
            .morphed
            .iter()
            .zip(&self.mesh_morphs)
            .zip(&self.meshes)
        {
            // The morphed copies: one at least per mesh with targets, each grouped as the mesh is
            // (the morph checks the groups again before it writes).
            let fits = match morph {
                Some(m) => !copies.is_empty() && copies.iter().all(|c| m.fits(c)),
                None => copies.is_empty(),
            };
            if !fits {
                let len = copies.first().map_or(0, SkinnedMesh::vertex_count);
                return Err(wrong("morphed mesh vertex", len, mesh.vertex_count()));
            }
        }
        if frame.rigid_scratch.positions.len() < self.scratch_room() {
            return Err(wrong(
                "rigid mesh vertex",
                frame.rigid_scratch.positions.len(),
                self.scratch_room(),
            ));
        }
        if frame.owner != self.id() {
            return Err(wrong(
                Error::OWNER_ID,
                frame.owner.number(),
                self.id().number(),
            ));
        }
        // The frame is this character's: a pose put in through `pose_mut` is named as the pose.
        frame.pose.check_owner(&self.skeleton)?;
        frame.models.check_owner(&self.skeleton)?;
        Ok(())
    }

    /// Crowd stage 2: every instance's model matrices ([`CrowdLocalToModelJob`]), each placed by its
    /// root.
    ///
    /// # Errors
    /// [`Error::WrongFrame`], [`Error::IsaUnavailable`].
    pub fn crowd_local_to_model(&self, frame: &mut CrowdFrame) -> Result<(), Error> {
        self.check_crowd(frame)?;
        CrowdLocalToModelJob::new(&self.skeleton, &frame.pose, &mut frame.models)
            .roots(&frame.roots)
            .backend(frame.backend)
            .threads(frame.threads)
            .precision(frame.precision)
            .run()
    }

    /// Crowd stage 3: every instance's palette of every skin ([`CrowdPaletteJob`]).
    ///
    /// # Errors
    /// [`Error::WrongFrame`], [`Error::IsaUnavailable`].
    pub fn crowd_palettes(&self, frame: &mut CrowdFrame) -> Result<(), Error> {
        self.check_crowd(frame)?;
        for ((skin, levels), palettes) in self
            .skins
            .iter()
            .zip(&self.skin_levels)
            .zip(&mut frame.palettes)
        {
            CrowdPaletteJob::new(
                &self.skeleton,
                &frame.models,
                levels,
                &skin.inverse_binds,
                palettes,
            )
            .backend(frame.backend)
            .threads(frame.threads)
            .precision(frame.precision)
            .run()?;
        }
        Ok(())
    }

    /// Crowd stages 2 and 3, local to model and the palettes, and no vertex work: the poses of a
    /// GPU-skinned crowd ([`CrowdFrame::palettes`]).
    ///
    /// On ISPC the two stages run block by block (16 instances), each block's palettes right after its
    /// models, while those are in cache; the result has the bits of
    /// [`crowd_local_to_model`](Character::crowd_local_to_model) then
    /// [`crowd_palettes`](Character::crowd_palettes). Palettes past 8 MiB per skin are written with
    /// non-temporal stores (they leave the cache for memory, as an upload reads them). Every rule is
    /// checked before anything is written; where a result is not finite, the models and palettes hold
    /// what was computed when the error returns.
    ///
    /// # Errors
    /// Those of the two stages.
    pub fn evaluate_crowd_pose(&self, frame: &mut CrowdFrame) -> Result<(), Error> {
        self.check_crowd(frame)?;
        // The two stages fused per block of instances (same bits as one after the other).
        let models_job = CrowdLocalToModelJob::new(&self.skeleton, &frame.pose, &mut frame.models)
            .roots(&frame.roots)
            .backend(frame.backend)
            .threads(frame.threads)
            .precision(frame.precision);
        let mut skins: Vec<SkinPalettes<'_>> = self
            .skins
            .iter()
            .zip(&self.skin_levels)
            .zip(&mut frame.palettes)
            .map(|((skin, joints), palettes)| SkinPalettes {
                joints,
                inverse_binds: &skin.inverse_binds,
                palettes,
            })
            .collect();
        models_and_palettes(models_job, &mut skins)
    }

    /// Crowd stages 2 to 5 from the crowd's poses and roots.
    ///
    /// # Errors
    /// Those of the four stages.
    pub fn evaluate_crowd(&self, frame: &mut CrowdFrame) -> Result<(), Error> {
        self.evaluate_crowd_pose(frame)?;
        self.crowd_skin(frame)?;
        self.crowd_rigid(frame)
    }
}
