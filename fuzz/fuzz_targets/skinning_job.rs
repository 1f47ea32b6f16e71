//! `skinning_job`: a small prepared mesh skinned into arbitrary outputs.
//!
//! The mesh is valid (up to 255 vertices, 1 to 16 influences, optional normals and tangents, f32 or
//! compact influences, optionally reordered so that streaming stores apply). The palette has an
//! arbitrary length and matrices; the output is separate streams of arbitrary lengths, or an
//! interleaved byte buffer with an arbitrary length, stride and attribute offsets that starts at any
//! byte of a larger buffer (so often unaligned). Every renormalization mode, one thread or all,
//! streaming or not, either precision (the deterministic kernels take the same calls), and every
//! backend including ISAs this CPU lacks; linear blending or dual
//! quaternions (entries converted from the palette, or its raw floats where the conversion refuses
//! it: NaN, infinities and real parts that are not unit). The job returns `Ok` or a typed
//! `Err`, and writes nothing it may not (checked with guard bytes, see `ispc_skinning_fuzz::guard`):
//! this is the check that covers the ISPC kernels, which AddressSanitizer does not instrument.
#![no_main]

use arbitrary::Arbitrary;
use ispc_skinning::glam::{Mat4, Quat, Vec3};
use ispc_skinning::{dual_quat_palette, DualQuatEntry, PaletteMatrix, Precision, SkinningJob};
use ispc_skinning_fuzz::{
    threads, FuzzBackend, FuzzRenormalize, GuardedOutput, Len, MeshSpec, OutputSpec, Rng,
};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    mesh: MeshSpec,
    palette_len: Len,
    /// Raw palette matrices (NaN and infinities included), repeated; none: random rigid transforms.
    palette: Vec<[f32; 16]>,
    output: OutputSpec,
    renormalize: FuzzRenormalize,
    all_threads: bool,
    streaming: bool,
    backend: FuzzBackend,
    dual_quaternion: bool,
    deterministic: bool,
}

fuzz_target!(|input: Input| {
    let mesh = input.mesh.build();
    let n = mesh.vertex_count();
    let mut rng = Rng::new(input.mesh.seed ^ 0x5eed);
    let palette: Vec<PaletteMatrix> = (0..input
        .palette_len
        .resolve_capped(mesh.joint_count(), 1 << 12))
        .map(
            |i| match input.palette.get(i % input.palette.len().max(1)) {
                Some(m) => PaletteMatrix::from_mat4(Mat4::from_cols_array(m)),
                None => {
                    let axis = Vec3::new(rng.unit(), rng.unit(), rng.unit()).normalize_or(Vec3::X);
                    let q = Quat::from_axis_angle(axis, rng.unit() * 3.0);
                    let t = Vec3::new(rng.unit(), rng.unit(), rng.unit());
                    PaletteMatrix::from_mat4(Mat4::from_rotation_translation(q, t))
                }
            },
        )
        .collect();
    let mut entries = vec![DualQuatEntry::IDENTITY; palette.len()];
    if input.dual_quaternion && dual_quat_palette(&palette, &mut entries).is_err() {
        for (e, p) in entries.iter_mut().zip(&palette) {
            *e = DualQuatEntry::from_floats(std::array::from_fn(|i| p.rows[i / 4][i % 4]));
        }
    }
    let mut out = GuardedOutput::new(&input.output, n);
    let job = if input.dual_quaternion {
        SkinningJob::dual_quaternion(&mesh, &entries, out.output())
    } else {
        SkinningJob::new(&mesh, &palette, out.output())
    };
    let result = job
        .renormalize(input.renormalize.get())
        .threads(threads(input.all_threads))
        .streaming(input.streaming)
        .backend(input.backend.get())
        .precision(if input.deterministic {
            Precision::Deterministic
        } else {
            Precision::Fast
        })
        .run();
    // A result that overflowed f32 is refused after the kernels ran (the numeric rules): the call may
    // have written its outputs, as for Ok, but nothing outside them.
    let wrote =
        result.is_ok() || matches!(result, Err(ispc_skinning::Error::ResultNotFinite { .. }));
    out.check(wrote, n);
    if result.is_ok() {
        assert!(input.backend.can_run(), "an ISA that cannot run here ran");
        assert!(
            palette.len() >= mesh.joint_count(),
            "a short palette was accepted"
        );
    }
});
