// Linear blend skinning with blended ("collapsed") matrices, a gang of vertices at a time.
//
// Palette entries are row-major 4x4 (16 floats, 64-byte aligned; rows 0..2 are the affine 3x4). The
// blended matrix of a vertex with influences (j_i, w_i) is B = sum_i w_i * palette[j_i].
//
// Each gang of W = programCount vertices runs in two steps:
// 1. Blend horizontally: for each vertex, the gang holds W consecutive elements of B (chunk ch holds
//    elements ch*W .. ch*W + W - 1, element e = 4r + c), one contiguous palette load per influence and
//    chunk, no gather. The notes measured one vertex per lane with gathered palettes slower than scalar
//    Rust, because AVX2 gathers are slow.
// 2. Transpose the W chunks of the W vertices in registers (log2(W) rounds of two-source shuffles), so
//    that vector e holds element e of every vertex's B, one vertex per lane. The vertex product, the
//    renormalization and the stores then run in structure-of-arrays form, one vertex per lane.
// The previous kernel stayed horizontal to the end: about 50 instructions per vertex went to in-lane
// broadcasts, line-up permutes and narrow stores, and renormalization needed a second pass over the
// output. lab/experiments/soa-skinning measured this form 1.6x to 1.9x faster on AVX2.
//
// The inputs are AoSoA (SkinnedMesh's layout): blocks of VBLOCK vertices, each a run of VBLOCK floats
// per component, components px py pz [nx ny nz [tx ty tz tw]], so a gang's px is one contiguous load on
// every ISA (W divides VBLOCK). A group's vertices and influences are padded to a whole block (padding
// has joint 0 and weight 0), so a gang may read past the group's last vertex but never past its arrays.

#include "common.isph"
#include "gang.isph"

// Renormalization modes (the Rust enum Renormalize): none, precise, fast.
#define RENORM_NONE 0
#define RENORM_PRECISE 1
#define RENORM_FAST 2

// The arguments of one skinning call, one struct instead of a long positional list. Rust fills it from
// its checked mesh layout (see src/ffi/skin.rs, where bindgen's copy of this struct is used), and the
// kernel reads it once per call. Flags are int32 rather than bool so that both sides agree on the layout
// without relying on a C bool's size.
struct SkinGroupArgs {
    int32 influences;       // k, the influences per vertex: 0 to 8, 12 or 16 (1 when rigid)
    int32 rigid;            // one influence of weight 1: only joints are read
    int32 compact;          // packed influences in joints (u16 joint, unorm16 weight); weights not read
    int32 components;       // floats per vertex in the AoSoA blocks: 3 (p), 6 (p n) or 10 (p n t)
    int32 first;            // >= 0: outputs go to first + v; < 0: to vertices[v]
    int32 count;            // vertices in this call (its first vertex starts an AoSoA block)
    int32 readable;         // vertices from the first whose inputs may be prefetched (0: no prefetching)
    int32 renormalize;      // RENORM_NONE, RENORM_PRECISE or RENORM_FAST, for normals and tangents
    int32 dual_quaternion;  // 0: linear blend skinning with palette matrices; 1: dual-quaternion skinning
                            // with DualQuatEntry palette entries (same 16-float stride); 2: the same
                            // without its scale-and-shear phase (every S the identity, weights summing
                            // to 1: see blend_dq)
    const float * blocks;   // the call's first AoSoA block
    const uint32 * joints;  // per vertex k palette offsets (joint times 16) or packed influences, from the
                            // call's first vertex
    const float * weights;  // k weights per vertex (null when rigid or compact)
    const uint32 * vertices; // the output index of each vertex (read only when first < 0)
    const float * palette;
    float * pos;
    int32 pos_stride;
    float * nrm;
    int32 nrm_stride;
    int32 write_normals;
    float * tng;
    int32 tng_stride;
    int32 write_tangents;
    float * bounds;         // 6 floats written: the box of the positions written, min x y z then max x y
                            // z (+inf then -inf for no vertex)
};

