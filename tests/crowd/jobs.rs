//! The crowd jobs against the single-instance jobs, and their rules.
//!
//! `CrowdPaletteJob` over crowds of 0, 1, 16, 17 and 40 instances of a 20-joint humanoid, each posed
//! differently, with a skin that names a joint twice, must give for each instance what `PaletteJob`
//! gives for that instance's models, within 8 eps |M| |IB| per element (the palette parity bound; the
//! bottom row exactly), on every backend this CPU runs; `Threads::One` and `Threads::All` give the
//! same bits, and a crowd whose palettes pass 8 MiB (written with streaming stores) gives the bits of
//! the same poses in a small crowd. `CrowdSkinningJob` skins each instance with its own palette: the
//! bits of `SkinningJob` with that palette, on every backend, on one thread and on the pool, into
//! separate or interleaved outputs.
//!
//! Each job's rules give their own error, whose message names the rule, and nothing is written when a
//! rule fails. The crowd frame tests are in `main.rs`, the wrong-frame ones in `frames.rs`.
// Index loops read several parallel arrays (joints, palettes, vertices) at once.
#![allow(clippy::needless_range_loop)]

use super::{abs, backends_here, check_matrix, EPS};
use crate::common::scenes;

use crate::common::Rng;
use glam::{Mat4, Vec3, Vec4};
use ispc_skinning::{
    Attribute, CrowdLocalToModelJob, CrowdModels, CrowdPaletteJob, CrowdPalettes, CrowdPose,
    CrowdSkinningJob, Error, Isa, MeshInput, PaletteJob, PaletteMatrix, PrepareOptions, Skeleton,
    SkinOutput, SkinnedMesh, Threads, Trs,
};

// ---------------------------------------------------------------------------------------------------
// CrowdPaletteJob

fn skeleton() -> Skeleton {
    Skeleton::from_parents(&scenes::humanoid_parents(20)).unwrap()
}

/// Crowd models of `instances` random poses of the humanoid skeleton.
fn posed_models(skeleton: &Skeleton, instances: usize) -> CrowdModels {
    let n = skeleton.len();
    let mut pose = CrowdPose::new(skeleton, instances).unwrap();
    for i in 0..instances {
        let (t, q, s) = scenes::animated_pose(n, 0.2 * i as f32, true, i as u64);
        pose.set_instance(
            i,
            Trs {
                translations: &t,
                rotations: &q,
                scales: &s,
            },
        )
        .unwrap();
    }
    let mut models = CrowdModels::new(skeleton, instances).unwrap();
    CrowdLocalToModelJob::new(skeleton, &pose, &mut models)
        .run()
        .unwrap();
    models
}

#[test]
fn the_crowd_palette_job_equals_the_palette_job_per_instance() {
    let skeleton = skeleton();
    let n = skeleton.len();
    // A skin over some joints (user order), one of them twice, as the palette job's level-order remap.
    let skin = [5usize, 0, 5, 19, 7, 12];
    let joints = skeleton.level_indices(&skin).unwrap();
    let mut rng = Rng::new(3);
    let inverse_binds: Vec<Mat4> = skin
        .iter()
        .map(|_| crate::common::random_transform(&mut rng, 0.8..1.2, -1.0..1.0))
        .collect();
    for instances in [0usize, 1, 16, 17, 40] {
        let models = posed_models(&skeleton, instances);
        for backend in backends_here() {
            let mut one = CrowdPalettes::new(skin.len(), instances).unwrap();
            let mut all = one.clone();
            CrowdPaletteJob::new(&skeleton, &models, &joints, &inverse_binds, &mut one)
                .backend(backend)
                .run()
                .unwrap();
            CrowdPaletteJob::new(&skeleton, &models, &joints, &inverse_binds, &mut all)
                .backend(backend)
                .threads(Threads::All)
                .run()
                .unwrap();
            assert_eq!(
                one, all,
                "{backend:?} instances={instances}: threads changed the result"
            );
            let mut user = vec![Mat4::ZERO; n];
            for i in 0..instances {
                models.instance_models(i, &mut user).unwrap();
                let level = skeleton.to_level_order(&user).unwrap();
                let mut want = vec![PaletteMatrix::IDENTITY; skin.len()];
                PaletteJob::new(&level, &inverse_binds, &mut want)
                    .joints(&joints)
                    .backend(backend)
                    .run()
                    .unwrap();
                let got = one.instance(i).unwrap();
                for e in 0..skin.len() {
                    // Both within gamma_4 of the product of absolute values (the palette parity bound).
                    let tol = abs(user[skin[e]]) * abs(inverse_binds[e]) * (8.0 * EPS);
                    check_matrix(
                        &|| format!("{backend:?} instances={instances} instance {i} entry {e}"),
                        got[e].to_mat4(),
                        want[e].to_mat4(),
                        tol,
                    );
                }
            }
        }
    }
}

