//! Local-to-model checks: every ISPC method on every shape, with matrix and TRS input, a non-identity
//! root, and partial updates.
//!
//! Tolerance. Model matrices are products along the path from a root, so rounding accumulates with depth.
//! For joint j at depth d, the standard bound for a chain of matrix products gives
//! |computed - exact| <= gamma_(4(d+2)) * A_j element by element, where A_j = |A_parent| * |L_j| is the
//! same product taken over absolute values (A_root = |root|) and |L_j| also covers the rounding of the
//! TRS-to-matrix conversion (a few eps times the column's scale). Reference and ISPC both satisfy it, so
//! they may differ by twice that: the check allows 8 * eps * (d + 2) * A_j[e]. The bottom row must be
//! exactly (0, 0, 0, 1).

use crate::harness::{shapes, Rng};
use glam::{Mat4, Quat, Vec3};
use ispc_skinning::reference::{affine_mul, trs_matrix, Matrix};
use ispc_skinning::scene::animated_pose;
use ispc_skinning::{Isa, LocalToModelJob, Locals, Method, Skeleton, Trs};

struct Input {
    translations: Vec<Vec3>,
    rotations: Vec<Quat>,
    scales: Vec<Vec3>,
    matrices: Vec<Mat4>,
}

impl Input {
    /// A random pose with non-uniform scale and slightly non-unit quaternions (as keyframes are).
    /// Deep chains get scales near 1 so magnitudes stay bounded over a thousand levels.
    fn new(n: usize, deep: bool, seed: u64) -> Input {
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

    fn trs(&self) -> Trs<'_> {
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

fn root_matrix() -> Mat4 {
    Mat4::from_scale_rotation_translation(
        Vec3::new(1.5, 0.75, 1.0),
        Quat::from_euler(glam::EulerRot::XYZ, 0.3, -0.7, 1.1),
        Vec3::new(2.0, -1.0, 0.5),
    )
}

/// The element bounds A_j and depths of every joint.
fn bounds(skeleton: &Skeleton, input: &Input, root: &Mat4) -> (Vec<Matrix>, Vec<usize>) {
    let n = skeleton.len();
    let root_abs = root.to_cols_array().map(f32::abs);
    let mut a = vec![[0.0f32; 16]; n];
    let mut depth = vec![0usize; n];
    for j in 0..n {
        let (parent, d) = match skeleton.parent(j) {
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

/// Every shape, matrix and TRS input, against the reference.
fn check_method(isa: Isa, method: Method) -> Result<String, String> {
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
                &format!("{} {isa} shape={name} input={kind}", method.name()),
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

pub fn check_joint(isa: Isa) -> Result<String, String> {
    check_method(isa, Method::IspcJoint)
}

pub fn check_children(isa: Isa) -> Result<String, String> {
    check_method(isa, Method::IspcChildren)
}

pub fn check_level(isa: Isa) -> Result<String, String> {
    check_method(isa, Method::IspcLevel)
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
        // Joints to update from: the first root, a middle joint and the last joint (a leaf).
        for from in [0, n / 2, n - 1] {
            let subtree: Vec<usize> = skeleton
                .subtree_ranges(from)
                .into_iter()
                .flatten()
                .collect();
            // The expected result: a full update with the new locals, on the subtree only.
            let mut full = old.clone();
            for r in skeleton.subtree_ranges(from) {
                ispc_skinning::reference::local_to_model(
                    &skeleton,
                    &after.matrices,
                    &root,
                    &mut full,
                    r,
                );
            }
            for method in [Method::IspcJoint, Method::IspcChildren, Method::IspcLevel] {
                for (kind, locals) in [
                    ("matrices", Locals::Matrices(&after.matrices)),
                    ("trs", Locals::Trs(after.trs())),
                ] {
                    let mut got = old.clone();
                    run(
                        &skeleton,
                        locals,
                        root,
                        method,
                        Some(isa),
                        Some(from),
                        &mut got,
                    )?;
                    let ctx = format!(
                        "partial {} {isa} shape={name} from={from} input={kind}",
                        method.name()
                    );
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
    }
    Ok(format!("{cases} cases"))
}
