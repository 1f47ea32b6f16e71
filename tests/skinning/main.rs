//! Mesh preparation and the skinning job: one test per rule, the weight policy, influence LOD, every
//! input form, and the reference against glam's own math.
//!
//! The preparation rules (attribute formats, counts, strides, joints and weights) are checked in
//! `rules.rs` beside this file; the influence sources and input forms (unorm weights, u8 and u16
//! joints, a second joint set, influence LOD, runs of mixed counts, interleaved input, the default
//! character at its bind pose) in `influences.rs`; the skinning job's palette and output rules in
//! `job.rs`; compact influences in `compact.rs`. The five files make one test binary; this one holds
//! the helpers they share.

#[path = "../common/mod.rs"]
mod common;
mod compact;
mod influences;
mod job;
mod rules;

use common::{random_transform, Rng};
use glam::{Mat4, Vec3};
use ispc_skinning::{
    Backend, Error, MeshInput, PaletteMatrix, PrepareOptions, SkinOutput, SkinnedMesh, SkinningJob,
};

fn positions(n: usize) -> Vec<Vec3> {
    (0..n).map(|i| Vec3::new(i as f32, 1.0, -2.0)).collect()
}

fn prepare(input: &MeshInput<'_>) -> Result<SkinnedMesh, Error> {
    SkinnedMesh::prepare(input, &PrepareOptions::new(8))
}

fn skin(mesh: &SkinnedMesh, palette: &[PaletteMatrix], backend: Backend) -> Vec<Vec3> {
    let mut out = vec![Vec3::NAN; mesh.vertex_count()];
    let mut job = SkinningJob::new(
        mesh,
        palette,
        SkinOutput::Separate {
            positions: &mut out,
            normals: None,
            tangents: None,
        },
    );
    job.backend = backend;
    job.run().unwrap();
    out
}

fn random_palette(n: usize, rng: &mut Rng) -> (Vec<Mat4>, Vec<PaletteMatrix>) {
    let mats: Vec<Mat4> = (0..n)
        .map(|_| random_transform(rng, 0.8..1.2, -2.0..2.0))
        .collect();
    let palette = mats.iter().map(|m| PaletteMatrix::from_mat4(*m)).collect();
    (mats, palette)
}
