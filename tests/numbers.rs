//! The numeric rules (docs/DESIGN.md, "Numeric rules"): every float an entry point takes is finite,
//! rotations have a squared length that is a normal float, and no call returns `Ok` with NaN or an
//! infinity made from finite input. Each test here failed on b8e69ac (it returned `Ok` with NaN or inf,
//! or accepted the value) and runs on the reference and on every ISA this CPU has.

mod common;

use common::backends;
use ispc_skinning::glam::{Mat4, Quat, Vec3, Vec4};
use ispc_skinning::{
    morph_floats, transform_points, Backend, BlendLayer, BlendingJob, Character, CharacterSkin,
    CrowdBlendLayer, CrowdBlendingJob, Error, Frame, LocalToModelJob, Locals, MeshInput,
    MorphTargets, PaletteJob, PaletteMatrix, PrepareOptions, Skeleton, SkinOutput, SkinnedMesh,
    SkinningJob, Trs, TrsMut,
};

/// Whether every float of `xs` is finite.
fn finite(xs: &[f32]) -> bool {
    xs.iter().all(|x| x.is_finite())
}

fn chain(n: usize) -> Skeleton {
    let parents: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
    Skeleton::from_parents(&parents).unwrap()
}

fn ltm(backend: Backend, t: &[Vec3], q: &[Quat], s: &[Vec3]) -> (Result<(), Error>, Vec<Mat4>) {
    let skeleton = chain(t.len());
    let mut models = vec![Mat4::IDENTITY; t.len()];
    let r = LocalToModelJob::new(&skeleton, Locals::trs(t, q, s), &mut models)
        .backend(backend)
        .run()
        .map(|_| ());
    (r, models)
}

/// Quaternions whose squared length under- or overflows f32 gave NaN model matrices on every backend;
/// now they are refused, naming the joint, and every length whose square is normal works exactly as
/// its unit quaternion does.
#[test]
fn rotations_whose_squared_length_is_not_normal_are_refused() {
    let t = [Vec3::ZERO, Vec3::X, Vec3::Y];
    let s = [Vec3::ONE; 3];
    for backend in backends() {
        for bad in [
            Quat::from_xyzw(1e-20, 0.0, 0.0, 0.0),
            Quat::from_xyzw(0.0, 1e20, 0.0, 0.0),
            Quat::from_xyzw(0.0, 0.0, 1e-30, 0.0),
            Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            Quat::from_xyzw(3e38, 3e38, 0.0, 0.0),
        ] {
            let q = [Quat::IDENTITY, bad, Quat::IDENTITY];
            let (r, models) = ltm(backend, &t, &q, &s);
            assert!(
                matches!(r, Err(Error::RotationLength { index: 1, .. })),
                "{backend:?} {bad:?}: {r:?}, models finite: {}",
                models.iter().all(|m| m.is_finite())
            );
            let skeleton = chain(3);
            let mut m = vec![Mat4::IDENTITY; 3];
            let job = LocalToModelJob::new(&skeleton, Locals::trs(&t, &q, &s), &mut m);
            assert!(matches!(
                job.validate(),
                Err(Error::RotationLength { index: 1, .. })
            ));
        }
        // Tiny and huge lengths with a normal square are the rotation of q / |q|.
        let unit = Quat::from_rotation_z(0.7);
        for scale in [1.2e-19f32, 1e-10, 1e10, 1.8e19] {
            let q = [Quat::IDENTITY, unit * scale, Quat::IDENTITY];
            let (r, models) = ltm(backend, &t, &q, &s);
            assert_eq!(r, Ok(()), "{backend:?} x{scale}");
            let (_, expected) = ltm(backend, &t, &[Quat::IDENTITY, unit, Quat::IDENTITY], &s);
            for (a, b) in models.iter().zip(&expected) {
                assert!(a.abs_diff_eq(*b, 1e-5), "{backend:?} x{scale}: {a} vs {b}");
            }
        }
    }
}

