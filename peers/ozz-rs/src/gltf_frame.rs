//! The `gltf_frame` workload on ozz-animation-rs: sample the clip (SamplingJob with a reused context),
//! local to model (LocalToModelJob), the palettes (model x inverse bind, as the library's palette job)
//! and skin every primitive (SkinningJob), at the same sequence of times as the lab's `gltf_frame` row.
//!
//! The library imports the file (hierarchy in level order, rest pose, clip, skins); the archive writer
//! turns them into ozz archives; the vertex streams come from the file through the `gltf` crate, since
//! the library keeps them only in its prepared form.

use crate::archive::{self, Track, Trs};
use crate::workload::Workload;
use crate::workloads::{mat4, max_error, ozz_skeleton};
use glam30 as g;
use ispc_skinning::gltf::{GltfScene, Interpolation, Property, Wrap};
use ispc_skinning::{Backend, PaletteMatrix};
use ozz_animation_rs::{
    Animation, Archive, LocalToModelJobRef, SamplingContext, SamplingJobRef,
    Skeleton as OzzSkeleton, SkinningJobRef, SoaTransform,
};
use std::path::Path;

/// Rate at which step and cubic-spline channels are resampled into ozz's linear keys; linear channels
/// keep their own keys.
const RESAMPLE_HZ: f32 = 60.0;

/// The vertices of one primitive that have the same number of influences, in ozz's form, and their
/// outputs. ozz's own mesh format splits a mesh this way (one part per influence count) and skins each
/// part with its own SkinningJob, so a vertex with one influence costs a one-influence transform.
struct Part {
    influences: usize,
    indices: Vec<u16>,
    /// `influences - 1` weights per vertex: ozz gives the last influence 1 minus their sum.
    weights: Vec<f32>,
    pos: Vec<g::Vec3>,
    nrm: Option<Vec<g::Vec3>>,
    out_p: Vec<g::Vec3>,
    out_n: Vec<g::Vec3>,
    /// The primitive's vertex index of each of the part's vertices (for the check against the
    /// reference, outside the timed frame).
    original: Vec<usize>,
}

/// One primitive: its skin and its parts.
struct Mesh {
    skin: usize,
    parts: Vec<Part>,
}

pub(crate) struct Frame {
    skeleton: OzzSkeleton,
    animation: Animation,
    context: SamplingContext,
    locals: Vec<SoaTransform>,
    models: Vec<g::Mat4>,
    /// Per skin: the level-order index of each joint and its inverse bind matrix.
    skins: Vec<(Vec<usize>, Vec<g::Mat4>)>,
    palettes: Vec<Vec<g::Mat4>>,
    meshes: Vec<Mesh>,
    /// The lab's time sequence: `time` steps by `duration / 97` modulo `duration`; the clip is sampled
    /// at `clip_start + (time - clip_start) mod duration` (the library's `Wrap::Loop`).
    time: f32,
    start: f32,
    duration: f32,
}

impl Frame {
    fn evaluate(&mut self, time: f32) {
        let wrapped = time - self.start;
        let ratio = (wrapped.rem_euclid(self.duration) / self.duration).clamp(0.0, 1.0);
        let mut sampling = SamplingJobRef::default();
        sampling.set_animation(&self.animation);
        sampling.set_context(&mut self.context);
        sampling.set_ratio(ratio);
        sampling.set_output(&mut self.locals);
        sampling.run().expect("validated at setup");
        let mut ltm = LocalToModelJobRef::default();
        ltm.set_skeleton(&self.skeleton);
        ltm.set_input(&self.locals);
        ltm.set_output(&mut self.models);
        ltm.run().expect("validated at setup");
        for ((joints, inverse_binds), palette) in self.skins.iter().zip(&mut self.palettes) {
            for ((p, &j), ib) in palette.iter_mut().zip(joints).zip(inverse_binds) {
                *p = self.models[j] * *ib;
            }
        }
        for m in &mut self.meshes {
            for part in &mut m.parts {
                let mut job = SkinningJobRef::default();
                job.set_vertex_count(part.pos.len());
                job.set_influences_count(part.influences);
                job.set_joint_matrices(&self.palettes[m.skin]);
                job.set_joint_indices(&part.indices);
                if part.influences > 1 {
                    job.set_joint_weights(&part.weights);
                }
                job.set_in_positions(&part.pos);
                job.set_out_positions(&mut part.out_p);
                if let Some(n) = &part.nrm {
                    job.set_in_normals(n);
                    job.set_out_normals(&mut part.out_n);
                }
                job.run().expect("validated at setup");
            }
        }
    }
}

impl Workload for Frame {
    fn run(&mut self) {
        self.time = (self.time + self.duration / 97.0) % self.duration;
        self.evaluate(self.time);
    }
}

