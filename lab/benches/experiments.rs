//! Criterion benches for the lab's methods: the seeds' experiments that lost to the product and the
//! glam baselines, each beside the serial reference. The library's own benches keep only the product;
//! these ids are the ones they had for the lab's methods, so earlier results stay comparable.
//!
//! Ids:
//! - `level_sum/<shape>/<method>`: the level-order seed's benchmark on 40,000 bones, `deep17` and
//!   `wide3`, methods `regular_traverse_sum`, `level_order_sum` and the ISPC one per ISA;
//! - `local_to_model/<input>/<joints>/<method>[_<isa>]`: `reference`, `serial_children` (the lab's
//!   [`baseline::local_to_model_serial_children`]), `ispc_children_<isa>`, `ispc_level_<isa>` and `glam`,
//!   with `matrix` and `trs` input at 20, 67, 120, 1,000 and 40,000 joints;
//! - `skin_p_base/k<influences>/<vertices>/<backend>[_mt]` (van Waveren's base vectors) and
//!   `skin_p_bone_major/k<influences>/<vertices>/<backend>` (the VFP seed's lists, one thread).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glam::{Affine3A, Mat4, Quat, Vec3, Vec4};
use ispc_skinning::experiments::{
    level_sum, local_to_model_soa, trs_to_soa, BaseVectorJob, BaseVectorMesh, BoneMajorJob,
    BoneMajorMesh, SoaMatrices, SoaMethod,
};
use ispc_skinning::reference::trs_matrix;
use ispc_skinning::{
    Attribute, Backend, Isa, LocalToModelJob, Locals, MeshInput, Method, PaletteMatrix,
    PrepareOptions, Skeleton, SkinnedMesh, Threads, Trs,
};
use ispc_skinning_lab::baseline;
use scenes::{animated_pose, bench_rig_parents, level_tree, Rng};
use std::time::Duration;

fn skeleton(joints: usize) -> Skeleton {
    Skeleton::from_parents(&bench_rig_parents(joints)).expect("valid skeleton")
}

fn report_not_run() {
    for isa in Isa::ALL {
        if let Err(e) = isa.runnable() {
            eprintln!("experiments bench: {isa} not run: {e}");
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
            let group = format!("{input}/{joints}");
            let mut run = |id: String, method: Method, backend: Backend| {
                g.bench_function(BenchmarkId::new(&group, id), |b| {
                    b.iter(|| {
                        let mut job = LocalToModelJob::new(&s, locals, &mut out);
                        (job.method, job.backend) = (method, backend);
                        job.run().unwrap()
                    })
                });
            };
            run("reference".into(), Method::Reference, Backend::Reference);
            // The seeds' SoA traversals on the job's AoS data: converted to SoA (TRS by the ISPC
            // conversion kernel), traversed, converted back, all inside the timed call.
            for isa in Isa::available() {
                for method in [SoaMethod::Children, SoaMethod::Level] {
                    let id = BenchmarkId::new(&group, format!("{}_{isa}", method.name()));
                    g.bench_function(id, |b| {
                        b.iter(|| {
                            let l = match locals {
                                Locals::Trs(trs) => trs_to_soa(trs, isa.into()).unwrap(),
                                _ => SoaMatrices::from_mat4(&mats),
                            };
                            let mut m = SoaMatrices::zeroed(joints);
                            local_to_model_soa(&s, &l, &Mat4::IDENTITY, &mut m, method, isa.into())
                                .unwrap();
                            m.to_mat4(&mut out).unwrap();
                        })
                    });
                }
            }
            // The seed's serial per-parent method; TRS input is converted to matrices inside the
            // timed call, as the library's SerialChildren method did.
            let mut serial_out = vec![Mat4::ZERO; joints];
            g.bench_function(BenchmarkId::new(&group, "serial_children"), |b| {
                b.iter(|| match locals {
                    Locals::Trs(trs) => {
                        let m: Vec<Mat4> = (0..joints)
                            .map(|j| {
                                Mat4::from_cols_array(&trs_matrix(
                                    trs.translations[j],
                                    trs.rotations[j],
                                    trs.scales[j],
                                ))
                            })
                            .collect();
                        baseline::local_to_model_serial_children(
                            &s,
                            &m,
                            &Mat4::IDENTITY,
                            &mut serial_out,
                        )
                    }
                    _ => baseline::local_to_model_serial_children(
                        &s,
                        &mats,
                        &Mat4::IDENTITY,
                        &mut serial_out,
                    ),
                })
            });
        }
        let mut glam_out = vec![Mat4::ZERO; joints];
        g.bench_function(BenchmarkId::new(format!("matrix/{joints}"), "glam"), |b| {
            b.iter(|| baseline::local_to_model(&s, &mats, &Mat4::IDENTITY, &mut glam_out))
        });
        let mut glam_aff = vec![Affine3A::IDENTITY; joints];
        g.bench_function(BenchmarkId::new(format!("trs/{joints}"), "glam"), |b| {
            b.iter(|| baseline::local_to_model_trs(&s, trs, &Affine3A::IDENTITY, &mut glam_aff))
        });
    }
    g.finish();
}

