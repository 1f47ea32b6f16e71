// Sampling a clip's tracks (src/animation/): for one character the lanes across tracks, one track per
// lane; for a crowd (at the end) the lanes across instances.
//
// Rust locates the sample time on each of the clip's timelines first (a cursor per timeline, see
// src/animation/curve.rs) and passes, per timeline: the key k, the fraction u between key k and k + 1,
// the interval t[k + 1] - t[k], and whether the value is held at key k (at or outside a key, where no
// interpolation happens). The kernels then interpolate many tracks at once: the single-pose kernel with
// the lanes across one group's tracks, the crowd kernel with the lanes across instances.
//
// The arithmetic is src/animation/curve.rs's: step holds key k; linear is (1 - u) a + u b, slerp for
// rotations; cubic is glTF's Hermite spline with tangents scaled by the interval, rotations normalized.
// Two differences: slerp's weights are Eberly's polynomial, not acos and sin (see slerp_weights), and fused
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
#include "shuffle.isph"

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

// slerp's weights sin((1 - u) theta) / sin(theta) (wa, for key k) and sin(u theta) / sin(theta) (wb),
// theta = acos(d), d >= 0 the keys' dot product, as polynomials in d (D. Eberly, "A fast and accurate
// algorithm for computing SLERP", 2011): eight nested multiply-adds per weight instead of acos, three
// sines and a division, with a relative error near 1e-7 for d in [0, 1] (measured against the reference
// in tests/isa_parity/sample.rs). At d = 1 the weights are 1 - u and u: a plain lerp.
static inline void slerp_weights(float u, float d, varying float &wa, varying float &wb)
{
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
    wa = wv * cv;
    wb = wu * cu;
}

// The single-pose form: every translation, rotation and scale track of a clip in one call, as groups.
// A group is every track of one property on one timeline with one interpolation, by increasing level
// (src/layout/pose_tracks.rs builds them). Its values are stored key-major and transposed: slot s
// (cubic: 0 in-tangent, 1 value, 2 out-tangent; else only 0) of key k, component c, track j at
// off + ((k * V + s) * C + c) * n + j. So the lanes, across the group's tracks, share one key, one
// fraction and one interpolation (no divergence) and read each key with contiguous loads; a gang's
// outputs go out as one contiguous AoS run (store_aos3, store_aos4) where the group's levels are
// consecutive, else through a gang-wide buffer, joint by joint.
//
// groups: POSE_GROUP_INTS ints per group: timeline, interpolation, property (0 translation, 1
// rotation, 2 scale), n, the index of its first track in levels, off, and its first level when its
// levels are consecutive, else -1. Checked by the Rust side before every call: every group's values
// lie inside values for its timeline's key count, its levels inside levels and each below the joints
// of every output, every timeline inside the located arrays, and every located key is readable (key
// k + 1 too unless held).
#define POSE_GROUP_INTS 7

// The coefficients c0 .. c8 of slerp's weight polynomial in x = d - 1 for one weight w (u or 1 - u):
// Eberly's b_i = (w^2 / (i (2i + 1)) - i / (2i + 1)), b_8 scaled by 1.90110745351730037, c_0 = 1 and
// c_i = c_{i-1} b_i.
static inline void slerp_coefficients(uniform float w, uniform float c[9])
{
    uniform float s = w * w;
    c[0] = 1.0f;
    c[1] = c[0] * (1.0f / (1.0f * 3.0f) * s - 1.0f / 3.0f);
    c[2] = c[1] * (1.0f / (2.0f * 5.0f) * s - 2.0f / 5.0f);
    c[3] = c[2] * (1.0f / (3.0f * 7.0f) * s - 3.0f / 7.0f);
    c[4] = c[3] * (1.0f / (4.0f * 9.0f) * s - 4.0f / 9.0f);
    c[5] = c[4] * (1.0f / (5.0f * 11.0f) * s - 5.0f / 11.0f);
    c[6] = c[5] * (1.0f / (6.0f * 13.0f) * s - 6.0f / 13.0f);
    c[7] = c[6] * (1.0f / (7.0f * 15.0f) * s - 7.0f / 15.0f);
    c[8] = c[7] * (1.90110745351730037f / (8.0f * 17.0f) * s - 1.90110745351730037f * 8.0f / 17.0f);
}

