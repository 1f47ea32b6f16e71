//! Rows `sample_<asset>` and `pose_<asset>`: one character's pose from a runtime clip
//! ([`ispc_skinning::animation`]), on CesiumMan (19 joints) and Fox (24 joints) from `../shared/assets`.
//!
//! - `sample_<asset>`: sampling alone, ns per joint of the skeleton: [`SamplingJob`] (a per-character
//!   cursor, over the rest pose) on the reference and every ISA (ispc/sample.ispc), and `gltf_sample`,
//!   the importer's own [`GltfScene::sample`], which searches every timeline on every call and gives the
//!   reference's bits.
//! - `pose_<asset>`: what a GPU-skinning engine asks of the CPU per character: sample, local to model
//!   and the palettes, ns per joint, on the reference and every ISA; with `--peers`, ozz-animation-rs's
//!   SamplingJob, LocalToModelJob and palette products on the same file, clip and times in the same
//!   round-robin (its keys are ozz's: linear, quantized).
//!
//! - `sample_rig67`, `pose_rig67`: the same on a procedural 67-joint humanoid (fingers and face) with a
//!   90-key clip whose rotations are linear on even joints and cubic on odd ones (`scenes::clip_keys`);
//!   it needs no asset (with `--peers`, ozz-animation-rs on the same rig and clip, its cubic rotations
//!   resampled linearly at 120 per second). `blend_clips_2` and `blend_clips_4`: [`Character::play`] of 2 or 4 such clips
//!   (sample each and blend), ns per joint.
//!
//! - `crowd_pose_rig67`: 10,000 instances of the rig, each with its own clip (four clips, 2,500
//!   instances each) and its own time, palettes only: [`Character::crowd_play_palettes`] (on an ISA,
//!   the crowd sampling kernel, lanes across instances, then local to model and the palettes, block
//!   by block of 16 instances; on the reference, `crowd_play` then `evaluate_crowd_pose`), ns per
//!   joint of one instance (`size` = instances), on one thread and, where the pool has more, on all
//!   of them;
//! - `crowd_pose_rig67_deterministic`: the same with `Precision::Deterministic`, on one thread
//!   (sampling in portable Rust on every backend, then the deterministic crowd kernels, stage after
//!   stage).
//!
//! Each call steps the time by 1/97 of the clip, looping, so every call samples a new time and forward
//! playback's cursors are exercised as a game uses them.

use crate::progress;
use crate::report::peer::{self, Job, Peer};
use crate::report::row::{backends, push_rows, Row};
use crate::report::timing::{median_ns_per_call, Budget};
use indicatif::ProgressBar;
use ispc_skinning::gltf::{Frame, GltfScene, Wrap};
use ispc_skinning::{
    Character, CharacterSkin, Clip, ClipLayer, CrowdClipLayer, Interpolation, Isa, Precision,
    SamplingContext, SamplingJob, Skeleton, Threads, TrsMut,
};
use std::cell::RefCell;

/// The assets measured (row suffix, path under the assets folder).
const ASSETS: [(&str, &str); 2] = [
    ("cesiumman", "CesiumMan/CesiumMan.glb"),
    ("fox", "Fox/Fox.glb"),
];

/// Appends the rows for the procedural rig, then for every asset found beside the default glTF asset
/// (a skip is noted otherwise).
pub fn rows(
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    bar: &ProgressBar,
    mut peer: Option<&mut Peer>,
) {
    bar.set_message("pose_rig67");
    rig_rows(budget, isas, rows, peer.as_deref_mut());
    let Some(dir) =
        super::gltf::asset(None).and_then(|p| Some(p.parent()?.parent()?.to_path_buf()))
    else {
        progress::note(
            bar,
            "bench: sample_* and pose_* skipped: ../shared/assets is not here",
        );
        return;
    };
    for (name, file) in ASSETS {
        let path = dir.join(file);
        bar.set_message(format!("pose_{name}"));
        match GltfScene::load(&path) {
            Ok(scene) if !scene.clips().is_empty() => asset_rows(
                name,
                (&scene, &path),
                budget,
                isas,
                rows,
                peer.as_deref_mut(),
            ),
            Ok(_) => progress::note(bar, &format!("bench: pose_{name} skipped: no clip")),
            Err(e) => progress::note(
                bar,
                &format!("bench: pose_{name} skipped: {}: {e}", path.display()),
            ),
        }
    }
    bar.suspend(|| print_summary(rows));
}

