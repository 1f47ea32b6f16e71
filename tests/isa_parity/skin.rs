//! Skinning checks: every ISA against the reference on random meshes with every influence count (1 to 16,
//! alone and mixed; the kernels skin 9 to 11 as 12 and 13 to 15 as 16), weights normalized or kept as given (zero weights included), separate and strided
//! interleaved outputs, at sizes around each gang width and large.
//!
//! Streaming stores are checked in `skin_streaming.rs`, positions-only meshes and methods in
//! `skin_positions.rs`; both use this module's meshes, palettes and tolerances.
//!
//! Tolerance: a component is sum_c B[r][c] * v_c with B = sum_i w_i P_i, a sum of at most 4k products,
//! computed in other orders and with fused multiply-adds by the kernels. Both sides are within
//! gamma_(k+4) of the exact value relative to S = sum_i |w_i| sum_c |P_i[r][c]| |v_c|, so they may differ
//! by (k + 4) * eps * S.

use crate::common::{random_transform, random_vec3, Rng};
use crate::harness::sizes;
use glam::{Vec3, Vec4};
use ispc_skinning::{
    Attribute, Backend, Isa, MeshInput, PaletteMatrix, PrepareOptions, Renormalize, SkinOutput,
    SkinnedMesh, SkinningJob, WeightPolicy,
};

pub(crate) const JOINTS: usize = 40;

/// How many influences vertex i gets.
pub(crate) type InfluenceFn = Box<dyn Fn(usize) -> usize>;
/// Skinned positions, normals and tangents.
type Skinned = (Vec<Vec3>, Vec<Vec3>, Vec<Vec4>);

pub(crate) struct Mesh {
    pub(crate) pos: Vec<Vec3>,
    pub(crate) nrm: Vec<Vec3>,
    pub(crate) tan: Vec<Vec4>,
    /// JOINTS_0 to JOINTS_3 and WEIGHTS_0 to WEIGHTS_3.
    pub(crate) j: [Vec<[u16; 4]>; 4],
    pub(crate) w: [Vec<[f32; 4]>; 4],
}

/// A mesh whose vertex i has `influences(i)` non-zero weights (0 allowed with the Keep policy).
pub(crate) fn mesh(
    n: usize,
    rng: &mut Rng,
    influences: &dyn Fn(usize) -> usize,
    normalized: bool,
) -> Mesh {
    let mut m = Mesh {
        pos: vec![],
        nrm: vec![],
        tan: vec![],
        j: Default::default(),
        w: Default::default(),
    };
    for i in 0..n {
        m.pos.push(random_vec3(rng, -2.0..2.0));
        m.nrm.push(random_vec3(rng, -1.0..1.0));
        m.tan
            .push(random_vec3(rng, -1.0..1.0).extend(if i % 3 == 0 { -1.0 } else { 1.0 }));
        let k = influences(i);
        let mut j = [0u16; 16];
        let mut w = [0f32; 16];
        for s in 0..k {
            j[s] = rng.below(JOINTS) as u16;
            w[s] = rng.range(0.05, 1.0);
        }
        if normalized {
            let sum: f32 = w.iter().sum();
            if sum > 0.0 {
                w.iter_mut().for_each(|x| *x /= sum);
            }
        }
        for set in 0..4 {
            m.j[set].push(std::array::from_fn(|c| j[4 * set + c]));
            m.w[set].push(std::array::from_fn(|c| w[4 * set + c]));
        }
    }
    m
}

pub(crate) fn palette(rng: &mut Rng) -> Vec<PaletteMatrix> {
    (0..JOINTS)
        .map(|_| PaletteMatrix::from_mat4(random_transform(rng, 0.7..1.3, -3.0..3.0)))
        .collect()
}

/// A palette of rotations and translations only: a rigid skeleton, whose dual-quaternion entries are
/// all rigid.
pub(crate) fn rigid_palette(rng: &mut Rng) -> Vec<PaletteMatrix> {
    (0..JOINTS)
        .map(|_| PaletteMatrix::from_mat4(random_transform(rng, 1.0..1.0, -3.0..3.0)))
        .collect()
}

