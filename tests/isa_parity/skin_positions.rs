//! Positions-only skinning: a mesh without normals or tangents (its compact 4-float layout and own
//! kernel) on every ISA against the reference, with every influence count alone and mixed, both
//! weight policies, f32 and compact influences, separate and strided interleaved outputs, threads and
//! streaming stores; and, with the `experiments` feature, the seeds' positions-only methods (base
//! vectors, bone-major lists) against their own serial references. Tolerances as in skin.rs.

use crate::common::Rng;
use crate::harness::sizes;
use crate::skin::{bound, input, mesh, palette, same_box, within, JOINTS};
use glam::Vec3;
#[cfg(feature = "experiments")]
use ispc_skinning::PaletteMatrix;
use ispc_skinning::{
    Backend, Isa, MeshInput, PrepareOptions, SkinOutput, SkinnedMesh, SkinningJob, WeightPolicy,
};

/// A positions-only mesh (no normals, no tangents) takes the compact 4-float layout and its own kernel:
/// every influence count alone and mixed, both weight policies (zero-influence vertices included), every
/// size, into separate positions and a strided interleaved buffer with guards, against the reference
/// (tolerance as in skin.rs's file comment); threads and streaming stores give the same bits.
pub fn check_skin_p_only(isa: Isa) -> Result<String, String> {
    use ispc_skinning::Threads;
    let mut rng = Rng::new(88);
    let pal = palette(&mut rng);
    let mut cases = 0;
    for (policy, normalized) in [(WeightPolicy::Normalize, true), (WeightPolicy::Keep, false)] {
        for shape in 1..=9usize {
            for &n in sizes().iter().filter(|&&n| n <= 1000 || shape >= 8) {
                let infl = |i: usize| match shape {
                    9 if policy == WeightPolicy::Keep && i % 11 == 5 => 0,
                    9 => 1 + (i * 7 + i / 3) % 8,
                    k => k,
                };
                let m = mesh(n, &mut rng, &infl, normalized);
                let input = MeshInput {
                    normals: None,
                    tangents: None,
                    ..input(&m)
                };
                // Compact influences for even shapes under one policy and odd ones under the other, so
                // that every shape runs in both formats.
                let compact = (shape % 2 == 0) == normalized;
                let prepared = SkinnedMesh::prepare(
                    &input,
                    &PrepareOptions {
                        weights: policy,
                        compact_influences: compact,
                        ..PrepareOptions::new(JOINTS)
                    },
                )
                .map_err(|e| e.to_string())?;
                let run = |backend: Backend,
                           interleaved: bool,
                           threads: Threads,
                           streaming: bool|
                 -> Result<Vec<Vec3>, String> {
                    let mut p = vec![Vec3::NAN; n];
                    if interleaved {
                        // Stride 5 floats: guard, position (1..4), guard.
                        let mut buf = vec![-7.25e30f32; n * 5];
                        let out = SkinOutput::Interleaved {
                            bytes: bytemuck::cast_slice_mut(&mut buf),
                            stride: 20,
                            positions: 4,
                            normals: None,
                            tangents: None,
                        };
                        let mut job = SkinningJob::new(&prepared, &pal, out);
                        (job.backend, job.threads, job.streaming) = (backend, threads, streaming);
                        let b = job.run_with_bounds().map_err(|e| e.to_string())?;
                        for i in 0..n {
                            let f = &buf[5 * i..5 * i + 5];
                            if f[0] != -7.25e30 || f[4] != -7.25e30 {
                                return Err(format!(
                                    "vertex {i}: a guard float was written: {f:?}"
                                ));
                            }
                            p[i] = Vec3::new(f[1], f[2], f[3]);
                        }
                        same_box(b, &p, &|| {
                            format!("skin_p_only {backend:?} n={n} interleaved")
                        })?;
                    } else {
                        let out = SkinOutput::Separate {
                            positions: &mut p,
                            normals: None,
                            tangents: None,
                        };
                        let mut job = SkinningJob::new(&prepared, &pal, out);
                        (job.backend, job.threads, job.streaming) = (backend, threads, streaming);
                        let b = job.run_with_bounds().map_err(|e| e.to_string())?;
                        same_box(b, &p, &|| {
                            format!("skin_p_only {backend:?} n={n} {threads:?}")
                        })?;
                    }
                    Ok(p)
                };
                let want = run(Backend::Reference, false, Threads::One, false)?;
                for interleaved in [false, true] {
                    let got = run(isa.into(), interleaved, Threads::One, false)?;
                    let ctx = format!(
                        "skin_p_only {isa} policy={policy:?} compact={compact} shape={shape} n={n} interleaved={interleaved}"
                    );
                    for i in 0..n {
                        let (g, w) = (got[i].to_array(), want[i].to_array());
                        for r in 0..3 {
                            let (s, k) = bound(&m, i, &pal, r, m.pos[i].extend(1.0).to_array());
                            let tol = (k as f32 + 4.0) * f32::EPSILON * s;
                            within(g[r], w[r], tol, &|| {
                                format!("{ctx}: vertex {i} position[{r}]")
                            })?;
                        }
                    }
                    for (threads, streaming) in [(Threads::All, false), (Threads::One, true)] {
                        let other = run(isa.into(), interleaved, threads, streaming)?;
                        let bits = |v: &[Vec3]| -> Vec<u32> {
                            v.iter()
                                .flat_map(|x| x.to_array().map(f32::to_bits))
                                .collect()
                        };
                        if bits(&other) != bits(&got) {
                            return Err(format!(
                                "{ctx}: {threads:?} streaming={streaming} changed the bits"
                            ));
                        }
                    }
                    cases += 1;
                }
            }
        }
    }
    Ok(format!("{cases} cases"))
}

