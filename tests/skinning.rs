//! Mesh preparation and the skinning job: one test per rule, the weight policy, influence LOD, every
//! input form, and the reference against glam's own math.

mod common;
use common::scenes;

use common::{random_transform, random_vec3, Rng};
use glam::{Mat4, Quat, Vec3, Vec4};
use ispc_skinning::Format;
use ispc_skinning::{
    Attribute, Backend, Error, MeshInput, PaletteMatrix, PrepareOptions, Renormalize, SkinOutput,
    SkinnedMesh, SkinningJob, WeightPolicy,
};

fn positions(n: usize) -> Vec<Vec3> {
    (0..n).map(|i| Vec3::new(i as f32, 1.0, -2.0)).collect()
}

fn prepare(input: &MeshInput<'_>) -> Result<SkinnedMesh, Error> {
    SkinnedMesh::prepare(input, &PrepareOptions::new(8))
}

#[test]
fn a_mesh_over_the_vertex_limit_is_rejected_before_anything_is_read() {
    // The count alone decides: the buffers are never looked at, so none are allocated here.
    let n = ispc_skinning::MAX_VERTICES + 1;
    let input = MeshInput::new(
        Attribute::new(&[], 0, 12, n, Format::F32x3),
        Attribute::new(&[], 0, 4, n, Format::U8x4),
        Attribute::new(&[], 0, 16, n, Format::F32x4),
    );
    assert_eq!(
        prepare(&input).unwrap_err(),
        Error::TooManyVertices {
            vertices: n,
            max: ispc_skinning::MAX_VERTICES
        }
    );
}

#[test]
fn positions_in_the_wrong_format_are_rejected() {
    let bytes = [0u8; 16];
    let joints = [[0u8; 4]; 4];
    let weights = [[1.0f32, 0.0, 0.0, 0.0]; 4];
    let input = MeshInput::new(
        Attribute::new(&bytes, 0, 4, 4, Format::U8x4),
        Attribute::joints_u8(&joints),
        Attribute::weights_f32(&weights),
    );
    assert_eq!(
        prepare(&input).unwrap_err(),
        Error::AttributeFormat {
            attribute: "positions",
            format: Format::U8x4
        }
    );
}

#[test]
fn attribute_counts_must_match_the_positions() {
    let p = positions(4);
    let joints = [[0u16; 4]; 3];
    let weights = [[1.0f32, 0.0, 0.0, 0.0]; 4];
    let input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    );
    assert_eq!(
        prepare(&input).unwrap_err(),
        Error::CountMismatch {
            what: "JOINTS_0",
            expected: 4,
            got: 3
        }
    );
}

#[test]
fn a_stride_past_the_buffer_is_out_of_bounds() {
    let p = positions(4);
    let bytes: &[u8] = bytemuck::cast_slice(&p);
    let joints = [[0u8; 4]; 4];
    let weights = [[1.0f32, 0.0, 0.0, 0.0]; 4];
    let input = MeshInput::new(
        Attribute::new(bytes, 0, 16, 4, Format::F32x3),
        Attribute::joints_u8(&joints),
        Attribute::weights_f32(&weights),
    );
    assert!(matches!(
        prepare(&input).unwrap_err(),
        Error::AttributeOutOfBounds {
            attribute: "positions",
            stride: 16,
            ..
        }
    ));
}

#[test]
fn a_stride_shorter_than_an_element_is_rejected() {
    let p = positions(4);
    let joints = [[0u8; 4]; 4];
    let weights = [[1.0f32, 0.0, 0.0, 0.0]; 4];
    let mut input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u8(&joints),
        Attribute::weights_f32(&weights),
    );
    input.positions.stride = 8;
    assert!(matches!(
        prepare(&input).unwrap_err(),
        Error::AttributeOutOfBounds {
            attribute: "positions",
            ..
        }
    ));
}

#[test]
fn joints_and_weights_come_in_pairs() {
    let p = positions(2);
    let joints = [[0u8; 4]; 2];
    let weights = [[1.0f32, 0.0, 0.0, 0.0]; 2];
    let mut input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u8(&joints),
        Attribute::weights_f32(&weights),
    );
    input.weights[1] = Some(Attribute::weights_f32(&weights));
    assert_eq!(
        prepare(&input).unwrap_err(),
        Error::AttributeMissing {
            attribute: "JOINTS_1"
        }
    );
    input.weights = [None; 4];
    assert_eq!(
        prepare(&input).unwrap_err(),
        Error::AttributeMissing {
            attribute: "WEIGHTS_0"
        }
    );
}

