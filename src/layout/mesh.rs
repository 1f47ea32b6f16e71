//! The skinning kernels' mesh layout: vertices grouped by influence count, each group with contiguous
//! arrays. [`KernelMesh::new`] checks every invariant the kernels rely on, once, when a mesh is
//! prepared; its fields are private, so a `KernelMesh` that exists is one the kernels can read safely.

/// The weight a unorm16 value stands for, computed as the kernels compute it (a product by the f32
/// 1/65535, so 65535 gives exactly 1).
pub(crate) fn unorm16(q: u16) -> f32 {
    f32::from(q) * (1.0 / 65535.0)
}

/// Vertices per parallel skinning task: big enough to amortize a task, small enough to balance two to
/// many cores.
pub(crate) const SKIN_CHUNK: usize = 16 * 1024;

/// Largest vertex count of a mesh, 134,217,727: the kernels address outputs of up to 16 bytes per vertex
/// with 32-bit byte offsets.
pub const MAX_VERTICES: usize = (i32::MAX as usize) / 16;

/// Most influences per vertex: four glTF sets (JOINTS_0 to JOINTS_3).
pub const MAX_INFLUENCES: usize = 16;

/// The influence count whose kernel skins a vertex of `k` influences: `k` itself up to 8, else 12 or
/// 16. The kernels have one loop per count up to 8 and only 12 and 16 beyond, so a vertex of 9 to 15
/// influences is promoted with zero-weight influences (exact: each added product is zero), as runs
/// are (see `group_of_runs` in skinning/mesh.rs). `k` is at most [`MAX_INFLUENCES`].
pub(crate) fn kernel_influences(k: usize) -> usize {
    match k {
        0..=8 => k,
        9..=12 => 12,
        _ => 16,
    }
}

/// Vertices per AoSoA block of a group's attributes (VBLOCK in ispc/skin.ispc). Every ISA's gang
/// width (4, 8 or 16) divides it, so a gang's run of one component is one contiguous load, and every
/// kernel call starts at a multiple of it.
pub(crate) const SKIN_BLOCK: usize = 16;

/// `count` rounded up to whole [`SKIN_BLOCK`]s: the vertices a group's arrays hold.
pub(crate) fn padded(count: usize) -> usize {
    count.div_ceil(SKIN_BLOCK) * SKIN_BLOCK
}

/// The vertices with one influence count, in the kernels' layout: for vertex v of the group, its
/// original index is `vertices[v]`, its influences are entries `k*v..k*v+k` of `table`
/// (k = `influences`), and its attributes sit in AoSoA `blocks` of [`SKIN_BLOCK`] vertices: block
/// `v / SKIN_BLOCK` holds one run of `SKIN_BLOCK` floats per component, in the order
/// px py pz, then nx ny nz (meshes with normals or tangents), then tx ty tz tw (meshes with tangents),
/// so `components` is 3, 6 or 10 (an absent normal is zero). The kernels transpose the blended matrices
/// of a gang of vertices into one vertex per lane, and then read each component of the gang with one
/// contiguous load.
///
/// The table and the blocks are padded to whole blocks ([`padded`]): the padding vertices have joint 0,
/// weight 0 and zero attributes, so a gang may read (never write) past the group's last vertex.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct InfluenceGroup {
    pub(crate) influences: usize,
    pub(crate) vertices: Vec<u32>,
    pub(crate) blocks: Vec<f32>,
    pub(crate) table: InfluenceTable,
    /// The original indices are consecutive (`vertices[i] == vertices[0] + i`), so the group's outputs
    /// form one contiguous range and can be written with streaming stores.
    pub(crate) contiguous: bool,
    /// Floats per vertex in the blocks: 3 (positions), 6 (and normals) or 10 (and tangents).
    pub(crate) components: usize,
}

/// Floats per palette entry (a 4x4 matrix).
const PALETTE_STRIDE: u32 = 16;

/// Where joint `joint`'s matrix starts in the palette, in floats: what f32 and rigid tables store, so
/// that the kernels address the matrix with no shift (one instruction less per influence, in a loop
/// that issue width bounds). Every offset is a whole multiple of the stride, so the joint it names is
/// exactly the one the joint count check (`KernelMesh::new`) bounds. Joints come from u8 or u16
/// attributes, far below the clamp, which could only name a joint past every palette's end.
fn palette_offset(joint: u32) -> u32 {
    joint.min(u32::MAX / PALETTE_STRIDE) * PALETTE_STRIDE
}