/// The positions-only methods: van Waveren's weighted base vectors and the VFP seed's bone-major
/// accumulation, each against its own serial reference, with every influence count, both weight
/// policies (zero-influence vertices included) and every size. Both sides sum the same products per
/// row in other orders (and the kernels fuse multiply-adds): each is within gamma_(4k + 4) of the exact
/// value relative to S (see skin.rs's file comment), so they may differ by 2 (4k + 4) eps S.
/// Skins a prepared mesh's positions with one backend.
#[cfg(feature = "experiments")]
type PositionsFn =
    dyn Fn(&SkinnedMesh, &[PaletteMatrix], Backend, &mut [Vec3]) -> Result<(), String>;

#[cfg(feature = "experiments")]
fn check_positions_only(isa: Isa, name: &str, run: &PositionsFn) -> Result<String, String> {
    let mut rng = Rng::new(55);
    let pal = palette(&mut rng);
    let mut cases = 0;
    for (policy, normalized) in [(WeightPolicy::Normalize, true), (WeightPolicy::Keep, false)] {
        for shape in 1..=9usize {
            for &n in sizes().iter().filter(|&&n| n <= 1000 || shape >= 8) {
                // Shape 9 mixes every count, with zero-influence vertices under the Keep policy.
                let infl = |i: usize| match shape {
                    9 if policy == WeightPolicy::Keep && i % 11 == 5 => 0,
                    9 => 1 + (i * 7 + i / 3) % 8,
                    k => k,
                };
                let m = mesh(n, &mut rng, &infl, normalized);
                let prepared = SkinnedMesh::prepare(
                    &input(&m),
                    &PrepareOptions {
                        weights: policy,
                        ..PrepareOptions::new(JOINTS)
                    },
                )
                .map_err(|e| e.to_string())?;
                let mut want = vec![Vec3::NAN; n];
                let mut got = vec![Vec3::NAN; n];
                run(&prepared, &pal, Backend::Reference, &mut want)?;
                run(&prepared, &pal, isa.into(), &mut got)?;
                for i in 0..n {
                    let (g, w) = (got[i].to_array(), want[i].to_array());
                    for r in 0..3 {
                        let (s, k) = bound(&m, i, &pal, r, m.pos[i].extend(1.0).to_array());
                        let tol = 2.0 * (4.0 * k as f32 + 4.0) * f32::EPSILON * s;
                        within(g[r], w[r], tol, &|| {
                            format!("{name} {isa} policy={policy:?} shape={shape} n={n}: vertex {i} position[{r}]")
                        })?;
                    }
                }
                cases += 1;
            }
        }
    }
    Ok(format!("{cases} cases"))
}

#[cfg(feature = "experiments")]
pub fn check_skin_p_base(isa: Isa) -> Result<String, String> {
    use ispc_skinning::experiments::{BaseVectorJob, BaseVectorMesh};
    check_positions_only(isa, "skin_p_base", &|mesh, pal, backend, out| {
        let base = BaseVectorMesh::from_mesh(mesh);
        let mut job = BaseVectorJob::new(&base, pal, out);
        job.backend = backend;
        job.run().map_err(|e| e.to_string())
    })
}

#[cfg(feature = "experiments")]
pub fn check_skin_p_bone_major(isa: Isa) -> Result<String, String> {
    use ispc_skinning::experiments::{BoneMajorJob, BoneMajorMesh};
    check_positions_only(isa, "skin_p_bone_major", &|mesh, pal, backend, out| {
        let lists = BoneMajorMesh::from_mesh(mesh);
        let mut job = BoneMajorJob::new(&lists, pal, out);
        job.backend = backend;
        job.run().map_err(|e| e.to_string())
    })
}

/// Base vectors over rayon's pool: bit-identical to one thread on a mesh of several chunks.
#[cfg(feature = "experiments")]
pub fn check_skin_p_base_threads(isa: Isa) -> Result<String, String> {
    use ispc_skinning::experiments::{BaseVectorJob, BaseVectorMesh};
    use ispc_skinning::Threads;
    let mut rng = Rng::new(66);
    let pal = palette(&mut rng);
    let n = 100_000;
    let m = mesh(n, &mut rng, &|i| 1 + (i * 7 + i / 5) % 8, true);
    let prepared = SkinnedMesh::prepare(&input(&m), &PrepareOptions::new(JOINTS))
        .map_err(|e| e.to_string())?;
    let base = BaseVectorMesh::from_mesh(&prepared);
    let run = |threads: Threads| -> Result<Vec<Vec3>, String> {
        let mut out = vec![Vec3::NAN; n];
        let mut job = BaseVectorJob::new(&base, &pal, &mut out);
        (job.backend, job.threads) = (isa.into(), threads);
        job.run().map_err(|e| e.to_string())?;
        Ok(out)
    };
    let (one, all) = (run(Threads::One)?, run(Threads::All)?);
    match (0..n)
        .find(|&i| one[i].to_array().map(f32::to_bits) != all[i].to_array().map(f32::to_bits))
    {
        Some(i) => Err(format!(
            "skin_p_base threads {isa}: vertex {i} differs: {} vs {}",
            one[i], all[i]
        )),
        None => Ok("bit-identical".into()),
    }
}
