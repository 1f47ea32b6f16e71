//! The crate's one error type. Every variant names the rule that the input broke.

use crate::isa::{Isa, Unavailable};
use std::fmt;

/// What went wrong. Each variant's documentation states the rule it reports.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// Rule: the output slice has exactly as many items as the input slice.
    LengthMismatch {
        /// Items in the input.
        input: usize,
        /// Items in the output.
        output: usize,
    },
    /// Rule: an ISA runs only when its kernels are compiled in and the CPU has every feature it needs.
    IsaUnavailable {
        /// The ISA that was asked for.
        isa: Isa,
        /// Why it cannot run here.
        reason: Unavailable,
    },
    /// Rule: an ISA name is one of `sse4`, `avx2`, `avx512`, `neon`, or for `ISPC_SKINNING_ISA` also
    /// `reference` or `auto`.
    UnknownIsaName(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::LengthMismatch { input, output } => write!(
                f,
                "length mismatch: the output must have as many items as the input, but the input has {input} and the output {output}"
            ),
            Error::IsaUnavailable { isa, reason } => write!(f, "ISA '{isa}' cannot run here: {reason}"),
            Error::UnknownIsaName(name) => write!(
                f,
                "unknown ISA name '{name}': expected sse4, avx2, avx512, neon, reference or auto"
            ),
        }
    }
}

impl std::error::Error for Error {}
