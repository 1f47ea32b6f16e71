//! No overflow anywhere (issue 31): every public function outside the glTF module that takes an index
//! or a count, called with `usize::MAX`, gives a typed error or its documented `None` (in a debug build
//! too, where unchecked index arithmetic panics with "attempt to add with overflow"); and every
//! function of `reference` honours its module's promise to process as many items as the shortest
//! slice holds, instead of panicking on slices of different lengths.

use glam::{Mat4, Quat, Vec3, Vec4};
use ispc_skinning::reference;
use ispc_skinning::{
    Attribute, BlendLayer, Character, CharacterSkin, CrowdBlendingJob, CrowdLocalToModelJob,
    CrowdModels, CrowdPaletteJob, CrowdPalettes, CrowdPose, Error, LocalToModelJob, Locals,
    MeshInput, MorphTargets, PaletteJob, PaletteMatrix, PrepareOptions, RigidMesh, Skeleton,
    SkinnedMesh, Trs, TrsMut, MAX_CROWD_INSTANCES, MAX_CROWD_JOINTS,
};

const MAX: usize = usize::MAX;

fn skeleton() -> Skeleton {
    Skeleton::from_parents(&[None, Some(0), Some(0)]).unwrap()
}

fn mesh() -> SkinnedMesh {
    let input = MeshInput::new(
        Attribute::vec3(&[Vec3::X]),
        Attribute::joints_u16(&[[0u16, 1, 0, 0]]),
        Attribute::weights_f32(&[[0.5f32, 0.5, 0.0, 0.0]]),
    );
    SkinnedMesh::prepare(&input, &PrepareOptions::new(3)).unwrap()
}

fn skin() -> CharacterSkin {
    CharacterSkin {
        joints: vec![0, 1, 2],
        inverse_binds: vec![Mat4::IDENTITY; 3],
    }
}

fn rest() -> (Vec<Vec3>, Vec<Quat>, Vec<Vec3>) {
    (
        vec![Vec3::ZERO; 3],
        vec![Quat::IDENTITY; 3],
        vec![Vec3::ONE; 3],
    )
}

/// A character with a morphed skinned mesh and a rigid mesh, so every per-mesh accessor has something
/// to index.
fn character() -> Character {
    let (t, q, s) = rest();
    let targets = MorphTargets::new(1, vec![Some(vec![Vec3::Y])], vec![None], vec![None]).unwrap();
    Character::new(skeleton(), t, q, s, vec![skin()], vec![(mesh(), 0)])
        .unwrap()
        .with_mesh_morph_targets(0, targets)
        .unwrap()
        .with_rigid_meshes(vec![(
            RigidMesh::new(vec![Vec3::Z], None, None).unwrap(),
            1,
        )])
        .unwrap()
}

#[test]
fn skeleton_index_functions_take_usize_max() {
    let s = skeleton();
    assert_eq!(
        Skeleton::from_parents(&[None, Some(MAX)]).unwrap_err(),
        Error::ParentOutOfRange {
            joint: 1,
            parent: MAX,
            joints: 2
        }
    );
    assert_eq!(s.parent(MAX), None);
    assert_eq!(s.children(MAX).count(), 0);
    assert_eq!(s.name(MAX), None);
    assert_eq!(s.level_index(MAX), None);
    assert_eq!(
        s.level_indices(&[0, MAX]).unwrap_err(),
        Error::JointOutOfRange {
            joint: MAX,
            joints: 3
        }
    );
    assert_eq!(s.original_index(MAX), None);
    assert_eq!(s.level_parent(MAX), None);
    assert_eq!(s.level_children(MAX), 0..0);
    // Skeleton::level added 1 to its argument unchecked.
    assert_eq!(s.level(MAX), 0..0);
    assert_eq!(s.level(MAX - 1), 0..0);
    assert!(s.level_subtree(MAX).is_empty());
}

