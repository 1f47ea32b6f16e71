// Local-to-model transforms over a level-order skeleton (the level-order seed), and the skinning palettes
// (sections 4 and 5 for crowds and palettes). Sections 2 and 3, the structure-of-arrays layouts, are in
// hierarchy_soa.ispc.
//
// Affine semantics everywhere: a matrix's bottom row is taken as (0, 0, 0, 1) and written as exactly that,
// whatever the input holds there. model[j] = model[parent[j]] * local[j], or root * local[j] for a root.
//
// 1. ltm_joint / ltm_joint_trs / ltm_palette_trs (the last with the skinning palettes too): one joint at
//    a time, the gang spread *horizontally* over the 16 elements of a column-major 4x4 matrix (16 /
//    programCount chunks per matrix). The parent's columns are replicated with shuffles of one
//    contiguous load and the local matrix's elements are broadcast inside each column with in-lane
//    shuffles: no gathers, no scatters, whatever the tree's shape.
// 2. ltm_children_soa: the seed's per-parent foreach over the (contiguous) children, on structure-of-
//    arrays matrices, so child loads and stores are contiguous vectors and the parent is uniform.
// 3. ltm_level_soa: foreach over a whole level on SoA matrices; each lane gathers its parent.

#include "common.isph"
#include "shuffle.isph"

// ---------------------------------------------------------------------------------------------------
// 1. Horizontal, AoS: 16 floats per matrix, column-major (glam Mat4 and Affine3A share this layout).

#define CHUNKS (16 / TARGET_WIDTH)

// Element index of lane programIndex in chunk c, its row and its column.
static inline varying int element(uniform int c) { return c * programCount + programIndex; }
static inline varying int row_of(varying int e) { return e & 3; }
static inline varying int col_of(varying int e) { return e >> 2; }

// One chunk of P * L: a[k] are P's replicated columns, and bk holds in each column group (col j) L[j][k],
// element k of L's column j.
static inline varying float multiply_columns(const varying float a[4], varying float b0, varying float b1,
                                             varying float b2, uniform int c)
{
    const varying int e = element(c);
    // The translation column also adds P's translation (L[3][3] = 1); the other columns do not. Two
    // chains of two operations joined by one addition: the joints of a chain wait on their parent's
    // store, and one chain of four (a multiply, two multiply-adds, then the translation) kept every
    // joint waiting about 4 cycles longer.
    const varying float t = col_of(e) == 3 ? a[3] : 0.0f;
    varying float out = (a[0] * b0 + t) + (a[1] * b1 + a[2] * b2);
    // Bottom row exactly (0, 0, 0, 1).
    if (row_of(e) == 3)
        out = col_of(e) == 3 ? 1.0f : 0.0f;
    return out;
}

// One chunk of P * L. `l` holds this chunk's lanes of L; a[k] are P's replicated columns. L's elements
// are broadcast inside each column group with in-lane shuffles.
static inline varying float multiply_chunk(const varying float a[4], varying float l, uniform int c)
{
    const varying int base = programIndex & ~3;  // lane of element (col j, row 0) within the chunk
    return multiply_columns(a, shuffle(l, base), shuffle(l, base + 1), shuffle(l, base + 2), c);
}

static inline void load_parent(uniform const float * uniform pm, varying float a[4])
{
#if TARGET_WIDTH == 4
    // One column per chunk: the columns are plain loads.
#pragma unroll
    for (uniform int k = 0; k < 4; k++)
        a[k] = pm[4 * k + programIndex];
#else
    // Each column is a 4-lane load replicated over the column groups, which LLVM emits as one broadcast
    // load (vbroadcastf128 / vbroadcastf32x4): the load port does the replication, no shuffle is spent.
#pragma unroll
    for (uniform int k = 0; k < 4; k++) {
        varying float col = 0.0f;
        if (programIndex < 4)
            col = pm[4 * k + programIndex];
        a[k] = shuffle(col, programIndex & 3);
    }
#endif
}

// Whether every float summed into `acc` was finite: a sum of finite floats is finite unless it
// overflows, which only floats near f32::MAX can do, and then the caller's exact check decides (see
// src/numeric.rs). One addition per stored vector into one sum per chunk, off the joints' dependency
// chain (adding both AVX2 chunks into one sum one after the other made a chain of two 4-cycle additions
// per joint, 15% of the kernel): checking the matrices after the whole call instead read them back
// while their stores drained, about a third of the kernel's time at 120 joints. Where the joint loop
// needs every vector register (ltm_trs on AVX2 without the palettes) two sums do not fit: there the two
// chunks are added first and that sum goes into one sum, a single addition on the chain (see ltm_trs);
// summing each block's models after its loop, from L1, was 0.05 to 0.3 ns per joint slower than that.
static inline uniform bool sum_finite(const varying float acc[CHUNKS])
{
    varying float all = 0.0f;
#pragma unroll
    for (uniform int c = 0; c < CHUNKS; c++)
        all += acc[c];
    return !any((intbits(all) & 0x7f800000) == 0x7f800000);
}

