//! The morph-target rows of the report (issue 17): `morph_skin`, the skin stage of a
//! [`Character`] frame for a mesh with morph targets whose weights are not all zero (the morph pre-pass
//! into the frame's copy of the prepared mesh, then skinning), and `skin_alone`, the same stage of the
//! same mesh with every weight zero (the pre-pass is skipped and the shared mesh is skinned as it is).
//! `morph_skin_fused` is the experiment issue 17 also asked for: the same mesh, weights and palette
//! skinned by [`FusedMorphJob`], which adds the weighted deltas inside the skinning pass instead of
//! writing a morphed copy first. All three run on the reference and every ISA in one round-robin, on
//! meshes of 1,024 and 20,592 vertices (the skinning rows' generated mesh: positions, normals and
//! tangents, 4 influences over 64 joints) with 4 targets, each moving positions, normals and tangents, 3
//! of them with a weight that is not zero. The summary gives the pre-pass's cost per vertex
//! (`morph_skin` minus `skin_alone`), the fused pass against `morph_skin`, and the ratios.

use crate::report::row::{backends, push_rows, Row};
use crate::report::timing::{median_ns_per_call, Budget};
use glam::{Quat, Vec3};
use indicatif::ProgressBar;
use ispc_skinning::experiments::FusedMorphJob;
use ispc_skinning::{
    Attribute, Backend, Character, CharacterSkin, Frame, Isa, MeshInput, MorphTargets,
    PaletteMatrix, PrepareOptions, Skeleton, SkinnedMesh, SkinnedVertices,
};
use scenes::{animated_pose, humanoid_parents, skin_mesh, Rng};
use std::cell::RefCell;

/// Joints of the rig (the skinning mesh's joint count).
const JOINTS: usize = 64;
/// The mesh sizes: the skinning rows' small mesh and the default character's vertex count.
const SIZES: [usize; 2] = [1024, 20_592];
/// The frame's weights: target 2 is off, so the pre-pass skips it (its deltas are never read).
const WEIGHTS: [f32; 4] = [0.5, 0.3, 0.0, 0.8];

/// A character with one mesh of `n` vertices and [`WEIGHTS`]`.len()` morph targets, posed once.
fn character(n: usize) -> Character {
    let parents = humanoid_parents(JOINTS);
    let skeleton = Skeleton::from_parents(&parents).expect("a valid rig");
    let (t, _, _) = animated_pose(JOINTS, 0.0, false, 11);
    let (q, s) = (vec![Quat::IDENTITY; JOINTS], vec![Vec3::ONE; JOINTS]);
    let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s).expect("a valid skin");
    let m = skin_mesh(n, 4, JOINTS);
    let input = MeshInput::new(
        Attribute::vec3(&m.pos),
        Attribute::joints_u16(&m.joints),
        Attribute::weights_f32(&m.weights),
    )
    .normals(Attribute::vec3(&m.nrm))
    .tangents(Attribute::vec4(&m.tan));
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(JOINTS)).expect("a valid mesh");
    let mut rng = Rng::new(17);
    let mut deltas = |scale: f32| -> Vec<Option<Vec<Vec3>>> {
        (0..WEIGHTS.len())
            .map(|_| {
                Some(
                    (0..n)
                        .map(|_| {
                            Vec3::new(
                                rng.range(-1.0, 1.0),
                                rng.range(-1.0, 1.0),
                                rng.range(-1.0, 1.0),
                            ) * scale
                        })
                        .collect(),
                )
            })
            .collect()
    };
    let (p, nm, tg) = (deltas(0.05), deltas(0.1), deltas(0.1));
    let targets = MorphTargets::new(n, p, nm, tg).expect("valid targets");
    Character::new(skeleton, t, q, s, vec![skin], vec![(mesh, 0)])
        .and_then(|c| c.with_mesh_morph_targets(0, targets))
        .expect("a valid character")
}

/// A frame of `character` on `backend`, posed and with its palettes computed, with `weights`.
fn frame(character: &Character, backend: Backend, weights: &[f32]) -> Frame {
    let mut frame = character.frame_buffers().backend(backend);
    let (_, q, _) = animated_pose(JOINTS, 0.7, false, 11);
    for (joint, &rotation) in q.iter().enumerate() {
        let (t, _, s) = frame.local(joint).expect("in range");
        frame.set_local(joint, t, rotation, s).expect("in range");
    }
    frame
        .set_mesh_weights(0, weights)
        .expect("one weight per target");
    character.evaluate(&mut frame).expect("a valid frame");
    frame
}

