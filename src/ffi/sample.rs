//! The sampling kernels (ispc/sample.ispc): `sample_pose`, every translation, rotation and scale
//! track of a clip for one character, the lanes across the tracks of a group; `sample_crowd_tracks`: a
//! run of a crowd's instances playing one clip, every property at once, the lanes across instances.

use super::Runnable;
use crate::layout::crowd::{CROWD_LANES, TRS_ELEMENTS};
use crate::layout::pose_tracks::{PoseTracks, POSE_GROUP_INTS};
use crate::layout::tracks::{CrowdLocatedKeys, CrowdTracks, LocatedKeys};

/// Samples a clip's `tracks` at the `located` keys into the level-order `translations`, `rotations`
/// and `scales` (3, 4 and 3 floats per joint). Asserted: each output holds the tracks' joints, and
/// every located key lets the kernel read the keys it reads (`LocatedKeys::in_bounds`,
/// `LocatedKeys::matches_keys`). Returns whether every value written is finite.
pub(crate) fn sample_pose(
    isa: Runnable,
    tracks: &PoseTracks,
    located: &LocatedKeys,
    translations: &mut [f32],
    rotations: &mut [f32],
    scales: &mut [f32],
) -> bool {
    let joints = tracks.joints();
    assert_eq!(translations.len(), joints * 3, "sampled translations");
    assert_eq!(rotations.len(), joints * 4, "sampled rotations");
    assert_eq!(scales.len(), joints * 3, "sampled scales");
    assert!(
        located.in_bounds() && located.matches_keys(tracks.timeline_keys()),
        "located keys"
    );
    let groups = tracks.groups();
    if groups.is_empty() {
        return true;
    }
    let values = tracks.values();
    // SAFETY: `isa` proves the CPU runs this kernel's ISA. PoseTracks::new built every group from
    // checked tracks: timeline < timelines with every track on it having that timeline's key count K,
    // interpolation 0..=2, property 0..=2, n >= 1 tracks whose levels, at first .. first + n of
    // `levels` (pushed with the group), are each below joints (consecutive from l0 when the group says
    // so), and values off .. off + K * V * C * n (V 3 for cubic, else 1; C 4 for rotations, else 3)
    // inside `values`, with every count, offset and length in i32 and values.len() * 4 bytes too (the
    // kernel's 32-bit addressing). `matches_keys` makes each
    // timeline's located key count K and `in_bounds` puts the located key k below K, and k + 1 too
    // unless held (the kernel reads key k + 1 only when not held), so every value index
    // off + ((k' * V + s) * C + c) * n + j, j < n, stays below off + K * V * C * n, in `values`; a
    // gang past the end of a group smaller than a gang reads j up to the gang's width less one (at
    // most 15), so at most 15 floats past that end, into the next group or the POSE_READ_PAD zeros
    // that end `values`, and writes only for j < n. Each
    // write goes to C floats at C * level of the output of the group's property, level one of the
    // group's levels (< joints), below joints * C = that output's length (asserted); a whole gang's
    // soa_to_aos writes levels l0 + j0 .. l0 + j0 + gang with j0 + gang <= n. The located arrays are
    // read at timeline indices below their length (in_bounds and matches_keys). The outputs are three
    // distinct buffers, distinct from the inputs. Only 4-byte alignment is assumed.
    unsafe {
        (isa.kernels().sample_pose)(
            values.as_ptr(),
            groups.as_ptr(),
            (groups.len() / POSE_GROUP_INTS) as i32,
            tracks.levels().as_ptr(),
            located.key.as_ptr(),
            located.frac.as_ptr(),
            located.span.as_ptr(),
            located.held.as_ptr(),
            translations.as_mut_ptr(),
            rotations.as_mut_ptr(),
            scales.as_mut_ptr(),
        )
    }
}

/// The crowd form: samples the merged `tracks` for the run of `located.count` instances starting at
/// instance `first` of a crowd pose's floats `out` (AoSoA blocks of [`CROWD_LANES`] instances,
/// `TRS_ELEMENTS` floats per joint). Asserted: `values` has the length the tracks were checked against,
/// the located keys are in bounds and match the tracks, and `out` holds every block of instances up to
/// `first + count` for the tracks' joint count, within `i32`, as do the located arrays. Returns whether
/// every value written is finite.
pub(crate) fn sample_crowd_tracks(
    isa: Runnable,
    values: &[f32],
    tracks: &CrowdTracks,
    located: &CrowdLocatedKeys,
    first: usize,
    out: &mut [f32],
) -> bool {
    assert_eq!(values.len(), tracks.values(), "clip values");
    assert!(
        located.in_bounds() && located.matches(tracks),
        "located keys"
    );
    let count = located.count;
    let end = first.checked_add(count).expect("instance range");
    let needed = end
        .div_ceil(CROWD_LANES)
        .checked_mul(tracks.joints() * TRS_ELEMENTS * CROWD_LANES)
        .expect("crowd pose size");
    assert!(
        out.len() >= needed,
        "crowd pose: {} floats, {needed} needed",
        out.len()
    );
    assert!(i32::try_from(out.len()).is_ok(), "crowd pose within i32");
    assert!(
        i32::try_from(located.key.len()).is_ok(),
        "located entries within i32"
    );
    if tracks.len() == 0 || count == 0 {
        return true;
    }
    let [level, interp, timeline, offset, element] = tracks.arrays();
    // SAFETY: `isa` proves the CPU runs this kernel's ISA. CrowdTracks::merge took every track from a
    // KernelTracks, whose constructor checked level < joints, timeline < timelines, interp in 0..=2 and
    // offset + keys * components * (3 for cubic, else 1) + CROWD_READ_PAD <= values with every count in
    // i32, and gave it element 0 (3 components), 3 (4) or 7 (3). `matches` makes each timeline's key
    // count the tracks' and `in_bounds` puts every entry's key k below it (k + 1 too unless held) with
    // timelines * count entries per array. A lane reads at most 24 floats from key k's value at (8 or
    // 16 floats from at and from at + 8), held or not; at is at least `components` floats before the
    // track's end (key k is one of its keys), so every read is below that end + CROWD_READ_PAD <=
    // values.len() (asserted equal to what was checked). Every lane
    // reads the located arrays at timeline * count + r with r clamped into 0..count (count >= 1 here),
    // below timelines * count <= i32::MAX (asserted). Each write goes to
    // instance i in first..first + count, joint level < joints, element e..e + components <= 10: index
    // ((i / 16 * joints + level) * 10 + e) * 16 + i % 16 < ceil((first + count) / 16) * joints * 10 * 16
    // <= out.len() <= i32::MAX (asserted), so the kernel's i32 arithmetic does not overflow; a gang's
    // lanes outside first..first + count write nothing. `out` is the only buffer written and distinct
    // from the others. Only 4-byte alignment is assumed.
    unsafe {
        (isa.kernels().sample_crowd_tracks)(
            values.as_ptr(),
            level.as_ptr(),
            interp.as_ptr(),
            timeline.as_ptr(),
            offset.as_ptr(),
            element.as_ptr(),
            tracks.len() as i32,
            first as i32,
            count as i32,
            located.key.as_ptr(),
            located.frac.as_ptr(),
            located.span.as_ptr(),
            located.held.as_ptr(),
            tracks.joints() as i32,
            out.as_mut_ptr(),
        )
    }
}
