//! Dual-quaternion skinning: the palette's decomposition, what dual quaternions do that linear blending
//! cannot (no collapse where joints twist), their agreement with linear blending for one influence, the
//! sign of an entry, and every rule, on every backend (tests/isa_parity/skin_dq.rs compares the ISAs with
//! the reference on random meshes).

mod common;

use common::{backends, random_transform, random_vec3, Rng};
use glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    dual_quat_palette, Backend, DualQuatEntry, Error, MeshInput, PaletteMatrix, PrepareOptions,
    SkinOutput, SkinnedMesh, SkinningJob, WeightPolicy, DUAL_QUAT_RIGID_TOLERANCE,
};

/// The entries of a palette, unwrapped.
fn entries(pal: &[PaletteMatrix]) -> Vec<DualQuatEntry> {
    let mut dq = vec![DualQuatEntry::IDENTITY; pal.len()];
    dual_quat_palette(pal, &mut dq).unwrap();
    dq
}

/// M p against R (S p) + t from the entry, relative to |M| |p|.
fn worst_reconstruction(m: Mat4) -> f32 {
    let e = DualQuatEntry::from_palette(&PaletteMatrix::from_mat4(m));
    let scale = m.to_cols_array().iter().fold(0.0f32, |a, x| a.max(x.abs()));
    let mut rng = Rng::new(3);
    (0..16)
        .map(|_| {
            let p = random_vec3(&mut rng, -2.0..2.0);
            let want = m.transform_point3(p);
            let got = e.real() * (e.scale_shear() * p) + e.translation();
            (got - want).abs().max_element() / (scale * 2.0).max(1e-30)
        })
        .fold(0.0, f32::max)
}

#[test]
fn an_entry_reproduces_its_palette_matrix() {
    let mut rng = Rng::new(11);
    let mut cases: Vec<(String, Mat4)> = Vec::new();
    for i in 0..200 {
        // Rotation times non-uniform scale; products of two (shear); mirrored; a zero scale.
        let a = random_transform(&mut rng, 0.3..3.0, -5.0..5.0);
        let b = random_transform(&mut rng, 0.3..3.0, -5.0..5.0);
        cases.push((format!("trs {i}"), a));
        cases.push((format!("sheared {i}"), a * b));
        cases.push((
            format!("mirrored {i}"),
            a * Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)),
        ));
        cases.push((
            format!("flat {i}"),
            a * Mat4::from_scale(Vec3::new(1.0, 0.0, 1.0)),
        ));
    }
    cases.push(("zero".into(), Mat4::ZERO));
    cases.push(("identity".into(), Mat4::IDENTITY));
    for (what, m) in &cases {
        let e = DualQuatEntry::from_palette(&PaletteMatrix::from_mat4(*m));
        let r = e.real();
        assert!(
            (r.length() - 1.0).abs() < 1e-6 && r.w >= 0.0,
            "{what}: real part {r:?}"
        );
        let err = worst_reconstruction(*m);
        assert!(
            err < 1e-5,
            "{what}: R S p + t differs from M p by {err} of |M| |p|"
        );
    }
}

#[test]
fn a_rotation_has_the_identity_scale_and_its_own_quaternion() {
    let q = Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.2, 2.5);
    let t = Vec3::new(1.0, -2.0, 3.0);
    let e = DualQuatEntry::from_palette(&PaletteMatrix::from_mat4(
        Mat4::from_rotation_translation(q, t),
    ));
    let q = if q.w < 0.0 { -q } else { q };
    assert!(
        (e.real() - q).length() < 1e-6,
        "{:?} against {q:?}",
        e.real()
    );
    assert!(
        (e.translation() - t).abs().max_element() < 1e-5,
        "{:?}",
        e.translation()
    );
    let s = e.scale_shear();
    assert!(
        (s - glam::Mat3::IDENTITY)
            .to_cols_array()
            .iter()
            .all(|x| x.abs() < 1e-6),
        "{s:?}"
    );
}

/// Two joints, the second turned by `angle` about x; vertices on a ring around the x axis at x = 0,
/// each weighted half and half.
fn twisted(angle: f32) -> (SkinnedMesh, Vec<PaletteMatrix>, Vec<Vec3>) {
    let ring: Vec<Vec3> = (0..16)
        .map(|i| {
            let a = i as f32 * std::f32::consts::TAU / 16.0;
            Vec3::new(0.0, a.cos(), a.sin())
        })
        .collect();
    let joints = vec![[0u16, 1]; ring.len()];
    let weights = vec![[0.5f32, 0.5]; ring.len()];
    let mesh = SkinnedMesh::prepare(
        &MeshInput::from_influences(&ring, &joints, &weights),
        &PrepareOptions::new(2),
    )
    .unwrap();
    let pal = vec![
        PaletteMatrix::IDENTITY,
        PaletteMatrix::from_mat4(Mat4::from_rotation_x(angle)),
    ];
    (mesh, pal, ring)
}

