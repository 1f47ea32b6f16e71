//! Bounds in the pass: the skinning kernels keep the box of the positions they write, and
//! `Frame::bounds` and `CrowdFrame::bounds` take the skinned meshes' boxes from the skin stage instead of
//! reading the vertices again. A minimum or a maximum rounds nothing, so each box must be exactly the box
//! of the positions in the frame, on the reference and every ISA this CPU runs (the others are printed as
//! not run): a frame before its first skin stage (read from the vertices), after it, after a new pose, on
//! one thread and on the pool (40,000 vertices: several chunks), with morph targets through the fused
//! pass and the pre-pass, and after frames whose stages failed; every instance of a crowd, also after a
//! failed crowd frame; the crowd job into separate and interleaved outputs; and every shared glTF asset
//! with its rigid meshes (skipped, said so, without `../shared/assets`). tests/isa_parity/skin.rs holds `SkinningJob::run_with_bounds` to the same rule in
//! every output form, and tests/isa_parity/fused_morph.rs the fused pass at every harness size.

mod common;

use common::{random_vec3, Rng};
use glam::{Quat, Vec3, Vec4};
#[cfg(feature = "gltf")]
use ispc_skinning::gltf::{GltfScene, Wrap};
use ispc_skinning::{
    Attribute, Backend, Character, CharacterSkin, CrowdSkinningJob, Error, Isa, MeshInput,
    MorphTargets, PrepareOptions, Skeleton, SkinOutput, SkinnedMesh, Threads,
};
#[cfg(feature = "gltf")]
use std::path::PathBuf;

/// The reference and every ISA this CPU runs; the ISAs it lacks are printed as not run (once).
fn backends() -> Vec<Backend> {
    static SAID: std::sync::Once = std::sync::Once::new();
    let mut all = vec![Backend::Reference];
    for isa in Isa::ALL {
        if isa.is_available() {
            all.push(isa.into());
        } else {
            SAID.call_once(|| {
                let lacking: Vec<String> = Isa::ALL
                    .iter()
                    .filter(|i| !i.is_available())
                    .map(|i| i.to_string())
                    .collect();
                eprintln!("bounds: not run here (this CPU or build lacks them): {lacking:?}");
            });
        }
    }
    all
}

/// The box of every position of `sets`, read one by one.
fn scanned<'a>(sets: impl IntoIterator<Item = &'a [Vec3]>) -> Option<(Vec3, Vec3)> {
    sets.into_iter()
        .flatten()
        .fold(None, |b: Option<(Vec3, Vec3)>, &p| {
            Some(b.map_or((p, p), |(lo, hi)| (lo.min(p), hi.max(p))))
        })
}

const JOINTS: usize = 9;

/// A chain of joints with one skinned mesh of `n` vertices (four influences each, and a rigid one in
/// every seventh vertex, so the mesh has a rigid and a blended group) and, when `morphs`, two morph
/// targets on every attribute.
fn character(n: usize, morphs: bool, rng: &mut Rng) -> Character {
    let parents: Vec<Option<usize>> = (0..JOINTS).map(|j| j.checked_sub(1)).collect();
    let skeleton = Skeleton::from_parents(&parents).unwrap();
    let t: Vec<Vec3> = (0..JOINTS).map(|_| Vec3::new(0.0, 0.4, 0.0)).collect();
    let (q, s) = (vec![Quat::IDENTITY; JOINTS], vec![Vec3::ONE; JOINTS]);
    let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s).unwrap();
    let pos: Vec<Vec3> = (0..n).map(|_| random_vec3(rng, -1.0..4.0)).collect();
    let nrm: Vec<Vec3> = (0..n).map(|_| random_vec3(rng, -1.0..1.0)).collect();
    let tan: Vec<Vec4> = (0..n)
        .map(|_| random_vec3(rng, -1.0..1.0).extend(1.0))
        .collect();
    let joints: Vec<[u16; 4]> = (0..n)
        .map(|_| std::array::from_fn(|_| rng.below(JOINTS) as u16))
        .collect();
    let weights: Vec<[f32; 4]> = (0..n)
        .map(|i| {
            if i % 7 == 3 {
                [1.0, 0.0, 0.0, 0.0]
            } else {
                [0.4, 0.3, 0.2, 0.1]
            }
        })
        .collect();
    let input = MeshInput::new(
        Attribute::vec3(&pos),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    )
    .normals(Attribute::vec3(&nrm))
    .tangents(Attribute::vec4(&tan));
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(JOINTS)).unwrap();
    let character = Character::new(skeleton, t, q, s, vec![skin], vec![(mesh, 0)]).unwrap();
    if !morphs {
        return character;
    }
    let mut deltas = |scale: f32| -> Vec<Option<Vec<Vec3>>> {
        (0..2)
            .map(|_| Some((0..n).map(|_| random_vec3(rng, -scale..scale)).collect()))
            .collect()
    };
    let targets = MorphTargets::new(n, deltas(0.5), deltas(0.1), deltas(0.1)).unwrap();
    character.with_mesh_morph_targets(0, targets).unwrap()
}

