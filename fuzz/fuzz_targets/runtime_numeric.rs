//! `runtime_numeric`: the runtime API on arbitrary floats; every `Ok` result is finite (issue 31,
//! part 9).
//!
//! The input is a pool of floats biased toward NaN, the infinities, both zeros, a denormal (1e-40),
//! tiny (1e-20) and huge (1e20, 3e38, `f32::MAX`) magnitudes and ordinary values
//! ([`ispc_skinning_fuzz::floats`]), drawn in turn by every builder, and the shapes and choices of
//! the calls. Each section may replace the pool's NaN and infinities by 1, so that finite extremes reach
//! the arithmetic past the finiteness checks. The calls, on a skeleton of 1 to 64 joints:
//!
//! - a character: `SkinnedMesh::prepare` (0 to 255 vertices, positions, normals, tangents, 1 to 16
//!   weights per vertex from the pool), `CharacterSkin::from_bind_pose` or explicit inverse binds,
//!   `Character::new`, morph targets on the mesh, a rigid mesh with morph targets; a `Frame` on the
//!   input's backend (any ISA, or the reference), renormalization and threads, with a root, driven by
//!   `set_local`, `set_pose`, `set_mesh_weights` and `set_rigid_weights`, evaluated; a `CrowdFrame` of
//!   1 to 20 instances with roots, poses and rigid morph weights, evaluated (skinned and rigid
//!   vertices checked);
//! - blends: `BlendingJob` and `CrowdBlendingJob` with up to 4 layers and 4 additive layers, layer
//!   weights, joint weights and thresholds from the pool;
//! - the standalone jobs: `LocalToModelJob` on TRS, matrices or affines, with a root and `from`, each
//!   method; `PaletteJob` with and without a joint remap; `SkinningJob` into separate streams and an
//!   interleaved buffer; `transform_points`, `transform_points3`; `morph_floats`.
//!
//! With `dual_quaternion`, frames and crowds skin with `Skinning::DualQuaternion` (their converted
//! entries checked too), and the separate-stream `SkinningJob` runs on the entries `dual_quat_palette`
//! converts from the palette.
//!
//! Every call must return (no panic), and every `Ok` must leave every output float of that call finite:
//! the numeric rules (docs/DESIGN.md) refuse NaN and infinities at the entry, rotations whose squared
//! length is not a normal float, and finite inputs whose results overflow.
#![no_main]

use arbitrary::Arbitrary;
use ispc_skinning::glam::{Affine3A, Mat4, Quat, Vec3, Vec4};
use ispc_skinning::{
    dual_quat_palette, morph_floats, transform_points, transform_points3, Backend, BlendLayer,
    BlendingJob, Character, CharacterSkin, CrowdBlendLayer, CrowdBlendingJob, DualQuatEntry,
    LocalToModelJob, Locals, MeshInput, Method, MorphTargets, PaletteJob, PaletteMatrix,
    PrepareOptions, RigidMesh, Skeleton, SkinOutput, SkinnedMesh, Skinning, SkinningJob, Trs,
    TrsMut, WeightPolicy,
};
use ispc_skinning_fuzz::floats::{Fl, Pool};
use ispc_skinning_fuzz::{threads, FuzzBackend, FuzzRenormalize};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

#[derive(Arbitrary, Debug)]
struct Input {
    /// Bit i set: section i sees only finite floats (NaN and infinities become 1).
    finite: u8,
    parents: Vec<u8>,
    backend: FuzzBackend,
    renormalize: FuzzRenormalize,
    all_threads: bool,
    /// Skin with dual quaternions (frames, crowds and the standalone job) instead of linear blending.
    dual_quaternion: bool,
    character: Option<CharacterSpec>,
    blend: Option<BlendSpec>,
    jobs: Option<JobsSpec>,
    floats: Vec<Fl>,
}

#[derive(Arbitrary, Debug)]
struct MeshSpec {
    vertices: u8,
    influences: u8,
    normals: bool,
    tangents: bool,
    compact: bool,
    keep_weights: bool,
}

#[derive(Arbitrary, Debug)]
struct CharacterSpec {
    mesh: MeshSpec,
    explicit_binds: bool,
    morph_targets: u8,
    rigid: Option<u8>,
    root: bool,
    ops: Vec<FrameOp>,
    crowd: Option<(u8, bool)>,
}

