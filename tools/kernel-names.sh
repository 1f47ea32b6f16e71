# The kernel libraries' names, sourced by tools/cross-kernels, tools/check-kernel-archives and
# tools/write-manifest so that the three agree. They restate build.rs (default_targets and lib_file);
# build.rs checks every MANIFEST these scripts write before it links anything, so a drift fails the build.

# The ISAs a triple's kernels hold, by architecture.
kernel_isas() {
  case $1 in
    x86_64-*) echo "sse4 avx2 avx512" ;;
    aarch64-*) echo "neon" ;;
    *) return 1 ;;
  esac
}

# The default ISPC target of an ISA.
isa_ispc_target() {
  case $1 in
    sse4) echo sse4-i32x4 ;;
    avx2) echo avx2-i32x8 ;;
    avx512) echo avx512skx-x16 ;;
    neon) echo neon-i32x4 ;;
    *) return 1 ;;
  esac
}

# kernel_lib_file NAME TRIPLE, NAME an ISA or det_<ISA> (the deterministic kernels): ispc_rt's naming, NAME<triple>.lib for windows-msvc and libNAME<triple>.a
# elsewhere (windows-gnu included, where rustc looks only for that name).
kernel_lib_file() {
  case $2 in
    *-windows-msvc) echo "ispc_skinning_$1$2.lib" ;;
    *) echo "libispc_skinning_$1$2.a" ;;
  esac
}
