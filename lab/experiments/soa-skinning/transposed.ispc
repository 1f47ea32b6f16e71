// AVX2 only (programCount 8): blend horizontally into registers, transpose in registers.
static inline varying float sh(varying float a, varying float b, varying int i) { return shuffle(a, b, i); }
#define PIDX programIndex
#define LO(a, b) sh(a, b, (PIDX & 4) + ((PIDX >> 1) & 1) + ((PIDX & 1) << 3))
#define HI(a, b) sh(a, b, (PIDX & 4) + ((PIDX >> 1) & 1) + ((PIDX & 1) << 3) + 2)
#define S44(a, b) sh(a, b, (PIDX & 4) + (PIDX & 1) + ((PIDX & 2) << 2))
#define SEE(a, b) sh(a, b, (PIDX & 4) + (PIDX & 1) + ((PIDX & 2) << 2) + 2)
#define P20(a, b) sh(a, b, (PIDX & 3) + ((PIDX & 4) << 1))
#define P31(a, b) sh(a, b, (PIDX & 3) + ((PIDX & 4) << 1) + 4)

static inline varying float blend(uniform int K, uniform const uint32 * uniform jp, uniform const float * uniform wp,
                                  uniform const float palette[], uniform int off)
{
    varying float c = 0.0f;
#pragma unroll
    for (uniform int i = 0; i < K; i++)
        c += wp[i] * palette[16 * jp[i] + off + programIndex];
    return c;
}

static inline void run(uniform int K, uniform int count, uniform const float src[], uniform const uint32 joints[],
                       uniform const float weights[], uniform const float palette[], uniform float pos[],
                       uniform float nrm[], uniform int mode)
{
    for (uniform int b = 0; b < count; b += 8) {
        uniform const uint32 * uniform jp = joints + K * b;
        uniform const float * uniform wp = weights + K * b;
        varying float c[8], d[8];
#pragma unroll
        for (uniform int v = 0; v < 8; v++) {
            c[v] = blend(K, jp + K * v, wp + K * v, palette, 0);
            d[v] = blend(K, jp + K * v, wp + K * v, palette, 8);
        }
        // c[v] = rows 0,1 of vertex v; transpose 8x8 -> e[k] = element k (r*4+c) across vertices.
        varying float t0 = LO(c[0], c[1]), t1 = HI(c[0], c[1]), t2 = LO(c[2], c[3]), t3 = HI(c[2], c[3]);
        varying float t4 = LO(c[4], c[5]), t5 = HI(c[4], c[5]), t6 = LO(c[6], c[7]), t7 = HI(c[6], c[7]);
        varying float u0 = S44(t0, t2), u1 = SEE(t0, t2), u2 = S44(t1, t3), u3 = SEE(t1, t3);
        varying float u4 = S44(t4, t6), u5 = SEE(t4, t6), u6 = S44(t5, t7), u7 = SEE(t5, t7);
        const varying float b00 = P20(u0, u4), b01 = P20(u1, u5), b02 = P20(u2, u6), b03 = P20(u3, u7);
        const varying float b10 = P31(u0, u4), b11 = P31(u1, u5), b12 = P31(u2, u6), b13 = P31(u3, u7);
        t0 = LO(d[0], d[1]); t1 = HI(d[0], d[1]); t2 = LO(d[2], d[3]); t3 = HI(d[2], d[3]);
        t4 = LO(d[4], d[5]); t5 = HI(d[4], d[5]); t6 = LO(d[6], d[7]); t7 = HI(d[6], d[7]);
        u0 = S44(t0, t2); u1 = SEE(t0, t2); u2 = S44(t1, t3); u3 = SEE(t1, t3);
        u4 = S44(t4, t6); u5 = SEE(t4, t6); u6 = S44(t5, t7); u7 = SEE(t5, t7);
        const varying float b20 = P20(u0, u4), b21 = P20(u1, u5), b22 = P20(u2, u6), b23 = P20(u3, u7);
        uniform const float * uniform a = src + 6 * b;
        const varying float px = a[PIDX], py = a[8 + PIDX], pz = a[16 + PIDX];
        const varying float nx = a[24 + PIDX], ny = a[32 + PIDX], nz = a[40 + PIDX];
        const varying float x = b03 + b00 * px + b01 * py + b02 * pz;
        const varying float y = b13 + b10 * px + b11 * py + b12 * pz;
        const varying float z = b23 + b20 * px + b21 * py + b22 * pz;
        varying float ux = b00 * nx + b01 * ny + b02 * nz;
        varying float uy = b10 * nx + b11 * ny + b12 * nz;
        varying float uz = b20 * nx + b21 * ny + b22 * nz;
        if (mode != 0) {
            const varying float len2 = ux * ux + uy * uy + uz * uz;
            const varying float s = len2 > 0.0f ? (mode == 2 ? rsqrt(len2) : 1.0f / sqrt(len2)) : 1.0f;
            ux *= s; uy *= s; uz *= s;
        }
        soa_to_aos3(x, y, z, pos + 3 * b);
        soa_to_aos3(ux, uy, uz, nrm + 3 * b);
    }
}

export void skin_soa_pn(uniform int K, uniform int count, uniform const float src[], uniform const uint32 joints[],
                        uniform const float weights[], uniform const float palette[], uniform float pos[],
                        uniform float nrm[], uniform int mode)
{
    switch (K) {
    case 1: run(1, count, src, joints, weights, palette, pos, nrm, mode); break;
    case 2: run(2, count, src, joints, weights, palette, pos, nrm, mode); break;
    case 3: run(3, count, src, joints, weights, palette, pos, nrm, mode); break;
    case 4: run(4, count, src, joints, weights, palette, pos, nrm, mode); break;
    }
}
