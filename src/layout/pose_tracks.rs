//! A clip's translation, rotation and scale tracks in the single-pose sampling kernel's layout
//! (`sample_pose` in ispc/sample.ispc): groups of tracks that share a property, a timeline and an
//! interpolation, each group's keys stored key-major and transposed so that the lanes (across the
//! group's tracks) share one key and read it with contiguous loads.

/// Ints per group in [`PoseTracks::groups`]: timeline, interpolation (0 step, 1 linear, 2 cubic),
/// property (0 translation, 1 rotation, 2 scale), track count `n`, the index of the group's first
/// track in [`PoseTracks::levels`], values offset, and the first level when the group's levels are
/// consecutive (its outputs one contiguous run), else -1.
pub(crate) const POSE_GROUP_INTS: usize = 7;

/// Zeros after the last group's values: a group smaller than a gang runs as one gang whose lanes past
/// its end read on (contiguous loads, results dropped), at most the widest gang (16 lanes) less one
/// float past the group's last row.
pub(crate) const POSE_READ_PAD: usize = 16;

/// One track as [`PoseTracks::new`] takes it: its floats as the clip stores them, key after key, each
/// key `values_per_key * components` floats (cubic: in-tangent, value, out-tangent).
pub(crate) struct PoseTrack<'a> {
    pub(crate) level: usize,
    /// 0 translation, 1 rotation, 2 scale.
    pub(crate) property: usize,
    /// 0 step, 1 linear, 2 cubic.
    pub(crate) interp: i32,
    pub(crate) timeline: usize,
    pub(crate) keys: usize,
    pub(crate) values: &'a [f32],
}

/// The checked groups and their transposed values (a second copy of the clip's values: the reference
/// and the crowd kernel read the clip's own, track after track).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct PoseTracks {
    groups: Vec<i32>,
    /// Each track's level-order joint, group after group, in increasing order within a group.
    levels: Vec<i32>,
    values: Vec<f32>,
    /// Each timeline's key count as the tracks on it have it (0 for a timeline no track uses).
    timeline_keys: Vec<i32>,
    joints: usize,
}

/// Floats per value of a property: 4 for rotations, 3 otherwise.
fn components(property: usize) -> usize {
    if property == 1 {
        4
    } else {
        3
    }
}