// A skinning palette entry: palette[i] = model[joint[i]] * inverse_bind[i], stored row-major (the
// transpose of glam's column-major layout), 16 floats per entry: rows 0..2 are the affine 3x4 rows the
// skinning kernels read, row 3 is (0, 0, 0, 1). The product is computed column-major as in ltm_joint and
// transposed in registers. skin_palette (section 5) and ltm_palette_trs both store entries so.

// Row-major chunk oc of the column-major matrix held in res[]: lane (row r, col c) takes element 4c + r.
static inline varying float transpose_chunk(const varying float res[CHUNKS], uniform int oc)
{
    const varying int e = oc * programCount + programIndex;
    const varying int src = 4 * (e & 3) + (e >> 2);
#if TARGET_WIDTH == 16
    return shuffle(res[0], src);
#elif TARGET_WIDTH == 8
    return shuffle(res[0], res[1], src);
#else
    // Four one-column chunks: row oc is lane oc of each; gather them in two pairwise steps.
    const varying float lo = shuffle(res[0], res[1], programIndex == 0 ? oc : 4 + oc);
    const varying float hi = shuffle(res[2], res[3], programIndex == 2 ? oc : 4 + oc);
    return shuffle(lo, hi, programIndex < 2 ? programIndex : 4 + programIndex);
#endif
}

// One palette entry: the column-major product of the matrix whose columns a[k] are replicated (as
// load_parent gives them) and the inverse bind matrix at ib, stored row-major at dst; every element
// stored is added to acc (see sum_finite).
static inline void palette_entry(const varying float a[4], uniform const float * uniform ib, uniform float * uniform dst,
                                 varying float acc[CHUNKS])
{
    varying float res[CHUNKS];
#pragma unroll
    for (uniform int c = 0; c < CHUNKS; c++)
        res[c] = multiply_chunk(a, ib[c * programCount + programIndex], c);
#pragma unroll
    for (uniform int oc = 0; oc < CHUNKS; oc++) {
        const varying float v = transpose_chunk(res, oc);
        dst[oc * programCount + programIndex] = v;
        acc[oc] += v;
    }
}

// The same product with the lanes on the row-major output instead: lane (row r, col c) of output chunk
// oc computes (M[r][0] IB[0][c] + t) + (M[r][1] IB[1][c] + M[r][2] IB[2][c]), t = M[r][3] in column 3,
// exactly palette_entry's expression for that element, so the same bits, without its transpose. The
// model's elements broadcast over each output row (ma, mt: model_rows, once per joint) come from the
// column-major chunks m in registers, one permute each; the inverse bind's rows 0..2 replicated over the
// rows are broadcast loads from a row-major copy (ib_rows, 12 floats). On AVX2 an entry is 3 loads, 8
// arithmetic operations and 2 stores; palette_entry's was about 55 instructions with its transposes.
static inline void model_rows(const varying float m[CHUNKS], varying float ma[CHUNKS][3], varying float mt[CHUNKS])
{
#pragma unroll
    for (uniform int oc = 0; oc < CHUNKS; oc++) {
        // Element (row r, col k) of the column-major model is element 4k + r: for every row r of this
        // output chunk it lies in chunk 4k / programCount (rows are at most 3 past a multiple of 4).
        const varying int r = (oc * programCount + programIndex) >> 2;
#pragma unroll
        for (uniform int k = 0; k < 3; k++)
            ma[oc][k] = shuffle(m[(4 * k) / programCount], (4 * k) % programCount + r);
        const varying float t = shuffle(m[12 / programCount], 12 % programCount + r);
        mt[oc] = (programIndex & 3) == 3 ? t : 0.0f;
    }
}

static inline void palette_rows(const varying float ma[CHUNKS][3], const varying float mt[CHUNKS],
                                uniform const float * uniform ib_rows, uniform float * uniform dst,
                                varying float acc[CHUNKS])
{
    varying float b[3];
#pragma unroll
    for (uniform int k = 0; k < 3; k++) {
#if TARGET_WIDTH == 4
        b[k] = ib_rows[4 * k + programIndex];
#else
        varying float row = 0.0f;
        if (programIndex < 4)
            row = ib_rows[4 * k + programIndex];
        b[k] = shuffle(row, programIndex & 3);
#endif
    }
#pragma unroll
    for (uniform int oc = 0; oc < CHUNKS; oc++) {
        varying float v = (ma[oc][0] * b[0] + mt[oc]) + (ma[oc][1] * b[1] + ma[oc][2] * b[2]);
        // Row 3 exactly (0, 0, 0, 1).
        const varying int e = oc * programCount + programIndex;
        if ((e >> 2) == 3)
            v = (e & 3) == 3 ? 1.0f : 0.0f;
        dst[oc * programCount + programIndex] = v;
        acc[oc] += v;
    }
}