/// The mesh as input attributes: every stream separate, four sets of joints and weights.
pub(crate) fn input(m: &Mesh) -> MeshInput<'_> {
    MeshInput {
        positions: Attribute::vec3(&m.pos),
        normals: Some(Attribute::vec3(&m.nrm)),
        tangents: Some(Attribute::vec4(&m.tan)),
        joints: std::array::from_fn(|set| Some(Attribute::joints_u16(&m.j[set]))),
        weights: std::array::from_fn(|set| Some(Attribute::weights_f32(&m.w[set]))),
        influences: None,
    }
}

/// S for one output component (see the file comment), from the input influences.
pub(crate) fn bound(
    m: &Mesh,
    i: usize,
    pal: &[PaletteMatrix],
    r: usize,
    v: [f32; 4],
) -> (f32, usize) {
    let mut s = 0.0;
    let mut k = 0;
    let (j, w) = (
        m.j.iter().flat_map(|set| set[i]).collect::<Vec<_>>(),
        m.w.iter().flat_map(|set| set[i]).collect::<Vec<_>>(),
    );
    let wsum: f32 = w.iter().sum();
    for (jj, ww) in j.iter().zip(&w) {
        if *ww > 0.0 {
            k += 1;
            let row = pal[*jj as usize].rows[r];
            s += (ww / wsum.max(f32::MIN_POSITIVE)).max(*ww)
                * (0..4).map(|c| (row[c] * v[c]).abs()).sum::<f32>();
        }
    }
    (s, k)
}

/// Ok when |got - want| is at most `tol` (a NaN difference fails); otherwise a message that starts with
/// `at()` and shows both values, the difference and the tolerance.
pub(crate) fn within(got: f32, want: f32, tol: f32, at: &dyn Fn() -> String) -> Result<(), String> {
    let diff = (got - want).abs();
    if matches!(
        diff.partial_cmp(&tol),
        Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
    ) {
        Ok(())
    } else {
        Err(format!(
            "{}: ispc {got} reference {want}, |diff| {diff} > tolerance {tol}",
            at()
        ))
    }
}

/// The box `SkinningJob::run_with_bounds` returned against the box of the positions the job wrote, read
/// back: equal (a minimum or maximum rounds nothing, so the kernels' box must be exactly the positions'
/// on every ISA, thread count and output form), and `None` exactly when there is no vertex.
pub fn same_box(
    got: Option<(Vec3, Vec3)>,
    positions: &[Vec3],
    at: &dyn Fn() -> String,
) -> Result<(), String> {
    let want = positions.iter().fold(None, |b: Option<(Vec3, Vec3)>, &p| {
        Some(b.map_or((p, p), |(lo, hi)| (lo.min(p), hi.max(p))))
    });
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "{}: the pass's box is {got:?}, the positions written span {want:?}",
            at()
        ))
    }
}

/// The influence shapes of the skinning checks: every count from 1 to 16, a mix of 1 to 8, a mix of 1
/// to 16, and 1 and 2 in turn.
pub(crate) fn shapes() -> Vec<(String, InfluenceFn)> {
    let mut v: Vec<(String, InfluenceFn)> = (1..=16usize)
        .map(|k| (format!("k{k}"), Box::new(move |_| k) as InfluenceFn))
        .collect();
    v.push(("mixed".into(), Box::new(|i: usize| 1 + (i * 7 + i / 3) % 8)));
    // Every count from 1 to 16 in one mesh: runs promoted to 12 and 16 beside the smaller groups.
    v.push((
        "mixed16".into(),
        Box::new(|i: usize| 1 + (i * 7 + i / 3) % 16),
    ));
    // One and two influences in turn: two listed (non-contiguous) groups, the first rigid. At
    // PREFETCHED vertices (check_skin_with) each group holds more than the 4 MiB of input from which
    // the kernels prefetch, so the prefetching loops of skin_rigid and of listed groups run there too.
    v.push(("alternating".into(), Box::new(|i: usize| 1 + i % 2)));
    v
}

pub fn check_skin(isa: Isa) -> Result<String, String> {
    check_skin_with(isa, false)
}

/// `check_skin` on meshes prepared with compact influences (u16 joints and unorm16 weights packed in one
/// word): the reference skins with the same quantized weights, so the tolerance is unchanged.
pub fn check_skin_compact(isa: Isa) -> Result<String, String> {
    check_skin_with(isa, true)
}

