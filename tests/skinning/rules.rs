//! The rules of `SkinnedMesh::prepare`, one test each: the vertex limit (decided by the count alone),
//! attribute formats, counts and strides, joints and weights in pairs, joints past the palette (and
//! out-of-range joints of zero weight, which are ignored), negative, non-finite and overflowing
//! weights, zero weights (refused when normalizing, kept by `WeightPolicy::Keep`), and, with the
//! `experiments` feature, bone-major lists that do not grow with the palette bound.

use super::{positions, prepare, skin};
use glam::Vec3;
use ispc_skinning::Format;
use ispc_skinning::{
    Attribute, Backend, Error, MeshInput, PaletteMatrix, PrepareOptions, SkinnedMesh, WeightPolicy,
};

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
