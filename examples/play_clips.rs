//! Clips from your own data, blended in a frame, with root motion, and the pose a GPU skinner uploads:
//! what an engine with its own animation format asks of the CPU per character per frame; then the
//! palettes of a GPU-skinned crowd, every instance playing its own clip at its own time.
//!
//! ```sh
//! cargo run --release -p ispc-skinning --example play_clips
//! ```

use ispc_skinning::glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    palette_rows_3x4, Character, CharacterSkin, Clip, ClipLayer, CrowdClipLayer, Interpolation,
    Skeleton, Wrap,
};

fn main() -> Result<(), ispc_skinning::Error> {
    // A tiny biped, in our own joint order: 0 hips (root), 1 spine, 2 head, 3 left leg, 4 right leg.
    let skeleton = Skeleton::from_parents(&[None, Some(0), Some(1), Some(0), Some(0)])?;
    let rest_t = [
        Vec3::new(0.0, 1.0, 0.0),
        Vec3::new(0.0, 0.3, 0.0),
        Vec3::new(0.0, 0.4, 0.0),
        Vec3::new(-0.1, 0.0, 0.0),
        Vec3::new(0.1, 0.0, 0.0),
    ];
    let (rest_q, rest_s) = ([Quat::IDENTITY; 5], [Vec3::ONE; 5]);
    let skin = CharacterSkin::from_bind_pose(&skeleton, &rest_t, &rest_q, &rest_s)?;
    let character = Character::new(
        skeleton.clone(),
        rest_t.to_vec(),
        rest_q.to_vec(),
        rest_s.to_vec(),
        vec![skin],
        vec![],
    )?;

    // A walk cycle from plain arrays: legs swing, hips move 1.2 m forward per 1 s cycle.
    let times = [0.0, 0.25, 0.5, 0.75, 1.0];
    let swing = |sign: f32| {
        times.map(|t| Quat::from_rotation_x(sign * 0.5 * (t * std::f32::consts::TAU).sin()))
    };
    let mut walk = Clip::builder(&skeleton);
    walk.name("walk")
        .translation(
            0,
            Interpolation::Linear,
            &times,
            &times.map(|t| Vec3::new(0.0, 1.0, 1.2 * t)),
        )?
        .rotation(3, Interpolation::Linear, &times, &swing(1.0))?
        .rotation(4, Interpolation::Linear, &times, &swing(-1.0))?;
    let walk = walk.build();
    // A wave of the head, a cubic spline (in-tangent, value, out-tangent per key).
    let nod = [Quat::IDENTITY, Quat::from_rotation_y(0.6), Quat::IDENTITY];
    let mut wave = Clip::builder(&skeleton);
    wave.name("look around").track(
        2,
        ispc_skinning::Property::Rotation,
        Interpolation::CubicSpline,
        &[0.0, 1.0, 2.0],
        &[
            [0.0; 4],
            nod[0].to_array(),
            [0.0; 4],
            [0.0; 4],
            nod[1].to_array(),
            [0.0; 4],
            [0.0; 4],
            nod[2].to_array(),
            [0.0; 4],
        ]
        .concat(),
    )?;
    let wave = wave.build();

    // Upper body only for the wave: weights per joint, in our order.
    let upper_body = [0.0, 1.0, 1.0, 0.0, 0.0];
    let mut frame = character.frame_buffers();
    let mut place = Mat4::IDENTITY;
    let mut upload = vec![[[0.0f32; 4]; 3]; skeleton.len()];
    let dt = 1.0 / 30.0;
    for i in 0..90 {
        let t = i as f32 * dt;
        let layers = [
            ClipLayer::new(&walk, t),
            ClipLayer::new(&wave, t)
                .weight(0.8)
                .joint_weights(&upper_body),
        ];
        character.play(&mut frame, &layers, &[])?;
        // Play in place: the hips' forward motion moves the whole character instead.
        let (moved, turned) = walk.root_motion(0, t, t + dt, Wrap::Loop)?;
        place *= Mat4::from_rotation_translation(Quat::from_rotation_y(turned), moved);
        let (mut hips_t, hips_q, hips_s) = frame.local(0).expect("joint 0 exists");
        hips_t.z = 0.0;
        frame.set_local(0, hips_t, hips_q, hips_s)?;
        frame.root = place;
        // Local to model and the palette only: no vertex work, the GPU skins.
        character.evaluate_pose(&mut frame)?;
        palette_rows_3x4(&frame.palettes()[0], &mut upload)?;
    }
    let head = frame.model(2).expect("joint 2 exists").w_axis.truncate();
    println!(
        "after 3 s: the character stands at {:.2}, its head at {head:.2}",
        place.w_axis.truncate()
    );
    println!(
        "palette row 0 of the head, ready to upload: {:?}",
        upload[2][0]
    );

    // A crowd skinned on the GPU: 1,000 instances, each walking or looking around at its own time,
    // the palettes only (sampling, local to model and palettes in one pass, 16 instances at a time).
    let instances = 1_000;
    let clips: Vec<&Clip> = (0..instances)
        .map(|i| if i < instances / 2 { &walk } else { &wave })
        .collect();
    let mut crowd = character.crowd_buffers(instances)?;
    let mut times: Vec<f32> = (0..instances).map(|i| i as f32 * 0.01).collect();
    for _ in 0..10 {
        times.iter_mut().for_each(|t| *t += dt);
        character.crowd_play_palettes(&mut crowd, &[CrowdClipLayer::new(&clips, &times)], &[])?;
    }
    let palettes = crowd.palettes(0).expect("the character has one skin");
    let last = palettes.instance(instances - 1).expect("instance in range");
    palette_rows_3x4(last, &mut upload)?;
    println!(
        "{} palette entries for the GPU; the last instance's head, row 0: {:?}",
        palettes.as_slice().len(),
        upload[2][0]
    );
    Ok(())
}
