//! Which ISPC instruction sets were compiled in, which ones this CPU can run, and which one is used.
//!
//! Detection happens once per process and is cached. Nothing here executes an instruction the CPU lacks:
//! a kernel runs only through a [`Runnable`] proof, and the only way to get one is [`Isa::runnable`],
//! which checks both that the ISA was built and that every CPU feature its ISPC target needs is present.

use crate::error::Error;
use crate::ffi::{self, Kernels};
use std::fmt;
use std::sync::OnceLock;

/// An instruction set the ISPC kernels are compiled for. The same names are used everywhere: in the
/// exported ISPC symbols (`transform_points_vec4_avx2`), test names, bench ids and `ISPC_SKINNING_ISA`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Isa {
    /// ISPC `sse4-*` targets (SSE4.2 and POPCNT), x86-64.
    Sse4,
    /// ISPC `avx2-*` targets (the Haswell set: AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE), x86-64.
    Avx2,
    /// ISPC `avx512skx-*` targets (the Skylake-X set: AVX-512 F, CD, BW, DQ and VL on top of AVX2), x86-64.
    Avx512,
    /// ISPC `neon-*` targets, aarch64.
    Neon,
}

/// Why an [`Isa`] cannot run here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unavailable {
    /// The build did not compile kernels for this ISA (another architecture, or left out of
    /// `ISPC_SKINNING_TARGETS`).
    NotCompiled,
    /// The kernels are linked, but the CPU (or the OS) lacks these features.
    MissingCpuFeatures(Vec<&'static str>),
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::NotCompiled => write!(
                f,
                "not compiled into this build (target arch {}, ISPC targets '{}')",
                std::env::consts::ARCH,
                crate::build_info().targets
            ),
            Unavailable::MissingCpuFeatures(missing) => {
                write!(f, "this CPU lacks {}", missing.join(", "))
            }
        }
    }
}

/// Proof that an ISA's kernels are linked into this binary and that this CPU can execute them.
/// Only [`Isa::runnable`] creates one, so holding it makes a kernel call safe with respect to the ISA.
#[derive(Clone, Copy, Debug)]
pub struct Runnable {
    isa: Isa,
    kernels: &'static Kernels,
}

impl Runnable {
    /// The ISA this proof is for.
    pub fn isa(self) -> Isa {
        self.isa
    }

    pub(crate) fn kernels(self) -> &'static Kernels {
        self.kernels
    }
}

impl Isa {
    /// Every ISA, best first within each architecture.
    pub const ALL: [Isa; 4] = [Isa::Avx512, Isa::Avx2, Isa::Sse4, Isa::Neon];

