//! A skinned character and its frame chain: local pose → model matrices → palettes → skinned vertices.
//!
//! A [`Character`] holds what does not change from frame to frame: a [`Skeleton`], its rest pose,
//! its skins (which joints each palette uses, and their inverse bind matrices) and its prepared meshes,
//! each with the skin it is skinned by. Everything is given in your joint order (the skeleton's parent
//! array); the character keeps the level order inside. A [`Frame`] holds everything one frame writes,
//! allocated once by [`Character::frame_buffers`] and reused, so nothing allocates per frame:
//!
//! 1. pose the joints with [`Frame::set_local`] or [`Frame::set_pose`] (a frame starts at the rest pose);
//! 2. [`Character::local_to_model`]: [`LocalToModelJob`], with [`Frame::root`] placing the character;
//! 3. [`Character::palettes`]: [`PaletteJob`] per skin, `model(joint) * inverse_bind(joint)`;
//! 4. [`Character::skin`]: [`SkinningJob`] per mesh, with its skin's palette. A mesh with morph
//!    targets whose frame weights are not all zero is morphed and skinned in one pass on an ISA with no
//!    renormalization and one thread (up to 8 weighted targets per attribute, f32 or rigid
//!    influences); otherwise its morphed bind pose is first written into the frame's own copy of the
//!    prepared mesh, in place, and the copy is skinned. Both give the same floats;
//! 5. [`Character::rigid`]: every [`RigidMesh`] (added with [`Character::with_rigid_meshes`]) morphed,
//!    then transformed by its joint's model matrix.
//!
//! [`Character::evaluate`] runs stages 2 to 5. The frame carries how they run ([`Frame::backend`],
//! [`Frame::threads`], [`Frame::renormalize`]), and every stage first checks that the frame was made
//! by this character or a clone of it ([`Error::WrongFrame`]): a character has an identity, given when
//! it is made and kept by clones, and a frame of another character is refused even when every count
//! matches. Each `with_*` builder returns a new character (a new identity), whose frames hold more. [`CrowdFrame`](crate::CrowdFrame) does the same for many instances at once.
//!
//! ```
//! use ispc_skinning::glam::{Quat, Vec3};
//! use ispc_skinning::{Character, CharacterSkin, MeshInput, PrepareOptions, Skeleton, SkinnedMesh};
//!
//! // Two joints in a row, bound where they rest; one vertex on each.
//! let skeleton = Skeleton::from_parents(&[None, Some(0)])?;
//! let (t, q, s) = ([Vec3::ZERO, Vec3::X], [Quat::IDENTITY; 2], [Vec3::ONE; 2]);
//! let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s)?;
//! let mesh = SkinnedMesh::prepare(
//!     &MeshInput::from_influences(&[Vec3::ZERO, Vec3::X], &[[0u16], [1]], &[[1.0f32], [1.0]]),
//!     &PrepareOptions::default(),
//! )?;
//! let character = Character::new(skeleton, t.to_vec(), q.to_vec(), s.to_vec(), vec![skin], vec![(mesh, 0)])?;
//!
//! let mut frame = character.frame_buffers();
//! frame.set_local(0, Vec3::new(0.0, 2.0, 0.0), Quat::IDENTITY, Vec3::ONE)?; // lift the root
//! character.evaluate(&mut frame)?;
//! assert!(frame.meshes()[0].positions[1].abs_diff_eq(Vec3::new(1.0, 2.0, 0.0), 1e-6));
//! # Ok::<(), ispc_skinning::Error>(())
//! ```

mod check;
pub(crate) mod crowd;
pub(crate) mod crowd_pass;
pub(crate) mod crowd_play;
mod crowd_rigid;
pub(crate) mod crowd_skin;
mod frame;
pub(crate) mod morph;
pub(crate) mod play;
mod pose_bounds;
pub(crate) mod rigid;
mod stages;

use self::frame::Scratch;
pub use self::frame::{Frame, SkinnedVertices};
use self::morph::SkinnedMorph;
pub use self::rigid::RigidMesh;

