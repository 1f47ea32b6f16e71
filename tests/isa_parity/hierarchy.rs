//! Local-to-model checks: the product's ISPC method on every shape, with matrix and TRS input, a
//! non-identity root, and partial updates; crowds and palettes; and (feature `experiments`) the SoA
//! methods on data already in SoA and the level-order seed's benchmark kernels.
//!
//! Tolerance. Model matrices are products along the path from a root, so rounding accumulates with depth.
//! For joint j at depth d, the standard bound for a chain of matrix products gives
//! |computed - exact| <= gamma_(4(d+2)) * A_j element by element, where A_j = |A_parent| * |L_j| is the
//! same product taken over absolute values (A_root = |root|) and |L_j| also covers the rounding of the
//! TRS-to-matrix conversion (a few eps times the column's scale). Reference and ISPC both satisfy it, so
//! they may differ by twice that: the check allows 8 * eps * (d + 2) * A_j[e]. The bottom row must be
//! exactly (0, 0, 0, 1).

use crate::common::scenes::animated_pose;
use crate::common::{shapes, Rng};
use glam::{Mat4, Quat, Vec3};
use ispc_skinning::reference::{affine_mul, trs_matrix, Matrix};
use ispc_skinning::{Isa, LocalToModelJob, Locals, Method, Skeleton, Trs};

pub(crate) struct Input {
    translations: Vec<Vec3>,
    rotations: Vec<Quat>,
    scales: Vec<Vec3>,
    pub(crate) matrices: Vec<Mat4>,
}

impl Input {
    /// A random pose with non-uniform scale and slightly non-unit quaternions (as keyframes are).
    /// Deep chains get scales near 1 so magnitudes stay bounded over a thousand levels.
    pub(crate) fn new(n: usize, deep: bool, seed: u64) -> Input {
        let (translations, mut rotations, mut scales) =
            animated_pose(n, seed as f32 * 0.37, true, seed);
        let mut rng = Rng::new(seed ^ 0xabcdef);
        for (q, s) in rotations.iter_mut().zip(scales.iter_mut()) {
            *q *= rng.range(0.999, 1.001);
            if deep {
                *s = Vec3::new(
                    rng.range(0.98, 1.02),
                    rng.range(0.98, 1.02),
                    rng.range(0.98, 1.02),
                );
            }
        }
        let matrices = (0..n)
            .map(|j| Mat4::from_cols_array(&trs_matrix(translations[j], rotations[j], scales[j])))
            .collect();
        Input {
            translations,
            rotations,
            scales,
            matrices,
        }
    }

    pub(crate) fn trs(&self) -> Trs<'_> {
        Trs {
            translations: &self.translations,
            rotations: &self.rotations,
            scales: &self.scales,
        }
    }

    /// |L_j| plus the conversion rounding of a TRS matrix's rotation part.
    fn local_bound(&self, j: usize) -> Matrix {
        let mut b = self.matrices[j].to_cols_array().map(f32::abs);
        let s = self.scales[j].abs();
        for (c, sc) in [s.x, s.y, s.z].into_iter().enumerate() {
            for r in 0..3 {
                b[4 * c + r] += 8.0 * f32::EPSILON * sc;
            }
        }
        b
    }
}

pub(crate) fn root_matrix() -> Mat4 {
    Mat4::from_scale_rotation_translation(
        Vec3::new(1.5, 0.75, 1.0),
        Quat::from_euler(glam::EulerRot::XYZ, 0.3, -0.7, 1.1),
        Vec3::new(2.0, -1.0, 0.5),
    )
}

/// The element bounds A_j and depths of every joint, in level order (the jobs' order) like `input`.
fn bounds(skeleton: &Skeleton, input: &Input, root: &Mat4) -> (Vec<Matrix>, Vec<usize>) {
    let n = skeleton.len();
    let root_abs = root.to_cols_array().map(f32::abs);
    let mut a = vec![[0.0f32; 16]; n];
    let mut depth = vec![0usize; n];
    for j in 0..n {
        let (parent, d) = match skeleton.level_parent(j) {
            Some(p) => (a[p], depth[p] + 1),
            None => (root_abs, 0),
        };
        a[j] = affine_mul(&parent, &input.local_bound(j));
        depth[j] = d;
    }
    (a, depth)
}

