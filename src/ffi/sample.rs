//! The sampling kernels (`sample_quat_tracks`, `sample_vec3_tracks` in ispc/sample.ispc): one property's
//! tracks of a clip, the lanes across tracks.

use super::Runnable;
use crate::layout::tracks::{KernelTracks, LocatedKeys};

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
