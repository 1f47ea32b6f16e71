//! Davies' scene: 64 cylinders of 2,112 vertices (64 rings of 33), each weighted to a chain of 30 bones
//! with 2 influences and animated by sine waves. Rows:
//! - `davies_cylinders`: skinning alone (positions and normals) of all 64 per frame, reference and every
//!   ISA; the summary turns it into frames per second, as the seed's Figure 15 does.
//! - `frame_sine` and `frame_noise20`: a whole frame, animation of the next frame (pose, local to model,
//!   palette) plus skinning of this one, on one thread and with [`FramePipeline`] overlapping the two on
//!   two threads (Davies' Figure 18, with 20 sine octaves standing in for his 20-octave Perlin noise).

use crate::pipeline::FramePipeline;
use crate::report::row::{backends, push_rows, Row};
use crate::report::timing::{median_ns_per_call, median_ns_per_call_in_pool, Budget};
use glam::{Mat4, Quat, Vec3};
use ispc_skinning::Renormalize;
use ispc_skinning::{
    Attribute, Backend, Isa, LocalToModelJob, Locals, MeshInput, PaletteJob, PaletteMatrix,
    PrepareOptions, Skeleton, SkinOutput, SkinnedMesh, SkinningJob, Trs,
};
use scenes::{cylinder, cylinder_pose, Cylinder};
use std::cell::RefCell;
use std::sync::Mutex;

const CYLINDERS: usize = 64;
const BONES: usize = 30;
const RINGS: usize = 64;
const SEGMENTS: usize = 33;
const INFLUENCES: usize = 2;

/// The seed's published figures, not measured here: Figure 15 of Davies' paper (3.0 GHz Pentium 4),
/// frames per second of C and SSE ("friendly data") skinning.
pub const SEED_FPS: [(&str, f64); 3] = [("C", 45.0), ("SSE", 82.0), ("SSE friendly data", 98.0)];

struct Scene {
    cylinder: Cylinder,
    skeleton: Skeleton,
    meshes: Vec<SkinnedMesh>,
}

/// Per-frame working memory of the animation step, reused between frames.
struct AnimScratch {
    t: Vec<Vec3>,
    r: Vec<Quat>,
    s: Vec<Vec3>,
    models: Vec<Mat4>,
}

impl Scene {
    fn new() -> Scene {
        let cylinder = cylinder(RINGS, SEGMENTS, BONES, INFLUENCES);
        let skeleton = Skeleton::from_parents(&cylinder.parents).expect("a chain");
        let input = MeshInput {
            normals: Some(Attribute::vec3(&cylinder.normals)),
            ..MeshInput::new(
                Attribute::vec3(&cylinder.positions),
                Attribute::joints_u16(&cylinder.joints),
                Attribute::weights_f32(&cylinder.weights),
            )
        };
        let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(BONES)).expect("valid mesh");
        // Separate copies, as the seed's 64 objects are: the frame does not fit in the L2 cache.
        let meshes = vec![mesh; CYLINDERS];
        Scene {
            cylinder,
            skeleton,
            meshes,
        }
    }

    fn vertices(&self) -> usize {
        CYLINDERS * self.cylinder.positions.len()
    }

    /// Poses every cylinder at `time` and writes its palette (BONES entries per cylinder).
    fn animate(
        &self,
        time: f32,
        octaves: usize,
        backend: Backend,
        scratch: &mut AnimScratch,
        palettes: &mut [PaletteMatrix],
    ) {
        // The seed's experiment splits a frame into an animation phase (this one: local to model and
        // palettes) and a skinning phase, so that FramePipeline can overlap them on two threads; a
        // Character runs both phases on one frame buffer, so the two phases call the jobs directly.
        for (c, palette) in palettes.chunks_mut(BONES).enumerate() {
            cylinder_pose(
                self.cylinder.bone_length,
                time,
                c as f32 * 0.37,
                octaves,
                (&mut scratch.t, &mut scratch.r, &mut scratch.s),
            );
            let locals = Locals::Trs(Trs {
                translations: &scratch.t,
                rotations: &scratch.r,
                scales: &scratch.s,
            });
            let mut ltm = LocalToModelJob::new(&self.skeleton, locals, &mut scratch.models);
            ltm.backend = backend;
            ltm.run().expect("valid pose");
            // A chain's level order is its bone order, so the inverse binds need no reordering.
            let mut pal = PaletteJob::new(&scratch.models, &self.cylinder.inverse_binds, palette);
            pal.backend = backend;
            pal.run().expect("valid palette");
        }
    }

    /// Skins every cylinder (positions and normals) with its palette.
    fn skin(
        &self,
        palettes: &[PaletteMatrix],
        backend: Backend,
        out: &mut [(Vec<Vec3>, Vec<Vec3>)],
    ) {
        for ((mesh, palette), (p, n)) in self.meshes.iter().zip(palettes.chunks(BONES)).zip(out) {
            let output = SkinOutput::Separate {
                positions: p,
                normals: Some(n),
                tangents: None,
            };
            let mut job = SkinningJob::new(mesh, palette, output).renormalize(Renormalize::None);
            job.backend = backend;
            job.run().expect("valid job");
        }
    }
}

fn scratch() -> AnimScratch {
    AnimScratch {
        t: vec![Vec3::ZERO; BONES],
        r: vec![Quat::IDENTITY; BONES],
        s: vec![Vec3::ONE; BONES],
        models: vec![Mat4::IDENTITY; BONES],
    }
}

