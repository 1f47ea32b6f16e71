//! Morph targets: the pre-pass kernels (`morph_floats` over one attribute stream, `morph_rows` over a
//! prepared mesh's rows) and the pass fused into skinning (`skin_morph_fused`).

use super::{FusedMorphArgs, MorphFloatsFn, MorphRowsFn, Runnable, MAX_ITEMS_PER_CALL};
use crate::layout::bounds::Bounds;
use crate::layout::mesh::{
    kernel_influences, padded, InfluenceTable, KernelMesh, MAX_VERTICES, SKIN_BLOCK,
};
use crate::layout::palette::PaletteMatrix;

/// Most targets one kernel call takes (the kernel reads an array of this many delta pointers at most).
pub(crate) const MORPH_BATCH: usize = 8;

/// `out[i] = b[i] + Σ_k weights[k] * deltas[k][i]`, where `b` is `base` or, when `base` is `None`, `out`
/// itself (accumulating a later batch of targets onto an earlier one).
///
/// # Panics
/// When a length does not match: `base` and every delta must be as long as `out`, there must be one
/// weight per delta, and at most [`MORPH_BATCH`] deltas. These are the calling job's checks.
pub(crate) fn morph_floats(
    isa: Runnable,
    base: Option<&[f32]>,
    deltas: &[&[f32]],
    weights: &[f32],
    out: &mut [f32],
) {
    let kernel: MorphFloatsFn = isa.kernels().morph_floats;
    let n = out.len();
    assert!(
        deltas.len() <= MORPH_BATCH,
        "morph batch of {}",
        deltas.len()
    );
    assert_eq!(deltas.len(), weights.len(), "one weight per morph target");
    if let Some(b) = base {
        assert_eq!(b.len(), n, "morph base length");
    }
    for d in deltas {
        assert_eq!(d.len(), n, "morph delta length");
    }
    let mut start = 0;
    while start < n {
        let len = (n - start).min(MAX_ITEMS_PER_CALL);
        let mut pointers = [std::ptr::null::<f32>(); MORPH_BATCH];
        for (p, d) in pointers.iter_mut().zip(deltas) {
            *p = d[start..start + len].as_ptr();
        }
        let chunk = &mut out[start..start + len];
        let accumulate = base.is_none();
        // Not read when accumulating; any valid pointer will do.
        let base_ptr = base.map_or(chunk.as_ptr(), |b| b[start..start + len].as_ptr());
        // SAFETY: the caller's `isa` proves the CPU runs this kernel's ISA. The kernel reads `len` floats
        // from `base_ptr` (only when not accumulating: then it is a subslice of `base` of exactly `len`
        // floats, asserted above) and from each of the first `deltas.len()` pointers (each a subslice of a
        // delta of exactly `len` floats, asserted above), `deltas.len()` floats from `weights`, and reads and
        // writes `len` floats of `chunk`. `len` is at most MAX_ITEMS_PER_CALL, so it fits in i32, and
        // `deltas.len() <= MORPH_BATCH` pointers are filled (the kernel only reads the pointer array, a local). `chunk` is borrowed exclusively, so no input
        // overlaps it except `base_ptr` while accumulating, which the kernel does not read. The kernel
        // assumes only 4-byte alignment.
        unsafe {
            kernel(
                base_ptr,
                chunk.as_mut_ptr(),
                len as i32,
                pointers.as_mut_ptr(),
                weights.as_ptr(),
                deltas.len() as i32,
                accumulate,
            )
        }
        start += len;
    }
}

