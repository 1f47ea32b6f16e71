//! Skinned primitives: [`LoadOptions`], reading one mesh primitive's attributes and indices into a
//! prepared [`SkinnedMesh`], the influence LOD rule for more than sixteen influences, and
//! [`SkinnedPrimitive`], one primitive on one node.

use super::accessors::{
    component_f32, component_u32, Reader, FLOATS_AND_NORMALIZED, SIGNED_FLOATS,
};
use super::error::GltfError;
use super::limits::ImportLimits;
use super::schema::{find, DataType, Dimensions, Mode, Primitive};
use crate::character::morph::SkinnedMorph;
use crate::MAX_INFLUENCES;
use crate::{
    Attribute, Error, MeshInput, MorphTargets, PrepareOptions, RigidMesh, SkinnedMesh, WeightPolicy,
};
use glam::{Vec3, Vec4};
use std::collections::HashMap;
use std::sync::Arc;

/// Options of [`GltfScene::load_with`](crate::gltf::GltfScene::load_with) and
/// [`GltfScene::from_slice_with`](crate::gltf::GltfScene::from_slice_with).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// Weights that do not sum to 1; [`WeightPolicy::Normalize`] by default (the spec requires a sum of 1,
    /// and quantized weights miss it slightly).
    pub weights: WeightPolicy,
    /// Influence LOD: keep at most this many influences per vertex, the heaviest (1 to 16; 16 by
    /// default).
    pub max_influences: usize,
    /// How much a file may ask for; [`ImportLimits::default`] by default.
    pub limits: ImportLimits,
    /// The order of each skinned primitive's vertices in the scene; [`VertexOrder::File`] by default.
    pub vertex_order: VertexOrder,
}

/// The order in which a scene holds each skinned primitive's vertices (its bind positions, triangles,
/// morph targets and the skinned outputs of every [`Frame`](crate::Frame)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VertexOrder {
    /// As in the file: the outputs line up with the file's other attributes (texture coordinates,
    /// colours) and its index buffer.
    #[default]
    File,
    /// Sorted by influence count, stably ([`SkinnedMesh::permutation`]), as ozz-animation's mesh
    /// importer does: every influence group is one contiguous range of vertices, so no vertex is
    /// promoted to a larger count (but 9 to 15 influences to the kernels' 12 or 16) and every gang's
    /// outputs are stored whole. This is the fastest order
    /// to skin. [`SkinnedPrimitive::triangles`] and [`SkinnedPrimitive::bind_positions`] are given in
    /// it, and [`SkinnedPrimitive::file_indices`] maps each vertex back to the file's, for the
    /// attributes the scene does not read. The skinned values are the same as in file order, vertex for
    /// vertex.
    ByInfluenceCount,
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions {
            weights: WeightPolicy::Normalize,
            max_influences: MAX_INFLUENCES,
            limits: ImportLimits::default(),
            vertex_order: VertexOrder::File,
        }
    }
}

/// The bind-pose data of one mesh primitive, prepared for one skin size (shared by its instances).
#[derive(Debug)]
pub(super) struct PrimitiveData {
    /// The prepared mesh, shared with the scene's [`Character`](crate::Character).
    pub(super) mesh: Arc<SkinnedMesh>,
    /// The bind-pose positions as stored in the file.
    pub(super) positions: Vec<Vec3>,
    pub(super) triangles: Vec<[u32; 3]>,
    /// The morph targets, permuted into the prepared mesh's layout, when the primitive has any.
    pub(super) morph: Option<Arc<SkinnedMorph>>,
    /// With [`VertexOrder::ByInfluenceCount`], the file's index of each vertex (`None` in file order,
    /// or when the file's order is already sorted).
    pub(super) file_indices: Option<Vec<u32>>,
}

/// One skinned primitive on one node: what a [`Frame`](crate::Frame) holds skinned vertices for.
#[derive(Clone, Debug)]
pub struct SkinnedPrimitive {
    pub(super) node: usize,
    pub(super) mesh: usize,
    pub(super) primitive: usize,
    pub(super) skin: usize,
    pub(super) data: Arc<PrimitiveData>,
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

