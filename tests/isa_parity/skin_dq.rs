//! Dual-quaternion skinning: every ISA against the reference on the random meshes and influence shapes
//! of skin.rs (every influence count from 0 to 16, alone and mixed, normalized and kept weights, f32 and compact
//! influences), with the entries of `dual_quat_palette` for joints with non-uniform scale, and with
//! normalized weights also for a rigid skeleton (every entry rigid, so the scale-and-shear phase is
//! skipped), separate and
//! strided interleaved outputs, with and without renormalization, on one thread and on the pool, at
//! sizes around each gang width and large.
//!
//! Tolerance: an output is R (S_b v) + t with S_b = sum_i w_i S_i and (r, d) = sum_i +-w_i (r_i, d_i)
//! divided by |r|. Each sum carries a relative error of a few (k + 8) eps of its magnitude, and the
//! division by |r| scales the blended dual quaternion's error by 1 / |r|. So a component may differ by
//! 16 (k + 8) eps M / |r|, with M = sum_i |w_i| (|S_i| |v| + |t_i|) (|S_i| the largest row sum of S_i,
//! |t_i| the translation's largest component, |v| the largest component of the input) and |r| the
//! blended real part's length, computed here in f64. A renormalized direction may differ by twice
//! that bound over its length before renormalization (|S_b v|, in f64) plus 8 eps.

use crate::common::Rng;
use crate::harness::sizes;
use crate::skin::{input, mesh, palette, rigid_palette, same_box, shapes, within, Mesh, JOINTS};
use glam::{Vec3, Vec4};
use ispc_skinning::{
    dual_quat_palette, Backend, DualQuatEntry, Isa, PaletteMatrix, PrepareOptions, Renormalize,
    SkinOutput, SkinnedMesh, SkinningJob, Threads, WeightPolicy,
};

/// Skinned positions, normals and tangents.
type Skinned = (Vec<Vec3>, Vec<Vec3>, Vec<Vec4>);

pub fn check_skin_dq(isa: Isa) -> Result<String, String> {
    check_with(isa, false)
}

/// `check_skin_dq` on meshes prepared with compact influences; the reference reads the same quantized
/// weights.
pub fn check_skin_dq_compact(isa: Isa) -> Result<String, String> {
    check_with(isa, true)
}

/// The dual-quaternion entries of the random palette, with a few joints negated (q and -q are the same
/// motion, so the kernels' sign choice is exercised).
fn entries(pal: &[PaletteMatrix]) -> Result<Vec<DualQuatEntry>, String> {
    let mut dq = vec![DualQuatEntry::IDENTITY; pal.len()];
    dual_quat_palette(pal, &mut dq).map_err(|e| e.to_string())?;
    Ok(dq)
}

/// Of the file comment for vertex i and the input vector v (translation counted where `point`): M,
/// |r|, k, and |S_b v|, the length of the direction before it is renormalized (the weights normalized
/// where `normalized`).
fn bound(
    m: &Mesh,
    i: usize,
    dq: &[DualQuatEntry],
    v: Vec3,
    point: bool,
    normalized: bool,
) -> (f32, f32, usize, f32) {
    let j: Vec<u16> = m.j.iter().flat_map(|set| set[i]).collect();
    let w: Vec<f32> = m.w.iter().flat_map(|set| set[i]).collect();
    let wsum: f32 = w.iter().sum();
    let (mut mag, mut k) = (0.0f64, 0);
    let mut r = [0.0f64; 4];
    let mut sv = glam::DVec3::ZERO;
    for (jj, ww) in j.iter().zip(&w) {
        if *ww <= 0.0 {
            continue;
        }
        k += 1;
        // Normalized or kept, the kernels' weight is at most this.
        let exact = if normalized { ww / wsum } else { *ww } as f64;
        let ww = (ww / wsum.max(f32::MIN_POSITIVE)).max(*ww) as f64;
        let e = dq[*jj as usize];
        let s = e.scale_shear();
        sv += exact * (s * v).as_dvec3();
        let rows = [s.row(0), s.row(1), s.row(2)];
        let srow = rows
            .iter()
            .map(|r| r.abs().element_sum())
            .fold(0.0f32, f32::max) as f64;
        let t = if point {
            e.translation().abs().max_element() as f64
        } else {
            0.0
        };
        mag += ww * (srow * v.abs().max_element() as f64 + t);
        let q = e.real();
        let q = [q.x as f64, q.y as f64, q.z as f64, q.w as f64];
        let dot: f64 = (0..4).map(|c| q[c] * r[c]).sum();
        let sw = if dot < 0.0 { -ww } else { ww };
        (0..4).for_each(|c| r[c] += sw * q[c]);
    }
    let len = r.iter().map(|x| x * x).sum::<f64>().sqrt();
    (mag as f32, len as f32, k, sv.length() as f32)
}

