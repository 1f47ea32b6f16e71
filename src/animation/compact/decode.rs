//! Sampling a [`CompactClip`]: [`CompactSamplingJob`], and the decoding the compressor measures with.

use super::bits::{read, SEGMENT_FRAMES};
use super::frames::FrameAt;
use super::{CompactClip, CompactContext, CompactTrack, CompactWeights, Storage};
use crate::animation::{Property, Wrap};
use crate::backend::{Backend, KernelFamily, Resolved};
use crate::error::Error;
use crate::layout::trs::TrsMut;
use glam::{Quat, Vec4};

impl CompactClip {
    /// Animated component `k` at frame `f` (0 for a component or frame the clip does not have).
    pub(crate) fn component(&self, f: usize, k: usize) -> f32 {
        let (Some(&range), Some(&bits), Some(&offset)) =
            (self.ranges.get(k), self.rates.get(k), self.offsets.get(k))
        else {
            return 0.0;
        };
        let at = (f / SEGMENT_FRAMES)
            .saturating_mul(self.ranges.len())
            .saturating_add(k)
            .saturating_mul(2);
        let (m, e) = match self.segment_ranges.get(at..at.saturating_add(2)) {
            Some(&[m, e]) => (m, e),
            _ => (0, 0),
        };
        let q = read(
            &self.stream,
            f.saturating_mul(self.record_bits).saturating_add(offset),
            bits,
        );
        range.segment(m, e).decode(q, bits)
    }

    /// Three components from `k` at frame `f`: the segment and the record found once.
    fn components(&self, f: usize, k: usize) -> Vec4 {
        let components = self.ranges.len();
        let segment = (f / SEGMENT_FRAMES).saturating_mul(components);
        let record = f.saturating_mul(self.record_bits);
        let mut v = [0.0; 4];
        for (c, x) in v.iter_mut().enumerate().take(3) {
            let i = k + c;
            let (Some(&range), Some(&bits), Some(&offset)) =
                (self.ranges.get(i), self.rates.get(i), self.offsets.get(i))
            else {
                continue;
            };
            let at = segment.saturating_add(i).saturating_mul(2);
            let (m, e) = match self.segment_ranges.get(at..at.saturating_add(2)) {
                Some(&[m, e]) => (m, e),
                _ => (0, 0),
            };
            let q = read(&self.stream, record.saturating_add(offset), bits);
            *x = range.segment(m, e).decode(q, bits);
        }
        Vec4::from(v)
    }

    /// A stored rotation frame (see [`rotation_of`]).
    fn rotation_frame(&self, f: usize, k: usize, drop: u8) -> Vec4 {
        let v = self.components(f, k);
        rotation_of([v.x, v.y, v.z], drop)
    }

    /// The value of a translation, rotation or scale track at `at` (a rotation normalized, x y z w;
    /// else x y z 0).
    pub(crate) fn track_value(&self, track: &CompactTrack, at: FrameAt) -> Vec4 {
        let (property, step, storage) = (track.property, track.step, track.storage);
        let rotation = property == Property::Rotation;
        match storage {
            Storage::Constant(c) => {
                let c = c as usize;
                let n = if rotation { 4 } else { 3 };
                let mut v = [0.0; 4];
                if let Some(src) = self.constants.get(c..c.saturating_add(n)) {
                    v[..n].copy_from_slice(src);
                }
                // A loaded constant rotation is unit within 1e-4 (from_bytes): normalized here, as
                // every sampled rotation is, and as the compressor measured it.
                if rotation {
                    unit(Vec4::from(v))
                } else {
                    Vec4::from(v)
                }
            }
            Storage::Animated(k) => {
                let k = k as usize;
                let frame = |f: usize| {
                    if rotation {
                        self.rotation_frame(f, k, track.drop)
                    } else {
                        self.components(f, k)
                    }
                };
                interpolate(frame(at.i), frame(at.i + 1), at, rotation, step)
            }
        }
    }