/// A crowd whose palettes pass 8 MiB is written with streaming stores; every instance's palette has
/// the bits of the same pose in a small crowd (cached stores), on every ISA, the partial last block
/// included.
#[test]
fn streamed_crowd_palettes_equal_cached_ones() {
    let skeleton = skeleton();
    let n = skeleton.len();
    let skin: Vec<usize> = (0..n).collect();
    let joints = skeleton.level_indices(&skin).unwrap();
    let mut rng = Rng::new(5);
    let inverse_binds: Vec<Mat4> = skin
        .iter()
        .map(|_| crate::common::random_transform(&mut rng, 0.8..1.2, -1.0..1.0))
        .collect();
    let small = posed_models(&skeleton, 40);
    // 6,605 instances of 20 entries of 64 bytes: 8.45 MB; instance i poses as instance i % 40.
    let instances = 6_605;
    let mut pose = CrowdPose::new(&skeleton, instances).unwrap();
    for i in 0..instances {
        let (t, q, s) = scenes::animated_pose(n, 0.2 * (i % 40) as f32, true, (i % 40) as u64);
        pose.set_instance(
            i,
            Trs {
                translations: &t,
                rotations: &q,
                scales: &s,
            },
        )
        .unwrap();
    }
    let mut big = CrowdModels::new(&skeleton, instances).unwrap();
    CrowdLocalToModelJob::new(&skeleton, &pose, &mut big)
        .run()
        .unwrap();
    for backend in backends_here() {
        let mut cached = CrowdPalettes::new(n, 40).unwrap();
        CrowdPaletteJob::new(&skeleton, &small, &joints, &inverse_binds, &mut cached)
            .backend(backend)
            .run()
            .unwrap();
        let mut streamed = CrowdPalettes::new(n, instances).unwrap();
        CrowdPaletteJob::new(&skeleton, &big, &joints, &inverse_binds, &mut streamed)
            .backend(backend)
            .threads(Threads::All)
            .run()
            .unwrap();
        for i in 0..instances {
            assert!(
                streamed.instance(i) == cached.instance(i % 40),
                "{backend:?}: instance {i}: {:?} != {:?}",
                streamed.instance(i).map(|p| p[0]),
                cached.instance(i % 40).map(|p| p[0])
            );
        }
    }
}

/// Asserts the error, that its message names the rule, and that the palettes were not written.
fn palette_job_refuses(
    skeleton: &Skeleton,
    models: &CrowdModels,
    joints: &[usize],
    inverse_binds: &[Mat4],
    palettes: CrowdPalettes,
    want: Error,
    words: &str,
) {
    let mut palettes = palettes;
    let before = palettes.clone();
    let mut job = CrowdPaletteJob::new(skeleton, models, joints, inverse_binds, &mut palettes);
    assert_eq!(job.validate().unwrap_err(), want);
    let err = job.run().unwrap_err();
    assert_eq!(err, want);
    assert!(err.to_string().contains(words), "{err}");
    assert_eq!(palettes, before, "nothing may be written on error");
}

