//! Which ISPC instruction sets were compiled in, which ones this CPU can run, and which one is used.
//!
//! Detection happens once per process and is cached. Nothing here executes an instruction the CPU lacks:
//! a kernel runs only through a [`Runnable`](crate::Runnable) proof, and the only way to get one is
//! [`Isa::runnable`](crate::Isa::runnable),
//! which checks both that the ISA was built and that every CPU feature its ISPC target needs is present.

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
                build_info().targets
            ),
            Unavailable::MissingCpuFeatures(missing) => {
                write!(f, "this CPU lacks {}", missing.join(", "))
            }
        }
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
            .find(|t| !t.is_empty() && isa_of_ispc_target(t) == Some(self))
    }

    /// True when this build contains kernels for the ISA (build.rs sets one `ispc_<isa>` cfg per
    /// compiled ISA).
    pub fn is_compiled(self) -> bool {
        match self {
            Isa::Sse4 => cfg!(ispc_sse4),
            Isa::Avx2 => cfg!(ispc_avx2),
            Isa::Avx512 => cfg!(ispc_avx512),
            Isa::Neon => cfg!(ispc_neon),
        }
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

/// How the kernels in this binary were built.
#[derive(Clone, Copy, Debug)]
pub struct BuildInfo {
    /// `"ispc"` when ISPC kernels are linked, `"reference"` when every job runs on the serial reference
    /// (the `kernels` feature is off, or the target has neither prebuilt kernels nor an ISPC target).
    pub backend: &'static str,
    /// `compiled with ISPC <version>`, `prebuilt ISPC <version> kernels`, or
    /// `none, serial reference backend only (<why>)`.
    pub kernels: &'static str,
    /// The ISPC targets, comma separated, for example `sse4-i32x4,avx2-i32x8,avx512skx-x16`.
    pub targets: &'static str,
}

/// How the kernels in this binary were built.
pub fn build_info() -> BuildInfo {
    BuildInfo {
        backend: env!("ISPC_SKINNING_BUILD_BACKEND"),
        kernels: env!("ISPC_SKINNING_BUILD_KERNELS"),
        targets: env!("ISPC_SKINNING_BUILD_TARGETS"),
    }
}

/// The crate ISA of an ISPC target string such as `avx2-i32x16`.
fn isa_of_ispc_target(target: &str) -> Option<Isa> {
    match target.split('-').next()? {
        "sse4" | "sse4.2" => Some(Isa::Sse4),
        "avx2" => Some(Isa::Avx2),
        "avx512skx" => Some(Isa::Avx512),
        "neon" => Some(Isa::Neon),
        _ => None,
    }
}

mod cpu;
