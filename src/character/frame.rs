//! [`Frame`]: everything one frame of a [`Character`](crate::Character) writes, with the options of the
//! frame's jobs.

use crate::animation::{CompactContext, CrowdSamplingContext, SamplingContext};
use crate::backend::{Backend, Precision, Threads};
use crate::crowd_buffers::CrowdPose;
use crate::error::Error;
use crate::layout::bounds::Bounds;
use crate::layout::dual_quat::DualQuatEntry;
use crate::layout::output::{Renormalize, Skinning, VertexOutputs};
use crate::layout::palette::PaletteMatrix;
use crate::layout::trs::Trs;
use crate::numeric;
use crate::skeleton::OwnerId;
use crate::skinning::job::SkinOutput;
use crate::skinning::mesh::SkinnedMesh;
use glam::{Mat4, Quat, Vec3, Vec4};
use std::sync::Arc;

/// Skinned vertices of one mesh of a [`Character`](crate::Character), in the mesh's vertex order.
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
    /// without vertices (or whose positions are NaN on some axis everywhere). A NaN coordinate is
    /// ignored, as `f32::min` and `f32::max` ignore it. This reads every position; [`Frame::bounds`]
    /// has the skin stage's box instead.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        Bounds::of(&self.positions).get()
    }
}

impl SkinnedVertices {
    /// Zeroed outputs for `vertices` vertices skinned from `mesh`: normals and tangents where the mesh
    /// has them (a crowd's output holds every instance's vertices in turn).
    pub(crate) fn zeroed(mesh: &SkinnedMesh, vertices: usize) -> SkinnedVertices {
        SkinnedVertices {
            positions: vec![Vec3::ZERO; vertices],
            normals: mesh.has_normals().then(|| vec![Vec3::ZERO; vertices]),
            tangents: mesh.has_tangents().then(|| vec![Vec4::ZERO; vertices]),
        }
    }

    /// These outputs as the skinning jobs' separate streams.
    pub(crate) fn output(&mut self) -> SkinOutput<'_> {
        self.output_for(VertexOutputs::All)
    }

    /// The streams `outputs` asks for, as the skinning jobs' separate streams.
    pub(crate) fn output_for(&mut self, outputs: VertexOutputs) -> SkinOutput<'_> {
        SkinOutput::Separate {
            positions: &mut self.positions,
            normals: self.normals.as_deref_mut().filter(|_| outputs.normals()),
            tangents: self.tangents.as_deref_mut().filter(|_| outputs.tangents()),
        }
    }
}

/// Per-frame working space of the rigid meshes' morph and transforms, sized once.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    pub(crate) positions: Vec<Vec3>,
    pub(crate) normals: Vec<Vec3>,
    pub(crate) tangents: Vec<Vec3>,
    pub(crate) transformed: Vec<Vec3>,
}

impl Scratch {
    /// Room for `vertices` vertices in every stream.
    pub(crate) fn with_room(vertices: usize) -> Scratch {
        Scratch {
            positions: vec![Vec3::ZERO; vertices],
            normals: vec![Vec3::ZERO; vertices],
            tangents: vec![Vec3::ZERO; vertices],
            transformed: vec![Vec3::ZERO; vertices],
        }
    }
}

