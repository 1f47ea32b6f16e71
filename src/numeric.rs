//! The numeric rules every entry point applies to the floats it takes and the floats it returns
//! (docs/DESIGN.md, "Numeric rules"). It sits above `ffi`, whose scan kernels it runs on the job's ISA,
//! and below every job.
//!
//! - **Finite.** Every float an entry point takes is finite; NaN or an infinity is
//!   [`Error::NotFinite`], naming the input, the item and the value.
//! - **Rotations.** A rotation quaternion is used as `q / |q|`. Its squared length
//!   `x² + y² + z² + w²` must be a normal `f32` (from `f32::MIN_POSITIVE` to `f32::MAX`), so that the
//!   kernels' `2 / |q|²` neither overflows nor divides by zero: [`Error::RotationLength`]. Any length from
//!   about 1.1e-19 to 1.8e19 is allowed; zero, which has no direction, is not.
//! - **Results.** A job returns `Ok` only with finite outputs. Finite inputs whose products overflow
//!   `f32` (a translation of 3e38 under a parent translated by 3e38, a scale of 1e20 on a vertex at 1e20)
//!   are [`Error::ResultNotFinite`], naming the stage and the first item that overflowed.
//!
//! The checks are single vectorized passes (see [`all_finite`]), so a check costs a fraction of the
//! work it guards.

use crate::error::Error;
use crate::ffi::{numeric as scan, Runnable};
use crate::layout::palette::PaletteMatrix;
use crate::layout::trs::Trs;
use glam::Quat;

/// Floats summed side by side by the fast checks: four SSE2 vectors, enough independent additions to
/// keep the adder busy on the baseline x86-64 target the library is compiled for.
const LANES: usize = 16;

/// Whether this thread's floating-point mode is every platform's default, as
/// [`Precision::Deterministic`](crate::Precision::Deterministic) needs: a subnormal product is not
/// flushed to zero (x86 FTZ, AArch64 FZ), a subnormal operand is not read as zero (x86 DAZ), and
/// results round to nearest, ties to even. The probes are operations the compiler cannot fold
/// (`black_box`), compared by their bits (a comparison would itself read a subnormal as zero under
/// DAZ). Run on the calling thread, and on every thread of rayon's pool before a job uses it
/// ([`check_float_environment_of`]).
pub(crate) fn check_float_environment() -> Result<(), Error> {
    use std::hint::black_box;
    let found = |found| Err(Error::FloatEnvironment { found });
    // 2^-127, a subnormal: zero under FTZ.
    let tiny = black_box(f32::MIN_POSITIVE) * black_box(0.5f32);
    if tiny.to_bits() != 0x0040_0000 {
        return found("flush to zero");
    }
    // Read as zero under DAZ.
    if (black_box(tiny) * black_box(2.0f32)).to_bits() != f32::MIN_POSITIVE.to_bits() {
        return found("denormals are zero");
    }
    // 1 + 2^-24 is a tie (nearest even: 1), 1 + 1.5 * 2^-24 is above it (nearest: 1 + 2^-23); upward,
    // downward and toward-zero rounding each get one of them wrong.
    let one = black_box(1.0f32);
    let tie = one + black_box(f32::EPSILON * 0.5);
    let above = one + black_box(f32::EPSILON * 0.75);
    if tie.to_bits() != 1.0f32.to_bits() || above.to_bits() != (1.0 + f32::EPSILON).to_bits() {
        return found("a rounding mode other than to nearest");
    }
    Ok(())
}

/// [`check_float_environment`] on the calling thread, and where `pool` (a job with `Threads::All`) on
/// every thread of rayon's current pool as well, where the job's kernels run: a pool whose threads set
/// flush-to-zero (as game engines' job systems often do) is refused, not given other bits.
pub(crate) fn check_float_environment_of(pool: bool) -> Result<(), Error> {
    check_float_environment()?;
    if pool {
        rayon::broadcast(|_| check_float_environment())
            .into_iter()
            .collect::<Result<(), Error>>()?;
    }
    Ok(())
}