/// A channel's keys as (ratio, value), from ratio 0 to 1 with strictly increasing ratios.
fn keys(ch: &ispc_skinning::gltf::Channel, start: f32, duration: f32) -> Vec<(f32, [f32; 4])> {
    let ratio = |t: f32| ((t - start) / duration).clamp(0.0, 1.0);
    let mut k: Vec<(f32, [f32; 4])> = if ch.interpolation() == Interpolation::Linear {
        (0..ch.times().len())
            .filter_map(|i| Some((ratio(ch.times()[i]), ch.key_value(i)?)))
            .collect()
    } else {
        let steps = (duration * RESAMPLE_HZ).ceil().max(1.0) as usize;
        (0..=steps)
            .map(|i| {
                let t = start + duration * i as f32 / steps as f32;
                (ratio(t), ch.sample(t))
            })
            .collect()
    };
    k.dedup_by(|b, a| b.0 <= a.0);
    if let Some(&(r, v)) = k.first() {
        if r > 0.0 {
            k.insert(0, (0.0, v));
        }
    }
    if let Some(&(r, v)) = k.last() {
        if r < 1.0 {
            k.push((1.0, v));
        }
    }
    k
}

/// Reads a primitive's POSITION, NORMAL, JOINTS_0 and WEIGHTS_0 from the file (GLB, or `.gltf` with
/// buffers in files beside it).
fn read_mesh(
    path: &Path,
    mesh: usize,
    primitive: usize,
) -> Result<
    (
        Vec<[f32; 3]>,
        Option<Vec<[f32; 3]>>,
        Vec<[u16; 4]>,
        Vec<[f32; 4]>,
    ),
    String,
> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let gltf = gltf::Gltf::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut buffers = Vec::new();
    for b in gltf.buffers() {
        buffers.push(match b.source() {
            gltf::buffer::Source::Bin => {
                gltf.blob.clone().ok_or("a GLB without its binary chunk")?
            }
            gltf::buffer::Source::Uri(uri) if !uri.starts_with("data:") => {
                std::fs::read(dir.join(uri)).map_err(|e| format!("{uri}: {e}"))?
            }
            gltf::buffer::Source::Uri(_) => {
                return Err("the ozz-rs peer does not read data-URI buffers".into())
            }
        });
    }
    let prim = gltf
        .meshes()
        .nth(mesh)
        .and_then(|m| m.primitives().nth(primitive))
        .ok_or("no such primitive")?;
    let reader = prim.reader(|b| buffers.get(b.index()).map(|v| &v[..]));
    let pos: Vec<[f32; 3]> = reader.read_positions().ok_or("no POSITION")?.collect();
    let nrm = reader.read_normals().map(|n| n.collect());
    let joints = reader
        .read_joints(0)
        .ok_or("no JOINTS_0")?
        .into_u16()
        .collect();
    let weights = reader
        .read_weights(0)
        .ok_or("no WEIGHTS_0")?
        .into_f32()
        .collect();
    Ok((pos, nrm, joints, weights))
}

/// Checks the frame's palettes at 12 times of the lab's sequence against `reference(time)`'s within
/// 1% of the skin's largest palette element (ozz's keys are half floats and 15-bit rotations), then
/// rewinds the frame.
pub(crate) fn check_palettes(
    f: &mut Frame,
    mut reference: impl FnMut(f32) -> Result<Vec<Vec<PaletteMatrix>>, String>,
) -> Result<(), String> {
    let duration = f.duration;
    let mut time = 0.0f32;
    for _ in 0..12 {
        time = (time + duration / 97.0 * 8.0) % duration;
        let palettes = reference(time)?;
        f.evaluate(time);
        if palettes.len() != f.palettes.len() {
            return Err(format!(
                "pose: the peer has {} skins, the reference {}",
                f.palettes.len(),
                palettes.len()
            ));
        }
        for (skin, (ours, theirs)) in palettes.iter().zip(&f.palettes).enumerate() {
            if ours.len() != theirs.len() {
                return Err(format!(
                    "pose: skin {skin} has {} entries in the peer, {} in the reference",
                    theirs.len(),
                    ours.len()
                ));
            }
            // The affine rows only (row 3 is (0, 0, 0, 1) in both).
            let scale = ours
                .iter()
                .flat_map(|p| p.rows[..3].concat())
                .fold(1e-3f32, |m, x| m.max(x.abs()));
            for (e, (a, b)) in ours.iter().zip(theirs).enumerate() {
                // Ours is row-major (rows 0..2 used), ozz's glam matrix column-major.
                let b = b.transpose().to_cols_array();
                let err = a
                    .rows
                    .concat()
                    .iter()
                    .zip(&b)
                    .take(12)
                    .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
                if !(err <= 0.01 * scale) {
                    return Err(format!(
                        "pose at t = {time}: ozz-rs palette entry {e} of skin {skin} differs from the reference by {err} (largest element {scale})"
                    ));
                }
            }
        }
    }
    f.time = 0.0;
    Ok(())
}