#[test]
fn character_index_functions_take_usize_max() {
    let c = character();
    let (t, q, s) = rest();
    // Character::new: a skin joint and a mesh's skin.
    let bad_skin = CharacterSkin {
        joints: vec![0, MAX],
        inverse_binds: vec![Mat4::IDENTITY; 2],
    };
    assert_eq!(
        Character::new(
            skeleton(),
            t.clone(),
            q.clone(),
            s.clone(),
            vec![bad_skin],
            vec![]
        )
        .unwrap_err(),
        Error::SkinJointOutOfRange {
            skin_joint: 1,
            joint: MAX,
            joints: 3
        }
    );
    assert_eq!(
        Character::new(skeleton(), t, q, s, vec![skin()], vec![(mesh(), MAX)]).unwrap_err(),
        Error::SkinOutOfRange {
            mesh: 0,
            skin: MAX,
            skins: 1
        }
    );
    // with_mesh_morph_targets added 1 to the mesh index unchecked.
    let targets = MorphTargets::new(1, vec![None], vec![None], vec![None]).unwrap();
    assert_eq!(
        c.clone().with_mesh_morph_targets(MAX, targets).unwrap_err(),
        Error::CountMismatch {
            what: "skinned meshes",
            expected: 1,
            got: MAX
        }
    );
    let rigid = RigidMesh::new(vec![Vec3::Z], None, None).unwrap();
    assert_eq!(
        c.clone().with_rigid_meshes(vec![(rigid, MAX)]).unwrap_err(),
        Error::JointOutOfRange {
            joint: MAX,
            joints: 3
        }
    );
    assert!(c.mesh(MAX).is_none());
    assert_eq!(c.mesh_skin(MAX), None);
    assert!(c.rigid_mesh(MAX).is_none());
    assert_eq!(c.rigid_mesh_joint(MAX), None);
    assert!(c.mesh_morph_targets(MAX).is_none());
    assert_eq!(c.rest_pose(MAX), None);
    assert!(matches!(
        c.crowd_buffers(MAX).unwrap_err(),
        Error::TooManyInstances { instances: MAX, .. }
    ));
}

#[test]
fn frame_index_functions_take_usize_max() {
    let c = character();
    let mut frame = c.frame_buffers();
    assert_eq!(
        frame
            .set_local(MAX, Vec3::ZERO, Quat::IDENTITY, Vec3::ONE)
            .unwrap_err(),
        Error::JointOutOfRange {
            joint: MAX,
            joints: 3
        }
    );
    assert_eq!(frame.local(MAX), None);
    assert_eq!(frame.model(MAX), None);
    assert!(frame.mesh(MAX).is_none());
    assert!(frame.mesh_weights(MAX).is_none());
    assert!(frame.rigid_weights(MAX).is_none());
    // set_mesh_weights and set_rigid_weights added 1 to the index unchecked.
    for (err, what, expected) in [
        (
            frame.set_mesh_weights(MAX, &[1.0]).unwrap_err(),
            "skinned meshes",
            1,
        ),
        (
            frame.set_rigid_weights(MAX, &[]).unwrap_err(),
            "rigid meshes",
            1,
        ),
    ] {
        assert_eq!(
            err,
            Error::CountMismatch {
                what,
                expected,
                got: MAX
            }
        );
    }
}

