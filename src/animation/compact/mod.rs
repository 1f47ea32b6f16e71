//! Compact clips: a [`Clip`](super::Clip) resampled at uniform frames and quantized, several times
//! smaller, sampled at any time in any direction without decoding from the start.
//!
//! [`Clip::compress`](super::Clip::compress) turns a clip into a [`CompactClip`] under an error bound;
//! [`CompactSamplingJob`] samples it into a local pose as [`SamplingJob`](super::SamplingJob) samples
//! the clip, keeping the frames it decoded in a [`CompactContext`] (as a
//! [`SamplingContext`](super::SamplingContext) keeps cursors) so that playback decodes each frame once;
//! [`CompactClip::to_bytes`] and [`CompactClip::from_bytes`] store and load it.
//!
//! ```
//! use ispc_skinning::glam::{Quat, Vec3};
//! use ispc_skinning::{
//!     Clip, CompactContext, CompactSamplingJob, Compression, Interpolation, Skeleton, Trs, TrsMut,
//! };
//!
//! let skeleton = Skeleton::from_parents(&[None, Some(0)])?;
//! let times: Vec<f32> = (0..61).map(|i| i as f32 / 30.0).collect();
//! let turns: Vec<Quat> = times.iter().map(|&t| Quat::from_rotation_z(t)).collect();
//! let mut clip = Clip::builder(&skeleton);
//! clip.rotation(1, Interpolation::Linear, &times, &turns)?;
//! let clip = clip.build();
//!
//! // The rest pose the clip plays over, in level order (Character::level_rest gives a character's).
//! let (t, q, s) = (vec![Vec3::Y; 2], vec![Quat::IDENTITY; 2], vec![Vec3::ONE; 2]);
//! let compact = clip.compress(&skeleton, Trs::new(&t, &q, &s), &Compression::default())?;
//! let bytes = compact.to_bytes();
//! let loaded = ispc_skinning::CompactClip::from_bytes(&bytes)?;
//!
//! // One context per character, kept from frame to frame.
//! let mut context = CompactContext::new();
//! let (mut t, mut q, mut s) = (t.clone(), q.clone(), s.clone());
//! for frame in 0..=30 {
//!     CompactSamplingJob::new(&loaded, TrsMut::new(&mut t, &mut q, &mut s))
//!         .time(frame as f32 / 60.0)
//!         .context(&mut context)
//!         .run()?;
//! }
//! let level = skeleton.level_index(1).unwrap();
//! assert!(q[level].angle_between(Quat::from_rotation_z(0.5)) < 1e-3);
//! # Ok::<(), ispc_skinning::Error>(())
//! ```
//!
//! # Format
//! Every track (translation, rotation, scale, morph weights) is sampled at uniform frames from the
//! clip's start, at the clip's own key rate by default ([`Compression::sample_rate`]), and at its end.
//! - A track whose samples stay within the error bound of one value is stored as that value, in `f32`
//!   (a constant track).
//! - Every other track stores each frame: each component is reduced into its range over the clip, and
//!   that range again into the range of each segment of 16 frames (each end in 8 bits, 255ths of the
//!   clip's range), then quantized: each track's level sets the bits of its widest component (3 to 24),
//!   and each other component gets the fewest bits whose step is no coarser, none where its whole
//!   range fits in one step (a knee turns about one axis). A rotation stores
//!   three of its four components, with the fourth not negative: the fourth is rebuilt as
//!   `sqrt(1 - a² - b² - c²)`. Which one is chosen per track, the one whose smallest magnitude over the
//!   clip is largest, so that the square root stays well conditioned (dropping `w` of a bone turned
//!   half a turn lost 1e-3 radians at 24 bits).
//! - The frames are packed one after the other, each the same number of bits, so a time finds its two
//!   frames by one multiplication (uniform frames) or one binary search (stored frame times), then
//!   reads each track there: any time, any direction, without a cursor or decoding from the start.
//!
//! A clip whose keys do not all fall on one grid (Fox's Run holds a 0.2 s interval among 1/24 s ones)
//! is sampled at its own key times, which are then stored, rather than resampled: uniform frames
//! would miss its corners.
//!
//! Sampling interpolates linearly between the two frames around the time: rotations by normalized
//! lerp along the shorter arc, step tracks take the earlier frame.
//!
//! # The error bound
//! The compressor measures what a user sees: for every joint, the joint and three virtual points at
//! [`Compression::distance`] from it along its axes (in model space: ACL's measure), moved by the
//! model matrix of the raw clip and by that of the compact clip, at every frame, halfway between
//! frames and at every key. It raises the bit rates of the tracks of the joint where the displacement
//! is largest, or of its ancestors, until no displacement exceeds [`Compression::tolerance`] or no
//! more bits help (the frames themselves then miss the clip; see [`Clip::compress`](super::Clip::compress)
//! for what it does next). [`CompactClip::error`] measures a compact clip against its clip the same
//! way. Morph weights are bounded by [`Compression::weight_tolerance`] on their own.

