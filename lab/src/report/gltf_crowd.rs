//! Rows `gltf_crowd_*`: a crowd of 500 instances of a real glTF character per frame, each instance
//! with its own clip, time and place, on the crate's crowd path (`GltfScene::evaluate_crowd`: batch
//! sampling, crowd local to model, crowd palettes, crowd skinning), against the serial reference and
//! against what a user without the crowd path writes: a loop of 500 single-character frames
//! (`GltfScene::evaluate`) on the same ISA.
//!
//! - `gltf_crowd_frame`: the whole crowd frame, one thread, on the reference and every ISA;
//! - `gltf_crowd_loop`: 500 single frames, one thread, on every ISA (its reference is the crowd row's).
//!   Each instance has its own `Frame`, so that, as on the crowd path, every instance's skinned
//!   vertices are still there at the end of the frame (reusing one `Frame` would keep its output in
//!   the cache and measure a loop whose results are overwritten);
//! - `gltf_crowd_sample`, `gltf_crowd_ltm`, `gltf_crowd_palette`, `gltf_crowd_skin`: the four stages of
//!   the crowd frame, one thread (sampling is plain Rust, so its one row is `serial`);
//! - `gltf_crowd_frame` with every thread of the pool, on every ISA.
//!
//! Sizes count instances, so ns per item is ns per instance. Both paths renormalize normals precisely
//! (the crate's default).

use crate::progress;
use crate::report::gltf::asset;
use crate::report::row::{backends, push_rows, Row};
use crate::report::timing::{median_ns_per_call, median_ns_per_call_in_pool, Budget};
use glam::{Mat4, Quat, Vec3};
use indicatif::ProgressBar;
use ispc_skinning::gltf::{GltfScene, Wrap};
use ispc_skinning::{Backend, CrowdFrame, Isa, Threads};
use std::cell::RefCell;

/// Instances of the crowd.
pub const INSTANCES: usize = 500;
/// Seconds the clock advances per measured call, so that every call samples new times.
const STEP: f32 = 1.0 / 60.0;

/// Each instance's clip, time offset and place: clips in turn, times spread over the clips, a grid
/// of 25 x 20 facing around.
struct Crowd {
    clips: Vec<usize>,
    offsets: Vec<f32>,
    roots: Vec<Mat4>,
}

impl Crowd {
    fn new(scene: &GltfScene) -> Crowd {
        let n = scene.clips().len().max(1);
        Crowd {
            clips: (0..INSTANCES).map(|i| i % n).collect(),
            offsets: (0..INSTANCES).map(|i| i as f32 * 0.0371).collect(),
            roots: (0..INSTANCES)
                .map(|i| {
                    let at = Vec3::new((i % 25) as f32 * 2.0, 0.0, (i / 25) as f32 * 2.0);
                    Mat4::from_rotation_translation(Quat::from_rotation_y(i as f32), at)
                })
                .collect(),
        }
    }

    fn times(&self, clock: f32, out: &mut [f32]) {
        for (t, o) in out.iter_mut().zip(&self.offsets) {
            *t = clock + o;
        }
    }
}

/// One candidate's state: its crowd frame (or one single frame per instance), its clock and its time
/// buffer.
struct State {
    crowd: CrowdFrame,
    singles: Vec<ispc_skinning::Frame>,
    clock: f32,
    times: Vec<f32>,
}