// Joints [begin, end) in order; local and model hold 16 floats per joint; parents[j] < j or -1. Returns
// whether every model matrix written is finite (or a false alarm, see sum_finite).
export uniform bool EXPORT(ltm_joint)(uniform const float local[], uniform float model[],
                                      uniform const int parents[], uniform int begin, uniform int end,
                                      uniform const float root[16])
{
    varying float acc[CHUNKS];
#pragma unroll
    for (uniform int c = 0; c < CHUNKS; c++)
        acc[c] = 0.0f;
    // Stepped pointers rather than 32-bit offsets, which every joint sign-extended again.
    uniform const float * uniform src = local + 16 * begin;
    uniform float * uniform out = model + 16 * begin;
    uniform const int * uniform pp = parents + begin;
    for (uniform int j = begin; j < end; j++, src += 16, out += 16, pp++) {
        const uniform int p = *pp;
        varying float a[4];
        load_parent(p < 0 ? root : model + 16 * p, a);
#pragma unroll
        for (uniform int c = 0; c < CHUNKS; c++) {
            const varying float l = src[c * programCount + programIndex];
            const varying float m = multiply_chunk(a, l, c);
            out[c * programCount + programIndex] = m;
            acc[c] += m;
        }
    }
    return sum_finite(acc);
}

// Joints per block of ltm_joint_trs. Its scratch lives on the stack: three quads (4 floats) per joint on
// AVX2 (see store_trs_quads), 4 columns of 4 floats per joint elsewhere.
#define TRS_BLOCK 64

// The local matrix T * R(q) * S of one joint per lane (structure of arrays): e[4k + r] is row r of column
// k. The rotation is that of q / |q| (see rotation_scale for the quaternions refused):
// with s2 = 2 / |q|^2, R = I - s2 (|v|^2 I - v v^T) + s2 w [v]x.
struct TrsColumns {
    float e[16];
};

// 2 / |q|^2 under the rotation rule (src/numeric.rs): a normal |q|^2 gives it, and anything else
// (zero, too short to square, too long, NaN) NaN, so that the matrix is NaN, the kernel's finiteness
// check fails and the Rust side names the rotation. Without the poison a quaternion too short to square
// (1e-30) would be the identity, finite and wrong. A select, not a branch: as ?: on a varying condition
// this compiled to a test and a jump per gang.
static inline varying float rotation_scale(varying float x, varying float y, varying float z, varying float w)
{
    const varying float n = x * x + y * y + z * z + w * w;
    return select(n >= floatbits(0x00800000) && n <= floatbits(0x7f7fffff), 2.0f / n, floatbits(0x7fc00000));
}

static inline varying TrsColumns trs_matrix(varying float x, varying float y, varying float z, varying float w,
                                            varying float tx, varying float ty, varying float tz, varying float sx,
                                            varying float sy, varying float sz)
{
    const varying float s2 = rotation_scale(x, y, z, w);
    varying TrsColumns m;
    m.e[0] = (1.0f - s2 * (y * y + z * z)) * sx;
    m.e[1] = s2 * (x * y + z * w) * sx;
    m.e[2] = s2 * (x * z - y * w) * sx;
    m.e[3] = 0.0f;
    m.e[4] = s2 * (x * y - z * w) * sy;
    m.e[5] = (1.0f - s2 * (x * x + z * z)) * sy;
    m.e[6] = s2 * (y * z + x * w) * sy;
    m.e[7] = 0.0f;
    m.e[8] = s2 * (x * z + y * w) * sz;
    m.e[9] = s2 * (y * z - x * w) * sz;
    m.e[10] = (1.0f - s2 * (x * x + y * y)) * sz;
    m.e[11] = 0.0f;
    m.e[12] = tx;
    m.e[13] = ty;
    m.e[14] = tz;
    m.e[15] = 1.0f;
    return m;
}

#if W == 8
// ltm_joint_trs on AVX2 keeps each local matrix as three quads of four floats, each quad holding two of
// the pairs (L[2ch][r], L[2ch + 1][r]) that the joint loop multiplies by (chunk ch, row r):
//   A = (L00 L10 L01 L11), B = (L02 L12 L20 L30), C = (L21 L31 L22 L32)   (Lkr: column k, row r).
// The joint loop then takes each of its six broadcast pairs (L[2ch][r] in lanes 0..3, L[2ch + 1][r] in
// lanes 4..7) from one 16-byte load and one permute (quad_pair): 3 loads and 6 permutes per joint. Before,
// the matrices were stored one element row per joint lane and each pair took two broadcast loads and a
// blend (12 loads and 6 blends). Building the quads costs 3 shuffles a joint (three 4x4 transposes a
// gang); 120 joints, Zen 4: 3.63 to 3.52 ns per joint.
//
// Floats per quad row (A, B or C) of the scratch: 4 per joint of a block, with a gang's padding before
// it (see ltm_trs).
#define QROW (4 * (TRS_BLOCK + programCount))

// The quads come out of in-lane 4x4 transposes, which keep lanes 0..3 and 4..7 apart. So that the four
// outputs of a transpose are the quads of joints (0, 1), (2, 3), (4, 5) and (6, 7), stored in joint order
// without a cross-lane move, the gang's lanes hold its joints in the order (0, 2, 4, 6 | 1, 3, 5, 7).
// load_aos4_pairs reads eight quaternions so: each 256-bit load holds two records, one per lane group.
static inline void load_aos4_pairs(uniform const float * uniform src, varying float &x, varying float &y,
                                   varying float &z, varying float &w)
{
    transpose_blocks(src[programIndex], src[8 + programIndex], src[16 + programIndex], src[24 + programIndex], x, y,
                     z, w);
}