#[test]
fn a_joint_past_the_palette_names_the_vertex() {
    let p = positions(3);
    let joints = [[0u16, 1, 0, 0], [0, 9, 0, 0], [0; 4]];
    let weights = [[0.5f32, 0.5, 0.0, 0.0]; 3];
    let input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    );
    assert_eq!(
        prepare(&input).unwrap_err(),
        Error::VertexJointOutOfRange {
            vertex: 1,
            joint: 9,
            joints: 8
        }
    );
}

#[test]
fn an_out_of_range_joint_with_zero_weight_is_ignored() {
    let p = positions(1);
    let joints = [[0u16, 200, 0, 0]];
    let weights = [[1.0f32, 0.0, 0.0, 0.0]];
    let input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    );
    assert_eq!(prepare(&input).unwrap().influence_histogram()[1], 1);
}

#[test]
fn negative_and_non_finite_weights_name_the_vertex() {
    let p = positions(2);
    let joints = [[0u8, 1, 0, 0]; 2];
    for bad in [-0.25f32, f32::NAN, f32::INFINITY] {
        let weights = [[1.0f32, 0.0, 0.0, 0.0], [0.5, bad, 0.0, 0.0]];
        let input = MeshInput::new(
            Attribute::vec3(&p),
            Attribute::joints_u8(&joints),
            Attribute::weights_f32(&weights),
        );
        match prepare(&input).unwrap_err() {
            Error::InvalidWeight { vertex: 1, weight } => {
                assert!(weight.to_bits() == bad.to_bits())
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
}

#[test]
fn weights_that_overflow_when_summed_are_invalid() {
    let p = positions(1);
    let joints = [[0u8, 1, 2, 3]];
    let weights = [[f32::MAX; 4]];
    let input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u8(&joints),
        Attribute::weights_f32(&weights),
    );
    assert!(matches!(
        prepare(&input).unwrap_err(),
        Error::InvalidWeight { vertex: 0, .. }
    ));
}

#[test]
fn zero_weights_cannot_be_normalized_but_can_be_kept() {
    let p = positions(2);
    let joints = [[0u8; 4]; 2];
    let weights = [[1.0f32, 0.0, 0.0, 0.0], [0.0; 4]];
    let input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u8(&joints),
        Attribute::weights_f32(&weights),
    );
    assert_eq!(
        prepare(&input).unwrap_err(),
        Error::ZeroWeights { vertex: 1 }
    );
    let keep = PrepareOptions {
        weights: WeightPolicy::Keep,
        ..PrepareOptions::new(8)
    };
    let mesh = SkinnedMesh::prepare(&input, &keep).unwrap();
    assert_eq!(mesh.influence_histogram()[0], 1);
    // A vertex with no weight collapses to the origin under linear blend skinning.
    let out = skin(&mesh, &[PaletteMatrix::IDENTITY; 8], Backend::Reference);
    assert_eq!(out[1], Vec3::ZERO);
    assert_eq!(out[0], p[0]);
}

fn skin(mesh: &SkinnedMesh, palette: &[PaletteMatrix], backend: Backend) -> Vec<Vec3> {
    let mut out = vec![Vec3::NAN; mesh.vertex_count()];
    let mut job = SkinningJob::new(
        mesh,
        palette,
        SkinOutput::Separate {
            positions: &mut out,
            normals: None,
            tangents: None,
        },
    );
    job.backend = backend;
    job.run().unwrap();
    out
}

fn random_palette(n: usize, rng: &mut Rng) -> (Vec<Mat4>, Vec<PaletteMatrix>) {
    let mats: Vec<Mat4> = (0..n)
        .map(|_| random_transform(rng, 0.8..1.2, -2.0..2.0))
        .collect();
    let palette = mats.iter().map(|m| PaletteMatrix::from_mat4(*m)).collect();
    (mats, palette)
}

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

fn tiny_mesh(with_normals: bool) -> (Vec<Vec3>, SkinnedMesh) {
    let p = positions(4);
    let j = [[0u8; 4]; 4];
    let w = [[1.0f32, 0.0, 0.0, 0.0]; 4];
    let mut input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u8(&j),
        Attribute::weights_f32(&w),
    );
    if with_normals {
        input.normals = Some(Attribute::vec3(&p));
    }
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(2)).unwrap();
    (p, mesh)
}