// c0 + c1 x + ... + c8 x^8 in Estrin's form, given x^2 and x^4.
static inline float estrin8(uniform const float c[9], float x, float x2, float x4)
{
    float p01 = c[0] + c[1] * x;
    float p23 = c[2] + c[3] * x;
    float p45 = c[4] + c[5] * x;
    float p67 = c[6] + c[7] * x;
    float q0 = p01 + p23 * x2;
    float q1 = p45 + p67 * x2;
    return q0 + (q1 + c[8] * x4) * x4;
}

// Lane j's rotation of a group at key k: held (or step) keys as stored, cubic ones normalized; linear is
// slerp (slerp_weights), cubic the Hermite spline, both normalized.
static inline void quat_group(uniform const float values[], uniform int ip, uniform int off, uniform int n,
                              uniform int k, uniform float u, uniform float dt, uniform bool hold,
                              uniform const float cu_c[9], uniform const float cv_c[9], varying int j,
                              varying float &x, varying float &y, varying float &z, varying float &w)
{
    uniform int cubic = ip == CUBIC ? 1 : 0;
    uniform int a = off + (k * (1 + 2 * cubic) + cubic) * 4 * n;
    x = values[a + j];
    y = values[a + n + j];
    z = values[a + 2 * n + j];
    w = values[a + 3 * n + j];
    if (hold) {
        if (cubic)
            unit(x, y, z, w);
    } else if (ip == LINEAR) {
        uniform int b = off + (k + 1) * 4 * n;
        float bx = values[b + j], by = values[b + n + j], bz = values[b + 2 * n + j],
              bw = values[b + 3 * n + j];
        float d = x * bx + y * by + z * bz + w * bw;
        if (d < 0.0f) {
            d = -d;
            bx = -bx;
            by = -by;
            bz = -bz;
            bw = -bw;
        }
        // Eberly's polynomial weights, as in slerp_weights: its nested form 1 + b1 x (1 + b2 x (1 + ...)),
        // x = d - 1, is the polynomial 1 + c1 x + ... + c8 x^8 with c_i = b1 ... b_i. The b_i depend on
        // u alone, uniform over the group, so the c_i are computed once (slerp_coefficients) and the
        // lanes evaluate the polynomial in Estrin's form: four multiply-adds deep instead of eight
        // (a rotation group's gang was latency bound on that chain).
        float dm1 = min(d, 1.0f) - 1.0f;
        uniform float wu = u, wv = 1.0f - u;
        float x2 = dm1 * dm1;
        float x4 = x2 * x2;
        float cu = estrin8(cu_c, dm1, x2, x4);
        float cv = estrin8(cv_c, dm1, x2, x4);
        float wa = wv * cv, wb = wu * cu;
        x = x * wa + bx * wb;
        y = y * wa + by * wb;
        z = z * wa + bz * wb;
        w = w * wa + bw * wb;
        unit(x, y, z, w);
    } else {
        // Key k's out-tangent (slot 2) and key k + 1's in-tangent (slot 0) and value (slot 1).
        uniform int o = off + (k * 3 + 2) * 4 * n;
        uniform int i1 = off + (k + 1) * 3 * 4 * n;
        uniform int v1 = i1 + 4 * n;
        uniform float u2 = u * u;
        uniform float u3 = u2 * u;
        uniform float h00 = 2.0f * u3 - 3.0f * u2 + 1.0f;
        uniform float h10 = (u3 - 2.0f * u2 + u) * dt;
        uniform float h01 = -2.0f * u3 + 3.0f * u2;
        uniform float h11 = (u3 - u2) * dt;
        x = h00 * x + h10 * values[o + j] + h01 * values[v1 + j] + h11 * values[i1 + j];
        y = h00 * y + h10 * values[o + n + j] + h01 * values[v1 + n + j] + h11 * values[i1 + n + j];
        z = h00 * z + h10 * values[o + 2 * n + j] + h01 * values[v1 + 2 * n + j] + h11 * values[i1 + 2 * n + j];
        w = h00 * w + h10 * values[o + 3 * n + j] + h01 * values[v1 + 3 * n + j] + h11 * values[i1 + 3 * n + j];
        unit(x, y, z, w);
    }
}

