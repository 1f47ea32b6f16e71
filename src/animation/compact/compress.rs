//! [`Clip::compress`]: the frames, each track's level under the model-space error bound, and packing.

use super::bits::{Range, Writer, SEGMENT_FRAMES};
use super::decode::{dot, interpolate, unit};
use super::frames::{key_times, snapped, uniform_count, uniform_times, FrameAt, Frames};
use super::measure::{check_inputs, raw_weights, set, Truth};
use super::quantize::{
    drop_of, offsets_of, quantize, quantize_weights, record_order, Quantized, LEVELS,
};
use super::{
    CompactClip, CompactTrack, CompactWeights, Compression, Storage, MAX_COMPACT_FRAMES,
    MAX_COMPACT_VALUE, MAX_COMPACT_WEIGHT_SETS, MAX_COMPRESSION_POINTS,
};
use crate::animation::clip::Clip;
use crate::animation::curve::locate;
use crate::animation::{Interpolation, Property};
use crate::error::Error;
use crate::layout::trs::Trs;
use crate::skeleton::Skeleton;
use glam::Vec4;

/// The highest rate [`Compression::sample_rate`]`: None` reaches by doubling.
const AUTO_MAX_RATE: f64 = 240.0;

/// How many times a clip sampled at its own key times may have every interval halved, when its curves
/// bend between keys by more than the tolerance.
const MAX_HALVINGS: usize = 3;

/// The share of the tolerance each track gets on its own before the joint chains are measured
/// together: the first guess of its level.
const FIRST_SHARE: f64 = 0.5;

/// The most joint-time measurements the last pass (each track tried one level lower) may make: 2^28,
/// a few seconds. The long clip of the tests (201 tracks, 3,601 times, 67 joints) takes 2^25.6.
const LOWERING_BUDGET: usize = 1 << 28;

impl Clip {
    /// This clip in compact form (see the [module docs](super)), every joint and virtual point
    /// within `settings.tolerance` of the clip in model space where the frames allow it.
    ///
    /// `skeleton` is the skeleton the clip was built for and `rest` the pose it plays over, in level
    /// order (joints and properties without a track hold it; [`Character::level_rest`] gives a
    /// character's): the error is measured on the whole hierarchy.
    ///
    /// Frames: with `sample_rate: Some(r)`, uniform at `r` frames per second. With `None`, uniform at
    /// the rate of the closest keys when every key falls on that grid, else the clip's key times
    /// themselves; a clip whose curves still bend between frames by more than the tolerance (cubic
    /// splines) is sampled twice as densely, up to 240 frames per second or three halvings of its key
    /// intervals, and one that meets it at its key rate is tried at a half, a third, a quarter, a
    /// sixth and an eighth of it, keeping the smallest that still meets it (key reduction).
    /// [`CompactClip::error`] tells what was reached.
    ///
    /// # Errors
    /// [`Error::CompressionSetting`] for a tolerance, distance or weight tolerance that is not a finite
    /// positive number (the distance may be 0), or a sample rate outside `(0, MAX_SAMPLE_RATE]`;
    /// [`Error::ClipSkeleton`] for another skeleton than the clip's; [`Error::CountMismatch`],
    /// [`Error::NotFinite`] and [`Error::RotationLength`] for a rest pose without one finite entry per
    /// joint; [`Error::TooManyKeys`] for more than [`MAX_COMPACT_FRAMES`] frames, more than
    /// [`MAX_COMPACT_WEIGHT_SETS`](super::MAX_COMPACT_WEIGHT_SETS) weight sets, or more than
    /// [`MAX_COMPRESSION_POINTS`](super::MAX_COMPRESSION_POINTS) measured points;
    /// [`Error::CompactValue`] for a key or a value between keys beyond
    /// [`MAX_COMPACT_VALUE`](super::MAX_COMPACT_VALUE); [`Error::ResultNotFinite`] for a cubic track
    /// that overflows between its keys.
    ///
    /// [`Character::level_rest`]: crate::Character::level_rest
    pub fn compress(
        &self,
        skeleton: &Skeleton,
        rest: Trs<'_>,
        settings: &Compression,
    ) -> Result<CompactClip, Error> {
        check_inputs(self, skeleton, &rest, settings)?;
        if self.weight_sets > MAX_COMPACT_WEIGHT_SETS {
            return Err(Error::TooManyKeys {
                what: "compact clip weight sets",
                floats: self.weight_sets,
                max: MAX_COMPACT_WEIGHT_SETS,
            });
        }
        let keys = key_times(self);
        let attempt = |rate: f64, explicit: Option<&[f32]>| -> Result<(CompactClip, bool), Error> {
            let times = match explicit {
                Some(t) => t.to_vec(),
                None => snapped(
                    uniform_times(self.start, self.end, rate as f32)?,
                    &keys,
                    rate,
                ),
            };
            check_work(self, times.len(), keys.len())?;
            let truth = Truth::new(self, skeleton, &rest, settings.distance, &times);
            let frames = Frames {
                start: self.start,
                end: self.end,
                rate: if explicit.is_some() { 0.0 } else { rate as f32 },
                count: times.len(),
                explicit: if explicit.is_some() { &times } else { &[] },
            };
            let compressor = Compressor::new(self, settings, truth, frames, &times)?;
            Ok(compressor.run())
        };
        let (mut rate, mut explicit) = match settings.sample_rate {
            Some(r) => return Ok(attempt(f64::from(r), None)?.0),
            None => plan(self, &keys)?,
        };
        let mut halvings = 0;
        let mut last: Option<CompactClip> = None;
        loop {
            let (compact, met) = match (attempt(rate, explicit.as_deref()), last.take()) {
                (Ok(done), _) => done,
                // Denser frames would pass a limit: the last clip is as close as this gets.
                (Err(Error::TooManyKeys { .. }), Some(previous)) => return Ok(previous),
                (Err(e), _) => return Err(e),
            };
            if met && explicit.is_none() && halvings == 0 {
                return fewer_frames(compact, rate, &attempt);
            }
            if met || compact.frames < 2 {
                return Ok(compact);
            }
            last = Some(compact.clone());
            match &mut explicit {
                Some(t) if halvings < MAX_HALVINGS && 2 * t.len() <= MAX_COMPACT_FRAMES => {
                    *t = halved(t);
                    halvings += 1;
                }
                None if rate < AUTO_MAX_RATE => {
                    rate = (rate * 2.0).min(AUTO_MAX_RATE);
                    halvings += 1;
                }
                _ => return Ok(compact),
            }
        }
    }
}

