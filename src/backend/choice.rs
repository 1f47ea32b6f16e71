//! What [`Backend::Auto`](crate::Backend::Auto) runs each kernel family on: the widest ISA this CPU
//! runs, except where a documented table names a narrower one for the CPU's vendor and family because
//! the wider one was measured slower there.
//!
//! The table holds one entry today, from this project's own measurements (docs/RESULTS.md): on AMD
//! family 19h with AVX-512 (Zen 4, whose 512-bit instructions run as two 256-bit halves and whose
//! 512-bit shuffles run at half rate), the AVX-512 kernels of skinning and of one skeleton's local to
//! model were slower than the AVX2 ones in every run that measured both: runs P17 and P18 (`skin_p`
//! 1.47x to 1.50x ozz-animation-rs on AVX-512 against 1.55x to 1.59x on AVX2, `local_to_model_trs` at
//! 120 joints 1.18x against 1.42x) and P22 and P23 (skinning at 1,024 vertices 1.41x to 1.85x against
//! 1.60x to 2.00x, at 1M vertices 0.75x to 0.95x against 0.87x to 1.08x, `local_to_model_trs` 1.19x to
//! 1.51x against 1.66x to 1.74x, the CesiumMan frame 1.06x to 1.28x against 1.20x to 1.62x). The same
//! machine measured AVX2 slower than AVX-512 for blending (0.7x to 0.85x) and the crowds (0.8x), so
//! those families keep AVX-512 there. Zen 5 (family 1Ah, full-width AVX-512) and every Intel CPU keep
//! the widest ISA: on the Intel Xeon VM of run P24 AVX-512 was the faster path on every such row.
//! `ISPC_SKINNING_ISA` set to an ISA overrides the table for every family.

use crate::isa::Isa;

/// The kernel families [`Backend::Auto`](crate::Backend::Auto) chooses an ISA for, each on its own
/// (see [`Backend::for_kernel`](crate::Backend::for_kernel)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KernelFamily {
    /// Skinning: [`SkinningJob`](crate::SkinningJob), [`CrowdSkinningJob`](crate::CrowdSkinningJob)
    /// and a frame's skin stage (the fused morph pass included).
    Skinning,
    /// One skeleton's local to model and palettes: [`LocalToModelJob`](crate::LocalToModelJob),
    /// [`PaletteJob`](crate::PaletteJob) and [`Character::evaluate_pose`](crate::Character::evaluate_pose),
    /// which runs both in one pass.
    LocalToModel,
    /// The crowd kernels, over blocks of 16 instances: [`CrowdLocalToModelJob`](crate::CrowdLocalToModelJob),
    /// [`CrowdPaletteJob`](crate::CrowdPaletteJob), [`CrowdSamplingJob`](crate::CrowdSamplingJob),
    /// [`CrowdBlendingJob`](crate::CrowdBlendingJob) and the crowd frame's passes.
    Crowd,
    /// Sampling one character's clip: [`SamplingJob`](crate::SamplingJob).
    Sampling,
    /// Blending one character's poses: [`BlendingJob`](crate::BlendingJob).
    Blending,
    /// Points, morph targets and rigid meshes: [`transform_points`](crate::transform_points),
    /// [`morph_floats`](crate::morph_floats) and a frame's rigid stage.
    Transform,
}

impl KernelFamily {
    /// Every family.
    pub const ALL: [KernelFamily; 6] = [
        KernelFamily::Skinning,
        KernelFamily::LocalToModel,
        KernelFamily::Crowd,
        KernelFamily::Sampling,
        KernelFamily::Blending,
        KernelFamily::Transform,
    ];

    /// A short name: `skinning`, `local_to_model`, `crowd`, `sampling`, `blending` or `transform`.
    pub const fn name(self) -> &'static str {
        match self {
            KernelFamily::Skinning => "skinning",
            KernelFamily::LocalToModel => "local_to_model",
            KernelFamily::Crowd => "crowd",
            KernelFamily::Sampling => "sampling",
            KernelFamily::Blending => "blending",
            KernelFamily::Transform => "transform",
        }
    }
}

/// A CPU's maker, as CPUID's vendor string names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpuVendor {
    /// `GenuineIntel`.
    Intel,
    /// `AuthenticAMD`.
    Amd,
    /// Any other vendor string.
    Other,
}

/// The CPU this process runs on, as CPUID identifies it: vendor, family (base plus extended, as the
/// vendors' manuals combine them) and model. What [`Backend::Auto`](crate::Backend::Auto)'s table is
/// keyed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CpuIdentity {
    /// The maker.
    pub vendor: CpuVendor,
    /// The display family (for example 0x19 for AMD Zen 3 and Zen 4, 0x1A for Zen 5, 6 for Intel's
    /// cores).
    pub family: u32,
    /// The display model.
    pub model: u32,
}

impl CpuIdentity {
    /// This CPU's identity, read once and cached; `None` off x86-64.
    pub fn detect() -> Option<CpuIdentity> {
        static CPU: std::sync::OnceLock<Option<CpuIdentity>> = std::sync::OnceLock::new();
        *CPU.get_or_init(|| {
            let [_, b, c, d] = crate::ffi::cpuid::cpuid(0)?;
            let [eax, ..] = crate::ffi::cpuid::cpuid(1)?;
            Some(CpuIdentity::from_cpuid([b, d, c], eax))
        })
    }