/// Everything one frame writes, allocated once by [`Character::frame_buffers`](crate::Character::frame_buffers)
/// and reused, plus how the frame's jobs run.
///
/// Joint indices are yours (the skeleton's parent array order; glTF node indices for a scene):
/// [`Frame::set_local`], [`Frame::set_pose`], [`Frame::local`] and [`Frame::model`] convert. Inside, the
/// per-joint data is in the skeleton's level order, which the `level_*` methods expose for code that
/// writes whole poses in that order (the glTF sampler does).
///
/// The options are public fields with builder-style setters, as on the jobs:
/// `character.frame_buffers().backend(Isa::Avx2).threads(Threads::All)`.
#[derive(Clone, Debug)]
pub struct Frame {
    pub(crate) translations: Vec<Vec3>,
    pub(crate) rotations: Vec<Quat>,
    pub(crate) scales: Vec<Vec3>,
    pub(crate) models: Vec<Mat4>,
    pub(crate) palettes: Vec<Vec<PaletteMatrix>>,
    /// Each skin's dual-quaternion entries, converted from its palette by the skin stage of a frame
    /// that skins with [`Skinning::DualQuaternion`] (identity entries until then).
    pub(crate) dual_quats: Vec<Vec<DualQuatEntry>>,
    pub(crate) meshes: Vec<SkinnedVertices>,
    /// The box of each skinned mesh's positions as the skin stage's kernels returned it while writing
    /// them; `None` where the stage has not written the mesh since the frame was made or since a skin
    /// stage that failed (then [`Frame::bounds`] reads the positions).
    pub(crate) mesh_bounds: Vec<Option<Bounds>>,
    /// The rigid meshes' world-space vertices, one per rigid mesh of the character.
    pub(crate) rigid: Vec<SkinnedVertices>,
    /// Per skinned mesh with morph targets, the frame's own copy of its prepared mesh, into whose blocks
    /// the skin stage writes the morphed bind pose (made once, so that frames do not allocate and the
    /// shared character stays immutable); `None` for a mesh without targets.
    pub(crate) morphed: Vec<Option<SkinnedMesh>>,
    /// Morph weights of each skinned mesh (empty for a mesh without morph targets).
    pub(crate) mesh_weights: Vec<Vec<f32>>,
    /// Morph weights of each rigid mesh (empty for a mesh without morph targets).
    pub(crate) rigid_weights: Vec<Vec<f32>>,
    /// Room for one morphed or transformed mesh, sized for the largest, so frames do not allocate.
    pub(crate) scratch: Scratch,
    /// Level index of each of your joints.
    pub(crate) level_of: Arc<[usize]>,
    /// Per clip layer of [`Character::play`](crate::Character::play), its sampled pose and cursors.
    pub(crate) layers: Vec<LayerScratch>,
    /// The character that made the frame (the only one, with its clones, that takes it).
    pub(crate) owner: OwnerId,
    /// Who runs the frame's jobs; [`Backend::Auto`] by default.
    pub backend: Backend,
    /// Renormalization of skinned normals and tangents; [`Renormalize::default()`] by default, as for
    /// [`SkinningJob`](crate::SkinningJob).
    pub renormalize: Renormalize,
    /// Threads of the skinning job; [`Threads::One`] by default.
    pub threads: Threads,
    /// How the skin stage skins: [`Skinning::Linear`] by default, or dual quaternions.
    pub skinning: Skinning,
    /// [`Precision::Fast`] by default, or [`Precision::Deterministic`]: every stage then writes the
    /// same bits on every backend and platform (sampling and blending in portable Rust, local to
    /// model, palettes and skinning on the deterministic kernels, morph targets and rigid meshes on
    /// the serial reference; see [`Precision::Deterministic`] for what it costs).
    pub precision: Precision,
    /// Which attributes the skin and rigid stages write; [`VertexOutputs::All`] by default. Streams
    /// left out keep what they held (zeros in new buffers); the buffers stay, so the frame can ask for
    /// them again.
    pub outputs: VertexOutputs,
    /// The placement of the whole character, applied to every root joint by
    /// [`Character::local_to_model`](crate::Character::local_to_model) (`model[root] = root * local[root]`);
    /// identity by default.
    pub root: Mat4,
}

impl Frame {
    /// Sets who runs the frame's jobs (an [`Isa`](crate::Isa) converts).
    pub fn backend(mut self, backend: impl Into<Backend>) -> Frame {
        self.backend = backend.into();
        self
    }

    /// Sets the renormalization of skinned normals and tangents.
    pub fn renormalize(mut self, renormalize: Renormalize) -> Frame {
        self.renormalize = renormalize;
        self
    }

