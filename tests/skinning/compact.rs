//! Compact influences (`PrepareOptions::compact_influences`): positions stay within the documented
//! accuracy for 1 to 16 influences, weights above one are refused unless normalized, rigid vertices
//! stay exact, and the influence bytes are halved (`SkinnedMesh::heap_bytes`).

use super::{positions, random_palette, skin};
use crate::common::{random_vec3, Rng};
use glam::Vec3;
use ispc_skinning::{
    Attribute, Backend, Error, MeshInput, PrepareOptions, SkinnedMesh, WeightPolicy,
};

/// A random mesh with `k` (1 to 16) normalized influences per vertex over 8 joints.
#[allow(clippy::type_complexity)]
fn compact_case(n: usize, k: usize, rng: &mut Rng) -> (Vec<Vec3>, Vec<[u16; 16]>, Vec<[f32; 16]>) {
    let p: Vec<Vec3> = (0..n).map(|_| random_vec3(rng, -2.0..2.0)).collect();
    let joints = (0..n)
        .map(|_| std::array::from_fn(|_| rng.below(8) as u16))
        .collect();
    let weights = (0..n)
        .map(|_| std::array::from_fn(|i| if i < k { rng.range(0.01, 1.0) } else { 0.0 }))
        .collect();
    (p, joints, weights)
}

/// Prepares 16 influences per vertex given as four JOINTS_n/WEIGHTS_n sets.
fn prepare_sets(
    p: &[Vec3],
    joints: &[[u16; 16]],
    weights: &[[f32; 16]],
    options: &PrepareOptions,
) -> Result<SkinnedMesh, Error> {
    let j: [Vec<[u16; 4]>; 4] = std::array::from_fn(|s| {
        joints
            .iter()
            .map(|j| std::array::from_fn(|i| j[4 * s + i]))
            .collect()
    });
    let w: [Vec<[f32; 4]>; 4] = std::array::from_fn(|s| {
        weights
            .iter()
            .map(|w| std::array::from_fn(|i| w[4 * s + i]))
            .collect()
    });
    let input = MeshInput {
        positions: Attribute::vec3(p),
        normals: None,
        tangents: None,
        joints: std::array::from_fn(|s| Some(Attribute::joints_u16(&j[s]))),
        weights: std::array::from_fn(|s| Some(Attribute::weights_f32(&w[s]))),
        influences: None,
    };
    SkinnedMesh::prepare(&input, options)
}

#[test]
fn compact_influences_stay_within_the_documented_accuracy() {
    // PrepareOptions::compact_influences: a normalized vertex's skinned position moves by at most
    // 1.5e-5 * sum_i |M_i p - M_0 p| (plus f32 rounding), on the reference and on the selected ISA.
    let mut rng = Rng::new(5);
    let (mats, palette) = random_palette(8, &mut rng);
    for k in 1..=16 {
        let (p, joints, weights) = compact_case(500, k, &mut rng);
        let exact = prepare_sets(&p, &joints, &weights, &PrepareOptions::new(8)).unwrap();
        let options = PrepareOptions {
            compact_influences: true,
            ..PrepareOptions::new(8)
        };
        let compact = prepare_sets(&p, &joints, &weights, &options).unwrap();
        let want = skin(&exact, &palette, Backend::Reference);
        let mut moved = 0;
        for backend in [Backend::Reference, Backend::Auto] {
            let got = skin(&compact, &palette, backend);
            for v in 0..p.len() {
                let carried: Vec<Vec3> = (0..k)
                    .map(|i| mats[joints[v][i] as usize].transform_point3(p[v]))
                    .collect();
                let spread: f32 = carried.iter().map(|c| (*c - carried[0]).length()).sum();
                let scale = carried
                    .iter()
                    .map(|c| c.abs().max_element())
                    .fold(0.0, f32::max);
                let bound = 1.5e-5 * spread + 16.0 * f32::EPSILON * scale;
                let diff = (got[v] - want[v]).abs().max_element();
                assert!(
                    diff <= bound,
                    "k={k} {backend:?} vertex {v}: moved by {diff}, bound {bound}"
                );
                moved += usize::from(diff > 0.0);
            }
        }
        // The weights really were quantized: some vertices with several influences moved.
        if k > 1 {
            assert!(moved > 0, "k={k}: no vertex changed");
        }
    }
}

