//! The glTF importer's error type and the limits its rules name.
//!
//! Use [`gltf::GltfError`](crate::gltf::GltfError): it is the enum defined here with the crate's
//! [`Error`](crate::Error) filled in. The enum is generic because
//! [`GltfError::Primitive`] carries the crate error that a primitive broke, while the crate error
//! has a variant that carries a `GltfError`: being generic, this file needs nothing from the crate
//! (it is a leaf of the import graph), and the conversion into the crate error lives beside it.

use crate::text::{Count, Escaped};
use std::fmt;

/// The components (floats or integers) that the accessors of one load may hold beyond four per byte of
/// the file's buffers: 4,194,304, room for accessors without a buffer view (implicit zeros plus sparse
/// values) well beyond real use. Each accessor is counted once, however often it is read, and one stored
/// byte gives at most one component, so four per byte never limits a real file; a hostile file that
/// points many accessors at the same bytes, or declares huge implicit ones, meets the limit instead of
/// exhausting memory.
pub const READ_BUDGET_SLACK: usize = 1 << 22;

/// What broke a glTF file (or a request against one). Each variant's documentation states the rule.
///
/// Display writes every string taken from the file (paths, URIs, extension and attribute names, the
/// parser's message) through [`Escaped`]: control characters come out escaped.
///
/// `E` is the crate's error type (see the [module docs](crate::gltf::error)); `gltf::GltfError` fills it in.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum GltfError<E> {
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
    /// Rule: every index in the JSON names an object that exists (accessors, buffer views, buffers,
    /// nodes, children, meshes, skins, joints, inverse bind matrices, samplers, animation targets,
    /// scenes, materials, textures, images), every enum holds one of the spec's values, and every
    /// required field is there.
    Json {
        /// Where, as a JSON path such as `animations[0].channels[3].target.node`.
        path: String,
        /// What is wrong there.
        reason: &'static str,
    },
    /// Rule: the file stays inside the import limits ([`ImportLimits`](crate::gltf::ImportLimits)).
    Limit {
        /// The limit, as the field of [`ImportLimits`](crate::gltf::ImportLimits) that sets it.
        limit: &'static str,
        /// What the file asks for (counted up to the first value past the limit).
        value: usize,
        /// The limit's value.
        max: usize,
    },
    /// Rule: a GLB header has the magic `glTF`, version 2 and a total length of at least 12 bytes and at
    /// most the data given; its first chunk is JSON, and every chunk lies inside that length.
    Glb {
        /// What is wrong.
        reason: &'static str,
    },
    /// Rule: `extensionsRequired` names only extensions this importer honours: KHR_mesh_quantization,
    /// KHR_animation_pointer (whose channels at nodes' translation, rotation, scale and morph weights,
    /// and at meshes' weights, play) and those that do not change geometry (materials, textures, lights).
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
    /// Rule: a skinned primitive passes [`SkinnedMesh::prepare`](crate::SkinnedMesh::prepare) for its
    /// skin (equal attribute counts, finite non-negative weights with a positive sum, joint indices
    /// inside the skin).
    Primitive {
        /// The mesh index.
        mesh: usize,
        /// The primitive index within the mesh.
        primitive: usize,
        /// The skin it was prepared for.
        skin: usize,
        /// The rule it broke.
        error: Box<E>,
    },
    /// Rule: a primitive that is not skinned has as many normals and tangents as positions.
    AttributeCount {
        /// The mesh index.
        mesh: usize,
        /// The primitive index within the mesh.
        primitive: usize,
        /// `NORMAL` or `TANGENT`.
        attribute: &'static str,
        /// Elements of the attribute.
        count: usize,
        /// Vertices (POSITION elements).
        vertices: usize,
    },
    /// Rule: a morph target's POSITION, NORMAL or TANGENT deltas have one element per vertex (and are
    /// VEC3 of a type the attribute allows, checked as [`GltfError::AccessorFormat`]).
    MorphDeltas {
        /// The mesh index.
        mesh: usize,
        /// The primitive index within the mesh.
        primitive: usize,
        /// The target index.
        target: usize,
        /// `POSITION`, `NORMAL` or `TANGENT`.
        attribute: &'static str,
        /// Elements of the delta accessor.
        count: usize,
        /// Vertices of the primitive.
        vertices: usize,
    },
    /// Rule: morph target deltas are finite.
    MorphDeltaValue {
        /// The mesh index.
        mesh: usize,
        /// The primitive index within the mesh.
        primitive: usize,
        /// The target index.
        target: usize,
        /// `POSITION`, `NORMAL` or `TANGENT`.
        attribute: &'static str,
        /// The first vertex whose delta is not finite.
        vertex: usize,
    },
    /// Rule: every primitive of a mesh has the same number of morph targets (the spec's rule: one
    /// weight per target, shared by the primitives).
    MorphTargetCounts {
        /// The mesh index.
        mesh: usize,
        /// The first primitive whose count differs from primitive 0's.
        primitive: usize,
        /// Its target count.
        targets: usize,
        /// Primitive 0's target count.
        first: usize,
    },
    /// Rule: a mesh's `weights` (or a node's, which override them) has one finite weight per morph
    /// target.
    MorphWeights {
        /// The mesh index.
        mesh: usize,
        /// The node, when the node's `weights` break the rule.
        node: Option<usize>,
        /// Weights given.
        weights: usize,
        /// Morph targets of the mesh.
        targets: usize,
    },
    /// Rule: a `weights` animation channel targets a node whose mesh has morph targets, and its sampler
    /// has one output per key and target (three per key and target for `CUBICSPLINE`).
    WeightKeys {
        /// The animation index.
        animation: usize,
        /// The sampler index within it.
        sampler: usize,
        /// The node the channel targets.
        node: usize,
        /// Key times.
        times: usize,
        /// Output elements (scalars).
        values: usize,
        /// Morph targets of the node's mesh (0 when it has none, or no mesh).
        targets: usize,
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
    /// Rule: in a batch, each instance's clip index names a clip.
    InstanceClipOutOfRange {
        /// The instance whose clip is out of range.
        instance: usize,
        /// The index given.
        clip: usize,
        /// Clips in the file.
        clips: usize,
    },
    /// Rule: in a batch, each instance's sample time is finite.
    InstanceTimeNotFinite {
        /// The instance whose time is not finite.
        instance: usize,
        /// The time given.
        time: f32,
    },
    /// Rule: a primitive's POSITION, NORMAL and TANGENT values are finite.
    AttributeValue {
        /// The mesh index.
        mesh: usize,
        /// The primitive index within the mesh.
        primitive: usize,
        /// `POSITION`, `NORMAL` or `TANGENT`.
        attribute: &'static str,
        /// The first vertex whose value is not finite.
        vertex: usize,
    },
    /// Rule: a node's `matrix` is a translation, rotation and scale (the glTF spec's rule): its bottom
    /// row is 0 0 0 1 to within [`MATRIX_BOTTOM_ROW_TOLERANCE`], and its first three columns are
    /// perpendicular to within [`MATRIX_SHEAR_TOLERANCE`] (no shear). A negative scale (a reflection)
    /// is a TRS and is allowed.
    NodeMatrix {
        /// The node.
        node: usize,
        /// What is wrong: `shear` or `bottom row`.
        reason: &'static str,
        /// How far off it is: the largest |cosine| between two columns for a shear, the largest
        /// difference from 0 0 0 1 for the bottom row.
        off_by: f32,
    },
    /// Rule: a node's rotation is a quaternion whose squared length x²+y²+z²+w² is a normal f32
    /// (from `f32::MIN_POSITIVE` to `f32::MAX`); it is then used as q/|q|.
    NodeRotation {
        /// The node.
        node: usize,
        /// The squared length, as computed in f32 (0, subnormal or infinite when refused).
        length_squared: f32,
    },
    /// Rule: every key value of a rotation channel is a quaternion whose squared length is a normal
    /// f32 (from `f32::MIN_POSITIVE` to `f32::MAX`); it is then used as q/|q|. (The tangents of a
    /// `CUBICSPLINE` sampler are any finite values.)
    RotationKey {
        /// The animation index.
        animation: usize,
        /// The channel index within it.
        channel: usize,
        /// The key.
        key: usize,
        /// The squared length, as computed in f32 (0, subnormal or infinite when refused).
        length_squared: f32,
    },
}

