//! The `ispc-skinning` command: `info` (ISAs and build) and `bench` (the main job's report).
//! With no arguments it runs `bench`.

mod cli;

use std::process::ExitCode;

const USAGE: &str = "\
usage: ispc-skinning [COMMAND]

commands:
  bench [--json PATH] [--plot PATH.svg] [--quick]
                                  run the benchmark report; with no command at all, the report
                                  also writes its chart to target/ispc-skinning-report.svg
  info                            show compiled, supported and selected ISAs
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
