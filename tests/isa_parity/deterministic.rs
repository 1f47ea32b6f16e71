//! Precision::Deterministic: every ISA must write the serial reference's bits, float for float (no
//! tolerance; a difference prints both values and their distance in ulps). Local to model (matrices and
//! TRS, whole and partial), palettes (with and without a joint remap), and linear and dual-quaternion
//! skinning (dual quaternions with a scaled and a rigid palette) on the random meshes and influence shapes of skin.rs (every count from 1 to 16 and mixes,
//! normalized and kept weights, f32 and compact influences), with every renormalization mode (the
//! deterministic kernels renormalize precisely for all but None, as the reference does), separate and
//! interleaved outputs, on one thread and on the pool, at sizes around each gang width and large.

use crate::common::{shapes, Rng};
use crate::harness::sizes;
use crate::hierarchy::{crowd_pose, root_matrix, Input};
use crate::skin::{input, mesh, palette, rigid_palette, shapes as influence_shapes, JOINTS};
use glam::{Mat4, Vec3, Vec4};
use ispc_skinning::{
    dual_quat_palette, Backend, DualQuatEntry, Isa, LocalToModelJob, Locals, PaletteJob,
    PaletteMatrix, Precision, PrepareOptions, Renormalize, Skeleton, SkinOutput, SkinnedMesh,
    SkinningJob, Threads, WeightPolicy,
};

/// The first float where `got` and `want` differ in bits, as a message.
fn same_bits(ctx: &dyn Fn() -> String, got: &[f32], want: &[f32]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{}: {} floats, the reference wrote {}",
            ctx(),
            got.len(),
            want.len()
        ));
    }
    match (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{}: float {i} is {:e} ({:#010x}), the reference's is {:e} ({:#010x}): {} ulps apart",
            ctx(),
            got[i],
            got[i].to_bits(),
            want[i],
            want[i].to_bits(),
            (got[i].to_bits() as i64 - want[i].to_bits() as i64).abs()
        )),
    }
}

fn floats(m: &[Mat4]) -> Vec<f32> {
    m.iter().flat_map(|m| m.to_cols_array()).collect()
}

/// Local to model, whole and from a joint, on every skeleton shape, matrix and TRS input.
pub fn check_ltm(isa: Isa) -> Result<String, String> {
    let root = root_matrix();
    let mut cases = 0;
    for (seed, (name, parents)) in shapes().into_iter().enumerate() {
        let skeleton = Skeleton::from_parents(&parents).map_err(|e| e.to_string())?;
        let n = skeleton.len();
        let input = Input::new(n, name.starts_with("chain"), seed as u64 + 1);
        for (kind, locals) in [
            ("matrices", Locals::Matrices(&input.matrices)),
            ("trs", Locals::Trs(input.trs())),
        ] {
            for from in [None, Some(n / 3)] {
                let run = |backend: Backend| -> Result<Vec<f32>, String> {
                    // A partial update reads its parent from the models: start from the same full pose.
                    let mut models = vec![Mat4::from_cols_array(&[0.5; 16]); n];
                    LocalToModelJob::new(&skeleton, locals, &mut models)
                        .root(root)
                        .run()
                        .map_err(|e| e.to_string())?;
                    let mut job = LocalToModelJob::new(&skeleton, locals, &mut models)
                        .root(root)
                        .backend(backend)
                        .precision(Precision::Deterministic);
                    job.from = from;
                    job.run().map_err(|e| e.to_string())?;
                    Ok(floats(&models))
                };
                let want = run(Backend::Reference)?;
                let got = run(isa.into())?;
                same_bits(
                    &|| format!("deterministic ltm {isa} shape={name} input={kind} from={from:?}"),
                    &got,
                    &want,
                )?;
                cases += 1;
            }
        }
    }
    Ok(format!("{cases} cases, bit-identical"))
}