/// Whether every element of `xs` is finite.
///
/// The fast path adds the floats in [`LANES`] running sums: NaN and infinities survive addition, so
/// finite sums prove finite inputs in one vector add per four floats. Sums of very large finite floats
/// can overflow on their own; only then is each float tested.
pub(crate) fn all_finite(xs: &[f32]) -> bool {
    let mut acc = [0.0f32; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (a, x) in acc.iter_mut().zip(chunk) {
            *a += x;
        }
    }
    for (a, x) in acc.iter_mut().zip(chunks.remainder()) {
        *a += x;
    }
    acc.iter().all(|a| a.is_finite()) || xs.iter().all(|x| x.is_finite())
}

/// [`all_finite`] on the job's ISA when it runs on one (the scan kernel, as wide as the ISA), else in
/// Rust.
pub(crate) fn all_finite_on(isa: Option<Runnable>, xs: &[f32]) -> bool {
    match isa {
        Some(isa) => scan::finite_floats(isa, xs),
        None => all_finite(xs),
    }
}

/// [`all_finite_palette`] on the job's ISA when it runs on one.
pub(crate) fn all_finite_palette_on(isa: Option<Runnable>, palette: &[PaletteMatrix]) -> bool {
    match isa {
        Some(isa) => scan::finite_palette(isa, palette),
        None => all_finite_palette(palette),
    }
}

/// [`all_finite`] for palette entries (whose 64-byte alignment keeps them from being cast to floats).
pub(crate) fn all_finite_palette(palette: &[PaletteMatrix]) -> bool {
    let mut acc = [0.0f32; LANES];
    for m in palette {
        for (a, x) in acc.iter_mut().zip(m.rows.as_flattened()) {
            *a += x;
        }
    }
    acc.iter().all(|a| a.is_finite())
        || palette
            .iter()
            .all(|m| m.rows.as_flattened().iter().all(|x| x.is_finite()))
}

/// The first palette entry holding a float that is not finite.
pub(crate) fn first_not_finite_palette(palette: &[PaletteMatrix]) -> Option<usize> {
    palette
        .iter()
        .position(|m| !m.rows.as_flattened().iter().all(|x| x.is_finite()))
}

/// The largest magnitude of the palette's affine rows (rows 0 to 2: the kernels never read row 3), or
/// `None` where one of their floats is not finite.
pub(crate) fn palette_magnitude(palette: &[PaletteMatrix]) -> Option<f64> {
    let (mut sum, mut most) = ([0.0f32; 12], [0.0f32; 12]);
    for m in palette {
        for ((s, a), x) in sum
            .iter_mut()
            .zip(&mut most)
            .zip(m.rows[..3].as_flattened())
        {
            *s += x;
            let v = x.abs();
            *a = if v > *a { v } else { *a };
        }
    }
    let finite = sum.iter().all(|s| s.is_finite())
        || palette
            .iter()
            .all(|m| m.rows[..3].as_flattened().iter().all(|x| x.is_finite()));
    finite.then(|| f64::from(most.iter().fold(0.0f32, |m, &a| m.max(a))))
}

/// The first palette entry with a float of its affine rows (0 to 2) that is not finite.
pub(crate) fn first_not_finite_rows(palette: &[PaletteMatrix]) -> Option<usize> {
    palette
        .iter()
        .position(|m| !m.rows[..3].as_flattened().iter().all(|x| x.is_finite()))
}

/// [`Error::NotFinite`] for the first palette entry whose affine rows (0 to 2, the rows skinning reads)
/// hold a float that is not finite, naming the value.
pub(crate) fn check_palette(palette: &[PaletteMatrix]) -> Result<(), Error> {
    match first_not_finite_rows(palette) {
        Some(index) => Err(Error::NotFinite {
            what: "palette",
            index,
            value: palette[index].rows[..3]
                .as_flattened()
                .iter()
                .copied()
                .find(|x| !x.is_finite())
                .unwrap_or(f32::NAN),
        }),
        None => Ok(()),
    }
}

