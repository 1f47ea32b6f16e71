//! Quaternion interpolation in portable arithmetic, for [`Precision::Deterministic`]: only `+ - * /`
//! and `sqrt`, one operation at a time, which IEEE 754 rounds the same on every platform (Rust never
//! fuses them). The fast path (`curve::slerp`) calls the platform's `acos` and `sin`, whose last bits
//! differ between C libraries, and glam's SIMD dot products, whose summation order differs between
//! x86-64, AArch64 and scalar builds.
//!
//! `acos` and `sin` are computed in f64 from short series (the error is below 1e-15, far under an f32
//! ulp), so the slerp agrees with the fast one within a few f32 ulps, and with itself bit for bit
//! everywhere.
//!
//! [`Precision::Deterministic`]: crate::Precision::Deterministic

use glam::{Quat, Vec4};

/// sin(x) for x in [0, pi/2]: the Taylor series to x^21 in f64 (its next term is below 3e-18 there).
fn sin(x: f64) -> f64 {
    let x2 = x * x;
    let mut term = x;
    let mut sum = x;
    for n in 1..=10u32 {
        let k = f64::from(2 * n);
        term = -term * x2 / (k * (k + 1.0));
        sum += term;
    }
    sum
}

/// atan(z) for z in [0, 1]: two halvings, atan(z) = 2 atan(z / (1 + sqrt(1 + z^2))), take z below
/// 0.2, where 12 terms of the series leave an error below 1e-17.
fn atan(z: f64) -> f64 {
    let mut z = z;
    for _ in 0..2 {
        z /= 1.0 + (1.0 + z * z).sqrt();
    }
    let z2 = z * z;
    let mut power = z;
    let mut sum = z;
    for n in 1..12u32 {
        power *= -z2;
        sum += power / f64::from(2 * n + 1);
    }
    4.0 * sum
}

/// acos(d) for d in [0, 1], as atan(s / d) or pi/2 - atan(d / s) with s = sqrt(1 - d^2), whichever
/// argument is at most 1.
fn acos(d: f64) -> f64 {
    let s = (1.0 - d * d).max(0.0).sqrt();
    if d >= s {
        atan(s / d)
    } else {
        std::f64::consts::FRAC_PI_2 - atan(d / s)
    }
}

/// atan2(y, x), the angle of (x, y) in (-pi, pi], from [`atan`] on the octant: as the platform's for
/// every sign of zero (atan2(+-0, -0) = +-pi, atan2(+-0, +0) = +-0).
pub(crate) fn atan2(y: f64, x: f64) -> f64 {
    let (ay, ax) = (y.abs(), x.abs());
    let a = if ay == 0.0 && ax == 0.0 {
        0.0
    } else if ay <= ax {
        atan(ay / ax)
    } else {
        std::f64::consts::FRAC_PI_2 - atan(ax / ay)
    };
    let a = if x.is_sign_negative() {
        std::f64::consts::PI - a
    } else {
        a
    };
    if y.is_sign_negative() {
        -a
    } else {
        a
    }
}

/// `q / |q|` with the length summed x, y, z, w in order, or the identity for a zero (or non-finite)
/// length: `curve::unit` in portable arithmetic.
pub(crate) fn unit(q: Vec4) -> Quat {
    let len = (q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w).sqrt();
    if len > 0.0 && len.is_finite() {
        let inv = 1.0 / len;
        Quat::from_xyzw(q.x * inv, q.y * inv, q.z * inv, q.w * inv)
    } else {
        Quat::IDENTITY
    }
}

/// `curve::slerp` in portable arithmetic: along the shorter arc, a normalized lerp for nearly equal
/// keys, normalized.
pub(crate) fn slerp(a: Vec4, b: Vec4, u: f32) -> Quat {
    let mut d = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    let b = if d < 0.0 {
        d = -d;
        -b
    } else {
        b
    };
    if d > 0.9995 {
        return unit(a * (1.0 - u) + b * u);
    }
    let theta = acos(f64::from(d.min(1.0)));
    let s = sin(theta);
    let wa = (sin(f64::from(1.0 - u) * theta) / s) as f32;
    let wb = (sin(f64::from(u) * theta) / s) as f32;
    unit(a * wa + b * wb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_match_the_platform_functions() {
        for i in 0..=1000 {
            let x = std::f64::consts::FRAC_PI_2 * f64::from(i) / 1000.0;
            assert!((sin(x) - x.sin()).abs() < 1e-15, "sin({x})");
            let d = f64::from(i) / 1000.0;
            assert!(
                (acos(d) - d.acos()).abs() < 1e-14,
                "acos({d}): {} {}",
                acos(d),
                d.acos()
            );
        }
    }

    #[test]
    fn atan2_matches_the_platform_one() {
        let mut cases = vec![(0.0, 0.0), (-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0)];
        for i in 0..=720 {
            let a = std::f64::consts::PI * f64::from(i - 360) / 360.0;
            for r in [1e-30, 0.3, 1.0, 7.0, 1e30] {
                cases.push((r * a.sin(), r * a.cos()));
            }
        }
        cases.extend([
            (1.0, 0.0),
            (-1.0, 0.0),
            (0.0, 1.0),
            (0.0, -1.0),
            (-0.0, -1.0),
        ]);
        for (y, x) in cases {
            let (got, want) = (atan2(y, x), y.atan2(x));
            assert!(
                (got - want).abs() <= 4e-15 && got.is_sign_negative() == want.is_sign_negative(),
                "atan2({y}, {x}): {got}, the platform's {want}"
            );
        }
    }

    #[test]
    fn slerp_agrees_with_the_fast_one() {
        let a = Vec4::new(0.1, 0.7, -0.2, 0.68).normalize();
        let b = Vec4::new(-0.5, 0.3, 0.6, 0.55).normalize();
        for i in 0..=64 {
            let u = i as f32 / 64.0;
            let p = slerp(a, b, u);
            let f = super::super::curve::slerp(Quat::from_vec4(a), Quat::from_vec4(b), u);
            assert!(
                (Vec4::from(p) - Vec4::from(f)).abs().max_element() < 4.0 * f32::EPSILON,
                "u={u}"
            );
        }
    }
}