fn check_with(isa: Isa, compact: bool) -> Result<String, String> {
    let mut rng = Rng::new(35);
    let pal = palette(&mut rng);
    let dq = entries(&pal)?;
    // A rigid skeleton, from a generator of its own.
    let mut rigid_rng = Rng::new(36);
    let rigid = entries(&rigid_palette(&mut rigid_rng))?;
    if !rigid.iter().all(DualQuatEntry::is_rigid) {
        return Err("a rigid palette's dual-quaternion entry is not rigid".into());
    }
    let mut cases = 0;
    let mut worst = 0.0f32;
    // skin.rs's shapes; "mixed" runs at the small sizes here.
    let shapes = shapes();
    for (policy, normalized) in [(WeightPolicy::Normalize, true), (WeightPolicy::Keep, false)] {
        for (shape, influences) in &shapes {
            let sizes: Vec<usize> = match shape.as_str() {
                "mixed16" | "k4" => sizes().to_vec(),
                _ => sizes().iter().copied().filter(|&n| n <= 1000).collect(),
            };
            for n in sizes {
                let zero_ok = policy == WeightPolicy::Keep && shape == "mixed16";
                let infl = |i: usize| {
                    if zero_ok && i % 11 == 5 {
                        0
                    } else {
                        influences(i)
                    }
                };
                let m = mesh(n, &mut rng, &infl, normalized);
                let prepared = SkinnedMesh::prepare(
                    &input(&m),
                    &PrepareOptions {
                        weights: policy,
                        compact_influences: compact,
                        ..PrepareOptions::new(JOINTS)
                    },
                )
                .map_err(|e| e.to_string())?;
                let palettes = [("scaled", &dq), ("rigid", &rigid)];
                let palettes = if normalized {
                    &palettes[..]
                } else {
                    &palettes[..1]
                };
                for ((skeleton, dq), (mode, interleaved, threads)) in
                    palettes.iter().flat_map(|&p| {
                        [
                            (Renormalize::None, false, Threads::One),
                            (Renormalize::None, true, Threads::One),
                            (Renormalize::Precise, false, Threads::All),
                        ]
                        .map(|r| (p, r))
                    })
                {
                    let run = |backend: Backend| {
                        run(&prepared, dq, backend, mode, interleaved, threads, n)
                    };
                    let (wp, wn, wt) = run(Backend::Reference)?;
                    let (gp, gn, gt) = run(isa.into())?;
                    let ctx = format!("skin_dq {isa} {skeleton} policy={policy:?} compact={compact} shape={shape} n={n} {mode:?} interleaved={interleaved} {threads:?}");
                    for i in 0..n {
                        for (what, got, want, v, point) in [
                            ("position", gp[i], wp[i], m.pos[i], true),
                            ("normal", gn[i], wn[i], m.nrm[i], false),
                            (
                                "tangent",
                                gt[i].truncate(),
                                wt[i].truncate(),
                                m.tan[i].truncate(),
                                false,
                            ),
                        ] {
                            let (mag, len, k, stretched) = bound(&m, i, dq, v, point, normalized);
                            let mut tol =
                                16.0 * (k as f32 + 8.0) * f32::EPSILON * mag / len.max(1e-10);
                            if mode != Renormalize::None && !point {
                                // A renormalized direction's error is the blend's over its length,
                                // plus the division's own few epsilons.
                                tol = 2.0 * tol / stretched.max(1e-6) + 8.0 * f32::EPSILON;
                            }
                            for r in 0..3 {
                                let d = (got[r] - want[r]).abs();
                                if tol > 0.0 {
                                    worst = worst.max(d / tol);
                                }
                                within(got[r], want[r], tol, &|| {
                                    format!(
                                        "{ctx}: vertex {i} {what}[{r}] (k={k} M={mag} |r|={len})"
                                    )
                                })?;
                            }
                        }
                        if gt[i].w != m.tan[i].w {
                            return Err(format!(
                                "{ctx}: vertex {i}: tangent w {} is not the input's {}",
                                gt[i].w, m.tan[i].w
                            ));
                        }
                    }
                    cases += 1;
                }
            }
        }
    }
    Ok(format!(
        "{cases} cases, largest difference {worst:.3} of the tolerance"
    ))
}

/// One dual-quaternion run into NaN-filled outputs; the box it returns is checked against the positions.
fn run(
    prepared: &SkinnedMesh,
    dq: &[DualQuatEntry],
    backend: Backend,
    mode: Renormalize,
    interleaved: bool,
    threads: Threads,
    n: usize,
) -> Result<Skinned, String> {
    let (mut p, mut nn, mut t) = (vec![Vec3::NAN; n], vec![Vec3::NAN; n], vec![Vec4::NAN; n]);
    let at = || format!("skin_dq {backend:?} n={n} interleaved={interleaved}");
    let skin = |out: SkinOutput<'_>| {
        SkinningJob::dual_quaternion(prepared, dq, out)
            .backend(backend)
            .renormalize(mode)
            .threads(threads)
            .run_with_bounds()
            .map_err(|e| format!("{}: {e}", at()))
    };
    let b = if interleaved {
        // Stride 13 floats as in skin.rs: guards at 0, 7 and 12 must stay untouched.
        let mut buf = vec![-7.25e30f32; n * 13];
        let b = skin(SkinOutput::Interleaved {
            bytes: bytemuck::cast_slice_mut(&mut buf),
            stride: 52,
            positions: 4,
            normals: Some(16),
            tangents: Some(32),
        })?;
        for i in 0..n {
            let f = &buf[13 * i..13 * i + 13];
            if f[0] != -7.25e30 || f[7] != -7.25e30 || f[12] != -7.25e30 {
                return Err(format!(
                    "{}: vertex {i}: a float outside the attributes was written: {f:?}",
                    at()
                ));
            }
            p[i] = Vec3::new(f[1], f[2], f[3]);
            nn[i] = Vec3::new(f[4], f[5], f[6]);
            t[i] = Vec4::new(f[8], f[9], f[10], f[11]);
        }
        b
    } else {
        skin(SkinOutput::positions_normals_tangents(
            &mut p, &mut nn, &mut t,
        ))?
    };
    same_box(b, &p, &at)?;
    Ok((p, nn, t))
}
