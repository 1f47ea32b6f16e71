//! The `pose_rig67` workload on ozz-animation-rs: the lab's procedural rig (`scenes::humanoid_parents`,
//! rest pose `animated_pose(.., 0.0, true, 1)`, one skin over every joint) and its clip
//! (`scenes::clip_keys`, 90 keys at 30 per second, seed 2: linear translations and scales, rotations
//! linear on even joints and cubic spline on odd ones), sampled, local to model and the palettes at
//! the lab's sequence of times, as the lab's `pose_rig67` row.
//!
//! ozz's keys are linear only: each cubic rotation track is resampled from the library's reference
//! sampler at four points per key interval (120 per second), and the linear tracks keep their keys.
//! The palettes are checked at setup against the library's reference (see `check_palettes`).

use crate::archive::{Track, Trs};
use crate::gltf_frame::{check_palettes, frame_of};
use crate::workload::Workload;
use crate::workloads::mat4;
use ispc_skinning::{
    Backend, Character, CharacterSkin, Clip, Frame, Interpolation, SamplingContext, SamplingJob,
    Skeleton, TrsMut, Wrap,
};

/// The clip's keys (the lab's `RIG_KEYS`).
const KEYS: usize = 90;
/// Points per key interval where a cubic rotation is resampled.
const RESAMPLE: usize = 4;

fn err(e: impl std::fmt::Display) -> String {
    format!("pose_rig67: {e}")
}

/// Samples `clip` at `time` into `frame`'s level-order pose on the reference, over the rest pose.
fn sample(
    character: &Character,
    clip: &Clip,
    context: &mut SamplingContext,
    frame: &mut Frame,
    time: f32,
) -> Result<(), String> {
    let (rt, rq, rs) = character.level_rest();
    let (t, q, s) = frame.level_pose_mut();
    t.copy_from_slice(rt);
    q.copy_from_slice(rq);
    s.copy_from_slice(rs);
    SamplingJob::new(clip, context, TrsMut::new(t, q, s))
        .time(time)
        .wrap(Wrap::Loop)
        .backend(Backend::Reference)
        .run()
        .map_err(err)
}

/// # Errors
/// A rig or clip the library refuses, or palettes that disagree with the reference.
pub fn setup(joints: usize) -> Result<Box<dyn Workload>, String> {
    let skeleton = Skeleton::from_parents(&scenes::humanoid_parents(joints)).map_err(err)?;
    let (t, q, s) = scenes::animated_pose(joints, 0.0, true, 1);
    let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s).map_err(err)?;
    let keys = scenes::clip_keys(joints, KEYS, 2);
    let mut b = Clip::builder(&skeleton);
    for j in 0..joints {
        let rotation = if j % 2 == 1 {
            Interpolation::CubicSpline
        } else {
            Interpolation::Linear
        };
        b.translation(j, Interpolation::Linear, &keys.times, &keys.translations[j])
            .and_then(|b| b.rotation(j, rotation, &keys.times, &keys.rotations[j]))
            .and_then(|b| b.scale(j, Interpolation::Linear, &keys.times, &keys.scales[j]))
            .map_err(err)?;
    }
    let clip = b.build();
    let skin_levels = skeleton.level_indices(&skin.joints).map_err(err)?;
    let inverse_binds = skin.inverse_binds.iter().map(mat4).collect();
    let character = Character::new(
        skeleton.clone(),
        t.clone(),
        q.clone(),
        s.clone(),
        vec![skin],
        vec![],
    )
    .map_err(err)?;
    let (start, duration) = (keys.times[0], clip.duration().max(1e-3));
    let ratio = |time: f32| ((time - start) / duration).clamp(0.0, 1.0);

    // The reference's level-order rotations at the resampled times.
    let mut frame = character.frame_buffers().backend(Backend::Reference);
    let mut context = SamplingContext::new();
    let mut resampled: Vec<(f32, Vec<[f32; 4]>)> = Vec::new();
    for k in 0..keys.times.len() {
        let steps = if k + 1 < keys.times.len() {
            RESAMPLE
        } else {
            1
        };
        for r in 0..steps {
            let time = match keys.times.get(k + 1) {
                Some(&next) => keys.times[k] + (next - keys.times[k]) * r as f32 / RESAMPLE as f32,
                None => keys.times[k],
            };
            sample(&character, &clip, &mut context, &mut frame, time)?;
            let q = frame.level_pose().1.iter().map(|q| q.to_array()).collect();
            resampled.push((ratio(time), q));
        }
    }

    let order = skeleton.original_order();
    let rest: Vec<Trs> = order
        .iter()
        .map(|&j| (t[j].to_array(), q[j].to_array(), s[j].to_array()))
        .collect();
    let tracks: Vec<Track> = order
        .iter()
        .enumerate()
        .map(|(level, &j)| {
            let at = |k: usize| ratio(keys.times[k]);
            Track {
                translations: (0..KEYS)
                    .map(|k| (at(k), keys.translations[j][k].to_array()))
                    .collect(),
                rotations: if j % 2 == 1 {
                    resampled.iter().map(|(r, q)| (*r, q[level])).collect()
                } else {
                    (0..KEYS)
                        .map(|k| (at(k), keys.rotations[j][k].to_array()))
                        .collect()
                },
                scales: (0..KEYS)
                    .map(|k| (at(k), keys.scales[j][k].to_array()))
                    .collect(),
            }
        })
        .collect();
    let mut f = frame_of(
        skeleton.level_parents(),
        &rest,
        ("rig67", &tracks),
        (start, duration),
        vec![(skin_levels, inverse_binds)],
    )?;
    check_palettes(&mut f, |time| {
        sample(&character, &clip, &mut context, &mut frame, time)?;
        character.evaluate_pose(&mut frame).map_err(err)?;
        Ok(frame.palettes().to_vec())
    })?;
    Ok(Box::new(f))
}