mod bits;
mod bytes;
mod compress;
mod context;
mod decode;
mod frames;
mod lanes;
mod measure;
mod quantize;

pub use context::CompactContext;
pub use decode::CompactSamplingJob;

use super::Property;
use crate::layout::compact::CompactLanes;
use bits::Range;

/// The most frames a compact clip holds: 2^20 (about 4.8 hours at 60 frames per second).
pub const MAX_COMPACT_FRAMES: usize = 1 << 20;

/// The highest sample rate [`Compression::sample_rate`] may ask for, in frames per second.
pub const MAX_SAMPLE_RATE: f32 = 1000.0;

/// The largest magnitude of a value a compact clip stores (a key, or the clip between keys): a sixth of
/// `f32::MAX`, so that no decoded value, nor the difference of two, overflows.
pub const MAX_COMPACT_VALUE: f32 = f32::MAX / 6.0;

/// The most weight sets a compact clip drives (glTF's default node limit): a sampled weight output
/// holds one list per set.
pub const MAX_COMPACT_WEIGHT_SETS: usize = 1 << 16;

/// The most measured points one compression may hold: evaluation times (every frame, every midpoint
/// and every key) times the joints and morph-weight targets. 2^23 points take about 1.4 GB of f64
/// model-space points; a 10-minute, 100-joint clip at 60 frames per second needs 7.2 million.
pub const MAX_COMPRESSION_POINTS: usize = 1 << 23;

/// The settings of [`Clip::compress`](super::Clip::compress).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compression {
    /// The largest displacement allowed of a joint, or of a virtual point at
    /// [`distance`](Compression::distance) from it, in the clip's units (metres in glTF). Default
    /// `1e-4`: 0.01 cm, ACL's default error.
    pub tolerance: f32,
    /// How far from each joint its virtual points lie, in model space. Default `0.03`: 3 cm, a
    /// character's skin around a bone.
    pub distance: f32,
    /// The largest error allowed of a morph-target weight. Default `1e-3`.
    pub weight_tolerance: f32,
    /// Frames per second to sample the clip at; `None` (the default) takes the rate of the clip's
    /// closest keys (at most 240 frames per second). Each frame costs its bits whether or not a key
    /// falls there.
    pub sample_rate: Option<f32>,
}

impl Default for Compression {
    fn default() -> Compression {
        Compression {
            tolerance: 1e-4,
            distance: 0.03,
            weight_tolerance: 1e-3,
            sample_rate: None,
        }
    }
}

/// How far a compact clip is from its clip ([`CompactClip::error`]), over every joint, virtual point
/// and measured time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipError {
    /// The largest displacement of a joint or virtual point, in the clip's units.
    pub max: f64,
    /// The 99th percentile of the displacements.
    pub p99: f64,
    /// The largest error of a morph-target weight (0 without weight tracks).
    pub weights: f64,
    /// How many displacements were measured.
    pub points: usize,
}

/// Where a track's values are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Storage {
    /// One value: its first float in [`CompactClip::constants`].
    Constant(u32),
    /// One value per frame: its first component (in [`CompactClip::ranges`] and the frames).
    Animated(u32),
}

/// One joint's translation, rotation or scale.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CompactTrack {
    /// The joint, in level order.
    pub(crate) level: u32,
    pub(crate) property: Property,
    /// Holds the earlier frame instead of interpolating (the clip's step tracks).
    pub(crate) step: bool,
    /// A stored rotation's component rebuilt from the other three (0 to 3, x y z w); 0 for other
    /// tracks.
    pub(crate) drop: u8,
    pub(crate) storage: Storage,
}

/// One weight set's morph-target weights.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CompactWeights {
    pub(crate) set: u32,
    pub(crate) targets: u32,
    pub(crate) step: bool,
    pub(crate) storage: Storage,
}