// Decodes the unorm16 weights of count packed influences from jp into w, as the Rust side dequantizes
// them (units times the f32 1/65535), so both skin with the same f32 weights. Decoding a gang's weights
// at once keeps the conversion on whole vectors; each weight is then one broadcast load, like an f32
// weight.
static inline void decode_weights(uniform int count, uniform const uint32 * uniform jp, uniform float w[])
{
    foreach (i = 0 ... count) {
        const varying uint32 x = jp[i];
        w[i] = (float)(int)(x >> 16) * (1.0f / 65535.0f);
    }
}

// Scales (x, y, z) to unit length; a zero vector stays zero. Precise multiplies by one over the square
// root, as the reference does; fast by rsqrt, ISPC's approximate reciprocal square root refined by a
// Newton step. In SoA form one square root and one division serve a whole gang of vectors.
static inline void unit3(varying float &x, varying float &y, varying float &z, uniform int mode)
{
    const varying float len2 = x * x + y * y + z * z;
    // A select rather than a branch: every lane computes the scale, and a zero vector keeps scale 1.
#ifdef ISK_DETERMINISTIC
    // The deterministic build (ispc/det/det_skin.ispc): IEEE operations only, whatever the mode.
    const varying float r = 1.0f / sqrt(len2);
#else
    const varying float r = mode == RENORM_FAST ? rsqrt(len2) : 1.0f / sqrt(len2);
#endif
    const varying float s = len2 > 0.0f ? r : 1.0f;
    x *= s;
    y *= s;
    z *= s;
}

// How many vertices ahead large groups prefetch their inputs. Out of cache, the hardware prefetchers
// alone left the kernels waiting on their loads; asking for the inputs 96 vertices ahead took skin_pnt at
// 1M vertices on AVX-512 from about 5.6 to 3.6 ns per vertex in the horizontal kernel's experiment (48
// to 192 were all close). A multiple of VBLOCK, so the prefetched gang starts a block run.
#define PREFETCH_AHEAD 96

// Prefetches the bytes from p on, one request per 64-byte line.
static inline void prefetch_run(uniform const int8 * uniform p, uniform int bytes)
{
    for (uniform int off = 0; off < bytes; off += 64)
        prefetch_l1(p + off);
}

// Everything one skinning call reads and writes (see SkinGroupArgs for each field's meaning).
struct SkinCall {
    uniform const float * uniform blocks;
    uniform const uint32 * uniform joints;
    uniform const float * uniform weights;
    uniform const uint32 * uniform vertices;
    uniform const float * uniform palette;
    uniform float * uniform pos;
    uniform float * uniform nrm;
    uniform float * uniform tng;
    uniform float * uniform bounds;
    uniform int components, first, count, readable, renormalize;
    uniform bool scaled;  // dual quaternions: run the scale-and-shear phase (see blend_dq)
    uniform int pos_stride, nrm_stride, tng_stride;
};

// Dual-quaternion skinning (Kavan, Collins, Zara and O'Sullivan, 2008) in its two-phase form with scale:
// each palette entry (DualQuatEntry, src/layout/dual_quat.rs) is M = [R | t] S, a rigid motion as a unit
// dual quaternion (real part r, dual part d = (t, 0) r / 2) after a symmetric scale-and-shear matrix S
// in bind space. Per vertex, S's are blended linearly (phase 1, applied to the bind-space attributes) and
// the dual quaternions with each influence's sign chosen so that its real part lies in the hemisphere of
// the sum of the real parts before it, then normalized by the real part's length (phase 2, a rigid
// motion). Kavan et al. compare with the first influence; the running sum also serves a first influence
// of weight zero, and it keeps the summed real part at least sqrt(sum of w_i^2) long (each term adds
// its square at least), which Character::pose_bounds relies on. Its price is a chain from each
// influence's sums through the next one's dot product, compare and sums: the dot product is summed as
// two pairs, so the chain is one multiply-add shorter than a left-to-right sum. A vertex
// whose blended real part is (nearly) zero takes the identity motion. Normals and tangents are moved as
// positions without the translation: S then the rotation, as the linear kernel moves them by its blended
// 3x3 (see SkinningJob).
//
// Where every entry's S is exactly the identity and the mesh's weights sum to 1 (the Rust side decides,
// per call: src/skinning/job.rs, dual_quat_scaled), phase 1 is the identity and is skipped (scaled
// false): no S is read, blended or applied. Rigid skeletons get such entries from dual_quat_palette,
// which stores an S within rounding of the identity as the identity.
//
// An entry is 16 floats: r x y z w, d x y z w, S as s00 s01 s02 s11 s12 s22, then two zeros. Each lane
// reads its influences' entries with columns8 (two halves of eight floats, no gathers).
struct GangDq {
    float s[6];
    float r[4];
    float d[4];
};

