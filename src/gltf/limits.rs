//! [`ImportLimits`]: how much a glTF file may ask of the importer. A leaf of the module's import
//! graph, beside the error type, so that every stage can check a limit.

use super::error::GltfError;
use crate::Error;
use std::cell::Cell;

/// The bytes the allocation estimate ([`ImportLimits::allocation_bytes`]) counts for each accessor
/// component read (an f32 or an integer widened to 32 bits).
pub(super) const COMPONENT_BYTES: usize = 4;
/// The bytes the allocation estimate counts for each index read (a `u32`).
pub(super) const INDEX_BYTES: usize = 4;
/// The bytes the allocation estimate counts for each triangle made (three `u32`).
pub(super) const TRIANGLE_BYTES: usize = 12;
/// The bytes the allocation estimate counts for each node: its rest pose, name, parent and children
/// at load, and its local pose and world matrix in a [`Frame`](crate::Frame), with room.
pub(super) const NODE_BYTES: usize = 512;
/// The bytes the allocation estimate counts for each primitive instance, beside its vertices: the
/// scene's record of it, the character's mesh entry, its output in a [`Frame`](crate::Frame) and its
/// entry in [`GltfScene::drawn`](crate::gltf::GltfScene::drawn), with room.
pub(super) const INSTANCE_BYTES: usize = 512;

/// How much a glTF file may make the importer read, hold and produce. Going over one is
/// [`GltfError::Limit`](crate::gltf::GltfError::Limit), naming the field and both values, and every
/// limit is checked before what it counts is allocated. The defaults are sized for real characters
/// with room to spare (the largest sample asset used here, Fox, has 24 nodes and 1,728 vertices;
/// CesiumMan 22 nodes, 3,273 vertices, 4,672 triangles, 48 keys per channel and 1 primitive instance),
/// so that only files that ask for far more than any character needs meet them. Raise them for crowds
/// baked into one file, or for very long clips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportLimits {
    /// Bytes of the `.gltf`/`.glb` file, and of each external buffer file it names: 512 MiB.
    pub file_bytes: usize,
    /// Nodes in the file: 65,536. Also bounds the node channels that `KHR_animation_pointer` channels
    /// at a mesh's weights become (one per node showing that mesh's weights).
    pub nodes: usize,
    /// Key times of one animation channel: 1,048,576 (over 4 hours at 60 keys per second).
    pub keys_per_channel: usize,
    /// Skinned vertices over every primitive instance (a mesh on N nodes counts N times): 4,194,304.
    pub skinned_vertices: usize,
    /// Bytes of one [`Frame`](crate::Frame)'s skinned output (12 bytes per position, 12 per normal and
    /// 16 per tangent, over every primitive instance): 256 MiB.
    pub output_bytes: usize,
    /// Primitive instances, skinned and rigid: every primitive of a mesh counts once for each node
    /// that draws it, even one without vertices (each costs a record in the scene and an output in
    /// every [`Frame`](crate::Frame)): 65,536.
    pub primitive_instances: usize,
    /// Indices read from the index accessors of the primitives read (each primitive once, however
    /// many nodes draw it), counted before they are read: 16,777,216.
    pub indices: usize,
    /// Triangles made from the primitives read (each primitive once; a strip or fan of n indices makes
    /// n - 2), counted before they are made: 8,388,608.
    pub triangles: usize,
    /// The bytes the load is predicted to allocate, checked before each part is allocated: 1 GiB.
    /// The prediction is a documented estimate, not a measurement: 4 bytes per accessor component
    /// read (every read, since each makes a copy; the importer reads an accessor once per use it cannot share), 4 per index, 12 per triangle, 512 per node, 512 per primitive
    /// instance beside its output, and the output bytes of one frame (as
    /// [`ImportLimits::output_bytes`] counts them). It leaves out the JSON text and tree and the
    /// buffers, which [`ImportLimits::file_bytes`] bounds.
    pub allocation_bytes: usize,
}

impl Default for ImportLimits {
    fn default() -> ImportLimits {
        ImportLimits {
            file_bytes: 512 << 20,
            nodes: 1 << 16,
            keys_per_channel: 1 << 20,
            skinned_vertices: 1 << 22,
            output_bytes: 256 << 20,
            primitive_instances: 1 << 16,
            indices: 1 << 24,
            triangles: 1 << 23,
            allocation_bytes: 1 << 30,
        }
    }
}

impl ImportLimits {
    /// [`GltfError::Limit`](crate::gltf::GltfError::Limit) when `value > max`.
    pub(super) fn check(
        limit: &'static str,
        value: usize,
        max: usize,
    ) -> Result<(), GltfError<Error>> {
        if value > max {
            return Err(GltfError::Limit { limit, value, max });
        }
        Ok(())
    }
}

/// The running totals of one load that the limits bound, kept by the load's reader so that every
/// stage adds to the same counts (saturating: a count never wraps).
pub(super) struct Tally {
    pub(super) limits: ImportLimits,
    indices: Cell<usize>,
    triangles: Cell<usize>,
    instances: Cell<usize>,
    bytes: Cell<usize>,
}

impl Tally {
    pub(super) fn new(limits: ImportLimits) -> Tally {
        Tally {
            limits,
            indices: Cell::new(0),
            triangles: Cell::new(0),
            instances: Cell::new(0),
            bytes: Cell::new(0),
        }
    }

    /// Adds `n` to a total and checks it against its limit.
    fn add(
        total: &Cell<usize>,
        limit: &'static str,
        n: usize,
        max: usize,
    ) -> Result<(), GltfError<Error>> {
        let v = total.get().saturating_add(n);
        total.set(v);
        ImportLimits::check(limit, v, max)
    }

    /// `bytes` more predicted allocation ([`ImportLimits::allocation_bytes`]).
    pub(super) fn allocate(&self, bytes: usize) -> Result<(), GltfError<Error>> {
        Tally::add(
            &self.bytes,
            "allocation_bytes",
            bytes,
            self.limits.allocation_bytes,
        )
    }

    /// `components` more accessor components read.
    pub(super) fn components(&self, components: usize) -> Result<(), GltfError<Error>> {
        self.allocate(components.saturating_mul(COMPONENT_BYTES))
    }

    /// One primitive's index count and the triangles they make, before either is allocated.
    pub(super) fn indices_and_triangles(
        &self,
        indices: usize,
        triangles: usize,
    ) -> Result<(), GltfError<Error>> {
        Tally::add(&self.indices, "indices", indices, self.limits.indices)?;
        Tally::add(
            &self.triangles,
            "triangles",
            triangles,
            self.limits.triangles,
        )?;
        self.allocate(
            indices
                .saturating_mul(INDEX_BYTES)
                .saturating_add(triangles.saturating_mul(TRIANGLE_BYTES)),
        )
    }

    /// One more primitive instance ([`INSTANCE_BYTES`] predicted; its output is added apart).
    pub(super) fn instance(&self) -> Result<(), GltfError<Error>> {
        Tally::add(
            &self.instances,
            "primitive_instances",
            1,
            self.limits.primitive_instances,
        )?;
        self.allocate(INSTANCE_BYTES)
    }
}