    /// The crate-wide name: `sse4`, `avx2`, `avx512` or `neon`.
    pub const fn name(self) -> &'static str {
        match self {
            Isa::Sse4 => "sse4",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
        }
    }

    /// Parses a crate-wide ISA name (case-insensitive).
    pub fn from_name(name: &str) -> Option<Isa> {
        Isa::ALL
            .into_iter()
            .find(|isa| isa.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The ISPC target this ISA was compiled with, such as `avx2-i32x8`, or `None` when not compiled.
    pub fn ispc_target(self) -> Option<&'static str> {
        crate::build_info()
            .targets
            .split(',')
            .find(|t| !t.is_empty() && crate::isa_of_ispc_target(t) == Some(self))
    }

    /// True when this build contains kernels for the ISA.
    pub fn is_compiled(self) -> bool {
        ffi::kernels_for(self).is_some()
    }

    /// The CPU features the ISA's ISPC target needs that this CPU lacks (empty when it has them all).
    /// An ISA of another architecture lacks all of its features.
    pub fn missing_cpu_features(self) -> Vec<&'static str> {
        cpu::missing_features(self)
    }

    /// True when this build contains the ISA and this CPU can run it (cached after the first call).
    pub fn is_available(self) -> bool {
        available_table()[self as usize]
    }

    /// A proof that the ISA can run, or the reason it cannot.
    pub fn runnable(self) -> Result<Runnable, Error> {
        let kernels = ffi::kernels_for(self).ok_or(Error::IsaUnavailable {
            isa: self,
            reason: Unavailable::NotCompiled,
        })?;
        if !self.is_available() {
            let reason = Unavailable::MissingCpuFeatures(self.missing_cpu_features());
            return Err(Error::IsaUnavailable { isa: self, reason });
        }
        Ok(Runnable { isa: self, kernels })
    }

    /// Checked constructor: `Some(Isa::Sse4)` only where SSE4 kernels are compiled and the CPU runs them.
    pub fn sse4() -> Option<Isa> {
        Isa::Sse4.is_available().then_some(Isa::Sse4)
    }

    /// Checked constructor: `Some(Isa::Avx2)` only where AVX2 kernels are compiled and the CPU runs them.
    pub fn avx2() -> Option<Isa> {
        Isa::Avx2.is_available().then_some(Isa::Avx2)
    }

    /// Checked constructor: `Some(Isa::Avx512)` only where AVX-512 kernels are compiled and the CPU runs them.
    pub fn avx512() -> Option<Isa> {
        Isa::Avx512.is_available().then_some(Isa::Avx512)
    }

    /// Checked constructor: `Some(Isa::Neon)` only where NEON kernels are compiled and the CPU runs them.
    pub fn neon() -> Option<Isa> {
        Isa::Neon.is_available().then_some(Isa::Neon)
    }

    /// Every ISA that is both compiled and supported, best first.
    pub fn available() -> Vec<Isa> {
        Isa::ALL
            .into_iter()
            .filter(|isa| isa.is_available())
            .collect()
    }

    /// Every ISA compiled into this build, best first.
    pub fn compiled() -> Vec<Isa> {
        Isa::ALL
            .into_iter()
            .filter(|isa| isa.is_compiled())
            .collect()
    }

    /// The best ISA that is compiled and supported, or `None` when no ISPC kernel can run here (then the
    /// crate uses the serial reference). Ignores `ISPC_SKINNING_ISA`; see [`Backend::selected`].
    /// The answer is computed once and cached.
    ///
    /// [`Backend::selected`]: crate::Backend::selected
    pub fn detect() -> Option<Isa> {
        Isa::ALL.into_iter().find(|isa| isa.is_available())
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Isa {
    type Err = Error;
    fn from_str(s: &str) -> Result<Isa, Error> {
        Isa::from_name(s).ok_or_else(|| Error::UnknownIsaName(s.to_string()))
    }
}

/// `available_table()[isa as usize]`: compiled and supported, computed once.
fn available_table() -> &'static [bool; 4] {
    static TABLE: OnceLock<[bool; 4]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = [false; 4];
        for isa in Isa::ALL {
            table[isa as usize] = isa.is_compiled() && cpu::missing_features(isa).is_empty();
        }
        table
    })
}

/// CPU feature checks. Each list is what the matching ISPC target lets LLVM use, so having all of them
/// is what makes the kernel safe to run. std's detection also checks that the OS saves the wide registers.
mod cpu {
    use super::Isa;

    #[cfg(target_arch = "x86_64")]
    pub(super) fn missing_features(isa: Isa) -> Vec<&'static str> {
        macro_rules! missing {
            ($($feature:tt),+) => {{
                let mut missing = Vec::new();
                $(if !std::arch::is_x86_feature_detected!($feature) { missing.push($feature); })+
                missing
            }};
        }
        match isa {
            Isa::Sse4 => missing!("sse4.1", "sse4.2", "popcnt"),
            Isa::Avx2 => missing!(
                "sse4.2", "popcnt", "avx", "avx2", "fma", "f16c", "bmi1", "bmi2", "lzcnt", "movbe"
            ),
            Isa::Avx512 => missing!(
                "sse4.2", "popcnt", "avx", "avx2", "fma", "f16c", "bmi1", "bmi2", "lzcnt", "movbe",
                "avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"
            ),
            Isa::Neon => vec!["neon (an aarch64 ISA)"],
        }
    }

    #[cfg(target_arch = "aarch64")]
    pub(super) fn missing_features(isa: Isa) -> Vec<&'static str> {
        match isa {
            Isa::Neon if std::arch::is_aarch64_feature_detected!("neon") => Vec::new(),
            Isa::Neon => vec!["neon"],
            other => vec![match other {
                Isa::Sse4 => "sse4.2 (an x86-64 ISA)",
                Isa::Avx2 => "avx2 (an x86-64 ISA)",
                _ => "avx512 (an x86-64 ISA)",
            }],
        }
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub(super) fn missing_features(isa: Isa) -> Vec<&'static str> {
        vec![isa.name()]
    }
}
