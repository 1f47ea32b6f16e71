pub mod bench;
pub mod davies_bench;
pub mod hierarchy_bench;
pub mod info;
pub mod skin_bench;
pub mod timing;
