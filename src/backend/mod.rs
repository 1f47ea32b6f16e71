//! Choosing what runs a kernel: the serial reference, one explicit ISA, or the automatic choice per
//! kernel family (`choice.rs`); and how many threads a job uses.

pub mod choice;

pub use choice::{CpuIdentity, CpuVendor, KernelFamily, Narrowing, AUTO_TABLE};

use crate::error::Error;
use crate::ffi::Runnable;
use crate::isa::{Isa, Unavailable};
use std::sync::OnceLock;

/// Who runs a kernel call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// `ISPC_SKINNING_ISA` when set (every kernel family), else per kernel family the widest ISA this
    /// CPU runs, narrowed where [`AUTO_TABLE`] names a faster narrower ISA for this CPU's vendor and
    /// family, else the serial reference. [`Backend::for_kernel`] tells what it chose.
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

/// How far a job's floating-point results may differ between backends, ISAs and platforms.
///
/// A job's backend decides where it runs; its precision decides which arithmetic runs there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// The fastest kernels of each ISA: fused multiply-adds where the ISA has them, sums in the order
    /// that suits the gang, and approximate reciprocal square roots for [`Renormalize::Fast`]. Results
    /// agree with the serial reference within each job's documented tolerance (a few ulps of the
    /// largest coordinate), not bit for bit.
    ///
    /// [`Renormalize::Fast`]: crate::Renormalize::Fast
    #[default]
    Fast,
    /// The serial reference's bits on every backend, ISA (SSE4, AVX2, AVX-512, NEON) and platform, for
    /// lock-step games, replays and server-side checks. CI checks it on x86-64 Linux, AArch64 Linux
    /// (qemu) and x86-64 Windows (wine); macOS and wasm32 (the reference alone) run the same code and
    /// kernels built the same way, and are not run.
    ///
    /// Its ISPC kernels are the fast kernels' code built without fused multiply-adds, with IEEE
    /// division and square root only; every value is one vertex's or one element's chain of operations
    /// in the order the reference writes it (lanes never combine values, so the gang width changes
    /// nothing), and [`Renormalize::Fast`] renormalizes as [`Renormalize::Precise`] does. The job
    /// refuses a thread (the caller's, or with `Threads::All` one of rayon's pool) whose
    /// floating-point mode is not the platform's default ([`Error::FloatEnvironment`]).
    ///
    /// Covered: on deterministic ISPC kernels, [`LocalToModelJob`](crate::LocalToModelJob) (matrices
    /// and TRS), [`PaletteJob`](crate::PaletteJob) and [`SkinningJob`](crate::SkinningJob) (linear and
    /// dual quaternion); in portable Rust whatever the backend, [`SamplingJob`](crate::SamplingJob)
    /// (its own `acos` and `sin`, dot products in one order) and [`BlendingJob`](crate::BlendingJob);
    /// and a [`Frame`](crate::Frame) with this precision runs all of these, with its morph targets and
    /// rigid meshes on the serial reference, so [`Character::play`](crate::Character::play),
    /// [`Character::evaluate`](crate::Character::evaluate) and the glTF scene's `evaluate` give the
    /// same bits everywhere (with inverse bind matrices from a file or from
    /// [`CharacterSkin::from_bind_pose`](crate::CharacterSkin::from_bind_pose), whose inverse is
    /// portable too). Crowds too: [`CrowdLocalToModelJob`](crate::CrowdLocalToModelJob) and
    /// [`CrowdPaletteJob`](crate::CrowdPaletteJob) on deterministic kernels (lanes across instances),
    /// [`CrowdSkinningJob`](crate::CrowdSkinningJob), [`CrowdSamplingJob`](crate::CrowdSamplingJob) and
    /// [`CrowdBlendingJob`](crate::CrowdBlendingJob) as their single-character jobs, and a
    /// [`CrowdFrame`](crate::CrowdFrame) with this precision, each instance of which has the bits of a
    /// deterministic frame with the same pose, clips and root; and root motion through
    /// [`Clip::root_motion_with`](crate::Clip::root_motion_with) (portable slerp and `atan2`; plain
    /// [`Clip::root_motion`](crate::Clip::root_motion) is fast). Not yet: ISPC kernels for sampling
    /// and blending (they run in portable Rust). Costs are in the report's `*_deterministic` rows.
    ///
    /// [`Renormalize::Precise`]: crate::Renormalize::Precise
    /// [`Renormalize::Fast`]: crate::Renormalize::Fast
    Deterministic,
}

impl Precision {
    /// Short name used in reports and the CLI: `fast` or `deterministic`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fast => "fast",
            Precision::Deterministic => "deterministic",
        }
    }

    /// For a deterministic job on [`Threads::All`], the floating-point mode of every thread of
    /// rayon's pool, where its kernels run too ([`Error::FloatEnvironment`]); nothing otherwise.
    pub(crate) fn check_pool(self, threads: Threads) -> Result<(), Error> {
        if self == Precision::Deterministic && threads == Threads::All {
            crate::numeric::check_float_environment_of(true)?;
        }
        Ok(())
    }
}

