// Sampling a compact clip (src/animation/compact/): every translation, rotation and scale track of one
// character at one time, the lanes across a group's tracks. `compact_sample` decodes the clip's bit
// stream in place; `compact_decode` decodes one frame into a buffer that a context keeps (its stored
// components in lane order, then each animated rotation's rebuilt component), and `compact_interpolate`
// samples between two such frames, so that playing on decodes one frame per new frame reached, not two
// per call.
//
// Only in the deterministic library (compiled with --opt=disable-fma): the kernel computes the serial
// decoder's operations (src/animation/compact/decode.rs and bits.rs) in its order, each lane one track's
// own chain, so it gives the serial decoder's bits on every ISA, in both precisions (a code is read
// in place, with the same product: see `unit`). A group's last few tracks past its whole gangs run as
// uniform (scalar) chains of the same operations: the functions below are templates over the float
// and int types, varying for a gang, uniform for one track.
//
// Rust finds the two frames a time falls between (frames.rs, in f64) and passes, for each, the frame
// record's first byte in `stream` (records are whole bytes), the first entry of its segment's row in
// `segments`, and the fraction `alpha` of the way from the first to the second.
//
// The tables (src/layout/compact.rs, checked when built) hold each animated component in lane order: a
// group of n tracks stores its C components c-major (entry base + c * n + j for track j), with the
// component's first bit in a frame record, its mask in place ((1 << bits) - 1) << (offset % 8) (0
// for a component of 0 bits, which decodes to its segment's minimum), 2^-(offset % 8) / (2^bits - 1)
// (0 for 0 bits), and its range's minimum and extent; and per segment and component the segment range
// m | e << 8 in 255ths of the range. Each group is [kind, n, base, first track, first level]: kinds 0,
// 1, 2 animated translations, rotations (C 3: the fourth component rebuilt) and scales; 3, 4, 5
// constant ones, whose values (rotations normalized) lie c-major in `constants` from base; and the
// group's first level when its levels are consecutive (its outputs one contiguous run, stored a whole
// gang at a time), else -1. Per track: its level-order joint and flags (bit 0 step, bits 1-2 a
// rotation's rebuilt component).

#include "common.isph"
#include "shuffle.isph"

#define ANIMATED_TRANSLATIONS 0
#define ANIMATED_ROTATIONS 1
#define ANIMATED_SCALES 2
#define CONSTANT_TRANSLATIONS 3
#define CONSTANT_ROTATIONS 4
#define CONSTANT_SCALES 5