// Lane j's translation or scale of a group at key k, as quat_group.
static inline void vec3_group(uniform const float values[], uniform int ip, uniform int off, uniform int n,
                              uniform int k, uniform float u, uniform float dt, uniform bool hold,
                              varying int j, varying float &x, varying float &y, varying float &z)
{
    uniform int cubic = ip == CUBIC ? 1 : 0;
    uniform int a = off + (k * (1 + 2 * cubic) + cubic) * 3 * n;
    x = values[a + j];
    y = values[a + n + j];
    z = values[a + 2 * n + j];
    if (hold) {
        // Key k as stored.
    } else if (ip == LINEAR) {
        uniform int b = off + (k + 1) * 3 * n;
        uniform float m = 1.0f - u;
        x = x * m + values[b + j] * u;
        y = y * m + values[b + n + j] * u;
        z = z * m + values[b + 2 * n + j] * u;
    } else {
        uniform int o = off + (k * 3 + 2) * 3 * n;
        uniform int i1 = off + (k + 1) * 3 * 3 * n;
        uniform int v1 = i1 + 3 * n;
        uniform float u2 = u * u;
        uniform float u3 = u2 * u;
        uniform float h00 = 2.0f * u3 - 3.0f * u2 + 1.0f;
        uniform float h10 = (u3 - 2.0f * u2 + u) * dt;
        uniform float h01 = -2.0f * u3 + 3.0f * u2;
        uniform float h11 = (u3 - u2) * dt;
        x = h00 * x + h10 * values[o + j] + h01 * values[v1 + j] + h11 * values[i1 + j];
        y = h00 * y + h10 * values[o + n + j] + h01 * values[v1 + n + j] + h11 * values[i1 + n + j];
        z = h00 * z + h10 * values[o + 2 * n + j] + h01 * values[v1 + 2 * n + j] + h11 * values[i1 + 2 * n + j];
    }
}

// A gang of a group's tracks j0 .. j0 + programCount - 1 (every lane active, each j a track of the
// group), rotations into out (the joint of track j at out[4 * lev[j]], lev the group's levels,
// consecutive from l0 when l0 >= 0): for a whole gang with store_aos4, directly or through a buffer;
// for a gang past the end of a group smaller than a gang, lane by lane, the lanes past its end reading
// on into the next rows, the next group or the values' padding (POSE_READ_PAD, src/layout/
// pose_tracks.rs) with the same contiguous loads as a whole gang, and neither storing nor counting in
// `finite`. Every lane computes from real, finite floats: a masked tail leaves the inactive lanes'
// registers undefined, and denormal garbage there costs microcode assists (measured: a group of 19
// rotations took 5x as long as its 16 full lanes); clamping those lanes to the last track instead made
// every load a gather (run S3 in docs/RESULTS.md: up to a quarter of the sampling time on an Intel
// Xeon).
static inline void quat_gang(uniform const float values[], uniform int ip, uniform int off, uniform int n,
                             uniform int k, uniform float u, uniform float dt, uniform bool hold,
                             uniform const float cu_c[9], uniform const float cv_c[9], uniform int j0,
                             uniform const int lev[], uniform int l0, uniform float out[],
                             varying bool &finite)
{
    float x, y, z, w;
    if (j0 + programCount <= n) {
        quat_group(values, ip, off, n, k, u, dt, hold, cu_c, cv_c, j0 + programIndex, x, y, z, w);
        if (l0 >= 0) {
            store_aos4(x, y, z, w, out + 4 * (l0 + j0));
        } else {
            uniform float tmp[4 * programCount];
            store_aos4(x, y, z, w, tmp);
            for (uniform int i = 0; i < programCount; i++) {
                uniform float *uniform o = out + 4 * lev[j0 + i];
                o[0] = tmp[4 * i];
                o[1] = tmp[4 * i + 1];
                o[2] = tmp[4 * i + 2];
                o[3] = tmp[4 * i + 3];
            }
        }
    } else {
        int j = j0 + programIndex;
        quat_group(values, ip, off, n, k, u, dt, hold, cu_c, cv_c, j, x, y, z, w);
        if (j < n) {
            int o = 4 * lev[j];
            out[o] = x;
            out[o + 1] = y;
            out[o + 2] = z;
            out[o + 3] = w;
            finite = finite && abs(x) + abs(y) + abs(z) + abs(w) < floatbits(0x7f800000);
        }
        return;
    }
    finite = finite && abs(x) + abs(y) + abs(z) + abs(w) < floatbits(0x7f800000);
}

