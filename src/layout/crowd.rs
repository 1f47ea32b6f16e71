//! The crowd layout: AoSoA blocks of [`CROWD_LANES`] instances, each element of a joint one 64-byte run.

/// Instances per AoSoA block (one 64-byte line of f32 per element), for every ISA.
pub const CROWD_LANES: usize = 16;
/// Floats per joint and instance of a pose: translation (3), rotation (4), scale (3).
pub(crate) const TRS_ELEMENTS: usize = 10;
/// The first element of a pose joint's translation, rotation and scale (the crowd sampling kernel's
/// `element`, ispc/sample.ispc).
pub(crate) const TRS_FIRST_ELEMENT: [i32; 3] = [0, 3, 7];
/// Floats per joint and instance of the models: the three rows of the affine 3x4.
pub(crate) const MODEL_ELEMENTS: usize = 12;
/// Largest joint count of a crowd, and largest palette of a crowd skin: a block's models take 768 bytes
/// per joint and its palettes 1,024 bytes per entry (16 instances of 64 bytes), which must stay below
/// 2^31 bytes for the kernels' 32-bit addressing.
pub const MAX_CROWD_JOINTS: usize = 1 << 20;
/// Largest instance count of a crowd.
pub const MAX_CROWD_INSTANCES: usize = 1 << 20;
/// Largest number of per-instance elements a crowd buffer holds in all: instances times joints for a
/// pose or the models, times palette entries for palettes, times vertices for skinned output. It bounds
/// the memory a crowd can ask for (3 GiB of model matrices at most, about 2.5 GiB of skinned positions,
/// normals and tangents).
pub const MAX_CROWD_ELEMENTS: usize = 1 << 26;

/// How a crowd job splits `instances` into at most `threads` tasks: (whole blocks per task, tasks), one
/// contiguous run of blocks per task rather than a task per block (a block is about a microsecond of
/// work).
pub(crate) fn block_tasks(instances: usize, threads: usize) -> (usize, usize) {
    let blocks = instances.div_ceil(CROWD_LANES);
    let per_task = blocks.div_ceil(threads.max(1)).max(1);
    (per_task, blocks.div_ceil(per_task))
}
