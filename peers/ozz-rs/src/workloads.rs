//! The report's synthetic workloads on ozz-animation-rs: `skin_p`, `skin_pn` and `skin_pnt` (the lab's
//! skinning mesh and palette from `scenes`), and `local_to_model_trs` (the lab's humanoid rig and
//! animated pose). Each is converted to ozz's types once, at setup, and checked there against the
//! library's serial reference on the same data, so a row compares the same work.

use crate::archive;
use crate::workload::Workload;
use glam30 as g;
use ispc_skinning::{
    Attribute, Backend, LocalToModelJob, Locals, MeshInput, PaletteMatrix, PrepareOptions,
    Renormalize, Skeleton, SkinOutput, SkinnedMesh, SkinningJob, Trs,
};
use ozz_animation_rs::{
    Archive, LocalToModelJobRef, Skeleton as OzzSkeleton, SkinningJobRef, SoaQuat, SoaTransform,
    SoaVec3,
};

/// The lab's palette size (`lab/src/report/skinning.rs`, `JOINTS`).
const JOINTS: usize = 64;

pub(crate) fn vec3(v: glam::Vec3) -> g::Vec3 {
    g::Vec3::from_array(v.to_array())
}

pub(crate) fn mat4(m: &glam::Mat4) -> g::Mat4 {
    g::Mat4::from_cols_array(&m.to_cols_array())
}

/// The largest distance between two lists of points.
pub(crate) fn max_error(a: &[g::Vec3], b: &[glam::Vec3]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(a, b)| (*a - vec3(*b)).length())
        .fold(0.0, f32::max)
}

/// ozz's SkinningJob with 4 influences, positions and optionally normals and tangents.
struct Skin {
    mats: Vec<g::Mat4>,
    indices: Vec<u16>,
    weights: Vec<f32>,
    pos: Vec<g::Vec3>,
    nrm: Vec<g::Vec3>,
    tan: Vec<g::Vec3>,
    out: [Vec<g::Vec3>; 3],
    normals: bool,
    tangents: bool,
}

impl Workload for Skin {
    fn run(&mut self) {
        let mut job = SkinningJobRef::default();
        job.set_vertex_count(self.pos.len());
        job.set_influences_count(4);
        job.set_joint_matrices(&self.mats);
        job.set_joint_indices(&self.indices);
        job.set_joint_weights(&self.weights);
        job.set_in_positions(&self.pos);
        let [p, n, t] = &mut self.out;
        job.set_out_positions(p);
        if self.normals {
            job.set_in_normals(&self.nrm);
            job.set_out_normals(n);
        }
        if self.tangents {
            job.set_in_tangents(&self.tan);
            job.set_out_tangents(t);
        }
        job.run().expect("the skinning job was validated at setup");
    }
}

/// `skin_p`, `skin_pn` or `skin_pnt` on `n` vertices, checked against the library's reference.
///
/// # Errors
/// An unknown kernel, or outputs that disagree with the reference.
pub fn skinning(kernel: &str, n: usize) -> Result<Box<dyn Workload>, String> {
    let (normals, tangents) = match kernel {
        "skin_p" => (false, false),
        "skin_pn" => (true, false),
        "skin_pnt" => (true, true),
        _ => return Err(format!("unknown skinning kernel {kernel}")),
    };
    let d = scenes::skin_mesh(n, 4, JOINTS);
    let palette = scenes::skin_palette(JOINTS);
    let mut w = Skin {
        mats: palette.iter().map(mat4).collect(),
        indices: d.joints.iter().flatten().copied().collect(),
        // ozz takes influences - 1 weights per vertex and gives the last one 1 - their sum.
        weights: d.weights.iter().flat_map(|w| [w[0], w[1], w[2]]).collect(),
        pos: d.pos.iter().map(|&v| vec3(v)).collect(),
        nrm: d.nrm.iter().map(|&v| vec3(v)).collect(),
        tan: d.tan.iter().map(|&v| vec3(v.truncate())).collect(),
        out: std::array::from_fn(|_| vec![g::Vec3::ZERO; n]),
        normals,
        tangents,
    };
    w.run();

    // The library's serial reference on the same mesh and palette, prepared as the lab prepares it.
    let input = MeshInput {
        positions: Attribute::vec3(&d.pos),
        normals: Some(Attribute::vec3(&d.nrm)),
        tangents: Some(Attribute::vec4(&d.tan)),
        joints: [Some(Attribute::joints_u16(&d.joints)), None, None, None],
        weights: [Some(Attribute::weights_f32(&d.weights)), None, None, None],
        influences: None,
    };
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(JOINTS))
        .map_err(|e| format!("reference mesh: {e}"))?;
    let pal: Vec<PaletteMatrix> = palette
        .iter()
        .map(|m| PaletteMatrix::from_mat4(*m))
        .collect();
    let (mut p, mut nn, mut t) = (
        vec![glam::Vec3::ZERO; n],
        vec![glam::Vec3::ZERO; n],
        vec![glam::Vec4::ZERO; n],
    );
    let out = SkinOutput::Separate {
        positions: &mut p,
        normals: normals.then_some(&mut nn[..]),
        tangents: tangents.then_some(&mut t[..]),
    };
    let mut job = SkinningJob::new(&mesh, &pal, out).renormalize(Renormalize::None);
    job.backend = Backend::Reference;
    job.run().map_err(|e| format!("reference skinning: {e}"))?;
    let t3: Vec<glam::Vec3> = t.iter().map(|v| v.truncate()).collect();
    let mut err = max_error(&w.out[0], &p);
    if normals {
        err = err.max(max_error(&w.out[1], &nn));
    }
    if tangents {
        err = err.max(max_error(&w.out[2], &t3));
    }
    // Positions are within a few units; both sides compute in f32 with different operation orders.
    if !(err < 1e-4) {
        return Err(format!(
            "{kernel} {n}: ozz-rs output differs from the reference by {err}"
        ));
    }
    Ok(Box::new(w))
}