/// Appends the `gltf_crowd_*` rows for the file `path` (or the default asset) and prints their
/// summary; without a file or without a clip, notes on stderr that the rows are skipped.
///
/// # Errors
/// When the file cannot be loaded or the crowd cannot be allocated.
pub fn rows(
    budget: Budget,
    isas: &[Isa],
    path: Option<&str>,
    rows: &mut Vec<Row>,
    bar: &ProgressBar,
) -> Result<(), String> {
    let Some(file) = asset(path) else {
        progress::note(
            bar,
            "bench: gltf_crowd skipped: no glTF file (see gltf_frame)",
        );
        return Ok(());
    };
    let scene = GltfScene::load(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    if scene.clips().is_empty() {
        progress::note(
            bar,
            &format!("bench: gltf_crowd skipped: {} has no clip", file.display()),
        );
        return Ok(());
    }
    bar.set_message(format!(
        "gltf_crowd: {INSTANCES} instances of {}",
        file.display()
    ));
    let crowd = Crowd::new(&scene);
    let backends = backends(isas);
    let state =
        |backend: Backend, threads: Threads, singles: usize| -> Result<RefCell<State>, String> {
            let mut frame = scene
                .crowd_buffers(INSTANCES)
                .map_err(|e| e.to_string())?
                .backend(backend)
                .threads(threads);
            frame.roots_mut().copy_from_slice(&crowd.roots);
            Ok(RefCell::new(State {
                crowd: frame,
                singles: (0..singles)
                    .map(|_| scene.frame_buffers().backend(backend))
                    .collect(),
                clock: 0.0,
                times: vec![0.0; INSTANCES],
            }))
        };
    let crowd_frame = |s: &mut State| {
        s.clock += STEP;
        crowd.times(s.clock, &mut s.times);
        scene
            .evaluate_crowd(&crowd.clips, &s.times, Wrap::Loop, &mut s.crowd)
            .expect("the loaded scene evaluates");
    };
    let single_frames = |s: &mut State| {
        s.clock += STEP;
        crowd.times(s.clock, &mut s.times);
        for (i, frame) in s.singles.iter_mut().enumerate() {
            frame.root = crowd.roots[i];
            scene
                .evaluate(Some(crowd.clips[i]), s.times[i], Wrap::Loop, frame)
                .expect("the loaded scene evaluates");
        }
    };

    // The whole frame, one thread: the crowd path on every backend, then the loop on every ISA, in
    // one round-robin so that the ratios come from the same run.
    let states = backends
        .iter()
        .map(|(_, b)| state(*b, Threads::One, 0))
        .collect::<Result<Vec<_>, _>>()?;
    let loops = isas
        .iter()
        .map(|&i| state(i.into(), Threads::One, INSTANCES))
        .collect::<Result<Vec<_>, _>>()?;
    let mut c: Vec<Box<dyn FnMut() + '_>> = Vec::new();
    for s in &states {
        c.push(Box::new(|| crowd_frame(&mut s.borrow_mut())));
    }
    for s in &loops {
        c.push(Box::new(|| single_frames(&mut s.borrow_mut())));
    }
    let times = median_ns_per_call(budget, &mut c);
    drop(c);
    push_rows(rows, "gltf_crowd_frame", &backends, &times, INSTANCES, None);
    let reference = times[0] / INSTANCES as f64;
    for (isa, t) in isas.iter().zip(&times[backends.len()..]) {
        rows.push(Row {
            kernel: "gltf_crowd_loop",
            isa: isa.name().into(),
            size: INSTANCES,
            influences: None,
            threads: 1,
            ns_per_item: t / INSTANCES as f64,
            reference_ns_per_item: reference,
        });
    }

    // The four stages of the crowd frame, one thread, each stage in its own round-robin.
    bar.set_message("gltf_crowd stages");
    let character = scene.character();
    let sample = |s: &mut State| {
        s.clock += STEP;
        crowd.times(s.clock, &mut s.times);
        scene
            .sample_crowd(
                &crowd.clips,
                &s.times,
                Wrap::Loop,
                Threads::One,
                s.crowd.pose_mut(),
            )
            .expect("valid crowd");
    };
    let one = [state(Backend::Reference, Threads::One, 0)?];
    let t = median_ns_per_call(budget, &mut [Box::new(|| sample(&mut one[0].borrow_mut()))]);
    rows.push(Row {
        kernel: "gltf_crowd_sample",
        isa: "serial".into(),
        size: INSTANCES,
        influences: None,
        threads: 1,
        ns_per_item: t[0] / INSTANCES as f64,
        reference_ns_per_item: t[0] / INSTANCES as f64,
    });
    type Stage = fn(&ispc_skinning::Character, &mut CrowdFrame) -> Result<(), ispc_skinning::Error>;
    let stages: [(&'static str, Stage); 3] = [
        (
            "gltf_crowd_ltm",
            ispc_skinning::Character::crowd_local_to_model,
        ),
        (
            "gltf_crowd_palette",
            ispc_skinning::Character::crowd_palettes,
        ),
        ("gltf_crowd_skin", ispc_skinning::Character::crowd_skin),
    ];
    for (kernel, stage) in stages {
        let mut c: Vec<Box<dyn FnMut() + '_>> = states
            .iter()
            .map(|s| {
                Box::new(move || stage(character, &mut s.borrow_mut().crowd).expect("valid crowd"))
                    as Box<dyn FnMut() + '_>
            })
            .collect();
        let times = median_ns_per_call(budget, &mut c);
        push_rows(rows, kernel, &backends, &times, INSTANCES, None);
    }

    // The whole frame on every thread of the pool, every ISA; not with a pool of one thread (under
    // `--peers` the report runs on one CPU), where it would repeat the single-thread rows.
    let pool = rayon::current_num_threads();
    if pool < 2 {
        bar.suspend(|| print_summary(rows, &file.display().to_string()));
        return Ok(());
    }
    bar.set_message("gltf_crowd threads");
    let threaded = isas
        .iter()
        .map(|&i| state(i.into(), Threads::All, 0))
        .collect::<Result<Vec<_>, _>>()?;
    let threaded_cells: Vec<std::sync::Mutex<State>> = threaded
        .into_iter()
        .map(|s| std::sync::Mutex::new(s.into_inner()))
        .collect();
    let mut c: Vec<Box<dyn FnMut() + Send + '_>> = Vec::new();
    for s in &threaded_cells {
        let crowd_frame = &crowd_frame;
        c.push(Box::new(move || {
            crowd_frame(&mut s.lock().expect("not poisoned"));
        }));
    }
    let times = median_ns_per_call_in_pool(budget, &mut c);
    for (isa, t) in isas.iter().zip(&times) {
        rows.push(Row {
            kernel: "gltf_crowd_frame",
            isa: isa.name().into(),
            size: INSTANCES,
            influences: None,
            threads: pool,
            ns_per_item: t / INSTANCES as f64,
            reference_ns_per_item: reference,
        });
    }
    bar.suspend(|| print_summary(rows, &file.display().to_string()));
    Ok(())
}

/// Prints, per ISA, the crowd frame against the reference and against the loop of single frames, the
/// stages, and the threaded frame.
fn print_summary(rows: &[Row], file: &str) {
    println!("gltf_crowd: {INSTANCES} instances of {file} per frame (sample, local to model, palettes, skin):");
    let find = |kernel: &str, isa: &str, threads: usize| {
        rows.iter()
            .find(|r| r.kernel == kernel && r.isa == isa && (r.threads == 1) == (threads == 1))
    };
    let ms = |r: &Row| r.ns_per_item * INSTANCES as f64 * 1e-6;
    if let Some(r) = find("gltf_crowd_frame", "reference", 1) {
        println!("  reference crowd frame: {:.2} ms", ms(r));
    }
    for r in rows
        .iter()
        .filter(|r| r.kernel == "gltf_crowd_frame" && r.isa != "reference" && r.threads == 1)
    {
        let looped = find("gltf_crowd_loop", &r.isa, 1);
        let threaded = find("gltf_crowd_frame", &r.isa, 2);
        println!(
            "  {:<7} crowd {:>6.2} ms ({:.2}x the reference), loop of single frames {:>6.2} ms (crowd {:.2}x faster), {}",
            r.isa,
            ms(r),
            r.speedup(),
            looped.map_or(f64::NAN, ms),
            looped.map_or(f64::NAN, |l| l.ns_per_item / r.ns_per_item),
            threaded.map_or("all threads: not measured (one thread)".to_string(), |t| {
                format!("all {} threads {:.2} ms", t.threads, ms(t))
            }),
        );
        let stage = |k: &str| find(k, &r.isa, 1).map_or(f64::NAN, ms);
        println!(
            "          stages: sample {:.3} ms (serial), local to model {:.3} ms, palettes {:.3} ms, skin {:.2} ms",
            find("gltf_crowd_sample", "serial", 1).map_or(f64::NAN, ms),
            stage("gltf_crowd_ltm"),
            stage("gltf_crowd_palette"),
            stage("gltf_crowd_skin"),
        );
    }
    println!();
}