fn compare(
    ctx: &str,
    got: &[Mat4],
    want: &[Mat4],
    bound: &[Matrix],
    depth: &[usize],
    joints: &[usize],
) -> Result<(), String> {
    for &j in joints {
        let (g, w) = (got[j].to_cols_array(), want[j].to_cols_array());
        for e in 0..16 {
            let tol = 8.0 * f32::EPSILON * (depth[j] as f32 + 2.0) * bound[j][e];
            let diff = (g[e] - w[e]).abs();
            let ok = if e % 4 == 3 {
                g[e] == w[e]
            } else {
                diff <= tol
            };
            if !ok {
                return Err(format!(
                    "{ctx}: joint {j} (depth {}) element {e} (row {}, col {}): ispc {} reference {}, |diff| {diff} > tolerance {tol}",
                    depth[j],
                    e % 4,
                    e / 4,
                    g[e],
                    w[e]
                ));
            }
        }
    }
    Ok(())
}

fn run(
    skeleton: &Skeleton,
    locals: Locals<'_>,
    root: Mat4,
    method: Method,
    isa: Option<Isa>,
    from: Option<usize>,
    models: &mut [Mat4],
) -> Result<(), String> {
    let mut job = LocalToModelJob::new(skeleton, locals, models);
    job.root = root;
    job.method = method;
    job.from = from;
    if let Some(isa) = isa {
        job.backend = isa.into();
    }
    let ran = job.run().map_err(|e| e.to_string())?;
    if ran != method {
        return Err(format!("asked for {method:?} but {ran:?} ran"));
    }
    Ok(())
}

/// The horizontal kernel on every shape, matrix and TRS input, against the reference.
pub fn check_joint(isa: Isa) -> Result<String, String> {
    let method = Method::IspcJoint;
    let root = root_matrix();
    let mut cases = 0;
    for (seed, (name, parents)) in shapes().into_iter().enumerate() {
        let skeleton = Skeleton::from_parents(&parents).map_err(|e| e.to_string())?;
        let n = skeleton.len();
        let input = Input::new(n, name.starts_with("chain"), seed as u64 + 1);
        let (bound, depth) = bounds(&skeleton, &input, &root);
        let all: Vec<usize> = (0..n).collect();
        for (kind, locals) in [
            ("matrices", Locals::Matrices(&input.matrices)),
            ("trs", Locals::Trs(input.trs())),
        ] {
            let mut want = vec![Mat4::ZERO; n];
            run(
                &skeleton,
                locals,
                root,
                Method::Reference,
                None,
                None,
                &mut want,
            )?;
            let mut got = vec![Mat4::from_cols_array(&[f32::NAN; 16]); n];
            run(&skeleton, locals, root, method, Some(isa), None, &mut got)?;
            compare(
                &format!("{method:?} {isa} shape={name} input={kind}"),
                &got,
                &want,
                &bound,
                &depth,
                &all,
            )?;
            cases += 1;
        }
    }
    Ok(format!("{cases} cases"))
}

