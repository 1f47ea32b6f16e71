//! The safe API's rules: one test per invalid case, and the ISA selection rules.

mod common;

use glam::{Mat4, Vec3, Vec4};
use ispc_skinning::{transform_points, transform_points3, Backend, Error, Isa, Unavailable};

/// `Backend::Auto` as well as the reference and every ISA that runs here.
fn every_backend() -> Vec<Backend> {
    let mut b = vec![Backend::Auto];
    b.extend(common::backends());
    b
}

#[test]
fn output_shorter_than_input_is_a_length_mismatch() {
    let src = [Vec3::ONE; 5];
    for backend in every_backend() {
        let mut dst = [Vec4::ZERO; 4];
        let err = transform_points(backend, &Mat4::IDENTITY, &src, &mut dst).unwrap_err();
        assert_eq!(
            err,
            Error::LengthMismatch {
                input: 5,
                output: 4
            },
            "{backend:?}"
        );
        assert_eq!(
            dst,
            [Vec4::ZERO; 4],
            "{backend:?}: nothing may be written on error"
        );
    }
}

#[test]
fn output_longer_than_input_is_a_length_mismatch() {
    let src = [Vec3::ONE; 3];
    for backend in every_backend() {
        let mut dst = [Vec3::ZERO; 8];
        let err = transform_points3(backend, &Mat4::IDENTITY, &src, &mut dst).unwrap_err();
        assert_eq!(
            err,
            Error::LengthMismatch {
                input: 3,
                output: 8
            },
            "{backend:?}"
        );
        assert!(
            err.to_string().contains("input has 3 and the output 8"),
            "{err}"
        );
    }
}

#[test]
fn empty_input_is_fine_on_every_backend() {
    for backend in every_backend() {
        transform_points(backend, &Mat4::IDENTITY, &[], &mut []).unwrap();
        transform_points3(backend, &Mat4::IDENTITY, &[], &mut []).unwrap();
    }
}

#[test]
fn an_isa_of_another_architecture_is_not_compiled() {
    let foreign = if cfg!(target_arch = "aarch64") {
        Isa::Avx2
    } else {
        Isa::Neon
    };
    assert!(!foreign.is_compiled());
    assert!(!foreign.is_available());
    let err =
        transform_points(foreign, &Mat4::IDENTITY, &[Vec3::ONE], &mut [Vec4::ZERO]).unwrap_err();
    assert_eq!(
        err,
        Error::IsaUnavailable {
            isa: foreign,
            reason: Unavailable::NotCompiled
        }
    );
    assert!(err.to_string().contains("not compiled"), "{err}");
}

#[test]
fn an_unsupported_isa_is_an_error_never_an_illegal_instruction() {
    // On a CPU without some compiled ISA (for example AVX-512), asking for it must return the missing
    // features. Where the CPU has every compiled ISA there is nothing to check, and the test says so.
    let mut checked = 0;
    for isa in Isa::compiled() {
        if isa.is_available() {
            continue;
        }
        let err =
            transform_points(isa, &Mat4::IDENTITY, &[Vec3::ONE], &mut [Vec4::ZERO]).unwrap_err();
        match err {
            Error::IsaUnavailable {
                isa: got,
                reason: Unavailable::MissingCpuFeatures(missing),
            } => {
                assert_eq!(got, isa);
                assert!(!missing.is_empty());
            }
            other => panic!("{isa}: expected missing CPU features, got {other:?}"),
        }
        checked += 1;
    }
    if checked == 0 {
        println!("this CPU runs every compiled ISA; no unsupported ISA to ask for");
    }
}

#[test]
fn checked_constructors_agree_with_availability() {
    for (isa, ctor) in [
        (Isa::Sse4, Isa::sse4()),
        (Isa::Avx2, Isa::avx2()),
        (Isa::Avx512, Isa::avx512()),
        (Isa::Neon, Isa::neon()),
    ] {
        assert_eq!(ctor, isa.is_available().then_some(isa), "{isa}");
        assert_eq!(isa.runnable().is_ok(), isa.is_available(), "{isa}");
    }
}

#[test]
fn detect_returns_the_best_available_isa() {
    let available = Isa::available();
    assert_eq!(Isa::detect(), available.first().copied());
    for isa in &available {
        assert!(isa.is_compiled());
        assert!(isa.missing_cpu_features().is_empty(), "{isa}");
        assert!(isa.ispc_target().is_some(), "{isa}");
    }
    // Where ISPC kernels were built for this architecture, at least the baseline ISA must run here
    // (every x86-64 CPU this crate targets has SSE4.2, every aarch64 CPU has NEON).
    if !Isa::compiled().is_empty() {
        assert!(
            Isa::detect().is_some(),
            "compiled {:?} but none available",
            Isa::compiled()
        );
    }
}

#[test]
fn isa_names_round_trip() {
    for isa in Isa::ALL {
        assert_eq!(Isa::from_name(isa.name()), Some(isa));
        assert_eq!(isa.name().to_uppercase().parse::<Isa>().unwrap(), isa);
    }
    assert_eq!(
        "sse2".parse::<Isa>().unwrap_err(),
        Error::UnknownIsaName("sse2".into())
    );
}