    /// Writes a weight track's weights at `at` into `out` (the first `min(out.len(), targets)`).
    pub(crate) fn weights_into(&self, w: &CompactWeights, at: FrameAt, out: &mut [f32]) {
        let (step, storage) = (w.step, w.storage);
        for (t, o) in out.iter_mut().enumerate().take(w.targets as usize) {
            *o = match storage {
                Storage::Constant(c) => self
                    .constants
                    .get((c as usize).saturating_add(t))
                    .copied()
                    .unwrap_or(0.0),
                Storage::Animated(k) => {
                    let k = (k as usize).saturating_add(t);
                    let (a, b) = (self.component(at.i, k), self.component(at.i + 1, k));
                    interpolate(Vec4::splat(a), Vec4::splat(b), at, false, step).x
                }
            };
        }
    }

    /// Samples every track at `t` (already wrapped) into a level-order pose and weight sets, without
    /// checks (the job's and the compressor's core).
    pub(crate) fn sample_into(&self, t: f32, out: &mut TrsMut<'_>, weights: &mut [Vec<f32>]) {
        let at = self.frame_at(t);
        self.tracks_into(at, out);
        self.all_weights_into(at, weights);
    }

    /// The translation, rotation and scale tracks at `at`, by the serial decoder.
    fn tracks_into(&self, at: FrameAt, out: &mut TrsMut<'_>) {
        for track in &self.tracks {
            let v = self.track_value(track, at);
            let l = track.level as usize;
            match track.property {
                Property::Translation => {
                    if let Some(o) = out.translations.get_mut(l) {
                        *o = v.truncate();
                    }
                }
                Property::Rotation => {
                    if let Some(o) = out.rotations.get_mut(l) {
                        *o = Quat::from_vec4(v);
                    }
                }
                Property::Scale => {
                    if let Some(o) = out.scales.get_mut(l) {
                        *o = v.truncate();
                    }
                }
            }
        }
    }

    /// Every weight track at `at` into its set of `weights` (none where `weights` is empty).
    fn all_weights_into(&self, at: FrameAt, weights: &mut [Vec<f32>]) {
        for w in &self.weights {
            if let Some(out) = weights.get_mut(w.set as usize) {
                self.weights_into(w, at, out);
            }
        }
    }

    /// The translation, rotation and scale tracks at `at` on the compact kernel of `isa`, which gives
    /// the serial decoder's bits; by the serial decoder where the clip has no kernel tables.
    pub(super) fn kernel_tracks_into(
        &self,
        isa: crate::ffi::Runnable,
        at: FrameAt,
        out: TrsMut<'_>,
    ) {
        let Some(lanes) = self.lanes() else {
            let mut out = out;
            return self.tracks_into(at, &mut out);
        };
        let TrsMut {
            translations,
            rotations,
            scales,
        } = out;
        crate::ffi::compact::compact_sample(
            isa,
            lanes,
            &self.stream,
            [lanes.record(at.i), lanes.record(at.i.saturating_add(1))],
            at.alpha,
            (
                bytemuck::cast_slice_mut(translations),
                bytemuck::cast_slice_mut(rotations),
                bytemuck::cast_slice_mut(scales),
            ),
        );
    }
}

/// The value between two decoded frames: linear, rotations by normalized lerp along the shorter arc,
/// and the earlier frame for a step track (the later one at the end of the last interval).
pub(crate) fn interpolate(a: Vec4, b: Vec4, at: FrameAt, rotation: bool, step: bool) -> Vec4 {
    let v = if step {
        if at.alpha >= 1.0 {
            b
        } else {
            a
        }
    } else if at.alpha <= 0.0 {
        a
    } else if rotation {
        let b = if dot(a, b) < 0.0 { -b } else { b };
        a + (b - a) * at.alpha
    } else {
        a + (b - a) * at.alpha
    };
    // Rotation frames are rebuilt without normalizing (see `rotation_of`): one normalization here.
    if rotation {
        unit_scaled(v)
    } else {
        v
    }
}

