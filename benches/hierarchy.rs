//! Criterion benches for the hierarchy: every local-to-model implementation on every available ISA, at
//! skeleton sizes 20, 67, 120, 1,000 and 40,000, with matrix and TRS input; crowds of 256 x 64 and
//! 1,024 x 120 on one and on all threads; and the skinning palette. Ids:
//! `local_to_model/<input>/<joints>/<method>[_<isa>]`, `crowd/<instances>x<joints>/<threads>/<isa>`,
//! `palette/<joints>/<isa>`. The serial reference and the glam loop a user would write are in every
//! local-to-model group. The seeds' other traversals and level_sum are in the lab's benches.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glam::{Affine3A, Mat4};
use ispc_skinning::reference::trs_matrix;
use ispc_skinning::{
    Backend, CrowdLocalToModelJob, CrowdModels, CrowdPose, Isa, LocalToModelJob, Locals, Method,
    PaletteJob, PaletteMatrix, Skeleton, Threads, Trs,
};
// The procedural scenes the lab shares, from their source file (see tests/common/mod.rs).
#[path = "../tests/support/scenes.rs"]
#[allow(dead_code)]
mod scenes;
use scenes::{animated_pose, bench_rig_parents};
use std::hint::black_box;
use std::time::Duration;

fn skeleton(joints: usize) -> Skeleton {
    Skeleton::from_parents(&bench_rig_parents(joints)).expect("valid skeleton")
}

fn report_not_run() {
    for isa in Isa::ALL {
        if let Err(e) = isa.runnable() {
            eprintln!("hierarchy bench: {isa} not run: {e}");
        }
    }
}

fn bench_local_to_model(c: &mut Criterion) {
    report_not_run();
    let mut g = c.benchmark_group("local_to_model");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for joints in [20, 67, 120, 1000, 40_000] {
        let s = skeleton(joints);
        let (t, q, sc) = animated_pose(joints, 0.3, true, 1);
        let mats: Vec<Mat4> = (0..joints)
            .map(|j| Mat4::from_cols_array(&trs_matrix(t[j], q[j], sc[j])))
            .collect();
        let trs = Trs {
            translations: &t,
            rotations: &q,
            scales: &sc,
        };
        let mut out = vec![Mat4::ZERO; joints];
        g.throughput(Throughput::Elements(joints as u64));
        for (input, locals) in [
            ("matrix", Locals::Matrices(&mats)),
            ("trs", Locals::Trs(trs)),
        ] {
            let mut run = |id: String, method: Method, backend: Backend| {
                g.bench_function(BenchmarkId::new(format!("{input}/{joints}"), id), |b| {
                    b.iter(|| {
                        let mut job = LocalToModelJob::new(&s, locals, &mut out);
                        (job.method, job.backend) = (method, backend);
                        job.run().unwrap()
                    })
                });
            };
            run("reference".into(), Method::Reference, Backend::Reference);
            for isa in Isa::available() {
                let method = Method::IspcJoint;
                run(format!("{}_{isa}", method.name()), method, isa.into());
            }
        }
        // The loops a glam user writes: each joint after its parent, in level order.
        let mut glam_out = vec![Mat4::ZERO; joints];
        g.bench_function(BenchmarkId::new(format!("matrix/{joints}"), "glam"), |b| {
            b.iter(|| {
                for (j, &p) in s.level_parents().iter().enumerate() {
                    let parent = match p {
                        Some(p) => glam_out[p],
                        None => Mat4::IDENTITY,
                    };
                    glam_out[j] = parent * mats[j];
                }
                black_box(&glam_out);
            })
        });
        let mut glam_aff = vec![Affine3A::IDENTITY; joints];
        g.bench_function(BenchmarkId::new(format!("trs/{joints}"), "glam"), |b| {
            b.iter(|| {
                for (j, &p) in s.level_parents().iter().enumerate() {
                    let local =
                        Affine3A::from_scale_rotation_translation(sc[j], q[j].normalize(), t[j]);
                    let parent = match p {
                        Some(p) => glam_aff[p],
                        None => Affine3A::IDENTITY,
                    };
                    glam_aff[j] = parent * local;
                }
                black_box(&glam_aff);
            })
        });
    }
    g.finish();
}

fn bench_crowd(c: &mut Criterion) {
    let mut g = c.benchmark_group("crowd");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for (instances, joints) in [(256, 64), (1024, 120)] {
        let s = skeleton(joints);
        let poses: Vec<_> = (0..instances)
            .map(|i| animated_pose(joints, i as f32 * 0.01, true, i as u64))
            .collect();
        let mut pose = CrowdPose::new(&s, instances).unwrap();
        for (i, (t, q, sc)) in poses.iter().enumerate() {
            pose.set_instance(
                i,
                Trs {
                    translations: t,
                    rotations: q,
                    scales: sc,
                },
            )
            .unwrap();
        }
        g.throughput(Throughput::Elements((instances * joints) as u64));
        let label = format!("{instances}x{joints}");
        let mut aos = vec![Mat4::ZERO; joints];
        g.bench_function(BenchmarkId::new(format!("{label}/1"), "reference"), |b| {
            b.iter(|| {
                for (t, q, sc) in &poses {
                    let trs = Trs {
                        translations: t,
                        rotations: q,
                        scales: sc,
                    };
                    ispc_skinning::reference::local_to_model_trs(
                        s.level_parents(),
                        trs,
                        &Mat4::IDENTITY,
                        &mut aos,
                        0..joints,
                    );
                }
            })
        });
        let mut models = CrowdModels::new(&s, instances).unwrap();
        for isa in Isa::available() {
            for (threads, name) in [(Threads::One, "1"), (Threads::All, "all")] {
                g.bench_function(
                    BenchmarkId::new(format!("{label}/{name}"), isa.name()),
                    |b| {
                        b.iter(|| {
                            let mut job = CrowdLocalToModelJob::new(&s, &pose, &mut models);
                            (job.backend, job.threads) = (isa.into(), threads);
                            job.run().unwrap()
                        })
                    },
                );
            }
        }
    }
    g.finish();
}

fn bench_palette(c: &mut Criterion) {
    let mut g = c.benchmark_group("palette");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for joints in [20, 67, 120] {
        let (t, q, sc) = animated_pose(joints, 0.3, true, 3);
        let models: Vec<Mat4> = (0..joints)
            .map(|j| Mat4::from_cols_array(&trs_matrix(t[j], q[j], sc[j])))
            .collect();
        let ib: Vec<Mat4> = models.iter().map(|m| m.inverse()).collect();
        let mut palette = vec![PaletteMatrix::IDENTITY; joints];
        g.throughput(Throughput::Elements(joints as u64));
        for backend in std::iter::once(Backend::Reference)
            .chain(Isa::available().into_iter().map(Backend::Isa))
        {
            g.bench_function(BenchmarkId::new(joints.to_string(), backend.name()), |b| {
                b.iter(|| {
                    let mut job = PaletteJob::new(&models, &ib, &mut palette);
                    job.backend = backend;
                    job.run().unwrap()
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_local_to_model, bench_crowd, bench_palette);
criterion_main!(benches);
