// Batch transform of positions by one 4x4 matrix (the "transform Vec3 by Matrix4x4" snippet seed).
//
// Layout choice: the textbook SPMD version puts one vertex in each lane and reads src[i].x with a stride of
// three floats, which compiles to gathers and scatters and ran slower than scalar code on this machine
// class. Here the gang is spread *horizontally*: each group of four lanes holds the four output components
// of one vertex, so a gang of W lanes handles W/4 vertices at once. The input of those vertices is one
// contiguous, unaligned vector load; x, y and z are broadcast into their group with constant shuffles; three
// fused multiply-adds with the matrix columns produce the result, and the result is one contiguous store.
// There is not a single gather or scatter in the loop, and the code is the same for every gang width.

#include "common.isph"

// Lane layout helpers: lane l works on vertex l / 4 of the group, output component l % 4.
static inline varying int vertex_of_lane() { return programIndex >> 2; }
static inline varying int component_of_lane() { return programIndex & 3; }

// Column c of the matrix, replicated into every group of four lanes.
static inline varying float matrix_column(uniform const float m[16], uniform int c)
{
    return m[4 * c + component_of_lane()];
}

// M * (x, y, z, 1) for the W/4 vertices whose 3*W/4 floats start the vector `packed`.
static inline varying float transform_group(varying float packed, varying float c0, varying float c1,
                                            varying float c2, varying float c3)
{
    const varying int v3 = 3 * vertex_of_lane();
    const varying float x = shuffle(packed, v3);
    const varying float y = shuffle(packed, v3 + 1);
    const varying float z = shuffle(packed, v3 + 2);
    return c3 + x * c0 + y * c1 + z * c2;
}

// dst[i] = M * (src[i], 1) for i in [0, n). src holds 3n floats, dst holds 4n floats.
export void EXPORT(transform_points_vec4)(uniform const float src[], uniform float dst[], uniform int n,
                                          uniform const float m[16])
{
    const uniform int per_group = programCount / 4;
    const varying float c0 = matrix_column(m, 0);
    const varying float c1 = matrix_column(m, 1);
    const varying float c2 = matrix_column(m, 2);
    const varying float c3 = matrix_column(m, 3);

    uniform int i = 0;
    // Main loop: the full-width load reads programCount floats starting at 3i, a little past the
    // 3*per_group floats it needs, so it runs only while that whole load stays inside src.
    for (; 3 * i + programCount <= 3 * n; i += per_group) {
        const varying float packed = src[3 * i + programIndex];
        dst[4 * i + programIndex] = transform_group(packed, c0, c1, c2, c3);
    }
    // Tail: masked loads and stores touch exactly the remaining vertices.
    for (; i < n; i += per_group) {
        const uniform int left = n - i;
        varying float packed = 0.0f;
        if (programIndex < 3 * left)
            packed = src[3 * i + programIndex];
        const varying float out = transform_group(packed, c0, c1, c2, c3);
        if (programIndex < 4 * left)
            dst[4 * i + programIndex] = out;
    }
}

// dst[i] = (M * (src[i], 1)).xyz for i in [0, n): the affine case, 3n floats in and 3n floats out.
// The w row of the matrix is not used, and no perspective divide happens.
export void EXPORT(transform_points_vec3)(uniform const float src[], uniform float dst[], uniform int n,
                                          uniform const float m[16])
{
    const uniform int per_group = programCount / 4;
    const varying float c0 = matrix_column(m, 0);
    const varying float c1 = matrix_column(m, 1);
    const varying float c2 = matrix_column(m, 2);
    const varying float c3 = matrix_column(m, 3);
    // Compaction: lane l of the packed output takes component l % 3 of vertex l / 3. Lanes at and past
    // 3*per_group carry leftovers; in the main loop they land on the next vertices, which the following
    // iteration overwrites, so every store can be one full-width vector store.
    const varying int pack = 4 * (programIndex / 3) + programIndex % 3;

    uniform int i = 0;
    for (; 3 * i + programCount <= 3 * n; i += per_group) {
        const varying float packed = src[3 * i + programIndex];
        const varying float out = transform_group(packed, c0, c1, c2, c3);
        dst[3 * i + programIndex] = shuffle(out, pack);
    }
    for (; i < n; i += per_group) {
        const uniform int left = n - i;
        varying float packed = 0.0f;
        if (programIndex < 3 * left)
            packed = src[3 * i + programIndex];
        const varying float out = shuffle(transform_group(packed, c0, c1, c2, c3), pack);
        if (programIndex < 3 * min(left, per_group))
            dst[3 * i + programIndex] = out;
    }
}
