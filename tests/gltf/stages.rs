//! A frame called stage by stage: `sample`, `local_to_model`, `palettes`, `skin` and `rigid` give the
//! bits `evaluate` gives, skinned, morphed and rigid primitives alike, on every backend.

use super::*;

/// Every shared asset (see `common::SHARED_ASSETS`).
const ALL_ASSETS: [&str; 6] = crate::common::SHARED_ASSETS;

/// Every output of a frame as bits: world matrices, palettes, then skinned and rigid vertices stream by
/// stream ([`streams`]).
fn frame_bits(scene: &GltfScene, frame: &Frame) -> Vec<u32> {
    let mut bits = Vec::new();
    for node in 0..scene.node_count() {
        let m = scene.world_matrix(frame, node).unwrap();
        bits.extend(m.to_cols_array().map(f32::to_bits));
    }
    for p in frame.palettes().iter().flatten() {
        bits.extend(p.to_mat4().to_cols_array().map(f32::to_bits));
    }
    bits.extend(streams(frame).concat());
    bits
}

#[test]
fn the_five_stages_one_by_one_give_what_evaluate_gives() {
    let Some(dir) = common::assets() else { return };
    let mut rigid_checked = 0;
    for asset in ALL_ASSETS {
        let path = dir.join(asset);
        let scene = GltfScene::load(&path).unwrap_or_else(|e| panic!("{asset}: {e}"));
        rigid_checked += scene.rigid_primitives().len();
        for backend in common::backends() {
            for c in 0..scene.clips().len() {
                let clip = &scene.clips()[c];
                let t = clip.start() + 0.37 * clip.duration();
                let mut whole = scene.frame_buffers().backend(backend);
                scene.evaluate(Some(c), t, Wrap::Loop, &mut whole).unwrap();
                // The staged frame first holds another time's frame, so that a stage left out shows as
                // stale vertices.
                let mut staged = scene.frame_buffers().backend(backend);
                let other = clip.start() + 0.81 * clip.duration();
                scene
                    .evaluate(Some(c), other, Wrap::Loop, &mut staged)
                    .unwrap();
                scene.sample(Some(c), t, Wrap::Loop, &mut staged).unwrap();
                scene.local_to_model(&mut staged).unwrap();
                scene.palettes(&mut staged).unwrap();
                scene.skin(&mut staged).unwrap();
                scene.rigid(&mut staged).unwrap();
                let (a, b) = (frame_bits(&scene, &whole), frame_bits(&scene, &staged));
                assert_eq!(a.len(), b.len());
                if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
                    panic!(
                        "{asset} clip {c} t {t} {backend:?}: output float {i} of {} is {} staged, {} from evaluate",
                        a.len(),
                        f32::from_bits(b[i]),
                        f32::from_bits(a[i])
                    );
                }
            }
        }
    }
    // RobotExpressive's body parts hang on nodes without a skin.
    assert!(rigid_checked > 0, "no asset had rigid primitives");
}

/// Positions, normals and tangents of every skinned and rigid primitive, as bits.
fn streams(frame: &Frame) -> [Vec<u32>; 3] {
    let mut out = [Vec::new(), Vec::new(), Vec::new()];
    for v in frame.meshes().iter().chain(frame.rigid_meshes()) {
        out[0].extend(
            v.positions
                .iter()
                .flat_map(|p| p.to_array())
                .map(f32::to_bits),
        );
        for n in v.normals.iter().flatten() {
            out[1].extend(n.to_array().map(f32::to_bits));
        }
        for t in v.tangents.iter().flatten() {
            out[2].extend(t.to_array().map(f32::to_bits));
        }
    }
    out
}

