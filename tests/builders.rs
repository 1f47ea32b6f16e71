//! The builder-style setters give the same jobs as setting the fields, and the output shorthands the
//! same outputs as spelling out `SkinOutput::Separate`.

mod common;

use common::{backends, random_transform, Rng};
use ispc_skinning::glam::{Mat4, Quat, Vec3, Vec4};
use ispc_skinning::{
    Attribute, Backend, CrowdLocalToModelJob, CrowdModels, CrowdPose, LocalToModelJob, Locals,
    MeshInput, Method, PaletteJob, PaletteMatrix, PrepareOptions, Skeleton, SkinOutput,
    SkinnedMesh, SkinnedVertices, SkinningJob, Threads, Trs,
};

fn rig() -> (Skeleton, Vec<Mat4>) {
    let skeleton = Skeleton::from_parents(&[None, Some(0), Some(1), Some(0)]).unwrap();
    let mut rng = Rng::new(7);
    let locals = (0..4)
        .map(|_| random_transform(&mut rng, 0.5..1.5, -1.0..1.0))
        .collect();
    (skeleton, locals)
}

#[test]
fn local_to_model_builder_matches_the_fields() {
    let (skeleton, locals) = rig();
    let root = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
    for backend in backends() {
        let mut by_fields = vec![Mat4::ZERO; 4];
        let mut job = LocalToModelJob::new(&skeleton, Locals::Matrices(&locals), &mut by_fields);
        (job.root, job.backend, job.method) = (root, backend, Method::Auto);
        job.run().unwrap();
        let mut by_builder = vec![Mat4::ZERO; 4];
        LocalToModelJob::new(&skeleton, Locals::Matrices(&locals), &mut by_builder)
            .root(root)
            .backend(backend)
            .method(Method::Auto)
            .run()
            .unwrap();
        assert_eq!(by_fields, by_builder, "{backend:?}");
        // In level order the rig is 0; its children 1 and 2 (original 1 and 3); then 3 (original 2,
        // the child of 1). A partial update from the leaf 2 computes it alone and touches nothing else.
        let mut partial = by_builder.clone();
        (partial[1], partial[2], partial[3]) = (Mat4::ZERO, Mat4::ZERO, Mat4::ZERO);
        LocalToModelJob::new(&skeleton, Locals::Matrices(&locals), &mut partial)
            .root(root)
            .from_joint(2)
            .backend(backend)
            .run()
            .unwrap();
        assert_eq!(partial[2], by_builder[2]);
        assert_eq!([partial[1], partial[3]], [Mat4::ZERO; 2]);
    }
}

#[test]
fn every_form_of_locals_converts_to_the_same_job() {
    let (skeleton, _) = rig();
    let t = [Vec3::X, Vec3::Y, Vec3::Z, Vec3::ONE];
    let q = [
        Quat::IDENTITY,
        Quat::from_rotation_x(0.4),
        Quat::from_rotation_y(-0.8),
        Quat::from_rotation_z(1.1),
    ];
    let s = [
        Vec3::ONE,
        Vec3::splat(2.0),
        Vec3::new(1.0, 0.5, 1.5),
        Vec3::ONE,
    ];
    let matrices: Vec<Mat4> = (0..4)
        .map(|j| Mat4::from_cols_array(&ispc_skinning::reference::trs_matrix(t[j], q[j], s[j])))
        .collect();
    for backend in backends() {
        let run = |locals: Locals<'_>| {
            let mut models = vec![Mat4::ZERO; 4];
            LocalToModelJob::new(&skeleton, locals, &mut models)
                .backend(backend)
                .run()
                .unwrap();
            models
        };
        let by_trs = run(Locals::trs(&t, &q, &s));
        let trs = Trs {
            translations: &t,
            rotations: &q,
            scales: &s,
        };
        assert_eq!(by_trs, run(Locals::Trs(trs)), "{backend:?}");
        assert_eq!(by_trs, run(trs.into()), "{backend:?}");
        let by_matrices = run(Locals::Matrices(&matrices));
        assert_eq!(by_matrices, run((&matrices).into()), "{backend:?}");
        assert_eq!(by_matrices, run(matrices[..].into()), "{backend:?}");
        // LocalToModelJob::new takes each form directly.
        let mut direct = vec![Mat4::ZERO; 4];
        LocalToModelJob::new(&skeleton, &matrices, &mut direct)
            .backend(backend)
            .run()
            .unwrap();
        assert_eq!(direct, by_matrices, "{backend:?}");
        LocalToModelJob::new(&skeleton, trs, &mut direct)
            .backend(backend)
            .run()
            .unwrap();
        assert_eq!(direct, by_trs, "{backend:?}");
    }
}

#[test]
fn palette_builder_matches_the_fields() {
    let (_, models) = rig();
    let inverse_binds = vec![Mat4::IDENTITY; 2];
    let remap = [3usize, 1];
    for backend in backends() {
        let mut by_fields = vec![PaletteMatrix::IDENTITY; 2];
        let mut job = PaletteJob::new(&models, &inverse_binds, &mut by_fields);
        (job.joints, job.backend) = (Some(&remap[..]), backend);
        job.run().unwrap();
        let mut by_builder = vec![PaletteMatrix::IDENTITY; 2];
        PaletteJob::new(&models, &inverse_binds, &mut by_builder)
            .joints(&remap)
            .backend(backend)
            .run()
            .unwrap();
        assert_eq!(by_fields, by_builder, "{backend:?}");
        assert_eq!(Mat4::from(by_builder[0]), models[3]);
        assert_eq!(PaletteMatrix::from(models[1]), by_builder[1]);
    }
}