#[test]
fn crowd_index_functions_take_usize_max() {
    let c = character();
    let s = c.skeleton();
    let crowd = c.crowd_buffers(3).unwrap();
    assert!(crowd.palettes(MAX).is_none());
    for (mesh, instance) in [(MAX, 0), (0, MAX), (MAX, MAX)] {
        assert!(crowd.positions(mesh, instance).is_none());
        assert!(crowd.normals(mesh, instance).is_none());
        assert!(crowd.tangents(mesh, instance).is_none());
    }
    assert!(crowd.mesh(MAX).is_none());
    assert!(crowd.bounds(MAX).is_none());

    // CrowdPose.
    for err in [
        CrowdPose::new(s, MAX).unwrap_err(),
        CrowdModels::new(s, MAX).unwrap_err(),
        CrowdPalettes::new(3, MAX).unwrap_err(),
    ] {
        assert!(
            matches!(
                err,
                Error::TooManyInstances {
                    instances: MAX,
                    max,
                    ..
                } if max <= MAX_CROWD_INSTANCES
            ),
            "{err}"
        );
    }
    assert_eq!(
        CrowdPalettes::new(MAX, 1).unwrap_err(),
        Error::TooManyJoints {
            joints: MAX,
            max: MAX_CROWD_JOINTS
        }
    );
    let mut pose = CrowdPose::new(s, 2).unwrap();
    let at = |instance, joint| (instance, joint);
    for (instance, joint, want) in [
        (
            MAX,
            0,
            Error::InstanceOutOfRange {
                instance: MAX,
                instances: 2,
            },
        ),
        (
            0,
            MAX,
            Error::JointOutOfRange {
                joint: MAX,
                joints: 3,
            },
        ),
    ] {
        let (i, j) = at(instance, joint);
        assert_eq!(
            pose.set_joint(i, j, Vec3::ZERO, Quat::IDENTITY, Vec3::ONE)
                .unwrap_err(),
            want
        );
        assert_eq!(pose.joint(i, j), None);
    }
    let (t, q, sc) = rest();
    let trs = Trs {
        translations: &t,
        rotations: &q,
        scales: &sc,
    };
    assert_eq!(
        pose.set_instance(MAX, trs).unwrap_err(),
        Error::InstanceOutOfRange {
            instance: MAX,
            instances: 2
        }
    );
    // CrowdModels.
    let models = CrowdModels::new(s, 2).unwrap();
    assert_eq!(models.model(MAX, 0), None);
    assert_eq!(models.model(0, MAX), None);
    assert_eq!(
        models
            .instance_models(MAX, &mut [Mat4::IDENTITY; 3])
            .unwrap_err(),
        Error::InstanceOutOfRange {
            instance: MAX,
            instances: 2
        }
    );
    // CrowdPalettes.
    let mut palettes = CrowdPalettes::new(3, 2).unwrap();
    assert!(palettes.instance(MAX).is_none());
    // CrowdPaletteJob: a skin joint.
    let ib = [Mat4::IDENTITY; 3];
    assert_eq!(
        CrowdPaletteJob::new(s, &models, &[0, 1, MAX], &ib, &mut palettes)
            .run()
            .unwrap_err(),
        Error::SkinJointOutOfRange {
            skin_joint: 2,
            joint: MAX,
            joints: 3
        }
    );
    // CrowdLocalToModelJob: the instance counts are the buffers', checked against each other.
    let mut models = CrowdModels::new(s, 2).unwrap();
    CrowdLocalToModelJob::new(s, &pose, &mut models)
        .run()
        .unwrap();
    // CrowdBlendingJob: usize::MAX instances of 3 joints overflow instances * joints.
    let (mut ot, mut oq, mut os) = rest();
    let err = CrowdBlendingJob::new(
        s,
        MAX,
        trs,
        TrsMut {
            translations: &mut ot,
            rotations: &mut oq,
            scales: &mut os,
        },
    )
    .run()
    .unwrap_err();
    assert!(
        matches!(err, Error::TooManyInstances { instances: MAX, .. }),
        "{err}"
    );
}

#[test]
fn job_index_functions_take_usize_max() {
    let s = skeleton();
    let locals = [Mat4::IDENTITY; 3];
    let mut models = [Mat4::IDENTITY; 3];
    assert_eq!(
        LocalToModelJob::new(&s, Locals::Matrices(&locals), &mut models)
            .from_joint(MAX)
            .run()
            .unwrap_err(),
        Error::JointOutOfRange {
            joint: MAX,
            joints: 3
        }
    );
    let ib = [Mat4::IDENTITY; 3];
    let mut palette = [PaletteMatrix::IDENTITY; 3];
    let err = PaletteJob::new(&models, &ib, &mut palette)
        .joints(&[0, 1, MAX])
        .run()
        .unwrap_err();
    assert_eq!(
        err,
        Error::SkinJointOutOfRange {
            skin_joint: 2,
            joint: MAX,
            joints: 3
        }
    );
    // PrepareOptions: a joint count and an influence count.
    let input = MeshInput::new(
        Attribute::vec3(&[Vec3::X]),
        Attribute::joints_u16(&[[0u16, 1, 0, 0]]),
        Attribute::weights_f32(&[[0.5f32, 0.5, 0.0, 0.0]]),
    );
    assert!(SkinnedMesh::prepare(&input, &PrepareOptions::new(MAX)).is_ok());
    assert!(SkinnedMesh::prepare(&input, &PrepareOptions::new(3).max_influences(MAX)).is_err());
    // MorphTargets: a vertex count that no delta has.
    assert_eq!(
        MorphTargets::new(MAX, vec![Some(vec![Vec3::Y])], vec![None], vec![None]).unwrap_err(),
        Error::CountMismatch {
            what: "morph deltas (one per vertex)",
            expected: MAX,
            got: 1
        }
    );
}

