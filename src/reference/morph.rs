//! The morph-target pre-pass: one attribute stream, base plus weighted deltas.

/// `out[i] = base[i] + Σ_k weights[k] * deltas[k][i]`, summed in target order, skipping targets whose
/// weight is zero (their deltas are not read). Processes `out.len()` floats; `base` and every delta must be
/// at least that long.
pub fn morph_floats(base: &[f32], deltas: &[&[f32]], weights: &[f32], out: &mut [f32]) {
    for (i, o) in out.iter_mut().enumerate() {
        let mut acc = base[i];
        for (d, &w) in deltas.iter().zip(weights) {
            if w != 0.0 {
                acc += w * d[i];
            }
        }
        *o = acc;
    }
}