// A component's code is read in place: the little-endian 32 bits from the byte that holds its first
// bit hold all of it (at most 24 bits from bit 7 of that byte), at bit s = offset % 8 of them. The
// tables give its mask there, ((1 << bits) - 1) << s, and 2^-s / (2^bits - 1), so that one AND, one
// conversion and one product give bits.rs's q * inv: the code taken in place is q * 2^s (below 2^31,
// an int32 whose conversion is one instruction and exact, at most 24 significant bits), and both
// scalings by powers of two are exact, so the one rounded product is q * inv's, bit for bit. No lane
// shifts its code by its bit within a byte; SSE4 (4 lanes) shifts nothing per lane at all, since it
// has no instruction for a shift by a per-lane count.
#if defined(ISPC_TARGET_SSE4) && TARGET_WIDTH == 4
// The code at bit `offset` of `rec` (mask in place `mask`, scale `inv`) for each lane, where the lanes'
// codes lie side by side from lane 0's (a record holds them in lane order: each code starts where the
// one before it ends; src/layout/compact.rs checks it), and lane 0 is on. All four lanes' bytes lie
// within 16 bytes of lane 0's (lane 3's code starts at most 7 + 3 * 24 bits past lane 0's byte, so
// its 4 bytes are among the first 13; the stream is padded for the load: STREAM_READ_PAD): one 16-byte load
// and one byte permute (pshufb) give every lane its 32 bits, where a per-lane load cost four address
// extractions, loads and inserts.
static inline float unit(uniform const uint8 *uniform rec, int offset, int mask, float inv)
{
    const uniform int first = extract(offset, 0) >> 3;
    uniform const uint8 *uniform from = rec + first;
    // Assembled byte by byte, which LLVM makes one unaligned load (a vector load would claim an
    // alignment it does not have).
    uniform int8<16> bytes;
    for (uniform int i = 0; i < 16; i++) {
        bytes[i] = (uniform int8)from[i];
    }
    // Lane i's indices, bytes 4i .. 4i + 3: its code's byte b (below 10) and the three after it (the
    // same for both frames of a pair: the compiler computes them once). An inactive lane's may be any
    // bytes: pshufb reads only the 16 loaded, and that lane's word is dropped.
    const int b = (offset >> 3) - first;
    uniform int32 control[4];
    unmasked {
        control[programIndex] = b * 0x01010101 + 0x03020100;
    }
    uniform int8<16> picks;
    uniform const int8 *uniform c = (uniform const int8 *uniform)&control[0];
    for (uniform int i = 0; i < 16; i++) {
        picks[i] = c[i];
    }
    const uniform int8<16> words = @llvm.x86.ssse3.pshuf.b.128(bytes, picks);
    uniform int8 out[16];
    for (uniform int i = 0; i < 16; i++) {
        out[i] = words[i];
    }
    const unsigned int32 word = ((uniform const unsigned int32 *uniform)&out[0])[programIndex];
    return (float)(int32)(word & (unsigned int32)mask) * inv;
}
#else
// (SSE4's wider gangs, which the packaged kernels do not use, take this read too, slowly: SSE4 has
// neither the permute nor the shift, and ISPC makes both lane by lane.)
// The stream's padding (STREAM_READ_PAD, src/layout/compact.rs) holds a gang of at most 16 words.
#if TARGET_WIDTH > 16
#error "the compact stream is padded for gangs of at most 16 lanes"
#endif
// The code at bit `offset` of `rec` (mask in place `mask`, scale `inv`) for each lane, where the lanes'
// codes lie side by side from lane 0's (a record holds them in lane order: each code starts where the
// one before it ends; src/layout/compact.rs checks it), and lane 0 is on. The gang's words are loaded
// at once from the word that holds lane 0's first bit: at most 31 + programCount * 24 bits from it, so
// within programCount words (the stream is padded for the load: STREAM_READ_PAD). Each lane then
// takes the two words its code's 32 bits may span by a permute, not a gather.
static inline float unit(uniform const uint8 *uniform rec, int offset, int mask, float inv)
{
    const uniform int first = extract(offset, 0) & ~31;
    uniform const int32 *uniform from = (uniform const int32 *uniform)(rec + (first >> 3));
    int32 words;
    unmasked {
        words = from[programIndex];
    }
    const int rel = offset - first;
    const int d = rel >> 5;
    // The code's byte within the word, in bits (a per-lane shift, but by a multiple of 8: first is a
    // multiple of 8, so the code lies at bit offset % 8 of the 32 bits from that byte).
    const int s = rel & 24;
    // Masked to the gang (an active lane's d is below programCount already; an inactive lane's may not
    // be, and its value is dropped).
    const unsigned int32 lo = (unsigned int32)shuffle(words, d & (programCount - 1));
    const unsigned int32 hi = (unsigned int32)shuffle(words, (d + 1) & (programCount - 1));
    // The next word's bits above lo's, shifted by 32 - s in two steps (none where s is 0). Where the
    // code ends in lo (always in the last word), what hi adds lies above the mask.
    const unsigned int32 word = (lo >> s) | ((hi << 1) << (31 - s));
    return (float)(int32)(word & (unsigned int32)mask) * inv;
}
#endif

// The same for one track's code, its 32 bits assembled from four byte loads (a scalar 4-byte load
// from a byte address would claim an alignment it does not have).
static inline uniform float unit(uniform const uint8 *uniform rec, uniform int offset, uniform int mask,
                                 uniform float inv)
{
    uniform const uint8 *uniform p = rec + (offset >> 3);
    const uniform unsigned int32 word = (uniform unsigned int32)p[0] | ((uniform unsigned int32)p[1] << 8) |
                                        ((uniform unsigned int32)p[2] << 16) |
                                        ((uniform unsigned int32)p[3] << 24);
    return (uniform float)(uniform int32)(word & (uniform unsigned int32)mask) * inv;
}

