// Sampling a clip's tracks (src/animation/): for one character the lanes across tracks, one track per
// lane; for a crowd (at the end) the lanes across instances.
//
// Rust locates the sample time on each of the clip's timelines first (a cursor per timeline, see
// src/animation/curve.rs) and passes, per timeline: the key k, the fraction u between key k and k + 1,
// the interval t[k + 1] - t[k], and whether the value is held at key k (at or outside a key, where no
// interpolation happens). The kernels then interpolate every track of one property at once: each lane
// gathers its track's two keys from the clip's one value array and writes its joint's output.
//
// The arithmetic is src/animation/curve.rs's: step holds key k; linear is (1 - u) a + u b, slerp for
// rotations; cubic is glTF's Hermite spline with tangents scaled by the interval, rotations normalized.
// Two differences: slerp's weights are Eberly's polynomial, not acos and sin (see quat_value), and fused
// multiply-adds round once; results differ from the reference in the last bits (tests/isa_parity
// documents the tolerance).
//
// Each kernel returns whether every value it wrote is finite (a rotation is unit or the identity, so its
// sum of magnitudes cannot overflow; a translation or scale is tested per component).
//
// Per track: level (output joint), interpolation (0 step, 1 linear, 2 cubic), timeline, and the offset of
// its first float in values. Checked by the Rust side before every call: every track's keys lie inside
// values, every level inside the output, every timeline inside the located arrays.

#include "common.isph"

#define STEP 0
#define LINEAR 1
#define CUBIC 2

// q / |q|, or the identity for a zero or non-finite length (src/animation/curve.rs: unit).
static inline void unit(varying float &x, varying float &y, varying float &z, varying float &w)
{
    float len = sqrt(x * x + y * y + z * z + w * w);
    if (len > 0.0f && len < floatbits(0x7f800000)) {
        float r = 1.0f / len;
        x *= r;
        y *= r;
        z *= r;
        w *= r;
    } else {
        x = 0.0f;
        y = 0.0f;
        z = 0.0f;
        w = 1.0f;
    }
}