use crate::backend::Threads;
use crate::error::Error;
use crate::layout::dual_quat::DualQuatEntry;
use crate::layout::output::Renormalize;
use crate::layout::palette::{PaletteMatrix, PalettePlan};
use crate::layout::trs::Trs;
use crate::morph::MorphTargets;
use crate::numeric;
use crate::skeleton::{OwnerId, Skeleton};
use crate::skinning::mesh::SkinnedMesh;
use crate::Backend;
use glam::{Mat4, Quat, Vec3};
use std::sync::Arc;

/// One skin: for each skin joint, the skeleton joint it follows (your index) and its inverse bind
/// matrix.
///
/// Palette entry `i` is `model(joints[i]) * inverse_binds[i]`; a mesh skinned by this skin names
/// palette entries, not skeleton joints.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CharacterSkin {
    /// The skeleton joint (your index) of each skin joint.
    pub joints: Vec<usize>,
    /// The inverse bind matrix of each skin joint.
    pub inverse_binds: Vec<Mat4>,
}

impl CharacterSkin {
    /// A skin over every joint of `skeleton` (skin joint `i` is joint `i`), bound in the pose given by
    /// local translations, rotations and scales in your joint order: each inverse bind matrix is the
    /// inverse of the joint's model matrix in that pose.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when a stream does not have one entry per joint; the numeric rules and
    /// [`Error::Singular`] as for [`Skeleton::inverse_bind_matrices`] (a zero scale has no inverse).
    pub fn from_bind_pose(
        skeleton: &Skeleton,
        translations: &[Vec3],
        rotations: &[Quat],
        scales: &[Vec3],
    ) -> Result<CharacterSkin, Error> {
        Ok(CharacterSkin {
            joints: (0..skeleton.len()).collect(),
            inverse_binds: skeleton.inverse_bind_matrices(translations, rotations, scales)?,
        })
    }
}

/// What a character is called in [`Error::WrongFrame`] messages: "character" with "joint"s, or
/// "scene" with "node"s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Nouns {
    owner: &'static str,
    joint: &'static str,
}

/// A skeleton, its rest pose, its skins and its skinned meshes: what one frame is computed from.
#[derive(Clone, Debug)]
pub struct Character {
    skeleton: Skeleton,
    /// Your joint -> level index, shared with every frame.
    level_of: Arc<[usize]>,
    /// The rest pose in level order.
    rest_translations: Vec<Vec3>,
    rest_rotations: Vec<Quat>,
    rest_scales: Vec<Vec3>,
    /// The skins as given (your order), and each skin's joints as level indices for the palette job.
    skins: Vec<CharacterSkin>,
    skin_levels: Vec<Vec<usize>>,
    /// The skins' entries joint by joint, for the pass that computes model matrices and palettes
    /// together; `None` (more skins than it takes) runs the two stages one after the other.
    palette_plan: Option<PalettePlan>,
    /// Shared, so that a glTF mesh instanced on several nodes is prepared (and held) once.
    meshes: Vec<Arc<SkinnedMesh>>,
    mesh_skins: Vec<usize>,
    /// Each skinned mesh's morph targets, if it has any, permuted into the prepared mesh's layout.
    mesh_morphs: Vec<Option<Arc<SkinnedMorph>>>,
    /// Rigid meshes, each with the joint it follows (your index, and its level index).
    rigid: Vec<Arc<RigidMesh>>,
    rigid_joints: Vec<usize>,
    rigid_levels: Vec<usize>,
    /// The morph weights a frame starts with: one vector per skinned mesh, then per rigid mesh.
    mesh_default_weights: Vec<Vec<f32>>,
    rigid_default_weights: Vec<Vec<f32>>,
    /// The meshes each of a clip's weight sets drives in [`Character::play`]: set i is skinned mesh i,
    /// or a glTF node's instances.
    morph_sets: Vec<play::MorphSet>,
    nouns: Nouns,
    /// Who this character is: every frame it makes records it, and every stage refuses a frame of
    /// another character. Clones keep it; every `with_*` builder gives its result a new one.
    id: OwnerId,
}

