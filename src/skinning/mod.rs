//! Skinning: mesh preparation ([`SkinnedMesh`](crate::SkinnedMesh)) from attribute input, and the
//! job ([`SkinningJob`](crate::SkinningJob)) that skins it with a palette into an output.

pub(crate) mod crowd;
pub(crate) mod input;
pub(crate) mod job;
pub(crate) mod mesh;