// Joints from natural lane order to (0, 2, 4, 6 | 1, 3, 5, 7).
static inline varying float to_pairs(varying float v)
{
    return shuffle(v, programIndex < 4 ? 2 * programIndex : 2 * programIndex - 7);
}

// load_aos3, then the lanes in load_aos4_pairs's order (three permutes a gang).
static inline void load_aos3_pairs(uniform const float * uniform src, varying float &x, varying float &y,
                                   varying float &z)
{
    varying float a, b, c;
    load_aos3(src, a, b, c);
    x = to_pairs(a);
    y = to_pairs(b);
    z = to_pairs(c);
}

// Element vectors a, b, c, d of the gang (lanes in load_aos4_pairs's order) become the quads
// (a b c d) of its joints 0..7 at dst[4j .. 4j + 3].
static inline void store_quads(varying float a, varying float b, varying float c, varying float d,
                               uniform float * uniform dst)
{
    varying float u0, u1, u2, u3;
    transpose_blocks(a, b, c, d, u0, u1, u2, u3);
    dst[programIndex] = u0;
    dst[8 + programIndex] = u1;
    dst[16 + programIndex] = u2;
    dst[24 + programIndex] = u3;
}

// The gang's local matrices as quads A, B and C (see above), the block's quad rows at quads, quads + QROW
// and quads + 2 QROW.
static inline void store_trs_quads(const varying TrsColumns &m, uniform float * uniform quads)
{
    store_quads(m.e[0], m.e[4], m.e[1], m.e[5], quads);
    store_quads(m.e[2], m.e[6], m.e[8], m.e[12], quads + QROW);
    store_quads(m.e[9], m.e[13], m.e[10], m.e[14], quads + 2 * QROW);
}

// Lanes 0..3 take element 2 half of the quad, lanes 4..7 element 2 half + 1: one 16-byte load and one
// permute (LLVM emits vmovups xmm and vpermps with the index vector kept in a register).
static inline varying float quad_pair(uniform const float * uniform quad, uniform int half)
{
    varying float v = 0.0f;
    if (programIndex < 4)
        v = quad[programIndex];
    v = shuffle(v, programIndex & 3);
    return shuffle(v, (programIndex & ~3) + 2 * half + (programIndex >> 2));
}

// Chunk ch of the product of the parent columns a and the local matrix whose quad A is at l.
static inline varying float quads_product(const varying float a[4], uniform const float * uniform l, uniform int ch)
{
    if (ch == 0)
        return multiply_columns(a, quad_pair(l, 0), quad_pair(l, 1), quad_pair(l + QROW, 0), 0);
    return multiply_columns(a, quad_pair(l + QROW, 1), quad_pair(l + 2 * QROW, 0), quad_pair(l + 2 * QROW, 1), 1);
}
#else
// Writes column k of the gang's joints to ck, four floats per joint.
static inline void trs_columns(const varying TrsColumns &m, uniform float * uniform c0, uniform float * uniform c1,
                               uniform float * uniform c2, uniform float * uniform c3)
{
    store_aos4(m.e[0], m.e[1], m.e[2], m.e[3], c0);
    store_aos4(m.e[4], m.e[5], m.e[6], m.e[7], c1);
    store_aos4(m.e[8], m.e[9], m.e[10], m.e[11], c2);
    store_aos4(m.e[12], m.e[13], m.e[14], m.e[15], c3);
}
#endif

// Chunk ch of one joint's local matrix, read straight from trs_columns' four column arrays (column k at
// ck[0 .. 3]): each group of four lanes takes its column with a four-lane load replicated over the gang,
// as load_parent does (one broadcast load), and a select keeps each group's own. Repacking the columns
// into one 16-float matrix per joint first cost a 16-byte load and store per column and joint.
static inline varying float local_chunk(uniform const float * uniform c0, uniform const float * uniform c1,
                                        uniform const float * uniform c2, uniform const float * uniform c3,
                                        uniform int ch)
{
    uniform const float * uniform cs[4] = {c0, c1, c2, c3};
    varying float out = 0.0f;
#pragma unroll
    for (uniform int g = 0; g < programCount / 4; g++) {
        const uniform int k = ch * (programCount / 4) + g;
        varying float col = 0.0f;
        if (programIndex < 4)
            col = cs[k][programIndex];
        col = shuffle(col, programIndex & 3);
        if ((programIndex >> 2) == g)
            out = col;
    }
    return out;
}

