//! The renormalization rows of the report: `skin_pn` and `skin_pnt` (4 influences, the skinning rows'
//! meshes and palette) with each [`Renormalize`] mode, on 1,024 and 1,048,576 vertices, into separate
//! streams and, for `skin_pnt`, into an interleaved vertex buffer as a renderer uploads it. Every ISA
//! and the reference run in one round-robin per output and size, so that a mode's cost is read as a
//! ratio to `Renormalize::None` from one block of measurements. The summary prints those ratios and
//! what each mode leaves of unit length: how far the normals and tangents of linear blend skinning are
//! from it without renormalization, and how far `Fast` lands from `Precise`.

use crate::report::row::{backends, Row};
use crate::report::skinning::{budget_for, data, palette, prepare, Data, JOINTS};
use crate::report::timing::{median_ns_per_call, Budget};
use glam::{Mat4, Quat, Vec3, Vec4};
use indicatif::ProgressBar;
use ispc_skinning::{
    Backend, Isa, PaletteMatrix, Renormalize, SkinOutput, SkinnedMesh, SkinningJob,
};
use std::cell::RefCell;

/// The modes, in the order of each output's row names.
const MODES: [Renormalize; 3] = [Renormalize::None, Renormalize::Fast, Renormalize::Precise];

/// The outputs measured: (what is written, its name in the summary, its rows in the order of
/// [`MODES`]).
const OUTPUTS: [(Written, &str, [&str; 3]); 3] = [
    (
        Written::Pn,
        "skin_pn",
        [
            "skin_pn_renorm_none",
            "skin_pn_renorm_fast",
            "skin_pn_renorm_precise",
        ],
    ),
    (
        Written::Pnt,
        "skin_pnt",
        [
            "skin_pnt_renorm_none",
            "skin_pnt_renorm_fast",
            "skin_pnt_renorm_precise",
        ],
    ),
    (
        Written::PntInterleaved,
        "skin_pnt interleaved",
        [
            "skin_pnt_interleaved_renorm_none",
            "skin_pnt_interleaved_renorm_fast",
            "skin_pnt_interleaved_renorm_precise",
        ],
    ),
];

/// What a row's job writes.
#[derive(Clone, Copy, PartialEq)]
enum Written {
    /// Positions and normals, separate streams.
    Pn,
    /// Positions, normals and tangents, separate streams.
    Pnt,
    /// Positions, normals and tangents in one vertex buffer of [`STRIDE`] bytes per vertex.
    PntInterleaved,
}

/// Bytes per vertex of the interleaved buffer: position (0), normal (12) and tangent (24), no gaps.
const STRIDE: usize = 40;

/// The sizes measured: in cache, and out of cache (where the renormalization's second pass over the
/// normals and tangents reads them back from memory).
const SIZES: [usize; 2] = [1024, 1 << 20];

/// Skinned positions, normals and tangents of `n` vertices.
type Out = (Vec<Vec3>, Vec<Vec3>, Vec<Vec4>);

fn out(n: usize) -> Out {
    (
        vec![Vec3::ZERO; n],
        vec![Vec3::ZERO; n],
        vec![Vec4::ZERO; n],
    )
}

/// Skins `mesh` into `o` with `backend` and `mode`: positions and normals, and tangents when `tangents`.
fn skin(
    mesh: &SkinnedMesh,
    pal: &[PaletteMatrix],
    backend: Backend,
    mode: Renormalize,
    tangents: bool,
    o: &mut Out,
) {
    let output = SkinOutput::Separate {
        positions: &mut o.0,
        normals: Some(&mut o.1),
        tangents: tangents.then_some(&mut o.2[..]),
    };
    run(mesh, pal, backend, mode, output);
}

fn run(
    mesh: &SkinnedMesh,
    pal: &[PaletteMatrix],
    backend: Backend,
    mode: Renormalize,
    output: SkinOutput<'_>,
) {
    SkinningJob::new(mesh, pal, output)
        .backend(backend)
        .renormalize(mode)
        .run()
        .expect("valid job");
}

/// The outputs of one size: separate streams, and an interleaved buffer of `n` vertices starting at a
/// 4-byte aligned offset of `bytes`.
struct Buffers {
    separate: Out,
    bytes: Vec<u8>,
    start: usize,
}