fn check_skin_with(isa: Isa, compact: bool) -> Result<String, String> {
    let mut rng = Rng::new(21);
    let pal = palette(&mut rng);
    let mut cases = 0;
    let shapes = shapes();
    const PREFETCHED: usize = 160_000;
    for (policy, normalized) in [(WeightPolicy::Normalize, true), (WeightPolicy::Keep, false)] {
        for (shape, influences) in &shapes {
            let sizes: Vec<usize> = match shape.as_str() {
                "alternating" => vec![1000, PREFETCHED],
                "mixed" | "mixed16" | "k4" | "k16" => sizes().to_vec(),
                _ => sizes().iter().copied().filter(|&n| n <= 1000).collect(),
            };
            for n in sizes {
                let zero_ok = policy == WeightPolicy::Keep && shape == "mixed";
                let infl = |i: usize| {
                    if zero_ok && i % 11 == 5 {
                        0
                    } else {
                        influences(i)
                    }
                };
                let m = mesh(n, &mut rng, &infl, normalized);
                let input = input(&m);
                let prepared = SkinnedMesh::prepare(
                    &input,
                    &PrepareOptions {
                        weights: policy,
                        compact_influences: compact,
                        ..PrepareOptions::new(JOINTS)
                    },
                )
                .map_err(|e| e.to_string())?;
                let run = |backend: Backend, interleaved: bool| -> Result<Skinned, String> {
                    let (mut p, mut nn, mut t) =
                        (vec![Vec3::NAN; n], vec![Vec3::NAN; n], vec![Vec4::NAN; n]);
                    if interleaved {
                        // Stride 13 floats (52 bytes): guard, position (1..4), normal (4..7), guard, tangent
                        // (8..12), guard. Attributes sit at 4-byte but not 16-byte boundaries, and the
                        // guards must stay untouched.
                        let mut buf = vec![-7.25e30f32; n * 13];
                        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buf);
                        let out = SkinOutput::Interleaved {
                            bytes,
                            stride: 52,
                            positions: 4,
                            normals: Some(16),
                            tangents: Some(32),
                        };
                        // The blend itself: the tolerance above is for unrenormalized output, and the
                        // default is Renormalize::Precise (check_skin_renormalize covers it).
                        let mut job = SkinningJob::new(&prepared, &pal, out);
                        (job.backend, job.renormalize) = (backend, Renormalize::None);
                        let b = job.run_with_bounds().map_err(|e| e.to_string())?;
                        for i in 0..n {
                            let f = &buf[13 * i..13 * i + 13];
                            if f[0] != -7.25e30 || f[7] != -7.25e30 || f[12] != -7.25e30 {
                                return Err(format!(
                                    "vertex {i}: a float outside the attributes was written: {f:?}"
                                ));
                            }
                            p[i] = Vec3::new(f[1], f[2], f[3]);
                            nn[i] = Vec3::new(f[4], f[5], f[6]);
                            t[i] = Vec4::new(f[8], f[9], f[10], f[11]);
                        }
                        same_box(b, &p, &|| format!("skin {backend:?} n={n} interleaved"))?;
                    } else {
                        let out = SkinOutput::Separate {
                            positions: &mut p,
                            normals: Some(&mut nn),
                            tangents: Some(&mut t),
                        };
                        // The blend itself: the tolerance above is for unrenormalized output, and the
                        // default is Renormalize::Precise (check_skin_renormalize covers it).
                        let mut job = SkinningJob::new(&prepared, &pal, out);
                        (job.backend, job.renormalize) = (backend, Renormalize::None);
                        let b = job.run_with_bounds().map_err(|e| e.to_string())?;
                        same_box(b, &p, &|| format!("skin {backend:?} n={n} separate"))?;
                    }
                    Ok((p, nn, t))
                };
                let (wp, wn, wt) = run(Backend::Reference, false)?;
                for interleaved in [false, true] {
                    let (gp, gn, gt) = run(isa.into(), interleaved)?;
                    let ctx = format!("skin_pnt {isa} policy={policy:?} compact={compact} shape={shape} n={n} interleaved={interleaved}");
                    for i in 0..n {
                        for (what, got, want, v) in [
                            (
                                "position",
                                gp[i].to_array(),
                                wp[i].to_array(),
                                m.pos[i].extend(1.0).to_array(),
                            ),
                            (
                                "normal",
                                gn[i].to_array(),
                                wn[i].to_array(),
                                m.nrm[i].extend(0.0).to_array(),
                            ),
                            (
                                "tangent",
                                gt[i].truncate().to_array(),
                                wt[i].truncate().to_array(),
                                m.tan[i].truncate().extend(0.0).to_array(),
                            ),
                        ] {
                            for r in 0..3 {
                                let (s, k) = bound(&m, i, &pal, r, v);
                                let tol = (k as f32 + 4.0) * f32::EPSILON * s;
                                within(got[r], want[r], tol, &|| {
                                    format!("{ctx}: vertex {i} {what}[{r}]")
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
    Ok(format!("{cases} cases"))
}

/// Each subset of outputs (positions alone, with normals, with tangents) from a mesh that has normals and
/// tangents: each kernel specialises its loop on the attributes it writes, so every subset must give
/// exactly the floats of the full run on the same ISA (which `check_skin` compares with the reference),
/// without renormalization and with the default (precise) one.
pub fn check_skin_outputs(isa: Isa) -> Result<String, String> {
    let mut rng = Rng::new(57);
    let pal = palette(&mut rng);
    let mut cases = 0;
    for (k, mode) in (1..=9usize).flat_map(|k| [(k, Renormalize::None), (k, Renormalize::Precise)])
    {
        for n in [0usize, 1, 3, 4, 5, 15, 16, 17, 33, 1000] {
            let infl = |i: usize| if k == 9 { 1 + (i * 7 + i / 3) % 8 } else { k };
            let m = mesh(n, &mut rng, &infl, true);
            let prepared = SkinnedMesh::prepare(&input(&m), &PrepareOptions::new(JOINTS))
                .map_err(|e| e.to_string())?;
            let run = |normals: bool, tangents: bool| -> Result<Skinned, String> {
                let (mut p, mut nn, mut t) =
                    (vec![Vec3::NAN; n], vec![Vec3::NAN; n], vec![Vec4::NAN; n]);
                let out = SkinOutput::Separate {
                    positions: &mut p,
                    normals: normals.then_some(&mut nn[..]),
                    tangents: tangents.then_some(&mut t[..]),
                };
                let mut job = SkinningJob::new(&prepared, &pal, out);
                (job.backend, job.renormalize) = (isa.into(), mode);
                let b = job.run_with_bounds().map_err(|e| e.to_string())?;
                same_box(b, &p, &|| {
                    format!("skin outputs {isa} k={k} n={n} normals={normals} tangents={tangents}")
                })?;
                Ok((p, nn, t))
            };
            let (fp, fn_, ft) = run(true, true)?;
            for (normals, tangents) in [(false, false), (true, false), (false, true)] {
                let (p, nn, t) = run(normals, tangents)?;
                let ctx = format!(
                    "skin outputs {isa} k={k} {mode:?} n={n} normals={normals} tangents={tangents}"
                );
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                // One attribute of vertex i: asked for, the full run's exact bits; otherwise still the
                // NaN it was filled with (some component NaN, as glam's is_nan tests).
                let same = |i: usize, what: &str, asked: bool, got: &[f32], full: &[f32]| {
                    if asked && bits(got) != bits(full) {
                        Err(format!(
                            "{ctx}: vertex {i}: {what} {got:?} but the full run gave {full:?}"
                        ))
                    } else if !asked && !got.iter().any(|x| x.is_nan()) {
                        Err(format!(
                            "{ctx}: vertex {i}: {what} written although not asked for"
                        ))
                    } else {
                        Ok(())
                    }
                };
                for i in 0..n {
                    same(i, "position", true, &p[i].to_array(), &fp[i].to_array())?;
                    same(i, "normal", normals, &nn[i].to_array(), &fn_[i].to_array())?;
                    same(i, "tangent", tangents, &t[i].to_array(), &ft[i].to_array())?;
                }
                cases += 1;
            }
        }
    }
    Ok(format!("{cases} cases"))
}

/// Renormalized normals and tangents, both modes, against the reference's precise result. Dividing by
/// the length |v| turns the blend's error bound (see the file comment) into 2 (k + 4) eps S / |v|, plus
/// the mode's own error: 4 eps for a square root and a division, 1e-6 for the fast reciprocal square
/// root (the bound Renormalize::Fast documents).
pub fn check_skin_renormalize(isa: Isa) -> Result<String, String> {
    let mut rng = Rng::new(33);
    let pal = palette(&mut rng);
    let mut cases = 0;
    for n in [1usize, 5, 17, 1000] {
        let m = mesh(n, &mut rng, &|i| 1 + (i * 5) % 8, true);
        let input = input(&m);
        let prepared = SkinnedMesh::prepare(&input, &PrepareOptions::new(JOINTS))
            .map_err(|e| e.to_string())?;
        let run = |backend: Backend, mode: Renormalize| -> Result<Skinned, String> {
            let (mut p, mut nn, mut t) =
                (vec![Vec3::NAN; n], vec![Vec3::NAN; n], vec![Vec4::NAN; n]);
            let mut job = SkinningJob::new(
                &prepared,
                &pal,
                SkinOutput::Separate {
                    positions: &mut p,
                    normals: Some(&mut nn),
                    tangents: Some(&mut t),
                },
            );
            (job.backend, job.renormalize) = (backend, mode);
            let b = job.run_with_bounds().map_err(|e| e.to_string())?;
            same_box(b, &p, &|| format!("renormalize {mode:?} {backend:?} n={n}"))?;
            Ok((p, nn, t))
        };
        let (_, raw_n, raw_t) = run(Backend::Reference, Renormalize::None)?;
        for (mode, mode_tol) in [
            (Renormalize::Precise, 4.0 * f32::EPSILON),
            (Renormalize::Fast, 1e-6),
        ] {
            let (_, wn, wt) = run(Backend::Reference, mode)?;
            let (_, gn, gt) = run(isa.into(), mode)?;
            for i in 0..n {
                for (what, got, want, raw, v) in [
                    (
                        "normal",
                        gn[i],
                        wn[i],
                        raw_n[i],
                        m.nrm[i].extend(0.0).to_array(),
                    ),
                    (
                        "tangent",
                        gt[i].truncate(),
                        wt[i].truncate(),
                        raw_t[i].truncate(),
                        m.tan[i].truncate().extend(0.0).to_array(),
                    ),
                ] {
                    for r in 0..3 {
                        let (s, k) = bound(&m, i, &pal, r, v);
                        let tol =
                            2.0 * (k as f32 + 4.0) * f32::EPSILON * s / raw.length() + mode_tol;
                        within(got[r], want[r], tol, &|| {
                            format!("renormalize {mode:?} {isa} n={n}: vertex {i} {what}[{r}]")
                        })?;
                    }
                }
                if gt[i].w != m.tan[i].w {
                    return Err(format!(
                        "renormalize {mode:?} {isa}: vertex {i}: tangent w changed"
                    ));
                }
            }
            cases += 1;
        }
    }
    Ok(format!("{cases} cases"))
}

/// rayon over vertex chunks: bit-identical to one thread, on a mesh of several chunks and every
/// influence count, into an interleaved buffer.
pub fn check_skin_threads(isa: Isa) -> Result<String, String> {
    use ispc_skinning::Threads;
    let mut rng = Rng::new(44);
    let pal = palette(&mut rng);
    let n = 100_000;
    let m = mesh(n, &mut rng, &|i| 1 + (i * 7 + i / 5) % 8, true);
    let input = input(&m);
    let prepared =
        SkinnedMesh::prepare(&input, &PrepareOptions::new(JOINTS)).map_err(|e| e.to_string())?;
    let run = |threads: Threads| -> Result<Vec<u32>, String> {
        let mut buf = vec![0u32; n * 10];
        let out = SkinOutput::Interleaved {
            bytes: bytemuck::cast_slice_mut(&mut buf),
            stride: 40,
            positions: 0,
            normals: Some(12),
            tangents: Some(24),
        };
        let mut job = SkinningJob::new(&prepared, &pal, out);
        (job.backend, job.threads, job.renormalize) = (isa.into(), threads, Renormalize::Fast);
        let b = job.run_with_bounds().map_err(|e| e.to_string())?;
        let floats: &[f32] = bytemuck::cast_slice(&buf);
        let p: Vec<Vec3> = floats
            .chunks(10)
            .map(|f| Vec3::new(f[0], f[1], f[2]))
            .collect();
        same_box(b, &p, &|| format!("skin threads {isa} {threads:?}"))?;
        Ok(buf)
    };
    let (one, all) = (run(Threads::One)?, run(Threads::All)?);
    match (0..one.len()).find(|&i| one[i] != all[i]) {
        Some(i) => Err(format!(
            "skin threads {isa}: float {i} (vertex {}) differs between one thread and all",
            i / 10
        )),
        None => Ok("bit-identical".into()),
    }
}