/// The scene's skeleton, clip and skins in ozz's form, as a frame without meshes: the `pose_<asset>`
/// workload, and the `gltf_frame` one before its meshes are added.
fn pose_frame(scene: &GltfScene) -> Result<Frame, String> {
    let clip = scene.clips().first().ok_or("the file has no clip")?;
    let (start, duration) = (clip.start(), clip.duration().max(1e-3));
    let n = scene.node_count();
    let mut node_of_level = vec![0; n];
    for node in 0..n {
        node_of_level[scene.level_index(node).ok_or("a node without a level")?] = node;
    }
    let rest: Vec<Trs> = node_of_level
        .iter()
        .map(|&node| {
            let (t, q, s) = scene.rest_pose(node).expect("every node has a rest pose");
            (t.to_array(), q.to_array(), s.to_array())
        })
        .collect();
    let mut tracks: Vec<Track> = rest.iter().map(|&r| Track::constant(r)).collect();
    for ch in clip.channels() {
        let level = scene.level_index(ch.node()).ok_or("a channel on no node")?;
        let k = keys(ch, start, duration);
        let tr = &mut tracks[level];
        match ch.property() {
            Property::Translation => {
                tr.translations = k.iter().map(|&(r, v)| (r, [v[0], v[1], v[2]])).collect()
            }
            Property::Rotation => tr.rotations = k,
            Property::Scale => {
                tr.scales = k.iter().map(|&(r, v)| (r, [v[0], v[1], v[2]])).collect()
            }
        }
    }
    let skins = scene
        .skins()
        .iter()
        .map(|s| {
            let joints = s
                .joints()
                .iter()
                .map(|&j| scene.level_index(j).unwrap_or(0))
                .collect();
            (joints, s.inverse_binds().iter().map(mat4).collect())
        })
        .collect::<Vec<(Vec<usize>, Vec<g::Mat4>)>>();
    let name = clip.name().unwrap_or("");
    frame_of(
        scene.skeleton().level_parents(),
        &rest,
        (name, &tracks),
        (start, duration),
        skins,
    )
}

/// A frame without meshes of the level-order hierarchy `parents` with rest pose `rest`, the clip
/// `tracks` (one per joint, level order) starting at `start` and lasting `duration`, and the skins
/// (level-order joints and inverse binds).
pub(crate) fn frame_of(
    parents: &[Option<usize>],
    rest: &[Trs],
    (name, tracks): (&str, &[Track]),
    (start, duration): (f32, f32),
    skins: Vec<(Vec<usize>, Vec<g::Mat4>)>,
) -> Result<Frame, String> {
    let n = parents.len();
    let skeleton = ozz_skeleton(parents, rest)?;
    let bytes = archive::animation(duration, name, tracks);
    let animation =
        Animation::from_archive(&mut Archive::new(&bytes[..]).map_err(|e| e.to_string())?)
            .map_err(|e| format!("animation archive: {e}"))?;
    let context = SamplingContext::from_animation(&animation);
    Ok(Frame {
        skeleton,
        animation,
        context,
        locals: vec![SoaTransform::default(); n.div_ceil(4)],
        models: vec![g::Mat4::IDENTITY; n],
        palettes: skins
            .iter()
            .map(|(j, _)| vec![g::Mat4::IDENTITY; j.len()])
            .collect(),
        skins,
        meshes: Vec::new(),
        time: 0.0,
        start,
        duration,
    })
}

/// The `pose_<asset>` workload (the lab's `pose_cesiumman`, `pose_fox`): sample the clip, local to model
/// and the palettes, no vertex work, at the lab's sequence of times; `joints` is the lab's joint count.
/// Checked at a few times against the library's reference palettes.
///
/// # Errors
/// A file the library or the peer cannot read, or palettes that disagree with the reference.
pub fn setup_pose(path: &Path, joints: usize) -> Result<Box<dyn Workload>, String> {
    let scene = GltfScene::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut f = pose_frame(&scene)?;
    if f.models.len() != joints {
        return Err(format!(
            "pose: the peer poses {} joints, the lab {joints}",
            f.models.len()
        ));
    }
    let mut frame = scene.frame_buffers().backend(Backend::Reference);
    check_palettes(&mut f, |time| {
        scene
            .evaluate(Some(0), time, Wrap::Loop, &mut frame)
            .map_err(|e| format!("reference frame: {e}"))?;
        Ok(frame.palettes().to_vec())
    })?;
    Ok(Box::new(f))
}

