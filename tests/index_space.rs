//! One index space: everything above the jobs speaks the user's joint order (the index in the parent
//! array a skeleton was built from), and only the `level_*` names speak the level order.
//!
//! - `Skeleton`: the unprefixed methods agree with the parent array as given, the `level_*` methods with
//!   the level order, and the conversions between the two round-trip;
//! - `Character`: built from the same rig given in two joint orders, it computes the same model
//!   matrices, palettes and vertices, joint for joint through the permutation;
//! - `Frame`: `set_local`, `set_pose`, `local`, `model` and `copy_models` in the user's order;
//! - bind poses: `Skeleton::bind_pose_models` and `inverse_bind_matrices` invert each other, and
//!   `CharacterSkin::from_bind_pose` skins the bind pose back to the input vertices.
// Index loops read several parallel arrays (user and level order) at once; indices are clearer here.
#![allow(clippy::needless_range_loop)]

mod common;
use common::scenes;

use common::{backends, random_vec3, shuffled_tree, Rng};
use glam::{EulerRot, Mat4, Quat, Vec3, Vec4};
use ispc_skinning::{
    Attribute, Backend, Character, CharacterSkin, Error, MeshInput, PrepareOptions, Skeleton,
    SkinnedMesh,
};
use scenes::animated_pose;

/// A random permutation of `0..n`.
fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = Rng::new(seed);
    let mut perm: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        perm.swap(i, rng.below(i + 1));
    }
    perm
}

/// The same hierarchy with joint `j` renamed `perm[j]`.
fn permute_parents(parents: &[Option<usize>], perm: &[usize]) -> Vec<Option<usize>> {
    let mut out = vec![None; parents.len()];
    for (j, p) in parents.iter().enumerate() {
        out[perm[j]] = p.map(|p| perm[p]);
    }
    out
}

/// Per-joint data with joint `j`'s entry moved to `perm[j]`.
fn permute<T: Copy + Default>(data: &[T], perm: &[usize]) -> Vec<T> {
    let mut out = vec![T::default(); data.len()];
    for (j, &x) in data.iter().enumerate() {
        out[perm[j]] = x;
    }
    out
}

/// Model matrices computed with glam straight from a parent array in the user's order: each joint's
/// parent first, whatever order the array is in.
fn glam_models(
    parents: &[Option<usize>],
    t: &[Vec3],
    q: &[Quat],
    s: &[Vec3],
    root: Mat4,
) -> Vec<Mat4> {
    let n = parents.len();
    let mut models: Vec<Option<Mat4>> = vec![None; n];
    while models.iter().any(Option::is_none) {
        for j in 0..n {
            if models[j].is_some() {
                continue;
            }
            let local = Mat4::from_scale_rotation_translation(s[j], q[j].normalize(), t[j]);
            models[j] = match parents[j] {
                None => Some(root * local),
                Some(p) => models[p].map(|m| m * local),
            };
        }
    }
    models.into_iter().map(Option::unwrap).collect()
}

/// Element-wise closeness relative to the matrices' magnitude.
fn mat_close(a: Mat4, b: Mat4, tol: f32) -> bool {
    let scale = a.to_cols_array().iter().fold(1.0f32, |m, x| m.max(x.abs()));
    a.abs_diff_eq(b, tol * scale)
}

