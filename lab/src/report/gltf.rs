//! Row `gltf_frame`: one whole frame of a real glTF character, sampling the clip, local to model over
//! every node, the palettes and skinning every primitive, on the reference and every ISA. The report
//! uses CesiumMan from `../shared/assets` (3,273 vertices, 19 joints) when it is there, or the file given
//! with `bench --gltf PATH`; without either, the row is skipped with a message.

use crate::progress;
use crate::report::peer::{self, Job, Peer};
use crate::report::row::{backends, push_rows, Row};
use crate::report::timing::Budget;
use indicatif::ProgressBar;
use ispc_skinning::gltf::{GltfScene, Wrap};
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
    peer: Option<&mut Peer>,
) -> Result<(), String> {
    let Some(file) = asset(path) else {
        progress::note(
            bar,
            &format!("bench: gltf_frame skipped: {DEFAULT_ASSET} is not here (use --gltf PATH)"),
        );
        return Ok(());
    };
    bar.set_message(format!("gltf_frame on {}", file.display()));
    let scene = GltfScene::load(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let clip = (!scene.clips().is_empty()).then_some(0);
    let duration = clip.map_or(1.0, |c| scene.clips()[c].duration().max(1e-3));
    let n: usize = scene.primitives().iter().map(|p| p.vertex_count()).sum();
    if n == 0 {
        return Err(format!("{}: no skinned vertices", file.display()));
    }
    let backends = backends(isas);
    let states: Vec<RefCell<(ispc_skinning::gltf::Frame, f32)>> = backends
        .iter()
        .map(|_| RefCell::new((scene.frame_buffers(), 0.0)))
        .collect();
    let scene = &scene;
    let mut c: Vec<Box<dyn FnMut() + '_>> = backends
        .iter()
        .zip(&states)
        .map(|(&(_, backend), state)| {
            Box::new(move || {
                let (frame, time) = &mut *state.borrow_mut();
                // Step through the clip so every frame samples a new time.
                *time = (*time + duration / 97.0) % duration;
                frame.backend = backend;
                scene
                    .evaluate(clip, *time, Wrap::Loop, frame)
                    .expect("the loaded scene evaluates");
            }) as Box<dyn FnMut() + '_>
        })
        .collect();
    // With `--peers`, ozz-animation-rs runs the same frame (same file, clip and time sequence).
    let job = Job {
        kernel: "gltf_frame",
        size: n,
        influences: None,
        file: Some(&file),
    };
    let times = peer::median_ns_per_call(peer, job, budget, &mut c);
    push_rows(rows, "gltf_frame", &backends, &times, n, None);
    bar.suspend(|| print_summary(rows, &file, n, scene.node_count()));
    Ok(())
}

/// Prints the frame time per backend and the best ISA's speedup.
fn print_summary(rows: &[Row], file: &Path, n: usize, nodes: usize) {
    println!(
        "gltf_frame: {} ({n} skinned vertices, {} nodes), whole frame (sample, local to model, palettes, skin):",
        file.display(),
        nodes
    );
    let best = rows
        .iter()
        .filter(|r| r.kernel == "gltf_frame" && r.isa != "reference")
        .min_by(|a, b| a.ns_per_item.total_cmp(&b.ns_per_item));
    for r in rows.iter().filter(|r| r.kernel == "gltf_frame") {
        println!(
            "  {:<9} {:>8.1} us/frame  {:.2}x the reference",
            r.isa,
            r.ns_per_item * n as f64 * 1e-3,
            r.speedup()
        );
    }
    if let Some(b) = best {
        println!(
            "  best ISA {}: {:.2}x the reference (target 3x)",
            b.isa,
            b.speedup()
        );
    }
    println!();
}
