// Linear blend skinning with blended ("collapsed") matrices, one vertex at a time with the gang spread
// horizontally (the notes: one vertex per lane with gathered palettes ran slower than scalar Rust).
//
// Palette entries are row-major 4x4 (16 floats, 64-byte aligned; rows 0..2 are the affine 3x4). For a
// vertex with influences (j_i, w_i), chunk ch of the blended rows is B = sum_i w_i * palette[j_i] over the
// chunk's lanes: lane e = 4r + c holds B[r][c], one contiguous load per influence, no gather.
//
// The outputs come from one small matrix product: with M_k = (p_k, n_k, t_k, .) for k = 0..2 (the
// vertex's position, normal and tangent, transposed) and M_3 = (1, 0, 0, 0),
//   R[r][c] = sum_k B[r][k] * M_k[c],
// so column 0 of R is p' = B (p, 1), column 1 is n' = B3 n and column 2 is t' = B3 t. B[r][k] is broadcast
// inside each row group with in-lane shuffles, and M_k is a broadcast load of the vertex block that
// SkinnedMesh::prepare stores already transposed. One permute then lines up p', n' and t' for the stores.

#include "common.isph"
#include "rows.isph"

static inline varying int elem(uniform int ch) { return ch * programCount + programIndex; }

// Lane (r, c) of R for chunk ch.
static inline varying float product_chunk(varying float b, const varying float m[3], uniform int ch)
{
    const varying int base = programIndex & ~3;
    // Column 0 (the position) starts from the translation, B[r][3] * 1. The sum is one chain of
    // multiply-adds in a fixed order: each product feeds exactly one addition, so the compiler's fusing
    // has a single choice, and each loop specialisation (see skin_blended) rounds exactly alike.
    varying float r = (elem(ch) & 3) == 0 ? shuffle(b, base + 3) : 0.0f;
    r = r + shuffle(b, base) * m[0];
    r = r + shuffle(b, base + 1) * m[1];
    r = r + shuffle(b, base + 2) * m[2];
    return r;
}

// R's lanes (r, c) are spread over CHUNKS vectors. Output lane l takes R[q % 3][q / 3] with
// q = l + first: first = 0 lines up p'xyz n'xyz t'xyz from lane 0 (as far as the gang is wide), first = 3
// n'xyz and first = 6 t'xyz.
static inline varying float line_up(const varying float res[CHUNKS], uniform int first)
{
    const varying int q = min(programIndex + first, 8);
    const varying int src = 4 * (q % 3) + q / 3;  // element index of R[q % 3][q / 3], below 12
#if TARGET_WIDTH == 16
    return shuffle(res[0], src);
#elif TARGET_WIDTH == 8
    // Rows 0 and 1 are in res[0], row 2 in res[1]; the two-source index is the element index.
    return shuffle(res[0], res[1], src);
#else
    // Four one-row chunks: lanes 0..2 of column first / 3.
    const uniform int c = first / 3;
    const varying float lo = shuffle(res[0], res[1], programIndex == 0 ? c : 4 + c);
    const varying float hi = shuffle(res[2], res[2], c);
    return programIndex < 2 ? lo : hi;
#endif
}

// How many vertices ahead the kernels prefetch their inputs on large groups. Out of cache, the hardware
// prefetchers alone left each skinning kernel waiting on its loads: the compute time and the memory time
// added up instead of overlapping. Asking for the inputs of the vertex this many places ahead took
// skin_pnt at 1M vertices on AVX-512 from about 5.6 to 3.6 ns per vertex in a standalone experiment
// (48 to 192 ahead were all close; 8 to 32 ahead gained little). On groups that fit in the cache the same
// instructions cost a few percent, so the Rust side enables prefetching for large groups only.
#define PREFETCH_AHEAD 96

// The vertex that ends the prefetching loop: vertex v prefetches vertex v + PREFETCH_AHEAD, which must
// be below readable, the number of vertices the input pointers hold from the first one (0 turns
// prefetching off). The vertices from the split on run without prefetches.
static inline uniform int prefetch_split(uniform int count, uniform int readable)
{
    return clamp(readable - PREFETCH_AHEAD, 0, count);
}

