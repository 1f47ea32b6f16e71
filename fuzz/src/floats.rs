//! Floats for the numeric fuzzing (`runtime_numeric`): a pool of floats biased toward the values that
//! break arithmetic, drawn in turn by the builders of every input.

use arbitrary::{Arbitrary, Unstructured};
use ispc_skinning::glam::{Mat4, Quat, Vec3, Vec4};

/// The values the numeric rules are about: NaN, the infinities, both zeros, a denormal, tiny and huge
/// magnitudes, the largest and smallest normal floats, and ordinary values.
pub const SPECIAL: [f32; 26] = [
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    0.0,
    -0.0,
    1e-40,
    -1e-40,
    1e-20,
    -1e-20,
    1e20,
    -1e20,
    3e38,
    -3e38,
    f32::MAX,
    f32::MIN,
    f32::MIN_POSITIVE,
    1e-10,
    1e10,
    1.0,
    -1.0,
    0.5,
    2.0,
    0.1,
    1e-3,
    1e3,
    1e19,
];

/// One float of the pool: a special value (often), an ordinary one in [-8, 8] (often), or any bits.
#[derive(Clone, Copy, Debug)]
pub struct Fl(pub f32);

impl<'a> Arbitrary<'a> for Fl {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Fl> {
        let sel = u8::arbitrary(u)?;
        Ok(Fl(match sel % 8 {
            0..=3 => SPECIAL[sel as usize / 8 % SPECIAL.len()],
            4..=6 => f32::from(i8::arbitrary(u)?) / 16.0,
            _ => f32::from_bits(u32::arbitrary(u)?),
        }))
    }
}

/// The floats of an input, drawn in turn (cycling); an empty pool gives ordinary values. With `finite`
/// set, a draw that is not finite gives 1 instead, so a section can reach past the finiteness checks
/// to the values that overflow or underflow in the arithmetic.
pub struct Pool<'p> {
    floats: &'p [Fl],
    next: usize,
    /// Replace NaN and infinities by 1.
    pub finite: bool,
}

impl<'p> Pool<'p> {
    /// A pool over `floats`, starting at `start`.
    pub fn new(floats: &'p [Fl], start: usize, finite: bool) -> Pool<'p> {
        Pool {
            floats,
            next: start,
            finite,
        }
    }

    /// The next float.
    pub fn f(&mut self) -> f32 {
        if self.floats.is_empty() {
            self.next = self.next.wrapping_add(1);
            return (self.next % 7) as f32 * 0.25;
        }
        let x = self.floats[self.next % self.floats.len()].0;
        self.next = self.next.wrapping_add(1);
        if self.finite && !x.is_finite() {
            1.0
        } else {
            x
        }
    }

    pub fn vec3(&mut self) -> Vec3 {
        Vec3::new(self.f(), self.f(), self.f())
    }

    pub fn vec4(&mut self) -> Vec4 {
        Vec4::new(self.f(), self.f(), self.f(), self.f())
    }

    /// A quaternion as given (not normalized: the library normalizes).
    pub fn quat(&mut self) -> Quat {
        Quat::from_xyzw(self.f(), self.f(), self.f(), self.f())
    }

    /// Sixteen floats as a matrix.
    pub fn mat4(&mut self) -> Mat4 {
        Mat4::from_cols(self.vec4(), self.vec4(), self.vec4(), self.vec4())
    }

    /// `n` floats.
    pub fn floats(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f()).collect()
    }

    pub fn vec3s(&mut self, n: usize) -> Vec<Vec3> {
        (0..n).map(|_| self.vec3()).collect()
    }

    pub fn vec4s(&mut self, n: usize) -> Vec<Vec4> {
        (0..n).map(|_| self.vec4()).collect()
    }

    pub fn quats(&mut self, n: usize) -> Vec<Quat> {
        (0..n).map(|_| self.quat()).collect()
    }

    pub fn mat4s(&mut self, n: usize) -> Vec<Mat4> {
        (0..n).map(|_| self.mat4()).collect()
    }
}

/// Whether every float of `xs` is finite.
pub fn finite(xs: &[f32]) -> bool {
    xs.iter().all(|x| x.is_finite())
}
