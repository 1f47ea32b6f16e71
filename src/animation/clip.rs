//! [`Clip`] and [`ClipBuilder`]: tracks from plain arrays, checked as they enter, stored for sampling.

use super::{Interpolation, Property};
use crate::backend::Precision;
use crate::error::Error;
use crate::layout::pose_tracks::{PoseTrack, PoseTracks};
use crate::layout::tracks::{CrowdTracks, KernelTracks, TrackForm, CROWD_READ_PAD};
use crate::numeric;
use crate::skeleton::{OwnerId, Skeleton};
use glam::{Quat, Vec3};

/// The most floats (key times and values together) one clip holds: 2^28, a gigabyte. Offsets inside a
/// clip are 32 bits, as a kernel reads them.
pub const MAX_CLIP_FLOATS: usize = 1 << 28;

/// A run of key times in [`Clip::times`], shared by every track whose keys fall at the same times.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Timeline {
    pub(crate) start: u32,
    pub(crate) len: u32,
}

/// One joint's translation, rotation or scale.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Track {
    /// The joint, in level order.
    pub(crate) level: u32,
    pub(crate) property: Property,
    pub(crate) interpolation: Interpolation,
    pub(crate) timeline: u32,
    /// The first of its floats in [`Clip::values`].
    pub(crate) values: u32,
}

/// One weight set's morph-target weights.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct WeightTrack {
    pub(crate) set: u32,
    pub(crate) targets: u32,
    pub(crate) interpolation: Interpolation,
    pub(crate) timeline: u32,
    pub(crate) values: u32,
}

/// An animation clip for the joints of one skeleton: translation, rotation and scale tracks, and
/// morph-weight tracks (see the [module docs](crate::animation) for the layout and the rules).
///
/// Build one with [`Clip::builder`]; sample it with [`SamplingJob`](crate::SamplingJob). A clip is
/// immutable and cheap to share between threads (`&Clip` is `Sync`).
#[derive(Clone, Debug)]
pub struct Clip {
    pub(crate) id: OwnerId,
    pub(crate) name: Option<String>,
    pub(crate) joints: usize,
    /// Each joint's level-order index, in the skeleton's original order.
    pub(crate) level_of: Vec<u32>,
    pub(crate) start: f32,
    pub(crate) end: f32,
    pub(crate) times: Vec<f32>,
    pub(crate) values: Vec<f32>,
    pub(crate) timelines: Vec<Timeline>,
    /// Sorted by level-order joint, then property.
    pub(crate) tracks: Vec<Track>,
    /// Sorted by set.
    pub(crate) weights: Vec<WeightTrack>,
    pub(crate) weight_sets: usize,
    /// The translation, rotation and scale tracks in the single-pose sampling kernel's checked form,
    /// grouped and transposed (derived from the fields above when built).
    pub(crate) pose_kernel: Option<std::sync::Arc<PoseTracks>>,
    /// The same tracks merged for the crowd sampling kernel.
    pub(crate) crowd_kernel: Option<std::sync::Arc<CrowdTracks>>,
}

impl PartialEq for Clip {
    /// Equal content (the identity that contexts follow is not compared).
    fn eq(&self, other: &Clip) -> bool {
        self.name == other.name
            && self.joints == other.joints
            && self.level_of == other.level_of
            && self.start.to_bits() == other.start.to_bits()
            && self.end.to_bits() == other.end.to_bits()
            && self.times == other.times
            && self.values == other.values
            && self.timelines == other.timelines
            && self.tracks == other.tracks
            && self.weights == other.weights
            && self.weight_sets == other.weight_sets
    }
}

impl Clip {
    /// An empty clip for `skeleton`'s joints, to add tracks to.
    pub fn builder(skeleton: &Skeleton) -> ClipBuilder {
        let level: Vec<usize> = (0..skeleton.len())
            .map(|j| skeleton.level_index(j).unwrap_or(j))
            .collect();
        ClipBuilder {
            clip: Clip {
                id: OwnerId::new(),
                name: None,
                joints: skeleton.len(),
                // Joint counts are at most MAX_JOINTS, far below 2^32.
                level_of: level.iter().map(|&l| l as u32).collect(),
                start: f32::INFINITY,
                end: f32::NEG_INFINITY,
                times: Vec::new(),
                values: Vec::new(),
                timelines: Vec::new(),
                tracks: Vec::new(),
                weights: Vec::new(),
                weight_sets: 0,
                pose_kernel: None,
                crowd_kernel: None,
            },
            level,
        }
    }

