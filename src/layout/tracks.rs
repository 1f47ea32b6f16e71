//! The sampling kernels' form of a clip's tracks (ispc/sample.ispc): one property's tracks as parallel
//! `i32` arrays, checked once when built so that a kernel call needs only the per-call checks of the
//! located keys.

/// One property's tracks, for the sampling kernels: per track the output joint (level order), the
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
    /// three times that for cubic) inside `values` floats; every count fits in `i32`.
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
                && t.offset.checked_add(floats)? <= values;
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

    pub(crate) fn components(&self) -> usize {
        self.components
    }

    pub(crate) fn joints(&self) -> usize {
        self.joints
    }

    pub(crate) fn values(&self) -> usize {
        self.values
    }

    pub(crate) fn timelines(&self) -> usize {
        self.timelines
    }

    /// The arrays: level, interpolation, timeline, offset.
    pub(crate) fn arrays(&self) -> (&[i32], &[i32], &[i32], &[i32]) {
        (&self.level, &self.interp, &self.timeline, &self.offset)
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
                .all(|((&k, &h), &len)| {
                    k >= 0
                        && if h != 0 {
                            k < len
                        } else {
                            k.saturating_add(1) < len
                        }
                })
    }

    /// Whether the tracks' per-timeline key counts are the ones located here (a timeline no track uses
    /// is not read). O(timelines): KernelTracks::new made every track's key count its timeline's.
    pub(crate) fn matches(&self, tracks: &KernelTracks) -> bool {
        tracks.timelines() == self.keys.len()
            && tracks
                .timeline_keys
                .iter()
                .zip(&self.keys)
                .all(|(&want, &got)| want == 0 || want == got)
    }
}