// ---------------------------------------------------------------------------------------------------
// The reference module: "They take whole slices and process min(input.len(), output.len()) items".

#[test]
fn reference_morph_floats_uses_the_shortest_slice() {
    // Output longer than the base and a delta: only the shortest is written, the rest left as it was.
    let mut out = [9.0f32; 4];
    reference::morph_floats(&[1.0, 2.0, 3.0], &[&[1.0, 1.0]], &[2.0], &mut out);
    assert_eq!(out, [3.0, 4.0, 9.0, 9.0]);
    // Base longer than the output.
    let mut out = [0.0f32; 2];
    reference::morph_floats(&[1.0, 2.0, 3.0], &[&[1.0, 1.0, 1.0]], &[1.0], &mut out);
    assert_eq!(out, [2.0, 3.0]);
    // More weights than deltas, and more deltas than weights: pairs only.
    let mut out = [0.0f32; 2];
    reference::morph_floats(&[1.0, 1.0], &[&[1.0, 1.0]], &[1.0, 5.0], &mut out);
    assert_eq!(out, [2.0, 2.0]);
    reference::morph_floats(&[1.0, 1.0], &[&[1.0, 1.0], &[7.0]], &[1.0], &mut out);
    assert_eq!(out, [2.0, 2.0]);
}

#[test]
fn reference_transforms_use_the_shorter_slice() {
    let m = Mat4::from_translation(Vec3::X);
    let mut out3 = [Vec3::ZERO; 3];
    reference::transform_points_vec3(&m, &[Vec3::Y], &mut out3);
    assert_eq!(out3, [Vec3::new(1.0, 1.0, 0.0), Vec3::ZERO, Vec3::ZERO]);
    let mut out3 = [Vec3::ZERO; 1];
    reference::transform_points_vec3(&m, &[Vec3::Y, Vec3::Z], &mut out3);
    assert_eq!(out3, [Vec3::new(1.0, 1.0, 0.0)]);
    let mut out4 = [Vec4::ZERO; 2];
    reference::transform_points_vec4(&m, &[Vec3::Y], &mut out4);
    assert_eq!(out4, [Vec4::new(1.0, 1.0, 0.0, 1.0), Vec4::ZERO]);
    let mut out4 = [Vec4::ZERO; 1];
    reference::transform_points_vec4(&m, &[Vec3::Y, Vec3::Z], &mut out4);
    assert_eq!(out4, [Vec4::new(1.0, 1.0, 0.0, 1.0)]);
}

#[test]
fn reference_hierarchy_uses_the_shortest_slice() {
    let parents = [None, Some(0), Some(1)];
    let lift = Mat4::from_translation(Vec3::Y);
    // Fewer locals than parents and models, and a joint range past every slice.
    let mut models = [Mat4::ZERO; 3];
    reference::local_to_model(
        &parents,
        &[lift, lift],
        &Mat4::IDENTITY,
        &mut models,
        0..MAX,
    );
    assert_eq!(models[0], lift);
    assert_eq!(models[1], lift * lift);
    assert_eq!(models[2], Mat4::ZERO, "no local, not written");
    // Fewer models than parents.
    let mut models = [Mat4::ZERO; 1];
    reference::local_to_model(&parents, &[lift; 3], &Mat4::IDENTITY, &mut models, 0..3);
    assert_eq!(models, [lift]);
    // A range that starts past the end.
    let mut models = [Mat4::ZERO; 3];
    reference::local_to_model(&parents, &[lift; 3], &Mat4::IDENTITY, &mut models, MAX..MAX);
    assert_eq!(models, [Mat4::ZERO; 3]);
    // TRS streams of three lengths.
    let t = [Vec3::Y; 3];
    let q = [Quat::IDENTITY; 2];
    let s = [Vec3::ONE; 1];
    let mut models = [Mat4::ZERO; 3];
    let trs = Trs {
        translations: &t,
        rotations: &q,
        scales: &s,
    };
    reference::local_to_model_trs(&parents, trs, &Mat4::IDENTITY, &mut models, 0..MAX);
    assert_eq!(models, [lift, Mat4::ZERO, Mat4::ZERO]);
}

