//! The crate's one error type. Every variant names the rule that the input broke.

#[cfg(feature = "gltf")]
use crate::gltf::error::GltfError;
use crate::isa::{Isa, Unavailable};
use crate::layout::format::Format;
use crate::text::Count;
use std::fmt;

/// What went wrong. Each variant's documentation states the rule it reports.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// Rule: the output slice has exactly as many items as the input slice.
    LengthMismatch {
        /// Items in the input.
        input: usize,
        /// Items in the output.
        output: usize,
    },
    /// Rule: an ISA runs only when its kernels are compiled in and the CPU has every feature it needs.
    IsaUnavailable {
        /// The ISA that was asked for.
        isa: Isa,
        /// Why it cannot run here.
        reason: Unavailable,
    },
    /// Rule: a skeleton has at least one joint.
    EmptySkeleton,
    /// Rule: a skeleton has at most [`MAX_JOINTS`](crate::MAX_JOINTS) joints.
    TooManyJoints {
        /// Joints given.
        joints: usize,
        /// The limit.
        max: usize,
    },
    /// Rule: a parent index names an existing joint.
    ParentOutOfRange {
        /// The joint (original index) whose parent is out of range.
        joint: usize,
        /// The parent it names.
        parent: usize,
        /// Number of joints.
        joints: usize,
    },
    /// Rule: a mesh has at most [`MAX_VERTICES`](crate::MAX_VERTICES) vertices.
    TooManyVertices {
        /// Vertices given.
        vertices: usize,
        /// The limit.
        max: usize,
    },
    /// Rule: a joint is not its own parent.
    SelfParent {
        /// The joint (original index).
        joint: usize,
    },
    /// Rule: following parents from any joint reaches a root (no cycles).
    Cycle {
        /// A joint on the cycle (original index).
        joint: usize,
    },
    /// Rule: per-joint (or per-item) data has exactly one entry per joint (item).
    CountMismatch {
        /// What was counted.
        what: &'static str,
        /// The count required.
        expected: usize,
        /// The count given.
        got: usize,
    },
    /// Rule: a joint index given to a job names a joint of the skeleton.
    JointOutOfRange {
        /// The index given.
        joint: usize,
        /// Number of joints.
        joints: usize,
    },
    /// Rule: every skin joint maps to a joint of the skeleton (`joints[skin_joint] < joints`).
    SkinJointOutOfRange {
        /// The skin (palette) joint.
        skin_joint: usize,
        /// The skeleton joint it names.
        joint: usize,
        /// Number of skeleton joints (model matrices).
        joints: usize,
    },
    /// Rule: an instance index names an instance of the crowd.
    InstanceOutOfRange {
        /// The index given.
        instance: usize,
        /// Number of instances.
        instances: usize,
    },
    /// Rule: an attribute has one of the formats its role allows (see [`SkinnedMesh::prepare`](crate::SkinnedMesh::prepare)).
    AttributeFormat {
        /// The attribute (positions, normals, JOINTS_0, ...).
        attribute: &'static str,
        /// The format it was given in.
        format: Format,
    },
    /// Rule: an attribute's elements lie inside its buffer, and its stride is at least an element.
    AttributeOutOfBounds {
        /// The attribute.
        attribute: &'static str,
        /// Its byte offset.
        offset: usize,
        /// Its byte stride.
        stride: usize,
        /// Its element count.
        count: usize,
        /// Bytes in the buffer.
        available: usize,
    },
    /// Rule: joints and weights come in pairs, at least JOINTS_0 and WEIGHTS_0; an output needs the
    /// matching input attribute.
    AttributeMissing {
        /// The attribute that is missing.
        attribute: &'static str,
    },
    /// Rule: a vertex's joint indices (with non-zero weight) are below the palette length.
    VertexJointOutOfRange {
        /// The vertex.
        vertex: usize,
        /// The joint index it names.
        joint: usize,
        /// The palette length.
        joints: usize,
    },
    /// Rule: weights are finite and not negative.
    InvalidWeight {
        /// The vertex.
        vertex: usize,
        /// The weight.
        weight: f32,
    },
    /// Rule: with compact influences, every weight (after the weight policy) is at most 1, so that it
    /// fits a unorm16.
    CompactWeight {
        /// The vertex.
        vertex: usize,
        /// The weight.
        weight: f32,
    },
    /// Rule: with weight normalization, a vertex's weights sum to more than zero.
    ZeroWeights {
        /// The vertex.
        vertex: usize,
    },
    /// Rule: an output buffer is 4-byte aligned with a stride that is a multiple of 4 and at least the
    /// attributes it holds, so the kernels can store floats.
    OutputLayout {
        /// What is wrong, in words.
        reason: &'static str,
    },
    /// Rule: an ISA name is one of `sse4`, `avx2`, `avx512`, `neon`, or for `ISPC_SKINNING_ISA` also
    /// `reference` or `auto`.
    UnknownIsaName(String),
    /// Rule: a lookup by name names something that has that name: a joint of a skeleton
    /// ([`Skeleton::joint_named`](crate::Skeleton::joint_named)), a morph target of a glTF mesh or a
    /// clip of a glTF scene. An empty name names nothing.
    NameNotFound {
        /// What was looked up: `"joint"`, `"morph target"` or `"clip"`.
        what: &'static str,
        /// The name asked for.
        name: String,
    },
    /// Rule: a character's mesh names one of its skins ([`Character::new`](crate::Character::new)).
    SkinOutOfRange {
        /// The mesh (its index in the character).
        mesh: usize,
        /// The skin it names.
        skin: usize,
        /// Number of skins.
        skins: usize,
    },
    /// Rule: a character's mesh was prepared for at most as many joints as its skin has, so that every
    /// joint index of the mesh names a palette entry ([`Character::new`](crate::Character::new)).
    SkinTooSmall {
        /// The mesh (its index in the character).
        mesh: usize,
        /// The joint count the mesh was prepared for
        /// ([`SkinnedMesh::joint_count`](crate::SkinnedMesh::joint_count)).
        mesh_joints: usize,
        /// The joints of its skin.
        skin_joints: usize,
    },
    /// Rule: a glTF file (or a request against one) follows the rules listed in [`crate::gltf`]; the
    /// [`GltfError`](crate::gltf::GltfError) names the one broken.
    #[cfg(feature = "gltf")]
    Gltf(GltfError<Error>),
    /// Rule: an influence count is 1 to [`MAX_INFLUENCES`](crate::MAX_INFLUENCES): the influences per
    /// vertex of flat input, and [`PrepareOptions::max_influences`](crate::PrepareOptions::max_influences)
    /// (0 would drop every influence).
    InfluenceCount {
        /// Which count: "influences per vertex" or "max_influences".
        what: &'static str,
        /// The count given.
        count: usize,
    },
    /// Rule: a parent index given as an `i32` is -1 (a root) or a joint index; no other negative
    /// value.
    NegativeParent {
        /// The joint whose parent is negative.
        joint: usize,
        /// The parent given.
        parent: i32,
    },
    /// Rule: a crowd has at most [`MAX_CROWD_INSTANCES`](crate::MAX_CROWD_INSTANCES) instances, and
    /// all its instances together hold at most [`MAX_CROWD_ELEMENTS`](crate::MAX_CROWD_ELEMENTS) joints,
    /// palette entries or skinned vertices.
    TooManyInstances {
        /// Instances asked for.
        instances: usize,
        /// What each instance holds, in `unit`s (joints, or skinned vertices).
        per_instance: usize,
        /// The unit of `per_instance`.
        unit: &'static str,
        /// The largest instance count allowed with that many.
        max: usize,
    },
    /// Rule: a frame (or crowd frame, crowd pose, ...) is used with the character, scene or skeleton it
    /// was made for, or a clone of it: buffers of another one would be read in the wrong order or the
    /// wrong size, or paired with another owner's meshes, even when every count matches. Every owner
    /// has an identity given at construction (kept by clones, new for an owner built from a changed
    /// one); the counts are compared first, so the error names the first part that differs, and only
    /// when all of them match is it the identity (`part` is then [`Error::OWNER_ID`]).
    WrongFrame {
        /// What was given: "Frame", "CrowdFrame", "CrowdPose", "CrowdModels".
        what: &'static str,
        /// What it belongs to: "character", "scene", "skeleton".
        owner: &'static str,
        /// The part that differs, counted: "joint", "node", "skin", "mesh", "vertex", "instance"; or
        /// [`Error::OWNER_ID`] when only the owner differs.
        part: &'static str,
        /// How many the buffers were made for (the identity of their owner, for [`Error::OWNER_ID`]).
        made_for: usize,
        /// How many this one has (its identity, for [`Error::OWNER_ID`]).
        here: usize,
    },
    /// Rule: a blend weight (a layer's weight, or one of its per-joint weights) is finite, not
    /// negative, and zero or a normal float (at least `f32::MIN_POSITIVE`, about 1.2e-38)
    /// ([`BlendingJob`](crate::BlendingJob)).
    BlendWeight {
        /// The layer's index in its list (`layers` or `additive_layers`).
        layer: usize,
        /// Whether the layer is additive.
        additive: bool,
        /// The joint (level order) for a per-joint weight; `None` for the layer's own weight.
        joint: Option<usize>,
        /// The weight given.
        weight: f32,
    },
    /// Rule: every stream of a blend layer (translations, rotations, scales, joint weights) has one
    /// entry per joint of the skeleton ([`BlendingJob`](crate::BlendingJob)).
    BlendLayerCount {
        /// The layer's index in its list (`layers` or `additive_layers`).
        layer: usize,
        /// Whether the layer is additive.
        additive: bool,
        /// The stream: "translations", "rotations", "scales" or "joint weights".
        what: &'static str,
        /// The skeleton's joint count.
        expected: usize,
        /// The entries given.
        got: usize,
    },
    /// Rule: the blending threshold is a normal float greater than zero: at least `f32::MIN_POSITIVE`
    /// (about 1.2e-38) and finite, so that dividing by it cannot overflow
    /// ([`BlendingJob`](crate::BlendingJob)).
    BlendThreshold {
        /// The threshold given.
        threshold: f32,
    },
    /// Rule: every float an entry point takes is finite (not NaN, not infinite). `what` names the input
    /// and `index` the item of it (a joint, vertex, matrix, weight ...) in the order the caller gave it.
    NotFinite {
        /// The input: "local translations", "positions", "inverse bind matrices", ...
        what: &'static str,
        /// The item holding the value.
        index: usize,
        /// The value given.
        value: f32,
    },
    /// Rule: a rotation quaternion's squared length `x² + y² + z² + w²` is a normal `f32`
    /// (`f32::MIN_POSITIVE` to `f32::MAX`: a length of about 1.1e-19 to 1.8e19), so that it can be
    /// normalized exactly; a zero quaternion has no rotation.
    RotationLength {
        /// The input: "local rotations", "rest rotations", ...
        what: &'static str,
        /// The item (joint) holding it.
        index: usize,
        /// Its squared length, computed in f64 so that it shows even where f32 overflows or underflows.
        squared_length: f64,
    },
    /// Rule: every float of a blend's rest pose and of its layers' poses is finite
    /// ([`BlendingJob`](crate::BlendingJob), [`CrowdBlendingJob`](crate::CrowdBlendingJob)). Rotations may
    /// have any finite length: in a blend their length weighs them.
    BlendValue {
        /// The layer's index in its list; `None` for the rest pose.
        layer: Option<usize>,
        /// Whether the layer is additive.
        additive: bool,
        /// "translations", "rotations" or "scales".
        stream: &'static str,
        /// The entry (joint in level order; `instance * joints + joint` in a crowd).
        entry: usize,
        /// The value given.
        value: f32,
    },
    /// Rule: a job returns `Ok` only with finite results. Finite inputs whose sums or products overflow
    /// `f32` are refused here, after the stage ran; its outputs are then unspecified.
    ResultNotFinite {
        /// The stage: "local to model", "palette", "skinning", ...
        stage: &'static str,
        /// The output: "model matrices", "skinned vertices", ...
        what: &'static str,
        /// The first item (joint, palette entry, vertex ...) that is not finite.
        index: usize,
    },
    /// Rule: a matrix that must be inverted (a joint's model matrix in the bind pose) has a finite
    /// inverse: no zero scale, no collapsed axis.
    Singular {
        /// The matrices: "bind pose model matrices", ...
        what: &'static str,
        /// The item (joint) whose matrix has no finite inverse.
        index: usize,
    },
    /// Rule: a clip's track has at least one key and `per_key` floats of values for each
    /// ([`ClipBuilder`](crate::ClipBuilder)): 3 or 4 per value (translation and scale, rotation), three
    /// values per key for a cubic spline, the target count per value for weights.
    KeyCount {
        /// "translation keys", "rotation keys", "scale keys" or "weight keys".
        what: &'static str,
        /// The joint (your order), or the weight set.
        index: usize,
        /// Key times given.
        keys: usize,
        /// Value floats given.
        values: usize,
        /// Floats each key needs.
        per_key: usize,
    },
    /// Rule: a clip's key times are finite and strictly increasing, and the span from its earliest key
    /// to its latest (over all tracks) is a finite float ([`ClipBuilder`](crate::ClipBuilder)).
    KeyTimes {
        /// "translation keys", "rotation keys", "scale keys" or "weight keys".
        what: &'static str,
        /// The joint (your order), or the weight set.
        index: usize,
        /// The first key that breaks the rule.
        key: usize,
    },
    /// Rule: every float of a clip's keys is finite ([`ClipBuilder`](crate::ClipBuilder)).
    KeyNotFinite {
        /// "translation keys", "rotation keys", "scale keys" or "weight keys".
        what: &'static str,
        /// The joint (your order), or the weight set.
        index: usize,
        /// The key holding it.
        key: usize,
        /// The value given.
        value: f32,
    },
    /// Rule: a rotation key's squared length is a normal `f32`, as for every rotation (see
    /// [`Error::RotationLength`]); for a cubic key this is its value, not its tangents
    /// ([`ClipBuilder`](crate::ClipBuilder)).
    KeyRotation {
        /// The joint (your order).
        joint: usize,
        /// The key.
        key: usize,
        /// Its squared length, in f64.
        squared_length: f64,
    },
    /// Rule: a clip plays on a skeleton with the joint order it was built for: each joint at the same
    /// level-order place ([`Character::play`](crate::Character::play)). A clip built for another
    /// skeleton with the same parents qualifies.
    ClipSkeleton {
        /// The first joint (your order) whose place differs, or the joint count where the counts do.
        joint: usize,
        /// The joints of the clip's skeleton.
        clip_joints: usize,
        /// The joints of this one.
        joints: usize,
    },
    /// Rule: a clip has at most one track per joint and property, and one per weight set
    /// ([`ClipBuilder`](crate::ClipBuilder)).
    DuplicateTrack {
        /// "translation keys", "rotation keys", "scale keys" or "weight keys".
        what: &'static str,
        /// The joint (your order), or the weight set.
        index: usize,
    },
    /// Rule: a clip holds at most [`MAX_CLIP_FLOATS`](crate::MAX_CLIP_FLOATS) floats, key times and
    /// values together, and weight sets are numbered below 2^32 ([`ClipBuilder`](crate::ClipBuilder)).
    TooManyKeys {
        /// The track that would pass the limit.
        what: &'static str,
        /// The floats the clip would hold (or the set number given).
        floats: usize,
        /// The limit.
        max: usize,
    },
    /// Rule: the weights that meet at one joint of a blend are finite: every layer weight (an
    /// instance's, in a crowd) times its joint weight, and their sum over the normal layers
    /// ([`BlendingJob`](crate::BlendingJob), [`CrowdBlendingJob`](crate::CrowdBlendingJob)).
    BlendWeightSum {
        /// The joint (level order).
        joint: usize,
        /// The instance of a crowd; `None` for a single pose.
        instance: Option<usize>,
    },
    /// Rule: [`Compression`](crate::Compression)'s tolerance and weight tolerance are finite and
    /// positive, its distance finite and not negative, and its sample rate, when given, in
    /// `(0, MAX_SAMPLE_RATE]` ([`Clip::compress`](crate::Clip::compress)).
    CompressionSetting {
        /// "tolerance", "distance", "weight tolerance" or "sample rate".
        setting: &'static str,
        /// The value given.
        value: f32,
    },
    /// Rule: every value a compact clip stores, a key or the clip's value between keys, has a
    /// magnitude of at most [`MAX_COMPACT_VALUE`](crate::MAX_COMPACT_VALUE), `f32::MAX / 6`, so that
    /// no decoded value nor the difference of two overflows ([`Clip::compress`](crate::Clip::compress)).
    CompactValue {
        /// "translation keys", "rotation keys", "scale keys" or "weight keys".
        what: &'static str,
        /// The joint (level order), or the weight set.
        index: usize,
        /// The value.
        value: f32,
    },
    /// Rule: bytes given to [`CompactClip::from_bytes`](crate::CompactClip::from_bytes) are a clip
    /// [`CompactClip::to_bytes`](crate::CompactClip::to_bytes) wrote: `rule` names the check a field
    /// failed.
    CompactBytes {
        /// The rule, such as "the version is 3" or "tracks are sorted by joint and property, one per
        /// pair".
        rule: &'static str,
        /// The byte offset just past the field read.
        offset: usize,
        /// The value read (a count, an index, a float), or 0 where the rule has none.
        value: f64,
    },
    /// Rule: a [`Precision::Deterministic`](crate::Precision::Deterministic) job runs in the platform's
    /// default floating-point environment, on the calling thread and, with
    /// [`Threads::All`](crate::Threads::All), on every thread of rayon's pool: subnormal numbers are
    /// neither flushed to zero as results nor read as zero as inputs (x86's MXCSR FTZ and DAZ bits
    /// clear, AArch64's FPCR.FZ clear), and results round to nearest, ties to even. A program that
    /// changes them gets other bits than every other machine.
    FloatEnvironment {
        /// What the probe found: `"flush to zero"`, `"denormals are zero"` or `"a rounding mode other
        /// than to nearest"`.
        found: &'static str,
    },
}

