//! The batch transform rows of the report: `transform_points` (Vec3 to Vec4) and `transform_points3`
//! (Vec3 to Vec3) at the snippet seed's batch sizes, next to the reference and the glam loop.

use crate::baseline;
use crate::report::row::Row;
use crate::report::timing::{median_ns_per_call, Budget};
use glam::{Mat4, Quat, Vec3};
use indicatif::ProgressBar;
use ispc_skinning::{transform_points, transform_points3, Backend, Error, Isa};

/// The batch sizes of the seed's table.
const TRANSFORM_SIZES: &[usize] = &[128, 256, 512, 1024, 4096, 8192, 65_536];

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

/// Appends `transform_points` (Vec3 to Vec4) and `transform_points3` (Vec3 to Vec3) rows at the seed's
/// batch sizes: the glam loop, the reference and every ISA, measured interleaved.
pub fn rows(budget: Budget, isas: &[Isa], rows: &mut Vec<Row>, progress: &ProgressBar) {
    // Reference first, then each ISA; glam is measured alongside by `measure`.
    let who: Vec<Backend> = std::iter::once(Backend::Reference)
        .chain(isas.iter().map(|&i| Backend::Isa(i)))
        .collect();
    for &size in TRANSFORM_SIZES {
        progress.set_message(format!("transform_points, {size} vertices"));
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
}

/// Prints the targets for the batch transform, read off this run's rows.
pub fn print_summary(rows: &[Row]) {
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
                "transform_points at {size}: best ISA {} {:.3} ns/vertex; glam loop (this build, this run) {}",
                b.isa,
                b.ns_per_item,
                glam.map_or("-".into(), |g| format!("{:.3} ns/vertex", g.ns_per_item)),
            );
        }
    }
    println!();
}