    /// The clip's name, when it was given one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The joints of the skeleton it was built for: the length every sampled pose must have.
    pub fn joints(&self) -> usize {
        self.joints
    }

    /// The earliest key time of any track (0 for a clip without tracks).
    pub fn start(&self) -> f32 {
        self.start
    }

    /// The latest key time of any track (0 for a clip without tracks).
    pub fn end(&self) -> f32 {
        self.end
    }

    /// `end - start`.
    pub fn duration(&self) -> f32 {
        self.end - self.start
    }

    /// How many translation, rotation and scale tracks it has.
    pub fn tracks(&self) -> usize {
        self.tracks.len()
    }

    /// The bytes of its key times and values as `f32` (each shared timeline counted once): the raw
    /// size [`CompactClip`](crate::CompactClip)'s is compared with.
    pub fn key_bytes(&self) -> usize {
        4 * (self.times.len() + self.values.len())
    }

    /// How many distinct key-time arrays its tracks have (each is searched once per sample).
    pub fn timelines(&self) -> usize {
        self.timelines.len()
    }

    /// How many weight sets a sampled weight output must have: one more than the largest set a weight
    /// track drives (0 without weight tracks).
    pub fn weight_sets(&self) -> usize {
        self.weight_sets
    }

    /// The number of morph targets weight set `set` has in this clip; `None` for a set no track drives.
    pub fn weight_targets(&self, set: usize) -> Option<usize> {
        self.weights
            .iter()
            .find(|w| w.set as usize == set)
            .map(|w| w.targets as usize)
    }

    /// The time sampled for `t`: clamped into the span, or wrapped into `[start, end)`.
    pub fn wrap_time(&self, t: f32, wrap: super::Wrap) -> f32 {
        super::curve::wrap_time(self.start, self.end, t, wrap)
    }

    /// How far `joint` (your order) moves from time `from` to time `to` (clip times, mapped by `wrap`),
    /// for root motion: the change of its translation, and of its rotation's yaw (the angle about +Y,
    /// glTF's up, in radians), both in its parent's space. With [`Wrap::Loop`](super::Wrap::Loop)
    /// the motion accumulates over whole cycles: from 0.5 to 2.5 cycles of a walk that moves one
    /// metre per cycle is two metres, and `to` before `from` moves backwards. A joint without a
    /// translation (rotation) track does not move (turn).
    ///
    /// # Errors
    /// [`Error::JointOutOfRange`]; [`Error::NotFinite`] for a time that is not finite;
    /// [`Error::ResultNotFinite`] for a motion that overflows `f32`.
    pub fn root_motion(
        &self,
        joint: usize,
        from: f32,
        to: f32,
        wrap: super::Wrap,
    ) -> Result<(Vec3, f32), Error> {
        self.root_motion_with(joint, from, to, wrap, Precision::Fast)
    }

