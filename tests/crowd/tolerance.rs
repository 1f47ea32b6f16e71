//! The tolerances of a crowd against the single-character path (the bounds of the ISA parity harness,
//! as `main.rs`'s file comment gives them): the element bound of every joint's model matrix, the check
//! of one matrix (the bottom row exactly), the bound of one skinned component from the palette
//! difference, and the check of one instance's mesh, positions, normals and tangents, renormalized or
//! not.

use crate::common::scenes;
use crate::fixtures::Influences;
use glam::{Mat4, Quat, Vec3, Vec4};
use ispc_skinning::reference::trs_matrix;
use ispc_skinning::{PaletteMatrix, Skeleton};

pub(crate) const EPS: f32 = f32::EPSILON;

pub(crate) fn abs(m: Mat4) -> Mat4 {
    Mat4::from_cols_array(&m.to_cols_array().map(f32::abs))
}

/// The element bound of every joint's model matrix (user order): 8 eps (d + 2) A_j.
pub(crate) fn model_tolerances(
    skeleton: &Skeleton,
    t: &[Vec3],
    q: &[Quat],
    s: &[Vec3],
    root: Mat4,
) -> Vec<Mat4> {
    let n = skeleton.len();
    let mut a = vec![Mat4::ZERO; n];
    let mut depth = vec![0usize; n];
    for l in 0..n {
        let j = skeleton.original_index(l).unwrap();
        let mut local = Mat4::from_cols_array(&trs_matrix(t[j], q[j], s[j])).to_cols_array();
        local.iter_mut().for_each(|x| *x = x.abs());
        for (c, sc) in s[j].abs().to_array().into_iter().enumerate() {
            for r in 0..3 {
                local[4 * c + r] += 8.0 * EPS * sc;
            }
        }
        let (parent, d) = match skeleton.parent(j) {
            Some(p) => (a[p], depth[p] + 1),
            None => (abs(root), 0),
        };
        a[j] = parent * Mat4::from_cols_array(&local);
        depth[j] = d;
    }
    (0..n)
        .map(|j| a[j] * (8.0 * EPS * (depth[j] as f32 + 2.0)))
        .collect()
}

/// Ok when every element of `got` is within `tol` of `want`, the bottom row exactly.
pub(crate) fn check_matrix(ctx: &dyn Fn() -> String, got: Mat4, want: Mat4, tol: Mat4) {
    let (g, w, t) = (
        got.to_cols_array(),
        want.to_cols_array(),
        tol.to_cols_array(),
    );
    for e in 0..16 {
        let ok = if e % 4 == 3 {
            g[e] == w[e]
        } else {
            (g[e] - w[e]).abs() <= t[e]
        };
        assert!(
            ok,
            "{}: element {e} (row {}, col {}): crowd {} single {}, |diff| {} > {}",
            ctx(),
            e % 4,
            e / 4,
            g[e],
            w[e],
            (g[e] - w[e]).abs(),
            t[e]
        );
    }
}

/// The bound of one skinned component (row `r`, input `v`) of a vertex, from the single path's palette
/// and the observed palette difference.
pub(crate) fn blend_tolerance(
    infl: &Influences,
    vertex: usize,
    single: &[PaletteMatrix],
    crowd: &[PaletteMatrix],
    r: usize,
    v: [f32; 4],
) -> f32 {
    let k = infl.weights[vertex].iter().filter(|&&w| w > 0.0).count() as f32;
    let mut tol = 0.0;
    for (&j, &w) in infl.joints[vertex].iter().zip(&infl.weights[vertex]) {
        if w > 0.0 {
            for c in 0..4 {
                let (p, dp) = (
                    single[j].rows[r][c],
                    (crowd[j].rows[r][c] - single[j].rows[r][c]).abs(),
                );
                tol += w * (dp + (k + 4.0) * EPS * p.abs()) * v[c].abs();
            }
        }
    }
    tol
}

/// Compares one mesh of one instance: positions always, normals and tangents where the mesh has them.
/// `raw` is the single path's unrenormalized output of the same instance, for renormalized bounds.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_vertices(
    ctx: &str,
    infl: &Influences,
    input: &scenes::Character,
    single: &[PaletteMatrix],
    crowd_palette: &[PaletteMatrix],
    got: (&[Vec3], Option<&[Vec3]>, Option<&[Vec4]>),
    want: (&[Vec3], Option<&[Vec3]>, Option<&[Vec4]>),
    raw: Option<(&[Vec3], &[Vec4])>,
) {
    let tol = |v: usize, x: [f32; 4]| -> [f32; 3] {
        std::array::from_fn(|r| blend_tolerance(infl, v, single, crowd_palette, r, x))
    };
    assert_eq!(got.0.len(), want.0.len(), "{ctx}");
    for v in 0..want.0.len() {
        let bound = tol(v, input.positions[v].extend(1.0).to_array());
        let (g, w) = (got.0[v].to_array(), want.0[v].to_array());
        for r in 0..3 {
            assert!(
                (g[r] - w[r]).abs() <= bound[r],
                "{ctx}: vertex {v} position[{r}]: crowd {} single {}, bound {}",
                g[r],
                w[r],
                bound[r]
            );
        }
        let mut directions = Vec::new();
        if let (Some(g), Some(w)) = (got.1, want.1) {
            let raw_len = raw.map(|(n, _)| n[v].length());
            directions.push(("normal", g[v], w[v], input.normals[v], raw_len));
        } else {
            assert_eq!(got.1.is_some(), want.1.is_some(), "{ctx}: normals");
        }
        if let (Some(g), Some(w)) = (got.2, want.2) {
            assert_eq!(g[v].w, w[v].w, "{ctx}: vertex {v} tangent w");
            let raw_len = raw.map(|(_, t)| t[v].truncate().length());
            let input_t = input.tangents[v].truncate();
            directions.push((
                "tangent",
                g[v].truncate(),
                w[v].truncate(),
                input_t,
                raw_len,
            ));
        } else {
            assert_eq!(got.2.is_some(), want.2.is_some(), "{ctx}: tangents");
        }
        for (what, g, w, x, raw_len) in directions {
            let bound = tol(v, x.extend(0.0).to_array());
            let bound = match raw_len {
                // Renormalized: |d(x / |x|)| <= (|dx_r| + |dx|) / |x|, plus the rounding of each side.
                Some(len) => bound.map(|b| (b + bound.iter().sum::<f32>()) / len + 8.0 * EPS),
                None => bound,
            };
            let (g, w) = (g.to_array(), w.to_array());
            for r in 0..3 {
                assert!(
                    (g[r] - w[r]).abs() <= bound[r],
                    "{ctx}: vertex {v} {what}[{r}]: crowd {} single {}, bound {}",
                    g[r],
                    w[r],
                    bound[r]
                );
            }
        }
    }
}