impl Buffers {
    fn new(n: usize) -> Buffers {
        let bytes = vec![0u8; n * STRIDE + 3];
        let start = bytes.as_ptr().align_offset(4);
        Buffers {
            separate: out(n),
            bytes,
            start,
        }
    }

    fn skin(
        &mut self,
        mesh: &SkinnedMesh,
        pal: &[PaletteMatrix],
        backend: Backend,
        mode: Renormalize,
        written: Written,
    ) {
        if written == Written::PntInterleaved {
            let n = mesh.vertex_count();
            let output = SkinOutput::Interleaved {
                bytes: &mut self.bytes[self.start..self.start + n * STRIDE],
                stride: STRIDE,
                positions: 0,
                normals: Some(12),
                tangents: Some(24),
            };
            run(mesh, pal, backend, mode, output);
        } else {
            let tangents = written == Written::Pnt;
            skin(mesh, pal, backend, mode, tangents, &mut self.separate);
        }
    }
}

/// Appends the rows `skin_pn_renorm_*`, `skin_pnt_renorm_*` and `skin_pnt_interleaved_renorm_*` (`none`,
/// `fast`, `precise`) on 1,024 and 1M vertices: the reference and every ISA, each row against the
/// reference in its own mode.
pub fn rows(budget: Budget, isas: &[Isa], rows: &mut Vec<Row>, progress: &ProgressBar) {
    let (_, pal) = palette();
    let backends = backends(isas);
    for n in SIZES {
        let d = data(n, 4);
        let mesh = prepare(&d, true, true);
        let budget = budget_for(budget, n);
        // One set of outputs for every candidate: they run one after another, and at 1M one set
        // (40 MB each way) is already far beyond the caches.
        let buffers = RefCell::new(Buffers::new(n));
        for (written, name, kernels) in OUTPUTS {
            progress.set_message(format!("renormalization, {name}, {n} vertices"));
            // Per backend, its three modes next to each other in the round-robin.
            let runs: Vec<(usize, usize)> = (0..backends.len())
                .flat_map(|b| (0..MODES.len()).map(move |m| (b, m)))
                .collect();
            let (mesh, pal, buffers) = (&mesh, &pal, &buffers);
            let mut c: Vec<Box<dyn FnMut() + '_>> = runs
                .iter()
                .map(|&(b, m)| {
                    let (backend, mode) = (backends[b].1, MODES[m]);
                    Box::new(move || buffers.borrow_mut().skin(mesh, pal, backend, mode, written))
                        as Box<dyn FnMut() + '_>
                })
                .collect();
            let times = median_ns_per_call(budget, &mut c);
            let time = |b: usize, m: usize| times[b * MODES.len() + m] / n as f64;
            for (m, kernel) in kernels.into_iter().enumerate() {
                for (b, (isa, _)) in backends.iter().enumerate() {
                    rows.push(Row {
                        kernel,
                        isa: isa.clone(),
                        size: n,
                        influences: Some(4),
                        threads: 1,
                        ns_per_item: time(b, m),
                        reference_ns_per_item: time(0, m),
                    });
                }
            }
        }
    }
}

/// Prints each mode's cost as a ratio to `None` (per backend, kernel and size, from this run's rows),
/// then the accuracy of each mode on the rows' mesh and on a bent one.
pub fn print_summary(rows: &[Row]) {
    let find = |kernel: &str, isa: &str, n: usize| {
        rows.iter()
            .find(|r| r.kernel == kernel && r.isa == isa && r.size == n && r.threads == 1)
            .map(|r| r.ns_per_item)
    };
    let mut isas: Vec<Isa> = Vec::new();
    for (_, name, kernels) in OUTPUTS {
        for n in SIZES {
            for r in rows
                .iter()
                .filter(|r| r.kernel == kernels[0] && r.size == n)
            {
                let ns = kernels.map(|k| find(k, &r.isa, n).unwrap_or(f64::NAN));
                println!(
                    "{name}, 4 influences, {n} vertices, {}: renormalize None {:.2}, Fast {:.2} ({:.2}x None), Precise {:.2} ({:.2}x None, {:.2}x Fast) ns/vertex",
                    r.isa,
                    ns[0],
                    ns[1],
                    ns[1] / ns[0],
                    ns[2],
                    ns[2] / ns[0],
                    ns[2] / ns[1]
                );
                if let Some(isa) = Isa::from_name(&r.isa).filter(|i| !isas.contains(i)) {
                    isas.push(isa);
                }
            }
        }
    }
    if rows.iter().any(|r| r.kernel == OUTPUTS[0].2[0]) {
        let bent: Vec<PaletteMatrix> = (0..JOINTS)
            .map(|i| {
                PaletteMatrix::from_mat4(Mat4::from_quat(Quat::from_rotation_x(
                    i as f32 * std::f32::consts::FRAC_PI_6,
                )))
            })
            .collect();
        for n in SIZES {
            print_accuracy(&isas, n, "the rows' palette", &palette().1);
        }
        print_accuracy(
            &isas,
            1024,
            "a bent palette, 30 degrees between neighbouring joints",
            &bent,
        );
    }
    println!();
}

