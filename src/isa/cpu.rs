//! CPU feature checks. Each list is what the matching ISPC target lets LLVM use, so having all of them
//! is what makes the kernel safe to run. std's detection also checks that the OS saves the wide registers.

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