/// Partial updates: recomputing one joint's subtree after its locals change equals a full update on the
/// subtree, and leaves every other joint bit for bit as it was.
pub fn check_partial(isa: Isa) -> Result<String, String> {
    let root = root_matrix();
    let mut cases = 0;
    for (name, parents) in shapes().into_iter().filter(|(n, _)| {
        n.starts_with("humanoid")
            || n.starts_with("tree")
            || n.starts_with("forest")
            || n == "random9"
    }) {
        let skeleton = Skeleton::from_parents(&parents).map_err(|e| e.to_string())?;
        let n = skeleton.len();
        let before = Input::new(n, false, 11);
        let after = Input::new(n, false, 12);
        let (bound, depth) = bounds(&skeleton, &after, &root);
        let mut old = vec![Mat4::ZERO; n];
        run(
            &skeleton,
            Locals::Matrices(&before.matrices),
            root,
            Method::Reference,
            None,
            None,
            &mut old,
        )?;
        // Joints to update from (level order, as the job's `from`): the first root, a middle joint
        // and the last joint (a leaf).
        for from in [0, n / 2, n - 1] {
            let subtree: Vec<usize> = skeleton.level_subtree(from).into_iter().flatten().collect();
            // The expected result: a full update with the new locals, on the subtree only.
            let mut full = old.clone();
            for r in skeleton.level_subtree(from) {
                ispc_skinning::reference::local_to_model(
                    skeleton.level_parents(),
                    &after.matrices,
                    &root,
                    &mut full,
                    r,
                );
            }
            // The horizontal kernel only: the SoA methods have no partial updates.
            for (kind, locals) in [
                ("matrices", Locals::Matrices(&after.matrices)),
                ("trs", Locals::Trs(after.trs())),
            ] {
                let mut got = old.clone();
                run(
                    &skeleton,
                    locals,
                    root,
                    Method::IspcJoint,
                    Some(isa),
                    Some(from),
                    &mut got,
                )?;
                let ctx = format!("partial IspcJoint {isa} shape={name} from={from} input={kind}");
                compare(&ctx, &got, &full, &bound, &depth, &subtree)?;
                for j in (0..n).filter(|j| !subtree.contains(j)) {
                    if got[j].to_cols_array().map(f32::to_bits)
                        != old[j].to_cols_array().map(f32::to_bits)
                    {
                        return Err(format!(
                            "{ctx}: joint {j} is outside the subtree but changed"
                        ));
                    }
                }
                cases += 1;
            }
        }
    }
    Ok(format!("{cases} cases"))
}

/// Crowds: every instance equals the per-instance reference (with its own root), for partial and
/// whole blocks, and all threads give bit-identical results to one thread. The crowd pose and models
/// speak the user's joint order; each instance's input is made in level order (as the reference and
/// the bounds take it), given to the pose in the user's order, and read back into level order.
/// A crowd pose whose instance i holds `inputs[i]` (level order, converted to the skeleton's own).
pub(crate) fn crowd_pose(
    skeleton: &Skeleton,
    inputs: &[Input],
) -> Result<ispc_skinning::CrowdPose, String> {
    let err = |e: ispc_skinning::Error| e.to_string();
    let mut pose = ispc_skinning::CrowdPose::new(skeleton, inputs.len()).map_err(err)?;
    for (i, input) in inputs.iter().enumerate() {
        let t = skeleton
            .to_original_order(&input.translations)
            .map_err(err)?;
        let q = skeleton.to_original_order(&input.rotations).map_err(err)?;
        let s = skeleton.to_original_order(&input.scales).map_err(err)?;
        pose.set_instance(i, Trs::new(&t, &q, &s)).map_err(err)?;
    }
    Ok(pose)
}

pub fn check_crowd(isa: Isa) -> Result<String, String> {
    use ispc_skinning::{CrowdLocalToModelJob, CrowdModels, Threads};
    let mut cases = 0;
    for (name, parents) in shapes().into_iter().filter(|(n, _)| {
        [
            "single",
            "random17",
            "humanoid20",
            "humanoid67",
            "chain1100",
        ]
        .contains(&n.as_str())
    }) {
        let skeleton = Skeleton::from_parents(&parents).map_err(|e| e.to_string())?;
        let n = skeleton.len();
        for instances in [1usize, 15, 16, 17, 33, 40] {
            if n > 100 && instances > 17 {
                continue;
            }
            let inputs: Vec<Input> = (0..instances)
                .map(|i| Input::new(n, name.starts_with("chain"), 100 + i as u64))
                .collect();
            let roots: Vec<Mat4> = (0..instances)
                .map(|i| Mat4::from_translation(Vec3::new(i as f32, 0.5, -2.0)) * root_matrix())
                .collect();
            let err = |e: ispc_skinning::Error| e.to_string();
            let pose = crowd_pose(&skeleton, &inputs)?;
            let mut one = CrowdModels::new(&skeleton, instances).map_err(err)?;
            let mut all = CrowdModels::new(&skeleton, instances).map_err(err)?;
            for (threads, out) in [(Threads::One, &mut one), (Threads::All, &mut all)] {
                let mut job = CrowdLocalToModelJob::new(&skeleton, &pose, out);
                job.roots = Some(&roots);
                job.backend = isa.into();
                job.threads = threads;
                job.run().map_err(|e| e.to_string())?;
            }
            if one != all {
                return Err(format!("crowd {isa} shape={name} instances={instances}: all threads differ from one thread"));
            }
            for (i, input) in inputs.iter().enumerate() {
                let mut want = vec![Mat4::ZERO; n];
                ispc_skinning::reference::local_to_model_trs(
                    skeleton.level_parents(),
                    input.trs(),
                    &roots[i],
                    &mut want,
                    0..n,
                );
                let mut user = vec![Mat4::ZERO; n];
                one.instance_models(i, &mut user).map_err(err)?;
                let got = skeleton.to_level_order(&user).map_err(err)?;
                let (bound, depth) = bounds(&skeleton, input, &roots[i]);
                let all_joints: Vec<usize> = (0..n).collect();
                compare(
                    &format!("crowd {isa} shape={name} instances={instances} instance={i}"),
                    &got,
                    &want,
                    &bound,
                    &depth,
                    &all_joints,
                )?;
            }
            cases += 1;
        }
    }
    Ok(format!("{cases} cases"))
}

