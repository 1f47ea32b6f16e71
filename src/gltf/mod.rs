//! glTF 2.0 characters: import, animation sampling, and a whole frame on the crate's own jobs.
//!
//! [`GltfScene::load`] reads a `.glb`, or a `.gltf` whose buffers are embedded (base64 data URIs) or
//! external files next to it; [`GltfScene::from_slice`] reads the same from bytes. One frame is five
//! stages, each a method that can be called (and timed) on its own, all writing into a reusable
//! [`Frame`] that [`GltfScene::frame_buffers`] allocates once:
//!
//! 1. [`GltfScene::sample`]: the clip (or the rest pose) into local translation, rotation and scale,
//!    and the clip's morph weights (or the meshes' default weights);
//! 2. [`GltfScene::local_to_model`]: [`LocalToModelJob`](crate::LocalToModelJob) over every node of the file, so every node's world
//!    matrix is known, including the non-joint ancestors that move a skin;
//! 3. [`GltfScene::palettes`]: [`PaletteJob`](crate::PaletteJob) per skin, `world(joint) * inverse_bind(joint)`;
//! 4. [`GltfScene::skin`]: [`SkinningJob`](crate::SkinningJob) per skinned primitive instance, its
//!    morph targets applied first;
//! 5. [`GltfScene::rigid`]: every rigid primitive (a mesh on a node without a skin) morphed and moved
//!    by its node's world matrix.
//!
//! [`GltfScene::evaluate`] runs all five, and calling them one by one gives the same bits: between
//! them, change the local pose ([`Frame::set_local`]), blend, or set morph weights
//! ([`Frame::set_mesh_weights`]). The frame says who runs them ([`Frame::backend`]), so the same
//! frame runs on the serial reference or on any ISA. After [`GltfScene::frame_buffers`] nothing allocates per frame.
//!
//! ```no_run
//! use ispc_skinning::gltf::{GltfScene, Wrap};
//!
//! let scene = GltfScene::load("CesiumMan.glb")?;
//! let mut frame = scene.frame_buffers();
//! scene.evaluate(Some(0), 0.5, Wrap::Loop, &mut frame)?;
//! for (primitive, out) in scene.primitives().iter().zip(frame.meshes()) {
//!     println!("node {}: {} world-space vertices", primitive.node(), out.positions.len());
//! }
//! # Ok::<(), ispc_skinning::Error>(())
//! ```
//!
//! # What a file becomes
//! - **Nodes.** One [`Skeleton`] over *every* node of the file (not only joints): a skin's joints can
//!   hang under non-joint nodes that move them, and one local-to-model pass then gives every node's world
//!   matrix. All per-node arrays of a [`Frame`] are in the skeleton's level order;
//!   [`GltfScene::level_index`] maps a glTF node index to it. A node with a `matrix` is decomposed into
//!   translation, rotation and scale; the matrix must be one ([`GltfError::NodeMatrix`], see the rules
//!   below).
//! - **Skins.** Joints, inverse bind matrices (identity when the accessor is absent) and the optional
//!   `skeleton` root node (informational: the spec defines skinning through world matrices only).
//! - **Skinned primitives.** Every node that has both a mesh and a skin contributes one
//!   [`SkinnedPrimitive`] per mesh primitive, sorted by node index then primitive index, whether or not
//!   the node is in a scene. A mesh instanced on several nodes is prepared once per skin size and shared.
//!   Attributes: POSITION (required), NORMAL, TANGENT, and every JOINTS_n/WEIGHTS_n pair. Vertices with
//!   more than 16 influences (JOINTS_4 and up) keep the heaviest 16, the crate's influence LOD rule;
//!   fewer with [`LoadOptions::max_influences`]. Weights are normalized per vertex by default
//!   ([`LoadOptions::weights`]). Any primitive mode is skinned; [`SkinnedPrimitive::triangles`] lists the
//!   triangles of triangle, strip and fan primitives (empty for points and lines). Vertices keep the
//!   file's order unless [`LoadOptions::vertex_order`] is [`VertexOrder::ByInfluenceCount`], which
//!   sorts them by influence count at load for the fastest skinning and maps them back with
//!   [`SkinnedPrimitive::file_indices`].
//! - **Rigid and static primitives.** Every primitive of a mesh node without a skin in the default
//!   scene (`scene`, else the first scene; every node when the file has none) is a [`RigidPrimitive`]
//!   and one of the character's [`RigidMesh`](crate::RigidMesh)es, following its node's world matrix
//!   (see [`Character::rigid`] for how normals and tangents transform). [`GltfScene::drawn`] lists
//!   every drawn primitive of a frame, skinned and rigid, sorted by node then primitive.
//! - **Morph targets.** POSITION, NORMAL and TANGENT deltas (sparse accessors included), weighted by the
//!   node's `weights`, else the mesh's, else zeros, or by the clip's `weights` channel
//!   ([`WeightChannel`]), are applied before skinning and before a rigid mesh's transform
//!   ([`morph_floats`](crate::morph_floats)). Every primitive of a mesh has the same target count
//!   ([`GltfError::MorphTargetCounts`]), each delta accessor is VEC3 with one element per vertex
//!   ([`GltfError::MorphDeltas`], [`GltfError::AccessorFormat`]) and finite
//!   ([`GltfError::MorphDeltaValue`]), `weights` has one finite weight per target
//!   ([`GltfError::MorphWeights`]), and a weights channel one output per key and target, three for
//!   `CUBICSPLINE` ([`GltfError::WeightKeys`]).
//! - **Skinned output** follows the glTF spec: world space, `world(joint) * inverse_bind(joint)`; the
//!   skinned mesh node's own transform does not apply. Nothing assumes the rest pose is the bind pose.
//! - **Accessors.** Every component type the spec allows is read: u8 and u16 joints; f32, unorm8 and
//!   unorm16 weights (an unsigned weight accessor is read as normalized even when its `normalized` flag is
//!   missing); normalized integer positions, normals, tangents and rotation keys (KHR_mesh_quantization);
//!   u8, u16 and u32 indices. Sparse accessors are applied on top of their base data (or zeros).
//!
//! # Animation
//! Each glTF animation is a [`Clip`] of translation, rotation and scale channels, and of morph-target
//! weight channels ([`Clip::weight_channels`]). A clip spans from its earliest to its latest key time; [`Wrap`] chooses what a
//! time outside that span means. Nodes without a channel keep their rest pose (the node's TRS).
//! Interpolation follows the glTF spec:
//! - `STEP`: the value of the last key at or before the time;
//! - `LINEAR`: `(1 - u) a + u b` for translation and scale; **slerp** for rotation, along the shorter
//!   arc (the second key is negated when the dot product is negative), falling back to a normalized lerp
//!   when the keys are closer than a dot product of 0.9995, the result normalized;
//! - `CUBICSPLINE`: the spec's Hermite spline `(2u³-3u²+1) v_k + (u³-2u²+u) Δt b_k + (-2u³+3u²) v_k+1 +
//!   (u³-u²) Δt a_k+1`, with the tangents scaled by the key interval Δt; rotations are normalized after.
//!
//! Times before the first key give the first key's value, times after the last the last key's. At a
//! key's own time the key's value comes back exactly. Rotation keys of `STEP` and `LINEAR` samplers are
//! normalized once when loaded (files are often a few 1e-4 off unit length), so every sampled rotation is
//! unit length; a rotation key whose squared length is not a normal f32 (zero included) is refused at
//! load ([`GltfError::RotationKey`]).
//!
//! # Rules
//! A broken or hostile file is an [`Error::Gltf`] holding a [`GltfError`] that names the rule, never a
//! panic; nothing allocates more than a small multiple of the file's own data (the JSON tree of the
//! first check below takes up to about 48 bytes per byte of JSON, for arrays of one-digit numbers;
//! what is read from the buffers is held to the read budget below):
//! - the bytes are glTF JSON or a GLB container ([`GltfError::Parse`], [`GltfError::Glb`]) whose JSON
//!   names only objects that exist, uses the spec's enum values and has every required field, checked by
//!   the importer itself before anything is read from it ([`GltfError::Json`], with the JSON path); `extensionsRequired` lists only KHR_mesh_quantization,
//!   KHR_animation_pointer and extensions that do not change geometry (materials, textures, lights), so
//!   no compression and nothing unknown ([`GltfError::UnsupportedExtension`]);
//! - every buffer loads: the GLB `BIN` chunk, a base64 data URI, or a relative file inside the `.gltf`'s
//!   directory (after percent-decoding: no `..`, no absolute path, drive letter or scheme, no symbolic
//!   link out of the directory), with at least `byteLength` bytes ([`GltfError::Buffer`]);
//! - buffer views lie inside their buffers ([`GltfError::BufferViewOutOfBounds`]) and accessors inside
//!   their views ([`GltfError::AccessorOutOfBounds`]); the accessors read in one load together hold at
//!   most [`READ_BUDGET_SLACK`] components plus four per byte of the file's buffers, so neither
//!   accessors without a buffer view (implicit zeros) nor many accessors aliasing the same bytes can ask
//!   for more memory than the file backs ([`GltfError::AccessorTooLarge`]); sparse indices name elements
//!   ([`GltfError::SparseIndexOutOfRange`]); each accessor has a type its use allows
//!   ([`GltfError::AccessorFormat`]);
//! - the nodes form a forest: a node has at most one parent ([`GltfError::NodeParents`]) and no node is
//!   its own ancestor ([`GltfError::NodeCycle`]); node transforms are finite ([`GltfError::NodeTransform`]);
//!   a node's rotation has a squared length x²+y²+z²+w² that is a normal f32, from `f32::MIN_POSITIVE`
//!   to `f32::MAX` ([`GltfError::NodeRotation`]); a node `matrix` is a translation, rotation and scale:
//!   bottom row 0 0 0 1 to within [`MATRIX_BOTTOM_ROW_TOLERANCE`] and no shear beyond
//!   [`MATRIX_SHEAR_TOLERANCE`] (a negative scale, a reflection, is allowed) ([`GltfError::NodeMatrix`]);
//!   there is at least one node ([`GltfError::NoNodes`]);
//! - a skin has an inverse bind matrix per joint, all finite ([`GltfError::InverseBindMatrices`]);
//! - the file stays inside the [`ImportLimits`] of its [`LoadOptions`] ([`GltfError::Limit`]): its
//!   size (and each external buffer file's), its node count, the keys of each channel, the skinned
//!   vertices, output bytes and primitive instances (empty ones too) over every primitive instance (a
//!   [`Frame`] holds an output per instance, so a mesh instanced on many nodes counts many times), the
//!   indices read and triangles made, and the load's predicted allocation, each checked before what it
//!   counts is allocated. The file is read only when it is a regular file;
//! - every primitive's POSITION, NORMAL and TANGENT values are finite ([`GltfError::AttributeValue`]);
//! - a skinned primitive has POSITION and paired JOINTS_n/WEIGHTS_n ([`GltfError::MissingAttribute`]),
//!   indices that name vertices ([`GltfError::IndexOutOfRange`]), and passes
//!   [`SkinnedMesh::prepare`](crate::SkinnedMesh::prepare) (equal counts, finite non-negative weights, joint indices inside the skin:
//!   [`GltfError::Primitive`] wraps the crate error);
//! - animation key times are finite and strictly increasing ([`GltfError::KeyTimes`]), key values are
//!   finite ([`GltfError::KeyValue`]), rotation key values have a squared length that is a normal f32
//!   ([`GltfError::RotationKey`]; the tangents of a `CUBICSPLINE` sampler may be any finite values), and a sampler has at least one key and one output per key, three
//!   for `CUBICSPLINE` ([`GltfError::KeyCount`]);
//! - at evaluation, a clip index names a clip ([`GltfError::ClipOutOfRange`]) and the time is finite
//!   ([`GltfError::TimeNotFinite`]); a [`Frame`] or [`CrowdFrame`](crate::CrowdFrame) made for another
//!   scene (even a scene loaded from the same file; a clone of this one is this scene) is
//!   [`Error::WrongFrame`], at every stage and in [`GltfScene::drawn`].