/// A group's joints and weights, in the form its kernels read. Each variant holds only what its
/// kernels read, so that a compact mesh really is smaller; [`InfluenceTable::get`] reads any of them
/// for the reference and the other layouts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum InfluenceTable {
    /// The joint's palette offset (see [`palette_offset`]) and an f32 weight per influence.
    F32 {
        offsets: Vec<u32>,
        weights: Vec<f32>,
    },
    /// `PrepareOptions::compact_influences`: one word per influence, the joint in the low 16 bits and
    /// the weight times 65535 in the high 16.
    Compact(Vec<u32>),
    /// One influence per vertex, of weight exactly 1, so only its joint: the rigid kernel transforms
    /// these vertices by their palette matrix with no weighting (the result is the same, with fewer
    /// operations). A compact mesh's rigid group has this form too, because a 32-bit joint alone is as
    /// small as a packed influence. Joints are palette offsets, as in `F32`.
    Rigid(Vec<u32>),
}

impl Default for InfluenceTable {
    fn default() -> InfluenceTable {
        InfluenceTable::F32 {
            offsets: Vec::new(),
            weights: Vec::new(),
        }
    }
}

impl InfluenceTable {
    /// Number of influences held (k per vertex).
    pub(crate) fn len(&self) -> usize {
        match self {
            InfluenceTable::F32 { offsets, weights } => offsets.len().min(weights.len()),
            InfluenceTable::Compact(packed) => packed.len(),
            InfluenceTable::Rigid(joints) => joints.len(),
        }
    }

    /// Influence f as (joint, weight), a compact weight dequantized exactly as the kernels decode it.
    /// Panics when f is not below [`len`](Self::len), like a slice index.
    pub(crate) fn get(&self, f: usize) -> (u32, f32) {
        match self {
            InfluenceTable::F32 { offsets, weights } => (offsets[f] / PALETTE_STRIDE, weights[f]),
            InfluenceTable::Compact(packed) => {
                let x = packed[f];
                (x & 0xffff, unorm16((x >> 16) as u16))
            }
            InfluenceTable::Rigid(offsets) => (offsets[f] / PALETTE_STRIDE, 1.0),
        }
    }

    /// The rigid form of this table's joints (every weight is taken to be 1).
    pub(crate) fn to_rigid(&self) -> InfluenceTable {
        InfluenceTable::Rigid(self.joints().map(palette_offset).collect())
    }

    /// The joint of every influence.
    pub(crate) fn joints(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|f| self.get(f).0)
    }

    /// Heap bytes held.
    pub(crate) fn bytes(&self) -> usize {
        4 * match self {
            InfluenceTable::F32 { offsets, weights } => offsets.len() + weights.len(),
            InfluenceTable::Compact(v) | InfluenceTable::Rigid(v) => v.len(),
        }
    }

    /// Appends one influence in this table's form: its `units` (the weight times 65535, rounded) to a
    /// compact table, its `weight` to an f32 one, and only its joint to a rigid one.
    pub(crate) fn push(&mut self, joint: u32, weight: f32, units: u16) {
        match self {
            InfluenceTable::F32 { offsets, weights } => {
                offsets.push(palette_offset(joint));
                weights.push(weight);
            }
            InfluenceTable::Compact(packed) => packed.push(joint | u32::from(units) << 16),
            InfluenceTable::Rigid(offsets) => offsets.push(palette_offset(joint)),
        }
    }
}

impl InfluenceGroup {
    /// Bytes the skinning kernels read per pass over the group, vertex indices aside.
    pub(crate) fn input_bytes(&self) -> usize {
        4 * self.blocks.len() + self.table.bytes()
    }

    /// Heap bytes held: blocks, vertex indices and influences.
    pub(crate) fn bytes(&self) -> usize {
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

    /// Appends vertex attributes in the blocks' layout: `values` holds the group's `components`
    /// floats of the next vertex, in component order.
    pub(crate) fn push_attributes(&mut self, vertex: usize, values: &[f32]) {
        let c = self.components;
        let block = vertex / SKIN_BLOCK * c * SKIN_BLOCK;
        if self.blocks.len() < block + c * SKIN_BLOCK {
            self.blocks.resize(block + c * SKIN_BLOCK, 0.0);
        }
        for (s, &x) in values.iter().take(c).enumerate() {
            self.blocks[block + s * SKIN_BLOCK + vertex % SKIN_BLOCK] = x;
        }
    }

    /// The 10 attribute floats of vertex v, px py pz nx ny nz tx ty tz tw (0 for a component the
    /// group does not hold): its block sliced once, then one float per run.
    pub(crate) fn attributes(&self, v: usize) -> [f32; 10] {
        let c = self.components;
        let block = &self.blocks[v / SKIN_BLOCK * c * SKIN_BLOCK..][..c * SKIN_BLOCK];
        let lane = v % SKIN_BLOCK;
        std::array::from_fn(|s| {
            if s < c {
                block[s * SKIN_BLOCK + lane]
            } else {
                0.0
            }
        })
    }

    pub(crate) fn position(&self, v: usize) -> [f32; 3] {
        let a = self.attributes(v);
        [a[0], a[1], a[2]]
    }

    pub(crate) fn normal(&self, v: usize) -> [f32; 3] {
        let a = self.attributes(v);
        [a[3], a[4], a[5]]
    }

    pub(crate) fn tangent(&self, v: usize) -> [f32; 4] {
        let a = self.attributes(v);
        [a[6], a[7], a[8], a[9]]
    }
}

/// A mesh in the kernels' layout whose invariants hold (see [`KernelMesh::new`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KernelMesh {
    vertex_count: usize,
    joint_count: usize,
    groups: Vec<InfluenceGroup>,
}

