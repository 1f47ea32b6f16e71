//! Rows `gltf_frame` and `gltf_frame_by_count`: one whole frame of a real glTF character, sampling the
//! clip, local to model over every node, the palettes and skinning every primitive, on the reference and
//! every ISA; the first with the file's vertex order, the second with each primitive's vertices sorted
//! by influence count at load ([`VertexOrder::ByInfluenceCount`]), as ozz's mesh importer sorts them.
//! Row `gltf_frame_bounds` is the first frame followed by `Frame::bounds` (the box from the skinning
//! pass, plus the rigid meshes read), measured in the same round-robin as `gltf_frame` so that the two
//! give the bounds' cost. The report
//! uses CesiumMan from `../shared/assets` (3,273 vertices, 19 joints) when it is there, or the file given
//! with `bench --gltf PATH`; without either, the row is skipped with a message.

use crate::progress;
use crate::report::peer::{self, Job, Peer};
use crate::report::row::{backends, push_rows, Row};
use crate::report::timing::Budget;
use indicatif::ProgressBar;
use ispc_skinning::gltf::{GltfScene, LoadOptions, VertexOrder, Wrap};
use ispc_skinning::Isa;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// The default asset, relative to the working directory (the repository root under `cargo run`).
const DEFAULT_ASSET: &str = "../shared/assets/CesiumMan/CesiumMan.glb";
/// The default asset where this crate was built, for runs started from another directory.
const BUILT_ASSET: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/assets/CesiumMan/CesiumMan.glb"
);

/// The file the row measures: `path` when given, else the default asset when present (relative to the
/// working directory, then to the repository this binary was built from).
pub fn asset(path: Option<&str>) -> Option<PathBuf> {
    match path {
        Some(p) => Some(PathBuf::from(p)),
        None => [DEFAULT_ASSET, BUILT_ASSET]
            .into_iter()
            .find(|p| Path::new(p).is_file())
            .map(PathBuf::from),
    }
}

/// Appends the `gltf_frame` rows for the file `path` (or the default asset) and prints their summary;
/// without a file, notes on stderr that the rows are skipped.
///
/// # Errors
/// When the file cannot be loaded or has no skinned vertex.
pub fn rows(
    budget: Budget,
    isas: &[Isa],
    path: Option<&str>,
    rows: &mut Vec<Row>,
    bar: &ProgressBar,
    mut peer: Option<&mut Peer>,
) -> Result<(), String> {
    let Some(file) = asset(path) else {
        progress::note(
            bar,
            &format!("bench: gltf_frame skipped: {DEFAULT_ASSET} is not here (use --gltf PATH)"),
        );
        return Ok(());
    };
    bar.set_message(format!("gltf_frame on {}", file.display()));
    for (kernel, vertex_order, bounds_kernel) in [
        ("gltf_frame", VertexOrder::File, Some("gltf_frame_bounds")),
        ("gltf_frame_by_count", VertexOrder::ByInfluenceCount, None),
    ] {
        let options = LoadOptions {
            vertex_order,
            ..LoadOptions::default()
        };
        let scene = GltfScene::load_with(&file, &options)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        frame_rows(
            (kernel, bounds_kernel),
            &scene,
            &file,
            budget,
            isas,
            rows,
            peer.as_deref_mut(),
        )?;
    }
    bar.suspend(|| print_summary(rows, &file));
    Ok(())
}

