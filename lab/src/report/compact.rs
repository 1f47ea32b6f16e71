//! Compact clips ([`ispc_skinning::CompactClip`], default [`Compression`]: 0.01 cm at 3 cm):
//!
//! - rows `sample_compact_<clip>_<order>`: one character's sampling, ns per joint, of the raw clip
//!   ([`SamplingJob`] with its cursor, on the reference and every ISA) and of its compact form
//!   ([`CompactSamplingJob`] with its [`CompactContext`], rows `compact_<backend>`: the serial decoder
//!   and the compact kernels on each ISA), in the same round-robin, for times
//!   played forward (1/60 s per call), backward, and at random; on `rig67_long` (the 67-joint,
//!   30-second, 60 Hz clip of `scenes::exported_clip`) and, with the assets, CesiumMan's clip;
//! - row `crowd_compact_rig67_forward`: a crowd of [`CROWD`] instances of the long clip's rig, each at
//!   its own time played forward, sampled into the crowd's pose by [`Character::crowd_play`] on one
//!   thread, from the raw clip and (rows `compact_<backend>`) from its compact form, ns per joint of
//!   one instance (`size` = instances);
//! - a printed table of every clip of the shared assets and the long clip: raw key bytes, compact
//!   bytes, the ratio, frames, constant tracks, the largest and 99th-percentile displacement of the
//!   joints and virtual points, and each clip's sampling on `Backend::Auto`, raw and compact, played
//!   forward, backward and at random (ns per joint, in one round-robin per clip and order).

use crate::progress;
use crate::report::row::{backends, push_rows, Row};
use crate::report::timing::{median_ns_per_call, Budget};
use indicatif::ProgressBar;
use ispc_skinning::Backend;
use ispc_skinning::{
    Character, Clip, CompactClip, CompactContext, CompactSamplingJob, Compression, CrowdClipLayer,
    Isa, SamplingContext, SamplingJob, Skeleton, Threads, Trs, TrsMut, Wrap,
};
use std::cell::RefCell;

/// A level-order pose.
type Pose = (
    Vec<ispc_skinning::glam::Vec3>,
    Vec<ispc_skinning::glam::Quat>,
    Vec<ispc_skinning::glam::Vec3>,
);

/// Instances of the crowd row.
const CROWD: usize = 1_000;

/// The three time orders, with their row names per clip.
const ORDERS: [&str; 3] = ["forward", "backward", "random"];

/// Appends the sampling rows and prints the size table.
pub fn rows(budget: Budget, isas: &[Isa], rows: &mut Vec<Row>, bar: &ProgressBar) {
    bar.set_message("sample_compact");
    let settings = Compression::default();
    let (skeleton, clip, rest) = exported_clip();
    let mut table = Vec::new();
    match measure("rig67_long", &skeleton, &clip, &rest, &settings) {
        Ok((compact, line)) => {
            let auto = auto_times(budget, (&clip, &compact, &rest));
            table.push(format!("{line}  {auto}"));
            timing_rows(
                budget,
                isas,
                rows,
                [
                    "sample_compact_rig67_forward",
                    "sample_compact_rig67_backward",
                    "sample_compact_rig67_random",
                ],
                (&clip, &compact, &rest),
            );
            crowd_rows(budget, isas, rows, &skeleton, (&clip, &compact));
        }
        Err(e) => progress::note(bar, &format!("bench: sample_compact_rig67 skipped: {e}")),
    }
    #[cfg(feature = "gltf")]
    assets(budget, isas, rows, bar, &settings, &mut table);
    bar.suspend(|| print_table(&table, rows));
}

