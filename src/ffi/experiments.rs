//! The seeds' experimental kernels (feature `experiments`): SoA local-to-model, the level-order
//! micro-benchmark, van Waveren's base vectors and bone-major accumulation.

use super::hierarchy::checked_range;
use super::Runnable;
use crate::layout::hierarchy::{LevelOrder, MAX_JOINTS};
use crate::layout::palette::PaletteMatrix;
use glam::{Mat4, Quat, Vec3, Vec4};
use std::ops::Range;

/// Roots in `joints`: model = root * local, on SoA matrices of `skeleton.len()` joints.
pub(crate) fn ltm_roots_soa(
    isa: Runnable,
    n: usize,
    local: &[f32],
    root: &Mat4,
    model: &mut [f32],
    joints: Range<usize>,
) {
    let (begin, end) = checked_range(&joints, n);
    assert!(
        n <= MAX_JOINTS && local.len() == 12 * n && model.len() == 12 * n,
        "12n-float SoA buffers"
    );
    let root = root.to_cols_array();
    // SAFETY: `isa` proves the CPU runs the kernel. It reads and writes element e of joint j at
    // e * n + j for e < 12 and j in [begin, end) within n, inside both 12n-float buffers, and reads the
    // 16 floats of `root`. 12n floats are below 2^31 bytes for n <= MAX_JOINTS.
    unsafe {
        (isa.kernels().ltm_roots_soa)(
            local.as_ptr(),
            model.as_mut_ptr(),
            n as i32,
            begin,
            end,
            root.as_ptr(),
        )
    }
}

/// The seed's per-parent foreach: for each parent in `parents`, its children's model matrices.
pub(crate) fn ltm_children_soa(
    isa: Runnable,
    order: &LevelOrder,
    local: &[f32],
    model: &mut [f32],
    parents: Range<usize>,
) {
    let n = order.len();
    let (begin, end) = checked_range(&parents, n);
    assert!(
        local.len() == 12 * n && model.len() == 12 * n,
        "12n-float SoA buffers"
    );
    let (starts, ends) = order.child_ranges();
    // SAFETY: `isa` proves the CPU runs the kernel. For each parent p in [begin, end) < n it reads
    // child_start[p] and child_end[p] (n u32 each); the skeleton guarantees p < start <= end <= n, so
    // every element index e * n + j (e < 12, j < n) lies inside both 12n-float buffers.
    unsafe {
        (isa.kernels().ltm_children_soa)(
            local.as_ptr(),
            model.as_mut_ptr(),
            n as i32,
            starts.as_ptr(),
            ends.as_ptr(),
            begin,
            end,
        )
    }
}

/// One level (or a contiguous part of one) below the roots: each lane gathers its parent.
pub(crate) fn ltm_level_soa(
    isa: Runnable,
    order: &LevelOrder,
    local: &[f32],
    model: &mut [f32],
    joints: Range<usize>,
) {
    let n = order.len();
    let (begin, end) = checked_range(&joints, n);
    assert!(
        local.len() == 12 * n && model.len() == 12 * n,
        "12n-float SoA buffers"
    );
    assert!(
        joints.clone().all(|j| order.parents()[j] >= 0),
        "no root in a level below the roots"
    );
    // SAFETY: `isa` proves the CPU runs the kernel. Every joint j in [begin, end) < n has a parent
    // 0 <= parents[j] < j (checked just above and guaranteed by the skeleton), so all gathers and
    // stores use indices e * n + k with e < 12 and k < n, inside both 12n-float buffers.
    unsafe {
        (isa.kernels().ltm_level_soa)(
            local.as_ptr(),
            model.as_mut_ptr(),
            n as i32,
            order.parents().as_ptr(),
            begin,
            end,
        )
    }
}