/// A rotation from its three stored components, the components other than `drop` in order: component
/// `drop` (not negative) is `sqrt(1 - a² - b² - c²)` (0 where quantized components are a little
/// longer than 1). Not normalized: [`interpolate`] normalizes the value it returns.
pub(crate) fn rotation_of(kept: [f32; 3], drop: u8) -> Vec4 {
    let [a, b, c] = kept;
    let rebuilt = (1.0 - (a * a + b * b + c * c)).max(0.0).sqrt();
    let q = match drop {
        0 => [rebuilt, a, b, c],
        1 => [a, rebuilt, b, c],
        2 => [a, b, rebuilt, c],
        _ => [a, b, c, rebuilt],
    };
    Vec4::from(q)
}

/// `a . b` summed `(x + y) + (z + w)`, in that order on every platform (glam's `dot` sums in the
/// order of each target's SIMD shuffles): the decoder is plain `+ - * /` and `sqrt` in a fixed order,
/// so a compact clip samples to the same bits everywhere.
pub(crate) fn dot(a: Vec4, b: Vec4) -> f32 {
    (a.x * b.x + a.y * b.y) + (a.z * b.z + a.w * b.w)
}

/// `q / |q|` (the length summed x, y, z, w in order), or the identity for a zero length.
///
/// Loading normalizes constant rotations with it, and the compressor its keys; a sampled value between
/// frames takes [`unit_scaled`].
pub(crate) fn unit(q: Vec4) -> Vec4 {
    let len2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    if len2.is_normal() {
        q / len2.sqrt()
    } else {
        Vec4::W
    }
}

/// Samples a [`CompactClip`] at one time into a local pose in level order, as
/// [`SamplingJob`](crate::SamplingJob) samples a [`Clip`](crate::Clip) (see the [module
/// docs](super)). Joints without a track keep what the output held. The compact kernel runs it on an
/// ISA, the serial decoder on the reference; both give the same bits.
#[derive(Debug)]
pub struct CompactSamplingJob<'a> {
    /// The clip.
    pub clip: &'a CompactClip,
    /// The time, in the clip's times; mapped into its span by `wrap`. 0 by default.
    pub time: f32,
    /// What a time outside the clip's span means; [`Wrap::Clamp`] by default.
    pub wrap: Wrap,
    /// Output: the local pose, one entry per joint of the clip's skeleton, in level order.
    pub output: TrsMut<'a>,
    /// Output: morph-target weights, one set per [`CompactClip::weight_sets`] with one weight per
    /// target of that set; empty (the default) to leave weights unsampled.
    pub weights: &'a mut [Vec<f32>],
    /// Who decodes the translation, rotation and scale tracks; [`Backend::Auto`] by default. Every
    /// backend gives the same bits (the kernel, ispc/det/compact.ispc, is built without fused
    /// multiply-adds and computes the serial decoder's operations in its order), so no
    /// [`Precision`](crate::Precision) is needed; weights are decoded by the serial decoder.
    pub backend: Backend,
    /// The frames decoded for this character on earlier calls ([`CompactContext`]); `None` (the
    /// default) decodes both frames of every call. Playing forward or backward, pass one per
    /// character: the kernel then decodes only the frames it has not kept. It changes no value.
    pub context: Option<&'a mut CompactContext>,
}