/// The largest `|x|` of `xs` as an `f64`, or `None` when an element is NaN or infinite; 0 for none.
pub(crate) fn max_magnitude(xs: &[f32]) -> Option<f64> {
    if !all_finite(xs) {
        return None;
    }
    let mut acc = [0.0f32; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (a, x) in acc.iter_mut().zip(chunk) {
            let m = x.abs();
            *a = if m > *a { m } else { *a };
        }
    }
    let tail = chunks
        .remainder()
        .iter()
        .fold(0.0f32, |m, x| m.max(x.abs()));
    Some(f64::from(acc.iter().fold(tail, |m, &a| m.max(a))))
}

/// [`Error::NotFinite`] for the first item of `items` (each `per_item` floats of `xs`) holding NaN or
/// an infinity; `Ok` when every float is finite. `what` names the input, as the error shows it.
pub(crate) fn check_finite(what: &'static str, xs: &[f32], per_item: usize) -> Result<(), Error> {
    if all_finite(xs) {
        return Ok(());
    }
    Err(
        first_not_finite(what, xs, per_item).unwrap_or(Error::NotFinite {
            what,
            index: 0,
            value: f32::NAN,
        }),
    )
}

/// The [`Error::NotFinite`] of the first non-finite float of `xs`, or `None` when all are finite.
pub(crate) fn first_not_finite(what: &'static str, xs: &[f32], per_item: usize) -> Option<Error> {
    let at = xs.iter().position(|x| !x.is_finite())?;
    Some(Error::NotFinite {
        what,
        index: at / per_item.max(1),
        value: xs[at],
    })
}

/// Whether `q` meets the rotation rule: finite, with a squared length that is a normal `f32`. The sum
/// is in the kernels' order (`rotation_scale` in ispc/hierarchy.ispc).
pub(crate) fn rotation_ok(q: Quat) -> bool {
    let n = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    (f32::MIN_POSITIVE..=f32::MAX).contains(&n)
}

/// Whether every rotation meets the rotation rule, in one pass with no early exit.
pub(crate) fn rotations_ok(rotations: &[Quat]) -> bool {
    rotations.iter().fold(true, |ok, &q| ok & rotation_ok(q))
}

/// [`Error::NotFinite`] or [`Error::RotationLength`] for the first rotation of `rotations` that breaks
/// the rotation rule.
pub(crate) fn check_rotations(what: &'static str, rotations: &[Quat]) -> Result<(), Error> {
    if rotations_ok(rotations) {
        return Ok(());
    }
    for (index, &q) in rotations.iter().enumerate() {
        check_rotation(what, index, q)?;
    }
    Ok(())
}

/// [`check_rotations`] for one rotation, item `index` of `what`.
pub(crate) fn check_rotation(what: &'static str, index: usize, q: Quat) -> Result<(), Error> {
    if let Some(e) = first_not_finite(what, &q.to_array(), 4) {
        return Err(match e {
            Error::NotFinite { value, .. } => Error::NotFinite { what, index, value },
            other => other,
        });
    }
    if !rotation_ok(q) {
        return Err(Error::RotationLength {
            what,
            index,
            squared_length: f64::from(q.x).powi(2)
                + f64::from(q.y).powi(2)
                + f64::from(q.z).powi(2)
                + f64::from(q.w).powi(2),
        });
    }
    Ok(())
}

/// `Ok` when `outputs` are all finite; else [`Error::ResultNotFinite`] for `stage`, naming the first
/// item (of `per_item` floats) that is not.
pub(crate) fn check_result(
    stage: &'static str,
    what: &'static str,
    outputs: &[f32],
    per_item: usize,
) -> Result<(), Error> {
    if all_finite(outputs) {
        return Ok(());
    }
    let at = outputs.iter().position(|x| !x.is_finite()).unwrap_or(0);
    Err(Error::ResultNotFinite {
        stage,
        what,
        index: at / per_item.max(1),
    })
}