#[derive(Arbitrary, Debug)]
enum FrameOp {
    SetLocal(u8),
    SetPose,
    MeshWeights,
    RigidWeights,
    Evaluate,
}

#[derive(Arbitrary, Debug)]
struct LayerSpec {
    joint_weights: bool,
}

#[derive(Arbitrary, Debug)]
struct BlendSpec {
    layers: Vec<LayerSpec>,
    additive: Vec<LayerSpec>,
    threshold: bool,
    crowd: Option<u8>,
}

#[derive(Arbitrary, Debug)]
enum LocalsKind {
    Trs,
    Matrices,
    Affines,
}

#[derive(Arbitrary, Debug)]
struct JobsSpec {
    locals: LocalsKind,
    root: bool,
    from: Option<u8>,
    method: u8,
    remap: bool,
    mesh: MeshSpec,
    interleaved: bool,
    points: u8,
    morph: (u8, u8),
}

/// Panics when a call returned `Ok` with a float that is not finite.
///
/// `FUZZ_NUMERIC_IGNORE` (comma-separated prefixes of the `what` names, e.g. `BlendingJob,morph_floats`)
/// turns the check off for calls known to fail, so that a run can look past them (triage only).
fn check(ok: bool, floats: &[f32], what: &str) {
    static IGNORE: OnceLock<Vec<String>> = OnceLock::new();
    let ignore = IGNORE.get_or_init(|| {
        std::env::var("FUZZ_NUMERIC_IGNORE")
            .map(|v| {
                v.split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    });
    if ok && !ignore.iter().any(|p| what.starts_with(p.as_str())) {
        if let Some(x) = floats.iter().find(|x| !x.is_finite()) {
            panic!("{what} returned Ok with a non-finite output float {x}");
        }
    }
}

fn mats(ms: &[Mat4]) -> &[f32] {
    bytemuck::cast_slice(ms)
}

fn palette_floats(p: &[PaletteMatrix]) -> Vec<f32> {
    p.iter()
        .flat_map(|m| m.rows.as_flattened().to_vec())
        .collect()
}

fn dual_quat_floats(entries: &[DualQuatEntry]) -> Vec<f32> {
    entries
        .iter()
        .flat_map(|e| e.as_floats().to_vec())
        .collect()
}

fuzz_target!(|input: Input| {
    let n = 1 + input.parents.len().min(63);
    let parents: Vec<Option<usize>> = (0..n)
        .map(|j| {
            let p = input.parents.get(j).copied().unwrap_or(0) as usize;
            (j > 0 && p % 4 != 0).then(|| p % j)
        })
        .collect();
    let skeleton = Skeleton::from_parents(&parents).expect("parents before children");
    let ctx = Ctx {
        skeleton: &skeleton,
        backend: input.backend.get(),
        renormalize: input.renormalize,
        all_threads: input.all_threads,
        dual_quaternion: input.dual_quaternion,
    };
    let pool = |section: u32| {
        Pool::new(
            &input.floats,
            7 * section as usize,
            input.finite >> section & 1 == 1,
        )
    };
    if let Some(spec) = &input.character {
        ctx.character(spec, &mut pool(0), &mut pool(1));
    }
    if let Some(spec) = &input.blend {
        ctx.blend(spec, &mut pool(2));
    }
    if let Some(spec) = &input.jobs {
        ctx.jobs(spec, &mut pool(3), &mut pool(4));
    }
});

/// One layer's data: poses, weights (one per instance) and optional joint weights.
type LayerData = (Vec<Vec3>, Vec<Quat>, Vec<Vec3>, Vec<f32>, Option<Vec<f32>>);

fn layers_of(data: &[LayerData]) -> Vec<BlendLayer<'_>> {
    data.iter()
        .map(|(t, q, s, w, jw)| {
            let layer = BlendLayer::new(Trs::new(t, q, s), w[0]);
            match jw {
                Some(jw) => layer.joint_weights(jw),
                None => layer,
            }
        })
        .collect()
}

fn crowd_layers_of(data: &[LayerData]) -> Vec<CrowdBlendLayer<'_>> {
    data.iter()
        .map(|(t, q, s, w, jw)| {
            let layer = CrowdBlendLayer::new(Trs::new(t, q, s), w);
            match jw {
                Some(jw) => layer.joint_weights(jw),
                None => layer,
            }
        })
        .collect()
}

