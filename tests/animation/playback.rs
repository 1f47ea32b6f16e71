//! Clips played on a character: root motion accumulates over cycles and its yaw follows the rotation,
//! a pose for the GPU stops after the palettes, and a frame plays blended clips with masks and
//! additive layers, each against the clips sampled and blended by hand.

use super::{bits, chain, rest, Pose};
use glam::{Quat, Vec3};
use ispc_skinning::{
    Backend, Clip, Error, Interpolation, SamplingContext, SamplingJob, Skeleton, TrsMut, Wrap,
};

#[test]
fn root_motion_accumulates_over_cycles_and_yaw_follows_the_rotation() {
    // A root walking 2 m along +Z per 1 s cycle while turning 0.5 rad about +Y.
    let skeleton = chain(2);
    let mut b = Clip::builder(&skeleton);
    let times = [0.0, 0.5, 1.0];
    let walk = [
        Vec3::ZERO,
        Vec3::new(0.0, 0.1, 1.0),
        Vec3::new(0.0, 0.0, 2.0),
    ];
    b.translation(0, Interpolation::Linear, &times, &walk)
        .unwrap();
    let turn = [0.0, 0.25, 0.5].map(Quat::from_rotation_y);
    b.rotation(0, Interpolation::Linear, &times, &turn).unwrap();
    let clip = b.build();
    let close = |a: f32, b: f32| (a - b).abs() < 1e-5;
    let (m, yaw) = clip.root_motion(0, 0.25, 0.75, Wrap::Loop).unwrap();
    assert!(
        close(m.z, 1.0) && close(m.y, 0.0) && close(yaw, 0.25),
        "{m} {yaw}"
    );
    // From half a cycle to two and a half: two cycles, 4 m and 1 rad.
    let (m, yaw) = clip.root_motion(0, 0.5, 2.5, Wrap::Loop).unwrap();
    assert!(close(m.z, 4.0) && close(yaw, 1.0), "{m} {yaw}");
    // Backwards is the opposite motion.
    let (back, yaw_back) = clip.root_motion(0, 2.5, 0.5, Wrap::Loop).unwrap();
    assert!(close(back.z, -4.0) && close(yaw_back, -1.0));
    // Clamped: no more than the clip holds.
    let (m, _) = clip.root_motion(0, -3.0, 7.0, Wrap::Clamp).unwrap();
    assert!(close(m.z, 2.0));
    // A joint without tracks does not move; bad input is an error.
    assert_eq!(
        clip.root_motion(1, 0.0, 3.0, Wrap::Loop).unwrap(),
        (Vec3::ZERO, 0.0)
    );
    assert!(matches!(
        clip.root_motion(2, 0.0, 1.0, Wrap::Loop),
        Err(Error::JointOutOfRange { .. })
    ));
    assert!(matches!(
        clip.root_motion(0, 0.0, f32::INFINITY, Wrap::Loop),
        Err(Error::NotFinite {
            what: "root motion times",
            index: 1,
            ..
        })
    ));
}

#[test]
fn a_pose_for_the_gpu_stops_after_the_palettes() {
    use ispc_skinning::glam::Mat4;
    use ispc_skinning::{palette_rows_3x4, Character, CharacterSkin, PaletteMatrix};
    let skeleton = chain(3);
    let rest_t = vec![Vec3::new(0.0, 1.0, 0.0); 3];
    let skin = CharacterSkin {
        joints: (0..3).collect(),
        inverse_binds: vec![Mat4::IDENTITY; 3],
    };
    let character = Character::new(
        skeleton,
        rest_t.clone(),
        vec![Quat::IDENTITY; 3],
        vec![Vec3::ONE; 3],
        vec![skin],
        vec![],
    )
    .unwrap();
    let mut frame = character.frame_buffers();
    character.evaluate_pose(&mut frame).unwrap();
    let palette = &frame.palettes()[0];
    assert_eq!(
        palette[2].to_mat4(),
        Mat4::from_translation(Vec3::new(0.0, 3.0, 0.0))
    );
    let mut rows = vec![[[0.0f32; 4]; 3]; 3];
    palette_rows_3x4(palette, &mut rows).unwrap();
    assert_eq!(
        rows[2][1],
        [0.0, 1.0, 0.0, 3.0],
        "row 1 of joint 2: y gets +3"
    );
    assert_eq!(std::mem::size_of_val(&rows[0]), 48);
    assert!(matches!(
        palette_rows_3x4(palette, &mut rows[..2]),
        Err(Error::LengthMismatch {
            input: 3,
            output: 2
        })
    ));
    assert_eq!(
        PaletteMatrix::IDENTITY.to_rows_3x4()[0],
        [1.0, 0.0, 0.0, 0.0]
    );
}