// Translations or scales, as quat_gang.
static inline void vec3_gang(uniform const float values[], uniform int ip, uniform int off, uniform int n,
                             uniform int k, uniform float u, uniform float dt, uniform bool hold,
                             uniform int j0, uniform const int lev[], uniform int l0, uniform float out[],
                             varying bool &finite)
{
    float x, y, z;
    if (j0 + programCount <= n) {
        vec3_group(values, ip, off, n, k, u, dt, hold, j0 + programIndex, x, y, z);
        if (l0 >= 0) {
            store_aos3(x, y, z, out + 3 * (l0 + j0));
        } else {
            uniform float tmp[3 * programCount];
            store_aos3(x, y, z, tmp);
            for (uniform int i = 0; i < programCount; i++) {
                uniform float *uniform o = out + 3 * lev[j0 + i];
                o[0] = tmp[3 * i];
                o[1] = tmp[3 * i + 1];
                o[2] = tmp[3 * i + 2];
            }
        }
    } else {
        int j = j0 + programIndex;
        vec3_group(values, ip, off, n, k, u, dt, hold, j, x, y, z);
        if (j < n) {
            int o = 3 * lev[j];
            out[o] = x;
            out[o + 1] = y;
            out[o + 2] = z;
            finite = finite && abs(x) < floatbits(0x7f800000) && abs(y) < floatbits(0x7f800000) &&
                     abs(z) < floatbits(0x7f800000);
        }
        return;
    }
    finite = finite && abs(x) < floatbits(0x7f800000) && abs(y) < floatbits(0x7f800000) &&
             abs(z) < floatbits(0x7f800000);
}

export uniform bool EXPORT(sample_pose)(uniform const float values[], uniform const int groups[],
                                        uniform int group_count, uniform const int levels[],
                                        uniform const int key[], uniform const float frac[],
                                        uniform const float span[], uniform const int held[],
                                        uniform float translations[], uniform float rotations[],
                                        uniform float scales[])
{
    // Whether every value written is finite: NaN and the infinities fail `abs(v) < inf`.
    varying bool finite = true;
    for (uniform int g = 0; g < group_count; g++) {
        uniform const int *uniform G = groups + g * POSE_GROUP_INTS;
        uniform int tl = G[0];
        uniform int ip = G[1];
        uniform int prop = G[2];
        uniform int n = G[3];
        uniform const int *uniform lev = levels + G[4];
        uniform int off = G[5];
        uniform int l0 = G[6];
        uniform int k = key[tl];
        uniform float u = frac[tl];
        uniform float dt = span[tl];
        uniform bool hold = held[tl] != 0 || ip == STEP || (ip == LINEAR && u == 0.0f);
        // Whole gangs, then the rest: a last whole gang that overlaps the one before it (its tracks
        // computed again give the same bits), or, in a group smaller than a gang, one gang lane by lane.
        uniform int full = n - n % programCount;
        uniform int last = n < programCount ? 0 : n - programCount;
        if (prop == 1) {
            // Slerp's weight coefficients, for a linear group between two keys (the only one that
            // reads them).
            uniform float cu_c[9], cv_c[9];
            if (ip == LINEAR && !hold) {
                slerp_coefficients(u, cu_c);
                slerp_coefficients(1.0f - u, cv_c);
            }
            for (uniform int j0 = 0; j0 < full; j0 += programCount)
                quat_gang(values, ip, off, n, k, u, dt, hold, cu_c, cv_c, j0, lev, l0, rotations, finite);
            if (full < n)
                quat_gang(values, ip, off, n, k, u, dt, hold, cu_c, cv_c, last, lev, l0, rotations, finite);
        } else {
            uniform float *uniform out = prop == 0 ? translations : scales;
            for (uniform int j0 = 0; j0 < full; j0 += programCount)
                vec3_gang(values, ip, off, n, k, u, dt, hold, j0, lev, l0, out, finite);
            if (full < n)
                vec3_gang(values, ip, off, n, k, u, dt, hold, last, lev, l0, out, finite);
        }
    }
    return all(finite);
}