    /// [`root_motion`](Clip::root_motion) with a precision: [`Precision::Deterministic`] samples the
    /// rotations and takes the yaw in portable arithmetic (the slerp of
    /// [`SamplingJob`](crate::SamplingJob)'s deterministic mode, and an `atan2` of plain `+ - * /` and
    /// `sqrt`), so the motion has the same bits on every platform, and agrees with the fast one within
    /// a few ulps.
    ///
    /// # Errors
    /// Those of `root_motion`, and for a deterministic call [`Error::FloatEnvironment`] when the
    /// calling thread's floating-point mode is not the default.
    pub fn root_motion_with(
        &self,
        joint: usize,
        from: f32,
        to: f32,
        wrap: super::Wrap,
        precision: Precision,
    ) -> Result<(Vec3, f32), Error> {
        let portable = precision == Precision::Deterministic;
        if portable {
            numeric::check_float_environment()?;
        }
        let level = *self.level_of.get(joint).ok_or(Error::JointOutOfRange {
            joint,
            joints: self.joints,
        })?;
        for (index, t) in [from, to].into_iter().enumerate() {
            if !t.is_finite() {
                return Err(Error::NotFinite {
                    what: "root motion times",
                    index,
                    value: t,
                });
            }
        }
        let find = |p: Property| {
            self.tracks
                .iter()
                .find(|t| t.level == level && t.property == p)
        };
        let translation = |t: f32| {
            find(Property::Translation).map_or(Vec3::ZERO, |tr| {
                self.sample_track(tr, t, portable).truncate()
            })
        };
        let yaw = |t: f32| {
            find(Property::Rotation).map_or(0.0, |tr| {
                let q = self.sample_track(tr, t, portable);
                let (x, y, z, w) = (q.x, q.y, q.z, q.w);
                let (sin, cos) = (2.0 * (w * y + x * z), 1.0 - 2.0 * (x * x + y * y));
                if portable {
                    super::portable::atan2(f64::from(sin), f64::from(cos)) as f32
                } else {
                    sin.atan2(cos)
                }
            })
        };
        // The cycle count and the time within the cycle, in f64 so that far times stay exact.
        let span = self.end - self.start;
        let place = |t: f32| -> (f64, f32) {
            match wrap {
                super::Wrap::Loop if span > 0.0 => {
                    let cycles = ((f64::from(t) - f64::from(self.start)) / f64::from(span)).floor();
                    (cycles, self.wrap_time(t, wrap))
                }
                _ => (0.0, self.wrap_time(t, wrap)),
            }
        };
        let ((n0, w0), (n1, w1)) = (place(from), place(to));
        let cycles = n1 - n0;
        let per_cycle_t = translation(self.end) - translation(self.start);
        let per_cycle_yaw = yaw(self.end) - yaw(self.start);
        let moved =
            per_cycle_t.as_dvec3() * cycles + (translation(w1) - translation(w0)).as_dvec3();
        let turned = f64::from(per_cycle_yaw) * cycles + f64::from(yaw(w1) - yaw(w0));
        let (moved, turned) = (moved.as_vec3(), turned as f32);
        if !moved.is_finite() || !turned.is_finite() {
            return Err(Error::ResultNotFinite {
                stage: "root motion",
                what: "motion",
                index: joint,
            });
        }
        Ok((moved, turned))
    }

    /// One track's value at time `t` (searched: for single queries, not per frame), in portable
    /// arithmetic where `portable`.
    fn sample_track(&self, track: &Track, t: f32, portable: bool) -> glam::Vec4 {
        let keys = self.keys_of(track);
        let at = super::curve::locate(keys.times, t);
        if portable {
            keys.sample_portable(at)
        } else {
            keys.sample_at(at)
        }
    }

    /// [`Error::ClipSkeleton`] unless every joint of the clip has the level-order place `order`
    /// gives it (a skeleton's `level_order()`), and the counts agree.
    pub(crate) fn check_joint_order(&self, order: &[usize]) -> Result<(), Error> {
        let differs = crate::skeleton::order_difference(
            self.level_of.iter().map(|&l| l as usize),
            order.iter().copied(),
        );
        match differs {
            Some(joint) => Err(Error::ClipSkeleton {
                joint,
                clip_joints: self.joints,
                joints: order.len(),
            }),
            None => Ok(()),
        }
    }

