// Blending of local TRS poses: N normal layers, a rest-pose fallback below a weight threshold, then
// additive layers on top (ozz-animation's BlendingJob semantics; src/reference/blend.rs is the serial
// twin and src/blending/mod.rs documents the rules).
//
// Layout: one gang of programCount joints at a time, with the layers in a uniform loop inside each gang.
// The inputs are AoS glam arrays (3 floats per translation and scale, 4 per quaternion), only 4-byte
// aligned, and the kernel keeps two layouts:
// - rotations run one joint per lane (SoA): the hemisphere test needs each joint's dot product, and the
//   normalizations and products mix a joint's components. A whole gang is transposed with load_aos4 on
//   the way in and store_aos4 on the way out (shuffle.isph; on AVX2 they avoid ISPC's cross-lane
//   permutes);
// - translations and scales stay in memory order ("flat"): a gang's 3 * programCount floats are three
//   contiguous vector loads, and every operation on them is per component, so no transpose is needed.
//   Where a joint's weight differs per joint (joint weights, the rest-pose fallback, the division by the
//   total), the lane weights are spread to the flat layout with one one-source shuffle per vector.
// On AVX2 the 3-component transposes were most of the shuffles, and the shuffle ports the bottleneck.
// A partial last gang loads with masked loads, padded with the identity, and stores with masked stores.
//
// Per joint, with w = layer weight * joint weight (1 without joint weights):
//   normal layers:  T += w t, S += w s, Q += w (dot(Q, q) < 0 ? -q : q), W += w
//   below threshold (W < threshold): the rest pose the same way with weight threshold - W; W = threshold
//   normalize:      r = 1 / W, t = T r, s = S r, q = Q / |Q| (the identity when Q is zero)
//   additive:       t += w dt, q = normalize(lerp(identity, dq', w)) * q with dq' = dq with w >= 0,
//                   s *= (1 - w) + w ds
// A layer whose weight is exactly 0 is not read.

#include "common.isph"
#include "shuffle.isph"

// One gang's translations or scales in memory order: component c of joint j0 + i is float 3 i + c, in
// vector (3 i + c) / programCount, lane (3 i + c) % programCount.
struct Flat3 {
    float v0, v1, v2;
};

struct Quat {
    float x, y, z, w;
};

// Joints j0 .. j0 + count of a Vec3 stream (count <= programCount); past count, every component is pad.
static inline varying Flat3 load_flat3(uniform const float * uniform p, uniform int j0, uniform int count,
                                       uniform float pad)
{
    uniform const float * uniform b = p + 3 * j0;
    // Plain varying locals, assigned whole: a struct member assigned under a varying `if` would keep the
    // struct on the stack, written with masked stores, in the whole-gang path as well.
    varying float v0, v1, v2;
    if (count == programCount) {
        v0 = b[programIndex];
        v1 = b[programCount + programIndex];
        v2 = b[2 * programCount + programIndex];
    } else {
        // Masked loads read only the floats of the count joints.
        v0 = v1 = v2 = pad;
        if (programIndex < 3 * count)
            v0 = b[programIndex];
        if (programCount + programIndex < 3 * count)
            v1 = b[programCount + programIndex];
        if (2 * programCount + programIndex < 3 * count)
            v2 = b[2 * programCount + programIndex];
    }
    varying Flat3 r;
    r.v0 = v0;
    r.v1 = v1;
    r.v2 = v2;
    return r;
}

static inline void store_flat3(uniform float * uniform p, uniform int j0, uniform int count, const varying Flat3 &v)
{
    uniform float * uniform b = p + 3 * j0;
    if (count == programCount) {
        b[programIndex] = v.v0;
        b[programCount + programIndex] = v.v1;
        b[2 * programCount + programIndex] = v.v2;
    } else {
        if (programIndex < 3 * count)
            b[programIndex] = v.v0;
        if (programCount + programIndex < 3 * count)
            b[programCount + programIndex] = v.v1;
        if (2 * programCount + programIndex < 3 * count)
            b[2 * programCount + programIndex] = v.v2;
    }
}

