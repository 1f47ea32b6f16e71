//! The commands other than `bench` (which is [`crate::report::run`]): `info`, `skin` and `compress`,
//! and the picture `skin --out PATH.png` draws.

use ispc_skinning::Backend;

#[cfg(feature = "gltf")]
pub mod blend;
pub mod compress;
pub mod info;
#[cfg(feature = "gltf")]
pub mod render;
pub mod skin;
#[cfg(feature = "gltf")]
pub mod skin_output;

/// Why a command failed, and the exit status that says so: 2 for a request that cannot be carried out
/// as asked (bad options, an ISA this CPU lacks, an unknown output type), 1 for an input file that is
/// broken, hostile or over a limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The exit status.
    pub code: u8,
    /// The one-line message.
    pub message: String,
}

impl Failure {
    /// A failure caused by the input file (exit status 1).
    pub fn input(message: impl Into<String>) -> Failure {
        Failure {
            code: 1,
            message: message.into(),
        }
    }
}

/// What `Backend::Auto` follows here ([`Backend::selected`]), its error named after the variable that
/// set it: `info`, `skin` and `bench` check it before any work, as a request that cannot be carried out.
///
/// # Errors
/// When `ISPC_SKINNING_ISA` names an ISA that cannot run here, or none.
pub fn isa_override() -> Result<Backend, String> {
    Backend::selected().map_err(|e| format!("ISPC_SKINNING_ISA: {e}"))
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure { code: 2, message }
    }
}