mod accessors;
mod buffers;
mod build;
mod clips;
mod crowd;
mod document;
pub mod error;
mod limits;
mod primitive;
mod sampling;
mod schema;
mod validate;

pub use self::build::Skin;
pub use self::error::{MATRIX_BOTTOM_ROW_TOLERANCE, MATRIX_SHEAR_TOLERANCE, READ_BUDGET_SLACK};
pub use self::limits::ImportLimits;
pub use self::primitive::{LoadOptions, RigidPrimitive, SkinnedPrimitive, VertexOrder};
pub use self::sampling::{Channel, Clip, Interpolation, Property, WeightChannel, Wrap};
pub use crate::{Frame, SkinnedVertices};

use self::accessors::Reader;
use crate::{Character, Error, Precision, Skeleton};
use glam::{Mat4, Quat, Vec3};
use std::path::Path;

/// What broke a glTF file (or a request against one). Each variant's documentation states the rule.
pub type GltfError = self::error::GltfError<Error>;

/// How a drawn primitive moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrimitiveKind {
    /// Skinned: a mesh node with a skin.
    Skinned,
    /// Rigid: a mesh node without a skin, under a joint or an animated node.
    Rigid,
    /// Static: a mesh node without a skin and without an animated ancestor.
    Static,
}

impl PrimitiveKind {
    /// `skinned`, `rigid` or `static`.
    pub fn name(self) -> &'static str {
        match self {
            PrimitiveKind::Skinned => "skinned",
            PrimitiveKind::Rigid => "rigid",
            PrimitiveKind::Static => "static",
        }
    }
}

