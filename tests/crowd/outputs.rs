//! `CrowdFrame::outputs`: a crowd frame that asks for positions (or positions and normals) writes those
//! streams with the bits a whole crowd frame writes, and leaves the others as they were (zeros in new
//! buffers), on every backend; asking for everything again writes everything.

use super::common::backends;
use super::{pose_crowd, rig};
use ispc_skinning::{CrowdFrame, VertexOutputs};

/// Each mesh's streams as bits: positions, normals, tangents (empty where the mesh has none).
fn streams(frame: &CrowdFrame, meshes: usize) -> Vec<[Vec<u32>; 3]> {
    (0..meshes)
        .map(|m| {
            let out = frame.mesh(m).unwrap();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
            let flat3 =
                |v: &[glam::Vec3]| bits(&v.iter().flat_map(|p| p.to_array()).collect::<Vec<_>>());
            [
                flat3(&out.positions),
                out.normals.as_deref().map_or_else(Vec::new, flat3),
                out.tangents.as_deref().map_or_else(Vec::new, |t| {
                    bits(&t.iter().flat_map(|p| p.to_array()).collect::<Vec<_>>())
                }),
            ]
        })
        .collect()
}

#[test]
fn a_crowd_frame_writes_only_the_streams_it_asks_for() {
    let rig = rig();
    let c = &rig.character;
    for backend in backends() {
        for instances in [1, 17] {
            let run = |outputs| {
                let mut frame = c
                    .crowd_buffers(instances)
                    .unwrap()
                    .backend(backend)
                    .outputs(outputs);
                pose_crowd(&rig, &mut frame);
                c.evaluate_crowd(&mut frame).unwrap();
                frame
            };
            let all = streams(&run(VertexOutputs::All), 2);
            let pn = streams(&run(VertexOutputs::PositionsAndNormals), 2);
            let mut p_frame = run(VertexOutputs::Positions);
            let p = streams(&p_frame, 2);
            let what = format!("{backend:?}, {instances} instances");
            // Mesh 0 has normals and tangents; mesh 1 positions only.
            assert!(!all[0][1].is_empty() && !all[0][2].is_empty(), "{what}");
            assert!(all[1][1].is_empty() && all[1][2].is_empty(), "{what}");
            for m in 0..2 {
                assert_eq!(all[m][0], pn[m][0], "{what}: mesh {m} positions (PN)");
                assert_eq!(all[m][0], p[m][0], "{what}: mesh {m} positions (P)");
                assert_eq!(all[m][1], pn[m][1], "{what}: mesh {m} normals (PN)");
                assert!(
                    p[m][1].iter().all(|&b| b == 0),
                    "{what}: mesh {m} normals written"
                );
                assert!(
                    pn[m][2].iter().chain(&p[m][2]).all(|&b| b == 0),
                    "{what}: mesh {m} tangents written"
                );
                assert!(all[m][0].iter().any(|&b| b != 0), "{what}: nothing skinned");
            }
            // The buffers stay: asked for everything again, the same frame writes everything.
            p_frame.outputs = VertexOutputs::All;
            c.evaluate_crowd(&mut p_frame).unwrap();
            assert!(streams(&p_frame, 2) == all, "{what}: all again");
        }
    }
}
