//! The skinning kernel: `skin_group`, one export for every influence group (blended, rigid, compact,
//! with or without normals and tangents), whose arguments travel in one `SkinGroupArgs` struct. It
//! renormalizes normals and tangents itself.
//!
//! The job decides how the work runs (one thread or rayon's pool, chunk size, streaming stores,
//! renormalization); this file only carries those decisions out over raw pointers. Its inputs are the
//! kernels' own layouts: a [`KernelMesh`], whose invariants were checked when it was built, a palette,
//! and an [`Output`], whose bounds are checked here. Every call returns the box of the positions it
//! wrote, which the kernel keeps as it goes.

use super::{Runnable, SkinGroupArgs};
use crate::layout::bounds::Bounds;
use crate::layout::dual_quat::DualQuatEntry;
use crate::layout::mesh::{
    kernel_influences, padded, InfluenceGroup, InfluenceTable, KernelMesh, SKIN_BLOCK,
};
use crate::layout::output::{overlap, OutputView};
use crate::layout::palette::PaletteMatrix;
use std::marker::PhantomData;
use std::ops::Range;

/// How normals and tangents are renormalized, in the kernel's encoding (RENORM_* in ispc/skin.ispc;
/// none is 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RowsMode {
    /// Divided by their length.
    Precise = 1,
    /// Multiplied by a refined reciprocal square root.
    Fast = 2,
}

/// The palette a skinning call reads: matrices (linear blend skinning) or dual-quaternion entries. Both
/// are 16 floats per joint, 64-byte aligned, so the meshes' palette offsets (joint times 16) serve both.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Entries<'p> {
    /// Palette matrices: the linear kernel.
    Linear(&'p [PaletteMatrix]),
    /// Dual-quaternion entries: the dual-quaternion kernel, with its scale-and-shear phase where
    /// `scaled` (see `dual_quat_scaled` in src/skinning/job.rs).
    DualQuaternion {
        entries: &'p [DualQuatEntry],
        scaled: bool,
    },
}

const _: () = assert!(
    std::mem::size_of::<DualQuatEntry>() == 64 && std::mem::align_of::<DualQuatEntry>() == 64
);

impl Entries<'_> {
    fn len(self) -> usize {
        match self {
            Entries::Linear(p) => p.len(),
            Entries::DualQuaternion { entries, .. } => entries.len(),
        }
    }

    /// The first float of the first entry.
    fn as_ptr(self) -> *const f32 {
        match self {
            Entries::Linear(p) => p.as_ptr().cast(),
            Entries::DualQuaternion { entries, .. } => entries.as_ptr().cast(),
        }
    }

    /// The kernel's `dual_quaternion` flag: 0 linear, 1 dual quaternions with the scale-and-shear
    /// phase, 2 without it.
    fn flag(self) -> i32 {
        match self {
            Entries::Linear(_) => 0,
            Entries::DualQuaternion { scaled: true, .. } => 1,
            Entries::DualQuaternion { scaled: false, .. } => 2,
        }
    }
}

/// How a skinning call runs, decided by the job.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    /// `Some(chunk)`: chunks of this many vertices per task on rayon's pool; `None`: the calling thread.
    pub(crate) parallel_chunk: Option<usize>,
    /// Streaming stores through a cache-resident block (only where [`Output::can_stream`] and the mesh
    /// streams sequentially; asserted).
    pub(crate) stream: bool,
    /// Renormalization of normals and tangents, inside the kernel.
    pub(crate) rows: Option<RowsMode>,
}

/// A skinning output as raw pointers, checked against a vertex count: vertex o's position at
/// `pos + o * ps` (3 floats), its normal at `nrm + o * ns` (3 floats, when `wn`) and its tangent at
/// `tng + o * ts` (4 floats, when `wt`). It borrows the output slices for its lifetime.
pub(crate) struct Output<'o> {
    targets: Targets,
    n: usize,
    /// An interleaved buffer whose written attributes fill its stride exactly: its base and stride.
    whole: Option<(*mut f32, usize)>,
    /// The output can take streaming stores (separate streams, or a filled stride).
    stream_layout: bool,
    /// Where a streaming block's scratch buffer holds position, normal and tangent.
    scratch_at: (usize, usize, usize),
    _borrow: PhantomData<&'o mut [f32]>,
}

