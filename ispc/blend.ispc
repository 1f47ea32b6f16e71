// Blending of local TRS poses: N normal layers, a rest-pose fallback below a weight threshold, then
// additive layers on top (ozz-animation's BlendingJob semantics; src/reference/blend.rs is the serial
// twin and src/blending/mod.rs documents the rules).
//
// Layout: the lanes run across joints, one gang of programCount joints at a time, and the layers are a
// uniform loop inside each gang, so every layer's joint weight, hemisphere test and accumulation is plain
// vector arithmetic. The inputs are AoS glam arrays (3 floats per translation and scale, 4 per quaternion)
// and only 4-byte aligned: a whole gang is transposed with aos_to_soa3/4 (unaligned loads and shuffles), a
// partial last gang is first copied into a padded stack buffer of identity transforms.
//
// Per joint, with w = layer weight * joint weight (1 without joint weights):
//   normal layers:  T += w t, S += w s, Q += w (dot(Q, q) < 0 ? -q : q), W += w
//   below threshold (W < threshold): the rest pose the same way with weight threshold - W; W = threshold
//   normalize:      t = T / W, s = S / W, q = Q / |Q| (the identity when Q is zero)
//   additive:       t += w dt, q = normalize(lerp(identity, dq', w)) * q with dq' = dq with w >= 0,
//                   s *= (1 - w) + w ds
// A layer whose weight is exactly 0 is not read.

#include "common.isph"

struct Pose {
    float tx, ty, tz;
    float qx, qy, qz, qw;
    float sx, sy, sz;
};

// Joints j0 .. j0 + count of one pose (count <= programCount), one joint per lane; lanes past count get
// the identity transform.
static inline varying Pose load_gang(uniform const float * uniform t, uniform const float * uniform q,
                                     uniform const float * uniform s, uniform int j0, uniform int count)
{
    varying Pose p;
    if (count == programCount) {
        // The standard library declares aos_to_soa's source without const although it only reads it.
        aos_to_soa3((uniform float * uniform)(t + 3 * j0), &p.tx, &p.ty, &p.tz);
        aos_to_soa4((uniform float * uniform)(q + 4 * j0), &p.qx, &p.qy, &p.qz, &p.qw);
        aos_to_soa3((uniform float * uniform)(s + 3 * j0), &p.sx, &p.sy, &p.sz);
    } else {
        uniform float ts[3 * programCount], qs[4 * programCount], ss[3 * programCount];
        foreach (i = 0 ... 3 * programCount) {
            ts[i] = 0.0f;
            ss[i] = 1.0f;
        }
        foreach (i = 0 ... 4 * programCount)
            qs[i] = (i & 3) == 3 ? 1.0f : 0.0f;
        foreach (i = 0 ... 3 * count) {
            ts[i] = t[3 * j0 + i];
            ss[i] = s[3 * j0 + i];
        }
        foreach (i = 0 ... 4 * count)
            qs[i] = q[4 * j0 + i];
        aos_to_soa3(ts, &p.tx, &p.ty, &p.tz);
        aos_to_soa4(qs, &p.qx, &p.qy, &p.qz, &p.qw);
        aos_to_soa3(ss, &p.sx, &p.sy, &p.sz);
    }
    return p;
}

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

// The per-lane choice of a or b. Selects, not a varying `if`, so that the execution mask stays all on:
// a varying `if` around assignments to a struct makes ISPC keep the struct in memory and write it with
// masked stores, which AVX2 has only as vmaskmovps (slow on AMD, and a load that follows one cannot take
// its value from the store buffer).
static inline varying Pose select_pose(varying bool c, const varying Pose &a, const varying Pose &b)
{
    varying Pose r;
    r.tx = c ? a.tx : b.tx;
    r.ty = c ? a.ty : b.ty;
    r.tz = c ? a.tz : b.tz;
    r.qx = c ? a.qx : b.qx;
    r.qy = c ? a.qy : b.qy;
    r.qz = c ? a.qz : b.qz;
    r.qw = c ? a.qw : b.qw;
    r.sx = c ? a.sx : b.sx;
    r.sy = c ? a.sy : b.sy;
    r.sz = c ? a.sz : b.sz;
    return r;
}

// acc + w * p, with p's quaternion negated where it points away from the accumulated one. The helpers
// take and return values (not pointers or references to varying data): values stay in registers, while
// a varying struct written through a pointer stays on the stack.
static inline varying Pose accumulate(const varying Pose &acc, const varying Pose &p, varying float w)
{
    varying Pose r;
    r.tx = acc.tx + w * p.tx;
    r.ty = acc.ty + w * p.ty;
    r.tz = acc.tz + w * p.tz;
    const varying float d = acc.qx * p.qx + acc.qy * p.qy + acc.qz * p.qz + acc.qw * p.qw;
    const varying float sw = d < 0.0f ? -w : w;
    r.qx = acc.qx + sw * p.qx;
    r.qy = acc.qy + sw * p.qy;
    r.qz = acc.qz + sw * p.qz;
    r.qw = acc.qw + sw * p.qw;
    r.sx = acc.sx + w * p.sx;
    r.sy = acc.sy + w * p.sy;
    r.sz = acc.sz + w * p.sz;
    return r;
}