/// A NaN or infinite local, root or matrix is named; so is the overflow of finite values.
#[test]
fn local_to_model_names_bad_floats_and_overflow() {
    let q = [Quat::IDENTITY; 3];
    let s = [Vec3::ONE; 3];
    for backend in backends() {
        let t = [Vec3::ZERO, Vec3::new(0.0, f32::NAN, 0.0), Vec3::ZERO];
        let (r, _) = ltm(backend, &t, &q, &s);
        assert!(
            matches!(
                r,
                Err(Error::NotFinite {
                    what: "local translations",
                    index: 1,
                    ..
                })
            ),
            "{backend:?}: {r:?}"
        );
        let scales = [Vec3::ONE, Vec3::ONE, Vec3::splat(f32::INFINITY)];
        let (r, _) = ltm(backend, &[Vec3::ZERO; 3], &q, &scales);
        assert!(
            matches!(
                r,
                Err(Error::NotFinite {
                    what: "local scales",
                    index: 2,
                    ..
                })
            ),
            "{backend:?}: {r:?}"
        );
        // Finite, but 3e38 + 3e38 overflows.
        let t = [Vec3::splat(3e38), Vec3::splat(3e38), Vec3::ZERO];
        let (r, _) = ltm(backend, &t, &q, &s);
        assert!(
            matches!(
                r,
                Err(Error::ResultNotFinite {
                    stage: "local to model",
                    index: 1,
                    ..
                })
            ),
            "{backend:?}: {r:?}"
        );
        let skeleton = chain(3);
        let mut models = vec![Mat4::IDENTITY; 3];
        let mut root = Mat4::IDENTITY;
        root.w_axis.x = f32::NAN;
        let r = LocalToModelJob::new(
            &skeleton,
            Locals::trs(&[Vec3::ZERO; 3], &q, &s),
            &mut models,
        )
        .root(root)
        .backend(backend)
        .run();
        assert!(
            matches!(
                r,
                Err(Error::NotFinite {
                    what: "root matrix",
                    ..
                })
            ),
            "{r:?}"
        );
        let mut locals = [Mat4::IDENTITY; 3];
        locals[2].x_axis.y = f32::NEG_INFINITY;
        let r = LocalToModelJob::new(&skeleton, &locals[..], &mut models)
            .backend(backend)
            .run();
        assert!(
            matches!(
                r,
                Err(Error::NotFinite {
                    what: "local matrices",
                    index: 2,
                    ..
                })
            ),
            "{backend:?}: {r:?}"
        );
    }
}

/// A one-joint, one-vertex character whose rest pose, skin and mesh are given.
fn character(
    rest: (Vec3, Quat, Vec3),
    inverse_bind: Mat4,
    position: Vec3,
) -> Result<Character, Error> {
    let skeleton = Skeleton::from_parents(&[None])?;
    let skin = CharacterSkin {
        joints: vec![0],
        inverse_binds: vec![inverse_bind],
    };
    let positions = [position];
    let input = MeshInput::from_influences(&positions, &[[0u16]], &[[1.0f32]]);
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::default())?;
    Character::new(
        skeleton,
        vec![rest.0],
        vec![rest.1],
        vec![rest.2],
        vec![skin],
        vec![(mesh, 0)],
    )
}

/// The runtime paths apply the importer's rules: a character, skin or mesh with NaN is refused where it
/// is made, and a zero bind scale (no inverse) is a typed error, not NaN inverse binds.
#[test]
fn characters_skins_and_meshes_refuse_what_the_importer_refuses() {
    let rest = (Vec3::ZERO, Quat::IDENTITY, Vec3::ONE);
    assert!(character(rest, Mat4::IDENTITY, Vec3::ONE).is_ok());
    let r = character(
        (Vec3::new(f32::NAN, 0.0, 0.0), rest.1, rest.2),
        Mat4::IDENTITY,
        Vec3::ONE,
    );
    assert!(
        matches!(
            r,
            Err(Error::NotFinite {
                what: "rest translations",
                index: 0,
                ..
            })
        ),
        "{r:?}"
    );
    let r = character(
        (rest.0, Quat::from_xyzw(0.0, 0.0, 0.0, 1e-30), rest.2),
        Mat4::IDENTITY,
        Vec3::ONE,
    );
    assert!(
        matches!(
            r,
            Err(Error::RotationLength {
                what: "rest rotations",
                ..
            })
        ),
        "{r:?}"
    );
    let r = character(rest, Mat4::from_cols_array(&[f32::NAN; 16]), Vec3::ONE);
    assert!(
        matches!(
            r,
            Err(Error::NotFinite {
                what: "skin inverse bind matrices",
                ..
            })
        ),
        "{r:?}"
    );
    let r = character(rest, Mat4::IDENTITY, Vec3::new(0.0, f32::INFINITY, 0.0));
    assert!(
        matches!(
            r,
            Err(Error::NotFinite {
                what: "positions",
                index: 0,
                ..
            })
        ),
        "{r:?}"
    );

    let skeleton = chain(2);
    let t = [Vec3::ZERO, Vec3::X];
    let q = [Quat::IDENTITY; 2];
    let r =
        CharacterSkin::from_bind_pose(&skeleton, &t, &q, &[Vec3::ONE, Vec3::new(1.0, 0.0, 1.0)]);
    assert!(matches!(r, Err(Error::Singular { index: 1, .. })), "{r:?}");
    let r = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &[Vec3::ZERO, Vec3::ONE]);
    assert!(matches!(r, Err(Error::Singular { index: 0, .. })), "{r:?}");
    let r = CharacterSkin::from_bind_pose(
        &skeleton,
        &t,
        &[Quat::IDENTITY, Quat::from_xyzw(0.0, 1e-25, 0.0, 0.0)],
        &[Vec3::ONE; 2],
    );
    assert!(
        matches!(
            r,
            Err(Error::RotationLength {
                what: "bind rotations",
                index: 1,
                ..
            })
        ),
        "{r:?}"
    );
}