#[test]
fn crowd_palette_job_rules() {
    let skeleton = skeleton();
    let models = posed_models(&skeleton, 5);
    let ib = vec![Mat4::IDENTITY; 4];
    let joints = [0usize, 1, 2, 3];
    // Palette entries: one per inverse bind matrix.
    palette_job_refuses(
        &skeleton,
        &models,
        &joints,
        &ib,
        CrowdPalettes::new(3, 5).unwrap(),
        Error::CountMismatch {
            what: "crowd palette entries (one per inverse bind matrix)",
            expected: 4,
            got: 3,
        },
        "count mismatch: crowd palette entries (one per inverse bind matrix): 4 expected, but 3 given",
    );
    // Skin joints: one per inverse bind matrix.
    palette_job_refuses(
        &skeleton,
        &models,
        &joints[..3],
        &ib,
        CrowdPalettes::new(4, 5).unwrap(),
        Error::CountMismatch {
            what: "skin joints (one per inverse bind matrix)",
            expected: 4,
            got: 3,
        },
        "skin joints (one per inverse bind matrix): 4 expected, but 3 given",
    );
    // Every skin joint names a joint of the skeleton.
    palette_job_refuses(
        &skeleton,
        &models,
        &[0, 1, 20, 3],
        &ib,
        CrowdPalettes::new(4, 5).unwrap(),
        Error::SkinJointOutOfRange {
            skin_joint: 2,
            joint: 20,
            joints: 20,
        },
        "skin joint out of range: skin joint 2 maps to joint 20, but there are only 20 joints",
    );
    // One palette per model instance.
    palette_job_refuses(
        &skeleton,
        &models,
        &joints,
        &ib,
        CrowdPalettes::new(4, 6).unwrap(),
        Error::CountMismatch {
            what: "crowd palette instances (one per model instance)",
            expected: 5,
            got: 6,
        },
        "crowd palette instances (one per model instance): 5 expected, but 6 given",
    );
    // Models made for another skeleton.
    let other = Skeleton::from_parents(&scenes::humanoid_parents(21)).unwrap();
    palette_job_refuses(
        &skeleton,
        &CrowdModels::new(&other, 5).unwrap(),
        &joints,
        &ib,
        CrowdPalettes::new(4, 5).unwrap(),
        Error::WrongFrame {
            what: "CrowdModels",
            owner: "skeleton",
            part: "joint",
            made_for: 21,
            here: 20,
        },
        "wrong frame: this CrowdModels was made for a skeleton with 21 joints; this skeleton has 20",
    );
    // An ISA that cannot run here.
    let foreign = if cfg!(target_arch = "aarch64") {
        Isa::Avx2
    } else {
        Isa::Neon
    };
    let mut palettes = CrowdPalettes::new(4, 5).unwrap();
    let err = CrowdPaletteJob::new(&skeleton, &models, &joints, &ib, &mut palettes)
        .backend(foreign)
        .run()
        .unwrap_err();
    assert!(
        matches!(err, Error::IsaUnavailable { isa, .. } if isa == foreign),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------------
// CrowdSkinningJob

/// Three vertices with normals, two joints; vertex i on joint i % 2.
fn small_mesh() -> (Vec<Vec3>, SkinnedMesh) {
    let positions = vec![Vec3::X, Vec3::Y, Vec3::Z];
    let normals = [Vec3::Y, Vec3::Z, Vec3::X];
    let joints = [[0u16, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]];
    let weights = [[1.0f32, 0.0, 0.0, 0.0]; 3];
    let input = MeshInput::new(
        Attribute::vec3(&positions),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    )
    .normals(Attribute::vec3(&normals));
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(2)).unwrap();
    (positions, mesh)
}

#[test]
fn the_crowd_skinning_job_skins_each_instance_with_its_palette() {
    // Palettes from a real crowd: the humanoid's first two joints' models, per instance.
    let skeleton = skeleton();
    let (positions, mesh) = small_mesh();
    let joints = skeleton.level_indices(&[3, 9]).unwrap();
    let ib = [Mat4::IDENTITY; 2];
    for instances in [0usize, 1, 17] {
        let models = posed_models(&skeleton, instances);
        let mut palettes = CrowdPalettes::new(2, instances).unwrap();
        CrowdPaletteJob::new(&skeleton, &models, &joints, &ib, &mut palettes)
            .run()
            .unwrap();
        for backend in backends_here() {
            let v = 3 * instances;
            let (mut p, mut nrm) = (vec![Vec3::NAN; v], vec![Vec3::NAN; v]);
            CrowdSkinningJob::new(
                &mesh,
                &palettes,
                SkinOutput::positions_normals(&mut p, &mut nrm),
            )
            .backend(backend)
            .run()
            .unwrap();
            // Each instance's run equals the single job with that instance's palette.
            for i in 0..instances {
                let palette = palettes.instance(i).unwrap();
                let (mut sp, mut sn) = ([Vec3::ZERO; 3], [Vec3::ZERO; 3]);
                ispc_skinning::SkinningJob::new(
                    &mesh,
                    palette,
                    SkinOutput::positions_normals(&mut sp, &mut sn),
                )
                .backend(backend)
                .run()
                .unwrap();
                assert_eq!(&p[3 * i..3 * i + 3], &sp, "{backend:?} instance {i}");
                assert_eq!(&nrm[3 * i..3 * i + 3], &sn, "{backend:?} instance {i}");
                let m = palette[1].to_mat4();
                assert!(p[3 * i + 1].abs_diff_eq(m.transform_point3(positions[1]), 1e-5));
            }
            // Threads and an interleaved output give the same bits.
            let (mut pa, mut na) = (vec![Vec3::NAN; v], vec![Vec3::NAN; v]);
            CrowdSkinningJob::new(
                &mesh,
                &palettes,
                SkinOutput::positions_normals(&mut pa, &mut na),
            )
            .backend(backend)
            .threads(Threads::All)
            .run()
            .unwrap();
            let bits = |x: &[Vec3]| -> Vec<u32> {
                x.iter()
                    .flat_map(|v| v.to_array().map(f32::to_bits))
                    .collect()
            };
            assert_eq!(
                (bits(&pa), bits(&na)),
                (bits(&p), bits(&nrm)),
                "{backend:?}"
            );
            let mut buf = vec![0f32; v * 6];
            let out = SkinOutput::Interleaved {
                bytes: bytemuck::cast_slice_mut(&mut buf),
                stride: 24,
                positions: 0,
                normals: Some(12),
                tangents: None,
            };
            CrowdSkinningJob::new(&mesh, &palettes, out)
                .backend(backend)
                .run()
                .unwrap();
            for k in 0..v {
                assert_eq!(
                    &buf[6 * k..6 * k + 3],
                    &p[k].to_array(),
                    "{backend:?} vertex {k}"
                );
                assert_eq!(
                    &buf[6 * k + 3..6 * k + 6],
                    &nrm[k].to_array(),
                    "{backend:?} vertex {k}"
                );
            }
        }
    }
}

/// `Skinning::DualQuaternion`: each instance has the bits of `dual_quat_palette` of its palette then
/// `SkinningJob::dual_quaternion`, on every backend and on one thread or the pool; with a joint twisted
/// half a turn, a vertex shared by it and its parent keeps its distance from the twist axis, where
/// linear blending pinches it.
/// The palettes of a crowd of a two-joint arm (bind pose at the identity) posed by `pose` and placed
/// by `roots`.
fn arm_palettes(skeleton: &Skeleton, pose: &CrowdPose, roots: &[Mat4]) -> CrowdPalettes {
    let instances = pose.instances();
    let mut models = CrowdModels::new(skeleton, instances).unwrap();
    CrowdLocalToModelJob::new(skeleton, pose, &mut models)
        .roots(roots)
        .run()
        .unwrap();
    let mut palettes = CrowdPalettes::new(2, instances).unwrap();
    let level = skeleton.level_indices(&[0, 1]).unwrap();
    CrowdPaletteJob::new(
        skeleton,
        &models,
        &level,
        &[Mat4::IDENTITY; 2],
        &mut palettes,
    )
    .run()
    .unwrap();
    palettes
}

#[test]
fn the_crowd_skinning_job_skins_dual_quaternions() {
    use ispc_skinning::{dual_quat_palette, DualQuatEntry, Skinning, SkinningJob};
    // A wrist on the x axis, vertices around it at radius 1 weighted half to each joint.
    let positions: Vec<Vec3> = (0..8)
        .map(|k| {
            let a = k as f32 * std::f32::consts::TAU / 8.0;
            Vec3::new(1.0, a.cos(), a.sin())
        })
        .collect();
    let joints = vec![[0u16, 1, 0, 0]; 8];
    let weights = vec![[0.5f32, 0.5, 0.0, 0.0]; 8];
    let input = MeshInput::new(
        Attribute::vec3(&positions),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    );
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(2)).unwrap();
    let skeleton = Skeleton::from_parents(&[None, Some(0)]).unwrap();
    let instances = 19;
    let mut pose = CrowdPose::new(&skeleton, instances).unwrap();
    for i in 0..instances {
        // Instance i twists the wrist by up to half a turn about x.
        let twist = glam::Quat::from_rotation_x(std::f32::consts::PI * i as f32 / 18.0);
        pose.set_joint(i, 1, Vec3::ZERO, twist, Vec3::ONE).unwrap();
    }
    let palettes = arm_palettes(&skeleton, &pose, &vec![Mat4::IDENTITY; instances]);
    for backend in backends_here() {
        for threads in [Threads::One, Threads::All] {
            let mut p = vec![Vec3::NAN; 8 * instances];
            CrowdSkinningJob::new(&mesh, &palettes, SkinOutput::positions(&mut p))
                .skinning(Skinning::DualQuaternion)
                .backend(backend)
                .threads(threads)
                .run()
                .unwrap();
            for i in 0..instances {
                let mut entries = [DualQuatEntry::IDENTITY; 2];
                dual_quat_palette(palettes.instance(i).unwrap(), &mut entries).unwrap();
                let mut single = [Vec3::ZERO; 8];
                SkinningJob::dual_quaternion(&mesh, &entries, SkinOutput::positions(&mut single))
                    .backend(backend)
                    .run()
                    .unwrap();
                assert_eq!(
                    &p[8 * i..8 * i + 8],
                    &single,
                    "{backend:?} {threads:?} instance {i}"
                );
                for v in &single {
                    let radius = v.y.hypot(v.z);
                    assert!((radius - 1.0).abs() < 1e-4, "instance {i}: radius {radius}");
                }
            }
        }
    }
}

