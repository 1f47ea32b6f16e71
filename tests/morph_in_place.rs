//! Morph targets on skinned meshes, applied without preparing the mesh again: on an ISA with the frame's
//! defaults, morphed and skinned in one pass (`skin_morph_fused`); otherwise the frame writes the
//! morphed bind pose into its own copy of the prepared mesh (`Character::with_mesh_morph_targets`) and
//! skins that. Both paths are checked.
//!
//! The check is against the long way round, on the reference and on every ISA this CPU runs: morph the
//! vertices in mesh order with `morph_floats`, prepare the morphed mesh afresh with `SkinnedMesh::prepare`
//! and skin it with the frame's palette. Preparation copies each attribute float into the kernels'
//! blocks unchanged, and both morphs compute each float as the same sum (base first, then the active
//! targets in order, in batches of eight), so the skinned vertices must be equal bit for bit, not just
//! close. The mesh has vertices with 1 to 6 influences in shuffled order, so the prepared mesh's vertex
//! order is a real permutation of the mesh order, and more than eight targets, so the batches are
//! exercised; zero-weight targets hold NaN deltas, so reading one would show.

mod common;

use common::{backends, Rng};
use ispc_skinning::glam::{Quat, Vec3, Vec4};
use ispc_skinning::{
    morph_floats, Backend, Character, CharacterSkin, Error, Frame, MeshInput, MorphTargets,
    PrepareOptions, Renormalize, Skeleton, SkinOutput, SkinnedMesh, SkinnedVertices, SkinningJob,
    Threads,
};

const JOINTS: usize = 6;
const TARGETS: usize = 11;

/// A mesh of `n` vertices with positions, normals and tangents, and 1 to 6 influences per vertex.
struct Mesh {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
    joints: Vec<[u16; 6]>,
    weights: Vec<[f32; 6]>,
}

fn mesh(n: usize, rng: &mut Rng) -> Mesh {
    let v3 = |rng: &mut Rng| {
        Vec3::new(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(0.0, 2.0),
        )
    };
    let mut m = Mesh {
        positions: Vec::new(),
        normals: Vec::new(),
        tangents: Vec::new(),
        joints: Vec::new(),
        weights: Vec::new(),
    };
    for _ in 0..n {
        m.positions.push(v3(rng));
        m.normals.push(v3(rng).normalize_or(Vec3::Z));
        let w = if rng.below(2) == 0 { 1.0 } else { -1.0 };
        m.tangents.push(v3(rng).normalize_or(Vec3::X).extend(w));
        let k = 1 + rng.below(6);
        let mut joints = [0u16; 6];
        let mut weights = [0.0f32; 6];
        for i in 0..k {
            joints[i] = rng.below(JOINTS) as u16;
            weights[i] = rng.range(0.1, 1.0);
        }
        m.joints.push(joints);
        m.weights.push(weights);
    }
    m
}

fn input(m: &Mesh, positions: &[Vec3], normals: &[Vec3], tangents: &[Vec4]) -> SkinnedMesh {
    let input = MeshInput::from_influences(positions, &m.joints, &m.weights)
        .normals(ispc_skinning::Attribute::vec3(normals))
        .tangents(ispc_skinning::Attribute::vec4(tangents));
    SkinnedMesh::prepare(&input, &PrepareOptions::new(JOINTS)).unwrap()
}

/// Targets over every stream: target k moves positions, normals only when k is even, tangents only
/// when k is a multiple of 3. Targets 2 and 7 are the ones the tests leave at weight zero; their deltas
/// are a million times larger.
/// The targets' deltas as given, per stream (positions, normals, tangents), per target.
type Deltas = [Vec<Option<Vec<Vec3>>>; 3];

fn targets(n: usize, rng: &mut Rng) -> (MorphTargets, Deltas) {
    let deltas = |rng: &mut Rng, k: usize, scale: f32| -> Vec<Vec3> {
        (0..n)
            .map(|_| {
                // Targets 2 and 7 move far, so that reading one at weight zero would still show if
                // the weight were not exactly zero (deltas must be finite: the numeric rules).
                let far = if k == 2 || k == 7 { 1e6 } else { 1.0 };
                Vec3::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                ) * scale
                    * far
            })
            .collect()
    };
    let p: Vec<_> = (0..TARGETS).map(|k| Some(deltas(rng, k, 0.3))).collect();
    let nm: Vec<_> = (0..TARGETS)
        .map(|k| (k % 2 == 0).then(|| deltas(rng, k, 0.2)))
        .collect();
    let t: Vec<_> = (0..TARGETS)
        .map(|k| (k % 3 == 0).then(|| deltas(rng, k, 0.2)))
        .collect();
    let targets = MorphTargets::new(n, p.clone(), nm.clone(), t.clone()).unwrap();
    (targets, [p, nm, t])
}