/// Local matrices in SoA from translation, rotation and scale, for all n joints.
pub(crate) fn trs_to_soa(
    isa: Runnable,
    translations: &[Vec3],
    rotations: &[Quat],
    scales: &[Vec3],
    local: &mut [f32],
) {
    let n = translations.len();
    assert!(n <= MAX_JOINTS && rotations.len() == n && scales.len() == n && local.len() == 12 * n);
    // SAFETY: `isa` proves the CPU runs the kernel. For j < n it reads 3, 4 and 3 floats of the n-item
    // slices and writes local[e * n + j] for e < 12, inside the 12n-float buffer.
    unsafe {
        (isa.kernels().trs_to_soa)(
            translations.as_ptr().cast(),
            rotations.as_ptr().cast(),
            scales.as_ptr().cast(),
            local.as_mut_ptr(),
            n as i32,
            n as i32,
        )
    }
}

/// The level-order seed's ParallelLevelOrder: for each joint, add its float4 to its children's.
pub(crate) fn level_sum_children(isa: Runnable, order: &LevelOrder, data: &mut [Vec4]) {
    let n = order.len();
    assert_eq!(data.len(), n, "one float4 per bone");
    let (starts, ends) = order.child_ranges();
    // SAFETY: `isa` proves the CPU runs the kernel. For each joint i < n it reads data[i] and updates the
    // 4 floats of every child in child_start[i]..child_end[i], a range inside 0..n by the skeleton's
    // construction; data holds n Vec4 (16 contiguous bytes each).
    unsafe {
        (isa.kernels().level_sum_children)(
            data.as_mut_ptr().cast(),
            starts.as_ptr(),
            ends.as_ptr(),
            n as i32,
        )
    }
}

/// The seed's sum level by level: each bone of levels 1.. adds its parent's float4.
pub(crate) fn level_sum_levels(isa: Runnable, order: &LevelOrder, data: &mut [Vec4]) {
    assert_eq!(data.len(), order.len(), "one float4 per bone");
    let levels = order.level_starts();
    // SAFETY: `isa` proves the CPU runs the kernel. levels holds level_count + 1 increasing bounds ending
    // at n, so every bone b the kernel visits is below n, and it reads parents[b] (n i32) and data at
    // 4 * parents[b], a bone before b. Its vector loads of parents read 1 or 2 vectors' worth of bones
    // from a parent p only where the block's highest parent plus that many bones is at most n (checked in
    // the kernel, so this holds for any parents below n). Stores touch only bones below each level's end
    // (the last window is masked). data holds n Vec4 of 16 contiguous bytes.
    unsafe {
        (isa.kernels().level_sum_levels)(
            data.as_mut_ptr().cast(),
            order.parents().as_ptr(),
            levels.as_ptr(),
            (levels.len() - 1) as i32,
        )
    }
}

/// van Waveren's weighted base vectors, positions only: for each vertex v (`counts.len()` of them),
/// `positions[3v..3v + 3]` gets `sum palette[joints[f]] * bases[f]` over its `counts[v]` influences,
/// which follow the previous vertex's. `chunk_firsts[c]` is the first influence of vertex
/// `c * chunk`, plus the total at the end; with `parallel`, chunks run on rayon's pool. Every
/// consistency rule is asserted.
#[allow(clippy::too_many_arguments)]
pub(crate) fn skin_p_base(
    isa: Runnable,
    counts: &[u8],
    joints: &[u32],
    bases: &[[f32; 4]],
    chunk_firsts: &[usize],
    chunk: usize,
    palette: &[PaletteMatrix],
    parallel: bool,
    positions: &mut [f32],
) {
    let n = counts.len();
    let total = joints.len();
    // Each call's offsets stay below 16 bytes times 16 influences times the chunk.
    assert!(
        (1..=1 << 20).contains(&chunk),
        "a chunk of 1 to 2^20 vertices"
    );
    let chunks = n.div_ceil(chunk);
    assert!(
        bases.len() == total && positions.len() >= 3 * n,
        "a base per influence, 3 floats per vertex"
    );
    assert_eq!(
        chunk_firsts.len(),
        chunks + 1,
        "a first influence per chunk, then the total"
    );
    let mut f = 0;
    for (v, &c) in counts.iter().enumerate() {
        if v % chunk == 0 {
            assert_eq!(chunk_firsts[v / chunk], f, "chunk firsts follow the counts");
        }
        assert!(
            usize::from(c) <= crate::layout::mesh::MAX_INFLUENCES,
            "at most 16 influences per vertex"
        );
        f += c as usize;
    }
    assert!(
        f == total && chunk_firsts[chunks] == total,
        "the counts sum to the influences"
    );
    assert!(
        joints.iter().all(|&j| (j as usize) < palette.len()),
        "joints inside the palette"
    );
    let out = SendPtr(positions.as_mut_ptr());
    let run = |c: usize| {
        let out = &out;
        let (start, end) = (c * chunk, ((c + 1) * chunk).min(n));
        let first = chunk_firsts[c];
        // SAFETY: `isa` proves the CPU runs the kernel. The counts of vertices start..end sum to
        // chunk_firsts[c + 1] - first (asserted above), so joints (1 u32 each) and bases (4 f32 each)
        // are read inside their slices; every joint is below palette.len() (asserted), 16 floats per
        // entry. It writes 3 floats per vertex from 3 * start on, inside positions (3n floats).
        // Chunks cover disjoint vertex ranges, so threads never write the same float. The kernel's own
        // offsets stay below 16 bytes times 16 influences times the chunk, far below 2^31.
        unsafe {
            (isa.kernels().skin_p_base)(
                (end - start) as i32,
                counts.as_ptr().add(start),
                joints.as_ptr().add(first),
                bases.as_ptr().add(first).cast(),
                palette.as_ptr().cast(),
                out.0.add(3 * start),
            )
        }
    };
    if parallel {
        use rayon::prelude::*;
        (0..chunks).into_par_iter().for_each(run);
    } else {
        (0..chunks).for_each(run);
    }
}

