// Local-to-model transforms over a level-order skeleton on structure-of-arrays matrices: sections 2 and 3
// of hierarchy.ispc (see its header), the layouts the benchmarks compare with the horizontal one.
//
// Affine semantics, as there: a matrix's bottom row is taken as (0, 0, 0, 1).

#include "common.isph"

// ---------------------------------------------------------------------------------------------------
// 2 and 3. Structure of arrays: element e (e = 4 * row + col, rows 0..2, cols 0..3, so 12 arrays) of
// joint j is at m[e * stride + j].

#define SOA(m, e, j) m[(e) * stride + (j)]

// model[j] = P * local[j] for one lane, P given element by element (P[e], e = 4 * row + col).
#define SOA_MULTIPLY(P, j)                                                                                  \
    {                                                                                                       \
        const varying float l0 = SOA(local, 0, j), l1 = SOA(local, 1, j), l2 = SOA(local, 2, j),            \
                            l3 = SOA(local, 3, j);                                                          \
        const varying float l4 = SOA(local, 4, j), l5 = SOA(local, 5, j), l6 = SOA(local, 6, j),            \
                            l7 = SOA(local, 7, j);                                                          \
        const varying float l8 = SOA(local, 8, j), l9 = SOA(local, 9, j), l10 = SOA(local, 10, j),          \
                            l11 = SOA(local, 11, j);                                                        \
        SOA(model, 0, j) = P[0] * l0 + P[1] * l4 + P[2] * l8;                                               \
        SOA(model, 1, j) = P[0] * l1 + P[1] * l5 + P[2] * l9;                                               \
        SOA(model, 2, j) = P[0] * l2 + P[1] * l6 + P[2] * l10;                                              \
        SOA(model, 3, j) = P[0] * l3 + P[1] * l7 + P[2] * l11 + P[3];                                       \
        SOA(model, 4, j) = P[4] * l0 + P[5] * l4 + P[6] * l8;                                               \
        SOA(model, 5, j) = P[4] * l1 + P[5] * l5 + P[6] * l9;                                               \
        SOA(model, 6, j) = P[4] * l2 + P[5] * l6 + P[6] * l10;                                              \
        SOA(model, 7, j) = P[4] * l3 + P[5] * l7 + P[6] * l11 + P[7];                                       \
        SOA(model, 8, j) = P[8] * l0 + P[9] * l4 + P[10] * l8;                                              \
        SOA(model, 9, j) = P[8] * l1 + P[9] * l5 + P[10] * l9;                                              \
        SOA(model, 10, j) = P[8] * l2 + P[9] * l6 + P[10] * l10;                                            \
        SOA(model, 11, j) = P[8] * l3 + P[9] * l7 + P[10] * l11 + P[11];                                    \
    }

// Roots [begin, end): model = root * local, root given as a column-major 4x4.
export void EXPORT(ltm_roots_soa)(uniform const float local[], uniform float model[], uniform int stride,
                                  uniform int begin, uniform int end, uniform const float root[16])
{
    uniform float P[12];
    for (uniform int r = 0; r < 3; r++)
        for (uniform int c = 0; c < 4; c++)
            P[4 * r + c] = root[4 * c + r];
    foreach (j = begin... end) {
        SOA_MULTIPLY(P, j)
    }
}

// The seed's ParallelLevelOrder: for each parent in [pbegin, pend), foreach over its children.
export void EXPORT(ltm_children_soa)(uniform const float local[], uniform float model[], uniform int stride,
                                     uniform const uint32 child_start[], uniform const uint32 child_end[],
                                     uniform int pbegin, uniform int pend)
{
    for (uniform int p = pbegin; p < pend; p++) {
        const uniform int cb = child_start[p];
        const uniform int ce = child_end[p];
        if (cb == ce)
            continue;
        uniform float P[12];
#pragma unroll
        for (uniform int e = 0; e < 12; e++)
            P[e] = SOA(model, e, p);
        foreach (j = cb... ce) {
            SOA_MULTIPLY(P, j)
        }
    }
}

// One level [begin, end) whose joints all have parents (level 1 and deeper): each lane gathers its
// parent's twelve elements.
export void EXPORT(ltm_level_soa)(uniform const float local[], uniform float model[], uniform int stride,
                                  uniform const int parents[], uniform int begin, uniform int end)
{
    foreach (j = begin... end) {
        const varying int p = parents[j];
        varying float P[12];
#pragma unroll
        for (uniform int e = 0; e < 12; e++)
            P[e] = SOA(model, e, p);
        SOA_MULTIPLY(P, j)
    }
}

// TRS (AoS: 3, 4 and 3 floats per joint) to SoA local matrices, for the SoA traversals. Joints [0, n).
export void EXPORT(trs_to_soa)(uniform const float t[], uniform const float q[], uniform const float s[],
                               uniform float local[], uniform int stride, uniform int n)
{
    foreach (j = 0... n) {
        const varying float x = q[4 * j], y = q[4 * j + 1], z = q[4 * j + 2], w = q[4 * j + 3];
        const varying float nn = x * x + y * y + z * z + w * w;
        const varying float s2 = nn > 0.0f ? 2.0f / nn : 0.0f;
        const varying float sx = s[3 * j], sy = s[3 * j + 1], sz = s[3 * j + 2];
        SOA(local, 0, j) = (1.0f - s2 * (y * y + z * z)) * sx;
        SOA(local, 1, j) = s2 * (x * y - z * w) * sy;
        SOA(local, 2, j) = s2 * (x * z + y * w) * sz;
        SOA(local, 3, j) = t[3 * j];
        SOA(local, 4, j) = s2 * (x * y + z * w) * sx;
        SOA(local, 5, j) = (1.0f - s2 * (x * x + z * z)) * sy;
        SOA(local, 6, j) = s2 * (y * z - x * w) * sz;
        SOA(local, 7, j) = t[3 * j + 1];
        SOA(local, 8, j) = s2 * (x * z - y * w) * sx;
        SOA(local, 9, j) = s2 * (y * z + x * w) * sy;
        SOA(local, 10, j) = (1.0f - s2 * (x * x + y * y)) * sz;
        SOA(local, 11, j) = t[3 * j + 2];
    }
}

