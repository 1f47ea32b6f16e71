//! The report's orchestrator: runs every family of rows in order, prints the table and each family's
//! summary, and writes the JSON rows and the chart when asked. It is the only module that imports the
//! families; nothing imports it but the binary.

use crate::progress;
use crate::report::peer::{self, Peer};
use crate::report::row::Row;
use crate::report::timing::Budget;
use crate::report::{
    blend, character, chart, compact, davies, hierarchy, json, morph, renormalize, skinning,
    transform,
};
use clap::Args;
use ispc_skinning::{Backend, CpuIdentity, Isa, KernelFamily};
use std::path::Path;

/// The options of `bench`.
#[derive(Clone, Debug, Default, Args)]
pub struct Options {
    /// Write every row to PATH as JSON.
    #[arg(long, value_name = "PATH")]
    pub json: Option<String>,
    /// Write the speedup chart to PATH as SVG.
    #[arg(long, value_name = "PATH.svg")]
    pub plot: Option<String>,
    /// Measure `gltf_frame` on this .gltf or .glb file [default: CesiumMan from the shared assets, when
    /// present].
    #[arg(long, value_name = "FILE")]
    pub gltf: Option<String>,
    /// Fewer and shorter samples: a quick, noisier run.
    #[arg(long)]
    pub quick: bool,
    /// Also measure ozz-animation-rs (the `peers/ozz-rs` crate, built here with its pinned nightly
    /// toolchain) on the same workloads, in the same round-robins, and print the ratios.
    #[arg(long)]
    pub peers: bool,
    /// Measure only these sections of the report (a comma-separated list) [default: every section].
    #[arg(long, value_enum, value_delimiter = ',', value_name = "SECTION")]
    pub only: Vec<Section>,
}

/// A section of the report: one or more families of rows, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Section {
    /// The default character's frame (`character_frame`).
    Character,
    /// What needs the glTF feature: `gltf_frame*`, `gltf_crowd_*`, `gltf_sample`, `sample_*`, the
    /// `pose_*` rows, `blend_clips_*` and `crowd_pose_*`.
    Gltf,
    /// `transform_points`.
    Transform,
    /// Level sums, `local_to_model*` and `crowd_local_to_model`.
    Hierarchy,
    /// Blending poses: `blend_2layers`, `blend_additive`, `crowd_blend` (blending clips is in `gltf`).
    Blend,
    /// Compact clips: `sample_compact_*`, `crowd_compact_rig67_forward` and the size table.
    Compact,
    /// The skinning kernels.
    Skinning,
    /// Morph targets.
    Morph,
    /// Renormalizing skinned normals and tangents.
    Renormalize,
    /// Davies' 64 cylinders and the seeds' frames (`davies_cylinders`, `frame_sine`, `frame_noise20`).
    Davies,
}

/// The sections with ozz-animation-rs rows (`--peers`).
const PEER_SECTIONS: [Section; 4] = [
    Section::Gltf,
    Section::Hierarchy,
    Section::Blend,
    Section::Skinning,
];

/// A section's printed summary of its rows.
type Summary = fn(&[Row]);

/// The report's sections, in the order they run: one step of the progress bar each.
const SECTIONS: u64 = 10;