// bits.rs: Range::segment of the range (mn, ex) and the segment's m | e << 8: its minimum and extent.
template <typename F, typename I>
static inline void segment(F mn, F ex, I seg, F &smin, F &sext)
{
    const uniform float inv255 = floatbits(0x3b808081); // the f32 nearest 1 / 255
    smin = mn + ex * ((F)(seg & 255) * inv255);
    sext = ex * ((F)(seg >> 8) * inv255);
}

// bits.rs: Range::decode of code q in the segment range (smin, sext), given q * inv. A component of
// 0 bits has mask 0 and inv 0 (its code reads as 0, and 0 * 0 is 0), so it needs no select.
static inline float decode(float scaled, float smin, float sext) { return smin + sext * scaled; }
static inline uniform float decode(uniform float scaled, uniform float smin, uniform float sext)
{
    return smin + sext * scaled;
}

// decode.rs: interpolate for a translation or scale component (selects, not branches, on the lane's
// step flag).
template <typename F, typename I>
static inline F mix(F a, F b, uniform float alpha, I step)
{
    const F held = alpha >= 1.0f ? b : a;
    const F lerp = alpha <= 0.0f ? a : a + (b - a) * alpha;
    return step != 0 ? held : lerp;
}

// What every frame's decoding shares.
struct Frames {
    uniform const uint8 *uniform rec0;
    uniform const uint8 *uniform rec1;
    uniform int seg0, seg1;
    uniform float alpha;
    uniform const int *uniform offsets;
    uniform const int *uniform masks;
    uniform const float *uniform invs;
    uniform const float *uniform mins;
    uniform const float *uniform extents;
    uniform const uint16 *uniform segments;
    // Decoded frames (compact_interpolate), or NULL to decode from the records (compact_sample); in a
    // decoded frame, track j of the animated rotation group whose first track is `first` has its
    // rebuilt component at `components + first + j`.
    uniform const float *uniform d0;
    uniform const float *uniform d1;
    uniform int components;
};

// decode.rs: rotation_of's rebuilt component, sqrt(1 - a^2 - b^2 - c^2), 0 where the kept ones are a
// little longer than 1.
template <typename F> static inline F rebuilt(F a, F b, F c)
{
    return sqrt(max(1.0f - (a * a + b * b + c * c), 0.0f));
}

// Component k of an animated group (k = base + c * n + j) at both frames: read from the decoded frames,
// or decoded from the records.
template <typename F, typename I>
static inline void pair(uniform const Frames &f, I k, F &a, F &b)
{
    if (f.d0 != NULL) {
        a = f.d0[k];
        b = f.d1[k];
        return;
    }
    const I off = f.offsets[k];
    const I mask = f.masks[k];
    const F inv = f.invs[k];
    const F mn = f.mins[k];
    const F ex = f.extents[k];
    F smin, sext;
    segment(mn, ex, f.segments[f.seg0 + k], smin, sext);
    a = decode(unit(f.rec0, off, mask, inv), smin, sext);
    // Both frames in one segment (15 times in 16): its range once.
    if (f.seg1 != f.seg0) {
        segment(mn, ex, f.segments[f.seg1 + k], smin, sext);
    }
    b = decode(unit(f.rec1, off, mask, inv), smin, sext);
}