// ltm_joint_trs's two layouts of a block's local matrices (its scratch, quads or cols): store_locals
// writes a gang's from block joint b on, from inputs read by load_trs4 and load_trs3. The joint loop walks
// the block with a cursor l, declared by local_cursor at the block's first joint and stepped by LOCAL_STEP
// per joint; local_product(a, l, ch) is chunk ch of the cursor's joint times the parent columns a. On AVX2
// the cursor points at the joint's quad A, elsewhere it is the joint's index in cols.
#if W == 8
#define store_locals(m, b) store_trs_quads(m, quads + 4 * ((b) + programCount))
#define local_cursor(l) uniform const float * uniform l = quads + 4 * programCount
#define LOCAL_STEP 4
#define local_product(a, l, ch) quads_product(a, l, ch)
#define load_trs4 load_aos4_pairs
#define load_trs3 load_aos3_pairs
#else
#define store_locals(m, b)                                                                                  \
    trs_columns(m, &cols[0][4 * ((b) + programCount)], &cols[1][4 * ((b) + programCount)],                \
                &cols[2][4 * ((b) + programCount)], &cols[3][4 * ((b) + programCount)])
#define load_trs4 load_aos4
#define load_trs3 load_aos3
#define local_cursor(l) uniform int l = programCount
#define LOCAL_STEP 1
#define local_product(a, b, ch)                                                                             \
    multiply_chunk(a, local_chunk(cols[0] + 4 * (b), cols[1] + 4 * (b), cols[2] + 4 * (b), cols[3] + 4 * (b), ch), ch)
#endif

// The local matrices of the gang of joints j0 .. j0 + programCount - 1, read with load_trs4 and load_trs3
// (so on AVX2 in load_aos4_pairs's lane order).
static inline varying TrsColumns gang_trs(uniform const float q[], uniform const float t[], uniform const float s[],
                                          uniform int j0)
{
    varying float x, y, z, w, tx, ty, tz, sx, sy, sz;
    load_trs4(q + 4 * j0, x, y, z, w);
    load_trs3(t + 3 * j0, tx, ty, tz);
    load_trs3(s + 3 * j0, sx, sy, sz);
    return trs_matrix(x, y, z, w, tx, ty, tz, sx, sy, sz);
}

