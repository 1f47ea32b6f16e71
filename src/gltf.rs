//! glTF 2.0 characters: import, animation sampling, and a whole frame on the crate's own jobs.
//!
//! [`GltfScene::load`] reads a `.glb`, or a `.gltf` whose buffers are embedded (base64 data URIs) or
//! external files next to it; [`GltfScene::from_slice`] reads the same from bytes. One frame is four
//! stages, each a method that can be called (and timed) on its own, all writing into a reusable
//! [`Frame`] that [`GltfScene::frame_buffers`] allocates once:
//!
//! 1. [`GltfScene::sample`]: the clip (or the rest pose) into local translation, rotation and scale;
//! 2. [`GltfScene::local_to_model`]: [`LocalToModelJob`] over every node of the file, so every node's world
//!    matrix is known, including the non-joint ancestors that move a skin;
//! 3. [`GltfScene::palettes`]: [`PaletteJob`] per skin, `world(joint) * inverse_bind(joint)`;
//! 4. [`GltfScene::skin`]: [`SkinningJob`] per skinned primitive instance.
//!
//! [`GltfScene::evaluate`] runs all four. Every stage takes a [`Backend`], so the same frame runs on the
//! serial reference or on any ISA. After [`GltfScene::frame_buffers`] nothing allocates per frame.
//!
//! ```no_run
//! use ispc_skinning::gltf::{GltfScene, Wrap};
//! use ispc_skinning::Backend;
//!
//! let scene = GltfScene::load("CesiumMan.glb")?;
//! let mut frame = scene.frame_buffers();
//! scene.evaluate(Some(0), 0.5, Wrap::Loop, Backend::Auto, &mut frame)?;
//! for (primitive, out) in scene.primitives().iter().zip(&frame.meshes) {
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
//!   translation, rotation and scale (any shear is lost; the glTF spec allows only decomposable matrices
//!   on animated nodes).
//! - **Skins.** Joints, inverse bind matrices (identity when the accessor is absent) and the optional
//!   `skeleton` root node (informational: the spec defines skinning through world matrices only).
//! - **Skinned primitives.** Every node that has both a mesh and a skin contributes one
//!   [`SkinnedPrimitive`] per mesh primitive, sorted by node index then primitive index, whether or not
//!   the node is in a scene. A mesh instanced on several nodes is prepared once per skin size and shared.
//!   Attributes: POSITION (required), NORMAL, TANGENT, and every JOINTS_n/WEIGHTS_n pair. Vertices with
//!   more than 8 influences (JOINTS_2 and up) keep the heaviest 8, the crate's influence LOD rule; fewer
//!   with [`LoadOptions::max_influences`]. Weights are normalized per vertex by default
//!   ([`LoadOptions::weights`]). Any primitive mode is skinned; [`SkinnedPrimitive::triangles`] lists the
//!   triangles of triangle, strip and fan primitives (empty for points and lines). Mesh nodes without a
//!   skin and morph targets are ignored.
//! - **Skinned output** follows the glTF spec: world space, `world(joint) * inverse_bind(joint)`; the
//!   skinned mesh node's own transform does not apply. Nothing assumes the rest pose is the bind pose.
//! - **Accessors.** Every component type the spec allows is read: u8 and u16 joints; f32, unorm8 and
//!   unorm16 weights (an unsigned weight accessor is read as normalized even when its `normalized` flag is
//!   missing); normalized integer positions, normals, tangents and rotation keys (KHR_mesh_quantization);
//!   u8, u16 and u32 indices. Sparse accessors are applied on top of their base data (or zeros).
//!
//! # Animation
//! Each glTF animation is a [`Clip`] of translation, rotation and scale channels (morph-target weight
//! channels are ignored). A clip spans from its earliest to its latest key time; [`Wrap`] chooses what a
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
//! unit length; a zero-length rotation key means the identity, as everywhere in the crate.
//!
//! # Rules
//! A broken or hostile file is an [`Error::Gltf`] holding a [`GltfError`] that names the rule, never a
//! panic; nothing allocates more than a small multiple of the file's own data:
//! - the bytes are glTF JSON or a GLB container that passes the glTF schema checks
//!   ([`GltfError::Parse`], [`GltfError::Glb`]); `extensionsRequired` lists only KHR_mesh_quantization
//!   and extensions that do not change geometry (materials, textures, lights), so no compression and
//!   nothing unknown ([`GltfError::UnsupportedExtension`]);
//! - every buffer loads: the GLB `BIN` chunk, a base64 data URI, or a relative file next to the `.gltf`,
//!   with at least `byteLength` bytes ([`GltfError::Buffer`]);
//! - buffer views lie inside their buffers ([`GltfError::BufferViewOutOfBounds`]) and accessors inside
//!   their views ([`GltfError::AccessorOutOfBounds`]); the accessors read in one load together hold at
//!   most [`READ_BUDGET_SLACK`] components plus four per byte of the file's buffers, so neither
//!   accessors without a buffer view (implicit zeros) nor many accessors aliasing the same bytes can ask
//!   for more memory than the file backs ([`GltfError::AccessorTooLarge`]); sparse indices name elements
//!   ([`GltfError::SparseIndexOutOfRange`]); each accessor has a type its use allows
//!   ([`GltfError::AccessorFormat`]);
//! - the nodes form a forest: a node has at most one parent ([`GltfError::NodeParents`]) and no node is
//!   its own ancestor ([`GltfError::NodeCycle`]); node transforms are finite ([`GltfError::NodeTransform`]);
//!   there is at least one node ([`GltfError::NoNodes`]);
//! - a skin has an inverse bind matrix per joint, all finite ([`GltfError::InverseBindMatrices`]);
//! - all skinned primitive instances together have at most [`MAX_SKINNED_VERTICES`] vertices, since a
//!   [`Frame`] holds an output per instance ([`GltfError::TooManySkinnedVertices`]);
//! - a skinned primitive has POSITION and paired JOINTS_n/WEIGHTS_n ([`GltfError::MissingAttribute`]),
//!   indices that name vertices ([`GltfError::IndexOutOfRange`]), and passes
//!   [`SkinnedMesh::prepare`] (equal counts, finite non-negative weights, joint indices inside the skin:
//!   [`GltfError::Primitive`] wraps the crate error);
//! - animation key times are finite and strictly increasing ([`GltfError::KeyTimes`]), key values are
//!   finite ([`GltfError::KeyValue`]), and a sampler has at least one key and one output per key, three
//!   for `CUBICSPLINE` ([`GltfError::KeyCount`]);
//! - at evaluation, a clip index names a clip ([`GltfError::ClipOutOfRange`]) and the time is finite
//!   ([`GltfError::TimeNotFinite`]); a [`Frame`] whose vectors were resized is [`Error::CountMismatch`].

use crate::backend::Backend;
use crate::error::Error;
use crate::skeleton::Skeleton;
use crate::Threads;
use crate::{Attribute, MeshInput, PrepareOptions, SkinnedMesh, WeightPolicy, MAX_INFLUENCES};
use crate::{LocalToModelJob, Locals, Trs};
use crate::{PaletteJob, PaletteMatrix};
use crate::{Renormalize, SkinOutput, SkinningJob};
use ::gltf as gltf_crate;
use base64::Engine as _;
use glam::{Mat4, Quat, Vec3, Vec4};
use gltf_crate::accessor::{DataType, Dimensions};
use gltf_crate::animation::{Interpolation as GltfInterpolation, Property as GltfProperty};
use gltf_crate::mesh::{Mode, Semantic};
use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The components (floats or integers) that the accessors of one load may hold beyond four per byte of
/// the file's buffers: 4,194,304, room for accessors without a buffer view (implicit zeros plus sparse
/// values) well beyond real use. Each accessor is counted once, however often it is read, and one stored
/// byte gives at most one component, so four per byte never limits a real file; a hostile file that
/// points many accessors at the same bytes, or declares huge implicit ones, meets the limit instead of
/// exhausting memory.
pub const READ_BUDGET_SLACK: usize = 1 << 22;

/// Most skinned vertices over all [`SkinnedPrimitive`] instances of a file, 16,777,216. A mesh instanced on
/// many nodes costs one output per instance in every [`Frame`] (and distinct meshes over the same
/// accessors one prepared copy each), so a small file could otherwise ask for terabytes; this leaves room
/// for crowds of real characters (five hundred 30,000-vertex instances).
pub const MAX_SKINNED_VERTICES: usize = 1 << 24;

