//! The `ispc-skinning` command: `info` (ISAs and build), `bench` (the main job's report) and `skin`
//! (a glTF character posed and skinned).
//! With no arguments it runs `bench`.

mod cli;

use std::process::ExitCode;

const USAGE: &str = "\
usage: ispc-skinning [COMMAND]

commands:
  bench [--json PATH] [--plot PATH.svg] [--gltf FILE] [--quick]
                                  run the benchmark report; with no command at all, the report
                                  also writes its chart to target/ispc-skinning-report.svg
  info                            show compiled, supported and selected ISAs, and the cargo features
  skin FILE [--clip N|--clip-name S|--clip none] [--time T] [--out PATH] [--isa NAME|--reference]
                                  pose a glTF character (.gltf or .glb) and skin every skinned
                                  primitive: clip 0 (if any) at time 0 by default, times outside the
                                  clip hold its ends, '--clip none' is the rest pose. --out PATH.json
                                  writes world-space positions and normals, .obj the skinned geometry,
                                  .png a shaded picture; without --out, a summary. --isa sse4|avx2|
                                  avx512|neon or --reference choose who runs it (default: auto)
  help                            show this text

environment:
  ISPC_SKINNING_ISA=sse4|avx2|avx512|neon|reference|auto   force what Backend::Auto runs";

/// Where `cargo run --release` (no arguments) writes the report's chart.
const DEFAULT_PLOT: &str = "target/ispc-skinning-report.svg";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, rest) = match args.split_first() {
        Some((c, rest)) => (c.as_str(), rest),
        None => ("bench", &[][..]),
    };
    let default_plot = ["--plot".to_string(), DEFAULT_PLOT.to_string()];
    let rest = if args.is_empty() {
        &default_plot[..]
    } else {
        rest
    };
    let result = match command {
        "bench" => cli::bench::main(rest),
        "info" => cli::info::main(rest),
        #[cfg(feature = "gltf")]
        "skin" => cli::skin::main(rest),
        #[cfg(not(feature = "gltf"))]
        "skin" => {
            Err("this binary was built without the 'gltf' cargo feature, which 'skin' needs".into())
        }
        "help" | "-h" | "--help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command '{other}'\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("ispc-skinning: error: {msg}");
            ExitCode::from(2)
        }
    }
}
