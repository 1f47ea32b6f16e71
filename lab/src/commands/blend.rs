//! `skin FILE --blend CLIP:WEIGHT[,CLIP:WEIGHT...] --time T`: samples each clip's local pose at time T,
//! blends them with [`BlendingJob`] (the rest pose below the default threshold, as the library
//! documents), then runs the rest of the frame (local to model, palettes, skinning) on the result.
//!
//! CLIP is a clip index or a clip name; WEIGHT a number. A weight that is NaN or negative reaches the
//! job and is refused there with its typed error.
//!
//! Each entry holds one whole local pose (every node's translation, rotation and scale) until the job
//! runs, so the list is bounded: at most [`MAX_BLEND_ENTRIES`] entries, and a longer one is a usage
//! error (exit status 2) that names the limit, refused while the arguments are parsed.

#![cfg(feature = "gltf")]

use super::Failure;
use ispc_skinning::gltf::{Frame, GltfScene, Wrap};
use ispc_skinning::{Backend, BlendLayer, BlendingJob, Escaped, Trs, TrsMut};

/// The most `CLIP:WEIGHT` entries `--blend` takes: 64. Each entry keeps a whole pose in memory (40 bytes
/// per node, so at most 2.5 MiB at the default 65,536-node limit, 160 MiB for the whole list), and a
/// blend of more than a few clips is not something a user asks for.
pub const MAX_BLEND_ENTRIES: usize = 64;

/// One `CLIP:WEIGHT` of `--blend`.
#[derive(Clone, Debug, PartialEq)]
pub struct BlendEntry {
    /// The clip: an index, or a name when it is not a number.
    pub clip: String,
    /// Its weight.
    pub weight: f32,
}

/// The whole `--blend` list, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct BlendSpec(pub Vec<BlendEntry>);

impl std::fmt::Display for BlendSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}clip {} weight {}", Escaped(&e.clip), e.weight)?;
        }
        Ok(())
    }
}

/// Parses `CLIP:WEIGHT[,CLIP:WEIGHT...]`. The weight follows the last `:`, so clip names may contain `:`.
///
/// # Errors
/// A malformed entry, or more than [`MAX_BLEND_ENTRIES`] entries (counted before any is kept).
pub fn parse_blend(v: &str) -> Result<BlendSpec, String> {
    let count = v.split(',').count();
    if count > MAX_BLEND_ENTRIES {
        return Err(format!(
            "--blend takes at most {MAX_BLEND_ENTRIES} CLIP:WEIGHT entries (MAX_BLEND_ENTRIES), not {count}"
        ));
    }
    let entries = v
        .split(',')
        .map(|e| {
            let (clip, weight) = e.rsplit_once(':').ok_or_else(|| {
                format!(
                    "--blend takes CLIP:WEIGHT[,CLIP:WEIGHT...], not '{}'",
                    Escaped(e)
                )
            })?;
            let weight = weight.trim().parse::<f32>().map_err(|_| {
                format!(
                    "--blend: '{}' is not a weight (in '{}')",
                    Escaped(weight),
                    Escaped(e)
                )
            })?;
            if clip.is_empty() {
                return Err(format!("--blend: no clip before ':' in '{}'", Escaped(e)));
            }
            Ok(BlendEntry {
                clip: clip.to_string(),
                weight,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(BlendSpec(entries))
}

/// The clip an entry names, by index or by name.
fn clip_index(scene: &GltfScene, clip: &str) -> Result<usize, Failure> {
    let index = match clip.parse::<usize>() {
        Ok(i) => Some(i),
        Err(_) => scene.find_clip(clip),
    };
    index.filter(|&i| i < scene.clips().len()).ok_or_else(|| {
        Failure::from(format!(
            "--blend: no clip '{}' (the file has {} clip(s))",
            Escaped(clip),
            scene.clips().len()
        ))
    })
}

/// Samples each clip of `spec` at `time`, blends them into `frame`'s local pose on `backend`, and
/// evaluates the rest of the frame.
///
/// # Errors
/// A clip that is not there or a weight the job refuses (status 2); a frame that fails to evaluate
/// (status 1).
pub fn evaluate(
    scene: &GltfScene,
    spec: &BlendSpec,
    time: f32,
    backend: Backend,
    frame: &mut Frame,
) -> Result<(), Failure> {
    let input = |e: ispc_skinning::Error| Failure::input(e.to_string());
    let copy = |frame: &Frame| {
        let (t, q, s) = frame.level_pose();
        (t.to_vec(), q.to_vec(), s.to_vec())
    };
    scene
        .sample(None, time, Wrap::Clamp, frame)
        .map_err(input)?;
    let rest = copy(frame);
    let mut poses = Vec::with_capacity(spec.0.len());
    for entry in &spec.0 {
        let clip = clip_index(scene, &entry.clip)?;
        scene
            .sample(Some(clip), time, Wrap::Clamp, frame)
            .map_err(input)?;
        poses.push(copy(frame));
    }
    let layers: Vec<BlendLayer<'_>> = poses
        .iter()
        .zip(&spec.0)
        .map(|((t, q, s), e)| BlendLayer::new(Trs::new(t, q, s), e.weight))
        .collect();
    let precision = frame.precision;
    let (t, q, s) = frame.level_pose_mut();
    BlendingJob::new(
        scene.skeleton(),
        Trs::new(&rest.0, &rest.1, &rest.2),
        TrsMut::new(t, q, s),
    )
    .layers(&layers)
    .backend(backend)
    .precision(precision)
    .run()
    .map_err(|e| Failure::from(format!("--blend: {e}")))?;
    scene.local_to_model(frame).map_err(input)?;
    scene.palettes(frame).map_err(input)?;
    scene.skin(frame).map_err(input)?;
    scene.rigid(frame).map_err(input)
}
