//! A skinned character and its frame chain: local pose → model matrices → palettes → skinned vertices.
//!
//! A [`Character`] holds what does not change from frame to frame: a [`Skeleton`], its rest pose,
//! its skins (which joints each palette uses, and their inverse bind matrices) and its prepared meshes,
//! each with the skin it is skinned by. A [`Frame`] holds everything one frame writes, allocated once
//! by [`Character::frame_buffers`] and reused, so nothing allocates per frame:
//!
//! 1. write the local pose into [`Frame::translations`], [`Frame::rotations`] and [`Frame::scales`]
//!    (they start as the rest pose);
//! 2. [`Character::local_to_model`]: [`LocalToModelJob`], with [`Frame::root`] placing the character;
//! 3. [`Character::palettes`]: [`PaletteJob`] per skin, `model(joint) * inverse_bind(joint)`;
//! 4. [`Character::skin`]: [`SkinningJob`] per mesh, with its skin's palette.
//!
//! [`Character::evaluate`] runs stages 2 to 4. Every stage takes a [`Backend`], so the same frame runs
//! on the serial reference or on any ISA, and every stage first checks that the frame fits this
//! character: a frame made by another character, or one whose vectors were resized, is an
//! [`Error::CountMismatch`] whose `what` names the frame's field.
//!
//! ```
//! use glam::{Mat4, Quat, Vec3};
//! use ispc_skinning::{
//!     Attribute, Backend, Character, CharacterSkin, MeshInput, PrepareOptions, Skeleton, SkinnedMesh,
//! };
//!
//! // One joint, one vertex fully weighted to it.
//! let skeleton = Skeleton::from_parents(&[None])?;
//! let positions = [Vec3::X];
//! let (joints, weights) = ([[0u16; 4]], [[1.0f32, 0.0, 0.0, 0.0]]);
//! let input = MeshInput::new(
//!     Attribute::vec3(&positions),
//!     Attribute::joints_u16(&joints),
//!     Attribute::weights_f32(&weights),
//! );
//! let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(1))?;
//! let skin = CharacterSkin { joints: vec![0], inverse_binds: vec![Mat4::IDENTITY] };
//! let character = Character::new(
//!     skeleton,
//!     vec![Vec3::new(0.0, 2.0, 0.0)],
//!     vec![Quat::IDENTITY],
//!     vec![Vec3::ONE],
//!     vec![skin],
//!     vec![(mesh, 0)],
//! )?;
//! let mut frame = character.frame_buffers();
//! character.evaluate(Backend::Auto, &mut frame)?;
//! assert_eq!(frame.meshes[0].positions[0], Vec3::new(1.0, 2.0, 0.0));
//! # Ok::<(), ispc_skinning::Error>(())
//! ```

use crate::{
    Backend, Error, LocalToModelJob, Locals, PaletteJob, PaletteMatrix, Renormalize, Skeleton,
    SkinOutput, SkinnedMesh, SkinningJob, Threads, Trs,
};
use glam::{Mat4, Quat, Vec3, Vec4};
use std::sync::Arc;

/// One skin: for each skin joint, its level-order index in the skeleton and its inverse bind matrix.
///
/// Palette entry `i` is `model(joints[i]) * inverse_binds[i]`; a mesh skinned by this skin names
/// palette entries, not skeleton joints.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CharacterSkin {
    /// The skeleton joint (level-order index) of each skin joint.
    pub joints: Vec<u32>,
    /// The inverse bind matrix of each skin joint.
    pub inverse_binds: Vec<Mat4>,
}

/// Skinned vertices of one mesh of a [`Character`], in the mesh's vertex order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinnedVertices {
    /// Positions.
    pub positions: Vec<Vec3>,
    /// Normals, when the mesh has them.
    pub normals: Option<Vec<Vec3>>,
    /// Tangents (w = handedness), when the mesh has them.
    pub tangents: Option<Vec<Vec4>>,
}

impl SkinnedVertices {
    /// The axis-aligned bounding box of the skinned positions, as (min, max), or `None` for a mesh
    /// without vertices. A NaN coordinate is ignored, as `f32::min` and `f32::max` ignore it.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let first = *self.positions.first()?;
        Some(
            self.positions
                .iter()
                .fold((first, first), |(lo, hi), &p| (lo.min(p), hi.max(p))),
        )
    }
}

