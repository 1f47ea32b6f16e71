//! The embedded default scene: a procedural humanoid of 67 joints with 20,592 vertices (4 influences,
//! positions, normals and tangents). Row `character_frame`: one whole frame, from the animated local pose
//! through local to model and the palette (with the skin-to-skeleton joint remap) to skinning, on the
//! reference and every ISA; the summary gives frames per second.

use crate::report::row::{backends, push_rows, Row};
use crate::report::timing::{median_ns_per_call, Budget};
use glam::{Mat4, Quat, Vec3, Vec4};
use ispc_skinning::{
    Attribute, Backend, Isa, LocalToModelJob, Locals, MeshInput, PaletteJob, PaletteMatrix,
    PrepareOptions, Skeleton, SkinOutput, SkinnedMesh, SkinningJob, Trs,
};
use scenes::{animated_pose, character, Character};
use std::cell::RefCell;

/// Joints of the default character.
pub const JOINTS: usize = 67;
const RINGS: usize = 13;
const SEGMENTS: usize = 24;

/// One character and its reusable frame buffers.
struct Frame {
    character: Character,
    skeleton: Skeleton,
    /// Skin joint i (original order) is skeleton joint remap[i] (level order).
    remap: Vec<u32>,
    mesh: SkinnedMesh,
    locals: (Vec<Vec3>, Vec<Quat>, Vec<Vec3>),
    models: Vec<Mat4>,
    palette: Vec<PaletteMatrix>,
    out: (Vec<Vec3>, Vec<Vec3>, Vec<Vec4>),
}

impl Frame {
    fn new() -> Frame {
        let character = character(JOINTS, RINGS, SEGMENTS);
        let skeleton = Skeleton::from_parents(&character.parents).expect("a valid rig");
        let remap = (0..JOINTS)
            .map(|i| skeleton.level_index(i).expect("every joint") as u32)
            .collect();
        let input = MeshInput {
            positions: Attribute::vec3(&character.positions),
            normals: Some(Attribute::vec3(&character.normals)),
            tangents: Some(Attribute::vec4(&character.tangents)),
            joints: [Some(Attribute::joints_u16(&character.joints)), None],
            weights: [Some(Attribute::weights_f32(&character.weights)), None],
        };
        let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(JOINTS)).expect("valid mesh");
        let n = character.positions.len();
        Frame {
            character,
            skeleton,
            remap,
            mesh,
            locals: (
                vec![Vec3::ZERO; JOINTS],
                vec![Quat::IDENTITY; JOINTS],
                vec![Vec3::ONE; JOINTS],
            ),
            models: vec![Mat4::IDENTITY; JOINTS],
            palette: vec![PaletteMatrix::IDENTITY; JOINTS],
            out: (
                vec![Vec3::ZERO; n],
                vec![Vec3::ZERO; n],
                vec![Vec4::ZERO; n],
            ),
        }
    }

    /// Samples the pose at `time`, then local to model, palette and skinning with `backend`.
    fn run(&mut self, time: f32, backend: Backend) {
        // MERGE: use Character. This hand-written chain (local to model, palette with the joint remap,
        // skinning) becomes one `ispc_skinning::Character` frame once the library has it.
        let (_, q, _) = animated_pose(JOINTS, time, false, 11);
        // The bind translations with animated rotations, in level order.
        for level in 0..JOINTS {
            let original = self.skeleton.original_index(level).expect("in range");
            self.locals.0[level] = self.character.bind_translations[original];
            self.locals.1[level] = q[original];
        }
        let locals = Locals::Trs(Trs {
            translations: &self.locals.0,
            rotations: &self.locals.1,
            scales: &self.locals.2,
        });
        let mut ltm = LocalToModelJob::new(&self.skeleton, locals, &mut self.models);
        ltm.backend = backend;
        ltm.run().expect("valid pose");
        let mut pal = PaletteJob::new(
            &self.models,
            &self.character.inverse_binds,
            &mut self.palette,
        );
        (pal.joints, pal.backend) = (Some(&self.remap[..]), backend);
        pal.run().expect("valid palette");
        let out = SkinOutput::Separate {
            positions: &mut self.out.0,
            normals: Some(&mut self.out.1),
            tangents: Some(&mut self.out.2),
        };
        let mut skin = SkinningJob::new(&self.mesh, &self.palette, out);
        skin.backend = backend;
        skin.run().expect("valid skinning");
    }
}

/// Appends the `character_frame` rows: one whole frame of the default character on the reference and
/// every ISA.
pub fn rows(budget: Budget, isas: &[Isa], rows: &mut Vec<Row>) {
    let backends = backends(isas);
    // One frame state per backend, so that every candidate animates its own character.
    let frames: Vec<RefCell<(Frame, f32)>> = backends
        .iter()
        .map(|_| RefCell::new((Frame::new(), 0.0)))
        .collect();
    let n = frames[0].borrow().0.character.positions.len();
    let mut c: Vec<Box<dyn FnMut() + '_>> = backends
        .iter()
        .zip(&frames)
        .map(|(&(_, backend), f)| {
            Box::new(move || {
                let (frame, time) = &mut *f.borrow_mut();
                *time += 1.0 / 60.0;
                frame.run(*time, backend);
            }) as Box<dyn FnMut() + '_>
        })
        .collect();
    let times = median_ns_per_call(budget, &mut c);
    push_rows(rows, "character_frame", &backends, &times, n, Some(4));
}

/// Prints the default character's frame time and frames per second per backend.
pub fn print_summary(rows: &[Row]) {
    let frame = rows.iter().filter(|r| r.kernel == "character_frame");
    let mut first = true;
    for r in frame {
        if first {
            println!(
                "default character ({JOINTS} joints, {} vertices, 4 influences, positions + normals + tangents), whole frame (pose, local to model, palette, skin):",
                r.size
            );
            first = false;
        }
        println!(
            "  {:<9} {:>8.3} ms/frame  {:>7.0} fps  {:.2}x the reference",
            r.isa,
            r.ns_per_item * r.size as f64 * 1e-6,
            1e9 / (r.ns_per_item * r.size as f64),
            r.speedup()
        );
    }
    if !first {
        println!();
    }
}