/// Frames refuse bad poses and morph weights where they are set, naming your joint; a pose that
/// overflows is refused by the stage, never returned as NaN.
#[test]
fn frames_refuse_bad_poses_and_weights_and_never_return_nan() {
    let rest = (Vec3::ZERO, Quat::IDENTITY, Vec3::ONE);
    let c = character(rest, Mat4::IDENTITY, Vec3::splat(1e20)).unwrap();
    for backend in backends() {
        let mut frame: Frame = c.frame_buffers().backend(backend);
        let r = frame.set_local(
            0,
            Vec3::ZERO,
            Quat::from_xyzw(1e20, 0.0, 0.0, 0.0),
            Vec3::ONE,
        );
        assert!(
            matches!(r, Err(Error::RotationLength { index: 0, .. })),
            "{r:?}"
        );
        let r = frame.set_local(0, Vec3::ZERO, Quat::IDENTITY, Vec3::new(1.0, f32::NAN, 1.0));
        assert!(
            matches!(
                r,
                Err(Error::NotFinite {
                    what: "local scales",
                    index: 0,
                    ..
                })
            ),
            "{r:?}"
        );
        let r = frame.set_pose(
            &[Vec3::splat(f32::INFINITY)],
            &[Quat::IDENTITY],
            &[Vec3::ONE],
        );
        assert!(
            matches!(
                r,
                Err(Error::NotFinite {
                    what: "local translations",
                    ..
                })
            ),
            "{r:?}"
        );
        // A scale of 1e20 on a vertex at 1e20 overflows in the skin stage.
        frame
            .set_local(0, Vec3::ZERO, Quat::IDENTITY, Vec3::splat(1e20))
            .unwrap();
        let r = c.evaluate(&mut frame);
        assert!(
            matches!(
                r,
                Err(Error::ResultNotFinite {
                    stage: "skinning",
                    ..
                })
            ),
            "{backend:?}: {r:?}"
        );
        // A root of NaN (the frame's public field) is named by the stage.
        frame.set_local(0, rest.0, rest.1, rest.2).unwrap();
        frame.root = Mat4::from_cols_array(&[f32::NAN; 16]);
        let r = c.evaluate(&mut frame);
        assert!(
            matches!(
                r,
                Err(Error::NotFinite {
                    what: "root matrix",
                    ..
                })
            ),
            "{r:?}"
        );
        frame.root = Mat4::IDENTITY;
        assert_eq!(c.evaluate(&mut frame), Ok(()));
        assert!(frame
            .meshes()
            .iter()
            .all(|m| m.positions.iter().all(|p| p.is_finite())));
    }
}

