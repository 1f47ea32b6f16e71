//! CPU skeletal animation with ISPC kernels compiled once per instruction set.
//!
//! `ispc-skinning` compiles its ISPC kernels for SSE4, AVX2 and AVX-512 on x86-64 and for NEON on aarch64,
//! links them all into one library, and picks the best one the CPU supports at run time. Every kernel has
//! a plain scalar Rust twin in [`reference`](mod@reference) that the tests compare each ISA against.
//!
//! # Conventions
//! These hold for the whole crate, as in glam:
//! - Matrices are [`glam::Mat4`]: column-major storage, column vectors, so a point is transformed as
//!   `m * (p, 1)` and `m.to_cols_array()[4 * column + row]` is one element.
//! - Positions are [`glam::Vec3`] (12 bytes, 4-byte aligned); homogeneous results are [`glam::Vec4`].
//! - No kernel assumes more than 4-byte alignment. Slices may start anywhere, including at odd offsets
//!   inside a larger buffer.
//! - Every entry point validates its input and returns an [`Error`] naming the broken rule; nothing
//!   panics and nothing writes outside the given slices.
//!
//! # What is here
//! - [`animation`](mod@animation): [`Clip`]s of translation, rotation, scale and morph-weight tracks
//!   built from plain arrays, and [`SamplingJob`], which samples one into a local pose.
//! - [`Character`] + [`Frame`]: a skeleton, rest pose, skins and meshes, and one frame of them, all in
//!   your own joint order (the usual entry point); [`CrowdFrame`] runs many instances at once.
//! - [`transform_points`] / [`transform_points3`]: a batch of positions times one matrix.
//! - [`Skeleton`]: a joint hierarchy in your order, re-indexed in level order inside (children and
//!   levels contiguous), with conversions both ways.
//! - [`LocalToModelJob`]: local transforms (matrices or TRS) to model matrices, with a root transform and
//!   partial (subtree) updates; [`CrowdLocalToModelJob`] does many instances of one skeleton at once.
//! - [`BlendingJob`]: N layers of local TRS poses blended into one, with per-joint weights, a rest-pose
//!   fallback below a threshold and additive layers (ozz-animation's semantics);
//!   [`CrowdBlendingJob`] blends many instances at once.
//! - [`PaletteJob`]: the skinning palette, `model * inverse_bind` per skin joint, in 64-byte rows;
//!   [`CrowdPaletteJob`] for every instance of a crowd.
//! - [`SkinnedMesh`] + [`SkinningJob`]: blended-matrix skinning of positions, normals and tangents
//!   (rigid for one-influence vertices), with renormalization, threads and streaming stores;
//!   [`CrowdSkinningJob`] for every instance of a crowd.
//! - [`morph_floats`] + [`MorphTargets`]: morph targets, base plus weighted deltas, before skinning.
//! - [`reference`](mod@reference): the serial Rust twin of every kernel.
//! - `gltf` (cargo feature `gltf`, on by default): glTF 2.0 characters, loaded, animated and skinned
//!   on the jobs above, one stage at a time or a whole frame at once.
//! - `experiments` (cargo feature, off by default, for the project's lab only): the seeds' methods
//!   that lost to the ones above, kept so that they can be measured against them, and the fused
//!   morph + skin pass measured against the morph pre-pass. Not a supported API.
//!
//! # Layers
//! The modules follow the pipeline, and each imports only from the layers below it:
//! `layout` (the memory forms the kernels read) and `isa` at the bottom, then `ffi` (the only module
//! with `unsafe`) and `reference`, then `skeleton`, `animation` (clips and sampling), local to model and
//! blending, `palette` and `skinning`, then `character`, and
//! `gltf` on top. Threading and streaming decisions are made by the jobs; the FFI carries them out.
//!
//! # Choosing who runs a call
//! Each job takes a [`Backend`] through its `.backend(..)` builder, and each [`Frame`] and [`CrowdFrame`]
//! through the same builder (or its `backend` field):
//! - [`Backend::Auto`]: `ISPC_SKINNING_ISA` if set, else [`Isa::detect`] (the best ISA that is compiled
//!   and supported), else the reference;
//! - [`Backend::Isa`]: one ISA, or [`Error::IsaUnavailable`] where it cannot run (never an illegal
//!   instruction);
//! - [`Backend::Reference`]: the serial Rust reference.
//!
//! ```
//! use ispc_skinning::Isa;
//! // The ISAs this build contains and this CPU can run, best first.
//! for isa in Isa::available() {
//!     println!("{isa}: ISPC target {}", isa.ispc_target().unwrap_or("?"));
//! }
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod animation;
pub mod backend;
pub mod blending;
mod character;
pub mod crowd_buffers;
mod error;
#[cfg(feature = "experiments")]
pub mod experiments;
mod ffi;
#[cfg(feature = "gltf")]
pub mod gltf;
mod isa;
mod layout;
pub mod local_to_model;
mod morph;
mod numeric;
pub mod palette;
pub mod reference;
mod skeleton;
pub mod skinning;
mod text;
mod transform;

