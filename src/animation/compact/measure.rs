//! The error measure of compact clips: the raw clip's joints and virtual points in model space at the
//! evaluation times ([`Truth`]), a sampled pose's displacement from them, and [`CompactClip::error`].

use super::frames::{key_times, snapped};
use super::{ClipError, CompactClip, Compression, MAX_SAMPLE_RATE};
use crate::animation::clip::{Clip, WeightTrack};
use crate::animation::curve::locate;
use crate::animation::Property;
use crate::error::Error;
use crate::layout::trs::{Trs, TrsMut};
use crate::numeric;
use crate::skeleton::Skeleton;
use glam::{DMat4, DQuat, DVec3, Quat, Vec3, Vec4};

/// A level-order pose in f32, as sampling writes it.
pub(crate) type Pose = (Vec<Vec3>, Vec<Quat>, Vec<Vec3>);

/// The raw clip measured once per compression.
pub(crate) struct Truth {
    pub(crate) joints: usize,
    pub(crate) parents: Vec<Option<usize>>,
    /// The rest pose, rotations normalized.
    pub(crate) rest: Pose,
    /// The evaluation times: every frame, halfway between frames, and every key inside the span.
    pub(crate) eval: Vec<f32>,
    /// Per evaluation time, per joint: the raw model matrix's joint and its three virtual points.
    points: Vec<[DVec3; 4]>,
    /// The same virtual points in the joint's space (at `distance` in model space).
    offsets: Vec<[DVec3; 3]>,
    /// Per joint: the distance to its farthest descendant in the rest pose plus the virtual points'
    /// distance (how far a turn of it moves a measured point per radian).
    pub(crate) lever: Vec<f64>,
    /// Per joint: its parent's largest rest scale (what a local translation is multiplied by).
    pub(crate) parent_scale: Vec<f64>,
}

impl Truth {
    /// Measures `clip` over `rest` at the evaluation times of frames at `frame_times`.
    pub(crate) fn new(
        clip: &Clip,
        skeleton: &Skeleton,
        rest: &Trs<'_>,
        distance: f32,
        frame_times: &[f32],
    ) -> Truth {
        let joints = clip.joints;
        let parents = skeleton.level_parents().to_vec();
        let rest: Pose = (
            rest.translations.to_vec(),
            rest.rotations.iter().map(|q| q.normalize()).collect(),
            rest.scales.to_vec(),
        );
        let mut eval: Vec<f32> = frame_times.to_vec();
        eval.extend(frame_times.windows(2).map(|p| p[0] + (p[1] - p[0]) * 0.5));
        for i in 0..clip.timelines.len() {
            eval.extend(
                clip.timeline(i as u32)
                    .iter()
                    .filter(|&&t| t >= clip.start && t <= clip.end),
            );
        }
        eval.sort_by(f32::total_cmp);
        eval.dedup();

        let rest_models = models(&parents, &rest);
        let position = |m: &DMat4| m.w_axis.truncate();
        let mut reach = vec![0.0f64; joints];
        for l in (0..joints).rev() {
            let mut a = parents[l];
            while let Some(p) = a {
                let d = position(&rest_models[l]).distance(position(&rest_models[p]));
                reach[p] = reach[p].max(d);
                a = parents[p];
            }
        }
        let distance = f64::from(distance);
        let lever = reach.iter().map(|r| r + distance).collect();
        let parent_scale = (0..joints)
            .map(|l| {
                parents[l].map_or(1.0, |p| {
                    let m = &rest_models[p];
                    m.x_axis
                        .truncate()
                        .length()
                        .max(m.y_axis.truncate().length())
                        .max(m.z_axis.truncate().length())
                })
            })
            .collect();

        let mut points = Vec::with_capacity(eval.len() * joints);
        let mut offsets = Vec::with_capacity(eval.len() * joints);
        let mut pose = rest.clone();
        for &t in &eval {
            pose.clone_from(&rest);
            for track in &clip.tracks {
                let keys = clip.keys_of(track);
                let v = keys.sample_at(locate(keys.times, t));
                set(&mut pose, track.level as usize, track.property, v);
            }
            for m in models(&parents, &pose) {
                let mut o = [DVec3::ZERO; 3];
                let mut p = [m.w_axis.truncate(); 4];
                for (k, axis) in [m.x_axis, m.y_axis, m.z_axis].into_iter().enumerate() {
                    let len = axis.truncate().length();
                    if len > 0.0 && len.is_finite() {
                        o[k] = DVec3::AXES[k] * (distance / len);
                        p[k + 1] = m.transform_point3(o[k]);
                    }
                }
                points.push(p);
                offsets.push(o);
            }
        }
        Truth {
            joints,
            parents,
            rest,
            eval,
            points,
            offsets,
            lever,
            parent_scale,
        }
    }