/// What broke a glTF file (or a request against one). Each variant's documentation states the rule.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum GltfError {
    /// Rule: the file (or an external buffer file) can be read.
    Io {
        /// The path.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// Rule: the bytes are glTF 2.0 JSON or GLB whose JSON passes the glTF schema checks (required
    /// fields, valid enums, indices that name existing objects).
    Parse {
        /// The parser's message.
        message: String,
    },
    /// Rule: a GLB header has the magic `glTF`, version 2 and a total length of at least 12 bytes and at
    /// most the data given.
    Glb {
        /// What is wrong.
        reason: &'static str,
    },
    /// Rule: `extensionsRequired` names only extensions this importer honours: KHR_mesh_quantization and
    /// those that do not change geometry (materials, textures, lights).
    UnsupportedExtension {
        /// The extension.
        name: String,
    },
    /// Rule: a buffer is the GLB `BIN` chunk, a base64 data URI, or a relative file next to the `.gltf`,
    /// and holds at least `byteLength` bytes.
    Buffer {
        /// The buffer index.
        buffer: usize,
        /// What is wrong.
        reason: String,
    },
    /// Rule: a buffer view lies inside its buffer.
    BufferViewOutOfBounds {
        /// The buffer view index.
        view: usize,
        /// Its byte offset.
        offset: usize,
        /// Its byte length.
        length: usize,
        /// Bytes in the buffer.
        buffer_length: usize,
    },
    /// Rule: an accessor's elements lie inside its buffer view, and the view's stride is at least an
    /// element.
    AccessorOutOfBounds {
        /// The accessor index.
        accessor: usize,
        /// Its element count.
        count: usize,
        /// Bytes it needs (from the start of the view), when that fits in a `usize`.
        needed: Option<usize>,
        /// Bytes in the view.
        available: usize,
    },
    /// Rule: the accessors read in one load hold at most [`READ_BUDGET_SLACK`] components plus four per
    /// byte of the file's buffers (each accessor counted once).
    AccessorTooLarge {
        /// The accessor whose read passes the budget.
        accessor: usize,
        /// The components it would produce.
        components: usize,
    },
    /// Rule: every sparse index names an element of its accessor.
    SparseIndexOutOfRange {
        /// The accessor index.
        accessor: usize,
        /// The sparse index.
        index: usize,
        /// Elements in the accessor.
        count: usize,
    },
    /// Rule: an accessor has a type and component type that its use allows (for example POSITION is a
    /// VEC3 of f32, JOINTS_n a VEC4 of u8 or u16).
    AccessorFormat {
        /// The accessor index.
        accessor: usize,
        /// What it is used for.
        usage: &'static str,
        /// What it is, for example `VEC2 of u8`.
        found: String,
    },
    /// Rule: a skinned primitive has POSITION, and JOINTS_n and WEIGHTS_n come in pairs from n = 0.
    MissingAttribute {
        /// The mesh index.
        mesh: usize,
        /// The primitive index within the mesh.
        primitive: usize,
        /// The missing attribute.
        attribute: String,
    },
    /// Rule: every index of a primitive's index buffer names a vertex.
    IndexOutOfRange {
        /// The mesh index.
        mesh: usize,
        /// The primitive index within the mesh.
        primitive: usize,
        /// The index value.
        index: u32,
        /// Vertices in the primitive.
        vertices: usize,
    },
    /// Rule: a skinned primitive passes [`SkinnedMesh::prepare`] for its skin (equal attribute counts,
    /// finite non-negative weights with a positive sum, joint indices inside the skin).
    Primitive {
        /// The mesh index.
        mesh: usize,
        /// The primitive index within the mesh.
        primitive: usize,
        /// The skin it was prepared for.
        skin: usize,
        /// The rule it broke.
        error: Box<Error>,
    },
    /// Rule: all skinned primitive instances together have at most [`MAX_SKINNED_VERTICES`] vertices.
    TooManySkinnedVertices {
        /// The total, counted up to the first instance that passes the limit.
        vertices: usize,
    },
    /// Rule: a skin's inverse bind matrices are MAT4 f32, at least one per joint, all finite.
    InverseBindMatrices {
        /// The skin index.
        skin: usize,
        /// What is wrong.
        reason: String,
    },
    /// Rule: a node is the child of at most one node (once).
    NodeParents {
        /// The node.
        node: usize,
        /// The first parent that lists it.
        first: usize,
        /// The second parent that lists it (may equal `first` for a duplicate entry).
        second: usize,
    },
    /// Rule: no node is its own ancestor.
    NodeCycle {
        /// A node on the cycle.
        node: usize,
    },
    /// Rule: a node's translation, rotation, scale or matrix is finite.
    NodeTransform {
        /// The node.
        node: usize,
    },
    /// Rule: a file has at least one node.
    NoNodes,
    /// Rule: animation key times are finite and strictly increasing.
    KeyTimes {
        /// The animation index.
        animation: usize,
        /// The sampler index within it.
        sampler: usize,
        /// The first key that breaks the rule.
        key: usize,
    },
    /// Rule: animation key values (and cubic-spline tangents) are finite.
    KeyValue {
        /// The animation index.
        animation: usize,
        /// The sampler index within it.
        sampler: usize,
        /// The first key that breaks the rule.
        key: usize,
    },
    /// Rule: a sampler has at least one key time and one output per key time, three for `CUBICSPLINE`.
    KeyCount {
        /// The animation index.
        animation: usize,
        /// The sampler index within it.
        sampler: usize,
        /// Key times.
        times: usize,
        /// Output elements.
        values: usize,
    },
    /// Rule: a clip index names a clip of the file.
    ClipOutOfRange {
        /// The index given.
        clip: usize,
        /// Clips in the file.
        clips: usize,
    },
    /// Rule: a sample time is finite.
    TimeNotFinite,
}

impl fmt::Display for GltfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GltfError::Io { path, message } => write!(f, "cannot read '{path}': {message}"),
            GltfError::Parse { message } => write!(f, "not a valid glTF 2.0 file: {message}"),
            GltfError::Glb { reason } => write!(f, "bad GLB container: {reason}"),
            GltfError::UnsupportedExtension { name } => {
                write!(f, "the file requires extension {name}, which this importer does not support")
            }
            GltfError::Buffer { buffer, reason } => write!(f, "buffer {buffer}: {reason}"),
            GltfError::BufferViewOutOfBounds { view, offset, length, buffer_length } => write!(
                f,
                "buffer view {view} ({length} bytes at offset {offset}) does not fit in its {buffer_length}-byte buffer"
            ),
            GltfError::AccessorOutOfBounds { accessor, count, needed, available } => match needed {
                Some(needed) => write!(
                    f,
                    "accessor {accessor} ({count} elements) needs {needed} bytes, but its buffer view has {available}, or its stride is shorter than an element"
                ),
                None => write!(f, "accessor {accessor} ({count} elements) overflows its buffer view"),
            },
            GltfError::AccessorTooLarge { accessor, components } => write!(
                f,
                "reading accessor {accessor} ({components} components) passes the load's budget of {READ_BUDGET_SLACK} components plus four per buffer byte: the file asks for more data than it holds"
            ),
            GltfError::SparseIndexOutOfRange { accessor, index, count } => write!(
                f,
                "accessor {accessor}: sparse index {index} is out of range for its {count} elements"
            ),
            GltfError::AccessorFormat { accessor, usage, found } => {
                write!(f, "accessor {accessor} cannot be used as {usage}: it is a {found}")
            }
            GltfError::MissingAttribute { mesh, primitive, attribute } => {
                write!(f, "mesh {mesh} primitive {primitive}: attribute {attribute} is missing")
            }
            GltfError::IndexOutOfRange { mesh, primitive, index, vertices } => write!(
                f,
                "mesh {mesh} primitive {primitive}: index {index} is out of range for its {vertices} vertices"
            ),
            GltfError::Primitive { mesh, primitive, skin, error } => {
                write!(f, "mesh {mesh} primitive {primitive} (skin {skin}): {error}")
            }
            GltfError::TooManySkinnedVertices { vertices } => write!(
                f,
                "the skinned primitive instances have {vertices} vertices or more; at most {MAX_SKINNED_VERTICES} are allowed"
            ),
            GltfError::InverseBindMatrices { skin, reason } => {
                write!(f, "skin {skin}: inverse bind matrices: {reason}")
            }
            GltfError::NodeParents { node, first, second } => write!(
                f,
                "node {node} is listed as a child by node {first} and again by node {second}; a node has at most one parent"
            ),
            GltfError::NodeCycle { node } => {
                write!(f, "node {node} is its own ancestor: the node hierarchy has a cycle")
            }
            GltfError::NodeTransform { node } => write!(f, "node {node} has a non-finite transform"),
            GltfError::NoNodes => write!(f, "the file has no nodes"),
            GltfError::KeyTimes { animation, sampler, key } => write!(
                f,
                "animation {animation} sampler {sampler}: key time {key} is not finite or not greater than the one before"
            ),
            GltfError::KeyValue { animation, sampler, key } => {
                write!(f, "animation {animation} sampler {sampler}: key {key} has a non-finite value")
            }
            GltfError::KeyCount { animation, sampler, times, values } => write!(
                f,
                "animation {animation} sampler {sampler}: {times} key times and {values} outputs; a sampler needs at least one key and one output per key (three for CUBICSPLINE)"
            ),
            GltfError::ClipOutOfRange { clip, clips } => {
                write!(f, "clip {clip} does not exist: the file has {clips} clips")
            }
            GltfError::TimeNotFinite => write!(f, "the sample time must be finite"),
        }
    }
}