#[test]
fn env_override_rules() {
    assert_eq!(
        Backend::from_env_value(Some("reference")).unwrap(),
        Backend::Reference
    );
    let auto = Isa::detect().map_or(Backend::Reference, Backend::Isa);
    assert_eq!(Backend::from_env_value(None).unwrap(), auto);
    assert_eq!(Backend::from_env_value(Some("")).unwrap(), auto);
    assert_eq!(Backend::from_env_value(Some("AUTO")).unwrap(), auto);
    assert_eq!(
        Backend::from_env_value(Some("mmx")).unwrap_err(),
        Error::UnknownIsaName("mmx".into())
    );
    for isa in Isa::ALL {
        let got = Backend::from_env_value(Some(isa.name()));
        if isa.is_available() {
            assert_eq!(got.unwrap(), Backend::Isa(isa));
        } else {
            assert!(matches!(got.unwrap_err(), Error::IsaUnavailable { isa: i, .. } if i == isa));
        }
    }
}

#[test]
fn forcing_the_reference_gives_the_reference_result() {
    let m = Mat4::from_cols_array(&[
        1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12., 13., 14., 15., 16.,
    ]);
    let src = [Vec3::new(1.0, -2.0, 0.5)];
    let mut dst = [Vec4::ZERO];
    transform_points(Backend::Reference, &m, &src, &mut dst).unwrap();
    // Column-major: result = x * col0 + y * col1 + z * col2 + col3.
    let want = Vec4::new(1., 2., 3., 4.) - 2.0 * Vec4::new(5., 6., 7., 8.)
        + 0.5 * Vec4::new(9., 10., 11., 12.)
        + Vec4::new(13., 14., 15., 16.);
    assert_eq!(dst[0], want);
}

#[test]
fn messages_count_with_the_right_plural() {
    let one = Error::JointOutOfRange {
        joint: 4,
        joints: 1,
    };
    assert_eq!(
        one.to_string(),
        "joint out of range: joint 4 given, but the skeleton has 1 joint"
    );
    let many = Error::InstanceOutOfRange {
        instance: 9,
        instances: 3,
    };
    assert_eq!(
        many.to_string(),
        "instance out of range: instance 9 given, but the crowd has 3 instances"
    );
    let count = Error::CountMismatch {
        what: "palette entries",
        expected: 3,
        got: 2,
    };
    assert_eq!(
        count.to_string(),
        "count mismatch: palette entries: 3 expected, but 2 given"
    );
}

#[cfg(feature = "gltf")]
#[test]
fn a_missing_clip_counts_the_clips_with_the_right_plural() {
    let e = ispc_skinning::gltf::GltfError::ClipOutOfRange { clip: 2, clips: 1 };
    assert_eq!(e.to_string(), "clip 2 does not exist: the file has 1 clip");
}

/// `Backend::Auto` per kernel family: `ISPC_SKINNING_ISA` when it forces one backend (CI runs this
/// file with `reference` too), else the widest ISA this CPU runs, or the narrower one a row of
/// `AUTO_TABLE` names for this CPU and family. An explicit ISA and the reference stay themselves.
#[test]
fn auto_runs_each_kernel_family_on_the_widest_isa_or_the_tables_narrower_one() {
    use ispc_skinning::{CpuIdentity, KernelFamily, AUTO_TABLE};
    let forced = std::env::var("ISPC_SKINNING_ISA")
        .is_ok_and(|v| !v.trim().is_empty() && !v.trim().eq_ignore_ascii_case("auto"));
    let selected = Backend::selected().unwrap();
    let cpu = CpuIdentity::detect();
    for family in KernelFamily::ALL {
        let chosen = Backend::Auto.for_kernel(family).unwrap();
        match selected {
            Backend::Isa(widest) if !forced => {
                let row = AUTO_TABLE.iter().find(|r| {
                    cpu.is_some_and(|c| c.vendor == r.vendor && c.family == r.family)
                        && r.from == widest
                        && r.kernels.contains(&family)
                        && r.to.is_available()
                });
                let want = row.map_or(widest, |r| r.to);
                assert_eq!(chosen, Backend::Isa(want), "{family:?} on {cpu:?}");
            }
            other => assert_eq!(chosen, other, "{family:?}: forced or no ISA"),
        }
        assert_eq!(
            Backend::Reference.for_kernel(family).unwrap(),
            Backend::Reference
        );
        for isa in Isa::available() {
            assert_eq!(
                Backend::Isa(isa).for_kernel(family).unwrap(),
                Backend::Isa(isa)
            );
        }
        for isa in Isa::ALL.into_iter().filter(|i| !i.is_available()) {
            assert!(matches!(
                Backend::Isa(isa).for_kernel(family),
                Err(Error::IsaUnavailable { .. })
            ));
        }
    }
}