    /// A weight track's keys as the shared sampler reads them.
    pub(crate) fn weight_keys_of(&self, w: &WeightTrack) -> super::curve::WeightKeys<'_> {
        let times = self.timeline(w.timeline);
        let targets = w.targets as usize;
        let count = times
            .len()
            .saturating_mul(targets)
            .saturating_mul(w.interpolation.values_per_key());
        super::curve::WeightKeys {
            times,
            values: self.values_of(w.values, count),
            targets,
            interpolation: w.interpolation,
        }
    }

    /// A track's keys as the shared sampler reads them.
    pub(crate) fn keys_of(&self, track: &Track) -> super::curve::Keys<'_> {
        let times = self.timeline(track.timeline);
        let c = track.property.components();
        let count = times
            .len()
            .saturating_mul(c)
            .saturating_mul(track.interpolation.values_per_key());
        super::curve::Keys {
            times,
            values: self.values_of(track.values, count),
            components: c,
            interpolation: track.interpolation,
            rotation: track.property == Property::Rotation,
        }
    }

    /// Whether every joint has a translation, a rotation and a scale track (a sample then writes the
    /// whole pose). A joint has at most one track per property.
    pub(crate) fn covers_every_joint(&self) -> bool {
        self.tracks.len() == 3 * self.joints
    }

    /// The tracks of `property` in the sampling kernels' checked form.
    fn kernel_tracks(&self, property: Property) -> Option<KernelTracks> {
        let forms = self
            .tracks
            .iter()
            .filter(|t| t.property == property)
            .map(|t| TrackForm {
                level: t.level as usize,
                interp: t.interpolation.kernel_code(),
                timeline: t.timeline as usize,
                offset: t.values as usize,
                keys: self.timeline(t.timeline).len(),
            });
        KernelTracks::new(
            forms,
            property.components(),
            self.joints,
            self.values.len(),
            self.timelines.len(),
        )
    }

    /// The translation, rotation and scale tracks in the single-pose kernel's form.
    fn pose_tracks(&self) -> Option<PoseTracks> {
        let forms = self.tracks.iter().map(|t| {
            let keys = self.keys_of(t);
            PoseTrack {
                level: t.level as usize,
                property: t.property.index(),
                interp: t.interpolation.kernel_code(),
                timeline: t.timeline as usize,
                keys: keys.times.len(),
                values: keys.values,
            }
        });
        PoseTracks::new(forms, self.joints, self.timelines.len())
    }

    /// The key times of a timeline.
    pub(crate) fn timeline(&self, i: u32) -> &[f32] {
        self.timelines.get(i as usize).map_or(&[], |t| {
            let start = t.start as usize;
            self.times
                .get(start..start.saturating_add(t.len as usize))
                .unwrap_or(&[])
        })
    }

    /// The floats of a track that starts at `values` and holds `count` of them.
    pub(crate) fn values_of(&self, values: u32, count: usize) -> &[f32] {
        let start = values as usize;
        self.values
            .get(start..start.saturating_add(count))
            .unwrap_or(&[])
    }
}

/// Adds checked tracks to a new [`Clip`]; joints are named in your own order (the skeleton's original
/// indices). Each method checks its arrays (see the [module rules](crate::animation#rules)) and adds
/// nothing when it returns an error.
#[derive(Debug)]
pub struct ClipBuilder {
    level: Vec<usize>,
    clip: Clip,
}

impl ClipBuilder {
    /// Names the clip.
    pub fn name(&mut self, name: impl Into<String>) -> &mut ClipBuilder {
        self.clip.name = Some(name.into());
        self
    }

    /// Adds `joint`'s translation track: one value per key time (three per key for
    /// [`Interpolation::CubicSpline`]: in-tangent, value, out-tangent).
    pub fn translation(
        &mut self,
        joint: usize,
        interpolation: Interpolation,
        times: &[f32],
        values: &[Vec3],
    ) -> Result<&mut ClipBuilder, Error> {
        let flat: &[f32] = bytemuck::cast_slice(values);
        self.track(joint, Property::Translation, interpolation, times, flat)
    }

    /// Adds `joint`'s rotation track (x y z w); step and linear keys are stored normalized.
    pub fn rotation(
        &mut self,
        joint: usize,
        interpolation: Interpolation,
        times: &[f32],
        values: &[Quat],
    ) -> Result<&mut ClipBuilder, Error> {
        let flat: Vec<f32> = values.iter().flat_map(|q| q.to_array()).collect();
        self.track(joint, Property::Rotation, interpolation, times, &flat)
    }

    /// Adds `joint`'s scale track.
    pub fn scale(
        &mut self,
        joint: usize,
        interpolation: Interpolation,
        times: &[f32],
        values: &[Vec3],
    ) -> Result<&mut ClipBuilder, Error> {
        let flat: &[f32] = bytemuck::cast_slice(values);
        self.track(joint, Property::Scale, interpolation, times, flat)
    }

