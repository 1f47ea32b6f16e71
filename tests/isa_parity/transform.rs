//! Batch transform checks.
//!
//! Tolerance: each output component is a sum of four terms, m_r0*x + m_r1*y + m_r2*z +
//! m_r3. The reference rounds each product and each sum; ISPC fuses multiply-adds and may sum in another
//! order. Either result is within gamma_4 * S of the exact value, where S = |m_r0*x| + |m_r1*y| +
//! |m_r2*z| + |m_r3| and gamma_4 is about 4 * (eps/2), so the two differ by at most 4 * eps * S. The check
//! uses exactly that bound, so any real error (a wrong element, lane or vertex) fails it.

use crate::common::{random_vec3, Rng};
use crate::harness::{sizes, OFFSETS};
use glam::{Mat4, Vec3, Vec4};
use ispc_skinning::{reference, transform_points, transform_points3, Isa};

/// Matrices the transform is checked with: identity, affine ones (rotation, non-uniform scale,
/// translation) and fully random ones, bottom row included.
fn test_matrices(rng: &mut Rng) -> Vec<(&'static str, Mat4)> {
    let mut random = || {
        let mut m = [0.0f32; 16];
        m.iter_mut().for_each(|v| *v = rng.range(-4.0, 4.0));
        Mat4::from_cols_array(&m)
    };
    let non_affine = random();
    let non_affine_2 = random();
    let affine = Mat4::from_scale_rotation_translation(
        Vec3::new(0.5, 2.0, -1.5),
        glam::Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0),
        Vec3::new(10.0, -20.0, 0.25),
    );
    vec![
        ("identity", Mat4::IDENTITY),
        ("affine", affine),
        ("non-affine", non_affine),
        ("non-affine-2", non_affine_2),
    ]
}

/// The tolerance of one output component (row r of m applied to p); see the file comment.
fn tolerance(m: &Mat4, row: usize, p: Vec3) -> f32 {
    let r = m.row(row);
    let s = (r.x * p.x).abs() + (r.y * p.y).abs() + (r.z * p.z).abs() + r.w.abs();
    4.0 * f32::EPSILON * s
}

fn random_points(rng: &mut Rng, n: usize) -> Vec<Vec3> {
    (0..n).map(|_| random_vec3(rng, -100.0..100.0)).collect()
}

/// Sentinel written around every output slice; a kernel that writes outside its slice changes it.
const GUARD: f32 = -7.25e30;

pub fn check_transform_points_vec4(isa: Isa) -> Result<String, String> {
    let mut rng = Rng::new(4);
    let mut cases = 0;
    for (mname, m) in test_matrices(&mut rng) {
        for &n in sizes() {
            for &off in OFFSETS {
                let buf = random_points(&mut rng, n + off + 1);
                let src = &buf[off..off + n];
                let mut want = vec![Vec4::ZERO; n];
                reference::transform_points_vec4(&m, src, &mut want);
                // Output at an offset inside a guarded buffer.
                let mut out = vec![Vec4::splat(GUARD); n + off + 2];
                transform_points(isa, &m, src, &mut out[off..off + n])
                    .map_err(|e| e.to_string())?;
                let ctx = format!("transform_points {isa} matrix={mname} n={n} offset={off}");
                check_guards(&out[..off], &out[off + n..], &ctx, |v: &Vec4| v.to_array())?;
                let got = out[off..off + n].iter().map(|v| v.to_array());
                compare_points(&ctx, &m, src, got, want.iter().map(|v| v.to_array()), 4)?;
                cases += 1;
            }
        }
    }
    Ok(format!("{cases} cases"))
}

pub fn check_transform_points_vec3(isa: Isa) -> Result<String, String> {
    let mut rng = Rng::new(3);
    let mut cases = 0;
    for (mname, m) in test_matrices(&mut rng) {
        for &n in sizes() {
            for &off in OFFSETS {
                let buf = random_points(&mut rng, n + off + 1);
                let src = &buf[off..off + n];
                let mut want = vec![Vec3::ZERO; n];
                reference::transform_points_vec3(&m, src, &mut want);
                // The output starts at a different offset than the input, so both are misaligned
                // in different ways.
                let out_off = (off + 1) % 4;
                let mut out = vec![Vec3::splat(GUARD); n + out_off + 2];
                transform_points3(isa, &m, src, &mut out[out_off..out_off + n])
                    .map_err(|e| e.to_string())?;
                let ctx = format!("transform_points3 {isa} matrix={mname} n={n} in_offset={off} out_offset={out_off}");
                check_guards(&out[..out_off], &out[out_off + n..], &ctx, |v: &Vec3| {
                    v.extend(0.0).to_array()
                })?;
                let got = out[out_off..out_off + n]
                    .iter()
                    .map(|v| v.extend(0.0).to_array());
                let want = want.iter().map(|v| v.extend(0.0).to_array());
                compare_points(&ctx, &m, src, got, want, 3)?;
                cases += 1;
            }
        }
    }
    Ok(format!("{cases} cases"))
}

/// Compares the first `components` lanes of each transformed point with the reference, within the
/// tolerance above. A NaN anywhere fails: the difference must be provably within the bound.
fn compare_points(
    ctx: &str,
    m: &Mat4,
    src: &[Vec3],
    got: impl Iterator<Item = [f32; 4]>,
    want: impl Iterator<Item = [f32; 4]>,
    components: usize,
) -> Result<(), String> {
    use std::cmp::Ordering::{Equal, Less};
    for (i, (g, w)) in got.zip(want).enumerate() {
        for c in 0..components {
            let (diff, tol) = ((g[c] - w[c]).abs(), tolerance(m, c, src[i]));
            if !matches!(diff.partial_cmp(&tol), Some(Less | Equal)) {
                return Err(format!(
                    "{ctx}: vertex {i} component {c}: ispc {} reference {}, |diff| {diff} > tolerance {tol}",
                    g[c], w[c]
                ));
            }
        }
    }
    Ok(())
}

fn check_guards<T>(
    before: &[T],
    after: &[T],
    ctx: &str,
    lanes: impl Fn(&T) -> [f32; 4],
) -> Result<(), String> {
    for (side, items) in [("before", before), ("after", after)] {
        for (i, item) in items.iter().enumerate() {
            let l = lanes(item);
            if l[..3].iter().any(|&v| v != GUARD) {
                return Err(format!("{ctx}: the kernel wrote outside its output slice ({side}, guard item {i}: {l:?})"));
            }
        }
    }
    Ok(())
}
