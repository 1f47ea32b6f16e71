//! The skinning rows of the report: `skin_p`, `skin_pn` and `skin_pnt` with 4 influences, on 1,024
//! vertices (in cache) and on 1,048,576 (out of cache, with the bytes moved per vertex and GB/s), next
//! to the reference and the glam loop, plus the single-core copy bandwidth this run measures.

use crate::baseline;
use crate::report::peer::{self, Job, Peer};
use crate::report::row::{backends, push_rows, Row};
use crate::report::timing::{median_ns_per_call, median_ns_per_call_in_pool, Budget};
use glam::{Mat4, Vec3, Vec4};
use indicatif::ProgressBar;
use ispc_skinning::experiments::{BaseVectorJob, BaseVectorMesh, BoneMajorJob, BoneMajorMesh};
use ispc_skinning::Renormalize;
use ispc_skinning::{
    dual_quat_palette, Attribute, Backend, DualQuatEntry, Isa, MeshInput, PaletteMatrix, Precision,
    PrepareOptions, SkinOutput, SkinnedMesh, SkinningJob, Threads,
};

pub(super) const JOINTS: usize = 64;

/// Bytes one vertex moves with 4 influences: the prepared attributes (40: position, normal and
/// tangent in the mesh's AoSoA blocks), joints (16) and weights (16) in
/// (the mesh has one influence count, so its group is contiguous and the kernel reads no vertex index),
/// plus the outputs (12 per position and normal, 16 per tangent). The write-allocate read of the
/// output lines is not counted.
fn bytes_per_vertex(kernel: &str) -> f64 {
    // A positions-only mesh's attributes are 12 bytes instead of 40.
    let block_saving = if kernel == "skin_p_only" { 28.0 } else { 0.0 };
    72.0 - block_saving + output_bytes(kernel)
}

/// Bytes one vertex writes.
fn output_bytes(kernel: &str) -> f64 {
    match kernel {
        "skin_p" | "skin_p_only" => 12.0,
        "skin_pn" => 24.0,
        _ => 40.0,
    }
}

/// A generated mesh's vertex streams (shared with the renormalization rows). The generator lives in
/// `scenes`, so that the ozz-animation-rs peer (`bench --peers`) skins exactly the same mesh.
pub(super) type Data = scenes::SkinMesh;

/// `n` vertices with `k` (1 to 4) influences each.
pub(super) fn data(n: usize, k: usize) -> Data {
    scenes::skin_mesh(n, k, JOINTS)
}

/// The report's palette (see [`scenes::skin_palette`]), as matrices and as the library's palette type.
pub(super) fn palette() -> (Vec<Mat4>, Vec<PaletteMatrix>) {
    let m = scenes::skin_palette(JOINTS);
    let p = m.iter().map(|m| PaletteMatrix::from_mat4(*m)).collect();
    (m, p)
}

/// Floats per buffer of the copy that measures single-core bandwidth (64 MiB, far beyond the caches).
const COPY_FLOATS: usize = 16 << 20;

/// Single-core copy bandwidth, bytes read plus written per ns, from this run's `copy` row (measured
/// interleaved with the 1M-vertex skinning rows).
fn copy_bandwidth(rows: &[Row]) -> f64 {
    rows.iter()
        .find(|r| r.kernel == "copy")
        .map_or(f64::NAN, |r| 1.0 / r.ns_per_item)
}