/// Appends the `morph_skin`, `skin_alone` and `morph_skin_fused` rows.
pub fn rows(budget: Budget, isas: &[Isa], rows: &mut Vec<Row>, progress: &ProgressBar) {
    let who = backends(isas);
    for n in SIZES {
        progress.set_message(format!("morph_skin, {n} vertices"));
        let character = character(n);
        // One frame per candidate: the morphed ones first, then the unmorphed ones, each backend in turn.
        let zero = [0.0; WEIGHTS.len()];
        let frames: Vec<RefCell<Frame>> = [&WEIGHTS, &zero]
            .into_iter()
            .flat_map(|w| {
                who.iter()
                    .map(|&(_, b)| RefCell::new(frame(&character, b, w)))
            })
            .collect();
        // The fused candidates: each backend's posed palette (the morphed frame's) and its own output.
        let fused: Vec<(Backend, Vec<PaletteMatrix>, RefCell<SkinnedVertices>)> = who
            .iter()
            .zip(&frames)
            .map(|(&(_, b), f)| {
                let f = f.borrow();
                (
                    b,
                    f.palettes()[0].clone(),
                    RefCell::new(f.meshes()[0].clone()),
                )
            })
            .collect();
        let character = &character;
        let mut c: Vec<Box<dyn FnMut() + '_>> = frames
            .iter()
            .map(|f| {
                Box::new(move || {
                    character.skin(&mut f.borrow_mut()).expect("a valid frame");
                }) as Box<dyn FnMut() + '_>
            })
            .collect();
        c.extend(fused.iter().map(|(b, palette, out)| {
            Box::new(move || {
                FusedMorphJob::new(character, 0, palette, &WEIGHTS, &mut out.borrow_mut())
                    .backend(*b)
                    .run()
                    .expect("a valid fused job");
            }) as Box<dyn FnMut() + '_>
        }));
        let times = median_ns_per_call(budget, &mut c);
        let (morphed, rest) = times.split_at(who.len());
        let (alone, fused_times) = rest.split_at(who.len());
        push_rows(rows, "morph_skin", &who, morphed, n, Some(4));
        push_rows(rows, "skin_alone", &who, alone, n, Some(4));
        push_rows(rows, "morph_skin_fused", &who, fused_times, n, Some(4));
        // A check, not a measurement: the fused pass must have written what the product wrote (the
        // parity test finds them equal on every ISA).
        for (f, (_, _, out)) in frames.iter().zip(&fused) {
            let (f, got) = (f.borrow(), out.borrow());
            let close = f.meshes()[0]
                .positions
                .iter()
                .zip(&got.positions)
                .all(|(a, b)| a.abs_diff_eq(*b, 1e-4));
            assert!(
                close,
                "the fused pass skinned other positions than morph_skin"
            );
        }
    }
}

/// Prints, per size and backend, the skin stage with and without the morph pre-pass, the pre-pass's
/// own cost and the speedups over the reference.
pub fn print_summary(rows: &[Row]) {
    let mut printed = false;
    for n in SIZES {
        let of = |kernel: &str| -> Vec<&Row> {
            rows.iter()
                .filter(|r| r.kernel == kernel && r.size == n)
                .collect()
        };
        let (morphed, alone, fused) = (of("morph_skin"), of("skin_alone"), of("morph_skin_fused"));
        if morphed.is_empty() {
            continue;
        }
        println!(
            "morph targets, {n} vertices (positions + normals + tangents, 4 influences, {} targets, {} of them weighted): skin stage, ns/vertex",
            WEIGHTS.len(),
            WEIGHTS.iter().filter(|&&w| w != 0.0).count()
        );
        for ((m, a), f) in morphed.iter().zip(&alone).zip(&fused) {
            println!(
                "  {:<9} morph+skin {:>7.3}  fused {:>7.3} ({:.2}x morph+skin)  skin alone {:>7.3}  pre-pass {:>7.3} ({:.2}x skin alone)  morph+skin {:>5.2}x the reference",
                m.isa,
                m.ns_per_item,
                f.ns_per_item,
                f.ns_per_item / m.ns_per_item,
                a.ns_per_item,
                m.ns_per_item - a.ns_per_item,
                m.ns_per_item / a.ns_per_item,
                m.speedup()
            );
        }
        printed = true;
    }
    if printed {
        println!();
    }
}