impl From<GltfError> for Error {
    fn from(e: GltfError) -> Error {
        Error::Gltf(e)
    }
}

/// Options of [`GltfScene::load_with`] and [`GltfScene::from_slice_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// Weights that do not sum to 1; [`WeightPolicy::Normalize`] by default (the spec requires a sum of 1,
    /// and quantized weights miss it slightly).
    pub weights: WeightPolicy,
    /// Influence LOD: keep at most this many influences per vertex, the heaviest (1 to 8; 8 by default).
    pub max_influences: usize,
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions {
            weights: WeightPolicy::Normalize,
            max_influences: MAX_INFLUENCES,
        }
    }
}

/// What a time outside a clip's span means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Wrap {
    /// Hold the first key before the clip and the last key after it.
    #[default]
    Clamp,
    /// Repeat the clip: the time is taken modulo the clip's duration, so `end` maps to `start`.
    Loop,
}

/// The node property a channel animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Property {
    /// Translation (VEC3).
    Translation,
    /// Rotation (a quaternion, x y z w).
    Rotation,
    /// Scale (VEC3).
    Scale,
}

/// How a sampler interpolates between keys (the glTF names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// `STEP`.
    Step,
    /// `LINEAR` (slerp for rotations).
    Linear,
    /// `CUBICSPLINE`.
    CubicSpline,
}

/// One animated property of one node.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    node: usize,
    level: usize,
    property: Property,
    interpolation: Interpolation,
    times: Vec<f32>,
    /// Components per key, flattened: 3 (translation, scale) or 4 (rotation) per value, and for
    /// `CUBICSPLINE` three values per key (in-tangent, value, out-tangent).
    values: Vec<f32>,
}

impl Channel {
    /// The glTF node it animates.
    pub fn node(&self) -> usize {
        self.node
    }

    /// The property it animates.
    pub fn property(&self) -> Property {
        self.property
    }

    /// The interpolation.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Key times, strictly increasing.
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    fn components(&self) -> usize {
        match self.property {
            Property::Rotation => 4,
            _ => 3,
        }
    }

    /// The value of key `k` as stored (rotation keys of `STEP` and `LINEAR` samplers normalized), padded
    /// with zeros to four components; `None` past the last key.
    pub fn key_value(&self, k: usize) -> Option<[f32; 4]> {
        let c = self.components();
        let (stride, offset) = match self.interpolation {
            Interpolation::CubicSpline => (3 * c, c),
            _ => (c, 0),
        };
        let start = k.checked_mul(stride)?.checked_add(offset)?;
        let v = self.values.get(start..start + c)?;
        let mut out = [0.0; 4];
        out[..c].copy_from_slice(v);
        Some(out)
    }

    /// The value at time `t` (see the module docs), padded with zeros to four components.
    pub fn sample(&self, t: f32) -> [f32; 4] {
        let c = self.components();
        let n = self.times.len();
        let key = |k: usize| self.key_value(k).unwrap_or([0.0; 4]);
        // A channel has at least one key (checked when loaded).
        let (Some(&first), Some(&last)) = (self.times.first(), self.times.last()) else {
            return [0.0; 4];
        };
        if t.is_nan() || t <= first {
            return key(0);
        }
        if t >= last {
            return key(n - 1);
        }
        // times[k] <= t < times[k + 1], with 0 <= k < n - 1 because first < t < last.
        let k = self.times.partition_point(|&x| x <= t).saturating_sub(1);
        let (t0, t1) = (self.times[k], self.times[k + 1]);
        let dt = t1 - t0;
        let u = (t - t0) / dt;
        match self.interpolation {
            Interpolation::Step => key(k),
            Interpolation::Linear if u == 0.0 => key(k),
            Interpolation::Linear => {
                let (a, b) = (key(k), key(k + 1));
                if self.property == Property::Rotation {
                    slerp(Quat::from_array(a), Quat::from_array(b), u).to_array()
                } else {
                    std::array::from_fn(|i| (1.0 - u) * a[i] + u * b[i])
                }
            }
            Interpolation::CubicSpline => {
                let s = 3 * c;
                let get = |k: usize, part: usize, i: usize| {
                    if i < c {
                        self.values[k * s + part * c + i]
                    } else {
                        0.0
                    }
                };
                let (u2, u3) = (u * u, u * u * u);
                let h00 = 2.0 * u3 - 3.0 * u2 + 1.0;
                let h10 = u3 - 2.0 * u2 + u;
                let h01 = -2.0 * u3 + 3.0 * u2;
                let h11 = u3 - u2;
                let out: [f32; 4] = std::array::from_fn(|i| {
                    h00 * get(k, 1, i)
                        + h10 * dt * get(k, 2, i)
                        + h01 * get(k + 1, 1, i)
                        + h11 * dt * get(k + 1, 0, i)
                });
                if self.property == Property::Rotation {
                    unit(Quat::from_array(out)).to_array()
                } else {
                    out
                }
            }
        }
    }
}

/// `q / |q|`, or the identity for a zero (or non-finite) length, the crate's quaternion policy.
fn unit(q: Quat) -> Quat {
    let len = q.length();
    if len > 0.0 && len.is_finite() {
        q.normalize()
    } else {
        Quat::IDENTITY
    }
}

/// Spherical interpolation along the shorter arc, normalized; a normalized lerp for nearly equal keys,
/// where slerp's division by sin(angle) loses precision.
fn slerp(a: Quat, b: Quat, u: f32) -> Quat {
    let mut d = a.dot(b);
    let b = if d < 0.0 {
        d = -d;
        -b
    } else {
        b
    };
    if d > 0.9995 {
        return unit(a * (1.0 - u) + b * u);
    }
    let theta = d.min(1.0).acos();
    let s = theta.sin();
    let wa = ((1.0 - u) * theta).sin() / s;
    let wb = (u * theta).sin() / s;
    unit(a * wa + b * wb)
}

/// One glTF animation.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    name: Option<String>,
    start: f32,
    end: f32,
    channels: Vec<Channel>,
}

impl Clip {
    /// The animation's name, when it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The earliest key time of any channel (0 for a clip without channels).
    pub fn start(&self) -> f32 {
        self.start
    }

    /// The latest key time of any channel (0 for a clip without channels).
    pub fn end(&self) -> f32 {
        self.end
    }

    /// `end - start`.
    pub fn duration(&self) -> f32 {
        self.end - self.start
    }

    /// The translation, rotation and scale channels (morph-target weight channels are not kept).
    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    /// The time that is sampled for `t`: clamped into the span, or wrapped into `[start, end)`.
    pub fn wrap_time(&self, t: f32, wrap: Wrap) -> f32 {
        let span = self.end - self.start;
        match wrap {
            Wrap::Clamp => t.clamp(self.start, self.end),
            Wrap::Loop if span > 0.0 => {
                let w = self.start + (t - self.start).rem_euclid(span);
                // Rounding can land exactly on `end` for times just below a multiple of the span.
                if w >= self.end {
                    self.start
                } else {
                    w
                }
            }
            Wrap::Loop => self.start,
        }
    }
}

/// One glTF skin.
#[derive(Clone, Debug, PartialEq)]
pub struct Skin {
    name: Option<String>,
    joints: Vec<usize>,
    joint_levels: Vec<u32>,
    inverse_binds: Vec<Mat4>,
    skeleton: Option<usize>,
}