/// One drawn primitive instance of a frame, from [`GltfScene::drawn`].
#[derive(Clone, Copy, Debug)]
pub struct DrawnPrimitive<'a> {
    /// The glTF node that instances the mesh.
    pub node: usize,
    /// The glTF mesh index.
    pub mesh: usize,
    /// The primitive index within the mesh.
    pub primitive: usize,
    /// How it moves.
    pub kind: PrimitiveKind,
    /// Its triangles (vertex indices).
    pub triangles: &'a [[u32; 3]],
    /// Its world-space vertices in the frame.
    pub vertices: &'a SkinnedVertices,
}

/// A loaded glTF file: its node hierarchy, skins, skinned primitives and clips.
///
/// The frame chain itself (world matrices, palettes, skinning) is the scene's [`Character`]: one
/// skeleton over every node, one [`CharacterSkin`](crate::CharacterSkin) per glTF skin, one mesh per
/// [`SkinnedPrimitive`]. The scene adds what a file has beyond it: skins' node indices,
/// primitives' triangles and bind positions, and the clips that [`GltfScene::sample`] writes.
#[derive(Clone, Debug)]
pub struct GltfScene {
    character: Character,
    target_names: Vec<Vec<String>>,
    warnings: Vec<String>,
    skins: Vec<Skin>,
    primitives: Vec<SkinnedPrimitive>,
    rigid: Vec<RigidPrimitive>,
    clips: Vec<Clip>,
    /// One AoSoA block of the rest pose, which the crowd sampler copies into every block; made on the
    /// first crowd sampling (it is the size of a one-instance crowd pose).
    crowd_rest: std::sync::OnceLock<Vec<f32>>,
}