/// Palettes of every size from 0 to 120 entries, with and without a joint remap.
pub fn check_palette(isa: Isa) -> Result<String, String> {
    let mut rng = Rng::new(19);
    let mut cases = 0;
    for count in [0usize, 1, 2, 3, 4, 5, 8, 15, 16, 17, 33, 120] {
        let input = Input::new(count + 5, false, count as u64 + 3);
        let models: Vec<Mat4> = input.matrices.iter().map(|m| root_matrix() * *m).collect();
        let inverse_binds: Vec<Mat4> = input
            .matrices
            .iter()
            .take(count)
            .map(|m| m.inverse())
            .collect();
        let remap: Vec<usize> = (0..count).map(|_| rng.below(count + 5)).collect();
        for joints in [None, Some(&remap[..])] {
            let run = |backend: Backend| -> Result<Vec<f32>, String> {
                let mut out = vec![
                    PaletteMatrix {
                        rows: [[f32::NAN; 4]; 4]
                    };
                    count
                ];
                let mut job = PaletteJob::new(&models, &inverse_binds, &mut out)
                    .backend(backend)
                    .precision(Precision::Deterministic);
                job.joints = joints;
                job.run().map_err(|e| e.to_string())?;
                Ok(out.iter().flat_map(|m| m.rows.concat()).collect())
            };
            let (want, got) = (run(Backend::Reference)?, run(isa.into())?);
            same_bits(
                &|| {
                    format!(
                        "deterministic palette {isa} count={count} remap={}",
                        joints.is_some()
                    )
                },
                &got,
                &want,
            )?;
            cases += 1;
        }
    }
    Ok(format!("{cases} cases, bit-identical"))
}