#[test]
fn compact_influences_reject_weights_above_one() {
    let p = positions(2);
    let joints = [[0u8, 1, 0, 0]; 2];
    let weights = [[0.5f32, 0.5, 0.0, 0.0], [0.5, 1.5, 0.0, 0.0]];
    let input = MeshInput::new(
        Attribute::vec3(&p),
        Attribute::joints_u8(&joints),
        Attribute::weights_f32(&weights),
    );
    let keep = PrepareOptions {
        weights: WeightPolicy::Keep,
        compact_influences: true,
        ..PrepareOptions::new(8)
    };
    assert_eq!(
        SkinnedMesh::prepare(&input, &keep).unwrap_err(),
        Error::CompactWeight {
            vertex: 1,
            weight: 1.5
        }
    );
    // Normalized, the same weights fit.
    let normalize = PrepareOptions {
        compact_influences: true,
        ..PrepareOptions::new(8)
    };
    assert!(SkinnedMesh::prepare(&input, &normalize).is_ok());
}

#[test]
fn compact_rigid_vertices_stay_exact() {
    // One influence normalizes to weight 1, which unorm16 holds exactly (65535 * (1/65535) is 1 in f32),
    // so the rigid kernel still runs and the result equals the f32 mesh's bit for bit.
    let mut rng = Rng::new(9);
    let (_, palette) = random_palette(8, &mut rng);
    let (p, joints, weights) = compact_case(300, 1, &mut rng);
    let exact = prepare_sets(&p, &joints, &weights, &PrepareOptions::new(8)).unwrap();
    let options = PrepareOptions {
        compact_influences: true,
        ..PrepareOptions::new(8)
    };
    let compact = prepare_sets(&p, &joints, &weights, &options).unwrap();
    for backend in [Backend::Reference, Backend::Auto] {
        assert_eq!(
            skin(&compact, &palette, backend),
            skin(&exact, &palette, backend)
        );
    }
}

#[test]
fn compact_influences_halve_the_influence_bytes() {
    // SkinnedMesh::heap_bytes: a positions-only vertex holds 12 bytes of attributes, a 4-byte index and
    // a 1-byte influence count, plus 8 bytes per influence, or 4 when compact. One influence of weight 1 is rigid in both forms:
    // its joint alone, 4 bytes. Attributes and influences are padded to whole blocks of 16 vertices
    // (100 vertices take 112 places); the indices and counts are not. Each joint up to the largest
    // used keeps its bind box for pose bounds: 24 bytes. A vertex of 9 to 15 influences pays for the
    // count its kernel skins (12 or 16).
    let mut rng = Rng::new(11);
    let n = 100;
    let padded = 112;
    for k in 1..=16 {
        let (p, joints, weights) = compact_case(n, k, &mut rng);
        // 9 to 11 influences are stored as 12 and 13 to 15 as 16 (padded with zero weights).
        let stored = match k {
            9..=12 => 12,
            13..=16 => 16,
            _ => k,
        };
        let exact = prepare_sets(&p, &joints, &weights, &PrepareOptions::new(8)).unwrap();
        let options = PrepareOptions {
            compact_influences: true,
            ..PrepareOptions::new(8)
        };
        let compact = prepare_sets(&p, &joints, &weights, &options).unwrap();
        let per_influence = if k == 1 { 4 } else { 8 };
        let used = joints
            .iter()
            .zip(&weights)
            .flat_map(|(j, w)| j.iter().zip(w).filter(|(_, &w)| w > 0.0))
            .map(|(&j, _)| usize::from(j) + 1)
            .max()
            .unwrap_or(0);
        let boxes = 24 * used;
        assert_eq!(
            exact.heap_bytes(),
            padded * (12 + per_influence * stored) + 5 * n + boxes,
            "k={k}"
        );
        assert_eq!(
            compact.heap_bytes(),
            padded * (12 + 4 * stored) + 5 * n + boxes,
            "k={k}"
        );
    }
}