// Prefetches the inputs of the vertex PREFETCH_AHEAD places after the one whose block is bp (B floats
// per block, K joints and weights per vertex; groups with no_weights read none, sequential ones no
// indices). Each stream is asked for every vertex: a line already requested costs little, and one
// request per vertex needs no test of where its lines begin.
static inline void prefetch_inputs(uniform int B, uniform int K, uniform bool sequential, uniform bool no_weights,
                                   uniform const float * uniform bp, uniform const uint32 * uniform jp,
                                   uniform const float * uniform wp, uniform const uint32 * uniform vp)
{
    prefetch_l1(bp + B * PREFETCH_AHEAD);
    prefetch_l1(jp + K * PREFETCH_AHEAD);
    if (!no_weights)
        prefetch_l1(wp + K * PREFETCH_AHEAD);
    if (!sequential)
        prefetch_l1(vp + PREFETCH_AHEAD);
}

// Chunk ch of the blended rows sum_i w_i * palette[j_i] (lane e = 4r + c holds B[r][c]) of the vertex
// whose K influences start at jp and wp. A rigid vertex's one influence has weight exactly 1, so B is the
// palette matrix itself, with no multiply (its joint is a plain 32-bit one). A compact group (SkinnedMesh's compact influences) packs each
// influence into the one 32-bit word jp[i], the joint in the low (little-endian first) 16 bits and the
// weight's unorm16 units in the high 16: half the bytes of a u32 joint plus an f32 weight. Its weights
// come decoded in wp (see decode_weights), and each joint is one 16-bit load.
static inline varying float blend_chunk(uniform int K, uniform bool rigid, uniform bool compact,
                                        uniform const uint32 * uniform jp, uniform const float * uniform wp,
                                        uniform const float palette[], uniform int ch)
{
    uniform const uint16 * uniform hp = (uniform const uint16 * uniform)jp;
    if (rigid) {
        return palette[16 * jp[0] + ch * programCount + programIndex];
    }
    varying float b = 0.0f;
#pragma unroll
    for (uniform int i = 0; i < K; i++) {
        const uniform uint32 j = compact ? hp[2 * i] : jp[i];
        b += wp[i] * palette[16 * j + ch * programCount + programIndex];
    }
    return b;
}

// Vertices whose compact weights decode_weights converts at once.
#define DECODE_BATCH 16

// Decodes the unorm16 weights of count packed influences from jp into w, as the Rust side dequantizes
// them (units times the f32 1/65535), so both skin with the same f32 weights. The skinning loops call it
// once per DECODE_BATCH vertices, so that the conversion runs on whole vectors, and then read each
// weight with a broadcast load as they read an f32 weight. Converting each weight in a scalar register
// and broadcasting it from there made skin_pnt about 35% slower in cache on AVX-512, and so did
// decoding one vertex at a time into memory. Decoded a batch at a time, with the batch its own loop, the
// report measured 0.94x to 0.96x the f32 format's speed in cache on AVX-512 (and 0.83x to 0.91x with a
// test of the batch's start in every vertex).
static inline void decode_weights(uniform int count, uniform const uint32 * uniform jp, uniform float w[])
{
    foreach (i = 0 ... count) {
        const varying uint32 x = jp[i];
        w[i] = (float)(int)(x >> 16) * (1.0f / 65535.0f);
    }
}

// Renormalization modes (the Rust enum Renormalize): none, precise, fast.
#define RENORM_NONE 0
#define RENORM_PRECISE 1
#define RENORM_FAST 2

