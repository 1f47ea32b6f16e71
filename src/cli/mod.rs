pub mod bench;
pub mod character_bench;
pub mod davies_bench;
pub mod hierarchy_bench;
pub mod info;
pub mod plot;
pub mod skin_bench;
pub mod timing;