/// Palettes with and without a joint remap against the reference. Tolerance: each element is a sum of
/// four products, so both sides are within gamma_4 of the product of the absolute values.
pub fn check_palette(isa: Isa) -> Result<String, String> {
    use ispc_skinning::{PaletteJob, PaletteMatrix};
    let mut rng = Rng::new(9);
    let mut cases = 0;
    for count in [0usize, 1, 2, 3, 4, 5, 8, 16, 17, 33, 120] {
        let models_n = count + 7;
        let input = Input::new(models_n, false, count as u64);
        let models: Vec<Mat4> = input.matrices.iter().map(|m| root_matrix() * *m).collect();
        let inverse_binds: Vec<Mat4> = input
            .matrices
            .iter()
            .take(count)
            .map(|m| m.inverse())
            .collect();
        let remap: Vec<usize> = (0..count).map(|_| rng.below(models_n)).collect();
        for joints in [None, Some(&remap[..])] {
            let mut want = vec![PaletteMatrix::IDENTITY; count];
            ispc_skinning::reference::skin_palette(&models, &inverse_binds, joints, &mut want);
            let mut got = vec![
                PaletteMatrix {
                    rows: [[f32::NAN; 4]; 4]
                };
                count
            ];
            let mut job = PaletteJob::new(&models, &inverse_binds, &mut got);
            job.joints = joints;
            job.backend = isa.into();
            job.run().map_err(|e| e.to_string())?;
            for i in 0..count {
                let m = models[joints.map_or(i, |j| j[i])]
                    .to_cols_array()
                    .map(f32::abs);
                let b = affine_mul(&m, &inverse_binds[i].to_cols_array().map(f32::abs));
                for r in 0..4 {
                    for c in 0..4 {
                        let (g, w) = (got[i].rows[r][c], want[i].rows[r][c]);
                        let tol = 8.0 * f32::EPSILON * b[4 * c + r];
                        let ok = if r == 3 { g == w } else { (g - w).abs() <= tol };
                        if !ok {
                            return Err(format!(
                                "palette {isa} count={count} remap={}: entry {i} row {r} col {c}: ispc {g} reference {w}, |diff| {} > tolerance {tol}",
                                joints.is_some(),
                                (g - w).abs()
                            ));
                        }
                    }
                }
            }
            cases += 1;
        }
    }
    Ok(format!("{cases} cases"))
}

