//! The layouts of the seeds' positions-only methods, built from a prepared [`SkinnedMesh`].

use crate::layout::mesh::SKIN_CHUNK;
use crate::SkinnedMesh;

/// A positions-only mesh for van Waveren's weighted base vectors (see
/// [`BaseVectorJob`](super::BaseVectorJob)), in original vertex order with a variable influence
/// count per vertex.
///
/// van Waveren stores each base vector in its joint's space, so his palette is the joints' model matrices.
/// Here it is stored in bind (mesh) space, `w * (p, 1)`, so that it works with the same palette as every
/// other kernel (model matrix times inverse bind); the work per influence, one 3x4 matrix times a weighted
/// 4-vector, is the same.
#[derive(Clone, Debug, PartialEq)]
pub struct BaseVectorMesh {
    joint_count: usize,
    /// Influences of each vertex (0 to 16, as the kernels' groups hold them).
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
        for (k, g) in mesh.kernel.groups().iter().enumerate() {
            for (i, &v) in g.vertices.iter().enumerate() {
                place[v as usize] = (k, i);
            }
        }
        let total: usize = mesh.kernel.groups().iter().map(|g| g.table.len()).sum();
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
            let g = &mesh.kernel.groups()[k];
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
/// [`BoneMajorJob`](super::BoneMajorJob)): for each palette joint, the list of vertices it moves,
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
            .kernel
            .groups()
            .iter()
            .flat_map(|g| g.table.joints())
            .map(|j| j as usize + 1)
            .max()
            .unwrap_or(0);
        let mut lists: Vec<Vec<(u32, f32, [f32; 3])>> = vec![Vec::new(); joints];
        for g in mesh.kernel.groups() {
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
