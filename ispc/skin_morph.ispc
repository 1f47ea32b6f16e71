// Morph targets fused into the skinning pass: skin_morph_fused skins one influence group of a prepared mesh
// whose bind attributes move by the weighted deltas of its active morph targets.
//
// The morph pre-pass (morph.ispc's morph_rows) writes base plus the weighted deltas into a frame's copy
// of the prepared mesh, and skin_group then reads that copy. This kernel does both in one pass over a
// group: each gang reads the bind attributes and the packed deltas (rows of 48 floats per 16-vertex block
// per attribute, as SkinnedMorph stores them), sums them in registers and transforms the sum, so the 9
// morphed floats per vertex are never written back and read again. Measured against the pre-pass (runs
// F1 to F5 of docs/RESULTS.md), it took the morph's cost over skinning alone from 1.8-3.5 to 0.9-1.6 ns
// per vertex on AVX2 and AVX-512. It is skin.ispc's blended path (f32 or rigid influences, separate
// packed outputs) without renormalization; Character::skin runs the pre-pass for the other cases.

#include "common.isph"
#include "gang.isph"

// Most active targets per attribute in one call (MORPH_BATCH on the Rust side).
#define FUSED_TARGETS 8

// The arguments of one fused call, filled by src/ffi/morph.rs from a checked KernelMesh and a
// SkinnedMorph. Flags are int32, as in SkinGroupArgs. Attribute s (0 positions, 1 normals, 2 tangents)
// has active[s] targets; target t of it reads deltas[8 * s + t], the packed rows of the call's first
// block on, with weight morph_weights[8 * s + t].
struct FusedMorphArgs {
    int32 influences;       // k, the influences per vertex: 0 to 8, 12 or 16 (1 when rigid)
    int32 rigid;            // one influence of weight 1: only joints are read
    int32 components;       // floats per vertex in the AoSoA blocks: 3, 6 or 10; every one present is written
    int32 first;            // >= 0: outputs go to first + v; < 0: to vertices[v]
    int32 count;            // vertices in this call (its first vertex starts an AoSoA block)
    int32 active[3];        // active targets per attribute, at most 8 each
    const float * blocks;   // the call's first AoSoA block
    const uint32 * joints;  // k palette offsets (joint times 16) per vertex, from the call's first vertex
    const float * weights;  // k weights per vertex (null when rigid)
    const uint32 * vertices; // the output index of each vertex (read only when first < 0)
    const float * palette;
    const float * deltas[24];
    float morph_weights[24];
    float * pos;            // 3 floats per output vertex
    float * nrm;            // 3 floats per output vertex (components >= 6)
    float * tng;            // 4 floats per output vertex (components == 10)
    float * bounds;         // 6 floats written: the box of the positions written (see skin_group)
};

// One morphed attribute of a gang: lane l gets components x, y and z of vertex v0 + l, base plus the
// weighted deltas of attribute s's active targets in target order, the sum morph_rows computes (base
// first, then acc += w * d per target), so the two paths round alike where the compiler fuses alike. The
// three components share each target's loop, weight and pointer.
static inline void fm_morph3(const uniform FusedMorphArgs * uniform a, uniform const float * uniform base,
                             uniform int s, uniform int d0, varying float &x, varying float &y, varying float &z)
{
    x = base[programIndex];
    y = base[VBLOCK + programIndex];
    z = base[2 * VBLOCK + programIndex];
    for (uniform int t = 0; t < a->active[s]; t++) {
        const uniform float w = a->morph_weights[FUSED_TARGETS * s + t];
        uniform const float * uniform d = a->deltas[FUSED_TARGETS * s + t] + d0;
        x += w * d[programIndex];
        y += w * d[VBLOCK + programIndex];
        z += w * d[2 * VBLOCK + programIndex];
    }
}

