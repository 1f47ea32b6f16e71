//! The command line, declared with clap: every command and flag, and the text of `--help`.

use crate::commands::compress::CompressArgs;
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
    /// Write every clip of a glTF file in compact form, as one clip set for `skin --clips`.
    Compress(CompressArgs),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::skin::ClipChoice;
    use crate::report::run::Section;
    use clap::CommandFactory;

    #[test]
    fn the_declaration_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_command_and_flag_parses() {
        let parse = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("ispc-skinning").chain(args.iter().copied()))
        };
        assert!(parse(&[]).unwrap().command.is_none());
        let Some(Command::Bench(o)) = parse(&[
            "bench", "--json", "a.json", "--plot", "b.svg", "--gltf", "c.glb", "--quick",
        ])
        .unwrap()
        .command
        else {
            panic!("bench");
        };
        assert_eq!(
            (
                o.json.as_deref(),
                o.plot.as_deref(),
                o.gltf.as_deref(),
                o.quick
            ),
            (Some("a.json"), Some("b.svg"), Some("c.glb"), true)
        );
        assert!(o.only.is_empty());
        let Some(Command::Bench(o)) = parse(&["bench", "--only", "compact,blend"])
            .unwrap()
            .command
        else {
            panic!("bench --only");
        };
        assert_eq!(o.only, [Section::Compact, Section::Blend]);
        assert!(parse(&["bench", "--only", "nothing"]).is_err());
        assert!(matches!(
            parse(&["info"]).unwrap().command,
            Some(Command::Info)
        ));
        let Some(Command::Compress(c)) = parse(&[
            "compress",
            "f.glb",
            "o.clips",
            "--tolerance",
            "0.001",
            "--distance",
            "0.1",
            "--sample-rate",
            "30",
        ])
        .unwrap()
        .command
        else {
            panic!("compress");
        };
        assert_eq!(
            (
                c.file.as_str(),
                c.out.as_str(),
                c.tolerance,
                c.distance,
                c.sample_rate
            ),
            ("f.glb", "o.clips", 0.001, 0.1, Some(30.0))
        );
        let Some(Command::Skin(s)) = parse(&[
            "skin",
            "f.glb",
            "--clip",
            "none",
            "--time",
            "-0.5",
            "--out",
            "x.png",
            "--reference",
            "--skinning",
            "dq",
        ])
        .unwrap()
        .command
        else {
            panic!("skin");
        };
        assert_eq!(
            (
                s.file.as_str(),
                s.clip,
                s.time,
                s.out.as_deref(),
                s.reference,
                s.skinning
            ),
            (
                "f.glb",
                Some(ClipChoice::None),
                -0.5,
                Some("x.png"),
                true,
                ispc_skinning::Skinning::DualQuaternion
            )
        );
        let Some(Command::Skin(s)) = parse(&["skin", "f.glb"]).unwrap().command else {
            panic!("skin");
        };
        assert_eq!(s.skinning, ispc_skinning::Skinning::Linear);
        // The last of --clip and --clip-name wins, as before clap.
        let Some(Command::Skin(s)) =
            parse(&["skin", "f.glb", "--clip-name", "Walk", "--clip", "2"])
                .unwrap()
                .command
        else {
            panic!("skin");
        };
        assert_eq!((s.clip, s.clip_name), (Some(ClipChoice::Index(2)), None));
        for bad in [
            &["bench", "--bogus"][..],
            &["info", "extra"],
            &["skin"],
            &["skin", "a.glb", "b.glb"],
            &["skin", "a.glb", "--time", "inf"],
            &["skin", "a.glb", "--clip", "x"],
            &["skin", "a.glb", "--isa", "mmx"],
            &["skin", "a.glb", "--isa", "sse4", "--reference"],
            &["skin", "a.glb", "--skinning", "lbz"],
            &["compress", "a.glb"],
            &["compress", "a.glb", "o", "--tolerance", "0"],
            &["compress", "a.glb", "o", "--sample-rate", "nan"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
