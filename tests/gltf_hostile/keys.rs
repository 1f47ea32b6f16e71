//! Class 4: finite key times whose spans overflow. `t1 - t0` of keys at -3e38 and 3e38 is infinite,
//! and an interpolation weight or a wrapped time computed from it is NaN: such a sampler, or a clip
//! whose channels together span that far, is [`GltfError::KeyTimes`]. Large keys whose spans are
//! finite still load and sample to finite values.

use super::*;
use ispc_skinning::gltf::{Clip, Wrap};
use ispc_skinning::Backend;

/// The rig with its animation replaced: one sampler per `(times, interpolation)` (translation keys,
/// x = key index, three values per key for CUBICSPLINE with unit tangents), one channel per
/// `(sampler, node)` animating translation. As .gltf and as .glb.
fn animated(samplers: &[(&[f32], &str)], channels: &[(usize, usize)]) -> [Vec<u8>; 2] {
    let mut b = Builder::default();
    let mut doc = rig(&mut b);
    let samplers: Vec<Value> = samplers
        .iter()
        .map(|&(times, interpolation)| {
            let input = b.f32s(times, "SCALAR");
            let values: Vec<f32> = (0..times.len())
                .flat_map(|k| {
                    let v = [k as f32, 0.0, 0.0];
                    if interpolation == "CUBICSPLINE" {
                        [[1.0; 3], v, [1.0; 3]].concat()
                    } else {
                        v.to_vec()
                    }
                })
                .collect();
            let output = b.f32s(&values, "VEC3");
            json!({"input": input, "output": output, "interpolation": interpolation})
        })
        .collect();
    let channels: Vec<Value> = channels
        .iter()
        .map(|&(s, node)| json!({"sampler": s, "target": {"node": node, "path": "translation"}}))
        .collect();
    doc["animations"] = json!([{"samplers": samplers, "channels": channels}]);
    [b.gltf(doc.clone()), b.glb(doc)]
}

fn key_times(animation: usize, sampler: usize, key: usize) -> (GltfError, String) {
    (
        GltfError::KeyTimes {
            animation,
            sampler,
            key,
        },
        format!("animation {animation} sampler {sampler}: key time {key} is not finite or not greater than the one before"),
    )
}

#[test]
fn a_sampler_whose_span_overflows_is_refused() {
    for (times, key) in [
        (&[-3e38, 3e38][..], 1),
        (&[-f32::MAX, f32::MAX][..], 1),
        (&[-3e38, 0.0, 3e38][..], 2),
        // 1e38 - -3e38 is already past f32::MAX.
        (&[-3e38, -1e38, 1e38, 3e38][..], 2),
        (&[0.0, 1.0, f32::INFINITY][..], 2),
    ] {
        for interpolation in ["LINEAR", "STEP", "CUBICSPLINE"] {
            for bytes in animated(&[(times, interpolation)], &[(0, 1)]) {
                let (want, words) = key_times(0, 0, key);
                assert_refused(GltfScene::from_slice(&bytes), want, &words);
            }
        }
    }
}

/// Each channel's span is finite (1e38), but the clip runs from -3e38 to 3e38.
#[test]
fn two_channels_whose_clip_span_overflows_are_refused() {
    let early: &[f32] = &[-3e38, -2e38];
    let late: &[f32] = &[2e38, 3e38];
    for bytes in animated(&[(early, "LINEAR"), (late, "LINEAR")], &[(0, 0), (1, 1)]) {
        let (want, words) = key_times(0, 1, 0);
        assert_refused(GltfScene::from_slice(&bytes), want, &words);
    }
    // Either alone loads.
    for times in [early, late] {
        for bytes in animated(&[(times, "LINEAR")], &[(0, 1)]) {
            GltfScene::from_slice(&bytes).unwrap();
        }
    }
}

/// The clip-span error names a sampler: it must be one whose keys make the span overflow. Here the
/// channels use samplers 2 and 0, and sampler 1 is used by no channel.
#[test]
fn the_clip_span_error_names_a_sampler_that_takes_part() {
    let early: &[f32] = &[-3e38, -2e38];
    let late: &[f32] = &[2e38, 3e38];
    let unused: &[f32] = &[0.0, 1.0];
    for bytes in animated(
        &[(late, "LINEAR"), (unused, "LINEAR"), (early, "LINEAR")],
        &[(2, 0), (0, 1)],
    ) {
        let (want, words) = key_times(0, 0, 0);
        assert_refused(GltfScene::from_slice(&bytes), want, &words);
    }
}

