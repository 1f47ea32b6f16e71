//! The lab of `ispc-skinning`: the `ispc-skinning` command (`info`, `skin`, `bench`), the benchmark
//! report, the glam baselines and the seeds' experiments that the report measures beside the product.
//!
//! The binary (`src/main.rs`) only parses its arguments with [`cli::Cli`] and calls into this library,
//! so that the tests can reach every part directly.
//!
//! - [`baseline`]: the loops a glam user writes, and the seeds' serial methods that lost;
//! - [`pipeline`]: [`pipeline::FramePipeline`], Davies' overlap of animation and skinning;
//! - [`report`]: the benchmark report (`bench`), one module per family of rows;
//! - [`commands`]: `info` and `skin`;
//! - [`output`]: how every output file is written: never over an input, never left half written;
//! - [`progress`]: the progress bars of long steps, drawn only on a terminal.

#![warn(missing_docs)]

pub mod baseline;
pub mod cli;
pub mod commands;
pub mod output;
pub mod pipeline;
pub mod progress;
pub mod report;