// Skins the vertices [begin, end) of one influence group with K influences each (Davies' future work:
// each influence count gets its own kernel, so the influence loop is unrolled with no count test).
// The pointers address the group's vertex 0. blocks holds 12 floats per vertex,
// (px nx tx tw, py ny ty 0, pz nz tz 0); joints holds K palette indices per vertex, weights K weights
// (or, when compact, joints holds the packed influences of blend_chunk). When compact or rigid, weights
// is neither read nor prefetched (the Rust side passes null). Vertex v's results go to index
// out = vertices[v], or out = first + v when sequential (vertices is then not read: a group whose
// vertices are consecutive needs no index load and no multiply per vertex): position at
// pos[out * pos_stride] (always), normal at nrm[out * nrm_stride] when write_normals, tangent (xyz, then
// w copied) at tng[out * tng_stride] when write_tangents. With prefetch, each vertex also asks for the
// inputs of vertex v + PREFETCH_AHEAD (see prefetch_inputs).
static inline void skin_run(uniform int K, uniform bool sequential, uniform int first, uniform int begin,
                            uniform int end, uniform bool prefetch, uniform const float blocks[],
                            uniform const uint32 joints[], uniform const float weights[],
                            uniform const uint32 vertices[], uniform const float palette[], uniform float pos[],
                            uniform int pos_stride, uniform float nrm[], uniform int nrm_stride,
                            uniform bool write_normals, uniform float tng[], uniform int tng_stride,
                            uniform bool write_tangents, uniform bool rigid, uniform bool compact)
{
    uniform const float * uniform bp = blocks + 12 * begin;
    uniform const uint32 * uniform jp = joints + K * begin;
    uniform const float * uniform wp = weights + K * begin;
    // A compact group runs in batches of DECODE_BATCH vertices, each starting with its weights' decode;
    // any other group is one batch.
    const uniform bool decode = compact && !rigid;
    uniform float decoded[8 * DECODE_BATCH];
    for (uniform int batch = begin; batch < end;) {
        const uniform int batch_end = decode ? min(batch + DECODE_BATCH, end) : end;
        if (decode)
            decode_weights(K * (batch_end - batch), jp, decoded);
        uniform const float * uniform dp = decoded;
        for (uniform int v = batch; v < batch_end; v++, bp += 12, jp += K, wp += K, dp += K) {
            if (prefetch)
                prefetch_inputs(12, K, sequential, rigid || compact, bp, jp, wp, vertices + v);
            varying float m[3];
#pragma unroll
            for (uniform int kk = 0; kk < 3; kk++) {
                varying float raw = 0.0f;
                if (programIndex < 4)
                    raw = bp[4 * kk + programIndex];
                m[kk] = shuffle(raw, programIndex & 3);
            }
            uniform const float * uniform w = decode ? dp : wp;
            varying float res[CHUNKS];
#pragma unroll
            for (uniform int ch = 0; ch < CHUNKS; ch++) {
                const varying float b = blend_chunk(K, rigid, compact, jp, w, palette, ch);
                res[ch] = product_chunk(b, m, ch);
            }
            const uniform int out = sequential ? first + v : (uniform int)vertices[v];
            const varying float p = line_up(res, 0);
#if TARGET_WIDTH == 4
            varying float n = line_up(res, 3);
#else
            // The same permute already put n' in lanes 3..5.
            varying float n = shuffle(p, min(programIndex + 3, programCount - 1));
#endif
            if (programIndex < 3)
                pos[out * pos_stride + programIndex] = p;
            if (write_normals && programIndex < 3)
                nrm[out * nrm_stride + programIndex] = n;
            if (write_tangents) {
                varying float t = line_up(res, 6);
                if (programIndex == 3)
                    t = bp[3];  // the handedness sign, copied
                if (programIndex < 4)
                    tng[out * tng_stride + programIndex] = t;
            }
        }
        batch = batch_end;
    }
}

// Skins the vertices [0, count) of one influence group, prefetching while vertex v + PREFETCH_AHEAD is
// below readable (see prefetch_split). Other arguments as for skin_run. The two phases are two loops,
// which doubles the kernels' code (the x86 library holds 3.5 MB instead of 2.0) and ISPC's compile time.
// One loop with a test of v before each vertex's prefetches, or with a batch's prefetches issued once
// per 16 vertices, ran skin_p, skin_pn and skin_pnt 3% to 12% slower on AVX-512 in two report runs
// each, in cache and at 1M vertices.
static inline void skin_group(uniform int K, uniform bool sequential, uniform int first, uniform int count,
                              uniform int readable, uniform const float blocks[], uniform const uint32 joints[],
                              uniform const float weights[], uniform const uint32 vertices[],
                              uniform const float palette[], uniform float pos[], uniform int pos_stride,
                              uniform float nrm[], uniform int nrm_stride, uniform bool write_normals,
                              uniform float tng[], uniform int tng_stride, uniform bool write_tangents,
                              uniform bool rigid, uniform bool compact)
{
    const uniform int split = prefetch_split(count, readable);
#define SKIN_RUN(BEGIN, END, PREFETCH)                                                                      \
    skin_run(K, sequential, first, BEGIN, END, PREFETCH, blocks, joints, weights, vertices, palette, pos,     \
             pos_stride, nrm, nrm_stride, write_normals, tng, tng_stride, write_tangents, rigid, compact)
    SKIN_RUN(0, split, true);
    SKIN_RUN(split, count, false);
#undef SKIN_RUN
}