/// All descendants of `joint` (itself included), found by walking up the parent array.
fn descendants(parents: &[Option<usize>], joint: usize) -> Vec<usize> {
    (0..parents.len())
        .filter(|&k| {
            let mut a = Some(k);
            while let Some(x) = a {
                if x == joint {
                    return true;
                }
                a = parents[x];
            }
            false
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------------
// Skeleton

#[test]
fn skeleton_methods_speak_the_users_order_and_level_methods_the_level_order() {
    for (n, roots, seed) in [(1, 1, 1), (9, 1, 2), (40, 3, 3), (300, 5, 4)] {
        let parents = shuffled_tree(n, roots, seed);
        let names: Vec<String> = (0..n).map(|j| format!("joint{j}")).collect();
        let s = Skeleton::from_parents(&parents)
            .unwrap()
            .with_names(names.clone())
            .unwrap();
        // User order: exactly the input array.
        assert_eq!(s.parents(), &parents[..]);
        for j in 0..n {
            assert_eq!(s.parent(j), parents[j], "joint {j}");
            let kids: Vec<usize> = (0..n).filter(|&k| parents[k] == Some(j)).collect();
            assert_eq!(s.children(j).collect::<Vec<_>>(), kids, "joint {j}");
            assert_eq!(s.name(j), Some(names[j].as_str()));
            assert_eq!(s.find(&names[j]), Some(j));
        }
        let roots_given: Vec<usize> = (0..n).filter(|&j| parents[j].is_none()).collect();
        assert_eq!(s.roots().collect::<Vec<_>>(), roots_given);
        assert_eq!(roots_given.len(), roots);
        // Out of range: nothing.
        assert_eq!(s.parent(n), None);
        assert_eq!(s.children(n).count(), 0);
        assert_eq!(s.name(n), None);
        assert_eq!(s.find("nobody"), None);
        assert_eq!(s.level_index(n), None);
        assert_eq!(s.original_index(n), None);

        // Level order: the same hierarchy, renumbered so that parents come first and levels and
        // children are contiguous.
        let level = s.level_order();
        let original = s.original_order();
        for j in 0..n {
            let l = s.level_index(j).unwrap();
            assert_eq!(level[j], l);
            assert_eq!(original[l], j);
            assert_eq!(s.original_index(l), Some(j));
            assert_eq!(s.level_parent(l), parents[j].map(|p| level[p]), "joint {j}");
            assert_eq!(s.level_parents()[l], s.level_parent(l));
            if let Some(p) = s.level_parent(l) {
                assert!(p < l, "a parent comes before its child in level order");
            }
            // The level children are the user children, renumbered, in the same relative order.
            let level_kids: Vec<usize> = s.level_children(l).map(|c| original[c]).collect();
            assert_eq!(level_kids, s.children(j).collect::<Vec<_>>(), "joint {j}");
            // The level subtree is the user subtree.
            let mut sub: Vec<usize> = s
                .level_subtree(l)
                .into_iter()
                .flatten()
                .map(|c| original[c])
                .collect();
            sub.sort();
            assert_eq!(sub, descendants(&parents, j), "subtree of {j}");
        }
        assert_eq!(s.level_parent(n), None);
        assert!(s.level_children(n).is_empty());
        assert!(s.level_subtree(n).is_empty());
        assert_eq!(
            s.level(0).map(|l| original[l]).collect::<Vec<_>>(),
            roots_given
        );
        assert_eq!(s.levels().count(), s.level_count());
        assert!(s.level(s.level_count()).is_empty());
        // Each level holds the joints of one depth.
        for (depth, range) in s.levels().enumerate() {
            for l in range {
                let mut d = 0;
                let mut a = parents[original[l]];
                while let Some(p) = a {
                    d += 1;
                    a = parents[p];
                }
                assert_eq!(d, depth, "level-order joint {l}");
            }
        }

        // Conversions round-trip.
        let data: Vec<u64> = (0..n as u64).map(|j| j * 7 + 1).collect();
        let in_level = s.to_level_order(&data).unwrap();
        for j in 0..n {
            assert_eq!(in_level[level[j]], data[j]);
        }
        assert_eq!(s.to_original_order(&in_level).unwrap(), data);
        let all: Vec<usize> = (0..n).rev().collect();
        assert_eq!(
            s.level_indices(&all).unwrap(),
            all.iter().map(|&j| level[j]).collect::<Vec<_>>()
        );
        assert_eq!(
            s.level_indices(&[0, n]).unwrap_err(),
            Error::JointOutOfRange {
                joint: n,
                joints: n
            }
        );
        assert_eq!(
            s.to_original_order(&data[1..]).unwrap_err(),
            Error::CountMismatch {
                what: "per-joint data",
                expected: n,
                got: n - 1
            }
        );
    }
}

// ---------------------------------------------------------------------------------------------------
// Character

/// The scenes crate's character as user-order parts: skeleton parents, rest (bind) translations, the
/// inverse binds and a prepared mesh with normals and tangents whose joints are user indices.
struct Rig {
    parents: Vec<Option<usize>>,
    rest_t: Vec<Vec3>,
    inverse_binds: Vec<Mat4>,
    mesh: SkinnedMesh,
}

fn rig() -> Rig {
    let c = scenes::character(20, 3, 4);
    let input = MeshInput::new(
        Attribute::vec3(&c.positions),
        Attribute::joints_u16(&c.joints),
        Attribute::weights_f32(&c.weights),
    )
    .normals(Attribute::vec3(&c.normals))
    .tangents(Attribute::vec4(&c.tangents));
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(c.parents.len())).unwrap();
    Rig {
        parents: c.parents,
        rest_t: c.bind_translations,
        inverse_binds: c.inverse_binds,
        mesh,
    }
}

/// The rig's character with its joints renamed by `perm` (joint j of the rig is joint `perm[j]`): the
/// skeleton and the rest pose are permuted, and skin joint i names joint `perm[i]`, so the mesh (which
/// names skin joints) is unchanged.
fn character(rig: &Rig, perm: &[usize]) -> Character {
    let n = rig.parents.len();
    let skeleton = Skeleton::from_parents(&permute_parents(&rig.parents, perm)).unwrap();
    let skin = CharacterSkin {
        joints: (0..n).map(|i| perm[i]).collect(),
        inverse_binds: rig.inverse_binds.clone(),
    };
    Character::new(
        skeleton,
        permute(&rig.rest_t, perm),
        vec![Quat::IDENTITY; n],
        vec![Vec3::ONE; n],
        vec![skin],
        vec![(rig.mesh.clone(), 0)],
    )
    .unwrap()
}

#[test]
fn a_character_does_not_depend_on_the_order_its_joints_are_given_in() {
    let rig = rig();
    let n = rig.parents.len();
    let identity: Vec<usize> = (0..n).collect();
    let a = character(&rig, &identity);
    // The rig's own order (parents first, depth first) is not its level order: the check below would
    // pass trivially if the character ignored the permutation only where the two agree.
    assert_ne!(a.skeleton().original_order(), &identity[..]);
    let root = Mat4::from_scale_rotation_translation(
        Vec3::splat(1.5),
        Quat::from_rotation_y(0.6),
        Vec3::new(3.0, 0.0, -2.0),
    );
    for seed in [1u64, 2, 3] {
        let perm = permutation(n, seed);
        let b = character(&rig, &perm);
        for j in 0..n {
            assert_eq!(a.rest_pose(j), b.rest_pose(perm[j]), "joint {j}");
        }
        let (t, q, s) = animated_pose(n, 0.3 * seed as f32, true, seed);
        let want = glam_models(&rig.parents, &t, &q, &s, root);
        for backend in backends() {
            let mut fa = a.frame_buffers().backend(backend).root(root);
            let mut fb = b.frame_buffers().backend(backend).root(root);
            fa.set_pose(&t, &q, &s).unwrap();
            fb.set_pose(
                &permute(&t, &perm),
                &permute(&q, &perm),
                &permute(&s, &perm),
            )
            .unwrap();
            a.evaluate(&mut fa).unwrap();
            b.evaluate(&mut fb).unwrap();
            for j in 0..n {
                let (ma, mb) = (fa.model(j).unwrap(), fb.model(perm[j]).unwrap());
                assert!(
                    mat_close(ma, mb, 1e-5),
                    "{backend:?} seed {seed} joint {j}:\n{ma}\n{mb}"
                );
                assert!(
                    mat_close(ma, want[j], 1e-5),
                    "{backend:?} seed {seed} joint {j} against glam:\n{ma}\n{}",
                    want[j]
                );
            }
            // Skin joint i is rig joint i in both, so the palettes and the vertices are the same.
            for (i, (pa, pb)) in fa.palettes()[0].iter().zip(&fb.palettes()[0]).enumerate() {
                assert!(
                    mat_close(pa.to_mat4(), pb.to_mat4(), 1e-5),
                    "{backend:?} seed {seed} palette entry {i}"
                );
            }
            let (va, vb) = (&fa.meshes()[0], &fb.meshes()[0]);
            for v in 0..va.positions.len() {
                let (pa, pb) = (va.positions[v], vb.positions[v]);
                assert!(
                    pa.abs_diff_eq(pb, 1e-5 * (1.0 + pa.abs().max_element())),
                    "{backend:?} seed {seed} vertex {v}: {pa} vs {pb}"
                );
                let (na, nb) = (
                    va.normals.as_ref().unwrap()[v],
                    vb.normals.as_ref().unwrap()[v],
                );
                assert!(
                    na.abs_diff_eq(nb, 1e-5),
                    "{backend:?} vertex {v}: {na} vs {nb}"
                );
                let (ta, tb) = (
                    va.tangents.as_ref().unwrap()[v],
                    vb.tangents.as_ref().unwrap()[v],
                );
                assert!(
                    ta.abs_diff_eq(tb, 1e-5),
                    "{backend:?} vertex {v}: {ta} vs {tb}"
                );
            }
        }
    }
}

#[test]
fn frame_accessors_speak_the_users_order() {
    // Joint 2 is the root; 0 and 3 are its children, 1 is 0's child and 4 is 1's: level order 2 0 3 1 4.
    let parents = [Some(2), Some(0), None, Some(2), Some(1)];
    let skeleton = Skeleton::from_parents(&parents).unwrap();
    assert_eq!(skeleton.original_order(), &[2, 0, 3, 1, 4]);
    let n = parents.len();
    let rest_t: Vec<Vec3> = (0..n).map(|j| Vec3::new(j as f32, 1.0, 0.0)).collect();
    let rest_q: Vec<Quat> = (0..n)
        .map(|j| Quat::from_rotation_z(0.1 * j as f32))
        .collect();
    let rest_s = vec![Vec3::ONE; n];
    let c = Character::new(
        skeleton.clone(),
        rest_t.clone(),
        rest_q.clone(),
        rest_s.clone(),
        vec![],
        vec![],
    )
    .unwrap();
    let mut frame = c.frame_buffers();
    // A new frame holds the rest pose, by joint.
    for j in 0..n {
        assert_eq!(c.rest_pose(j), Some((rest_t[j], rest_q[j], rest_s[j])));
        assert_eq!(frame.local(j), Some((rest_t[j], rest_q[j], rest_s[j])));
    }
    // set_local writes the joint it names, which sits at its level index inside.
    let moved = (
        Vec3::new(0.0, 0.0, 9.0),
        Quat::from_rotation_x(0.5),
        Vec3::splat(2.0),
    );
    frame.set_local(1, moved.0, moved.1, moved.2).unwrap();
    assert_eq!(frame.local(1), Some(moved));
    let l1 = skeleton.level_index(1).unwrap();
    assert_eq!(l1, 3);
    let (lt, lq, ls) = frame.level_pose();
    assert_eq!((lt[l1], lq[l1], ls[l1]), moved);
    for j in [0, 2, 3, 4] {
        assert_eq!(frame.local(j), Some((rest_t[j], rest_q[j], rest_s[j])));
    }
    // level_pose_mut writes by level index and reads back by joint.
    frame.level_pose_mut().0[0] = Vec3::new(-1.0, -2.0, -3.0);
    assert_eq!(frame.local(2).unwrap().0, Vec3::new(-1.0, -2.0, -3.0));

    // A whole pose in the user's order, then the model matrices by joint.
    let mut rng = Rng::new(17);
    let t: Vec<Vec3> = (0..n).map(|_| random_vec3(&mut rng, -1.0..1.0)).collect();
    let q: Vec<Quat> = (0..n)
        .map(|_| {
            Quat::from_euler(
                EulerRot::XYZ,
                rng.range(-2.0, 2.0),
                rng.range(-2.0, 2.0),
                0.3,
            )
        })
        .collect();
    let s: Vec<Vec3> = (0..n).map(|_| random_vec3(&mut rng, 0.7..1.4)).collect();
    frame.set_pose(&t, &q, &s).unwrap();
    for j in 0..n {
        assert_eq!(frame.local(j), Some((t[j], q[j], s[j])));
    }
    let root = Mat4::from_translation(Vec3::new(10.0, 0.0, 0.0)) * Mat4::from_rotation_y(0.4);
    let want = glam_models(&parents, &t, &q, &s, root);
    for backend in backends() {
        frame.backend = backend;
        frame.root = root;
        frame.level_models_mut().fill(Mat4::ZERO);
        c.local_to_model(&mut frame).unwrap();
        let mut copied = vec![Mat4::ZERO; n];
        frame.copy_models(&mut copied).unwrap();
        for j in 0..n {
            let m = frame.model(j).unwrap();
            assert!(
                mat_close(m, want[j], 1e-5),
                "{backend:?} joint {j}:\n{m}\n{}",
                want[j]
            );
            assert_eq!(copied[j], m);
            assert_eq!(frame.level_models()[skeleton.level_index(j).unwrap()], m);
        }
    }
    assert_eq!(frame.model(n), None);
    assert_eq!(frame.local(n), None);
}

// ---------------------------------------------------------------------------------------------------
// Bind poses

/// A random pose in the user's order with moderate scales, so that matrix inverses stay well
/// conditioned.
fn random_pose(n: usize, seed: u64) -> (Vec<Vec3>, Vec<Quat>, Vec<Vec3>) {
    let mut rng = Rng::new(seed);
    let t = (0..n).map(|_| random_vec3(&mut rng, -1.0..1.0)).collect();
    let q = (0..n)
        .map(|_| {
            Quat::from_euler(
                EulerRot::XYZ,
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
            )
        })
        .collect();
    let s = (0..n).map(|_| random_vec3(&mut rng, 0.8..1.25)).collect();
    (t, q, s)
}

#[test]
fn bind_pose_models_and_inverse_bind_matrices_invert_each_other() {
    for (n, seed) in [(1usize, 1u64), (7, 2), (30, 3)] {
        let parents = shuffled_tree(n, 2, seed);
        let skeleton = Skeleton::from_parents(&parents).unwrap();
        let (t, q, s) = random_pose(n, seed);
        let models = skeleton.bind_pose_models(&t, &q, &s).unwrap();
        let inverses = skeleton.inverse_bind_matrices(&t, &q, &s).unwrap();
        let want = glam_models(&parents, &t, &q, &s, Mat4::IDENTITY);
        assert_eq!(models.len(), n);
        assert_eq!(inverses.len(), n);
        for j in 0..n {
            assert!(mat_close(models[j], want[j], 1e-5), "joint {j}");
            assert!(
                (models[j] * inverses[j]).abs_diff_eq(Mat4::IDENTITY, 1e-4),
                "joint {j}: {}",
                models[j] * inverses[j]
            );
        }
        let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s).unwrap();
        assert_eq!(skin.joints, (0..n).collect::<Vec<_>>());
        assert_eq!(skin.inverse_binds, inverses);
        // One entry per joint in each stream.
        for (t, q, s) in [
            (&t[1..], &q[..], &s[..]),
            (&t[..], &q[1..], &s[..]),
            (&t[..], &q[..], &s[1..]),
        ] {
            let want = Error::CountMismatch {
                what: "per-joint data",
                expected: n,
                got: n - 1,
            };
            assert_eq!(skeleton.bind_pose_models(t, q, s).unwrap_err(), want);
            assert_eq!(skeleton.inverse_bind_matrices(t, q, s).unwrap_err(), want);
            assert_eq!(
                CharacterSkin::from_bind_pose(&skeleton, t, q, s).unwrap_err(),
                want
            );
        }
    }
}

#[test]
fn inverse_bind_matrices_agree_with_the_scenes_character() {
    // The scenes crate computes its inverse binds by hand (translations only, parents first).
    let c = scenes::character(67, 2, 3);
    let n = c.parents.len();
    let skeleton = Skeleton::from_parents(&c.parents).unwrap();
    let got = skeleton
        .inverse_bind_matrices(
            &c.bind_translations,
            &vec![Quat::IDENTITY; n],
            &vec![Vec3::ONE; n],
        )
        .unwrap();
    for j in 0..n {
        assert!(
            got[j].abs_diff_eq(c.inverse_binds[j], 1e-5),
            "joint {j}:\n{}\n{}",
            got[j],
            c.inverse_binds[j]
        );
    }
}

#[test]
fn a_skin_from_the_bind_pose_skins_the_bind_pose_to_the_input_vertices() {
    let n = 25;
    let parents = shuffled_tree(n, 1, 8);
    let skeleton = Skeleton::from_parents(&parents).unwrap();
    let (t, q, s) = random_pose(n, 8);
    let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s).unwrap();
    // A mesh in the bind pose's model space: random vertices with 1 to 4 influences on any joints.
    let mut rng = Rng::new(5);
    let v = 300;
    let positions: Vec<Vec3> = (0..v).map(|_| random_vec3(&mut rng, -3.0..3.0)).collect();
    let normals: Vec<Vec3> = (0..v)
        .map(|_| random_vec3(&mut rng, -1.0..1.0).normalize_or(Vec3::Y))
        .collect();
    let tangents: Vec<Vec4> = (0..v)
        .map(|i| {
            random_vec3(&mut rng, -1.0..1.0)
                .normalize_or(Vec3::X)
                .extend(if i % 2 == 0 { 1.0 } else { -1.0 })
        })
        .collect();
    let joints: Vec<[u16; 4]> = (0..v)
        .map(|_| std::array::from_fn(|_| rng.below(n) as u16))
        .collect();
    let weights: Vec<[f32; 4]> = (0..v)
        .map(|i| std::array::from_fn(|k| if k <= i % 4 { rng.range(0.1, 1.0) } else { 0.0 }))
        .collect();
    let input = MeshInput::new(
        Attribute::vec3(&positions),
        Attribute::joints_u16(&joints),
        Attribute::weights_f32(&weights),
    )
    .normals(Attribute::vec3(&normals))
    .tangents(Attribute::vec4(&tangents));
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(n)).unwrap();
    let c = Character::new(skeleton, t, q, s, vec![skin], vec![(mesh, 0)]).unwrap();
    let place =
        Mat4::from_rotation_translation(Quat::from_rotation_z(0.7), Vec3::new(0.0, 4.0, 1.0));
    for backend in backends().into_iter().chain([Backend::Auto]) {
        for root in [Mat4::IDENTITY, place] {
            // A new frame is at the rest pose, which is the bind pose.
            let mut frame = c.frame_buffers().backend(backend).root(root);
            c.evaluate(&mut frame).unwrap();
            // Every palette entry is root * model * model^-1 = root.
            for (i, p) in frame.palettes()[0].iter().enumerate() {
                assert!(
                    p.to_mat4().abs_diff_eq(root, 1e-4),
                    "{backend:?} entry {i}: {}",
                    p.to_mat4()
                );
            }
            let out = &frame.meshes()[0];
            for i in 0..v {
                let want = root.transform_point3(positions[i]);
                assert!(
                    out.positions[i].abs_diff_eq(want, 1e-4),
                    "{backend:?} vertex {i}: {} vs {want}",
                    out.positions[i]
                );
                let n_want = root.transform_vector3(normals[i]);
                let n_got = out.normals.as_ref().unwrap()[i];
                assert!(
                    n_got.abs_diff_eq(n_want, 1e-4),
                    "{backend:?} vertex {i}: {n_got} vs {n_want}"
                );
                let t_want = root.transform_vector3(tangents[i].truncate());
                let t_got = out.tangents.as_ref().unwrap()[i];
                assert!(
                    t_got.truncate().abs_diff_eq(t_want, 1e-4),
                    "{backend:?} vertex {i}"
                );
                assert_eq!(t_got.w, tangents[i].w);
            }
        }
    }
}