/// [`Error::NotFinite`] or [`Error::RotationLength`] for the first float of the three streams of
/// `trs` that breaks the numeric rules; `pose` names them in the error ("local", "rest", ...).
pub(crate) fn check_trs(pose: &'static str, trs: &Trs<'_>) -> Result<(), Error> {
    let [t, r, s] = match pose {
        "rest" => ["rest translations", "rest rotations", "rest scales"],
        "bind" => ["bind translations", "bind rotations", "bind scales"],
        "layer" => ["layer translations", "layer rotations", "layer scales"],
        _ => ["local translations", "local rotations", "local scales"],
    };
    check_finite(t, bytemuck::cast_slice(trs.translations), 3)?;
    check_rotations(r, trs.rotations)?;
    check_finite(s, bytemuck::cast_slice(trs.scales), 3)
}

/// `e` with its item index moved by `offset` (a check of a sub-slice reports the whole slice's index).
pub(crate) fn at_index(e: Error, offset: usize) -> Error {
    match e {
        Error::NotFinite { what, index, value } => Error::NotFinite {
            what,
            index: index.saturating_add(offset),
            value,
        },
        Error::RotationLength {
            what,
            index,
            squared_length,
        } => Error::RotationLength {
            what,
            index: index.saturating_add(offset),
            squared_length,
        },
        Error::ResultNotFinite { stage, what, index } => Error::ResultNotFinite {
            stage,
            what,
            index: index.saturating_add(offset),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magnitudes_and_non_finite_floats_are_found_anywhere() {
        let mut xs: Vec<f32> = (0..37).map(|i| i as f32 - 20.0).collect();
        assert_eq!(max_magnitude(&xs), Some(20.0));
        assert!(all_finite(&xs));
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -f32::NAN] {
            for at in [0, 7, 8, 35, 36] {
                let old = xs[at];
                xs[at] = bad;
                assert!(!all_finite(&xs), "{bad} at {at}");
                assert_eq!(max_magnitude(&xs), None);
                let err = check_finite("x", &xs, 3);
                assert!(
                    matches!(err, Err(Error::NotFinite { what: "x", index, value })
                        if index == at / 3 && value.to_bits() == bad.to_bits()),
                    "{err:?}"
                );
                xs[at] = old;
            }
        }
        assert_eq!(max_magnitude(&[]), Some(0.0));
        assert_eq!(max_magnitude(&[f32::MAX, -0.0]), Some(f64::from(f32::MAX)));
    }

    #[test]
    fn the_rotation_rule_takes_every_normal_squared_length() {
        for q in [
            Quat::IDENTITY,
            Quat::from_xyzw(1.2e-19, 0.0, 0.0, 0.0),
            Quat::from_xyzw(0.0, 1.8e19, 0.0, 0.0),
            Quat::from_xyzw(-3.0, 4.0, 0.0, 0.0),
        ] {
            assert!(rotation_ok(q), "{q:?}");
            assert!(rotations_ok(&[q; 9]), "{q:?}");
        }
        for q in [
            Quat::from_xyzw(0.0, -0.0, 0.0, 0.0),
            Quat::from_xyzw(1e-30, 0.0, 0.0, 0.0),
            Quat::from_xyzw(1e-20, 0.0, 0.0, 0.0),
            Quat::from_xyzw(1e20, 0.0, 0.0, 0.0),
            Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
        ] {
            assert!(!rotation_ok(q), "{q:?}");
            for at in [0, 3, 4, 8] {
                let mut qs = [Quat::IDENTITY; 9];
                qs[at] = q;
                assert!(!rotations_ok(&qs), "{q:?} at {at}");
            }
        }
        let err = check_rotations(
            "r",
            &[Quat::IDENTITY, Quat::from_xyzw(1e-20, 0.0, 0.0, 0.0)],
        );
        assert!(
            matches!(err, Err(Error::RotationLength { index: 1, .. })),
            "{err:?}"
        );
        let err = check_rotations("r", &[Quat::from_xyzw(0.0, f32::INFINITY, 0.0, 1.0)]);
        assert!(
            matches!(err, Err(Error::NotFinite { index: 0, .. })),
            "{err:?}"
        );
    }
}
