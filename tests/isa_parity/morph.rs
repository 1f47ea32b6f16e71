//! Morph pre-pass checks: `morph_floats` on every ISA against the serial reference.
//!
//! Tolerance: each output float is base + Σ_k w_k d_k over at most eight active targets per kernel call.
//! The reference rounds each product and each sum in target order; ISPC may fuse each multiply-add
//! (one rounding instead of two). Both are within gamma_{2K} * S of the exact value, where S = |base| +
//! Σ |w_k d_k| and K the number of active targets, so they differ by at most 2 * 2K * (eps / 2) * S =
//! 2K * eps * S; the check uses exactly that bound. Zero-weight targets must be skipped: their deltas
//! hold NaN here, so reading one fails the check.

use crate::common::Rng;
use crate::harness::{sizes, OFFSETS};
use ispc_skinning::{morph_floats, reference, Isa};

/// Sentinel written around every output slice; a kernel that writes outside its slice changes it.
const GUARD: f32 = -7.25e30;

pub fn check_morph(isa: Isa) -> Result<String, String> {
    let mut rng = Rng::new(17);
    let mut cases = 0;
    for &n in sizes() {
        // Floats: three per vertex, as positions, normals and tangents are morphed.
        let floats = 3 * n;
        for targets in 1..=8 {
            for &off in OFFSETS {
                let base: Vec<f32> = (0..floats + off).map(|_| rng.range(-10.0, 10.0)).collect();
                let base = &base[off..];
                // Every third target has weight zero (and NaN deltas, which must not be read).
                let weights: Vec<f32> = (0..targets)
                    .map(|k| {
                        if k % 3 == 2 {
                            0.0
                        } else {
                            rng.range(-1.5, 1.5)
                        }
                    })
                    .collect();
                let deltas: Vec<Vec<f32>> = (0..targets)
                    .map(|k| {
                        (0..floats)
                            .map(|_| {
                                if weights[k] == 0.0 {
                                    f32::NAN
                                } else {
                                    rng.range(-2.0, 2.0)
                                }
                            })
                            .collect()
                    })
                    .collect();
                let refs: Vec<&[f32]> = deltas.iter().map(Vec::as_slice).collect();
                let mut want = vec![0.0; floats];
                reference::morph_floats(base, &refs, &weights, &mut want);
                let mut buf = vec![GUARD; floats + off + 1];
                let out = &mut buf[off..off + floats];
                morph_floats(isa, base, &refs, &weights, out).map_err(|e| e.to_string())?;
                let active = weights.iter().filter(|&&w| w != 0.0).count() as f32;
                for i in 0..floats {
                    let s = base[i].abs()
                        + refs
                            .iter()
                            .zip(&weights)
                            .filter(|(_, &w)| w != 0.0)
                            .map(|(d, &w)| (w * d[i]).abs())
                            .sum::<f32>();
                    let tol = 2.0 * active * f32::EPSILON * s;
                    let got = buf[off + i];
                    // NaN (a skipped target read) fails too.
                    if (got - want[i]).abs().is_nan() || (got - want[i]).abs() > tol {
                        return Err(format!(
                            "n={n} targets={targets} offset={off} float {i}: got {got}, want {} (tolerance {tol})",
                            want[i]
                        ));
                    }
                }
                if buf[..off]
                    .iter()
                    .chain(&buf[off + floats..])
                    .any(|&g| g != GUARD)
                {
                    return Err(format!(
                        "n={n} targets={targets} offset={off}: wrote outside its slice"
                    ));
                }
                cases += 1;
            }
        }
    }
    // More than eight active targets run in batches, the later ones adding onto the output.
    for targets in [9, 16, 17, 30] {
        let floats = 3 * 1000;
        let base: Vec<f32> = (0..floats).map(|_| rng.range(-10.0, 10.0)).collect();
        let weights: Vec<f32> = (0..targets).map(|_| rng.range(-1.0, 1.0)).collect();
        let deltas: Vec<Vec<f32>> = (0..targets)
            .map(|_| (0..floats).map(|_| rng.range(-2.0, 2.0)).collect())
            .collect();
        let refs: Vec<&[f32]> = deltas.iter().map(Vec::as_slice).collect();
        let mut want = vec![0.0; floats];
        reference::morph_floats(&base, &refs, &weights, &mut want);
        let mut got = vec![0.0; floats];
        morph_floats(isa, &base, &refs, &weights, &mut got).map_err(|e| e.to_string())?;
        for i in 0..floats {
            let s = base[i].abs()
                + refs
                    .iter()
                    .zip(&weights)
                    .map(|(d, w)| (w * d[i]).abs())
                    .sum::<f32>();
            let tol = 2.0 * targets as f32 * f32::EPSILON * s;
            if (got[i] - want[i]).abs().is_nan() || (got[i] - want[i]).abs() > tol {
                return Err(format!(
                    "{targets} targets float {i}: got {}, want {}",
                    got[i], want[i]
                ));
            }
        }
        cases += 1;
    }
    Ok(format!("{cases} cases"))
}