#[test]
fn a_twist_keeps_its_radius_where_linear_blending_collapses() {
    for backend in backends() {
        for degrees in [90.0f32, 150.0, 179.0] {
            let (mesh, pal, ring) = twisted(degrees.to_radians());
            let dq = entries(&pal);
            let mut linear = vec![Vec3::ZERO; ring.len()];
            SkinningJob::new(&mesh, &pal, SkinOutput::positions(&mut linear))
                .backend(backend)
                .run()
                .unwrap();
            let mut dual = vec![Vec3::ZERO; ring.len()];
            SkinningJob::dual_quaternion(&mesh, &dq, SkinOutput::positions(&mut dual))
                .backend(backend)
                .run()
                .unwrap();
            let half = (degrees / 2.0).to_radians();
            for (i, (l, d)) in linear.iter().zip(&dual).enumerate() {
                let (lr, dr) = (
                    Vec3::new(0.0, l.y, l.z).length(),
                    Vec3::new(0.0, d.y, d.z).length(),
                );
                // Linear blending: the chord's midpoint, cos(angle / 2) from the axis.
                assert!(
                    (lr - half.cos()).abs() < 1e-5,
                    "{backend:?} {degrees}: linear radius {lr}"
                );
                // Dual quaternions: the ring turned by half the angle, radius 1.
                assert!(
                    (dr - 1.0).abs() < 1e-5,
                    "{backend:?} {degrees}: vertex {i} radius {dr}"
                );
                let want = Quat::from_rotation_x(half) * ring[i];
                assert!(
                    (*d - want).abs().max_element() < 1e-5,
                    "{backend:?} {degrees}: {d} against {want}"
                );
            }
        }
    }
}

#[test]
fn one_influence_skins_as_its_palette_matrix() {
    let mut rng = Rng::new(5);
    let pal: Vec<PaletteMatrix> = (0..8)
        .map(|_| {
            let a = random_transform(&mut rng, 0.5..2.0, -3.0..3.0);
            let b = random_transform(&mut rng, 0.5..2.0, -3.0..3.0);
            PaletteMatrix::from_mat4(a * b)
        })
        .collect();
    let dq = entries(&pal);
    let n = 100;
    let pos: Vec<Vec3> = (0..n).map(|_| random_vec3(&mut rng, -2.0..2.0)).collect();
    let nrm: Vec<Vec3> = (0..n).map(|_| random_vec3(&mut rng, -1.0..1.0)).collect();
    let joints: Vec<[u16; 1]> = (0..n).map(|i| [(i % 8) as u16]).collect();
    let weights = vec![[1.0f32]; n];
    let mut input = MeshInput::from_influences(&pos, &joints, &weights);
    input.normals = Some(ispc_skinning::Attribute::vec3(&nrm));
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(8)).unwrap();
    for backend in backends() {
        let (mut lp, mut ln) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        SkinningJob::new(&mesh, &pal, SkinOutput::positions_normals(&mut lp, &mut ln))
            .backend(backend)
            .run()
            .unwrap();
        let (mut dp, mut dn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        SkinningJob::dual_quaternion(&mesh, &dq, SkinOutput::positions_normals(&mut dp, &mut dn))
            .backend(backend)
            .run()
            .unwrap();
        for i in 0..n {
            // |M| is at most about 4 here, |p| 2 (3.5 with the translation).
            assert!(
                (lp[i] - dp[i]).abs().max_element() < 1e-4,
                "{backend:?} vertex {i}: {} against {}",
                dp[i],
                lp[i]
            );
            assert!(
                (ln[i] - dn[i]).abs().max_element() < 1e-4,
                "{backend:?} normal {i}: {} against {}",
                dn[i],
                ln[i]
            );
        }
    }
}