/// An instance whose skinned vertices overflow `f32` (finite palettes: scale and translation 2e38) is
/// named: the error counts its first vertex across the crowd (`i * v + vertex`), or for dual
/// quaternions, where the conversion overflows first, its first palette entry (`i * entries + entry`).
#[test]
fn a_crowd_skinning_overflow_names_the_instance() {
    use ispc_skinning::Skinning;
    let (_, mesh) = small_mesh();
    let skeleton = Skeleton::from_parents(&[None, Some(0)]).unwrap();
    let instances = 5;
    let pose = CrowdPose::new(&skeleton, instances).unwrap();
    let mut roots = vec![Mat4::IDENTITY; instances];
    roots[3] = Mat4::from_scale_rotation_translation(
        Vec3::splat(2e38),
        glam::Quat::IDENTITY,
        Vec3::splat(2e38),
    );
    let palettes = arm_palettes(&skeleton, &pose, &roots);
    for backend in backends_here() {
        for threads in [Threads::One, Threads::All] {
            for skinning in [Skinning::Linear, Skinning::DualQuaternion] {
                let mut p = vec![Vec3::ZERO; 3 * instances];
                let r = CrowdSkinningJob::new(&mesh, &palettes, SkinOutput::positions(&mut p))
                    .skinning(skinning)
                    .backend(backend)
                    .threads(threads)
                    .run();
                let what = format!("{backend:?} {threads:?} {skinning:?}");
                match r {
                    Err(Error::ResultNotFinite {
                        index, what: item, ..
                    }) => {
                        // Entries of the dual-quaternion palette, else vertices.
                        let per = if item.contains("palette") { 2 } else { 3 };
                        assert!(
                            (3 * per..4 * per).contains(&index),
                            "{what}: {item} {index} is not one of instance 3's"
                        )
                    }
                    other => panic!("{what}: expected ResultNotFinite, got {other:?}"),
                }
            }
        }
    }
}