// The crowd form: the lanes across instances, one clip. Instances first .. first + count of a crowd pose
// (AoSoA blocks of 16 instances: element e of level j of instance i at ((i / 16 * joints + j) * 10 + e)
// * 16 + i % 16, src/local_to_model/crowd.rs) play the same clip, each at its own time; run r = i - first
// finds its located key on timeline tl at tl * count + r. The tracks of every property come merged,
// sorted by kind (rotation or not, then interpolation), and a gang of instances runs every track before
// the next gang, while its block of the output (joints * 640 bytes) and the clip's values stay in
// cache. Checked by the Rust side before every call: every track's keys, and CROWD_READ_PAD floats after
// them (src/layout/tracks.rs), lie inside values, every level below joints, every element 0, 3 or 7,
// every timeline's located entries inside the arrays, and every written element inside out.
//
// The gangs follow the blocks (a gang is lanes c * programCount .. of one block), so each element's
// store is one contiguous vector store (masked where the run starts or ends inside the gang) and, in a
// whole gang, each located key a contiguous load; walking the run's instances in gang-sized steps from `first` instead
// made every store a scatter (16 scalar stores per element on AVX2) once the run was not aligned.
//
// Returns whether every element written is finite, or a false alarm where the per-lane sums overflow
// (the Rust side then scans).

// The Hermite basis at u, the tangents' two scaled by the interval dt (glTF's cubic spline).
static inline void hermite(float u, float dt, varying float h[4])
{
    float u2 = u * u;
    float u3 = u2 * u;
    h[0] = 2.0f * u3 - 3.0f * u2 + 1.0f;
    h[1] = (u3 - 2.0f * u2 + u) * dt;
    h[2] = -2.0f * u3 + 3.0f * u2;
    h[3] = (u3 - u2) * dt;
}

// q / |q|, or the identity for a zero or non-finite length, without branches (unit's arithmetic).
static inline void unit_select(varying float q[4])
{
    float len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    bool ok = len > 0.0f && len < floatbits(0x7f800000);
    float r = 1.0f / len;
    q[0] = select(ok, q[0] * r, 0.0f);
    q[1] = select(ok, q[1] * r, 0.0f);
    q[2] = select(ok, q[2] * r, 0.0f);
    q[3] = select(ok, q[3] * r, 1.0f);
}

// Each lane's rotation of one track, lane i's key k's value at src + lane[i]: step keys and held keys as
// stored (linear holds at u = 0 too), cubic held keys normalized; linear is slerp (slerp_weights) and
// cubic the Hermite spline, both normalized. Control flow is uniform: every lane interpolates its keys as
// loaded (a held lane's "key k + 1" may be the next track's floats or the padding) and a held lane then
// takes key k.
static inline void crowd_quat(uniform const float *uniform src, uniform const int lane[], uniform int ip,
                              float u, float dt, bool held, varying float q[4])
{
    varying float c[8];
    columns8(src, lane, 0, c);
    if (ip == STEP) {
        for (uniform int i = 0; i < 4; i++)
            q[i] = c[i];
    } else if (ip == LINEAR) {
        bool hold = held || u == 0.0f;
        float d = c[0] * c[4] + c[1] * c[5] + c[2] * c[6] + c[3] * c[7];
        float b[4];
        for (uniform int i = 0; i < 4; i++)
            b[i] = select(d < 0.0f, -c[4 + i], c[4 + i]);
        float wa, wb;
        slerp_weights(u, abs(d), wa, wb);
        for (uniform int i = 0; i < 4; i++)
            q[i] = c[i] * wa + b[i] * wb;
        unit_select(q);
        for (uniform int i = 0; i < 4; i++)
            q[i] = select(hold, c[i], q[i]);
    } else {
        // Key k's value and out-tangent (c), key k + 1's in-tangent and value (e).
        varying float e[8], h[4];
        columns8(src + 8, lane, 0, e);
        hermite(u, dt, h);
        for (uniform int i = 0; i < 4; i++)
            q[i] = select(held, c[i], h[0] * c[i] + h[1] * c[4 + i] + h[2] * e[4 + i] + h[3] * e[i]);
        unit_select(q);
    }
}

