//! Local transforms as three streams: translation, rotation and scale.

use glam::{Quat, Vec3};

/// Local transforms as translation, rotation and (non-uniform) scale streams, one entry per joint.
#[derive(Clone, Copy, Debug)]
pub struct Trs<'a> {
    /// Translation of each joint.
    pub translations: &'a [Vec3],
    /// Rotation of each joint; normalized by the job (see the [module docs](crate::local_to_model)).
    pub rotations: &'a [Quat],
    /// Scale of each joint; non-uniform scale is allowed.
    pub scales: &'a [Vec3],
}

/// Output streams of translations, rotations and scales, one entry per joint (the blending job's
/// output, in the same form as [`Trs`]).
#[derive(Debug)]
pub struct TrsMut<'a> {
    /// Translation of each joint.
    pub translations: &'a mut [Vec3],
    /// Rotation of each joint.
    pub rotations: &'a mut [Quat],
    /// Scale of each joint.
    pub scales: &'a mut [Vec3],
}

impl<'a> TrsMut<'a> {
    /// The three output streams: `TrsMut::new(&mut t, &mut q, &mut s)`.
    pub fn new(
        translations: &'a mut [Vec3],
        rotations: &'a mut [Quat],
        scales: &'a mut [Vec3],
    ) -> TrsMut<'a> {
        TrsMut {
            translations,
            rotations,
            scales,
        }
    }

    /// The same streams, reborrowed.
    pub fn reborrow(&mut self) -> TrsMut<'_> {
        TrsMut {
            translations: self.translations,
            rotations: self.rotations,
            scales: self.scales,
        }
    }
}

impl<'a> Trs<'a> {
    /// The three streams: `Trs::new(&t, &q, &s)`.
    pub fn new(translations: &'a [Vec3], rotations: &'a [Quat], scales: &'a [Vec3]) -> Trs<'a> {
        Trs {
            translations,
            rotations,
            scales,
        }
    }

    /// The entries `range` of each stream (which must lie inside them).
    pub(crate) fn slice(&self, range: std::ops::Range<usize>) -> Trs<'a> {
        Trs {
            translations: &self.translations[range.clone()],
            rotations: &self.rotations[range.clone()],
            scales: &self.scales[range],
        }
    }
}