// skin_group with the attribute flags made constants: one loop per set of written attributes. With
// the flags as run-time values the loop tested them every vertex and, short of registers, reloaded
// spilled output pointers from the stack. Arguments as for skin_group.
static inline void skin_group_for_outputs(uniform int K, uniform bool sequential, uniform int first,
                                          uniform int count, uniform int readable, uniform const float blocks[],
                                          uniform const uint32 joints[], uniform const float weights[],
                                          uniform const uint32 vertices[], uniform const float palette[],
                                          uniform float pos[], uniform int pos_stride, uniform float nrm[],
                                          uniform int nrm_stride, uniform bool write_normals, uniform float tng[],
                                          uniform int tng_stride, uniform bool write_tangents, uniform bool rigid,
                                          uniform bool compact)
{
#define SKIN_GROUP(N, T)                                                                                    \
    skin_group(K, sequential, first, count, readable, blocks, joints, weights, vertices, palette, pos,         \
               pos_stride, nrm, nrm_stride, N, tng, tng_stride, T, rigid, compact)
    if (write_normals && write_tangents)
        SKIN_GROUP(true, true);
    else if (write_normals)
        SKIN_GROUP(true, false);
    else if (write_tangents)
        SKIN_GROUP(false, true);
    else
        SKIN_GROUP(false, false);
#undef SKIN_GROUP
}

// Skins one influence group (see skin_group); first >= 0 selects the sequential form, readable > 0
// prefetching (see prefetch_split), and compact the packed influences of blend_chunk (joints then holds
// them, and weights is not read). Every combination of influence count, sequential form, influence
// format and written attributes is its own loop.
static noinline unmasked void skin_blended(uniform int k, uniform bool compact, uniform int first, uniform int count,
                             uniform int readable, uniform const float blocks[], uniform const uint32 joints[],
                             uniform const float weights[],
                             uniform const uint32 vertices[], uniform const float palette[],
                             uniform float pos[], uniform int pos_stride, uniform float nrm[], uniform int nrm_stride,
                             uniform bool write_normals, uniform float tng[], uniform int tng_stride,
                             uniform bool write_tangents)
{
#define SKIN_GROUP(K, SEQ)                                                                                  \
    skin_group_for_outputs(K, SEQ, first, count, readable, blocks, joints, weights, vertices, palette, pos,     \
                           pos_stride, nrm, nrm_stride, write_normals, tng, tng_stride, write_tangents, false,  \
                           COMPACT)
#define SKIN_ANY_K(SEQ)                                                                                     \
    switch (k) {                                                                                            \
    case 0: SKIN_GROUP(0, SEQ); break;                                                                      \
    case 1: SKIN_GROUP(1, SEQ); break;                                                                      \
    case 2: SKIN_GROUP(2, SEQ); break;                                                                      \
    case 3: SKIN_GROUP(3, SEQ); break;                                                                      \
    case 4: SKIN_GROUP(4, SEQ); break;                                                                      \
    case 5: SKIN_GROUP(5, SEQ); break;                                                                      \
    case 6: SKIN_GROUP(6, SEQ); break;                                                                      \
    case 7: SKIN_GROUP(7, SEQ); break;                                                                      \
    case 8: SKIN_GROUP(8, SEQ); break;                                                                      \
    }
#define COMPACT true
    if (compact && first >= 0) {
        SKIN_ANY_K(true)
    } else if (compact) {
        SKIN_ANY_K(false)
    }
#undef COMPACT
#define COMPACT false
    if (!compact && first >= 0) {
        SKIN_ANY_K(true)
    } else if (!compact) {
        SKIN_ANY_K(false)
    }
#undef COMPACT
#undef SKIN_ANY_K
#undef SKIN_GROUP
}

