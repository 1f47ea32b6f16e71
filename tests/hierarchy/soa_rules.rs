//! The SoA entry point's rules (feature `experiments`); its kernels are checked on every ISA by the
//! parity harness. The reference backend gives the reference result, counts must match the skeleton,
//! an unavailable ISA is refused, and conversions between AoS and SoA matrices round-trip.

use super::{humanoid, pose};
use glam::{Mat4, Vec3};
use ispc_skinning::experiments::{local_to_model_soa, SoaMatrices, SoaMethod};
use ispc_skinning::reference::trs_matrix;
use ispc_skinning::{Backend, Error, Isa};

fn locals() -> Vec<Mat4> {
    let (t, q, sc) = pose(67);
    (0..67)
        .map(|j| Mat4::from_cols_array(&trs_matrix(t[j], q[j], sc[j])))
        .collect()
}

#[test]
fn the_reference_backend_gives_the_reference_result() {
    let s = humanoid();
    let locals = locals();
    let root = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
    let mut want = vec![Mat4::ZERO; 67];
    ispc_skinning::reference::local_to_model(s.level_parents(), &locals, &root, &mut want, 0..67);
    for method in [SoaMethod::Children, SoaMethod::Level] {
        let mut models = SoaMatrices::zeroed(67);
        local_to_model_soa(
            &s,
            &SoaMatrices::from_mat4(&locals),
            &root,
            &mut models,
            method,
            Backend::Reference,
        )
        .unwrap();
        let mut got = vec![Mat4::ZERO; 67];
        models.to_mat4(&mut got).unwrap();
        assert_eq!(got, want);
    }
}

#[test]
fn counts_must_match_the_skeleton() {
    let s = humanoid();
    let root = Mat4::IDENTITY;
    let mut models = SoaMatrices::zeroed(67);
    let short = SoaMatrices::zeroed(66);
    let err = local_to_model_soa(
        &s,
        &short,
        &root,
        &mut models,
        SoaMethod::Level,
        Backend::Auto,
    )
    .unwrap_err();
    assert_eq!(
        err,
        Error::CountMismatch {
            what: "local matrices",
            expected: 67,
            got: 66
        }
    );
    let mut long = SoaMatrices::zeroed(68);
    let locals = SoaMatrices::from_mat4(&locals());
    let err = local_to_model_soa(
        &s,
        &locals,
        &root,
        &mut long,
        SoaMethod::Children,
        Backend::Auto,
    )
    .unwrap_err();
    assert_eq!(
        err,
        Error::CountMismatch {
            what: "model matrices",
            expected: 67,
            got: 68
        }
    );
}

#[test]
fn an_unavailable_isa_is_rejected() {
    let s = humanoid();
    let locals = SoaMatrices::from_mat4(&locals());
    let mut models = SoaMatrices::zeroed(67);
    let foreign = if cfg!(target_arch = "aarch64") {
        Isa::Avx2
    } else {
        Isa::Neon
    };
    let err = local_to_model_soa(
        &s,
        &locals,
        &Mat4::IDENTITY,
        &mut models,
        SoaMethod::Level,
        foreign.into(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::IsaUnavailable { isa, .. } if isa == foreign));
}

#[test]
fn conversions_round_trip() {
    let locals = locals();
    let soa = SoaMatrices::from_mat4(&locals);
    assert_eq!(soa.len(), 67);
    let mut back = vec![Mat4::ZERO; 67];
    soa.to_mat4(&mut back).unwrap();
    assert_eq!(
        back, locals,
        "affine matrices survive AoS -> SoA -> AoS bit for bit"
    );
    assert!(matches!(
        soa.to_mat4(&mut back[1..]),
        Err(Error::CountMismatch { .. })
    ));
}