impl GltfScene {
    /// Loads a `.glb` or `.gltf` file with default options; external buffers are read relative to it.
    ///
    /// # Errors
    /// [`Error::Gltf`] naming the broken rule (see the [module docs](crate::gltf)).
    pub fn load(path: impl AsRef<Path>) -> Result<GltfScene, Error> {
        GltfScene::load_with(path, &LoadOptions::default())
    }

    /// Loads a `.glb` or `.gltf` file.
    ///
    /// # Errors
    /// [`Error::Gltf`] naming the broken rule (see the [module docs](crate::gltf)).
    pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<GltfScene, Error> {
        let path = path.as_ref();
        let bytes = buffers::read_capped(path, options.limits.file_bytes)?;
        // A bare file name has the empty path as its parent; external buffers resolve against ".".
        let base = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        GltfScene::from_slice_with(&bytes, Some(&base), options)
    }

    /// Loads a `.glb`, or a `.gltf` whose buffers are all embedded, from bytes with default options.
    ///
    /// # Errors
    /// [`Error::Gltf`]; a buffer in an external file is [`GltfError::Buffer`] (there is no directory to
    /// read it from: use [`GltfScene::from_slice_with`]).
    pub fn from_slice(bytes: &[u8]) -> Result<GltfScene, Error> {
        GltfScene::from_slice_with(bytes, None, &LoadOptions::default())
    }