    /// Sets which attributes the skin and rigid stages write (positions only for a ray-pick or a
    /// collider).
    pub fn outputs(mut self, outputs: VertexOutputs) -> Frame {
        self.outputs = outputs;
        self
    }

    /// Sets how the skin stage skins (see [`Skinning`]).
    pub fn skinning(mut self, skinning: Skinning) -> Frame {
        self.skinning = skinning;
        self
    }

    /// Sets the precision (see [`Frame::precision`](#structfield.precision)).
    pub fn precision(mut self, precision: Precision) -> Frame {
        self.precision = precision;
        self
    }

    /// Sets the threads of the skinning job.
    pub fn threads(mut self, threads: Threads) -> Frame {
        self.threads = threads;
        self
    }

    /// Sets the placement of the whole character.
    pub fn root(mut self, root: Mat4) -> Frame {
        self.root = root;
        self
    }

    /// Number of joints (nodes, for a glTF scene).
    pub fn joints(&self) -> usize {
        self.level_of.len()
    }

    fn level(&self, joint: usize) -> Result<usize, Error> {
        self.level_of
            .get(joint)
            .copied()
            .ok_or(Error::JointOutOfRange {
                joint,
                joints: self.joints(),
            })
    }

    /// Sets the local transform of one joint (your index).
    ///
    /// # Errors
    /// [`Error::JointOutOfRange`]; [`Error::NotFinite`] for a NaN or infinite float and
    /// [`Error::RotationLength`] for a rotation whose squared length is not a normal float (zero, or
    /// beyond about 1e±38), each naming the joint.
    pub fn set_local(&mut self, joint: usize, t: Vec3, q: Quat, s: Vec3) -> Result<(), Error> {
        let l = self.level(joint)?;
        let one = |e: Error| numeric::at_index(e, joint);
        numeric::check_trs("local", &Trs::new(&[t], &[q], &[s])).map_err(one)?;
        (self.translations[l], self.rotations[l], self.scales[l]) = (t, q, s);
        Ok(())
    }

    /// The local transform of one joint (your index): translation, rotation, scale.
    pub fn local(&self, joint: usize) -> Option<(Vec3, Quat, Vec3)> {
        let l = self.level(joint).ok()?;
        Some((self.translations[l], self.rotations[l], self.scales[l]))
    }

    /// Sets the whole local pose from streams in your joint order, one entry per joint each.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] naming the stream that is not one per joint; [`Error::NotFinite`] and
    /// [`Error::RotationLength`] as for [`Frame::set_local`], naming the first joint (your index) that
    /// breaks them. Nothing is written then.
    pub fn set_pose(&mut self, t: &[Vec3], q: &[Quat], s: &[Vec3]) -> Result<(), Error> {
        for (what, len) in [
            ("local translations (one per joint)", t.len()),
            ("local rotations (one per joint)", q.len()),
            ("local scales (one per joint)", s.len()),
        ] {
            if len != self.joints() {
                return Err(Error::CountMismatch {
                    what,
                    expected: self.joints(),
                    got: len,
                });
            }
        }
        numeric::check_trs("local", &Trs::new(t, q, s))?;
        for (j, &l) in self.level_of.iter().enumerate() {
            (self.translations[l], self.rotations[l], self.scales[l]) = (t[j], q[j], s[j]);
        }
        Ok(())
    }

    /// The model matrix of one joint (your index), after
    /// [`Character::local_to_model`](crate::Character::local_to_model).
    pub fn model(&self, joint: usize) -> Option<Mat4> {
        Some(self.models[self.level(joint).ok()?])
    }

    /// Copies every model matrix into `out`, in your joint order.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when `out` does not have one matrix per joint.
    pub fn copy_models(&self, out: &mut [Mat4]) -> Result<(), Error> {
        if out.len() != self.joints() {
            return Err(Error::CountMismatch {
                what: "model matrices (one per joint)",
                expected: self.joints(),
                got: out.len(),
            });
        }
        for (m, &l) in out.iter_mut().zip(self.level_of.iter()) {
            *m = self.models[l];
        }
        Ok(())
    }