// One lane's rotation: track interpolation ip, its key k's first float at `at` (past the in-tangent for
// cubic), key stride, fraction u, interval dt, and whether key k is held.
static inline void quat_value(uniform const float values[], int ip, int at, int stride, float u, float dt,
                              bool held, varying float &x, varying float &y, varying float &z,
                              varying float &w)
{
    bool cubic = ip == CUBIC;
    x = values[at];
    y = values[at + 1];
    z = values[at + 2];
    w = values[at + 3];
    bool hold = held || ip == STEP || (ip == LINEAR && u == 0.0f);
    if (hold) {
        if (cubic)
            unit(x, y, z, w);
    } else if (ip == LINEAR) {
        int bt = at + 4;
        float bx = values[bt], by = values[bt + 1], bz = values[bt + 2], bw = values[bt + 3];
        float d = x * bx + y * by + z * bz + w * bw;
        if (d < 0.0f) {
            d = -d;
            bx = -bx;
            by = -by;
            bz = -bz;
            bw = -bw;
        }
        // slerp's weights sin((1 - u) theta) / sin(theta) and sin(u theta) / sin(theta), theta = acos(d),
        // as polynomials in d (D. Eberly, "A fast and accurate algorithm for computing SLERP", 2011):
        // eight nested multiply-adds per weight instead of acos, three sines and a division, with a
        // relative error near 1e-7 for d in [0, 1] (measured against the reference in
        // tests/isa_parity/sample.rs). At d = 1 the weights are 1 - u and u: a plain lerp.
        float dm1 = min(d, 1.0f) - 1.0f;
        float wu = u, wv = 1.0f - u;
        float su = wu * wu, sv = wv * wv;
        float cu = 1.0f, cv = 1.0f;
        cu = 1.0f + (1.90110745351730037f / (8.0f * 17.0f) * su - 1.90110745351730037f * 8.0f / 17.0f) * dm1 * cu;
        cv = 1.0f + (1.90110745351730037f / (8.0f * 17.0f) * sv - 1.90110745351730037f * 8.0f / 17.0f) * dm1 * cv;
        cu = 1.0f + (1.0f / (7.0f * 15.0f) * su - 7.0f / 15.0f) * dm1 * cu;
        cv = 1.0f + (1.0f / (7.0f * 15.0f) * sv - 7.0f / 15.0f) * dm1 * cv;
        cu = 1.0f + (1.0f / (6.0f * 13.0f) * su - 6.0f / 13.0f) * dm1 * cu;
        cv = 1.0f + (1.0f / (6.0f * 13.0f) * sv - 6.0f / 13.0f) * dm1 * cv;
        cu = 1.0f + (1.0f / (5.0f * 11.0f) * su - 5.0f / 11.0f) * dm1 * cu;
        cv = 1.0f + (1.0f / (5.0f * 11.0f) * sv - 5.0f / 11.0f) * dm1 * cv;
        cu = 1.0f + (1.0f / (4.0f * 9.0f) * su - 4.0f / 9.0f) * dm1 * cu;
        cv = 1.0f + (1.0f / (4.0f * 9.0f) * sv - 4.0f / 9.0f) * dm1 * cv;
        cu = 1.0f + (1.0f / (3.0f * 7.0f) * su - 3.0f / 7.0f) * dm1 * cu;
        cv = 1.0f + (1.0f / (3.0f * 7.0f) * sv - 3.0f / 7.0f) * dm1 * cv;
        cu = 1.0f + (1.0f / (2.0f * 5.0f) * su - 2.0f / 5.0f) * dm1 * cu;
        cv = 1.0f + (1.0f / (2.0f * 5.0f) * sv - 2.0f / 5.0f) * dm1 * cv;
        cu = 1.0f + (1.0f / (1.0f * 3.0f) * su - 1.0f / 3.0f) * dm1 * cu;
        cv = 1.0f + (1.0f / (1.0f * 3.0f) * sv - 1.0f / 3.0f) * dm1 * cv;
        float wa = wv * cv, wb = wu * cu;
        x = x * wa + bx * wb;
        y = y * wa + by * wb;
        z = z * wa + bz * wb;
        w = w * wa + bw * wb;
        unit(x, y, z, w);
    } else {
        // Key k's value (at) and out-tangent (at + 4); key k + 1's in-tangent and value.
        int next = at - 4 + stride;
        float u2 = u * u;
        float u3 = u2 * u;
        float h00 = 2.0f * u3 - 3.0f * u2 + 1.0f;
        float h10 = (u3 - 2.0f * u2 + u) * dt;
        float h01 = -2.0f * u3 + 3.0f * u2;
        float h11 = (u3 - u2) * dt;
        x = h00 * x + h10 * values[at + 4] + h01 * values[next + 4] + h11 * values[next];
        y = h00 * y + h10 * values[at + 5] + h01 * values[next + 5] + h11 * values[next + 1];
        z = h00 * z + h10 * values[at + 6] + h01 * values[next + 6] + h11 * values[next + 2];
        w = h00 * w + h10 * values[at + 7] + h01 * values[next + 7] + h11 * values[next + 3];
        unit(x, y, z, w);
    }
}

// One lane's translation or scale, as quat_value.
static inline void vec3_value(uniform const float values[], int ip, int at, int stride, float u, float dt,
                              bool held, varying float &x, varying float &y, varying float &z)
{
    x = values[at];
    y = values[at + 1];
    z = values[at + 2];
    bool hold = held || ip == STEP || (ip == LINEAR && u == 0.0f);
    if (hold) {
        // Key k as stored.
    } else if (ip == LINEAR) {
        int bt = at + 3;
        float a = 1.0f - u;
        x = x * a + values[bt] * u;
        y = y * a + values[bt + 1] * u;
        z = z * a + values[bt + 2] * u;
    } else {
        int next = at - 3 + stride;
        float u2 = u * u;
        float u3 = u2 * u;
        float h00 = 2.0f * u3 - 3.0f * u2 + 1.0f;
        float h10 = (u3 - 2.0f * u2 + u) * dt;
        float h01 = -2.0f * u3 + 3.0f * u2;
        float h11 = (u3 - u2) * dt;
        x = h00 * x + h10 * values[at + 3] + h01 * values[next + 3] + h11 * values[next];
        y = h00 * y + h10 * values[at + 4] + h01 * values[next + 4] + h11 * values[next + 1];
        z = h00 * z + h10 * values[at + 5] + h01 * values[next + 5] + h11 * values[next + 2];
    }
}