// A lane value per joint (one joint per lane) spread to the flat layout: each joint's value three times.
// The permutations are constants, so each vector is one one-source shuffle (vpermps on AVX2).
static inline varying Flat3 spread3(varying float w)
{
    varying Flat3 r;
    r.v0 = shuffle(w, programIndex / 3);
    r.v1 = shuffle(w, (programCount + programIndex) / 3);
    r.v2 = shuffle(w, (2 * programCount + programIndex) / 3);
    return r;
}

// acc + w p, component by component (w already flat).
static inline varying Flat3 madd3(const varying Flat3 &acc, const varying Flat3 &w, const varying Flat3 &p)
{
    varying Flat3 r;
    r.v0 = acc.v0 + w.v0 * p.v0;
    r.v1 = acc.v1 + w.v1 * p.v1;
    r.v2 = acc.v2 + w.v2 * p.v2;
    return r;
}

// acc + w p with one weight for every joint.
static inline varying Flat3 madd3u(const varying Flat3 &acc, uniform float w, const varying Flat3 &p)
{
    varying Flat3 r;
    r.v0 = acc.v0 + w * p.v0;
    r.v1 = acc.v1 + w * p.v1;
    r.v2 = acc.v2 + w * p.v2;
    return r;
}

static inline varying Flat3 mul3(const varying Flat3 &a, const varying Flat3 &b)
{
    varying Flat3 r;
    r.v0 = a.v0 * b.v0;
    r.v1 = a.v1 * b.v1;
    r.v2 = a.v2 * b.v2;
    return r;
}

// Per component, c > 0 ? a : b.
static inline varying Flat3 select3(const varying Flat3 &c, const varying Flat3 &a, const varying Flat3 &b)
{
    varying Flat3 r;
    r.v0 = c.v0 > 0.0f ? a.v0 : b.v0;
    r.v1 = c.v1 > 0.0f ? a.v1 : b.v1;
    r.v2 = c.v2 > 0.0f ? a.v2 : b.v2;
    return r;
}

// Joints j0 .. j0 + count of a quaternion stream, one joint per lane; past count, the identity.
static inline varying Quat load_quats(uniform const float * uniform q, uniform int j0, uniform int count)
{
    varying Quat r;
    if (count == programCount) {
        load_aos4(q + 4 * j0, r.x, r.y, r.z, r.w);
    } else {
        uniform float qs[4 * programCount];
        foreach (i = 0 ... 4 * programCount)
            qs[i] = (i & 3) == 3 ? 1.0f : 0.0f;
        foreach (i = 0 ... 4 * count)
            qs[i] = q[4 * j0 + i];
        load_aos4(qs, r.x, r.y, r.z, r.w);
    }
    return r;
}

static inline void store_quats(uniform float * uniform q, uniform int j0, uniform int count, const varying Quat &v)
{
    if (count == programCount) {
        store_aos4(v.x, v.y, v.z, v.w, q + 4 * j0);
    } else {
        uniform float qs[4 * programCount];
        store_aos4(v.x, v.y, v.z, v.w, qs);
        foreach (i = 0 ... 4 * count)
            q[4 * j0 + i] = qs[i];
    }
}

// The helpers below take and return values, not pointers or references to varying data they write:
// values stay in registers, while a varying struct written through a pointer stays on the stack.

// The weight of each lane's joint: `weight` times its joint weight when the layer has joint weights.
// A whole gang reads its joint weights with one plain load; only a partial gang masks the read.
static inline varying float lane_weight(uniform float weight, uniform const float * uniform jw, uniform int j0,
                                        uniform int count)
{
    if (jw == NULL)
        return weight;
    if (count == programCount)
        return weight * jw[j0 + programIndex];
    varying float j = 0.0f;
    if (programIndex < count)
        j = jw[j0 + programIndex];
    return weight * j;
}

// q + sw p (hemisphere-corrected weight sw), per lane.
static inline varying Quat madd_quat(const varying Quat &q, varying float sw, const varying Quat &p)
{
    varying Quat r;
    r.x = q.x + sw * p.x;
    r.y = q.y + sw * p.y;
    r.z = q.z + sw * p.z;
    r.w = q.w + sw * p.w;
    return r;
}