/// A mesh with every influence count from 1 to 16 (runs promoted to the 12- and 16-influence kernels):
/// each instance of the crowd job has the bits of the single job with its palette, on every backend.
#[test]
fn the_crowd_skinning_job_skins_sixteen_influences() {
    let skeleton = skeleton();
    let n = 70;
    let positions: Vec<Vec3> = (0..n)
        .map(|v| Vec3::new(v as f32 * 0.1, (v % 7) as f32, 1.0))
        .collect();
    let k = |v: usize| 1 + (v * 5 + v / 3) % 16;
    let mut joints = vec![0u16; 16 * n];
    let mut weights = vec![0f32; 16 * n];
    for v in 0..n {
        for i in 0..k(v) {
            joints[16 * v + i] = ((v + 3 * i) % 20) as u16;
            weights[16 * v + i] = 1.0 + i as f32;
        }
    }
    let input = MeshInput::from_flat_influences(&positions, &joints, &weights, 16);
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(20)).unwrap();
    assert_eq!(
        mesh.influence_histogram()[16],
        (0..n).filter(|&v| k(v) == 16).count()
    );
    let instances = 5;
    let models = posed_models(&skeleton, instances);
    let level: Vec<usize> = (0..20).collect();
    let joints = skeleton.level_indices(&level).unwrap();
    let ib = vec![Mat4::IDENTITY; 20];
    let mut palettes = CrowdPalettes::new(20, instances).unwrap();
    CrowdPaletteJob::new(&skeleton, &models, &joints, &ib, &mut palettes)
        .run()
        .unwrap();
    for backend in backends_here() {
        let mut p = vec![Vec3::NAN; n * instances];
        CrowdSkinningJob::new(&mesh, &palettes, SkinOutput::positions(&mut p))
            .backend(backend)
            .threads(Threads::All)
            .run()
            .unwrap();
        for i in 0..instances {
            let mut single = vec![Vec3::NAN; n];
            ispc_skinning::SkinningJob::new(
                &mesh,
                palettes.instance(i).unwrap(),
                SkinOutput::positions(&mut single),
            )
            .backend(backend)
            .run()
            .unwrap();
            assert_eq!(&p[n * i..n * (i + 1)], &single, "{backend:?} instance {i}");
        }
    }
}

