//! Regressions found by the `runtime_numeric` fuzz target (fuzz/fuzz_targets/runtime_numeric.rs,
//! issue 31 part 9) in the parts of the runtime whose numeric rules are finished: each test is the
//! minimized input of one failure, on every backend that runs here.

use ispc_skinning::glam::{Mat4, Quat, Vec3, Vec4};
use ispc_skinning::{
    Attribute, Backend, Character, CharacterSkin, Isa, MeshInput, MorphTargets, PrepareOptions,
    Renormalize, Skeleton, SkinnedMesh, Threads,
};

/// The reference and every ISA this CPU runs.
fn backends() -> Vec<Backend> {
    std::iter::once(Backend::Reference)
        .chain(Isa::available().into_iter().map(Backend::Isa))
        .collect()
}

/// Found by `runtime_numeric` (29 bytes): a skinned mesh with tangents and no normals, with a morph
/// target whose weight is not zero, evaluated on an ISA with `Renormalize::None` on one thread, took
/// the fused morph-and-skin pass, whose FFI precondition ("normals written exactly when held",
/// src/ffi/morph.rs) failed: the prepared mesh holds 10 components (an absent normal is zero) while
/// the frame has no normal stream. The call must return the morphed, skinned vertices instead.
#[test]
fn a_morphed_mesh_with_tangents_and_no_normals_evaluates_on_every_backend() {
    let n = 4;
    let positions = vec![Vec3::new(1.0, 2.0, 3.0); n];
    let tangents = vec![Vec4::new(1.0, 0.0, 0.0, -1.0); n];
    let (joints, weights) = (vec![0u16; n], vec![1.0f32; n]);
    let input = MeshInput::from_flat_influences(&positions, &joints, &weights, 1)
        .tangents(Attribute::vec4(&tangents));
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(1)).unwrap();
    assert!(mesh.has_tangents() && !mesh.has_normals());
    let skin = CharacterSkin {
        joints: vec![0],
        inverse_binds: vec![Mat4::IDENTITY],
    };
    let targets = MorphTargets::new(
        n,
        vec![Some(vec![Vec3::X; n])],
        vec![None],
        vec![Some(vec![Vec3::Y; n])],
    )
    .unwrap();
    let character = Character::new(
        Skeleton::from_parents(&[None]).unwrap(),
        vec![Vec3::ZERO],
        vec![Quat::IDENTITY],
        vec![Vec3::ONE],
        vec![skin],
        vec![(mesh, 0)],
    )
    .unwrap()
    .with_mesh_morph_targets(0, targets)
    .unwrap();
    for backend in backends() {
        let mut frame = character
            .frame_buffers()
            .backend(backend)
            .renormalize(Renormalize::None)
            .threads(Threads::One);
        frame.set_mesh_weights(0, &[0.5]).unwrap();
        character.evaluate(&mut frame).unwrap();
        let out = &frame.meshes()[0];
        assert!(out.normals.is_none(), "{backend:?}");
        for p in &out.positions {
            assert!(
                p.abs_diff_eq(Vec3::new(1.5, 2.0, 3.0), 1e-6),
                "{backend:?}: {p}"
            );
        }
        for t in out.tangents.as_ref().expect("tangents") {
            assert!(
                t.abs_diff_eq(Vec4::new(1.0, 0.5, 0.0, -1.0), 1e-6),
                "{backend:?}: {t}"
            );
        }
    }
}
