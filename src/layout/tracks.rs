//! The crowd sampling kernel's form of a clip's tracks (ispc/sample.ispc, `sample_crowd_tracks`): each
//! property's tracks as parallel `i32` arrays, then the three merged, checked once when built so that a
//! kernel call needs only the per-call checks of the located keys; and the located keys of both forms
//! (the single-pose form's tracks are in `pose_tracks.rs`).

use crate::layout::crowd::TRS_FIRST_ELEMENT;

/// One property's tracks, checked for the crowd merge: per track the output joint (level order), the
/// interpolation (0 step, 1 linear, 2 cubic), the timeline, the offset of its first value float, and the
/// number of its keys. The constructor checks every invariant a kernel relies on; the fields are private.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct KernelTracks {
    level: Vec<i32>,
    interp: Vec<i32>,
    timeline: Vec<i32>,
    offset: Vec<i32>,
    keys: Vec<i32>,
    /// Each timeline's key count as the tracks on it have it (0 for a timeline no track uses).
    timeline_keys: Vec<i32>,
    /// Floats per value: 3 or 4.
    components: usize,
    /// The joints the output holds, the value floats and the timelines these tracks were checked against.
    joints: usize,
    values: usize,
    timelines: usize,
}

/// Floats the crowd sampling kernel may read past the end of a track's last key (ispc/sample.ispc,
/// columns8: each lane loads up to 24 floats from its key's value, 16 at a time on AVX-512, and a lane
/// held at the last key loads the same): [`KernelTracks::new`] requires this many floats of `values`
/// after every track.
pub(crate) const CROWD_READ_PAD: usize = 24;

/// One track as [`KernelTracks::new`] takes it.
pub(crate) struct TrackForm {
    pub(crate) level: usize,
    /// 0 step, 1 linear, 2 cubic.
    pub(crate) interp: i32,
    pub(crate) timeline: usize,
    pub(crate) offset: usize,
    pub(crate) keys: usize,
}

impl KernelTracks {
    /// The tracks, or `None` when one breaks an invariant: its level below `joints`, its timeline below
    /// `timelines`, at least one key, its interpolation 0 to 2, and all its floats (`keys * components`,
    /// three times that for cubic) followed by [`CROWD_READ_PAD`] more inside `values` floats; every
    /// count fits in `i32`.
    pub(crate) fn new(
        tracks: impl IntoIterator<Item = TrackForm>,
        components: usize,
        joints: usize,
        values: usize,
        timelines: usize,
    ) -> Option<KernelTracks> {
        let fits = |x: usize| i32::try_from(x).ok();
        fits(values)?;
        fits(joints.checked_mul(components)?)?;
        let mut k = KernelTracks {
            timeline_keys: vec![0; timelines],
            components,
            joints,
            values,
            timelines,
            ..KernelTracks::default()
        };
        for t in tracks {
            let per_key = if t.interp == 2 { 3 } else { 1 };
            let floats = t.keys.checked_mul(components)?.checked_mul(per_key)?;
            let ok = t.level < joints
                && t.timeline < timelines
                && t.keys > 0
                && (0..=2).contains(&t.interp)
                && t.offset.checked_add(floats)?.checked_add(CROWD_READ_PAD)? <= values;
            if !ok {
                return None;
            }
            // The tracks on one timeline agree on its key count.
            let slot = k.timeline_keys.get_mut(t.timeline)?;
            let keys = fits(t.keys)?;
            if *slot != 0 && *slot != keys {
                return None;
            }
            *slot = keys;
            k.level.push(fits(t.level)?);
            k.interp.push(t.interp);
            k.timeline.push(fits(t.timeline)?);
            k.offset.push(fits(t.offset)?);
            k.keys.push(fits(t.keys)?);
        }
        fits(k.level.len())?;
        Some(k)
    }

    pub(crate) fn len(&self) -> usize {
        self.level.len()
    }
}

/// Where the sample time falls on each timeline, as the kernels read it: key, fraction, interval and
/// whether the key is held. Filled by the sampler before each call.
#[derive(Clone, Debug, Default)]
pub(crate) struct LocatedKeys {
    pub(crate) key: Vec<i32>,
    pub(crate) frac: Vec<f32>,
    pub(crate) span: Vec<f32>,
    pub(crate) held: Vec<i32>,
    /// Each timeline's key count, to check `key` against.
    pub(crate) keys: Vec<i32>,
}

impl LocatedKeys {
    /// Whether every timeline's located key lets a kernel read key `k` and, unless held, key `k + 1`.
    pub(crate) fn in_bounds(&self) -> bool {
        let n = self.key.len();
        self.frac.len() == n
            && self.span.len() == n
            && self.held.len() == n
            && self.keys.len() == n
            && self
                .key
                .iter()
                .zip(&self.held)
                .zip(&self.keys)
                .all(|((&k, &h), &len)| readable(k, h, len))
    }

    /// Whether `timeline_keys`, a track set's key count per timeline (0 for a timeline no track uses,
    /// which is not read), are the counts located here. O(timelines): the track set's constructor made
    /// every track's key count its timeline's.
    pub(crate) fn matches_keys(&self, timeline_keys: &[i32]) -> bool {
        keys_match(timeline_keys, &self.keys)
    }
}

