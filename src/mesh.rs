//! Skinned meshes: bind-pose vertex data in, the layout the skinning kernels want out.
//!
//! Input is described attribute by attribute with [`Attribute`], glTF's accessor model: a byte buffer, an
//! offset, a byte stride, a count and a [`Format`]. Interleaved vertex buffers (one buffer, several
//! offsets, one stride) and separate streams (one buffer per attribute) are then the same thing, and a
//! glTF primitive maps onto it directly. Typed constructors take glam slices.
//!
//! [`SkinnedMesh::prepare`] validates everything once, so that the skinning kernels need no per-vertex
//! checks, and converts the data into the seed's "SSE friendly" form: vertices grouped by influence count
//! (Davies' future work), each group with its own contiguous arrays. Its rules, each its own [`Error`]:
//! - positions are `F32x3`, normals `F32x3`, tangents `F32x4` (w is the handedness sign, preserved),
//!   joints `U8x4`/`U16x4`, weights `F32x4`/`Unorm8x4`/`Unorm16x4` ([`Error::AttributeFormat`]);
//! - every attribute has one element per position ([`Error::CountMismatch`]) and fits in its buffer
//!   ([`Error::AttributeOutOfBounds`]); a stride is at least the element size;
//! - joints and weights come in pairs (JOINTS_n with WEIGHTS_n), at least the first pair
//!   ([`Error::AttributeMissing`]);
//! - every joint index with a non-zero weight is below the palette length ([`Error::VertexJointOutOfRange`]);
//! - weights are finite and not negative ([`Error::InvalidWeight`]);
//! - with [`WeightPolicy::Normalize`], each vertex has a positive weight sum ([`Error::ZeroWeights`]).
//!
//! Weight policy: [`WeightPolicy::Normalize`] (the default) divides each vertex's weights by their sum, so
//! unorm-quantized weights that sum to 0.996 still skin rigidly; [`WeightPolicy::Keep`] uses them as
//! given (a vertex whose weights sum to s is scaled by s about the origin). Zero weights are dropped,
//! so a vertex's influence count is its number of non-zero weights. Influence LOD
//! ([`PrepareOptions::max_influences`], van Waveren) keeps the heaviest k and renormalizes.

use crate::error::Error;
use glam::{Vec3, Vec4};

/// How one attribute element is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Three little-endian f32 (positions, normals).
    F32x3,
    /// Four little-endian f32 (tangents, float weights).
    F32x4,
    /// Four u8 (joint indices).
    U8x4,
    /// Four little-endian u16 (joint indices).
    U16x4,
    /// Four u8 read as value / 255 (weights).
    Unorm8x4,
    /// Four little-endian u16 read as value / 65535 (weights).
    Unorm16x4,
}

impl Format {
    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            Format::F32x3 => 12,
            Format::F32x4 => 16,
            Format::U8x4 | Format::Unorm8x4 => 4,
            Format::U16x4 | Format::Unorm16x4 => 8,
        }
    }
}

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
    /// A view of `count` elements of `format` in `bytes` (checked by [`SkinnedMesh::prepare`]).
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
    fn check(
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
    fn floats(&self, i: usize) -> [f32; 4] {
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
    fn indices(&self, i: usize) -> [u32; 4] {
        let e = self.element(i);
        match self.format {
            Format::U16x4 => {
                [0, 1, 2, 3].map(|k| u16::from_le_bytes([e[2 * k], e[2 * k + 1]]) as u32)
            }
            _ => [0, 1, 2, 3].map(|k| e[k] as u32),
        }
    }
}

/// Bind-pose vertex data of one skinned mesh.
#[derive(Clone, Copy, Debug)]
pub struct MeshInput<'a> {
    /// Positions (`F32x3`), required.
    pub positions: Attribute<'a>,
    /// Normals (`F32x3`), optional.
    pub normals: Option<Attribute<'a>>,
    /// Tangents (`F32x4`, w = handedness sign), optional.
    pub tangents: Option<Attribute<'a>>,
    /// JOINTS_0 and JOINTS_1 (`U8x4` or `U16x4`): up to 8 influences per vertex.
    pub joints: [Option<Attribute<'a>>; 2],
    /// WEIGHTS_0 and WEIGHTS_1 (`F32x4`, `Unorm8x4` or `Unorm16x4`), paired with `joints`.
    pub weights: [Option<Attribute<'a>>; 2],
}

impl<'a> MeshInput<'a> {
    /// Positions and one set of four influences.
    pub fn new(
        positions: Attribute<'a>,
        joints: Attribute<'a>,
        weights: Attribute<'a>,
    ) -> MeshInput<'a> {
        MeshInput {
            positions,
            normals: None,
            tangents: None,
            joints: [Some(joints), None],
            weights: [Some(weights), None],
        }
    }
}

/// What [`SkinnedMesh::prepare`] does with weights that do not sum to 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WeightPolicy {
    /// Divide each vertex's weights by their sum (a zero sum is [`Error::ZeroWeights`]).
    #[default]
    Normalize,
    /// Use the weights as given.
    Keep,
}