// Rigid skinning (van Waveren's one-influence LOD, the common case of machine parts and props): every
// vertex follows one joint with weight 1, so each output is a plain transform by that palette matrix.
// weights is not read; joints holds one palette index per vertex; first and readable as for skin_blended.
static noinline unmasked void skin_rigid(uniform int first, uniform int count, uniform int readable,
                               uniform const float blocks[], uniform const uint32 joints[],
                               uniform const uint32 vertices[],
                               uniform const float palette[], uniform float pos[], uniform int pos_stride,
                               uniform float nrm[], uniform int nrm_stride, uniform bool write_normals,
                               uniform float tng[], uniform int tng_stride, uniform bool write_tangents)
{
    if (first >= 0)
        skin_group_for_outputs(1, true, first, count, readable, blocks, joints, blocks /* not read */, vertices,
                               palette, pos, pos_stride, nrm, nrm_stride, write_normals, tng, tng_stride,
                               write_tangents, true, false);
    else
        skin_group_for_outputs(1, false, first, count, readable, blocks, joints, blocks /* not read */, vertices,
                               palette, pos, pos_stride, nrm, nrm_stride, write_normals, tng, tng_stride,
                               write_tangents, true, false);
}

// Positions-only skinning for meshes without normals or tangents: blocks holds 4 floats per vertex,
// (px py pz 1), a third of what skin_group reads. The blended rows B (lane 4r + c) times (p, 1) repeated
// in every group of four lanes gives B[r][c] * p_c, and row_sums adds each row. Other arguments as for
// skin_run (prefetch and compact included); rigid as for skin_rigid.
static inline void skin_positions_run(uniform int K, uniform bool sequential, uniform bool rigid,
                                      uniform bool compact, uniform int first,
                                      uniform int begin, uniform int end, uniform bool prefetch,
                                      uniform const float blocks[], uniform const uint32 joints[],
                                      uniform const float weights[], uniform const uint32 vertices[],
                                      uniform const float palette[], uniform float pos[], uniform int pos_stride)
{
    uniform const float * uniform bp = blocks + 4 * begin;
    uniform const uint32 * uniform jp = joints + K * begin;
    uniform const float * uniform wp = weights + K * begin;
    // Batches as in skin_run.
    const uniform bool decode = compact && !rigid;
    uniform float decoded[8 * DECODE_BATCH];
    for (uniform int batch = begin; batch < end;) {
        const uniform int batch_end = decode ? min(batch + DECODE_BATCH, end) : end;
        if (decode)
            decode_weights(K * (batch_end - batch), jp, decoded);
        uniform const float * uniform dp = decoded;
        for (uniform int v = batch; v < batch_end; v++, bp += 4, jp += K, wp += K, dp += K) {
            if (prefetch)
                prefetch_inputs(4, K, sequential, rigid || compact, bp, jp, wp, vertices + v);
            varying float raw = 0.0f;
            if (programIndex < 4)
                raw = bp[programIndex];
            const varying float p = shuffle(raw, programIndex & 3);
            uniform const float * uniform w = decode ? dp : wp;
            varying float acc[CHUNKS];
#pragma unroll
            for (uniform int ch = 0; ch < CHUNKS; ch++) {
                const varying float b = blend_chunk(K, rigid, compact, jp, w, palette, ch);
                acc[ch] = b * p;
            }
            const varying float out_p = row_sums(acc);
            const uniform int out = sequential ? first + v : (uniform int)vertices[v];
            if (programIndex < 3)
                pos[out * pos_stride + programIndex] = out_p;
        }
        batch = batch_end;
    }
}

// Skins the vertices [0, count) of a positions-only group, prefetching as skin_group does.
static inline void skin_positions(uniform int K, uniform bool sequential, uniform bool rigid, uniform bool compact,
                                  uniform int first, uniform int count, uniform int readable,
                                  uniform const float blocks[],
                                  uniform const uint32 joints[], uniform const float weights[],
                                  uniform const uint32 vertices[], uniform const float palette[], uniform float pos[],
                                  uniform int pos_stride)
{
    const uniform int split = prefetch_split(count, readable);
    skin_positions_run(K, sequential, rigid, compact, first, 0, split, true, blocks, joints, weights, vertices,
                       palette, pos, pos_stride);
    skin_positions_run(K, sequential, rigid, compact, first, split, count, false, blocks, joints, weights, vertices,
                       palette, pos, pos_stride);
}