/// A random pose on every joint of `frame`'s character.
fn pose(frame: &mut ispc_skinning::Frame, rng: &mut Rng) {
    for j in 0..JOINTS {
        let axis = random_vec3(rng, -1.0..1.0).normalize_or(Vec3::Y);
        let q = Quat::from_axis_angle(axis, rng.range(-1.0, 1.0));
        let t = random_vec3(rng, -0.5..0.5);
        frame
            .set_local(j, t, q, Vec3::splat(rng.range(0.8, 1.2)))
            .unwrap();
    }
}

#[test]
fn a_frames_box_is_the_box_of_its_skinned_positions() {
    let mut rng = Rng::new(5);
    for backend in backends() {
        for n in [0usize, 1, 7, 8, 9, 16, 17, 33, 1000, 40_000] {
            // The large mesh is for the pool's chunks, which the serial reference does not have.
            if n == 40_000 && backend == Backend::Reference {
                continue;
            }
            for (morphs, threads) in [
                (false, Threads::One),
                (false, Threads::All),
                // One thread takes the fused morph + skin pass on an ISA, the pool the pre-pass.
                (true, Threads::One),
                (true, Threads::All),
            ] {
                let character = character(n, morphs, &mut rng);
                let mut frame = character.frame_buffers().backend(backend).threads(threads);
                let at = format!("{backend:?} n={n} morphs={morphs} {threads:?}");
                let positions =
                    |f: &ispc_skinning::Frame| scanned(f.meshes().iter().map(|m| &m.positions[..]));
                // Before any skin stage the box is read from the (zeroed) vertices.
                assert_eq!(frame.bounds(), positions(&frame), "{at}: before skinning");
                if morphs {
                    frame.set_mesh_weights(0, &[0.7, -0.4]).unwrap();
                }
                for round in 0..2 {
                    pose(&mut frame, &mut rng);
                    character.evaluate(&mut frame).unwrap();
                    let want = positions(&frame);
                    assert_eq!(want.is_none(), n == 0, "{at}");
                    assert_eq!(frame.bounds(), want, "{at}: round {round}");
                }
            }
        }
    }
}

#[test]
fn a_frame_whose_stages_failed_still_has_the_box_of_its_positions() {
    let mut rng = Rng::new(11);
    for backend in backends() {
        for morphs in [false, true] {
            let character = character(300, morphs, &mut rng);
            let mut frame = character.frame_buffers().backend(backend);
            if morphs {
                frame.set_mesh_weights(0, &[0.5, 0.5]).unwrap();
            }
            pose(&mut frame, &mut rng);
            character.evaluate(&mut frame).unwrap();
            // Scales from harmless to overflowing: some frames fail in one stage or another (the
            // models, the palettes or the skinned vertices), and whatever was or was not written,
            // the box is the positions'.
            let mut failed = 0;
            for scale in [1e3f32, 1e30, 5e37, 1e38, 3e38] {
                let (t, q, _) = frame.local(JOINTS - 1).unwrap();
                frame
                    .set_local(JOINTS - 1, t, q, Vec3::splat(scale))
                    .unwrap();
                failed += usize::from(character.evaluate(&mut frame).is_err());
                let want = scanned(frame.meshes().iter().map(|m| &m.positions[..]));
                assert_eq!(
                    frame.bounds(),
                    want,
                    "{backend:?} morphs={morphs} scale {scale}"
                );
            }
            assert!(
                failed > 0,
                "{backend:?}: no frame failed, so the test tests nothing"
            );
        }
    }
}