/// The whole frame of the file's first clip, checked at a few times against the library's reference
/// frame (the same positions within the error of ozz's key quantization).
///
/// # Errors
/// A file the library or the peer cannot read, or skinned positions that disagree with the reference.
pub fn setup(path: &Path, vertices: usize) -> Result<Box<dyn Workload>, String> {
    let scene = GltfScene::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut f = pose_frame(&scene)?;
    let duration = f.duration;
    let mut meshes = Vec::new();
    for p in scene.primitives() {
        let (pos, nrm, joints, weights) = read_mesh(path, p.mesh(), p.primitive())?;
        meshes.push(Mesh {
            skin: p.skin(),
            parts: parts(&pos, nrm.as_deref(), &joints, &weights),
        });
    }
    let total: usize = meshes
        .iter()
        .flat_map(|m| &m.parts)
        .map(|p| p.pos.len())
        .sum();
    if total != vertices {
        return Err(format!(
            "gltf_frame: the peer reads {total} skinned vertices, the lab {vertices}"
        ));
    }
    f.meshes = meshes;
    // The library's reference frame at a few times of the lab's sequence; the tolerance is 1% of the
    // mesh's size, for the half-float translations and 15-bit rotations of ozz's keys.
    let mut frame = scene.frame_buffers().backend(Backend::Reference);
    let mut time = 0.0f32;
    for _ in 0..12 {
        time = (time + duration / 97.0 * 8.0) % duration;
        scene
            .evaluate(Some(0), time, Wrap::Loop, &mut frame)
            .map_err(|e| format!("reference frame: {e}"))?;
        f.evaluate(time);
        for (i, m) in f.meshes.iter().enumerate() {
            let reference = &frame.mesh(i).ok_or("a mesh without outputs")?.positions;
            let (lo, hi) = frame.mesh(i).and_then(|m| m.bounds()).unwrap_or_default();
            let mut out = vec![g::Vec3::ZERO; reference.len()];
            for part in &m.parts {
                for (&v, &p) in part.original.iter().zip(&part.out_p) {
                    out[v] = p;
                }
            }
            let err = max_error(&out, reference);
            let tolerance = 0.01 * (hi - lo).length().max(1e-3);
            if !(err <= tolerance) {
                return Err(format!(
                    "gltf_frame at t = {time}: ozz-rs positions of mesh {i} differ from the reference by {err} (tolerance {tolerance})"
                ));
            }
        }
    }
    f.time = 0.0;
    Ok(Box::new(f))
}

/// Splits a primitive into parts by influence count: each vertex keeps its influences of non-zero
/// weight, heaviest first, with the weights normalized (as the library normalizes them when it prepares
/// the mesh); a vertex whose weights are all zero keeps its first joint with weight 1.
fn parts(
    pos: &[[f32; 3]],
    nrm: Option<&[[f32; 3]]>,
    joints: &[[u16; 4]],
    weights: &[[f32; 4]],
) -> Vec<Part> {
    let mut parts: Vec<Part> = (1..=4)
        .map(|influences| Part {
            influences,
            indices: Vec::new(),
            weights: Vec::new(),
            pos: Vec::new(),
            nrm: nrm.map(|_| Vec::new()),
            out_p: Vec::new(),
            out_n: Vec::new(),
            original: Vec::new(),
        })
        .collect();
    for (v, (j, w)) in joints.iter().zip(weights).enumerate() {
        let mut inf: Vec<(u16, f32)> = j
            .iter()
            .zip(w)
            .filter(|(_, &w)| w > 0.0)
            .map(|(&j, &w)| (j, w))
            .collect();
        inf.sort_by(|a, b| b.1.total_cmp(&a.1));
        if inf.is_empty() {
            inf.push((j[0], 1.0));
        }
        let sum: f32 = inf.iter().map(|i| i.1).sum();
        let part = &mut parts[inf.len() - 1];
        part.indices.extend(inf.iter().map(|i| i.0));
        part.weights
            .extend(inf[..inf.len() - 1].iter().map(|i| i.1 / sum));
        part.pos.push(g::Vec3::from_array(pos[v]));
        if let (Some(out), Some(n)) = (&mut part.nrm, nrm) {
            out.push(g::Vec3::from_array(n[v]));
        }
        part.original.push(v);
    }
    parts.retain(|p| !p.pos.is_empty());
    for p in &mut parts {
        p.out_p = vec![g::Vec3::ZERO; p.pos.len()];
        p.out_n = vec![g::Vec3::ZERO; p.pos.len()];
    }
    parts
}