/// Whether a kernel may read key `k` of a timeline of `len` keys and, unless the key is held (`held`
/// not 0), key `k + 1` too.
fn readable(k: i32, held: i32, len: i32) -> bool {
    k >= 0
        && if held != 0 {
            k < len
        } else {
            k.saturating_add(1) < len
        }
}

/// Whether each timeline's key count as the tracks have it (0 for a timeline no track uses, which is
/// not read) is the count located, with one count per timeline on both sides.
fn keys_match(tracks: &[i32], located: &[i32]) -> bool {
    tracks.len() == located.len()
        && tracks
            .iter()
            .zip(located)
            .all(|(&want, &got)| want == 0 || want == got)
}

/// The crowd form of [`LocatedKeys`]: where each of `count` instances' times falls on each timeline,
/// entry `timeline * count + r` for the run's instance `r`, with each timeline's key count once.
#[derive(Clone, Debug, Default)]
pub(crate) struct CrowdLocatedKeys {
    pub(crate) key: Vec<i32>,
    pub(crate) frac: Vec<f32>,
    pub(crate) span: Vec<f32>,
    pub(crate) held: Vec<i32>,
    /// Each timeline's key count.
    pub(crate) keys: Vec<i32>,
    /// Instances located.
    pub(crate) count: usize,
}

impl CrowdLocatedKeys {
    /// Whether every entry lets a kernel read key `k` and, unless held, key `k + 1` of its timeline.
    pub(crate) fn in_bounds(&self) -> bool {
        let Some(n) = self.keys.len().checked_mul(self.count) else {
            return false;
        };
        self.key.len() == n
            && self.frac.len() == n
            && self.span.len() == n
            && self.held.len() == n
            && (self.count == 0
                || self
                    .key
                    .chunks(self.count)
                    .zip(self.held.chunks(self.count))
                    .zip(&self.keys)
                    .all(|((key, held), &len)| {
                        key.iter().zip(held).all(|(&k, &h)| readable(k, h, len))
                    }))
    }

    /// Whether the tracks' per-timeline key counts are the ones located here.
    pub(crate) fn matches(&self, tracks: &CrowdTracks) -> bool {
        keys_match(&tracks.timeline_keys, &self.keys)
    }
}

/// A clip's translation, rotation and scale tracks merged for the crowd sampling kernel: sorted by kind
/// (rotation or not, then interpolation), then level-order joint and element (0 translation, 3
/// rotation, 7 scale), so that the kernel runs one loop compiled for each kind over all its tracks.
/// Built only from three checked [`KernelTracks`].
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct CrowdTracks {
    level: Vec<i32>,
    interp: Vec<i32>,
    timeline: Vec<i32>,
    offset: Vec<i32>,
    element: Vec<i32>,
    timeline_keys: Vec<i32>,
    joints: usize,
    values: usize,
}

impl CrowdTracks {
    /// The merge of `[translations, rotations, scales]`, or `None` unless they have 3, 4 and 3
    /// components, the same joints, values and timelines, and agree on every timeline's key count.
    pub(crate) fn merge(sets: &[KernelTracks; 3]) -> Option<CrowdTracks> {
        let [t, r, s] = sets;
        let same = |k: &KernelTracks| {
            k.joints == t.joints && k.values == t.values && k.timelines == t.timelines
        };
        if (t.components, r.components, s.components) != (3, 4, 3) || !same(r) || !same(s) {
            return None;
        }
        let mut timeline_keys = vec![0i32; t.timelines];
        for set in sets {
            for (slot, &keys) in timeline_keys.iter_mut().zip(&set.timeline_keys) {
                if keys != 0 {
                    if *slot != 0 && *slot != keys {
                        return None;
                    }
                    *slot = keys;
                }
            }
        }
        let mut order: Vec<(bool, i32, i32, i32, usize, usize)> = Vec::new();
        for (k, (set, element)) in sets.iter().zip(TRS_FIRST_ELEMENT).enumerate() {
            order.extend(
                (0..set.len()).map(|i| (k == 1, set.interp[i], set.level[i], element, i, k)),
            );
        }
        order.sort_unstable();
        let mut m = CrowdTracks {
            timeline_keys,
            joints: t.joints,
            values: t.values,
            ..CrowdTracks::default()
        };
        for (_, _, level, element, i, k) in order {
            let set = match k {
                0 => t,
                1 => r,
                _ => s,
            };
            m.level.push(level);
            m.interp.push(set.interp[i]);
            m.timeline.push(set.timeline[i]);
            m.offset.push(set.offset[i]);
            m.element.push(element);
        }
        Some(m)
    }

    pub(crate) fn len(&self) -> usize {
        self.level.len()
    }

    pub(crate) fn joints(&self) -> usize {
        self.joints
    }

    pub(crate) fn values(&self) -> usize {
        self.values
    }

    /// The arrays: level, interpolation, timeline, offset, element.
    pub(crate) fn arrays(&self) -> [&[i32]; 5] {
        [
            &self.level,
            &self.interp,
            &self.timeline,
            &self.offset,
            &self.element,
        ]
    }
}