/// The seed's micro-benchmark kernel: the same float adds in the same order, so bit-identical to both
/// serial methods, on every shape and over several iterations.
#[cfg(feature = "experiments")]
pub fn check_level_sum(isa: Isa) -> Result<String, String> {
    use glam::Vec4;
    use ispc_skinning::experiments::level_sum::{
        level_by_level_sum, level_order_sum, parallel_level_order_sum, regular_traverse_sum,
    };
    let mut cases = 0;
    for (name, parents) in shapes() {
        let skeleton = Skeleton::from_parents(&parents).map_err(|e| e.to_string())?;
        let mut rng = Rng::new(cases as u64 + 5);
        let start: Vec<Vec4> = (0..skeleton.len())
            .map(|_| {
                Vec4::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                )
            })
            .collect();
        let (mut a, mut b, mut c, mut d) = (start.clone(), start.clone(), start.clone(), start);
        for _ in 0..3 {
            level_order_sum(&skeleton, &mut a);
            regular_traverse_sum(&skeleton, &mut b);
            parallel_level_order_sum(isa, &skeleton, &mut c).map_err(|e| e.to_string())?;
            level_by_level_sum(isa, &skeleton, &mut d).map_err(|e| e.to_string())?;
        }
        if let Some(j) = (0..d.len())
            .find(|&j| d[j].to_array().map(f32::to_bits) != a[j].to_array().map(f32::to_bits))
        {
            return Err(format!(
                "level_sum (by level) {isa} shape={name}: bone {j}: ispc {} serial {}",
                d[j], a[j]
            ));
        }
        if a != b {
            return Err(format!(
                "level_sum shape={name}: the two serial methods differ"
            ));
        }
        if let Some(j) = (0..c.len())
            .find(|&j| c[j].to_array().map(f32::to_bits) != a[j].to_array().map(f32::to_bits))
        {
            return Err(format!(
                "level_sum {isa} shape={name}: bone {j}: ispc {} serial {}",
                c[j], a[j]
            ));
        }
        cases += 1;
    }
    Ok(format!("{cases} cases"))
}

/// The per-parent SoA method (the seed's `ParallelLevelOrder`) on every shape, against the reference.
#[cfg(feature = "experiments")]
pub fn check_soa_children(isa: Isa) -> Result<String, String> {
    check_soa(
        isa,
        ispc_skinning::experiments::SoaMethod::Children,
        "children",
    )
}

/// The per-level SoA method on every shape, against the reference.
#[cfg(feature = "experiments")]
pub fn check_soa_level(isa: Isa) -> Result<String, String> {
    check_soa(isa, ispc_skinning::experiments::SoaMethod::Level, "level")
}

/// The SoA entry point (data already in SoA, matrix input, whole skeleton) with one method, against the
/// reference; the SoA methods run only there.
#[cfg(feature = "experiments")]
fn check_soa(
    isa: Isa,
    method: ispc_skinning::experiments::SoaMethod,
    name: &str,
) -> Result<String, String> {
    use ispc_skinning::experiments::{local_to_model_soa, SoaMatrices};
    let root = root_matrix();
    let mut cases = 0;
    for (seed, (shape, parents)) in shapes().into_iter().enumerate() {
        let skeleton = Skeleton::from_parents(&parents).map_err(|e| e.to_string())?;
        let n = skeleton.len();
        let input = Input::new(n, shape.starts_with("chain"), seed as u64 + 40);
        let (bound, depth) = bounds(&skeleton, &input, &root);
        let mut want = vec![Mat4::ZERO; n];
        ispc_skinning::reference::local_to_model(
            skeleton.level_parents(),
            &input.matrices,
            &root,
            &mut want,
            0..n,
        );
        let locals = SoaMatrices::from_mat4(&input.matrices);
        // Start from NaN so that a joint the kernel skips fails the comparison.
        let mut models = SoaMatrices::from_mat4(&vec![Mat4::from_cols_array(&[f32::NAN; 16]); n]);
        local_to_model_soa(&skeleton, &locals, &root, &mut models, method, isa.into())
            .map_err(|e| e.to_string())?;
        let mut got = vec![Mat4::ZERO; n];
        models.to_mat4(&mut got).map_err(|e| e.to_string())?;
        let all: Vec<usize> = (0..n).collect();
        compare(
            &format!("soa {name} {isa} shape={shape}"),
            &got,
            &want,
            &bound,
            &depth,
            &all,
        )?;
        cases += 1;
    }
    Ok(format!("{cases} cases"))
}
