//! The `ispc-skinning` command: `info` (ISAs and build), `bench` (the report), `skin` (a glTF
//! character posed and skinned) and `compress` (a file's clips in compact form). With no arguments it runs `bench --plot target/ispc-skinning-report.svg`.
//!
//! This file only parses the arguments and calls into the `ispc_skinning_lab` library.

use clap::Parser;
use ispc_skinning_lab::cli::{Cli, Command, DEFAULT_PLOT};
use ispc_skinning_lab::commands::Failure;
use ispc_skinning_lab::{commands, report};
use std::process::ExitCode;

fn main() -> ExitCode {
    quiet_on_broken_pipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // --help and --version print to stdout and succeed; every other parse error is a usage error.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            eprint!("ispc-skinning: {}", e.render());
            return ExitCode::from(2);
        }
    };
    let result: Result<(), Failure> = match cli.command {
        None => report::run::run(&report::run::Options {
            plot: Some(DEFAULT_PLOT.into()),
            ..Default::default()
        })
        .map_err(Failure::from),
        Some(Command::Bench(options)) => report::run::run(&options).map_err(Failure::from),
        Some(Command::Info) => commands::info::run().map_err(Failure::from),
        Some(Command::Skin(args)) => commands::skin::run(&args),
        Some(Command::Compress(args)) => commands::compress::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure { code, message }) => {
            // One line, whatever the message holds, and no control character from a file.
            let line = message.replace('\n', " ");
            eprintln!("ispc-skinning: error: {}", ispc_skinning::Escaped(&line));
            ExitCode::from(code)
        }
    }
}

/// Ends the process quietly, with success, when stdout is a pipe whose reader has gone
/// (`ispc-skinning info | head -1`). Rust ignores SIGPIPE, so `println!` then panics with "failed
/// printing to stdout: Broken pipe"; a reader that stopped reading is the normal end of a pipeline, not
/// a crash with a backtrace. Every other panic goes to the default hook.
fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}