fn character(prepared: SkinnedMesh, targets: MorphTargets) -> Character {
    let parents: Vec<Option<usize>> = (0..JOINTS).map(|j| j.checked_sub(1)).collect();
    let skeleton = Skeleton::from_parents(&parents).unwrap();
    let t: Vec<Vec3> = (0..JOINTS)
        .map(|j| Vec3::new(0.0, 0.0, 0.3 * (j.min(1) as f32)))
        .collect();
    let (q, s) = (vec![Quat::IDENTITY; JOINTS], vec![Vec3::ONE; JOINTS]);
    let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s).unwrap();
    Character::new(skeleton, t, q, s, vec![skin], vec![(prepared, 0)])
        .unwrap()
        .with_mesh_morph_targets(0, targets)
        .unwrap()
}

/// Bends every joint a little, differently per `phase`.
fn pose(frame: &mut Frame, phase: f32) {
    for j in 0..JOINTS {
        let (t, _, s) = frame.local(j).unwrap();
        let q = Quat::from_euler(
            ispc_skinning::glam::EulerRot::XYZ,
            0.3 * (phase + j as f32).sin(),
            0.2 * (phase * 1.7 + j as f32).cos(),
            0.1 * phase,
        );
        frame.set_local(j, t, q, s).unwrap();
    }
}

/// The long way round: morph in mesh order, prepare afresh, skin with the frame's palette.
fn fresh(
    m: &Mesh,
    targets: &Deltas,
    weights: &[f32],
    backend: Backend,
    frame: &Frame,
) -> SkinnedVertices {
    let n = m.positions.len();
    let flat = |v: &[Vec3]| -> Vec<f32> { v.iter().flat_map(|p| p.to_array()).collect() };
    let morph = |base: &[Vec3], deltas: &[Option<Vec<Vec3>>]| -> Vec<Vec3> {
        let base = flat(base);
        let (mut ds, mut ws) = (Vec::new(), Vec::new());
        for (d, &w) in deltas.iter().zip(weights) {
            if let Some(d) = d {
                ds.push(flat(d));
                ws.push(w);
            }
        }
        let refs: Vec<&[f32]> = ds.iter().map(Vec::as_slice).collect();
        let mut out = vec![0.0; base.len()];
        morph_floats(backend, &base, &refs, &ws, &mut out).unwrap();
        out.chunks_exact(3).map(Vec3::from_slice).collect()
    };
    let [p, nm, t] = targets;
    let positions = morph(&m.positions, p);
    let normals = morph(&m.normals, nm);
    let t3: Vec<Vec3> = m.tangents.iter().map(|t| t.truncate()).collect();
    let tangents: Vec<Vec4> = morph(&t3, t)
        .iter()
        .zip(&m.tangents)
        .map(|(t, w)| t.extend(w.w))
        .collect();
    let prepared = input(m, &positions, &normals, &tangents);
    let mut out = SkinnedVertices {
        positions: vec![Vec3::ZERO; n],
        normals: Some(vec![Vec3::ZERO; n]),
        tangents: Some(vec![Vec4::ZERO; n]),
    };
    let (op, on, ot) = (
        &mut out.positions,
        out.normals.as_mut().unwrap(),
        out.tangents.as_mut().unwrap(),
    );
    SkinningJob::new(
        &prepared,
        &frame.palettes()[0],
        SkinOutput::positions_normals_tangents(op, on, ot),
    )
    .renormalize(frame.renormalize)
    .backend(backend)
    .run()
    .unwrap();
    out
}

fn assert_same(got: &SkinnedVertices, want: &SkinnedVertices, what: &str) {
    let bits3 = |v: &[Vec3]| -> Vec<[u32; 3]> {
        v.iter().map(|p| p.to_array().map(f32::to_bits)).collect()
    };
    let bits4 = |v: &[Vec4]| -> Vec<[u32; 4]> {
        v.iter().map(|p| p.to_array().map(f32::to_bits)).collect()
    };
    for (i, (g, w)) in bits3(&got.positions)
        .iter()
        .zip(bits3(&want.positions))
        .enumerate()
    {
        assert_eq!(
            *g, w,
            "{what}: position {i}: {:?} vs {:?}",
            got.positions[i], want.positions[i]
        );
    }
    assert_eq!(
        bits3(got.normals.as_ref().unwrap()),
        bits3(want.normals.as_ref().unwrap()),
        "{what}: normals"
    );
    assert_eq!(
        bits4(got.tangents.as_ref().unwrap()),
        bits4(want.tangents.as_ref().unwrap()),
        "{what}: tangents"
    );
    assert!(
        got.positions.iter().all(|p| p.is_finite()),
        "{what}: a zero-weight target was read"
    );
}