/// The palette as linear matrices or dual-quaternion entries.
enum Entries<'a> {
    Linear(&'a [PaletteMatrix]),
    Dq(&'a [DualQuatEntry]),
}

/// One deterministic skinning run: positions, normals and tangents, as one float run.
fn skin(
    prepared: &SkinnedMesh,
    entries: &Entries<'_>,
    backend: Backend,
    renormalize: Renormalize,
    interleaved: bool,
    threads: Threads,
) -> Result<Vec<f32>, String> {
    let n = prepared.vertex_count();
    let (mut p, mut nn, mut t) = (vec![Vec3::NAN; n], vec![Vec3::NAN; n], vec![Vec4::NAN; n]);
    let mut buf = vec![-7.25e30f32; n * 13];
    let out = if interleaved {
        SkinOutput::Interleaved {
            bytes: bytemuck::cast_slice_mut(&mut buf),
            stride: 52,
            positions: 4,
            normals: Some(16),
            tangents: Some(32),
        }
    } else {
        SkinOutput::positions_normals_tangents(&mut p, &mut nn, &mut t)
    };
    let mut job = match entries {
        Entries::Linear(pal) => SkinningJob::new(prepared, pal, out),
        Entries::Dq(dq) => SkinningJob::dual_quaternion(prepared, dq, out),
    }
    .backend(backend)
    .renormalize(renormalize)
    .threads(threads)
    .precision(Precision::Deterministic);
    job.run().map_err(|e| e.to_string())?;
    if interleaved {
        // The whole buffer, guards included: they must stay as they were on every backend.
        return Ok(buf);
    }
    Ok(p.iter()
        .flat_map(|v| v.to_array())
        .chain(nn.iter().flat_map(|v| v.to_array()))
        .chain(t.iter().flat_map(|v| v.to_array()))
        .collect())
}

/// `rigid`: a palette of rotations and translations only, whose dual-quaternion entries are all rigid,
/// so that the kernels skip the scale-and-shear phase where the weights sum to 1.
fn check_skin_with(isa: Isa, dq: bool, rigid: bool) -> Result<String, String> {
    let mut rng = Rng::new(if dq { 77 } else { 76 });
    let pal = if rigid {
        rigid_palette(&mut rng)
    } else {
        palette(&mut rng)
    };
    let mut dq_entries = vec![DualQuatEntry::IDENTITY; pal.len()];
    dual_quat_palette(&pal, &mut dq_entries).map_err(|e| e.to_string())?;
    if rigid && !dq_entries.iter().all(DualQuatEntry::is_rigid) {
        return Err("a rigid palette's dual-quaternion entry is not rigid".into());
    }
    let entries = if dq {
        Entries::Dq(&dq_entries)
    } else {
        Entries::Linear(&pal)
    };
    let kind = match (dq, rigid) {
        (false, _) => "lbs",
        (true, false) => "dq",
        (true, true) => "dq rigid",
    };
    let mut cases = 0;
    for (policy, normalized) in [(WeightPolicy::Normalize, true), (WeightPolicy::Keep, false)] {
        for compact in [false, true] {
            for (shape, influences) in &influence_shapes() {
                let sizes: Vec<usize> = match shape.as_str() {
                    "mixed16" | "k4" => sizes().to_vec(),
                    _ => sizes().iter().copied().filter(|&n| n <= 65).collect(),
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
                    // Renormalization modes and output forms in turn, so every one meets every shape.
                    let renormalize =
                        [Renormalize::None, Renormalize::Precise, Renormalize::Fast][cases % 3];
                    let interleaved = cases % 2 == 1;
                    let want = skin(
                        &prepared,
                        &entries,
                        Backend::Reference,
                        renormalize,
                        interleaved,
                        Threads::One,
                    )?;
                    let got = skin(
                        &prepared,
                        &entries,
                        isa.into(),
                        renormalize,
                        interleaved,
                        Threads::One,
                    )?;
                    same_bits(
                        &|| {
                            format!("deterministic skin {kind} {isa} policy={policy:?} compact={compact} shape={shape} n={n} {renormalize:?} interleaved={interleaved}")
                        },
                        &got,
                        &want,
                    )?;
                    cases += 1;
                }
            }
        }
    }
    // The pool: chunks on other threads write the same bits.
    let m = mesh(100_000, &mut rng, &|i| 1 + (i * 7 + i / 5) % 8, true);
    let prepared = SkinnedMesh::prepare(&input(&m), &PrepareOptions::new(JOINTS))
        .map_err(|e| e.to_string())?;
    let want = skin(
        &prepared,
        &entries,
        Backend::Reference,
        Renormalize::Precise,
        false,
        Threads::One,
    )?;
    let got = skin(
        &prepared,
        &entries,
        isa.into(),
        Renormalize::Precise,
        false,
        Threads::All,
    )?;
    same_bits(
        &|| format!("deterministic skin {kind} {isa} threads"),
        &got,
        &want,
    )?;
    Ok(format!("{} cases, bit-identical", cases + 1))
}

pub fn check_skin(isa: Isa) -> Result<String, String> {
    check_skin_with(isa, false, false)
}

pub fn check_skin_dq(isa: Isa) -> Result<String, String> {
    check_skin_with(isa, true, false)
}

pub fn check_skin_dq_rigid(isa: Isa) -> Result<String, String> {
    check_skin_with(isa, true, true)
}

/// Crowds: local to model (one thread and the pool), the palettes of a skin that names a joint twice,
/// and linear skinning of every instance, each at crowd sizes around the block of 16 instances, against
/// the reference (each instance through the single-character reference) and against one deterministic
/// `LocalToModelJob` per instance.
pub fn check_crowd(isa: Isa) -> Result<String, String> {
    use ispc_skinning::{
        CrowdLocalToModelJob, CrowdModels, CrowdPaletteJob, CrowdPalettes, CrowdSkinningJob,
    };
    let err = |e: ispc_skinning::Error| e.to_string();
    let mut rng = Rng::new(23);
    let mut cases = 0;
    let wanted = ["single", "random17", "humanoid20", "humanoid67"];
    for (name, parents) in shapes()
        .into_iter()
        .filter(|(n, _)| wanted.contains(&n.as_str()))
    {
        let skeleton = Skeleton::from_parents(&parents).map_err(err)?;
        let n = skeleton.len();
        // A skin of JOINTS entries (the meshes' joint count) over the skeleton's joints, most named
        // more than once.
        let joints: Vec<usize> = (0..JOINTS).map(|k| (7 * k + 1) % n).collect();
        let inverse_binds: Vec<Mat4> = joints
            .iter()
            .map(|&j| Input::new(n, false, 900 + j as u64).matrices[j].inverse())
            .collect();
        let m = mesh(40, &mut rng, &|i| 1 + i % 4, true);
        let prepared =
            SkinnedMesh::prepare(&input(&m), &PrepareOptions::new(joints.len())).map_err(err)?;
        for instances in [0usize, 1, 15, 16, 17, 33] {
            let inputs: Vec<Input> = (0..instances)
                .map(|i| Input::new(n, false, 300 + i as u64))
                .collect();
            let roots: Vec<Mat4> = (0..instances)
                .map(|i| Mat4::from_translation(Vec3::new(i as f32, 0.5, -2.0)) * root_matrix())
                .collect();
            let pose = crowd_pose(&skeleton, &inputs)?;
            let run = |backend: Backend, threads: Threads| -> Result<Vec<f32>, String> {
                let mut models = CrowdModels::new(&skeleton, instances).map_err(err)?;
                CrowdLocalToModelJob::new(&skeleton, &pose, &mut models)
                    .roots(&roots)
                    .backend(backend)
                    .threads(threads)
                    .precision(Precision::Deterministic)
                    .run()
                    .map_err(err)?;
                let mut palettes = CrowdPalettes::new(joints.len(), instances).map_err(err)?;
                CrowdPaletteJob::new(&skeleton, &models, &joints, &inverse_binds, &mut palettes)
                    .backend(backend)
                    .threads(threads)
                    .precision(Precision::Deterministic)
                    .run()
                    .map_err(err)?;
                let v = prepared.vertex_count() * instances;
                let (mut p, mut nn, mut t) =
                    (vec![Vec3::NAN; v], vec![Vec3::NAN; v], vec![Vec4::NAN; v]);
                CrowdSkinningJob::new(
                    &prepared,
                    &palettes,
                    SkinOutput::positions_normals_tangents(&mut p, &mut nn, &mut t),
                )
                .backend(backend)
                .threads(threads)
                .renormalize(Renormalize::Fast)
                .precision(Precision::Deterministic)
                .run()
                .map_err(err)?;
                let mut out = Vec::new();
                let mut user = vec![Mat4::ZERO; n];
                for i in 0..instances {
                    models.instance_models(i, &mut user).map_err(err)?;
                    out.extend(floats(&user));
                }
                out.extend(palettes.as_slice().iter().flat_map(|m| m.rows.concat()));
                out.extend(p.iter().flat_map(|v| v.to_array()));
                out.extend(nn.iter().flat_map(|v| v.to_array()));
                out.extend(t.iter().flat_map(|v| v.to_array()));
                Ok(out)
            };
            let want = run(Backend::Reference, Threads::One)?;
            for threads in [Threads::One, Threads::All] {
                let got = run(isa.into(), threads)?;
                same_bits(
                    &|| {
                        format!("deterministic crowd {isa} shape={name} instances={instances} {threads:?} (models, palettes, vertices)")
                    },
                    &got,
                    &want,
                )?;
                cases += 1;
            }
            // Each instance's models are those of a deterministic single-character job.
            for (i, input) in inputs.iter().enumerate() {
                let mut single = vec![Mat4::ZERO; n];
                LocalToModelJob::new(&skeleton, Locals::Trs(input.trs()), &mut single)
                    .root(roots[i])
                    .precision(Precision::Deterministic)
                    .backend(isa)
                    .run()
                    .map_err(err)?;
                let user = skeleton.to_original_order(&single).map_err(err)?;
                let at = i * n * 16;
                same_bits(
                    &|| {
                        format!("deterministic crowd {isa} shape={name} instance {i} against LocalToModelJob")
                    },
                    &want[at..at + n * 16],
                    &floats(&user),
                )?;
            }
        }
    }
    Ok(format!("{cases} cases, bit-identical"))
}