    /// The identity from CPUID leaf 0's vendor registers (ebx, edx, ecx) and leaf 1's eax.
    pub(crate) fn from_cpuid(vendor: [u32; 3], eax: u32) -> CpuIdentity {
        let mut name = [0u8; 12];
        for (chunk, word) in name.chunks_exact_mut(4).zip(vendor) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        let vendor = match &name {
            b"GenuineIntel" => CpuVendor::Intel,
            b"AuthenticAMD" => CpuVendor::Amd,
            _ => CpuVendor::Other,
        };
        let base_family = (eax >> 8) & 0xf;
        let family = if base_family == 0xf {
            base_family + ((eax >> 20) & 0xff)
        } else {
            base_family
        };
        let base_model = (eax >> 4) & 0xf;
        let model = if base_family == 0x6 || base_family == 0xf {
            base_model | (((eax >> 16) & 0xf) << 4)
        } else {
            base_model
        };
        CpuIdentity {
            vendor,
            family,
            model,
        }
    }
}

/// One row of the table: on `vendor`'s `family`, `Auto` runs `kernels` on `to` where it would run
/// `from`.
#[derive(Clone, Copy, Debug)]
pub struct Narrowing {
    /// The maker the row applies to.
    pub vendor: CpuVendor,
    /// The family the row applies to.
    pub family: u32,
    /// The kernel families it narrows.
    pub kernels: &'static [KernelFamily],
    /// The ISA `Auto` would choose without the row.
    pub from: Isa,
    /// The ISA it chooses instead.
    pub to: Isa,
    /// The measurements behind the row.
    pub evidence: &'static str,
}

/// The table (see the [module docs](crate::backend::choice)).
pub const AUTO_TABLE: &[Narrowing] = &[Narrowing {
    vendor: CpuVendor::Amd,
    family: 0x19,
    kernels: &[KernelFamily::Skinning, KernelFamily::LocalToModel],
    from: Isa::Avx512,
    to: Isa::Avx2,
    evidence:
        "Zen 4: AVX-512 slower than AVX2 for skinning and local to model in runs P17, P18, P22 \
               and P23, and again in run Z2 and hand run H6 (docs/RESULTS.md)",
}];

/// What `Auto` runs `family` on, given the widest ISA this CPU runs (`widest`), the CPU, and which ISAs
/// can run: `widest`, or the table's narrower ISA for this CPU and family where that one can run.
pub(crate) fn choose(
    widest: Isa,
    cpu: Option<CpuIdentity>,
    family: KernelFamily,
    runs: impl Fn(Isa) -> bool,
) -> Isa {
    let Some(cpu) = cpu else {
        return widest;
    };
    AUTO_TABLE
        .iter()
        .find(|row| {
            row.vendor == cpu.vendor
                && row.family == cpu.family
                && row.from == widest
                && row.kernels.contains(&family)
        })
        .map(|row| row.to)
        .filter(|&isa| runs(isa))
        .unwrap_or(widest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ident(vendor: &[u8; 12], eax: u32) -> CpuIdentity {
        let word =
            |i: usize| u32::from_le_bytes([vendor[i], vendor[i + 1], vendor[i + 2], vendor[i + 3]]);
        CpuIdentity::from_cpuid([word(0), word(4), word(8)], eax)
    }

    #[test]
    fn cpuid_decodes_vendor_family_and_model() {
        // EPYC 9004 (Zen 4): family 0xF + 0xA = 0x19, model 0x11.
        let zen4 = ident(b"AuthenticAMD", 0x00A1_0F11);
        assert_eq!(
            zen4,
            CpuIdentity {
                vendor: CpuVendor::Amd,
                family: 0x19,
                model: 0x11
            }
        );
        // Emerald Rapids: family 6, model 0xCF.
        let intel = ident(b"GenuineIntel", 0x000C_06F2);
        assert_eq!(
            (intel.vendor, intel.family, intel.model),
            (CpuVendor::Intel, 6, 0xCF)
        );
        assert_eq!(ident(b"HygonGenuine", 0x0090_0F01).vendor, CpuVendor::Other);
    }

    #[test]
    fn zen4_runs_skinning_and_local_to_model_on_avx2_and_the_rest_on_avx512() {
        let zen4 = Some(ident(b"AuthenticAMD", 0x00A1_0F11));
        let all = |_: Isa| true;
        for family in KernelFamily::ALL {
            let want = match family {
                KernelFamily::Skinning | KernelFamily::LocalToModel => Isa::Avx2,
                _ => Isa::Avx512,
            };
            assert_eq!(choose(Isa::Avx512, zen4, family, all), want, "{family:?}");
        }
        // Zen 3 has no AVX-512: its widest ISA stays.
        assert_eq!(
            choose(Isa::Avx2, zen4, KernelFamily::Skinning, all),
            Isa::Avx2
        );
        // A narrower ISA that cannot run is not chosen.
        let no_avx2 = |isa: Isa| isa != Isa::Avx2;
        assert_eq!(
            choose(Isa::Avx512, zen4, KernelFamily::Skinning, no_avx2),
            Isa::Avx512
        );
    }

    #[test]
    fn other_cpus_keep_the_widest_isa() {
        let zen5 = Some(ident(b"AuthenticAMD", 0x00B4_0F00));
        let intel = Some(ident(b"GenuineIntel", 0x000C_06F2));
        for cpu in [zen5, intel, None] {
            for family in KernelFamily::ALL {
                assert_eq!(choose(Isa::Avx512, cpu, family, |_| true), Isa::Avx512);
            }
        }
    }
}
