//! `ispc-skinning bench`: the benchmark report. Every row is measured in the same run as the serial
//! reference (`reference_ns_per_item`), so speedups are ratios taken under the same machine conditions.
//!
//! [`run`] orchestrates the families of rows ([`character`], [`gltf`], [`transform`], [`hierarchy`],
//! [`skinning`], [`pose`], [`compact`], [`morph`], [`renormalize`], [`davies`], [`blend`]); they share the vocabulary of [`row`] and [`timing`], and
//! the results are written by [`json`] and [`chart`]. With `--peers`, [`peer`] runs ozz-animation-rs in
//! the same round-robins as some of those rows. Only [`run`] imports the families, and nothing
//! imports [`run`].

pub mod blend;
pub mod character;
pub mod chart;
pub mod compact;
pub mod davies;
#[cfg(feature = "gltf")]
pub mod gltf;
#[cfg(feature = "gltf")]
pub mod gltf_crowd;
pub mod hierarchy;
pub mod json;
pub mod morph;
pub mod peer;
#[cfg(feature = "gltf")]
pub mod pose;
pub mod renormalize;
pub mod row;
pub mod run;
pub mod skinning;
pub mod timing;
pub mod transform;
