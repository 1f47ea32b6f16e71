//! Bounds of a posed character without its vertices: for GPU-skinned characters (culling, shadows,
//! picking broad phase), from the palettes alone.
//!
//! At prepare, each skinned mesh keeps each joint's box of the bind positions it influences
//! ([`SkinnedMesh::joint_box`](crate::SkinnedMesh::joint_box)) and the range of its vertices' weight
//! sums; each rigid mesh its positions' box; each morph target how far it moves a vertex on each axis.
//! Per frame:
//! - a skinned vertex is `Σ w_i P_i v` over its joints `i`: with weights summing to 1 that is a convex
//!   combination of points `P_i v`, each inside joint `i`'s box moved by its palette entry `P_i`, so
//!   inside the union of the moved boxes; a weight sum `s` other than 1 scales that point by `s`, so
//!   the union is scaled by the mesh's smallest and largest sum;
//! - morph targets move a bind position by at most `Σ |w_t| reach_t` on each axis before skinning, so
//!   each box grows by that first;
//! - a rigid mesh's box (grown by its morph weights the same way) is moved by its joint's model matrix;
//! - a box is moved exactly by its centre and its extent through `|M|`, then padded by 32 f32 epsilons
//!   of the magnitude of its terms, more than the kernels' rounding ((k + 4) eps of that magnitude for
//!   k <= 16 influences, tests/isa_parity), plus one epsilon per morph target with a non-zero weight.
//!
//! The cost is one box per joint of each mesh, about what the palettes cost (docs/RESULTS.md).

use super::crowd::CrowdFrame;
use super::frame::Frame;
use super::rigid::RigidMesh;
use super::Character;
use crate::error::Error;
use crate::layout::bounds::Bounds;
use crate::layout::dual_quat::DUAL_QUAT_RIGID_TOLERANCE;
use crate::layout::output::Skinning;
use crate::layout::palette::PaletteMatrix;
use crate::SkinnedMesh;
use glam::{Mat4, Vec3};

/// The box from `lo` to `hi`, or [`Error::ResultNotFinite`] when finite inputs overflowed it (morph
/// weights of 1e38, say; a NaN, which `min` and `max` would drop, included): `index` is the mesh
/// (skinned ones first, then rigid) or the crowd instance.
fn checked(lo: Vec3, hi: Vec3, index: usize) -> Result<Bounds, Error> {
    if lo.is_finite() && hi.is_finite() {
        Ok(Bounds::new(lo, hi))
    } else {
        Err(Error::ResultNotFinite {
            stage: "pose bounds",
            what: "bounding box",
            index,
        })
    }
}

/// A palette entry as a column-major matrix.
fn palette_matrix(p: &PaletteMatrix) -> Mat4 {
    Mat4::from_cols_array_2d(&p.rows).transpose()
}

/// The box of the affine `m` applied to every point of (lo, hi), padded for the rounding of a result
/// made of `terms` rounded additions: its centre moved, its half-extent through `|M|`, in whole columns
/// (a few SIMD operations).
fn moved(m: &Mat4, lo: Vec3, hi: Vec3, rounding: f32) -> (Vec3, Vec3) {
    let (c, e) = ((lo + hi) * 0.5, (hi - lo) * 0.5);
    let far = lo.abs().max(hi.abs());
    let (x, y, z, w) = (m.x_axis, m.y_axis, m.z_axis, m.w_axis);
    let centre = x * c.x + y * c.y + z * c.z + w;
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let extent = ax * e.x + ay * e.y + az * e.z;
    let terms = ax * far.x + ay * far.y + az * far.z + w.abs();
    let grow = extent + terms * (rounding * f32::EPSILON);
    ((centre - grow).truncate(), (centre + grow).truncate())
}

/// How far morph targets with `weights` move a bind position on each axis, and the epsilons of
/// rounding to pad a moved box by: 32 for the kernels' blend and transform ((k + 4) epsilons of the
/// terms' magnitude for k <= 16 influences), plus one per target with a non-zero weight, whose deltas
/// the morph adds one after another ((T + k + 4) epsilons, tests/isa_parity/fused_morph.rs).
fn morph_reach(reach: &[Vec3], weights: &[f32]) -> (Vec3, f32) {
    let (sum, targets) = reach
        .iter()
        .zip(weights)
        .filter(|(_, w)| **w != 0.0)
        .fold((Vec3::ZERO, 0usize), |(sum, n), (r, w)| {
            (sum + *r * w.abs(), n + 1)
        });
    (sum, 32.0 + targets as f32)
}

