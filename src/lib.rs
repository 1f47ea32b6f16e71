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
//! - [`transform_points`] / [`transform_points3`]: a batch of positions times one matrix.
//! - [`Skeleton`]: a joint hierarchy re-indexed in level order (children and levels contiguous).
//! - [`LocalToModelJob`]: local transforms (matrices or TRS) to model matrices, with a root transform and
//!   partial (subtree) updates; [`CrowdLocalToModelJob`] does many instances of one skeleton at once.
//! - [`PaletteJob`]: the skinning palette, `model * inverse_bind` per skin joint, in 64-byte rows.
//! - [`SkinnedMesh`] + [`SkinningJob`]: blended-matrix skinning of positions, normals and tangents
//!   (rigid for one-influence vertices), with renormalization, threads and streaming stores;
//!   [`BaseVectorJob`] (van Waveren's weighted base vectors) and [`BoneMajorJob`] (per-bone vertex
//!   lists) for positions only; [`FramePipeline`] overlaps the next frame's pose with this frame's
//!   skinning.
//! - [`reference`](mod@reference): the serial Rust twin of every kernel; [`baseline`]: the glam loops users write;
//!   [`scene`]: procedural rigs and poses; [`level_sum`]: the level-order seed's own benchmark.
//! - `gltf` (cargo feature `gltf`, on by default): glTF 2.0 characters, loaded, animated and skinned
//!   on the jobs above, one stage at a time or a whole frame at once.
//!
//! # Choosing who runs a call
//! Each entry point takes a [`Backend`]:
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

mod backend;
pub mod crowd;
mod error;
#[cfg(feature = "experiments")]
pub mod experiments;
mod ffi;
#[cfg(feature = "gltf")]
pub mod gltf;
pub mod hierarchy;
mod isa;
pub mod mesh;
pub mod palette;
pub mod reference;
pub mod skeleton;
pub mod skin;
mod transform;

/// The glam version this crate's API takes, so that users can name its types without a second dependency.
pub use glam;

pub use backend::Backend;
pub use crowd::{CrowdLocalToModelJob, CrowdModels, CrowdPose, Threads};
pub use error::Error;
pub use hierarchy::{local_to_model_soa, LocalToModelJob, Locals, Method, SoaMatrices, Trs};
pub use isa::{Isa, Runnable, Unavailable};
pub use mesh::{
    Attribute, BaseVectorMesh, BoneMajorMesh, Format, MeshInput, PrepareOptions, SkinnedMesh,
    WeightPolicy,
};
pub use palette::{PaletteJob, PaletteMatrix};
pub use skeleton::Skeleton;
pub use skin::{BaseVectorJob, BoneMajorJob, Renormalize, SkinOutput, SkinningJob};
pub use transform::{transform_points, transform_points3};

// The README's examples are compiled and run as doc tests, so they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// How the kernels in this binary were built.
#[derive(Clone, Copy, Debug)]
pub struct BuildInfo {
    /// `compiled with ISPC <version>` or `prebuilt ISPC <version> kernels`.
    pub kernels: &'static str,
    /// The ISPC targets, comma separated, for example `sse4-i32x4,avx2-i32x8,avx512skx-x16`.
    pub targets: &'static str,
}

/// How the kernels in this binary were built.
pub fn build_info() -> BuildInfo {
    BuildInfo {
        kernels: env!("ISPC_SKINNING_BUILD_KERNELS"),
        targets: env!("ISPC_SKINNING_BUILD_TARGETS"),
    }
}

/// The crate ISA of an ISPC target string such as `avx2-i32x16`.
fn isa_of_ispc_target(target: &str) -> Option<Isa> {
    match target.split('-').next()? {
        "sse4" | "sse4.2" => Some(Isa::Sse4),
        "avx2" => Some(Isa::Avx2),
        "avx512skx" => Some(Isa::Avx512),
        "neon" => Some(Isa::Neon),
        _ => None,
    }
}
