//! The data layouts that the FFI, the serial reference and the jobs share: the bottom layer of the
//! crate, importing nothing from it. Each type here is the exact memory form a kernel reads or writes.

pub(crate) mod blend;
pub(crate) mod bounds;
pub(crate) mod compact;
pub(crate) mod crowd;
pub(crate) mod dual_quat;
pub(crate) mod format;
pub(crate) mod hierarchy;
pub(crate) mod mesh;
pub(crate) mod output;
pub(crate) mod palette;
pub(crate) mod pose_tracks;
pub(crate) mod tracks;
pub(crate) mod trs;