/// The glam the API speaks, 0.34 (`ispc_skinning::glam::Mat4`, ...). Using this re-export, or the same glam
/// version in your own `Cargo.toml`, avoids two incompatible copies of glam's types.
pub use glam;

pub use animation::{
    AnyClip, Clip, ClipBuilder, ClipError, CompactClip, CompactContext, CompactSamplingJob,
    Compression, CrowdSamplingContext, CrowdSamplingJob, Interpolation, Property, SamplingContext,
    SamplingJob, Wrap, MAX_CLIP_FLOATS, MAX_COMPACT_FRAMES, MAX_COMPACT_VALUE,
    MAX_COMPACT_WEIGHT_SETS, MAX_COMPRESSION_POINTS, MAX_SAMPLE_RATE,
};
pub use backend::{
    Backend, CpuIdentity, CpuVendor, KernelFamily, Narrowing, Precision, Threads, AUTO_TABLE,
};
pub use blending::crowd::{CrowdBlendLayer, CrowdBlendingJob};
pub use blending::{BlendingJob, DEFAULT_BLEND_THRESHOLD};
pub use character::crowd::CrowdFrame;
pub use character::crowd_play::CrowdClipLayer;
pub use character::play::ClipLayer;
pub use character::{Character, CharacterSkin, Frame, RigidMesh, SkinnedVertices};
pub use crowd_buffers::{CrowdModels, CrowdPose};
pub use error::Error;
pub use ffi::Runnable;
pub use isa::{build_info, BuildInfo, Isa, Unavailable};
pub use layout::blend::BlendLayer;
pub use layout::crowd::{CROWD_LANES, MAX_CROWD_ELEMENTS, MAX_CROWD_INSTANCES, MAX_CROWD_JOINTS};
pub use layout::dual_quat::{DualQuatEntry, DUAL_QUAT_RIGID_TOLERANCE};
pub use layout::format::Format;
pub use layout::hierarchy::MAX_JOINTS;
pub use layout::mesh::{MAX_INFLUENCES, MAX_VERTICES};
pub use layout::output::{Renormalize, Skinning, VertexOutputs};
pub use layout::palette::PaletteMatrix;
pub use layout::trs::{Trs, TrsMut};
pub use local_to_model::crowd::CrowdLocalToModelJob;
pub use local_to_model::{LocalToModelJob, Locals, Method};
pub use morph::{morph_floats, MorphTargets};
pub use palette::crowd::{CrowdPaletteJob, CrowdPalettes};
pub use palette::{dual_quat_palette, palette_rows_3x4, PaletteJob};
pub use skeleton::Skeleton;
pub use skinning::crowd::CrowdSkinningJob;
pub use skinning::input::{Attribute, FlatInfluences, MeshInput, PrepareOptions, WeightPolicy};
pub use skinning::job::{SkinOutput, SkinPalette, SkinningJob};
pub use skinning::mesh::SkinnedMesh;
pub use text::Escaped;
pub use transform::{transform_points, transform_points3};

// The README's examples are compiled and run as doc tests, so they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