/// [`morph_floats`] over `rows` strided rows of `row` floats: row r of `out` (and of `base`) starts at
/// float `r * stride`, row r of each delta at `r * row` (the deltas are packed). This is one attribute
/// of a prepared mesh's AoSoA blocks (`out` starting at the attribute's first run), so the morph writes
/// straight into the layout the skinning kernels read, touching nothing between the rows.
///
/// # Panics
/// When a length does not match: `0 < row <= stride`, `out` (and `base`) hold at least
/// `(rows - 1) * stride + row` floats, every delta exactly `rows * row`, one weight per delta, at most
/// [`MORPH_BATCH`] deltas. These are the calling job's checks.
#[allow(clippy::too_many_arguments)]
pub(crate) fn morph_rows(
    isa: Runnable,
    base: Option<&[f32]>,
    deltas: &[&[f32]],
    weights: &[f32],
    rows: usize,
    row: usize,
    stride: usize,
    out: &mut [f32],
) {
    let kernel: MorphRowsFn = isa.kernels().morph_rows;
    assert!(
        deltas.len() <= MORPH_BATCH,
        "morph batch of {}",
        deltas.len()
    );
    assert_eq!(deltas.len(), weights.len(), "one weight per morph target");
    assert!(
        row > 0 && row <= stride && stride <= MAX_ITEMS_PER_CALL,
        "morph rows of {row} floats every {stride}"
    );
    if rows == 0 {
        return;
    }
    let span = (rows - 1) * stride + row;
    assert!(out.len() >= span, "morph rows output length");
    if let Some(b) = base {
        assert!(b.len() >= span, "morph rows base length");
    }
    for d in deltas {
        assert_eq!(d.len(), rows * row, "morph rows delta length");
    }
    // Whole rows per call, so that no float index of a call reaches MAX_ITEMS_PER_CALL.
    let per_call = MAX_ITEMS_PER_CALL / stride;
    let mut start = 0;
    while start < rows {
        let len = (rows - start).min(per_call);
        let (first, floats) = (start * stride, (len - 1) * stride + row);
        let mut pointers = [std::ptr::null::<f32>(); MORPH_BATCH];
        for (p, d) in pointers.iter_mut().zip(deltas) {
            *p = d[start * row..(start + len) * row].as_ptr();
        }
        let chunk = &mut out[first..first + floats];
        let accumulate = base.is_none();
        // Not read when accumulating; any valid pointer will do.
        let base_ptr = base.map_or(chunk.as_ptr(), |b| b[first..first + floats].as_ptr());
        // SAFETY: the caller's `isa` proves the CPU runs this kernel's ISA. The kernel reads and writes
        // floats `r * stride + j` (r < len, j < row) of `chunk`, whose last one is
        // `(len - 1) * stride + row - 1 < floats`, its length; it reads the same floats of `base_ptr`
        // (only when not accumulating: then a subslice of `base` of exactly `floats` floats, asserted
        // above), `len * row` floats from each of the first `deltas.len()` pointers (each a subslice of
        // exactly that many, asserted above) and `deltas.len()` floats from `weights`. `len * stride` is
        // at most MAX_ITEMS_PER_CALL, so every index fits in i32, as do `row <= stride` and
        // `deltas.len() <= MORPH_BATCH`. `chunk` is borrowed exclusively, so no input overlaps it except
        // `base_ptr` while accumulating, which the kernel does not read. The kernel assumes only 4-byte
        // alignment.
        unsafe {
            kernel(
                base_ptr,
                chunk.as_mut_ptr(),
                len as i32,
                row as i32,
                stride as i32,
                pointers.as_mut_ptr(),
                weights.as_ptr(),
                deltas.len() as i32,
                accumulate,
            )
        }
        start += len;
    }
}

/// The active targets of one attribute for [`skin_morph_fused`]: each target's packed delta rows for the
/// whole mesh (3 * [`SKIN_BLOCK`] floats per block, every influence group in turn, as `SkinnedMorph`
/// stores them) and its weight, in target order.
pub(crate) type ActiveTargets<'d> = [(&'d [f32], f32)];

