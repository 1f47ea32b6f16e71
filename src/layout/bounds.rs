//! Axis-aligned boxes of skinned positions, in the form the skinning kernels write them (`box_store` in
//! ispc/gang.isph): six floats, the minimum x, y and z, then the maximum x, y and z. An empty box is
//! +inf then -inf, so that merging it with any box gives that box.

use glam::Vec3;

/// A box as the kernels write it (see the [module docs](crate::layout::bounds)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Bounds(pub(crate) [f32; 6]);

impl Bounds {
    /// The box of no point.
    pub(crate) const EMPTY: Bounds = Bounds([
        f32::INFINITY,
        f32::INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
    ]);

    /// The box from `min` to `max`.
    pub(crate) fn new(min: Vec3, max: Vec3) -> Bounds {
        Bounds([min.x, min.y, min.z, max.x, max.y, max.z])
    }

    /// The box of both boxes' points.
    pub(crate) fn merge(self, other: Bounds) -> Bounds {
        let [a, b] = [self.0, other.0];
        Bounds([
            a[0].min(b[0]),
            a[1].min(b[1]),
            a[2].min(b[2]),
            a[3].max(b[3]),
            a[4].max(b[4]),
            a[5].max(b[5]),
        ])
    }

    /// The box of `points`, computed serially (the reference for the kernels' boxes). A NaN coordinate
    /// is ignored, as `f32::min` and `f32::max` ignore it.
    pub(crate) fn of(points: &[Vec3]) -> Bounds {
        points.iter().fold(Bounds::EMPTY, |b, p| {
            b.merge(Bounds([p.x, p.y, p.z, p.x, p.y, p.z]))
        })
    }

    /// As (min, max), or `None` for the box of no point.
    #[must_use]
    pub(crate) fn get(self) -> Option<(Vec3, Vec3)> {
        let [lx, ly, lz, hx, hy, hz] = self.0;
        (lx <= hx && ly <= hy && lz <= hz).then(|| (Vec3::new(lx, ly, lz), Vec3::new(hx, hy, hz)))
    }
}
