//! Pick a playing glTF character with a ray: skin positions only, test the frame's box first, then
//! the skinned triangles of every primitive (skinned and rigid).
//!
//! ```sh
//! cargo run --release -p ispc-skinning --example pick [path/to/character.glb]
//! ```
//!
//! Without an argument it loads `../shared/assets/CesiumMan/CesiumMan.glb` beside the repository; if
//! that file is missing it says so and exits successfully.

use ispc_skinning::glam::Vec3;
use ispc_skinning::gltf::{GltfScene, Wrap};
use ispc_skinning::VertexOutputs;
use std::path::PathBuf;

/// Where a ray (origin `o`, direction `d`) enters the box `(min, max)`, as a distance along `d`;
/// `None` when it misses (the slab test).
fn ray_box(o: Vec3, d: Vec3, (min, max): (Vec3, Vec3)) -> Option<f32> {
    let inv = d.recip();
    let (a, b) = ((min - o) * inv, (max - o) * inv);
    let near = a.min(b).max_element().max(0.0);
    let far = a.max(b).min_element();
    (near <= far).then_some(near)
}

/// Where a ray hits the triangle `t`, as a distance along `d` (Möller and Trumbore).
fn ray_triangle(o: Vec3, d: Vec3, t: [Vec3; 3]) -> Option<f32> {
    let (e1, e2) = (t[1] - t[0], t[2] - t[0]);
    let p = d.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-12 {
        return None;
    }
    let s = (o - t[0]) / det;
    let u = s.dot(p);
    let q = s.cross(e1);
    let v = d.dot(q);
    let dist = e2.dot(q);
    (u >= 0.0 && v >= 0.0 && u + v <= 1.0 && dist > 0.0).then_some(dist)
}

fn main() -> Result<(), ispc_skinning::Error> {
    let path = match std::env::args_os().nth(1) {
        Some(arg) => PathBuf::from(arg),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/assets/CesiumMan/CesiumMan.glb"),
    };
    if !path.is_file() {
        println!(
            "pick: {} is missing; pass a .gltf or .glb file to pick",
            path.display()
        );
        return Ok(());
    }
    let scene = GltfScene::load(&path)?;
    // A pick needs positions only: the frame skips normals and tangents.
    let mut frame = scene.frame_buffers().outputs(VertexOutputs::Positions);
    let clip = (!scene.clips().is_empty()).then_some(0);

    for step in 0..4 {
        let time = step as f32 * 0.25;
        scene.evaluate(clip, time, Wrap::Loop, &mut frame)?;
        // The box comes from the skin stage's kernels, so it costs no pass over the vertices.
        let Some((min, max)) = frame.bounds() else {
            println!("t = {time:.2}: nothing drawn");
            continue;
        };
        // A ray from in front of the character, 2 box sizes away, at its middle height.
        let centre = (min + max) * 0.5;
        let origin = centre + Vec3::new(0.3, 0.1, 2.0) * (max - min).max_element();
        let dir = (centre - origin).normalize();
        if ray_box(origin, dir, (min, max)).is_none() {
            println!("t = {time:.2}: the ray misses the box");
            continue;
        }
        // The nearest triangle over every drawn primitive, skinned then rigid.
        let meshes = scene
            .primitives()
            .iter()
            .map(|p| p.triangles())
            .zip(frame.meshes())
            .chain(
                scene
                    .rigid_primitives()
                    .iter()
                    .map(|p| p.triangles())
                    .zip(frame.rigid_meshes()),
            );
        let mut nearest: Option<(f32, usize, usize)> = None;
        for (mesh, (triangles, vertices)) in meshes.enumerate() {
            let p = &vertices.positions;
            for (i, t) in triangles.iter().enumerate() {
                let Some(corners) = t
                    .iter()
                    .map(|&v| p.get(v as usize).copied())
                    .collect::<Option<Vec<Vec3>>>()
                else {
                    continue;
                };
                if let Some(dist) = ray_triangle(origin, dir, [corners[0], corners[1], corners[2]])
                {
                    if nearest.is_none_or(|(best, _, _)| dist < best) {
                        nearest = Some((dist, mesh, i));
                    }
                }
            }
        }
        match nearest {
            Some((dist, mesh, triangle)) => {
                let hit = origin + dir * dist;
                println!(
                    "t = {time:.2}: hit primitive {mesh}, triangle {triangle}, at ({:.3}, {:.3}, {:.3})",
                    hit.x, hit.y, hit.z
                );
            }
            None => println!("t = {time:.2}: the ray enters the box but hits no triangle"),
        }
    }
    Ok(())
}