/// A character of `n` chained joints with one skin over all of them and no mesh.
pub(crate) fn character(skeleton: Skeleton) -> ispc_skinning::Character {
    use ispc_skinning::glam::Mat4;
    let n = skeleton.len();
    let skin = ispc_skinning::CharacterSkin {
        joints: (0..n).collect(),
        inverse_binds: vec![Mat4::IDENTITY; n],
    };
    ispc_skinning::Character::new(
        skeleton,
        vec![Vec3::new(0.0, 1.0, 0.0); n],
        vec![Quat::IDENTITY; n],
        vec![Vec3::ONE; n],
        vec![skin],
        vec![],
    )
    .unwrap()
}

#[test]
fn a_frame_plays_blended_clips_with_masks_and_additive_layers() {
    use ispc_skinning::{BlendLayer, BlendingJob, ClipLayer, Trs};
    // A branching skeleton, so that your order and level order differ.
    let parents = [Some(2), Some(2), None, Some(0), Some(1)];
    let skeleton = Skeleton::from_parents(&parents).unwrap();
    let character = character(skeleton.clone());
    let n = parents.len();
    let make = |axis: Vec3, scale: f32| {
        let mut b = Clip::builder(&skeleton);
        for j in 0..n {
            let q = [
                Quat::IDENTITY,
                Quat::from_axis_angle(axis, scale * (j + 1) as f32 * 0.3),
            ];
            let t = [Vec3::ZERO, axis * scale * j as f32];
            b.rotation(j, Interpolation::Linear, &[0.0, 1.0], &q)
                .unwrap();
            b.translation(j, Interpolation::Linear, &[0.0, 1.0], &t)
                .unwrap();
        }
        b.build()
    };
    let (walk, wave) = (make(Vec3::X, 1.0), make(Vec3::Y, 2.0));
    let mut frame = character.frame_buffers().backend(Backend::Reference);

    // One layer of weight 1: the clip's pose (blending normalizes the rotation once more).
    character
        .play(&mut frame, &[ClipLayer::new(&walk, 0.4)], &[])
        .unwrap();
    let (sampled_t, sampled_q, _) = sample_over(&character, &walk, 0.4);
    let (ft, fq, _) = frame.level_pose();
    for j in 0..n {
        assert!((ft[j] - sampled_t[j]).abs().max_element() < 1e-6);
        assert!(fq[j].angle_between(sampled_q[j]) < 1e-5);
    }

    // Two layers with a mask: exactly BlendingJob over the two sampled poses.
    let mut mask = vec![1.0; n];
    mask[3] = 0.0; // joint 3 (your order) follows the walk only
    let layers = [
        ClipLayer::new(&walk, 0.4).weight(0.5),
        ClipLayer::new(&wave, 0.7).weight(0.5).joint_weights(&mask),
    ];
    character.play(&mut frame, &layers, &[]).unwrap();
    let a = sample_over(&character, &walk, 0.4);
    let b = sample_over(&character, &wave, 0.7);
    let level_mask: Vec<f32> = (0..n)
        .map(|l| mask[skeleton.original_index(l).unwrap()])
        .collect();
    let (rt, rq, rs) = character.level_rest();
    let (mut t, mut q, mut s) = rest(n);
    let blend = [
        BlendLayer::new(Trs::new(&a.0, &a.1, &a.2), 0.5),
        BlendLayer::new(Trs::new(&b.0, &b.1, &b.2), 0.5).joint_weights(&level_mask),
    ];
    BlendingJob::new(
        &skeleton,
        Trs::new(rt, rq, rs),
        TrsMut::new(&mut t, &mut q, &mut s),
    )
    .layers(&blend)
    .backend(Backend::Reference)
    .run()
    .unwrap();
    let (ft, fq, fs) = frame.level_pose();
    assert_eq!(
        bits(&(ft.to_vec(), fq.to_vec(), fs.to_vec())),
        bits(&(t, q, s))
    );
    let three = skeleton.level_index(3).unwrap();
    assert!(
        frame.level_pose().1[three].angle_between(a.1[three]) < 1e-5,
        "masked joint follows the walk"
    );

    // An additive clip of deltas: a quarter turn about Z on joint 2 (the root), added in full.
    let mut add = Clip::builder(&skeleton);
    add.rotation(
        2,
        Interpolation::Step,
        &[0.0],
        &[Quat::from_rotation_z(0.25)],
    )
    .unwrap();
    let add = add.build();
    character
        .play(
            &mut frame,
            &[ClipLayer::new(&walk, 0.0)],
            &[ClipLayer::new(&add, 0.0)],
        )
        .unwrap();
    let root = skeleton.level_index(2).unwrap();
    assert!(frame.level_pose().1[root].angle_between(Quat::from_rotation_z(0.25)) < 1e-5);
    assert!(
        frame.level_pose().1[skeleton.level_index(0).unwrap()].angle_between(Quat::IDENTITY) < 1e-5
    );

    // The later stages run on the played pose.
    character.evaluate_pose(&mut frame).unwrap();

    // A clip of a skeleton with another joint order is refused; so is a frame of another character.
    let one_key = |skeleton: &Skeleton| {
        let mut b = Clip::builder(skeleton);
        b.scale(0, Interpolation::Step, &[0.0], &[Vec3::ONE])
            .unwrap();
        b.build()
    };
    let other = Skeleton::from_parents(&[None, Some(0), Some(0), Some(1), Some(2)]).unwrap();
    let foreign = one_key(&other);
    assert!(matches!(
        character.play(&mut frame, &[ClipLayer::new(&foreign, 0.0)], &[]),
        Err(Error::ClipSkeleton { .. })
    ));
    // So is a clip of a longer skeleton whose first joints are the character's, naming the first
    // joint past the character's.
    let longer =
        Skeleton::from_parents(&[Some(2), Some(2), None, Some(0), Some(1), Some(4)]).unwrap();
    assert_eq!(&longer.level_order()[..n], skeleton.level_order());
    let longer_clip = one_key(&longer);
    assert!(matches!(
        character.play(&mut frame, &[ClipLayer::new(&longer_clip, 0.0)], &[]),
        Err(Error::ClipSkeleton { joint, clip_joints: 6, joints: 5 }) if joint == n
    ));
    let twin = self::character(skeleton.clone());
    let mut twin_frame = twin.frame_buffers();
    assert!(matches!(
        character.play(&mut twin_frame, &[ClipLayer::new(&walk, 0.0)], &[]),
        Err(Error::WrongFrame { .. })
    ));
    assert!(matches!(
        character.play(
            &mut frame,
            &[ClipLayer::new(&walk, 0.0).joint_weights(&[1.0])],
            &[]
        ),
        Err(Error::CountMismatch {
            what: "clip layer joint weights",
            ..
        })
    ));
    assert!(matches!(
        character.play(&mut frame, &[ClipLayer::new(&walk, 0.0).weight(-1.0)], &[]),
        Err(Error::BlendWeight { .. })
    ));
}

/// `clip` at `t` (looping) over `character`'s rest pose, in level order.
fn sample_over(character: &ispc_skinning::Character, clip: &Clip, t: f32) -> Pose {
    let (rt, rq, rs) = character.level_rest();
    let (mut tr, mut q, mut s) = (rt.to_vec(), rq.to_vec(), rs.to_vec());
    SamplingJob::new(
        clip,
        &mut SamplingContext::new(),
        TrsMut::new(&mut tr, &mut q, &mut s),
    )
    .time(t)
    .wrap(Wrap::Loop)
    .backend(Backend::Reference)
    .run()
    .unwrap();
    (tr, q, s)
}