// The blended S, r and d of the gang's W vertices, one vertex per lane (vertex v's K influences start at
// jp + K * v and wp + K * v; jp, rigid and compact as in blend_chunk).
static inline varying GangDq blend_dq(uniform int K, uniform bool rigid, uniform bool compact,
                                      uniform bool scaled, uniform const uint32 * uniform jp,
                                      uniform const float * uniform wp, uniform const float palette[])
{
    varying GangDq g;
#pragma unroll
    for (uniform int c = 0; c < 6; c++)
        g.s[c] = 0.0f;
    uniform const uint16 * uniform hp = (uniform const uint16 * uniform)jp;
    // The sums in plain variables: as the struct's arrays, LLVM kept them on the stack across the loop.
    varying float rx = 0.0f, ry = 0.0f, rz = 0.0f, rw = 0.0f, dx = 0.0f, dy = 0.0f, dz = 0.0f, dw = 0.0f;
    for (uniform int i = 0; i < K; i++) {
        // Each lane's entry offset and weight, copied lane by lane: the weights' strided load was a
        // hardware gather, which took a quarter of the kernel's time on Zen 4 (AVX2).
        uniform int lane[W];
        uniform float weight[W];
        for (uniform int v = 0; v < W; v++) {
            lane[v] = compact ? (int)hp[2 * (K * v + i)] << 4 : (int)jp[K * v + i];
            weight[v] = 1.0f;
            if (!rigid)
                weight[v] = wp[K * v + i];
        }
        varying float e[8];
        columns8(palette, lane, 0, e);
        const varying float w = weight[programIndex];
        // The hemisphere of the real parts summed so far (none for the first influence), summed as
        // (x + y) + (z + w), as the reference does.
        const varying float dot = (e[0] * rx + e[1] * ry) + (e[2] * rz + e[3] * rw);
        const varying float sw = dot < 0.0f ? -w : w;
        rx = rx + sw * e[0];
        ry = ry + sw * e[1];
        rz = rz + sw * e[2];
        rw = rw + sw * e[3];
        dx = dx + sw * e[4];
        dy = dy + sw * e[5];
        dz = dz + sw * e[6];
        dw = dw + sw * e[7];
#if W != 8
        if (scaled) {
            varying float f[8];
            columns8(palette, lane, 1, f);
#pragma unroll
            for (uniform int c = 0; c < 6; c++)
                g.s[c] = g.s[c] + w * f[c];
        }
#endif
    }
    g.r[0] = rx;
    g.r[1] = ry;
    g.r[2] = rz;
    g.r[3] = rw;
    g.d[0] = dx;
    g.d[1] = dy;
    g.d[2] = dz;
    g.d[3] = dw;
#if W == 8
    if (!scaled)
        return g;
    // AVX2 blends S horizontally after the dual quaternions, vertex by vertex (one load and one
    // multiply-add per influence: lane l holds float 8 + l of the entries), and transposes the eight
    // sums once: per influence, columns8 of the entries' second halves cost 32 instructions, and its
    // six sums beside the eight of the dual quaternions spilled on AVX2's 16 registers.
    varying float chunk[8];
    for (uniform int v = 0; v < 8; v++) {
        varying float acc = 0.0f;
        for (uniform int i = 0; i < K; i++) {
            const uniform int o = compact ? (int)hp[2 * (K * v + i)] << 4 : (int)jp[K * v + i];
            uniform float w = 1.0f;
            if (!rigid)
                w = wp[K * v + i];
            acc = acc + w * palette[o + 8 + programIndex];
        }
        chunk[v] = acc;
    }
    varying float u[4], t[4];
    transpose_blocks(chunk[0], chunk[1], chunk[2], chunk[3], u[0], u[1], u[2], u[3]);
    transpose_blocks(chunk[4], chunk[5], chunk[6], chunk[7], t[0], t[1], t[2], t[3]);
#pragma unroll
    for (uniform int c = 0; c < 4; c++)
        g.s[c] = join_groups(u[c], t[c], 0);
    g.s[4] = join_groups(u[0], t[0], 1);
    g.s[5] = join_groups(u[1], t[1], 1);
#endif
    return g;
}