/// Every local and every skinned position of a frame is finite.
fn assert_finite_frame(scene: &GltfScene, clip: usize, t: f32, wrap: Wrap, backend: Backend) {
    let mut frame = scene.frame_buffers().backend(backend);
    scene.evaluate(Some(clip), t, wrap, &mut frame).unwrap();
    for node in 0..scene.node_count() {
        let (tr, r, s) = frame.local(node).unwrap();
        assert!(
            tr.is_finite() && r.is_finite() && s.is_finite(),
            "t {t} {wrap:?}: node {node}: {tr} {r} {s}"
        );
    }
    for m in frame.meshes() {
        assert!(
            m.positions.iter().all(|p| p.is_finite()),
            "t {t} {wrap:?} {backend:?}: {:?}",
            m.positions
        );
    }
}

const HUGE_TIMES: [f32; 11] = [
    -f32::MAX,
    -3e38,
    -1.5e38,
    -1e38,
    0.0,
    1e38,
    1.5e38,
    2e38,
    2.5e38,
    3e38,
    f32::MAX,
];

#[test]
fn large_keys_whose_span_is_finite_load_and_sample_to_finite_values() {
    let cases: [&[f32]; 3] = [&[1e38, 2e38], &[-1.5e38, 1.5e38], &[-3e38, -2e38, -1e38]];
    for times in cases {
        for interpolation in ["LINEAR", "STEP", "CUBICSPLINE"] {
            for bytes in animated(&[(times, interpolation)], &[(0, 1)]) {
                let scene = GltfScene::from_slice(&bytes)
                    .unwrap_or_else(|e| panic!("{times:?} {interpolation}: {e}"));
                let clip = &scene.clips()[0];
                assert_eq!(clip.start(), times[0]);
                assert_eq!(clip.end(), times[times.len() - 1]);
                assert!(clip.duration().is_finite());
                for t in HUGE_TIMES {
                    for wrap in [Wrap::Clamp, Wrap::Loop] {
                        for backend in [Backend::Reference, Backend::Auto] {
                            assert_finite_frame(&scene, 0, t, wrap, backend);
                        }
                    }
                }
            }
        }
    }
    // Halfway between keys at 1e38 and 2e38 is halfway between the values.
    let [gltf, _] = animated(&[(&[1e38, 2e38], "LINEAR")], &[(0, 1)]);
    let scene = GltfScene::from_slice(&gltf).unwrap();
    let mut frame = scene.frame_buffers();
    scene
        .sample(Some(0), 1.5e38, Wrap::Clamp, &mut frame)
        .unwrap();
    let x = frame.local(1).unwrap().0;
    assert!((x - glam::Vec3::new(0.5, 0.0, 0.0)).length() < 1e-6, "{x}");
}

/// A crowd sampled at huge times of a clip with large keys stays finite too.
#[test]
fn a_crowd_at_huge_times_of_large_keys_stays_finite() {
    let [_, glb] = animated(&[(&[1e38, 2e38], "LINEAR")], &[(0, 1)]);
    let scene = GltfScene::from_slice(&glb).unwrap();
    let n = HUGE_TIMES.len();
    for wrap in [Wrap::Clamp, Wrap::Loop] {
        let mut crowd = scene.crowd_buffers(n).unwrap();
        scene
            .evaluate_crowd(&vec![0; n], &HUGE_TIMES, wrap, &mut crowd)
            .unwrap();
        for i in 0..n {
            let (t, r, s) = crowd.pose().joint(i, 1).unwrap();
            assert!(
                t.is_finite() && r.is_finite() && s.is_finite(),
                "{wrap:?} instance {i}"
            );
            let positions = crowd.positions(0, i).unwrap();
            assert!(
                positions.iter().all(|p| p.is_finite()),
                "{wrap:?} instance {i}"
            );
        }
    }
}

/// `Clip::wrap_time` documents its result as the time clamped into the span or wrapped into
/// `[start, end)`; a time far outside a clip of large keys overflows `t - start`.
#[test]
fn wrap_time_stays_inside_the_clip_for_any_finite_time() {
    let [gltf, _] = animated(&[(&[1e38, 2e38], "LINEAR")], &[(0, 1)]);
    let scene = GltfScene::from_slice(&gltf).unwrap();
    let clip: &Clip = &scene.clips()[0];
    let mut bad = Vec::new();
    for t in HUGE_TIMES {
        for wrap in [Wrap::Clamp, Wrap::Loop] {
            let w = clip.wrap_time(t, wrap);
            if !(clip.start() <= w && w <= clip.end()) {
                bad.push(format!("wrap_time({t}, {wrap:?}) = {w}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join(", "));
}