/// Appends every skinning row: `skin_p`, `skin_pn`, `skin_pnt` (and their `_stream` rows), `copy`,
/// `skin_p_only*`, the compact-influence rows, `skin_pnt_threads`, `copy_threads`, and the other
/// methods at 1,024 vertices.
pub fn rows(
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    progress: &ProgressBar,
    mut peer: Option<&mut Peer>,
) {
    let (mats, pal) = palette();
    let copy_src = vec![1.0f32; COPY_FLOATS];
    let mut copy_dst = vec![0.0f32; COPY_FLOATS];
    // The 1M-vertex mesh, kept for the positions-only and threaded rows.
    let mut big = None;
    for n in [1024usize, 1 << 20] {
        progress.set_message(format!("skinning, {n} vertices"));
        let d = data(n, 4);
        let mesh = prepare(&d, true, true);
        let budget = budget_for(budget, n);
        for (kernel, wn, wt) in [
            ("skin_p", false, false),
            ("skin_pn", true, false),
            ("skin_pnt", true, true),
        ] {
            let (mesh, pal, mats, d) = (&mesh, &pal, &mats, &d);
            // Out of cache, every ISA runs again with streaming stores (rows `<kernel>_stream`).
            let streamed = if n > 100_000 { isas.len() } else { 0 };
            let mut outs: Vec<(Vec<Vec3>, Vec<Vec3>, Vec<Vec4>)> = (0..2 + isas.len() + streamed)
                .map(|_| {
                    (
                        vec![Vec3::ZERO; n],
                        vec![Vec3::ZERO; n],
                        vec![Vec4::ZERO; n],
                    )
                })
                .collect();
            let mut it = outs.iter_mut();
            let glam_out = it.next().unwrap();
            let job = move |backend: Backend,
                            streaming: bool,
                            o: &mut (Vec<Vec3>, Vec<Vec3>, Vec<Vec4>)| {
                let out = SkinOutput::Separate {
                    positions: &mut o.0,
                    normals: if wn { Some(&mut o.1) } else { None },
                    tangents: if wt { Some(&mut o.2) } else { None },
                };
                let mut j = SkinningJob::new(mesh, pal, out).renormalize(Renormalize::None);
                (j.backend, j.streaming) = (backend, streaming);
                j.run().expect("valid job");
            };
            let mut names = vec!["reference".to_string(), "glam".to_string()];
            let r = it.next().unwrap();
            let mut c: Vec<Box<dyn FnMut() + '_>> = vec![
                Box::new(move || job(Backend::Reference, false, r)),
                Box::new(move || {
                    let (p, nn, t) = (&mut glam_out.0, &mut glam_out.1, &mut glam_out.2);
                    baseline::skin4(
                        &d.pos,
                        &d.nrm,
                        &d.tan,
                        &d.joints,
                        &d.weights,
                        mats,
                        p,
                        wn.then_some(&mut nn[..]),
                        wt.then_some(&mut t[..]),
                    );
                }),
            ];
            let mut kernels = vec![kernel; 2];
            let stream_kernel = match kernel {
                "skin_p" => "skin_p_stream",
                "skin_pn" => "skin_pn_stream",
                _ => "skin_pnt_stream",
            };
            let stream_isas = isas.iter().take(streamed).map(|&i| (i, true));
            for ((isa, streaming), o) in isas.iter().map(|&i| (i, false)).chain(stream_isas).zip(it)
            {
                names.push(isa.name().to_string());
                kernels.push(if streaming { stream_kernel } else { kernel });
                c.push(Box::new(move || job(isa.into(), streaming, o)));
            }
            // Out of cache, a plain copy runs in the same round-robin, so that the bandwidth the rows
            // are compared with is measured under the same machine conditions (it moves 2 x 64 MiB).
            let copy_sample = n > 100_000 && kernel == "skin_pnt";
            if copy_sample {
                let (src, dst) = (&copy_src, &mut copy_dst);
                c.push(Box::new(move || dst.copy_from_slice(src)));
            }
            // With `--peers`, ozz-animation-rs skins the same mesh with the same palette in this
            // round-robin (the reference stays candidate 0).
            let job = Job {
                kernel,
                size: n,
                influences: Some(4),
                file: None,
            };
            let mut times = peer::median_ns_per_call(peer.as_deref_mut(), job, budget, &mut c);
            if copy_sample {
                let t = times.pop().unwrap_or(f64::NAN);
                let bytes = 2 * 4 * COPY_FLOATS;
                rows.push(Row {
                    kernel: "copy",
                    isa: "memcpy".into(),
                    size: bytes,
                    influences: None,
                    threads: 1,
                    ns_per_item: t / bytes as f64,
                    reference_ns_per_item: t / bytes as f64,
                });
            }
            let reference = times[0] / n as f64;
            for ((name, t), kernel) in names.into_iter().zip(times).zip(kernels) {
                rows.push(Row {
                    kernel,
                    isa: name,
                    size: n,
                    influences: Some(4),
                    threads: 1,
                    ns_per_item: t / n as f64,
                    reference_ns_per_item: reference,
                });
            }
        }
        if n > 100_000 {
            big = Some((d, mesh));
        }
    }
    let Some((data_1m, mesh_1m)) = big else {
        return;
    };
    progress.set_message("skinning, positions only");
    positions_only_rows(budget, isas, rows, &pal, &data_1m);
    progress.set_message("skinning, compact influences");
    compact_rows(budget, isas, rows, &pal, &data_1m);
    progress.set_message("skinning, threads");
    threads_rows(budget, isas, rows, &pal, &mesh_1m, &copy_src);
    progress.set_message("skinning, other methods");
    variant_rows(budget, isas, rows, &pal);
}