impl Error {
    /// [`Error::WrongFrame`]'s `part` when every count of the buffers matches but they belong to
    /// another owner (`made_for` and `here` are then the two owners' identities).
    pub const OWNER_ID: &'static str = "owner identity";
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::LengthMismatch { input, output } => write!(
                f,
                "length mismatch: the output must have as many items as the input, but the input has {input} and the output {output}"
            ),
            Error::CompressionSetting { setting, value } => write!(
                f,
                "compression setting out of range: the {setting} is {value}"
            ),
            Error::CompactValue { what, index, value } => write!(
                f,
                "a value too large for a compact clip: {what} of {index} reach {value} (at most f32::MAX / 6)"
            ),
            Error::CompactBytes { rule, offset, value } => write!(
                f,
                "not a compact clip: at byte {offset}, the rule \"{rule}\" fails (value {value})"
            ),
            Error::IsaUnavailable { isa, reason } => write!(f, "ISA '{isa}' cannot run here: {reason}"),
            Error::EmptySkeleton => write!(f, "empty skeleton: a skeleton needs at least one joint"),
            Error::TooManyJoints { joints, max } => {
                write!(f, "too many joints: {joints} given, at most {max} are supported")
            }
            Error::TooManyVertices { vertices, max } => write!(
                f,
                "too many vertices: a mesh has at most {max}, but this one has {vertices}"
            ),
            Error::ParentOutOfRange { joint, parent, joints } => write!(
                f,
                "parent out of range: joint {joint} names parent {parent}, but there are only {}",
                Count(*joints, "joint")
            ),
            Error::SelfParent { joint } => write!(f, "self parent: joint {joint} is its own parent"),
            Error::Cycle { joint } => {
                write!(f, "cycle: joint {joint} is on a cycle of parents and never reaches a root")
            }
            Error::CountMismatch { what, expected, got } => {
                write!(f, "count mismatch: {what}: {expected} expected, but {got} given")
            }
            Error::JointOutOfRange { joint, joints } => {
                write!(f, "joint out of range: joint {joint} given, but the skeleton has {}", Count(*joints, "joint"))
            }
            Error::SkinJointOutOfRange { skin_joint, joint, joints } => write!(
                f,
                "skin joint out of range: skin joint {skin_joint} maps to joint {joint}, but there are only {}",
                Count(*joints, "joint")
            ),
            Error::InstanceOutOfRange { instance, instances } => {
                write!(f, "instance out of range: instance {instance} given, but the crowd has {}", Count(*instances, "instance"))
            }
            Error::AttributeFormat { attribute, format } => {
                write!(f, "attribute format: {attribute} cannot be given as {format:?}")
            }
            Error::AttributeOutOfBounds { attribute, offset, stride, count, available } => write!(
                f,
                "attribute out of bounds: {attribute} ({count} elements at offset {offset}, stride {stride}) does not fit in its {available}-byte buffer, or its stride is shorter than an element"
            ),
            Error::AttributeMissing { attribute } => write!(f, "attribute missing: {attribute} is required here"),
            Error::VertexJointOutOfRange { vertex, joint, joints } => write!(
                f,
                "joint out of range: vertex {vertex} uses joint {joint}, but the palette has {}",
                Count(*joints, "joint")
            ),
            Error::InvalidWeight { vertex, weight } => {
                write!(f, "invalid weight: vertex {vertex} has weight {weight}; weights must be finite and not negative")
            }
            Error::CompactWeight { vertex, weight } => write!(
                f,
                "compact weight out of range: vertex {vertex} has weight {weight}; compact influences store weights as unorm16, so each must be at most 1"
            ),
            Error::ZeroWeights { vertex } => {
                write!(f, "zero weights: vertex {vertex}'s weights sum to zero, so they cannot be normalized")
            }
            Error::OutputLayout { reason } => write!(f, "output layout: {reason}"),
            Error::UnknownIsaName(name) => write!(
                f,
                "unknown ISA name '{}': expected sse4, avx2, avx512, neon, reference or auto",
                crate::text::Escaped(name)
            ),
            Error::NameNotFound { what, name } => {
                write!(f, "no {what} named '{}'", crate::text::Escaped(name))
            }
            Error::SkinOutOfRange { mesh, skin, skins } => write!(
                f,
                "skin out of range: mesh {mesh} names skin {skin}, but the character has {}",
                Count(*skins, "skin")
            ),
            Error::SkinTooSmall { mesh, mesh_joints, skin_joints } => write!(
                f,
                "skin too small: mesh {mesh} was prepared for {}, but its skin has only {skin_joints}",
                Count(*mesh_joints, "joint")
            ),
            #[cfg(feature = "gltf")]
            Error::Gltf(e) => write!(f, "glTF: {e}"),
            Error::InfluenceCount { what, count } => write!(
                f,
                "influence count out of range: {what} is {count}, but must be 1 to {}",
                crate::MAX_INFLUENCES
            ),
            Error::NegativeParent { joint, parent } => write!(
                f,
                "negative parent: joint {joint} names parent {parent}; only -1 (a root) may be negative"
            ),
            Error::TooManyInstances { instances, per_instance, unit, max } => write!(
                f,
                "too many instances: {} of {} each asked for, but at most {max} fit the limits",
                Count(*instances, "instance"),
                Count(*per_instance, unit)
            ),
            Error::BlendWeight { layer, additive, joint, weight } => {
                let kind = if *additive { "additive layer" } else { "layer" };
                match joint {
                    Some(j) => write!(
                        f,
                        "invalid blend weight: {kind} {layer} has joint weight {weight} at joint {j}; blend weights must be finite, not negative, and zero or normal"
                    ),
                    None => write!(
                        f,
                        "invalid blend weight: {kind} {layer} has weight {weight}; blend weights must be finite, not negative, and zero or normal"
                    ),
                }
            }
            Error::BlendLayerCount { layer, additive, what, expected, got } => write!(
                f,
                "blend layer count mismatch: {} {layer} has {got} {what}, but the skeleton has {}",
                if *additive { "additive layer" } else { "layer" },
                Count(*expected, "joint")
            ),
            Error::BlendThreshold { threshold } => write!(
                f,
                "invalid blend threshold: {threshold:e}; the threshold must be a finite normal float greater than zero (at least {:e})",
                f32::MIN_POSITIVE
            ),
            Error::NotFinite { what, index, value } => write!(
                f,
                "not finite: {what} item {index} holds {value}; every float given must be finite"
            ),
            Error::RotationLength { what, index, squared_length } => write!(
                f,
                "rotation length out of range: {what} item {index} has squared length {squared_length:e}; a rotation's squared length must be a normal float ({:e} to {:e})",
                f32::MIN_POSITIVE,
                f32::MAX
            ),
            Error::ResultNotFinite { stage, what, index } => write!(
                f,
                "result not finite: the {stage} stage overflowed f32 at item {index} of its {what}; the inputs are finite but too large together"
            ),
            Error::Singular { what, index } => write!(
                f,
                "singular matrix: {what} item {index} has no finite inverse (a zero scale or a collapsed axis)"
            ),
            Error::BlendValue { layer, additive, stream, entry, value } => match layer {
                Some(l) => write!(
                    f,
                    "blend value not finite: {} {l} has {value} in its {stream} at entry {entry}; every float of a blend must be finite",
                    if *additive { "additive layer" } else { "layer" }
                ),
                None => write!(
                    f,
                    "blend value not finite: the rest pose has {value} in its {stream} at entry {entry}; every float of a blend must be finite"
                ),
            },
            Error::FloatEnvironment { found } => write!(
                f,
                "float environment: a deterministic job needs the default floating-point mode (subnormals kept, rounding to nearest), but a thread it runs on has {found} (restore x86's MXCSR or AArch64's FPCR on the calling thread and rayon's pool, or use Precision::Fast)"
            ),
            Error::BlendWeightSum { joint, instance } => match instance {
                Some(i) => write!(
                    f,
                    "blend weight sum not finite: the weights meeting at joint {joint} of instance {i} overflow f32 when added"
                ),
                None => write!(
                    f,
                    "blend weight sum not finite: the weights meeting at joint {joint} overflow f32 when added"
                ),
            },
            Error::KeyCount { what, index, keys, values, per_key } => write!(
                f,
                "key count: {what} of {index} has {keys} key times and {values} value floats; a track needs at least one key and {per_key} floats per key"
            ),
            Error::KeyTimes { what, index, key } => write!(
                f,
                "key times: {what} of {index} breaks the rule at key {key}; key times must be finite and strictly increasing, and the clip's span finite"
            ),
            Error::KeyNotFinite { what, index, key, value } => write!(
                f,
                "key not finite: {what} of {index} hold {value} at key {key}; every key float must be finite"
            ),
            Error::KeyRotation { joint, key, squared_length } => write!(
                f,
                "rotation key length out of range: joint {joint}'s rotation key {key} has squared length {squared_length:e}; it must be a normal float ({:e} to {:e})",
                f32::MIN_POSITIVE,
                f32::MAX
            ),
            Error::ClipSkeleton { joint, clip_joints, joints } => write!(
                f,
                "clip of another skeleton: the clip was built for a skeleton of {clip_joints} joints whose joint {joint} is elsewhere in level order than in this one ({joints} joints); build the clip for this skeleton"
            ),
            Error::DuplicateTrack { what, index } => write!(
                f,
                "duplicate track: {what} of {index} are given twice; a clip has one track per joint and property (one per weight set)"
            ),
            Error::TooManyKeys { what, floats, max } => write!(
                f,
                "too many keys: adding {what} would make the clip {floats} floats; the limit is {max}"
            ),
            Error::WrongFrame { what, owner, part: Error::OWNER_ID, made_for, here } => write!(
                f,
                "wrong frame: this {what} was made for another {owner} of the same shape ({owner} #{made_for}); \
                 this is {owner} #{here}, and buffers are used only with the {owner} that made them or a clone of it"
            ),
            Error::WrongFrame { what, owner, part, made_for, here } => write!(
                f,
                "wrong frame: this {what} was made for a {owner} with {}; this {owner} has {here}",
                Count(*made_for, part)
            ),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(feature = "gltf")]
impl From<GltfError<Error>> for Error {
    fn from(e: GltfError<Error>) -> Error {
        Error::Gltf(e)
    }
}