/// Samples `clip` into `frame`'s level-order pose over the rest pose, on the frame's backend.
fn sample(
    scene: &GltfScene,
    clip: &Clip,
    context: &mut SamplingContext,
    t: f32,
    frame: &mut Frame,
) {
    let backend = frame.backend;
    let (rt, rq, rs) = scene.character().level_rest();
    let (tr, q, s) = frame.level_pose_mut();
    tr.copy_from_slice(rt);
    q.copy_from_slice(rq);
    s.copy_from_slice(rs);
    SamplingJob::new(clip, context, TrsMut::new(tr, q, s))
        .time(t)
        .wrap(Wrap::Loop)
        .backend(backend)
        .run()
        .expect("the scene's clip samples");
}

fn asset_rows(
    name: &str,
    (scene, path): (&GltfScene, &std::path::Path),
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    peer: Option<&mut Peer>,
) {
    let kernel_sample: &'static str = if name == "fox" {
        "sample_fox"
    } else {
        "sample_cesiumman"
    };
    let kernel_pose: &'static str = if name == "fox" {
        "pose_fox"
    } else {
        "pose_cesiumman"
    };
    let clip = scene.runtime_clip(0).expect("the scene's clip converts");
    let duration = clip.duration().max(1e-3);
    let joints = scene.skeleton().len();
    let step = |t: &mut f32| {
        *t = (*t + duration / 97.0) % duration;
        *t
    };

    // Sampling alone: the runtime clip with its cursor on every backend, and the importer's sampler.
    let backends = backends(isas);
    let states: Vec<RefCell<(Frame, SamplingContext, f32)>> = backends
        .iter()
        .map(|&(_, backend)| {
            let mut frame = scene.frame_buffers();
            frame.backend = backend;
            RefCell::new((frame, SamplingContext::new(), 0.0))
        })
        .collect();
    let importer = RefCell::new((scene.frame_buffers(), 0.0f32));
    let mut c: Vec<Box<dyn FnMut() + '_>> = states
        .iter()
        .map(|state| {
            let clip = &clip;
            Box::new(move || {
                let (frame, context, t) = &mut *state.borrow_mut();
                let t = step(t);
                sample(scene, clip, context, t, frame);
            }) as Box<dyn FnMut() + '_>
        })
        .collect();
    c.push(Box::new(|| {
        let (frame, t) = &mut *importer.borrow_mut();
        let t = step(t);
        scene
            .sample(Some(0), t, Wrap::Loop, frame)
            .expect("the scene samples");
    }));
    let times = median_ns_per_call(budget, &mut c);
    let mut named = backends.clone();
    named.push(("gltf_sample".to_string(), ispc_skinning::Backend::Reference));
    push_rows(rows, kernel_sample, &named, &times, joints, None);

    // The pose: sample, local to model, palettes, per backend.
    let states: Vec<RefCell<(Frame, SamplingContext, f32)>> = backends
        .iter()
        .map(|&(_, backend)| {
            let mut frame = scene.frame_buffers();
            frame.backend = backend;
            RefCell::new((frame, SamplingContext::new(), 0.0))
        })
        .collect();
    let mut c: Vec<Box<dyn FnMut() + '_>> = states
        .iter()
        .map(|state| {
            let clip = &clip;
            Box::new(move || {
                let (frame, context, t) = &mut *state.borrow_mut();
                let t = step(t);
                sample(scene, clip, context, t, frame);
                scene.local_to_model(frame).expect("local to model runs");
                scene.palettes(frame).expect("the palettes run");
            }) as Box<dyn FnMut() + '_>
        })
        .collect();
    let job = Job {
        kernel: kernel_pose,
        size: joints,
        influences: None,
        file: Some(path),
    };
    let times = peer::median_ns_per_call(peer, job, budget, &mut c);
    push_rows(rows, kernel_pose, &backends, &times, joints, None);
}