    /// The palettes, one per skin of the character, one entry per skin joint.
    pub fn palettes(&self) -> &[Vec<PaletteMatrix>] {
        &self.palettes
    }

    /// Each skin's dual-quaternion entries ([`DualQuatEntry`]), as the last skin stage of a frame
    /// with [`Skinning::DualQuaternion`] converted them from [`palettes`](Frame::palettes) (identity
    /// entries before that, and stale after a later pose: for a GPU that skins with dual
    /// quaternions without a CPU skin stage, convert the palettes with
    /// [`dual_quat_palette`](crate::dual_quat_palette)).
    pub fn dual_quaternions(&self) -> &[Vec<DualQuatEntry>] {
        &self.dual_quats
    }

    /// The skinned vertices of every mesh of the character.
    pub fn meshes(&self) -> &[SkinnedVertices] {
        &self.meshes
    }

    /// The skinned vertices of mesh `i`, or `None` past the last mesh.
    pub fn mesh(&self, i: usize) -> Option<&SkinnedVertices> {
        self.meshes.get(i)
    }

    /// The world-space vertices of every rigid mesh of the character (after
    /// [`Character::rigid`](crate::Character::rigid)), in the character's rigid mesh order.
    pub fn rigid_meshes(&self) -> &[SkinnedVertices] {
        &self.rigid
    }

    /// The morph weights of skinned mesh `i` (empty when it has no morph targets), or `None` past the
    /// last mesh.
    pub fn mesh_weights(&self, i: usize) -> Option<&[f32]> {
        self.mesh_weights.get(i).map(Vec::as_slice)
    }

    /// The morph weights of rigid mesh `i` (empty when it has no morph targets), or `None` past the last
    /// rigid mesh.
    pub fn rigid_weights(&self, i: usize) -> Option<&[f32]> {
        self.rigid_weights.get(i).map(Vec::as_slice)
    }

    /// Sets the morph weights of skinned mesh `i`, one per morph target.
    ///
    /// # Errors
    /// [`Error::NotFinite`] for a NaN or infinite weight (negative and large weights are allowed;
    /// a morph whose result overflows is refused by the skin stage);
    /// [`Error::CountMismatch`] when `i` names no skinned mesh or `weights` does not have one weight
    /// per target.
    pub fn set_mesh_weights(&mut self, i: usize, weights: &[f32]) -> Result<(), Error> {
        numeric::check_finite("morph weights", weights, 1)?;
        set_weights(&mut self.mesh_weights, "skinned meshes", i, weights)
    }

    /// Sets the morph weights of rigid mesh `i`, one per morph target.
    ///
    /// # Errors
    /// [`Error::NotFinite`] for a NaN or infinite weight;
    /// [`Error::CountMismatch`] when `i` names no rigid mesh or `weights` does not have one weight per
    /// target.
    pub fn set_rigid_weights(&mut self, i: usize, weights: &[f32]) -> Result<(), Error> {
        numeric::check_finite("morph weights", weights, 1)?;
        set_weights(&mut self.rigid_weights, "rigid meshes", i, weights)
    }

