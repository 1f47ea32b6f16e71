//! `mesh_prepare`: `SkinnedMesh::prepare` on arbitrary attribute views and options.
//!
//! Positions, normals, tangents, joints and weights are `Attribute::new(bytes, offset, stride, count,
//! format)` views of one arbitrary byte buffer, with any offset, stride, count and `Format`; or the
//! influences come in the flat form (`MeshInput::from_flat_influences`) with any per-vertex count, or
//! both at once (an error). `PrepareOptions` are arbitrary (joint count, weight policy, influence LOD,
//! compact influences). `prepare` returns `Ok` or a typed `Err`; a prepared mesh has one vertex per
//! position, a histogram that counts every vertex once, a permutation of its vertices and the joint
//! count asked for, and skins with an identity palette on `Backend::Auto` and `Backend::Reference`, both
//! with the same outcome: `Ok`, or `Error::ResultNotFinite` where the finite input itself overflows
//! (fuzz/regressions/mesh_prepare/overflow-kept-weights: both backends skin it to infinities).
#![no_main]

use arbitrary::Arbitrary;
use ispc_skinning::glam::{Vec3, Vec4};
use ispc_skinning::{
    Attribute, Backend, Error, Format, MeshInput, PaletteMatrix, PrepareOptions, SkinOutput,
    SkinnedMesh, SkinningJob, WeightPolicy,
};
use ispc_skinning_fuzz::{Len, Num};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct View {
    offset: Num,
    stride: Num,
    count: Len,
    format: u8,
}

#[derive(Arbitrary, Debug)]
enum Influences {
    /// JOINTS_0/WEIGHTS_0 and the sets 1 to 3 that `more` names (bit s - 1 for set s; a set may be
    /// missing between present ones), as views of the buffer.
    Attributes {
        joints: [View; 4],
        weights: [View; 4],
        more: u8,
    },
    /// The flat form, `per_vertex` influences per vertex.
    Flat {
        joints: Vec<u16>,
        weights: Vec<f32>,
        per_vertex: Num,
    },
    /// Both sources at once.
    Both {
        joints: View,
        weights: View,
        flat_joints: Vec<u16>,
        flat_weights: Vec<f32>,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    vertices: u8,
    positions: View,
    normals: Option<View>,
    tangents: Option<View>,
    influences: Influences,
    joint_count: Option<Num>,
    keep_weights: bool,
    max_influences: Num,
    compact: bool,
    bytes: Vec<u8>,
}

const FORMATS: [Format; 6] = [
    Format::F32x3,
    Format::F32x4,
    Format::U8x4,
    Format::U16x4,
    Format::Unorm8x4,
    Format::Unorm16x4,
];

fuzz_target!(|input: Input| {
    let n = input.vertices as usize;
    let bytes = &input.bytes[..];
    let view = |v: &View| {
        let format = FORMATS[v.format as usize % FORMATS.len()];
        Attribute::new(
            bytes,
            v.offset.get(),
            v.stride.get(),
            v.count.resolve(n),
            format,
        )
    };
    // The flat form takes glam positions; the view of the buffer replaces them below.
    let no_positions: [Vec3; 0] = [];
    let mut mesh_input = match &input.influences {
        Influences::Attributes {
            joints,
            weights,
            more,
        } => {
            let mut m = MeshInput::new(view(&input.positions), view(&joints[0]), view(&weights[0]));
            for set in 1..4 {
                if more & (1 << (set - 1)) != 0 {
                    m.joints[set] = Some(view(&joints[set]));
                    m.weights[set] = Some(view(&weights[set]));
                }
            }
            m
        }
        Influences::Flat {
            joints,
            weights,
            per_vertex,
        } => MeshInput::from_flat_influences(&no_positions, joints, weights, per_vertex.get()),
        Influences::Both {
            joints,
            weights,
            flat_joints,
            flat_weights,
        } => {
            let mut m =
                MeshInput::from_flat_influences(&no_positions, flat_joints, flat_weights, 4);
            m.joints[0] = Some(view(joints));
            m.weights[0] = Some(view(weights));
            m
        }
    };
    mesh_input.positions = view(&input.positions);
    if let Some(v) = &input.normals {
        mesh_input = mesh_input.normals(view(v));
    }
    if let Some(v) = &input.tangents {
        mesh_input = mesh_input.tangents(view(v));
    }
    let mut options = PrepareOptions::default()
        .max_influences(input.max_influences.get())
        .compact_influences(input.compact);
    if input.keep_weights {
        options = options.weights(WeightPolicy::Keep);
    }
    if let Some(j) = input.joint_count {
        options = options.joint_count(j.get());
    }

    let Ok(mesh) = SkinnedMesh::prepare(&mesh_input, &options) else {
        return;
    };
    let vertices = mesh_input.positions.count;
    assert_eq!(mesh.vertex_count(), vertices);
    assert_eq!(mesh.influence_histogram().iter().sum::<usize>(), vertices);
    let mut seen = vec![false; vertices];
    for v in mesh.permutation() {
        assert!(
            !std::mem::replace(&mut seen[v as usize], true),
            "vertex {v} twice"
        );
    }
    assert!(seen.iter().all(|&s| s));
    if let Some(j) = options.joint_count {
        assert_eq!(mesh.joint_count(), j);
    }
    assert_eq!(mesh.has_normals(), input.normals.is_some());
    assert_eq!(mesh.has_tangents(), input.tangents.is_some());
    skin(&mesh);
});

/// Skins the prepared mesh with an identity palette (when it is small enough to allocate).
fn skin(mesh: &SkinnedMesh) {
    if mesh.joint_count() > 1 << 12 {
        return;
    }
    let n = mesh.vertex_count();
    let palette = vec![PaletteMatrix::IDENTITY; mesh.joint_count()];
    let mut outcomes = Vec::new();
    for backend in [Backend::Auto, Backend::Reference] {
        let mut positions = vec![Vec3::ZERO; n];
        let mut normals = vec![Vec3::ZERO; n];
        let mut tangents = vec![Vec4::ZERO; n];
        let output = SkinOutput::Separate {
            positions: &mut positions,
            normals: mesh.has_normals().then_some(&mut normals[..]),
            tangents: mesh.has_tangents().then_some(&mut tangents[..]),
        };
        let result = SkinningJob::new(mesh, &palette, output)
            .backend(backend)
            .run();
        // The one refusal allowed: the finite input overflows, which the job reports instead of
        // returning infinities.
        assert!(
            matches!(result, Ok(()) | Err(Error::ResultNotFinite { .. })),
            "a prepared mesh fails to skin on {backend:?}: {result:?}"
        );
        outcomes.push(result.is_ok());
    }
    assert_eq!(
        outcomes[0], outcomes[1],
        "Auto and the reference disagree on whether the mesh skins"
    );
}