/// Prints each asset's pose per backend and sampling against the importer's sampler.
fn print_summary(rows: &[Row]) {
    for kernel in [
        "sample_cesiumman",
        "sample_fox",
        "pose_cesiumman",
        "pose_fox",
    ] {
        let Some(n) = rows.iter().find(|r| r.kernel == kernel).map(|r| r.size) else {
            continue;
        };
        println!("{kernel}: {n} joints, one character, one thread:");
        for r in rows.iter().filter(|r| r.kernel == kernel) {
            println!(
                "  {:<11} {:>7.1} ns/joint  {:>6.2} us/character  {:.2}x the reference",
                r.isa,
                r.ns_per_item,
                r.ns_per_item * n as f64 * 1e-3,
                r.speedup()
            );
        }
        println!();
    }
}

/// The procedural rig's joints and clip keys.
const RIG_JOINTS: usize = 67;
const RIG_KEYS: usize = 90;

/// The rig as a character (rest pose at time 0, one skin over every joint, no mesh) and a clip of it.
fn rig() -> (Character, Skeleton) {
    let skeleton = Skeleton::from_parents(&scenes::humanoid_parents(RIG_JOINTS))
        .expect("the procedural rig is a valid skeleton");
    let (t, q, s) = scenes::animated_pose(RIG_JOINTS, 0.0, true, 1);
    let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s).expect("the rest pose binds");
    let character = Character::new(skeleton.clone(), t, q, s, vec![skin], vec![])
        .expect("the procedural character is valid");
    (character, skeleton)
}

/// A clip of the rig from `scenes::clip_keys` with `seed`.
fn rig_clip(skeleton: &Skeleton, seed: u64) -> Clip {
    let keys = scenes::clip_keys(RIG_JOINTS, RIG_KEYS, seed);
    let mut b = Clip::builder(skeleton);
    for j in 0..RIG_JOINTS {
        let rotation = if j % 2 == 1 {
            Interpolation::CubicSpline
        } else {
            Interpolation::Linear
        };
        b.translation(j, Interpolation::Linear, &keys.times, &keys.translations[j])
            .and_then(|b| b.rotation(j, rotation, &keys.times, &keys.rotations[j]))
            .and_then(|b| b.scale(j, Interpolation::Linear, &keys.times, &keys.scales[j]))
            .expect("the procedural keys are valid");
    }
    b.build()
}

fn rig_rows(budget: Budget, isas: &[Isa], rows: &mut Vec<Row>, mut peer: Option<&mut Peer>) {
    let (character, skeleton) = rig();
    let clips: Vec<Clip> = (0..4).map(|seed| rig_clip(&skeleton, 2 + seed)).collect();
    let duration = clips[0].duration().max(1e-3);
    let step = |t: &mut f32| {
        *t = (*t + duration / 97.0) % duration;
        *t
    };
    let backends = backends(isas);
    let frames = || -> Vec<RefCell<(Frame, SamplingContext, f32)>> {
        backends
            .iter()
            .map(|&(_, backend)| {
                let mut frame = character.frame_buffers();
                frame.backend = backend;
                RefCell::new((frame, SamplingContext::new(), 0.0))
            })
            .collect()
    };
    // Sampling alone, then the pose (sample, local to model, palettes).
    for (kernel, pose) in [("sample_rig67", false), ("pose_rig67", true)] {
        let states = frames();
        let mut c: Vec<Box<dyn FnMut() + '_>> = states
            .iter()
            .map(|state| {
                let (clip, character) = (&clips[0], &character);
                Box::new(move || {
                    let (frame, context, t) = &mut *state.borrow_mut();
                    let t = step(t);
                    let backend = frame.backend;
                    let (tr, q, s) = frame.level_pose_mut();
                    SamplingJob::new(clip, context, TrsMut::new(tr, q, s))
                        .time(t)
                        .wrap(Wrap::Loop)
                        .backend(backend)
                        .run()
                        .expect("the rig's clip samples");
                    if pose {
                        character
                            .evaluate_pose(frame)
                            .expect("the rig's pose evaluates");
                    }
                }) as Box<dyn FnMut() + '_>
            })
            .collect();
        // With `--peers`, ozz-animation-rs poses the same rig and clip (its cubic rotations resampled
        // linearly, as ozz's keys are).
        let times = if pose {
            let job = Job {
                kernel,
                size: RIG_JOINTS,
                influences: None,
                file: None,
            };
            peer::median_ns_per_call(peer.as_deref_mut(), job, budget, &mut c)
        } else {
            median_ns_per_call(budget, &mut c)
        };
        push_rows(rows, kernel, &backends, &times, RIG_JOINTS, None);
    }
    crowd_rows(&character, &clips, budget, &backends, rows);
    // Blends of 2 and 4 clips, each at its own time.
    for (kernel, count) in [("blend_clips_2", 2), ("blend_clips_4", 4)] {
        let states = frames();
        let mut c: Vec<Box<dyn FnMut() + '_>> = states
            .iter()
            .map(|state| {
                let (clips, character) = (&clips, &character);
                Box::new(move || {
                    let (frame, _, t) = &mut *state.borrow_mut();
                    let t = step(t);
                    let layers: Vec<ClipLayer<'_>> = clips[..count]
                        .iter()
                        .enumerate()
                        .map(|(i, clip)| {
                            ClipLayer::new(clip, t + i as f32 * 0.3).weight(1.0 / count as f32)
                        })
                        .collect();
                    character.play(frame, &layers, &[]).expect("the clips play");
                }) as Box<dyn FnMut() + '_>
            })
            .collect();
        let times = median_ns_per_call(budget, &mut c);
        push_rows(rows, kernel, &backends, &times, RIG_JOINTS, None);
    }
}