    /// Loads from bytes; external buffer files are read relative to `base_dir` when one is given.
    ///
    /// # Errors
    /// [`Error::Gltf`] naming the broken rule (see the [module docs](crate::gltf)).
    pub fn from_slice_with(
        bytes: &[u8],
        base_dir: Option<&Path>,
        options: &LoadOptions,
    ) -> Result<GltfScene, Error> {
        ImportLimits::check("file_bytes", bytes.len(), options.limits.file_bytes)?;
        let document::Parsed {
            document,
            blob,
            warnings,
        } = document::parse(bytes, &options.limits)?;
        let (buffers, held) =
            buffers::load_buffers(&document, blob, base_dir, options.limits.file_bytes)?;
        let reader = Reader::new(&document, &buffers, held, options.limits);
        let parts = build::build_scene(&reader, options)?;
        Ok(GltfScene {
            character: parts.character,
            target_names: parts.target_names,
            warnings,
            skins: parts.skins,
            primitives: parts.primitives,
            rigid: parts.rigid,
            clips: parts.clips,
            crowd_rest: std::sync::OnceLock::new(),
        })
    }

    /// The character that runs this scene's frames: the skeleton over every node, the rest pose, one
    /// skin per glTF skin and one mesh per [`SkinnedPrimitive`] (in the same order).
    pub fn character(&self) -> &Character {
        &self.character
    }

    /// The hierarchy of every node of the file, in level order.
    pub fn skeleton(&self) -> &Skeleton {
        self.character.skeleton()
    }

    /// Number of nodes in the file.
    pub fn node_count(&self) -> usize {
        self.character.skeleton().len()
    }

    /// The level-order index of a glTF node (the index into a [`Frame`]'s per-node vectors).
    pub fn level_index(&self, node: usize) -> Option<usize> {
        self.character.skeleton().level_index(node)
    }

    /// The name of a glTF node, when it has one.
    pub fn node_name(&self, node: usize) -> Option<&str> {
        self.skeleton().name(node)
    }

    /// What the importer left out of a file that loaded, one line each (empty for most files): the
    /// animation channels that target no node, which the spec says to ignore. A `KHR_animation_pointer`
    /// channel at a node's translation, rotation, scale or morph weights (`/nodes/N/rotation`...) plays
    /// as the plain channel it means, and one at a mesh's weights (`/meshes/M/weights`) as the weights
    /// channel of each node of that mesh without weights of its own; one at anything else (a
    /// material, a camera, another extension's property) is left out here, naming its pointer.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The morph target names of glTF mesh `mesh` (its `extras.targetNames`, as Blender writes them),
    /// one per target; empty when the mesh does not name its targets or does not exist. Target `i` is
    /// weight `i` of [`Frame::set_mesh_weights`] and [`Frame::set_rigid_weights`] for every primitive
    /// instance of the mesh.
    pub fn target_names(&self, mesh: usize) -> &[String] {
        self.target_names.get(mesh).map_or(&[], Vec::as_slice)
    }