/// Options of [`SkinnedMesh::prepare`].
#[derive(Clone, Copy, Debug)]
pub struct PrepareOptions {
    /// The palette length: every used joint index must be below it.
    pub joint_count: usize,
    /// Weights that do not sum to 1.
    pub weights: WeightPolicy,
    /// Influence LOD: keep at most this many influences per vertex (1 to 8), the heaviest ones, then
    /// renormalize. 8 keeps everything.
    pub max_influences: usize,
    /// Compact influences: each influence is stored, and read by the kernels, as one 32-bit word, a
    /// u16 joint and a unorm16 weight, instead of a 32-bit joint and an f32 weight. That halves the
    /// bytes of joints and weights (16 instead of 32 per vertex with 4 influences), in the prepared
    /// mesh ([`SkinnedMesh::heap_bytes`]) and in every pass of the kernels. Decoding the weights costs
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

impl PrepareOptions {
    /// Normalized weights, every influence kept, for a palette of `joint_count` joints.
    pub fn new(joint_count: usize) -> PrepareOptions {
        PrepareOptions {
            joint_count,
            weights: WeightPolicy::Normalize,
            max_influences: MAX_INFLUENCES,
            compact_influences: false,
        }
    }
}

/// The weight a unorm16 value stands for, computed as the kernels compute it (a product by the f32
/// 1/65535, so 65535 gives exactly 1).
pub(crate) fn unorm16(q: u16) -> f32 {
    f32::from(q) * (1.0 / 65535.0)
}

/// Quantizes one vertex's weights (at most 8) to unorm16 for compact influences. Normalized weights
/// (summing to 1) get largest-remainder rounding: each is rounded down, and the units still missing
/// from 65535 go to the largest remainders, so the quantized weights sum to exactly 65535 and each is
/// within one unit of its weight. Kept weights are rounded to the nearest unit each. A weight above 1
/// does not fit and is returned as the error.
fn quantize_unorm16(influences: &[(u32, f32)], policy: WeightPolicy) -> Result<[u16; 8], f32> {
    let mut q = [0u16; 8];
    let mut remainders = [(0.0f64, 0usize); 8];
    for (i, &(_, w)) in influences.iter().enumerate().take(8) {
        if w > 1.0 {
            return Err(w);
        }
        let scaled = f64::from(w) * 65535.0;
        let (units, remainder) = match policy {
            WeightPolicy::Normalize => (scaled.floor(), scaled - scaled.floor()),
            WeightPolicy::Keep => (scaled.round(), 0.0),
        };
        // 0 <= w <= 1, so units lies in 0..=65535.
        q[i] = units as u16;
        remainders[i] = (remainder, i);
    }
    if policy == WeightPolicy::Normalize {
        let n = influences.len().min(8);
        let total: u32 = q[..n].iter().map(|&x| u32::from(x)).sum();
        let missing = 65535u32.saturating_sub(total) as usize;
        // The largest remainders first (stable, so ties go to the earlier influence).
        let order = &mut remainders[..n];
        order.sort_by(|a, b| b.0.total_cmp(&a.0));
        for &(_, i) in order.iter().take(missing) {
            q[i] = q[i].saturating_add(1);
        }
    }
    Ok(q)
}

/// Vertices per parallel skinning task: big enough to amortize a task, small enough to balance two to
/// many cores.
pub(crate) const SKIN_CHUNK: usize = 16 * 1024;

/// Most influences per vertex (JOINTS_0 and JOINTS_1).
pub const MAX_INFLUENCES: usize = 8;

/// The vertices with one influence count, in the kernels' layout: for vertex v of the group, its
/// original index is `vertices[v]`, its influences are entries `k*v..k*v+k` of `table`
/// (k = `influences`), and its attributes the `BLOCK` floats
/// `blocks[BLOCK*v..BLOCK*v+BLOCK]`. A mesh with normals or tangents has BLOCK = 12:
/// (px nx tx tw, py ny ty 0, pz nz tz 0), position, normal and tangent transposed, so that the kernel's
/// small matrix product reads each row with one broadcast load (an absent attribute is zero). A
/// positions-only mesh has BLOCK = 4: (px py pz 1), a third of the bytes to read.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct InfluenceGroup {
    pub(crate) influences: usize,
    pub(crate) vertices: Vec<u32>,
    pub(crate) blocks: Vec<f32>,
    pub(crate) table: InfluenceTable,
    /// The original indices are consecutive (`vertices[i] == vertices[0] + i`), so the group's outputs
    /// form one contiguous range and can be written with streaming stores.
    pub(crate) contiguous: bool,
    /// The mesh has neither normals nor tangents, so each block is the 4 floats (px py pz 1).
    pub(crate) positions_only: bool,
}

