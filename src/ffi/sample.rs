//! The sampling kernels (`sample_quat_tracks`, `sample_vec3_tracks` in ispc/sample.ispc): one property's
//! tracks of a clip, the lanes across tracks; `sample_crowd_tracks`: a run of a crowd's instances
//! playing one clip, every property at once, the lanes across instances.

use super::Runnable;
use crate::layout::crowd::{CROWD_LANES, TRS_ELEMENTS};
use crate::layout::tracks::{CrowdLocatedKeys, CrowdTracks, KernelTracks, LocatedKeys};

/// Samples `tracks` (rotations when they have 4 components, translations or scales with 3) from the
/// clip's `values` at the `located` keys into `out`, `components` floats per joint. Asserted: `values`
/// and `out` have the lengths the tracks were checked against, and every located key lets a kernel read
/// the keys it reads (`LocatedKeys::in_bounds`, `LocatedKeys::matches`). Returns whether every value
/// written is finite.
pub(crate) fn sample_tracks(
    isa: Runnable,
    values: &[f32],
    tracks: &KernelTracks,
    located: &LocatedKeys,
    out: &mut [f32],
) -> bool {
    let c = tracks.components();
    assert!(c == 3 || c == 4, "sampling tracks of {c} components");
    assert_eq!(values.len(), tracks.values(), "clip values");
    assert_eq!(out.len(), tracks.joints() * c, "sampled output");
    assert!(
        located.in_bounds() && located.matches(tracks),
        "located keys"
    );
    if tracks.len() == 0 {
        return true;
    }
    let (level, interp, timeline, offset) = tracks.arrays();
    let k = isa.kernels();
    let f = if c == 4 {
        k.sample_quat_tracks
    } else {
        k.sample_vec3_tracks
    };
    // SAFETY: `isa` proves the CPU runs this kernel's ISA. KernelTracks::new checked, for every track,
    // level < joints, timeline < timelines, interp in 0..=2 and offset + keys * c * (3 for cubic, else 1)
    // <= values, with every count in i32; `matches` makes each timeline's located key count the track's
    // key count, and `in_bounds` puts the located key k below it, and k + 1 too unless the key is held
    // (the kernels read key k + 1 only when not held). So every value read is below values.len()
    // (asserted equal to what was checked), every located array is read below its length (timelines
    // entries, asserted), and every write, out[c * level + 0..c], is below joints * c = out.len().
    // The arrays are distinct allocations from `out`, which is the only one written. Only 4-byte
    // alignment is assumed.
    unsafe {
        f(
            values.as_ptr(),
            level.as_ptr(),
            interp.as_ptr(),
            timeline.as_ptr(),
            offset.as_ptr(),
            tracks.len() as i32,
            located.key.as_ptr(),
            located.frac.as_ptr(),
            located.span.as_ptr(),
            located.held.as_ptr(),
            out.as_mut_ptr(),
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
    // offset + keys * components * (3 for cubic, else 1) <= values with every count in i32, and gave it
    // element 0 (3 components), 3 (4) or 7 (3). `matches` makes each timeline's key count the tracks'
    // and `in_bounds` puts every entry's key k below it (k + 1 too unless held) with timelines * count
    // entries per array, so every value read is below values.len() (asserted equal to what was checked)
    // and every located read below timelines * count <= i32::MAX (asserted). Each write goes to
    // instance i in first..first + count, joint level < joints, element e..e + components <= 10: index
    // ((i / 16 * joints + level) * 10 + e) * 16 + i % 16 < ceil((first + count) / 16) * joints * 10 * 16
    // <= out.len() <= i32::MAX (asserted), so the kernel's i32 arithmetic does not overflow. `out` is
    // the only buffer written and distinct from the others. Only 4-byte alignment is assumed.
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