/// One compression at a frame rate (or at stored frame times): the clip and whether it met the
/// tolerance.
type Attempt<'a> = dyn Fn(f64, Option<&[f32]>) -> Result<(CompactClip, bool), Error> + 'a;

/// Key reduction for uniform frames: the clip at its key rate divided by 2, 3, 4, 6 and 8 in turn
/// (down to 1 frame per second), while each still meets the tolerance at every frame, midpoint and
/// original key; the smallest that does. Smooth motion keyed at 24 or 60 per second often needs far
/// fewer frames at a coarse tolerance (ozz-animation's default, 1 mm at 10 cm, for example).
fn fewer_frames(best: CompactClip, rate: f64, attempt: &Attempt<'_>) -> Result<CompactClip, Error> {
    let mut best = best;
    for divisor in [2.0, 3.0, 4.0, 6.0, 8.0] {
        let lower = rate / divisor;
        if lower < 1.0 {
            break;
        }
        let Ok((compact, met)) = attempt(lower, None) else {
            break;
        };
        if !met {
            break;
        }
        if compact.stored_size() < best.stored_size() {
            best = compact;
        }
    }
    Ok(best)
}

/// The frames of `sample_rate: None`: the rate of the closest keys (a whole rate within 1e-3 of it, as
/// exporters mean it) when every key falls on its grid, else the key times themselves.
fn plan(clip: &Clip, keys: &[f32]) -> Result<(f64, Option<Vec<f32>>), Error> {
    let closest = keys
        .windows(2)
        .map(|p| f64::from(p[1]) - f64::from(p[0]))
        .fold(f64::INFINITY, f64::min);
    if !(closest.is_finite() && closest > 0.0) {
        return Ok((1.0, None));
    }
    let rate = 1.0 / closest;
    let whole = rate.round();
    let rate = if (rate - whole).abs() <= 1e-3 * rate {
        whole
    } else {
        rate
    };
    let start = f64::from(clip.start);
    let on_grid = keys.iter().all(|&t| {
        let f = (f64::from(t) - start) * rate;
        (f - f.round()).abs() <= 1e-3
    });
    // Uniform frames where they are not many more than the keys: two keys 1/240 s apart in a clip of
    // an hour would otherwise ask for 864,000 frames where a handful of keys say everything.
    let sparse =
        uniform_count(clip.start, clip.end, rate as f32).map_or(true, |n| n > 4 * keys.len() + 16);
    if on_grid && rate <= AUTO_MAX_RATE && !sparse {
        return Ok((rate, None));
    }
    if keys.len() > MAX_COMPACT_FRAMES {
        return Err(Error::TooManyKeys {
            what: "compact clip frames",
            floats: keys.len(),
            max: MAX_COMPACT_FRAMES,
        });
    }
    // The clip spans its keys: the first is its start and the last its end.
    Ok((0.0, Some(keys.to_vec())))
}