    /// The displacement of every joint's four points at evaluation time `e` for a sampled pose, into
    /// `out`.
    pub(crate) fn displacements(&self, e: usize, pose: &Pose, out: &mut Vec<f64>) {
        out.clear();
        for (l, m) in models(&self.parents, pose).iter().enumerate() {
            let i = e * self.joints + l;
            let (points, offsets) = (&self.points[i], &self.offsets[i]);
            out.push(m.w_axis.truncate().distance(points[0]));
            for k in 0..3 {
                out.push(m.transform_point3(offsets[k]).distance(points[k + 1]));
            }
        }
    }
}

impl CompactClip {
    /// How far this compact clip is from `clip` (the clip it was made from), measured as
    /// [`Clip::compress`] measures it: joints and virtual points at `distance` from them, in model
    /// space over `skeleton` and `rest`, at every frame, halfway between frames and at every key time;
    /// and its morph weights against the clip's at the same times.
    ///
    /// # Errors
    /// Those of [`Clip::compress`] for `skeleton`, `rest` and `distance`; [`Error::ClipSkeleton`] where
    /// this compact clip has another joint order than `clip`.
    pub fn error(
        &self,
        clip: &Clip,
        skeleton: &Skeleton,
        rest: Trs<'_>,
        distance: f32,
    ) -> Result<ClipError, Error> {
        let settings = Compression {
            distance,
            ..Compression::default()
        };
        check_inputs(clip, skeleton, &rest, &settings)?;
        if let Some(joint) = crate::skeleton::order_difference(
            self.level_of.iter().map(|&l| l as usize),
            clip.level_of.iter().map(|&l| l as usize),
        ) {
            return Err(Error::ClipSkeleton {
                joint,
                clip_joints: self.joints,
                joints: clip.joints,
            });
        }
        // The frame times the compressor sampled: uniform ones moved onto the keys they round beside.
        let times = match self.sample_rate() {
            Some(rate) => snapped(self.frame_times(), &key_times(clip), f64::from(rate)),
            None => self.frame_times(),
        };
        let truth = Truth::new(clip, skeleton, &rest, distance, &times);
        let mut pose = truth.rest.clone();
        let mut sampled = Vec::new();
        let mut displacements = Vec::with_capacity(truth.eval.len() * truth.joints * 4);
        for (e, &t) in truth.eval.iter().enumerate() {
            pose.clone_from(&truth.rest);
            self.sample_into(
                t,
                &mut TrsMut::new(&mut pose.0, &mut pose.1, &mut pose.2),
                &mut [],
            );
            truth.displacements(e, &pose, &mut sampled);
            displacements.extend_from_slice(&sampled);
        }
        let weights = self.weight_error(clip, &truth.eval);
        Ok(summarize(&mut displacements, weights))
    }