/// A backend that has been checked and can run now.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Resolved {
    Reference,
    Ispc(Runnable),
}

impl Resolved {
    /// This backend with the arithmetic of `precision`: the deterministic kernels for an ISA (the
    /// reference is deterministic as it is). A deterministic one first checks the calling thread's
    /// floating-point mode ([`Error::FloatEnvironment`]).
    pub(crate) fn with_precision(self, precision: Precision) -> Result<Resolved, Error> {
        if precision == Precision::Fast {
            return Ok(self);
        }
        crate::numeric::check_float_environment()?;
        Ok(match self {
            Resolved::Reference => Resolved::Reference,
            Resolved::Ispc(isa) => Resolved::Ispc(isa.deterministic()),
        })
    }

    /// This backend for a stage that has no deterministic kernels: itself for [`Precision::Fast`], the
    /// serial reference (after the floating-point environment's check) for
    /// [`Precision::Deterministic`], whose plain arithmetic is the same on every platform.
    pub(crate) fn without_det_kernels(self, precision: Precision) -> Result<Resolved, Error> {
        match precision {
            Precision::Fast => Ok(self),
            Precision::Deterministic => Resolved::Reference.with_precision(precision),
        }
    }

    /// [`Resolved::with_precision`] for a job on `threads`: with [`Threads::All`] a deterministic job
    /// also checks every thread of rayon's pool ([`Precision::check_pool`]), where its kernels run too.
    pub(crate) fn with_precision_on(
        self,
        precision: Precision,
        threads: Threads,
    ) -> Result<Resolved, Error> {
        let resolved = self.with_precision(precision)?;
        precision.check_pool(threads)?;
        Ok(resolved)
    }

    /// [`Resolved::without_det_kernels`] for a job on `threads`, with the pool's check of
    /// [`Resolved::with_precision_on`].
    pub(crate) fn without_det_kernels_on(
        self,
        precision: Precision,
        threads: Threads,
    ) -> Result<Resolved, Error> {
        let resolved = self.without_det_kernels(precision)?;
        precision.check_pool(threads)?;
        Ok(resolved)
    }

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
    /// What [`Backend::Auto`] means in this process before the per-kernel table, decided once and
    /// cached:
    /// - `ISPC_SKINNING_ISA=sse4|avx2|avx512|neon` selects that ISA for every kernel family, and is an
    ///   error where it cannot run;
    /// - `ISPC_SKINNING_ISA=reference` selects the serial reference;
    /// - unset, empty or `auto` selects [`Isa::detect`] (the widest ISA this CPU runs), or the
    ///   reference when no ISA can run; each kernel family may then run a narrower ISA
    ///   ([`Backend::for_kernel`]).
    pub fn selected() -> Result<Backend, Error> {
        Backend::selection().0.clone()
    }

    /// [`Backend::selected`], and whether `ISPC_SKINNING_ISA` forced it (then no table applies).
    fn selection() -> &'static (Result<Backend, Error>, bool) {
        static SELECTED: OnceLock<(Result<Backend, Error>, bool)> = OnceLock::new();
        SELECTED.get_or_init(|| {
            let value = std::env::var("ISPC_SKINNING_ISA").ok();
            let forced = value
                .as_deref()
                .map(str::trim)
                .is_some_and(|v| !v.is_empty() && !v.eq_ignore_ascii_case("auto"));
            (Backend::from_env_value(value.as_deref()), forced)
        })
    }

    /// What this backend runs `family`'s kernels on: itself for [`Backend::Reference`] and an explicit
    /// ISA; for [`Backend::Auto`], `ISPC_SKINNING_ISA` when set, else the widest ISA this CPU runs or
    /// the narrower one [`AUTO_TABLE`] names for this CPU ([`CpuIdentity::detect`]) and `family`.
    ///
    /// # Errors
    /// [`Error::IsaUnavailable`] for an ISA that cannot run here (named explicitly or by
    /// `ISPC_SKINNING_ISA`), [`Error::UnknownIsaName`] for an `ISPC_SKINNING_ISA` that names none.
    pub fn for_kernel(self, family: KernelFamily) -> Result<Backend, Error> {
        match self {
            Backend::Auto => {
                let (selected, forced) = Backend::selection();
                match selected.clone()? {
                    Backend::Isa(widest) if !*forced => Ok(Backend::Isa(choice::choose(
                        widest,
                        CpuIdentity::detect(),
                        family,
                        Isa::is_available,
                    ))),
                    other => Ok(other),
                }
            }
            Backend::Reference => Ok(Backend::Reference),
            Backend::Isa(isa) => isa.runnable().map(|_| Backend::Isa(isa)),
        }
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

    /// Resolves `Auto` for `family`'s kernels ([`Backend::for_kernel`]) and checks an explicit ISA.
    pub(crate) fn resolve(self, family: KernelFamily) -> Result<Resolved, Error> {
        match self.for_kernel(family)? {
            Backend::Isa(isa) => Ok(Resolved::Ispc(isa.runnable()?)),
            _ => Ok(Resolved::Reference),
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