    /// With [`VertexOrder::ByInfluenceCount`], the file's index of each of the scene's vertices
    /// (`file_indices()[i]` is the file's vertex behind vertex `i`); `None` when the scene keeps the
    /// file's order, which it also does when the file's vertices are already sorted.
    pub fn file_indices(&self) -> Option<&[u32]> {
        self.data.file_indices.as_deref()
    }
}

/// One primitive drawn without a skin on one node of the default scene: its vertices follow the node's
/// world matrix (after morphing, when the mesh has targets). What a [`Frame`](crate::Frame) holds
/// world-space vertices for in [`Frame::rigid_meshes`](crate::Frame::rigid_meshes).
#[derive(Clone, Debug)]
pub struct RigidPrimitive {
    pub(super) node: usize,
    pub(super) mesh: usize,
    pub(super) primitive: usize,
    pub(super) animated: bool,
    pub(super) data: Arc<RigidData>,
}

impl RigidPrimitive {
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

    /// Whether the node or one of its ancestors is a joint of a skin or the target of a translation,
    /// rotation or scale channel: a rigid primitive that moves with the animation. `false` for a static
    /// one, whose world matrix changes only with [`Frame::root`](crate::Frame::root).
    pub fn is_animated(&self) -> bool {
        self.animated
    }

    /// The mesh the frame's rigid stage runs on.
    pub fn rigid_mesh(&self) -> &RigidMesh {
        &self.data.mesh
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.data.mesh.vertex_count()
    }

    /// The positions as stored in the file (mesh space).
    pub fn bind_positions(&self) -> &[Vec3] {
        self.data.mesh.positions()
    }

