//! The morph-target pre-pass: one attribute stream, base plus weighted deltas.

/// `out[i] = base[i] + Σ_k weights[k] * deltas[k][i]`, summed in target order, skipping targets whose
/// weight is zero (their deltas are not read). Targets are paired with weights (a target without a
/// weight, or a weight without a target, is left out). As every reference function, it processes as
/// many floats as the shortest slice holds: `out`, `base`, and each delta paired with a weight;
/// `out[i]` past that is left as it is.
pub fn morph_floats(base: &[f32], deltas: &[&[f32]], weights: &[f32], out: &mut [f32]) {
    let n = deltas
        .iter()
        .zip(weights)
        .fold(out.len().min(base.len()), |n, (d, _)| n.min(d.len()));
    for (i, (o, &b)) in out[..n].iter_mut().zip(&base[..n]).enumerate() {
        let mut acc = b;
        for (d, &w) in deltas.iter().zip(weights) {
            if w != 0.0 {
                acc += w * d[i];
            }
        }
        *o = acc;
    }
}