/// `Frame::outputs`: a frame that asks for positions (or positions and normals) writes those streams
/// with the bits a whole frame writes, and leaves the others as they were (zero in new buffers); morphed
/// and rigid primitives included.
#[test]
fn a_frame_writes_only_the_streams_it_asks_for() {
    use ispc_skinning::VertexOutputs;
    let Some(dir) = common::assets() else { return };
    for asset in ALL_ASSETS {
        let scene = GltfScene::load(dir.join(asset)).unwrap();
        for backend in common::backends() {
            let clip = (!scene.clips().is_empty()).then_some(0);
            let t = scene
                .clips()
                .first()
                .map_or(0.0, |c| c.start() + 0.4 * c.duration());
            let run = |outputs| {
                let mut frame = scene.frame_buffers().backend(backend).outputs(outputs);
                scene.evaluate(clip, t, Wrap::Loop, &mut frame).unwrap();
                streams(&frame)
            };
            let all = run(VertexOutputs::All);
            let pn = run(VertexOutputs::PositionsAndNormals);
            let p = run(VertexOutputs::Positions);
            let what = format!("{asset} {backend:?}");
            assert_eq!(all[0], pn[0], "{what}: positions");
            assert_eq!(all[0], p[0], "{what}: positions");
            assert_eq!(all[1], pn[1], "{what}: normals");
            assert!(p[1].iter().all(|&b| b == 0), "{what}: normals written");
            assert!(
                pn[2].iter().chain(&p[2]).all(|&b| b == 0),
                "{what}: tangents written"
            );
            assert!(all[0].iter().any(|&b| b != 0), "{what}: nothing skinned");
        }
    }
}

/// `Frame::outputs` on a skinned mesh with normals, tangents and a morph target at a non-zero weight
/// (the shared assets have no tangents and no skinned morphs): the fused morph + skin pass runs for a
/// whole frame, the two-pass path for the others, with the same bits in the streams written.
#[test]
fn a_morphed_skinned_mesh_with_tangents_writes_only_the_streams_asked_for() {
    use ispc_skinning::VertexOutputs;
    let mut b = Builder::default();
    let mut doc = two_joint_rig(&mut b);
    let normals = b.f32s(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0], "VEC3");
    let tangents = b.f32s(
        &[1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, -1.0, 1.0, 0.0, 0.0, 1.0],
        "VEC4",
    );
    let dp = b.f32s(&[0.1, 0.0, 0.0, 0.0, 0.2, 0.0, 0.0, 0.0, 0.3], "VEC3");
    let dn = b.f32s(&[0.0, 0.1, 0.0, 0.1, 0.0, 0.0, 0.0, 0.0, 0.1], "VEC3");
    let prim = &mut doc["meshes"][0]["primitives"][0];
    prim["attributes"]["NORMAL"] = json!(normals);
    prim["attributes"]["TANGENT"] = json!(tangents);
    prim["targets"] = json!([{"POSITION": dp, "NORMAL": dn}]);
    doc["meshes"][0]["weights"] = json!([0.5]);
    doc["nodes"][1]["rotation"] = json!([0.0, 0.0, 0.38268343, 0.9238795]);
    let scene = load(&b.gltf(doc));
    for backend in common::backends() {
        let run = |outputs| {
            let mut frame = scene.frame_buffers().backend(backend).outputs(outputs);
            scene.evaluate(None, 0.0, Wrap::Loop, &mut frame).unwrap();
            streams(&frame)
        };
        let all = run(VertexOutputs::All);
        let pn = run(VertexOutputs::PositionsAndNormals);
        let p = run(VertexOutputs::Positions);
        assert_eq!(all[2].len(), 12, "{backend:?}: the mesh has tangents");
        assert!(
            all[2].iter().any(|&b| b != 0),
            "{backend:?}: tangents skinned"
        );
        assert_eq!(all[0], pn[0], "{backend:?}: positions");
        assert_eq!(all[0], p[0], "{backend:?}: positions");
        assert_eq!(all[1], pn[1], "{backend:?}: normals");
        assert!(p[1].iter().all(|&b| b == 0), "{backend:?}: normals written");
        assert!(
            pn[2].iter().chain(&p[2]).all(|&b| b == 0),
            "{backend:?}: tangents written"
        );
    }
}
