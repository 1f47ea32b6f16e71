//! Influence sources and input forms against glam's own math: unorm8 weights are normalized and u8
//! joints equal u16 ones, eight influences come from JOINTS_1/WEIGHTS_1, influence LOD keeps the
//! heaviest and renormalizes, runs of mixed influence counts are promoted exactly, one mesh described
//! interleaved and as separate streams prepares and skins the same (separate and interleaved outputs
//! agree), and the default character skins to its own mesh at its bind pose on every backend.

use super::{positions, prepare, random_palette, skin};
use crate::common::{self, random_vec3, scenes, Rng};
use glam::{Mat4, Quat, Vec3, Vec4};
use ispc_skinning::Format;
use ispc_skinning::{
    Attribute, Backend, MeshInput, PaletteMatrix, PrepareOptions, Renormalize, SkinOutput,
    SkinnedMesh, SkinningJob,
};

#[test]
fn unorm_weights_are_normalized_and_u8_equals_u16_joints() {
    let mut rng = Rng::new(1);
    let (mats, palette) = random_palette(8, &mut rng);
    let p = positions(3);
    let j8 = [[1u8, 2, 3, 0], [4, 5, 0, 0], [7, 0, 0, 0]];
    let j16 = j8.map(|j| j.map(u16::from));
    // 0.5 + 0.25 + 0.24 = 0.99 in unorm8: normalized, the vertex is an affine blend again.
    let w8 = [[128u8, 64, 61, 0], [200, 55, 0, 0], [255, 0, 0, 0]];
    let a = prepare(&MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u8(&j8),
        Attribute::weights_unorm8(&w8),
    ))
    .unwrap();
    let b = prepare(&MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u16(&j16),
        Attribute::weights_unorm8(&w8),
    ))
    .unwrap();
    assert_eq!(a, b);
    let out = skin(&a, &palette, Backend::Reference);
    let wsum: f32 = w8[0].iter().map(|&w| w as f32).sum();
    let blended = (0..3).fold(Mat4::ZERO, |m, i| {
        m + mats[j8[0][i] as usize] * (w8[0][i] as f32 / wsum)
    });
    assert!(
        out[0].abs_diff_eq(blended.transform_point3(p[0]), 1e-4),
        "{} vs {}",
        out[0],
        blended.transform_point3(p[0])
    );
    assert!(out[2].abs_diff_eq(mats[7].transform_point3(p[2]), 1e-5));
}

#[test]
fn eight_influences_come_from_joints_1_and_weights_1() {
    let p = positions(1);
    let j0 = [[0u16, 1, 2, 3]];
    let j1 = [[4u16, 5, 6, 7]];
    let w = [[0.125f32; 4]];
    let mut input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u16(&j0),
        Attribute::weights_f32(&w),
    );
    input.joints[1] = Some(Attribute::joints_u16(&j1));
    input.weights[1] = Some(Attribute::weights_f32(&w));
    let mesh = prepare(&input).unwrap();
    assert_eq!(mesh.influence_histogram()[8], 1);
    let mut rng = Rng::new(2);
    let (mats, palette) = random_palette(8, &mut rng);
    let blended = mats.iter().fold(Mat4::ZERO, |m, x| m + *x * 0.125);
    assert!(skin(&mesh, &palette, Backend::Reference)[0]
        .abs_diff_eq(blended.transform_point3(p[0]), 1e-4));
}

#[test]
fn influence_lod_keeps_the_heaviest_and_renormalizes() {
    let p = positions(1);
    let j = [[0u8, 1, 2, 3]];
    let w = [[0.1f32, 0.5, 0.15, 0.25]];
    let input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u8(&j),
        Attribute::weights_f32(&w),
    );
    let mesh = SkinnedMesh::prepare(
        &input,
        &PrepareOptions {
            max_influences: 2,
            ..PrepareOptions::new(4)
        },
    )
    .unwrap();
    assert_eq!(mesh.influence_histogram()[2], 1);
    let mut rng = Rng::new(3);
    let (mats, palette) = random_palette(4, &mut rng);
    let blended = mats[1] * (0.5 / 0.75) + mats[3] * (0.25 / 0.75);
    assert!(skin(&mesh, &palette, Backend::Reference)[0]
        .abs_diff_eq(blended.transform_point3(p[0]), 1e-4));
}

