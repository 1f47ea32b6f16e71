//! The commands other than `bench` (which is [`crate::report::run`]): `info` and `skin`, and the picture
//! `skin --out PATH.png` draws.

pub mod info;
#[cfg(feature = "gltf")]
pub mod render;
pub mod skin;