// v = r v r* for the unit quaternion (rx, ry, rz, rw): v + 2 r x (r x v + w v).
static inline void rotate_by(varying float rx, varying float ry, varying float rz, varying float rw,
                             varying float &x, varying float &y, varying float &z)
{
    const varying float cx = ry * z - rz * y + rw * x;
    const varying float cy = rz * x - rx * z + rw * y;
    const varying float cz = rx * y - ry * x + rw * z;
    x = x + 2.0f * (ry * cz - rz * cy);
    y = y + 2.0f * (rz * cx - rx * cz);
    z = z + 2.0f * (rx * cy - ry * cx);
}

// (x, y, z) = S (x, y, z) for the symmetric s (s00 s01 s02 s11 s12 s22).
static inline void scale_shear(const varying float s[6], varying float &x, varying float &y, varying float &z)
{
    const varying float a = s[0] * x + s[1] * y + s[2] * z;
    const varying float b = s[1] * x + s[3] * y + s[4] * z;
    const varying float c = s[2] * x + s[4] * y + s[5] * z;
    x = a;
    y = b;
    z = c;
}

// Blended real parts whose squared length is at most this take the identity motion (a vertex without
// weights, or influences that cancel).
#define DQ_MIN_LEN2 1e-20f

// Skins the gang of vertices v0 .. v0 + W - 1 of a call (v0 a multiple of W), of which the first rem
// are real: blends and transposes their matrices, transforms their attributes, renormalizes and stores
// them. K influences per vertex (rigid: one of weight 1; compact: packed, the gang's weights decoded
// here into the scratch dw);
// WN and WT say whether normals and tangents are written (their inputs are then read); RN whether they
// are renormalized (in c.renormalize's mode).
static inline void skin_gang(uniform bool DQ, uniform int K, uniform bool rigid, uniform bool compact, uniform bool WN,
                             uniform bool WT, uniform bool PACKED, uniform bool RN, const uniform SkinCall &c,
                             uniform int v0, uniform int rem, uniform float * uniform dw, varying GangBox &box)
{
    uniform const uint32 * uniform jp = c.joints + K * v0;
    if (compact && !rigid)
        decode_weights(K * W, jp, dw);
    uniform const float * uniform decoded = dw;
    uniform const float * uniform wp = compact ? decoded : c.weights + K * v0;
    // Component s of vertex v0 + lane is in block v0 / VBLOCK, run s, at offset v0 % VBLOCK (as below).
    uniform const float * uniform a = c.blocks + (v0 / VBLOCK) * (c.components * VBLOCK) + v0 % VBLOCK;
    varying float x, y, z, nx = 0.0f, ny = 0.0f, nz = 0.0f, tx = 0.0f, ty = 0.0f, tz = 0.0f, tw = 0.0f;
    if (DQ) {
        const varying GangDq D = blend_dq(K, rigid, compact, c.scaled, jp, wp, c.palette);
        const varying float len2 = D.r[0] * D.r[0] + D.r[1] * D.r[1] + D.r[2] * D.r[2] + D.r[3] * D.r[3];
        const varying bool moved = len2 > DQ_MIN_LEN2;
        const varying float inv = 1.0f / sqrt(moved ? len2 : 1.0f);
        const varying float rx = moved ? D.r[0] * inv : 0.0f, ry = moved ? D.r[1] * inv : 0.0f,
                            rz = moved ? D.r[2] * inv : 0.0f, rw = moved ? D.r[3] * inv : 1.0f;
        const varying float dx = moved ? D.d[0] * inv : 0.0f, dy = moved ? D.d[1] * inv : 0.0f,
                            dz = moved ? D.d[2] * inv : 0.0f, du = moved ? D.d[3] * inv : 0.0f;
        x = a[programIndex];
        y = a[VBLOCK + programIndex];
        z = a[2 * VBLOCK + programIndex];
        if (c.scaled)
            scale_shear(D.s, x, y, z);
        rotate_by(rx, ry, rz, rw, x, y, z);
        // The translation 2 (w d - du r + r x d), du the dual part's w.
        x = x + 2.0f * (rw * dx - du * rx + (ry * dz - rz * dy));
        y = y + 2.0f * (rw * dy - du * ry + (rz * dx - rx * dz));
        z = z + 2.0f * (rw * dz - du * rz + (rx * dy - ry * dx));
        if (WN) {
            nx = a[3 * VBLOCK + programIndex];
            ny = a[4 * VBLOCK + programIndex];
            nz = a[5 * VBLOCK + programIndex];
            if (c.scaled)
                scale_shear(D.s, nx, ny, nz);
            rotate_by(rx, ry, rz, rw, nx, ny, nz);
            if (RN)
                unit3(nx, ny, nz, c.renormalize);
        }
        if (WT) {
            tx = a[6 * VBLOCK + programIndex];
            ty = a[7 * VBLOCK + programIndex];
            tz = a[8 * VBLOCK + programIndex];
            tw = a[9 * VBLOCK + programIndex];
            if (c.scaled)
                scale_shear(D.s, tx, ty, tz);
            rotate_by(rx, ry, rz, rw, tx, ty, tz);
            if (RN)
                unit3(tx, ty, tz, c.renormalize);
        }
    } else {
        const varying GangRows B = blend_rows(K, rigid, compact, jp, wp, c.palette);

        // The attributes, loaded only now: live across the blend, they made AVX2 spill the blended chunks.
        // Component s of vertex v0 + lane is in block v0 / VBLOCK, run s, at offset v0 % VBLOCK. Each sum
        // below is one chain of multiply-adds from the translation (positions) or from zero (directions), in
        // a fixed order: every addition then has exactly one product to fuse with, so the compiler's fusing
        // has a single choice and every specialisation (which attributes are written) rounds alike. Starting
        // a direction from its first product let LLVM fuse either product of the first addition, and the
        // tangents of a tangents-only call differed from a full call's in the last bit on AVX-512.
        const varying float px = a[programIndex], py = a[VBLOCK + programIndex], pz = a[2 * VBLOCK + programIndex];
        x = B.e[3] + B.e[0] * px + B.e[1] * py + B.e[2] * pz;
        y = B.e[7] + B.e[4] * px + B.e[5] * py + B.e[6] * pz;
        z = B.e[11] + B.e[8] * px + B.e[9] * py + B.e[10] * pz;
        if (WN) {
            const varying float ix = a[3 * VBLOCK + programIndex], iy = a[4 * VBLOCK + programIndex],
                                iz = a[5 * VBLOCK + programIndex];
            nx = 0.0f + B.e[0] * ix + B.e[1] * iy + B.e[2] * iz;
            ny = 0.0f + B.e[4] * ix + B.e[5] * iy + B.e[6] * iz;
            nz = 0.0f + B.e[8] * ix + B.e[9] * iy + B.e[10] * iz;
            if (RN)
                unit3(nx, ny, nz, c.renormalize);
        }
        if (WT) {
            const varying float ix = a[6 * VBLOCK + programIndex], iy = a[7 * VBLOCK + programIndex],
                                iz = a[8 * VBLOCK + programIndex];
            tw = a[9 * VBLOCK + programIndex];
            tx = 0.0f + B.e[0] * ix + B.e[1] * iy + B.e[2] * iz;
            ty = 0.0f + B.e[4] * ix + B.e[5] * iy + B.e[6] * iz;
            tz = 0.0f + B.e[8] * ix + B.e[9] * iy + B.e[10] * iz;
            if (RN)
                unit3(tx, ty, tz, c.renormalize);
        }
    }
    box_take(box, rem, x, y, z);

    // Whole gangs of consecutive outputs go to packed streams with one interleaving store per attribute:
    // always in a contiguous call, and in a listed one when the gang's indices happen to be consecutive
    // (SkinnedMesh::prepare arranges most of them so). Everything else (scattered indices, interleaved
    // buffers, the last partial gang) gets per-lane stores.
    if (PACKED && rem == W) {
        const uniform int o = c.first + v0;
        store_aos3(x, y, z, c.pos + 3 * o);
        if (WN)
            store_aos3(nx, ny, nz, c.nrm + 3 * o);
        if (WT)
            store_aos4(tx, ty, tz, tw, c.tng + 4 * o);
        return;
    }
    const uniform bool sequential = c.first >= 0;
    uniform bool whole = sequential && rem == W;
    uniform int o0 = c.first + v0;
    if (!sequential && rem == W) {
        const varying int listed = (int)c.vertices[v0 + programIndex];
        o0 = extract(listed, 0);
        whole = all(listed == o0 + programIndex);
    }
    const uniform bool pack_p = whole && c.pos_stride == 3;
    const uniform bool pack_n = WN && whole && c.nrm_stride == 3;
    const uniform bool pack_t = WT && whole && c.tng_stride == 4;
    if (whole) {
        if (pack_p)
            store_aos3(x, y, z, c.pos + 3 * o0);
        if (pack_n)
            store_aos3(nx, ny, nz, c.nrm + 3 * o0);
        if (pack_t)
            store_aos4(tx, ty, tz, tw, c.tng + 4 * o0);
        if (pack_p && (!WN || pack_n) && (!WT || pack_t))
            return;
    }
    if (programIndex < rem) {
        const varying int o = sequential ? c.first + v0 + programIndex : (int)c.vertices[v0 + programIndex];
        if (!pack_p) {
            c.pos[o * c.pos_stride] = x;
            c.pos[o * c.pos_stride + 1] = y;
            c.pos[o * c.pos_stride + 2] = z;
        }
        if (WN && !pack_n) {
            c.nrm[o * c.nrm_stride] = nx;
            c.nrm[o * c.nrm_stride + 1] = ny;
            c.nrm[o * c.nrm_stride + 2] = nz;
        }
        if (WT && !pack_t) {
            c.tng[o * c.tng_stride] = tx;
            c.tng[o * c.tng_stride + 1] = ty;
            c.tng[o * c.tng_stride + 2] = tz;
            c.tng[o * c.tng_stride + 3] = tw;
        }
    }
}