#[test]
fn a_negated_entry_gives_the_same_bits() {
    let (mesh, pal, ring) = twisted(2.5);
    let mut rng = Rng::new(9);
    let pal: Vec<PaletteMatrix> = pal
        .iter()
        .map(|p| {
            PaletteMatrix::from_mat4(p.to_mat4() * random_transform(&mut rng, 0.5..1.5, -1.0..1.0))
        })
        .collect();
    let dq = entries(&pal);
    for flip in 0..2 {
        let mut negated = dq.clone();
        let mut f = *negated[flip].as_floats();
        f[..8].iter_mut().for_each(|x| *x = -*x);
        negated[flip] = DualQuatEntry::from_floats(f);
        for backend in backends() {
            let run = |e: &[DualQuatEntry]| {
                let mut out = vec![Vec3::ZERO; ring.len()];
                SkinningJob::dual_quaternion(&mesh, e, SkinOutput::positions(&mut out))
                    .backend(backend)
                    .run()
                    .unwrap();
                out
            };
            assert_eq!(run(&dq), run(&negated), "{backend:?}, joint {flip} negated");
        }
    }
}

#[test]
fn a_vertex_without_weight_stays_at_the_origin() {
    let pos = vec![Vec3::new(1.0, 2.0, 3.0); 3];
    let joints = vec![[0u16, 1]; 3];
    let weights = vec![[0.0f32, 0.0]; 3];
    let mesh = SkinnedMesh::prepare(
        &MeshInput::from_influences(&pos, &joints, &weights),
        &PrepareOptions {
            weights: WeightPolicy::Keep,
            ..PrepareOptions::new(2)
        },
    )
    .unwrap();
    let pal = vec![PaletteMatrix::from_mat4(Mat4::from_translation(Vec3::ONE)); 2];
    let dq = entries(&pal);
    for backend in backends() {
        let mut out = vec![Vec3::NAN; 3];
        SkinningJob::dual_quaternion(&mesh, &dq, SkinOutput::positions(&mut out))
            .backend(backend)
            .run()
            .unwrap();
        assert_eq!(out, vec![Vec3::ZERO; 3], "{backend:?}");
    }
}

#[test]
fn a_rigid_motion_is_stored_rigid_and_a_scale_is_not() {
    let mut rng = Rng::new(21);
    for _ in 0..200 {
        let m = random_transform(&mut rng, 1.0..1.0, -50.0..50.0);
        let e = DualQuatEntry::from_palette(&PaletteMatrix::from_mat4(m));
        assert!(e.is_rigid(), "{m:?}: {:?}", e.scale_shear());
        assert!(worst_reconstruction(m) < 1e-5, "{m:?}");
    }
    assert!(DualQuatEntry::IDENTITY.is_rigid());
    // Just past the tolerance in one element: kept as it is.
    let scale = 1.0 + 2.0 * DUAL_QUAT_RIGID_TOLERANCE as f32;
    for s in [Vec3::new(scale, 1.0, 1.0), Vec3::new(1.0, 1.0, 1.0 / scale)] {
        let e = DualQuatEntry::from_palette(&PaletteMatrix::from_mat4(Mat4::from_scale(s)));
        assert!(!e.is_rigid(), "{s:?}: {:?}", e.scale_shear());
    }
}

/// A rigid skeleton skips the scale-and-shear phase only where the weights sum to 1: kept weights that
/// sum to a half still scale the vertex by a half, as linear blending does.
#[test]
fn rigid_entries_with_kept_weights_still_scale_by_the_weight_sum() {
    let pos = vec![Vec3::new(1.0, 2.0, 3.0); 20];
    let joints = vec![[0u16, 1]; 20];
    let m = Mat4::from_rotation_translation(Quat::from_rotation_z(0.5), Vec3::new(4.0, 0.0, -1.0));
    let pal = vec![PaletteMatrix::from_mat4(m); 2];
    let dq = entries(&pal);
    assert!(dq.iter().all(DualQuatEntry::is_rigid));
    for (weights, policy, sum) in [
        ([0.25f32, 0.25], WeightPolicy::Keep, 0.5f32),
        ([0.25, 0.75], WeightPolicy::Keep, 1.0),
        ([0.25, 0.25], WeightPolicy::Normalize, 1.0),
    ] {
        let mesh = SkinnedMesh::prepare(
            &MeshInput::from_influences(&pos, &joints, &[weights; 20]),
            &PrepareOptions {
                weights: policy,
                ..PrepareOptions::new(2)
            },
        )
        .unwrap();
        let want = m.transform_point3(sum * pos[0]);
        for backend in backends() {
            let mut out = vec![Vec3::NAN; 20];
            SkinningJob::dual_quaternion(&mesh, &dq, SkinOutput::positions(&mut out))
                .backend(backend)
                .run()
                .unwrap();
            for p in &out {
                assert!(
                    (*p - want).abs().max_element() < 1e-5,
                    "{backend:?} {weights:?} {policy:?}: {p} against {want}"
                );
            }
        }
    }
}

