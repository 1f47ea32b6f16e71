//! `Character::evaluate_pose` runs local to model and every skin's palette in one kernel pass on the
//! ISPC backends (`ltm_palette_trs`). These tests hold it to the two stages run one after the other
//! (`local_to_model` then `palettes`, the same kernels' operations): the same bits on every ISA this
//! CPU runs, at skeleton sizes around each gang width and the kernel's 64-joint blocks, with skins
//! in any order, skins that name a joint twice, skins that leave joints out, an empty skin and more
//! skins than the pass takes; and the same error where a value is not finite.

mod common;

use common::{random_transform, random_vec3, shuffled_tree, Rng};
use glam::{Mat4, Quat, Vec3};
use ispc_skinning::{Backend, Character, CharacterSkin, Error, Frame, Isa, Skeleton};

/// A character over a random tree of `n` joints with `skins` skins: the first over every joint in a
/// random order, the others over random joints (some named twice, some left out), the third (when
/// there is one) empty. Inverse binds are random affine transforms.
fn character(n: usize, skins: usize, seed: u64) -> Character {
    let mut rng = Rng::new(seed);
    let skeleton = Skeleton::from_parents(&shuffled_tree(n, 1 + n / 20, seed)).unwrap();
    let mut all: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        all.swap(i, rng.below(i + 1));
    }
    let skins = (0..skins)
        .map(|s| {
            let joints: Vec<usize> = match s {
                0 => all.clone(),
                2 => Vec::new(),
                _ => (0..n / 2 + 1).map(|_| rng.below(n)).collect(),
            };
            let inverse_binds = joints
                .iter()
                .map(|_| random_transform(&mut rng, 0.5..2.0, -3.0..3.0))
                .collect();
            CharacterSkin {
                joints,
                inverse_binds,
            }
        })
        .collect();
    Character::new(
        skeleton,
        vec![Vec3::ZERO; n],
        vec![Quat::IDENTITY; n],
        vec![Vec3::ONE; n],
        skins,
        Vec::new(),
    )
    .unwrap()
}

/// A frame on `backend` with a random pose and root.
fn posed(c: &Character, backend: Backend, seed: u64) -> Frame {
    let mut rng = Rng::new(seed);
    let root = random_transform(&mut rng, 0.5..2.0, -5.0..5.0);
    let mut frame = c.frame_buffers().backend(backend).root(root);
    let (t, q, s) = frame.level_pose_mut();
    for ((t, q), s) in t.iter_mut().zip(q.iter_mut()).zip(s.iter_mut()) {
        *t = random_vec3(&mut rng, -2.0..2.0);
        // Not unit length: the kernels normalize.
        *q = Quat::from_xyzw(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(0.2, 1.0),
        );
        *s = random_vec3(&mut rng, 0.5..1.5);
    }
    frame
}

/// Model matrices and palettes as bits, for exact comparison.
fn bits(frame: &Frame) -> (Vec<u32>, Vec<Vec<u32>>) {
    let models = frame
        .level_models()
        .iter()
        .flat_map(|m| m.to_cols_array())
        .map(f32::to_bits)
        .collect();
    let palettes = frame
        .palettes()
        .iter()
        .map(|p| {
            p.iter()
                .flat_map(|e| e.rows.into_iter().flatten())
                .map(f32::to_bits)
                .collect()
        })
        .collect();
    (models, palettes)
}

/// Where the two results differ first, for the failure message.
fn first_difference(a: &[u32], b: &[u32]) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => format!(
            "element {i}: fused {} against staged {}",
            f32::from_bits(a[i]),
            f32::from_bits(b[i])
        ),
        None => format!("lengths {} and {}", a.len(), b.len()),
    }
}

#[test]
fn the_fused_pose_equals_the_two_stages_on_every_isa() {
    let isas = Isa::available();
    for isa in [Isa::Sse4, Isa::Avx2, Isa::Avx512, Isa::Neon] {
        if !isas.contains(&isa) {
            eprintln!("not run: {isa:?} (not in this build or not on this CPU)");
        }
    }
    let mut cases = 0;
    for n in [
        1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 22, 31, 33, 63, 64, 65, 67, 72, 80, 130,
    ] {
        for skins in [1, 3, 9] {
            let c = character(n, skins, (n * 31 + skins) as u64);
            for &isa in &isas {
                let mut fused = posed(&c, Backend::Isa(isa), n as u64);
                let mut staged = posed(&c, Backend::Isa(isa), n as u64);
                c.evaluate_pose(&mut fused).unwrap();
                c.local_to_model(&mut staged).unwrap();
                c.palettes(&mut staged).unwrap();
                let (fm, fp) = bits(&fused);
                let (sm, sp) = bits(&staged);
                assert!(
                    fm == sm,
                    "{isa:?}, {n} joints, {skins} skins: models differ at {}",
                    first_difference(&fm, &sm)
                );
                for (s, (f, g)) in fp.iter().zip(&sp).enumerate() {
                    assert!(
                        f == g,
                        "{isa:?}, {n} joints, {skins} skins: skin {s}'s palette differs at {}",
                        first_difference(f, g)
                    );
                }
                assert_eq!(fp.len(), sp.len());
                cases += 1;
            }
        }
    }
    eprintln!("{cases} fused poses compared with the two stages");
}

/// The same error from the fused pass as from the two stages, on every backend.
fn same_error(c: &Character, edit: impl Fn(&mut Frame), what: &str) {
    for backend in common::backends() {
        let mut fused = posed(c, backend, 5);
        let mut staged = posed(c, backend, 5);
        edit(&mut fused);
        edit(&mut staged);
        let got = c.evaluate_pose(&mut fused).unwrap_err();
        let want = c
            .local_to_model(&mut staged)
            .and_then(|()| c.palettes(&mut staged))
            .unwrap_err();
        // Compared as text: a NaN value in the error is not equal to itself.
        assert_eq!(
            format!("{got:?}"),
            format!("{want:?}"),
            "{what} on {backend:?}"
        );
    }
}

#[test]
fn the_fused_pose_names_what_is_not_finite_as_the_stages_do() {
    let c = character(22, 3, 7);
    // A NaN rotation, a zero rotation and an infinite translation: the input is named.
    same_error(
        &c,
        |f| f.level_pose_mut().1[9] = Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
        "a NaN rotation",
    );
    same_error(
        &c,
        |f| f.level_pose_mut().1[21] = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        "a zero rotation",
    );
    same_error(
        &c,
        |f| f.level_pose_mut().0[3] = Vec3::new(0.0, f32::INFINITY, 0.0),
        "an infinite translation",
    );
    // Finite values whose products overflow: the stage that overflowed is named.
    same_error(
        &c,
        |f| f.level_pose_mut().2[0] = Vec3::splat(3e38),
        "a scale whose products overflow",
    );
    // The root's bottom row, which the products ignore, is checked all the same.
    let mut root = Mat4::IDENTITY;
    root.w_axis.w = f32::INFINITY;
    let mut frame = c.frame_buffers().root(root);
    assert!(matches!(
        c.evaluate_pose(&mut frame),
        Err(Error::NotFinite {
            what: "root matrix",
            ..
        })
    ));
}