/// Runs the report with `options`: prints the header, the table and the summaries to stdout.
///
/// # Errors
/// When the glTF file cannot be measured or an output cannot be written.
pub fn run(options: &Options) -> Result<(), String> {
    let budget = if options.quick {
        Budget::quick()
    } else {
        Budget::full()
    };
    // The outputs are checked before the minutes of measuring: never the glTF measured (nor a file it
    // names), never each other.
    // `mut` is used only with the gltf feature.
    #[cfg_attr(not(feature = "gltf"), allow(unused_mut))]
    let mut protected = crate::output::Protected::new();
    #[cfg(feature = "gltf")]
    if let Some(gltf) = super::gltf::asset(options.gltf.as_deref()) {
        protected.gltf(&gltf, 512 << 20);
    }
    for (flag, path) in [("--json", &options.json), ("--plot", &options.plot)] {
        if let Some(path) = path {
            protected.check(flag, Path::new(path))?;
        }
    }
    if let (Some(json), Some(plot)) = (&options.json, &options.plot) {
        crate::output::distinct(("--json", Path::new(json)), ("--plot", Path::new(plot)))?;
    }
    let on = |section: Section| options.only.is_empty() || options.only.contains(&section);
    // Options that only a left-out section would use are refused, not ignored.
    if options.gltf.is_some() && !on(Section::Gltf) {
        return Err("bench --gltf times the gltf section, which --only leaves out".into());
    }
    #[cfg(not(feature = "gltf"))]
    if options.only.contains(&Section::Gltf) {
        return Err("bench --only gltf needs the 'gltf' feature".into());
    }
    if options.peers && !PEER_SECTIONS.into_iter().any(on) {
        return Err(
            "bench --peers: no section that --only names has ozz-animation-rs rows (gltf, hierarchy, blend, skinning)"
                .into(),
        );
    }
    // An ISPC_SKINNING_ISA that cannot run here is a request that cannot be carried out: refused
    // before the minutes of measuring, not printed as an error in every Auto column.
    crate::commands::isa_override()?;
    let isas = Isa::available();
    let build = ispc_skinning::build_info();
    println!(
        "ispc-skinning bench: {} ({}), arch {}",
        build.kernels,
        build.targets,
        std::env::consts::ARCH
    );
    println!(
        "ISAs measured: {} (not available here: {})",
        list(&isas),
        list(
            &Isa::ALL
                .into_iter()
                .filter(|i| !isas.contains(i))
                .collect::<Vec<_>>()
        )
    );
    println!("cpu: {}", cpu_name());
    println!("Backend::Auto here: {}", auto_choices());
    // The peer is built and started before any row, so a missing toolchain fails at once.
    let mut peer = if options.peers {
        Some(Peer::start()?)
    } else {
        None
    };
    println!();

    let mut rows = Vec::new();
    let bar = progress::bar(SECTIONS);
    if on(Section::Character) {
        bar.set_message("default character");
        character::rows(budget, &isas, &mut rows);
    }
    bar.inc(1);
    #[cfg(feature = "gltf")]
    if on(Section::Gltf) {
        bar.set_message("gltf_frame");
        super::gltf::rows(
            budget,
            &isas,
            options.gltf.as_deref(),
            &mut rows,
            &bar,
            peer.as_mut(),
        )?;
        check(&peer)?;
        super::gltf_crowd::rows(budget, &isas, options.gltf.as_deref(), &mut rows, &bar)?;
        super::pose::rows(budget, &isas, &mut rows, &bar, peer.as_mut());
        check(&peer)?;
    }
    #[cfg(not(feature = "gltf"))]
    if options.gltf.is_some() {
        return Err("bench --gltf needs the 'gltf' feature".into());
    }
    bar.inc(1);
    if on(Section::Transform) {
        transform::rows(budget, &isas, &mut rows, &bar);
    }
    bar.inc(1);
    if on(Section::Hierarchy) {
        hierarchy::rows(budget, &isas, &mut rows, &bar, peer.as_mut());
        check(&peer)?;
    }
    bar.inc(1);
    if on(Section::Blend) {
        blend::rows(budget, &isas, &mut rows, &bar, peer.as_mut());
        check(&peer)?;
    }
    bar.inc(1);
    if on(Section::Compact) {
        compact::rows(budget, &isas, &mut rows, &bar);
    }
    bar.inc(1);
    if on(Section::Skinning) {
        skinning::rows(budget, &isas, &mut rows, &bar, peer.as_mut());
        check(&peer)?;
    }
    bar.inc(1);
    if on(Section::Morph) {
        morph::rows(budget, &isas, &mut rows, &bar);
    }
    bar.inc(1);
    if on(Section::Renormalize) {
        renormalize::rows(budget, &isas, &mut rows, &bar);
    }
    bar.inc(1);
    if on(Section::Davies) {
        bar.set_message("Davies' 64 cylinders");
        davies::rows(budget, &isas, &mut rows);
    }
    bar.inc(1);
    bar.finish_and_clear();

    // The peer's rows join ours in the table and the JSON; the summaries and the chart are ours only.
    let peer_rows = peer.take().map(|p| p.rows.clone()).unwrap_or_default();
    let all = peer::merge(&rows, &peer_rows);
    print_table(&all);
    peer::print_ratios(&rows, &peer_rows);
    let summaries: [(Section, Summary); 8] = [
        (Section::Character, character::print_summary),
        (Section::Transform, transform::print_summary),
        (Section::Hierarchy, hierarchy::print_summary),
        (Section::Blend, blend::print_summary),
        (Section::Skinning, skinning::print_summary),
        (Section::Morph, morph::print_summary),
        (Section::Renormalize, renormalize::print_summary),
        (Section::Davies, davies::print_summary),
    ];
    for (section, summary) in summaries {
        if on(section) {
            summary(&rows);
        }
    }
    if let Some(path) = &options.json {
        crate::output::write(
            "--json",
            Path::new(path),
            json::to_json(&all).as_bytes(),
            &protected,
        )?;
        println!("wrote {} rows to {path}", all.len());
    }
    if let Some(path) = &options.plot {
        let chart = chart::svg(&rows, &cpu_name())?;
        if let Some(dir) = Path::new(path)
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        crate::output::write("--plot", Path::new(path), chart.as_bytes(), &protected)?;
        println!("wrote the speedup chart to {path}");
    }
    Ok(())
}