    /// The index of glTF mesh `mesh`'s morph target with this name (the first, if several share it).
    ///
    /// # Errors
    /// [`Error::NameNotFound`] (`what: "morph target"`) when the mesh names no target so.
    pub fn target_named(&self, mesh: usize, name: &str) -> Result<usize, Error> {
        self.target_names(mesh)
            .iter()
            .position(|n| !name.is_empty() && n == name)
            .ok_or_else(|| Error::NameNotFound {
                what: "morph target",
                name: name.to_string(),
            })
    }

    /// The skins.
    pub fn skins(&self) -> &[Skin] {
        &self.skins
    }

    /// The skinned primitive instances, sorted by node index then primitive index.
    pub fn primitives(&self) -> &[SkinnedPrimitive] {
        &self.primitives
    }

    /// The primitives of the default scene drawn without a skin (rigid under an animated node, or
    /// static), sorted by node index then primitive index: the character's rigid meshes, whose
    /// world-space vertices are [`Frame::rigid_meshes`] (in the same order).
    pub fn rigid_primitives(&self) -> &[RigidPrimitive] {
        &self.rigid
    }

    /// Every drawn primitive instance with its vertices in `frame` (after an evaluation), skinned and
    /// rigid together, sorted by node index then primitive index.
    ///
    /// # Errors
    /// [`Error::WrongFrame`] for a frame of another scene (even one with the same nodes and
    /// primitives): its vertices are not the ones this scene's triangles index.
    pub fn drawn<'a>(&'a self, frame: &'a Frame) -> Result<Vec<DrawnPrimitive<'a>>, Error> {
        self.character.check_frame(frame)?;
        let skinned = self
            .primitives
            .iter()
            .zip(frame.meshes())
            .map(|(p, v)| DrawnPrimitive {
                node: p.node(),
                mesh: p.mesh(),
                primitive: p.primitive(),
                kind: PrimitiveKind::Skinned,
                triangles: p.triangles(),
                vertices: v,
            });
        let rigid = self
            .rigid
            .iter()
            .zip(frame.rigid_meshes())
            .map(|(p, v)| DrawnPrimitive {
                node: p.node(),
                mesh: p.mesh(),
                primitive: p.primitive(),
                kind: if p.is_animated() {
                    PrimitiveKind::Rigid
                } else {
                    PrimitiveKind::Static
                },
                triangles: p.triangles(),
                vertices: v,
            });
        let mut all: Vec<_> = skinned.chain(rigid).collect();
        // Stable, and the two lists are each sorted already; a node is either skinned or not.
        all.sort_by_key(|d| (d.node, d.primitive));
        Ok(all)
    }

    /// The animation clips, in file order.
    pub fn clips(&self) -> &[Clip] {
        &self.clips
    }

    /// The index of the first clip with this name.
    pub fn find_clip(&self, name: &str) -> Option<usize> {
        self.clips
            .iter()
            .position(|c| !name.is_empty() && c.name() == Some(name))
    }

    /// [`GltfScene::find_clip`] as a `Result`.
    ///
    /// # Errors
    /// [`Error::NameNotFound`] (`what: "clip"`) when no clip has the name.
    pub fn clip_named(&self, name: &str) -> Result<usize, Error> {
        self.find_clip(name).ok_or_else(|| Error::NameNotFound {
            what: "clip",
            name: name.to_string(),
        })
    }

    /// The rest pose of a glTF node (its TRS in the file): translation, rotation, scale.
    pub fn rest_pose(&self, node: usize) -> Option<(Vec3, Quat, Vec3)> {
        self.character.rest_pose(node)
    }

