//! Class 5: the typed errors at the crate's API edges, where a size or an index from a file (or a
//! caller) could otherwise overflow, allocate without bound, or be taken silently.

use super::*;
use glam::{Mat4, Vec3};
use ispc_skinning::{
    Attribute, Backend, CrowdModels, CrowdPalettes, CrowdPose, Format, Isa, MeshInput, PaletteJob,
    PaletteMatrix, PrepareOptions, Skeleton, SkinnedMesh, MAX_CROWD_ELEMENTS, MAX_CROWD_INSTANCES,
    MAX_CROWD_JOINTS, MAX_JOINTS, MAX_VERTICES,
};

/// A fan: joint 0 and `n - 1` children.
fn fan(n: usize) -> Skeleton {
    let parents: Vec<Option<usize>> = (0..n).map(|i| (i > 0).then_some(0)).collect();
    Skeleton::from_parents(&parents).unwrap()
}

fn too_many_instances(
    instances: usize,
    per_instance: usize,
    unit: &'static str,
    max: usize,
) -> Error {
    Error::TooManyInstances {
        instances,
        per_instance,
        unit,
        max,
    }
}

/// Asserts an error and that its message starts with the rule's name.
fn assert_error<T: std::fmt::Debug>(got: Result<T, Error>, want: &Error, words: &str) {
    let got = got.unwrap_err();
    assert_eq!(&got, want);
    assert_eq!(got.to_string(), words);
}

#[test]
fn crowds_refuse_huge_instance_counts_before_allocating() {
    let rig = fan(20);
    let big = fan(100_000);
    // 2^26 elements / 100,000 joints: at most 671 instances.
    let cases = [
        (&rig, usize::MAX, MAX_CROWD_INSTANCES),
        (&rig, MAX_CROWD_INSTANCES + 1, MAX_CROWD_INSTANCES),
        (&big, usize::MAX, MAX_CROWD_ELEMENTS / 100_000),
        (&big, 672, 671),
    ];
    for (skeleton, instances, max) in cases {
        let joints = skeleton.len();
        let want = too_many_instances(instances, joints, "joint", max);
        let words = format!(
            "too many instances: {instances} instances of {joints} joints each asked for, but at most {max} fit the limits"
        );
        let (pose, work) = counted(|| CrowdPose::new(skeleton, instances));
        assert_error(pose, &want, &words);
        let (models, work2) = counted(|| CrowdModels::new(skeleton, instances));
        assert_error(models, &want, &words);
        // Only the owner's copy of the level order, at most, before the refusal: nothing per
        // instance was made, or touched and freed (the total counts every byte allocated).
        for w in [work, work2] {
            assert!(w.total <= 8 * joints + 4096 && w.calls <= 16, "{w:?}");
        }
    }
    // Palettes of a skin: the same rule, counted in palette entries.
    assert_error(
        CrowdPalettes::new(64, usize::MAX),
        &too_many_instances(usize::MAX, 64, "palette entry", MAX_CROWD_INSTANCES),
        &format!("too many instances: {} instances of 64 palette entries each asked for, but at most {MAX_CROWD_INSTANCES} fit the limits", usize::MAX),
    );
    assert_error(
        CrowdPalettes::new(usize::MAX, 1),
        &Error::TooManyJoints {
            joints: usize::MAX,
            max: MAX_CROWD_JOINTS,
        },
        &format!(
            "too many joints: {} given, at most {MAX_CROWD_JOINTS} are supported",
            usize::MAX
        ),
    );
}

#[test]
fn a_crowd_of_a_skeleton_past_the_crowd_joint_limit_is_refused() {
    let skeleton = fan(MAX_CROWD_JOINTS + 1);
    let want = Error::TooManyJoints {
        joints: MAX_CROWD_JOINTS + 1,
        max: MAX_CROWD_JOINTS,
    };
    let words = format!(
        "too many joints: {} given, at most {MAX_CROWD_JOINTS} are supported",
        MAX_CROWD_JOINTS + 1
    );
    for instances in [1, usize::MAX] {
        assert_error(CrowdPose::new(&skeleton, instances), &want, &words);
        assert_error(CrowdModels::new(&skeleton, instances), &want, &words);
    }
}