#[test]
fn every_crowd_instance_has_the_box_of_its_own_positions() {
    let mut rng = Rng::new(9);
    for backend in backends() {
        for (n, instances) in [(0usize, 3usize), (1, 1), (17, 5), (300, 37)] {
            let character = character(n, false, &mut rng);
            for threads in [Threads::One, Threads::All] {
                let mut crowd = character
                    .crowd_buffers(instances)
                    .unwrap()
                    .backend(backend)
                    .threads(threads);
                for (i, root) in crowd.roots_mut().iter_mut().enumerate() {
                    *root = glam::Mat4::from_rotation_translation(
                        Quat::from_rotation_y(i as f32),
                        Vec3::new(3.0 * i as f32, 0.0, -(i as f32)),
                    );
                }
                character.evaluate_crowd(&mut crowd).unwrap();
                let at = format!("{backend:?} n={n} instances={instances} {threads:?}");
                for i in 0..instances {
                    let want = scanned(crowd.positions(0, i));
                    assert_eq!(crowd.bounds(i), want, "{at}: instance {i}");
                }
                assert_eq!(
                    crowd.bounds(instances),
                    None,
                    "{at}: past the last instance"
                );
                // A crowd frame that fails (an overflowing root) keeps boxes that are its positions'.
                crowd.roots_mut()[instances - 1] = glam::Mat4::from_scale(Vec3::splat(3e38));
                let _ = character.evaluate_crowd(&mut crowd);
                for i in 0..instances {
                    let want = scanned(crowd.positions(0, i));
                    assert_eq!(
                        crowd.bounds(i),
                        want,
                        "{at}: instance {i} after a failed frame"
                    );
                }
            }
        }
    }
}

#[test]
fn the_crowd_job_takes_one_box_per_instance() {
    let mut rng = Rng::new(3);
    let character = character(40, false, &mut rng);
    let mut crowd = character.crowd_buffers(4).unwrap();
    for (i, root) in crowd.roots_mut().iter_mut().enumerate() {
        *root = glam::Mat4::from_translation(Vec3::new(i as f32, -2.0 * i as f32, 0.5));
    }
    character.evaluate_crowd_pose(&mut crowd).unwrap();
    let mesh = SkinnedMesh::prepare(
        &MeshInput::new(
            Attribute::vec3(&[Vec3::X; 40]),
            Attribute::joints_u16(&[[0, 1, 2, 3]; 40]),
            Attribute::weights_f32(&[[0.25; 4]; 40]),
        ),
        &PrepareOptions::new(JOINTS),
    )
    .unwrap();
    let mut positions = vec![Vec3::NAN; 4 * 40];
    let palettes = crowd.palettes(0).unwrap();
    let mut boxes = vec![None; 3];
    let e = CrowdSkinningJob::new(&mesh, palettes, SkinOutput::positions(&mut positions))
        .run_with_bounds(&mut boxes)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::CountMismatch {
                expected: 4,
                got: 3,
                ..
            }
        ),
        "{e}"
    );
    assert!(positions.iter().all(|p| p.is_nan()), "nothing is written");
    for backend in backends() {
        for threads in [Threads::One, Threads::All] {
            let mut boxes = vec![None; 4];
            CrowdSkinningJob::new(&mesh, palettes, SkinOutput::positions(&mut positions))
                .backend(backend)
                .threads(threads)
                .run_with_bounds(&mut boxes)
                .unwrap();
            for (i, b) in boxes.iter().enumerate() {
                let want = scanned([&positions[40 * i..40 * (i + 1)]]);
                assert_eq!(*b, want, "{backend:?} {threads:?}: instance {i}");
            }
            // Interleaved: a guard float, the position, a guard float (20-byte stride).
            let mut buffer = vec![-1e30f32; 4 * 40 * 5];
            let mut boxes = vec![None; 4];
            CrowdSkinningJob::new(
                &mesh,
                palettes,
                SkinOutput::Interleaved {
                    bytes: bytemuck::cast_slice_mut(&mut buffer),
                    stride: 20,
                    positions: 4,
                    normals: None,
                    tangents: None,
                },
            )
            .backend(backend)
            .threads(threads)
            .run_with_bounds(&mut boxes)
            .unwrap();
            let written: Vec<Vec3> = buffer
                .chunks(5)
                .map(|f| Vec3::new(f[1], f[2], f[3]))
                .collect();
            for (i, b) in boxes.iter().enumerate() {
                let want = scanned([&written[40 * i..40 * (i + 1)]]);
                assert_eq!(
                    *b, want,
                    "{backend:?} {threads:?} interleaved: instance {i}"
                );
            }
        }
    }
}