// Track j of an animated group (kind, n tracks, components from base, flags and, for rotations, rebuilt
// components from `first`): its value at alpha between the two frames, x y z (and w for a rotation).
// F and I are float and int for a gang's lanes, uniform float and uniform int for one track; either
// way every step of decode.rs, in its order. Straight-line code: the lane-dependent choices (step
// flags, dropped components, the shorter arc, a length too small to normalize) are selects, so that a
// gang's long chains of square roots and divisions overlap those of the next.
template <typename F, typename I>
static inline void animated(uniform const Frames &f, uniform int kind, uniform int n, uniform int base,
                            uniform int first, uniform const int flags[], I j, F &x, F &y, F &z,
                            F &w)
{
    F a0, a1, a2, b0, b1, b2;
    pair(f, base + j, a0, b0);
    pair(f, base + n + j, a1, b1);
    pair(f, base + 2 * n + j, a2, b2);
    const I fl = flags[j];
    const I step = fl & 1;
    const uniform float alpha = f.alpha;
    if (kind != ANIMATED_ROTATIONS) {
        x = mix(a0, b0, alpha, step);
        y = mix(a1, b1, alpha, step);
        z = mix(a2, b2, alpha, step);
        w = 0.0f;
        return;
    }
    // decode.rs: rotation_of, then interpolate and unit_scaled.
    F ra, rb;
    if (f.d0 != NULL) {
        ra = f.d0[f.components + first + j];
        rb = f.d1[f.components + first + j];
    } else {
        ra = rebuilt(a0, a1, a2);
        rb = rebuilt(b0, b1, b2);
    }
    const I drop = (fl >> 1) & 3;
    const F ax = drop == 0 ? ra : a0;
    const F ay = drop == 0 ? a0 : (drop == 1 ? ra : a1);
    const F az = drop <= 1 ? a1 : (drop == 2 ? ra : a2);
    const F aw = drop == 3 ? ra : a2;
    const F bx = drop == 0 ? rb : b0;
    const F by = drop == 0 ? b0 : (drop == 1 ? rb : b1);
    const F bz = drop <= 1 ? b1 : (drop == 2 ? rb : b2);
    const F bw = drop == 3 ? rb : b2;
    // A step track holds a frame; else the first frame at alpha 0, or the lerp along the shorter arc.
    F lx = ax, ly = ay, lz = az, lw = aw;
    if (!(alpha <= 0.0f)) {
        const F d = (ax * bx + ay * by) + (az * bz + aw * bw);
        const F sx = d < 0.0f ? -bx : bx;
        const F sy = d < 0.0f ? -by : by;
        const F sz = d < 0.0f ? -bz : bz;
        const F sw = d < 0.0f ? -bw : bw;
        lx = ax + (sx - ax) * alpha;
        ly = ay + (sy - ay) * alpha;
        lz = az + (sz - az) * alpha;
        lw = aw + (sw - aw) * alpha;
    }
    const uniform bool later = alpha >= 1.0f;
    const F qx = step != 0 ? (later ? bx : ax) : lx;
    const F qy = step != 0 ? (later ? by : ay) : ly;
    const F qz = step != 0 ? (later ? bz : az) : lz;
    const F qw = step != 0 ? (later ? bw : aw) : lw;
    // decode.rs: unit_scaled, the products by one IEEE reciprocal of the square root of a normal
    // squared length; else the identity (the products of such a lane are computed and dropped).
    const F len2 = qx * qx + qy * qy + qz * qz + qw * qw;
    const F r = 1.0f / sqrt(len2);
    const F nx = qx * r;
    const F ny = qy * r;
    const F nz = qz * r;
    const F nw = qw * r;
    const uniform float smallest = floatbits(0x00800000);
    const uniform float infinity = floatbits(0x7f800000);
    x = len2 >= smallest && len2 < infinity ? nx : 0.0f;
    y = len2 >= smallest && len2 < infinity ? ny : 0.0f;
    z = len2 >= smallest && len2 < infinity ? nz : 0.0f;
    w = len2 >= smallest && len2 < infinity ? nw : 1.0f;
}

// Track j of a group, constant or animated, x y z (and w for a rotation): varying for a gang's lanes,
// uniform for one track.
template <typename F, typename I>
static inline void track(uniform const Frames &f, uniform int kind, uniform int n, uniform int base,
                         uniform int first, uniform const int flags[], uniform const float constants[],
                         I j, F &x, F &y, F &z, F &w)
{
    if (kind >= CONSTANT_TRANSLATIONS) {
        x = constants[base + j];
        y = constants[base + n + j];
        z = constants[base + 2 * n + j];
        w = kind == CONSTANT_ROTATIONS ? constants[base + 3 * n + j] : 0.0f;
    } else {
        animated<F, I>(f, kind, n, base, first, flags, j, x, y, z, w);
    }
}