/// One random mesh described twice: interleaved in one vertex buffer, and as separate streams.
#[test]
fn interleaved_input_equals_separate_streams_and_outputs_agree() {
    let n = 37;
    let mut rng = Rng::new(4);
    let pos: Vec<Vec3> = (0..n).map(|_| random_vec3(&mut rng, -1.0..1.0)).collect();
    let nrm: Vec<Vec3> = (0..n)
        .map(|_| random_vec3(&mut rng, -1.0..1.0).normalize())
        .collect();
    let tan: Vec<Vec4> = (0..n)
        .map(|i| {
            Vec4::new(
                rng.range(-1.0, 1.0),
                0.5,
                0.25,
                if i % 2 == 0 { 1.0 } else { -1.0 },
            )
        })
        .collect();
    let jnt: Vec<[u16; 4]> = (0..n)
        .map(|_| [0, 1, 2, 3].map(|_| rng.below(6) as u16))
        .collect();
    let wgt: Vec<[u16; 4]> = (0..n)
        .map(|_| [0, 1, 2, 3].map(|_| rng.below(65536) as u16))
        .collect();
    // Interleaved: position 12, normal 12, tangent 16, joints 8, weights 8 = 56 bytes, plus 4 padding.
    let stride = 60;
    let mut buf = vec![0u8; n * stride];
    for i in 0..n {
        let v = &mut buf[i * stride..(i + 1) * stride];
        v[0..12].copy_from_slice(bytemuck::cast_slice(&pos[i].to_array()));
        v[12..24].copy_from_slice(bytemuck::cast_slice(&nrm[i].to_array()));
        v[24..40].copy_from_slice(bytemuck::cast_slice(&tan[i].to_array()));
        v[40..48].copy_from_slice(bytemuck::cast_slice(&jnt[i]));
        v[48..56].copy_from_slice(bytemuck::cast_slice(&wgt[i]));
    }
    let interleaved = MeshInput {
        positions: Attribute::new(&buf, 0, stride, n, Format::F32x3),
        normals: Some(Attribute::new(&buf, 12, stride, n, Format::F32x3)),
        tangents: Some(Attribute::new(&buf, 24, stride, n, Format::F32x4)),
        joints: [
            Some(Attribute::new(&buf, 40, stride, n, Format::U16x4)),
            None,
            None,
            None,
        ],
        weights: [
            Some(Attribute::new(&buf, 48, stride, n, Format::Unorm16x4)),
            None,
            None,
            None,
        ],
        influences: None,
    };
    let separate = MeshInput {
        positions: Attribute::vec3(&pos),
        normals: Some(Attribute::vec3(&nrm)),
        tangents: Some(Attribute::vec4(&tan)),
        joints: [Some(Attribute::joints_u16(&jnt)), None, None, None],
        weights: [Some(Attribute::weights_unorm16(&wgt)), None, None, None],
        influences: None,
    };
    let options = PrepareOptions::new(6);
    let a = SkinnedMesh::prepare(&interleaved, &options).unwrap();
    let b = SkinnedMesh::prepare(&separate, &options).unwrap();
    assert_eq!(a, b);
    let mut perm = a.permutation();
    perm.sort();
    assert_eq!(perm, (0..n as u32).collect::<Vec<_>>());

    let (_, palette) = random_palette(6, &mut rng);
    let (mut p, mut nn, mut t) = (
        vec![Vec3::ZERO; n],
        vec![Vec3::ZERO; n],
        vec![Vec4::ZERO; n],
    );
    let mut job = SkinningJob::new(
        &a,
        &palette,
        SkinOutput::Separate {
            positions: &mut p,
            normals: Some(&mut nn),
            tangents: Some(&mut t),
        },
    );
    job.renormalize = Renormalize::Precise;
    job.run().unwrap();
    let mut out = vec![0u8; n * 44];
    let mut job = SkinningJob::new(
        &a,
        &palette,
        SkinOutput::Interleaved {
            bytes: &mut out,
            stride: 44,
            positions: 0,
            normals: Some(12),
            tangents: Some(24),
        },
    );
    job.renormalize = Renormalize::Precise;
    job.run().unwrap();
    for i in 0..n {
        let f: &[f32] = bytemuck::cast_slice(&out[i * 44..(i + 1) * 44]);
        assert_eq!(&f[0..3], &p[i].to_array());
        assert_eq!(&f[3..6], &nn[i].to_array());
        assert_eq!(&f[6..10], &t[i].to_array());
        assert_eq!(t[i].w, tan[i].w, "the handedness sign is preserved");
        assert!(
            (nn[i].length() - 1.0).abs() < 1e-5 && (t[i].truncate().length() - 1.0).abs() < 1e-5
        );
    }
}