#[test]
fn reference_palette_uses_the_shortest_slice() {
    let models = [
        Mat4::from_translation(Vec3::X),
        Mat4::from_translation(Vec3::Y),
    ];
    let ib = [Mat4::IDENTITY; 3];
    let mut palette = [PaletteMatrix::IDENTITY; 4];
    // Three inverse binds, two models, four entries, a remap of two: entries 0 and 1 only.
    reference::skin_palette(&models, &ib, Some(&[1, 0]), &mut palette);
    assert_eq!(palette[0].rows[1][3], 1.0);
    assert_eq!(palette[1].rows[0][3], 1.0);
    assert_eq!(palette[2], PaletteMatrix::IDENTITY);
    assert_eq!(palette[3], PaletteMatrix::IDENTITY);
    // No remap: entry 2 has no model and is left as it is.
    let mut palette = [PaletteMatrix::IDENTITY; 3];
    reference::skin_palette(&models, &ib, None, &mut palette);
    assert_eq!(palette[0].rows[0][3], 1.0);
    assert_eq!(palette[2], PaletteMatrix::IDENTITY);
    // A remap that names usize::MAX.
    let mut palette = [PaletteMatrix::IDENTITY; 1];
    reference::skin_palette(&models, &ib, Some(&[MAX]), &mut palette);
    assert_eq!(palette[0], PaletteMatrix::IDENTITY);
}

#[test]
fn reference_blend_uses_the_shortest_stream() {
    let t2 = [Vec3::X; 2];
    let q2 = [Quat::IDENTITY; 2];
    let s2 = [Vec3::ONE; 2];
    let t3 = [Vec3::Y; 3];
    let q3 = [Quat::IDENTITY; 3];
    let s3 = [Vec3::ONE; 3];
    let layer = BlendLayer::new(
        Trs {
            translations: &t2,
            rotations: &q2,
            scales: &s2,
        },
        1.0,
    );
    let weights = [1.0f32];
    let weighted = BlendLayer::new(
        Trs {
            translations: &t3,
            rotations: &q3,
            scales: &s3,
        },
        1.0,
    )
    .joint_weights(&weights);
    let rest = Trs {
        translations: &t3,
        rotations: &q3,
        scales: &s3,
    };
    let (mut ot, mut oq, mut os) = ([Vec3::NAN; 4], [Quat::IDENTITY; 4], [Vec3::ONE; 4]);
    // A layer of two joints, a rest pose of three, an output of four: two joints written.
    reference::blend(
        &[layer],
        &[],
        rest,
        0.1,
        TrsMut {
            translations: &mut ot,
            rotations: &mut oq,
            scales: &mut os,
        },
    );
    assert_eq!(ot[..2], [Vec3::X; 2]);
    assert!(ot[2].is_nan() && ot[3].is_nan(), "past the shortest stream");
    // Per-joint weights of one joint: one joint written.
    let mut ot = [Vec3::NAN; 3];
    reference::blend(
        &[weighted],
        &[weighted],
        rest,
        0.1,
        TrsMut {
            translations: &mut ot,
            rotations: &mut oq[..3],
            scales: &mut os[..3],
        },
    );
    assert_eq!(ot[0], Vec3::Y * 2.0, "the layer, then the same layer added");
    assert!(ot[1].is_nan() && ot[2].is_nan(), "past the joint weights");
}