impl Skin {
    /// The skin's name, when it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The joints as glTF node indices; palette entry i belongs to node `joints()[i]`.
    pub fn joints(&self) -> &[usize] {
        &self.joints
    }

    /// The joints as level-order indices of [`GltfScene::skeleton`] (the palette job's joint remap).
    pub fn joint_levels(&self) -> &[u32] {
        &self.joint_levels
    }

    /// One inverse bind matrix per joint (identity when the file gives none).
    pub fn inverse_binds(&self) -> &[Mat4] {
        &self.inverse_binds
    }

    /// The `skeleton` root node the file names, if any.
    pub fn skeleton_root(&self) -> Option<usize> {
        self.skeleton
    }
}

/// The bind-pose data of one mesh primitive, prepared for one skin size (shared by its instances).
#[derive(Debug)]
struct PrimitiveData {
    mesh: SkinnedMesh,
    positions: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
}

/// One skinned primitive on one node: what a [`Frame`] holds skinned vertices for.
#[derive(Clone, Debug)]
pub struct SkinnedPrimitive {
    node: usize,
    mesh: usize,
    primitive: usize,
    skin: usize,
    data: Arc<PrimitiveData>,
}

impl SkinnedPrimitive {
    /// The glTF node that instances the mesh.
    pub fn node(&self) -> usize {
        self.node
    }

    /// The glTF mesh index.
    pub fn mesh(&self) -> usize {
        self.mesh
    }

    /// The primitive index within the mesh.
    pub fn primitive(&self) -> usize {
        self.primitive
    }

    /// The skin index (the node's skin).
    pub fn skin(&self) -> usize {
        self.skin
    }

    /// The prepared mesh the skinning job runs on.
    pub fn skinned_mesh(&self) -> &SkinnedMesh {
        &self.data.mesh
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.data.positions.len()
    }

    /// The bind-pose positions as stored in the file (mesh space).
    pub fn bind_positions(&self) -> &[Vec3] {
        &self.data.positions
    }

    /// Triangles as vertex indices (from the index buffer, or implicit), for triangle lists, strips and
    /// fans; empty for points and lines. Every index is below [`SkinnedPrimitive::vertex_count`].
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.data.triangles
    }
}

/// Skinned vertices of one [`SkinnedPrimitive`], world space, in the file's vertex order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinnedVertices {
    /// Positions.
    pub positions: Vec<Vec3>,
    /// Normals, when the primitive has them.
    pub normals: Option<Vec<Vec3>>,
    /// Tangents (w = handedness), when the primitive has them.
    pub tangents: Option<Vec<Vec4>>,
}

/// Everything one frame writes, allocated once by [`GltfScene::frame_buffers`] and reused.
///
/// The per-node vectors are in the level order of [`GltfScene::skeleton`]. Between stages they may be
/// edited (for example to pose nodes by hand before [`GltfScene::palettes`]), but not resized.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Local translation of every node (level order).
    pub translations: Vec<Vec3>,
    /// Local rotation of every node (level order).
    pub rotations: Vec<Quat>,
    /// Local scale of every node (level order).
    pub scales: Vec<Vec3>,
    /// World matrix of every node (level order).
    pub models: Vec<Mat4>,
    /// One palette per skin, one entry per joint.
    pub palettes: Vec<Vec<PaletteMatrix>>,
    /// One output per [`GltfScene::primitives`] entry.
    pub meshes: Vec<SkinnedVertices>,
    /// Renormalization of skinned normals and tangents; [`Renormalize::Precise`] by default.
    pub renormalize: Renormalize,
    /// Threads of the skinning job; [`Threads::One`] by default.
    pub threads: Threads,
}

/// A loaded glTF file: its node hierarchy, skins, skinned primitives and clips.
#[derive(Clone, Debug)]
pub struct GltfScene {
    skeleton: Skeleton,
    node_names: Vec<Option<String>>,
    rest_translations: Vec<Vec3>,
    rest_rotations: Vec<Quat>,
    rest_scales: Vec<Vec3>,
    skins: Vec<Skin>,
    primitives: Vec<SkinnedPrimitive>,
    clips: Vec<Clip>,
}

impl GltfScene {
    /// Loads a `.glb` or `.gltf` file with default options; external buffers are read relative to it.
    ///
    /// # Errors
    /// [`Error::Gltf`] naming the broken rule (see the module docs).
    pub fn load(path: impl AsRef<Path>) -> Result<GltfScene, Error> {
        GltfScene::load_with(path, &LoadOptions::default())
    }

    /// Loads a `.glb` or `.gltf` file.
    ///
    /// # Errors
    /// [`Error::Gltf`] naming the broken rule (see the module docs).
    pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<GltfScene, Error> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| GltfError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
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
    /// [`Error::Gltf`] naming the broken rule (see the module docs).
    pub fn from_slice_with(
        bytes: &[u8],
        base_dir: Option<&Path>,
        options: &LoadOptions,
    ) -> Result<GltfScene, Error> {
        check_glb_header(bytes)?;
        let parse = |message: String| GltfError::Parse { message };
        let (json, blob) = if bytes.starts_with(b"glTF") {
            let glb = gltf_crate::Glb::from_slice(bytes).map_err(|e| parse(e.to_string()))?;
            (glb.json, glb.bin)
        } else {
            (bytes.into(), None)
        };
        let mut root =
            gltf_crate::json::Root::from_slice(&json).map_err(|e| parse(e.to_string()))?;
        // The gltf crate's validation rejects every required extension it does not itself implement,
        // including ones that change nothing here; this importer decides instead, then validates.
        if let Some(name) = root
            .extensions_required
            .iter()
            .find(|name| !extension_is_harmless(name))
        {
            return Err(GltfError::UnsupportedExtension { name: name.clone() }.into());
        }
        root.extensions_required.clear();
        let document = gltf_crate::Document::from_json(root).map_err(|e| parse(e.to_string()))?;
        let buffers = load_buffers(&document, blob.as_deref(), base_dir)?;
        let bytes: usize = buffers.iter().map(Vec::len).sum();
        let reader = Reader {
            doc: &document,
            buffers: &buffers,
            budget: std::cell::Cell::new(bytes.saturating_mul(4).saturating_add(READ_BUDGET_SLACK)),
            charged: Default::default(),
        };
        build_scene(&reader, options)
    }

    /// The hierarchy of every node of the file, in level order.
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// Number of nodes in the file.
    pub fn node_count(&self) -> usize {
        self.skeleton.len()
    }

    /// The level-order index of a glTF node (the index into a [`Frame`]'s per-node vectors).
    pub fn level_index(&self, node: usize) -> Option<usize> {
        self.skeleton.level_index(node)
    }

    /// The name of a glTF node, when it has one.
    pub fn node_name(&self, node: usize) -> Option<&str> {
        self.node_names.get(node)?.as_deref()
    }

    /// The skins.
    pub fn skins(&self) -> &[Skin] {
        &self.skins
    }

    /// The skinned primitive instances, sorted by node index then primitive index.
    pub fn primitives(&self) -> &[SkinnedPrimitive] {
        &self.primitives
    }

    /// The animation clips, in file order.
    pub fn clips(&self) -> &[Clip] {
        &self.clips
    }

    /// The index of the first clip with this name.
    pub fn find_clip(&self, name: &str) -> Option<usize> {
        self.clips.iter().position(|c| c.name() == Some(name))
    }

    /// The rest pose of a glTF node (its TRS in the file): translation, rotation, scale.
    pub fn rest_pose(&self, node: usize) -> Option<(Vec3, Quat, Vec3)> {
        let l = self.level_index(node)?;
        Some((
            self.rest_translations[l],
            self.rest_rotations[l],
            self.rest_scales[l],
        ))
    }

    /// The world matrix of a glTF node in a frame (after [`GltfScene::local_to_model`]).
    pub fn world_matrix(&self, frame: &Frame, node: usize) -> Option<Mat4> {
        frame.models.get(self.level_index(node)?).copied()
    }

