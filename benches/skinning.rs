//! Criterion benches for skinning: every kernel on the serial reference and every available ISA, with
//! 1, 2, 4 and 8 influences, on 1,024 and 65,536 vertices (in cache) and 1,048,576 (out of cache), on one
//! thread and on all of rayon's pool.
//! Ids: `<kernel>/k<influences>/<vertices>/<backend>[_mt]`, with kernels `skin_p`, `skin_pn`,
//! `skin_pnt` (blended matrices; 1 influence runs the rigid kernel) and `skin_pnt_compact`
//! (`skin_pnt` on a mesh prepared with compact influences: u16 joints, unorm16 weights). The seeds'
//! base-vector and bone-major methods are in the lab's benches. Filter with the usual
//! `cargo bench --bench skinning -- skin_pnt/k4/1024`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glam::{Mat4, Quat, Vec3, Vec4};
use ispc_skinning::Renormalize;
use ispc_skinning::{
    Attribute, Backend, Isa, MeshInput, PaletteMatrix, PrepareOptions, SkinOutput, SkinnedMesh,
    SkinningJob, Threads,
};
// The procedural scenes the lab shares, from their source file (see tests/common/mod.rs).
#[path = "../tests/support/scenes.rs"]
#[allow(dead_code)]
mod scenes;
use scenes::Rng;
use std::time::Duration;

const JOINTS: usize = 64;
const SIZES: [usize; 3] = [1024, 65_536, 1 << 20];
const INFLUENCES: [usize; 4] = [1, 2, 4, 8];

struct Data {
    pos: Vec<Vec3>,
    nrm: Vec<Vec3>,
    tan: Vec<Vec4>,
    joints: [Vec<[u16; 4]>; 2],
    weights: [Vec<[f32; 4]>; 2],
}

/// `n` vertices with `k` influences on neighbouring joints, as on a real mesh.
fn data(n: usize, k: usize) -> Data {
    let mut rng = Rng::new(3);
    let mut d = Data {
        pos: Vec::with_capacity(n),
        nrm: Vec::with_capacity(n),
        tan: Vec::with_capacity(n),
        joints: [Vec::with_capacity(n), Vec::with_capacity(n)],
        weights: [Vec::with_capacity(n), Vec::with_capacity(n)],
    };
    for _ in 0..n {
        let p = Vec3::new(
            rng.range(-1.0, 1.0),
            rng.range(0.0, 2.0),
            rng.range(-1.0, 1.0),
        );
        d.pos.push(p);
        d.nrm.push(p.normalize_or_zero());
        d.tan.push(p.any_orthonormal_vector().extend(-1.0));
        let base = rng.below(JOINTS - 8);
        let mut j = [0u16; 8];
        let mut w = [0f32; 8];
        for s in 0..k {
            j[s] = (base + s) as u16;
            w[s] = rng.range(0.05, 1.0);
        }
        d.joints[0].push([j[0], j[1], j[2], j[3]]);
        d.joints[1].push([j[4], j[5], j[6], j[7]]);
        d.weights[0].push([w[0], w[1], w[2], w[3]]);
        d.weights[1].push([w[4], w[5], w[6], w[7]]);
    }
    d
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

fn prepare(d: &Data, compact: bool) -> SkinnedMesh {
    let input = MeshInput {
        positions: Attribute::vec3(&d.pos),
        normals: Some(Attribute::vec3(&d.nrm)),
        tangents: Some(Attribute::vec4(&d.tan)),
        joints: [
            Some(Attribute::joints_u16(&d.joints[0])),
            Some(Attribute::joints_u16(&d.joints[1])),
            None,
            None,
        ],
        weights: [
            Some(Attribute::weights_f32(&d.weights[0])),
            Some(Attribute::weights_f32(&d.weights[1])),
            None,
            None,
        ],
        influences: None,
    };
    let options = PrepareOptions {
        compact_influences: compact,
        ..PrepareOptions::new(JOINTS)
    };
    SkinnedMesh::prepare(&input, &options).expect("valid mesh")
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
    for isa in Isa::ALL {
        if let Err(e) = isa.runnable() {
            eprintln!("skinning bench: {isa} not run: {e}");
        }
    }
    let pal = palette();
    for kernel in ["skin_p", "skin_pn", "skin_pnt", "skin_pnt_compact"] {
        let mut g = c.benchmark_group(kernel);
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(800));
        for k in INFLUENCES {
            for n in SIZES {
                let d = data(n, k);
                let mesh = prepare(&d, kernel == "skin_pnt_compact");
                let (mut p, mut nn, mut t) = (
                    vec![Vec3::ZERO; n],
                    vec![Vec3::ZERO; n],
                    vec![Vec4::ZERO; n],
                );
                g.throughput(Throughput::Elements(n as u64));
                for (name, backend, threads) in backends(true) {
                    let id = BenchmarkId::new(format!("k{k}/{n}"), name);
                    g.bench_function(id, |b| {
                        b.iter(|| {
                            let out = SkinOutput::Separate {
                                positions: &mut p,
                                normals: (kernel != "skin_p").then_some(&mut nn[..]),
                                tangents: kernel.starts_with("skin_pnt").then_some(&mut t[..]),
                            };
                            let mut job =
                                SkinningJob::new(&mesh, &pal, out).renormalize(Renormalize::None);
                            (job.backend, job.threads) = (backend, threads);
                            job.run().unwrap()
                        })
                    });
                }
            }
        }
        g.finish();
    }
}

criterion_group!(benches, bench_skinning);
criterion_main!(benches);