// Skins the call's vertices 0 .. count - 1, a gang at a time, prefetching the inputs of the gang
// PREFETCH_AHEAD vertices ahead while that gang lies below readable (0 turns prefetching off). PACKED:
// the call is contiguous and every written stream is packed, so whole gangs store with no tests.
static inline void skin_loop(uniform bool DQ, uniform int K, uniform bool rigid, uniform bool compact,
                             uniform bool WN, uniform bool WT, uniform bool PACKED, uniform bool RN,
                             const uniform SkinCall &c)
{
    // A compact group's weights, decoded a gang at a time (at most 16 influences per vertex).
    uniform float decoded[16 * W];
    varying GangBox box;
    box_empty(box);
    // Whole gangs, then the last partial one: with the gang's size a constant, the loop keeps no count of
    // real lanes and holds none of the per-lane store code.
    const uniform int whole = c.count - c.count % W;
    for (uniform int v0 = 0; v0 < whole; v0 += W) {
        if (v0 + PREFETCH_AHEAD + W <= c.readable) {
            const uniform int ahead = v0 + PREFETCH_AHEAD;
            // A block's runs once per block, from its start; the influences and indices of each gang.
            if (ahead % VBLOCK == 0)
                prefetch_run((uniform const int8 * uniform)(c.blocks + (ahead / VBLOCK) * (c.components * VBLOCK)),
                             4 * c.components * VBLOCK);
            prefetch_run((uniform const int8 * uniform)(c.joints + K * ahead), 4 * K * W);
            if (!rigid && !compact)
                prefetch_run((uniform const int8 * uniform)(c.weights + K * ahead), 4 * K * W);
            if (c.first < 0)
                prefetch_run((uniform const int8 * uniform)(c.vertices + ahead), 4 * W);
        }
        skin_gang(DQ, K, rigid, compact, WN, WT, PACKED, RN, c, v0, W, decoded, box);
    }
    if (whole < c.count)
        skin_gang(DQ, K, rigid, compact, WN, WT, PACKED, RN, c, whole, c.count - whole, decoded, box);
    box_store(box, c.bounds);
}

