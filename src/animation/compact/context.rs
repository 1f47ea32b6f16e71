//! [`CompactContext`]: the decoded frames a compact clip's kernel keeps for one character between
//! calls, so that playing on decodes each frame once.

use super::frames::FrameAt;
use super::CompactClip;
use crate::ffi::Runnable;
use crate::layout::compact::CompactLanes;
use crate::layout::trs::TrsMut;
use crate::skeleton::OwnerId;

/// The last two frames a [`CompactSamplingJob`](super::CompactSamplingJob) decoded for one character
/// (or crowd instance): the compact clip's counterpart of [`SamplingContext`](crate::SamplingContext).
///
/// A compact clip stores frames, and a time between two frames needs both decoded. Played forward or
/// backward, the next call usually falls between the same two frames, or shares one of them; with a
/// context the kernel decodes only the frames it does not hold, so each frame of the clip is decoded
/// once per pass instead of twice per call (a 30 frames per second clip played at 60 calls per second
/// decodes one frame every other call). A random seek, which shares no frame with the call before it,
/// decodes both frames in place, as without a context, and keeps neither. The values are the same
/// bits with or without a context, on every backend.
///
/// A context follows one clip: given another (or a clip of other content), it starts over. It holds
/// two frames of the clip's stored components, a few floats per track, sized for the clip it follows
/// (memory kept from a clip more than four times as large is given back); a crowd keeps one per
/// instance. The serial decoder ([`Backend::Reference`](crate::Backend)) decodes in place and leaves
/// the context as it is.
#[derive(Clone, Default)]
pub struct CompactContext {
    clip: Option<OwnerId>,
    /// Two decoded frames, and which frame of the clip each holds.
    slots: [Vec<f32>; 2],
    held: [Option<usize>; 2],
    /// The two frames the last call fell between.
    last: Option<[usize; 2]>,
    decodes: u64,
}

impl std::fmt::Debug for CompactContext {
    /// What the context holds, not the decoded floats themselves.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompactContext")
            .field("clip", &self.clip)
            .field("held", &self.held)
            .field("last", &self.last)
            .field("frame_floats", &self.slots[0].len())
            .field("decodes", &self.decodes)
            .finish()
    }
}

impl CompactContext {
    /// An empty context; it sizes itself for the first clip it samples.
    pub fn new() -> CompactContext {
        CompactContext::default()
    }

    /// How many frames the kernels decoded into this context over its life: forward play of a clip
    /// sampled at its own frame rate adds one per call, and a call between frames the context holds
    /// none. A call whose frames the context lacks and shares none with the call before it (a
    /// random seek) decodes in place and keeps nothing (none); the call after it, if it shares a frame
    /// with the seek's (playback resumed), decodes both into the context.
    pub fn decodes(&self) -> u64 {
        self.decodes
    }

    /// Makes the slots this clip's, empty, when they were another clip's.
    fn follow(&mut self, clip: &CompactClip, len: usize) {
        if self.clip != Some(clip.id) || self.slots.iter().any(|s| s.len() != len) {
            self.clip = Some(clip.id);
            self.held = [None, None];
            self.last = None;
            for s in &mut self.slots {
                s.clear();
                // A context that followed a much larger clip gives the memory back (only past 4x,
                // so that one alternating between two clips does not reallocate on each switch).
                if s.capacity() > len.saturating_mul(4) {
                    s.shrink_to(len);
                }
                s.resize(len, 0.0);
            }
        }
    }

    /// The slot holding frame `f`, decoding it into a slot other than `keep` when no slot does.
    fn frame(
        &mut self,
        isa: Runnable,
        lanes: &CompactLanes,
        stream: &[u8],
        f: usize,
        keep: Option<usize>,
    ) -> usize {
        if let Some(s) = self.held.iter().position(|&h| h == Some(f)) {
            return s;
        }
        let s = if keep == Some(0) { 1 } else { 0 };
        crate::ffi::compact::compact_decode(
            isa,
            lanes,
            stream,
            lanes.record(f),
            &mut self.slots[s],
        );
        self.held[s] = Some(f);
        self.decodes = self.decodes.saturating_add(1);
        s
    }
}

impl CompactClip {
    /// The translation, rotation and scale tracks at `at` on the compact kernels of `isa`, the frames
    /// decoded into `context` where it does not hold them already; the same bits as the serial
    /// decoder, which samples a clip without kernel tables (as in `kernel_tracks_into`).
    pub(super) fn context_tracks_into(
        &self,
        isa: Runnable,
        at: FrameAt,
        context: &mut CompactContext,
        out: TrsMut<'_>,
    ) {
        let Some(lanes) = self.lanes() else {
            return self.kernel_tracks_into(isa, at, out);
        };
        context.follow(self, lanes.decoded_len());
        // The frames the kernel reads (`CompactLanes::record` takes a frame past the last as the last).
        let last = self.frames.saturating_sub(1);
        let (f0, f1) = (at.i.min(last), at.i.saturating_add(1).min(last));
        let slot_of = |f: usize| context.held.iter().position(|&h| h == Some(f));
        let (h0, h1) = (slot_of(f0), slot_of(f1));
        let follows = context
            .last
            .is_some_and(|l| l.contains(&f0) || l.contains(&f1));
        context.last = Some([f0, f1]);
        if h0.is_none() && h1.is_none() && !follows {
            // A seek: decoding into the context would cost stores and loads that the next seek
            // would not use.
            return self.kernel_tracks_into(isa, at, out);
        }
        // The first frame goes into a slot other than the one holding the second, when one does
        // (playing backward, the new pair's second frame is the last pair's first).
        let s0 = context.frame(isa, lanes, &self.stream, f0, h1);
        let s1 = context.frame(isa, lanes, &self.stream, f1, Some(s0));
        let TrsMut {
            translations,
            rotations,
            scales,
        } = out;
        let [a, b] = &context.slots;
        let pick = |s: usize| if s == 0 { a.as_slice() } else { b.as_slice() };
        crate::ffi::compact::compact_interpolate(
            isa,
            lanes,
            [pick(s0), pick(s1)],
            at.alpha,
            (
                bytemuck::cast_slice_mut(translations),
                bytemuck::cast_slice_mut(rotations),
                bytemuck::cast_slice_mut(scales),
            ),
        );
    }
}
