//! Dual-quaternion skinning against linear blending on a twisting forearm: a tube of vertices along x,
//! the elbow at x = 0 and the wrist at x = 2, each vertex weighted between the two joints by where it
//! lies. The wrist turns about the arm's axis; linear blending pinches the tube where the weights are
//! half and half (the "candy wrapper"), dual quaternions keep its radius.
//!
//! ```sh
//! cargo run --release -p ispc-skinning --example dual_quaternions
//! ```

use ispc_skinning::glam::{Mat4, Vec3};
use ispc_skinning::{
    dual_quat_palette, DualQuatEntry, MeshInput, PaletteMatrix, PrepareOptions, SkinOutput,
    SkinnedMesh, SkinningJob,
};

fn main() -> Result<(), ispc_skinning::Error> {
    // Rings of 12 vertices of radius 0.25 at x = 0, 0.25, ..., 2.
    let mut positions = Vec::new();
    let mut joints = Vec::new();
    let mut weights = Vec::new();
    for ring in 0..=8 {
        let x = ring as f32 * 0.25;
        let to_wrist = x / 2.0;
        for i in 0..12 {
            let a = i as f32 * std::f32::consts::TAU / 12.0;
            positions.push(Vec3::new(x, 0.25 * a.cos(), 0.25 * a.sin()));
            joints.push([0u16, 1]);
            weights.push([1.0 - to_wrist, to_wrist]);
        }
    }
    let mesh = SkinnedMesh::prepare(
        &MeshInput::from_influences(&positions, &joints, &weights),
        &PrepareOptions::new(2),
    )?;

    for degrees in [0.0f32, 90.0, 160.0] {
        // The bind pose is the rest pose, so each palette entry is the joint's motion: the elbow
        // stays, the wrist turns about the x axis.
        let palette = [
            PaletteMatrix::IDENTITY,
            PaletteMatrix::from_mat4(Mat4::from_rotation_x(degrees.to_radians())),
        ];
        let mut linear = vec![Vec3::ZERO; positions.len()];
        SkinningJob::new(&mesh, &palette, SkinOutput::positions(&mut linear)).run()?;

        // The same palette as dual quaternions (convert once per frame, for every mesh of the skin).
        let mut entries = [DualQuatEntry::IDENTITY; 2];
        dual_quat_palette(&palette, &mut entries)?;
        let mut dual = vec![Vec3::ZERO; positions.len()];
        SkinningJob::dual_quaternion(&mesh, &entries, SkinOutput::positions(&mut dual)).run()?;

        // The tube's radius at the middle ring (x = 1), where the two joints weigh the same.
        let radius = |p: &[Vec3]| {
            p[4 * 12..5 * 12]
                .iter()
                .map(|v| v.y.hypot(v.z))
                .sum::<f32>()
                / 12.0
        };
        println!(
            "wrist turned {degrees:>5.1} degrees: radius at the middle {:.3} (linear) {:.3} (dual quaternions), 0.250 at rest",
            radius(&linear),
            radius(&dual)
        );
    }
    Ok(())
}