/// The long clip of `scenes::exported_keys` (67 joints, 30 s, 60 Hz), its skeleton and rest pose.
fn exported_clip() -> (Skeleton, Clip, Pose) {
    use ispc_skinning::glam::{Quat, Vec3};
    use ispc_skinning::Interpolation::Linear;
    const JOINTS: usize = 67;
    let skeleton = Skeleton::from_parents(&scenes::humanoid_parents(JOINTS))
        .expect("the procedural rig is a valid skeleton");
    let keys = scenes::exported_keys(JOINTS, 30.0, 60.0);
    let mut b = Clip::builder(&skeleton);
    for j in 0..JOINTS {
        b.translation(j, Linear, &keys.times, &keys.translations[j])
            .and_then(|b| b.rotation(j, Linear, &keys.times, &keys.rotations[j]))
            .and_then(|b| b.scale(j, Linear, &keys.times, &keys.scales[j]))
            .expect("the procedural keys are valid");
    }
    let first: Vec<Vec3> = keys.translations.iter().map(|t| t[0]).collect();
    let rest = (
        skeleton.to_level_order(&first).expect("one per joint"),
        vec![Quat::IDENTITY; JOINTS],
        vec![Vec3::ONE; JOINTS],
    );
    (skeleton, b.build(), rest)
}

/// One clip compressed and measured: the compact clip and its table line.
fn measure(
    name: &str,
    skeleton: &Skeleton,
    clip: &Clip,
    rest: &Pose,
    settings: &Compression,
) -> Result<(CompactClip, String), ispc_skinning::Error> {
    let trs = Trs::new(&rest.0, &rest.1, &rest.2);
    let compact = clip.compress(skeleton, trs, settings)?;
    let error = compact.error(clip, skeleton, trs, settings.distance)?;
    let (raw, size) = (clip.key_bytes(), compact.stored_size());
    let line = format!(
        "  {name:<34} {raw:>9} {size:>8} {:>6.1}:1 {:>6} {:>5}/{:<5} {:>9.2e} {:>9.2e}",
        raw as f64 / size as f64,
        compact.frames(),
        compact.constant_tracks(),
        compact.tracks(),
        error.max,
        error.p99
    );
    Ok((compact, line))
}

/// The shared assets' clips: each in the table, CesiumMan's timed too.
#[cfg(feature = "gltf")]
fn assets(
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    bar: &ProgressBar,
    settings: &Compression,
    table: &mut Vec<String>,
) {
    use ispc_skinning::gltf::GltfScene;
    let Some(dir) =
        super::gltf::asset(None).and_then(|p| Some(p.parent()?.parent()?.to_path_buf()))
    else {
        progress::note(
            bar,
            "bench: compact clips of the assets skipped: ../shared/assets is not here",
        );
        return;
    };
    for file in [
        "CesiumMan/CesiumMan.glb",
        "Fox/Fox.glb",
        "RiggedFigure/RiggedFigure.glb",
        "RiggedSimple/RiggedSimple.glb",
        "RobotExpressive/RobotExpressive.glb",
        "SimpleSkin/SimpleSkin.gltf",
    ] {
        let Ok(scene) = GltfScene::load(dir.join(file)) else {
            progress::note(
                bar,
                &format!("bench: compact clips of {file} skipped: it does not load"),
            );
            continue;
        };
        let (t, q, s) = scene.character().level_rest();
        let rest: Pose = (t.to_vec(), q.to_vec(), s.to_vec());
        for c in 0..scene.clips().len() {
            let Ok(clip) = scene.runtime_clip(c) else {
                continue;
            };
            let stem = file.split('/').next().unwrap_or(file);
            let name = format!("{stem} {}", clip.name().unwrap_or(&format!("#{c}")));
            match measure(&name, scene.skeleton(), &clip, &rest, settings) {
                Ok((compact, line)) => {
                    let auto = auto_times(budget, (&clip, &compact, &rest));
                    table.push(format!("{line}  {auto}"));
                    if file.starts_with("CesiumMan") && c == 0 {
                        timing_rows(
                            budget,
                            isas,
                            rows,
                            [
                                "sample_compact_cesiumman_forward",
                                "sample_compact_cesiumman_backward",
                                "sample_compact_cesiumman_random",
                            ],
                            (&clip, &compact, &rest),
                        );
                    }
                }
                Err(e) => progress::note(bar, &format!("bench: compact {name} skipped: {e}")),
            }
        }
    }
}