/// One frame row (`kernel.0`) of `scene`, with the peer's frame in the same round-robin, and where
/// `kernel.1` names one, the frame followed by `Frame::bounds` in that round-robin too.
fn frame_rows(
    kernel: (&'static str, Option<&'static str>),
    scene: &GltfScene,
    file: &Path,
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    peer: Option<&mut Peer>,
) -> Result<(), String> {
    let clip = (!scene.clips().is_empty()).then_some(0);
    let duration = clip.map_or(1.0, |c| scene.clips()[c].duration().max(1e-3));
    let n: usize = scene.primitives().iter().map(|p| p.vertex_count()).sum();
    if n == 0 {
        return Err(format!("{}: no skinned vertices", file.display()));
    }
    let backends = backends(isas);
    let (kernel, bounds_kernel) = kernel;
    // The frame on every backend, then (for the bounds row) the frame and its box on every backend.
    let variants: &[bool] = if bounds_kernel.is_some() {
        &[false, true]
    } else {
        &[false]
    };
    let states: Vec<RefCell<(ispc_skinning::gltf::Frame, f32)>> = (0..variants.len()
        * backends.len())
        .map(|_| RefCell::new((scene.frame_buffers(), 0.0)))
        .collect();
    let mut c: Vec<Box<dyn FnMut() + '_>> = variants
        .iter()
        .flat_map(|&bounds| backends.iter().map(move |&(_, backend)| (bounds, backend)))
        .zip(&states)
        .map(|((bounds, backend), state)| {
            Box::new(move || {
                let (frame, time) = &mut *state.borrow_mut();
                // Step through the clip so every frame samples a new time.
                *time = (*time + duration / 97.0) % duration;
                frame.backend = backend;
                scene
                    .evaluate(clip, *time, Wrap::Loop, frame)
                    .expect("the loaded scene evaluates");
                if bounds {
                    std::hint::black_box(frame.bounds());
                }
            }) as Box<dyn FnMut() + '_>
        })
        .collect();
    // With `--peers`, ozz-animation-rs runs the same frame (same file, clip and time sequence).
    let job = Job {
        kernel,
        size: n,
        influences: None,
        file: Some(file),
    };
    let times = peer::median_ns_per_call(peer, job, budget, &mut c);
    let (plain, with_bounds) = times.split_at(backends.len().min(times.len()));
    push_rows(rows, kernel, &backends, plain, n, None);
    if let Some(k) = bounds_kernel {
        push_rows(rows, k, &backends, with_bounds, n, None);
    }
    Ok(())
}

/// Prints the frame time per backend and order, and the best ISA's speedup.
fn print_summary(rows: &[Row], file: &Path) {
    for (kernel, order) in [
        ("gltf_frame", "the file's vertex order"),
        ("gltf_frame_by_count", "vertices sorted by influence count"),
    ] {
        let Some(n) = rows.iter().find(|r| r.kernel == kernel).map(|r| r.size) else {
            continue;
        };
        println!(
            "{kernel}: {} ({n} skinned vertices, {order}), whole frame (sample, local to model, palettes, skin):",
            file.display(),
        );
        for r in rows.iter().filter(|r| r.kernel == kernel) {
            println!(
                "  {:<9} {:>8.1} us/frame  {:.2}x the reference",
                r.isa,
                r.ns_per_item * n as f64 * 1e-3,
                r.speedup()
            );
        }
        let best = rows
            .iter()
            .filter(|r| r.kernel == kernel && r.isa != "reference")
            .min_by(|a, b| a.ns_per_item.total_cmp(&b.ns_per_item));
        if let Some(b) = best {
            println!(
                "  best ISA {}: {:.2}x the reference (target 3x)",
                b.isa,
                b.speedup()
            );
        }
        if kernel == "gltf_frame" {
            print_bounds_cost(rows);
        }
        println!();
    }
}

/// The cost of `Frame::bounds` after the frame, per backend: `gltf_frame_bounds` over `gltf_frame`
/// from the same round-robin (target: at most 5% of the frame).
fn print_bounds_cost(rows: &[Row]) {
    for r in rows.iter().filter(|r| r.kernel == "gltf_frame_bounds") {
        let Some(frame) = rows
            .iter()
            .find(|f| f.kernel == "gltf_frame" && f.isa == r.isa)
        else {
            continue;
        };
        println!(
            "  {:<9} frame + bounds {:>8.1} us: bounds cost {:+.1}% of the frame (target at most 5%)",
            r.isa,
            r.ns_per_item * r.size as f64 * 1e-3,
            100.0 * (r.ns_per_item / frame.ns_per_item - 1.0)
        );
    }
}
