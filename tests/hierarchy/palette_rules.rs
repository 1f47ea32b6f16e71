//! The rules of `PaletteJob`: the palette length must match the inverse binds, a joint remap must
//! have one entry per skin joint and name joints in range, without a remap there must be a model per
//! skin joint, and the entries are 64-byte aligned rows of model times inverse bind.

use glam::Mat4;
use ispc_skinning::{Error, PaletteJob, PaletteMatrix};

#[test]
fn palette_length_must_match_inverse_binds() {
    let models = [Mat4::IDENTITY; 4];
    let ib = [Mat4::IDENTITY; 3];
    let mut palette = [PaletteMatrix::IDENTITY; 2];
    let err = PaletteJob::new(&models, &ib, &mut palette)
        .run()
        .unwrap_err();
    assert_eq!(
        err,
        Error::CountMismatch {
            what: "palette entries",
            expected: 3,
            got: 2
        }
    );
}

#[test]
fn remap_length_must_match() {
    let models = [Mat4::IDENTITY; 4];
    let ib = [Mat4::IDENTITY; 3];
    let mut palette = [PaletteMatrix::IDENTITY; 3];
    let joints = [0usize, 1];
    let mut job = PaletteJob::new(&models, &ib, &mut palette);
    job.joints = Some(&joints);
    assert_eq!(
        job.validate().unwrap_err(),
        Error::CountMismatch {
            what: "skin joint remap",
            expected: 3,
            got: 2
        }
    );
}

#[test]
fn remapped_joint_out_of_range_names_the_skin_joint() {
    let models = [Mat4::IDENTITY; 4];
    let ib = [Mat4::IDENTITY; 3];
    let mut palette = [PaletteMatrix::IDENTITY; 3];
    let joints = [0usize, 9, 1];
    let mut job = PaletteJob::new(&models, &ib, &mut palette);
    job.joints = Some(&joints);
    assert_eq!(
        job.run().unwrap_err(),
        Error::SkinJointOutOfRange {
            skin_joint: 1,
            joint: 9,
            joints: 4
        }
    );
}

#[test]
fn without_remap_there_must_be_a_model_per_skin_joint() {
    let models = [Mat4::IDENTITY; 2];
    let ib = [Mat4::IDENTITY; 3];
    let mut palette = [PaletteMatrix::IDENTITY; 3];
    let err = PaletteJob::new(&models, &ib, &mut palette)
        .validate()
        .unwrap_err();
    assert_eq!(
        err,
        Error::CountMismatch {
            what: "model matrices",
            expected: 3,
            got: 2
        }
    );
}

#[test]
fn entries_are_aligned_rows_of_the_product() {
    assert_eq!(std::mem::align_of::<PaletteMatrix>(), 64);
    let m = Mat4::from_translation(glam::Vec3::new(1.0, 2.0, 3.0));
    let ib = Mat4::from_scale(glam::Vec3::splat(2.0));
    let mut palette = [PaletteMatrix::IDENTITY; 1];
    PaletteJob::new(&[m], &[ib], &mut palette).run().unwrap();
    assert_eq!(
        palette[0].rows,
        [
            [2.0, 0.0, 0.0, 1.0],
            [0.0, 2.0, 0.0, 2.0],
            [0.0, 0.0, 2.0, 3.0],
            [0.0, 0.0, 0.0, 1.0]
        ]
    );
    assert_eq!(palette[0].to_mat4(), m * ib);
    assert_eq!(PaletteMatrix::from_mat4(m * ib), palette[0]);
    assert_eq!(palette.as_ptr() as usize % 64, 0);
}