/// A group's joints and weights, in the form its kernels read. Each variant holds only what its
/// kernels read, so that a compact mesh really is smaller; [`InfluenceTable::get`] reads any of them
/// for the reference and the other layouts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum InfluenceTable {
    /// A 32-bit palette index and an f32 weight per influence.
    F32 { joints: Vec<u32>, weights: Vec<f32> },
    /// [`PrepareOptions::compact_influences`]: one word per influence, the joint in the low 16 bits and
    /// the weight times 65535 in the high 16.
    Compact(Vec<u32>),
    /// One influence per vertex, of weight exactly 1, so only its joint: the rigid kernel transforms
    /// these vertices by their palette matrix with no weighting (the result is the same, with fewer
    /// operations). A compact mesh's rigid group has this form too, because a 32-bit joint alone is as
    /// small as a packed influence.
    Rigid(Vec<u32>),
}

impl Default for InfluenceTable {
    fn default() -> InfluenceTable {
        InfluenceTable::F32 {
            joints: Vec::new(),
            weights: Vec::new(),
        }
    }
}

impl InfluenceTable {
    /// Number of influences held (k per vertex).
    pub(crate) fn len(&self) -> usize {
        match self {
            InfluenceTable::F32 { joints, weights } => joints.len().min(weights.len()),
            InfluenceTable::Compact(packed) => packed.len(),
            InfluenceTable::Rigid(joints) => joints.len(),
        }
    }

    /// Influence f as (joint, weight), a compact weight dequantized exactly as the kernels decode it.
    /// Panics when f is not below [`len`](Self::len), like a slice index.
    pub(crate) fn get(&self, f: usize) -> (u32, f32) {
        match self {
            InfluenceTable::F32 { joints, weights } => (joints[f], weights[f]),
            InfluenceTable::Compact(packed) => {
                let x = packed[f];
                (x & 0xffff, unorm16((x >> 16) as u16))
            }
            InfluenceTable::Rigid(joints) => (joints[f], 1.0),
        }
    }

