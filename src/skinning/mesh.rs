//! Skinned meshes: bind-pose vertex data in, the layout the skinning kernels want out.
//!
//! Input is described attribute by attribute with [`Attribute`], glTF's accessor model: a byte buffer, an
//! offset, a byte stride, a count and a [`Format`]. Interleaved vertex buffers (one buffer, several
//! offsets, one stride) and separate streams (one buffer per attribute) are then the same thing, and a
//! glTF primitive maps onto it directly. Typed constructors take glam slices. Joints and weights can
//! also be given as they are, 1 to 16 per vertex ([`MeshInput::from_influences`],
//! [`MeshInput::from_flat_influences`]); they then need no padding to four.
//!
//! [`SkinnedMesh::prepare`] validates everything once, so that the skinning kernels need no per-vertex
//! checks, and converts the data into the seed's "SSE friendly" form: vertices grouped by influence count
//! (Davies' future work), each group with its own contiguous arrays. Whole runs of 16 consecutive
//! vertices stay together in the group of their largest count, the others padded with zero-weight
//! influences, so that the kernels write each run's outputs with whole-gang stores (exact: the padding
//! adds zeros; see `group_of_runs`). The kernels skin 0 to 8 influences and 12 and 16, so a vertex of 9
//! to 11 influences is skinned as 12 and one of 13 to 15 as 16, padded the same way. Its rules, each its
//! own [`Error`]:
//! - positions are `F32x3`, normals `F32x3`, tangents `F32x4` (w is the handedness sign, preserved),
//!   joints `U8x4`/`U16x4`, weights `F32x4`/`Unorm8x4`/`Unorm16x4` ([`Error::AttributeFormat`]);
//! - every attribute has one element per position ([`Error::CountMismatch`]) and fits in its buffer
//!   ([`Error::AttributeOutOfBounds`]); a stride is at least the element size;
//! - joints and weights come in pairs (JOINTS_n with WEIGHTS_n), at least the first pair
//!   ([`Error::AttributeMissing`]), unless they come as flat influences;
//! - flat influences and JOINTS_n/WEIGHTS_n are not both given ([`Error::CountMismatch`], "influence
//!   sources"); flat influences have 1 to 16 per vertex, and their joints and weights hold that many
//!   entries per position ([`Error::CountMismatch`]);
//! - with [`PrepareOptions::joint_count`](PrepareOptions#structfield.joint_count) given, every joint index with a non-zero weight is below it
//!   ([`Error::VertexJointOutOfRange`]); without, the mesh's joint count is its largest such index plus
//!   one;
//! - weights are finite and not negative ([`Error::InvalidWeight`]);
//! - with [`WeightPolicy::Normalize`], each vertex has a positive weight sum ([`Error::ZeroWeights`]).
//!
//! Weight policy: [`WeightPolicy::Normalize`] (the default) divides each vertex's weights by their sum, so
//! unorm-quantized weights that sum to 0.996 still skin rigidly; [`WeightPolicy::Keep`] uses them as
//! given (a vertex whose weights sum to s is scaled by s about the origin). Zero weights are dropped,
//! so a vertex's influence count is its number of non-zero weights. Influence LOD
//! ([`PrepareOptions::max_influences`], van Waveren) keeps the heaviest k and renormalizes.

use crate::error::Error;
use crate::layout::format::Format;
use crate::layout::mesh::{
    kernel_influences, padded, unorm16, InfluenceGroup, InfluenceTable, KernelMesh, MAX_INFLUENCES,
    MAX_VERTICES, SKIN_BLOCK,
};
use crate::skinning::input::{Attribute, FlatInfluences, MeshInput, PrepareOptions, WeightPolicy};
use glam::Vec3;