/// Morph weights of NaN or infinity were never checked and made every vertex NaN; finite weights
/// whose products overflow are refused too.
#[test]
fn morph_weights_are_checked_and_overflow_is_refused() {
    for backend in backends() {
        let (base, delta) = ([1.0f32, 2.0, 3.0], [1.0f32, 0.0, 1e30]);
        let mut out = [0.0f32; 3];
        for w in [f32::NAN, f32::INFINITY] {
            let r = morph_floats(backend, &base, &[&delta], &[w], &mut out);
            assert!(
                matches!(
                    r,
                    Err(Error::NotFinite {
                        what: "morph weights",
                        ..
                    })
                ),
                "{r:?}"
            );
        }
        let r = morph_floats(backend, &base, &[&delta], &[1e30], &mut out);
        assert!(
            matches!(
                r,
                Err(Error::ResultNotFinite {
                    stage: "morph",
                    index: 2,
                    ..
                })
            ),
            "{backend:?}: {r:?}"
        );
        assert_eq!(
            morph_floats(backend, &base, &[&delta], &[1e-8], &mut out),
            Ok(())
        );
        assert!(finite(&out));
    }
    let r = MorphTargets::new(1, vec![Some(vec![Vec3::NAN])], vec![None], vec![None]);
    assert!(matches!(r, Err(Error::NotFinite { .. })), "{r:?}");

    let rest = (Vec3::ZERO, Quat::IDENTITY, Vec3::ONE);
    let c = character(rest, Mat4::IDENTITY, Vec3::ONE).unwrap();
    let targets = MorphTargets::new(
        1,
        vec![Some(vec![Vec3::splat(1e30)])],
        vec![None],
        vec![None],
    )
    .unwrap();
    let c = c.with_mesh_morph_targets(0, targets).unwrap();
    for backend in backends() {
        let mut frame = c.frame_buffers().backend(backend);
        for w in [f32::NAN, f32::NEG_INFINITY] {
            let r = frame.set_mesh_weights(0, &[w]);
            assert!(
                matches!(
                    r,
                    Err(Error::NotFinite {
                        what: "morph weights",
                        ..
                    })
                ),
                "{r:?}"
            );
        }
        frame.set_mesh_weights(0, &[1e30]).unwrap();
        let r = c.evaluate(&mut frame);
        assert!(
            matches!(r, Err(Error::ResultNotFinite { .. })),
            "{backend:?}: {r:?}"
        );
        frame.set_mesh_weights(0, &[1e-30]).unwrap();
        assert_eq!(c.evaluate(&mut frame), Ok(()));
        assert!(frame.meshes()[0].positions.iter().all(|p| p.is_finite()));
    }
}