/// The report's default character skins to its own bind pose when posed at the bind pose, through the
/// skeleton's level order and the palette's joint remap, on every backend.
#[test]
fn the_default_character_at_bind_pose_is_its_mesh() {
    use ispc_skinning::{LocalToModelJob, Locals, PaletteJob, Skeleton, Trs};
    use scenes::character;
    let c = character(67, 4, 6);
    let n = c.parents.len();
    let skeleton = Skeleton::from_parents(&c.parents).unwrap();
    let translations = skeleton.to_level_order(&c.bind_translations).unwrap();
    let (rotations, scales) = (vec![Quat::IDENTITY; n], vec![Vec3::ONE; n]);
    // The palette job takes level-order joints; the skin is in the user's order.
    let remap: Vec<usize> = (0..n).map(|i| skeleton.level_index(i).unwrap()).collect();
    assert_eq!(
        skeleton.level_indices(&(0..n).collect::<Vec<_>>()).unwrap(),
        remap
    );
    let input = MeshInput {
        normals: Some(Attribute::vec3(&c.normals)),
        tangents: Some(Attribute::vec4(&c.tangents)),
        ..MeshInput::new(
            Attribute::vec3(&c.positions),
            Attribute::joints_u16(&c.joints),
            Attribute::weights_f32(&c.weights),
        )
    };
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(n)).unwrap();
    assert_eq!(mesh.influence_histogram()[4], mesh.vertex_count());
    for backend in common::backends() {
        let mut models = vec![Mat4::IDENTITY; n];
        let locals = Locals::Trs(Trs {
            translations: &translations,
            rotations: &rotations,
            scales: &scales,
        });
        let mut job = LocalToModelJob::new(&skeleton, locals, &mut models);
        job.backend = backend;
        job.run().unwrap();
        let mut palette = vec![PaletteMatrix::IDENTITY; n];
        let mut job = PaletteJob::new(&models, &c.inverse_binds, &mut palette);
        (job.joints, job.backend) = (Some(&remap[..]), backend);
        job.run().unwrap();
        let got = skin(&mesh, &palette, backend);
        for (i, (g, w)) in got.iter().zip(&c.positions).enumerate() {
            assert!(
                (*g - *w).abs().max_element() < 1e-5,
                "{backend:?} vertex {i}: {g} vs {w}"
            );
        }
    }
}

#[test]
fn runs_of_mixed_counts_are_promoted_exactly_and_keep_their_own_counts() {
    // Counts change from one vertex to the next, as in real meshes, so preparing puts each whole run of
    // 16 vertices in the group of its largest count, padded with zero-weight influences (see
    // SkinnedMesh::prepare). The results must still be each vertex's own blend, computed here with glam
    // from the input alone, on every backend; and the histogram and permutation speak of own counts.
    let mut rng = Rng::new(5);
    let n = 16 * 7 + 5;
    let count = |v: usize| 1 + (v * 5 + v / 3) % 4;
    let pos: Vec<Vec3> = (0..n).map(|_| random_vec3(&mut rng, -1.0..1.0)).collect();
    let mut joints = vec![[0u8; 4]; n];
    let mut weights = vec![[0.0f32; 4]; n];
    for v in 0..n {
        for i in 0..count(v) {
            joints[v][i] = ((v + 3 * i) % 6) as u8;
            weights[v][i] = rng.range(0.25, 1.25);
        }
    }
    let input = MeshInput::new(
        Attribute::vec3(&pos),
        Attribute::joints_u8(&joints),
        Attribute::weights_f32(&weights),
    );
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(6)).unwrap();
    let mut histogram = [0usize; ispc_skinning::MAX_INFLUENCES + 1];
    (0..n).for_each(|v| histogram[count(v)] += 1);
    assert_eq!(mesh.influence_histogram(), histogram);
    let perm = mesh.permutation();
    assert!(perm
        .windows(2)
        .all(|w| count(w[0] as usize) <= count(w[1] as usize)));

    let (matrices, palette) = random_palette(6, &mut rng);
    for backend in common::backends() {
        let got = skin(&mesh, &palette, backend);
        for v in 0..n {
            let sum: f32 = weights[v].iter().sum();
            let blended = (0..count(v)).fold(Mat4::ZERO, |m, i| {
                m + matrices[joints[v][i] as usize] * (weights[v][i] / sum)
            });
            let want = blended.transform_point3(pos[v]);
            assert!(
                got[v].abs_diff_eq(want, 1e-5),
                "{} vertex {v} ({} influences): {} instead of {want}",
                backend.name(),
                count(v),
                got[v]
            );
        }
    }
}