impl Character {
    /// A character from its parts, checked. Everything is in your joint order: `rest_*` has one entry
    /// per skeleton joint, each skin names skeleton joints by your index, and `meshes` pairs each mesh
    /// with the index of the skin (in `skins`) that it is skinned by.
    ///
    /// # Errors
    /// - [`Error::CountMismatch`]: a rest-pose vector does not have one entry per skeleton joint, or a
    ///   skin does not have one inverse bind matrix per skin joint;
    /// - [`Error::SkinJointOutOfRange`]: a skin joint names no joint of the skeleton;
    /// - [`Error::SkinOutOfRange`]: a mesh names a skin that does not exist;
    /// - [`Error::SkinTooSmall`]: a mesh uses more joints than its skin has;
    /// - [`Error::NotFinite`], [`Error::RotationLength`]: a rest-pose float or rotation, or an inverse
    ///   bind matrix (naming the skin joint), breaks the numeric rules.
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
            [rest_translations, rest_scales],
            rest_rotations,
            skins,
            meshes
                .into_iter()
                .map(|(mesh, skin)| (Arc::new(mesh), skin))
                .collect(),
        )
    }

    /// [`Character::new`] with meshes that may be shared with other characters (or several times with
    /// this one), as the glTF importer shares a mesh instanced on several nodes. `rest_ts` holds the
    /// rest translations and scales.
    pub(crate) fn with_shared_meshes(
        skeleton: Skeleton,
        rest_ts: [Vec<Vec3>; 2],
        rest_rotations: Vec<Quat>,
        skins: Vec<CharacterSkin>,
        meshes: Vec<(Arc<SkinnedMesh>, usize)>,
    ) -> Result<Character, Error> {
        let n = skeleton.len();
        let [rest_translations, rest_scales] = rest_ts;
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
        numeric::check_trs(
            "rest",
            &Trs::new(&rest_translations, &rest_rotations, &rest_scales),
        )?;
        let mut skin_levels = Vec::with_capacity(skins.len());
        for skin in &skins {
            let mut levels = Vec::with_capacity(skin.joints.len());
            for (skin_joint, &joint) in skin.joints.iter().enumerate() {
                levels.push(
                    skeleton
                        .level_index(joint)
                        .ok_or(Error::SkinJointOutOfRange {
                            skin_joint,
                            joint,
                            joints: n,
                        })?,
                );
            }
            count(
                "skin inverse bind matrices (one per skin joint)",
                skin.joints.len(),
                skin.inverse_binds.len(),
            )?;
            numeric::check_finite(
                "skin inverse bind matrices",
                bytemuck::cast_slice(&skin.inverse_binds),
                16,
            )?;
            skin_levels.push(levels);
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
        let (meshes, mesh_skins): (Vec<_>, Vec<_>) = meshes.into_iter().unzip();
        Ok(Character {
            mesh_morphs: vec![None; meshes.len()],
            mesh_default_weights: vec![Vec::new(); meshes.len()],
            rigid: Vec::new(),
            rigid_joints: Vec::new(),
            rigid_levels: Vec::new(),
            rigid_default_weights: Vec::new(),
            morph_sets: (0..meshes.len()).map(play::MorphSet::skinned).collect(),
            level_of: skeleton.level_order().into(),
            rest_translations: skeleton.to_level_order(&rest_translations)?,
            rest_rotations: skeleton.to_level_order(&rest_rotations)?,
            rest_scales: skeleton.to_level_order(&rest_scales)?,
            skeleton,
            palette_plan: PalettePlan::new(
                n,
                &skin_levels,
                &skins
                    .iter()
                    .map(|s| s.inverse_binds.as_slice())
                    .collect::<Vec<_>>(),
            ),
            skins,
            skin_levels,
            meshes,
            mesh_skins,
            nouns: Nouns {
                owner: "character",
                joint: "joint",
            },
            id: OwnerId::new(),
        })
    }

    /// Adds meshes that follow one joint rigidly (`(mesh, joint)`, your joint index): each frame's
    /// [`Character::rigid`] stage morphs them (when they have morph targets with weights that are not
    /// zero) and transforms them by the joint's model matrix; see [`RigidMesh`]. A frame starts with
    /// every morph weight zero.
    ///
    /// # Errors
    /// [`Error::JointOutOfRange`] for a joint the skeleton does not have.
    pub fn with_rigid_meshes(self, meshes: Vec<(RigidMesh, usize)>) -> Result<Character, Error> {
        self.with_shared_rigid(
            meshes
                .into_iter()
                .map(|(mesh, joint)| {
                    let weights = vec![0.0; mesh.morph_targets().map_or(0, |m| m.count())];
                    (Arc::new(mesh), joint, weights)
                })
                .collect(),
        )
    }

    /// [`Character::with_rigid_meshes`] with shared meshes and the morph weights a frame starts with
    /// (one per target; the glTF mesh's or node's `weights`).
    pub(crate) fn with_shared_rigid(
        mut self,
        meshes: Vec<(Arc<RigidMesh>, usize, Vec<f32>)>,
    ) -> Result<Character, Error> {
        for (mesh, joint, weights) in meshes {
            let level = self
                .skeleton
                .level_index(joint)
                .ok_or(Error::JointOutOfRange {
                    joint,
                    joints: self.skeleton.len(),
                })?;
            count(
                "rigid mesh morph weights (one per target)",
                mesh.morph_targets().map_or(0, |m| m.count()),
                weights.len(),
            )?;
            self.rigid.push(mesh);
            self.rigid_joints.push(joint);
            self.rigid_levels.push(level);
            self.rigid_default_weights.push(weights);
        }
        // Its frames hold other rigid outputs: another character.
        self.id = OwnerId::new();
        Ok(self)
    }

    /// Gives skinned mesh `mesh` morph targets, applied to its bind pose before skinning whenever a
    /// frame's weights for it are not all zero ([`Frame::set_mesh_weights`]; a frame starts with every
    /// weight zero). The targets are permuted once, here, into the prepared mesh's layout, so that a
    /// frame morphs the mesh in place without preparing it again.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when `mesh` names no mesh, or the targets are for another vertex count.
    pub fn with_mesh_morph_targets(
        self,
        mesh: usize,
        targets: MorphTargets,
    ) -> Result<Character, Error> {
        let Some(prepared) = self.meshes.get(mesh) else {
            return Err(Error::CountMismatch {
                what: "skinned meshes",
                expected: self.meshes.len(),
                got: mesh.saturating_add(1),
            });
        };
        let weights = vec![0.0; targets.count()];
        let morph = Arc::new(SkinnedMorph::new(prepared, targets)?);
        self.with_skinned_morph(mesh, morph, weights)
    }

    /// Gives skinned mesh `mesh` morph targets and the weights a frame starts with (glTF loading shares
    /// one [`SkinnedMorph`] between the nodes that instance a mesh).
    pub(crate) fn with_skinned_morph(
        mut self,
        mesh: usize,
        morph: Arc<SkinnedMorph>,
        weights: Vec<f32>,
    ) -> Result<Character, Error> {
        count(
            "skinned mesh morph weights (one per target)",
            morph.targets.count(),
            weights.len(),
        )?;
        let Some(prepared) = self.meshes.get(mesh) else {
            return Err(Error::CountMismatch {
                what: "skinned meshes",
                expected: self.meshes.len(),
                got: mesh.saturating_add(1),
            });
        };
        if !morph.fits(prepared) {
            return Err(Error::CountMismatch {
                what: "skinned mesh morph vertices (one per mesh vertex)",
                expected: prepared.vertex_count(),
                got: morph.vertex_count(),
            });
        }
        self.mesh_morphs[mesh] = Some(morph);
        self.mesh_default_weights[mesh] = weights;
        // Its frames hold a morphed copy of the mesh: another character.
        self.id = OwnerId::new();
        Ok(self)
    }

    /// Number of rigid meshes; a [`Frame`] holds world-space vertices for each
    /// ([`Frame::rigid_meshes`]).
    pub fn rigid_mesh_count(&self) -> usize {
        self.rigid.len()
    }

    /// Rigid mesh `i`, or `None` past the last one.
    pub fn rigid_mesh(&self, i: usize) -> Option<&RigidMesh> {
        self.rigid.get(i).map(|m| &**m)
    }

    /// The joint (your index) that rigid mesh `i` follows, or `None` past the last one.
    pub fn rigid_mesh_joint(&self, i: usize) -> Option<usize> {
        self.rigid_joints.get(i).copied()
    }

    /// The morph targets of skinned mesh `i`, when it has any.
    pub fn mesh_morph_targets(&self, i: usize) -> Option<&MorphTargets> {
        Some(&self.mesh_morphs.get(i)?.as_ref()?.targets)
    }

    /// The morph targets of skinned mesh `i` in its prepared layout, when it has any (for the fused
    /// morph + skin experiment).
    #[cfg(feature = "experiments")]
    pub(crate) fn mesh_morph(&self, i: usize) -> Option<&SkinnedMorph> {
        self.mesh_morphs.get(i)?.as_deref()
    }

    /// The morph weights a frame starts with: per skinned mesh, then per rigid mesh (glTF scenes).
    #[cfg(feature = "gltf")]
    pub(crate) fn default_weights(&self) -> (&[Vec<f32>], &[Vec<f32>]) {
        (&self.mesh_default_weights, &self.rigid_default_weights)
    }

    /// Names the character's kind in [`Error::WrongFrame`] messages ("scene" with "node"s for glTF).
    #[cfg(feature = "gltf")]
    pub(crate) fn named(mut self, owner: &'static str, joint: &'static str) -> Character {
        self.nouns = Nouns { owner, joint };
        self
    }

    /// The skeleton; joint indices everywhere on a character are its parent array's.
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// The skins, as given (your joint order); a [`Frame`] holds one palette per skin.
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

    /// The rest pose of a joint (your index): translation, rotation, scale.
    pub fn rest_pose(&self, joint: usize) -> Option<(Vec3, Quat, Vec3)> {
        let l = self.skeleton.level_index(joint)?;
        Some((
            self.rest_translations[l],
            self.rest_rotations[l],
            self.rest_scales[l],
        ))
    }

    /// A layer's per-joint weights, given in your joint order, into `out` in level order (reused
    /// between calls; the caller checked one weight per joint).
    pub(crate) fn weights_in_level_order(&self, weights: &[f32], out: &mut Vec<f32>) {
        out.clear();
        out.resize(weights.len(), 0.0);
        for (&level, &weight) in self.level_of.iter().zip(weights) {
            if let Some(slot) = out.get_mut(level) {
                *slot = weight;
            }
        }
    }

    /// The rest pose in level order: translations, rotations, scales (what a
    /// [`SamplingJob`](crate::SamplingJob)'s output holds before a clip's tracks overwrite it).
    pub fn level_rest(&self) -> (&[Vec3], &[Quat], &[Vec3]) {
        (
            &self.rest_translations,
            &self.rest_rotations,
            &self.rest_scales,
        )
    }

    /// Buffers for one frame, sized for this character: the rest pose, identity model matrices,
    /// identity palettes, zeroed vertex outputs (normals and tangents where the mesh has them), an
    /// identity root, [`Backend::Auto`], the default [`Renormalize`], [`Threads::One`] and
    /// [`Skinning::Linear`](crate::Skinning::Linear).
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
            dual_quats: self
                .skins
                .iter()
                .map(|s| vec![DualQuatEntry::IDENTITY; s.joints.len()])
                .collect(),
            meshes: self
                .meshes
                .iter()
                .map(|mesh| SkinnedVertices::zeroed(mesh, mesh.vertex_count()))
                .collect(),
            mesh_bounds: vec![None; self.meshes.len()],
            rigid: self.rigid.iter().map(|m| m.zeroed_output(1)).collect(),
            morphed: self
                .meshes
                .iter()
                .zip(&self.mesh_morphs)
                .map(|(mesh, morph)| morph.as_ref().map(|_| SkinnedMesh::clone(mesh)))
                .collect(),
            mesh_weights: self.mesh_default_weights.clone(),
            rigid_weights: self.rigid_default_weights.clone(),
            scratch: Scratch::with_room(self.scratch_room()),
            level_of: self.level_of.clone(),
            layers: Vec::new(),
            owner: self.id,
            backend: Backend::Auto,
            renormalize: Renormalize::default(),
            threads: Threads::One,
            skinning: crate::Skinning::Linear,
            precision: crate::Precision::Fast,
            outputs: crate::VertexOutputs::All,
            root: Mat4::IDENTITY,
        }
    }

    /// This character's identity (kept by clones; see [`OwnerId`]).
    pub(crate) fn id(&self) -> OwnerId {
        self.id
    }

    /// The scratch vertices a frame needs: room for the largest rigid mesh (skinned meshes are morphed
    /// in place, in the frame's copy).
    pub(crate) fn scratch_room(&self) -> usize {
        self.rigid
            .iter()
            .map(|m| m.vertex_count())
            .max()
            .unwrap_or(0)
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