fn bench_level_sum(c: &mut Criterion) {
    let mut g = c.benchmark_group("level_sum");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for (shape, levels) in [("deep17", 17), ("wide3", 3)] {
        let s = Skeleton::from_parents(&level_tree(40_000, levels, 1)).unwrap();
        let mut data = vec![Vec4::ZERO; 40_000];
        g.throughput(Throughput::Elements(40_000));
        g.bench_function(BenchmarkId::new(shape, "regular_traverse_sum"), |b| {
            b.iter(|| level_sum::regular_traverse_sum(&s, &mut data))
        });
        g.bench_function(BenchmarkId::new(shape, "level_order_sum"), |b| {
            b.iter(|| level_sum::level_order_sum(&s, &mut data))
        });
        for isa in Isa::available() {
            g.bench_function(BenchmarkId::new(shape, isa.name()), |b| {
                b.iter(|| level_sum::parallel_level_order_sum(isa, &s, &mut data).unwrap())
            });
        }
    }
    g.finish();
}

const JOINTS: usize = 64;
const SIZES: [usize; 3] = [1024, 65_536, 1 << 20];
const INFLUENCES: [usize; 4] = [1, 2, 4, 8];

/// `n` vertices with `k` influences on neighbouring joints, with normals and tangents, prepared as the
/// library's skinning bench prepared them for these ids (same seed, same layout).
fn mesh(n: usize, k: usize) -> SkinnedMesh {
    let mut rng = Rng::new(3);
    let (mut pos, mut nrm, mut tan, mut joints, mut weights) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        [Vec::with_capacity(n), Vec::with_capacity(n)],
        [Vec::with_capacity(n), Vec::with_capacity(n)],
    );
    for _ in 0..n {
        let p = Vec3::new(
            rng.range(-1.0, 1.0),
            rng.range(0.0, 2.0),
            rng.range(-1.0, 1.0),
        );
        pos.push(p);
        nrm.push(p.normalize_or_zero());
        tan.push(p.any_orthonormal_vector().extend(-1.0));
        let base = rng.below(JOINTS - 8);
        let mut j = [0u16; 8];
        let mut w = [0f32; 8];
        for s in 0..k {
            j[s] = (base + s) as u16;
            w[s] = rng.range(0.05, 1.0);
        }
        joints[0].push([j[0], j[1], j[2], j[3]]);
        joints[1].push([j[4], j[5], j[6], j[7]]);
        weights[0].push([w[0], w[1], w[2], w[3]]);
        weights[1].push([w[4], w[5], w[6], w[7]]);
    }
    let input = MeshInput {
        positions: Attribute::vec3(&pos),
        normals: Some(Attribute::vec3(&nrm)),
        tangents: Some(Attribute::vec4(&tan)),
        joints: [
            Some(Attribute::joints_u16(&joints[0])),
            Some(Attribute::joints_u16(&joints[1])),
            None,
            None,
        ],
        weights: [
            Some(Attribute::weights_f32(&weights[0])),
            Some(Attribute::weights_f32(&weights[1])),
            None,
            None,
        ],
        influences: None,
    };
    SkinnedMesh::prepare(&input, &PrepareOptions::new(JOINTS)).expect("valid mesh")
}

fn palette() -> Vec<PaletteMatrix> {
    (0..JOINTS)
        .map(|i| {
            PaletteMatrix::from_mat4(Mat4::from_rotation_translation(
                Quat::from_rotation_y(i as f32 * 0.1),
                Vec3::new(0.0, i as f32 * 0.05, 0.0),
            ))
        })
        .collect()
}

/// The reference and every available ISA, each on one thread and (when `threads`) on all.
fn backends(threads: bool) -> Vec<(String, Backend, Threads)> {
    let mut v = vec![("reference".to_string(), Backend::Reference, Threads::One)];
    for isa in Isa::available() {
        v.push((isa.name().to_string(), isa.into(), Threads::One));
        if threads {
            v.push((format!("{isa}_mt"), isa.into(), Threads::All));
        }
    }
    v
}

fn bench_skinning(c: &mut Criterion) {
    let pal = palette();
    for kernel in ["skin_p_base", "skin_p_bone_major"] {
        let mut g = c.benchmark_group(kernel);
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(800));
        for k in INFLUENCES {
            for n in SIZES {
                let mesh = mesh(n, k);
                let base = (kernel == "skin_p_base").then(|| BaseVectorMesh::from_mesh(&mesh));
                let lists =
                    (kernel == "skin_p_bone_major").then(|| BoneMajorMesh::from_mesh(&mesh));
                let mut p = vec![Vec3::ZERO; n];
                g.throughput(Throughput::Elements(n as u64));
                for (name, backend, threads) in backends(kernel == "skin_p_base") {
                    let id = BenchmarkId::new(format!("k{k}/{n}"), name);
                    g.bench_function(id, |b| {
                        b.iter(|| match (&base, &lists) {
                            (Some(base), _) => {
                                let mut job = BaseVectorJob::new(base, &pal, &mut p);
                                (job.backend, job.threads) = (backend, threads);
                                job.run().unwrap()
                            }
                            (None, Some(lists)) => {
                                let mut job = BoneMajorJob::new(lists, &pal, &mut p);
                                job.backend = backend;
                                job.run().unwrap()
                            }
                            (None, None) => unreachable!("one of the two meshes is built"),
                        })
                    });
                }
            }
        }
        g.finish();
    }
}

criterion_group!(
    benches,
    bench_local_to_model,
    bench_level_sum,
    bench_skinning
);
criterion_main!(benches);