// Each lane's translation or scale of one track, as crowd_quat: (1 - u) a + u b for linear, without
// normalizing.
static inline void crowd_vec3(uniform const float *uniform src, uniform const int lane[], uniform int ip,
                              float u, float dt, bool held, varying float v[3])
{
    varying float c[8];
    columns8(src, lane, 0, c);
    if (ip == STEP) {
        for (uniform int i = 0; i < 3; i++)
            v[i] = c[i];
    } else if (ip == LINEAR) {
        bool hold = held || u == 0.0f;
        float a = 1.0f - u;
        for (uniform int i = 0; i < 3; i++)
            v[i] = select(hold, c[i], c[i] * a + c[3 + i] * u);
    } else {
        // Key k's value (c[0..3]) and out-tangent (c[3..6]); key k + 1's in-tangent (c[6..8], e[0])
        // and value (e[1..4]).
        varying float e[8], h[4];
        columns8(src + 8, lane, 0, e);
        hermite(u, dt, h);
        const varying float in1[3] = {c[6], c[7], e[0]};
        for (uniform int i = 0; i < 3; i++)
            v[i] = select(held, c[i], h[0] * c[i] + h[1] * c[3 + i] + h[2] * e[1 + i] + h[3] * in1[i]);
    }
}

// How many tracks ahead crowd_run prefetches each lane's keys (2, 4 and 8 measured alike on Zen 4 AVX2,
// 0.3 to 0.6 ns per joint faster than none at 10,000 instances of the 67-joint rig).
#define PREFETCH_TRACKS 4

// Tracks t0 .. t1 of one kind (a rotation or not, interpolation ip, both constant where inlined) for one
// gang of instances: lanes r (the run indices, r0 + programIndex in a whole gang), storing where valid.
// The located key is loaded once per timeline change (the tracks of a run usually share one).
static inline void crowd_run(uniform const float values[], uniform const int level[],
                             uniform const int timeline[], uniform const int offset[],
                             uniform const int element[], uniform int t0, uniform int t1,
                             uniform const bool rotation, uniform const int ip, uniform int count,
                             uniform int r0, uniform const bool whole, varying int r, varying bool valid,
                             uniform const int key[], uniform const float frac[],
                             uniform const float span[], uniform const int held[],
                             uniform float *uniform gang_out, varying float &acc)
{
    const uniform int n = rotation ? 4 : 3;
    const uniform int stride = ip == CUBIC ? 3 * n : n;
    uniform int tl = -1;
    varying int base = 0;
    varying float u = 0.0f, dt = 0.0f;
    varying bool hold = false;
    uniform int lane[W];
    for (uniform int t = t0; t < t1; t++) {
        if (timeline[t] != tl) {
            tl = timeline[t];
            const uniform int l0 = tl * count;
            varying int k, hd;
            if (whole) {
                k = key[l0 + r0 + programIndex];
                u = frac[l0 + r0 + programIndex];
                dt = span[l0 + r0 + programIndex];
                hd = held[l0 + r0 + programIndex];
            } else {
                k = key[l0 + r];
                u = frac[l0 + r];
                dt = span[l0 + r];
                hd = held[l0 + r];
            }
            hold = hd != 0;
            // Key k's value (past the in-tangent for cubic), from the track's first float.
            base = (ip == CUBIC ? n : 0) + k * stride;
            for (uniform int i = 0; i < W; i++)
                lane[i] = extract(base, i);
        }
        uniform float *uniform o = gang_out + ((level[t] * 10 + element[t]) << 4);
        varying float v[4];
        // The keys a few tracks ahead (on the same timeline, so each lane's offset stays inside that
        // track): each lane's keys of a track are a new cache line, which the hardware prefetchers
        // cannot guess (every lane at its own key).
        if (t + PREFETCH_TRACKS < t1 && timeline[t + PREFETCH_TRACKS] == tl) {
            uniform const float *uniform ahead = values + offset[t + PREFETCH_TRACKS];
            for (uniform int i = 0; i < W; i++)
                prefetch_l1(ahead + lane[i]);
        }
        if (rotation)
            crowd_quat(values + offset[t], lane, ip, u, dt, hold, v);
        else
            crowd_vec3(values + offset[t], lane, ip, u, dt, hold, v);
        if (!rotation)
            v[3] = 0.0f;
        if (whole) {
            for (uniform int i = 0; i < n; i++)
                o[16 * i + programIndex] = v[i];
        } else if (valid) {
            for (uniform int i = 0; i < n; i++)
                o[16 * i + programIndex] = v[i];
        }
        acc += (v[0] + v[1]) + (v[2] + v[3]);
    }
}