    /// The bounding box of every position of every mesh, skinned and rigid, as (min, max); `None`
    /// without vertices.
    ///
    /// The skinned meshes' boxes come from the skin stage, whose kernels keep them while they write
    /// the positions ([`SkinningJob::run_with_bounds`](crate::SkinningJob::run_with_bounds)), so this
    /// costs no pass over those vertices; a mesh the stage has not written (a frame not yet skinned)
    /// and the rigid meshes are read here.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let skinned = self
            .meshes
            .iter()
            .zip(&self.mesh_bounds)
            .map(|(mesh, known)| known.unwrap_or_else(|| Bounds::of(&mesh.positions)));
        let rigid = self.rigid.iter().map(|mesh| Bounds::of(&mesh.positions));
        skinned
            .chain(rigid)
            .fold(Bounds::EMPTY, Bounds::merge)
            .get()
    }

    /// The local pose in level order (translations, rotations, scales): the fast path for code that
    /// writes whole poses in that order. [`Skeleton::level_index`](crate::Skeleton::level_index) maps
    /// your joints to it.
    pub fn level_pose_mut(&mut self) -> (&mut [Vec3], &mut [Quat], &mut [Vec3]) {
        (
            &mut self.translations,
            &mut self.rotations,
            &mut self.scales,
        )
    }

    /// The local pose in level order (translations, rotations, scales).
    pub fn level_pose(&self) -> (&[Vec3], &[Quat], &[Vec3]) {
        (&self.translations, &self.rotations, &self.scales)
    }

    /// The model matrices in level order.
    pub fn level_models(&self) -> &[Mat4] {
        &self.models
    }

    /// The model matrices in level order, to pose joints by hand before
    /// [`Character::palettes`](crate::Character::palettes).
    pub fn level_models_mut(&mut self) -> &mut [Mat4] {
        &mut self.models
    }
}

/// One mesh's weights, checked.
fn set_weights(
    all: &mut [Vec<f32>],
    what: &'static str,
    i: usize,
    weights: &[f32],
) -> Result<(), Error> {
    let len = all.len();
    let Some(w) = all.get_mut(i) else {
        return Err(Error::CountMismatch {
            what,
            expected: len,
            got: i.saturating_add(1),
        });
    };
    if w.len() != weights.len() {
        return Err(Error::CountMismatch {
            what: "morph weights (one per target)",
            expected: w.len(),
            got: weights.len(),
        });
    }
    w.copy_from_slice(weights);
    Ok(())
}

/// A frame's room for one layer: its sampled pose, cursors and per-joint weights in level order. Made
/// on the first call with that many layers, then reused.
#[derive(Clone, Debug, Default)]
pub(crate) struct LayerScratch {
    pub(crate) translations: Vec<Vec3>,
    pub(crate) rotations: Vec<Quat>,
    pub(crate) scales: Vec<Vec3>,
    pub(crate) context: SamplingContext,
    /// The decoded frames of the layer's clip when it is compact.
    pub(crate) compact: CompactContext,
    pub(crate) joint_weights: Vec<f32>,
    /// The layer's sampled morph weights, one vector per weight set of its clip.
    pub(crate) weights: Vec<Vec<f32>>,
}

/// One layer's buffers, kept by the frame between calls.
#[derive(Clone, Debug, Default)]
pub(crate) struct CrowdLayerScratch {
    pub(crate) context: CrowdSamplingContext,
    /// A compact layer's decoded frames, one context per instance.
    pub(crate) compact: Vec<CompactContext>,
    pub(crate) pose: Option<CrowdPose>,
    pub(crate) translations: Vec<Vec3>,
    pub(crate) rotations: Vec<Quat>,
    pub(crate) scales: Vec<Vec3>,
    pub(crate) joint_weights: Vec<f32>,
}

/// What `Character::crowd_play` keeps in a crowd frame: one AoSoA block of 16 instances at the rest
/// pose and one at the identity (made on first use, copied under every block a clip samples), each
/// layer's buffers, and the blend's output streams.
#[derive(Clone, Debug, Default)]
pub(crate) struct CrowdPlayScratch {
    pub(crate) rest_block: Vec<f32>,
    pub(crate) identity_block: Vec<f32>,
    pub(crate) layers: Vec<CrowdLayerScratch>,
    pub(crate) ones: Vec<f32>,
    pub(crate) translations: Vec<Vec3>,
    pub(crate) rotations: Vec<Quat>,
    pub(crate) scales: Vec<Vec3>,
}