    /// The world matrix of a glTF node in a frame (after [`GltfScene::local_to_model`]); `None` for a
    /// node the scene does not have, or a frame of another scene.
    pub fn world_matrix(&self, frame: &Frame, node: usize) -> Option<Mat4> {
        self.character.check_frame(frame).ok()?;
        frame.model(node)
    }

    /// Buffers for one frame, sized for this scene: the rest pose, identity matrices and zeroed vertices.
    pub fn frame_buffers(&self) -> Frame {
        self.character.frame_buffers()
    }

    /// One whole frame, the five stages in order: [`sample`](GltfScene::sample),
    /// [`local_to_model`](GltfScene::local_to_model), [`palettes`](GltfScene::palettes),
    /// [`skin`](GltfScene::skin), then [`rigid`](GltfScene::rigid). `clip: None` is the rest pose.
    /// Calling the five stages yourself (to blend, override morph weights or pose joints between them)
    /// gives the same bits.
    ///
    /// # Errors
    /// [`GltfError::ClipOutOfRange`], [`GltfError::TimeNotFinite`], [`Error::IsaUnavailable`] for an ISA
    /// that cannot run, and [`Error::WrongFrame`] for a frame of another scene.
    pub fn evaluate(
        &self,
        clip: Option<usize>,
        time: f32,
        wrap: Wrap,
        frame: &mut Frame,
    ) -> Result<(), Error> {
        self.sample(clip, time, wrap, frame)?;
        self.character.evaluate(frame)
    }

    /// Clip `clip` as a runtime [`Clip`](crate::Clip) for this scene's skeleton: joints are node
    /// indices, and weight set `n` is node `n`'s morph weights (a node whose mesh has targets). Sampled
    /// with [`SamplingJob`](crate::SamplingJob) over [`Character::level_rest`](crate::Character::level_rest),
    /// it gives the same bits as [`GltfScene::sample`].
    ///
    /// # Errors
    /// [`GltfError::ClipOutOfRange`]; [`Error::DuplicateTrack`] for an animation that targets a node's
    /// property twice (which glTF forbids, and [`GltfScene::sample`] resolves by the later channel).
    pub fn runtime_clip(&self, clip: usize) -> Result<crate::Clip, Error> {
        let c = self.clips.get(clip).ok_or(GltfError::ClipOutOfRange {
            clip,
            clips: self.clips.len(),
        })?;
        let mut b = crate::Clip::builder(self.skeleton());
        if let Some(name) = c.name() {
            b.name(name);
        }
        for ch in &c.channels {
            b.track_as(
                ch.node,
                ch.property,
                ch.interpolation,
                &ch.times,
                &ch.values,
                false,
            )?;
        }
        for w in &c.weights {
            b.weights(w.node, w.targets, w.interpolation, &w.times, &w.values)?;
        }
        Ok(b.build())
    }