/// Every glTF file under ../shared/assets (none when the folder is absent).
#[cfg(feature = "gltf")]
fn shared_assets() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets");
    let Ok(dirs) = std::fs::read_dir(&root) else {
        eprintln!("skipped: {} is absent", root.display());
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = dirs
        .flatten()
        .filter_map(|d| std::fs::read_dir(d.path()).ok())
        .flatten()
        .flatten()
        .map(|f| f.path())
        .filter(|p| p.extension().is_some_and(|e| e == "glb" || e == "gltf"))
        .collect();
    files.sort();
    files
}

#[cfg(feature = "gltf")]
#[test]
fn every_shared_asset_frame_and_crowd_has_the_box_of_its_positions() {
    for path in shared_assets() {
        let scene = GltfScene::load(&path)
            .unwrap_or_else(|e| panic!("{}: the shared asset loads: {e}", path.display()));
        let clip = (!scene.clips().is_empty()).then_some(0);
        let time = scene.clips().first().map_or(0.0, |c| 0.61 * c.duration());
        for backend in backends() {
            let at = format!("{} {backend:?}", path.display());
            let mut frame = scene.frame_buffers().backend(backend);
            scene.evaluate(clip, time, Wrap::Loop, &mut frame).unwrap();
            let want = scanned(
                frame
                    .meshes()
                    .iter()
                    .chain(frame.rigid_meshes())
                    .map(|m| &m.positions[..]),
            );
            assert_eq!(frame.bounds(), want, "{at}");
            let mut crowd = scene.crowd_buffers(3).unwrap().backend(backend);
            let clips = vec![clip.unwrap_or(0); 3];
            if clip.is_some() {
                scene
                    .evaluate_crowd(&clips, &[0.0, time, 2.0 * time], Wrap::Loop, &mut crowd)
                    .unwrap();
            } else {
                scene.character().evaluate_crowd(&mut crowd).unwrap();
            }
            for i in 0..3 {
                let want = scanned(
                    (0..)
                        .map_while(|m| crowd.positions(m, i))
                        .chain((0..).map_while(|m| crowd.rigid_positions(m, i))),
                );
                assert_eq!(crowd.bounds(i), want, "{at}: crowd instance {i}");
            }
            // Instance 1 plays the frame's clip and time at the same place: its rigid meshes are the
            // frame's (up to the crowd kernels' rounding of the model matrices).
            for (m, single) in frame.rigid_meshes().iter().enumerate() {
                let got = crowd.rigid_positions(m, 1).unwrap();
                let extent = single
                    .positions
                    .iter()
                    .fold(1.0f32, |e, p| e.max(p.abs().max_element()));
                for (g, w) in got.iter().zip(&single.positions) {
                    assert!(
                        (*g - *w).abs().max_element() <= 1e-4 * extent,
                        "{at}: crowd instance 1 rigid mesh {m}: {g} against the frame's {w}"
                    );
                }
            }
        }
    }
}