impl PoseTracks {
    /// The groups of `tracks`, or `None` when one breaks an invariant: its level below `joints`, its
    /// property 0 to 2, its timeline below `timelines` with the key count of every other track on it,
    /// at least one key, its interpolation 0 to 2, exactly `keys * components` floats (three times that
    /// for cubic), at most one track per (property, level); every count and offset fits in `i32`, and
    /// the values' byte size too.
    pub(crate) fn new<'a>(
        tracks: impl IntoIterator<Item = PoseTrack<'a>>,
        joints: usize,
        timelines: usize,
    ) -> Option<PoseTracks> {
        let fits = |x: usize| i32::try_from(x).ok();
        fits(joints.checked_mul(4)?)?;
        let mut tracks: Vec<PoseTrack<'a>> = tracks.into_iter().collect();
        tracks.sort_unstable_by_key(|t| (t.property, t.level));
        // One track per (property, level) is checked on this order; the groups take another below.
        let mut timeline_keys = vec![0i32; timelines];
        for (i, t) in tracks.iter().enumerate() {
            let per_key = if t.interp == 2 { 3 } else { 1 };
            let floats = t
                .keys
                .checked_mul(components(t.property))?
                .checked_mul(per_key)?;
            let repeated = i > 0
                && tracks
                    .get(i - 1)
                    .is_some_and(|p| (p.property, p.level) == (t.property, t.level));
            let ok = t.level < joints
                && t.property <= 2
                && t.keys > 0
                && (0..=2).contains(&t.interp)
                && t.values.len() == floats
                && !repeated;
            if !ok {
                return None;
            }
            let slot = timeline_keys.get_mut(t.timeline)?;
            let keys = fits(t.keys)?;
            if *slot != 0 && *slot != keys {
                return None;
            }
            *slot = keys;
        }
        let mut p = PoseTracks {
            timeline_keys,
            joints,
            ..PoseTracks::default()
        };
        tracks.sort_unstable_by_key(|t| (t.property, t.timeline, t.interp, t.level));
        let mut rest = tracks.as_slice();
        while let Some(first) = rest.first() {
            let n = rest
                .iter()
                .take_while(|t| {
                    (t.property, t.timeline, t.interp)
                        == (first.property, first.timeline, first.interp)
                })
                .count();
            let (group, tail) = rest.split_at(n);
            p.push_group(group)?;
            rest = tail;
        }
        p.values.resize(p.values.len() + POSE_READ_PAD, 0.0);
        // The kernel's addressing is 32-bit in bytes: every float index times 4 fits in i32 (a clip
        // holds at most MAX_CLIP_FLOATS = 2^28 floats, so this holds for every clip the builder makes).
        if p.values.len() > i32::MAX as usize / 4 {
            return None;
        }
        fits(p.groups.len())?;
        fits(p.levels.len())?;
        Some(p)
    }

    /// Appends one group (checked tracks of one property, timeline and interpolation, by increasing
    /// level): its ints, its levels and its values, slot s of key k, component c, track j at
    /// `off + ((k * V + s) * C + c) * n + j`.
    fn push_group(&mut self, group: &[PoseTrack<'_>]) -> Option<()> {
        let (first, last) = (group.first()?, group.last()?);
        let c = components(first.property);
        let v = if first.interp == 2 { 3 } else { 1 };
        let fits = |x: usize| i32::try_from(x).ok();
        let consecutive = last.level - first.level + 1 == group.len();
        self.groups.extend([
            fits(first.timeline)?,
            first.interp,
            fits(first.property)?,
            fits(group.len())?,
            fits(self.levels.len())?,
            fits(self.values.len())?,
            if consecutive { fits(first.level)? } else { -1 },
        ]);
        for t in group {
            self.levels.push(fits(t.level)?);
        }
        for f in 0..first.keys * v * c {
            self.values.extend(
                group
                    .iter()
                    .map(|t| t.values.get(f).copied().unwrap_or(0.0)),
            );
        }
        Some(())
    }

    /// The groups, [`POSE_GROUP_INTS`] ints each.
    pub(crate) fn groups(&self) -> &[i32] {
        &self.groups
    }

    /// Each track's level, group after group.
    pub(crate) fn levels(&self) -> &[i32] {
        &self.levels
    }

    /// The transposed values, then [`POSE_READ_PAD`] zeros.
    pub(crate) fn values(&self) -> &[f32] {
        &self.values
    }

    /// The joints of each output.
    pub(crate) fn joints(&self) -> usize {
        self.joints
    }

    /// Each timeline's key count as the tracks have it.
    pub(crate) fn timeline_keys(&self) -> &[i32] {
        &self.timeline_keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_property_timeline_and_interpolation_and_transpose_keys() {
        // Rotations of levels 0, 1 and 3 (linear, timeline 0); a translation at level 1 (cubic).
        let r0 = [0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0];
        let r1 = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
        let r3 = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let t1: Vec<f32> = (0..18).map(|i| i as f32).collect();
        let track = |level, property, interp, values| PoseTrack {
            level,
            property,
            interp,
            timeline: 0,
            keys: 2,
            values,
        };
        let p = PoseTracks::new(
            [
                track(3, 1, 1, &r3[..]),
                track(1, 0, 2, &t1[..]),
                track(0, 1, 1, &r0[..]),
                track(1, 1, 1, &r1[..]),
            ],
            4,
            1,
        )
        .unwrap();
        // The translation group (consecutive: level 1), then the rotations of levels 0, 1 and 3 (not
        // consecutive: -1).
        assert_eq!(p.groups(), &[0, 2, 0, 1, 0, 0, 1, 0, 1, 1, 3, 1, 18, -1]);
        assert_eq!(p.levels(), &[1, 0, 1, 3]);
        // Rotations, key 0: x of the three tracks, then y, z, w.
        assert_eq!(
            &p.values()[18..30],
            &[0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0]
        );
        // Key 1's x.
        assert_eq!(&p.values()[30..33], &[1.0, 0.0, 0.0]);
        // The padding the kernel's last gang reads past the end.
        assert_eq!(p.values().len(), 18 + 24 + POSE_READ_PAD);
        assert!(p.values()[42..].iter().all(|&v| v == 0.0));
    }

    #[test]
    fn broken_invariants_are_refused() {
        let r = [0.0, 0.0, 0.0, 1.0];
        let track = |level, keys, values| PoseTrack {
            level,
            property: 1,
            interp: 1,
            timeline: 0,
            keys,
            values,
        };
        assert!(PoseTracks::new([track(2, 1, &r[..])], 2, 1).is_none());
        assert!(PoseTracks::new([track(0, 2, &r[..])], 2, 1).is_none());
        assert!(PoseTracks::new([track(0, 1, &r[..]), track(0, 1, &r[..])], 2, 1).is_none());
        assert!(PoseTracks::new([track(0, 1, &r[..])], 2, 0).is_none());
    }
}