#[test]
fn crowd_builder_matches_the_fields() {
    let (skeleton, _) = rig();
    let instances = 20;
    let mut pose = CrowdPose::new(&skeleton, instances).unwrap();
    let (t, q, s) = (
        vec![Vec3::Y; 4],
        vec![Quat::from_rotation_z(0.3); 4],
        vec![Vec3::ONE; 4],
    );
    for i in 0..instances {
        let trs = Trs {
            translations: &t,
            rotations: &q,
            scales: &s,
        };
        pose.set_instance(i, trs).unwrap();
    }
    let roots: Vec<Mat4> = (0..instances)
        .map(|i| Mat4::from_translation(Vec3::X * i as f32))
        .collect();
    for backend in backends() {
        let mut by_fields = CrowdModels::new(&skeleton, instances).unwrap();
        let mut job = CrowdLocalToModelJob::new(&skeleton, &pose, &mut by_fields);
        (job.roots, job.backend, job.threads) = (Some(&roots[..]), backend, Threads::All);
        job.run().unwrap();
        let mut by_builder = CrowdModels::new(&skeleton, instances).unwrap();
        CrowdLocalToModelJob::new(&skeleton, &pose, &mut by_builder)
            .roots(&roots)
            .backend(backend)
            .threads(Threads::All)
            .run()
            .unwrap();
        for i in 0..instances {
            for j in 0..4 {
                assert_eq!(by_fields.model(i, j), by_builder.model(i, j), "{backend:?}");
            }
        }
    }
}

#[test]
fn skinning_builder_and_output_shorthands_match_the_fields() {
    let positions = [Vec3::ZERO, Vec3::Y, Vec3::X];
    let normals = [Vec3::Z; 3];
    let tangents = [Vec4::new(1.0, 0.0, 0.0, -1.0); 3];
    let joints = [[0u16, 1, 0, 0]; 3];
    let weights = [[0.25f32, 0.75, 0.0, 0.0]; 3];
    let mut input = MeshInput::new(
        Attribute::vec3(&positions),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    );
    input.normals = Some(Attribute::vec3(&normals));
    input.tangents = Some(Attribute::vec4(&tangents));
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(2)).unwrap();
    let palette = [
        PaletteMatrix::from(Mat4::from_rotation_x(0.5)),
        PaletteMatrix::from(Mat4::from_scale_rotation_translation(
            Vec3::splat(2.0),
            Quat::from_rotation_y(0.7),
            Vec3::X,
        )),
    ];
    for backend in backends() {
        let renormalize = ispc_skinning::Renormalize::Precise;
        let (mut p1, mut n1, mut t1) = ([Vec3::ZERO; 3], [Vec3::ZERO; 3], [Vec4::ZERO; 3]);
        let out = SkinOutput::Separate {
            positions: &mut p1,
            normals: Some(&mut n1),
            tangents: Some(&mut t1),
        };
        let mut job = SkinningJob::new(&mesh, &palette, out);
        (job.backend, job.renormalize, job.threads) = (backend, renormalize, Threads::All);
        job.run().unwrap();
        let (mut p2, mut n2, mut t2) = ([Vec3::ZERO; 3], [Vec3::ZERO; 3], [Vec4::ZERO; 3]);
        let out = SkinOutput::positions_normals_tangents(&mut p2, &mut n2, &mut t2);
        SkinningJob::new(&mesh, &palette, out)
            .backend(backend)
            .renormalize(renormalize)
            .threads(Threads::All)
            .streaming(false)
            .run()
            .unwrap();
        assert_eq!((p1, n1, t1), (p2, n2, t2), "{backend:?}");
        let mut p3 = [Vec3::ZERO; 3];
        SkinningJob::new(&mesh, &palette, SkinOutput::positions(&mut p3))
            .backend(backend)
            .run()
            .unwrap();
        assert_eq!(p1, p3);
        let (mut p4, mut n4) = ([Vec3::ZERO; 3], [Vec3::ZERO; 3]);
        SkinningJob::new(
            &mesh,
            &palette,
            SkinOutput::positions_normals(&mut p4, &mut n4),
        )
        .backend(backend)
        .renormalize(renormalize)
        .run()
        .unwrap();
        assert_eq!((p1, n1), (p4, n4));
    }
    assert_eq!(
        Backend::from(ispc_skinning::Isa::Avx2),
        Backend::Isa(ispc_skinning::Isa::Avx2)
    );
}

#[test]
fn bounds_of_skinned_vertices() {
    let mut v = SkinnedVertices::default();
    assert_eq!(v.bounds(), None);
    v.positions = vec![
        Vec3::new(1.0, -2.0, 3.0),
        Vec3::new(-1.0, 5.0, 0.5),
        Vec3::ZERO,
    ];
    assert_eq!(
        v.bounds(),
        Some((Vec3::new(-1.0, -2.0, 0.0), Vec3::new(1.0, 5.0, 3.0)))
    );
}