// As ltm_joint, with the local transforms given as translation (3 floats), rotation quaternion (4 floats,
// x y z w) and scale (3 floats, non-uniform allowed) per joint.
//
// Building each local matrix inside the joint loop (broadcasting q, s and t over the matrix lanes) made
// that loop latency bound, about 12 cycles per joint on AVX-512: the normalization's division and the
// shuffles sat on every joint's dependency chain. So each block of TRS_BLOCK joints first builds its
// local matrices with the lanes across joints (plain arithmetic, no shuffles but the AoS/SoA transposes).
// On AVX2 they are written as three quads per joint (store_trs_quads) that the joint loop permutes into
// its broadcast pairs; elsewhere as four column arrays that local_chunk reads from. Returns whether every
// model matrix written is finite (or a false alarm, see sum_finite).
//
// With a palette plan (entry_start not NULL, ltm_palette_trs) each joint's skinning palette entries are
// computed in the joint loop too, from the model matrix still in registers: entry_start[j] ..
// entry_start[j + 1] index the entries, each with two ints in `entries` (skin s, slot i) and its inverse
// bind's rows 0..2 at ib_rows[12 e ..] (row-major), and entry e is palettes[s][16 i ..] = model[j] *
// inverse bind, row-major, with skin_palette's operations on every element (so the same bits; see
// palette_rows). The joint loop is a chain of dependent products (each joint waits for its parent's
// store), and the entries, which nothing waits for, fill the cycles it leaves idle.
static inline uniform bool ltm_trs(uniform const float t[], uniform const float q[], uniform const float s[],
                                   uniform float model[], uniform const int parents[], uniform int begin,
                                   uniform int end, uniform const float root[16], uniform const int entry_start[],
                                   uniform const int entries[], uniform const float ib_rows[],
                                   uniform float * uniform palettes[])
{
    // The sums of every model element stored, one per chunk (see sum_finite).
    varying float acc[CHUNKS];
#pragma unroll
    for (uniform int c = 0; c < CHUNKS; c++)
        acc[c] = 0.0f;
    // The palette entries' own sums: with the models', one chain of additions per chunk took two steps
    // per joint.
    varying float pacc[CHUNKS];
#pragma unroll
    for (uniform int c = 0; c < CHUNKS; c++)
        pacc[c] = 0.0f;
    // The block's local matrices: on AVX2 quad A, B or C of block joint b at quads[4 (b + programCount) +
    // QROW * (0, 1 or 2)], elsewhere column c of block joint b at cols[c][4 (b + programCount) ..]. A last
    // gang may start up to programCount joints before the block, hence the padding in front; no gang ends
    // past the block, and the identity gang of a range ending before joint programCount ends below slot
    // 3 programCount.
#if W == 8
    uniform float quads[3 * QROW];
#else
    uniform float cols[4][4 * (TRS_BLOCK + programCount)];
#endif
    for (uniform int jb = begin; jb < end; jb += TRS_BLOCK) {
        const uniform int je = min(jb + TRS_BLOCK, end);
        uniform int j0 = jb;
        // Whole gangs: the AoS inputs become SoA (load_trs4, load_trs3). Two gangs at a time: one gang's
        // build is a chain of about fifty cycles (the transposes, the division, the products), and with
        // the two interleaved the out-of-order window overlaps them (120 joints, AVX2: 3.52 to 3.40 ns
        // per joint; four at a time gave 3.38).
        for (; j0 + 2 * programCount <= je; j0 += 2 * programCount) {
            const varying TrsColumns m1 = gang_trs(q, t, s, j0);
            const varying TrsColumns m2 = gang_trs(q, t, s, j0 + programCount);
            store_locals(m1, j0 - jb);
            store_locals(m2, j0 + programCount - jb);
        }
        for (; j0 + programCount <= je; j0 += programCount)
            store_locals(gang_trs(q, t, s, j0), j0 - jb);
        // A partial last gang: the whole gang that ends at the block's end, where the skeleton has one
        // (the joints it shares with the gang before are computed again, to the same values, and those
        // before the block land in the scratch's front padding). Before, the joints were always copied
        // into a gang of identity transforms on the stack (scalar stores that the gang's vector loads
        // then waited on): CesiumMan's 22 joints, AVX2, local to model and palettes 267 to 241 ns.
        if (j0 < je && je >= programCount) {
            store_locals(gang_trs(q, t, s, je - programCount), je - programCount - jb);
        } else if (j0 < je) {
            // Fewer joints than a gang: they are copied into a full gang of identity transforms, so the
            // same shuffles apply. Masked loads with a varying index compile to gathers (about 80 in this
            // kernel on AVX-512 before).
            uniform float qs[4 * programCount], ts[3 * programCount], ss[3 * programCount];
            foreach (i = 0 ... programCount) {
                qs[4 * i] = 0.0f;
                qs[4 * i + 1] = 0.0f;
                qs[4 * i + 2] = 0.0f;
                qs[4 * i + 3] = 1.0f;
                ts[3 * i] = ts[3 * i + 1] = ts[3 * i + 2] = 0.0f;
                ss[3 * i] = ss[3 * i + 1] = ss[3 * i + 2] = 1.0f;
            }
            const uniform int left = je - j0;
            foreach (i = 0 ... 4 * left)
                qs[i] = q[4 * j0 + i];
            foreach (i = 0 ... 3 * left) {
                ts[i] = t[3 * j0 + i];
                ss[i] = s[3 * j0 + i];
            }
            store_locals(gang_trs(qs, ts, ss, 0), j0 - jb);
        }

        // Stepped pointers (and cursor, see local_cursor): indexed with 32-bit offsets, every joint
        // sign-extended them again, about six instructions of a joint's forty on AVX2.
        uniform float * uniform out = model + 16 * jb;
        uniform const int * uniform pp = parents + jb;
        local_cursor(l);
        for (uniform int j = jb; j < je; j++, out += 16, pp++, l += LOCAL_STEP) {
            const uniform int p = *pp;
            varying float a[4];
            load_parent(p < 0 ? root : model + 16 * p, a);
            varying float m[CHUNKS];
#pragma unroll
            for (uniform int ch = 0; ch < CHUNKS; ch++) {
                m[ch] = local_product(a, l, ch);
                out[ch * programCount + programIndex] = m[ch];
                if (W != 8 || entry_start != NULL)
                    acc[ch] += m[ch];
            }
            // AVX2 has 16 vector registers and this loop without the palettes needs them all: with one
            // sum per chunk a sum was spilled, and each joint's addition waited on the store of the joint
            // before (a chain through memory; 120 joints, Zen 4: 3.5 ns per joint without the sums, 5.1
            // with them). One sum of both chunks stays in a register, one addition per joint on its chain
            // (3.75 ns). The pass with the palettes keeps one per chunk, a little faster there (CesiumMan
            // and Fox, 2 to 4%).
#if W == 8
            if (entry_start == NULL)
                acc[0] += m[0] + m[1];
#endif
            if (entry_start != NULL) {
                const uniform int e_end = entry_start[j + 1];
                uniform int e = entry_start[j];
                if (e < e_end) {
                    varying float ma[CHUNKS][3], mt[CHUNKS];
                    model_rows(m, ma, mt);
                    for (; e < e_end; e++)
                        palette_rows(ma, mt, ib_rows + 12 * e, palettes[entries[2 * e]] + 16 * entries[2 * e + 1],
                                     pacc);
                }
            }
        }
    }
    return sum_finite(acc) && sum_finite(pacc);
}

export uniform bool EXPORT(ltm_joint_trs)(uniform const float t[], uniform const float q[],
                                          uniform const float s[], uniform float model[],
                                          uniform const int parents[], uniform int begin, uniform int end,
                                          uniform const float root[16])
{
    return ltm_trs(t, q, s, model, parents, begin, end, root, NULL, NULL, NULL, NULL);
}

// ltm_joint_trs with the palette plan (see ltm_trs); returns whether every model and palette element
// written is finite (or a false alarm, see sum_finite).
export uniform bool EXPORT(ltm_palette_trs)(uniform const float t[], uniform const float q[],
                                            uniform const float s[], uniform float model[],
                                            uniform const int parents[], uniform int begin, uniform int end,
                                            uniform const float root[16], uniform const int entry_start[],
                                            uniform const int entries[], uniform const float ib_rows[],
                                            uniform float * uniform palettes[])
{
    return ltm_trs(t, q, s, model, parents, begin, end, root, entry_start, entries, ib_rows, palettes);
}