    /// Stage 1: writes every node's local TRS, the rest pose overwritten by the clip's channels at `time`
    /// (after `wrap`). `clip: None` writes the rest pose.
    ///
    /// # Errors
    /// [`GltfError::ClipOutOfRange`], [`GltfError::TimeNotFinite`], [`Error::WrongFrame`].
    pub fn sample(
        &self,
        clip: Option<usize>,
        time: f32,
        wrap: Wrap,
        frame: &mut Frame,
    ) -> Result<(), Error> {
        self.character.check_frame(frame)?;
        let clip = match clip {
            Some(c) => Some(self.clips.get(c).ok_or(GltfError::ClipOutOfRange {
                clip: c,
                clips: self.clips.len(),
            })?),
            None => None,
        };
        if !time.is_finite() {
            return Err(GltfError::TimeNotFinite.into());
        }
        if frame.precision == Precision::Deterministic {
            crate::numeric::check_float_environment()?;
        }
        let (translations, rotations, scales) = self.character.level_rest();
        frame.translations.copy_from_slice(translations);
        frame.rotations.copy_from_slice(rotations);
        frame.scales.copy_from_slice(scales);
        let (mesh_weights, rigid_weights) = self.character.default_weights();
        for (w, d) in frame.mesh_weights.iter_mut().zip(mesh_weights) {
            w.copy_from_slice(d);
        }
        for (w, d) in frame.rigid_weights.iter_mut().zip(rigid_weights) {
            w.copy_from_slice(d);
        }
        let Some(clip) = clip else { return Ok(()) };
        let t = clip.wrap_time(time, wrap);
        for ch in &clip.weights {
            for &i in &ch.skinned {
                ch.sample_into(t, &mut frame.mesh_weights[i]);
            }
            for &i in &ch.rigid {
                ch.sample_into(t, &mut frame.rigid_weights[i]);
            }
        }
        // Channels that share key times (a track) are adjacent when a node's translation, rotation and
        // scale come from one exporter's sampler input, as is common: where the time falls is then
        // looked up once for the run of them.
        let mut last: Option<(usize, sampling::Located)> = None;
        for ch in &clip.channels {
            let at = match last {
                Some((track, at)) if track == ch.track => at,
                _ => {
                    let at = ch.locate(t);
                    last = Some((ch.track, at));
                    at
                }
            };
            let v = match frame.precision {
                Precision::Fast => ch.sample_at(at),
                Precision::Deterministic => ch.sample_portable(at),
            };
            match ch.property {
                Property::Translation => frame.translations[ch.level] = v.truncate(),
                Property::Rotation => frame.rotations[ch.level] = Quat::from_vec4(v),
                Property::Scale => frame.scales[ch.level] = v.truncate(),
            }
        }
        Ok(())
    }

    /// Stage 2: every node's world matrix from the local TRS ([`LocalToModelJob`](crate::LocalToModelJob),
    /// with [`Frame::root`] as its root, identity in [`GltfScene::frame_buffers`]); see
    /// [`Character::local_to_model`].
    ///
    /// # Errors
    /// [`Error::WrongFrame`], [`Error::IsaUnavailable`].
    pub fn local_to_model(&self, frame: &mut Frame) -> Result<(), Error> {
        self.character.local_to_model(frame)
    }

    /// Stage 3: each skin's palette, `world(joint) * inverse_bind(joint)`
    /// ([`PaletteJob`](crate::PaletteJob)); see [`Character::palettes`].
    ///
    /// # Errors
    /// [`Error::WrongFrame`], [`Error::IsaUnavailable`].
    pub fn palettes(&self, frame: &mut Frame) -> Result<(), Error> {
        self.character.palettes(frame)
    }

    /// Stage 4: skins every primitive instance with its skin's palette
    /// ([`SkinningJob`](crate::SkinningJob)); see [`Character::skin`].
    ///
    /// # Errors
    /// [`Error::WrongFrame`], [`Error::AttributeMissing`], [`Error::IsaUnavailable`].
    pub fn skin(&self, frame: &mut Frame) -> Result<(), Error> {
        self.character.skin(frame)
    }

    /// The box of every vertex the skin and rigid stages would write for the frame's palettes and
    /// model matrices, without touching a vertex (for a GPU-skinned scene: call it after
    /// [`GltfScene::palettes`] or [`Character::evaluate_pose`]); see [`Character::pose_bounds`].
    ///
    /// # Errors
    /// [`Error::WrongFrame`]; [`Error::ResultNotFinite`] where finite inputs overflow.
    pub fn pose_bounds(&self, frame: &Frame) -> Result<Option<(Vec3, Vec3)>, Error> {
        self.character.pose_bounds(frame)
    }

    /// Stage 5: every rigid primitive (a mesh on a node without a skin, [`GltfScene::rigid_primitives`]),
    /// morphed by the frame's weights and moved by its node's world matrix; see [`Character::rigid`].
    /// Without it, the rigid parts keep the previous frame's vertices.
    ///
    /// # Errors
    /// [`Error::WrongFrame`], [`Error::IsaUnavailable`].
    pub fn rigid(&self, frame: &mut Frame) -> Result<(), Error> {
        self.character.rigid(frame)
    }
}