/// A raw output pointer shared by chunks that write disjoint ranges.
struct SendPtr(*mut f32);
// SAFETY: skin_p_base's chunks write disjoint vertex ranges of one borrowed slice.
unsafe impl Sync for SendPtr {}

/// Bone-major accumulation, positions only: zeroes `positions` (3 floats per vertex) and adds, list
/// after list (one per joint), each entry's weighted transformed position. List b is entries
/// `starts[b]..starts[b + 1]`, each a vertex index, a weight and a bind position (`px`, `py`, `pz`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn skin_p_bone_major(
    isa: Runnable,
    vertex_count: usize,
    starts: &[u32],
    vertex: &[u32],
    weight: &[f32],
    px: &[f32],
    py: &[f32],
    pz: &[f32],
    palette: &[PaletteMatrix],
    positions: &mut [f32],
) {
    let n = vertex_count;
    let bones = starts.len().saturating_sub(1);
    let total = vertex.len();
    assert!(
        [weight, px, py, pz].iter().all(|a| a.len() == total),
        "one of each per entry"
    );
    assert!(
        palette.len() >= bones && positions.len() >= 3 * n,
        "a palette entry per list"
    );
    assert!(starts.first() == Some(&0) && starts.last().map(|&s| s as usize) == Some(total));
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "list bounds rise");
    assert!(
        vertex.iter().all(|&v| (v as usize) < n),
        "vertex indices inside the mesh"
    );
    assert!(
        12 * n <= i32::MAX as usize && 4 * total <= i32::MAX as usize,
        "32-bit offsets"
    );
    positions[..3 * n].fill(0.0);
    // SAFETY: `isa` proves the CPU runs the kernel. starts has bones + 1 non-decreasing entries from 0
    // to `total` (asserted), so entries starts[b]..starts[b + 1] index inside vertex, weight, px, py and
    // pz (each `total` long). Palette entries 0..bones are read (bones <= palette.len()). Every vertex
    // index is below n (asserted), so the 3 floats read and written at 3 * vertex lie inside positions
    // (3n floats). Lanes of one step that name the same vertex write the same floats in one scatter,
    // which is defined (one value wins); the VFP layout merges such duplicates anyway.
    unsafe {
        (isa.kernels().skin_p_bone_major)(
            bones as i32,
            starts.as_ptr(),
            vertex.as_ptr(),
            weight.as_ptr(),
            px.as_ptr(),
            py.as_ptr(),
            pz.as_ptr(),
            palette.as_ptr().cast(),
            positions.as_mut_ptr(),
        )
    }
}