    /// The largest error of a weight against the clip's, at `times`.
    fn weight_error(&self, clip: &Clip, times: &[f32]) -> f64 {
        let mut worst = 0.0f64;
        for w in &self.weights {
            let Some(raw) = clip.weights.iter().find(|r| r.set == w.set) else {
                continue;
            };
            let targets = w.targets as usize;
            let (mut a, mut b) = (vec![0.0; targets], vec![0.0; targets]);
            for &t in times {
                raw_weights(clip, raw, t, &mut a);
                self.weights_into(w, self.frame_at(t), &mut b);
                for (x, y) in a.iter().zip(&b) {
                    worst = worst.max(f64::from((x - y).abs()));
                }
            }
        }
        worst
    }
}

/// The maximum, 99th percentile and count of displacements.
fn summarize(d: &mut [f64], weights: f64) -> ClipError {
    d.sort_by(f64::total_cmp);
    let max = d.last().copied().unwrap_or(0.0);
    let p99 = match d.len() {
        0 => 0.0,
        n => d[((n - 1) as f64 * 0.99).round() as usize],
    };
    ClipError {
        max,
        p99,
        weights,
        points: d.len(),
    }
}

/// The checks [`Clip::compress`] and [`CompactClip::error`] share: the settings, the skeleton the
/// clip was built for, and a rest pose of one finite entry per joint.
pub(crate) fn check_inputs(
    clip: &Clip,
    skeleton: &Skeleton,
    rest: &Trs<'_>,
    s: &Compression,
) -> Result<(), Error> {
    let bad = |setting: &'static str, value: f32| Error::CompressionSetting { setting, value };
    for (setting, value, zero_ok) in [
        ("tolerance", s.tolerance, false),
        ("distance", s.distance, true),
        ("weight tolerance", s.weight_tolerance, false),
    ] {
        if !value.is_finite() || value < 0.0 || (value == 0.0 && !zero_ok) {
            return Err(bad(setting, value));
        }
    }
    if let Some(r) = s.sample_rate {
        if !(r > 0.0 && r <= MAX_SAMPLE_RATE) {
            return Err(bad("sample rate", r));
        }
    }
    clip.check_joint_order(skeleton.level_order())?;
    for (what, got) in [
        ("rest translations", rest.translations.len()),
        ("rest rotations", rest.rotations.len()),
        ("rest scales", rest.scales.len()),
    ] {
        if got != clip.joints {
            return Err(Error::CountMismatch {
                what,
                expected: clip.joints,
                got,
            });
        }
    }
    numeric::check_trs("rest", rest)
}

/// A weight track's raw weights at `t`.
pub(crate) fn raw_weights(clip: &Clip, w: &WeightTrack, t: f32, out: &mut [f32]) {
    let keys = clip.weight_keys_of(w);
    keys.sample_into(locate(keys.times, t), out);
}

/// Writes a sampled value into a pose.
pub(crate) fn set(pose: &mut Pose, level: usize, property: Property, v: Vec4) {
    match property {
        Property::Translation => {
            if let Some(o) = pose.0.get_mut(level) {
                *o = v.truncate();
            }
        }
        Property::Rotation => {
            if let Some(o) = pose.1.get_mut(level) {
                *o = Quat::from_vec4(v);
            }
        }
        Property::Scale => {
            if let Some(o) = pose.2.get_mut(level) {
                *o = v.truncate();
            }
        }
    }
}

/// Model matrices of a level-order pose, in f64.
fn models(parents: &[Option<usize>], pose: &Pose) -> Vec<DMat4> {
    let mut out: Vec<DMat4> = Vec::with_capacity(parents.len());
    for (l, parent) in parents.iter().enumerate() {
        let (t, q, s) = (pose.0[l], pose.1[l], pose.2[l]);
        let q = DQuat::from_xyzw(
            f64::from(q.x),
            f64::from(q.y),
            f64::from(q.z),
            f64::from(q.w),
        );
        let q = if q.length_squared() > 0.0 {
            q.normalize()
        } else {
            DQuat::IDENTITY
        };
        let local = DMat4::from_scale_rotation_translation(s.as_dvec3(), q, t.as_dvec3());
        let m = match parent.and_then(|p| out.get(p)) {
            Some(pm) => *pm * local,
            None => local,
        };
        out.push(m);
    }
    out
}