    /// Buffers for one frame, sized for this scene: the rest pose, identity matrices and zeroed vertices.
    pub fn frame_buffers(&self) -> Frame {
        let n = self.node_count();
        Frame {
            translations: self.rest_translations.clone(),
            rotations: self.rest_rotations.clone(),
            scales: self.rest_scales.clone(),
            models: vec![Mat4::IDENTITY; n],
            palettes: self
                .skins
                .iter()
                .map(|s| vec![PaletteMatrix::IDENTITY; s.joints.len()])
                .collect(),
            meshes: self
                .primitives
                .iter()
                .map(|p| {
                    let v = p.vertex_count();
                    let mesh = &p.data.mesh;
                    SkinnedVertices {
                        positions: vec![Vec3::ZERO; v],
                        normals: mesh.has_normals().then(|| vec![Vec3::ZERO; v]),
                        tangents: mesh.has_tangents().then(|| vec![Vec4::ZERO; v]),
                    }
                })
                .collect(),
            renormalize: Renormalize::Precise,
            threads: Threads::One,
        }
    }

    /// One whole frame: [`sample`](GltfScene::sample), [`local_to_model`](GltfScene::local_to_model),
    /// [`palettes`](GltfScene::palettes), then [`skin`](GltfScene::skin). `clip: None` is the rest pose.
    ///
    /// # Errors
    /// [`GltfError::ClipOutOfRange`], [`GltfError::TimeNotFinite`], [`Error::IsaUnavailable`] for an ISA
    /// that cannot run, and [`Error::CountMismatch`] for a frame of another scene or one that was resized.
    pub fn evaluate(
        &self,
        clip: Option<usize>,
        time: f32,
        wrap: Wrap,
        backend: Backend,
        frame: &mut Frame,
    ) -> Result<(), Error> {
        self.sample(clip, time, wrap, frame)?;
        self.local_to_model(backend, frame)?;
        self.palettes(backend, frame)?;
        self.skin(backend, frame)
    }

    /// Stage 1: writes every node's local TRS, the rest pose overwritten by the clip's channels at `time`
    /// (after `wrap`). `clip: None` writes the rest pose.
    ///
    /// # Errors
    /// [`GltfError::ClipOutOfRange`], [`GltfError::TimeNotFinite`], [`Error::CountMismatch`].
    pub fn sample(
        &self,
        clip: Option<usize>,
        time: f32,
        wrap: Wrap,
        frame: &mut Frame,
    ) -> Result<(), Error> {
        let n = self.node_count();
        self.skeleton
            .check_count("frame translations", frame.translations.len())?;
        self.skeleton
            .check_count("frame rotations", frame.rotations.len())?;
        self.skeleton
            .check_count("frame scales", frame.scales.len())?;
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
        frame.translations[..n].copy_from_slice(&self.rest_translations);
        frame.rotations[..n].copy_from_slice(&self.rest_rotations);
        frame.scales[..n].copy_from_slice(&self.rest_scales);
        let Some(clip) = clip else { return Ok(()) };
        let t = clip.wrap_time(time, wrap);
        for ch in &clip.channels {
            let v = ch.sample(t);
            match ch.property {
                Property::Translation => frame.translations[ch.level] = Vec3::new(v[0], v[1], v[2]),
                Property::Rotation => frame.rotations[ch.level] = Quat::from_array(v),
                Property::Scale => frame.scales[ch.level] = Vec3::new(v[0], v[1], v[2]),
            }
        }
        Ok(())
    }

