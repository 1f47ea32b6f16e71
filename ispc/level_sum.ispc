#include "common.isph"

// The level-order seed's own micro-benchmark: add each parent's float4 to its children, for each
// parent in turn, vectorized over the children's floats (its ParallelLevelOrder). The parent's float4 is
// replicated over the lanes with a broadcast load instead of a gather.
//
// Two changes to the seed's loop, both measured: most bones are leaves, so the "has children?" test runs
// a whole gang of bones at a time and only the parents are then visited, in order; and each parent's last
// vector step is masked, so consecutive parents' stores never overlap (an overlapping load right after a
// store defeats store-to-load forwarding and stalls).
//
// Where it wins (README, "level_sum"): on shallow, wide trees, where a parent's children fill whole
// vectors. On deep trees with two or three children per parent each parent is one short masked step
// whose branch on the child count mispredicts, and the serial parent loop is faster.
export void EXPORT(level_sum_children)(uniform float data[], uniform const uint32 child_start[],
                                       uniform const uint32 child_end[], uniform int parents)
{
    for (uniform int base = 0; base < parents; base += programCount) {
        const varying int i = base + programIndex;
        varying bool has_children = false;
        if (i < parents)
            has_children = child_end[i] != child_start[i];
        // The parents of this gang as a bitmask (gangs are at most 16 wide), visited lowest first: a
        // parent may be the child of an earlier one in the same gang.
        uniform int bits = reduce_add(has_children ? (1 << programIndex) : 0);
        while (bits != 0) {
            const uniform int p = base + count_trailing_zeros(bits);
            bits &= bits - 1;
            const uniform int kend = 4 * child_end[p];
            uniform int k = 4 * child_start[p];
            varying float pv = 0.0f;
            if (programIndex < 4)
                pv = data[4 * p + programIndex];
            const varying float p4 = shuffle(pv, programIndex & 3);
            // k is a multiple of 4 and gangs are multiples of 4 wide: lane l adds component l % 4.
            for (; k + programCount <= kend; k += programCount)
                data[k + programIndex] += p4;
            if (programIndex < kend - k)
                data[k + programIndex] += p4;
        }
    }
}

// The same sum level by level, without the per-parent structure: a level's bones depend only on the
// level above, so the loop never branches on one parent's child count. A vector holds W = programCount / 4
// bones (a window), and the level is walked in blocks of four windows.
//
// The parents of consecutive bones of one level are non-decreasing (level order), so a window's W parents
// usually lie within W consecutive bones, and nearly always within 2W. In the first case one vector load
// starting at the window's first parent holds every float4 the window needs, and one permute puts each
// parent's float4 under its child; in the second, two loads and a two-source permute do it. Neither needs
// a gather or a load per bone. One vector load brings the parent indices of a whole block, and one test per
// block picks the path for its four windows, so the branch is well predicted. A block with a wider spread
// (a run of childless bones between two parents), or whose loads would run past the array, falls back to
// one broadcast load per bone, merged by lane. With W = 1 (four lanes) the parent's float4 is one plain
// load and the block machinery is skipped.
//
// Measured on the 17-level tree (README, "level_sum"): 82% of AVX-512 blocks take the one-vector path,
// 18% the two-vector path and almost none the fallback. The per-window permute is what beats the serial
// loop; the earlier version of this kernel, with one broadcast load per bone, ran at 1.1x.
static inline varying float level_parents_per_bone(const uniform float data[], const uniform int parents[],
                                                   uniform int b, uniform int end)
{
    varying float parent = 0.0f;
#pragma unroll
    for (uniform int g = 0; g < programCount / 4; g++) {
        // A bone past the level's end reads bone b's parent instead; its lanes are never stored.
        const uniform int p = parents[b + g < end ? b + g : b];
        varying float pv = 0.0f;
        if (programIndex < 4)
            pv = data[4 * p + programIndex];
        const varying float replicated = shuffle(pv, programIndex & 3);
        if ((programIndex >> 2) == g)
            parent = replicated;
    }
    return parent;
}

export void EXPORT(level_sum_levels)(uniform float data[], uniform const int parents[], uniform const uint32 levels[],
                                     uniform int level_count)
{
    const uniform int G4 = programCount / 4;
    const uniform int bones = levels[level_count];
    for (uniform int level = 1; level < level_count; level++) {
        const uniform int end = levels[level + 1];
        uniform int b = levels[level];
        if (G4 == 1) {
            // One bone per vector: its parent's float4 is one plain load, with nothing to permute.
            for (; b < end; b++)
                data[4 * b + programIndex] += data[4 * parents[b] + programIndex];
        }
        for (; b + programCount <= end; b += programCount) {
            const varying int pv = parents[b + programIndex];
            // Lane w * G4 holds the spread of window w's parents; the other lanes are not tested.
            const varying int last = shuffle(pv, min(programIndex + G4 - 1, programCount - 1));
            const varying int spread = (programIndex % G4) == 0 ? last - pv : 0;
            // The loads below stay inside data whatever the parents are: the bound uses the block's
            // highest parent, not level order's guarantee that the last window's first parent is it.
            const uniform int highest = reduce_max(pv);
            // Each lane's parent relative to the first parent of its window, in floats.
            const varying int rel4 = 4 * (pv - shuffle(pv, programIndex & ~(G4 - 1)));
            if (!any(spread >= G4) && highest + G4 <= bones) {
                // Every window's parents lie in one vector.
#pragma unroll
                for (uniform int w = 0; w < 4; w++) {
                    const uniform int wb = b + w * G4;
                    const uniform int p0 = parents[wb];
                    const varying int idx = shuffle(rel4, w * G4 + (programIndex >> 2)) + (programIndex & 3);
                    data[4 * wb + programIndex] += shuffle(data[4 * p0 + programIndex], idx);
                }
            } else if (!any(spread >= 2 * G4) && highest + 2 * G4 <= bones) {
                // Some window needs two vectors.
#pragma unroll
                for (uniform int w = 0; w < 4; w++) {
                    const uniform int wb = b + w * G4;
                    const uniform int p0 = parents[wb];
                    const varying int idx = shuffle(rel4, w * G4 + (programIndex >> 2)) + (programIndex & 3);
                    const varying float lo = data[4 * p0 + programIndex];
                    const varying float hi = data[4 * p0 + programCount + programIndex];
                    data[4 * wb + programIndex] += shuffle(lo, hi, idx);
                }
            } else {
                for (uniform int w = 0; w < 4; w++) {
                    const uniform int wb = b + w * G4;
                    data[4 * wb + programIndex] += level_parents_per_bone(data, parents, wb, end);
                }
            }
        }
        // The level's last few bones, a window at a time; only the last window is masked.
        for (; b < end; b += G4) {
            const varying float parent = level_parents_per_bone(data, parents, b, end);
            if (b + G4 <= end) {
                data[4 * b + programIndex] += parent;
            } else if (programIndex < 4 * (end - b)) {
                data[4 * b + programIndex] += parent;
            }
        }
    }
}
