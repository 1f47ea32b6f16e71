//! The x86-64 CPUID instruction, read for the CPU's vendor and family: `Backend::Auto`'s per-kernel ISA
//! table (src/backend/choice.rs) is keyed on them.

/// CPUID leaf `leaf`, sub-leaf 0, as `[eax, ebx, ecx, edx]`; `None` off x86-64.
pub(crate) fn cpuid(leaf: u32) -> Option<[u32; 4]> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: every x86-64 CPU has CPUID, and it only reads identification registers. Newer Rust
        // declares `__cpuid` safe; the crate's minimum (1.85) still needs the block, hence the allow.
        #[allow(unused_unsafe)]
        let r = unsafe { std::arch::x86_64::__cpuid(leaf) };
        Some([r.eax, r.ebx, r.ecx, r.edx])
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = leaf;
        None
    }
}