fn blend(
    backend: Backend,
    layers: &[BlendLayer<'_>],
    threshold: f32,
) -> (Result<(), Error>, Vec<Vec3>) {
    let skeleton = chain(2);
    let (t, q, s) = ([Vec3::ONE; 2], [Quat::IDENTITY; 2], [Vec3::ONE; 2]);
    let (mut ot, mut oq, mut os) = ([Vec3::ZERO; 2], [Quat::IDENTITY; 2], [Vec3::ZERO; 2]);
    let r = BlendingJob::new(
        &skeleton,
        Trs::new(&t, &q, &s),
        TrsMut::new(&mut ot, &mut oq, &mut os),
    )
    .layers(layers)
    .threshold(threshold)
    .backend(backend)
    .run();
    (r, ot.to_vec())
}

/// A denormal threshold turned the rest pose to inf; weights whose sum overflows gave NaN; the crowd
/// job accepted an instance weight times joint weight that overflows, which the single job refuses.
#[test]
fn blend_thresholds_weights_and_sums_are_normal_and_finite() {
    let (t, q, s) = ([Vec3::splat(2.0); 2], [Quat::IDENTITY; 2], [Vec3::ONE; 2]);
    let pose = Trs::new(&t, &q, &s);
    for backend in backends() {
        for threshold in [1e-40f32, 0.0, -1.0, f32::NAN, f32::INFINITY] {
            let (r, _) = blend(backend, &[], threshold);
            assert!(
                matches!(r, Err(Error::BlendThreshold { .. })),
                "{threshold}: {r:?}"
            );
        }
        let (r, out) = blend(backend, &[], f32::MIN_POSITIVE);
        assert_eq!(r, Ok(()));
        assert!(out.iter().all(|v| v.is_finite()));
        let big = [BlendLayer::new(pose, 3e38), BlendLayer::new(pose, 3e38)];
        let (r, _) = blend(backend, &big, 0.1);
        assert!(
            matches!(
                r,
                Err(Error::BlendWeightSum {
                    joint: 0,
                    instance: None
                })
            ),
            "{r:?}"
        );
        let (r, _) = blend(backend, &[BlendLayer::new(pose, 1e-40)], 0.1);
        assert!(matches!(r, Err(Error::BlendWeight { .. })), "{r:?}");
        let nan = [Vec3::NAN; 2];
        let (r, _) = blend(
            backend,
            &[BlendLayer::new(Trs::new(&nan, &q, &s), 1.0)],
            0.1,
        );
        assert!(
            matches!(
                r,
                Err(Error::BlendValue {
                    layer: Some(0),
                    stream: "translations",
                    ..
                })
            ),
            "{r:?}"
        );
        // Finite translations whose weighted sum overflows.
        let huge = [Vec3::splat(3e38); 2];
        let layers = [
            BlendLayer::new(Trs::new(&huge, &q, &s), 1.0),
            BlendLayer::new(Trs::new(&huge, &q, &s), 1.0),
        ];
        let (r, _) = blend(backend, &layers, 0.1);
        assert!(
            matches!(
                r,
                Err(Error::ResultNotFinite {
                    stage: "blending",
                    ..
                })
            ),
            "{r:?}"
        );

        // The crowd: an instance weight of 1e30 on a joint weight of 1e30.
        let skeleton = chain(2);
        let (ct, cq, cs) = ([Vec3::ONE; 4], [Quat::IDENTITY; 4], [Vec3::ONE; 4]);
        let joint_weights = [1.0f32, 1e30];
        let weights = [1.0f32, 1e30];
        let layer = [
            CrowdBlendLayer::new(Trs::new(&ct, &cq, &cs), &weights).joint_weights(&joint_weights)
        ];
        let (mut ot, mut oq, mut os) = ([Vec3::ZERO; 4], [Quat::IDENTITY; 4], [Vec3::ZERO; 4]);
        let r = CrowdBlendingJob::new(
            &skeleton,
            2,
            Trs::new(&t, &q, &s),
            TrsMut::new(&mut ot, &mut oq, &mut os),
        )
        .layers(&layer)
        .backend(backend)
        .run();
        assert!(
            matches!(
                r,
                Err(Error::BlendWeightSum {
                    joint: 1,
                    instance: Some(1)
                })
            ),
            "{backend:?}: {r:?}"
        );
    }
}

/// Palettes, skinning and the point transform refuse NaN inputs and finite ones that overflow.
#[test]
fn palettes_skinning_and_transforms_never_return_nan() {
    for backend in backends() {
        let models = [Mat4::from_scale(Vec3::splat(1e30))];
        let mut palette = [PaletteMatrix::IDENTITY];
        let r = PaletteJob::new(
            &models,
            &[Mat4::from_scale(Vec3::splat(1e30))],
            &mut palette,
        )
        .backend(backend)
        .run();
        assert!(
            matches!(
                r,
                Err(Error::ResultNotFinite {
                    stage: "palette",
                    ..
                })
            ),
            "{r:?}"
        );
        let r = PaletteJob::new(
            &models,
            &[Mat4::from_cols_array(&[f32::NAN; 16])],
            &mut palette,
        )
        .backend(backend)
        .run();
        assert!(
            matches!(
                r,
                Err(Error::NotFinite {
                    what: "inverse bind matrices",
                    ..
                })
            ),
            "{r:?}"
        );

        let positions = [Vec3::splat(1e20), Vec3::ONE];
        let input = MeshInput::from_influences(&positions, &[[0u16], [0]], &[[1.0f32], [1.0]]);
        let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::default()).unwrap();
        let mut out = [Vec3::ZERO; 2];
        let big = [PaletteMatrix::from_mat4(Mat4::from_scale(Vec3::splat(
            1e20,
        )))];
        let r = SkinningJob::new(&mesh, &big, SkinOutput::positions(&mut out))
            .backend(backend)
            .run();
        assert!(
            matches!(
                r,
                Err(Error::ResultNotFinite {
                    stage: "skinning",
                    index: 0,
                    ..
                })
            ),
            "{r:?}"
        );
        let nan = [PaletteMatrix::from_mat4(Mat4::from_cols_array(
            &[f32::NAN; 16],
        ))];
        let r = SkinningJob::new(&mesh, &nan, SkinOutput::positions(&mut out))
            .backend(backend)
            .run();
        assert!(
            matches!(
                r,
                Err(Error::NotFinite {
                    what: "palette",
                    index: 0,
                    ..
                })
            ),
            "{r:?}"
        );
        let ok = [PaletteMatrix::from_mat4(Mat4::from_scale(Vec3::splat(
            1e10,
        )))];
        let r = SkinningJob::new(&mesh, &ok, SkinOutput::positions(&mut out))
            .backend(backend)
            .run();
        assert_eq!(r, Ok(()));
        assert!(out.iter().all(|p| p.is_finite()));

        let mut dst = [Vec4::ZERO; 2];
        let m = Mat4::from_scale(Vec3::splat(1e30));
        let r = transform_points(backend, &m, &[Vec3::ONE, Vec3::splat(1e10)], &mut dst);
        assert!(
            matches!(
                r,
                Err(Error::ResultNotFinite {
                    stage: "transform",
                    index: 1,
                    ..
                })
            ),
            "{r:?}"
        );
        let r = transform_points(backend, &Mat4::IDENTITY, &[Vec3::ONE, Vec3::NAN], &mut dst);
        assert!(
            matches!(
                r,
                Err(Error::NotFinite {
                    what: "points",
                    index: 1,
                    ..
                })
            ),
            "{r:?}"
        );
    }
}