// The weight of the rotation: w, negated where p points away from the accumulated q.
static inline varying float hemisphere(const varying Quat &q, const varying Quat &p, varying float w)
{
    const varying float d = q.x * p.x + q.y * p.y + q.z * p.z + q.w * p.w;
    return d < 0.0f ? -w : w;
}

// q / |q|, or the identity for a zero quaternion. Selects, not a varying `if`: a varying `if` around
// assignments to struct members or through references makes ISPC keep the data in memory and store it
// under the execution mask, which AVX2 has only as vmaskmovps (slow on AMD, and a load that follows one
// cannot take its value from the store buffer).
static inline varying Quat normalize_quat(varying float x, varying float y, varying float z, varying float w)
{
    const varying float n = x * x + y * y + z * z + w * w;
    const varying bool nonzero = n > 0.0f;
    const varying float inv = 1.0f / sqrt(nonzero ? n : 1.0f);
    varying Quat r;
    r.x = nonzero ? x * inv : 0.0f;
    r.y = nonzero ? y * inv : 0.0f;
    r.z = nonzero ? z * inv : 0.0f;
    r.w = nonzero ? w * inv : 1.0f;
    return r;
}

// The delta rotation d on the w >= 0 side, nlerped from the identity by w, times q (Hamilton product:
// the delta is applied after, outside, the blended rotation).
static inline varying Quat add_rotation(const varying Quat &q, const varying Quat &d, varying float w)
{
    const varying float sign = d.w < 0.0f ? -1.0f : 1.0f;
    const varying Quat i = normalize_quat(sign * d.x * w, sign * d.y * w, sign * d.z * w, (sign * d.w - 1.0f) * w + 1.0f);
    varying Quat r;
    r.w = i.w * q.w - i.x * q.x - i.y * q.y - i.z * q.z;
    r.x = i.w * q.x + i.x * q.w + i.y * q.z - i.z * q.y;
    r.y = i.w * q.y - i.x * q.z + i.y * q.w + i.z * q.x;
    r.z = i.w * q.z + i.x * q.y - i.y * q.x + i.z * q.w;
    return r;
}

