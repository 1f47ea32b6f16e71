//! The morph-target rows of the report (issue 17): `morph_skin`, the skin stage of a [`Character`]
//! frame for a mesh with morph targets whose weights are not all zero (on an ISA, the fused morph + skin
//! pass; on the reference, the pre-pass into the frame's copy of the prepared mesh, then skinning);
//! `morph_skin_prepass`, the same stage with the pre-pass on every backend
//! ([`skin_with_prepass`], the alternative the fused pass replaced); and `skin_alone`, the same stage of
//! the same mesh with every weight zero (nothing is morphed and the shared mesh is skinned as it is).
//! All three run on the reference and every ISA in one round-robin, on meshes of 1,024 and 20,592
//! vertices (the skinning rows' generated mesh: positions, normals and tangents, 4 influences over 64
//! joints) with 4 targets, each moving positions, normals and tangents, 3 of them with a weight that is
//! not zero. The summary gives each path's cost over skinning alone and the ratios.
//!
//! The crowd rows (issue 35, part 5): `crowd_morph_skin`, the skin stage of a [`CrowdFrame`] of
//! [`CROWD`] instances of the 1,024-vertex character, each with its own weights (every target's weight
//! varies per instance, target 2 stays off), on one thread; and `crowd_skin_alone`, the same crowd with
//! every weight zero (one `CrowdSkinningJob` for the whole crowd). Sizes count vertices of the whole
//! crowd, so ns per item is ns per skinned vertex.

use crate::report::row::{backends, push_rows, Row};
use crate::report::timing::{median_ns_per_call, Budget};
use glam::{Quat, Vec3};
use indicatif::ProgressBar;
use ispc_skinning::experiments::skin_with_prepass;
use ispc_skinning::{
    Attribute, Backend, Character, CharacterSkin, CrowdFrame, Frame, Isa, MeshInput, MorphTargets,
    PrepareOptions, Skeleton, SkinnedMesh, Threads,
};
use scenes::{animated_pose, humanoid_parents, skin_mesh, Rng};
use std::cell::RefCell;

/// Joints of the rig (the skinning mesh's joint count).
const JOINTS: usize = 64;
/// The mesh sizes: the skinning rows' small mesh and the default character's vertex count.
const SIZES: [usize; 2] = [1024, 20_592];
/// The frame's weights: target 2 is off, so the pre-pass skips it (its deltas are never read).
const WEIGHTS: [f32; 4] = [0.5, 0.3, 0.0, 0.8];
/// Instances of the crowd rows.
pub const CROWD: usize = 16;

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

/// A crowd of [`CROWD`] instances of `character` on `backend` and one thread, each posed and placed
/// differently, with its palettes computed; each instance's weights are [`WEIGHTS`] scaled by its own
/// factor where `morphed`, else zero.
fn crowd(character: &Character, backend: Backend, morphed: bool) -> CrowdFrame {
    let mut crowd = character
        .crowd_buffers(CROWD)
        .expect("a small crowd")
        .backend(backend)
        .threads(Threads::One);
    for i in 0..CROWD {
        let (_, q, _) = animated_pose(JOINTS, 0.1 * i as f32, false, 11);
        for (joint, &rotation) in q.iter().enumerate() {
            let t = crowd.pose().joint(i, joint).expect("in range").0;
            crowd
                .pose_mut()
                .set_joint(i, joint, t, rotation, Vec3::ONE)
                .expect("in range");
        }
        crowd.roots_mut()[i] = glam::Mat4::from_translation(Vec3::new(i as f32, 0.0, 0.0));
        let scale = if morphed { 0.5 + 0.05 * i as f32 } else { 0.0 };
        crowd
            .set_mesh_weights(0, i, &WEIGHTS.map(|w| w * scale))
            .expect("one weight per target");
    }
    character.evaluate_crowd(&mut crowd).expect("a valid crowd");
    crowd
}