struct Quat {
    float x, y, z, w;
};

// q / |q|, or the identity for a zero quaternion (selects, for the reason select_pose gives).
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

// out with one additive layer's deltas d applied with weight w.
static inline varying Pose add_delta(const varying Pose &out, const varying Pose &d, varying float w)
{
    varying Pose r;
    r.tx = out.tx + w * d.tx;
    r.ty = out.ty + w * d.ty;
    r.tz = out.tz + w * d.tz;
    // The delta on the w >= 0 side, then nlerp from the identity by w.
    const varying float sign = d.qw < 0.0f ? -1.0f : 1.0f;
    const varying Quat i = normalize_quat(sign * d.qx * w, sign * d.qy * w, sign * d.qz * w,
                                          (sign * d.qw - 1.0f) * w + 1.0f);
    // q = i * q (Hamilton product): the delta is applied after (outside) the blended rotation.
    r.qw = i.w * out.qw - i.x * out.qx - i.y * out.qy - i.z * out.qz;
    r.qx = i.w * out.qx + i.x * out.qw + i.y * out.qz - i.z * out.qy;
    r.qy = i.w * out.qy - i.x * out.qz + i.y * out.qw + i.z * out.qx;
    r.qz = i.w * out.qz + i.x * out.qy - i.y * out.qx + i.z * out.qw;
    const varying float one_minus = 1.0f - w;
    r.sx = out.sx * (one_minus + w * d.sx);
    r.sy = out.sy * (one_minus + w * d.sy);
    r.sz = out.sz * (one_minus + w * d.sz);
    return r;
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
    for (uniform int j0 = 0; j0 < n; j0 += programCount) {
        const uniform int count = min((uniform int)programCount, n - j0);
        varying Pose acc;
        acc.tx = acc.ty = acc.tz = 0.0f;
        acc.qx = acc.qy = acc.qz = acc.qw = 0.0f;
        acc.sx = acc.sy = acc.sz = 0.0f;
        varying float total = 0.0f;
        for (uniform int l = 0; l < layers; l++) {
            if (weights[l] == 0.0f)
                continue;
            const varying float w = lane_weight(weights[l], jw[l], j0, count);
            const varying Pose p = load_gang(t[l], q[l], s[l], j0, count);
            acc = accumulate(acc, p, w);
            total += w;
        }
        const varying bool below = total < threshold;
        if (any(below)) {
            const varying Pose r = load_gang(rt, rq, rs, j0, count);
            acc = select_pose(below, accumulate(acc, r, threshold - total), acc);
            total = below ? threshold : total;
        }
        const varying Quat nq = normalize_quat(acc.qx, acc.qy, acc.qz, acc.qw);
        varying Pose out;
        out.tx = acc.tx / total;
        out.ty = acc.ty / total;
        out.tz = acc.tz / total;
        out.qx = nq.x;
        out.qy = nq.y;
        out.qz = nq.z;
        out.qw = nq.w;
        out.sx = acc.sx / total;
        out.sy = acc.sy / total;
        out.sz = acc.sz / total;
        for (uniform int a = layers; a < layers + additive; a++) {
            if (weights[a] == 0.0f)
                continue;
            const varying float w = lane_weight(weights[a], jw[a], j0, count);
            const varying Pose d = load_gang(t[a], q[a], s[a], j0, count);
            out = add_delta(out, d, w);
        }
        if (count == programCount) {
            soa_to_aos3(out.tx, out.ty, out.tz, ot + 3 * j0);
            soa_to_aos4(out.qx, out.qy, out.qz, out.qw, oq + 4 * j0);
            soa_to_aos3(out.sx, out.sy, out.sz, os + 3 * j0);
        } else {
            uniform float ts[3 * programCount], qs[4 * programCount], ss[3 * programCount];
            soa_to_aos3(out.tx, out.ty, out.tz, ts);
            soa_to_aos4(out.qx, out.qy, out.qz, out.qw, qs);
            soa_to_aos3(out.sx, out.sy, out.sz, ss);
            foreach (i = 0 ... 3 * count) {
                ot[3 * j0 + i] = ts[i];
                os[3 * j0 + i] = ss[i];
            }
            foreach (i = 0 ... 4 * count)
                oq[4 * j0 + i] = qs[i];
        }
    }
}
