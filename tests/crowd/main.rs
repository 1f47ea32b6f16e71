//! Crowds against the single-character path, and the size limits of crowd buffers. The crowd jobs
//! (`CrowdPaletteJob`, `CrowdSkinningJob`) and their rules are checked in `jobs.rs` beside this file; crowd
//! frames of another character (the wrong frame) and the message of too many palette entries in
//! `frames.rs`; `CrowdFrame::outputs` in `outputs.rs`; rigid meshes in `rigid.rs`; skinned meshes'
//! morph targets in `morph.rs`. The six files make one test binary.
//!
//! A crowd of N instances of a character (N = 0, 1, 15, 16, 17, 40: empty, one, around a block of 16
//! lanes, and several blocks), each posed differently and placed by its own root, evaluated by
//! `Character::evaluate_crowd` on every backend, must give what `Character::evaluate` gives for each
//! instance alone: model matrices, palettes, positions, normals and tangents, with and without
//! renormalization. `Threads::One` and `Threads::All` give the same bits.
//!
//! Tolerances are those of the ISA parity harness (tests/isa_parity): a model matrix may differ by
//! 8 eps (d + 2) A_j per element (hierarchy.rs: A_j the product of absolute values along the path, d
//! the depth); a palette entry by that bound carried through the inverse bind plus 8 eps |M| |IB| (the
//! palette check); a skinned component by the palette difference carried through the blend plus
//! (k + 4) eps S (skin.rs), and a renormalized one by that over the raw length plus 4 eps per side
//! (the renormalize check).
//!
//! Crowd buffers past the size limits fail before anything is allocated: this test binary counts the
//! largest allocation its thread makes while a call runs.
// Index loops read several parallel arrays (joints, palettes, vertices) at once.
#![allow(clippy::needless_range_loop)]

#[path = "../common/mod.rs"]
mod common;
mod frames;
mod jobs;
mod morph;
mod outputs;
mod rigid;
use common::scenes;

use common::backends;
use glam::{Mat4, Quat, Vec3, Vec4};
use ispc_skinning::reference::trs_matrix;
use ispc_skinning::{
    Attribute, Backend, Character, CharacterSkin, CrowdFrame, CrowdModels, CrowdPalettes,
    CrowdPose, Error, Frame, Isa, MeshInput, PaletteMatrix, PrepareOptions, Renormalize, Skeleton,
    SkinnedMesh, Threads, Trs, MAX_CROWD_ELEMENTS, MAX_CROWD_INSTANCES, MAX_CROWD_JOINTS,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write as _;

/// A `joints`-joint humanoid standing up the y axis (joint j at 0.2 j, unrotated, unscaled) and its skin
/// bound where it rests: the rig of the rigid-mesh and morph-target crowd tests.
fn upright_rig(joints: usize) -> (Skeleton, Vec<Vec3>, Vec<Quat>, Vec<Vec3>, CharacterSkin) {
    let skeleton = Skeleton::from_parents(&scenes::humanoid_parents(joints)).unwrap();
    let t: Vec<Vec3> = (0..joints)
        .map(|j| Vec3::new(0.0, 0.2 * j as f32, 0.0))
        .collect();
    let (q, s) = (vec![Quat::IDENTITY; joints], vec![Vec3::ONE; joints]);
    let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s).unwrap();
    (skeleton, t, q, s, skin)
}

// ---------------------------------------------------------------------------------------------------
// The largest allocation one call makes on this thread.

struct Tracking;

