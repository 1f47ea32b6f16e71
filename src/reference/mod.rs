//! The serial reference: plain scalar f32 Rust, written for clarity like the seeds' C versions.
//!
//! These functions are the truth that every ISPC kernel is tested against, and the baseline that every
//! "speedup" is measured against. They are always compiled. They take whole slices and process
//! `min(input.len(), output.len())` items; the checked entry points (for example
//! [`transform_points`](crate::transform_points)) validate lengths before calling them.

mod blend;
mod hierarchy;
mod morph;
mod palette;
mod skinning;
mod transform;

pub use blend::blend;
pub use hierarchy::{
    affine_inverse, affine_mul, local_to_model, local_to_model_trs, trs_matrix, Matrix,
};
pub use morph::morph_floats;
pub use palette::skin_palette;
pub(crate) use skinning::{skin, skin_dq};
pub use transform::{transform_points_vec3, transform_points_vec4};