/// Everything one frame writes, allocated once by [`Character::frame_buffers`] and reused.
///
/// The per-joint vectors are in the level order of [`Character::skeleton`]. Between stages they may be
/// edited (for example to pose joints by hand before [`Character::palettes`]), but not resized.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Local translation of every joint (level order).
    pub translations: Vec<Vec3>,
    /// Local rotation of every joint (level order).
    pub rotations: Vec<Quat>,
    /// Local scale of every joint (level order).
    pub scales: Vec<Vec3>,
    /// Model (for glTF: world) matrix of every joint (level order).
    pub models: Vec<Mat4>,
    /// One palette per skin, one entry per skin joint.
    pub palettes: Vec<Vec<PaletteMatrix>>,
    /// One output per mesh of the character.
    pub meshes: Vec<SkinnedVertices>,
    /// Renormalization of skinned normals and tangents; [`Renormalize::Precise`] by default.
    pub renormalize: Renormalize,
    /// Threads of the skinning job; [`Threads::One`] by default.
    pub threads: Threads,
    /// The placement of the whole character, applied to every root joint by
    /// [`Character::local_to_model`] (`model[root] = root * local[root]`); identity by default.
    pub root: Mat4,
}

/// A skeleton, its rest pose, its skins and its skinned meshes: what one frame is computed from.
#[derive(Clone, Debug)]
pub struct Character {
    skeleton: Skeleton,
    rest_translations: Vec<Vec3>,
    rest_rotations: Vec<Quat>,
    rest_scales: Vec<Vec3>,
    skins: Vec<CharacterSkin>,
    /// Shared, so that a glTF mesh instanced on several nodes is prepared (and held) once.
    meshes: Vec<Arc<SkinnedMesh>>,
    mesh_skins: Vec<usize>,
}

impl Character {
    /// A character from its parts, checked.
    ///
    /// `rest_*` are the local pose in the skeleton's level order; `meshes` pairs each mesh with the
    /// index of the skin (in `skins`) that it is skinned by.
    ///
    /// # Errors
    /// - [`Error::CountMismatch`]: a rest-pose vector does not have one entry per skeleton joint, or a
    ///   skin does not have one inverse bind matrix per skin joint;
    /// - [`Error::SkinJointOutOfRange`]: a skin joint names no joint of the skeleton;
    /// - [`Error::SkinOutOfRange`]: a mesh names a skin that does not exist;
    /// - [`Error::SkinTooSmall`]: a mesh was prepared for more joints than its skin has.
    pub fn new(
        skeleton: Skeleton,
        rest_translations: Vec<Vec3>,
        rest_rotations: Vec<Quat>,
        rest_scales: Vec<Vec3>,
        skins: Vec<CharacterSkin>,
        meshes: Vec<(SkinnedMesh, usize)>,
    ) -> Result<Character, Error> {
        Character::with_shared_meshes(
            skeleton,
            rest_translations,
            rest_rotations,
            rest_scales,
            skins,
            meshes
                .into_iter()
                .map(|(mesh, skin)| (Arc::new(mesh), skin))
                .collect(),
        )
    }

    /// [`Character::new`] with meshes that may be shared with other characters (or several times with
    /// this one), as the glTF importer shares a mesh instanced on several nodes.
    pub(crate) fn with_shared_meshes(
        skeleton: Skeleton,
        rest_translations: Vec<Vec3>,
        rest_rotations: Vec<Quat>,
        rest_scales: Vec<Vec3>,
        skins: Vec<CharacterSkin>,
        meshes: Vec<(Arc<SkinnedMesh>, usize)>,
    ) -> Result<Character, Error> {
        let n = skeleton.len();
        count(
            "rest translations (one per skeleton joint)",
            n,
            rest_translations.len(),
        )?;
        count(
            "rest rotations (one per skeleton joint)",
            n,
            rest_rotations.len(),
        )?;
        count("rest scales (one per skeleton joint)", n, rest_scales.len())?;
        for skin in &skins {
            if let Some((skin_joint, &joint)) = skin
                .joints
                .iter()
                .enumerate()
                .find(|(_, &j)| j as usize >= n)
            {
                return Err(Error::SkinJointOutOfRange {
                    skin_joint,
                    joint: joint as usize,
                    joints: n,
                });
            }
            count(
                "skin inverse bind matrices (one per skin joint)",
                skin.joints.len(),
                skin.inverse_binds.len(),
            )?;
        }
        for (index, (mesh, skin)) in meshes.iter().enumerate() {
            let Some(s) = skins.get(*skin) else {
                return Err(Error::SkinOutOfRange {
                    mesh: index,
                    skin: *skin,
                    skins: skins.len(),
                });
            };
            if mesh.joint_count() > s.joints.len() {
                return Err(Error::SkinTooSmall {
                    mesh: index,
                    mesh_joints: mesh.joint_count(),
                    skin_joints: s.joints.len(),
                });
            }
        }
        let (meshes, mesh_skins) = meshes.into_iter().unzip();
        Ok(Character {
            skeleton,
            rest_translations,
            rest_rotations,
            rest_scales,
            skins,
            meshes,
            mesh_skins,
        })
    }

