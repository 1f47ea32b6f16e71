//! Skinning: mesh preparation ([`SkinnedMesh`](crate::SkinnedMesh)) from attribute input, and the
//! job ([`SkinningJob`](crate::SkinningJob)) that skins it with a palette into an output.

pub mod crowd;
pub mod input;
pub mod job;
pub mod mesh;
