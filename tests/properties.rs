//! Property tests: many random meshes, palettes, input and output layouts, weight policies and
//! backends, each checked against laws that hold for any input. Every case is built from its own seed,
//! and a failure prints it, so `case(seed)` reproduces it alone.
//!
//! Laws:
//! 1. every ISA that runs here gives the reference's result within the harness tolerance
//!    ((k + 4) eps S per component, see tests/isa_parity/skin.rs), into any output layout, and writes
//!    nothing outside its attributes;
//! 2. with every palette entry equal to one rigid transform M and normalized weights, skinning is M
//!    applied to the bind pose (blended, and with feature `experiments` base-vector and bone-major
//!    alike);
//! 3. threads never change a bit.

mod common;

use common::{random_transform, Rng};
use glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    Attribute, Backend, Format, Isa, MeshInput, PaletteMatrix, PrepareOptions, Renormalize,
    SkinOutput, SkinnedMesh, SkinningJob, Threads, WeightPolicy,
};

const CASES: u64 = 300;

/// A random mesh in one interleaved byte buffer (random stride and start offset, so attributes are
/// only 4-byte aligned), with u8 or u16 joints and f32, unorm8 or unorm16 weights, 0 to 8 influences.
struct Case {
    n: usize,
    joints: usize,
    bytes: Vec<u8>,
    stride: usize,
    start: usize,
    joint_format: Format,
    weight_format: Format,
    policy: WeightPolicy,
    positions: Vec<Vec3>,
}

const POS: usize = 0;
const NRM: usize = 12;
const TAN: usize = 24;
const J0: usize = 40;

impl Case {
    fn new(rng: &mut Rng) -> Case {
        let n = match rng.below(4) {
            0 => rng.below(5),
            1 => rng.below(70),
            _ => rng.below(400),
        };
        let joints = 1 + rng.below(200);
        let joint_format = if joints <= 256 && rng.below(2) == 0 {
            Format::U8x4
        } else {
            Format::U16x4
        };
        let weight_format = [Format::F32x4, Format::Unorm8x4, Format::Unorm16x4][rng.below(3)];
        let (jsize, wsize) = (
            if joint_format == Format::U8x4 { 4 } else { 8 },
            match weight_format {
                Format::F32x4 => 16,
                Format::Unorm8x4 => 4,
                _ => 8,
            },
        );
        // Layout: position, normal, tangent, JOINTS_0, JOINTS_1, WEIGHTS_0, WEIGHTS_1, padding.
        let stride = J0 + 2 * jsize + 2 * wsize + 4 * rng.below(3);
        let start = 4 * rng.below(4);
        let policy = if rng.below(3) == 0 {
            WeightPolicy::Keep
        } else {
            WeightPolicy::Normalize
        };
        let mut bytes = vec![0u8; start + n * stride];
        let mut positions = Vec::with_capacity(n);
        for v in 0..n {
            let o = start + v * stride;
            let mut put = |at: usize, x: f32| bytes[at..at + 4].copy_from_slice(&x.to_ne_bytes());
            let p = Vec3::new(
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
            );
            positions.push(p);
            for c in 0..3 {
                put(o + POS + 4 * c, p[c]);
                put(o + NRM + 4 * c, rng.range(-1.0, 1.0));
                put(o + TAN + 4 * c, rng.range(-1.0, 1.0));
            }
            put(o + TAN + 12, if rng.below(2) == 0 { 1.0 } else { -1.0 });
            // 0 to 8 influences; under Keep a vertex may have none, under Normalize at least one.
            let min = usize::from(policy == WeightPolicy::Normalize);
            let k = min + rng.below(9 - min);
            for s in 0..8 {
                let j = rng.below(joints);
                let w = if s < k { rng.range(0.02, 1.0) } else { 0.0 };
                let ja = o + J0 + (s / 4) * jsize + (s % 4) * (jsize / 4);
                if joint_format == Format::U8x4 {
                    bytes[ja] = j as u8;
                } else {
                    bytes[ja..ja + 2].copy_from_slice(&(j as u16).to_ne_bytes());
                }
                let wa = o + J0 + 2 * jsize + (s / 4) * wsize + (s % 4) * (wsize / 4);
                match weight_format {
                    Format::F32x4 => bytes[wa..wa + 4].copy_from_slice(&w.to_ne_bytes()),
                    // A quantized weight of 0 drops the influence, which the laws allow.
                    Format::Unorm8x4 => bytes[wa] = (w * 255.0).round() as u8,
                    _ => bytes[wa..wa + 2]
                        .copy_from_slice(&((w * 65535.0).round() as u16).to_ne_bytes()),
                }
            }
        }
        Case {
            n,
            joints,
            bytes,
            stride,
            start,
            joint_format,
            weight_format,
            policy,
            positions,
        }
    }