/// The box of a rigid mesh's vertices under `model`: its bind box grown by the reach of `weights` and
/// moved (see [`morph_reach`], [`moved`]); empty for a mesh without vertices. `index` names it in
/// [`Error::ResultNotFinite`].
fn rigid_box(
    mesh: &RigidMesh,
    model: &Mat4,
    weights: &[f32],
    index: usize,
) -> Result<Bounds, Error> {
    let Some((lo, hi)) = mesh.bounds() else {
        return Ok(Bounds::EMPTY);
    };
    let (reach, rounding) = mesh
        .morph_targets()
        .map_or((Vec3::ZERO, 32.0), |m| morph_reach(m.reach(), weights));
    let (lo, hi) = moved(model, lo - reach, hi + reach, rounding);
    checked(lo, hi, index)
}

/// The box of a skinned mesh's vertices for one palette (`entries` its joints' entries), its bind
/// boxes grown by `reach` and padded by `rounding` epsilons (see [`morph_reach`]); `index` names it
/// in an error.
fn skinned_box(
    mesh: &SkinnedMesh,
    entries: &[PaletteMatrix],
    (reach, rounding): (Vec3, f32),
    index: usize,
) -> Result<Bounds, Error> {
    let mut union = Bounds::EMPTY;
    for (j, entry) in entries.iter().enumerate().take(mesh.joint_count()) {
        if let Some((lo, hi)) = mesh.joint_box(j) {
            let (lo, hi) = moved(&palette_matrix(entry), lo - reach, hi + reach, rounding);
            union = union.merge(checked(lo, hi, index)?);
        }
    }
    let (low, high) = mesh.weight_sums();
    let mut scaled = Bounds::EMPTY;
    if let Some((lo, hi)) = union.get() {
        // s * x over s in [low, high] and x in [lo, hi] is extreme at the corners.
        for s in [low, high] {
            let (a, b) = (lo * s, hi * s);
            scaled = scaled.merge(checked(a.min(b), a.max(b), index)?);
        }
    }
    // A vertex without influences (WeightPolicy::Keep) skins to the origin.
    if low <= 0.0 && mesh.vertex_count() > 0 {
        scaled = scaled.merge(Bounds::new(Vec3::ZERO, Vec3::ZERO));
    }
    Ok(scaled)
}