// Blends joints j0 .. j0 + count (count <= programCount) of blend_trs's arrays. It is inlined twice:
// with count = programCount for the whole gangs, where every test of count folds away (no partial-gang
// code or masks in the hot loop), and once with the remainder.
static inline void blend_gang(uniform const float * uniform const t[], uniform const float * uniform const q[],
                              uniform const float * uniform const s[], uniform const float * uniform const jw[],
                              uniform const float weights[], uniform int layers, uniform int additive,
                              uniform const float rt[], uniform const float rq[], uniform const float rs[],
                              uniform float threshold, uniform float ot[], uniform float oq[], uniform float os[],
                              uniform int j0, uniform int count)
{
    varying Flat3 st, ss;
    st.v0 = st.v1 = st.v2 = 0.0f;
    ss.v0 = ss.v1 = ss.v2 = 0.0f;
    varying Quat sq;
    sq.x = sq.y = sq.z = sq.w = 0.0f;
    varying float total = 0.0f;
    // Two passes over the layers, rotations then translations and scales, each in layer order: one
    // pass holding all eleven sums and the loaded layer ran out of AVX2's sixteen vector registers
    // and spilled on every layer (llvm-mca put the store pipe beside the shuffle pipe).
    for (uniform int l = 0; l < layers; l++) {
        const uniform float weight = weights[l];
        if (weight == 0.0f)
            continue;
        const varying float w = lane_weight(weight, jw[l], j0, count);
        const varying Quat lq = load_quats(q[l], j0, count);
        sq = madd_quat(sq, hemisphere(sq, lq, w), lq);
        total += w;
    }
    for (uniform int l = 0; l < layers; l++) {
        const uniform float weight = weights[l];
        if (weight == 0.0f)
            continue;
        const varying Flat3 lt = load_flat3(t[l], j0, count, 0.0f);
        const varying Flat3 ls = load_flat3(s[l], j0, count, 1.0f);
        if (jw[l] == NULL) {
            // One weight for every joint: the flat sums need no spread weights.
            st = madd3u(st, weight, lt);
            ss = madd3u(ss, weight, ls);
        } else {
            const varying Flat3 fw = spread3(lane_weight(weight, jw[l], j0, count));
            st = madd3(st, fw, lt);
            ss = madd3(ss, fw, ls);
        }
    }
    const varying bool below = total < threshold;
    if (any(below)) {
        // The rest pose's weight is threshold - total > 0 where below, 0 elsewhere; the sums take the
        // rest pose only where below (selects, so a joint above the threshold never reads it).
        const varying float rw = below ? threshold - total : 0.0f;
        const varying Flat3 frw = spread3(rw);
        st = select3(frw, madd3(st, frw, load_flat3(rt, j0, count, 0.0f)), st);
        ss = select3(frw, madd3(ss, frw, load_flat3(rs, j0, count, 1.0f)), ss);
        const varying Quat r = load_quats(rq, j0, count);
        const varying Quat withr = madd_quat(sq, hemisphere(sq, r, rw), r);
        sq.x = below ? withr.x : sq.x;
        sq.y = below ? withr.y : sq.y;
        sq.z = below ? withr.z : sq.z;
        sq.w = below ? withr.w : sq.w;
        total = below ? threshold : total;
    }
    const varying Flat3 inv = spread3(1.0f / total);
    varying Flat3 out_t = mul3(st, inv);
    varying Flat3 out_s = mul3(ss, inv);
    varying Quat out_q = normalize_quat(sq.x, sq.y, sq.z, sq.w);
    for (uniform int a = layers; a < layers + additive; a++) {
        const uniform float weight = weights[a];
        if (weight == 0.0f)
            continue;
        const varying float w = lane_weight(weight, jw[a], j0, count);
        const varying Flat3 fw = spread3(w);
        out_t = madd3(out_t, fw, load_flat3(t[a], j0, count, 0.0f));
        // s *= (1 - w) + w ds
        const varying Flat3 ds = load_flat3(s[a], j0, count, 1.0f);
        varying Flat3 f;
        f.v0 = (1.0f - fw.v0) + fw.v0 * ds.v0;
        f.v1 = (1.0f - fw.v1) + fw.v1 * ds.v1;
        f.v2 = (1.0f - fw.v2) + fw.v2 * ds.v2;
        out_s = mul3(out_s, f);
        out_q = add_rotation(out_q, load_quats(q[a], j0, count), w);
    }
    store_flat3(ot, j0, count, out_t);
    store_quats(oq, j0, count, out_q);
    store_flat3(os, j0, count, out_s);
}

// Blends joints [0, n). Layer l (0 <= l < layers + additive) is the pose (t[l], q[l], s[l]) with weight
// weights[l] and joint weights jw[l] (NULL: 1 for every joint); the first `layers` are normal layers, the
// others additive. The rest pose (rt, rq, rs) is the fallback below `threshold` (> 0). Every array holds n
// joints; the outputs may not alias the inputs.
export void EXPORT(blend_trs)(uniform const float * uniform const t[], uniform const float * uniform const q[],
                              uniform const float * uniform const s[], uniform const float * uniform const jw[],
                              uniform const float weights[], uniform int layers, uniform int additive,
                              uniform const float rt[], uniform const float rq[], uniform const float rs[],
                              uniform float threshold, uniform float ot[], uniform float oq[], uniform float os[],
                              uniform int n)
{
    uniform int j0 = 0;
    for (; j0 + programCount <= n; j0 += programCount)
        blend_gang(t, q, s, jw, weights, layers, additive, rt, rq, rs, threshold, ot, oq, os, j0, programCount);
    if (j0 < n)
        blend_gang(t, q, s, jw, weights, layers, additive, rt, rq, rs, threshold, ot, oq, os, j0, n - j0);
}