#undef store_locals
#undef local_cursor
#undef LOCAL_STEP
#undef load_trs4
#undef load_trs3
#undef local_product

// ---------------------------------------------------------------------------------------------------
// 4. Crowds: many instances of one skeleton, lanes across instances.
//
// AoSoA blocks of CROWD_LANES instances (a fixed 16, one 64-byte line per element, whatever the gang width):
// element e of joint j of block-lane l is at block[(j * E + e) * CROWD_LANES + l], with E = 10 for TRS
// locals (t.xyz, q.xyzw, s.xyz) and E = 12 for model matrices (rows 0..2 of the affine 3x4, row-major).
// The parent of a joint is the same for every instance, so every load and store is a contiguous vector:
// no gathers, no scatters, and no power-of-two stride between instances (which costs L1 set conflicts).

#define CROWD_LANES 16

#define CROWD(m, E, j, e, l) m[((j) * (E) + (e)) * CROWD_LANES + (l)]

// One block: models of all `joints` joints for CROWD_LANES instances. roots holds the root transforms
// of the block's first root_count instances as column-major 4x4 (glam Mat4); lanes past root_count (the
// padding of a last, partial block, or all lanes when no roots are given) use the identity. Roots are
// read only for the root joints, so their gathers cost nothing measurable.
//
// Returns whether every model element written is finite, or a false alarm where the per-lane sums
// overflow (sum_finite; the job then scans), so that the job need not scan the models again.
export uniform bool EXPORT(crowd_ltm_trs)(uniform const float locals[], uniform float models[],
                                          uniform const float roots[], uniform int root_count,
                                          uniform const int parents[], uniform int joints)
{
    // One sum per gang of the block's lanes: CROWD_LANES / programCount == CHUNKS, sum_finite's count.
    varying float acc[CHUNKS];
#pragma unroll
    for (uniform int c = 0; c < CHUNKS; c++)
        acc[c] = 0.0f;
    for (uniform int j = 0; j < joints; j++) {
        const uniform int p = parents[j];
#pragma unroll
        for (uniform int c = 0; c < CROWD_LANES / programCount; c++) {
            const varying int l = c * programCount + programIndex;
            const varying float tx = CROWD(locals, 10, j, 0, l), ty = CROWD(locals, 10, j, 1, l),
                                tz = CROWD(locals, 10, j, 2, l);
            const varying float x = CROWD(locals, 10, j, 3, l), y = CROWD(locals, 10, j, 4, l),
                                z = CROWD(locals, 10, j, 5, l), w = CROWD(locals, 10, j, 6, l);
            const varying float sx = CROWD(locals, 10, j, 7, l), sy = CROWD(locals, 10, j, 8, l),
                                sz = CROWD(locals, 10, j, 9, l);
            const varying float s2 = rotation_scale(x, y, z, w);
            varying float L[12];
            L[0] = (1.0f - s2 * (y * y + z * z)) * sx;
            L[1] = s2 * (x * y - z * w) * sy;
            L[2] = s2 * (x * z + y * w) * sz;
            L[3] = tx;
            L[4] = s2 * (x * y + z * w) * sx;
            L[5] = (1.0f - s2 * (x * x + z * z)) * sy;
            L[6] = s2 * (y * z - x * w) * sz;
            L[7] = ty;
            L[8] = s2 * (x * z - y * w) * sx;
            L[9] = s2 * (y * z + x * w) * sy;
            L[10] = (1.0f - s2 * (x * x + y * y)) * sz;
            L[11] = tz;
            varying float P[12];
            if (p < 0) {
#pragma unroll
                for (uniform int e = 0; e < 12; e++) {
                    // Identity unless this lane has a root: element (row r, col c) = root[4c + r].
                    P[e] = (e % 4) == (e / 4) ? 1.0f : 0.0f;
                    if (l < root_count)
                        P[e] = roots[16 * l + 4 * (e % 4) + e / 4];
                }
            } else {
#pragma unroll
                for (uniform int e = 0; e < 12; e++)
                    P[e] = CROWD(models, 12, p, e, l);
            }
#pragma unroll
            for (uniform int r = 0; r < 3; r++) {
#pragma unroll
                for (uniform int col = 0; col < 4; col++) {
#ifdef ISK_DETERMINISTIC
                    // The reference's pairing (affine_mul): (p0 l0 + t) + (p1 l1 + p2 l2), t the parent's
                    // translation in column 3 and +0.0 elsewhere.
                    const varying float v = (P[4 * r] * L[col] + (col == 3 ? P[4 * r + 3] : 0.0f)) +
                                            (P[4 * r + 1] * L[4 + col] + P[4 * r + 2] * L[8 + col]);
#else
                    varying float v = P[4 * r] * L[col] + P[4 * r + 1] * L[4 + col] + P[4 * r + 2] * L[8 + col];
                    if (col == 3)
                        v += P[4 * r + 3];
#endif
                    CROWD(models, 12, j, 4 * r + col, l) = v;
                    acc[c] += v;
                }
            }
        }
    }
    return sum_finite(acc);
}

