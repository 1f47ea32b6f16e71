//! Choosing what runs a kernel: the serial reference, one explicit ISA, or the automatic choice; and
//! how many threads a job uses.

use crate::error::Error;
use crate::ffi::Runnable;
use crate::isa::{Isa, Unavailable};
use std::sync::OnceLock;

/// Who runs a kernel call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// What [`Backend::selected`] returns: `ISPC_SKINNING_ISA` when set, else the best available ISA,
    /// else the serial reference.
    #[default]
    Auto,
    /// The serial Rust reference ([`reference`](mod@crate::reference)).
    Reference,
    /// One ISA's ISPC kernels. A call fails with [`Error::IsaUnavailable`] where the ISA cannot run.
    Isa(Isa),
}

impl From<Isa> for Backend {
    fn from(isa: Isa) -> Backend {
        Backend::Isa(isa)
    }
}

/// A backend that has been checked and can run now.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Resolved {
    Reference,
    Ispc(Runnable),
}

impl Resolved {
    /// The backend that resolves to this one again, for the checked entry points.
    pub(crate) fn backend(self) -> Backend {
        match self {
            Resolved::Reference => Backend::Reference,
            Resolved::Ispc(isa) => Backend::Isa(isa.isa()),
        }
    }

    /// The ISA's proof when this is one, for the numeric scans.
    pub(crate) fn runnable(self) -> Option<Runnable> {
        match self {
            Resolved::Reference => None,
            Resolved::Ispc(isa) => Some(isa),
        }
    }
}

impl Backend {
    /// What [`Backend::Auto`] means in this process, decided once and cached:
    /// - `ISPC_SKINNING_ISA=sse4|avx2|avx512|neon` selects that ISA, and is an error where it cannot run;
    /// - `ISPC_SKINNING_ISA=reference` selects the serial reference;
    /// - unset, empty or `auto` selects [`Isa::detect`], or the reference when no ISA can run.
    pub fn selected() -> Result<Backend, Error> {
        static SELECTED: OnceLock<Result<Backend, Error>> = OnceLock::new();
        SELECTED
            .get_or_init(|| {
                Backend::from_env_value(std::env::var("ISPC_SKINNING_ISA").ok().as_deref())
            })
            .clone()
    }

    /// The selection rule of [`Backend::selected`] applied to a given `ISPC_SKINNING_ISA` value.
    pub fn from_env_value(value: Option<&str>) -> Result<Backend, Error> {
        match value.map(str::trim) {
            None | Some("") => Ok(Backend::detected()),
            Some(v) if v.eq_ignore_ascii_case("auto") => Ok(Backend::detected()),
            Some(v) if v.eq_ignore_ascii_case("reference") => Ok(Backend::Reference),
            Some(v) => {
                let isa: Isa = v.parse()?;
                isa.runnable()?;
                Ok(Backend::Isa(isa))
            }
        }
    }

    fn detected() -> Backend {
        Isa::detect().map_or(Backend::Reference, Backend::Isa)
    }

    /// Resolves `Auto` and checks an explicit ISA.
    pub(crate) fn resolve(self) -> Result<Resolved, Error> {
        match self {
            Backend::Auto => Backend::selected()?.resolve(),
            Backend::Reference => Ok(Resolved::Reference),
            Backend::Isa(isa) => Ok(Resolved::Ispc(isa.runnable()?)),
        }
    }

    /// The crate-wide name: `reference`, an ISA name, or `auto`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Reference => "reference",
            Backend::Isa(isa) => isa.name(),
        }
    }
}

impl Isa {
    /// A proof that the ISA can run, or the reason it cannot.
    ///
    /// # Errors
    /// [`Error::IsaUnavailable`] with [`Unavailable::NotCompiled`] or
    /// [`Unavailable::MissingCpuFeatures`].
    pub fn runnable(self) -> Result<Runnable, Error> {
        if !self.is_compiled() {
            return Err(Error::IsaUnavailable {
                isa: self,
                reason: Unavailable::NotCompiled,
            });
        }
        Runnable::new(self).ok_or_else(|| Error::IsaUnavailable {
            isa: self,
            reason: Unavailable::MissingCpuFeatures(self.missing_cpu_features()),
        })
    }
}

impl std::str::FromStr for Isa {
    type Err = Error;
    fn from_str(s: &str) -> Result<Isa, Error> {
        Isa::from_name(s).ok_or_else(|| Error::UnknownIsaName(s.to_string()))
    }
}

/// How many threads a job uses. Every job gives bit-identical results either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Threads {
    /// The calling thread only.
    #[default]
    One,
    /// Every thread of rayon's global pool (or of the pool the job is called from), a block of work per
    /// task.
    All,
}

impl Threads {
    /// The most tasks a job splits its work into: 1, or the threads of the current rayon pool.
    pub(crate) fn tasks(self) -> usize {
        match self {
            Threads::One => 1,
            Threads::All => rayon::current_num_threads().max(1),
        }
    }
}