    fn prepare(&self) -> SkinnedMesh {
        let (jsize, wsize) = (
            if self.joint_format == Format::U8x4 {
                4
            } else {
                8
            },
            match self.weight_format {
                Format::F32x4 => 16,
                Format::Unorm8x4 => 4,
                _ => 8,
            },
        );
        let a = |offset: usize, format: Format| {
            Attribute::new(
                &self.bytes,
                self.start + offset,
                self.stride,
                self.n,
                format,
            )
        };
        let input = MeshInput {
            positions: a(POS, Format::F32x3),
            normals: Some(a(NRM, Format::F32x3)),
            tangents: Some(a(TAN, Format::F32x4)),
            joints: [
                Some(a(J0, self.joint_format)),
                Some(a(J0 + jsize, self.joint_format)),
                None,
                None,
            ],
            weights: [
                Some(a(J0 + 2 * jsize, self.weight_format)),
                Some(a(J0 + 2 * jsize + wsize, self.weight_format)),
                None,
                None,
            ],
            influences: None,
        };
        let options = PrepareOptions {
            weights: self.policy,
            ..PrepareOptions::new(self.joints)
        };
        SkinnedMesh::prepare(&input, &options).expect("a valid random mesh")
    }
}

fn random_palette(joints: usize, rng: &mut Rng) -> Vec<PaletteMatrix> {
    (0..joints)
        .map(|_| PaletteMatrix::from_mat4(random_transform(rng, 0.5..2.0, -5.0..5.0)))
        .collect()
}

/// Skins into an interleaved buffer of `stride` floats per vertex with positions, normals and tangents
/// at float offsets 1, 5 and 9 (stride 14: guards at 0, 4, 8 and 13) and returns it.
fn skin_interleaved(
    mesh: &SkinnedMesh,
    palette: &[PaletteMatrix],
    backend: Backend,
    renormalize: Renormalize,
    threads: Threads,
) -> Vec<f32> {
    let mut buf = vec![GUARD; mesh.vertex_count() * 14];
    let out = SkinOutput::Interleaved {
        bytes: bytemuck::cast_slice_mut(&mut buf),
        stride: 56,
        positions: 4,
        normals: Some(20),
        tangents: Some(36),
    };
    let mut job = SkinningJob::new(mesh, palette, out);
    (job.backend, job.renormalize, job.threads) = (backend, renormalize, threads);
    job.run().expect("a valid job");
    buf
}

const GUARD: f32 = -3.5e33;

/// S of the tolerance for a unit weight sum: a palette row has three entries of at most 2 (scale times
/// rotation) against components of at most 3, plus a translation of at most 5: 2 * 3 * 3 + 5.
const S_BOUND: f32 = 23.0;

/// Law 1 and law 3 for the blended-matrix job, and (feature `experiments`) law 1 for the two
/// positions-only jobs.
#[test]
fn every_isa_matches_the_reference_on_random_meshes() {
    let isas = Isa::available();
    for isa in Isa::ALL.into_iter().filter(|i| !isas.contains(i)) {
        println!(
            "{isa}: not run on this machine ({})",
            isa.runnable().unwrap_err()
        );
    }
    for seed in 0..CASES {
        let mut rng = Rng::new(seed);
        let case = Case::new(&mut rng);
        let mesh = case.prepare();
        let palette = random_palette(case.joints, &mut rng);
        // Renormalizing changes the tolerance; law 1 is checked without it here and with it by the
        // parity harness.
        let want = skin_interleaved(
            &mesh,
            &palette,
            Backend::Reference,
            Renormalize::None,
            Threads::One,
        );
        #[cfg(feature = "experiments")]
        let want_base = positions_only(&mesh, &palette, Backend::Reference, false);
        #[cfg(feature = "experiments")]
        let want_lists = positions_only(&mesh, &palette, Backend::Reference, true);
        for &isa in &isas {
            let got =
                skin_interleaved(&mesh, &palette, isa.into(), Renormalize::None, Threads::One);
            let threaded =
                skin_interleaved(&mesh, &palette, isa.into(), Renormalize::None, Threads::All);
            assert!(
                got.iter()
                    .zip(&threaded)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "seed {seed}, {isa}: threads changed the result"
            );
            for v in 0..case.n {
                let (g, w) = (&got[14 * v..14 * v + 14], &want[14 * v..14 * v + 14]);
                for guard in [0, 4, 8, 13] {
                    assert_eq!(
                        g[guard], GUARD,
                        "seed {seed}, {isa}: vertex {v} wrote float {guard}"
                    );
                }
                let k = mesh_influences(&mesh, v);
                for i in [1, 2, 3, 5, 6, 7, 9, 10, 11] {
                    let tol = (k as f32 + 4.0) * f32::EPSILON * S_BOUND * weight_scale(&case);
                    assert!(
                        (g[i] - w[i]).abs() <= tol,
                        "seed {seed}, {isa}: vertex {v} float {i}: {} vs reference {}, |diff| {} > {tol}",
                        g[i],
                        w[i],
                        (g[i] - w[i]).abs()
                    );
                }
                assert_eq!(
                    g[12], w[12],
                    "seed {seed}, {isa}: vertex {v}: tangent w changed"
                );
            }
            #[cfg(feature = "experiments")]
            for (lists, want) in [(false, &want_base), (true, &want_lists)] {
                let got = positions_only(&mesh, &palette, isa.into(), lists);
                for v in 0..case.n {
                    let k = mesh_influences(&mesh, v) as f32;
                    let tol = 2.0 * (4.0 * k + 4.0) * f32::EPSILON * S_BOUND * weight_scale(&case);
                    let d = (got[v] - want[v]).abs().max_element();
                    assert!(
                        d <= tol,
                        "seed {seed}, {isa}, {}: vertex {v}: {} vs reference {}, |diff| {d} > {tol}",
                        if lists { "bone-major" } else { "base vectors" },
                        got[v],
                        want[v]
                    );
                }
            }
        }
    }
}