/// Refuses a compression whose measured points (every frame, midpoint and key, times the joints and
/// the weight targets) would pass [`MAX_COMPRESSION_POINTS`]: their memory and the search's work grow
/// with them.
fn check_work(clip: &Clip, frames: usize, keys: usize) -> Result<(), Error> {
    let targets: usize = clip.weights.iter().map(|w| w.targets as usize).sum();
    let points = frames
        .saturating_mul(2)
        .saturating_add(keys)
        .saturating_mul(clip.joints.saturating_add(targets));
    if points > MAX_COMPRESSION_POINTS {
        return Err(Error::TooManyKeys {
            what: "compression points (evaluation times times joints and weight targets)",
            floats: points,
            max: MAX_COMPRESSION_POINTS,
        });
    }
    Ok(())
}

/// `times` with the midpoint of every interval inserted.
fn halved(times: &[f32]) -> Vec<f32> {
    let mut out = Vec::with_capacity(2 * times.len());
    for p in times.windows(2) {
        out.push(p[0]);
        let mid = p[0] + (p[1] - p[0]) * 0.5;
        if mid > p[0] && mid < p[1] {
            out.push(mid);
        }
    }
    out.extend(times.last());
    out
}

/// A translation, rotation or scale track of the clip, sampled at the frames.
struct Source {
    level: usize,
    property: Property,
    step: bool,
    /// A rotation's component rebuilt from the others (see [`drop_of`]); `None` for other tracks.
    drop: Option<u8>,
    /// Per frame; a rotation normalized, with component `drop` not negative.
    samples: Vec<Vec4>,
}

/// A weight track of the clip, sampled at the frames.
struct WeightSource {
    set: u32,
    targets: usize,
    step: bool,
    /// Per frame, per target.
    samples: Vec<Vec<f32>>,
}

/// One compression at one placement of frames.
struct Compressor<'c> {
    clip: &'c Clip,
    settings: Compression,
    truth: Truth,
    frames: Frames<'c>,
    sources: Vec<Source>,
    weights: Vec<WeightSource>,
}

