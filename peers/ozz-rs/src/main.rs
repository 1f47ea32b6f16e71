//! ozz-animation-rs 0.11.0 on the ispc-skinning report's workloads, timed inside the report's
//! round-robin. `ispc-skinning bench --peers` builds this binary with its pinned nightly toolchain and
//! starts it as a child process; it answers one line per command on stdin:
//!
//! - `setup <kernel> <size> [<file>]`: builds the workload (`skin_p`, `skin_pn`, `skin_pnt`,
//!   `local_to_model_trs`, `blend_2layers`, `blend_additive`, or with the glTF file `gltf_frame`,
//!   `pose_cesiumman` or `pose_fox`: the file's clip sampled, local to model and palettes; or
//!   `pose_rig67`, the same on the lab's procedural rig),
//!   checks its output once against the library's serial reference and answers `ok <id>`.
//! - `calibrate <id> <sample_ns>`: warms the workload up and answers `reps <n>`, the number of calls that
//!   fill one sample of `sample_ns` nanoseconds (the same rule as the report's own calibration).
//! - `sample <id> <reps>`: runs the workload `reps` times and answers `ns <t>`, the mean time per call in
//!   nanoseconds, measured here so that no pipe round trip is in the figure.
//! - `quit` (or the end of stdin): exits.
//!
//! Any failure answers `error <message>` on one line.

mod archive;
mod blending;
mod gltf_frame;
mod pose_rig;
mod workload;
mod workloads;

use std::hint::black_box;
use std::io::{BufRead, Write};
use std::time::Instant;

use workload::Workload;

fn setup(args: &[&str], rest: &str) -> Result<Box<dyn Workload>, String> {
    let (kernel, size) = match args {
        [k, s, ..] => (
            *k,
            s.parse::<usize>().map_err(|e| format!("size {s}: {e}"))?,
        ),
        _ => return Err("setup <kernel> <size> [<file>]".into()),
    };
    match kernel {
        "skin_p" | "skin_pn" | "skin_pnt" => workloads::skinning(kernel, size),
        "local_to_model_trs" => workloads::local_to_model_trs(size),
        "blend_2layers" | "blend_additive" => blending::blending(kernel, size),
        // ozz skins its mesh in parts of one influence count each, so both of the lab's frame rows
        // (the file's vertex order and the influence-count order) meet the same peer frame.
        "gltf_frame" | "gltf_frame_by_count" if !rest.is_empty() => {
            gltf_frame::setup(std::path::Path::new(rest), size)
        }
        "gltf_frame" | "gltf_frame_by_count" => Err(format!("setup {kernel} <vertices> <file>")),
        "pose_cesiumman" | "pose_fox" if !rest.is_empty() => {
            gltf_frame::setup_pose(std::path::Path::new(rest), size)
        }
        "pose_cesiumman" | "pose_fox" => Err(format!("setup {kernel} <joints> <file>")),
        "pose_rig67" => pose_rig::setup(size),
        _ => Err(format!("the ozz-rs peer has no workload {kernel}")),
    }
}

/// Repeats the call, four times more each time, until a quarter of a sample has passed, then scales
/// the count to a whole sample (as `lab/src/report/timing.rs` calibrates its local candidates).
fn calibrate(w: &mut dyn Workload, sample_ns: f64) -> u64 {
    let mut n = 1u64;
    loop {
        let t = Instant::now();
        for _ in 0..n {
            w.run();
        }
        let e = t.elapsed().as_secs_f64() * 1e9;
        if e >= sample_ns / 4.0 || n >= 1 << 30 {
            return ((sample_ns / (e / n as f64).max(1.0)) as u64).max(1);
        }
        n *= 4;
    }
}

fn answer(workloads: &mut Vec<Box<dyn Workload>>, line: &str) -> Option<Result<String, String>> {
    let mut words = line.split_whitespace();
    let command = words.next()?;
    let args: Vec<&str> = words.collect();
    let id = |i: usize| -> Result<usize, String> {
        args.get(i)
            .and_then(|s| s.parse::<usize>().ok())
            .filter(|&id| id < workloads.len())
            .ok_or_else(|| format!("{command}: no workload {:?}", args.get(i)))
    };
    Some(match command {
        "setup" => {
            // The file name is the rest of the line after the size, so that it may hold spaces.
            let rest = line
                .splitn(4, char::is_whitespace)
                .nth(3)
                .unwrap_or("")
                .trim();
            setup(&args, rest).map(|w| {
                workloads.push(w);
                format!("ok {}", workloads.len() - 1)
            })
        }
        "calibrate" => id(0).and_then(|i| {
            let ns: f64 = args
                .get(1)
                .and_then(|s| s.parse().ok())
                .ok_or("calibrate <id> <sample_ns>")?;
            Ok(format!("reps {}", calibrate(workloads[i].as_mut(), ns)))
        }),
        "sample" => id(0).and_then(|i| {
            let reps: u64 = args
                .get(1)
                .and_then(|s| s.parse().ok())
                .ok_or("sample <id> <reps>")?;
            let w = workloads[i].as_mut();
            let t = Instant::now();
            for _ in 0..reps {
                w.run();
            }
            let ns = t.elapsed().as_secs_f64() * 1e9 / reps.max(1) as f64;
            black_box(&*w as *const dyn Workload);
            Ok(format!("ns {ns}"))
        }),
        "quit" => return None,
        other => Err(format!("unknown command {other}")),
    })
}

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut workloads: Vec<Box<dyn Workload>> = Vec::new();
    let _ = writeln!(out, "ready ozz-animation-rs 0.11.0");
    let _ = out.flush();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let reply = match answer(&mut workloads, &line) {
            None => break,
            Some(Ok(r)) => r,
            Some(Err(e)) => format!("error {}", e.replace('\n', " ")),
        };
        if writeln!(out, "{reply}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
}