/// A clip in compact form (see the [module docs](self)): made by
/// [`Clip::compress`](super::Clip::compress), sampled by [`CompactSamplingJob`], stored by
/// [`to_bytes`](CompactClip::to_bytes) and loaded, every byte checked, by
/// [`from_bytes`](CompactClip::from_bytes).
#[derive(Clone, Debug)]
pub struct CompactClip {
    pub(crate) name: Option<String>,
    pub(crate) joints: usize,
    /// Each joint's level-order index, in the skeleton's original order.
    pub(crate) level_of: Vec<u32>,
    pub(crate) start: f32,
    pub(crate) end: f32,
    /// Uniform frames per second: frame `i` is at `start + i / rate`, but the last, at `end`; 0 where
    /// the frame times are stored.
    pub(crate) rate: f32,
    /// At least 1 (exactly 1 when `start == end`).
    pub(crate) frames: usize,
    /// The frame times where they are not uniform (strictly increasing from `start` to `end`, one per
    /// frame); empty for uniform frames.
    pub(crate) times: Vec<f32>,
    /// Sorted by level-order joint, then property.
    pub(crate) tracks: Vec<CompactTrack>,
    /// Sorted by set.
    pub(crate) weights: Vec<CompactWeights>,
    pub(crate) weight_sets: usize,
    pub(crate) constants: Vec<f32>,
    /// Per animated component: its range over the clip.
    pub(crate) ranges: Vec<Range>,
    /// Per animated component: its bit rate.
    pub(crate) rates: Vec<u8>,
    /// Per animated component: its first bit in a frame's record (the sum of the rates of the
    /// components before it in the record's order: `quantize::record_order`).
    pub(crate) offsets: Vec<usize>,
    /// The bits of one frame: the sum of the rates, up to whole bytes (`quantize::offsets_of`).
    pub(crate) record_bits: usize,
    /// Per segment, per animated component: the segment range's `(m, e)` (see [`Range::segment`]).
    pub(crate) segment_ranges: Vec<u8>,
    /// The frames' records, one after the other, padded.
    pub(crate) stream: Vec<u8>,
    /// The compact sampling kernel's tables, built when a kernel first samples the clip (`None` for a
    /// clip they cannot describe, which the serial decoder samples).
    pub(crate) lanes: std::sync::OnceLock<Option<CompactLanes>>,
    /// The clip's identity, which a [`CompactContext`] follows (a clone keeps it: same content).
    pub(crate) id: crate::skeleton::OwnerId,
}

impl PartialEq for CompactClip {
    /// Equal content.
    fn eq(&self, other: &CompactClip) -> bool {
        self.name == other.name
            && self.joints == other.joints
            && self.level_of == other.level_of
            && self.start.to_bits() == other.start.to_bits()
            && self.end.to_bits() == other.end.to_bits()
            && self.rate.to_bits() == other.rate.to_bits()
            && self.frames == other.frames
            && self.times == other.times
            && self.tracks == other.tracks
            && self.weights == other.weights
            && self.weight_sets == other.weight_sets
            && self.constants == other.constants
            && self.ranges == other.ranges
            && self.rates == other.rates
            && self.segment_ranges == other.segment_ranges
            && self.stream == other.stream
    }
}

impl CompactClip {
    /// The clip's name, when it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The joints of the skeleton it was made for: the length every sampled pose must have.
    pub fn joints(&self) -> usize {
        self.joints
    }

    /// The time of its first frame (its clip's start).
    pub fn start(&self) -> f32 {
        self.start
    }

    /// The time of its last frame (its clip's end).
    pub fn end(&self) -> f32 {
        self.end
    }

    /// `end - start`.
    pub fn duration(&self) -> f32 {
        self.end - self.start
    }

    /// How many frames it stores.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Its frames per second (the last frame, at [`end`](CompactClip::end), may come sooner); `None`
    /// where its frames are the clip's own key times, which are not on one grid.
    pub fn sample_rate(&self) -> Option<f32> {
        self.times.is_empty().then_some(self.rate)
    }

    /// How many translation, rotation and scale tracks it has.
    pub fn tracks(&self) -> usize {
        self.tracks.len()
    }

    /// How many of those are stored as one value.
    pub fn constant_tracks(&self) -> usize {
        self.tracks
            .iter()
            .filter(|t| matches!(t.storage, Storage::Constant(_)))
            .count()
    }

    /// How many weight sets a sampled weight output must have (as [`Clip::weight_sets`](super::Clip::weight_sets)).
    pub fn weight_sets(&self) -> usize {
        self.weight_sets
    }

    /// The number of morph targets weight set `set` has; `None` for a set no track drives.
    pub fn weight_targets(&self, set: usize) -> Option<usize> {
        self.weights
            .iter()
            .find(|w| w.set as usize == set)
            .map(|w| w.targets as usize)
    }

    /// The bits of one frame: the sum of every animated component's bit rate, up to whole bytes (each
    /// frame's record starts on a byte).
    pub fn frame_bits(&self) -> usize {
        self.record_bits
    }

    /// Whether it has a translation, a rotation and a scale track for every joint (then a sample
    /// writes every joint, and nothing need be under it).
    pub(crate) fn covers_every_joint(&self) -> bool {
        self.tracks.len() == 3 * self.joints
    }

    /// The time sampled for `t`: clamped into the span, or wrapped into `[start, end)`.
    pub fn wrap_time(&self, t: f32, wrap: super::Wrap) -> f32 {
        super::curve::wrap_time(self.start, self.end, t, wrap)
    }

    /// Its frame placement.
    pub(crate) fn placement(&self) -> frames::Frames<'_> {
        frames::Frames {
            start: self.start,
            end: self.end,
            rate: self.rate,
            count: self.frames,
            explicit: &self.times,
        }
    }

    /// Every frame's time.
    pub(crate) fn frame_times(&self) -> Vec<f32> {
        self.placement().times()
    }

    /// Where time `t` (inside the span, after wrapping) falls among the frames.
    pub(crate) fn frame_at(&self, t: f32) -> frames::FrameAt {
        self.placement().locate(t)
    }
}