/// The largest |cosine| of the angle between two of the first three columns of a node `matrix` that
/// still counts as perpendicular (rounding in the file, not shear): 1e-3, about 0.06 degrees.
pub const MATRIX_SHEAR_TOLERANCE: f32 = 1e-3;

/// The largest difference of a node `matrix`'s bottom row from 0 0 0 1 that still counts as rounding:
/// 1e-5.
pub const MATRIX_BOTTOM_ROW_TOLERANCE: f32 = 1e-5;

impl<E: fmt::Display> fmt::Display for GltfError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GltfError::Io { path, message } => {
                write!(f, "cannot read '{}': {}", Escaped(path), Escaped(message))
            }
            GltfError::Parse { message } => {
                write!(f, "not a valid glTF 2.0 file: {}", Escaped(message))
            }
            GltfError::Json { path, reason } => {
                write!(f, "bad glTF JSON at {}: {reason}", Escaped(path))
            }
            GltfError::Limit { limit, value, max } => write!(
                f,
                "over the import limit {limit}: the file needs {value}, the limit is {max} (raise ImportLimits::{limit} to load it)"
            ),
            GltfError::Glb { reason } => write!(f, "bad GLB container: {reason}"),
            GltfError::UnsupportedExtension { name } => {
                write!(
                    f,
                    "the file requires extension {}, which this importer does not support",
                    Escaped(name)
                )
            }
            GltfError::Buffer { buffer, reason } => {
                write!(f, "buffer {buffer}: {}", Escaped(reason))
            }
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
                write!(f, "accessor {accessor} cannot be used as {usage}: it is a {}", Escaped(found))
            }
            GltfError::MissingAttribute { mesh, primitive, attribute } => {
                write!(
                    f,
                    "mesh {mesh} primitive {primitive}: attribute {} is missing",
                    Escaped(attribute)
                )
            }
            GltfError::IndexOutOfRange { mesh, primitive, index, vertices } => write!(
                f,
                "mesh {mesh} primitive {primitive}: index {index} is out of range for its {vertices} vertices"
            ),
            GltfError::Primitive { mesh, primitive, skin, error } => {
                write!(f, "mesh {mesh} primitive {primitive} (skin {skin}): {error}")
            }
            GltfError::AttributeCount { mesh, primitive, attribute, count, vertices } => write!(
                f,
                "mesh {mesh} primitive {primitive}: {count} {attribute} elements for {vertices} vertices"
            ),
            GltfError::MorphDeltas { mesh, primitive, target, attribute, count, vertices } => write!(
                f,
                "mesh {mesh} primitive {primitive} morph target {target}: {count} {attribute} deltas for {vertices} vertices"
            ),
            GltfError::MorphDeltaValue { mesh, primitive, target, attribute, vertex } => write!(
                f,
                "mesh {mesh} primitive {primitive} morph target {target}: the {attribute} delta of vertex {vertex} is not finite"
            ),
            GltfError::MorphTargetCounts { mesh, primitive, targets, first } => write!(
                f,
                "mesh {mesh}: primitive {primitive} has {} but primitive 0 has {first}; every primitive of a mesh has the same targets",
                Count(*targets, "morph target")
            ),
            GltfError::MorphWeights { mesh, node, weights, targets } => match node {
                Some(node) => write!(
                    f,
                    "node {node} (mesh {mesh}): {weights} weights for {}, or a weight that is not finite",
                    Count(*targets, "morph target")
                ),
                None => write!(
                    f,
                    "mesh {mesh}: {weights} weights for {}, or a weight that is not finite",
                    Count(*targets, "morph target")
                ),
            },
            GltfError::WeightKeys { animation, sampler, node, times, values, targets } => write!(
                f,
                "animation {animation} sampler {sampler}: a weights channel on node {node} ({}) has {times} key times and {values} outputs; it needs one output per key and target (three for CUBICSPLINE), and a mesh with targets",
                Count(*targets, "morph target")
            ),
            GltfError::InverseBindMatrices { skin, reason } => {
                write!(f, "skin {skin}: inverse bind matrices: {}", Escaped(reason))
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
                write!(f, "clip {clip} does not exist: the file has {}", Count(*clips, "clip"))
            }
            GltfError::TimeNotFinite => write!(f, "the sample time must be finite"),
            GltfError::InstanceClipOutOfRange { instance, clip, clips } => write!(
                f,
                "instance {instance} asks for clip {clip}, which does not exist: the file has {}",
                Count(*clips, "clip")
            ),
            GltfError::InstanceTimeNotFinite { instance, time } => {
                write!(f, "instance {instance}'s sample time is {time}; it must be finite")
            }
            GltfError::AttributeValue { mesh, primitive, attribute, vertex } => write!(
                f,
                "mesh {mesh} primitive {primitive}: the {attribute} of vertex {vertex} is not finite"
            ),
            GltfError::NodeMatrix { node, reason, off_by } => write!(
                f,
                "node {node}: its matrix is not a translation, rotation and scale ({reason} off by {off_by}); glTF node matrices must decompose into TRS"
            ),
            GltfError::NodeRotation { node, length_squared } => write!(
                f,
                "node {node}: its rotation's squared length is {length_squared:e}; a rotation quaternion's squared length must be a normal f32 (from {:e} to {:e})",
                f32::MIN_POSITIVE,
                f32::MAX
            ),
            GltfError::RotationKey { animation, channel, key, length_squared } => write!(
                f,
                "animation {animation} channel {channel}: rotation key {key} has squared length {length_squared:e}; a rotation quaternion's squared length must be a normal f32 (from {:e} to {:e})",
                f32::MIN_POSITIVE,
                f32::MAX
            ),
        }
    }
}
