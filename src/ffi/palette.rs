//! The skinning palette kernel (`skin_palette`).

use super::Runnable;
use crate::layout::crowd::{CROWD_LANES, MAX_CROWD_JOINTS, MODEL_ELEMENTS};
use crate::layout::hierarchy::MAX_JOINTS;
use crate::layout::palette::PaletteMatrix;
use glam::Mat4;

/// `palette[i] = (models[joints[i]] * inverse_binds[i])` row-major. The palette
/// and inverse binds have the same length, `joints` (if any) too, and every index is in range (asserted).
/// Returns whether every element written is finite, or a false alarm where the kernel's per-lane sums
/// of finite elements overflow (the caller's exact scan then decides).
pub(crate) fn skin_palette(
    isa: Runnable,
    models: &[Mat4],
    inverse_binds: &[Mat4],
    joints: Option<&[usize]>,
    palette: &mut [PaletteMatrix],
) -> bool {
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
        Some(j) => j.len() == count && j.iter().all(|&m| m < models.len()),
        None => count <= models.len(),
    };
    assert!(in_range, "every skin joint names a model matrix");
    // The kernel reads the table as uint64: usize is 64 bits on every target the kernels are built for
    // (a build without kernels, such as wasm32's, never reaches this call).
    #[cfg(ispc_kernels)]
    const _: () = assert!(std::mem::size_of::<usize>() == std::mem::size_of::<u64>());
    let (ptr, use_joints) = match joints {
        Some(j) => (j.as_ptr().cast::<u64>(), 1),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: `isa` proves the CPU runs the kernel. For i < count it reads inverse_binds[i] and
    // models[m] (16 floats each) with m = joints[i] (checked < models.len() above) or m = i < count <=
    // models.len(), and writes the 16 floats of palette[i]; the joint table is read only when use_joints
    // is set, and then holds count usize (64-bit, asserted at compile time). Offsets stay below 64 * MAX_JOINTS bytes (32-bit addressing).
    unsafe {
        (isa.pick(|k| k.skin_palette, |d| d.skin_palette))(
            models.as_ptr().cast(),
            inverse_binds.as_ptr().cast(),
            ptr,
            use_joints,
            count as i32,
            palette.as_mut_ptr().cast(),
        )
    }
}

/// Palettes of one AoSoA block of crowd models (`CROWD_LANES` instances, `MODEL_ELEMENTS` floats per
/// joint and lane): `palettes[l * count + i] = (model[joints[i]] of lane l) * inverse_binds[i]`,
/// row-major, for the first `palettes.len() / count` lanes, with non-temporal stores where `stream`.
/// Every length and index is asserted. Returns whether every palette element written is finite, or a
/// false alarm where the kernel's per-lane sums overflow.
pub(crate) fn crowd_palette(
    isa: Runnable,
    block_models: &[f32],
    inverse_binds: &[Mat4],
    joints: &[usize],
    palettes: &mut [PaletteMatrix],
    stream: bool,
) -> bool {
    let count = inverse_binds.len();
    let model_joints = block_models.len() / (MODEL_ELEMENTS * CROWD_LANES);
    assert!(
        block_models.len() == model_joints * MODEL_ELEMENTS * CROWD_LANES
            && model_joints <= MAX_CROWD_JOINTS
            && count <= MAX_CROWD_JOINTS,
        "one block of crowd models, at most MAX_CROWD_JOINTS joints and palette entries"
    );
    assert_eq!(joints.len(), count, "one joint per palette entry");
    assert!(
        joints.iter().all(|&m| m < model_joints),
        "every skin joint names a model matrix"
    );
    let lanes = palettes.len().checked_div(count).unwrap_or(0);
    assert!(
        lanes <= CROWD_LANES && palettes.len() == lanes * count,
        "whole palettes for at most CROWD_LANES instances"
    );
    if count == 0 || lanes == 0 {
        return true;
    }
    // The kernel's whole-vector (and streaming) stores need each entry on a 64-byte line, which
    // PaletteMatrix's alignment gives; asserted all the same, as every precondition is.
    assert!(
        palettes.as_ptr().cast::<u8>().align_offset(64) == 0,
        "palette entries on 64-byte lines"
    );
    #[cfg(ispc_kernels)]
    const _: () = assert!(std::mem::size_of::<usize>() == std::mem::size_of::<u64>());
    // SAFETY: `isa` proves the CPU runs the kernel. For i < count it reads the 12 floats of joint
    // joints[i] (checked < model_joints, the joints the block holds) at lanes below CROWD_LANES of
    // block_models (a whole block, asserted: a gang past `lanes` reads the block's padding lanes, never
    // past the block), the 16 floats of inverse_binds[i] and joints[i] (count u64s, as usize is 64
    // bits), and for lanes l < lanes only writes the 16 floats of palettes[l * count + i], inside
    // `palettes` since lanes * count is its length, in whole-vector stores at 64-byte aligned entries
    // (asserted), which non-temporal stores need. The largest byte offset, 64 * CROWD_LANES *
    // MAX_CROWD_JOINTS = 2^30, and 768 * MAX_CROWD_JOINTS for the models, stay inside 32-bit
    // addressing.
    unsafe {
        (isa.pick(|k| k.crowd_palette, |d| d.crowd_palette))(
            block_models.as_ptr(),
            inverse_binds.as_ptr().cast(),
            joints.as_ptr().cast::<u64>(),
            count as i32,
            lanes as i32,
            palettes.as_mut_ptr().cast(),
            stream,
        )
    }
}