    /// Stage 2: every node's world matrix from the local TRS ([`LocalToModelJob`], identity root).
    ///
    /// # Errors
    /// [`Error::CountMismatch`], [`Error::IsaUnavailable`].
    pub fn local_to_model(&self, backend: Backend, frame: &mut Frame) -> Result<(), Error> {
        let Frame {
            translations,
            rotations,
            scales,
            models,
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
        job.backend = backend;
        job.run().map(|_| ())
    }

    /// Stage 3: each skin's palette, `world(joint) * inverse_bind(joint)` ([`PaletteJob`]).
    ///
    /// # Errors
    /// [`Error::CountMismatch`], [`Error::IsaUnavailable`].
    pub fn palettes(&self, backend: Backend, frame: &mut Frame) -> Result<(), Error> {
        check_len("frame palettes", self.skins.len(), frame.palettes.len())?;
        for (skin, palette) in self.skins.iter().zip(&mut frame.palettes) {
            let mut job = PaletteJob::new(&frame.models, &skin.inverse_binds, palette);
            job.joints = Some(&skin.joint_levels);
            job.backend = backend;
            job.run()?;
        }
        Ok(())
    }

    /// Stage 4: skins every primitive instance with its skin's palette ([`SkinningJob`]).
    ///
    /// # Errors
    /// [`Error::CountMismatch`], [`Error::AttributeMissing`], [`Error::IsaUnavailable`].
    pub fn skin(&self, backend: Backend, frame: &mut Frame) -> Result<(), Error> {
        check_len("frame meshes", self.primitives.len(), frame.meshes.len())?;
        check_len("frame palettes", self.skins.len(), frame.palettes.len())?;
        for (p, out) in self.primitives.iter().zip(&mut frame.meshes) {
            let mut job = SkinningJob::new(
                &p.data.mesh,
                &frame.palettes[p.skin],
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
}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), Error> {
    if expected == got {
        Ok(())
    } else {
        Err(Error::CountMismatch {
            what,
            expected,
            got,
        })
    }
}

/// Whether a required extension can be honoured: KHR_mesh_quantization is read (normalized integer
/// attributes and keys); material, texture and light extensions do not change skinned geometry. Geometry
/// compression (Draco, meshopt) and anything unknown cannot be.
fn extension_is_harmless(name: &str) -> bool {
    name == "KHR_mesh_quantization"
        || name.starts_with("KHR_materials_")
        || name.starts_with("KHR_texture_")
        || matches!(
            name,
            "KHR_lights_punctual" | "EXT_texture_webp" | "MSFT_texture_dds" | "EXT_texture_avif"
        )
}

/// The glTF crate's GLB parser subtracts the header size from the declared length without checking it,
/// so the header is checked here first.
fn check_glb_header(bytes: &[u8]) -> Result<(), GltfError> {
    if !bytes.starts_with(b"glTF") {
        return Ok(());
    }
    let word = |i: usize| {
        bytes
            .get(i..i + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let (Some(version), Some(length)) = (word(4), word(8)) else {
        return Err(GltfError::Glb {
            reason: "the 12-byte header is truncated",
        });
    };
    if version != 2 {
        return Err(GltfError::Glb {
            reason: "only GLB version 2 is supported",
        });
    }
    if length < 12 || length > bytes.len() {
        return Err(GltfError::Glb {
            reason: "the declared length is shorter than the header or longer than the data",
        });
    }
    Ok(())
}

/// Loads every buffer's bytes, cut to its declared `byteLength`.
fn load_buffers(
    doc: &gltf_crate::Document,
    blob: Option<&[u8]>,
    base_dir: Option<&Path>,
) -> Result<Vec<Vec<u8>>, GltfError> {
    let mut out = Vec::new();
    for buffer in doc.buffers() {
        let index = buffer.index();
        let err = |reason: String| GltfError::Buffer {
            buffer: index,
            reason,
        };
        let length = buffer.length();
        let mut data = match buffer.source() {
            gltf_crate::buffer::Source::Bin => blob
                .ok_or_else(|| err("it refers to the GLB BIN chunk, which is missing".into()))?
                .get(..length)
                .ok_or_else(|| err(format!("the BIN chunk is shorter than byteLength {length}")))?
                .to_vec(),
            gltf_crate::buffer::Source::Uri(uri) if uri.starts_with("data:") => {
                let (_, payload) = uri
                    .split_once(";base64,")
                    .ok_or_else(|| err("only base64 data URIs are supported".into()))?;
                base64::engine::general_purpose::STANDARD
                    .decode(payload)
                    .map_err(|e| err(format!("bad base64 data URI: {e}")))?
            }
            gltf_crate::buffer::Source::Uri(uri) => {
                let path = external_path(uri, base_dir).map_err(|r| err(r.to_string()))?;
                read_external(&path, length).map_err(err)?
            }
        };
        if data.len() < length {
            return Err(err(format!(
                "it holds {} bytes, fewer than its byteLength {length}",
                data.len()
            )));
        }
        data.truncate(length);
        out.push(data);
    }
    Ok(out)
}

/// The file an external buffer URI names: relative, no scheme, percent-decoded, under `base_dir`.
fn external_path(uri: &str, base_dir: Option<&Path>) -> Result<PathBuf, &'static str> {
    let base = base_dir.ok_or(
        "it is an external file, and a glTF loaded from bytes without a directory cannot read one",
    )?;
    let scheme = uri
        .split_once(':')
        .is_some_and(|(s, _)| !s.is_empty() && !s.contains('/'));
    if scheme {
        return Err("only data URIs and relative file paths are supported");
    }
    let decoded = percent_decode(uri).ok_or("the URI has a bad percent escape")?;
    let relative = Path::new(&decoded);
    if relative.is_absolute() {
        return Err("an external buffer path must be relative to the .gltf file");
    }
    Ok(base.join(relative))
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Reads at most `length` bytes of a regular file: a URI naming a device such as `/dev/zero` or a file
/// far longer than declared cannot make the loader read without end.
fn read_external(path: &Path, length: usize) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open '{shown}': {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read '{shown}': {e}"))?;
    if !meta.is_file() {
        return Err(format!("'{shown}' is not a regular file"));
    }
    let mut data = Vec::new();
    file.take(length as u64)
        .read_to_end(&mut data)
        .map_err(|e| format!("cannot read '{shown}': {e}"))?;
    Ok(data)
}

/// Reads accessors out of the loaded buffers, checking every bound first.
struct Reader<'a> {
    doc: &'a gltf_crate::Document,
    buffers: &'a [Vec<u8>],
    /// Components the accessors of this load may still hold (see [`READ_BUDGET_SLACK`]).
    budget: std::cell::Cell<usize>,
    /// Accessors already counted against the budget.
    charged: std::cell::RefCell<std::collections::HashSet<usize>>,
}

fn type_name(d: Dimensions) -> &'static str {
    match d {
        Dimensions::Scalar => "SCALAR",
        Dimensions::Vec2 => "VEC2",
        Dimensions::Vec3 => "VEC3",
        Dimensions::Vec4 => "VEC4",
        Dimensions::Mat2 => "MAT2",
        Dimensions::Mat3 => "MAT3",
        Dimensions::Mat4 => "MAT4",
    }
}

fn component_name(t: DataType) -> &'static str {
    match t {
        DataType::I8 => "i8",
        DataType::U8 => "u8",
        DataType::I16 => "i16",
        DataType::U16 => "u16",
        DataType::U32 => "u32",
        DataType::F32 => "f32",
    }
}

/// One component as f32, with the spec's normalization of integer types.
fn component_f32(t: DataType, normalized: bool, b: &[u8]) -> f32 {
    match t {
        DataType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        DataType::U8 if normalized => b[0] as f32 / 255.0,
        DataType::U8 => b[0] as f32,
        DataType::I8 if normalized => (b[0] as i8 as f32 / 127.0).max(-1.0),
        DataType::I8 => b[0] as i8 as f32,
        DataType::U16 if normalized => u16::from_le_bytes([b[0], b[1]]) as f32 / 65535.0,
        DataType::U16 => u16::from_le_bytes([b[0], b[1]]) as f32,
        DataType::I16 if normalized => {
            (i16::from_le_bytes([b[0], b[1]]) as f32 / 32767.0).max(-1.0)
        }
        DataType::I16 => i16::from_le_bytes([b[0], b[1]]) as f32,
        DataType::U32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
    }
}

/// One unsigned integer component (indices, joints); only called for u8, u16 and u32 accessors.
fn component_u32(t: DataType, b: &[u8]) -> u32 {
    match t {
        DataType::U8 => b[0] as u32,
        DataType::U16 => u16::from_le_bytes([b[0], b[1]]) as u32,
        _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
    }
}

impl Reader<'_> {
    /// The bytes of a buffer view, checked against its buffer.
    fn view_bytes(&self, view: &gltf_crate::buffer::View<'_>) -> Result<&[u8], GltfError> {
        let buffer = self
            .buffers
            .get(view.buffer().index())
            .map_or(&[][..], Vec::as_slice);
        let (offset, length) = (view.offset(), view.length());
        offset
            .checked_add(length)
            .and_then(|end| buffer.get(offset..end))
            .ok_or(GltfError::BufferViewOutOfBounds {
                view: view.index(),
                offset,
                length,
                buffer_length: buffer.len(),
            })
    }

    /// Checks an accessor's type against what its use allows.
    fn check_format(
        &self,
        acc: &gltf_crate::Accessor<'_>,
        usage: &'static str,
        dims: &[Dimensions],
        types: &[DataType],
    ) -> Result<(), GltfError> {
        if dims.contains(&acc.dimensions()) && types.contains(&acc.data_type()) {
            Ok(())
        } else {
            Err(GltfError::AccessorFormat {
                accessor: acc.index(),
                usage,
                found: format!(
                    "{} of {}",
                    type_name(acc.dimensions()),
                    component_name(acc.data_type())
                ),
            })
        }
    }

    /// Every component of an accessor (count x components, row after row), dense data first, then the
    /// sparse substitutions. `convert` turns one component's bytes into a value.
    fn read<T: Copy + Default>(
        &self,
        acc: &gltf_crate::Accessor<'_>,
        convert: impl Fn(DataType, &[u8]) -> T,
    ) -> Result<Vec<T>, GltfError> {
        let t = acc.data_type();
        let comps = acc.dimensions().multiplicity();
        let csize = t.size();
        let esize = csize * comps;
        let count = acc.count();
        let out_of_bounds =
            |needed: Option<usize>, available: usize| GltfError::AccessorOutOfBounds {
                accessor: acc.index(),
                count,
                needed,
                available,
            };
        let components = count.saturating_mul(comps);
        // Counts the accessor against the load's budget, once, before anything is allocated for it.
        let charge = || {
            let mut charged = self.charged.borrow_mut();
            if charged.contains(&acc.index()) {
                return Ok(());
            }
            let left = self.budget.get();
            if components > left {
                return Err(GltfError::AccessorTooLarge {
                    accessor: acc.index(),
                    components,
                });
            }
            self.budget.set(left - components);
            charged.insert(acc.index());
            Ok(())
        };
        let mut out = match acc.view() {
            Some(view) => {
                let data = self.view_bytes(&view)?;
                let stride = view.stride().unwrap_or(esize);
                let offset = acc.offset();
                let needed = match count {
                    0 => Some(0),
                    n => (n - 1)
                        .checked_mul(stride)
                        .and_then(|x| x.checked_add(offset))
                        .and_then(|x| x.checked_add(esize)),
                };
                match needed {
                    Some(needed) if stride >= esize && needed <= data.len() => {}
                    _ => return Err(out_of_bounds(needed, data.len())),
                }
                // The check above bounds count by the data, and the budget bounds repeated views of it.
                charge()?;
                let mut out = Vec::with_capacity(components);
                for i in 0..count {
                    let base = offset + i * stride;
                    for c in 0..comps {
                        let at = base + c * csize;
                        out.push(convert(t, &data[at..at + csize]));
                    }
                }
                out
            }
            // Implicit zeros: only the budget bounds them.
            None => {
                charge()?;
                vec![T::default(); components]
            }
        };
        if let Some(sparse) = self
            .doc
            .as_json()
            .accessors
            .get(acc.index())
            .and_then(|a| a.sparse.as_ref())
        {
            let n = sparse.count.0 as usize;
            let index_type = match sparse.indices.component_type {
                gltf_crate::json::validation::Checked::Valid(c) => c.0,
                gltf_crate::json::validation::Checked::Invalid => DataType::U32,
            };
            let isize = index_type.size();
            let views = |i: usize| self.doc.views().nth(i);
            let (Some(iview), Some(vview)) = (
                views(sparse.indices.buffer_view.value()),
                views(sparse.values.buffer_view.value()),
            ) else {
                return Err(GltfError::Parse {
                    message: format!(
                        "accessor {}: a sparse buffer view does not exist",
                        acc.index()
                    ),
                });
            };
            let idata = self.view_bytes(&iview)?;
            let vdata = self.view_bytes(&vview)?;
            let ioff = sparse.indices.byte_offset.0 as usize;
            let voff = sparse.values.byte_offset.0 as usize;
            let ineed = n.checked_mul(isize).and_then(|x| x.checked_add(ioff));
            let vneed = n.checked_mul(esize).and_then(|x| x.checked_add(voff));
            if ineed.is_none_or(|x| x > idata.len()) {
                return Err(out_of_bounds(ineed, idata.len()));
            }
            if vneed.is_none_or(|x| x > vdata.len()) {
                return Err(out_of_bounds(vneed, vdata.len()));
            }
            for s in 0..n {
                let at = ioff + s * isize;
                let index = component_u32(index_type, &idata[at..at + isize]) as usize;
                if index >= count {
                    return Err(GltfError::SparseIndexOutOfRange {
                        accessor: acc.index(),
                        index,
                        count,
                    });
                }
                for c in 0..comps {
                    let at = voff + s * esize + c * csize;
                    out[index * comps + c] = convert(t, &vdata[at..at + csize]);
                }
            }
        }
        Ok(out)
    }

    fn floats(&self, acc: &gltf_crate::Accessor<'_>) -> Result<Vec<f32>, GltfError> {
        let normalized = acc.normalized();
        self.read(acc, |t, b| component_f32(t, normalized, b))
    }

    /// A VEC3 attribute (positions, normals) as f32 or normalized integers.
    fn vec3s(
        &self,
        acc: &gltf_crate::Accessor<'_>,
        usage: &'static str,
        types: &[DataType],
    ) -> Result<Vec<Vec3>, GltfError> {
        self.check_format(acc, usage, &[Dimensions::Vec3], types)?;
        let f = self.floats(acc)?;
        Ok(f.chunks_exact(3)
            .map(|c| Vec3::new(c[0], c[1], c[2]))
            .collect())
    }
}

const FLOATS_AND_NORMALIZED: [DataType; 5] = [
    DataType::F32,
    DataType::I8,
    DataType::U8,
    DataType::I16,
    DataType::U16,
];
const SIGNED_FLOATS: [DataType; 3] = [DataType::F32, DataType::I8, DataType::I16];

/// Everything after the buffers: nodes, skins, primitives and clips.
fn build_scene(r: &Reader<'_>, options: &LoadOptions) -> Result<GltfScene, Error> {
    let doc = r.doc;
    let n = doc.nodes().len();
    if n == 0 {
        return Err(GltfError::NoNodes.into());
    }
    let mut parents: Vec<Option<usize>> = vec![None; n];
    let mut translations = Vec::with_capacity(n);
    let mut rotations = Vec::with_capacity(n);
    let mut scales = Vec::with_capacity(n);
    let mut names = Vec::with_capacity(n);
    for node in doc.nodes() {
        let p = node.index();
        for child in node.children() {
            let c = child.index();
            if c == p {
                return Err(GltfError::NodeCycle { node: c }.into());
            }
            if let Some(first) = parents[c] {
                return Err(GltfError::NodeParents {
                    node: c,
                    first,
                    second: p,
                }
                .into());
            }
            parents[c] = Some(p);
        }
        let (t, q, s) = match node.transform() {
            gltf_crate::scene::Transform::Matrix { matrix } => {
                let m = Mat4::from_cols_array_2d(&matrix);
                if !m.is_finite() {
                    return Err(GltfError::NodeTransform { node: p }.into());
                }
                let (s, q, t) = m.to_scale_rotation_translation();
                // A singular matrix has no rotation to recover; its scale already collapses the node.
                let q = if q.is_finite() { q } else { Quat::IDENTITY };
                (t, q, s)
            }
            gltf_crate::scene::Transform::Decomposed {
                translation,
                rotation,
                scale,
            } => (
                Vec3::from_array(translation),
                Quat::from_array(rotation),
                Vec3::from_array(scale),
            ),
        };
        if !(t.is_finite() && q.is_finite() && s.is_finite()) {
            return Err(GltfError::NodeTransform { node: p }.into());
        }
        translations.push(t);
        rotations.push(q);
        scales.push(s);
        names.push(node.name().map(str::to_string));
    }
    let skeleton = Skeleton::from_parents(&parents).map_err(|e| match e {
        Error::Cycle { joint } | Error::SelfParent { joint } => {
            Error::Gltf(GltfError::NodeCycle { node: joint })
        }
        other => other,
    })?;
    let level = |node: usize| skeleton.level_index(node).unwrap_or(0);

    let mut skins = Vec::new();
    for skin in doc.skins() {
        let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
        let inverse_binds = match skin.inverse_bind_matrices() {
            Some(acc) => {
                let bad = |reason: String| GltfError::InverseBindMatrices {
                    skin: skin.index(),
                    reason,
                };
                r.check_format(
                    &acc,
                    "inverse bind matrices",
                    &[Dimensions::Mat4],
                    &[DataType::F32],
                )?;
                let f = r.floats(&acc)?;
                if acc.count() < joints.len() {
                    return Err(bad(format!(
                        "{} matrices for {} joints",
                        acc.count(),
                        joints.len()
                    ))
                    .into());
                }
                let m: Vec<Mat4> = f
                    .chunks_exact(16)
                    .take(joints.len())
                    .map(Mat4::from_cols_slice)
                    .collect();
                if let Some(j) = m.iter().position(|m| !m.is_finite()) {
                    return Err(bad(format!("the matrix of joint {j} is not finite")).into());
                }
                m
            }
            None => vec![Mat4::IDENTITY; joints.len()],
        };
        skins.push(Skin {
            name: skin.name().map(str::to_string),
            joint_levels: joints.iter().map(|&j| level(j) as u32).collect(),
            joints,
            inverse_binds,
            skeleton: skin.skeleton().map(|s| s.index()),
        });
    }

    let mut primitives = Vec::new();
    let mut prepared: HashMap<(usize, usize, usize), Arc<PrimitiveData>> = HashMap::new();
    let mut total_vertices = 0usize;
    for node in doc.nodes() {
        let (Some(mesh), Some(skin)) = (node.mesh(), node.skin()) else {
            continue;
        };
        let joint_count = skins[skin.index()].joints.len();
        for prim in mesh.primitives() {
            let key = (mesh.index(), prim.index(), joint_count);
            let data = match prepared.get(&key) {
                Some(d) => d.clone(),
                None => {
                    let d = Arc::new(read_primitive(
                        r,
                        &prim,
                        mesh.index(),
                        skin.index(),
                        joint_count,
                        options,
                    )?);
                    prepared.insert(key, d.clone());
                    d
                }
            };
            total_vertices += data.positions.len();
            if total_vertices > MAX_SKINNED_VERTICES {
                return Err(GltfError::TooManySkinnedVertices {
                    vertices: total_vertices,
                }
                .into());
            }
            primitives.push(SkinnedPrimitive {
                node: node.index(),
                mesh: mesh.index(),
                primitive: prim.index(),
                skin: skin.index(),
                data,
            });
        }
    }

    let mut clips = Vec::new();
    for anim in doc.animations() {
        clips.push(read_clip(r, &anim, &level)?);
    }

    Ok(GltfScene {
        rest_translations: skeleton.to_level_order(&translations)?,
        rest_rotations: skeleton.to_level_order(&rotations)?,
        rest_scales: skeleton.to_level_order(&scales)?,
        skeleton,
        node_names: names,
        skins,
        primitives,
        clips,
    })
}

fn read_primitive(
    r: &Reader<'_>,
    prim: &gltf_crate::Primitive<'_>,
    mesh: usize,
    skin: usize,
    joint_count: usize,
    options: &LoadOptions,
) -> Result<PrimitiveData, GltfError> {
    let primitive = prim.index();
    let missing = |attribute: String| GltfError::MissingAttribute {
        mesh,
        primitive,
        attribute,
    };
    let positions = match prim.get(&Semantic::Positions) {
        Some(acc) => r.vec3s(&acc, "POSITION", &FLOATS_AND_NORMALIZED)?,
        None => return Err(missing("POSITION".into())),
    };
    let normals = match prim.get(&Semantic::Normals) {
        Some(acc) => Some(r.vec3s(&acc, "NORMAL", &SIGNED_FLOATS)?),
        None => None,
    };
    let tangents = match prim.get(&Semantic::Tangents) {
        Some(acc) => {
            r.check_format(&acc, "TANGENT", &[Dimensions::Vec4], &SIGNED_FLOATS)?;
            let f = r.floats(&acc)?;
            Some(
                f.chunks_exact(4)
                    .map(|c| Vec4::new(c[0], c[1], c[2], c[3]))
                    .collect::<Vec<_>>(),
            )
        }
        None => None,
    };
    let sets = prim
        .attributes()
        .filter_map(|(s, _)| match s {
            Semantic::Joints(k) | Semantic::Weights(k) => Some(k as usize + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let mut joints: Vec<Vec<[u16; 4]>> = Vec::with_capacity(sets);
    let mut weights: Vec<Vec<[f32; 4]>> = Vec::with_capacity(sets);
    for set in 0..sets {
        let j = prim
            .get(&Semantic::Joints(set as u32))
            .ok_or_else(|| missing(format!("JOINTS_{set}")))?;
        let w = prim
            .get(&Semantic::Weights(set as u32))
            .ok_or_else(|| missing(format!("WEIGHTS_{set}")))?;
        r.check_format(
            &j,
            "JOINTS_n",
            &[Dimensions::Vec4],
            &[DataType::U8, DataType::U16],
        )?;
        r.check_format(
            &w,
            "WEIGHTS_n",
            &[Dimensions::Vec4],
            &[DataType::F32, DataType::U8, DataType::U16],
        )?;
        let ji = r.read(&j, |t, b| component_u32(t, b) as u16)?;
        // Unsigned weights are normalized by the spec; the flag is implied where a file leaves it out.
        let wf = r.read(&w, |t, b| component_f32(t, true, b))?;
        joints.push(
            ji.chunks_exact(4)
                .map(|c| [c[0], c[1], c[2], c[3]])
                .collect(),
        );
        weights.push(
            wf.chunks_exact(4)
                .map(|c| [c[0], c[1], c[2], c[3]])
                .collect(),
        );
    }
    if sets == 0 {
        return Err(missing("JOINTS_0".into()));
    }
    let wrap = |error: Error| GltfError::Primitive {
        mesh,
        primitive,
        skin,
        error: Box::new(error),
    };
    let v = positions.len();
    for (what, len) in joints
        .iter()
        .map(|j| ("JOINTS_n", j.len()))
        .chain(weights.iter().map(|w| ("WEIGHTS_n", w.len())))
    {
        check_len(what, v, len).map_err(wrap)?;
    }
    if sets > 2 {
        (joints, weights) = keep_heaviest_eight(&joints, &weights).map_err(wrap)?;
    }
    let mut input = MeshInput::new(
        Attribute::vec3(&positions),
        Attribute::joints_u16(&joints[0]),
        Attribute::weights_f32(&weights[0]),
    );
    if sets > 1 {
        input.joints[1] = Some(Attribute::joints_u16(&joints[1]));
        input.weights[1] = Some(Attribute::weights_f32(&weights[1]));
    }
    input.normals = normals.as_deref().map(Attribute::vec3);
    input.tangents = tangents.as_deref().map(Attribute::vec4);
    let mut prep = PrepareOptions::new(joint_count);
    prep.weights = options.weights;
    prep.max_influences = options.max_influences;
    let skinned = SkinnedMesh::prepare(&input, &prep).map_err(wrap)?;

    let indices: Vec<u32> = match prim.indices() {
        Some(acc) => {
            r.check_format(
                &acc,
                "indices",
                &[Dimensions::Scalar],
                &[DataType::U8, DataType::U16, DataType::U32],
            )?;
            let idx = r.read(&acc, component_u32)?;
            if let Some(&bad) = idx.iter().find(|&&i| i as usize >= v) {
                return Err(GltfError::IndexOutOfRange {
                    mesh,
                    primitive,
                    index: bad,
                    vertices: v,
                });
            }
            idx
        }
        None => (0..v as u32).collect(),
    };
    let triangles = match prim.mode() {
        Mode::Triangles => indices
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect(),
        // Strips alternate winding so that every triangle faces the same way.
        Mode::TriangleStrip => indices
            .windows(3)
            .enumerate()
            .map(|(i, w)| {
                if i % 2 == 0 {
                    [w[0], w[1], w[2]]
                } else {
                    [w[1], w[0], w[2]]
                }
            })
            .collect(),
        Mode::TriangleFan => indices
            .get(1..)
            .unwrap_or(&[])
            .windows(2)
            .map(|w| [indices[0], w[0], w[1]])
            .collect(),
        _ => Vec::new(),
    };
    Ok(PrimitiveData {
        mesh: skinned,
        positions,
        triangles,
    })
}

/// Reduces any number of JOINTS_n/WEIGHTS_n sets to two (8 influences), keeping each vertex's heaviest
/// influences: the crate's influence LOD rule, applied before [`SkinnedMesh::prepare`] because its input
/// has room for two sets. Invalid weights are reported here, as prepare would.
#[allow(clippy::type_complexity)]
fn keep_heaviest_eight(
    joints: &[Vec<[u16; 4]>],
    weights: &[Vec<[f32; 4]>],
) -> Result<(Vec<Vec<[u16; 4]>>, Vec<Vec<[f32; 4]>>), Error> {
    let v = joints.first().map_or(0, Vec::len);
    let mut j_out = vec![vec![[0u16; 4]; v]; 2];
    let mut w_out = vec![vec![[0f32; 4]; v]; 2];
    let mut influences: Vec<(u16, f32)> = Vec::new();
    for vertex in 0..v {
        influences.clear();
        for (js, ws) in joints.iter().zip(weights) {
            for k in 0..4 {
                let weight = ws[vertex][k];
                if !weight.is_finite() || weight < 0.0 {
                    return Err(Error::InvalidWeight { vertex, weight });
                }
                if weight > 0.0 {
                    influences.push((js[vertex][k], weight));
                }
            }
        }
        // Stable: equal weights keep their file order.
        influences.sort_by(|a, b| b.1.total_cmp(&a.1));
        for (slot, &(j, w)) in influences.iter().take(MAX_INFLUENCES).enumerate() {
            j_out[slot / 4][vertex][slot % 4] = j;
            w_out[slot / 4][vertex][slot % 4] = w;
        }
    }
    Ok((j_out, w_out))
}

fn read_clip(
    r: &Reader<'_>,
    anim: &gltf_crate::Animation<'_>,
    level: &dyn Fn(usize) -> usize,
) -> Result<Clip, GltfError> {
    let a = anim.index();
    let mut channels = Vec::new();
    let (mut start, mut end) = (f32::INFINITY, f32::NEG_INFINITY);
    for ch in anim.channels() {
        let property = match ch.target().property() {
            GltfProperty::Translation => Property::Translation,
            GltfProperty::Rotation => Property::Rotation,
            GltfProperty::Scale => Property::Scale,
            GltfProperty::MorphTargetWeights => continue,
        };
        let sampler = ch.sampler();
        let s = sampler.index();
        let interpolation = match sampler.interpolation() {
            GltfInterpolation::Step => Interpolation::Step,
            GltfInterpolation::Linear => Interpolation::Linear,
            GltfInterpolation::CubicSpline => Interpolation::CubicSpline,
        };
        let input = sampler.input();
        r.check_format(
            &input,
            "animation key times",
            &[Dimensions::Scalar],
            &[DataType::F32],
        )?;
        let times = r.floats(&input)?;
        // Finite first, so that the ordering test below never compares a NaN.
        let bad_time = times
            .iter()
            .position(|t| !t.is_finite())
            .or_else(|| times.windows(2).position(|w| w[1] <= w[0]).map(|k| k + 1));
        if let Some(key) = bad_time {
            return Err(GltfError::KeyTimes {
                animation: a,
                sampler: s,
                key,
            });
        }
        let output = sampler.output();
        let c = if property == Property::Rotation {
            r.check_format(
                &output,
                "rotation keys",
                &[Dimensions::Vec4],
                &FLOATS_AND_NORMALIZED,
            )?;
            4
        } else {
            r.check_format(
                &output,
                "translation or scale keys",
                &[Dimensions::Vec3],
                &[DataType::F32],
            )?;
            3
        };
        let per_key = if interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        if times.is_empty() || times.len().checked_mul(per_key) != Some(output.count()) {
            return Err(GltfError::KeyCount {
                animation: a,
                sampler: s,
                times: times.len(),
                values: output.count(),
            });
        }
        let mut values = r.floats(&output)?;
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(GltfError::KeyValue {
                animation: a,
                sampler: s,
                key: i / (c * per_key),
            });
        }
        if property == Property::Rotation && per_key == 1 {
            for q in values.chunks_exact_mut(4) {
                let u = unit(Quat::from_slice(q));
                q.copy_from_slice(&u.to_array());
            }
        }
        start = start.min(times[0]);
        end = end.max(times[times.len() - 1]);
        let node = ch.target().node().index();
        channels.push(Channel {
            node,
            level: level(node),
            property,
            interpolation,
            times,
            values,
        });
    }
    if channels.is_empty() {
        (start, end) = (0.0, 0.0);
    }
    Ok(Clip {
        name: anim.name().map(str::to_string),
        start,
        end,
        channels,
    })
}