/// A scene's crowd counts its vertices (skinned and rigid) per instance: the rig has 3.
#[test]
fn a_scene_crowd_of_usize_max_instances_is_refused() {
    let mut b = Builder::default();
    let doc = rig(&mut b);
    let scene = GltfScene::from_slice(&b.glb(doc)).unwrap();
    let (result, peak) = peak_alloc(|| scene.crowd_buffers(usize::MAX).map(|_| ()));
    assert_error(
        result,
        &too_many_instances(usize::MAX, 3, "vertex", MAX_CROWD_INSTANCES),
        &format!("too many instances: {} instances of 3 vertices each asked for, but at most {MAX_CROWD_INSTANCES} fit the limits", usize::MAX),
    );
    assert!(peak < 4096, "{peak}");
}

/// `n` model matrices that cost no memory until they are read: a zeroed allocation (calloc, which
/// the system maps lazily) viewed as `Mat4`s. `PaletteJob` reads only the length of its models
/// before refusing them, so a 1 GiB slice of MAX_JOINTS + 1 matrices is the smallest input that shows
/// the rule.
fn lazy_models(n: usize) -> Vec<[u128; 4]> {
    // `vec![zero; n]` of a type whose zero is all zero bits asks the allocator for zeroed memory.
    vec![[0u128; 4]; n]
}

#[test]
fn a_palette_of_more_than_max_joints_model_matrices_is_refused_on_every_backend() {
    let storage = lazy_models(MAX_JOINTS + 1);
    let models: &[Mat4] = bytemuck::cast_slice(&storage);
    assert_eq!(models.len(), MAX_JOINTS + 1);
    let want = Error::TooManyJoints {
        joints: MAX_JOINTS + 1,
        max: MAX_JOINTS,
    };
    let words = format!(
        "too many joints: {} given, at most {MAX_JOINTS} are supported",
        MAX_JOINTS + 1
    );
    let mut backends = vec![Backend::Reference, Backend::Auto];
    backends.extend(Isa::ALL.map(Backend::Isa));
    let (_, work) = counted(|| {
        for backend in backends {
            let mut palette: [PaletteMatrix; 0] = [];
            let mut job = PaletteJob::new(models, &[], &mut palette).backend(backend);
            assert_eq!(job.validate(), Err(want.clone()), "{backend:?}");
            assert_error(job.run(), &want, &words);
            // With a joint remap the models are counted the same way.
            let mut palette: [PaletteMatrix; 0] = [];
            let mut job = PaletteJob::new(models, &[], &mut palette)
                .joints(&[])
                .backend(backend);
            assert_error(job.run(), &want, &words);
        }
    });
    // Refused from the slice's length alone: no backend copied, converted or gathered the 1 GiB of
    // models (what was allocated is the error messages the assertions format).
    assert!(work.total < 4096, "{work:?}");
    // Exactly MAX_JOINTS models are accepted (an empty palette reads none of them).
    let models = &models[..MAX_JOINTS];
    for backend in [Backend::Reference, Backend::Auto] {
        let mut palette: [PaletteMatrix; 0] = [];
        PaletteJob::new(models, &[], &mut palette)
            .backend(backend)
            .run()
            .unwrap();
    }
}

/// One vertex on joint 0.
fn one_vertex() -> (Vec<Vec3>, Vec<[u16; 4]>, Vec<[f32; 4]>) {
    (vec![Vec3::ONE], vec![[0; 4]], vec![[1.0, 0.0, 0.0, 0.0]])
}

