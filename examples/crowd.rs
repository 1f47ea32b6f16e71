//! Compute the model matrices of a crowd: many instances of one skeleton, each with its own pose and
//! its own place in the world, in one call.
//!
//! ```sh
//! cargo run --release -p ispc-skinning --example crowd
//! ```

use ispc_skinning::glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    CrowdLocalToModelJob, CrowdModels, CrowdPose, LocalToModelJob, Locals, Skeleton, Threads, Trs,
};
use std::time::Instant;

const INSTANCES: usize = 500;

fn main() -> Result<(), ispc_skinning::Error> {
    // A small character: a spine of 4 joints, then two arms of 3 joints each hanging off the top.
    // Parent indices are in our own order; `None` marks the root.
    let parents = [
        None,
        Some(0),
        Some(1),
        Some(2),
        Some(3),
        Some(4),
        Some(5),
        Some(3),
        Some(7),
        Some(8),
    ];
    let skeleton = Skeleton::from_parents(&parents)?;
    let joints = skeleton.len();

    // Every instance gets its own pose: the same bone offsets, rotated a little differently.
    // The crowd pose stores them in the layout the kernels want (blocks of 16 instances).
    let mut pose = CrowdPose::new(joints, INSTANCES);
    for instance in 0..INSTANCES {
        let (t, q, s) = instance_pose(&skeleton, instance);
        let trs = Trs {
            translations: &t,
            rotations: &q,
            scales: &s,
        };
        pose.set_instance(instance, trs)?;
    }

    // Each instance's root: where it stands in the world (a grid of 25 x 20, facing around).
    let roots: Vec<Mat4> = (0..INSTANCES)
        .map(|i| {
            let at = Vec3::new((i % 25) as f32 * 2.0, 0.0, (i / 25) as f32 * 2.0);
            Mat4::from_rotation_translation(Quat::from_rotation_y(i as f32), at)
        })
        .collect();

    // One call computes every joint of every instance.
    let mut models = CrowdModels::new(joints, INSTANCES);
    let mut job = CrowdLocalToModelJob::new(&skeleton, &pose, &mut models)
        .roots(&roots)
        .threads(Threads::All); // spread blocks of instances over rayon's pool
    job.run()?; // the first call also starts rayon's threads: leave it out of the timing
    const RUNS: u32 = 20;
    let start = Instant::now();
    for _ in 0..RUNS {
        job.run()?;
    }
    let per_call = start.elapsed() / RUNS;
    println!(
        "{INSTANCES} instances x {joints} joints: {per_call:?} per call, {:.0} ns per instance",
        per_call.as_nanos() as f64 / INSTANCES as f64
    );

    // Check one instance against the single-skeleton job with the same pose and root.
    let check = 123;
    let (t, q, s) = instance_pose(&skeleton, check);
    let mut single = vec![Mat4::ZERO; joints];
    let locals = Locals::Trs(Trs {
        translations: &t,
        rotations: &q,
        scales: &s,
    });
    LocalToModelJob::new(&skeleton, locals, &mut single)
        .root(roots[check])
        .run()?;
    let mut from_crowd = vec![Mat4::ZERO; joints];
    models.instance_models(check, &mut from_crowd)?;
    let worst = single
        .iter()
        .zip(&from_crowd)
        .map(|(a, b)| {
            (*a - *b)
                .abs()
                .to_cols_array()
                .into_iter()
                .fold(0.0, f32::max)
        })
        .fold(0.0, f32::max);
    // Different kernels may round differently, so compare with a tolerance.
    assert!(worst < 1e-4, "instance {check} differs by {worst}");
    println!("instance {check} matches LocalToModelJob (largest difference {worst:e})");
    let hand = skeleton.level_index(6).expect("joint 6 exists"); // the end of the first arm
    println!(
        "instance {check}'s first hand is at {:.3}",
        from_crowd[hand].w_axis.truncate()
    );
    Ok(())
}

/// Instance `i`'s local pose, in the skeleton's level order (what every job takes): each bone 1 unit
/// above its parent, bent by an angle that depends on the instance.
fn instance_pose(skeleton: &Skeleton, i: usize) -> (Vec<Vec3>, Vec<Quat>, Vec<Vec3>) {
    let n = skeleton.len();
    let bend = Quat::from_rotation_z(0.1 + 0.002 * i as f32);
    let translations = (0..n)
        .map(|j| {
            if skeleton.parent(j).is_some() {
                Vec3::Y
            } else {
                Vec3::ZERO
            }
        })
        .collect();
    (translations, vec![bend; n], vec![Vec3::ONE; n])
}