/// Kept weights may sum to up to 8; normalized ones to 1.
fn weight_scale(case: &Case) -> f32 {
    if case.policy == WeightPolicy::Keep {
        8.0
    } else {
        1.0
    }
}

/// The influence count of original vertex v, from the mesh's grouping.
fn mesh_influences(mesh: &SkinnedMesh, v: usize) -> usize {
    let hist = mesh.influence_histogram();
    let perm = mesh.permutation();
    let at = perm.iter().position(|&p| p as usize == v).unwrap();
    let mut acc = 0;
    for (k, &count) in hist.iter().enumerate() {
        acc += count;
        if at < acc {
            return k;
        }
    }
    unreachable!()
}

/// Positions skinned by the base-vector job, or by the bone-major job when `lists`.
#[cfg(feature = "experiments")]
fn positions_only(
    mesh: &SkinnedMesh,
    palette: &[PaletteMatrix],
    backend: Backend,
    lists: bool,
) -> Vec<Vec3> {
    let mut out = vec![Vec3::NAN; mesh.vertex_count()];
    use ispc_skinning::experiments::{BaseVectorJob, BaseVectorMesh, BoneMajorJob, BoneMajorMesh};
    if lists {
        let m = BoneMajorMesh::from_mesh(mesh);
        let mut job = BoneMajorJob::new(&m, palette, &mut out);
        job.backend = backend;
        job.run().expect("a valid job");
    } else {
        let m = BaseVectorMesh::from_mesh(mesh);
        let mut job = BaseVectorJob::new(&m, palette, &mut out);
        job.backend = backend;
        job.run().expect("a valid job");
    }
    out
}

/// Law 2: one rigid transform everywhere moves the mesh rigidly, whatever the weights (normalized).
#[test]
fn one_transform_everywhere_is_a_rigid_motion() {
    let backends = common::backends();
    for seed in 0..CASES {
        let mut rng = Rng::new(1000 + seed);
        let case = Case::new(&mut rng);
        if case.policy != WeightPolicy::Normalize {
            continue;
        }
        let mesh = case.prepare();
        let m = Mat4::from_rotation_translation(
            Quat::from_euler(
                glam::EulerRot::XYZ,
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
                0.5,
            ),
            Vec3::new(rng.range(-5.0, 5.0), 1.0, 2.0),
        );
        let palette = vec![PaletteMatrix::from_mat4(m); case.joints];
        for &backend in &backends {
            let got = skin_interleaved(&mesh, &palette, backend, Renormalize::None, Threads::One);
            let blended: Vec<Vec3> = (0..case.n)
                .map(|v| Vec3::new(got[14 * v + 1], got[14 * v + 2], got[14 * v + 3]))
                .collect();
            // Without `experiments` only the blended job runs, so the list stays one long.
            #[cfg_attr(not(feature = "experiments"), allow(unused_mut, clippy::useless_vec))]
            let mut results = vec![("blended", blended)];
            #[cfg(feature = "experiments")]
            results.extend([
                (
                    "base vectors",
                    positions_only(&mesh, &palette, backend, false),
                ),
                ("bone-major", positions_only(&mesh, &palette, backend, true)),
            ]);
            for v in 0..case.n {
                let want = m.transform_point3(case.positions[v]);
                for (what, p) in results.iter().map(|(what, p)| (what, p[v])) {
                    // The weights sum to 1 within 8 roundings; the transform adds a few more.
                    let tol = 64.0 * f32::EPSILON * (want.abs().max_element() + 8.0);
                    assert!(
                        (p - want).abs().max_element() <= tol,
                        "seed {seed}, {backend:?}, {what}: vertex {v}: {p} vs {want} (tolerance {tol})"
                    );
                }
            }
        }
    }
}