#[test]
fn max_influences_outside_one_to_sixteen_is_an_influence_count_error() {
    let (p, j, w) = one_vertex();
    let input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u16(&j),
        Attribute::weights_f32(&w),
    );
    for count in [0, 17, usize::MAX] {
        let options = PrepareOptions::default().max_influences(count);
        assert_error(
            SkinnedMesh::prepare(&input, &options),
            &Error::InfluenceCount {
                what: "max_influences",
                count,
            },
            &format!(
                "influence count out of range: max_influences is {count}, but must be 1 to 16"
            ),
        );
    }
    for count in 1..=16 {
        SkinnedMesh::prepare(&input, &PrepareOptions::default().max_influences(count)).unwrap();
    }
    // Through the importer, the same error wrapped in the primitive that met it.
    let mut b = Builder::default();
    let doc = rig(&mut b);
    let options = ispc_skinning::gltf::LoadOptions {
        max_influences: 0,
        ..Default::default()
    };
    assert_refused(
        GltfScene::from_slice_with(&b.glb(doc), None, &options),
        GltfError::Primitive {
            mesh: 0,
            primitive: 0,
            skin: 0,
            error: Box::new(Error::InfluenceCount {
                what: "max_influences",
                count: 0,
            }),
        },
        "mesh 0 primitive 0 (skin 0): influence count out of range: max_influences is 0, but must be 1 to 16",
    );
}

#[test]
fn negative_parents_other_than_minus_one_are_refused_as_given() {
    for (parents, joint, parent) in [
        (&[-7][..], 0, -7),
        (&[-1, 0, -2][..], 2, -2),
        (&[-1, i32::MIN][..], 1, i32::MIN),
    ] {
        assert_error(
            Skeleton::from_parent_indices(parents),
            &Error::NegativeParent { joint, parent },
            &format!("negative parent: joint {joint} names parent {parent}; only -1 (a root) may be negative"),
        );
    }
    assert!(Skeleton::from_parent_indices(&[-7])
        .unwrap_err()
        .to_string()
        .contains("-7"));
    assert_error(
        Skeleton::from_parent_indices(&[-1, 5]),
        &Error::ParentOutOfRange {
            joint: 1,
            parent: 5,
            joints: 2,
        },
        "parent out of range: joint 1 names parent 5, but there are only 2 joints",
    );
    assert_eq!(Skeleton::from_parent_indices(&[-1, 0]).unwrap().len(), 2);
}

/// Attributes that claim `count` vertices over 64 bytes.
fn claimed(bytes: &[u8], count: usize) -> MeshInput<'_> {
    MeshInput::new(
        Attribute::new(bytes, 0, 12, count, Format::F32x3),
        Attribute::new(bytes, 0, 8, count, Format::U16x4),
        Attribute::new(bytes, 0, 16, count, Format::F32x4),
    )
}

#[test]
fn vertex_counts_near_max_vertices_fail_before_allocating() {
    let bytes = [0u8; 64];
    for count in [MAX_VERTICES + 1, usize::MAX / 2, usize::MAX] {
        let (result, peak) = peak_alloc(|| {
            SkinnedMesh::prepare(&claimed(&bytes, count), &PrepareOptions::default())
        });
        assert_error(
            result,
            &Error::TooManyVertices {
                vertices: count,
                max: MAX_VERTICES,
            },
            &format!(
                "too many vertices: a mesh has at most {MAX_VERTICES}, but this one has {count}"
            ),
        );
        assert_eq!(peak, 0, "{count}");
    }
    // At the limit the count is allowed, and the 64 bytes cannot hold it.
    let (result, peak) = peak_alloc(|| {
        SkinnedMesh::prepare(&claimed(&bytes, MAX_VERTICES), &PrepareOptions::default())
    });
    assert_error(
        result,
        &Error::AttributeOutOfBounds {
            attribute: "positions",
            offset: 0,
            stride: 12,
            count: MAX_VERTICES,
            available: 64,
        },
        &format!("attribute out of bounds: positions ({MAX_VERTICES} elements at offset 0, stride 12) does not fit in its 64-byte buffer, or its stride is shorter than an element"),
    );
    assert_eq!(peak, 0);
}