#[test]
fn the_palette_must_cover_the_mesh_joints() {
    let (_, mesh) = tiny_mesh(false);
    let mut out = vec![Vec3::ZERO; 4];
    let err = SkinningJob::new(
        &mesh,
        &[PaletteMatrix::IDENTITY; 1],
        SkinOutput::Separate {
            positions: &mut out,
            normals: None,
            tangents: None,
        },
    )
    .run()
    .unwrap_err();
    assert!(
        matches!(
            err,
            Error::CountMismatch {
                expected: 2,
                got: 1,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn output_lengths_must_match() {
    let (_, mesh) = tiny_mesh(true);
    let (mut p, mut n) = (vec![Vec3::ZERO; 4], vec![Vec3::ZERO; 3]);
    let err = SkinningJob::new(
        &mesh,
        &[PaletteMatrix::IDENTITY; 2],
        SkinOutput::Separate {
            positions: &mut p,
            normals: Some(&mut n),
            tangents: None,
        },
    )
    .validate()
    .unwrap_err();
    assert_eq!(
        err,
        Error::CountMismatch {
            what: "skinned normals",
            expected: 4,
            got: 3
        }
    );
}

#[test]
fn outputs_need_their_input_attributes() {
    let (_, mesh) = tiny_mesh(false);
    let (mut p, mut n) = (vec![Vec3::ZERO; 4], vec![Vec3::ZERO; 4]);
    let err = SkinningJob::new(
        &mesh,
        &[PaletteMatrix::IDENTITY; 2],
        SkinOutput::Separate {
            positions: &mut p,
            normals: Some(&mut n),
            tangents: None,
        },
    )
    .validate()
    .unwrap_err();
    assert_eq!(
        err,
        Error::AttributeMissing {
            attribute: "normals"
        }
    );
}

#[test]
fn interleaved_outputs_are_checked() {
    let (_, mesh) = tiny_mesh(true);
    let palette = [PaletteMatrix::IDENTITY; 2];
    let mut buf = vec![0u32; 4 * 8];
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buf);
    for (stride, normals, len, reason) in [
        (30, None, 120, "stride"),
        (24, Some(14), 96, "offset"),
        (24, Some(16), 96, "offset"),
        // An offset so large that offset + size overflows is outside the stride, not a wrap-around.
        (24, Some(usize::MAX - 3), 96, "offset"),
        // Normals at byte 4 would share floats with the position at 0.
        (16, Some(4), 64, "overlap"),
        (24, Some(8), 96, "overlap"),
        (24, Some(12), 90, "shorter"),
    ] {
        let err = SkinningJob::new(
            &mesh,
            &palette,
            SkinOutput::Interleaved {
                bytes: &mut bytes[..len],
                stride,
                positions: 0,
                normals,
                tangents: None,
            },
        )
        .validate()
        .unwrap_err();
        match err {
            Error::OutputLayout { reason: r } => assert!(r.contains(reason), "{r}"),
            other => panic!("{other:?}"),
        }
    }
    // A buffer that starts 2 bytes into an aligned one is not 4-byte aligned.
    let err = SkinningJob::new(
        &mesh,
        &palette,
        SkinOutput::Interleaved {
            bytes: &mut bytes[2..],
            stride: 12,
            positions: 0,
            normals: None,
            tangents: None,
        },
    )
    .validate()
    .unwrap_err();
    assert!(matches!(err, Error::OutputLayout { reason } if reason.contains("aligned")));
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

/// A mesh prepared against a huge palette bound builds its bone-major lists for the joints it uses
/// only, and a job with a palette shorter than the bound is refused.
#[cfg(feature = "experiments")]
#[test]
fn bone_major_lists_do_not_scale_with_the_palette_bound() {
    use ispc_skinning::experiments::{BoneMajorJob, BoneMajorMesh};
    let p = positions(3);
    let joints = [[2u16, 0, 0, 0]; 3];
    let weights = [[1.0f32, 0.0, 0.0, 0.0]; 3];
    let input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    );
    let bound = 1usize << 40;
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(bound)).unwrap();
    let lists = BoneMajorMesh::from_mesh(&mesh);
    assert_eq!(lists.joint_count(), bound);
    let palette = [PaletteMatrix::IDENTITY; 3];
    let mut out = [Vec3::ZERO; 3];
    assert_eq!(
        BoneMajorJob::new(&lists, &palette, &mut out).run(),
        Err(Error::CountMismatch {
            what: "palette entries (at least the mesh's joint count)",
            expected: bound,
            got: 3
        })
    );
}

/// A random mesh with `k` (1 to 16) normalized influences per vertex over 8 joints.
#[allow(clippy::type_complexity)]
fn compact_case(n: usize, k: usize, rng: &mut Rng) -> (Vec<Vec3>, Vec<[u16; 16]>, Vec<[f32; 16]>) {
    let p: Vec<Vec3> = (0..n).map(|_| random_vec3(rng, -2.0..2.0)).collect();
    let joints = (0..n)
        .map(|_| std::array::from_fn(|_| rng.below(8) as u16))
        .collect();
    let weights = (0..n)
        .map(|_| std::array::from_fn(|i| if i < k { rng.range(0.01, 1.0) } else { 0.0 }))
        .collect();
    (p, joints, weights)
}

/// Prepares 16 influences per vertex given as four JOINTS_n/WEIGHTS_n sets.
fn prepare_sets(
    p: &[Vec3],
    joints: &[[u16; 16]],
    weights: &[[f32; 16]],
    options: &PrepareOptions,
) -> Result<SkinnedMesh, Error> {
    let j: [Vec<[u16; 4]>; 4] = std::array::from_fn(|s| {
        joints
            .iter()
            .map(|j| std::array::from_fn(|i| j[4 * s + i]))
            .collect()
    });
    let w: [Vec<[f32; 4]>; 4] = std::array::from_fn(|s| {
        weights
            .iter()
            .map(|w| std::array::from_fn(|i| w[4 * s + i]))
            .collect()
    });
    let input = MeshInput {
        positions: Attribute::vec3(p),
        normals: None,
        tangents: None,
        joints: std::array::from_fn(|s| Some(Attribute::joints_u16(&j[s]))),
        weights: std::array::from_fn(|s| Some(Attribute::weights_f32(&w[s]))),
        influences: None,
    };
    SkinnedMesh::prepare(&input, options)
}

#[test]
fn compact_influences_stay_within_the_documented_accuracy() {
    // PrepareOptions::compact_influences: a normalized vertex's skinned position moves by at most
    // 1.5e-5 * sum_i |M_i p - M_0 p| (plus f32 rounding), on the reference and on the selected ISA.
    let mut rng = Rng::new(5);
    let (mats, palette) = random_palette(8, &mut rng);
    for k in 1..=16 {
        let (p, joints, weights) = compact_case(500, k, &mut rng);
        let exact = prepare_sets(&p, &joints, &weights, &PrepareOptions::new(8)).unwrap();
        let options = PrepareOptions {
            compact_influences: true,
            ..PrepareOptions::new(8)
        };
        let compact = prepare_sets(&p, &joints, &weights, &options).unwrap();
        let want = skin(&exact, &palette, Backend::Reference);
        let mut moved = 0;
        for backend in [Backend::Reference, Backend::Auto] {
            let got = skin(&compact, &palette, backend);
            for v in 0..p.len() {
                let carried: Vec<Vec3> = (0..k)
                    .map(|i| mats[joints[v][i] as usize].transform_point3(p[v]))
                    .collect();
                let spread: f32 = carried.iter().map(|c| (*c - carried[0]).length()).sum();
                let scale = carried
                    .iter()
                    .map(|c| c.abs().max_element())
                    .fold(0.0, f32::max);
                let bound = 1.5e-5 * spread + 16.0 * f32::EPSILON * scale;
                let diff = (got[v] - want[v]).abs().max_element();
                assert!(
                    diff <= bound,
                    "k={k} {backend:?} vertex {v}: moved by {diff}, bound {bound}"
                );
                moved += usize::from(diff > 0.0);
            }
        }
        // The weights really were quantized: some vertices with several influences moved.
        if k > 1 {
            assert!(moved > 0, "k={k}: no vertex changed");
        }
    }
}

#[test]
fn compact_influences_reject_weights_above_one() {
    let p = positions(2);
    let joints = [[0u8, 1, 0, 0]; 2];
    let weights = [[0.5f32, 0.5, 0.0, 0.0], [0.5, 1.5, 0.0, 0.0]];
    let input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u8(&joints),
        Attribute::weights_f32(&weights),
    );
    let keep = PrepareOptions {
        weights: WeightPolicy::Keep,
        compact_influences: true,
        ..PrepareOptions::new(8)
    };
    assert_eq!(
        SkinnedMesh::prepare(&input, &keep).unwrap_err(),
        Error::CompactWeight {
            vertex: 1,
            weight: 1.5
        }
    );
    // Normalized, the same weights fit.
    let normalize = PrepareOptions {
        compact_influences: true,
        ..PrepareOptions::new(8)
    };
    assert!(SkinnedMesh::prepare(&input, &normalize).is_ok());
}

#[test]
fn compact_rigid_vertices_stay_exact() {
    // One influence normalizes to weight 1, which unorm16 holds exactly (65535 * (1/65535) is 1 in f32),
    // so the rigid kernel still runs and the result equals the f32 mesh's bit for bit.
    let mut rng = Rng::new(9);
    let (_, palette) = random_palette(8, &mut rng);
    let (p, joints, weights) = compact_case(300, 1, &mut rng);
    let exact = prepare_sets(&p, &joints, &weights, &PrepareOptions::new(8)).unwrap();
    let options = PrepareOptions {
        compact_influences: true,
        ..PrepareOptions::new(8)
    };
    let compact = prepare_sets(&p, &joints, &weights, &options).unwrap();
    for backend in [Backend::Reference, Backend::Auto] {
        assert_eq!(
            skin(&compact, &palette, backend),
            skin(&exact, &palette, backend)
        );
    }
}

#[test]
fn compact_influences_halve_the_influence_bytes() {
    // SkinnedMesh::heap_bytes: a positions-only vertex holds 12 bytes of attributes, a 4-byte index and
    // a 1-byte influence count, plus 8 bytes per influence, or 4 when compact. One influence of weight 1 is rigid in both forms:
    // its joint alone, 4 bytes. Attributes and influences are padded to whole blocks of 16 vertices
    // (100 vertices take 112 places); the indices and counts are not. Each joint up to the largest
    // used keeps its bind box for pose bounds: 24 bytes. A vertex of 9 to 15 influences pays for the
    // count its kernel skins (12 or 16).
    let mut rng = Rng::new(11);
    let n = 100;
    let padded = 112;
    for k in 1..=16 {
        let (p, joints, weights) = compact_case(n, k, &mut rng);
        // 9 to 11 influences are stored as 12 and 13 to 15 as 16 (padded with zero weights).
        let stored = match k {
            9..=12 => 12,
            13..=16 => 16,
            _ => k,
        };
        let exact = prepare_sets(&p, &joints, &weights, &PrepareOptions::new(8)).unwrap();
        let options = PrepareOptions {
            compact_influences: true,
            ..PrepareOptions::new(8)
        };
        let compact = prepare_sets(&p, &joints, &weights, &options).unwrap();
        let per_influence = if k == 1 { 4 } else { 8 };
        let used = joints
            .iter()
            .zip(&weights)
            .flat_map(|(j, w)| j.iter().zip(w).filter(|(_, &w)| w > 0.0))
            .map(|(&j, _)| usize::from(j) + 1)
            .max()
            .unwrap_or(0);
        let boxes = 24 * used;
        assert_eq!(
            exact.heap_bytes(),
            padded * (12 + per_influence * stored) + 5 * n + boxes,
            "k={k}"
        );
        assert_eq!(
            compact.heap_bytes(),
            padded * (12 + 4 * stored) + 5 * n + boxes,
            "k={k}"
        );
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