/// Appends the `crowd_morph_skin` and `crowd_skin_alone` rows.
fn crowd_rows(budget: Budget, who: &[(String, Backend)], rows: &mut Vec<Row>) {
    let n = SIZES[0];
    let character = character(n);
    let crowds: Vec<RefCell<CrowdFrame>> = [true, false]
        .into_iter()
        .flat_map(|morphed| {
            who.iter()
                .map(|&(_, b)| RefCell::new(crowd(&character, b, morphed)))
                .collect::<Vec<_>>()
        })
        .collect();
    let character = &character;
    let mut c: Vec<Box<dyn FnMut() + '_>> = crowds
        .iter()
        .map(|f| {
            Box::new(move || {
                character
                    .crowd_skin(&mut f.borrow_mut())
                    .expect("a valid crowd");
            }) as Box<dyn FnMut() + '_>
        })
        .collect();
    let times = median_ns_per_call(budget, &mut c);
    let (morphed, alone) = times.split_at(who.len());
    push_rows(rows, "crowd_morph_skin", who, morphed, n * CROWD, Some(4));
    push_rows(rows, "crowd_skin_alone", who, alone, n * CROWD, Some(4));
}

/// Appends the `morph_skin`, `skin_alone` and `morph_skin_prepass` rows, and the crowd rows.
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
        // The pre-pass candidates: one more morphed frame per backend, skinned with the pre-pass.
        let prepass: Vec<RefCell<Frame>> = who
            .iter()
            .map(|&(_, b)| RefCell::new(frame(&character, b, &WEIGHTS)))
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
        c.extend(prepass.iter().map(|f| {
            Box::new(move || {
                skin_with_prepass(character, &mut f.borrow_mut()).expect("a valid frame");
            }) as Box<dyn FnMut() + '_>
        }));
        let times = median_ns_per_call(budget, &mut c);
        let (morphed, rest) = times.split_at(who.len());
        let (alone, prepass_times) = rest.split_at(who.len());
        push_rows(rows, "morph_skin", &who, morphed, n, Some(4));
        push_rows(rows, "skin_alone", &who, alone, n, Some(4));
        push_rows(rows, "morph_skin_prepass", &who, prepass_times, n, Some(4));
        // A check, not a measurement: both paths skin the same floats (tests/morph_in_place.rs finds
        // them equal bit for bit on every ISA).
        for (f, p) in frames.iter().zip(&prepass) {
            let (f, p) = (f.borrow(), p.borrow());
            assert!(
                f.meshes()[0].positions == p.meshes()[0].positions,
                "the pre-pass skinned other positions than morph_skin"
            );
        }
    }
    progress.set_message(format!("crowd_morph_skin, {CROWD} x {} vertices", SIZES[0]));
    crowd_rows(budget, &who, rows);
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
        let (morphed, alone, prepass) =
            (of("morph_skin"), of("skin_alone"), of("morph_skin_prepass"));
        if morphed.is_empty() {
            continue;
        }
        println!(
            "morph targets, {n} vertices (positions + normals + tangents, 4 influences, {} targets, {} of them weighted): skin stage, ns/vertex",
            WEIGHTS.len(),
            WEIGHTS.iter().filter(|&&w| w != 0.0).count()
        );
        for ((m, a), p) in morphed.iter().zip(&alone).zip(&prepass) {
            println!(
                "  {:<9} morph+skin {:>7.3} (morph {:>6.3}, {:.2}x skin alone)  with the pre-pass {:>7.3} (morph {:>6.3})  skin alone {:>7.3}  morph+skin {:>5.2}x the reference",
                m.isa,
                m.ns_per_item,
                m.ns_per_item - a.ns_per_item,
                m.ns_per_item / a.ns_per_item,
                p.ns_per_item,
                p.ns_per_item - a.ns_per_item,
                a.ns_per_item,
                m.speedup()
            );
        }
        printed = true;
    }
    let of = |kernel: &str| -> Vec<&Row> { rows.iter().filter(|r| r.kernel == kernel).collect() };
    let (crowd, alone, single) = (
        of("crowd_morph_skin"),
        of("crowd_skin_alone"),
        of("morph_skin_prepass"),
    );
    if !crowd.is_empty() {
        println!(
            "morph targets in a crowd, {CROWD} x {} vertices, each instance its own weights, one thread: skin stage, ns/vertex",
            SIZES[0]
        );
        for (m, a) in crowd.iter().zip(&alone) {
            let one = single
                .iter()
                .find(|r| r.isa == m.isa && r.size == SIZES[0])
                .map_or(f64::NAN, |r| r.ns_per_item);
            println!(
                "  {:<9} morph+skin {:>7.3} (morph {:>6.3})  skin alone {:>7.3}  one frame with the pre-pass {:>7.3}  morph+skin {:>5.2}x the reference",
                m.isa,
                m.ns_per_item,
                m.ns_per_item - a.ns_per_item,
                a.ns_per_item,
                one,
                m.speedup()
            );
        }
        printed = true;
    }
    if printed {
        println!();
    }
}