    /// The skeleton; every per-joint vector of a [`Frame`] is in its level order.
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// The skins; a [`Frame`] holds one palette per skin.
    pub fn skins(&self) -> &[CharacterSkin] {
        &self.skins
    }

    /// Number of meshes; a [`Frame`] holds one [`SkinnedVertices`] per mesh.
    pub fn mesh_count(&self) -> usize {
        self.meshes.len()
    }

    /// Mesh `i`, or `None` past the last mesh.
    pub fn mesh(&self, i: usize) -> Option<&SkinnedMesh> {
        self.meshes.get(i).map(|m| &**m)
    }

    /// The skin (index into [`Character::skins`]) that mesh `i` is skinned by, or `None` past the last
    /// mesh.
    pub fn mesh_skin(&self, i: usize) -> Option<usize> {
        self.mesh_skins.get(i).copied()
    }

    /// The rest pose of a joint, given by its level-order index: translation, rotation, scale.
    pub fn rest_pose(&self, level_joint: usize) -> Option<(Vec3, Quat, Vec3)> {
        Some((
            *self.rest_translations.get(level_joint)?,
            *self.rest_rotations.get(level_joint)?,
            *self.rest_scales.get(level_joint)?,
        ))
    }

    /// The rest pose in level order: translations, rotations, scales.
    #[cfg(feature = "gltf")]
    pub(crate) fn rest(&self) -> (&[Vec3], &[Quat], &[Vec3]) {
        (
            &self.rest_translations,
            &self.rest_rotations,
            &self.rest_scales,
        )
    }

    /// Buffers for one frame, sized for this character: the rest pose, identity model matrices,
    /// identity palettes, zeroed vertex outputs (normals and tangents where the mesh has them), an
    /// identity root, [`Renormalize::Precise`] and [`Threads::One`].
    pub fn frame_buffers(&self) -> Frame {
        Frame {
            translations: self.rest_translations.clone(),
            rotations: self.rest_rotations.clone(),
            scales: self.rest_scales.clone(),
            models: vec![Mat4::IDENTITY; self.skeleton.len()],
            palettes: self
                .skins
                .iter()
                .map(|s| vec![PaletteMatrix::IDENTITY; s.joints.len()])
                .collect(),
            meshes: self
                .meshes
                .iter()
                .map(|mesh| {
                    let v = mesh.vertex_count();
                    SkinnedVertices {
                        positions: vec![Vec3::ZERO; v],
                        normals: mesh.has_normals().then(|| vec![Vec3::ZERO; v]),
                        tangents: mesh.has_tangents().then(|| vec![Vec4::ZERO; v]),
                    }
                })
                .collect(),
            renormalize: Renormalize::Precise,
            threads: Threads::One,
            root: Mat4::IDENTITY,
        }
    }

    /// Checks that the frame's local pose has one entry per joint of this character.
    pub(crate) fn check_pose(&self, frame: &Frame) -> Result<(), Error> {
        let n = self.skeleton.len();
        count(
            "the frame's translations (is the Frame from another character, or resized?)",
            n,
            frame.translations.len(),
        )?;
        count(
            "the frame's rotations (is the Frame from another character, or resized?)",
            n,
            frame.rotations.len(),
        )?;
        count(
            "the frame's scales (is the Frame from another character, or resized?)",
            n,
            frame.scales.len(),
        )
    }

    fn check_models(&self, frame: &Frame) -> Result<(), Error> {
        count(
            "the frame's models (is the Frame from another character, or resized?)",
            self.skeleton.len(),
            frame.models.len(),
        )
    }

    fn check_palettes(&self, frame: &Frame) -> Result<(), Error> {
        count(
            "the frame's palettes (is the Frame from another character, or resized?)",
            self.skins.len(),
            frame.palettes.len(),
        )?;
        for (skin, palette) in self.skins.iter().zip(&frame.palettes) {
            count(
                "a palette of the frame, one entry per skin joint (is the Frame from another character, or resized?)",
                skin.joints.len(),
                palette.len(),
            )?;
        }
        Ok(())
    }