export uniform bool EXPORT(sample_quat_tracks)(uniform const float values[], uniform const int level[],
                                       uniform const int interp[], uniform const int timeline[],
                                       uniform const int offset[], uniform int tracks,
                                       uniform const int key[], uniform const float frac[],
                                       uniform const float span[], uniform const int held[],
                                       uniform float out[])
{
    // Whether every value written is finite: NaN and the infinities fail `abs(v) < inf`.
    varying bool finite = true;
    foreach (i = 0 ... tracks) {
        int tl = timeline[i];
        int ip = interp[i];
        int stride = ip == CUBIC ? 12 : 4;
        int at = offset[i] + key[tl] * stride + (ip == CUBIC ? 4 : 0);
        float x, y, z, w;
        quat_value(values, ip, at, stride, frac[tl], span[tl], held[tl] != 0, x, y, z, w);
        int o = 4 * level[i];
        out[o] = x;
        out[o + 1] = y;
        out[o + 2] = z;
        out[o + 3] = w;
        finite = finite && abs(x) + abs(y) + abs(z) + abs(w) < floatbits(0x7f800000);
    }
    return all(finite);
}

export uniform bool EXPORT(sample_vec3_tracks)(uniform const float values[], uniform const int level[],
                                       uniform const int interp[], uniform const int timeline[],
                                       uniform const int offset[], uniform int tracks,
                                       uniform const int key[], uniform const float frac[],
                                       uniform const float span[], uniform const int held[],
                                       uniform float out[])
{
    // Whether every value written is finite: NaN and the infinities fail `abs(v) < inf`.
    varying bool finite = true;
    foreach (i = 0 ... tracks) {
        int tl = timeline[i];
        int ip = interp[i];
        int stride = ip == CUBIC ? 9 : 3;
        int at = offset[i] + key[tl] * stride + (ip == CUBIC ? 3 : 0);
        float x, y, z;
        vec3_value(values, ip, at, stride, frac[tl], span[tl], held[tl] != 0, x, y, z);
        int o = 3 * level[i];
        out[o] = x;
        out[o + 1] = y;
        out[o + 2] = z;
        finite = finite && abs(x) < floatbits(0x7f800000) && abs(y) < floatbits(0x7f800000) &&
                 abs(z) < floatbits(0x7f800000);
    }
    return all(finite);
}

// The crowd form: the lanes across instances, one clip. Instances first .. first + count of a crowd pose
// (AoSoA blocks of 16 instances: element e of level j of instance i at ((i / 16 * joints + j) * 10 + e)
// * 16 + i % 16, src/local_to_model/crowd.rs) play the same clip, each at its own time; run r = i - first
// finds its located key on timeline tl at tl * count + r. The tracks of every property come merged,
// ordered by joint then element (0 translation, 3 rotation, 7 scale), and a gang of instances runs every
// track before the next gang: the gang's blocks are written forward, once, while the clip's values stay
// in cache. Checked by the Rust side before every call: every track's keys lie inside values, every level
// below joints, every element 0, 3 or 7, every timeline's located entries inside the arrays, and every
// written element inside out.
export uniform bool EXPORT(sample_crowd_tracks)(
    uniform const float values[], uniform const int level[], uniform const int interp[],
    uniform const int timeline[], uniform const int offset[], uniform const int element[],
    uniform int tracks, uniform int first, uniform int count, uniform const int key[],
    uniform const float frac[], uniform const float span[], uniform const int held[],
    uniform int joints, uniform float out[])
{
    varying bool finite = true;
    foreach (r = 0 ... count) {
        int i = first + r;
        int block = ((i >> 4) * joints * 10 << 4) + (i & 15);
        for (uniform int t = 0; t < tracks; t++) {
            uniform int ip = interp[t];
            uniform int e = element[t];
            int l = timeline[t] * count + r;
            int o = block + ((level[t] * 10 + e) << 4);
            if (e == 3) {
                uniform int stride = ip == CUBIC ? 12 : 4;
                uniform int base = offset[t] + (ip == CUBIC ? 4 : 0);
                float x, y, z, w;
                quat_value(values, ip, base + key[l] * stride, stride, frac[l], span[l], held[l] != 0,
                           x, y, z, w);
                out[o] = x;
                out[o + 16] = y;
                out[o + 32] = z;
                out[o + 48] = w;
                finite = finite && abs(x) + abs(y) + abs(z) + abs(w) < floatbits(0x7f800000);
            } else {
                uniform int stride = ip == CUBIC ? 9 : 3;
                uniform int base = offset[t] + (ip == CUBIC ? 3 : 0);
                float x, y, z;
                vec3_value(values, ip, base + key[l] * stride, stride, frac[l], span[l], held[l] != 0,
                           x, y, z);
                out[o] = x;
                out[o + 16] = y;
                out[o + 32] = z;
                finite = finite && abs(x) < floatbits(0x7f800000) && abs(y) < floatbits(0x7f800000) &&
                         abs(z) < floatbits(0x7f800000);
            }
        }
    }
    return all(finite);
}