// Tracks j0 .. j0 + programCount - 1 of a group (n tracks, levels `lev`, consecutive from l0 when
// l0 >= 0) into `out`, c floats each: a whole gang with store_aos3/4, directly or through a buffer; a
// gang past the end of the group (only in a group smaller than a gang) lane by lane, masked.
static inline void gang(uniform const Frames &f, uniform int kind, uniform int n, uniform int base,
                        uniform int first, uniform const int lev[], uniform const int flags[],
                        uniform const float constants[], uniform int l0, uniform int j0,
                        uniform float out[])
{
    float x, y, z, w;
    const uniform bool quat = kind == ANIMATED_ROTATIONS || kind == CONSTANT_ROTATIONS;
    if (j0 + programCount <= n) {
        // j0 + programIndex, not clamped: the tables are read with contiguous loads.
        track<float, int>(f, kind, n, base, first, flags, constants, j0 + programIndex, x, y, z, w);
        if (quat) {
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
        }
    } else {
        // A group smaller than a gang: every lane computes (the tables are padded for a whole gang's
        // contiguous reads, TABLE_PAD in src/layout/compact.rs), and only the lanes of the group's
        // tracks store. The lanes past the group's end read the next group's entries or the padding:
        // real, finite values. (A masked gang left those lanes' registers undefined, and denormal
        // garbage there cost microcode assists on Intel cores; a clamped index made every read a
        // gather, which cost a one-track group as much as two whole gangs.)
        const int j = j0 + programIndex;
        track<float, int>(f, kind, n, base, first, flags, constants, j, x, y, z, w);
        if (j < n) {
            const uniform int c = quat ? 4 : 3;
            const int o = c * lev[j];
            out[o] = x;
            out[o + 1] = y;
            out[o + 2] = z;
            if (quat) {
                out[o + 3] = w;
            }
        }
    }
}

// Track j of a group (its levels `lev`) into `out` as one scalar chain, with a lane's bits (the same
// operations; its code read gives the same product as a gang's).
static inline void one(uniform const Frames &f, uniform int kind, uniform int n, uniform int base,
                       uniform int first, uniform const int lev[], uniform const int flags[],
                       uniform const float constants[], uniform int j, uniform float out[])
{
    uniform float x, y, z, w;
    track<uniform float, uniform int>(f, kind, n, base, first, flags, constants, j, x, y, z, w);
    const uniform bool quat = kind == ANIMATED_ROTATIONS || kind == CONSTANT_ROTATIONS;
    uniform float *uniform o = out + (quat ? 4 : 3) * lev[j];
    o[0] = x;
    o[1] = y;
    o[2] = z;
    if (quat) {
        o[3] = w;
    }
}

// Every group's tracks into the three outputs.
static void groups_into(uniform const Frames &f, uniform const float constants[],
                        uniform const int groups[], uniform int group_count, uniform const int levels[],
                        uniform const int flags[], uniform float translations[],
                        uniform float rotations[], uniform float scales[])
{
    for (uniform int g = 0; g < group_count; g++) {
        uniform const int *uniform G = groups + 5 * g;
        const uniform int kind = G[0];
        const uniform int n = G[1];
        const uniform int base = G[2];
        const uniform int first = G[3];
        const uniform int l0 = G[4];
        const uniform int property = kind % 3;
        uniform float *uniform out =
            property == 0 ? translations : (property == 1 ? rotations : scales);
        // Whole gangs, then the rest: a few tracks one by one, as scalar chains; more, a last whole
        // gang that overlaps the one before it (its tracks computed again give the same bits), or, in
        // a group smaller than a gang, one gang lane by lane.
        const uniform int full = n - n % programCount;
        const uniform int rest = n - full;
        for (uniform int j0 = 0; j0 < full; j0 += programCount) {
            gang(f, kind, n, base, first, levels + first, flags + first, constants, l0, j0, out);
        }
        // A scalar rotation costs a good part of a gang (its square roots and divisions in one chain);
        // a scalar translation, scale or constant little.
        const uniform int scalar = kind == ANIMATED_ROTATIONS ? programCount / 8 : programCount / 2;
        if (rest > 0 && rest <= scalar) {
            for (uniform int j = full; j < n; j++) {
                one(f, kind, n, base, first, levels + first, flags + first, constants, j, out);
            }
        } else if (rest > 0) {
            const uniform int last = n < programCount ? 0 : n - programCount;
            gang(f, kind, n, base, first, levels + first, flags + first, constants, l0, last, out);
        }
    }
}

