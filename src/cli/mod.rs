pub mod bench;
pub mod hierarchy_bench;
pub mod info;
pub mod timing;
