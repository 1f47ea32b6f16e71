//! Precision::Deterministic across platforms: the same inputs give the same bits on every backend of
//! this machine and on every platform CI runs (x86-64 Linux with SSE4, AVX2 and AVX-512 where present,
//! AArch64 NEON under qemu, x86-64 Windows under wine, and the reference everywhere).
//!
//! Each stage's output (local to model, palette, dual-quaternion entries, linear and dual-quaternion
//! skinning, and dual-quaternion skinning of a rigid skeleton, which skips the scale-and-shear phase)
//! is hashed (FNV-1a over the floats' bits) and compared with the hash recorded below, which
//! was computed on the reference backend: a platform whose bits differ anywhere fails here with the
//! stage that differs. The inputs come from the tests' own generator, in plain f32 arithmetic, so that
//! they are the same bits everywhere too (no `sin`, no platform math library, no SIMD-dependent glam
//! operation).

#[path = "../common/mod.rs"]
mod common;
mod compact;

use common::scenes::humanoid_parents;
use common::Rng;
use glam::{Mat4, Quat, Vec3, Vec4};
use ispc_skinning::reference::trs_matrix;
use ispc_skinning::{
    dual_quat_palette, Attribute, Backend, DualQuatEntry, Isa, LocalToModelJob, Locals, MeshInput,
    PaletteJob, PaletteMatrix, Precision, PrepareOptions, Renormalize, Skeleton, SkinOutput,
    SkinnedMesh, SkinningJob, Trs,
};

/// The hashes every platform must reproduce, one per stage, for `POSES` random poses of the rig, as
/// the reference backend computed them on x86-64 Linux (and every ISA there agreed).
const EXPECTED: [(&str, u64); 6] = [
    ("local to model", 0x2d89_f345_ed6d_e3bf),
    ("palette", 0xc5e9_4002_7fc8_efc1),
    ("dual-quaternion entries", 0x6078_6fdc_6fbf_60fd),
    ("linear skinning", 0x01e5_b504_0544_2604),
    ("dual-quaternion skinning", 0xebbe_ae34_29f0_2313),
    ("rigid dual-quaternion skinning", 0x9fa1_4f83_2109_67ad),
];
const JOINTS: usize = 67;
const VERTICES: usize = 1_027;
const POSES: usize = 8;

/// FNV-1a, 64-bit, over the bits of each float.
struct Hash(u64);

