//! The seeds' experiments that lost to the product's methods, kept so that the lab can measure them
//! against it in the same run, and the morph pre-pass ([`skin_with_prepass`]), which the product's
//! fused morph + skin pass replaced wherever that pass covers the call. Enabled by the `experiments` cargo feature, which only the lab turns on;
//! nothing here is part of the supported API, and it may change in any release.
//!
//! They live in this crate, not the lab, because they are ISPC kernels: they share the kernel build,
//! the per-ISA dispatch and the FFI layer with the product.

mod jobs;
pub mod level_sum;
mod meshes;
mod morph;
mod reference;
mod soa;

pub use jobs::{BaseVectorJob, BoneMajorJob};
pub use meshes::{BaseVectorMesh, BoneMajorMesh};
pub use morph::{skin_with_prepass, FusedMorphJob};
pub use soa::{local_to_model_soa, trs_to_soa, SoaMatrices, SoaMethod};