    fn check_meshes(&self, frame: &Frame) -> Result<(), Error> {
        count(
            "the frame's meshes (is the Frame from another character, or resized?)",
            self.meshes.len(),
            frame.meshes.len(),
        )?;
        for (mesh, out) in self.meshes.iter().zip(&frame.meshes) {
            let v = mesh.vertex_count();
            count(
                "a mesh output's positions, one per vertex (is the Frame from another character, or resized?)",
                v,
                out.positions.len(),
            )?;
            if let Some(normals) = &out.normals {
                count(
                    "a mesh output's normals, one per vertex (is the Frame from another character, or resized?)",
                    v,
                    normals.len(),
                )?;
            }
            if let Some(tangents) = &out.tangents {
                count(
                    "a mesh output's tangents, one per vertex (is the Frame from another character, or resized?)",
                    v,
                    tangents.len(),
                )?;
            }
        }
        Ok(())
    }

    /// Stage 2 of a frame: every joint's model matrix from the frame's local TRS ([`LocalToModelJob`]),
    /// with [`Frame::root`] as the job's root.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] for a frame that does not fit this character, [`Error::IsaUnavailable`].
    pub fn local_to_model(&self, backend: Backend, frame: &mut Frame) -> Result<(), Error> {
        self.check_pose(frame)?;
        self.check_models(frame)?;
        let Frame {
            translations,
            rotations,
            scales,
            models,
            root,
            ..
        } = frame;
        let mut job = LocalToModelJob::new(
            &self.skeleton,
            Locals::Trs(Trs {
                translations,
                rotations,
                scales,
            }),
            models,
        );
        job.root = *root;
        job.backend = backend;
        job.run().map(|_| ())
    }

    /// Stage 3 of a frame: each skin's palette, `model(joint) * inverse_bind(joint)` ([`PaletteJob`]),
    /// from the frame's model matrices.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] for a frame that does not fit this character, [`Error::IsaUnavailable`].
    pub fn palettes(&self, backend: Backend, frame: &mut Frame) -> Result<(), Error> {
        self.check_models(frame)?;
        self.check_palettes(frame)?;
        for (skin, palette) in self.skins.iter().zip(&mut frame.palettes) {
            let mut job = PaletteJob::new(&frame.models, &skin.inverse_binds, palette);
            job.joints = Some(&skin.joints);
            job.backend = backend;
            job.run()?;
        }
        Ok(())
    }

    /// Stage 4 of a frame: skins every mesh with its skin's palette ([`SkinningJob`]), with the
    /// frame's [`Frame::renormalize`] and [`Frame::threads`].
    ///
    /// # Errors
    /// [`Error::CountMismatch`] for a frame that does not fit this character, [`Error::AttributeMissing`]
    /// for normals or tangents asked of a mesh without them, [`Error::IsaUnavailable`].
    pub fn skin(&self, backend: Backend, frame: &mut Frame) -> Result<(), Error> {
        self.check_palettes(frame)?;
        self.check_meshes(frame)?;
        for ((mesh, &skin), out) in self
            .meshes
            .iter()
            .zip(&self.mesh_skins)
            .zip(&mut frame.meshes)
        {
            let mut job = SkinningJob::new(
                mesh,
                &frame.palettes[skin],
                SkinOutput::Separate {
                    positions: &mut out.positions,
                    normals: out.normals.as_deref_mut(),
                    tangents: out.tangents.as_deref_mut(),
                },
            );
            job.renormalize = frame.renormalize;
            job.threads = frame.threads;
            job.backend = backend;
            job.run()?;
        }
        Ok(())
    }

    /// Stages 2 to 4 from the frame's local TRS: [`local_to_model`](Character::local_to_model),
    /// [`palettes`](Character::palettes), then [`skin`](Character::skin).
    ///
    /// # Errors
    /// Those of the three stages.
    pub fn evaluate(&self, backend: Backend, frame: &mut Frame) -> Result<(), Error> {
        self.local_to_model(backend, frame)?;
        self.palettes(backend, frame)?;
        self.skin(backend, frame)
    }
}

/// [`Error::CountMismatch`] unless `got == expected`.
fn count(what: &'static str, expected: usize, got: usize) -> Result<(), Error> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::CountMismatch {
            what,
            expected,
            got,
        })
    }
}