// SAFETY: an Output is only used by the calls below, whose parallel tasks write disjoint vertices (each
// vertex belongs to one group once, see KernelMesh::new, and tasks take disjoint ranges of a group), into
// slices it borrows mutably for its whole lifetime.
unsafe impl Send for Output<'_> {}
unsafe impl Sync for Output<'_> {}

impl<'o> Output<'o> {
    /// Wraps a validated output for `n` vertices. The job checked every layout rule before; a broken
    /// one here is a bug, so it panics (release builds too).
    pub(crate) fn new(view: OutputView<'o>, n: usize) -> Output<'o> {
        let null = std::ptr::null_mut();
        match view {
            OutputView::Separate {
                positions,
                normals,
                tangents,
            } => {
                assert!(positions.len() >= 3 * n, "3 position floats per vertex");
                assert!(
                    normals.as_ref().is_none_or(|x| x.len() >= 3 * n),
                    "3 normal floats per vertex"
                );
                assert!(
                    tangents.as_ref().is_none_or(|x| x.len() >= 4 * n),
                    "4 tangent floats per vertex"
                );
                assert!(
                    n.checked_mul(4)
                        .is_some_and(|x| x <= (i32::MAX as usize) / 4),
                    "32-bit offsets"
                );
                Output {
                    targets: Targets {
                        wn: normals.is_some(),
                        wt: tangents.is_some(),
                        pos: positions.as_mut_ptr(),
                        ps: 3,
                        nrm: normals.map_or(null, |x| x.as_mut_ptr()),
                        ns: 3,
                        tng: tangents.map_or(null, |x| x.as_mut_ptr()),
                        ts: 4,
                    },
                    n,
                    whole: None,
                    stream_layout: true,
                    scratch_at: (0, 3 * STAGE, 6 * STAGE),
                    _borrow: PhantomData,
                }
            }
            OutputView::Interleaved {
                floats,
                stride,
                positions,
                normals,
                tangents,
            } => {
                let fits = |o: Option<usize>, size: usize| {
                    o.is_none_or(|o| o.checked_add(size).is_some_and(|end| end <= stride))
                };
                assert!(
                    fits(Some(positions), 3) && fits(normals, 3) && fits(tangents, 4),
                    "attributes inside the stride"
                );
                assert!(
                    n.checked_mul(stride).is_some_and(|x| x <= floats.len()),
                    "n strides in the buffer"
                );
                assert!(
                    n.checked_mul(stride)
                        .is_some_and(|x| x <= (i32::MAX as usize) / 4),
                    "32-bit offsets"
                );
                let attrs = [(Some(positions), 3), (normals, 3), (tangents, 4)];
                assert!(!overlap(&attrs), "interleaved attributes do not overlap");
                let filled: usize = attrs.iter().filter(|a| a.0.is_some()).map(|a| a.1).sum();
                let base = floats.as_mut_ptr();
                let whole = (filled == stride && n > 0).then_some((base, stride));
                // SAFETY (pointer offsets only, nothing is accessed here): every offset is below the
                // stride, so each pointer stays inside the buffer when it holds a vertex; with n = 0
                // nothing is ever written through them and `wrapping_add` keeps the arithmetic defined.
                let at = |o: usize| base.wrapping_add(o);
                Output {
                    targets: Targets {
                        pos: at(positions),
                        ps: stride,
                        nrm: normals.map_or(null, at),
                        ns: stride,
                        wn: normals.is_some(),
                        tng: tangents.map_or(null, at),
                        ts: stride,
                        wt: tangents.is_some(),
                    },
                    n,
                    whole,
                    stream_layout: whole.is_some(),
                    scratch_at: (positions, normals.unwrap_or(0), tangents.unwrap_or(0)),
                    _borrow: PhantomData,
                }
            }
        }
    }

    /// True when streaming stores can write this output: on x86-64, to separate streams or to an
    /// interleaved buffer whose stride the written attributes fill (else the bytes between them would
    /// be overwritten).
    pub(crate) fn can_stream(&self) -> bool {
        cfg!(target_arch = "x86_64") && self.stream_layout
    }
}

/// Skins every influence group of `mesh` into `out`, as `plan` says, and returns the box of the
/// positions written.
pub(crate) fn skin_mesh(
    isa: Runnable,
    mesh: &KernelMesh,
    palette: Entries<'_>,
    out: &Output<'_>,
    plan: Plan,
) -> Bounds {
    let n = mesh.vertex_count();
    assert!(
        palette.len() >= mesh.joint_count(),
        "the palette covers the mesh's joints"
    );
    assert_eq!(
        out.n, n,
        "the output was checked for this mesh's vertex count"
    );
    let t = out.targets;
    assert!(
        (!t.wn || mesh.components() >= 6) && (!t.wt || mesh.components() == 10),
        "the mesh holds every attribute written"
    );
    let sequential = mesh.groups().iter().all(|g| g.contiguous);
    assert!(
        !plan.stream || (out.can_stream() && sequential),
        "streaming needs a streamable layout"
    );
    let mut bounds = Bounds::EMPTY;
    for g in mesh.groups() {
        let count = g.vertices.len();
        if count == 0 {
            continue;
        }
        // The original index of the group's first vertex; a contiguous group's vertex v is first + v.
        let first = g.vertices[0] as usize;
        let direct = |range: Range<usize>| {
            // SAFETY: `isa` proves the CPU runs the kernel. The KernelMesh invariants give the group
            // `block()` floats and k influences per vertex, joints below joint_count <= palette.len()
            // (f32 and rigid tables hold them as palette offsets, exactly 16 floats per joint),
            // and original indices that are a permutation of 0..n over all groups, so indices[v] < n
            // and, for a contiguous group, first + v < n. Ranges start at multiples of SKIN_BLOCK
            // (for_each_range's chunks are multiples of it). `out` holds every vertex below n (checked in
            // Output::new: separate streams of 3n, 3n and 4n floats, or n interleaved strides with
            // every attribute inside the stride) with offsets inside 32-bit range. Ranges of one group
            // are disjoint and vertices of different groups distinct, so parallel tasks never write
            // the same float. `range` lies in 0..count.
            unsafe {
                let indices = if g.contiguous {
                    Indices::From(first + range.start)
                } else {
                    Indices::Listed(g.vertices.as_ptr().add(range.start))
                };
                skin_block(
                    isa,
                    g,
                    palette,
                    range.start,
                    range.len(),
                    indices,
                    &out.targets,
                    plan.rows,
                )
            }
        };
        let staged =
            |range: Range<usize>| stage_and_stream(isa, g, palette, out, plan.rows, first, range);
        let run = |range: Range<usize>| {
            if plan.stream {
                staged(range)
            } else {
                direct(range)
            }
        };
        bounds = bounds.merge(for_each_range(count, plan.parallel_chunk, run));
    }
    bounds
}

/// Streaming: each block of STAGE vertices of `range` (inside group `g`, which is contiguous from
/// original index `first`) is skinned (and renormalized) into a scratch buffer laid out like the
/// output, then streamed out. Returns the box of the positions written.
fn stage_and_stream(
    isa: Runnable,
    g: &InfluenceGroup,
    palette: Entries<'_>,
    out: &Output<'_>,
    rows: Option<RowsMode>,
    first: usize,
    range: Range<usize>,
) -> Bounds {
    let t = out.targets;
    let mut bounds = Bounds::EMPTY;
    let floats_per_vertex = out.whole.map_or(10, |(_, stride)| stride);
    let mut scratch = vec![0.0f32; STAGE * floats_per_vertex];
    let s = scratch.as_mut_ptr();
    // Offsets inside scratch: below 10 * STAGE for separate streams, below the stride interleaved.
    let (sp, sn, st) = (
        s.wrapping_add(out.scratch_at.0),
        s.wrapping_add(out.scratch_at.1),
        s.wrapping_add(out.scratch_at.2),
    );
    for block in range.clone().step_by(STAGE) {
        let len = STAGE.min(range.end - block);
        let dst = first + block;
        let targets = Targets {
            pos: sp,
            nrm: sn,
            tng: st,
            ..t
        };
        // SAFETY: as in skin_mesh's direct path (block is a multiple of STAGE, itself a multiple of
        // SKIN_BLOCK, from a range start that is one too), except that vertex v of the block (v < len <= STAGE)
        // goes to index v of scratch: 3 floats at sp + v * ps, 3 at sn + v * ns and 4 at st + v * ts,
        // inside scratch (separate: segments of 3, 3 and 4 floats times STAGE; interleaved: offset +
        // size <= stride, STAGE strides), which only this call uses. The inputs are read at
        // block..block + len, inside the group.
        let skinned = unsafe {
            skin_block(
                isa,
                g,
                palette,
                block,
                len,
                Indices::From(0),
                &targets,
                rows,
            )
        };
        bounds = bounds.merge(skinned);
        // SAFETY: the group is contiguous (asserted in skin_mesh), so its vertices are first..first +
        // count, all below n; the block's outputs are vertices dst..dst + len. Separate: 3 (3, 4) floats
        // per vertex from dst on, inside the 3n (3n, 4n) float streams. Interleaved: `len` whole strides
        // from vertex dst, inside the n strides of the buffer, and the attributes fill the stride, so
        // every float copied was written by the kernel above. Other tasks work on other vertices.
        unsafe {
            match out.whole {
                None => {
                    stream_copy(sp, t.pos.add(3 * dst), 3 * len);
                    if t.wn {
                        stream_copy(sn, t.nrm.add(3 * dst), 3 * len);
                    }
                    if t.wt {
                        stream_copy(st, t.tng.add(4 * dst), 4 * len);
                    }
                }
                Some((base, stride)) => stream_copy(s, base.add(stride * dst), stride * len),
            }
        }
    }
    stream_fence();
    bounds
}

/// Calls `f` over disjoint ranges covering `0..count`: once on this thread, or in chunks of whole
/// [`SKIN_BLOCK`]s on rayon's pool, and merges the boxes it returns. The ranges are made here, not by
/// the caller, so that their disjointness (which the SAFETY comments above rely on) never depends on
/// code outside this module.
fn for_each_range<F: Fn(Range<usize>) -> Bounds + Sync + Send>(
    count: usize,
    parallel_chunk: Option<usize>,
    f: F,
) -> Bounds {
    match parallel_chunk {
        None => f(0..count),
        Some(chunk) => {
            use rayon::prelude::*;
            // Whole blocks per task: every kernel call starts a block (see skin_block).
            let chunk = padded(chunk.max(1));
            let ranges: Vec<_> = (0..count)
                .step_by(chunk)
                .map(|s| s..(s + chunk).min(count))
                .collect();
            ranges
                .into_par_iter()
                .map(f)
                .reduce(|| Bounds::EMPTY, Bounds::merge)
        }
    }
}

/// Where a skinning kernel writes (see [`Output`]).
#[derive(Clone, Copy)]
struct Targets {
    pos: *mut f32,
    ps: usize,
    nrm: *mut f32,
    ns: usize,
    wn: bool,
    tng: *mut f32,
    ts: usize,
    wt: bool,
}

/// Output indices of a block of vertices: listed (vertex v of the block goes to `list[v]`), or
/// consecutive from a first index (the kernels then read no index).
#[derive(Clone, Copy)]
enum Indices {
    Listed(*const u32),
    From(usize),
}

/// Skins vertices `start..start + len` of group `g` with its kernel (the rigid one when the group is
/// rigid), writing vertex `start + v`'s outputs at the index `indices` gives for v, and renormalizing
/// normals and tangents as `rows` says; returns the box of the positions written.
///
/// # Safety
/// `isa` must be runnable (its `Runnable` proves it); `start + len` is at most the group's vertex count
/// and its vectors have their documented lengths (`components` floats and k influences per vertex for
/// the count padded to whole blocks, where a rigid group has k = 1); a group without normals (tangents)
/// is not asked for them; every joint index is below `palette.len()`; a listed `indices` points at `len`
/// indices, and a consecutive one has `first + len` within i32; for each index o, the floats `out` names
/// for o are valid for writes and written by nobody else during the call; and every byte offset
/// `4 * o * stride` fits in i32 (ISPC's 32-bit addressing). `start` is asserted to be a multiple of
/// [`SKIN_BLOCK`].
#[allow(clippy::too_many_arguments)]
unsafe fn skin_block(
    isa: Runnable,
    g: &InfluenceGroup,
    palette: Entries<'_>,
    start: usize,
    len: usize,
    indices: Indices,
    out: &Targets,
    rows: Option<RowsMode>,
) -> Bounds {
    // The kernel reads whole gangs from the start of a block: the padding behind the group's last
    // vertex makes every such read land inside the group's arrays.
    assert_eq!(start % SKIN_BLOCK, 0, "a kernel call starts a block");
    let k = g.influences;
    // The linear kernel's switch has a loop for 0 to 8, 12 and 16 influences only and skips any other
    // count; the dual-quaternion loop takes the count as a value and decodes a compact gang's weights
    // into a buffer of 16 per vertex, so this assertion is also what keeps its reads and that buffer's
    // writes in bounds (the kernel skips a count above 16 as well).
    assert!(
        len == 0 || kernel_influences(k) == k,
        "the kernels skin {k} influences per vertex"
    );
    let c = g.components;
    // The kernels' encoding: a negative first means "read vertices".
    let (vertices, first) = match indices {
        Indices::Listed(v) => (v, -1),
        Indices::From(f) => (g.vertices.as_ptr(), f as i32),
    };
    // Vertices the kernel may prefetch from `start` on: the rest of the group's arrays, padding
    // included, across block and chunk boundaries, so that a streaming block's last vertices also find
    // their successors' inputs on the way. 0 (no prefetching) for groups that fit in the cache, where
    // the prefetches only cost time. Listed indices exist only for real vertices, and the kernel
    // prefetches them while the gang ahead lies below `readable`, so then the real count bounds it.
    let count = g.vertices.len();
    let readable = if g.input_bytes() < PREFETCH_MIN_BYTES {
        0
    } else if matches!(indices, Indices::Listed(_)) {
        count.saturating_sub(start).min(i32::MAX as usize) as i32
    } else {
        padded(count).saturating_sub(start).min(i32::MAX as usize) as i32
    };
    // A compact group's kernels read its packed influences where the joints would be, and a rigid
    // group's kernel only its joints: neither reads (or prefetches) weights, so they get a null weight
    // pointer.
    let (rigid, compact) = (g.rigid(), g.compact());
    let (joints, weights) = match &g.table {
        InfluenceTable::F32 {
            offsets: joints,
            weights,
        } => (
            &joints[..],
            // SAFETY: an f32 table holds k weights per padded vertex (none for k = 0, where the offset
            // is 0), and start is at most the vertex count.
            unsafe { weights.as_ptr().add(k * start) },
        ),
        InfluenceTable::Compact(joints) | InfluenceTable::Rigid(joints) => {
            (&joints[..], std::ptr::null())
        }
    };
    // SAFETY (pointer offsets only): start is a multiple of SKIN_BLOCK at most the group's vertex count,
    // and each vector holds `c` floats and k influences per padded vertex (a rigid group has k = 1), so
    // the offsets stay inside the vectors (at their end for start = padded count).
    let (blocks, joints) = unsafe {
        (
            g.blocks.as_ptr().add(c * start),
            joints.as_ptr().add(k * start),
        )
    };
    let mut bounds = Bounds::EMPTY;
    // The deterministic kernel is this kernel's code built without fused multiply-adds: the same call,
    // the same reads and writes.
    let kernel = isa.pick(|k| k.skin_group, |d| d.skin_group);
    let args = SkinGroupArgs {
        influences: k as i32,
        rigid: i32::from(rigid),
        compact: i32::from(compact),
        components: c as i32,
        first,
        count: len as i32,
        readable,
        renormalize: rows.map_or(0, |m| m as i32),
        dual_quaternion: palette.flag(),
        blocks,
        joints,
        weights,
        vertices,
        palette: palette.as_ptr(),
        pos: out.pos,
        pos_stride: out.ps as i32,
        nrm: out.nrm,
        nrm_stride: out.ns as i32,
        write_normals: i32::from(out.wn),
        tng: out.tng,
        tng_stride: out.ts as i32,
        write_tangents: i32::from(out.wt),
        bounds: bounds.0.as_mut_ptr(),
    };
    // SAFETY: the caller's contract. The kernel reads `args` once; through it, the group's inputs from
    // `start` on, in whole gangs that the padding keeps inside the vectors (see above), listed indices
    // of the `len` real vertices only (masked, or a whole gang of them at once when all its lanes are
    // real), and palette entries below palette.len() (block padding has joint 0, below the joint count
    // of any group with influences, and a promoted vertex's zero-weight influences repeat one of its
    // own joints), 16 floats each, matrices or dual-quaternion entries alike (the dual-quaternion
    // kernel reads each entry it uses as two 8-float halves, or whole on 16-lane ISAs: never past
    // it); it writes the outputs the caller vouches
    // for, for the `len` real vertices only: a whole gang whose listed indices are o, o + 1, ...,
    // o + W - 1 is written as that one range, which holds exactly those vertices' outputs. It prefetches (never loads) inputs of vertices
    // below `readable`, counted from `start`, which the group's vectors also hold. A group is never
    // asked for attributes it lacks (asserted in skin_mesh), and the rigid and compact forms never read
    // `weights`. It writes the 6 floats of `bounds`, a local array that outlives the call.
    unsafe { kernel(&args) };
    bounds
}

/// Groups whose inputs (blocks, joints and weights) reach this many bytes are skinned with software
/// prefetching (see PREFETCH_AHEAD in ispc/skin.ispc). In the experiment that chose it, prefetching was
/// neutral at 65,536 vertices with 4 influences (5 MiB of input) and 20% faster at 131,072 (10 MiB):
/// the hardware prefetchers keep up while the data comes from the L3 cache, not from memory.
const PREFETCH_MIN_BYTES: usize = 4 << 20;

/// Vertices per streaming block: their outputs (at most 40 bytes each) stay in the L1 cache.
const STAGE: usize = 256;

/// Copies `n` floats from `src` to `dst`, with non-temporal stores wherever `dst` is 16-byte aligned
/// (x86-64; elsewhere a plain copy).
///
/// # Safety
/// `src` must be valid for `n` reads and `dst` for `n` writes, and the two ranges must not overlap.
unsafe fn stream_copy(src: *const f32, dst: *mut f32, n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_loadu_ps, _mm_stream_ps};
        let mut i = 0;
        // SAFETY: every index is below n (the caller's contract); _mm_stream_ps gets a 16-byte aligned
        // address (the head loop ends there), and SSE is part of the x86-64 baseline.
        unsafe {
            while i < n && (dst.add(i) as usize) % 16 != 0 {
                *dst.add(i) = *src.add(i);
                i += 1;
            }
            while i + 4 <= n {
                _mm_stream_ps(dst.add(i), _mm_loadu_ps(src.add(i)));
                i += 4;
            }
            while i < n {
                *dst.add(i) = *src.add(i);
                i += 1;
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, n)
    }
}

/// Orders this thread's streaming stores before anything it does next (they are weakly ordered).
fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence has no preconditions; SSE is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}