    /// Triangles as vertex indices, as [`SkinnedPrimitive::triangles`] gives them.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.data.triangles
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

/// The set number of a JOINTS_n or WEIGHTS_n attribute name (`prefix` is "JOINTS_" or "WEIGHTS_"):
/// `n` written in decimal digits without a leading zero, so that each set has one name ("JOINTS_01"
/// and "JOINTS_+1" are no set's name, and are left out as unknown attributes are).
fn set_of(prefix: &str, name: &str) -> Option<u32> {
    let n = name.strip_prefix(prefix)?;
    super::validate::plain_decimal(n)
        .then(|| n.parse().ok())
        .flatten()
}

/// Reads one primitive of a mesh and prepares it for a skin of `joint_count` joints.
pub(super) fn read_primitive(
    r: &Reader<'_>,
    prim: &Primitive,
    mesh: usize,
    skin: usize,
    joint_count: usize,
    options: &LoadOptions,
) -> Result<PrimitiveData, GltfError<Error>> {
    let primitive = prim.index;
    let missing = |attribute: String| GltfError::MissingAttribute {
        mesh,
        primitive,
        attribute,
    };
    let Geometry {
        mut positions,
        mut normals,
        mut tangents,
        mut triangles,
    } = read_geometry(r, prim, mesh)?;
    let mut targets = read_morph_targets(r, prim, mesh, positions.len())?;
    // The accessor of each JOINTS_k and WEIGHTS_k, by set number (see set_of: one name per set).
    let mut joint_sets: HashMap<u32, usize> = HashMap::new();
    let mut weight_sets: HashMap<u32, usize> = HashMap::new();
    for (name, accessor) in &prim.attributes {
        if let Some(k) = set_of("JOINTS_", name) {
            joint_sets.insert(k, *accessor);
        } else if let Some(k) = set_of("WEIGHTS_", name) {
            weight_sets.insert(k, *accessor);
        }
    }
    let sets = joint_sets
        .keys()
        .chain(weight_sets.keys())
        .map(|&k| (k as usize).saturating_add(1))
        .max()
        .unwrap_or(0);
    let set_accessor = |prefix: &str, k: usize| {
        let sets = if prefix == "JOINTS_" {
            &joint_sets
        } else {
            &weight_sets
        };
        u32::try_from(k).ok().and_then(|k| sets.get(&k).copied())
    };
    // Grown set by set, not reserved from the largest set number: a file may name JOINTS_4294967295,
    // and the loop stops at the first missing set.
    let mut joints: Vec<Vec<[u16; 4]>> = Vec::new();
    let mut weights: Vec<Vec<[f32; 4]>> = Vec::new();
    for set in 0..sets {
        let j = set_accessor("JOINTS_", set).ok_or_else(|| missing(format!("JOINTS_{set}")))?;
        let w = set_accessor("WEIGHTS_", set).ok_or_else(|| missing(format!("WEIGHTS_{set}")))?;
        let (j, w) = (r.doc.accessor(j)?, r.doc.accessor(w)?);
        r.check_format(
            j,
            "JOINTS_n",
            &[Dimensions::Vec4],
            &[DataType::U8, DataType::U16],
        )?;
        r.check_format(
            w,
            "WEIGHTS_n",
            &[Dimensions::Vec4],
            &[DataType::F32, DataType::U8, DataType::U16],
        )?;
        let ji = r.read(j, |t, b| component_u32(t, b) as u16)?;
        // Unsigned weights are normalized by the spec; the flag is implied where a file leaves it out.
        let wf = r.read(w, |t, b| component_f32(t, true, b))?;
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
    if sets > MAX_INFLUENCES / 4 {
        (joints, weights) = keep_heaviest(&joints, &weights).map_err(wrap)?;
    }
    let mut prep = PrepareOptions::new(joint_count);
    prep.weights = options.weights;
    prep.max_influences = options.max_influences;
    let prepare = |positions: &[Vec3],
                   normals: Option<&[Vec3]>,
                   tangents: Option<&[Vec4]>,
                   joints: &[Vec<[u16; 4]>],
                   weights: &[Vec<[f32; 4]>]| {
        let mut input = MeshInput::new(
            Attribute::vec3(positions),
            Attribute::joints_u16(&joints[0]),
            Attribute::weights_f32(&weights[0]),
        );
        for (set, (j, w)) in joints.iter().zip(weights).enumerate().skip(1) {
            input.joints[set] = Some(Attribute::joints_u16(j));
            input.weights[set] = Some(Attribute::weights_f32(w));
        }
        input.normals = normals.map(Attribute::vec3);
        input.tangents = tangents.map(Attribute::vec4);
        SkinnedMesh::prepare(&input, &prep).map_err(wrap)
    };
    let mut skinned = prepare(
        &positions,
        normals.as_deref(),
        tangents.as_deref(),
        &joints,
        &weights,
    )?;
    let mut file_indices = None;
    if options.vertex_order == VertexOrder::ByInfluenceCount {
        let order = skinned.permutation();
        // A file already in that order keeps it, and is not prepared twice.
        if order.iter().enumerate().any(|(i, &v)| v as usize != i) {
            // Vertex i of the sorted streams is vertex order[i] of the file's.
            fn reorder<T: Copy>(v: &[T], order: &[u32]) -> Vec<T> {
                order.iter().map(|&i| v[i as usize]).collect()
            }
            positions = reorder(&positions, &order);
            normals = normals.map(|n| reorder(&n, &order));
            tangents = tangents.map(|t| reorder(&t, &order));
            for set in joints.iter_mut() {
                *set = reorder(set, &order);
            }
            for set in weights.iter_mut() {
                *set = reorder(set, &order);
            }
            targets = targets.map(|t| t.permuted(&order));
            let mut new_index = vec![0u32; order.len()];
            for (i, &v) in order.iter().enumerate() {
                new_index[v as usize] = i as u32;
            }
            for t in &mut triangles {
                *t = t.map(|v| new_index[v as usize]);
            }
            skinned = prepare(
                &positions,
                normals.as_deref(),
                tangents.as_deref(),
                &joints,
                &weights,
            )?;
            file_indices = Some(order);
        }
    }
    let morph = targets
        .map(|targets| SkinnedMorph::new(&skinned, targets).map(Arc::new))
        .transpose()
        .map_err(wrap)?;

    Ok(PrimitiveData {
        mesh: Arc::new(skinned),
        positions,
        triangles,
        morph,
        file_indices,
    })
}

/// A primitive's vertices and triangles, what every kind of primitive has.
pub(super) struct Geometry {
    pub(super) positions: Vec<Vec3>,
    pub(super) normals: Option<Vec<Vec3>>,
    pub(super) tangents: Option<Vec<Vec4>>,
    pub(super) triangles: Vec<[u32; 3]>,
}

/// Reads POSITION, NORMAL, TANGENT and the triangles of one primitive.
pub(super) fn read_geometry(
    r: &Reader<'_>,
    prim: &Primitive,
    mesh: usize,
) -> Result<Geometry, GltfError<Error>> {
    let primitive = prim.index;
    let missing = |attribute: String| GltfError::MissingAttribute {
        mesh,
        primitive,
        attribute,
    };
    let bad_value = |attribute: &'static str, vertex: usize| GltfError::AttributeValue {
        mesh,
        primitive,
        attribute,
        vertex,
    };
    let accessor = |semantic: &str| prim.get(semantic).map(|a| r.doc.accessor(a)).transpose();
    let positions = match accessor("POSITION")? {
        Some(acc) => r.vec3s(acc, "POSITION", &FLOATS_AND_NORMALIZED)?,
        None => return Err(missing("POSITION".into())),
    };
    let normals = match accessor("NORMAL")? {
        Some(acc) => Some(r.vec3s(acc, "NORMAL", &SIGNED_FLOATS)?),
        None => None,
    };
    let tangents = match accessor("TANGENT")? {
        Some(acc) => {
            r.check_format(acc, "TANGENT", &[Dimensions::Vec4], &SIGNED_FLOATS)?;
            let f = r.floats(acc)?;
            Some(
                f.chunks_exact(4)
                    .map(|c| Vec4::new(c[0], c[1], c[2], c[3]))
                    .collect::<Vec<_>>(),
            )
        }
        None => None,
    };
    let v = positions.len();
    if let Some(vertex) = positions.iter().position(|p| !p.is_finite()) {
        return Err(bad_value("POSITION", vertex));
    }
    if let Some(vertex) = normals
        .as_ref()
        .and_then(|n| n.iter().position(|x| !x.is_finite()))
    {
        return Err(bad_value("NORMAL", vertex));
    }
    if let Some(vertex) = tangents
        .as_ref()
        .and_then(|t| t.iter().position(|x| !x.is_finite()))
    {
        return Err(bad_value("TANGENT", vertex));
    }
    // The indices and the triangles they make are counted against the limits before either is
    // allocated (implicit indices are one per vertex).
    let index_accessor = prim.indices.map(|a| r.doc.accessor(a)).transpose()?;
    let index_count = index_accessor.map_or(v, |acc| acc.count);
    let triangle_count = match prim.mode {
        Mode::Triangles => index_count / 3,
        Mode::TriangleStrip | Mode::TriangleFan => index_count.saturating_sub(2),
        _ => 0,
    };
    r.tally.indices_and_triangles(index_count, triangle_count)?;
    let indices: Vec<u32> = match index_accessor {
        Some(acc) => {
            r.check_format(
                acc,
                "indices",
                &[Dimensions::Scalar],
                &[DataType::U8, DataType::U16, DataType::U32],
            )?;
            let idx = r.read(acc, component_u32)?;
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
    let triangles = match prim.mode {
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
    Ok(Geometry {
        positions,
        normals,
        tangents,
        triangles,
    })
}

/// Reads a primitive's morph targets (`None` without any): POSITION, NORMAL and TANGENT deltas, each
/// VEC3 with one element per vertex, sparse accessors included.
pub(super) fn read_morph_targets(
    r: &Reader<'_>,
    prim: &Primitive,
    mesh: usize,
    vertices: usize,
) -> Result<Option<MorphTargets>, GltfError<Error>> {
    let primitive = prim.index;
    let (mut positions, mut normals, mut tangents) = (Vec::new(), Vec::new(), Vec::new());
    for (target, t) in prim.targets.iter().enumerate() {
        for (attribute, out, types) in [
            ("POSITION", &mut positions, &FLOATS_AND_NORMALIZED[..]),
            ("NORMAL", &mut normals, &SIGNED_FLOATS[..]),
            ("TANGENT", &mut tangents, &SIGNED_FLOATS[..]),
        ] {
            let acc = find(t, attribute).map(|a| r.doc.accessor(a)).transpose()?;
            let deltas = match acc {
                Some(acc) => {
                    if acc.count != vertices {
                        return Err(GltfError::MorphDeltas {
                            mesh,
                            primitive,
                            target,
                            attribute,
                            count: acc.count,
                            vertices,
                        });
                    }
                    let usage = match attribute {
                        "POSITION" => "morph target POSITION deltas",
                        "NORMAL" => "morph target NORMAL deltas",
                        _ => "morph target TANGENT deltas",
                    };
                    let d = r.vec3s(acc, usage, types)?;
                    if let Some(vertex) = d.iter().position(|v| !v.is_finite()) {
                        return Err(GltfError::MorphDeltaValue {
                            mesh,
                            primitive,
                            target,
                            attribute,
                            vertex,
                        });
                    }
                    Some(d)
                }
                None => None,
            };
            out.push(deltas);
        }
    }
    if positions.is_empty() {
        return Ok(None);
    }
    // Every delta was checked to have one element per vertex above.
    MorphTargets::new(vertices, positions, normals, tangents)
        .map(Some)
        .map_err(|e| GltfError::Parse {
            message: format!("mesh {mesh} primitive {primitive}: {e}"),
        })
}

/// The bind data of one primitive that is not skinned (shared by its instances).
#[derive(Debug)]
pub(super) struct RigidData {
    pub(super) mesh: Arc<RigidMesh>,
    pub(super) triangles: Vec<[u32; 3]>,
}

/// Reads one primitive that is drawn without a skin, with its morph targets.
pub(super) fn read_rigid_primitive(
    r: &Reader<'_>,
    prim: &Primitive,
    mesh: usize,
) -> Result<RigidData, GltfError<Error>> {
    let g = read_geometry(r, prim, mesh)?;
    let primitive = prim.index;
    let v = g.positions.len();
    for (what, len) in [
        ("NORMAL", g.normals.as_ref().map(Vec::len)),
        ("TANGENT", g.tangents.as_ref().map(Vec::len)),
    ] {
        if let Some(got) = len.filter(|&l| l != v) {
            return Err(GltfError::AttributeCount {
                mesh,
                primitive,
                attribute: what,
                count: got,
                vertices: v,
            });
        }
    }
    let targets = read_morph_targets(r, prim, mesh, v)?;
    // The counts were checked above; RigidMesh repeats the check.
    let wrap = |error: Error| GltfError::Parse {
        message: format!("mesh {mesh} primitive {primitive}: {error}"),
    };
    let mut rigid = RigidMesh::new(g.positions, g.normals, g.tangents).map_err(wrap)?;
    if let Some(t) = targets {
        rigid = rigid.with_morph_targets(t).map_err(wrap)?;
    }
    Ok(RigidData {
        mesh: Arc::new(rigid),
        triangles: g.triangles,
    })
}

/// Reduces any number of JOINTS_n/WEIGHTS_n sets to four ([`MAX_INFLUENCES`], 16 influences), keeping
/// each vertex's heaviest influences: the crate's influence LOD rule, applied before
/// [`SkinnedMesh::prepare`] because its input has room for four sets. Invalid weights are reported here,
/// as prepare would.
#[allow(clippy::type_complexity)]
fn keep_heaviest(
    joints: &[Vec<[u16; 4]>],
    weights: &[Vec<[f32; 4]>],
) -> Result<(Vec<Vec<[u16; 4]>>, Vec<Vec<[f32; 4]>>), Error> {
    let v = joints.first().map_or(0, Vec::len);
    let mut j_out = vec![vec![[0u16; 4]; v]; MAX_INFLUENCES / 4];
    let mut w_out = vec![vec![[0f32; 4]; v]; MAX_INFLUENCES / 4];
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