impl Hash {
    fn new() -> Hash {
        Hash(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(&mut self, bytes: impl IntoIterator<Item = u8>) {
        for b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn floats(&mut self, xs: impl IntoIterator<Item = f32>) {
        for x in xs {
            self.bytes(x.to_bits().to_le_bytes());
        }
    }
}

fn vec3(rng: &mut Rng, lo: f32, hi: f32) -> Vec3 {
    Vec3::new(rng.range(lo, hi), rng.range(lo, hi), rng.range(lo, hi))
}

/// A rotation as four random components: the kernels and the reference take q / |q| themselves.
fn quat(rng: &mut Rng) -> Quat {
    Quat::from_xyzw(
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
        rng.range(0.2, 1.0),
    )
}

fn trs(rng: &mut Rng) -> Mat4 {
    Mat4::from_cols_array(&trs_matrix(
        vec3(rng, -1.0, 1.0),
        quat(rng),
        vec3(rng, 0.8, 1.25),
    ))
}

/// A rigid motion: a translation and a rotation, no scale.
fn rigid_trs(rng: &mut Rng) -> Mat4 {
    Mat4::from_cols_array(&trs_matrix(vec3(rng, -1.0, 1.0), quat(rng), Vec3::ONE))
}

/// The stage hashes of `POSES` poses on one backend.
fn stage_hashes(backend: Backend) -> Result<[u64; 6], String> {
    let err = |e: ispc_skinning::Error| e.to_string();
    let mut rng = Rng::new(2026);
    let skeleton = Skeleton::from_parents(&humanoid_parents(JOINTS)).map_err(err)?;
    let inverse_binds: Vec<Mat4> = (0..JOINTS).map(|_| trs(&mut rng)).collect();
    let pos: Vec<Vec3> = (0..VERTICES).map(|_| vec3(&mut rng, -1.5, 1.5)).collect();
    let nrm: Vec<Vec3> = (0..VERTICES).map(|_| vec3(&mut rng, -1.0, 1.0)).collect();
    let tan: Vec<Vec4> = (0..VERTICES)
        .map(|i| vec3(&mut rng, -1.0, 1.0).extend(if i % 2 == 0 { 1.0 } else { -1.0 }))
        .collect();
    // One to eight influences, unnormalized (prepare divides by the sum).
    let joints: [Vec<[u16; 4]>; 2] = std::array::from_fn(|_| {
        (0..VERTICES)
            .map(|_| std::array::from_fn(|_| rng.below(JOINTS) as u16))
            .collect()
    });
    let weights: [Vec<[f32; 4]>; 2] = std::array::from_fn(|set| {
        (0..VERTICES)
            .map(|i| {
                std::array::from_fn(|c| {
                    if 4 * set + c <= i % 8 {
                        rng.range(0.05, 1.0)
                    } else {
                        0.0
                    }
                })
            })
            .collect()
    });
    let input = MeshInput {
        positions: Attribute::vec3(&pos),
        normals: Some(Attribute::vec3(&nrm)),
        tangents: Some(Attribute::vec4(&tan)),
        joints: [
            Some(Attribute::joints_u16(&joints[0])),
            Some(Attribute::joints_u16(&joints[1])),
            None,
            None,
        ],
        weights: [
            Some(Attribute::weights_f32(&weights[0])),
            Some(Attribute::weights_f32(&weights[1])),
            None,
            None,
        ],
        influences: None,
    };
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(JOINTS)).map_err(err)?;
    // The rigid skeleton's inputs come from a generator of their own, so the other stages' stay.
    let mut rigid_rng = Rng::new(2027);
    let rigid_binds: Vec<Mat4> = (0..JOINTS).map(|_| rigid_trs(&mut rigid_rng)).collect();
    let mut hashes: [Hash; 6] = std::array::from_fn(|_| Hash::new());
    for _ in 0..POSES {
        let t: Vec<Vec3> = (0..JOINTS).map(|_| vec3(&mut rng, -0.5, 0.5)).collect();
        let q: Vec<Quat> = (0..JOINTS).map(|_| quat(&mut rng)).collect();
        let s: Vec<Vec3> = (0..JOINTS).map(|_| vec3(&mut rng, 0.9, 1.1)).collect();
        let root = trs(&mut rng);
        let mut models = vec![Mat4::ZERO; JOINTS];
        let locals = Locals::Trs(Trs {
            translations: &t,
            rotations: &q,
            scales: &s,
        });
        LocalToModelJob::new(&skeleton, locals, &mut models)
            .root(root)
            .backend(backend)
            .precision(Precision::Deterministic)
            .run()
            .map_err(err)?;
        hashes[0].floats(models.iter().flat_map(|m| m.to_cols_array()));
        let mut palette = vec![PaletteMatrix::IDENTITY; JOINTS];
        PaletteJob::new(&models, &inverse_binds, &mut palette)
            .backend(backend)
            .precision(Precision::Deterministic)
            .run()
            .map_err(err)?;
        hashes[1].floats(palette.iter().flat_map(|m| m.rows.concat()));
        let mut dq = vec![DualQuatEntry::IDENTITY; JOINTS];
        dual_quat_palette(&palette, &mut dq).map_err(err)?;
        hashes[2].floats(dq.iter().flat_map(|e| *e.as_floats()));
        for (stage, dual) in [(3, false), (4, true)] {
            let (mut p, mut n, mut tg) = (
                vec![Vec3::ZERO; VERTICES],
                vec![Vec3::ZERO; VERTICES],
                vec![Vec4::ZERO; VERTICES],
            );
            let out = SkinOutput::positions_normals_tangents(&mut p, &mut n, &mut tg);
            let job = if dual {
                SkinningJob::dual_quaternion(&mesh, &dq, out)
            } else {
                SkinningJob::new(&mesh, &palette, out)
            };
            job.backend(backend)
                .renormalize(Renormalize::Precise)
                .precision(Precision::Deterministic)
                .run()
                .map_err(err)?;
            hashes[stage].floats(p.iter().chain(&n).flat_map(|v| v.to_array()));
            hashes[stage].floats(tg.iter().flat_map(|v| v.to_array()));
        }
        // The same pose without scales, on rigid inverse binds: every entry is rigid, so the dual
        // quaternions skip their first phase.
        let ones = vec![Vec3::ONE; JOINTS];
        let locals = Locals::Trs(Trs {
            translations: &t,
            rotations: &q,
            scales: &ones,
        });
        LocalToModelJob::new(&skeleton, locals, &mut models)
            .root(rigid_trs(&mut rigid_rng))
            .backend(backend)
            .precision(Precision::Deterministic)
            .run()
            .map_err(err)?;
        PaletteJob::new(&models, &rigid_binds, &mut palette)
            .backend(backend)
            .precision(Precision::Deterministic)
            .run()
            .map_err(err)?;
        dual_quat_palette(&palette, &mut dq).map_err(err)?;
        if !dq.iter().all(DualQuatEntry::is_rigid) {
            return Err("a rigid skeleton's dual-quaternion entry is not rigid".into());
        }
        let (mut p, mut n, mut tg) = (
            vec![Vec3::ZERO; VERTICES],
            vec![Vec3::ZERO; VERTICES],
            vec![Vec4::ZERO; VERTICES],
        );
        let out = SkinOutput::positions_normals_tangents(&mut p, &mut n, &mut tg);
        SkinningJob::dual_quaternion(&mesh, &dq, out)
            .backend(backend)
            .renormalize(Renormalize::Precise)
            .precision(Precision::Deterministic)
            .run()
            .map_err(err)?;
        hashes[5].floats(dq.iter().flat_map(|e| *e.as_floats()));
        hashes[5].floats(p.iter().chain(&n).flat_map(|v| v.to_array()));
        hashes[5].floats(tg.iter().flat_map(|v| v.to_array()));
    }
    Ok(hashes.map(|h| h.0))
}

/// The reference, then every ISA this CPU and build run; each ISA left out is printed as not run, with
/// why (`what` names the check).
fn reported_backends(what: &str) -> Vec<Backend> {
    let mut backends = vec![Backend::Reference];
    for isa in Isa::ALL {
        match isa.runnable() {
            Ok(_) => backends.push(Backend::Isa(isa)),
            Err(e) => println!("deterministic: {what}{isa} NOT RUN: {e}"),
        }
    }
    backends
}

#[test]
fn every_backend_and_platform_gives_the_recorded_bits() {
    let mut failures = Vec::new();
    for backend in reported_backends("") {
        let got = stage_hashes(backend).unwrap();
        for ((stage, want), got) in EXPECTED.iter().zip(got) {
            println!("deterministic: {} {stage}: {got:#018x}", backend.name());
            if got != *want {
                failures.push(format!(
                    "{} {stage}: hash {got:#018x}, recorded {want:#018x}",
                    backend.name()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "bits differ from the recorded ones:\n{}",
        failures.join("\n")
    );
}

#[cfg(feature = "gltf")]
/// The hash of everything a frame wrote: model matrices, palettes, dual-quaternion entries, and every
/// skinned and rigid mesh's positions, normals and tangents.
fn frame_hash(frame: &ispc_skinning::Frame) -> u64 {
    let mut h = Hash::new();
    h.floats(frame.level_models().iter().flat_map(|m| m.to_cols_array()));
    for palette in frame.palettes() {
        h.floats(palette.iter().flat_map(|m| m.rows.concat()));
    }
    for entries in frame.dual_quaternions() {
        h.floats(entries.iter().flat_map(|e| *e.as_floats()));
    }
    for mesh in frame.meshes().iter().chain(frame.rigid_meshes()) {
        h.floats(mesh.positions.iter().flat_map(|v| v.to_array()));
        h.floats(mesh.normals.iter().flatten().flat_map(|v| v.to_array()));
        h.floats(mesh.tangents.iter().flatten().flat_map(|v| v.to_array()));
    }
    h.0
}

/// The hashes of every shared asset's deterministic frames (its first two clips at three times, linear
/// and dual-quaternion skinning, morph targets and rigid parts included), as the reference computed
/// them on x86-64 Linux.
#[cfg(feature = "gltf")]
const ASSET_HASHES: [(&str, u64); 6] = [
    ("SimpleSkin/SimpleSkin.gltf", 0x9d1e_b9ba_f48b_4d53),
    ("RiggedSimple/RiggedSimple.glb", 0x310c_f0f1_5732_1182),
    ("RiggedFigure/RiggedFigure.glb", 0x6f70_f7e0_3ce2_6dfb),
    ("CesiumMan/CesiumMan.glb", 0xcbd2_95d0_aed5_072a),
    ("Fox/Fox.glb", 0x82e9_bdbe_4583_9020),
    ("RobotExpressive/RobotExpressive.glb", 0xd9e9_21a0_fd41_a4d0),
];

#[cfg(feature = "gltf")]
#[test]
fn asset_frames_are_the_recorded_bits_on_every_backend() {
    use ispc_skinning::gltf::{GltfScene, Wrap};
    use ispc_skinning::Skinning;
    let Some(dir) = common::assets() else { return };
    let mut failures = Vec::new();
    for (asset, want) in ASSET_HASHES {
        let scene = GltfScene::load(dir.join(asset)).unwrap();
        let clips = scene.clips().len().min(2);
        for backend in common::backends() {
            let mut h = Hash::new();
            for skinning in [Skinning::Linear, Skinning::DualQuaternion] {
                let mut frame = scene
                    .frame_buffers()
                    .backend(backend)
                    .skinning(skinning)
                    .renormalize(Renormalize::Precise)
                    .precision(Precision::Deterministic);
                for clip in (0..clips).map(Some).chain([None]) {
                    let length = clip.map_or(0.0, |c| scene.clips()[c].duration());
                    for time in [0.0, 0.37 * length, 0.81 * length] {
                        scene.evaluate(clip, time, Wrap::Clamp, &mut frame).unwrap();
                        h.bytes(frame_hash(&frame).to_le_bytes());
                    }
                }
            }
            println!("deterministic: {asset} {}: {:#018x}", backend.name(), h.0);
            if h.0 != want {
                failures.push(format!(
                    "{asset} on {}: hash {:#018x}, recorded {want:#018x}",
                    backend.name(),
                    h.0
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "frames differ from the recorded bits:\n{}",
        failures.join("\n")
    );
}

/// The recorded hash of every joint's deterministic root motion over RobotExpressive's runtime clips
/// (`Clip::root_motion_with`), as the reference computed it on x86-64 Linux.
#[cfg(feature = "gltf")]
const ROOT_MOTION_HASH: u64 = 0xfeaf_30a2_fb98_92bb;

/// Deterministic root motion is the recorded bits on every platform (it has no kernels: one hash for
/// all backends), and agrees with the fast one within a few ulps of the motion's size.
#[cfg(feature = "gltf")]
#[test]
fn root_motion_is_the_recorded_bits() {
    use ispc_skinning::gltf::{GltfScene, Wrap};
    let Some(dir) = common::assets() else { return };
    let scene = GltfScene::load(dir.join("RobotExpressive/RobotExpressive.glb")).unwrap();
    let joints = scene.character().skeleton().len();
    let mut h = Hash::new();
    for c in 0..scene.clips().len() {
        let clip = scene.runtime_clip(c).unwrap();
        let length = clip.duration();
        for joint in 0..joints {
            for (from, to, wrap) in [
                (0.1 * length, 0.8 * length, Wrap::Clamp),
                (0.3 * length, 2.7 * length, Wrap::Loop),
                (1.9 * length, -0.4 * length, Wrap::Loop),
            ] {
                let (moved, turned) = clip
                    .root_motion_with(joint, from, to, wrap, Precision::Deterministic)
                    .unwrap();
                h.floats(moved.to_array().into_iter().chain([turned]));
                let (fast_moved, fast_turned) = clip.root_motion(joint, from, to, wrap).unwrap();
                let size = moved.abs().max_element().max(1.0);
                // Yaws compared modulo a turn: a yaw near +-pi may fall on either side of the cut.
                let tau = std::f32::consts::TAU;
                let d = (turned - fast_turned).rem_euclid(tau);
                assert!(
                    (moved - fast_moved).abs().max_element() <= 1e-5 * size
                        && d.min(tau - d) <= 1e-5 * turned.abs().max(1.0),
                    "clip {c} joint {joint}: {moved} {turned}, fast {fast_moved} {fast_turned}"
                );
            }
        }
    }
    println!("deterministic: root motion {:#018x}", h.0);
    assert_eq!(
        h.0, ROOT_MOTION_HASH,
        "root motion differs from the recorded bits"
    );
}

/// `Character::play` passes the frame's precision on: two runtime clips blended and a third added, then
/// evaluated, give the same bits on every backend of this machine (sampling and blending run portable
/// Rust whatever the backend; the later stages run each backend's deterministic kernels). The glTF
/// asset hashes above check the portable sampling across platforms.
#[cfg(feature = "gltf")]
#[test]
fn played_clips_are_the_same_bits_on_every_backend() {
    use ispc_skinning::gltf::GltfScene;
    use ispc_skinning::ClipLayer;
    let Some(dir) = common::assets() else { return };
    let scene = GltfScene::load(dir.join("RobotExpressive/RobotExpressive.glb")).unwrap();
    let clips: Vec<_> = (0..3).map(|c| scene.runtime_clip(c).unwrap()).collect();
    let character = scene.character();
    let mut seen: Option<(Backend, u64)> = None;
    for backend in common::backends() {
        let mut frame = character
            .frame_buffers()
            .backend(backend)
            .precision(Precision::Deterministic);
        let mut h = Hash::new();
        for time in [0.13f32, 0.71, 1.37] {
            let layers = [
                ClipLayer::new(&clips[0], time).weight(0.6),
                ClipLayer::new(&clips[1], time * 0.9).weight(0.4),
            ];
            character
                .play(
                    &mut frame,
                    &layers,
                    &[ClipLayer::new(&clips[2], time).weight(0.3)],
                )
                .unwrap();
            character.evaluate(&mut frame).unwrap();
            h.bytes(frame_hash(&frame).to_le_bytes());
        }
        match seen {
            None => seen = Some((backend, h.0)),
            Some((first, hash)) => assert_eq!(
                h.0,
                hash,
                "{} played other bits than {}",
                backend.name(),
                first.name()
            ),
        }
    }
}

/// The floats of everything a crowd instance's frame shares with a single frame: model matrices (in
/// your joint order), palettes, and the skinned meshes' positions, normals and tangents.
#[cfg(feature = "gltf")]
fn crowd_instance_floats(crowd: &ispc_skinning::CrowdFrame, i: usize, skins: usize) -> Vec<f32> {
    let mut models = vec![Mat4::ZERO; crowd.models().joints()];
    crowd.models().instance_models(i, &mut models).unwrap();
    let mut out: Vec<f32> = models.iter().flat_map(|m| m.to_cols_array()).collect();
    for skin in 0..skins {
        let palette = crowd.palettes(skin).unwrap().instance(i).unwrap();
        out.extend(palette.iter().flat_map(|m| m.rows.concat()));
    }
    for m in 0.. {
        let Some(p) = crowd.positions(m, i) else {
            break;
        };
        out.extend(p.iter().flat_map(|v| v.to_array()));
        out.extend(
            crowd
                .normals(m, i)
                .into_iter()
                .flatten()
                .flat_map(|v| v.to_array()),
        );
        out.extend(
            crowd
                .tangents(m, i)
                .into_iter()
                .flatten()
                .flat_map(|v| v.to_array()),
        );
    }
    out
}

/// The same floats of a single frame.
#[cfg(feature = "gltf")]
fn frame_floats(frame: &ispc_skinning::Frame, skinned: bool) -> Vec<f32> {
    let mut models = vec![Mat4::ZERO; frame.joints()];
    frame.copy_models(&mut models).unwrap();
    let mut out: Vec<f32> = models.iter().flat_map(|m| m.to_cols_array()).collect();
    for palette in frame.palettes() {
        out.extend(palette.iter().flat_map(|m| m.rows.concat()));
    }
    for mesh in frame.meshes().iter().filter(|_| skinned) {
        out.extend(mesh.positions.iter().flat_map(|v| v.to_array()));
        out.extend(mesh.normals.iter().flatten().flat_map(|v| v.to_array()));
        out.extend(mesh.tangents.iter().flatten().flat_map(|v| v.to_array()));
    }
    out
}

/// The first float where two runs differ, as a message, or `None` for the same bits.
#[cfg(feature = "gltf")]
fn first_difference(got: &[f32], want: &[f32]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} floats against {}", got.len(), want.len()));
    }
    let i = (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits())?;
    Some(format!("float {i}: {:e} against {:e}", got[i], want[i]))
}

/// A deterministic crowd gives each instance the bits of a deterministic single frame with the same
/// clip, time and root, on every backend of this machine (the glTF batch sampler in portable
/// arithmetic, then the crowd's deterministic kernels); since the single frames give the recorded bits
/// on every platform (above), so do the crowds. Assets without morph targets on skinned meshes, which a
/// crowd does not apply.
#[cfg(feature = "gltf")]
#[test]
fn crowd_instances_are_the_bits_of_deterministic_frames() {
    use ispc_skinning::gltf::{GltfScene, Wrap};
    use ispc_skinning::{Skinning, Threads};
    let Some(dir) = common::assets() else { return };
    let mut rng = Rng::new(7);
    for asset in ["CesiumMan/CesiumMan.glb", "Fox/Fox.glb"] {
        let scene = GltfScene::load(dir.join(asset)).unwrap();
        let skins = scene.character().skins().len();
        let instances = 19;
        let clips: Vec<usize> = (0..instances).map(|i| i % scene.clips().len()).collect();
        let times: Vec<f32> = (0..instances).map(|i| 0.05 + 0.17 * i as f32).collect();
        let roots: Vec<Mat4> = (0..instances).map(|_| trs(&mut rng)).collect();
        for backend in common::backends() {
            for (threads, skinning) in [
                (Threads::One, Skinning::Linear),
                (Threads::All, Skinning::DualQuaternion),
            ] {
                let mut crowd = scene
                    .crowd_buffers(instances)
                    .unwrap()
                    .backend(backend)
                    .threads(threads)
                    .skinning(skinning)
                    .renormalize(Renormalize::Precise)
                    .precision(Precision::Deterministic);
                crowd.roots_mut().copy_from_slice(&roots);
                scene
                    .evaluate_crowd(&clips, &times, Wrap::Loop, &mut crowd)
                    .unwrap();
                for i in 0..instances {
                    let mut frame = scene
                        .frame_buffers()
                        .backend(backend)
                        .skinning(skinning)
                        .renormalize(Renormalize::Precise)
                        .precision(Precision::Deterministic)
                        .root(roots[i]);
                    scene
                        .evaluate(Some(clips[i]), times[i], Wrap::Loop, &mut frame)
                        .unwrap();
                    let got = crowd_instance_floats(&crowd, i, skins);
                    if let Some(d) = first_difference(&got, &frame_floats(&frame, true)) {
                        panic!(
                            "{asset} on {} {threads:?} {skinning:?}, instance {i}: {d}",
                            backend.name()
                        );
                    }
                }
            }
        }
    }
}

/// `Character::crowd_play` and `crowd_play_palettes` with a deterministic crowd frame: two runtime
/// clips blended and a third added give each instance the models and palettes of a deterministic
/// `Character::play` with the same layers and root, on every backend.
#[cfg(feature = "gltf")]
#[test]
fn played_crowds_are_the_bits_of_deterministic_frames() {
    use ispc_skinning::gltf::GltfScene;
    use ispc_skinning::{ClipLayer, CrowdClipLayer, SamplingContext, SamplingJob, TrsMut, Wrap};
    let Some(dir) = common::assets() else { return };
    let scene = GltfScene::load(dir.join("RobotExpressive/RobotExpressive.glb")).unwrap();
    let clips: Vec<_> = (0..3).map(|c| scene.runtime_clip(c).unwrap()).collect();
    let character = scene.character();
    let skins = character.skins().len();
    let instances = 17;
    let times: Vec<f32> = (0..instances).map(|i| 0.1 + 0.23 * i as f32).collect();
    let slower: Vec<f32> = times.iter().map(|t| t * 0.9).collect();
    let weights: Vec<f32> = (0..instances).map(|i| 0.2 + 0.04 * i as f32).collect();
    let rest: Vec<f32> = weights.iter().map(|w| 1.0 - w).collect();
    let (a, b, c) = ([&clips[0]], [&clips[1]], [&clips[2]]);
    let layers = [
        CrowdClipLayer::new(&a, &times).weights(&weights),
        CrowdClipLayer::new(&b, &slower).weights(&rest),
    ];
    let additive = [CrowdClipLayer::new(&c, &times).weights(&weights)];
    let mut rng = Rng::new(11);
    let roots: Vec<Mat4> = (0..instances).map(|_| trs(&mut rng)).collect();
    for backend in common::backends() {
        let mut crowd = character
            .crowd_buffers(instances)
            .unwrap()
            .backend(backend)
            .precision(Precision::Deterministic);
        crowd.roots_mut().copy_from_slice(&roots);
        character
            .crowd_play(&mut crowd, &layers, &additive)
            .unwrap();
        character.evaluate_crowd_pose(&mut crowd).unwrap();
        let mut palettes_only = character
            .crowd_buffers(instances)
            .unwrap()
            .backend(backend)
            .precision(Precision::Deterministic);
        palettes_only.roots_mut().copy_from_slice(&roots);
        // One layer at weight 1: the case the fused pass takes on a fast frame.
        let single = [CrowdClipLayer::new(&a, &times)];
        character
            .crowd_play_palettes(&mut palettes_only, &single, &[])
            .unwrap();
        for i in 0..instances {
            let mut frame = character
                .frame_buffers()
                .backend(backend)
                .precision(Precision::Deterministic)
                .root(roots[i]);
            character
                .play(
                    &mut frame,
                    &[
                        ClipLayer::new(&clips[0], times[i]).weight(weights[i]),
                        ClipLayer::new(&clips[1], slower[i]).weight(rest[i]),
                    ],
                    &[ClipLayer::new(&clips[2], times[i]).weight(weights[i])],
                )
                .unwrap();
            character.evaluate_pose(&mut frame).unwrap();
            let got = crowd_instance_floats(&crowd, i, skins);
            let want = frame_floats(&frame, false);
            if let Some(d) = first_difference(&got[..want.len()], &want) {
                panic!("blended crowd on {}, instance {i}: {d}", backend.name());
            }
            // One layer at weight 1 is sampled straight into the crowd's pose (no blend), as a
            // SamplingJob samples it into a frame at rest.
            let mut frame = character
                .frame_buffers()
                .backend(backend)
                .precision(Precision::Deterministic)
                .root(roots[i]);
            let mut context = SamplingContext::new();
            let (t, q, s) = frame.level_pose_mut();
            SamplingJob::new(&clips[0], &mut context, TrsMut::new(t, q, s))
                .time(times[i])
                .wrap(Wrap::Loop)
                .backend(backend)
                .precision(Precision::Deterministic)
                .run()
                .unwrap();
            character.evaluate_pose(&mut frame).unwrap();
            let n = frame.joints() * 16;
            let got = crowd_instance_floats(&palettes_only, i, skins);
            let want = frame_floats(&frame, false);
            if let Some(d) = first_difference(&got[n..want.len()], &want[n..]) {
                panic!(
                    "crowd_play_palettes on {}, instance {i}: {d}",
                    backend.name()
                );
            }
        }
    }
}

/// A thread whose floating-point mode is not the platform's default is refused with
/// `Error::FloatEnvironment`, not given other bits: flush to zero, denormals are zero, and rounding
/// upward, each set in x86-64's MXCSR on a thread of the test's own; and a rayon pool whose threads
/// flush to zero, for a job on `Threads::All`. A fast job still runs there.
#[cfg(target_arch = "x86_64")]
#[test]
#[allow(unsafe_code, deprecated)]
fn a_thread_in_another_float_mode_is_refused() {
    use ispc_skinning::{Error, Threads};
    use std::arch::x86_64::{_mm_getcsr, _mm_setcsr};
    let set_mode = |bits: u32| {
        // SAFETY: MXCSR's FTZ, DAZ and rounding bits change only how this thread rounds; the test's
        // own thread (or pool) runs nothing else.
        unsafe { _mm_setcsr(_mm_getcsr() | bits) }
    };
    let skeleton = Skeleton::from_parents(&humanoid_parents(20)).unwrap();
    let (t, q, s) = (
        vec![Vec3::X; 20],
        vec![Quat::IDENTITY; 20],
        vec![Vec3::ONE; 20],
    );
    let ltm = |precision: Precision| {
        let mut models = vec![Mat4::ZERO; 20];
        LocalToModelJob::new(&skeleton, Locals::Trs(Trs::new(&t, &q, &s)), &mut models)
            .precision(precision)
            .run()
            .map(|_| ())
    };
    for (bits, found) in [
        (0x8000, "flush to zero"),
        (0x0040, "denormals are zero"),
        (0x4000, "a rounding mode other than to nearest"),
    ] {
        let (det, fast) = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    set_mode(bits);
                    (ltm(Precision::Deterministic), ltm(Precision::Fast))
                })
                .join()
                .unwrap()
        });
        assert_eq!(
            det,
            Err(Error::FloatEnvironment { found }),
            "MXCSR bits {bits:#x}"
        );
        assert_eq!(fast, Ok(()), "a fast job with MXCSR bits {bits:#x}");
    }
    // A pool whose threads flush to zero: the calling thread is fine, the pool is not.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .start_handler(move |_| set_mode(0x8000))
        .build()
        .unwrap();
    let positions = vec![Vec3::ZERO; 64];
    let joints = vec![[0u16]; 64];
    let weights = vec![[1.0f32]; 64];
    let mesh = SkinnedMesh::prepare(
        &MeshInput::from_influences(&positions, &joints, &weights),
        &PrepareOptions::new(1),
    )
    .unwrap();
    let palette = [PaletteMatrix::IDENTITY];
    let mut out = vec![Vec3::ZERO; 64];
    let got = pool.install(|| {
        SkinningJob::new(&mesh, &palette, SkinOutput::positions(&mut out))
            .threads(Threads::All)
            .precision(Precision::Deterministic)
            .run()
    });
    assert_eq!(
        got,
        Err(Error::FloatEnvironment {
            found: "flush to zero"
        })
    );
}