impl<'a> CompactSamplingJob<'a> {
    /// A job sampling `clip` at time 0, clamped, into `output`, without weights.
    pub fn new(clip: &'a CompactClip, output: TrsMut<'a>) -> CompactSamplingJob<'a> {
        CompactSamplingJob {
            clip,
            time: 0.0,
            wrap: Wrap::Clamp,
            output,
            weights: &mut [],
            backend: Backend::Auto,
            context: None,
        }
    }

    /// Sets the context that keeps decoded frames between calls.
    pub fn context(mut self, context: &'a mut CompactContext) -> CompactSamplingJob<'a> {
        self.context = Some(context);
        self
    }

    /// Sets the backend.
    pub fn backend(mut self, backend: Backend) -> CompactSamplingJob<'a> {
        self.backend = backend;
        self
    }

    /// Sets the time.
    pub fn time(mut self, time: f32) -> CompactSamplingJob<'a> {
        self.time = time;
        self
    }

    /// Sets the wrap mode.
    pub fn wrap(mut self, wrap: Wrap) -> CompactSamplingJob<'a> {
        self.wrap = wrap;
        self
    }

    /// Sets the weight output.
    pub fn weights(mut self, weights: &'a mut [Vec<f32>]) -> CompactSamplingJob<'a> {
        self.weights = weights;
        self
    }

    /// Checks the job without running it.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] for an output stream without one entry per joint, or a weight output
    /// that is neither empty nor one set per weight set with one weight per target;
    /// [`Error::NotFinite`] for a time that is not finite; and the backend's errors
    /// ([`Backend::resolve`](crate::Backend)): an ISA this CPU or build lacks.
    pub fn validate(&self) -> Result<(), Error> {
        self.checked().map(|_| ())
    }

    fn checked(&self) -> Result<Resolved, Error> {
        let resolved = self.backend.resolve(KernelFamily::Sampling)?;
        let joints = self.clip.joints;
        for (what, got) in [
            ("sampled translations", self.output.translations.len()),
            ("sampled rotations", self.output.rotations.len()),
            ("sampled scales", self.output.scales.len()),
        ] {
            if got != joints {
                return Err(Error::CountMismatch {
                    what,
                    expected: joints,
                    got,
                });
            }
        }
        if !self.time.is_finite() {
            return Err(Error::NotFinite {
                what: "sampling time",
                index: 0,
                value: self.time,
            });
        }
        if !self.weights.is_empty() {
            if self.weights.len() != self.clip.weight_sets {
                return Err(Error::CountMismatch {
                    what: "weight sets",
                    expected: self.clip.weight_sets,
                    got: self.weights.len(),
                });
            }
            for w in &self.clip.weights {
                let got = self.weights.get(w.set as usize).map_or(0, Vec::len);
                if got != w.targets as usize {
                    return Err(Error::CountMismatch {
                        what: "morph weights of a set",
                        expected: w.targets as usize,
                        got,
                    });
                }
            }
        }
        Ok(resolved)
    }

    /// Samples the clip.
    ///
    /// # Errors
    /// Those of [`validate`](CompactSamplingJob::validate). A compact clip decodes finite values only
    /// (its ranges are finite and checked when loaded), so nothing else fails.
    pub fn run(self) -> Result<(), Error> {
        let resolved = self.checked()?;
        let clip = self.clip;
        let at = clip.frame_at(clip.wrap_time(self.time, self.wrap));
        let mut output = self.output;
        match (resolved, self.context) {
            (Resolved::Ispc(isa), Some(context)) => {
                clip.context_tracks_into(isa, at, context, output)
            }
            (Resolved::Ispc(isa), None) => clip.kernel_tracks_into(isa, at, output),
            (Resolved::Reference, _) => clip.tracks_into(at, &mut output),
        }
        clip.all_weights_into(at, self.weights);
        Ok(())
    }
}

/// `q` times `1 / |q|` (the length summed as in [`unit`]), or the identity where the squared length is
/// not a normal float: one IEEE division and four products where [`unit`] divides four times. The
/// compact kernel normalizes every sampled rotation this way (a 16-lane division is slow on AVX-512),
/// so the decoder does too, for the same bits.
pub(crate) fn unit_scaled(q: Vec4) -> Vec4 {
    let len2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    if len2.is_normal() {
        q * (1.0 / len2.sqrt())
    } else {
        Vec4::W
    }
}
