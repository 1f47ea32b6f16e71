//! `ispc-skinning info`: what this binary contains, what the CPU supports, and what runs.

use ispc_skinning::{build_info, Backend, CpuIdentity, Isa, KernelFamily};

/// Prints the build, the features, every ISA's state and the selected backend.
///
/// # Errors
/// When `ISPC_SKINNING_ISA` names an ISA that cannot run here (after printing everything else), as
/// `ISPC_SKINNING_ISA: <reason>`.
pub fn run() -> Result<(), String> {
    let build = build_info();
    println!("ispc-skinning {}", env!("CARGO_PKG_VERSION"));
    println!("backend:  {}", build.backend);
    println!(
        "kernels:  {} (targets {})",
        build.kernels,
        if build.targets.is_empty() {
            "none"
        } else {
            build.targets
        }
    );
    let features = enabled_features();
    println!(
        "features: {}",
        if features.is_empty() {
            "none".to_string()
        } else {
            features.join(", ")
        }
    );
    println!("arch:     {}", std::env::consts::ARCH);
    println!();
    println!(
        "{:<8} {:<9} {:<15} supported",
        "isa", "compiled", "ispc target"
    );
    for isa in Isa::ALL {
        let support = match isa.runnable() {
            Ok(_) => "yes".to_string(),
            Err(ispc_skinning::Error::IsaUnavailable { reason, .. }) => format!("no: {reason}"),
            Err(e) => format!("no: {e}"),
        };
        println!(
            "{:<8} {:<9} {:<15} {}",
            isa.name(),
            if isa.is_compiled() { "yes" } else { "no" },
            isa.ispc_target().unwrap_or("-"),
            support
        );
    }
    println!();
    let names = |v: Vec<Isa>| v.iter().map(|i| i.name()).collect::<Vec<_>>().join(", ");
    println!("compiled:  {}", names(Isa::compiled()));
    println!("available: {}", names(Isa::available()));
    println!(
        "detected:  {}",
        Isa::detect().map_or("none (the serial reference runs)", Isa::name)
    );
    let env = std::env::var("ISPC_SKINNING_ISA").ok();
    println!("ISPC_SKINNING_ISA: {}", env.as_deref().unwrap_or("(unset)"));
    // The selection is reported last and is an error (non-zero exit) when the override cannot run.
    let selected = super::isa_override()?;
    println!("selected:  {}", selected.name());
    // What Backend::Auto runs each kernel family on (the per-CPU table may narrow one).
    let cpu = CpuIdentity::detect().map_or("no CPUID".to_string(), |c| {
        format!("{:?} family {:#x} model {:#x}", c.vendor, c.family, c.model)
    });
    println!("cpu:       {cpu}");
    for family in KernelFamily::ALL {
        let chosen = Backend::Auto
            .for_kernel(family)
            .map_err(|e| format!("ISPC_SKINNING_ISA: {e}"))?;
        println!("  auto {:<15} {}", family.name(), chosen.name());
    }
    Ok(())
}

/// The optional cargo features this binary was built with.
fn enabled_features() -> Vec<&'static str> {
    // Each optional feature in Cargo.toml is listed here.
    let mut features = Vec::new();
    if cfg!(feature = "gltf") {
        features.push("gltf");
    }
    features
}
