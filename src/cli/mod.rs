pub mod bench;
pub mod hierarchy_bench;
pub mod info;
#[cfg(feature = "gltf")]
pub mod skin;
pub mod skin_bench;
pub mod timing;