// One gang of instances of a block (run indices r0 + programIndex, r0 the gang's first) through every
// track, a run of tracks of one kind at a time (CrowdTracks sorts them by kind), each run's loop
// compiled for its kind: inlined once for a whole gang (contiguous loads and plain stores) and once for
// a gang the run starts or ends inside, whose lanes outside the run read the nearest instance's located
// key (so every lane's reads stay valid) and store nothing.
static inline void crowd_gang(uniform const float values[], uniform const int level[],
                              uniform const int interp[], uniform const int timeline[],
                              uniform const int offset[], uniform const int element[], uniform int tracks,
                              uniform int count, uniform int r0, uniform const bool whole,
                              uniform const int key[], uniform const float frac[],
                              uniform const float span[], uniform const int held[],
                              uniform float *uniform gang_out, varying float &acc)
{
    const varying int r = whole ? r0 + programIndex : clamp(r0 + programIndex, 0, count - 1);
    const varying bool valid = r == r0 + programIndex;
    uniform int t0 = 0;
    while (t0 < tracks) {
        const uniform int ip = interp[t0];
        const uniform bool rotation = element[t0] == 3;
        uniform int t1 = t0 + 1;
        while (t1 < tracks && interp[t1] == ip && (element[t1] == 3) == rotation)
            t1++;
#define CROWD_RUN(ROT, IP) \
    crowd_run(values, level, timeline, offset, element, t0, t1, ROT, IP, count, r0, whole, r, valid, key, \
              frac, span, held, gang_out, acc)
        if (rotation) {
            if (ip == LINEAR)
                CROWD_RUN(true, LINEAR);
            else if (ip == CUBIC)
                CROWD_RUN(true, CUBIC);
            else
                CROWD_RUN(true, STEP);
        } else {
            if (ip == LINEAR)
                CROWD_RUN(false, LINEAR);
            else if (ip == CUBIC)
                CROWD_RUN(false, CUBIC);
            else
                CROWD_RUN(false, STEP);
        }
#undef CROWD_RUN
        t0 = t1;
    }
}

export uniform bool EXPORT(sample_crowd_tracks)(
    uniform const float values[], uniform const int level[], uniform const int interp[],
    uniform const int timeline[], uniform const int offset[], uniform const int element[],
    uniform int tracks, uniform int first, uniform int count, uniform const int key[],
    uniform const float frac[], uniform const float span[], uniform const int held[],
    uniform int joints, uniform float out[])
{
    varying float acc = 0.0f;
    if (count <= 0)
        return true;
    const uniform int end = first + count;
    for (uniform int b = first >> 4; b <= (end - 1) >> 4; b++) {
        uniform float *uniform block = out + ((b * joints * 10) << 4);
        for (uniform int c = 0; c < 16 / programCount; c++) {
            // Run index of the gang's lane 0 (negative where the run starts inside the gang).
            const uniform int r0 = (b << 4) + c * programCount - first;
            uniform float *uniform gang_out = block + c * programCount;
            if (r0 >= 0 && r0 + programCount <= count)
                crowd_gang(values, level, interp, timeline, offset, element, tracks, count, r0, true, key,
                           frac, span, held, gang_out, acc);
            else if (r0 < count && r0 + programCount > 0)
                crowd_gang(values, level, interp, timeline, offset, element, tracks, count, r0, false, key,
                           frac, span, held, gang_out, acc);
        }
    }
    return !any((intbits(acc) & 0x7f800000) == 0x7f800000);
}
