//! Local transforms as three streams: translation, rotation and scale.

use glam::{Quat, Vec3};

/// Local transforms as translation, rotation and (non-uniform) scale streams, one entry per joint.
#[derive(Clone, Copy, Debug)]
pub struct Trs<'a> {
    /// Translation of each joint.
    pub translations: &'a [Vec3],
    /// Rotation of each joint; normalized by the job (see the module docs).
    pub rotations: &'a [Quat],
    /// Scale of each joint; non-uniform scale is allowed.
    pub scales: &'a [Vec3],
}
