//! `ispc-skinning bench`: the main job's report. Every row is measured in the same run as the serial
//! reference (`reference_ns_per_item`), so speedups are ratios taken under the same machine conditions.

use super::timing::{median_ns_per_call, Budget};
use glam::{Mat4, Quat, Vec3};
use crate::baseline;
use ispc_skinning::{transform_points, transform_points3, Backend, Error, Isa};
use std::fmt::Write as _;

/// The batch sizes of the snippet seed's table.
const TRANSFORM_SIZES: &[usize] = &[128, 256, 512, 1024, 4096, 8192, 65_536];

/// glam `Mat4 * Vec4` built with `-C target-cpu=native`, measured on this machine class
/// (../shared/notes/performance-facts.md): the moonshot for `transform_points`.
const MOONSHOT_NS: f64 = 0.64;

/// One report row; the field names are the JSON keys.
#[derive(Clone, Debug)]
pub struct Row {
    pub kernel: &'static str,
    /// `reference`, `glam`, or an ISA name.
    pub isa: String,
    /// Items per call: vertices, joints, or joint-instances for crowds.
    pub size: usize,
    /// Skinning influences per vertex; `None` for kernels without influences.
    pub influences: Option<u32>,
    pub threads: usize,
    pub ns_per_item: f64,
    pub reference_ns_per_item: f64,
}

impl Row {
    pub fn speedup(&self) -> f64 {
        self.reference_ns_per_item / self.ns_per_item
    }
}

/// The serial reference and every ISA given, as (report name, backend), the reference first.
pub fn backends(isas: &[Isa]) -> Vec<(String, Backend)> {
    std::iter::once(("reference".to_string(), Backend::Reference))
        .chain(isas.iter().map(|&i| (i.name().to_string(), i.into())))
        .collect()
}

/// One single-thread row per backend of `backends`, from the times (ns per call of `size` items)
/// measured for them in one round-robin; the first is the reference.
pub fn push_rows(
    rows: &mut Vec<Row>,
    kernel: &'static str,
    backends: &[(String, Backend)],
    times: &[f64],
    size: usize,
    influences: Option<u32>,
) {
    for ((name, _), t) in backends.iter().zip(times) {
        rows.push(Row {
            kernel,
            isa: name.clone(),
            size,
            influences,
            threads: 1,
            ns_per_item: t / size as f64,
            reference_ns_per_item: times[0] / size as f64,
        });
    }
}

struct Options {
    json: Option<String>,
    plot: Option<String>,
    gltf: Option<String>,
    quick: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut opts = Options {
        json: None,
        plot: None,
        gltf: None,
        quick: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => opts.json = Some(it.next().ok_or("--json needs a path")?.clone()),
            "--plot" => opts.plot = Some(it.next().ok_or("--plot needs a path")?.clone()),
            "--gltf" => opts.gltf = Some(it.next().ok_or("--gltf needs a path")?.clone()),
            "--quick" => opts.quick = true,
            other => return Err(format!("bench: unknown argument '{other}'")),
        }
    }
    Ok(opts)
}

pub fn main(args: &[String]) -> Result<(), String> {
    let opts = parse(args)?;
    let budget = if opts.quick {
        Budget::quick()
    } else {
        Budget::full()
    };
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
    println!();

    let mut rows = Vec::new();
    super::character_bench::rows(budget, &isas, &mut rows);
    #[cfg(feature = "gltf")]
    super::gltf_bench::rows(budget, &isas, opts.gltf.as_deref(), &mut rows)?;
    #[cfg(not(feature = "gltf"))]
    if opts.gltf.is_some() {
        return Err("bench --gltf needs the 'gltf' feature".into());
    }
    transform_rows(budget, &isas, &mut rows);
    super::hierarchy_bench::rows(budget, &isas, &mut rows);
    super::skin_bench::rows(budget, &isas, &mut rows);
    super::davies_bench::rows(budget, &isas, &mut rows);

    print_table(&rows);
    super::character_bench::print_summary(&rows);
    print_transform_summary(&rows);
    super::hierarchy_bench::print_summary(&rows);
    super::skin_bench::print_summary(&rows);
    super::davies_bench::print_summary(&rows);
    if let Some(path) = opts.json {
        std::fs::write(&path, to_json(&rows)).map_err(|e| format!("cannot write {path}: {e}"))?;
        println!("wrote {} rows to {path}", rows.len());
    }
    if let Some(path) = opts.plot {
        let chart = super::plot::svg(&rows, &cpu_name());
        if let Some(dir) = std::path::Path::new(&path)
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(&path, chart).map_err(|e| format!("cannot write {path}: {e}"))?;
        println!("wrote the speedup chart to {path}");
    }
    Ok(())
}

fn list(isas: &[Isa]) -> String {
    if isas.is_empty() {
        "none".into()
    } else {
        isas.iter().map(|i| i.name()).collect::<Vec<_>>().join(", ")
    }
}

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

/// Deterministic test data: points in a 2 m box and a rotation, scale and translation.
fn transform_scene(n: usize) -> (Mat4, Vec<Vec3>) {
    let m = Mat4::from_scale_rotation_translation(
        Vec3::new(1.0, 1.5, 0.5),
        Quat::from_euler(glam::EulerRot::XYZ, 0.4, 1.2, -0.3),
        Vec3::new(0.5, 2.0, -1.0),
    );
    let mut s = 0x1234_5678u32;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        (s >> 8) as f32 / (1 << 24) as f32 * 2.0 - 1.0
    };
    let pts = (0..n).map(|_| Vec3::new(next(), next(), next())).collect();
    (m, pts)
}

