//! FramePipeline: the overlapped frame computes exactly what the serial one does, and the buffers swap.

use glam::{Mat4, Quat, Vec3};
use ispc_skinning::Renormalize;
use ispc_skinning::{
    Attribute, Backend, LocalToModelJob, Locals, MeshInput, PaletteJob, PaletteMatrix,
    PrepareOptions, Skeleton, SkinOutput, SkinnedMesh, SkinningJob, Trs,
};
use ispc_skinning_lab::pipeline::FramePipeline;
use scenes::{cylinder, cylinder_pose};

#[test]
fn buffers_swap_after_each_frame() {
    let mut p = FramePipeline::new(1, 2);
    assert_eq!(*p.current(), 1);
    let (seen, ()) = p.frame(|c| *c, |next| *next = 3);
    assert_eq!((seen, *p.current()), (1, 3));
    let (seen, ()) = p.frame_serial(|c| *c, |next| *next = 4);
    assert_eq!((seen, *p.current()), (3, 4));
    *p.current_mut() = 5;
    assert_eq!(*p.current(), 5);
}

/// Ten frames of a skinned cylinder, animated and skinned through the pipeline, once overlapped and once
/// serially, on every backend: the skinned positions are bit-identical, and each frame is skinned with
/// the pose the previous frame computed.
#[test]
fn overlapped_frames_equal_serial_frames() {
    let c = cylinder(16, 12, 8, 2);
    let skeleton = Skeleton::from_parents(&c.parents).unwrap();
    let input = MeshInput::new(
        Attribute::vec3(&c.positions),
        Attribute::joints_u16(&c.joints),
        Attribute::weights_f32(&c.weights),
    );
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(8)).unwrap();
    let animate = |time: f32, backend: Backend, palette: &mut Vec<PaletteMatrix>| {
        let (mut t, mut r, mut s) = (
            vec![Vec3::ZERO; 8],
            vec![Quat::IDENTITY; 8],
            vec![Vec3::ONE; 8],
        );
        cylinder_pose(c.bone_length, time, 0.3, 3, (&mut t, &mut r, &mut s));
        let mut models = vec![Mat4::IDENTITY; 8];
        let locals = Locals::Trs(Trs {
            translations: &t,
            rotations: &r,
            scales: &s,
        });
        let mut job = LocalToModelJob::new(&skeleton, locals, &mut models);
        job.backend = backend;
        job.run().unwrap();
        let mut job = PaletteJob::new(&models, &c.inverse_binds, palette);
        job.backend = backend;
        job.run().unwrap();
    };
    let skin = |palette: &Vec<PaletteMatrix>, backend: Backend| {
        let mut out = vec![Vec3::NAN; mesh.vertex_count()];
        let output = SkinOutput::Separate {
            positions: &mut out,
            normals: None,
            tangents: None,
        };
        let mut job = SkinningJob::new(&mesh, palette, output).renormalize(Renormalize::None);
        job.backend = backend;
        job.run().unwrap();
        out
    };
    let mut backends = vec![Backend::Reference];
    backends.extend(
        ispc_skinning::Isa::available()
            .into_iter()
            .map(Backend::from),
    );
    for backend in backends {
        let first = vec![PaletteMatrix::IDENTITY; 8];
        let mut overlapped = FramePipeline::new(first.clone(), first.clone());
        let mut serial = FramePipeline::new(first.clone(), first);
        animate(0.0, backend, overlapped.current_mut());
        animate(0.0, backend, serial.current_mut());
        for f in 0..10 {
            let next = (f + 1) as f32 / 30.0;
            let (a, ()) = overlapped.frame(|p| skin(p, backend), |p| animate(next, backend, p));
            let (b, ()) = serial.frame_serial(|p| skin(p, backend), |p| animate(next, backend, p));
            assert_eq!(a, b, "{backend:?} frame {f}");
            // The frame was skinned with the pose computed one frame earlier.
            let mut expect = vec![PaletteMatrix::IDENTITY; 8];
            animate(f as f32 / 30.0, backend, &mut expect);
            assert_eq!(
                a,
                skin(&expect, backend),
                "{backend:?} frame {f} used the wrong pose"
            );
        }
    }
}