export void EXPORT(compact_sample)(uniform const uint8 stream[], uniform int byte0, uniform int seg0,
                                   uniform int byte1, uniform int seg1,
                                   uniform float alpha, uniform const int offsets[],
                                   uniform const int masks[], uniform const float invs[],
                                   uniform const float mins[], uniform const float extents[],
                                   uniform const uint16 segments[], uniform const float constants[],
                                   uniform const int groups[], uniform int group_count,
                                   uniform const int levels[], uniform const int flags[],
                                   uniform float translations[], uniform float rotations[],
                                   uniform float scales[])
{
    uniform Frames f;
    f.rec0 = stream + byte0;
    f.rec1 = stream + byte1;
    f.seg0 = seg0;
    f.seg1 = seg1;
    f.alpha = alpha;
    f.offsets = offsets;
    f.masks = masks;
    f.invs = invs;
    f.mins = mins;
    f.extents = extents;
    f.segments = segments;
    f.d0 = NULL;
    f.d1 = NULL;
    f.components = 0;
    groups_into(f, constants, groups, group_count, levels, flags, translations, rotations, scales);
}

// One frame decoded into `frame`: its `components` stored components in lane order (every lane a
// component, whatever its group), then each animated rotation's rebuilt component at
// components + first + j.
export void EXPORT(compact_decode)(uniform const uint8 stream[], uniform int byte, uniform int seg,
                                   uniform const int offsets[], uniform const int masks[],
                                   uniform const float invs[], uniform const float mins[],
                                   uniform const float extents[], uniform const uint16 segments[],
                                   uniform int components,
                                   uniform const int groups[], uniform int group_count,
                                   uniform float frame[])
{
    uniform const uint8 *uniform rec = stream + byte;
    // Whole gangs, every lane on (the tables are padded for it; see `gang`); the last, past
    // `components`, stores only its lanes below it (a masked store on every gang cost SSE4 a tenth).
    for (uniform int k0 = 0; k0 < components; k0 += programCount) {
        const int k = k0 + programIndex;
        float smin, sext;
        segment(mins[k], extents[k], segments[seg + k], smin, sext);
        const float v = decode(unit(rec, offsets[k], masks[k], invs[k]), smin, sext);
        if (k0 + programCount <= components) {
            frame[k] = v;
        } else if (k < components) {
            frame[k] = v;
        }
    }
    for (uniform int g = 0; g < group_count; g++) {
        uniform const int *uniform G = groups + 5 * g;
        if (G[0] != ANIMATED_ROTATIONS) {
            continue;
        }
        const uniform int n = G[1];
        const uniform int base = G[2];
        const uniform int first = G[3];
        // The frame is padded past its rebuilt components, so a whole gang's reads stay inside it.
        for (uniform int j0 = 0; j0 < n; j0 += programCount) {
            const int j = j0 + programIndex;
            const float r = rebuilt(frame[base + j], frame[base + n + j], frame[base + 2 * n + j]);
            if (j0 + programCount <= n) {
                frame[components + first + j] = r;
            } else if (j < n) {
                frame[components + first + j] = r;
            }
        }
    }
}

// The tracks at alpha between two frames that compact_decode decoded.
export void EXPORT(compact_interpolate)(uniform const float frame0[], uniform const float frame1[],
                                        uniform int components, uniform float alpha,
                                        uniform const float constants[], uniform const int groups[],
                                        uniform int group_count, uniform const int levels[],
                                        uniform const int flags[], uniform float translations[],
                                        uniform float rotations[], uniform float scales[])
{
    uniform Frames f;
    f.rec0 = NULL;
    f.rec1 = NULL;
    f.seg0 = 0;
    f.seg1 = 0;
    f.alpha = alpha;
    f.offsets = NULL;
    f.masks = NULL;
    f.invs = NULL;
    f.mins = NULL;
    f.extents = NULL;
    f.segments = NULL;
    f.d0 = frame0;
    f.d1 = frame1;
    f.components = components;
    groups_into(f, constants, groups, group_count, levels, flags, translations, rotations, scales);
}