impl KernelMesh {
    /// Checks the invariants the FFI relies on and wraps the groups. A broken one is a bug in the
    /// caller (mesh preparation), not an input error, so it panics, in release builds too:
    /// - group k holds the vertices with k influences, k = 0..=MAX_INFLUENCES, and only the counts
    ///   with a kernel ([`kernel_influences`]) hold any;
    /// - each group holds `components` floats (3, 6 or 10, the same in every group) and k influences per
    ///   vertex for its vertex count padded to whole blocks ([`padded`]); a rigid table has k = 1;
    /// - every joint index is below `joint_count`;
    /// - the vertex indices of all groups together are a permutation of `0..vertex_count` (so writes to
    ///   the output of different vertices, even from several threads, never touch the same floats);
    /// - a group's `contiguous` flag is true exactly when its indices are consecutive;
    /// - `vertex_count` fits the kernels' 32-bit indices.
    pub(crate) fn new(
        vertex_count: usize,
        joint_count: usize,
        groups: Vec<InfluenceGroup>,
    ) -> KernelMesh {
        assert_eq!(
            groups.len(),
            MAX_INFLUENCES + 1,
            "one influence group per count"
        );
        assert!(
            vertex_count <= i32::MAX as usize,
            "vertex count fits 32-bit indices"
        );
        let components = groups[0].components;
        assert!(matches!(components, 3 | 6 | 10), "3, 6 or 10 components");
        let mut seen = vec![false; vertex_count];
        for (k, g) in groups.iter().enumerate() {
            let count = g.vertices.len();
            assert_eq!(g.influences, k, "group {k} holds {k}-influence vertices");
            assert_eq!(
                g.components, components,
                "one component count for all groups"
            );
            assert_eq!(
                g.blocks.len(),
                components * padded(count),
                "group {k}: whole blocks of every vertex"
            );
            assert_eq!(
                g.table.len(),
                k * padded(count),
                "group {k}: k influences per vertex, padding included"
            );
            assert!(!g.rigid() || k == 1, "only one-influence groups are rigid");
            assert!(
                count == 0 || kernel_influences(k) == k,
                "group {k}: only counts with a kernel hold vertices"
            );
            assert!(
                g.table.joints().all(|j| (j as usize) < joint_count),
                "group {k}: joint indices below the joint count"
            );
            for &v in &g.vertices {
                let slot = seen
                    .get_mut(v as usize)
                    .expect("vertex index below the vertex count");
                assert!(!*slot, "vertex {v} is in one group once");
                *slot = true;
            }
            let consecutive = g.vertices.windows(2).all(|w| w[1] == w[0].wrapping_add(1));
            assert_eq!(
                g.contiguous, consecutive,
                "group {k}: the contiguous flag is right"
            );
        }
        assert!(seen.iter().all(|&s| s), "every vertex is in a group");
        KernelMesh {
            vertex_count,
            joint_count,
            groups,
        }
    }

    /// Number of vertices.
    pub(crate) fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    /// The palette length every joint index is below.
    pub(crate) fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// Group k holds the vertices with k influences.
    pub(crate) fn groups(&self) -> &[InfluenceGroup] {
        &self.groups
    }

    /// Each group's attribute blocks, to be rewritten in place (a frame's morphed copy of a mesh). Only
    /// the floats can change, not the lengths, so every invariant of [`KernelMesh::new`] still holds.
    pub(crate) fn blocks_mut(&mut self) -> impl Iterator<Item = &mut [f32]> {
        self.groups.iter_mut().map(|g| g.blocks.as_mut_slice())
    }

    /// Floats per vertex in every group's blocks: 3, 6 or 10.
    pub(crate) fn components(&self) -> usize {
        self.groups[0].components
    }
}