/// Long meshes get fewer samples: one call already takes milliseconds.
pub(super) fn budget_for(budget: Budget, vertices: usize) -> Budget {
    if vertices > 100_000 {
        Budget {
            samples: budget.samples.min(7),
            ..budget
        }
    } else {
        budget
    }
}

pub(super) fn prepare(d: &Data, normals: bool, tangents: bool) -> SkinnedMesh {
    prepare_with(d, normals, tangents, false)
}

fn prepare_with(d: &Data, normals: bool, tangents: bool, compact: bool) -> SkinnedMesh {
    let input = MeshInput {
        positions: Attribute::vec3(&d.pos),
        normals: normals.then(|| Attribute::vec3(&d.nrm)),
        tangents: tangents.then(|| Attribute::vec4(&d.tan)),
        joints: [Some(Attribute::joints_u16(&d.joints)), None, None, None],
        weights: [Some(Attribute::weights_f32(&d.weights)), None, None, None],
        influences: None,
    };
    let options = PrepareOptions {
        compact_influences: compact,
        ..PrepareOptions::new(JOINTS)
    };
    SkinnedMesh::prepare(&input, &options).expect("valid mesh")
}

/// Times one kernel on the reference and every ISA (each against its own serial reference) and adds the
/// rows. `run(backend)` skins once.
fn measure(
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    kernel: &'static str,
    n: usize,
    influences: u32,
    run: &dyn Fn(Backend),
) {
    let backends = backends(isas);
    let mut c: Vec<Box<dyn FnMut() + '_>> = backends
        .iter()
        .map(|&(_, backend)| Box::new(move || run(backend)) as Box<dyn FnMut() + '_>)
        .collect();
    let times = median_ns_per_call(budget, &mut c);
    push_rows(rows, kernel, &backends, &times, n, Some(influences));
}

/// The other methods at 1,024 vertices: van Waveren's base vectors (`skin_p_base`, 4 influences, and 2
/// for his table, next to `skin_pnt` with 2), the VFP seed's bone-major lists (`skin_p_bone_major`), and
/// the rigid kernel (`skin_rigid`: positions, normals and tangents with 1 influence); `skin_pnt` with
/// 8, 12 and 16 influences; `skin_pnt_dq`, dual-quaternion skinning of the 4-influence mesh (the palette
/// is rigid, so the kernels skip the scale-and-shear phase), and `skin_pnt_dq_scaled`, the same with
/// every palette matrix scaled non-uniformly (both phases); and
/// `skin_pnt_deterministic`, that mesh with `Precision::Deterministic`.
fn variant_rows(budget: Budget, isas: &[Isa], rows: &mut Vec<Row>, pal: &[PaletteMatrix]) {
    let n = 1024;
    let out = std::cell::RefCell::new((
        vec![Vec3::ZERO; n],
        vec![Vec3::ZERO; n],
        vec![Vec4::ZERO; n],
    ));
    for k in [4usize, 2] {
        let mesh = prepare(&data(n, k), false, false);
        let base = BaseVectorMesh::from_mesh(&mesh);
        measure(budget, isas, rows, "skin_p_base", n, k as u32, &|backend| {
            let o = &mut out.borrow_mut().0;
            let mut job = BaseVectorJob::new(&base, pal, o);
            job.backend = backend;
            job.run().expect("valid job");
        });
        if k == 4 {
            let lists = BoneMajorMesh::from_mesh(&mesh);
            measure(budget, isas, rows, "skin_p_bone_major", n, 4, &|backend| {
                let o = &mut out.borrow_mut().0;
                let mut job = BoneMajorJob::new(&lists, pal, o);
                job.backend = backend;
                job.run().expect("valid job");
            });
        }
    }
    for (kernel, k) in [
        ("skin_pnt", 2usize),
        ("skin_rigid", 1),
        ("skin_pnt", 8),
        ("skin_pnt", 12),
        ("skin_pnt", 16),
    ] {
        let mesh = if k <= 4 {
            prepare(&data(n, k), true, true)
        } else {
            many_influences(&data(n, 4), k)
        };
        measure(budget, isas, rows, kernel, n, k as u32, &|backend| {
            let o = &mut *out.borrow_mut();
            let output = SkinOutput::Separate {
                positions: &mut o.0,
                normals: Some(&mut o.1),
                tangents: Some(&mut o.2),
            };
            let mut job = SkinningJob::new(&mesh, pal, output).renormalize(Renormalize::None);
            job.backend = backend;
            job.run().expect("valid job");
        });
    }
    // Dual-quaternion skinning of the `skin_pnt` mesh (4 influences), the entries converted once from
    // the same palette, as a frame converts them once for all its meshes.
    let mut dq = vec![DualQuatEntry::IDENTITY; pal.len()];
    dual_quat_palette(pal, &mut dq).expect("the report's palette is finite");
    let mesh = prepare(&data(n, 4), true, true);
    let scaled: Vec<PaletteMatrix> = pal
        .iter()
        .map(|p| PaletteMatrix::from_mat4(p.to_mat4() * Mat4::from_scale(Vec3::new(1.1, 0.9, 1.0))))
        .collect();
    let mut dq_scaled = vec![DualQuatEntry::IDENTITY; pal.len()];
    dual_quat_palette(&scaled, &mut dq_scaled).expect("the report's palette is finite");
    for (kernel, entries) in [("skin_pnt_dq", &dq), ("skin_pnt_dq_scaled", &dq_scaled)] {
        measure(budget, isas, rows, kernel, n, 4, &|backend| {
            let o = &mut *out.borrow_mut();
            let output = SkinOutput::positions_normals_tangents(&mut o.0, &mut o.1, &mut o.2);
            SkinningJob::dual_quaternion(&mesh, entries, output)
                .backend(backend)
                .run()
                .expect("valid job");
        });
    }
    // The same 4-influence mesh with Precision::Deterministic, the reference's bits on every ISA (the
    // reference row is the reference), without renormalization, as the `skin_pnt` rows run.
    measure(
        budget,
        isas,
        rows,
        "skin_pnt_deterministic",
        n,
        4,
        &|backend| {
            let o = &mut *out.borrow_mut();
            let output = SkinOutput::positions_normals_tangents(&mut o.0, &mut o.1, &mut o.2);
            SkinningJob::new(&mesh, pal, output)
                .backend(backend)
                .renormalize(Renormalize::None)
                .precision(Precision::Deterministic)
                .run()
                .expect("valid job");
        },
    );
}

/// The mesh's attributes with `k` influences per vertex (more than the four `scenes::skin_mesh` makes):
/// influence i of vertex v is joint (v + 5i) mod JOINTS with weight proportional to k - i, normalized,
/// so every vertex has exactly k distinct joints (k <= 16 < JOINTS / 4). The rows `skin_pnt` with 8,
/// 12 and 16 influences show what a glTF mesh with JOINTS_1 to JOINTS_3 costs (12 runs the 12-influence
/// kernel; 9 to 11 would run it too, padded).
fn many_influences(d: &Data, k: usize) -> SkinnedMesh {
    let n = d.pos.len();
    let joints: Vec<u16> = (0..n)
        .flat_map(|v| (0..k).map(move |i| ((v + 5 * i) % JOINTS) as u16))
        .collect();
    let sum = (k * (k + 1) / 2) as f32;
    let weights: Vec<f32> = (0..n)
        .flat_map(|_| (0..k).map(move |i| (k - i) as f32 / sum))
        .collect();
    let input = MeshInput::from_flat_influences(&d.pos, &joints, &weights, k)
        .normals(Attribute::vec3(&d.nrm))
        .tangents(Attribute::vec4(&d.tan));
    SkinnedMesh::prepare(&input, &PrepareOptions::new(JOINTS)).expect("valid mesh")
}

/// `skin_p_only`: the same meshes without normals and tangents, which `prepare` stores in the compact
/// 4-float layout, on 1,024 and 1M vertices; at 1M also with streaming stores (`skin_p_only_stream`).
fn positions_only_rows(
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    pal: &[PaletteMatrix],
    data_1m: &Data,
) {
    let data_1k = data(1024, 4);
    for d in [&data_1k, data_1m] {
        let n = d.pos.len();
        let mesh = prepare(d, false, false);
        let budget = budget_for(budget, n);
        let out = std::cell::RefCell::new(vec![Vec3::ZERO; n]);
        let streams: &[bool] = if n > 100_000 {
            &[false, true]
        } else {
            &[false]
        };
        for &streaming in streams {
            let kernel = if streaming {
                "skin_p_only_stream"
            } else {
                "skin_p_only"
            };
            measure(budget, isas, rows, kernel, n, 4, &|backend| {
                let o = &mut *out.borrow_mut();
                let output = SkinOutput::Separate {
                    positions: o,
                    normals: None,
                    tangents: None,
                };
                let mut job = SkinningJob::new(&mesh, pal, output).renormalize(Renormalize::None);
                (job.backend, job.streaming) = (backend, streaming);
                job.run().expect("valid job");
            });
        }
    }
}

/// The kernels measured with both influence formats: (kernel, its f32 row, its compact row, whether the
/// mesh has normals and tangents).
const COMPACT_KERNELS: [(&str, &str, &str, bool); 2] = [
    ("skin_pnt", "skin_pnt_f32", "skin_pnt_compact", true),
    (
        "skin_p_only",
        "skin_p_only_f32",
        "skin_p_only_compact",
        false,
    ),
];

/// Compact influences (`PrepareOptions::compact_influences`: u16 joints and unorm16 weights in one word
/// per influence) against the f32 format, each ISA running both in one round-robin next to the
/// reference on the f32 mesh, on the `skin_pnt` and positions-only meshes with 1,024 and 1M vertices.
/// Rows `<kernel>_compact` and, from the same block, `<kernel>_f32`.
fn compact_rows(
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    pal: &[PaletteMatrix],
    data_1m: &Data,
) {
    let data_1k = data(1024, 4);
    for d in [&data_1k, data_1m] {
        let n = d.pos.len();
        let budget = budget_for(budget, n);
        for (kernel, f32_kernel, compact_kernel, attributes) in COMPACT_KERNELS {
            let f32_mesh = prepare(d, attributes, attributes);
            let compact_mesh = prepare_with(d, attributes, attributes, true);
            let mut runs: Vec<(&'static str, String, Backend, &SkinnedMesh)> =
                vec![(kernel, "reference".into(), Backend::Reference, &f32_mesh)];
            for &isa in isas {
                runs.push((f32_kernel, isa.name().into(), isa.into(), &f32_mesh));
                runs.push((compact_kernel, isa.name().into(), isa.into(), &compact_mesh));
            }
            let mut outs: Vec<(Vec<Vec3>, Vec<Vec3>, Vec<Vec4>)> = runs
                .iter()
                .map(|_| {
                    let m = if attributes { n } else { 0 };
                    (
                        vec![Vec3::ZERO; n],
                        vec![Vec3::ZERO; m],
                        vec![Vec4::ZERO; m],
                    )
                })
                .collect();
            let mut c: Vec<Box<dyn FnMut() + '_>> = runs
                .iter()
                .zip(outs.iter_mut())
                .map(|(&(_, _, backend, mesh), o)| {
                    Box::new(move || {
                        let out = SkinOutput::Separate {
                            positions: &mut o.0,
                            normals: attributes.then_some(&mut o.1[..]),
                            tangents: attributes.then_some(&mut o.2[..]),
                        };
                        let mut job =
                            SkinningJob::new(mesh, pal, out).renormalize(Renormalize::None);
                        job.backend = backend;
                        job.run().expect("valid job");
                    }) as Box<dyn FnMut() + '_>
                })
                .collect();
            let times = median_ns_per_call(budget, &mut c);
            let reference = times[0] / n as f64;
            for (&(kernel, ref isa, _, _), t) in runs.iter().zip(&times).skip(1) {
                rows.push(Row {
                    kernel,
                    isa: isa.clone(),
                    size: n,
                    influences: Some(4),
                    threads: 1,
                    ns_per_item: t / n as f64,
                    reference_ns_per_item: reference,
                });
            }
        }
    }
}

/// `skin_pnt` on 1M vertices with one thread and with rayon's pool (vertex chunks), each ISA both ways,
/// next to the reference, all sampled interleaved from inside the pool, so that the scaling ratio comes
/// from one block of measurements. The rows are `skin_pnt_threads`. The same block copies 2 x 64 MiB on
/// one thread and split over the pool (rows `copy_threads`): how far this machine's memory bandwidth
/// scales with threads at that moment, the ceiling of a memory-bound kernel.
fn threads_rows(
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    pal: &[PaletteMatrix],
    mesh: &SkinnedMesh,
    copy_src: &[f32],
) {
    let n = mesh.vertex_count();
    let budget = budget_for(budget, n);
    let pool = rayon::current_num_threads();
    let mut runs: Vec<(String, Backend, Threads, usize)> =
        vec![("reference".into(), Backend::Reference, Threads::One, 1)];
    for &isa in isas {
        runs.push((isa.name().into(), isa.into(), Threads::One, 1));
        runs.push((isa.name().into(), isa.into(), Threads::All, pool));
    }
    let mut outs: Vec<(Vec<Vec3>, Vec<Vec3>, Vec<Vec4>)> = runs
        .iter()
        .map(|_| {
            (
                vec![Vec3::ZERO; n],
                vec![Vec3::ZERO; n],
                vec![Vec4::ZERO; n],
            )
        })
        .collect();
    let job =
        move |backend: Backend, threads: Threads, o: &mut (Vec<Vec3>, Vec<Vec3>, Vec<Vec4>)| {
            let out = SkinOutput::Separate {
                positions: &mut o.0,
                normals: Some(&mut o.1),
                tangents: Some(&mut o.2),
            };
            let mut j = SkinningJob::new(mesh, pal, out).renormalize(Renormalize::None);
            (j.backend, j.threads) = (backend, threads);
            j.run().expect("valid job");
        };
    let mut c: Vec<Box<dyn FnMut() + Send + '_>> = runs
        .iter()
        .zip(outs.iter_mut())
        .map(|(&(_, backend, threads, _), o)| {
            Box::new(move || job(backend, threads, o)) as Box<dyn FnMut() + Send + '_>
        })
        .collect();
    // The copies: one thread, then one contiguous part per thread of the pool, as the skinning job
    // splits its vertices.
    let (mut dst_one, mut dst_all) = (vec![0.0f32; copy_src.len()], vec![0.0f32; copy_src.len()]);
    let part = copy_src.len().div_ceil(pool).max(1);
    c.push(Box::new(move || dst_one.copy_from_slice(copy_src)));
    c.push(Box::new(move || {
        rayon::in_place_scope(|scope| {
            let mut parts = dst_all.chunks_mut(part).zip(copy_src.chunks(part));
            let first = parts.next();
            for (d, s) in parts {
                scope.spawn(move |_| d.copy_from_slice(s));
            }
            if let Some((d, s)) = first {
                d.copy_from_slice(s);
            }
        })
    }));
    // Measured from inside rayon's pool, as a job system calls it (like the crowd rows).
    let times = median_ns_per_call_in_pool(budget, &mut c);
    let bytes = 2 * 4 * copy_src.len();
    for (threads, t) in [1, pool].into_iter().zip(&times[runs.len()..]) {
        rows.push(Row {
            kernel: "copy_threads",
            isa: "memcpy".into(),
            size: bytes,
            influences: None,
            threads,
            ns_per_item: t / bytes as f64,
            reference_ns_per_item: times[runs.len()] / bytes as f64,
        });
    }
    for ((name, _, _, threads), t) in runs.into_iter().zip(&times) {
        rows.push(Row {
            kernel: "skin_pnt_threads",
            isa: name,
            size: n,
            influences: Some(4),
            threads,
            ns_per_item: t / n as f64,
            reference_ns_per_item: times[0] / n as f64,
        });
    }
}

/// Prints the targets for skinning, read off this run's rows.
pub fn print_summary(rows: &[Row]) {
    let bandwidth = copy_bandwidth(rows);
    let best = |k: &str, n: usize| -> Option<&Row> {
        rows.iter()
            .filter(|r| {
                r.kernel == k
                    && r.size == n
                    && r.threads == 1
                    && r.influences == Some(4)
                    && Isa::from_name(&r.isa).is_some()
            })
            .min_by(|a, b| a.ns_per_item.total_cmp(&b.ns_per_item))
    };
    println!("single-core copy bandwidth measured in this run, interleaved with the 1M rows: {bandwidth:.1} GB/s (bytes read + written per ns)");
    for kernel in ["skin_p", "skin_pn", "skin_pnt", "skin_p_only"] {
        if let Some(b) = best(kernel, 1024) {
            println!(
                "{kernel}, 4 influences, 1,024 vertices: best ISA {} {:.2} ns/vertex, {:.2}x the reference",
                b.isa,
                b.ns_per_item,
                b.speedup()
            );
        }
        let stream_kernel = format!("{kernel}_stream");
        for (k, how) in [
            (kernel, "ordinary stores"),
            (stream_kernel.as_str(), "streaming stores"),
        ] {
            if let Some(b) = best(k, 1 << 20) {
                let gbs = bytes_per_vertex(kernel) / b.ns_per_item;
                // Ordinary stores also read each output line before writing it (write-allocate), which
                // the memory bus carries too; streaming stores do not. The copy it is compared with
                // streams (glibc's memcpy uses non-temporal stores at this size).
                let allocate = if k == kernel {
                    output_bytes(kernel)
                } else {
                    0.0
                };
                let traffic = (bytes_per_vertex(kernel) + allocate) / b.ns_per_item;
                println!(
                    "{kernel}, 4 influences, 1,048,576 vertices, {how}: best ISA {} {:.2} ns/vertex, {:.0} bytes/vertex moved, {gbs:.1} GB/s = {:.0}% of the copy bandwidth ({:.0}% counting write-allocate reads)",
                    b.isa,
                    b.ns_per_item,
                    bytes_per_vertex(kernel),
                    100.0 * gbs / bandwidth,
                    100.0 * traffic / bandwidth
                );
            }
        }
    }
    // Compact influences against the f32 format, each ISA's pair from one block.
    for (kernel, f32_kernel, compact_kernel, attributes) in COMPACT_KERNELS {
        // What SkinnedMesh::heap_bytes counts per vertex, measured on a small mesh of the same kind.
        let small = data(1024, 4);
        let held = |compact: bool| {
            prepare_with(&small, attributes, attributes, compact).heap_bytes() as f64
                / small.pos.len() as f64
        };
        if best(compact_kernel, 1024).is_some() {
            println!(
                "{kernel} prepared mesh, 4 influences: {:.0} bytes/vertex with compact influences, {:.0} with f32 influences (SkinnedMesh::heap_bytes)",
                held(true),
                held(false)
            );
        }
        for n in [1024usize, 1 << 20] {
            let Some(c) = best(compact_kernel, n) else {
                continue;
            };
            let Some(f) = rows.iter().find(|r| {
                r.kernel == f32_kernel && r.size == n && r.isa == c.isa && r.threads == 1
            }) else {
                continue;
            };
            // Compact influences read 4 bytes per influence instead of 8.
            let (f32_bytes, compact_bytes) =
                (bytes_per_vertex(kernel), bytes_per_vertex(kernel) - 16.0);
            let memory = if n > 100_000 {
                format!(
                    ", {compact_bytes:.0} instead of {f32_bytes:.0} bytes/vertex, {:.1} GB/s = {:.0}% of the copy bandwidth",
                    compact_bytes / c.ns_per_item,
                    100.0 * compact_bytes / c.ns_per_item / bandwidth
                )
            } else {
                String::new()
            };
            println!(
                "{kernel} with compact influences (u16 joints, unorm16 weights), 4 influences, {n} vertices: best ISA {} {:.2} ns/vertex against {:.2} with f32 influences in the same block ({:.2}x), {:.2}x the reference{memory}",
                c.isa,
                c.ns_per_item,
                f.ns_per_item,
                f.ns_per_item / c.ns_per_item,
                c.speedup()
            );
        }
    }
    fn at<'r>(rows: &'r [Row], k: &'r str, infl: u32) -> impl Iterator<Item = &'r Row> {
        rows.iter().filter(move |r| {
            r.kernel == k && r.size == 1024 && r.threads == 1 && r.influences == Some(infl)
        })
    }
    fn best_of<'r>(rows: &'r [Row], k: &'r str, infl: u32) -> Option<&'r Row> {
        at(rows, k, infl)
            .filter(|r| Isa::from_name(&r.isa).is_some())
            .min_by(|a, b| a.ns_per_item.total_cmp(&b.ns_per_item))
    }
    for (kernel, infl, what) in [
        (
            "skin_p_base",
            4,
            "van Waveren's weighted base vectors, positions",
        ),
        (
            "skin_p_bone_major",
            4,
            "bone-major lists (VFP seed), positions",
        ),
        ("skin_rigid", 1, "rigid, positions + normals + tangents"),
    ] {
        if let Some(b) = best_of(rows, kernel, infl) {
            let worst = at(rows, kernel, infl)
                .filter(|r| Isa::from_name(&r.isa).is_some())
                .map(|r| r.speedup())
                .fold(f64::INFINITY, f64::min);
            println!(
                "{kernel}, {infl} influence(s), 1,024 vertices, {what}: best ISA {} {:.2} ns/vertex, {:.2}x its reference (slowest ISA {worst:.2}x)",
                b.isa,
                b.ns_per_item,
                b.speedup()
            );
        }
    }
    println!("van Waveren's table, 1,024 vertices, 2 weights (the seed's published figures: Pentium 4 cycles per vertex, C / SSE):");
    for (kernel, name, seed) in [
        ("skin_p_base", "TransformVerts", "105-127 / 33-43, 3.0-3.2x"),
        (
            "skin_pnt",
            "TransformVertsAndTangents",
            "192-225 / 75-88, 2.6x",
        ),
    ] {
        let cells: Vec<String> = at(rows, kernel, 2)
            .map(|r| format!("{} {:.2} ns ({:.2}x)", r.isa, r.ns_per_item, r.speedup()))
            .collect();
        println!("  {name} ({kernel}): {}; seed {seed}", cells.join(", "));
    }
    let copy = |pool: bool| {
        rows.iter()
            .find(|r| r.kernel == "copy_threads" && (r.threads > 1) == pool)
    };
    if let (Some(one), Some(all)) = (copy(false), copy(true)) {
        println!(
            "copy of 2 x 64 MiB in the threads block: {} threads {:.2}x one thread (this machine's memory scaling during the run)",
            all.threads,
            one.ns_per_item / all.ns_per_item
        );
    }
    for r in rows
        .iter()
        .filter(|r| r.kernel == "skin_pnt_threads" && r.threads > 1)
    {
        if let Some(one) = rows
            .iter()
            .find(|x| x.kernel == "skin_pnt_threads" && x.threads == 1 && x.isa == r.isa)
        {
            println!(
                "skin_pnt, 1,048,576 vertices, {} threads, {}: {:.2} ns/vertex, {:.2}x one thread (target 1.7x)",
                r.threads,
                r.isa,
                r.ns_per_item,
                one.ns_per_item / r.ns_per_item
            );
        }
    }
    println!();
}