// ---------------------------------------------------------------------------------------------------
// 5. Skinning palettes (the entry's product: palette_entry, section 1).
//
// The joint table is 64-bit because it is the Rust API's own `&[usize]` (the crate's one index type),
// passed through without a conversion copy; the kernels are built for 64-bit targets only.
//
// Returns whether every palette element written is finite (or a false alarm, see sum_finite): a scan of
// the palette afterwards read it back while its stores drained (on CesiumMan's 19 entries, about a third
// of the palette stage on AVX2).
export uniform bool EXPORT(skin_palette)(uniform const float models[], uniform const float inverse_binds[],
                                         uniform const uint64 joints[], uniform int use_joints,
                                         uniform int count, uniform float palette[])
{
    varying float acc[CHUNKS];
#pragma unroll
    for (uniform int c = 0; c < CHUNKS; c++)
        acc[c] = 0.0f;
    for (uniform int i = 0; i < count; i++) {
        const uniform int m = use_joints != 0 ? (int)joints[i] : i;
        varying float a[4];
        load_parent(models + 16 * m, a);
        palette_entry(a, inverse_binds + 16 * i, palette + 16 * i, acc);
    }
    return sum_finite(acc);
}

// Crowd palettes: one AoSoA block of model matrices (section 4's layout) times the inverse bind
// matrices. Entry i of block lane l is model[joints[i]] (of lane l) * inverse_bind[i], written row-major
// to palettes[(l * count + i) * 16], so that each instance's palette is contiguous, as the skinning
// kernels read it. The lanes run across instances, as in crowd_ltm_trs, so the product is plain vector
// arithmetic with each inverse bind element broadcast. Each lane's entry leaves in whole-vector stores
// built in registers (store_rows_4x4), non-temporal where `stream` (a crowd's palettes that do not fit
// in cache: no read for ownership of lines about to be overwritten whole); storing each element lane by
// lane (16 scalar stores per entry) took most of the kernel (crowd of 10,000 rig instances, AVX2: see
// docs/RESULTS.md). Lanes at or past `lanes` (the padding of a partial last block) are not written.
// `palettes` must be 64-byte aligned (PaletteMatrix is).
//
// Returns whether every palette element written is finite, or a false alarm where the per-lane sums
// overflow (sum_finite; the job then scans).
export uniform bool EXPORT(crowd_palette)(uniform const float models[], uniform const float inverse_binds[],
                                          uniform const uint64 joints[], uniform int count, uniform int lanes,
                                          uniform float palettes[], uniform bool stream)
{
    // Per-lane sums of everything written (see sum_finite): a per-element finiteness test with the
    // live-lane mask cost more than the product itself.
    varying float acc[CROWD_LANES / programCount];
#pragma unroll
    for (uniform int c = 0; c < CROWD_LANES / programCount; c++)
        acc[c] = 0.0f;
    for (uniform int i = 0; i < count; i++) {
        const uniform int m = (int)joints[i];
        uniform const float * uniform ib = inverse_binds + 16 * i;
#pragma unroll
        for (uniform int c = 0; c < CROWD_LANES / programCount; c++) {
            const uniform int l0 = c * programCount;
            if (l0 >= lanes)
                break;
            // Every lane computes (lanes past `lanes` read the block's padding lanes, inside the
            // block, whatever they hold), and only lanes below `lanes` store or count in `finite`.
            varying float M[12];
#pragma unroll
            for (uniform int e = 0; e < 12; e++)
                M[e] = CROWD(models, 12, m, e, l0 + programIndex);
            varying float v[3][4];
#pragma unroll
            for (uniform int r = 0; r < 3; r++) {
#pragma unroll
                for (uniform int col = 0; col < 4; col++) {
                    // The model's implicit last row is (0, 0, 0, 1); the inverse bind is column-major.
#ifdef ISK_DETERMINISTIC
                    // The reference's pairing (affine_mul), the inverse bind taken as affine as there.
                    v[r][col] = (M[4 * r] * ib[4 * col] + (col == 3 ? M[4 * r + 3] : 0.0f)) +
                                (M[4 * r + 1] * ib[4 * col + 1] + M[4 * r + 2] * ib[4 * col + 2]);
#else
                    v[r][col] = M[4 * r] * ib[4 * col] + M[4 * r + 1] * ib[4 * col + 1] +
                                M[4 * r + 2] * ib[4 * col + 2] + M[4 * r + 3] * ib[4 * col + 3];
#endif
                    acc[c] += v[r][col];
                }
            }
            store_rows_4x4(v, palettes + (l0 * count + i) * 16, count * 16, lanes - l0, stream);
        }
    }
    if (stream)
        memory_barrier();
    varying bool finite = true;
#pragma unroll
    for (uniform int c = 0; c < CROWD_LANES / programCount; c++)
        if (c * programCount + programIndex < lanes)
            finite = finite && (intbits(acc[c]) & 0x7f800000) != 0x7f800000;
    return all(finite);
}
