//! Criterion bench for the batch transform: the serial reference, the glam loop and every available ISA
//! at the snippet seed's batch sizes. Bench ids are `transform_points/<size>/<isa>`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glam::{Mat4, Quat, Vec3, Vec4};
use ispc_skinning::{transform_points, transform_points3, Backend, Isa};
use std::hint::black_box;

const SIZES: &[usize] = &[128, 256, 512, 1024, 4096, 8192, 65_536];

fn scene(n: usize) -> (Mat4, Vec<Vec3>) {
    let m = Mat4::from_scale_rotation_translation(
        Vec3::new(1.0, 1.5, 0.5),
        Quat::from_euler(glam::EulerRot::XYZ, 0.4, 1.2, -0.3),
        Vec3::new(0.5, 2.0, -1.0),
    );
    let pts = (0..n)
        .map(|i| {
            Vec3::new(
                (i % 97) as f32 * 0.02 - 1.0,
                (i % 89) as f32 * 0.02,
                (i % 83) as f32 * -0.02,
            )
        })
        .collect();
    (m, pts)
}

/// Every backend to compare: the reference first, then the available ISAs, so the report lists them
/// in one group.
fn backends() -> Vec<Backend> {
    std::iter::once(Backend::Reference)
        .chain(Isa::available().into_iter().map(Backend::Isa))
        .collect()
}

fn bench_transform(c: &mut Criterion) {
    let not_run: Vec<String> = Isa::ALL
        .into_iter()
        .filter_map(|isa| isa.runnable().err().map(|e| format!("{isa} not run: {e}")))
        .collect();
    for line in &not_run {
        eprintln!("transform bench: {line}");
    }

    let mut group = c.benchmark_group("transform_points");
    for &n in SIZES {
        let (m, src) = scene(n);
        let mut dst = vec![Vec4::ZERO; n];
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new(n.to_string(), "glam"), |b| {
            b.iter(|| {
                // The loop a glam user writes.
                let m = black_box(&m);
                for (d, s) in dst.iter_mut().zip(black_box(&src)) {
                    *d = *m * s.extend(1.0);
                }
            })
        });
        for backend in backends() {
            group.bench_function(BenchmarkId::new(n.to_string(), backend.name()), |b| {
                b.iter(|| {
                    transform_points(backend, black_box(&m), black_box(&src), &mut dst).unwrap()
                })
            });
        }
    }
    group.finish();

    let mut group = c.benchmark_group("transform_points3");
    for &n in SIZES {
        let (m, src) = scene(n);
        let mut dst = vec![Vec3::ZERO; n];
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new(n.to_string(), "glam"), |b| {
            b.iter(|| {
                // The loop a glam user writes for affine transforms.
                let a = glam::Affine3A::from_mat4(*black_box(&m));
                for (d, s) in dst.iter_mut().zip(black_box(&src)) {
                    *d = a.transform_point3(*s);
                }
            })
        });
        for backend in backends() {
            group.bench_function(BenchmarkId::new(n.to_string(), backend.name()), |b| {
                b.iter(|| {
                    transform_points3(backend, black_box(&m), black_box(&src), &mut dst).unwrap()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_transform);
criterion_main!(benches);
