//! Mesh input, attribute by attribute (glTF's accessor model), and the options of mesh preparation.

use crate::error::Error;
use crate::layout::format::Format;
use crate::layout::mesh::MAX_INFLUENCES;
use glam::{Vec3, Vec4};

/// A strided view of one vertex attribute: element `i` is the `format.size()` bytes at
/// `bytes[offset + i * stride ..]`.
#[derive(Clone, Copy, Debug)]
pub struct Attribute<'a> {
    /// The buffer (a whole vertex buffer for interleaved data).
    pub bytes: &'a [u8],
    /// Byte offset of element 0.
    pub offset: usize,
    /// Bytes from one element to the next.
    pub stride: usize,
    /// Number of elements.
    pub count: usize,
    /// Element format.
    pub format: Format,
}

impl<'a> Attribute<'a> {
    /// A view of `count` elements of `format` in `bytes` (checked by [`SkinnedMesh::prepare`](crate::SkinnedMesh::prepare)).
    pub fn new(
        bytes: &'a [u8],
        offset: usize,
        stride: usize,
        count: usize,
        format: Format,
    ) -> Attribute<'a> {
        Attribute {
            bytes,
            offset,
            stride,
            count,
            format,
        }
    }

    fn packed(bytes: &'a [u8], format: Format) -> Attribute<'a> {
        Attribute {
            bytes,
            offset: 0,
            stride: format.size(),
            count: bytes.len() / format.size(),
            format,
        }
    }

    /// Positions or normals from a glam slice.
    pub fn vec3(data: &'a [Vec3]) -> Attribute<'a> {
        Attribute::packed(bytemuck::cast_slice(data), Format::F32x3)
    }

    /// Tangents (xyz and the handedness sign in w), or float weights, from a glam slice.
    pub fn vec4(data: &'a [Vec4]) -> Attribute<'a> {
        Attribute::packed(bytemuck::cast_slice(data), Format::F32x4)
    }

    /// Float weights.
    pub fn weights_f32(data: &'a [[f32; 4]]) -> Attribute<'a> {
        Attribute::packed(bytemuck::cast_slice(data), Format::F32x4)
    }

    /// Normalized u8 weights (value / 255).
    pub fn weights_unorm8(data: &'a [[u8; 4]]) -> Attribute<'a> {
        Attribute::packed(bytemuck::cast_slice(data), Format::Unorm8x4)
    }

    /// Normalized u16 weights (value / 65535).
    pub fn weights_unorm16(data: &'a [[u16; 4]]) -> Attribute<'a> {
        Attribute::packed(bytemuck::cast_slice(data), Format::Unorm16x4)
    }

    /// u8 joint indices.
    pub fn joints_u8(data: &'a [[u8; 4]]) -> Attribute<'a> {
        Attribute::packed(bytemuck::cast_slice(data), Format::U8x4)
    }

    /// u16 joint indices.
    pub fn joints_u16(data: &'a [[u16; 4]]) -> Attribute<'a> {
        Attribute::packed(bytemuck::cast_slice(data), Format::U16x4)
    }

    /// Checks the format against the allowed ones and the extent against the buffer.
    pub(crate) fn check(
        &self,
        attribute: &'static str,
        allowed: &[Format],
        count: usize,
    ) -> Result<(), Error> {
        if !allowed.contains(&self.format) {
            return Err(Error::AttributeFormat {
                attribute,
                format: self.format,
            });
        }
        if self.count != count {
            return Err(Error::CountMismatch {
                what: attribute,
                expected: count,
                got: self.count,
            });
        }
        let size = self.format.size();
        let needed = match self.count {
            0 => Some(0),
            n => (n - 1)
                .checked_mul(self.stride)
                .and_then(|x| x.checked_add(self.offset))
                .and_then(|x| x.checked_add(size)),
        };
        match needed {
            Some(needed) if self.stride >= size && needed <= self.bytes.len() => Ok(()),
            _ => Err(Error::AttributeOutOfBounds {
                attribute,
                offset: self.offset,
                stride: self.stride,
                count: self.count,
                available: self.bytes.len(),
            }),
        }
    }

    fn element(&self, i: usize) -> &'a [u8] {
        let start = self.offset + i * self.stride;
        &self.bytes[start..start + self.format.size()]
    }

    /// Element `i` as floats (missing components 0; unorm scaled). Only after `check`.
    pub(crate) fn floats(&self, i: usize) -> [f32; 4] {
        let e = self.element(i);
        let f = |k: usize| f32::from_le_bytes([e[4 * k], e[4 * k + 1], e[4 * k + 2], e[4 * k + 3]]);
        let u16s = |k: usize| u16::from_le_bytes([e[2 * k], e[2 * k + 1]]);
        match self.format {
            Format::F32x3 => [f(0), f(1), f(2), 0.0],
            Format::F32x4 => [f(0), f(1), f(2), f(3)],
            Format::Unorm8x4 => [0, 1, 2, 3].map(|k| e[k] as f32 / 255.0),
            Format::Unorm16x4 => [0, 1, 2, 3].map(|k| u16s(k) as f32 / 65535.0),
            Format::U8x4 => [0, 1, 2, 3].map(|k| e[k] as f32),
            Format::U16x4 => [0, 1, 2, 3].map(|k| u16s(k) as f32),
        }
    }

    /// Element `i` as joint indices. Only after `check`.
    pub(crate) fn indices(&self, i: usize) -> [u32; 4] {
        let e = self.element(i);
        match self.format {
            Format::U16x4 => {
                [0, 1, 2, 3].map(|k| u16::from_le_bytes([e[2 * k], e[2 * k + 1]]) as u32)
            }
            _ => [0, 1, 2, 3].map(|k| e[k] as u32),
        }
    }
}

/// Joints and weights given as they are, `per_vertex` influences per vertex, vertex after vertex: the
/// influences of vertex `v` are `joints[v * per_vertex + k]` with weight `weights[v * per_vertex + k]`
/// for `k` in `0..per_vertex`. Built by [`MeshInput::from_influences`] and
/// [`MeshInput::from_flat_influences`]; [`SkinnedMesh::prepare`](crate::SkinnedMesh::prepare) checks it.
#[derive(Clone, Copy, Debug)]
pub struct FlatInfluences<'a> {
    /// The joint index of each influence, `per_vertex` of them per vertex.
    pub joints: &'a [u16],
    /// The weight of each influence, paired with `joints` entry by entry.
    pub weights: &'a [f32],
    /// Influences per vertex, 1 to [`MAX_INFLUENCES`].
    pub per_vertex: usize,
}

/// Bind-pose vertex data of one skinned mesh: positions, optional normals and tangents, and the
/// joints and weights of every vertex.
///
/// The influences come from exactly one of two sources:
/// - as given, 1 to 16 per vertex, with [`MeshInput::from_influences`] (one array per vertex) or
///   [`MeshInput::from_flat_influences`] (one flat slice), held in [`influences`](#structfield.influences);
/// - as glTF-style attributes of four influences each (JOINTS_0 and WEIGHTS_0, optionally up to
///   JOINTS_3 and WEIGHTS_3), with [`MeshInput::new`] or by setting [`joints`](#structfield.joints) and
///   [`weights`](#structfield.weights); these take any [`Attribute`] layout and format.
///
/// Both give the same prepared mesh for the same influences: a vertex's zero weights are dropped
/// either way, so padding to four changes nothing. Normals and tangents are added with
/// [`normals`](MeshInput::normals) and [`tangents`](MeshInput::tangents).
///
/// Two influences per vertex, prepared for the joints the mesh uses:
///
/// ```
/// use ispc_skinning::glam::Vec3;
/// use ispc_skinning::{Attribute, MeshInput, PrepareOptions, SkinnedMesh};
///
/// let positions = [Vec3::ZERO, Vec3::Y];
/// let normals = [Vec3::Z; 2];
/// let joints = [[0u16, 1], [1, 2]];
/// let weights = [[0.5f32, 0.5], [0.25, 0.75]];
/// let input = MeshInput::from_influences(&positions, &joints, &weights)
///     .normals(Attribute::vec3(&normals));
/// let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::default())?;
/// assert_eq!(mesh.joint_count(), 3); // joint 2 is the largest used
/// assert_eq!(mesh.influence_histogram()[2], 2);
/// # Ok::<(), ispc_skinning::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct MeshInput<'a> {
    /// Positions (`F32x3`), required.
    pub positions: Attribute<'a>,
    /// Normals (`F32x3`), optional.
    pub normals: Option<Attribute<'a>>,
    /// Tangents (`F32x4`, w = handedness sign), optional.
    pub tangents: Option<Attribute<'a>>,
    /// JOINTS_0 to JOINTS_3 (`U8x4` or `U16x4`): up to 16 influences per vertex. JOINTS_0 is required,
    /// the others optional (a missing set is skipped). `None` everywhere when the influences are in
    /// [`influences`](#structfield.influences).
    pub joints: [Option<Attribute<'a>>; 4],
    /// WEIGHTS_0 to WEIGHTS_3 (`F32x4`, `Unorm8x4` or `Unorm16x4`), paired with `joints` set by set.
    pub weights: [Option<Attribute<'a>>; 4],
    /// The influences as given, 1 to 16 per vertex: the other source of joints and weights, used
    /// instead of `joints` and `weights` (giving both is an error).
    pub influences: Option<FlatInfluences<'a>>,
}

impl<'a> MeshInput<'a> {
    /// Positions and one set of four influences (JOINTS_0 and WEIGHTS_0), in any attribute layout.
    pub fn new(
        positions: Attribute<'a>,
        joints: Attribute<'a>,
        weights: Attribute<'a>,
    ) -> MeshInput<'a> {
        MeshInput {
            positions,
            normals: None,
            tangents: None,
            joints: [Some(joints), None, None, None],
            weights: [Some(weights), None, None, None],
            influences: None,
        }
    }

    /// Positions and `N` influences per vertex, as given (no padding to four): vertex `v` has joints
    /// `joints[v]` with weights `weights[v]`. `N` is 1 to [`MAX_INFLUENCES`];
    /// any other `N` (0 or more than 16) compiles and is reported by
    /// [`SkinnedMesh::prepare`](crate::SkinnedMesh::prepare) as [`Error::InfluenceCount`], and slices
    /// whose lengths differ from the positions' as [`Error::CountMismatch`].
    pub fn from_influences<const N: usize>(
        positions: &'a [Vec3],
        joints: &'a [[u16; N]],
        weights: &'a [[f32; N]],
    ) -> MeshInput<'a> {
        MeshInput::from_flat_influences(positions, joints.as_flattened(), weights.as_flattened(), N)
    }

    /// Positions and `influences_per_vertex` influences per vertex in two flat slices: the influences
    /// of vertex `v` are `joints[v * influences_per_vertex + k]` with weight
    /// `weights[v * influences_per_vertex + k]`. [`SkinnedMesh::prepare`](crate::SkinnedMesh::prepare)
    /// checks that `influences_per_vertex` is 1 to [`MAX_INFLUENCES`] and that
    /// each slice holds `influences_per_vertex` entries per position ([`Error::CountMismatch`]).
    pub fn from_flat_influences(
        positions: &'a [Vec3],
        joints: &'a [u16],
        weights: &'a [f32],
        influences_per_vertex: usize,
    ) -> MeshInput<'a> {
        MeshInput {
            positions: Attribute::vec3(positions),
            normals: None,
            tangents: None,
            joints: [None; 4],
            weights: [None; 4],
            influences: Some(FlatInfluences {
                joints,
                weights,
                per_vertex: influences_per_vertex,
            }),
        }
    }

    /// Adds normals (`F32x3`, one per position), for example `Attribute::vec3(&normals)`.
    pub fn normals(mut self, normals: Attribute<'a>) -> MeshInput<'a> {
        self.normals = Some(normals);
        self
    }

    /// Adds tangents (`F32x4`, one per position, w the handedness sign), for example
    /// `Attribute::vec4(&tangents)`.
    pub fn tangents(mut self, tangents: Attribute<'a>) -> MeshInput<'a> {
        self.tangents = Some(tangents);
        self
    }
}

/// What [`SkinnedMesh::prepare`](crate::SkinnedMesh::prepare) does with weights that do not sum to 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WeightPolicy {
    /// Divide each vertex's weights by their sum (a zero sum is [`Error::ZeroWeights`]).
    #[default]
    Normalize,
    /// Use the weights as given.
    Keep,
}

/// Options of [`SkinnedMesh::prepare`](crate::SkinnedMesh::prepare).
///
/// [`PrepareOptions::default()`] suits most meshes: normalized weights, every influence kept, f32
/// weights, and the joint count taken from the mesh. Each option has a builder-style setter:
/// `PrepareOptions::default().max_influences(4).compact_influences(true)`.
#[derive(Clone, Copy, Debug)]
pub struct PrepareOptions {
    /// The palette length the mesh is checked against, or `None` to take it from the mesh.
    ///
    /// `Some(n)`: every joint index with a non-zero weight must be below `n`
    /// ([`Error::VertexJointOutOfRange`] otherwise), and the prepared mesh's
    /// [`joint_count`](crate::SkinnedMesh::joint_count) is `n`. Use it to catch a mesh that does not
    /// fit its skin when the mesh is loaded.
    ///
    /// `None` (the default): the mesh's joint count is its largest joint index with a non-zero weight
    /// plus one (0 when no vertex has one), the smallest `n` that `Some(n)` accepts. Either way,
    /// [`SkinningJob`](crate::SkinningJob) checks at run time that the palette has at least that many
    /// entries ([`Error::CountMismatch`]).
    pub joint_count: Option<usize>,
    /// Weights that do not sum to 1.
    pub weights: WeightPolicy,
    /// Influence LOD: keep at most this many influences per vertex (1 to 16), the heaviest ones, then
    /// renormalize. 16 (the default, [`MAX_INFLUENCES`]) keeps everything; a value outside 1 to 16 is
    /// [`Error::InfluenceCount`]. For example 8 or 4 for a GPU shader that reads two or one sets.
    pub max_influences: usize,
    /// Compact influences: each influence is stored, and read by the kernels, as one 32-bit word, a
    /// u16 joint and a unorm16 weight, instead of a 32-bit joint and an f32 weight. That halves the
    /// bytes of joints and weights (16 instead of 32 per vertex with 4 influences), in the prepared
    /// mesh ([`SkinnedMesh::heap_bytes`](crate::SkinnedMesh::heap_bytes)) and in every pass of the kernels. Decoding the weights costs
    /// about what the smaller reads save. On the machine the README's results come from, AVX-512 ran at
    /// 0.87x to 0.96x the f32 format's speed in cache and at 1.01x to 1.07x at 1M vertices; SSE4 at
    /// 0.76x.
    ///
    /// Accuracy: each weight becomes a multiple of 1/65535, off by less than 1/65535 (1.5e-5). With
    /// [`WeightPolicy::Normalize`] the quantized weights of a vertex still sum to exactly 65535/65535
    /// (largest-remainder rounding), so a vertex whose joints all move alike still moves rigidly, up to
    /// f32 rounding, and otherwise a skinned point moves by at most 1.5e-5 times the sum over its
    /// influences of |M_i p - M_0 p|, how far apart its joints carry it. The reference skins with the same quantized
    /// weights. With [`WeightPolicy::Keep`], each weight is rounded to the nearest multiple, and a weight
    /// above 1 is [`Error::CompactWeight`]. Joints are u16 in every input format, so they stay exact.
    pub compact_influences: bool,
}

impl Default for PrepareOptions {
    /// Normalized weights, every influence kept, f32 weights, and the joint count taken from the mesh.
    fn default() -> PrepareOptions {
        PrepareOptions {
            joint_count: None,
            weights: WeightPolicy::Normalize,
            max_influences: MAX_INFLUENCES,
            compact_influences: false,
        }
    }
}

impl PrepareOptions {
    /// Normalized weights, every influence kept, for a palette of `joint_count` joints: every joint
    /// index the mesh uses must be below it (see [`joint_count`](#structfield.joint_count)).
    pub fn new(joint_count: usize) -> PrepareOptions {
        PrepareOptions::default().joint_count(joint_count)
    }

    /// Checks the mesh against a palette of `joint_count` joints (see
    /// [`joint_count`](#structfield.joint_count)).
    pub fn joint_count(mut self, joint_count: usize) -> PrepareOptions {
        self.joint_count = Some(joint_count);
        self
    }

    /// Sets what happens to weights that do not sum to 1.
    pub fn weights(mut self, weights: WeightPolicy) -> PrepareOptions {
        self.weights = weights;
        self
    }

    /// Keeps at most `max_influences` influences per vertex, the heaviest (see
    /// [`max_influences`](#structfield.max_influences)).
    pub fn max_influences(mut self, max_influences: usize) -> PrepareOptions {
        self.max_influences = max_influences;
        self
    }

    /// Turns compact influences on or off (see
    /// [`compact_influences`](#structfield.compact_influences)).
    pub fn compact_influences(mut self, compact_influences: bool) -> PrepareOptions {
        self.compact_influences = compact_influences;
        self
    }
}
