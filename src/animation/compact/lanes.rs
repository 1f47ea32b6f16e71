//! A compact clip's tables for the compact sampling kernel ([`CompactLanes`], ispc/det/compact.ispc):
//! built once, the first time a kernel samples the clip.

use super::decode::unit;
use super::{CompactClip, Storage};
use crate::layout::compact::{CompactLanes, LaneComponent, LaneStream, LaneTrack, LaneValue};
use glam::Vec4;

impl CompactClip {
    /// The kernel's tables, or `None` where they cannot describe the clip (then the serial decoder
    /// samples it; a clip `compress` or `from_bytes` made always fits).
    pub(crate) fn lanes(&self) -> Option<&CompactLanes> {
        self.lanes.get_or_init(|| self.build_lanes()).as_ref()
    }

    fn build_lanes(&self) -> Option<CompactLanes> {
        let components: Vec<LaneComponent> = self
            .ranges
            .iter()
            .zip(&self.rates)
            .zip(&self.offsets)
            .map(|((r, &bits), &offset)| LaneComponent {
                offset,
                bits,
                min: r.min,
                extent: r.extent,
            })
            .collect();
        let mut tracks = Vec::with_capacity(self.tracks.len());
        for t in &self.tracks {
            let property = t.property.index();
            let value = match t.storage {
                Storage::Animated(k) => LaneValue::Animated(k as usize),
                Storage::Constant(c) => {
                    let c = c as usize;
                    let n = if property == 1 { 4 } else { 3 };
                    let mut v = [0.0; 4];
                    v[..n].copy_from_slice(self.constants.get(c..c.checked_add(n)?)?);
                    // As the serial decoder returns it (track_value): a rotation normalized.
                    if property == 1 {
                        v = unit(Vec4::from(v)).to_array();
                    }
                    LaneValue::Constant(v)
                }
            };
            tracks.push(LaneTrack {
                level: t.level as usize,
                property,
                step: t.step,
                drop: t.drop,
                value,
            });
        }
        CompactLanes::new(
            &tracks,
            self.joints,
            LaneStream {
                frames: self.frames,
                record_bits: self.record_bits,
                stream_len: self.stream.len(),
                segment_ranges: &self.segment_ranges,
                components: &components,
            },
        )
    }
}
