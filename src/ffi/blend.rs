//! The blending kernel (`blend_trs`): normal layers, the rest-pose fallback and additive layers over
//! local TRS poses, with the lanes across joints.

use super::{Runnable, MAX_ITEMS_PER_CALL};
use crate::layout::blend::BlendLayer;
use crate::layout::trs::{Trs, TrsMut};
use std::ptr;

/// Layers whose pointer arrays are built on the stack; more take a heap allocation per call.
const STACK_LAYERS: usize = 8;

/// The kernel's per-layer arrays: translations, rotations, scales and joint weights (null without),
/// then the weights, normal layers first.
struct LayerArrays<'a> {
    t: &'a [*const f32],
    q: &'a [*const f32],
    s: &'a [*const f32],
    jw: &'a [*const f32],
    w: &'a [f32],
}

/// Calls `f` with the pointer arrays of `layers` then `additive`.
fn with_arrays<R>(
    layers: &[BlendLayer<'_>],
    additive: &[BlendLayer<'_>],
    f: impl FnOnce(LayerArrays<'_>) -> R,
) -> R {
    let count = layers.len() + additive.len();
    let fill = |t: &mut [*const f32],
                q: &mut [*const f32],
                s: &mut [*const f32],
                jw: &mut [*const f32],
                w: &mut [f32]| {
        for (i, l) in layers.iter().chain(additive).enumerate() {
            t[i] = l.pose.translations.as_ptr().cast();
            q[i] = l.pose.rotations.as_ptr().cast();
            s[i] = l.pose.scales.as_ptr().cast();
            jw[i] = l.joint_weights.map_or(ptr::null(), <[f32]>::as_ptr);
            w[i] = l.weight;
        }
    };
    if count <= STACK_LAYERS {
        let (mut t, mut q, mut s, mut jw) = (
            [ptr::null(); STACK_LAYERS],
            [ptr::null(); STACK_LAYERS],
            [ptr::null(); STACK_LAYERS],
            [ptr::null(); STACK_LAYERS],
        );
        let mut w = [0.0f32; STACK_LAYERS];
        fill(&mut t, &mut q, &mut s, &mut jw, &mut w);
        f(LayerArrays {
            t: &t[..count],
            q: &q[..count],
            s: &s[..count],
            jw: &jw[..count],
            w: &w[..count],
        })
    } else {
        let (mut t, mut q, mut s, mut jw) = (
            vec![ptr::null(); count],
            vec![ptr::null(); count],
            vec![ptr::null(); count],
            vec![ptr::null(); count],
        );
        let mut w = vec![0.0f32; count];
        fill(&mut t, &mut q, &mut s, &mut jw, &mut w);
        f(LayerArrays {
            t: &t,
            q: &q,
            s: &s,
            jw: &jw,
            w: &w,
        })
    }
}

/// Blends `layers`, the rest-pose fallback below `threshold` and the `additive` layers into `out`.
/// Every pose stream, every joint weight array and every output stream holds exactly
/// `out.translations.len()` joints (asserted), at most `MAX_ITEMS_PER_CALL`; `threshold` is positive.
pub(crate) fn blend_trs(
    isa: Runnable,
    layers: &[BlendLayer<'_>],
    additive: &[BlendLayer<'_>],
    rest: Trs<'_>,
    threshold: f32,
    out: TrsMut<'_>,
) {
    let n = out.translations.len();
    let full =
        |t: &Trs<'_>| t.translations.len() == n && t.rotations.len() == n && t.scales.len() == n;
    assert!(
        n <= MAX_ITEMS_PER_CALL && out.rotations.len() == n && out.scales.len() == n && full(&rest),
        "one rest pose entry and one output entry per joint, at most MAX_ITEMS_PER_CALL joints"
    );
    for l in layers.iter().chain(additive) {
        assert!(
            full(&l.pose) && l.joint_weights.is_none_or(|jw| jw.len() == n),
            "every layer holds one pose entry (and joint weight) per joint"
        );
    }
    assert!(threshold > 0.0, "a positive threshold");
    let (normal, added) = (
        i32::try_from(layers.len()).expect("layer count fits i32"),
        i32::try_from(additive.len()).expect("additive layer count fits i32"),
    );
    with_arrays(layers, additive, |a| {
        // SAFETY: `isa` proves the CPU runs the kernel. The five per-layer arrays hold
        // normal + added entries each (built from `layers` and `additive` above); each pointer of t, q
        // and s points at a stream of n Vec3 (3 f32) or Quat (4 f32), and each non-null jw pointer at n
        // f32, as asserted; the kernel reads joints 0..n of each (partial gangs through masked loads
        // that touch only those joints), skips layers of weight 0 and tests jw for null. The rest pose
        // holds n entries per stream and the outputs n entries each, written only at joints 0..n. The
        // outputs are `&mut` and so alias nothing the kernel reads. n <= MAX_ITEMS_PER_CALL keeps the
        // largest byte offset (16 n) inside 32-bit addressing. `threshold` > 0, so the kernel's
        // division by the total weight (>= threshold) is by a positive number.
        unsafe {
            (isa.kernels().blend_trs)(
                a.t.as_ptr(),
                a.q.as_ptr(),
                a.s.as_ptr(),
                a.jw.as_ptr(),
                a.w.as_ptr(),
                normal,
                added,
                rest.translations.as_ptr().cast(),
                rest.rotations.as_ptr().cast(),
                rest.scales.as_ptr().cast(),
                threshold,
                out.translations.as_mut_ptr().cast(),
                out.rotations.as_mut_ptr().cast(),
                out.scales.as_mut_ptr().cast(),
                n as i32,
            )
        }
    })
}