/// Weights for frame `f`: targets 2 and 7 stay at zero (their NaN deltas are skipped), the others vary.
fn weights(f: usize, rng: &mut Rng) -> Vec<f32> {
    (0..TARGETS)
        .map(|k| {
            if k == 2 || k == 7 || (f + k) % 4 == 0 {
                0.0
            } else {
                rng.range(-1.0, 1.5)
            }
        })
        .collect()
}

#[test]
fn the_in_place_morph_matches_a_fresh_prepare_on_every_backend() {
    let mut rng = Rng::new(91);
    for n in [1, 15, 16, 17, 300] {
        let m = mesh(n, &mut rng);
        let (targets, t) = targets(n, &mut rng);
        let c = character(input(&m, &m.positions, &m.normals, &m.tangents), targets);
        // The groups really are a permutation of the mesh order.
        if n == 300 {
            let perm = c.mesh(0).unwrap().permutation();
            assert!(perm.windows(2).any(|w| w[1] != w[0] + 1));
        }
        // The frame's defaults take the fused morph + skin pass on an ISA; renormalizing or a second
        // thread takes the pre-pass into the frame's copy, then the skinning job. Both must match.
        let paths = [
            (Renormalize::None, Threads::One),
            (Renormalize::Precise, Threads::One),
            (Renormalize::None, Threads::All),
        ];
        for backend in backends() {
            for (renormalize, threads) in paths {
                let mut frame = c.frame_buffers().backend(backend);
                frame.renormalize = renormalize;
                frame.threads = threads;
                pose(&mut frame, 0.4);
                let w = weights(1, &mut rng);
                frame.set_mesh_weights(0, &w).unwrap();
                c.evaluate(&mut frame).unwrap();
                let want = fresh(&m, &t, &w, backend, &frame);
                let what = format!("n={n} {backend:?} {renormalize:?} {threads:?}");
                assert_same(&frame.meshes()[0], &want, &what);
            }
        }
    }
}

#[test]
fn weights_that_change_across_frames_leave_no_stale_state() {
    let mut rng = Rng::new(5);
    let n = 200;
    let m = mesh(n, &mut rng);
    let (targets, t) = targets(n, &mut rng);
    let c = character(input(&m, &m.positions, &m.normals, &m.tangents), targets);
    for backend in backends() {
        let mut frame = c.frame_buffers().backend(backend);
        // Some targets on, others on, all off, only a position-only target on, then many on again.
        let mut only_one = vec![0.0; TARGETS];
        only_one[1] = 0.8;
        let sequence = [
            weights(0, &mut rng),
            weights(1, &mut rng),
            vec![0.0; TARGETS],
            only_one,
            weights(3, &mut rng),
        ];
        for (f, w) in sequence.iter().enumerate() {
            pose(&mut frame, f as f32);
            frame.set_mesh_weights(0, w).unwrap();
            c.evaluate(&mut frame).unwrap();
            let want = fresh(&m, &t, w, backend, &frame);
            let what = format!("{backend:?} frame {f}");
            assert_same(&frame.meshes()[0], &want, &what);
            // A frame that never saw the earlier weights gives the same vertices.
            let mut new = c.frame_buffers().backend(backend);
            pose(&mut new, f as f32);
            new.set_mesh_weights(0, w).unwrap();
            c.evaluate(&mut new).unwrap();
            assert_same(
                &frame.meshes()[0],
                &new.meshes()[0],
                &format!("{what}, new frame"),
            );
        }
    }
}