/// Appends the `davies_cylinders` rows (skinning alone) and the `frame_sine` and `frame_noise20` rows
/// (whole frames, serial and pipelined).
pub fn rows(budget: Budget, isas: &[Isa], rows: &mut Vec<Row>) {
    let scene = Scene::new();
    let n = scene.vertices();
    let per = scene.cylinder.positions.len();
    let out = RefCell::new(vec![
        (vec![Vec3::ZERO; per], vec![Vec3::ZERO; per]);
        CYLINDERS
    ]);
    let mut palettes = vec![PaletteMatrix::IDENTITY; CYLINDERS * BONES];
    scene.animate(0.5, 1, Backend::Reference, &mut scratch(), &mut palettes);
    let budget = Budget {
        samples: budget.samples.min(9),
        ..budget
    };

    // Skinning alone.
    let backends = backends(isas);
    let (scene_ref, palettes_ref, out_ref) = (&scene, &palettes, &out);
    let mut c: Vec<Box<dyn FnMut() + '_>> = backends
        .iter()
        .map(|&(_, b)| {
            Box::new(move || scene_ref.skin(palettes_ref, b, &mut out_ref.borrow_mut()))
                as Box<dyn FnMut() + '_>
        })
        .collect();
    let times = median_ns_per_call(budget, &mut c);
    drop(c);
    push_rows(
        rows,
        "davies_cylinders",
        &backends,
        &times,
        n,
        Some(INFLUENCES as u32),
    );

    // Whole frames: the reference serially, the best ISA serially and pipelined.
    let Some(&best) = isas.first() else {
        return;
    };
    for (kernel, octaves) in [("frame_sine", 1usize), ("frame_noise20", 20)] {
        let pipeline = Mutex::new(FramePipeline::new(palettes.clone(), palettes.clone()));
        let anim = Mutex::new((scratch(), 0.0f32));
        let out = Mutex::new(out.borrow().clone());
        let (scene, pipeline, anim, out) = (&scene, &pipeline, &anim, &out);
        let frame = move |backend: Backend, overlap: bool| {
            let mut pipe = pipeline.lock().expect("not poisoned");
            let mut a = anim.lock().expect("not poisoned");
            let (scratch, time) = &mut *a;
            *time += 1.0 / 60.0;
            let t = *time;
            let mut out = out.lock().expect("not poisoned");
            let out: &mut Vec<_> = &mut out;
            let skin = |pal: &Vec<PaletteMatrix>| scene.skin(pal, backend, out);
            let animate =
                |pal: &mut Vec<PaletteMatrix>| scene.animate(t, octaves, backend, scratch, pal);
            if overlap {
                pipe.frame(skin, animate);
            } else {
                pipe.frame_serial(skin, animate);
            }
        };
        let mut c: Vec<Box<dyn FnMut() + Send + '_>> = vec![
            Box::new(move || frame(Backend::Reference, false)),
            Box::new(move || frame(best.into(), false)),
            Box::new(move || frame(best.into(), true)),
        ];
        // Measured from inside rayon's pool, as a job system runs its frames.
        let times = median_ns_per_call_in_pool(budget, &mut c);
        for (i, (isa, threads)) in [("reference", 1), (best.name(), 1), (best.name(), 2)]
            .into_iter()
            .enumerate()
        {
            rows.push(Row {
                kernel,
                isa: isa.to_string(),
                size: n,
                influences: Some(INFLUENCES as u32),
                threads,
                ns_per_item: times[i] / n as f64,
                reference_ns_per_item: times[0] / n as f64,
            });
        }
    }
}

/// Prints the scene's frames per second per backend next to the seed's published figures, and the
/// pipelining gains.
pub fn print_summary(rows: &[Row]) {
    let n = CYLINDERS * RINGS * SEGMENTS;
    let fps = |r: &Row| 1e9 / (r.ns_per_item * n as f64);
    let seed: Vec<String> = SEED_FPS.iter().map(|(w, f)| format!("{w} {f}")).collect();
    println!(
        "Davies' scene, {CYLINDERS} cylinders x {} vertices, {BONES} bones, {INFLUENCES} influences, positions + normals, skinning alone (the seed's published figures, Pentium 4: {} fps):",
        RINGS * SEGMENTS,
        seed.join(", ")
    );
    for r in rows.iter().filter(|r| r.kernel == "davies_cylinders") {
        println!(
            "  {:<9} {:>8.0} fps  ({:.2} ns/vertex, {:.2}x the reference)",
            r.isa,
            fps(r),
            r.ns_per_item,
            r.speedup()
        );
    }
    for (kernel, what, seed_gain) in [
        ("frame_sine", "sine-wave animation", 4.6),
        ("frame_noise20", "20-octave animation", 30.4),
    ] {
        let find = |threads: usize, reference: bool| {
            rows.iter().find(|r| {
                r.kernel == kernel && r.threads == threads && (r.isa == "reference") == reference
            })
        };
        if let (Some(serial), Some(piped)) = (find(1, false), find(2, false)) {
            println!(
                "  frame with {what}, {}: {:.0} fps serial, {:.0} fps pipelined (FramePipeline, 2 threads): {:+.1}% (seed's published gain: {seed_gain:+.1}%)",
                serial.isa,
                fps(serial),
                fps(piped),
                100.0 * (serial.ns_per_item / piped.ns_per_item - 1.0)
            );
        }
    }
    println!();
}