/// The bound that lets a run skip checking its outputs (`SkinnedMesh`'s weight sum, magnitude and the
/// entries' largest float) holds at its edge: a real part barely long enough to be normalized (its
/// square 4e-20, over the 1e-20 below which the identity is taken) divides a dual part of 2e27 into
/// 1e37, and the outputs stay finite.
#[test]
fn a_run_at_the_edge_of_the_proven_bound_stays_finite() {
    let pos = vec![Vec3::ONE; 9];
    let mesh = SkinnedMesh::prepare(
        &MeshInput::from_influences(&pos, &[[0u16]; 9], &[[1.0f32]; 9]),
        &PrepareOptions::new(1),
    )
    .unwrap();
    let entries = [DualQuatEntry::from_floats([
        2e-10, 0.0, 0.0, 0.0, 2e27, 2e27, 2e27, 2e27, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0,
    ])];
    for backend in backends() {
        let mut out = vec![Vec3::NAN; 9];
        SkinningJob::dual_quaternion(&mesh, &entries, SkinOutput::positions(&mut out))
            .backend(backend)
            .run()
            .unwrap();
        for p in &out {
            assert!(
                p.is_finite() && p.abs().max_element() > 1e36,
                "{backend:?}: {p}"
            );
        }
    }
}

#[test]
fn every_rule_names_its_value() {
    let (mesh, pal, ring) = twisted(1.0);
    let dq = entries(&pal);
    let mut out = vec![Vec3::ZERO; ring.len()];
    // Fewer entries than the mesh's joints.
    assert_eq!(
        SkinningJob::dual_quaternion(&mesh, &dq[..1], SkinOutput::positions(&mut out)).run(),
        Err(Error::CountMismatch {
            what: "palette entries (at least the mesh's joint count)",
            expected: 2,
            got: 1
        })
    );
    // An entry that is not finite.
    let mut bad = dq.clone();
    let mut f = *bad[1].as_floats();
    f[9] = f32::INFINITY;
    bad[1] = DualQuatEntry::from_floats(f);
    for backend in backends() {
        let job = SkinningJob::dual_quaternion(&mesh, &bad, SkinOutput::positions(&mut out))
            .backend(backend);
        let want = Err(Error::NotFinite {
            what: "dual-quaternion palette",
            index: 1,
            value: f32::INFINITY,
        });
        assert_eq!(job.validate(), want);
        let mut job = job;
        assert_eq!(job.run(), want);
    }
    // Outputs of the wrong length.
    let mut short = vec![Vec3::ZERO; ring.len() - 1];
    assert!(matches!(
        SkinningJob::dual_quaternion(&mesh, &dq, SkinOutput::positions(&mut short)).run(),
        Err(Error::CountMismatch {
            what: "skinned positions",
            ..
        })
    ));
    // The palette conversion: lengths, and a matrix that is not finite.
    let mut two = vec![DualQuatEntry::IDENTITY; 2];
    assert_eq!(
        dual_quat_palette(&pal[..1], &mut two),
        Err(Error::LengthMismatch {
            input: 1,
            output: 2
        })
    );
    let mut nan = pal.clone();
    nan[1].rows[2][3] = f32::NAN;
    match dual_quat_palette(&nan, &mut two) {
        Err(Error::NotFinite {
            what: "palette",
            index: 1,
            value,
        }) => assert!(value.is_nan()),
        other => panic!("{other:?}"),
    }
    // A finite shear whose symmetric factor overflows f32 (its largest element is 1.34 times 3e38).
    let huge = vec![
        PaletteMatrix::from_mat4(Mat4::from_cols_array(&[
            3e38, 0.0, 0.0, 0.0, 3e38, 3e38, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
        ]));
        2
    ];
    assert_eq!(
        dual_quat_palette(&huge, &mut two),
        Err(Error::ResultNotFinite {
            stage: "dual-quaternion palette",
            what: "dual-quaternion palette entries",
            index: 0
        })
    );
    // Inputs that overflow while skinning are reported, never returned.
    let far = vec![
        DualQuatEntry::from_floats([
            0.0, 0.0, 0.0, 1.0, 3e38, 3e38, 3e38, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0,
        ]);
        2
    ];
    for backend in backends() {
        assert!(
            matches!(
                SkinningJob::dual_quaternion(&mesh, &far, SkinOutput::positions(&mut out))
                    .backend(backend)
                    .run(),
                Err(Error::ResultNotFinite {
                    stage: "skinning",
                    ..
                })
            ),
            "{backend:?}"
        );
    }
    let _ = Backend::Reference;
}