/// A kernel that writes one `T` per input position, as called through the public API.
type ApiFn<T> = fn(Backend, &Mat4, &[Vec3], &mut [T]) -> Result<(), Error>;

/// Times the glam baseline and then every backend in `who` on the same input, interleaved.
/// Returns ns per call: `[glam, who[0], who[1], ...]`.
fn measure<T: Copy + Default>(
    budget: Budget,
    who: &[Backend],
    m: &Mat4,
    src: &[Vec3],
    glam: fn(&Mat4, &[Vec3], &mut [T]),
    api: ApiFn<T>,
) -> Vec<f64> {
    let mut dsts: Vec<Vec<T>> = (0..=who.len())
        .map(|_| vec![T::default(); src.len()])
        .collect();
    let (glam_dst, api_dsts) = dsts.split_first_mut().expect("at least the glam buffer");
    let mut candidates: Vec<Box<dyn FnMut() + '_>> = vec![Box::new(move || glam(m, src, glam_dst))];
    for (&backend, dst) in who.iter().zip(api_dsts) {
        // Lengths match and every ISA in `who` is available, so the call cannot fail.
        candidates.push(Box::new(move || {
            api(backend, m, src, dst).expect("equal lengths, available ISA")
        }));
    }
    median_ns_per_call(budget, &mut candidates)
}

/// `transform_points` (Vec3 to Vec4) and `transform_points3` (Vec3 to Vec3) at the seed's batch sizes.
fn transform_rows(budget: Budget, isas: &[Isa], rows: &mut Vec<Row>) {
    // Reference first, then each ISA; glam is measured alongside by `measure`.
    let who: Vec<Backend> = std::iter::once(Backend::Reference)
        .chain(isas.iter().map(|&i| Backend::Isa(i)))
        .collect();
    for &size in TRANSFORM_SIZES {
        eprint!("\rbench: transform_points, {size} vertices      ");
        let (m, src) = transform_scene(size);
        let t4 = measure(
            budget,
            &who,
            &m,
            &src,
            baseline::transform_points_vec4,
            transform_points,
        );
        let t3 = measure(
            budget,
            &who,
            &m,
            &src,
            baseline::transform_points_vec3,
            transform_points3,
        );
        for (kernel, times) in [("transform_points", &t4), ("transform_points3", &t3)] {
            let reference = times[1] / size as f64;
            let names = std::iter::once("glam").chain(who.iter().map(|b| b.name()));
            for (name, t) in names.zip(times) {
                rows.push(Row {
                    kernel,
                    isa: name.to_string(),
                    size,
                    influences: None,
                    threads: 1,
                    ns_per_item: t / size as f64,
                    reference_ns_per_item: reference,
                });
            }
        }
    }
    eprintln!("\rbench: transform_points done                 ");
}

fn print_table(rows: &[Row]) {
    println!(
        "{:<32} {:>9} {:>15} {:>7} {:>12} {:>12} {:>8}",
        "kernel", "size", "isa", "threads", "ns/item", "ref ns/item", "speedup"
    );
    let mut last_kernel = "";
    for r in rows {
        if r.kernel != last_kernel && !last_kernel.is_empty() {
            println!();
        }
        last_kernel = r.kernel;
        println!(
            "{:<32} {:>9} {:>15} {:>7} {:>12.3} {:>12.3} {:>7.2}x",
            r.kernel,
            r.size,
            r.isa,
            r.threads,
            r.ns_per_item,
            r.reference_ns_per_item,
            r.speedup()
        );
    }
    println!();
}

/// The targets for the batch transform, read off this run's rows.
fn print_transform_summary(rows: &[Row]) {
    let best = |size: usize| {
        rows.iter()
            .filter(|r| {
                r.kernel == "transform_points"
                    && r.size == size
                    && r.isa != "reference"
                    && r.isa != "glam"
            })
            .min_by(|a, b| a.ns_per_item.total_cmp(&b.ns_per_item))
    };
    let avx2_min = rows
        .iter()
        .filter(|r| r.kernel == "transform_points" && r.isa == "avx2" && r.size >= 1024)
        .map(Row::speedup)
        .min_by(f64::total_cmp);
    if let Some(s) = avx2_min {
        println!("transform_points: avx2 speedup over the reference at sizes >= 1024: at least {s:.2}x (target 2x)");
    }
    for size in [4096, 65_536] {
        if let Some(b) = best(size) {
            let glam = rows
                .iter()
                .find(|r| r.kernel == "transform_points" && r.size == size && r.isa == "glam");
            println!(
                "transform_points at {size}: best ISA {} {:.3} ns/vertex; glam (this build) {}; moonshot: glam with target-cpu=native measured {MOONSHOT_NS} ns/vertex on this machine class",
                b.isa,
                b.ns_per_item,
                glam.map_or("-".into(), |g| format!("{:.3} ns/vertex", g.ns_per_item)),
            );
        }
    }
    println!();
}

fn to_json(rows: &[Row]) -> String {
    let mut s = String::from("[\n");
    for (i, r) in rows.iter().enumerate() {
        let influences = r.influences.map_or("null".to_string(), |v| v.to_string());
        let _ = write!(
            s,
            "  {{\"kernel\": \"{}\", \"isa\": \"{}\", \"size\": {}, \"influences\": {}, \"threads\": {}, \"ns_per_item\": {:.4}, \"reference_ns_per_item\": {:.4}}}",
            r.kernel, r.isa, r.size, influences, r.threads, r.ns_per_item, r.reference_ns_per_item
        );
        s.push_str(if i + 1 < rows.len() { ",\n" } else { "\n" });
    }
    s.push_str("]\n");
    s
}