// Skins one influence group of a positions-only mesh (see skin_positions); first >= 0 selects the
// sequential form, rigid the one-influence form with weight 1 (k = 1, plain joints, weights not read),
// readable > 0 prefetching, and compact the packed influences as for skin_blended (weights not read). A rigid
// group always has plain joints (SkinnedMesh stores only a rigid vertex's joint in either influence
// format), so rigid with compact runs the compact form.
static noinline unmasked void skin_p_only(uniform int k, uniform bool rigid, uniform bool compact, uniform int first,
                                uniform int count, uniform int readable, uniform const float blocks[],
                                uniform const uint32 joints[],
                                uniform const float weights[], uniform const uint32 vertices[],
                                uniform const float palette[], uniform float pos[], uniform int pos_stride)
{
#define SKIN_POSITIONS(K, SEQ, RIGID)                                                                       \
    skin_positions(K, SEQ, RIGID, COMPACT, first, count, readable, blocks, joints, weights, vertices, palette,  \
                   pos, pos_stride)
#define SKIN_POSITIONS_ANY_K(SEQ)                                                                           \
    switch (k) {                                                                                            \
    case 0: SKIN_POSITIONS(0, SEQ, false); break;                                                           \
    case 1: if (rigid && !COMPACT) SKIN_POSITIONS(1, SEQ, true); else SKIN_POSITIONS(1, SEQ, false); break; \
    case 2: SKIN_POSITIONS(2, SEQ, false); break;                                                           \
    case 3: SKIN_POSITIONS(3, SEQ, false); break;                                                           \
    case 4: SKIN_POSITIONS(4, SEQ, false); break;                                                           \
    case 5: SKIN_POSITIONS(5, SEQ, false); break;                                                           \
    case 6: SKIN_POSITIONS(6, SEQ, false); break;                                                           \
    case 7: SKIN_POSITIONS(7, SEQ, false); break;                                                           \
    case 8: SKIN_POSITIONS(8, SEQ, false); break;                                                           \
    }
#define COMPACT true
    if (compact && first >= 0) {
        SKIN_POSITIONS_ANY_K(true)
    } else if (compact) {
        SKIN_POSITIONS_ANY_K(false)
    }
#undef COMPACT
#define COMPACT false
    if (!compact && first >= 0) {
        SKIN_POSITIONS_ANY_K(true)
    } else if (!compact) {
        SKIN_POSITIONS_ANY_K(false)
    }
#undef COMPACT
#undef SKIN_POSITIONS_ANY_K
#undef SKIN_POSITIONS
}

// The arguments of one skinning call, one struct instead of a long positional list. Rust fills it from
// its checked mesh layout (see src/ffi/skin.rs, where bindgen's copy of this struct is used), and the
// kernel reads it once per call. Flags are int32 rather than bool so that both sides agree on the layout
// without relying on a C bool's size.
struct SkinGroupArgs {
    int32 form;             // SKIN_FORM_BLENDED, SKIN_FORM_RIGID or SKIN_FORM_POSITIONS
    int32 influences;       // k, the influences per vertex (1 for the rigid form)
    int32 rigid;            // positions-only form: every weight is 1, so only joints are read
    int32 compact;          // packed influences in joints (u16 joint, unorm16 weight); weights not read
    int32 first;            // >= 0: outputs go to first + v; < 0: to vertices[v]
    int32 count;            // vertices in this call
    int32 readable;         // vertices from the first whose inputs may be prefetched (0: no prefetching)
    const float * blocks;
    const uint32 * joints;
    const float * weights;
    const uint32 * vertices;
    const float * palette;
    float * pos;
    int32 pos_stride;
    float * nrm;
    int32 nrm_stride;
    int32 write_normals;
    float * tng;
    int32 tng_stride;
    int32 write_tangents;
};