/// Quantizes one vertex's weights (at most [`MAX_INFLUENCES`]) to unorm16 for compact influences. Normalized weights
/// (summing to 1) get largest-remainder rounding: each is rounded down, and the units still missing
/// from 65535 go to the largest remainders, so the quantized weights sum to exactly 65535 and each is
/// within one unit of its weight. Kept weights are rounded to the nearest unit each. A weight above 1
/// does not fit and is returned as the error.
fn quantize_unorm16(
    influences: &[(u32, f32)],
    policy: WeightPolicy,
) -> Result<[u16; MAX_INFLUENCES], f32> {
    let mut q = [0u16; MAX_INFLUENCES];
    let mut remainders = [(0.0f64, 0usize); MAX_INFLUENCES];
    for (i, &(_, w)) in influences.iter().enumerate().take(MAX_INFLUENCES) {
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
        let n = influences.len().min(MAX_INFLUENCES);
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

/// Vertices per run of [`group_of_runs`]: one [`SKIN_BLOCK`], so that a run fills a whole gang on
/// every ISA (4, 8 or 16 lanes) and starts where a kernel call may start.
const RUN: usize = SKIN_BLOCK;

/// Which group each vertex goes to, in the order the groups are filled: `(vertex, influences)`.
///
/// Grouping by influence count alone scatters a group's outputs over the mesh, because real meshes
/// mix counts from one vertex to the next (CesiumMan's runs of one count average 4 vertices). The
/// kernels then store each output lane by lane, which cost a third of CesiumMan's frame. So each whole
/// run of [`RUN`] consecutive vertices goes together to the group of its largest count, its other
/// vertices promoted with zero-weight influences: the run's outputs are consecutive, and the kernels
/// store them with whole-gang interleaving stores. Promotion costs blending work (CesiumMan: 2.3 to
/// 3.1 influences per vertex on average) and is exact (each added product is zero). Runs are placed
/// first, in order, so each starts at a multiple of RUN in its group; the vertices of the last, partial
/// run, and those of runs holding a vertex with no influence (kept apart under `WeightPolicy::Keep`),
/// follow in their own groups.
///
/// A mesh whose counts never decrease (one count, or reordered by [`SkinnedMesh::permutation`]) has
/// contiguous groups already: it is grouped by count alone, with no promotion but that of 9 to 15
/// influences to the kernels' 12 or 16 (the caller passes those counts).
fn group_of_runs(n: usize, count: impl Fn(usize) -> usize) -> Vec<(usize, usize)> {
    if (1..n).all(|v| count(v - 1) <= count(v)) {
        return (0..n).map(|v| (v, count(v))).collect();
    }
    let mut order = Vec::with_capacity(n);
    let mut rest = Vec::new();
    for run in (0..n).step_by(RUN) {
        let vertices = run..(run + RUN).min(n);
        let whole = vertices.len() == RUN && vertices.clone().all(|v| count(v) > 0);
        if whole {
            let k = vertices.clone().map(&count).max().unwrap_or(0);
            order.extend(vertices.map(|v| (v, k)));
        } else {
            rest.extend(vertices.map(|v| (v, count(v))));
        }
    }
    order.extend(rest);
    order
}

/// Where a mesh's joints and weights come from, checked against the positions: the glTF-style
/// attribute pairs or the flat influences, never both.
enum Sources<'a> {
    /// (JOINTS_n, WEIGHTS_n), four influences each.
    Attributes(Vec<(Attribute<'a>, Attribute<'a>)>),
    /// `per_vertex` influences per vertex, as given.
    Flat(FlatInfluences<'a>),
}

impl<'a> Sources<'a> {
    /// The rules on the influence sources of a mesh of `n` vertices (see the [module docs](crate::skinning::mesh)).
    fn check(input: &MeshInput<'a>, n: usize) -> Result<Sources<'a>, Error> {
        const JOINT_NAMES: [&str; 4] = ["JOINTS_0", "JOINTS_1", "JOINTS_2", "JOINTS_3"];
        const WEIGHT_NAMES: [&str; 4] = ["WEIGHTS_0", "WEIGHTS_1", "WEIGHTS_2", "WEIGHTS_3"];
        if let Some(flat) = input.influences {
            if input
                .joints
                .iter()
                .chain(&input.weights)
                .any(Option::is_some)
            {
                return Err(Error::CountMismatch {
                    what: "influence sources (flat influences or JOINTS_n/WEIGHTS_n, not both)",
                    expected: 1,
                    got: 2,
                });
            }
            if !(1..=MAX_INFLUENCES).contains(&flat.per_vertex) {
                return Err(Error::InfluenceCount {
                    what: "influences per vertex",
                    count: flat.per_vertex,
                });
            }
            // n <= MAX_VERTICES and per_vertex <= 16: no overflow.
            let expected = n * flat.per_vertex;
            let lengths = [
                (
                    "influence joints (influences per vertex times vertices)",
                    flat.joints.len(),
                ),
                (
                    "influence weights (influences per vertex times vertices)",
                    flat.weights.len(),
                ),
            ];
            for (what, got) in lengths {
                if got != expected {
                    return Err(Error::CountMismatch {
                        what,
                        expected,
                        got,
                    });
                }
            }
            return Ok(Sources::Flat(flat));
        }
        let mut sets = Vec::new();
        for set in 0..JOINT_NAMES.len() {
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
        Ok(Sources::Attributes(sets))
    }

    /// Appends vertex `v`'s influences as (joint, weight), in the order given, zero weights included.
    /// Only after `check`.
    fn read(&self, v: usize, out: &mut Vec<(u32, f32)>) {
        match self {
            Sources::Attributes(sets) => {
                for (j, w) in sets {
                    let (ji, wi) = (j.indices(v), w.floats(v));
                    out.extend(ji.into_iter().zip(wi));
                }
            }
            Sources::Flat(flat) => {
                let range = v * flat.per_vertex..(v + 1) * flat.per_vertex;
                let joints = flat.joints[range.clone()].iter().map(|&j| u32::from(j));
                out.extend(joints.zip(flat.weights[range].iter().copied()));
            }
        }
    }
}

/// A validated skinned mesh in the kernels' layout (see the [module docs](crate::skinning::mesh)).
#[derive(Clone, Debug, PartialEq)]
pub struct SkinnedMesh {
    vertex_count: usize,
    joint_count: usize,
    has_normals: bool,
    has_tangents: bool,
    /// Each vertex's own influence count (its group may hold it with more, see `group_of_runs`).
    counts: Vec<u8>,
    /// The largest of `counts` (0 for no vertex), for bounds that must not walk the vertices.
    max_count: u8,
    /// The largest magnitude of any position, normal or tangent coordinate, and the largest sum of one
    /// vertex's weights: with the palette's largest element they bound every skinned coordinate
    /// (see [`SkinnedMesh::bounded_by`]).
    magnitude: f64,
    weight_sum: f64,
    /// Each joint's box of the bind positions of the vertices it influences (min > max when it
    /// influences none), for the joints up to the largest one used (not `joint_count`, which a caller
    /// may set to anything), and the smallest and largest sum of one
    /// vertex's weights as the kernels read them: what [`SkinnedMesh::joint_box`] and
    /// [`SkinnedMesh::weight_sums`] report.
    joint_boxes: Vec<(Vec3, Vec3)>,
    weight_sums: (f32, f32),
    /// The kernels' layout; group k holds the vertices with k influences (k = 0 only with
    /// `WeightPolicy::Keep`).
    pub(crate) kernel: KernelMesh,
}

impl SkinnedMesh {
    /// Validates the input and converts it (see the [module docs](crate::skinning::mesh) for every rule).
    pub fn prepare(input: &MeshInput<'_>, options: &PrepareOptions) -> Result<SkinnedMesh, Error> {
        let n = input.positions.count;
        if n > MAX_VERTICES {
            return Err(Error::TooManyVertices {
                vertices: n,
                max: MAX_VERTICES,
            });
        }
        input.positions.check("positions", &[Format::F32x3], n)?;
        if let Some(a) = &input.normals {
            a.check("normals", &[Format::F32x3], n)?;
        }
        if let Some(a) = &input.tangents {
            a.check("tangents", &[Format::F32x4], n)?;
        }
        let sources = Sources::check(input, n)?;
        // 0 would drop every influence and 17 or more cannot be stored: both are errors, not clamped.
        if !(1..=MAX_INFLUENCES).contains(&options.max_influences) {
            return Err(Error::InfluenceCount {
                what: "max_influences",
                count: options.max_influences,
            });
        }
        let max_influences = options.max_influences;
        // The attributes' floats per vertex in the kernels' blocks (see InfluenceGroup).
        let components = if input.tangents.is_some() {
            10
        } else if input.normals.is_some() {
            6
        } else {
            3
        };

        let mut groups: Vec<InfluenceGroup> = (0..=MAX_INFLUENCES)
            .map(|influences| InfluenceGroup {
                influences,
                components,
                table: if options.compact_influences {
                    InfluenceTable::Compact(Vec::new())
                } else {
                    InfluenceTable::default()
                },
                ..Default::default()
            })
            .collect();
        // Pass 1: every vertex's influences, validated, LOD-truncated and (by policy) normalized, kept
        // flat: vertex v's are `kept[starts[v]..starts[v + 1]]`.
        let mut slots: Vec<(u32, f32)> = Vec::with_capacity(MAX_INFLUENCES);
        let mut influences: Vec<(u32, f32)> = Vec::with_capacity(MAX_INFLUENCES);
        let mut kept: Vec<(u32, f32)> = Vec::with_capacity(n * 2);
        let mut starts: Vec<usize> = Vec::with_capacity(n + 1);
        starts.push(0);
        // The largest joint index with a non-zero weight, plus one.
        let mut used_joints = 0;
        let (mut weight_sum, mut magnitude) = (0.0f64, 0.0f64);
        for v in 0..n {
            slots.clear();
            sources.read(v, &mut slots);
            influences.clear();
            for &(joint, weight) in &slots {
                if !weight.is_finite() || weight < 0.0 {
                    return Err(Error::InvalidWeight { vertex: v, weight });
                }
                if weight == 0.0 {
                    continue;
                }
                match options.joint_count {
                    Some(joints) if joint as usize >= joints => {
                        return Err(Error::VertexJointOutOfRange {
                            vertex: v,
                            joint: joint as usize,
                            joints,
                        });
                    }
                    _ => used_joints = used_joints.max(joint as usize + 1),
                }
                influences.push((joint, weight));
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
            weight_sum = weight_sum.max(f64::from(influences.iter().map(|i| i.1).sum::<f32>()));
            kept.extend_from_slice(&influences);
            starts.push(kept.len());
        }

        // Pass 2: each vertex's group (see `group_of_runs`), then pass 3 fills the groups in that order.
        let count = |v: usize| starts[v + 1] - starts[v];
        let empty = (Vec3::INFINITY, Vec3::NEG_INFINITY);
        let mut joint_boxes = vec![empty; used_joints];
        let mut weight_sums = (f32::INFINITY, f32::NEG_INFINITY);
        // Each vertex goes to the group of a count that has a kernel (see `kernel_influences`).
        for (v, k) in group_of_runs(n, |v| kernel_influences(count(v))) {
            let g = &mut groups[k];
            // v < n <= MAX_VERTICES < u32::MAX, checked above; the conversion says so instead of
            // truncating.
            g.vertices
                .push(u32::try_from(v).map_err(|_| Error::TooManyVertices {
                    vertices: n,
                    max: MAX_VERTICES,
                })?);
            let p = input.positions.floats(v);
            let nrm = input.normals.as_ref().map_or([0.0; 4], |a| a.floats(v));
            let t = input.tangents.as_ref().map_or([0.0; 4], |a| a.floats(v));
            for (what, floats) in [
                ("positions", &p[..3]),
                ("normals", &nrm[..3]),
                ("tangents", &t),
            ] {
                if let Some(&value) = floats.iter().find(|x| !x.is_finite()) {
                    return Err(Error::NotFinite {
                        what,
                        index: v,
                        value,
                    });
                }
            }
            magnitude = p[..3]
                .iter()
                .chain(&nrm[..3])
                .chain(&t[..3])
                .fold(magnitude, |m, x| m.max(f64::from(x.abs())));
            let at = g.vertices.len() - 1;
            g.push_attributes(
                at,
                &[
                    p[0], p[1], p[2], nrm[0], nrm[1], nrm[2], t[0], t[1], t[2], t[3],
                ],
            );
            let own = &kept[starts[v]..starts[v + 1]];
            let at_p = Vec3::new(p[0], p[1], p[2]);
            for &(j, _) in own {
                if let Some(b) = joint_boxes.get_mut(j as usize) {
                    *b = (b.0.min(at_p), b.1.max(at_p));
                }
            }
            // A vertex promoted to a group of more influences repeats its first joint with weight 0:
            // the extra products add exact zeros, and a joint the vertex already uses cannot bring in a
            // non-finite matrix that the vertex's own result would not have had.
            let pad = own.first().map_or(0, |i| i.0);
            let padding = (own.len()..k).map(|_| (pad, 0.0));
            if options.compact_influences {
                let quantized = quantize_unorm16(own, options.weights)
                    .map_err(|weight| Error::CompactWeight { vertex: v, weight })?;
                let mut sum = 0.0f32;
                for (&(j, _), &q) in own.iter().zip(&quantized) {
                    // Joints come from u8 or u16 attributes, so they fit the low 16 bits.
                    g.table.push(j, unorm16(q), q);
                    sum += unorm16(q);
                }
                weight_sums = (weight_sums.0.min(sum), weight_sums.1.max(sum));
                padding.for_each(|(j, _)| g.table.push(j, 0.0, 0));
            } else {
                let sum: f32 = own.iter().map(|i| i.1).sum();
                weight_sums = (weight_sums.0.min(sum), weight_sums.1.max(sum));
                for (j, w) in own.iter().copied().chain(padding) {
                    g.table.push(j, w, 0);
                }
            }
        }
        // One-influence vertices whose weights are all exactly 1 keep only their joints.
        let rigid = &mut groups[1].table;
        if (0..rigid.len()).all(|f| rigid.get(f).1 == 1.0) {
            *rigid = rigid.to_rigid();
        }
        for g in &mut groups {
            g.contiguous = g.vertices.windows(2).all(|w| w[1] == w[0] + 1);
            // The padding to a whole block: joint 0 with weight 0 (see InfluenceGroup).
            for _ in g.vertices.len()..padded(g.vertices.len()) {
                for _ in 0..g.influences {
                    g.table.push(0, 0.0, 0);
                }
            }
        }
        let joint_count = options.joint_count.unwrap_or(used_joints);
        if n == 0 {
            weight_sums = (0.0, 0.0);
        }
        // At most MAX_INFLUENCES (16) each, after the LOD above.
        let counts: Vec<u8> = (0..n).map(|v| count(v) as u8).collect();
        Ok(SkinnedMesh {
            vertex_count: n,
            joint_count,
            has_normals: input.normals.is_some(),
            has_tangents: input.tangents.is_some(),
            max_count: counts.iter().copied().max().unwrap_or(0),
            counts,
            magnitude,
            // Compact weights are rounded to unorm16: each by at most half a unit.
            weight_sum: weight_sum + MAX_INFLUENCES as f64 / 65535.0,
            joint_boxes,
            weight_sums,
            kernel: KernelMesh::new(n, joint_count, groups),
        })
    }

    /// Whether skinning this mesh with a palette whose affine elements are at most `palette` in
    /// magnitude can only give finite coordinates, before renormalization: every blended element is at
    /// most `weight_sum * palette`, and every skinned coordinate at most that times
    /// `3 * magnitude + 1`. Half of `f32::MAX` leaves room for rounding. The magnitude itself must be
    /// below it too: a morphed copy's (see [`set_magnitude`](Self::set_magnitude)) can exceed `f32`, so
    /// its f32 vertices can hold an infinity that a small palette would not make finite.
    pub(crate) fn bounded_by(&self, palette: f64) -> bool {
        let limit = f64::from(f32::MAX) * 0.5;
        self.magnitude < limit && self.weight_sum * palette * (3.0 * self.magnitude + 1.0) < limit
    }

    /// Whether dual-quaternion skinning of this mesh with entries whose floats are at most `entries` in
    /// magnitude, and whose real parts' floats at most `real`, can only give finite coordinates, before
    /// renormalization. With w the weight sum, E and E_r those bounds and M the attributes' magnitude:
    /// the blended S and dual-quaternion sums are at most w E per element, so S_b v is at most 3 w E M
    /// per coordinate; the blended real part is at most w E_r per element, its squared length at most
    /// 4 (w E_r)^2, and it is divided by its length only where that square exceeds 1e-20, so the
    /// normalized dual part is at most 1e10 w E; a rotation by a unit quaternion (as `rotate_by`
    /// computes it) grows a coordinate at most 13 times, and the translation is at most 8 times the
    /// dual part. So every coordinate is at most w E (39 M + 8e10). Without the scale-and-shear phase
    /// a coordinate is at most 13 M + 8e10 w E, within the same bound because that phase is skipped
    /// only for rigid entries (whose S diagonal makes E at least 1) and weight sums of 1. The
    /// dot products of the hemisphere test may overflow: they are only compared with zero. Half of
    /// `f32::MAX` leaves room for rounding, and M must stay below it (see [`bounded_by`](Self::bounded_by)).
    pub(crate) fn dual_quat_bounded_by(&self, real: f64, entries: f64) -> bool {
        let (wr, we) = (self.weight_sum * real, self.weight_sum * entries);
        let limit = f64::from(f32::MAX) * 0.5;
        self.magnitude < limit
            && we * (39.0 * self.magnitude + 8e10) < limit
            && 4.0 * wr * wr < limit
    }

    /// The attribute magnitude of this mesh as a frame's morphed copy holds it: at most `magnitude`
    /// (the base's plus the weighted deltas' largest), so that [`bounded_by`](Self::bounded_by) holds
    /// for what was written into the copy.
    pub(crate) fn set_magnitude(&mut self, magnitude: f64) {
        self.magnitude = magnitude;
    }

    /// The largest magnitude of a position, normal or tangent coordinate of the mesh.
    pub(crate) fn magnitude(&self) -> f64 {
        self.magnitude
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    /// The palette length this mesh was validated against:
    /// [`PrepareOptions::joint_count`](PrepareOptions#structfield.joint_count) when it was given, else
    /// the mesh's largest joint index with a non-zero weight plus one (0 when it has none).
    /// A [`SkinningJob`](crate::SkinningJob) needs a palette at least this long.
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// The box (min, max) of the bind positions of the vertices that palette entry `joint` influences
    /// with a non-zero weight, or `None` when it influences none (or does not exist). A skinned
    /// position is a weighted sum of its joints' palette matrices applied to its bind position, so the
    /// boxes, moved by a frame's palettes, bound the skinned mesh without reading its vertices
    /// ([`Character::pose_bounds`](crate::Character::pose_bounds)).
    pub fn joint_box(&self, joint: usize) -> Option<(Vec3, Vec3)> {
        self.joint_boxes
            .get(joint)
            .copied()
            .filter(|(min, max)| min.cmple(*max).all())
    }

    /// The smallest and largest sum of one vertex's weights, as the kernels read them (1 within
    /// rounding for normalized weights; compact weights are rounded to 16 bits; any sum with
    /// [`WeightPolicy::Keep`]). (0, 0) for a mesh without vertices.
    pub fn weight_sums(&self) -> (f32, f32) {
        self.weight_sums
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
    /// only, else 48), its original index (4), its influence count (1), and its influences (8 bytes each, 4 with
    /// [`PrepareOptions::compact_influences`]), counting those a promoted vertex is padded with (a run
    /// of 16 vertices takes its largest count; 9 to 11 influences are stored as 12, 13 to 15 as 16). When every one-influence vertex has weight exactly 1
    /// (always with [`WeightPolicy::Normalize`]), those vertices hold only their joint, 4 bytes in all.
    /// Spare capacity and the fixed-size parts of the struct are not counted.
    pub fn heap_bytes(&self) -> usize {
        self.counts.len()
            + std::mem::size_of_val(self.joint_boxes.as_slice())
            + self
                .kernel
                .groups()
                .iter()
                .map(InfluenceGroup::bytes)
                .sum::<usize>()
    }

    /// The largest influence count of a vertex, as prepared (before the kernels' padding to 12 or 16);
    /// 0 for a mesh without vertices.
    pub(crate) fn max_influences(&self) -> usize {
        usize::from(self.max_count)
    }

    /// How many vertices have 0, 1, ..., 16 influences (their own, before any promotion; see the
    /// [module docs](crate::skinning::mesh)).
    pub fn influence_histogram(&self) -> [usize; MAX_INFLUENCES + 1] {
        let mut histogram = [0; MAX_INFLUENCES + 1];
        for &k in &self.counts {
            histogram[usize::from(k)] += 1;
        }
        histogram
    }

    /// True when each influence group covers one contiguous range of original vertices: always for a
    /// mesh with a single influence count, and for any mesh whose vertices were reordered by
    /// [`permutation`](Self::permutation). Streaming stores
    /// ([`SkinningJob::streaming`](crate::SkinningJob::streaming)) need it.
    pub fn streams_sequentially(&self) -> bool {
        self.kernel.groups().iter().all(|g| g.contiguous)
    }

    /// The vertices sorted by influence count (stably): `permutation()[i]` is the original index of the
    /// i-th vertex. Reordering the vertex buffers this way once (and remapping the index buffer with
    /// the inverse) makes every influence group one contiguous range
    /// ([`streams_sequentially`](Self::streams_sequentially)), with no vertex promoted except from 9 to
    /// 11 influences to 12 and from 13 to 15 to 16, the counts the kernels have; the results are in
    /// original order either way.
    pub fn permutation(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.counts.len() as u32).collect();
        order.sort_by_key(|&v| self.counts[v as usize]);
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

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

    /// The dual-quaternion bound at tests/dual_quat.rs's edge case (a real part of 2e-10, a dual part
    /// of 2e27, positions of 1, one weight of 1): proven there, not at twice the dual part, and never
    /// for a magnitude past f32 (an overflowed morph), whatever the palette.
    #[test]
    fn dual_quat_bound_at_its_edge() {
        let mut mesh = one_influence(1.0, WeightPolicy::Normalize);
        assert!(mesh.dual_quat_bounded_by(2e-10, 2e27));
        assert!(!mesh.dual_quat_bounded_by(2e-10, 4e27));
        assert!(!mesh.dual_quat_bounded_by(2e19, 2e19));
        mesh.set_magnitude(1e39);
        assert!(!mesh.dual_quat_bounded_by(1.0, 1.0));
        assert!(!mesh.bounded_by(1e-40));
    }

    /// The rigid kernel runs exactly when every one-influence weight is 1.
    #[test]
    fn rigid_group_needs_unit_weights() {
        assert!(one_influence(0.4, WeightPolicy::Normalize).kernel.groups()[1].rigid());
        assert!(one_influence(1.0, WeightPolicy::Keep).kernel.groups()[1].rigid());
        assert!(!one_influence(0.4, WeightPolicy::Keep).kernel.groups()[1].rigid());
    }

    /// Largest-remainder rounding: normalized weights quantize to units that sum to exactly 65535, each
    /// within one unit of its weight; kept weights round to the nearest unit; 65535 means exactly 1.
    #[test]
    fn unorm16_quantization() {
        // A small xorshift generator, seeded, so a failure reproduces.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            0.0001 + 0.9999 * (state >> 40) as f32 / (1u64 << 24) as f32
        };
        for k in 1..=MAX_INFLUENCES {
            for _ in 0..2000 {
                let raw: Vec<f32> = (0..k).map(|_| uniform()).collect();
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