    /// The joint of every influence.
    pub(crate) fn joints(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|f| self.get(f).0)
    }

    /// Heap bytes held.
    fn bytes(&self) -> usize {
        4 * match self {
            InfluenceTable::F32 { joints, weights } => joints.len() + weights.len(),
            InfluenceTable::Compact(v) | InfluenceTable::Rigid(v) => v.len(),
        }
    }

    /// Appends one influence in this table's form: its `units` (the weight times 65535, rounded) to a
    /// compact table, its `weight` to an f32 one, and only its joint to a rigid one.
    fn push(&mut self, joint: u32, weight: f32, units: u16) {
        match self {
            InfluenceTable::F32 { joints, weights } => {
                joints.push(joint);
                weights.push(weight);
            }
            InfluenceTable::Compact(packed) => packed.push(joint | u32::from(units) << 16),
            InfluenceTable::Rigid(joints) => joints.push(joint),
        }
    }
}

impl InfluenceGroup {
    /// Floats per vertex block: 4 for a positions-only mesh, else 12 (see the type's docs).
    pub(crate) fn block(&self) -> usize {
        if self.positions_only {
            4
        } else {
            12
        }
    }

    /// Bytes the skinning kernels read per pass over the group, vertex indices aside.
    pub(crate) fn input_bytes(&self) -> usize {
        4 * self.blocks.len() + self.table.bytes()
    }

    /// Heap bytes held: blocks, vertex indices and influences.
    fn bytes(&self) -> usize {
        4 * (self.blocks.len() + self.vertices.len()) + self.table.bytes()
    }

    /// The rigid kernel skins this group (see [`InfluenceTable::Rigid`]).
    pub(crate) fn rigid(&self) -> bool {
        matches!(self.table, InfluenceTable::Rigid(_))
    }

    /// The kernels read packed influences (see [`InfluenceTable::Compact`]).
    pub(crate) fn compact(&self) -> bool {
        matches!(self.table, InfluenceTable::Compact(_))
    }

    pub(crate) fn position(&self, v: usize) -> [f32; 3] {
        if self.positions_only {
            let b = &self.blocks[4 * v..4 * v + 4];
            return [b[0], b[1], b[2]];
        }
        let b = &self.blocks[12 * v..12 * v + 12];
        [b[0], b[4], b[8]]
    }

    pub(crate) fn normal(&self, v: usize) -> [f32; 3] {
        if self.positions_only {
            return [0.0; 3];
        }
        let b = &self.blocks[12 * v..12 * v + 12];
        [b[1], b[5], b[9]]
    }

    pub(crate) fn tangent(&self, v: usize) -> [f32; 4] {
        if self.positions_only {
            return [0.0; 4];
        }
        let b = &self.blocks[12 * v..12 * v + 12];
        [b[2], b[6], b[10], b[3]]
    }
}

/// A validated skinned mesh in the kernels' layout (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct SkinnedMesh {
    vertex_count: usize,
    joint_count: usize,
    has_normals: bool,
    has_tangents: bool,
    /// Index k holds the vertices with k influences (k = 0 only with `WeightPolicy::Keep`).
    pub(crate) groups: Vec<InfluenceGroup>,
}