    /// Adds a track of `property` with flat values (3 or 4 floats per value), the form a file holds.
    pub fn track(
        &mut self,
        joint: usize,
        property: Property,
        interpolation: Interpolation,
        times: &[f32],
        values: &[f32],
    ) -> Result<&mut ClipBuilder, Error> {
        self.track_as(joint, property, interpolation, times, values, true)
    }

    /// [`ClipBuilder::track`]; `normalize: false` keeps rotation keys as given, for keys that are
    /// already normalized by the same function (the glTF importer's), where normalizing again could
    /// move a last bit.
    pub(crate) fn track_as(
        &mut self,
        joint: usize,
        property: Property,
        interpolation: Interpolation,
        times: &[f32],
        values: &[f32],
        normalize: bool,
    ) -> Result<&mut ClipBuilder, Error> {
        let what = property.keys_name();
        let Some(&level) = self.level.get(joint) else {
            return Err(Error::JointOutOfRange {
                joint,
                joints: self.level.len(),
            });
        };
        if self
            .clip
            .tracks
            .iter()
            .any(|t| t.level as usize == level && t.property == property)
        {
            return Err(Error::DuplicateTrack { what, index: joint });
        }
        let c = property.components();
        let per_key = interpolation.values_per_key();
        check_count(what, joint, times.len(), values.len(), c * per_key)?;
        check_times(what, joint, times)?;
        check_values(what, joint, values, c * per_key)?;
        let mut values = values.to_vec();
        if property == Property::Rotation {
            // The value of each key (the middle of a cubic key's three), not its tangents.
            let at = if per_key == 3 { 4 } else { 0 };
            for (key, k) in values.chunks_exact_mut(4 * per_key).enumerate() {
                let q = Quat::from_slice(&k[at..at + 4]);
                if !numeric::rotation_ok(q) {
                    return Err(Error::KeyRotation {
                        joint,
                        key,
                        squared_length: q.to_array().iter().map(|&v| f64::from(v).powi(2)).sum(),
                    });
                }
                if per_key == 1 && normalize {
                    k.copy_from_slice(&super::curve::unit(q).to_array());
                }
            }
        }
        let (timeline, values) = self.store(what, joint, times, &values)?;
        let track = Track {
            level: level as u32,
            property,
            interpolation,
            timeline,
            values,
        };
        let at = self
            .clip
            .tracks
            .partition_point(|t| (t.level, t.property as u8) < (track.level, property as u8));
        self.clip.tracks.insert(at, track);
        Ok(self)
    }

    /// Adds weight set `set`'s morph-target weights, `targets` per key (three blocks of `targets` per
    /// cubic key: in-tangents, values, out-tangents). A set is yours to number: a mesh, a primitive.
    pub fn weights(
        &mut self,
        set: usize,
        targets: usize,
        interpolation: Interpolation,
        times: &[f32],
        values: &[f32],
    ) -> Result<&mut ClipBuilder, Error> {
        let what = "weight keys";
        let set32 = u32::try_from(set).map_err(|_| Error::TooManyKeys {
            what,
            floats: set,
            max: MAX_CLIP_FLOATS,
        })?;
        if self.clip.weights.iter().any(|w| w.set == set32) {
            return Err(Error::DuplicateTrack { what, index: set });
        }
        let per_key = targets.saturating_mul(interpolation.values_per_key());
        if targets == 0 {
            return Err(Error::KeyCount {
                what,
                index: set,
                keys: times.len(),
                values: values.len(),
                per_key,
            });
        }
        check_count(what, set, times.len(), values.len(), per_key)?;
        check_times(what, set, times)?;
        check_values(what, set, values, per_key)?;
        let (timeline, values) = self.store(what, set, times, values)?;
        let track = WeightTrack {
            set: set32,
            targets: targets as u32,
            interpolation,
            timeline,
            values,
        };
        let at = self.clip.weights.partition_point(|w| w.set < set32);
        self.clip.weights.insert(at, track);
        self.clip.weight_sets = self.clip.weight_sets.max(set + 1);
        Ok(self)
    }