thread_local! {
    static TRACKING: Cell<bool> = const { Cell::new(false) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = TRACKING.try_with(|on| {
        if on.get() {
            let _ = LARGEST.try_with(|m| m.set(m.get().max(size)));
        }
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; `note` only reads and writes
// thread-local cells that need no allocation.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

/// Runs `f` and returns its result with the largest single allocation (bytes) it made on this thread.
fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|m| m.set(0));
    TRACKING.with(|on| on.set(true));
    let r = f();
    TRACKING.with(|on| on.set(false));
    (r, LARGEST.with(Cell::get))
}

// ---------------------------------------------------------------------------------------------------
// The character.

thread_local! {
    static REPORTED: Cell<bool> = const { Cell::new(false) };
}

/// The backends to compare; every ISA this CPU cannot run (or this build lacks) is named on the real
/// stderr (past libtest's capture) as not run, once per test, so that a pass never hides it.
fn backends_here() -> Vec<Backend> {
    if !REPORTED.with(|r| r.replace(true)) {
        for isa in Isa::ALL {
            if let Err(e) = isa.runnable() {
                let thread = std::thread::current();
                let _ = writeln!(
                    std::io::stderr(),
                    "not run: {}: {isa}: {e}",
                    thread.name().unwrap_or("a test")
                );
            }
        }
    }
    backends()
}

/// One mesh's skin-joint indices and weights per vertex, as the tolerance needs them.
struct Influences {
    joints: Vec<[usize; 4]>,
    weights: Vec<[f32; 4]>,
}

/// The scenes crate's character (20 joints, 228 vertices) in its own joint order, which is not its
/// level order, with two skins and two meshes: skin 0 names every joint in order and skins mesh 0
/// (positions, normals, tangents); skin 1 names them in reverse and skins mesh 1 (the same vertices,
/// positions only, joint indices reversed to match).
struct Rig {
    character: Character,
    influences: [Influences; 2],
    n: usize,
}

fn rig() -> Rig {
    let c = scenes::character(20, 3, 4);
    let n = c.parents.len();
    let skeleton = Skeleton::from_parents(&c.parents).unwrap();
    assert_ne!(
        skeleton.original_order(),
        (0..n).collect::<Vec<_>>(),
        "the rig's order should differ from its level order"
    );
    let full = MeshInput::new(
        Attribute::vec3(&c.positions),
        Attribute::joints_u16(&c.joints),
        Attribute::weights_f32(&c.weights),
    )
    .normals(Attribute::vec3(&c.normals))
    .tangents(Attribute::vec4(&c.tangents));
    let mesh0 = SkinnedMesh::prepare(&full, &PrepareOptions::new(n)).unwrap();
    let reversed: Vec<[u16; 4]> = c
        .joints
        .iter()
        .map(|j| j.map(|j| (n - 1) as u16 - j))
        .collect();
    let bare = MeshInput::new(
        Attribute::vec3(&c.positions),
        Attribute::joints_u16(&reversed),
        Attribute::weights_f32(&c.weights),
    );
    let mesh1 = SkinnedMesh::prepare(&bare, &PrepareOptions::new(n)).unwrap();
    let skin0 = CharacterSkin {
        joints: (0..n).collect(),
        inverse_binds: c.inverse_binds.clone(),
    };
    let skin1 = CharacterSkin {
        joints: (0..n).rev().collect(),
        inverse_binds: c.inverse_binds.iter().rev().copied().collect(),
    };
    let character = Character::new(
        skeleton,
        c.bind_translations.clone(),
        vec![Quat::IDENTITY; n],
        vec![Vec3::ONE; n],
        vec![skin0, skin1],
        vec![(mesh0, 0), (mesh1, 1)],
    )
    .unwrap();
    let influences = |joints: &[[u16; 4]]| Influences {
        joints: joints.iter().map(|j| j.map(usize::from)).collect(),
        weights: c.weights.clone(),
    };
    Rig {
        character,
        influences: [influences(&c.joints), influences(&reversed)],
        n,
    }
}

/// A local pose in the user's order: translations, rotations, scales.
type Pose = (Vec<Vec3>, Vec<Quat>, Vec<Vec3>);

/// Instance `i`'s pose (user order) and root.
fn instance(n: usize, i: usize) -> (Pose, Mat4) {
    let pose = scenes::animated_pose(n, 0.37 * i as f32, true, 100 + i as u64);
    let root = Mat4::from_scale_rotation_translation(
        Vec3::splat(1.0 + 0.01 * i as f32),
        Quat::from_rotation_y(0.1 * i as f32),
        Vec3::new(i as f32, 0.0, -((i % 5) as f32)),
    );
    (pose, root)
}

// ---------------------------------------------------------------------------------------------------
// Tolerances (see the file comment).

const EPS: f32 = f32::EPSILON;

fn abs(m: Mat4) -> Mat4 {
    Mat4::from_cols_array(&m.to_cols_array().map(f32::abs))
}

/// The element bound of every joint's model matrix (user order): 8 eps (d + 2) A_j.
fn model_tolerances(
    skeleton: &Skeleton,
    t: &[Vec3],
    q: &[Quat],
    s: &[Vec3],
    root: Mat4,
) -> Vec<Mat4> {
    let n = skeleton.len();
    let mut a = vec![Mat4::ZERO; n];
    let mut depth = vec![0usize; n];
    for l in 0..n {
        let j = skeleton.original_index(l).unwrap();
        let mut local = Mat4::from_cols_array(&trs_matrix(t[j], q[j], s[j])).to_cols_array();
        local.iter_mut().for_each(|x| *x = x.abs());
        for (c, sc) in s[j].abs().to_array().into_iter().enumerate() {
            for r in 0..3 {
                local[4 * c + r] += 8.0 * EPS * sc;
            }
        }
        let (parent, d) = match skeleton.parent(j) {
            Some(p) => (a[p], depth[p] + 1),
            None => (abs(root), 0),
        };
        a[j] = parent * Mat4::from_cols_array(&local);
        depth[j] = d;
    }
    (0..n)
        .map(|j| a[j] * (8.0 * EPS * (depth[j] as f32 + 2.0)))
        .collect()
}

/// Ok when every element of `got` is within `tol` of `want`, the bottom row exactly.
fn check_matrix(ctx: &dyn Fn() -> String, got: Mat4, want: Mat4, tol: Mat4) {
    let (g, w, t) = (
        got.to_cols_array(),
        want.to_cols_array(),
        tol.to_cols_array(),
    );
    for e in 0..16 {
        let ok = if e % 4 == 3 {
            g[e] == w[e]
        } else {
            (g[e] - w[e]).abs() <= t[e]
        };
        assert!(
            ok,
            "{}: element {e} (row {}, col {}): crowd {} single {}, |diff| {} > {}",
            ctx(),
            e % 4,
            e / 4,
            g[e],
            w[e],
            (g[e] - w[e]).abs(),
            t[e]
        );
    }
}

/// The bound of one skinned component (row `r`, input `v`) of a vertex, from the single path's palette
/// and the observed palette difference.
fn blend_tolerance(
    infl: &Influences,
    vertex: usize,
    single: &[PaletteMatrix],
    crowd: &[PaletteMatrix],
    r: usize,
    v: [f32; 4],
) -> f32 {
    let k = infl.weights[vertex].iter().filter(|&&w| w > 0.0).count() as f32;
    let mut tol = 0.0;
    for (&j, &w) in infl.joints[vertex].iter().zip(&infl.weights[vertex]) {
        if w > 0.0 {
            for c in 0..4 {
                let (p, dp) = (
                    single[j].rows[r][c],
                    (crowd[j].rows[r][c] - single[j].rows[r][c]).abs(),
                );
                tol += w * (dp + (k + 4.0) * EPS * p.abs()) * v[c].abs();
            }
        }
    }
    tol
}

/// Compares one mesh of one instance: positions always, normals and tangents where the mesh has them.
/// `raw` is the single path's unrenormalized output of the same instance, for renormalized bounds.
#[allow(clippy::too_many_arguments)]
fn check_vertices(
    ctx: &str,
    infl: &Influences,
    input: &scenes::Character,
    single: &[PaletteMatrix],
    crowd_palette: &[PaletteMatrix],
    got: (&[Vec3], Option<&[Vec3]>, Option<&[Vec4]>),
    want: (&[Vec3], Option<&[Vec3]>, Option<&[Vec4]>),
    raw: Option<(&[Vec3], &[Vec4])>,
) {
    let tol = |v: usize, x: [f32; 4]| -> [f32; 3] {
        std::array::from_fn(|r| blend_tolerance(infl, v, single, crowd_palette, r, x))
    };
    assert_eq!(got.0.len(), want.0.len(), "{ctx}");
    for v in 0..want.0.len() {
        let bound = tol(v, input.positions[v].extend(1.0).to_array());
        let (g, w) = (got.0[v].to_array(), want.0[v].to_array());
        for r in 0..3 {
            assert!(
                (g[r] - w[r]).abs() <= bound[r],
                "{ctx}: vertex {v} position[{r}]: crowd {} single {}, bound {}",
                g[r],
                w[r],
                bound[r]
            );
        }
        let mut directions = Vec::new();
        if let (Some(g), Some(w)) = (got.1, want.1) {
            let raw_len = raw.map(|(n, _)| n[v].length());
            directions.push(("normal", g[v], w[v], input.normals[v], raw_len));
        } else {
            assert_eq!(got.1.is_some(), want.1.is_some(), "{ctx}: normals");
        }
        if let (Some(g), Some(w)) = (got.2, want.2) {
            assert_eq!(g[v].w, w[v].w, "{ctx}: vertex {v} tangent w");
            let raw_len = raw.map(|(_, t)| t[v].truncate().length());
            let input_t = input.tangents[v].truncate();
            directions.push((
                "tangent",
                g[v].truncate(),
                w[v].truncate(),
                input_t,
                raw_len,
            ));
        } else {
            assert_eq!(got.2.is_some(), want.2.is_some(), "{ctx}: tangents");
        }
        for (what, g, w, x, raw_len) in directions {
            let bound = tol(v, x.extend(0.0).to_array());
            let bound = match raw_len {
                // Renormalized: |d(x / |x|)| <= (|dx_r| + |dx|) / |x|, plus the rounding of each side.
                Some(len) => bound.map(|b| (b + bound.iter().sum::<f32>()) / len + 8.0 * EPS),
                None => bound,
            };
            let (g, w) = (g.to_array(), w.to_array());
            for r in 0..3 {
                assert!(
                    (g[r] - w[r]).abs() <= bound[r],
                    "{ctx}: vertex {v} {what}[{r}]: crowd {} single {}, bound {}",
                    g[r],
                    w[r],
                    bound[r]
                );
            }
        }
    }
}

/// Everything a crowd frame holds after a frame, as bits, to compare two runs exactly.
fn crowd_bits(rig: &Rig, frame: &CrowdFrame) -> Vec<u32> {
    let mut bits = Vec::new();
    let mut models = vec![Mat4::ZERO; rig.n];
    for i in 0..frame.instances() {
        frame.models().instance_models(i, &mut models).unwrap();
        bits.extend(
            models
                .iter()
                .flat_map(|m| m.to_cols_array().map(f32::to_bits)),
        );
    }
    for skin in 0..2 {
        let palettes = frame.palettes(skin).unwrap().as_slice();
        bits.extend(
            palettes
                .iter()
                .flat_map(|p| p.rows.concat().into_iter().map(f32::to_bits)),
        );
    }
    for mesh in 0..2 {
        let out = frame.mesh(mesh).unwrap();
        bits.extend(
            out.positions
                .iter()
                .flat_map(|p| p.to_array().map(f32::to_bits)),
        );
        for n in out.normals.iter().flatten() {
            bits.extend(n.to_array().map(f32::to_bits));
        }
        for t in out.tangents.iter().flatten() {
            bits.extend(t.to_array().map(f32::to_bits));
        }
    }
    bits
}

// ---------------------------------------------------------------------------------------------------
// The crowd path against the single-character path.

#[test]
fn evaluate_crowd_matches_evaluate_per_instance_on_every_backend() {
    let rig = rig();
    let input = scenes::character(20, 3, 4);
    let c = &rig.character;
    let n = rig.n;
    for instances in [0usize, 1, 15, 16, 17, 40] {
        let poses: Vec<_> = (0..instances).map(|i| instance(n, i)).collect();
        for backend in backends_here() {
            for mode in [Renormalize::None, Renormalize::Precise] {
                // One instance at a time, with the same pose and root.
                let singles: Vec<Frame> = poses
                    .iter()
                    .map(|((t, q, s), root)| {
                        let mut frame = c
                            .frame_buffers()
                            .backend(backend)
                            .renormalize(mode)
                            .root(*root);
                        frame.set_pose(t, q, s).unwrap();
                        c.evaluate(&mut frame).unwrap();
                        frame
                    })
                    .collect();
                let raws: Vec<Frame> = poses
                    .iter()
                    .map(|((t, q, s), root)| {
                        let mut frame = c
                            .frame_buffers()
                            .backend(backend)
                            .renormalize(Renormalize::None)
                            .root(*root);
                        frame.set_pose(t, q, s).unwrap();
                        c.evaluate(&mut frame).unwrap();
                        frame
                    })
                    .collect();
                let mut runs = Vec::new();
                for threads in [Threads::One, Threads::All] {
                    let mut crowd = c
                        .crowd_buffers(instances)
                        .unwrap()
                        .backend(backend)
                        .threads(threads)
                        .renormalize(mode);
                    assert_eq!(crowd.instances(), instances);
                    for (i, ((t, q, s), root)) in poses.iter().enumerate() {
                        let trs = Trs {
                            translations: t,
                            rotations: q,
                            scales: s,
                        };
                        crowd.pose_mut().set_instance(i, trs).unwrap();
                        crowd.roots_mut()[i] = *root;
                    }
                    c.evaluate_crowd(&mut crowd).unwrap();
                    runs.push(crowd_bits(&rig, &crowd));
                    if threads == Threads::All {
                        break;
                    }
                    let skeleton = c.skeleton();
                    for (i, (((t, q, s), root), single)) in poses.iter().zip(&singles).enumerate() {
                        let ctx = |what: &str| {
                            format!(
                                "{backend:?} {mode:?} instances={instances} instance={i} {what}"
                            )
                        };
                        let tols = model_tolerances(skeleton, t, q, s, *root);
                        for j in 0..n {
                            check_matrix(
                                &|| ctx(&format!("model of joint {j}")),
                                crowd.models().model(i, j).unwrap(),
                                single.model(j).unwrap(),
                                tols[j],
                            );
                        }
                        for skin in 0..2 {
                            let got = crowd.palettes(skin).unwrap().instance(i).unwrap();
                            let want = &single.palettes()[skin];
                            assert_eq!(got.len(), want.len());
                            let joints = &c.skins()[skin].joints;
                            let ibs = &c.skins()[skin].inverse_binds;
                            for e in 0..want.len() {
                                let m = single.model(joints[e]).unwrap();
                                let ib = abs(ibs[e]);
                                let tol = tols[joints[e]] * ib + abs(m) * ib * (8.0 * EPS);
                                check_matrix(
                                    &|| ctx(&format!("skin {skin} palette entry {e}")),
                                    got[e].to_mat4(),
                                    want[e].to_mat4(),
                                    tol,
                                );
                            }
                        }
                        for mesh in 0..2 {
                            let skin = c.mesh_skin(mesh).unwrap();
                            let raw = &raws[i].meshes()[mesh];
                            let raw = match (mode, &raw.normals, &raw.tangents) {
                                (Renormalize::None, ..) => None,
                                (_, Some(n), Some(t)) => Some((&n[..], &t[..])),
                                _ => None,
                            };
                            let want = &single.meshes()[mesh];
                            check_vertices(
                                &ctx(&format!("mesh {mesh}")),
                                &rig.influences[mesh],
                                &input,
                                &single.palettes()[skin],
                                crowd.palettes(skin).unwrap().instance(i).unwrap(),
                                (
                                    crowd.positions(mesh, i).unwrap(),
                                    crowd.normals(mesh, i),
                                    crowd.tangents(mesh, i),
                                ),
                                (
                                    &want.positions,
                                    want.normals.as_deref(),
                                    want.tangents.as_deref(),
                                ),
                                raw,
                            );
                        }
                        let (lo, hi) = crowd.bounds(i).unwrap();
                        let (want_lo, want_hi) = single.bounds().unwrap();
                        assert!(
                            lo.abs_diff_eq(want_lo, 1e-4) && hi.abs_diff_eq(want_hi, 1e-4),
                            "{}",
                            ctx("bounds")
                        );
                    }
                    // Nothing past the last instance.
                    assert!(crowd.positions(0, instances).is_none());
                    assert!(crowd.palettes(0).unwrap().instance(instances).is_none());
                    assert!(crowd.models().model(instances, 0).is_none());
                    assert!(crowd.bounds(instances).is_none());
                    // Mesh 1 has no normals or tangents.
                    assert!(crowd.normals(1, 0).is_none() && crowd.tangents(1, 0).is_none());
                    assert_eq!(crowd.mesh(0).unwrap().positions.len(), instances * 228);
                    assert!(crowd.palettes(2).is_none() && crowd.mesh(2).is_none());
                }
                assert!(
                    runs[0] == runs[1],
                    "{backend:?} {mode:?} instances={instances}: Threads::All changed the bits"
                );
            }
        }
    }
}

#[test]
fn crowd_buffers_start_at_the_rest_pose_with_the_frame_defaults() {
    let rig = rig();
    let c = &rig.character;
    let crowd = c.crowd_buffers(17).unwrap();
    assert_eq!(crowd.backend, Backend::Auto);
    assert_eq!(crowd.threads, Threads::All);
    assert_eq!(crowd.renormalize, Renormalize::None);
    assert_eq!(crowd.outputs, c.frame_buffers().outputs);
    assert_eq!(crowd.roots(), &[Mat4::IDENTITY; 17]);
    assert_eq!(crowd.pose().instances(), 17);
    assert_eq!(crowd.pose().joints(), rig.n);
    for i in 0..17 {
        for j in 0..rig.n {
            assert_eq!(
                crowd.pose().joint(i, j),
                c.rest_pose(j),
                "instance {i} joint {j}"
            );
        }
    }
    assert_eq!(crowd.palettes(0).unwrap().entries(), rig.n);
    assert_eq!(
        crowd.palettes(1).unwrap().as_slice(),
        &vec![PaletteMatrix::IDENTITY; rig.n * 17][..]
    );
    // The rest pose evaluated as a crowd is the rest pose evaluated alone.
    let mut crowd = crowd.backend(Backend::Reference);
    c.evaluate_crowd(&mut crowd).unwrap();
    let mut frame = c.frame_buffers().backend(Backend::Reference);
    c.evaluate(&mut frame).unwrap();
    for i in 0..17 {
        assert_eq!(
            crowd.positions(1, i).unwrap(),
            &frame.meshes()[1].positions[..]
        );
    }
}

/// Poses every instance of `frame` as [`instance`] does (pose and root).
fn pose_crowd(rig: &Rig, frame: &mut CrowdFrame) {
    for i in 0..frame.instances() {
        let ((t, q, s), root) = instance(rig.n, i);
        for j in 0..rig.n {
            frame.pose_mut().set_joint(i, j, t[j], q[j], s[j]).unwrap();
        }
        frame.roots_mut()[i] = root;
    }
}

#[test]
fn the_crowd_stages_one_at_a_time_equal_evaluate_crowd() {
    let rig = rig();
    let c = &rig.character;
    let mut whole = c.crowd_buffers(20).unwrap();
    pose_crowd(&rig, &mut whole);
    let mut staged = whole.clone();
    c.evaluate_crowd(&mut whole).unwrap();
    c.crowd_local_to_model(&mut staged).unwrap();
    c.crowd_palettes(&mut staged).unwrap();
    c.crowd_skin(&mut staged).unwrap();
    assert!(crowd_bits(&rig, &whole) == crowd_bits(&rig, &staged));
}

/// `evaluate_crowd_pose` runs local to model and the palettes fused per block of instances; on every
/// backend, on one thread and on the pool, around a block's width and over several blocks, it gives
/// the bits of the two stages run one after the other.
#[test]
fn the_fused_crowd_pose_equals_the_two_stages_on_every_backend() {
    let rig = rig();
    let c = &rig.character;
    for instances in [0usize, 1, 15, 16, 17, 40] {
        for backend in backends_here() {
            for threads in [Threads::One, Threads::All] {
                let mut fused = c
                    .crowd_buffers(instances)
                    .unwrap()
                    .backend(backend)
                    .threads(threads);
                pose_crowd(&rig, &mut fused);
                let mut staged = fused.clone();
                c.evaluate_crowd_pose(&mut fused).unwrap();
                c.crowd_local_to_model(&mut staged).unwrap();
                c.crowd_palettes(&mut staged).unwrap();
                assert!(
                    crowd_bits(&rig, &fused) == crowd_bits(&rig, &staged),
                    "{backend:?} {threads:?} instances={instances}: fused and staged differ"
                );
            }
        }
    }
}

/// The kernels report finiteness from per-lane sums; sums of large finite values overflow, and the
/// job then scans instead of failing: models and palettes of 2e38 (finite, three of them per
/// instance) are Ok, while a product that overflows is named by the stage, fused or not.
#[test]
fn large_finite_crowd_results_are_ok_and_overflow_is_named() {
    // A root and three leaves, each leaf 2e38 from the root.
    let skeleton = Skeleton::from_parents(&[None, Some(0), Some(0), Some(0)]).unwrap();
    let t = [
        Vec3::ZERO,
        Vec3::new(2e38, 0.0, 0.0),
        Vec3::new(0.0, 2e38, 0.0),
        Vec3::new(-2e38, 0.0, 0.0),
    ];
    let (q, s) = ([Quat::IDENTITY; 4], [Vec3::ONE; 4]);
    let skin = CharacterSkin::from_bind_pose(&skeleton, &[Vec3::ZERO; 4], &q, &s).unwrap();
    let c = Character::new(
        skeleton,
        t.to_vec(),
        q.to_vec(),
        s.to_vec(),
        vec![skin],
        vec![],
    )
    .unwrap();
    for backend in backends_here() {
        let mut crowd = c.crowd_buffers(20).unwrap().backend(backend);
        assert_eq!(c.evaluate_crowd_pose(&mut crowd), Ok(()), "{backend:?}");
        let palettes = crowd.palettes(0).unwrap().as_slice();
        assert!(palettes
            .iter()
            .all(|p| p.rows.concat().iter().all(|x| x.is_finite())));
        assert_eq!(palettes[20 * 4 - 3].rows[0][3], 2e38, "{backend:?}");
        // Instance 17's root scaled by 1e3: its leaves land past f32::MAX.
        crowd.roots_mut()[17] = Mat4::from_scale(Vec3::splat(1e3));
        for r in [
            c.evaluate_crowd_pose(&mut crowd),
            c.crowd_local_to_model(&mut crowd),
        ] {
            assert!(
                matches!(
                    r,
                    Err(Error::ResultNotFinite {
                        stage: "crowd local to model",
                        index: 17,
                        ..
                    })
                ),
                "{backend:?}: {r:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Size limits.

#[test]
fn too_many_instances_fail_before_anything_is_allocated() {
    let rig = rig();
    let skeleton = rig.character.skeleton();
    let n = rig.n;
    let over = MAX_CROWD_INSTANCES + 1;
    let (err, bytes) = largest_allocation(|| CrowdPose::new(skeleton, over).unwrap_err());
    assert_eq!(
        err,
        Error::TooManyInstances {
            instances: over,
            per_instance: n,
            unit: "joint",
            max: MAX_CROWD_INSTANCES.min(MAX_CROWD_ELEMENTS / n),
        }
    );
    assert!(err.to_string().starts_with("too many instances"), "{err}");
    assert!(
        bytes < 1024,
        "CrowdPose::new allocated {bytes} bytes before failing"
    );
    let (err, bytes) = largest_allocation(|| CrowdModels::new(skeleton, over).unwrap_err());
    assert!(
        matches!(err, Error::TooManyInstances { instances, unit: "joint", .. } if instances == over),
        "{err}"
    );
    assert!(
        bytes < 1024,
        "CrowdModels::new allocated {bytes} bytes before failing"
    );
    let (err, bytes) = largest_allocation(|| CrowdPalettes::new(n, over).unwrap_err());
    assert_eq!(
        err,
        Error::TooManyInstances {
            instances: over,
            per_instance: n,
            unit: "palette entry",
            max: MAX_CROWD_INSTANCES.min(MAX_CROWD_ELEMENTS / n),
        }
    );
    assert!(err.to_string().starts_with("too many instances"), "{err}");
    assert!(
        bytes < 1024,
        "CrowdPalettes::new allocated {bytes} bytes before failing"
    );
    // The character's buffers: 456 vertices (skinned and rigid) per instance bound the count below
    // the instance limit, so a count between the two is refused too.
    let per_instance = 2 * 228;
    let max = MAX_CROWD_INSTANCES.min(MAX_CROWD_ELEMENTS / per_instance);
    assert!(max < MAX_CROWD_INSTANCES);
    for instances in [max + 1, over, usize::MAX] {
        let (err, bytes) =
            largest_allocation(|| rig.character.crowd_buffers(instances).unwrap_err());
        assert_eq!(
            err,
            Error::TooManyInstances {
                instances,
                per_instance,
                unit: "vertex",
                max,
            }
        );
        assert!(
            err.to_string().contains(&format!(
                "of 456 vertices each asked for, but at most {max} fit"
            )),
            "{err}"
        );
        assert!(
            bytes < 1024,
            "crowd_buffers allocated {bytes} bytes before failing"
        );
    }
    // At the limit itself a buffer is made: a one-joint skeleton's pose at the instance limit is
    // 40 MiB.
    let single = Skeleton::from_parents(&[None]).unwrap();
    let pose = CrowdPose::new(&single, MAX_CROWD_INSTANCES).unwrap();
    assert_eq!(pose.instances(), MAX_CROWD_INSTANCES);
    assert!(matches!(
        CrowdPose::new(&single, MAX_CROWD_INSTANCES + 1).unwrap_err(),
        Error::TooManyInstances {
            max: MAX_CROWD_INSTANCES,
            ..
        }
    ));
    // The counter sees the allocations of a crowd that is made.
    let (_, bytes) = largest_allocation(|| CrowdPose::new(skeleton, 16).unwrap());
    assert!(
        bytes >= 16 * n * 10 * 4,
        "the allocation counter saw only {bytes} bytes"
    );
    // Too many joints or palette entries for a crowd.
    let err = CrowdPalettes::new(MAX_CROWD_JOINTS + 1, 1).unwrap_err();
    assert_eq!(
        err,
        Error::TooManyJoints {
            joints: MAX_CROWD_JOINTS + 1,
            max: MAX_CROWD_JOINTS
        }
    );
}