impl<'c> Compressor<'c> {
    fn new(
        clip: &'c Clip,
        settings: &Compression,
        truth: Truth,
        frames: Frames<'c>,
        times: &[f32],
    ) -> Result<Compressor<'c>, Error> {
        let mut sources = Vec::with_capacity(clip.tracks.len());
        for track in &clip.tracks {
            let keys = clip.keys_of(track);
            let rotation = track.property == Property::Rotation;
            let mut samples = Vec::with_capacity(times.len());
            for &t in times {
                let mut v = keys.sample_at(locate(keys.times, t));
                if !v.is_finite() {
                    return Err(Error::ResultNotFinite {
                        stage: "compression",
                        what: "sampled track values",
                        index: track.level as usize,
                    });
                }
                if rotation {
                    v = unit(v);
                }
                if let Some(&x) = v.as_ref().iter().find(|x| x.abs() > MAX_COMPACT_VALUE) {
                    return Err(Error::CompactValue {
                        what: track.property.keys_name(),
                        index: track.level as usize,
                        value: x,
                    });
                }
                samples.push(v);
            }
            let drop = rotation.then(|| drop_of(&samples));
            if let Some(d) = drop {
                for v in &mut samples {
                    if v[usize::from(d)] < 0.0 {
                        *v = -*v;
                    }
                }
            }
            sources.push(Source {
                level: track.level as usize,
                property: track.property,
                step: track.interpolation == Interpolation::Step,
                drop,
                samples,
            });
        }
        let mut weights = Vec::with_capacity(clip.weights.len());
        for w in &clip.weights {
            let targets = w.targets as usize;
            let mut samples = Vec::with_capacity(times.len());
            for &t in times {
                let mut out = vec![0.0; targets];
                raw_weights(clip, w, t, &mut out);
                if let Some(i) = out.iter().position(|x| !x.is_finite()) {
                    return Err(Error::ResultNotFinite {
                        stage: "compression",
                        what: "sampled morph weights",
                        index: i,
                    });
                }
                if let Some(&x) = out.iter().find(|x| x.abs() > MAX_COMPACT_VALUE) {
                    return Err(Error::CompactValue {
                        what: "weight keys",
                        index: w.set as usize,
                        value: x,
                    });
                }
                samples.push(out);
            }
            weights.push(WeightSource {
                set: w.set,
                targets,
                step: w.interpolation == Interpolation::Step,
                samples,
            });
        }
        Ok(Compressor {
            clip,
            settings: *settings,
            truth,
            frames,
            sources,
            weights,
        })
    }

    /// Per joint, the largest displacement over the evaluation times with every track decoded as
    /// `quantized` gives it.
    fn joint_errors(&self, quantized: &[Quantized]) -> Vec<f64> {
        let mut worst = vec![0.0f64; self.truth.joints];
        let mut pose = self.truth.rest.clone();
        let mut d = Vec::with_capacity(self.truth.joints * 4);
        for (e, &t) in self.truth.eval.iter().enumerate() {
            pose.clone_from(&self.truth.rest);
            let at = self.frames.locate(t);
            for (s, q) in self.sources.iter().zip(quantized) {
                set(&mut pose, s.level, s.property, value_at(q, s, at));
            }
            self.truth.displacements(e, &pose, &mut d);
            for (w, chunk) in worst.iter_mut().zip(d.chunks_exact(4)) {
                for &x in chunk {
                    // A NaN counts as beyond every tolerance (`max` would drop it).
                    if x.is_nan() || x > *w {
                        *w = x;
                    }
                }
            }
        }
        worst
    }

    /// A track's own error at a level, in model units at the end of its lever (the first guess and
    /// the order in which chains raise their tracks).
    fn own_error(&self, s: &Source, q: &Quantized) -> f64 {
        let (lever, parent_scale) = (self.truth.lever[s.level], self.truth.parent_scale[s.level]);
        let mut worst = 0.0f64;
        for (a, b) in s.samples.iter().zip(&q.decoded) {
            // A rotation turns the joint's points and its descendants about the joint by its angle (a
            // parent's uniform scale keeps angles), a scale moves them by its ratio, and a translation
            // moves them by itself times the parent's scale.
            let e = match s.property {
                Property::Rotation => {
                    // The angle between the rotations, 4 asin(|a - b| / 2) with b on a's side: acos of
                    // the dot product loses everything below 3e-4 radians in f32.
                    // Decoded frames are not normalized until interpolated (`rotation_of`).
                    let b = unit(*b);
                    let b = if dot(*a, b) < 0.0 { -b } else { b };
                    let chord = (a.as_dvec4() - b.as_dvec4()).length();
                    4.0 * (chord * 0.5).min(1.0).asin() * lever
                }
                Property::Translation => f64::from((*a - *b).length()) * parent_scale,
                Property::Scale => {
                    let size = f64::from(a.abs().max_element()).max(f64::from(f32::MIN_POSITIVE));
                    f64::from((*a - *b).length()) / size * lever
                }
            };
            if e.is_nan() || e > worst {
                worst = e;
            }
        }
        worst
    }

    /// Chooses every track's level and packs the clip; whether the tolerance was met.
    ///
    /// First each track on its own, the lowest level within a share of the tolerance. Then the joints
    /// together: on each joint beyond the tolerance, the track of it or of an ancestor with the largest
    /// own error rises a level, until every joint is within it or nothing can rise. Last, each animated
    /// track in turn, the most bits first, tries one level lower and keeps it where every joint stays
    /// within the tolerance.
    fn run(self) -> (CompactClip, bool) {
        let tolerance = f64::from(self.settings.tolerance);
        // Every track stores three components per frame (a rotation rebuilds its fourth).
        let quantize_at = |s: &Source, level: usize| quantize(&s.samples, 3, s.drop, level);
        let n = self.sources.len();
        let mut levels = Vec::with_capacity(n);
        let mut quantized = Vec::with_capacity(n);
        let mut own = Vec::with_capacity(n);
        for s in &self.sources {
            let mut level = 0;
            let mut q = quantize_at(s, level);
            let mut e = self.own_error(s, &q);
            while e > tolerance * FIRST_SHARE && level + 1 < LEVELS {
                level += 1;
                q = quantize_at(s, level);
                e = self.own_error(s, &q);
            }
            levels.push(level);
            quantized.push(q);
            own.push(e);
        }
        // The tracks of each joint, so that walking a chain looks at its joints' tracks only.
        let mut by_joint: Vec<Vec<usize>> = vec![Vec::new(); self.truth.joints];
        for (i, s) in self.sources.iter().enumerate() {
            if let Some(list) = by_joint.get_mut(s.level) {
                list.push(i);
            }
        }
        let mut met = false;
        for _ in 0..n * LEVELS + 1 {
            let errors = self.joint_errors(&quantized);
            let mut raise = vec![false; n];
            let mut over = false;
            for (l, &e) in errors.iter().enumerate() {
                if e <= tolerance {
                    continue;
                }
                over = true;
                let mut best: Option<usize> = None;
                let mut joint = Some(l);
                while let Some(j) = joint {
                    for &i in by_joint.get(j).map_or(&[][..], Vec::as_slice) {
                        // A track whose own error is a hundredth of the tolerance cannot be what
                        // the joint misses by (resampling can be): raising it would only cost bits.
                        if levels[i] + 1 < LEVELS
                            && own[i] > tolerance * 0.01
                            && best.is_none_or(|b: usize| own[i] > own[b])
                        {
                            best = Some(i);
                        }
                    }
                    joint = self.truth.parents.get(j).copied().flatten();
                }
                if let Some(b) = best {
                    raise[b] = true;
                }
            }
            if !over {
                met = true;
                break;
            }
            if !raise.contains(&true) {
                break;
            }
            for (i, _) in raise.iter().enumerate().filter(|(_, r)| **r) {
                levels[i] += 1;
                quantized[i] = quantize_at(&self.sources[i], levels[i]);
                own[i] = self.own_error(&self.sources[i], &quantized[i]);
            }
        }
        // One measure of the whole clip per animated track: within a budget of measured points (a clip
        // this large keeps the levels the chains chose).
        let measures = n
            .saturating_mul(self.truth.eval.len())
            .saturating_mul(self.truth.joints);
        if met && measures <= LOWERING_BUDGET {
            let mut order: Vec<usize> = (0..n).filter(|&i| levels[i] > 0).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(levels[i]));
            for i in order {
                let lower = quantize_at(&self.sources[i], levels[i] - 1);
                let kept = std::mem::replace(&mut quantized[i], lower);
                if self
                    .joint_errors(&quantized)
                    .iter()
                    .all(|&e| e <= tolerance)
                {
                    levels[i] -= 1;
                } else {
                    quantized[i] = kept;
                }
            }
        }
        // The frames meet the bound only where the weights meet theirs too: a clip of weight tracks
        // alone must not be thinned or left coarse on its joints' say.
        let (weights, weights_met) = self.weight_levels();
        (self.pack(&quantized, weights), met && weights_met)
    }

    /// Each weight track at the lowest level within the weight tolerance at every evaluation time (the
    /// highest level where none is), and whether every track met it.
    fn weight_levels(&self) -> (Vec<Quantized>, bool) {
        let tolerance = self.settings.weight_tolerance;
        let mut out = Vec::with_capacity(self.weights.len());
        let mut met = true;
        for w in &self.weights {
            let raw_track = self.clip.weights.iter().find(|r| r.set == w.set);
            let raw: Vec<Vec<f32>> = self
                .truth
                .eval
                .iter()
                .map(|&t| {
                    let mut v = vec![0.0; w.targets];
                    if let Some(r) = raw_track {
                        raw_weights(self.clip, r, t, &mut v);
                    }
                    v
                })
                .collect();
            let mut level = 0;
            let q = loop {
                let q = quantize_weights(&w.samples, w.targets, level);
                let ok = self.truth.eval.iter().zip(&raw).all(|(&t, raw)| {
                    let at = self.frames.locate(t);
                    raw.iter().enumerate().all(|(c, &r)| {
                        (weight_at(&q, w.targets, w.step, at, c) - r).abs() <= tolerance
                    })
                });
                if ok || level + 1 == LEVELS {
                    met &= ok;
                    break q;
                }
                level += 1;
            };
            out.push(q);
        }
        (out, met)
    }

    /// The compact clip of the chosen quantizations.
    fn pack(&self, quantized: &[Quantized], weights: Vec<Quantized>) -> CompactClip {
        let mut constants = Vec::new();
        let mut columns: Vec<Column> = Vec::new();
        let mut store = |q: &Quantized, n: usize| -> Storage {
            match &q.stored {
                None => {
                    let at = constants.len() as u32;
                    constants.extend_from_slice(&q.constant);
                    Storage::Constant(at)
                }
                Some(st) => {
                    let at = columns.len() as u32;
                    let segments = st.segments.len() / n.max(1);
                    let frames = st.q.len() / n.max(1);
                    for c in 0..n {
                        columns.push((
                            st.ranges[c],
                            st.rates[c],
                            (0..segments).map(|s| st.segments[s * n + c]).collect(),
                            (0..frames).map(|f| st.q[f * n + c]).collect(),
                        ));
                    }
                    Storage::Animated(at)
                }
            }
        };
        let tracks: Vec<CompactTrack> = self
            .sources
            .iter()
            .zip(quantized)
            .map(|(s, q)| CompactTrack {
                level: s.level as u32,
                property: s.property,
                step: s.step,
                drop: s.drop.unwrap_or(0),
                storage: store(q, 3),
            })
            .collect();
        let weight_tracks: Vec<CompactWeights> = self
            .weights
            .iter()
            .zip(&weights)
            .map(|(w, q)| CompactWeights {
                set: w.set,
                targets: w.targets as u32,
                step: w.step,
                storage: store(q, w.targets),
            })
            .collect();
        let frames = self.frames.count;
        let segments = frames.div_ceil(SEGMENT_FRAMES);
        let ranges: Vec<Range> = columns.iter().map(|c| c.0).collect();
        let rates: Vec<u8> = columns.iter().map(|c| c.1).collect();
        let order = record_order(&tracks, columns.len());
        let (offsets, record_bits) = offsets_of(&rates, &order);
        let mut segment_ranges = Vec::with_capacity(segments * columns.len() * 2);
        for s in 0..segments {
            for c in &columns {
                segment_ranges.extend_from_slice(&c.2.get(s).copied().unwrap_or([0, 0]));
            }
        }
        let mut w = Writer::default();
        for f in 0..frames {
            for c in order.iter().filter_map(|&k| columns.get(k)) {
                w.push(c.3.get(f).copied().unwrap_or(0), c.1);
            }
            // The record's last byte (`offsets_of` counts whole bytes).
            w.align_to_byte();
        }
        CompactClip {
            name: self.clip.name.clone(),
            joints: self.clip.joints,
            level_of: self.clip.level_of.clone(),
            start: self.clip.start,
            end: self.clip.end,
            rate: self.frames.rate,
            frames,
            times: self.frames.explicit.to_vec(),
            tracks,
            weights: weight_tracks,
            weight_sets: self.clip.weight_sets,
            constants,
            ranges,
            rates,
            offsets,
            record_bits,
            segment_ranges,
            stream: w.finish(),
            lanes: std::sync::OnceLock::new(),
            id: crate::skeleton::OwnerId::new(),
        }
    }
}

/// One animated component as packed: its range, bit rate, segment ranges and per-frame codes.
type Column = (Range, u8, Vec<[u8; 2]>, Vec<u32>);

/// Weight `c` of a quantized weight track at `at`.
fn weight_at(q: &Quantized, targets: usize, step: bool, at: FrameAt, c: usize) -> f32 {
    let get = |f: usize| q.decoded.get(f * targets + c).map_or(0.0, |v| v.x);
    interpolate(
        Vec4::splat(get(at.i)),
        Vec4::splat(get(at.i + 1)),
        at,
        false,
        step,
    )
    .x
}

/// A track's decoded value at `at`.
fn value_at(q: &Quantized, s: &Source, at: FrameAt) -> Vec4 {
    let get = |f: usize| q.decoded.get(f).copied().unwrap_or(Vec4::ZERO);
    interpolate(
        get(at.i),
        get(at.i + 1),
        at,
        s.property == Property::Rotation,
        s.step,
    )
}