/// The box of a skinned mesh's positions under dual-quaternion skinning, from the same joint boxes
/// (see [`Character::pose_bounds`] for the bound and why it is looser than linear blending's).
fn dual_quat_box(
    mesh: &SkinnedMesh,
    entries: &[PaletteMatrix],
    (reach, rounding): (Vec3, f32),
    index: usize,
) -> Result<Bounds, Error> {
    // The translations of the entries whose joints influence a vertex, the largest stretch |A p| (A
    // the entry's 3x3 part, the same as |S p| since S = R^T A) over their grown boxes, and the largest
    // size of the terms of A p (|A| |p|), which the kernels' rounding is relative to.
    let mut ts = Bounds::EMPTY;
    let (mut stretch, mut terms) = (0.0f32, 0.0f32);
    let translation =
        |entry: &PaletteMatrix| Vec3::new(entry.rows[0][3], entry.rows[1][3], entry.rows[2][3]);
    for (j, entry) in entries.iter().enumerate().take(mesh.joint_count()) {
        if let Some((lo, hi)) = mesh.joint_box(j) {
            let m = palette_matrix(entry);
            let t = translation(entry);
            let a = glam::Mat3::from_mat4(m);
            let (c, e) = ((lo + hi) * 0.5, (hi - lo) * 0.5 + reach);
            let abs = glam::Mat3::from_cols(a.x_axis.abs(), a.y_axis.abs(), a.z_axis.abs());
            let far = (a * c).abs() + abs * e;
            let size = abs * (c.abs() + e);
            // f32::max and Bounds::merge would drop a NaN: an entry that is not finite is an error.
            if !(far.is_finite() && size.is_finite() && t.is_finite()) {
                return checked(Vec3::NAN, Vec3::NAN, index);
            }
            stretch = stretch.max(far.length());
            terms = terms.max(size.length());
            ts = ts.merge(Bounds::new(t, t));
        }
    }
    let (low, high) = mesh.weight_sums();
    let high = high.max(0.0);
    // A vertex without influences (WeightPolicy::Keep) skins to the origin.
    let mut b = if low <= 0.0 && mesh.vertex_count() > 0 {
        Bounds::new(Vec3::ZERO, Vec3::ZERO)
    } else {
        Bounds::EMPTY
    };
    let Some((tlo, thi)) = ts.get() else {
        return Ok(b);
    };
    let centre = (tlo + thi) * 0.5;
    let spread = entries
        .iter()
        .enumerate()
        .take(mesh.joint_count())
        .filter(|(j, _)| mesh.joint_box(*j).is_some())
        .fold(0.0f32, |m, (_, e)| {
            m.max((translation(e) - centre).length())
        });
    // At most k influences with a weight: the summed real part is at least (sum of weights) / sqrt(k)
    // long (every term is added in the hemisphere of the sum before it, so no term shortens it), which
    // bounds the blended translation's distance from `centre` by sqrt(k) times the farthest entry's.
    let k = mesh.max_influences().max(1) as f32;
    let radius = high * stretch + k.sqrt() * spread;
    // Padded for rounding: (k + 8) epsilons, and the morph's, of the terms' sizes per sum, divided by
    // the real part's length (at least the weight sum over sqrt(k)).
    let eps = (rounding + 16.0 * (k + 8.0)) * k.sqrt() * f32::EPSILON;
    let pad = (high * terms + k.sqrt() * spread + centre.abs().max_element()) * eps
        // Entries stored rigid skip S, which was the identity only within DUAL_QUAT_RIGID_TOLERANCE per
        // element (at most three times that of a point's size), and with it a weight sum within 1e-5
        // of 1.
        + high * terms * (3.0 * DUAL_QUAT_RIGID_TOLERANCE as f32 + 1e-5);
    let r = Vec3::splat(radius + pad);
    b = b.merge(checked(centre - r, centre + r, index)?);
    // A vertex whose weights (nearly) vanish takes the identity motion (the kernel tests the summed
    // real part's squared length, rounded, against 1e-20): it stays at S_b p, near the origin.
    if low * low <= 2e-20 * k {
        let r = Vec3::splat(high * (stretch + terms * eps));
        b = b.merge(checked(-r, r, index)?);
    }
    Ok(b)
}

impl Character {
    /// The axis-aligned box (min, max) of every position the skin and rigid stages write for the
    /// frame's current palettes, model matrices and morph weights, computed from each joint's box
    /// in bind space ([`SkinnedMesh::joint_box`](crate::SkinnedMesh::joint_box)) without reading or
    /// skinning a vertex: the bounds a GPU-skinned character needs for culling. Call it after
    /// [`palettes`](Character::palettes) (or [`evaluate_pose`](Character::evaluate_pose)); it reads
    /// only the frame. It contains every written position (tested on every asset and random poses),
    /// and is larger than [`Frame::bounds`], which reads the written positions. `None` for a
    /// character without vertices.
    ///
    /// How: a skinned vertex is `Σ w_i P_i v` over its joints `i`. With weights summing to 1 that is
    /// a convex combination of the points `P_i v`, each inside joint `i`'s bind box moved by its
    /// palette entry `P_i`, so inside the union of the moved boxes; a weight sum `s` other than 1
    /// scales the point by `s`, so the union is scaled by the mesh's smallest and largest sum
    /// ([`SkinnedMesh::weight_sums`](crate::SkinnedMesh::weight_sums)). Morph targets move a bind
    /// position by at most `Σ |w_t| reach_t` on each axis, so each box first grows by that. A rigid
    /// mesh's box, grown the same way, is moved by its joint's model matrix. Each box is moved by its
    /// centre and its extent through `|M|`, then padded by 32 f32 epsilons of the magnitude of its
    /// terms, more than the kernels' rounding ((k + 4) epsilons of it for k <= 16 influences), plus one
    /// epsilon per morph target with a non-zero weight (the morph adds their deltas in turn).
    ///
    /// A frame that skins with [`Skinning::DualQuaternion`](crate::Skinning::DualQuaternion) gets a
    /// looser box, since a dual-quaternion vertex is not a convex combination of its joints' points:
    /// it is `R (S_b p) + t_b` with `|S_b p|` at most the weight sum times the largest `|A_j p|` over
    /// the joint boxes (`A_j` the entry's 3x3 part), and the blended translation `t_b` within
    /// `sqrt(k)` times the farthest entry translation's distance from their centre (k the influences
    /// with a weight). So the box is a cube around the entries' translations, a few times the
    /// character's extent on each axis (the tests allow up to 8 times), still enough to cull.
    ///
    /// # Errors
    /// [`Error::WrongFrame`] for a frame of another character; [`Error::ResultNotFinite`] (stage
    /// "pose bounds", `index` the skinned mesh, or the rigid mesh after the skinned ones) where
    /// finite inputs overflow, as morph weights near `f32::MAX` can.
    pub fn pose_bounds(&self, frame: &Frame) -> Result<Option<(Vec3, Vec3)>, Error> {
        self.check_frame(frame)?;
        let mut all = Bounds::EMPTY;
        for (i, (mesh, &skin)) in self.meshes.iter().zip(&self.mesh_skins).enumerate() {
            let reach = match (self.mesh_morphs.get(i), frame.mesh_weights.get(i)) {
                (Some(Some(morph)), Some(weights)) => morph_reach(morph.targets.reach(), weights),
                _ => (Vec3::ZERO, 32.0),
            };
            let entries = frame.palettes.get(skin).map_or(&[][..], Vec::as_slice);
            all = all.merge(match frame.skinning {
                Skinning::Linear => skinned_box(mesh, entries, reach, i)?,
                Skinning::DualQuaternion => dual_quat_box(mesh, entries, reach, i)?,
            });
        }
        for (r, ((mesh, &level), weights)) in self
            .rigid
            .iter()
            .zip(&self.rigid_levels)
            .zip(&frame.rigid_weights)
            .enumerate()
        {
            let Some(model) = frame.models.get(level) else {
                continue;
            };
            all = all.merge(rigid_box(mesh, model, weights, self.meshes.len() + r)?);
        }
        Ok(all.get())
    }

