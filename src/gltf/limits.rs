//! [`ImportLimits`]: how much a glTF file may ask of the importer. A leaf of the module's import
//! graph, beside the error type, so that every stage can check a limit.

use super::error::GltfError;
use crate::Error;

/// How much a glTF file may make the importer read, hold and produce. Going over one is
/// [`GltfError::Limit`](crate::gltf::GltfError::Limit), naming the field and both values. The defaults
/// are sized for real characters with room to spare (the largest sample asset used here, Fox, has 24
/// nodes and 1,728 vertices; CesiumMan 22 nodes, 3,273 vertices and 48 keys per channel), so that only
/// files that ask for far more than any character needs meet them. Raise them for crowds baked into one
/// file, or for very long clips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportLimits {
    /// Bytes of the `.gltf`/`.glb` file, and of each external buffer file it names: 512 MiB.
    pub file_bytes: usize,
    /// Nodes in the file: 65,536.
    pub nodes: usize,
    /// Key times of one animation channel: 1,048,576 (over 4 hours at 60 keys per second).
    pub keys_per_channel: usize,
    /// Skinned vertices over every primitive instance (a mesh on N nodes counts N times): 4,194,304.
    pub skinned_vertices: usize,
    /// Bytes of one [`Frame`](crate::Frame)'s skinned output (12 bytes per position, 12 per normal and
    /// 16 per tangent, over every primitive instance): 256 MiB.
    pub output_bytes: usize,
}

impl Default for ImportLimits {
    fn default() -> ImportLimits {
        ImportLimits {
            file_bytes: 512 << 20,
            nodes: 1 << 16,
            keys_per_channel: 1 << 20,
            skinned_vertices: 1 << 22,
            output_bytes: 256 << 20,
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