#[test]
fn all_zero_weights_skin_the_bind_pose() {
    let mut rng = Rng::new(8);
    let n = 100;
    let m = mesh(n, &mut rng);
    let (t, _) = targets(n, &mut rng);
    let prepared = input(&m, &m.positions, &m.normals, &m.tangents);
    let morphed = character(prepared.clone(), t);
    let parents: Vec<Option<usize>> = (0..JOINTS).map(|j| j.checked_sub(1)).collect();
    let plain = Character::new(
        Skeleton::from_parents(&parents).unwrap(),
        (0..JOINTS)
            .map(|j| morphed.rest_pose(j).unwrap().0)
            .collect(),
        vec![Quat::IDENTITY; JOINTS],
        vec![Vec3::ONE; JOINTS],
        morphed.skins().to_vec(),
        vec![(prepared, 0)],
    )
    .unwrap();
    for backend in backends() {
        let (mut a, mut b) = (
            morphed.frame_buffers().backend(backend),
            plain.frame_buffers().backend(backend),
        );
        // Morph first, then go back to zero: the copy's morphed pose must not leak into the output.
        pose(&mut a, 1.0);
        a.set_mesh_weights(0, &weights(1, &mut rng)).unwrap();
        morphed.evaluate(&mut a).unwrap();
        a.set_mesh_weights(0, &[0.0; TARGETS]).unwrap();
        morphed.evaluate(&mut a).unwrap();
        pose(&mut b, 1.0);
        plain.evaluate(&mut b).unwrap();
        assert_same(&a.meshes()[0], &b.meshes()[0], &format!("{backend:?}"));
    }
}

#[test]
fn morph_targets_and_frames_that_do_not_fit_are_typed_errors() {
    let mut rng = Rng::new(3);
    let m = mesh(40, &mut rng);
    let prepared = input(&m, &m.positions, &m.normals, &m.tangents);
    let c = character(prepared.clone(), targets(40, &mut rng).0);
    // Targets for another vertex count.
    let parents: Vec<Option<usize>> = (0..JOINTS).map(|j| j.checked_sub(1)).collect();
    let plain = Character::new(
        Skeleton::from_parents(&parents).unwrap(),
        vec![Vec3::ZERO; JOINTS],
        vec![Quat::IDENTITY; JOINTS],
        vec![Vec3::ONE; JOINTS],
        c.skins().to_vec(),
        vec![(prepared, 0)],
    )
    .unwrap();
    let err = plain
        .clone()
        .with_mesh_morph_targets(0, targets(39, &mut rng).0)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::CountMismatch {
                expected: 40,
                got: 39,
                ..
            }
        ),
        "{err}"
    );
    // A mesh that does not exist.
    let err = plain
        .clone()
        .with_mesh_morph_targets(1, targets(40, &mut rng).0)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::CountMismatch {
                what: "skinned meshes",
                expected: 1,
                got: 2
            }
        ),
        "{err}"
    );
    // A frame of a character without the targets (no weights, no morphed copy).
    let mut frame = plain.frame_buffers();
    let err = c.evaluate(&mut frame).unwrap_err();
    assert!(matches!(err, Error::WrongFrame { .. }), "{err}");
    // The weights are checked when set.
    let mut frame = c.frame_buffers();
    let err = frame.set_mesh_weights(0, &[1.0; TARGETS - 1]).unwrap_err();
    assert!(matches!(err, Error::CountMismatch { .. }), "{err}");
}

/// A built character's clip weight set 0 drives skinned mesh 0 through `Character::play`, and the
/// played weights skin exactly as the same weights set by hand.
#[test]
fn played_weight_set_drives_skinned_mesh_zero() {
    use ispc_skinning::{Clip, ClipLayer, Interpolation, Wrap};
    let mut rng = Rng::new(17);
    let n = 40;
    let m = mesh(n, &mut rng);
    let (targets, _) = targets(n, &mut rng);
    let c = character(input(&m, &m.positions, &m.normals, &m.tangents), targets);
    let (a, b) = (weights(0, &mut rng), weights(1, &mut rng));
    let mut clip = Clip::builder(c.skeleton());
    let keys: Vec<f32> = a.iter().chain(&b).copied().collect();
    clip.weights(0, TARGETS, Interpolation::Linear, &[0.0, 1.0], &keys)
        .unwrap();
    let clip = clip.build();
    for backend in backends() {
        let mut played = c.frame_buffers().backend(backend);
        c.play(
            &mut played,
            &[ClipLayer::new(&clip, 0.5).wrap(Wrap::Clamp)],
            &[],
        )
        .unwrap();
        let got = played.mesh_weights(0).unwrap().to_vec();
        for (k, (&g, (&x, &y))) in got.iter().zip(a.iter().zip(&b)).enumerate() {
            let want = 0.5 * x + 0.5 * y;
            assert!(
                (g - want).abs() < 1e-6,
                "{backend:?} target {k}: {g} != {want}"
            );
        }
        c.evaluate(&mut played).unwrap();
        let mut by_hand = c.frame_buffers().backend(backend);
        by_hand.set_mesh_weights(0, &got).unwrap();
        c.evaluate(&mut by_hand).unwrap();
        assert_same(&played.meshes()[0], &by_hand.meshes()[0], "played weights");
    }
}
