//! The `info` command: ISA overrides and their errors, through the binary as a user starts it.

mod common;

use common::binary;
use ispc_skinning::Isa;

fn run_info(isa_env: &str) -> std::process::Output {
    binary()
        .arg("info")
        .env("ISPC_SKINNING_ISA", isa_env)
        .output()
        .expect("run the ispc-skinning binary")
}

#[test]
fn info_with_an_isa_the_machine_cannot_run_exits_non_zero_with_a_message() {
    let foreign = if cfg!(target_arch = "aarch64") {
        "avx512"
    } else {
        "neon"
    };
    let mut cases = vec![foreign.to_string(), "bogus".to_string()];
    // Every compiled ISA this CPU lacks (AVX-512 on most machines) must fail the same way.
    cases.extend(
        Isa::compiled()
            .into_iter()
            .filter(|i| !i.is_available())
            .map(|i| i.name().to_string()),
    );
    for name in cases {
        let out = run_info(&name);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "ISPC_SKINNING_ISA={name}: {stderr}"
        );
        assert!(
            stderr.contains("ISPC_SKINNING_ISA"),
            "ISPC_SKINNING_ISA={name}: {stderr}"
        );
        assert!(
            !stderr.contains("panicked"),
            "ISPC_SKINNING_ISA={name}: {stderr}"
        );
    }
}

#[test]
fn info_honours_the_isa_override() {
    for isa in Isa::available() {
        let out = run_info(isa.name());
        assert!(out.status.success());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!("selected:  {}", isa.name())),
            "{stdout}"
        );
    }
    let out = run_info("reference");
    assert!(String::from_utf8_lossy(&out.stdout).contains("selected:  reference"));
}

/// A reader that goes away (`ispc-skinning info | head -1`) ends the command quietly and with success,
/// not with a panic and a backtrace on stderr. The pipe's read end is closed before the child starts,
/// so its first `println!` meets a broken pipe.
#[test]
fn a_closed_stdout_pipe_ends_quietly() {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = binary()
        .arg("info")
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
}
