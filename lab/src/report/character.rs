//! The embedded default scene: a procedural humanoid of 67 joints with 20,592 vertices (4 influences,
//! positions, normals and tangents). Row `character_frame`: one whole frame, from the animated local pose
//! through local to model and the palette (with the skin-to-skeleton joint remap) to skinning, on the
//! reference and every ISA; the summary gives frames per second.

use crate::report::row::{backends, push_rows, Row};
use crate::report::timing::{median_ns_per_call, Budget};
use glam::{Quat, Vec3};
use ispc_skinning::{
    Attribute, Backend, Character, CharacterSkin, Isa, MeshInput, PrepareOptions, Renormalize,
    Skeleton, SkinnedMesh,
};
use scenes::{animated_pose, character};
use std::cell::RefCell;

/// Joints of the default character.
pub const JOINTS: usize = 67;
const RINGS: usize = 13;
const SEGMENTS: usize = 24;

/// The default character on the library's [`ispc_skinning::Character`] runtime, with its reusable
/// frame buffers.
struct Frame {
    scene: scenes::Character,
    character: Character,
    frame: ispc_skinning::Frame,
}

impl Frame {
    fn new() -> Frame {
        let scene = character(JOINTS, RINGS, SEGMENTS);
        let skeleton = Skeleton::from_parents(&scene.parents).expect("a valid rig");
        // Skin joint i is the rig's joint i, in the rig's own order, as the runtime takes it.
        let input = MeshInput::new(
            Attribute::vec3(&scene.positions),
            Attribute::joints_u16(&scene.joints),
            Attribute::weights_f32(&scene.weights),
        )
        .normals(Attribute::vec3(&scene.normals))
        .tangents(Attribute::vec4(&scene.tangents));
        let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(JOINTS)).expect("valid mesh");
        let skin = CharacterSkin {
            joints: (0..JOINTS).collect(),
            inverse_binds: scene.inverse_binds.clone(),
        };
        let character = Character::new(
            skeleton,
            scene.bind_translations.clone(),
            vec![Quat::IDENTITY; JOINTS],
            vec![Vec3::ONE; JOINTS],
            vec![skin],
            vec![(mesh, 0)],
        )
        .expect("a valid character");
        // This row has always measured skinning without renormalization.
        let frame = character.frame_buffers().renormalize(Renormalize::None);
        Frame {
            scene,
            character,
            frame,
        }
    }

    /// Samples the pose at `time` (animated rotations over the bind translations), then one frame of
    /// the runtime: local to model, palette and skinning with `backend`.
    fn run(&mut self, time: f32, backend: Backend) {
        let (_, q, _) = animated_pose(JOINTS, time, false, 11);
        for (joint, &rotation) in q.iter().enumerate() {
            let (t, _, s) = self.frame.local(joint).expect("in range");
            self.frame
                .set_local(joint, t, rotation, s)
                .expect("in range");
        }
        self.frame.backend = backend;
        self.character
            .evaluate(&mut self.frame)
            .expect("a valid frame");
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
    let n = frames[0].borrow().0.scene.positions.len();
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
