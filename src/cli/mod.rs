pub mod bench;
pub mod info;
pub mod timing;