// skin_loop with packed contiguous outputs, the common case, made a constant: tested on every gang, the
// strides and the kind of call cost about 20 scalar instructions per gang. Whether normals and tangents
// are renormalized is a constant too: as a run-time test, its two paths met in the middle of the gang
// and AVX2 spilled a dozen vectors around it. Made constant, skin_pn with two influences went from 1.90
// to 1.69 ns per vertex and CesiumMan's frame from 7.9 to 7.1 us (AVX2, Zen 4).
static inline void skin_call(uniform bool DQ, uniform int K, uniform bool rigid, uniform bool compact,
                             uniform bool WN, uniform bool WT, const uniform SkinCall &c)
{
    const uniform bool packed =
        c.first >= 0 && c.pos_stride == 3 && (!WN || c.nrm_stride == 3) && (!WT || c.tng_stride == 4);
    const uniform bool rn = (WN || WT) && c.renormalize != RENORM_NONE;
    if (packed && !rn)
        skin_loop(DQ, K, rigid, compact, WN, WT, true, false, c);
    else if (packed)
        skin_loop(DQ, K, rigid, compact, WN, WT, true, true, c);
    else
        skin_loop(DQ, K, rigid, compact, WN, WT, false, rn, c);
}

// skin_call with the written attributes made constants: one loop per set. As run-time flags, the loop
// tested them every gang and, short of registers, spilled more.
static inline void skin_for_outputs(uniform bool DQ, uniform int K, uniform bool rigid, uniform bool compact,
                                    uniform bool wn, uniform bool wt, const uniform SkinCall &c)
{
    if (wn && wt)
        skin_call(DQ, K, rigid, compact, true, true, c);
    else if (wn)
        skin_call(DQ, K, rigid, compact, true, false, c);
    else if (wt)
        skin_call(DQ, K, rigid, compact, false, true, c);
    else
        skin_call(DQ, K, rigid, compact, false, false, c);
}