/// Instances of `crowd_pose_rig67`.
const CROWD: usize = 10_000;

fn crowd_rows(
    character: &Character,
    clips: &[Clip],
    budget: Budget,
    backends: &[(String, ispc_skinning::Backend)],
    rows: &mut Vec<Row>,
) {
    let duration = clips[0].duration().max(1e-3);
    let per_instance: Vec<&Clip> = (0..CROWD)
        .map(|i| &clips[i * clips.len() / CROWD])
        .collect();
    let offsets: Vec<f32> = (0..CROWD)
        .map(|i| (i as f32 * 0.618_034).fract() * duration)
        .collect();
    let pool = rayon::current_num_threads();
    // The deterministic crowd on one thread: sampling in portable Rust, then the deterministic
    // kernels, stage after stage (the fused pass steps aside).
    for (threads, precision) in [
        (Threads::One, Precision::Fast),
        (Threads::All, Precision::Fast),
        (Threads::One, Precision::Deterministic),
    ] {
        if threads == Threads::All && pool < 2 {
            continue;
        }
        let states: Vec<RefCell<(ispc_skinning::CrowdFrame, f32, Vec<f32>)>> = backends
            .iter()
            .map(|&(_, backend)| {
                let crowd = character
                    .crowd_buffers(CROWD)
                    .expect("10,000 instances of the rig fit")
                    .backend(backend)
                    .threads(threads)
                    .precision(precision);
                RefCell::new((crowd, 0.0, offsets.clone()))
            })
            .collect();
        let mut c: Vec<Box<dyn FnMut() + '_>> = states
            .iter()
            .map(|state| {
                let (per_instance, offsets) = (&per_instance, &offsets);
                Box::new(move || {
                    let (crowd, t, times) = &mut *state.borrow_mut();
                    *t = (*t + duration / 97.0) % duration;
                    for (time, offset) in times.iter_mut().zip(offsets) {
                        *time = *t + offset;
                    }
                    character
                        .crowd_play_palettes(
                            crowd,
                            &[CrowdClipLayer::new(per_instance, times)],
                            &[],
                        )
                        .expect("the crowd plays");
                }) as Box<dyn FnMut() + '_>
            })
            .collect();
        // ns per joint of one instance: the call over instances times joints.
        let times: Vec<f64> = median_ns_per_call(budget, &mut c)
            .iter()
            .map(|t| t / RIG_JOINTS as f64)
            .collect();
        let first = rows.len();
        let name = match precision {
            Precision::Fast => "crowd_pose_rig67",
            Precision::Deterministic => "crowd_pose_rig67_deterministic",
        };
        push_rows(rows, name, backends, &times, CROWD, None);
        if threads == Threads::All {
            for r in &mut rows[first..] {
                r.threads = pool;
            }
        }
    }
}
