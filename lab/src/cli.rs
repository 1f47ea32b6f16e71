//! The command line, declared with clap: every command and flag, and the text of `--help`.

use crate::commands::skin::SkinArgs;
use crate::report::run::Options;
use clap::{Parser, Subcommand};

/// Where `ispc-skinning` with no arguments (as `cargo run --release` starts it) writes the chart.
pub const DEFAULT_PLOT: &str = "target/ispc-skinning-report.svg";

/// CPU skeletal animation with ISPC kernels: the build's ISAs, a glTF character skinned, and the
/// benchmark report.
#[derive(Debug, Parser)]
#[command(
    name = "ispc-skinning",
    version,
    after_help = "With no command, runs `bench --plot target/ispc-skinning-report.svg`.\n\n\
Environment:\n  ISPC_SKINNING_ISA=sse4|avx2|avx512|neon|reference|auto   force what Backend::Auto runs"
)]
pub struct Cli {
    /// The command to run; none runs the report and writes its chart to the default path.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The commands of `ispc-skinning`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the benchmark report: every kernel against the serial reference, on every ISA here.
    Bench(Options),
    /// Show the compiled, supported and selected ISAs, and the cargo features.
    Info,
    /// Pose a glTF character (.gltf or .glb) and skin every skinned primitive.
    Skin(SkinArgs),
}