// One influence count's loops (each count its own kernel, Davies' future work: the influence loop is
// unrolled with no count test). noinline keeps each count its own function, so that one count's code
// does not move another's loops; unmasked compiles them for an all-on gang (as ordinary functions they
// took the caller's execution mask, which cost 1.4x in the horizontal kernel).
#define SKIN_K(K)                                                                                          \
    static noinline unmasked void skin_k##K(uniform bool compact, uniform bool wn, uniform bool wt,          \
                                            const uniform SkinCall &c)                                     \
    {                                                                                                      \
        if (compact)                                                                                       \
            skin_for_outputs(false, K, false, true, wn, wt, c);                                            \
        else                                                                                               \
            skin_for_outputs(false, K, false, false, wn, wt, c);                                           \
    }
SKIN_K(0)
SKIN_K(1)
SKIN_K(2)
SKIN_K(3)
SKIN_K(4)
SKIN_K(5)
SKIN_K(6)
SKIN_K(7)
SKIN_K(8)
// Beyond eight, only 12 and 16: SkinnedMesh::prepare promotes a vertex of 9 to 11 influences to 12, and
// one of 13 to 15 to 16, with zero weights (exact, as for runs), so that rare meshes with many
// influences do not cost every user six more copies of these loops.
SKIN_K(12)
SKIN_K(16)
#undef SKIN_K