    /// [`pose_bounds`](Character::pose_bounds) for every instance of a crowd, from its palettes and, for
    /// the rigid meshes, its model matrices, and each instance's morph weights: one box per instance,
    /// `None` for a character without vertices. The boxes follow the crowd's
    /// [`skinning`](CrowdFrame#structfield.skinning) method, as `pose_bounds` follows the frame's. The
    /// rigid meshes' boxes read the frame's model matrices, which
    /// [`evaluate_crowd_pose`](Character::evaluate_crowd_pose) writes and
    /// [`crowd_play_palettes`](Character::crowd_play_palettes) does not.
    ///
    /// # Errors
    /// [`Error::WrongFrame`] for a crowd frame of another character; [`Error::ResultNotFinite`]
    /// naming the first instance whose box overflowed.
    pub fn crowd_pose_bounds(
        &self,
        crowd: &CrowdFrame,
    ) -> Result<Vec<Option<(Vec3, Vec3)>>, Error> {
        self.check_crowd(crowd)?;
        let instances = crowd.instances();
        let mut out = Vec::with_capacity(instances);
        for instance in 0..instances {
            let mut all = Bounds::EMPTY;
            for (m, (mesh, &skin)) in self.meshes.iter().zip(&self.mesh_skins).enumerate() {
                let entries = crowd
                    .palettes(skin)
                    .and_then(|p| p.instance(instance))
                    .unwrap_or(&[]);
                let reach = match (self.mesh_morphs.get(m), crowd.mesh_weights(m, instance)) {
                    (Some(Some(morph)), Some(weights)) => {
                        morph_reach(morph.targets.reach(), weights)
                    }
                    _ => (Vec3::ZERO, 32.0),
                };
                all = all.merge(match crowd.skinning {
                    Skinning::Linear => skinned_box(mesh, entries, reach, instance)?,
                    Skinning::DualQuaternion => dual_quat_box(mesh, entries, reach, instance)?,
                });
            }
            for (r, (mesh, &joint)) in self.rigid.iter().zip(&self.rigid_joints).enumerate() {
                // check_crowd proved the instance, joint and weights exist.
                let broken = |what| Error::CountMismatch {
                    what,
                    expected: instances,
                    got: instance,
                };
                let model = crowd
                    .models()
                    .model(instance, joint)
                    .ok_or(broken("crowd model matrices"))?;
                let weights = crowd
                    .rigid_weights(r, instance)
                    .ok_or(broken("rigid mesh morph weights"))?;
                all = all.merge(rigid_box(mesh, &model, weights, instance)?);
            }
            out.push(all.get());
        }
        Ok(out)
    }
}