/// Stops the report at the peer's first failure (such as a workload whose output disagrees with ours).
fn check(peer: &Option<Peer>) -> Result<(), String> {
    peer.as_ref().map_or(Ok(()), Peer::check)
}

fn list(isas: &[Isa]) -> String {
    if isas.is_empty() {
        "none".into()
    } else {
        isas.iter().map(|i| i.name()).collect::<Vec<_>>().join(", ")
    }
}

/// The CPU model and the number of threads, for the report header and the chart title.
fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
        + &format!(
            ", {} threads",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        )
}

/// What `Backend::Auto` runs each kernel family on here, and the CPU identity the table read.
fn auto_choices() -> String {
    let choices: Vec<String> = KernelFamily::ALL
        .iter()
        .map(|&f| {
            let chosen = Backend::Auto
                .for_kernel(f)
                .map_or_else(|e| format!("error ({e})"), |b| b.name().to_string());
            format!("{} {chosen}", f.name())
        })
        .collect();
    let cpu = CpuIdentity::detect().map_or("no CPUID".to_string(), |c| {
        format!("{:?} family {:#x} model {:#x}", c.vendor, c.family, c.model)
    });
    format!("{} ({cpu})", choices.join(", "))
}

/// The kernel family a report row's kernel belongs to (for the ISA `Backend::Auto` runs it on): a
/// whole frame counts as skinning, which is most of it, and a pose as local to model.
fn family_of(kernel: &str) -> KernelFamily {
    if kernel.starts_with("crowd") || kernel.contains("_crowd") {
        KernelFamily::Crowd
    } else if kernel.starts_with("skin") || kernel.contains("frame") || kernel.contains("morph") {
        KernelFamily::Skinning
    } else if kernel.starts_with("sample") {
        KernelFamily::Sampling
    } else if kernel.starts_with("blend") {
        KernelFamily::Blending
    } else if kernel.starts_with("transform") {
        KernelFamily::Transform
    } else {
        KernelFamily::LocalToModel
    }
}

/// The table of every row, one block per kernel; `*` marks the ISA `Backend::Auto` runs the row's
/// kernel family on here. A skinning row with other than the usual 4 influences per vertex names its
/// count after the kernel (`skin_pnt k12`), as the JSON's `influences` field does.
fn print_table(rows: &[Row]) {
    println!(
        "{:<36} {:>9} {:>15} {:>7} {:>12} {:>12} {:>8}",
        "kernel", "size", "isa", "threads", "ns/item", "ref ns/item", "speedup"
    );
    let mut last_kernel = "";
    for r in rows {
        if r.kernel != last_kernel && !last_kernel.is_empty() {
            println!();
        }
        last_kernel = r.kernel;
        let auto = Backend::Auto
            .for_kernel(family_of(r.kernel))
            .is_ok_and(|b| b.name() == r.isa);
        let kernel = match r.influences {
            Some(k) if k != 4 => format!("{} k{k}", r.kernel),
            _ => r.kernel.to_string(),
        };
        println!(
            "{:<36} {:>9} {:>15} {:>7} {:>12.3} {:>12.3} {:>7.2}x",
            kernel,
            r.size,
            if auto {
                format!("*{}", r.isa)
            } else {
                r.isa.clone()
            },
            r.threads,
            r.ns_per_item,
            r.reference_ns_per_item,
            r.speedup()
        );
    }
    println!();
}