/// A skeleton archive of `parents` (-1 for none in the archive) with the rest pose `rest`, written by
/// the archive writer and read back by ozz-animation-rs.
pub(crate) fn ozz_skeleton(
    parents: &[Option<usize>],
    rest: &[archive::Trs],
) -> Result<OzzSkeleton, String> {
    let p: Vec<i16> = parents.iter().map(|p| p.map_or(-1, |p| p as i16)).collect();
    let bytes = archive::skeleton(&p, rest);
    let mut a = Archive::new(&bytes[..]).map_err(|e| format!("skeleton archive: {e}"))?;
    OzzSkeleton::from_archive(&mut a).map_err(|e| format!("skeleton archive: {e}"))
}

/// Packs per-joint TRS into ozz's SoA blocks of four, padding with the identity.
pub(crate) fn soa(t: &[glam::Vec3], q: &[glam::Quat], s: &[glam::Vec3]) -> Vec<SoaTransform> {
    (0..t.len().div_ceil(4))
        .map(|b| {
            let lane = |i: usize| {
                let j = 4 * b + i;
                if j < t.len() {
                    (t[j].to_array(), q[j].to_array(), s[j].to_array())
                } else {
                    ([0.0; 3], [0.0, 0.0, 0.0, 1.0], [1.0; 3])
                }
            };
            let l: [archive::Trs; 4] = std::array::from_fn(lane);
            let v3 = |f: &dyn Fn(&archive::Trs) -> [f32; 3]| {
                SoaVec3::new(
                    std::array::from_fn(|i| f(&l[i])[0]),
                    std::array::from_fn(|i| f(&l[i])[1]),
                    std::array::from_fn(|i| f(&l[i])[2]),
                )
            };
            SoaTransform {
                translation: v3(&|x| x.0),
                rotation: SoaQuat::new(
                    std::array::from_fn(|i| l[i].1[0]),
                    std::array::from_fn(|i| l[i].1[1]),
                    std::array::from_fn(|i| l[i].1[2]),
                    std::array::from_fn(|i| l[i].1[3]),
                ),
                scale: v3(&|x| x.2),
            }
        })
        .collect()
}

/// ozz's LocalToModelJob on SoA TRS input.
struct LocalToModel {
    skeleton: OzzSkeleton,
    input: Vec<SoaTransform>,
    out: Vec<g::Mat4>,
}

impl Workload for LocalToModel {
    fn run(&mut self) {
        let mut job = LocalToModelJobRef::default();
        job.set_skeleton(&self.skeleton);
        job.set_input(&self.input);
        job.set_output(&mut self.out);
        job.run().expect("the job was validated at setup");
    }
}

/// `local_to_model_trs` on the lab's humanoid rig of `n` joints and its animated pose (seed 2), checked
/// against the library's reference.
///
/// # Errors
/// A rig ozz cannot hold, or model matrices that disagree with the reference.
pub fn local_to_model_trs(n: usize) -> Result<Box<dyn Workload>, String> {
    if n == 0 || n > i16::MAX as usize {
        return Err(format!(
            "local_to_model_trs: {n} joints is outside ozz's range"
        ));
    }
    // The library's jobs take every array in the skeleton's level order, so the lab's pose is a
    // level-order pose; ozz gets the same hierarchy in that order (parents still come first).
    let skeleton = Skeleton::from_parents(&scenes::humanoid_parents(n))
        .map_err(|e| format!("reference rig: {e}"))?;
    let (t, q, s) = scenes::animated_pose(n, 0.3, true, 2);
    let identity = ([0.0; 3], [0.0, 0.0, 0.0, 1.0], [1.0; 3]);
    let mut w = LocalToModel {
        skeleton: ozz_skeleton(skeleton.level_parents(), &vec![identity; n])?,
        input: soa(&t, &q, &s),
        out: vec![g::Mat4::ZERO; n],
    };
    w.run();

    let mut reference = vec![glam::Mat4::ZERO; n];
    let trs = Trs {
        translations: &t,
        rotations: &q,
        scales: &s,
    };
    let mut job = LocalToModelJob::new(&skeleton, Locals::Trs(trs), &mut reference);
    job.backend = Backend::Reference;
    job.run()
        .map_err(|e| format!("reference local to model: {e}"))?;
    let err = w
        .out
        .iter()
        .zip(&reference)
        .flat_map(|(a, b)| {
            let (a, b) = (a.to_cols_array(), b.to_cols_array());
            (0..16).map(move |i| (a[i] - b[i]).abs() / (1.0 + b[i].abs()))
        })
        .fold(0.0f32, f32::max);
    if !(err < 1e-3) {
        return Err(format!(
            "local_to_model_trs {n}: ozz-rs model matrices differ from the reference by {err}"
        ));
    }
    Ok(Box::new(w))
}
