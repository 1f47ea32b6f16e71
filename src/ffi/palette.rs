//! The skinning palette kernel (`skin_palette`).

use super::Runnable;
use crate::layout::hierarchy::MAX_JOINTS;
use crate::layout::palette::PaletteMatrix;
use glam::Mat4;

/// `palette[i] = (models[joints[i]] * inverse_binds[i])` row-major. The palette
/// and inverse binds have the same length, `joints` (if any) too, and every index is in range (asserted).
pub(crate) fn skin_palette(
    isa: Runnable,
    models: &[Mat4],
    inverse_binds: &[Mat4],
    joints: Option<&[u32]>,
    palette: &mut [PaletteMatrix],
) {
    let count = inverse_binds.len();
    assert_eq!(
        palette.len(),
        count,
        "one palette entry per inverse bind matrix"
    );
    assert!(
        count <= MAX_JOINTS && models.len() <= MAX_JOINTS,
        "at most MAX_JOINTS matrices"
    );
    let in_range = match joints {
        Some(j) => j.len() == count && j.iter().all(|&m| (m as usize) < models.len()),
        None => count <= models.len(),
    };
    assert!(in_range, "every skin joint names a model matrix");
    let (ptr, use_joints) = match joints {
        Some(j) => (j.as_ptr(), 1),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: `isa` proves the CPU runs the kernel. For i < count it reads inverse_binds[i] and
    // models[m] (16 floats each) with m = joints[i] (checked < models.len() above) or m = i < count <=
    // models.len(), and writes the 16 floats of palette[i]; the joint table is read only when use_joints
    // is set, and then holds count u32. Offsets stay below 64 * MAX_JOINTS bytes (32-bit addressing).
    unsafe {
        (isa.kernels().skin_palette)(
            models.as_ptr().cast(),
            inverse_binds.as_ptr().cast(),
            ptr,
            use_joints,
            count as i32,
            palette.as_mut_ptr().cast(),
        )
    }
}