/// The three orders' rows for one clip: the raw clip on every backend, then the compact clip.
fn timing_rows(
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    kernels: [&'static str; 3],
    (clip, compact, rest): (&Clip, &CompactClip, &Pose),
) {
    let named = backends(isas);
    let on: Vec<Backend> = named.iter().map(|(_, b)| *b).collect();
    for (order, kernel) in ORDERS.into_iter().zip(kernels) {
        let times = order_times(budget, order, &on, (clip, compact, rest));
        push_rows(
            rows,
            kernel,
            &with_compact(&named),
            &times,
            clip.joints(),
            None,
        );
    }
}

/// The row names of a round-robin that times `named` on raw clips, then on compact ones
/// (`compact_<backend>`), in that order.
fn with_compact(named: &[(String, Backend)]) -> Vec<(String, Backend)> {
    let compact = named
        .iter()
        .map(|(name, b)| (format!("compact_{name}"), *b));
    named.iter().cloned().chain(compact).collect()
}

/// Median ns per call of sampling `clip` on each of `on` ([`SamplingJob`] with its cursor), then of
/// sampling `compact` on each ([`CompactSamplingJob`] with its context), in one round-robin, each
/// candidate at its own times in `order` ("forward": 1/60 s per call, "backward", else at random).
fn order_times(
    budget: Budget,
    order: &'static str,
    on: &[Backend],
    (clip, compact, rest): (&Clip, &CompactClip, &Pose),
) -> Vec<f64> {
    let duration = clip.duration().max(1e-3);
    // Each candidate keeps its own time, so every call samples a new one in this order.
    let next = move |t: &mut f32, seed: &mut u64| -> f32 {
        *t = match order {
            "forward" => (*t + 1.0 / 60.0) % duration,
            "backward" => (*t - 1.0 / 60.0).rem_euclid(duration),
            _ => {
                *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (*seed >> 40) as f32 / (1u64 << 24) as f32 * duration
            }
        };
        *t
    };
    let raw: Vec<RefCell<(Pose, SamplingContext, f32, u64)>> = on
        .iter()
        .map(|_| RefCell::new((rest.clone(), SamplingContext::new(), 0.0, 1)))
        .collect();
    let packed: Vec<RefCell<(Pose, CompactContext, f32, u64)>> = on
        .iter()
        .map(|_| RefCell::new((rest.clone(), CompactContext::new(), 0.0f32, 1u64)))
        .collect();
    let mut c: Vec<Box<dyn FnMut() + '_>> = on
        .iter()
        .zip(&raw)
        .map(|(&backend, state)| {
            Box::new(move || {
                let (pose, context, t, seed) = &mut *state.borrow_mut();
                let time = next(t, seed);
                SamplingJob::new(
                    clip,
                    context,
                    TrsMut::new(&mut pose.0, &mut pose.1, &mut pose.2),
                )
                .time(time)
                .wrap(Wrap::Loop)
                .backend(backend)
                .run()
                .expect("the clip samples");
            }) as Box<dyn FnMut() + '_>
        })
        .collect();
    for (&backend, state) in on.iter().zip(&packed) {
        c.push(Box::new(move || {
            let (pose, context, t, seed) = &mut *state.borrow_mut();
            let time = next(t, seed);
            CompactSamplingJob::new(compact, TrsMut::new(&mut pose.0, &mut pose.1, &mut pose.2))
                .time(time)
                .wrap(Wrap::Loop)
                .backend(backend)
                .context(context)
                .run()
                .expect("the compact clip samples");
        }));
    }
    median_ns_per_call(budget, &mut c)
}

/// One clip's sampling on `Backend::Auto`, ns per joint, for the size table: played forward,
/// backward and at random, raw and compact, and the three ratios.
fn auto_times(budget: Budget, (clip, compact, rest): (&Clip, &CompactClip, &Pose)) -> String {
    let joints = clip.joints().max(1) as f64;
    let mut cells = Vec::new();
    for order in ORDERS {
        let t = order_times(budget, order, &[Backend::Auto], (clip, compact, rest));
        if let [raw, packed] = t[..] {
            cells.push(format!(
                "{:>5.1} {:>5.1} {:>5.2}x",
                raw / joints,
                packed / joints,
                packed / raw
            ));
        }
    }
    cells.join("  ")
}

/// The crowd row: [`CROWD`] instances of the rig, each at its own time, played forward through
/// [`Character::crowd_play`] (one thread) from the raw clip and from the compact one, on every backend.
fn crowd_rows(
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    skeleton: &Skeleton,
    (clip, compact): (&Clip, &CompactClip),
) {
    use ispc_skinning::glam::{Quat, Vec3};
    let joints = skeleton.len();
    let character = Character::new(
        skeleton.clone(),
        vec![Vec3::ZERO; joints],
        vec![Quat::IDENTITY; joints],
        vec![Vec3::ONE; joints],
        vec![],
        vec![],
    )
    .expect("the rig is a character");
    let duration = clip.duration().max(1e-3);
    let named = backends(isas);
    let candidates: Vec<(Backend, bool)> = named
        .iter()
        .map(|(_, b)| (*b, false))
        .chain(named.iter().map(|(_, b)| (*b, true)))
        .collect();
    // Each candidate its own crowd and times, spread over the clip, advanced 1/60 s per call.
    let states: Vec<RefCell<(ispc_skinning::CrowdFrame, Vec<f32>)>> = candidates
        .iter()
        .map(|&(backend, _)| {
            let crowd = character
                .crowd_buffers(CROWD)
                .expect("the crowd fits")
                .backend(backend)
                .threads(Threads::One);
            let times = (0..CROWD).map(|i| (i as f32 * 0.173) % duration).collect();
            RefCell::new((crowd, times))
        })
        .collect();
    let (clips, compacts) = ([clip], [compact]);
    let (clips, compacts) = (&clips, &compacts);
    let mut c: Vec<Box<dyn FnMut() + '_>> = candidates
        .iter()
        .zip(&states)
        .map(|(&(_, packed), state)| {
            let character = &character;
            Box::new(move || {
                let (crowd, times) = &mut *state.borrow_mut();
                times
                    .iter_mut()
                    .for_each(|t| *t = (*t + 1.0 / 60.0) % duration);
                let layer = if packed {
                    CrowdClipLayer::compact(compacts, times)
                } else {
                    CrowdClipLayer::new(clips, times)
                };
                character
                    .crowd_play(crowd, &[layer], &[])
                    .expect("the crowd plays");
            }) as Box<dyn FnMut() + '_>
        })
        .collect();
    // ns per joint of one instance: per call, over the joints (push_rows divides by the instances).
    let times: Vec<f64> = median_ns_per_call(budget, &mut c)
        .into_iter()
        .map(|t| t / joints as f64)
        .collect();
    push_rows(
        rows,
        "crowd_compact_rig67_forward",
        &with_compact(&named),
        &times,
        CROWD,
        None,
    );
}

/// Prints the size table and each timed clip's compact sampling against its raw sampling.
fn print_table(table: &[String], rows: &[Row]) {
    if table.is_empty() {
        return;
    }
    println!("compact clips (tolerance 0.01 cm at 3 cm): raw key bytes, compact bytes, ratio, frames, constant/all tracks, max and p99 error (m); sampled on Backend::Auto (its sampling ISA above), ns per joint, raw, compact and compact / raw, played forward, backward, then at random:");
    for line in table {
        println!("{line}");
    }
    let mut kernels: Vec<&str> = Vec::new();
    for r in rows {
        let compact =
            r.kernel.starts_with("sample_compact_") || r.kernel.starts_with("crowd_compact_");
        if compact && !kernels.contains(&r.kernel) {
            kernels.push(r.kernel);
        }
    }
    for kernel in kernels {
        for r in rows.iter().filter(|r| r.kernel == kernel) {
            let Some(isa) = r.isa.strip_prefix("compact_") else {
                continue;
            };
            if let Some(raw) = rows.iter().find(|x| x.kernel == kernel && x.isa == isa) {
                println!(
                    "  {kernel} on {isa}: compact {:.1} ns/joint, raw {:.1} ({:.2}x)",
                    r.ns_per_item,
                    raw.ns_per_item,
                    r.ns_per_item / raw.ns_per_item
                );
            }
        }
    }
    println!();
}