#[test]
fn crowd_skinning_job_rules() {
    let (_, mesh) = small_mesh();
    let palettes = CrowdPalettes::new(2, 4).unwrap();
    // Each case: the error, words of its message, and that the outputs stay as they were.
    let check = |err: Error, want: Error, words: &str| {
        assert_eq!(err, want);
        assert!(err.to_string().contains(words), "{err}");
    };
    // Palette entries: at least the mesh's joint count.
    let short = CrowdPalettes::new(1, 4).unwrap();
    let mut p = vec![Vec3::NAN; 12];
    let err = CrowdSkinningJob::new(&mesh, &short, SkinOutput::positions(&mut p))
        .run()
        .unwrap_err();
    check(
        err,
        Error::CountMismatch {
            what: "crowd palette entries (at least the mesh's joint count)",
            expected: 2,
            got: 1,
        },
        "crowd palette entries (at least the mesh's joint count): 2 expected, but 1 given",
    );
    assert!(p.iter().all(|v| v.is_nan()), "nothing may be written");
    // Outputs: instances times vertices, for every stream.
    let mut p = vec![Vec3::NAN; 11];
    let err = CrowdSkinningJob::new(&mesh, &palettes, SkinOutput::positions(&mut p))
        .run()
        .unwrap_err();
    check(
        err,
        Error::CountMismatch {
            what: "skinned positions",
            expected: 12,
            got: 11,
        },
        "count mismatch: skinned positions: 12 expected, but 11 given",
    );
    assert!(p.iter().all(|v| v.is_nan()), "nothing may be written");
    let (mut p, mut nrm) = (vec![Vec3::NAN; 12], vec![Vec3::NAN; 13]);
    let err = CrowdSkinningJob::new(
        &mesh,
        &palettes,
        SkinOutput::positions_normals(&mut p, &mut nrm),
    )
    .run()
    .unwrap_err();
    check(
        err,
        Error::CountMismatch {
            what: "skinned normals",
            expected: 12,
            got: 13,
        },
        "skinned normals: 12 expected, but 13 given",
    );
    assert!(
        p.iter().chain(&nrm).all(|v| v.is_nan()),
        "nothing may be written"
    );
    // An output the mesh has no input for.
    let (mut p, mut nrm, mut tan) = (
        vec![Vec3::NAN; 12],
        vec![Vec3::NAN; 12],
        vec![Vec4::NAN; 12],
    );
    let err = CrowdSkinningJob::new(
        &mesh,
        &palettes,
        SkinOutput::positions_normals_tangents(&mut p, &mut nrm, &mut tan),
    )
    .run()
    .unwrap_err();
    check(
        err,
        Error::AttributeMissing {
            attribute: "tangents",
        },
        "attribute missing: tangents",
    );
    assert!(p.iter().all(|v| v.is_nan()), "nothing may be written");
    // An interleaved buffer shorter than instances times vertices times the stride.
    let mut buf = vec![0f32; 12 * 3 - 1];
    let out = SkinOutput::Interleaved {
        bytes: bytemuck::cast_slice_mut(&mut buf),
        stride: 12,
        positions: 0,
        normals: None,
        tangents: None,
    };
    let err = CrowdSkinningJob::new(&mesh, &palettes, out)
        .run()
        .unwrap_err();
    assert!(
        matches!(err, Error::OutputLayout { reason } if reason.contains("shorter")),
        "{err}"
    );
    assert!(buf.iter().all(|&x| x == 0.0), "nothing may be written");
}