impl SkinnedMesh {
    /// Validates the input and converts it (see the module docs for every rule).
    pub fn prepare(input: &MeshInput<'_>, options: &PrepareOptions) -> Result<SkinnedMesh, Error> {
        let n = input.positions.count;
        input.positions.check("positions", &[Format::F32x3], n)?;
        if let Some(a) = &input.normals {
            a.check("normals", &[Format::F32x3], n)?;
        }
        if let Some(a) = &input.tangents {
            a.check("tangents", &[Format::F32x4], n)?;
        }
        const JOINT_NAMES: [&str; 2] = ["JOINTS_0", "JOINTS_1"];
        const WEIGHT_NAMES: [&str; 2] = ["WEIGHTS_0", "WEIGHTS_1"];
        let mut sets = Vec::new();
        for set in 0..2 {
            match (&input.joints[set], &input.weights[set]) {
                (Some(j), Some(w)) => {
                    j.check(JOINT_NAMES[set], &[Format::U8x4, Format::U16x4], n)?;
                    w.check(
                        WEIGHT_NAMES[set],
                        &[Format::F32x4, Format::Unorm8x4, Format::Unorm16x4],
                        n,
                    )?;
                    sets.push((*j, *w));
                }
                (Some(_), None) => {
                    return Err(Error::AttributeMissing {
                        attribute: WEIGHT_NAMES[set],
                    })
                }
                (None, Some(_)) => {
                    return Err(Error::AttributeMissing {
                        attribute: JOINT_NAMES[set],
                    })
                }
                (None, None) if set == 0 => {
                    return Err(Error::AttributeMissing {
                        attribute: JOINT_NAMES[0],
                    })
                }
                (None, None) => {}
            }
        }
        let max_influences = options.max_influences.clamp(1, MAX_INFLUENCES);
        let positions_only = input.normals.is_none() && input.tangents.is_none();

        let mut groups: Vec<InfluenceGroup> = (0..=MAX_INFLUENCES)
            .map(|influences| InfluenceGroup {
                influences,
                positions_only,
                table: if options.compact_influences {
                    InfluenceTable::Compact(Vec::new())
                } else {
                    InfluenceTable::default()
                },
                ..Default::default()
            })
            .collect();
        let mut influences: Vec<(u32, f32)> = Vec::with_capacity(MAX_INFLUENCES);
        for v in 0..n {
            influences.clear();
            for (j, w) in &sets {
                let (ji, wi) = (j.indices(v), w.floats(v));
                for k in 0..4 {
                    let weight = wi[k];
                    if !weight.is_finite() || weight < 0.0 {
                        return Err(Error::InvalidWeight { vertex: v, weight });
                    }
                    if weight == 0.0 {
                        continue;
                    }
                    if ji[k] as usize >= options.joint_count {
                        return Err(Error::VertexJointOutOfRange {
                            vertex: v,
                            joint: ji[k] as usize,
                            joints: options.joint_count,
                        });
                    }
                    influences.push((ji[k], weight));
                }
            }
            // Influence LOD: the heaviest first (stable, so equal weights keep their order).
            if influences.len() > max_influences {
                influences.sort_by(|a, b| b.1.total_cmp(&a.1));
                influences.truncate(max_influences);
            }
            let sum: f32 = influences.iter().map(|i| i.1).sum();
            if !sum.is_finite() {
                // Finite weights can still overflow when summed; normalizing by infinity would zero them.
                return Err(Error::InvalidWeight {
                    vertex: v,
                    weight: sum,
                });
            }
            if options.weights == WeightPolicy::Normalize {
                if sum <= 0.0 {
                    return Err(Error::ZeroWeights { vertex: v });
                }
                influences.iter_mut().for_each(|i| i.1 /= sum);
            }
            let g = &mut groups[influences.len()];
            g.vertices.push(v as u32);
            let p = input.positions.floats(v);
            if positions_only {
                g.blocks.extend_from_slice(&[p[0], p[1], p[2], 1.0]);
            } else {
                let n = input.normals.as_ref().map_or([0.0; 4], |a| a.floats(v));
                let t = input.tangents.as_ref().map_or([0.0; 4], |a| a.floats(v));
                g.blocks.extend_from_slice(&[
                    p[0], n[0], t[0], t[3], p[1], n[1], t[1], 0.0, p[2], n[2], t[2], 0.0,
                ]);
            }
            if options.compact_influences {
                let quantized = quantize_unorm16(&influences, options.weights)
                    .map_err(|weight| Error::CompactWeight { vertex: v, weight })?;
                for (&(j, _), &q) in influences.iter().zip(&quantized) {
                    // Joints come from u8 or u16 attributes, so they fit the low 16 bits.
                    g.table.push(j, unorm16(q), q);
                }
            } else {
                for &(j, w) in &influences {
                    g.table.push(j, w, 0);
                }
            }
        }
        // One-influence vertices whose weights are all exactly 1 keep only their joints.
        let rigid = &mut groups[1].table;
        if (0..rigid.len()).all(|f| rigid.get(f).1 == 1.0) {
            *rigid = InfluenceTable::Rigid(rigid.joints().collect());
        }
        for g in &mut groups {
            g.contiguous = g.vertices.windows(2).all(|w| w[1] == w[0] + 1);
        }
        Ok(SkinnedMesh {
            vertex_count: n,
            joint_count: options.joint_count,
            has_normals: input.normals.is_some(),
            has_tangents: input.tangents.is_some(),
            groups,
        })
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    /// The palette length this mesh was validated against.
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// True when normals were given.
    pub fn has_normals(&self) -> bool {
        self.has_normals
    }

    /// True when tangents were given.
    pub fn has_tangents(&self) -> bool {
        self.has_tangents
    }

    /// Heap bytes the prepared mesh holds: per vertex its attribute block (16 bytes for positions
    /// only, else 48), its original index (4), and its influences (8 bytes each, 4 with
    /// [`PrepareOptions::compact_influences`]). When every one-influence vertex has weight exactly 1
    /// (always with [`WeightPolicy::Normalize`]), those vertices hold only their joint, 4 bytes in all.
    /// Spare capacity and the fixed-size parts of the struct are not counted.
    pub fn heap_bytes(&self) -> usize {
        self.groups.iter().map(InfluenceGroup::bytes).sum()
    }

    /// How many vertices have 0, 1, ..., 8 influences.
    pub fn influence_histogram(&self) -> [usize; MAX_INFLUENCES + 1] {
        std::array::from_fn(|k| self.groups[k].vertices.len())
    }

    /// True when each influence group covers one contiguous range of original vertices: always for a
    /// mesh with a single influence count, and for any mesh whose vertices were reordered by
    /// [`permutation`](Self::permutation). Streaming stores
    /// ([`SkinningJob::streaming`](crate::SkinningJob::streaming)) need it.
    pub fn streams_sequentially(&self) -> bool {
        self.groups.iter().all(|g| g.contiguous)
    }

    /// The vertex order the kernels work in (grouped by influence count): `permutation()[i]` is the
    /// original index of the i-th vertex. Reordering the vertex buffers this way once (and remapping the
    /// index buffer with the inverse) makes the output writes sequential; the results are in original
    /// order either way.
    pub fn permutation(&self) -> Vec<u32> {
        self.groups
            .iter()
            .flat_map(|g| g.vertices.iter().copied())
            .collect()
    }
}

/// A positions-only mesh for van Waveren's weighted base vectors (see
/// [`BaseVectorJob`](crate::skin::BaseVectorJob)), in original vertex order with a variable influence
/// count per vertex.
///
/// van Waveren stores each base vector in its joint's space, so his palette is the joints' model matrices.
/// Here it is stored in bind (mesh) space, `w * (p, 1)`, so that it works with the same palette as every
/// other kernel (model matrix times inverse bind); the work per influence, one 3x4 matrix times a weighted
/// 4-vector, is the same.
#[derive(Clone, Debug, PartialEq)]
pub struct BaseVectorMesh {
    joint_count: usize,
    /// Influences of each vertex (0 to 8).
    pub(crate) counts: Vec<u8>,
    /// Palette index of each influence, vertex after vertex.
    pub(crate) joints: Vec<u32>,
    /// Weighted base vector of each influence: `w * (x, y, z, 1)`.
    pub(crate) bases: Vec<[f32; 4]>,
    /// Index of the first influence of vertex `c * SKIN_CHUNK`, for each chunk c, plus the total: where
    /// each parallel chunk starts reading.
    pub(crate) chunk_firsts: Vec<usize>,
}

impl BaseVectorMesh {
    /// Converts a prepared mesh (its validation, weight policy and influence LOD carry over).
    pub fn from_mesh(mesh: &SkinnedMesh) -> BaseVectorMesh {
        let n = mesh.vertex_count();
        // Where each original vertex sits: (group, index in group).
        let mut place = vec![(0usize, 0usize); n];
        for (k, g) in mesh.groups.iter().enumerate() {
            for (i, &v) in g.vertices.iter().enumerate() {
                place[v as usize] = (k, i);
            }
        }
        let total: usize = mesh.groups.iter().map(|g| g.table.len()).sum();
        let mut out = BaseVectorMesh {
            joint_count: mesh.joint_count(),
            counts: Vec::with_capacity(n),
            joints: Vec::with_capacity(total),
            bases: Vec::with_capacity(total),
            chunk_firsts: Vec::new(),
        };
        for (v, &(k, i)) in place.iter().enumerate() {
            if v % SKIN_CHUNK == 0 {
                out.chunk_firsts.push(out.joints.len());
            }
            let g = &mesh.groups[k];
            let p = g.position(i);
            out.counts.push(k as u8);
            for f in k * i..k * i + k {
                let (j, w) = g.table.get(f);
                out.joints.push(j);
                out.bases.push([w * p[0], w * p[1], w * p[2], w]);
            }
        }
        out.chunk_firsts.push(out.joints.len());
        out
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.counts.len()
    }

