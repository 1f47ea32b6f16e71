//! Helpers shared by the lab's integration tests.

use std::process::Command;

/// The binary, started through the runner this test runs under (qemu for aarch64 or an emulated x86
/// CPU), so that it sees the same CPU as the test.
pub fn binary() -> Command {
    let var = format!(
        "CARGO_TARGET_{}_UNKNOWN_LINUX_GNU_RUNNER",
        std::env::consts::ARCH.to_uppercase()
    );
    let runner = std::env::var(var).unwrap_or_default();
    let mut words = runner.split_whitespace();
    match words.next() {
        Some(program) => {
            let mut cmd = Command::new(program);
            cmd.args(words).arg(env!("CARGO_BIN_EXE_ispc-skinning"));
            cmd
        }
        None => Command::new(env!("CARGO_BIN_EXE_ispc-skinning")),
    }
}
