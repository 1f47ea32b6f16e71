//! The skinning job's rules: the palette must cover the mesh's joints, output lengths must match,
//! outputs need their input attributes, and interleaved outputs are checked for stride, offsets,
//! overlap, length and alignment.

use super::positions;
use glam::Vec3;
use ispc_skinning::{
    Attribute, Error, MeshInput, PaletteMatrix, PrepareOptions, SkinOutput, SkinnedMesh,
    SkinningJob,
};

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