    /// The palette length this mesh was validated against.
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }
}

/// A positions-only mesh for bone-major accumulation, the VFP seed's layout (see
/// [`BoneMajorJob`](crate::skin::BoneMajorJob)): for each palette joint, the list of vertices it moves,
/// with their weights. Each entry also carries its vertex's bind position, so that the kernel reads its
/// inputs contiguously and only the output is gathered and scattered.
#[derive(Clone, Debug, PartialEq)]
pub struct BoneMajorMesh {
    vertex_count: usize,
    joint_count: usize,
    /// Joint b's entries are `starts[b]..starts[b + 1]`, for the joints up to the highest one used
    /// (`starts.len()` is that count + 1, at most the joint count + 1).
    pub(crate) starts: Vec<u32>,
    pub(crate) vertex: Vec<u32>,
    pub(crate) weight: Vec<f32>,
    pub(crate) px: Vec<f32>,
    pub(crate) py: Vec<f32>,
    pub(crate) pz: Vec<f32>,
}

impl BoneMajorMesh {
    /// Converts a prepared mesh (its validation, weight policy and influence LOD carry over). Entries of
    /// one joint are in increasing vertex order.
    pub fn from_mesh(mesh: &SkinnedMesh) -> BoneMajorMesh {
        // One list per joint up to the highest one used: the joint count is only a bound, and a mesh
        // prepared against a huge palette must not allocate a list per palette entry.
        let joints = mesh
            .groups
            .iter()
            .flat_map(|g| g.table.joints())
            .map(|j| j as usize + 1)
            .max()
            .unwrap_or(0);
        let mut lists: Vec<Vec<(u32, f32, [f32; 3])>> = vec![Vec::new(); joints];
        for g in &mesh.groups {
            let k = g.influences;
            for (i, &v) in g.vertices.iter().enumerate() {
                let p = g.position(i);
                for f in k * i..k * i + k {
                    // prepare() validated every joint < joint_count.
                    let (j, w) = g.table.get(f);
                    if let Some(list) = lists.get_mut(j as usize) {
                        list.push((v, w, p));
                    }
                }
            }
        }
        let total: usize = lists.iter().map(Vec::len).sum();
        let mut out = BoneMajorMesh {
            vertex_count: mesh.vertex_count(),
            joint_count: mesh.joint_count(),
            starts: Vec::with_capacity(joints + 1),
            vertex: Vec::with_capacity(total),
            weight: Vec::with_capacity(total),
            px: Vec::with_capacity(total),
            py: Vec::with_capacity(total),
            pz: Vec::with_capacity(total),
        };
        out.starts.push(0);
        for mut list in lists {
            list.sort_by_key(|e| e.0);
            // prepare() keeps a joint index that one vertex lists twice as two influences. Merge them
            // here, because the kernel's lanes must never write one vertex twice in one step.
            let mut merged: Vec<(u32, f32, [f32; 3])> = Vec::with_capacity(list.len());
            for e in list {
                match merged.last_mut() {
                    Some(last) if last.0 == e.0 => last.1 += e.1,
                    _ => merged.push(e),
                }
            }
            for (v, w, p) in merged {
                out.vertex.push(v);
                out.weight.push(w);
                out.px.push(p[0]);
                out.py.push(p[1]);
                out.pz.push(p[2]);
            }
            out.starts.push(out.vertex.len() as u32);
        }
        out
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    /// The palette length this mesh was validated against.
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// Number of (vertex, weight) entries over all lists.
    pub(crate) fn entry_count(&self) -> usize {
        self.vertex.len()
    }

    /// Number of per-joint lists: the highest joint used, plus one.
    pub(crate) fn list_count(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_influence(weight: f32, policy: WeightPolicy) -> SkinnedMesh {
        let pos = [Vec3::ONE; 3];
        let joints = [[1u8, 0, 0, 0]; 3];
        let weights = [[weight, 0.0, 0.0, 0.0]; 3];
        let input = MeshInput::new(
            Attribute::vec3(&pos),
            Attribute::joints_u8(&joints),
            Attribute::weights_f32(&weights),
        );
        let options = PrepareOptions {
            weights: policy,
            ..PrepareOptions::new(2)
        };
        SkinnedMesh::prepare(&input, &options).unwrap()
    }

    /// The rigid kernel runs exactly when every one-influence weight is 1.
    #[test]
    fn rigid_group_needs_unit_weights() {
        assert!(one_influence(0.4, WeightPolicy::Normalize).groups[1].rigid());
        assert!(one_influence(1.0, WeightPolicy::Keep).groups[1].rigid());
        assert!(!one_influence(0.4, WeightPolicy::Keep).groups[1].rigid());
    }

    /// Largest-remainder rounding: normalized weights quantize to units that sum to exactly 65535, each
    /// within one unit of its weight; kept weights round to the nearest unit; 65535 means exactly 1.
    #[test]
    fn unorm16_quantization() {
        let mut rng = crate::scene::Rng::new(3);
        for k in 1..=8 {
            for _ in 0..2000 {
                let raw: Vec<f32> = (0..k).map(|_| rng.range(0.0001, 1.0)).collect();
                let sum: f32 = raw.iter().sum();
                let influences: Vec<(u32, f32)> = raw.iter().map(|&w| (0, w / sum)).collect();
                let q = quantize_unorm16(&influences, WeightPolicy::Normalize).unwrap();
                assert_eq!(q[..k].iter().map(|&x| u32::from(x)).sum::<u32>(), 65535);
                assert!(q[k..].iter().all(|&x| x == 0));
                for (i, &(_, w)) in influences.iter().enumerate() {
                    let err = (f64::from(q[i]) - f64::from(w) * 65535.0).abs();
                    assert!(err < 1.0, "k={k}: weight {w} became {} units", q[i]);
                }
                let kept: Vec<(u32, f32)> = raw.iter().map(|&w| (0, w)).collect();
                let q = quantize_unorm16(&kept, WeightPolicy::Keep).unwrap();
                for (i, &w) in raw.iter().enumerate() {
                    assert!((f64::from(q[i]) - f64::from(w) * 65535.0).abs() <= 0.5);
                }
            }
        }
        assert_eq!(unorm16(65535), 1.0);
        assert_eq!(
            quantize_unorm16(&[(0, 1.25)], WeightPolicy::Keep),
            Err(1.25)
        );
    }
}