// Rigid skinning (van Waveren's one-influence LOD, the common case of machine parts and props): every
// vertex follows one joint with weight 1, so its blended matrix is that palette entry.
static noinline unmasked void skin_rigid(uniform bool wn, uniform bool wt, const uniform SkinCall &c)
{
    skin_for_outputs(false, 1, true, false, wn, wt, c);
}

// Dual-quaternion skinning (see blend_dq) for every influence count, rigid and compact groups included.
// The count is a run-time value here, so the influence loop is not unrolled: one loop per form instead
// of one per count and form, because the unrolled loops tripled the skinning kernel's code (2.1 to 6.0
// MB of AVX2 code), while each influence's two columns8 transposes and its fourteen multiply-adds are
// long enough for the loop's own overhead to matter little.
static noinline unmasked void skin_dq(uniform int K, uniform bool rigid, uniform bool compact, uniform bool wn,
                                      uniform bool wt, const uniform SkinCall &c)
{
    // The Rust side asserts a count the linear switch has (0 to 8, 12, 16); a compact gang's weights
    // are decoded into 16 per vertex, so no count above that is ever run.
    if (K < 0 || K > 16)
        return;
    if (rigid)
        skin_for_outputs(true, 1, true, false, wn, wt, c);
    else if (compact)
        skin_for_outputs(true, K, false, true, wn, wt, c);
    else
        skin_for_outputs(true, K, false, false, wn, wt, c);
}


// Skins one influence group, or a run of one: vertex v's position goes to pos[o * pos_stride] (3
// floats), its normal to nrm[o * nrm_stride] (3) when write_normals, and its tangent (xyz, then w copied)
// to tng[o * tng_stride] (4) when write_tangents, with o = first + v, or vertices[v] when first < 0; the
// box of the positions written goes to bounds.
export void EXPORT(skin_group)(uniform const SkinGroupArgs * uniform a)
{
    uniform SkinCall c;
    c.blocks = a->blocks;
    c.joints = a->joints;
    c.weights = a->weights;
    c.vertices = a->vertices;
    c.palette = a->palette;
    c.pos = a->pos;
    c.nrm = a->nrm;
    c.tng = a->tng;
    c.bounds = a->bounds;
    c.components = a->components;
    c.first = a->first;
    c.count = a->count;
    c.readable = a->readable;
    c.renormalize = a->renormalize;
    c.scaled = a->dual_quaternion == 1;
    c.pos_stride = a->pos_stride;
    c.nrm_stride = a->nrm_stride;
    c.tng_stride = a->tng_stride;
    const uniform bool wn = a->write_normals != 0, wt = a->write_tangents != 0, compact = a->compact != 0;
    if (a->dual_quaternion != 0) {
        skin_dq(a->influences, a->rigid != 0, compact, wn, wt, c);
        return;
    }
    if (a->rigid != 0) {
        skin_rigid(wn, wt, c);
        return;
    }
    switch (a->influences) {
    case 0: skin_k0(compact, wn, wt, c); break;
    case 1: skin_k1(compact, wn, wt, c); break;
    case 2: skin_k2(compact, wn, wt, c); break;
    case 3: skin_k3(compact, wn, wt, c); break;
    case 4: skin_k4(compact, wn, wt, c); break;
    case 5: skin_k5(compact, wn, wt, c); break;
    case 6: skin_k6(compact, wn, wt, c); break;
    case 7: skin_k7(compact, wn, wt, c); break;
    case 8: skin_k8(compact, wn, wt, c); break;
    case 12: skin_k12(compact, wn, wt, c); break;
    case 16: skin_k16(compact, wn, wt, c); break;
    }
}