#define SKIN_FORM_BLENDED 0
#define SKIN_FORM_RIGID 1
#define SKIN_FORM_POSITIONS 2

// Skins one influence group, or part of one, in the form the arguments name: blended matrices
// (skin_blended), one influence of weight 1 (skin_rigid), or positions only (skin_p_only). The three
// are unmasked, so that they compile, as the separate exports they replace did, for an all-on gang:
// as ordinary static functions, inlined or not, they took the caller's execution mask and skin_pnt
// (4 influences, 1,024 vertices) ran 1.4x slower on AVX-512 (6.4 against 4.5 us); unmasked, the
// A/B runs against the separate exports agree within 2% on every influence count, AVX2 and AVX-512.
// noinline keeps each one its own function, so that one form's code does not move another's loops.
export void EXPORT(skin_group)(uniform const SkinGroupArgs * uniform a)
{
    if (a->form == SKIN_FORM_POSITIONS)
        skin_p_only(a->influences, a->rigid != 0, a->compact != 0, a->first, a->count, a->readable, a->blocks,
                    a->joints, a->weights, a->vertices, a->palette, a->pos, a->pos_stride);
    else if (a->form == SKIN_FORM_RIGID)
        skin_rigid(a->first, a->count, a->readable, a->blocks, a->joints, a->vertices, a->palette, a->pos,
                   a->pos_stride, a->nrm, a->nrm_stride, a->write_normals != 0, a->tng, a->tng_stride,
                   a->write_tangents != 0);
    else
        skin_blended(a->influences, a->compact != 0, a->first, a->count, a->readable, a->blocks, a->joints,
                     a->weights, a->vertices, a->palette, a->pos, a->pos_stride, a->nrm, a->nrm_stride,
                     a->write_normals != 0, a->tng, a->tng_stride, a->write_tangents != 0);
}

// Scales (x, y, z) to unit length; a zero vector stays zero. Precise divides by the square root; fast
// multiplies by rsqrt, ISPC's approximate reciprocal square root refined by a Newton step.
static inline void unit3(varying float &x, varying float &y, varying float &z, uniform int mode)
{
    const varying float len2 = x * x + y * y + z * z;
    if (len2 > 0.0f) {
        const varying float s = mode == RENORM_FAST ? rsqrt(len2) : 1.0f / sqrt(len2);
        x *= s;
        y *= s;
        z *= s;
    }
}

// Renormalizes count skinned vectors in place, one vector per lane: vector i's xyz is at v[stride * i]
// (stride in floats). packed says the stride holds nothing but the vector: a normal stream (stride 3),
// or a tangent stream (stride 4, whose w is read and written back unchanged). Only then are whole gangs
// de-interleaved with shuffles, which touch every float of the stride; any other layout (an interleaved
// vertex) uses masked gathers and scatters of x, y and z alone, as does the last partial gang.
// Renormalizing inside skin_group, with the gang spread over one vertex, put a square root and a
// division on every vertex's critical path and cost about 2 ns per vertex on AVX-512; here one of each
// serves a whole gang of vertices. The arithmetic per lane is the same in every case, so a vector's
// result depends neither on the output layout nor on where a chunk starts.
export void EXPORT(renormalize_rows)(uniform float v[], uniform int count, uniform int stride, uniform bool packed,
                                     uniform int mode)
{
    uniform int i = 0;
    if (packed && (stride == 3 || stride == 4)) {
        for (; i + programCount <= count; i += programCount) {
            varying float x, y, z, w;
            if (stride == 3) {
                aos_to_soa3(v + 3 * i, &x, &y, &z);
                unit3(x, y, z, mode);
                soa_to_aos3(x, y, z, v + 3 * i);
            } else {
                aos_to_soa4(v + 4 * i, &x, &y, &z, &w);
                unit3(x, y, z, mode);
                soa_to_aos4(x, y, z, w, v + 4 * i);
            }
        }
    }
    for (; i < count; i += programCount) {
        const varying int j = i + programIndex;
        if (j < count) {
            varying float x = v[stride * j], y = v[stride * j + 1], z = v[stride * j + 2];
            unit3(x, y, z, mode);
            v[stride * j] = x;
            v[stride * j + 1] = y;
            v[stride * j + 2] = z;
        }
    }
}