struct Ctx<'s> {
    skeleton: &'s Skeleton,
    backend: Backend,
    renormalize: FuzzRenormalize,
    all_threads: bool,
    dual_quaternion: bool,
}

impl Ctx<'_> {
    fn n(&self) -> usize {
        self.skeleton.len()
    }

    fn skinning(&self) -> Skinning {
        if self.dual_quaternion {
            Skinning::DualQuaternion
        } else {
            Skinning::Linear
        }
    }

    /// A mesh over `joints` joints with every vertex float and weight from the pool.
    fn mesh(&self, spec: &MeshSpec, joints: usize, p: &mut Pool) -> Option<SkinnedMesh> {
        let v = spec.vertices as usize;
        let k = 1 + spec.influences as usize % 8;
        let positions = p.vec3s(v);
        let normals = p.vec3s(v);
        let tangents = p.vec4s(v);
        let influence_joints: Vec<u16> = (0..v * k)
            .map(|i| ((i * 7 + i / k) % joints) as u16)
            .collect();
        let weights = p.floats(v * k);
        let mut mesh = MeshInput::from_flat_influences(&positions, &influence_joints, &weights, k);
        if spec.normals {
            mesh = mesh.normals(ispc_skinning::Attribute::vec3(&normals));
        }
        if spec.tangents {
            mesh = mesh.tangents(ispc_skinning::Attribute::vec4(&tangents));
        }
        let options = PrepareOptions::new(joints)
            .compact_influences(spec.compact)
            .weights(if spec.keep_weights && !spec.compact {
                WeightPolicy::Keep
            } else {
                WeightPolicy::Normalize
            });
        SkinnedMesh::prepare(&mesh, &options).ok()
    }

    fn character(&self, spec: &CharacterSpec, p: &mut Pool, frame_pool: &mut Pool) {
        let n = self.n();
        let (t, q, s) = (p.vec3s(n), p.quats(n), p.vec3s(n));
        let skin = if spec.explicit_binds {
            CharacterSkin {
                joints: (0..n).collect(),
                inverse_binds: p.mat4s(n),
            }
        } else {
            let (bt, bq, bs) = (p.vec3s(n), p.quats(n), p.vec3s(n));
            match CharacterSkin::from_bind_pose(self.skeleton, &bt, &bq, &bs) {
                Ok(skin) => {
                    check(
                        true,
                        mats(&skin.inverse_binds),
                        "CharacterSkin::from_bind_pose",
                    );
                    skin
                }
                Err(_) => return,
            }
        };
        let Some(mesh) = self.mesh(&spec.mesh, n, p) else {
            return;
        };
        let vertices = mesh.vertex_count();
        let Ok(mut character) =
            Character::new(self.skeleton.clone(), t, q, s, vec![skin], vec![(mesh, 0)])
        else {
            return;
        };
        let targets = spec.morph_targets as usize % 4;
        if targets > 0 {
            let deltas = |p: &mut Pool| (0..targets).map(|_| Some(p.vec3s(vertices))).collect();
            let morph =
                MorphTargets::new(vertices, deltas(p), deltas(p), deltas(p)).expect("deltas fit");
            character = match character.with_mesh_morph_targets(0, morph) {
                Ok(c) => c,
                Err(_) => return,
            };
        }
        if let Some(rigid) = spec.rigid {
            let rv = rigid as usize % 32;
            let mut mesh = RigidMesh::new(p.vec3s(rv), Some(p.vec3s(rv)), Some(p.vec4s(rv)))
                .expect("counts fit");
            if targets > 0 {
                let deltas = |p: &mut Pool| (0..targets).map(|_| Some(p.vec3s(rv))).collect();
                mesh = mesh
                    .with_morph_targets(
                        MorphTargets::new(rv, deltas(p), deltas(p), deltas(p)).expect("deltas fit"),
                    )
                    .expect("vertex counts fit");
            }
            character = match character.with_rigid_meshes(vec![(mesh, rigid as usize % n)]) {
                Ok(c) => c,
                Err(_) => return,
            };
        }
        let p = frame_pool;
        let mut frame = character
            .frame_buffers()
            .backend(self.backend)
            .renormalize(self.renormalize.get())
            .skinning(self.skinning())
            .threads(threads(self.all_threads));
        if spec.root {
            frame = frame.root(p.mat4());
        }
        let mut ops: Vec<&FrameOp> = spec.ops.iter().take(8).collect();
        if !matches!(ops.last(), Some(FrameOp::Evaluate)) {
            ops.push(&FrameOp::Evaluate);
        }
        for op in ops {
            match op {
                FrameOp::SetLocal(j) => {
                    let _ = frame.set_local(*j as usize % n, p.vec3(), p.quat(), p.vec3());
                }
                FrameOp::SetPose => {
                    let _ = frame.set_pose(&p.vec3s(n), &p.quats(n), &p.vec3s(n));
                }
                FrameOp::MeshWeights => {
                    let _ = frame.set_mesh_weights(0, &p.floats(targets));
                }
                FrameOp::RigidWeights => {
                    let _ = frame.set_rigid_weights(0, &p.floats(targets));
                }
                FrameOp::Evaluate => {
                    let ok = character.evaluate(&mut frame).is_ok();
                    let models: Vec<Mat4> =
                        (0..n).map(|j| frame.model(j).expect("joint")).collect();
                    check(ok, mats(&models), "Character::evaluate (models)");
                    for palette in frame.palettes() {
                        check(
                            ok,
                            &palette_floats(palette),
                            "Character::evaluate (palettes)",
                        );
                    }
                    for entries in frame.dual_quaternions() {
                        check(
                            ok,
                            &dual_quat_floats(entries),
                            "Character::evaluate (dual quaternions)",
                        );
                    }
                    for (meshes, what) in [
                        (frame.meshes(), "Character::evaluate (skinned vertices)"),
                        (frame.rigid_meshes(), "Character::evaluate (rigid vertices)"),
                    ] {
                        for m in meshes {
                            check(ok, bytemuck::cast_slice(&m.positions), what);
                            check(
                                ok,
                                bytemuck::cast_slice(m.normals.as_deref().unwrap_or(&[])),
                                what,
                            );
                            check(
                                ok,
                                bytemuck::cast_slice(m.tangents.as_deref().unwrap_or(&[])),
                                what,
                            );
                        }
                    }
                }
            }
        }
        if let Some((instances, roots)) = spec.crowd {
            self.crowd(&character, 1 + instances as usize % 20, roots, p);
        }
    }

    fn crowd(&self, character: &Character, instances: usize, roots: bool, p: &mut Pool) {
        let n = self.n();
        let Ok(frame) = character.crowd_buffers(instances) else {
            return;
        };
        let mut frame = frame
            .backend(self.backend)
            .renormalize(self.renormalize.get())
            .skinning(self.skinning())
            .threads(threads(self.all_threads));
        if roots {
            for r in frame.roots_mut() {
                *r = p.mat4();
            }
        }
        for i in 0..instances {
            let (t, q, s) = (p.vec3s(n), p.quats(n), p.vec3s(n));
            let _ = frame.pose_mut().set_instance(i, Trs::new(&t, &q, &s));
            for r in 0..character.rigid_mesh_count() {
                let targets = frame.rigid_weights(r, i).map_or(0, <[f32]>::len);
                let _ = frame.set_rigid_weights(r, i, &p.floats(targets));
            }
        }
        let ok = character.evaluate_crowd(&mut frame).is_ok();
        let mut models = vec![Mat4::IDENTITY; n];
        for i in 0..instances {
            frame
                .models()
                .instance_models(i, &mut models)
                .expect("instance in range");
            check(ok, mats(&models), "Character::evaluate_crowd (models)");
            for m in 0..character.mesh_count() {
                let what = "Character::evaluate_crowd (vertices)";
                check(
                    ok,
                    bytemuck::cast_slice(frame.positions(m, i).unwrap_or(&[])),
                    what,
                );
                check(
                    ok,
                    bytemuck::cast_slice(frame.normals(m, i).unwrap_or(&[])),
                    what,
                );
                check(
                    ok,
                    bytemuck::cast_slice(frame.tangents(m, i).unwrap_or(&[])),
                    what,
                );
            }
        }
        for r in 0..character.rigid_mesh_count() {
            let what = "Character::evaluate_crowd (rigid vertices)";
            if let Some(out) = frame.rigid(r) {
                check(ok, bytemuck::cast_slice(&out.positions), what);
                check(
                    ok,
                    bytemuck::cast_slice(out.normals.as_deref().unwrap_or(&[])),
                    what,
                );
                check(
                    ok,
                    bytemuck::cast_slice(out.tangents.as_deref().unwrap_or(&[])),
                    what,
                );
            }
        }
        for skin in 0..character.skins().len() {
            if let Some(palettes) = frame.palettes(skin) {
                check(
                    ok,
                    &palette_floats(palettes.as_slice()),
                    "Character::evaluate_crowd (palettes)",
                );
            }
        }
    }

    fn blend(&self, spec: &BlendSpec, p: &mut Pool) {
        let n = self.n();
        let (rt, rq, rs) = (p.vec3s(n), p.quats(n), p.vec3s(n));
        let rest = Trs::new(&rt, &rq, &rs);
        let threshold = if spec.threshold {
            p.f()
        } else {
            ispc_skinning::DEFAULT_BLEND_THRESHOLD
        };
        let layer_data = |specs: &[LayerSpec], count: usize, p: &mut Pool| -> Vec<LayerData> {
            specs
                .iter()
                .take(4)
                .map(|l| {
                    let joint_weights = l.joint_weights.then(|| p.floats(n));
                    (
                        p.vec3s(count),
                        p.quats(count),
                        p.vec3s(count),
                        p.floats(count / n),
                        joint_weights,
                    )
                })
                .collect()
        };
        let normal = layer_data(&spec.layers, n, p);
        let additive = layer_data(&spec.additive, n, p);
        let (layers, additive_layers) = (layers_of(&normal), layers_of(&additive));
        let (mut ot, mut oq, mut os) = (
            vec![Vec3::ZERO; n],
            vec![Quat::IDENTITY; n],
            vec![Vec3::ONE; n],
        );
        let ok = BlendingJob::new(self.skeleton, rest, TrsMut::new(&mut ot, &mut oq, &mut os))
            .layers(&layers)
            .additive_layers(&additive_layers)
            .threshold(threshold)
            .backend(self.backend)
            .run()
            .is_ok();
        check(ok, bytemuck::cast_slice(&ot), "BlendingJob (translations)");
        check(ok, bytemuck::cast_slice(&oq), "BlendingJob (rotations)");
        check(ok, bytemuck::cast_slice(&os), "BlendingJob (scales)");

        let Some(instances) = spec.crowd else { return };
        let instances = 1 + instances as usize % 20;
        let count = instances * n;
        let normal = layer_data(&spec.layers, count, p);
        let additive = layer_data(&spec.additive, count, p);
        let (layers, additive_layers) = (crowd_layers_of(&normal), crowd_layers_of(&additive));
        let (mut ot, mut oq, mut os) = (
            vec![Vec3::ZERO; count],
            vec![Quat::IDENTITY; count],
            vec![Vec3::ONE; count],
        );
        let ok = CrowdBlendingJob::new(
            self.skeleton,
            instances,
            rest,
            TrsMut::new(&mut ot, &mut oq, &mut os),
        )
        .layers(&layers)
        .additive_layers(&additive_layers)
        .threshold(threshold)
        .backend(self.backend)
        .threads(threads(self.all_threads))
        .run()
        .is_ok();
        check(
            ok,
            bytemuck::cast_slice(&ot),
            "CrowdBlendingJob (translations)",
        );
        check(
            ok,
            bytemuck::cast_slice(&oq),
            "CrowdBlendingJob (rotations)",
        );
        check(ok, bytemuck::cast_slice(&os), "CrowdBlendingJob (scales)");
    }

    fn jobs(&self, spec: &JobsSpec, p: &mut Pool, points_pool: &mut Pool) {
        let n = self.n();
        // Local to model.
        let (t, q, s) = (p.vec3s(n), p.quats(n), p.vec3s(n));
        let matrices = p.mat4s(n);
        let affines: Vec<Affine3A> = (0..n)
            .map(|_| {
                let c: [f32; 12] = std::array::from_fn(|_| p.f());
                Affine3A::from_cols_array(&c)
            })
            .collect();
        let locals = match spec.locals {
            LocalsKind::Trs => Locals::trs(&t, &q, &s),
            LocalsKind::Matrices => Locals::Matrices(&matrices),
            LocalsKind::Affines => Locals::Affines(&affines),
        };
        let mut models = vec![Mat4::IDENTITY; n];
        let mut job = LocalToModelJob::new(self.skeleton, locals, &mut models)
            .method([Method::Auto, Method::Reference, Method::IspcJoint][spec.method as usize % 3])
            .backend(self.backend);
        if spec.root {
            job = job.root(p.mat4());
        }
        if let Some(from) = spec.from {
            job = job.from_joint(from as usize % n);
        }
        let ok = job.run().is_ok();
        check(ok, mats(&models), "LocalToModelJob");
        if !ok {
            models = p.mat4s(n);
        }

        // Palette.
        let inverse_binds = p.mat4s(n);
        let remap: Vec<usize> = (0..n).map(|i| (i * 5 + 3) % n).collect();
        let mut palette = vec![PaletteMatrix::IDENTITY; n];
        let mut job = PaletteJob::new(&models, &inverse_binds, &mut palette).backend(self.backend);
        if spec.remap {
            job = job.joints(&remap);
        }
        let ok = job.run().is_ok();
        check(ok, &palette_floats(&palette), "PaletteJob");
        if !ok {
            palette = (0..n).map(|_| PaletteMatrix::from_mat4(p.mat4())).collect();
        }

        // Skinning.
        if let Some(mesh) = self.mesh(&spec.mesh, n, p) {
            let v = mesh.vertex_count();
            let (normals, tangents) = (mesh.has_normals(), mesh.has_tangents());
            if spec.interleaved {
                let stride = 40;
                let mut bytes = vec![0u8; v * stride];
                let ok = SkinningJob::new(
                    &mesh,
                    &palette,
                    SkinOutput::Interleaved {
                        bytes: &mut bytes,
                        stride,
                        positions: 0,
                        normals: normals.then_some(12),
                        tangents: tangents.then_some(24),
                    },
                )
                .backend(self.backend)
                .renormalize(self.renormalize.get())
                .threads(threads(self.all_threads))
                .run()
                .is_ok();
                let floats: Vec<f32> = bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_ne_bytes(b.try_into().expect("4 bytes")))
                    .collect();
                check(ok, &floats, "SkinningJob (interleaved)");
            } else {
                let (mut pos, mut nor, mut tan) = (
                    vec![Vec3::ZERO; v],
                    vec![Vec3::ZERO; v],
                    vec![Vec4::ZERO; v],
                );
                let output = SkinOutput::Separate {
                    positions: &mut pos,
                    normals: normals.then_some(&mut nor[..]),
                    tangents: tangents.then_some(&mut tan[..]),
                };
                let mut entries = vec![DualQuatEntry::IDENTITY; palette.len()];
                let job = if self.dual_quaternion {
                    let ok = dual_quat_palette(&palette, &mut entries).is_ok();
                    check(ok, &dual_quat_floats(&entries), "dual_quat_palette");
                    if !ok {
                        entries.fill(DualQuatEntry::IDENTITY);
                    }
                    SkinningJob::dual_quaternion(&mesh, &entries, output)
                } else {
                    SkinningJob::new(&mesh, &palette, output)
                };
                let ok = job
                    .backend(self.backend)
                    .renormalize(self.renormalize.get())
                    .threads(threads(self.all_threads))
                    .run()
                    .is_ok();
                check(ok, bytemuck::cast_slice(&pos), "SkinningJob (positions)");
                check(ok, bytemuck::cast_slice(&nor), "SkinningJob (normals)");
                check(ok, bytemuck::cast_slice(&tan), "SkinningJob (tangents)");
            }
        }

        // Points and morphs.
        let p = points_pool;
        let count = spec.points as usize % 64;
        let m = p.mat4();
        let src = p.vec3s(count);
        let mut dst4 = vec![Vec4::ZERO; count];
        let ok = transform_points(self.backend, &m, &src, &mut dst4).is_ok();
        check(ok, bytemuck::cast_slice(&dst4), "transform_points");
        let mut dst3 = vec![Vec3::ZERO; count];
        let ok = transform_points3(self.backend, &m, &src, &mut dst3).is_ok();
        check(ok, bytemuck::cast_slice(&dst3), "transform_points3");

        let (targets, len) = (spec.morph.0 as usize % 5, spec.morph.1 as usize % 64);
        let base = p.floats(len);
        let deltas: Vec<Vec<f32>> = (0..targets).map(|_| p.floats(len)).collect();
        let delta_refs: Vec<&[f32]> = deltas.iter().map(Vec::as_slice).collect();
        let weights = p.floats(targets);
        let mut out = vec![0.0; len];
        let ok = morph_floats(self.backend, &base, &delta_refs, &weights, &mut out).is_ok();
        check(ok, &out, "morph_floats");
    }
}