// Skins (morphed) the gang v0 .. v0 + W - 1 of a call, of which the first rem are real: skin_gang's
// blended path with the attribute loads replaced by fm_morph3 and renormalization left out.
static inline void fm_gang(uniform int K, uniform bool rigid, uniform bool WN, uniform bool WT,
                           const uniform FusedMorphArgs * uniform a, uniform int v0, uniform int rem,
                           varying GangBox &box)
{
    uniform const uint32 * uniform jp = a->joints + K * v0;
    uniform const float * uniform wp = a->weights + K * v0;
    const varying GangRows B = blend_rows(K, rigid, false, jp, wp, a->palette);

    // The attributes, morphed only now (after the blend, as skin_gang loads them, to keep the blended
    // chunks in registers). Component c of vertex v0 + lane is in block v0 / VBLOCK, run c, at offset
    // v0 % VBLOCK; its deltas in the same block's packed rows, 3 runs per attribute. The sums are the
    // same chains of multiply-adds as skin_gang's.
    const uniform int c = a->components;
    uniform const float * uniform base = a->blocks + (v0 / VBLOCK) * (c * VBLOCK) + v0 % VBLOCK;
    const uniform int d0 = (v0 / VBLOCK) * (3 * VBLOCK) + v0 % VBLOCK;
    varying float px, py, pz;
    fm_morph3(a, base, 0, d0, px, py, pz);
    const varying float x = B.e[3] + B.e[0] * px + B.e[1] * py + B.e[2] * pz;
    const varying float y = B.e[7] + B.e[4] * px + B.e[5] * py + B.e[6] * pz;
    const varying float z = B.e[11] + B.e[8] * px + B.e[9] * py + B.e[10] * pz;
    box_take(box, rem, x, y, z);
    varying float nx = 0.0f, ny = 0.0f, nz = 0.0f, tx = 0.0f, ty = 0.0f, tz = 0.0f, tw = 0.0f;
    if (WN) {
        varying float ix, iy, iz;
        fm_morph3(a, base + 3 * VBLOCK, 1, d0, ix, iy, iz);
        nx = 0.0f + B.e[0] * ix + B.e[1] * iy + B.e[2] * iz;
        ny = 0.0f + B.e[4] * ix + B.e[5] * iy + B.e[6] * iz;
        nz = 0.0f + B.e[8] * ix + B.e[9] * iy + B.e[10] * iz;
    }
    if (WT) {
        varying float ix, iy, iz;
        fm_morph3(a, base + 6 * VBLOCK, 2, d0, ix, iy, iz);
        tw = base[9 * VBLOCK + programIndex];
        tx = 0.0f + B.e[0] * ix + B.e[1] * iy + B.e[2] * iz;
        ty = 0.0f + B.e[4] * ix + B.e[5] * iy + B.e[6] * iz;
        tz = 0.0f + B.e[8] * ix + B.e[9] * iy + B.e[10] * iz;
    }

    // Stores as skin_gang's for separate streams: a whole gang of consecutive outputs with one
    // interleaving store per attribute, anything else lane by lane.
    const uniform bool sequential = a->first >= 0;
    uniform bool whole = sequential && rem == W;
    uniform int o0 = a->first + v0;
    if (!sequential && rem == W) {
        const varying int listed = (int)a->vertices[v0 + programIndex];
        o0 = extract(listed, 0);
        whole = all(listed == o0 + programIndex);
    }
    if (whole) {
        store_aos3(x, y, z, a->pos + 3 * o0);
        if (WN)
            store_aos3(nx, ny, nz, a->nrm + 3 * o0);
        if (WT)
            store_aos4(tx, ty, tz, tw, a->tng + 4 * o0);
        return;
    }
    if (programIndex < rem) {
        const varying int o = sequential ? a->first + v0 + programIndex : (int)a->vertices[v0 + programIndex];
        a->pos[3 * o] = x;
        a->pos[3 * o + 1] = y;
        a->pos[3 * o + 2] = z;
        if (WN) {
            a->nrm[3 * o] = nx;
            a->nrm[3 * o + 1] = ny;
            a->nrm[3 * o + 2] = nz;
        }
        if (WT) {
            a->tng[4 * o] = tx;
            a->tng[4 * o + 1] = ty;
            a->tng[4 * o + 2] = tz;
            a->tng[4 * o + 3] = tw;
        }
    }
}

// The call's gangs with the written attributes made constants, as skin_for_outputs does.
static inline void fm_call(uniform int K, uniform bool rigid, const uniform FusedMorphArgs * uniform a)
{
    varying GangBox box;
    box_empty(box);
    for (uniform int v0 = 0; v0 < a->count; v0 += W) {
        const uniform int rem = min(a->count - v0, (uniform int)W);
        if (a->components == 10)
            fm_gang(K, rigid, true, true, a, v0, rem, box);
        else if (a->components == 6)
            fm_gang(K, rigid, true, false, a, v0, rem, box);
        else
            fm_gang(K, rigid, false, false, a, v0, rem, box);
    }
    box_store(box, a->bounds);
}

// One function per influence count, unmasked and noinline as skin.ispc's skin_k##K (see there).
#define FUSED_K(K)                                                                                         \
    static noinline unmasked void fm_k##K(const uniform FusedMorphArgs * uniform a) { fm_call(K, false, a); }
FUSED_K(0)
FUSED_K(1)
FUSED_K(2)
FUSED_K(3)
FUSED_K(4)
FUSED_K(5)
FUSED_K(6)
FUSED_K(7)
FUSED_K(8)
FUSED_K(12)
FUSED_K(16)
#undef FUSED_K

static noinline unmasked void fm_rigid(const uniform FusedMorphArgs * uniform a) { fm_call(1, true, a); }

// Morphs and skins one influence group (or a run of one starting at a block): vertex v's position goes to
// pos[3o], its normal to nrm[3o] and its tangent (xyz, then w copied) to tng[4o] where the mesh has them,
// with o = first + v, or vertices[v] when first < 0; the box of the positions written goes to bounds.
export void EXPORT(skin_morph_fused)(uniform const FusedMorphArgs * uniform a)
{
    if (a->rigid != 0) {
        fm_rigid(a);
        return;
    }
    switch (a->influences) {
    case 0: fm_k0(a); break;
    case 1: fm_k1(a); break;
    case 2: fm_k2(a); break;
    case 3: fm_k3(a); break;
    case 4: fm_k4(a); break;
    case 5: fm_k5(a); break;
    case 6: fm_k6(a); break;
    case 7: fm_k7(a); break;
    case 8: fm_k8(a); break;
    case 12: fm_k12(a); break;
    case 16: fm_k16(a); break;
    }
}