/// Largest and mean |length / expected - 1|, and the share of vectors off by more than 1%, over the
/// normals and the tangents' xyz; a vector's expected length is its input's in `inputs` (linear blend
/// skinning's shortening; the report's tangents are not of unit length), or 1.
fn length_error(o: &Out, inputs: Option<&Data>) -> (f64, f64, f64) {
    let expected = |i: usize, tangent: bool| {
        inputs.map_or(1.0, |d| {
            let v = if tangent {
                d.tan[i].truncate()
            } else {
                d.nrm[i]
            };
            v.as_dvec3().length()
        })
    };
    let (normals, tangents) = (&o.1, &o.2);
    let normals = normals
        .iter()
        .enumerate()
        .map(|(i, v)| (*v, expected(i, false)));
    let tangents = tangents
        .iter()
        .enumerate()
        .map(|(i, t)| (t.truncate(), expected(i, true)));
    let (mut max, mut sum, mut over, mut count) = (0.0f64, 0.0, 0usize, 0usize);
    for (v, e) in normals.chain(tangents).filter(|&(_, e)| e > 0.0) {
        let error = (v.as_dvec3().length() / e - 1.0).abs();
        (max, sum) = (max.max(error), sum + error);
        (over, count) = (over + usize::from(error > 0.01), count + 1);
    }
    let count = count.max(1) as f64;
    (max, sum / count, over as f64 / count)
}

/// Largest absolute difference of a normal or tangent component between two outputs.
fn largest_difference(a: &Out, b: &Out) -> f64 {
    let normals = a.1.iter().zip(&b.1).map(|(x, y)| *x - *y);
    let tangents = a.2.iter().zip(&b.2).map(|(x, y)| (*x - *y).truncate());
    normals
        .chain(tangents)
        .map(|d| d.abs().max_element())
        .fold(0.0f32, f32::max) as f64
}

/// Prints what each mode leaves of unit length on `n` vertices of the rows' mesh skinned with `pal`:
/// the reference without renormalization, and per ISA Fast against Precise and Precise against the
/// reference.
fn print_accuracy(isas: &[Isa], n: usize, what: &str, pal: &[PaletteMatrix]) {
    let d = data(n, 4);
    let mesh = prepare(&d, true, true);
    let run = |backend: Backend, mode: Renormalize| {
        let mut o = out(n);
        skin(&mesh, pal, backend, mode, true, &mut o);
        o
    };
    let (max, mean, short) = length_error(&run(Backend::Reference, Renormalize::None), Some(&d));
    println!(
        "renormalization accuracy, {n} vertices, {what}: with None, normals and tangents are up to {:.2}% shorter than their inputs (mean {:.3}%, {:.1}% of them more than 1% short)",
        100.0 * max,
        100.0 * mean,
        100.0 * short
    );
    let precise = run(Backend::Reference, Renormalize::Precise);
    for &isa in isas {
        let (f, p) = (
            run(isa.into(), Renormalize::Fast),
            run(isa.into(), Renormalize::Precise),
        );
        println!(
            "  {isa}: Fast vs Precise max |difference| {:.2e}; |length - 1| up to {:.2e} with Fast, {:.2e} with Precise; Precise vs the reference {:.2e}",
            largest_difference(&f, &p),
            length_error(&f, None).0,
            length_error(&p, None).0,
            largest_difference(&p, &precise),
        );
    }
}
