//! The ISA parity runner: every check becomes one test per ISA named `<kernel>::<isa>`. An ISA that is
//! not compiled in, or that this CPU cannot run, becomes an *ignored* test, and the reason is printed
//! before the tests run; it is never counted as passed. (`cargo test -- --ignored` runs them anyway and
//! they fail with the reason.)

use ispc_skinning::{Backend, Isa};
use libtest_mimic::{Arguments, Failed, Trial};

/// Sizes every kernel is checked at: empty, single, around each gang width (4, 8 and 16 lanes), around
/// the four-group blocks of the horizontal kernels (4, 8 and 16 vertices for those widths, with their
/// remainder loops), and large: 65,536, or the value of `ISPC_SKINNING_PARITY_LARGE` (at least 1,001).
/// CI sets that to 4,099 only for the runs on qemu's emulated CPUs, where the full size takes minutes
/// per kernel; the native runs always use 65,536.
pub fn sizes() -> &'static [usize] {
    static SIZES: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    SIZES.get_or_init(|| {
        let large = match std::env::var("ISPC_SKINNING_PARITY_LARGE") {
            Ok(v) => match v.parse::<usize>() {
                Ok(n) if n > 1000 => n,
                _ => panic!("ISPC_SKINNING_PARITY_LARGE={v:?}: expected an integer above 1000"),
            },
            Err(_) => 65_536,
        };
        let mut sizes = vec![
            0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 1000,
        ];
        sizes.push(large);
        sizes
    })
}

/// Start offsets (in items) into a larger buffer: 12-byte items at offsets 0..=3 start at every 4-byte
/// position modulo 16, so most slices are not 16-byte aligned.
pub const OFFSETS: &[usize] = &[0, 1, 2, 3];

/// A check of one kernel on one ISA. It returns a short summary on success, or a message that shows the
/// actual difference on failure.
pub type Check = fn(Isa) -> Result<String, String>;

/// Prints which ISAs run and which do not (with the reason), then runs every check on every ISA.
pub fn run(checks: &[(&'static str, Check)]) -> ! {
    let args = Arguments::from_args();
    if !args.list {
        println!("ISA parity harness (reference: serial Rust):");
        for isa in Isa::ALL {
            match isa.runnable() {
                Ok(_) => println!(
                    "  {isa:<7} runs  (ISPC target {})",
                    isa.ispc_target().unwrap_or("?")
                ),
                Err(e) => println!("  {isa:<7} NOT RUN: {e}"),
            }
        }
        match Backend::selected() {
            Ok(b) => println!("  Backend::Auto selects: {}", b.name()),
            Err(e) => println!("  Backend::Auto: {e}"),
        }
    }
    let mut trials = Vec::new();
    for &(kernel, check) in checks {
        for isa in Isa::ALL {
            let trial = Trial::test(format!("{kernel}::{isa}"), move || match check(isa) {
                Ok(_) => Ok(()),
                Err(msg) => Err(Failed::from(msg)),
            });
            trials.push(trial.with_ignored_flag(!isa.is_available()));
        }
    }
    libtest_mimic::run(&args, trials).exit()
}