    /// The finished clip.
    pub fn build(&self) -> Clip {
        let mut clip = self.clip.clone();
        clip.id = OwnerId::new();
        if clip.timelines.is_empty() {
            (clip.start, clip.end) = (0.0, 0.0);
        }
        // Zeros after the last key, which the crowd kernel may read but never uses.
        clip.values.extend_from_slice(&[0.0; CROWD_READ_PAD]);
        let kernel = [Property::Translation, Property::Rotation, Property::Scale]
            .map(|p| clip.kernel_tracks(p));
        // Never None: the builder keeps every invariant the kernel forms check; the reference samples.
        clip.crowd_kernel = match kernel {
            [Some(t), Some(r), Some(s)] => CrowdTracks::merge(&[t, r, s]),
            _ => None,
        }
        .map(std::sync::Arc::new);
        clip.pose_kernel = clip.pose_tracks().map(std::sync::Arc::new);
        clip
    }

    /// Stores the times (as a new timeline, or the existing one with the same bits) and the values;
    /// returns the timeline and the values' offset. Checks the clip's size and span first.
    fn store(
        &mut self,
        what: &'static str,
        index: usize,
        times: &[f32],
        values: &[f32],
    ) -> Result<(u32, u32), Error> {
        let clip = &mut self.clip;
        let same = (0..clip.timelines.len() as u32).find(|&i| {
            let t = clip.timeline(i);
            t.len() == times.len() && t.iter().zip(times).all(|(a, b)| a.to_bits() == b.to_bits())
        });
        let new_times = if same.is_some() { 0 } else { times.len() };
        let floats = clip
            .times
            .len()
            .saturating_add(clip.values.len())
            .saturating_add(new_times)
            .saturating_add(values.len());
        if floats > MAX_CLIP_FLOATS {
            return Err(Error::TooManyKeys {
                what,
                floats,
                max: MAX_CLIP_FLOATS,
            });
        }
        // Both ends exist: check_count refused an empty track.
        let (first, last) = (times[0], times[times.len() - 1]);
        let (start, end) = (clip.start.min(first), clip.end.max(last));
        if !(end - start).is_finite() {
            return Err(Error::KeyTimes {
                what,
                index,
                key: 0,
            });
        }
        (clip.start, clip.end) = (start, end);
        // Every offset fits in u32: floats <= MAX_CLIP_FLOATS < 2^32.
        let timeline = same.unwrap_or_else(|| {
            clip.timelines.push(Timeline {
                start: clip.times.len() as u32,
                len: times.len() as u32,
            });
            clip.times.extend_from_slice(times);
            (clip.timelines.len() - 1) as u32
        });
        let offset = clip.values.len() as u32;
        clip.values.extend_from_slice(values);
        Ok((timeline, offset))
    }
}

/// At least one key, and `per_key` floats of values for each.
fn check_count(
    what: &'static str,
    index: usize,
    keys: usize,
    values: usize,
    per_key: usize,
) -> Result<(), Error> {
    if keys == 0 || keys.checked_mul(per_key) != Some(values) {
        return Err(Error::KeyCount {
            what,
            index,
            keys,
            values,
            per_key,
        });
    }
    Ok(())
}

/// Finite, strictly increasing, and every key's distance from the first finite.
fn check_times(what: &'static str, index: usize, times: &[f32]) -> Result<(), Error> {
    let first = times.first().copied().unwrap_or(0.0);
    let bad = times
        .iter()
        .position(|t| !t.is_finite())
        .or_else(|| times.windows(2).position(|w| w[1] <= w[0]).map(|k| k + 1))
        .or_else(|| times.iter().position(|&t| !(t - first).is_finite()));
    match bad {
        Some(key) => Err(Error::KeyTimes { what, index, key }),
        None => Ok(()),
    }
}

/// Every value finite; the error names the key.
fn check_values(
    what: &'static str,
    index: usize,
    values: &[f32],
    per_key: usize,
) -> Result<(), Error> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(Error::KeyNotFinite {
            what,
            index,
            key: i / per_key.max(1),
            value: values[i],
        }),
        None => Ok(()),
    }
}