/// Morphs and skins every vertex of `mesh` in one pass per influence group (the
/// `skin_morph_fused` kernel): attribute s (positions, normals, tangents) of each vertex is its bind
/// value plus the weighted deltas of `active[s]`, transformed by the vertex's blended palette matrix
/// without renormalization. Vertex o's outputs go to `positions[3o..]`, `normals[3o..]` and
/// `tangents[4o..]` (w copied from the bind tangent), in original vertex order. Returns the box of the
/// positions written.
///
/// # Panics
/// When a precondition does not hold (the calling job's checks): the palette covers the mesh's joints,
/// no group is compact, at most [`MORPH_BATCH`] active targets per attribute and none for an attribute
/// the mesh lacks, every delta holds exactly the mesh's packed rows, and there is an output for exactly
/// the attributes the mesh has, with room for every vertex.
pub(crate) fn skin_morph_fused(
    isa: Runnable,
    mesh: &KernelMesh,
    palette: &[PaletteMatrix],
    active: [&ActiveTargets<'_>; 3],
    positions: &mut [f32],
    normals: Option<&mut [f32]>,
    tangents: Option<&mut [f32]>,
) -> Bounds {
    let n = mesh.vertex_count();
    let c = mesh.components();
    assert!(
        palette.len() >= mesh.joint_count(),
        "the palette covers the mesh's joints"
    );
    assert!(n <= MAX_VERTICES, "32-bit offsets");
    assert!(
        mesh.groups().iter().all(|g| !g.compact()),
        "the fused kernel reads f32 or rigid influences only"
    );
    let present = [true, c >= 6, c == 10];
    let rows: usize = mesh
        .groups()
        .iter()
        .map(|g| padded(g.vertices.len()) / SKIN_BLOCK * 3 * SKIN_BLOCK)
        .sum();
    for (targets, &here) in active.iter().zip(&present) {
        assert!(targets.len() <= MORPH_BATCH, "at most 8 active targets");
        assert!(
            here || targets.is_empty(),
            "no targets for a missing attribute"
        );
        assert!(
            targets.iter().all(|(d, _)| d.len() == rows),
            "packed delta rows for the whole mesh"
        );
    }
    assert!(positions.len() >= 3 * n, "3 position floats per vertex");
    assert_eq!(
        normals.is_some(),
        c >= 6,
        "normals written exactly when held"
    );
    assert_eq!(
        tangents.is_some(),
        c == 10,
        "tangents written exactly when held"
    );
    let null = std::ptr::null_mut();
    let nrm = normals.map_or(null, |x| {
        assert!(x.len() >= 3 * n, "3 normal floats per vertex");
        x.as_mut_ptr()
    });
    let tng = tangents.map_or(null, |x| {
        assert!(x.len() >= 4 * n, "4 tangent floats per vertex");
        x.as_mut_ptr()
    });
    let mut start = 0;
    let mut bounds = Bounds::EMPTY;
    for g in mesh.groups() {
        let count = g.vertices.len();
        let group_rows = start..start + padded(count) / SKIN_BLOCK * 3 * SKIN_BLOCK;
        start = group_rows.end;
        if count == 0 {
            continue;
        }
        // The kernel's switch has a loop for 0 to 8, 12 and 16 influences only and skips any other count.
        assert!(
            kernel_influences(g.influences) == g.influences,
            "the fused kernel skins {} influences per vertex",
            g.influences
        );
        let (joints, weights) = match &g.table {
            InfluenceTable::F32 {
                offsets: joints,
                weights,
            } => (joints.as_ptr(), weights.as_ptr()),
            InfluenceTable::Rigid(joints) | InfluenceTable::Compact(joints) => {
                (joints.as_ptr(), std::ptr::null())
            }
        };
        let mut args = FusedMorphArgs {
            influences: g.influences as i32,
            rigid: i32::from(g.rigid()),
            components: c as i32,
            first: if g.contiguous {
                g.vertices[0] as i32
            } else {
                -1
            },
            count: count as i32,
            active: [0; 3],
            blocks: g.blocks.as_ptr(),
            joints,
            weights,
            vertices: g.vertices.as_ptr(),
            palette: palette.as_ptr().cast(),
            deltas: [std::ptr::null(); 3 * MORPH_BATCH],
            morph_weights: [0.0; 3 * MORPH_BATCH],
            pos: positions.as_mut_ptr(),
            nrm,
            tng,
            bounds: std::ptr::null_mut(),
        };
        let mut group_bounds = Bounds::EMPTY;
        args.bounds = group_bounds.0.as_mut_ptr();
        for (s, targets) in active.iter().enumerate() {
            args.active[s] = targets.len() as i32;
            for (t, &(d, w)) in targets.iter().enumerate() {
                args.deltas[MORPH_BATCH * s + t] = d[group_rows.clone()].as_ptr();
                args.morph_weights[MORPH_BATCH * s + t] = w;
            }
        }
        // SAFETY: `isa` proves the CPU runs the kernel. The KernelMesh invariants give the group
        // `c * padded(count)` block floats, k joints and (not rigid) k weights per padded vertex, joints
        // below joint_count <= palette.len() (asserted; 16 floats per entry, and the tables hold each
        // joint as its palette offset, exactly 16 floats per joint), and original indices that are
        // a permutation of 0..n over all groups, so every output index o is below n and, for a contiguous
        // group, first + v < n. The kernel reads whole gangs from the group's start, which the padding to
        // whole blocks keeps inside those vectors, and, for each attribute s it writes (all the mesh
        // holds), `args.active[s] <= MORPH_BATCH` delta pointers (asserted), each the group's own
        // `3 * padded(count)` floats of a delta asserted to hold the mesh's rows, read at block offsets
        // below that. It writes 3 (3, 4) floats at 3o (3o, 4o) of positions (normals, tangents), each
        // asserted to hold 3n (3n, 4n) floats, and only for the group's `count` real vertices (a whole
        // gang of consecutive listed indices as that one range). The outputs are borrowed exclusively,
        // so no input overlaps them; groups write distinct vertices. Every index fits in i32 because
        // n <= MAX_VERTICES (asserted), and the kernel assumes only 4-byte alignment (the palette is
        // 64-byte aligned anyway). It never reads `weights` of a rigid group, nor `vertices` of a
        // contiguous one. It writes the 6 floats of `group_bounds`, a local array that outlives the call.
        unsafe { (isa.kernels().skin_morph_fused)(&args) };
        bounds = bounds.merge(group_bounds);
    }
    bounds
}
