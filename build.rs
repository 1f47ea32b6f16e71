//! Links the ISPC kernels, two static libraries per ISA (the kernels of `ispc/`, and the deterministic
//! kernels of `ispc/det/`, compiled without fused multiply-adds): the packaged prebuilt ones, or ones
//! compiled from `ispc/` with ISPC; or, where neither can be had, none (the serial reference backend).
//!
//! The whole script is one decision table, read top to bottom:
//!
//! | question                                          | answer                                                       |
//! |---------------------------------------------------|--------------------------------------------------------------|
//! | `kernels` feature off                             | reference backend only; nothing is linked                    |
//! | which ISPC targets?                               | `ISPC_SKINNING_TARGETS`, else the default list for the arch (none off x86_64/aarch64) |
//! | no targets                                        | reference backend only, with a cargo warning                 |
//! | `ISPC_SKINNING_COMPILE=0`                         | never compile: go on to the prebuilt files even with the feature and an ISPC |
//! | `compile-kernels` feature on and an ISPC found    | compile: two `ispc_compile::Config`s per ISA (kernels, deterministic kernels), each on its own thread (`ISPC`, else `<repo>/.ispc/bin/ispc`, else `ispc` on PATH) |
//! | `ISPC_SKINNING_COMPILE=1` and no compile possible | build error naming the fix                                   |
//! | the triple has a kernel package (`PREBUILT_TRIPLES`) | link its files (`ispc_rt::PackagedModule`) after checking its MANIFEST; the package `ispc-skinning-kernels-<triple>` (a target-specific dependency) says where they are as `DEP_ISPC_SKINNING_KERNELS_<TRIPLE>_DIR` |
//! | that package or a file of it is missing or stale  | build error naming the fix                                   |
//! | any other triple                                  | reference backend only, with a cargo warning                 |
//! | `ISPC_SKINNING_EXPORT_PREBUILT=DIR`               | also copy what was compiled, with its MANIFEST, into DIR (tools/regen-prebuilt) |
//! | `ISPC_SKINNING_VERBOSE=1`                         | report the compiler and its version as `cargo:warning`       |
//!
//! Why one `ispc_compile::Config` per ISA rather than one for all: with several target ISAs ISPC builds
//! one object with its own dispatcher, and bindings only for the dispatch symbols. This crate dispatches
//! in Rust, over `_sse4/_avx2/_avx512/_neon` exports (the `ISA_SUFFIX` define), so each ISA is its own
//! single-target library with its own bindings module.

use sha2::{Digest, Sha256};
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// The prefix of every kernel library: `ispc_skinning_<isa>`, as in the exported symbols' suffixes.
const LIB_PREFIX: &str = "ispc_skinning_";
/// The structs the kernels share, generated once (each ISA's bindings refer to them; see `types_builder`).
const TYPES_FILE: &str = "ispc_skinning_types.rs";
/// The ISPC version the prebuilt files must come from.
const ISPC_VERSION: &str = "1.26.0";
/// The flags every kernel is compiled with, as recorded in each MANIFEST. Assertions are off because the
/// safe Rust layer validates every input before a kernel runs; `--pic` because the objects end up in
/// position-independent Rust executables. `configure` below sets exactly these on each Config.
const ISPC_FLAGS: &str = "-O3 --pic --opt=disable-assertions --math-lib=default";
/// What the deterministic kernels (`ispc/det/`, a library of their own per ISA, exporting
/// `name_det_<isa>`) add to `ISPC_FLAGS`: no fused multiply-adds, so that every ISA computes the serial
/// reference's bits (see ispc/det/det_skin.ispc), and LLVM intrinsics allowed (SSE4's byte permute in
/// ispc/det/compact.ispc). Recorded in each MANIFEST as `det_flags`.
const ISPC_DET_FLAGS: &str = "--opt=disable-fma --enable-llvm-intrinsics";
/// The triples with packaged kernels (tools/regen-prebuilt makes them, in `prebuilt/<triple>/`, each a
/// package `ispc-skinning-kernels-<triple>` that Cargo.toml depends on for that target only). A build
/// for one of these with a missing or damaged kernel package is an error, never a silent fallback to the
/// reference.
const PREBUILT_TRIPLES: &[&str] = &[
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-pc-windows-msvc",
    "aarch64-pc-windows-msvc",
    "x86_64-pc-windows-gnu",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
];

/// One ISA of the crate's vocabulary and the ISPC target it is built with.
struct IsaTarget {
    /// ISPC's target string, for example `avx2-i32x8`.
    ispc_target: &'static str,
    /// `sse4`, `avx2`, `avx512` or `neon`: the export suffix and the library name's last part.
    isa: &'static str,
}

impl IsaTarget {
    /// The library of the `ispc/*.ispc` kernels.
    fn lib(&self) -> String {
        format!("{LIB_PREFIX}{}", self.isa)
    }

    /// The library of the deterministic kernels, `ispc/det/*.ispc`, built with `ISPC_DET_FLAGS`.
    fn det_lib(&self) -> String {
        format!("{LIB_PREFIX}det_{}", self.isa)
    }

    /// Both libraries, each with whether it is the deterministic one.
    fn libs(&self) -> [(String, bool); 2] {
        [(self.lib(), false), (self.det_lib(), true)]
    }
}

/// Whether a kernel source is one of the deterministic kernels (in `ispc/det/`).
#[cfg_attr(not(feature = "compile-kernels"), allow(dead_code))]
fn is_det(path: &Path) -> bool {
    path.parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d == "det")
}

/// Every ISPC target `ISPC_SKINNING_TARGETS` may name: (target, crate ISA). Only families that Rust can
/// detect at run time are listed; the names are ISPC's own. Gangs are at most 16 lanes wide: the kernels
/// split a 16-float matrix or a 16-instance crowd block into 16 / width parts, so 32-wide targets
/// (`avx2-i8x32`) are not listed.
const KNOWN_TARGETS: &[(&str, &str)] = &[
    ("sse4-i32x4", "sse4"),
    ("sse4-i32x8", "sse4"),
    ("sse4-i16x8", "sse4"),
    ("sse4-i8x16", "sse4"),
    ("avx2-i32x8", "avx2"),
    ("avx2-i32x4", "avx2"),
    ("avx2-i32x16", "avx2"),
    ("avx2-i64x4", "avx2"),
    ("avx2-i16x16", "avx2"),
    ("avx512skx-x16", "avx512"),
    ("avx512skx-x8", "avx512"),
    ("avx512skx-x4", "avx512"),
    ("neon-i32x4", "neon"),
    ("neon-i32x8", "neon"),
    ("neon-i16x8", "neon"),
    ("neon-i8x16", "neon"),
];

fn default_targets(arch: &str) -> &'static [&'static str] {
    match arch {
        "x86_64" => &["sse4-i32x4", "avx2-i32x8", "avx512skx-x16"],
        "aarch64" => &["neon-i32x4"],
        _ => &[],
    }
}

fn fail(msg: impl AsRef<str>) -> ! {
    // A build script reports a hard error by failing; the message is what the user sees first.
    eprintln!("\nispc-skinning build error: {}\n", msg.as_ref());
    std::process::exit(1);
}

fn flag(name: &str) -> bool {
    env::var(name).is_ok_and(|v| v != "0" && !v.is_empty())
}

/// What this build links, for `build_info()` and `cfg`s.
enum Linked {
    Reference(String),
    Kernels(String),
}

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap();
    let triple = env::var("TARGET").unwrap();
    let kernels_feature = env::var_os("CARGO_FEATURE_KERNELS").is_some();
    let compile_feature = env::var_os("CARGO_FEATURE_COMPILE_KERNELS").is_some();

    for var in [
        "ISPC",
        "ISPC_SKINNING_TARGETS",
        "ISPC_SKINNING_VERBOSE",
        "ISPC_SKINNING_EXPORT_PREBUILT",
        "ISPC_SKINNING_COMPILE",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=ispc");
    println!("cargo:rerun-if-changed=prebuilt/{TYPES_FILE}");
    // Every ISA the crate can name becomes a known cfg, so `#[cfg(ispc_avx512)]` never warns.
    println!(
        "cargo::rustc-check-cfg=cfg(ispc_kernels, ispc_sse4, ispc_avx2, ispc_avx512, ispc_neon)"
    );

    let targets = if kernels_feature {
        select_targets(&arch)
    } else {
        Vec::new()
    };
    let sources = ispc_sources(&manifest_dir.join("ispc"));
    // The kernel package's own build script names its directory (`links` metadata), wherever Cargo
    // unpacked it: prebuilt/<triple>/ in the repository, the registry's copy for a user.
    let links = format!("ispc_skinning_kernels_{}", triple.replace('-', "_"));
    let dep_var = format!("DEP_{}_DIR", links.to_uppercase());
    println!("cargo:rerun-if-env-changed={dep_var}");
    let prebuilt_dir = env::var_os(&dep_var).map(PathBuf::from);
    if let Some(dir) = &prebuilt_dir {
        println!("cargo:rerun-if-changed={}", dir.display());
    }

    let linked = if !kernels_feature {
        Linked::Reference("the `kernels` feature is off".into())
    } else if targets.is_empty() {
        let why = format!("no ISPC targets for {triple}");
        println!(
            "cargo:warning=ispc-skinning: {why}; every job runs on the serial reference backend"
        );
        Linked::Reference(why)
    } else if let Some(how) = compile_if_possible(
        compile_feature,
        &manifest_dir,
        &out_dir,
        &triple,
        &targets,
        &sources,
    ) {
        Linked::Kernels(how)
    } else if PREBUILT_TRIPLES.contains(&triple.as_str()) {
        let dir = prebuilt_dir.unwrap_or_else(|| {
            fail(format!(
                "the kernel package ispc-skinning-kernels-{triple} is not a dependency of this build \
                 ({dep_var} is unset): keep its [target.{triple}.dependencies] entry in Cargo.toml and \
                 the `kernels` feature that turns it on, or build with `--features compile-kernels` and \
                 ISPC installed (tools/install-ispc) to compile the kernels"
            ))
        });
        link_prebuilt(&manifest_dir, &dir, &triple, &targets, &sources);
        Linked::Kernels(format!("prebuilt ISPC {ISPC_VERSION} kernels"))
    } else {
        let why = format!("no prebuilt kernels for {triple}");
        println!(
            "cargo:warning=ispc-skinning: {why}; every job runs on the serial reference backend \
             (enable the `compile-kernels` feature with ISPC installed to compile them)"
        );
        Linked::Reference(why)
    };

    let (backend, how, list): (_, _, Vec<&str>) = match linked {
        Linked::Reference(why) => {
            // The reference build still names the shared kernel structs (see src/ffi/mod.rs); the packaged
            // copy is target-independent.
            println!(
                "cargo:rustc-env=ISPC_SKINNING_TYPES={}",
                manifest_dir.join("prebuilt").join(TYPES_FILE).display()
            );
            (
                "reference",
                format!("none, serial reference backend only ({why})"),
                Vec::new(),
            )
        }
        Linked::Kernels(how) => {
            println!("cargo:rustc-cfg=ispc_kernels");
            for t in &targets {
                println!("cargo:rustc-cfg=ispc_{}", t.isa);
            }
            ("ispc", how, targets.iter().map(|t| t.ispc_target).collect())
        }
    };
    println!("cargo:rustc-env=ISPC_SKINNING_BUILD_BACKEND={backend}");
    println!("cargo:rustc-env=ISPC_SKINNING_BUILD_KERNELS={how}");
    println!(
        "cargo:rustc-env=ISPC_SKINNING_BUILD_TARGETS={}",
        list.join(",")
    );
}

/// The targets to build: the user's list (validated) or the default for the target architecture.
fn select_targets(arch: &str) -> Vec<IsaTarget> {
    let requested: Vec<String> = match env::var("ISPC_SKINNING_TARGETS") {
        Ok(list) if !list.trim().is_empty() => {
            list.split(',').map(|s| s.trim().to_string()).collect()
        }
        _ => default_targets(arch)
            .iter()
            .map(|s| s.to_string())
            .collect(),
    };
    let mut targets: Vec<IsaTarget> = Vec::new();
    for name in requested {
        let Some(&(ispc_target, isa)) = KNOWN_TARGETS.iter().find(|(t, _)| *t == name) else {
            let known: Vec<&str> = KNOWN_TARGETS.iter().map(|(t, _)| *t).collect();
            fail(format!(
                "ISPC_SKINNING_TARGETS names '{name}', which is not one of {}",
                known.join(", ")
            ))
        };
        let arch_ok = match isa {
            "neon" => arch == "aarch64",
            _ => arch == "x86_64",
        };
        if !arch_ok {
            fail(format!(
                "ISPC target '{name}' cannot be built for target arch '{arch}'"
            ));
        }
        if let Some(other) = targets.iter().find(|t| t.isa == isa) {
            fail(format!(
                "ISPC_SKINNING_TARGETS names two targets for the {isa} ISA ('{}' and '{name}'); \
                 each ISA exports one set of *_{isa} symbols, so pick one gang width",
                other.ispc_target
            ));
        }
        targets.push(IsaTarget { ispc_target, isa });
    }
    targets
}

/// The kernel sources (`*.ispc`) and headers (`*.isph`) of `ispc/` and of `ispc/det/` (the
/// deterministic kernels), sorted so hashes and link order are stable.
fn ispc_sources(dir: &Path) -> Vec<PathBuf> {
    let read = |d: &Path| {
        fs::read_dir(d)
            .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", d.display())))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect::<Vec<_>>()
    };
    let mut files: Vec<PathBuf> = read(dir)
        .into_iter()
        .chain(read(&dir.join("det")))
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("ispc" | "isph")
            )
        })
        .collect();
    files.sort();
    files
}

/// The ISPC to compile with: `ISPC` (which must exist), else the repository's `.ispc/bin/ispc`
/// (tools/install-ispc), else `ispc` on PATH.
fn find_ispc(manifest_dir: &Path) -> Option<PathBuf> {
    if let Ok(path) = env::var("ISPC") {
        let path = PathBuf::from(path);
        // An explicit request that cannot be honoured is an error, not a silent fallback.
        if !path.is_file() {
            fail(format!(
                "ISPC={} does not name an existing file",
                path.display()
            ));
        }
        return Some(path);
    }
    let local = manifest_dir.join(".ispc/bin/ispc");
    if local.is_file() {
        return Some(local);
    }
    let exe = if cfg!(windows) { "ispc.exe" } else { "ispc" };
    env::split_paths(&env::var_os("PATH")?)
        .map(|d| d.join(exe))
        .find(|p| p.is_file())
}

/// Compiles the kernels when the `compile-kernels` feature is on and an ISPC is found; returns how, or
/// `None` to fall through to the prebuilt files. `ISPC_SKINNING_COMPILE=1` turns the fall-through into an
/// error; `ISPC_SKINNING_COMPILE=0` always falls through (a build that needs the kernels' Rust side, such
/// as a lint, and not a fresh compile of ispc/).
fn compile_if_possible(
    feature: bool,
    manifest_dir: &Path,
    out_dir: &Path,
    triple: &str,
    targets: &[IsaTarget],
    sources: &[PathBuf],
) -> Option<String> {
    if env::var("ISPC_SKINNING_COMPILE").is_ok_and(|v| v == "0") {
        return None;
    }
    let forced = flag("ISPC_SKINNING_COMPILE");
    let ispc = find_ispc(manifest_dir);
    match (feature, ispc) {
        (true, Some(ispc)) => Some(compile::run(&ispc, manifest_dir, out_dir, triple, targets, sources)),
        (false, _) if forced => fail(
            "ISPC_SKINNING_COMPILE=1 asks to compile the kernels, but the `compile-kernels` feature is off; \
             build with `--features compile-kernels`",
        ),
        (true, None) if forced => fail(
            "ISPC_SKINNING_COMPILE=1 asks to compile the kernels, but no ISPC was found; install it with \
             tools/install-ispc, put `ispc` on PATH, or set ISPC=/path/to/ispc",
        ),
        _ => None,
    }
}

/// The kernel-compiling path, present only with the `compile-kernels` feature (which brings in
/// ispc_compile and, through it, bindgen).
#[cfg(feature = "compile-kernels")]
mod compile {
    use super::*;
    use ispc_compile::{bindgen, Config, MathLib, OptimizationOpt, TargetISA, TargetOS};
    use std::process::Command;

    /// The oldest ISPC that compiles the kernels (the ISPC these sources are written and tested with).
    const ISPC_MIN: (u32, u32) = (1, 26);

    /// Compiles every ISA with ISPC and returns "compiled with ISPC <version>".
    pub fn run(
        ispc: &Path,
        manifest_dir: &Path,
        out_dir: &Path,
        triple: &str,
        targets: &[IsaTarget],
        sources: &[PathBuf],
    ) -> String {
        let version = ispc_version(ispc);
        if flag("ISPC_SKINNING_VERBOSE") {
            println!(
                "cargo:warning=ispc-skinning: compiling kernels with {} (ISPC {version})",
                ispc.display()
            );
        }
        put_on_path(ispc, out_dir);
        // The ISAs compile at once, one thread each (ISPC itself is single-threaded, and skin.ispc alone
        // takes most of a minute per ISA). ispc_compile names every object and header after its source's
        // stem in OUT_DIR, so each ISA compiles its own one-line wrappers, `<isa>_<stem>.ispc`, that
        // include the real sources. bindgen loads libclang once and shares it between threads.
        // Each ISA builds two libraries: the kernels of ispc/ and the deterministic ones of ispc/det/
        // (ISPC_DET_FLAGS), each its own Config, since ISPC's flags hold for a whole compilation.
        let jobs: Vec<(&IsaTarget, String, bool, Vec<PathBuf>)> = targets
            .iter()
            .flat_map(|t| {
                t.libs().map(|(lib, det)| {
                    let own: Vec<PathBuf> = sources
                        .iter()
                        .filter(|p| is_det(p) == det)
                        .cloned()
                        .collect();
                    (t, lib, det, wrap_sources(t, out_dir, &own))
                })
            })
            .collect();
        std::thread::scope(|scope| {
            for (t, lib, det, files) in &jobs {
                // ispc_compile adds to an existing archive (`ar crus`), so the last build's goes first.
                let _ = fs::remove_file(out_dir.join(lib_file(lib, triple)));
                scope.spawn(move || configure(t, *det, manifest_dir, triple, files).compile(lib));
            }
        });
        write_types(out_dir, triple, targets, sources);
        if let Ok(dir) = env::var("ISPC_SKINNING_EXPORT_PREBUILT") {
            export(
                Path::new(&dir),
                &version,
                manifest_dir,
                out_dir,
                triple,
                targets,
                sources,
            );
        }
        format!("compiled with ISPC {version}")
    }

    /// ISPC's version, which must be at least `ISPC_MIN`.
    fn ispc_version(ispc: &Path) -> String {
        let out = Command::new(ispc)
            .arg("--version")
            .output()
            .unwrap_or_else(|e| fail(format!("cannot run {}: {e}", ispc.display())));
        let text = String::from_utf8_lossy(&out.stdout);
        // "Intel(r) Implicit SPMD Program Compiler (Intel(r) ISPC), 1.26.0 (build ...)"
        let version = text
            .split("ISPC), ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| {
                fail(format!(
                    "cannot read the version from `{} --version`: {text}",
                    ispc.display()
                ))
            })
            .to_string();
        let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        if (major, minor) < ISPC_MIN {
            fail(format!(
                "{} is ISPC {version}, older than the {}.{} the kernels need; install {ISPC_VERSION} with \
                 tools/install-ispc or set ISPC=/path/to/a/newer/ispc",
                ispc.display(),
                ISPC_MIN.0,
                ISPC_MIN.1
            ));
        }
        version
    }

    /// ispc_compile runs `ispc` from PATH, so the chosen compiler's folder goes first on this build
    /// script's PATH. A compiler under another file name is reached through a link named `ispc`.
    fn put_on_path(ispc: &Path, out_dir: &Path) {
        let named_ispc = ispc.file_stem().is_some_and(|s| s == "ispc");
        let dir = if named_ispc {
            ispc.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            let dir = out_dir.join("ispc-bin");
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            #[cfg(unix)]
            std::os::unix::fs::symlink(ispc, dir.join("ispc"))
                .unwrap_or_else(|e| fail(format!("cannot link {} as ispc: {e}", ispc.display())));
            #[cfg(not(unix))]
            fail(format!(
                "ISPC={} must name a file called ispc.exe",
                ispc.display()
            ));
            dir
        };
        let mut paths = vec![dir];
        paths.extend(
            env::var_os("PATH")
                .map(|p| env::split_paths(&p).collect::<Vec<_>>())
                .unwrap_or_default(),
        );
        // The build script is single-threaded here, and nothing else reads the environment meanwhile.
        env::set_var("PATH", env::join_paths(paths).unwrap());
    }

    /// The ISA's wrappers of every `.ispc` source: `OUT_DIR/ispc-wrap/<isa>_<stem>.ispc`, each holding
    /// one `#include` of the real file (ISPC's diagnostics name the real file and line). A wrapper gets
    /// its source's modification time: cargo reruns the build script when a watched file is newer than
    /// its last run, and ispc_compile watches the wrappers.
    fn wrap_sources(t: &IsaTarget, out_dir: &Path, sources: &[PathBuf]) -> Vec<PathBuf> {
        let dir = out_dir.join("ispc-wrap");
        fs::create_dir_all(&dir)
            .unwrap_or_else(|e| fail(format!("cannot create {}: {e}", dir.display())));
        sources
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "ispc"))
            .map(|src| {
                let stem = src.file_stem().unwrap().to_string_lossy();
                let wrapper = dir.join(format!("{}_{stem}.ispc", t.isa));
                let text = format!("#include \"{}\"\n", src.display());
                let file = fs::File::create(&wrapper)
                    .and_then(|mut f| {
                        std::io::Write::write_all(&mut f, text.as_bytes()).map(|()| f)
                    })
                    .unwrap_or_else(|e| fail(format!("cannot write {}: {e}", wrapper.display())));
                if let Ok(modified) = fs::metadata(src).and_then(|m| m.modified()) {
                    let _ = file.set_modified(modified);
                }
                wrapper
            })
            .collect()
    }

    /// One library's Config: the `ISPC_FLAGS` (and `ISPC_DET_FLAGS` for the deterministic kernels), one
    /// target ISA and its export suffix.
    fn configure(
        t: &IsaTarget,
        det: bool,
        manifest_dir: &Path,
        triple: &str,
        sources: &[PathBuf],
    ) -> Config {
        let os = match env::var("CARGO_CFG_TARGET_OS").unwrap_or_default().as_str() {
            "windows" => TargetOS::Windows,
            "macos" => TargetOS::Macos,
            "android" => TargetOS::Android,
            _ => TargetOS::Linux,
        };
        let mut config = Config::new();
        config
            .include_path(manifest_dir.join("ispc"))
            // The deterministic kernels export name_det_<isa>, beside the fast name_<isa>.
            .add_define(
                "ISA_SUFFIX",
                Some(&format!("_{}{}", if det { "det_" } else { "" }, t.isa)),
            )
            // -O3 --pic (ispc_compile adds --pic on Unix hosts) --opt=disable-assertions --math-lib=default,
            // with no -g in debug builds, so the objects are the same in every profile.
            .debug(false)
            .opt_level(3)
            .optimization_opt(OptimizationOpt::DisableAssertions)
            .math_lib(MathLib::ISPCDefault)
            // ISPC's performance warnings (gathers, varying division) are known and measured; ispc_compile
            // would repeat each as a cargo warning in every build. Other warnings still show.
            .wno_perf()
            .target_isa(target_isa(t.ispc_target))
            .target_os(os)
            .bindgen_builder(isa_bindings_builder(t, triple));
        if det {
            config
                .optimization_opt(OptimizationOpt::DisableFMA)
                .enable_llvm_intrinsics();
        }
        for file in sources
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "ispc"))
        {
            config.file(file);
        }
        config
    }

    fn target_isa(name: &str) -> TargetISA {
        match name {
            "sse4-i32x4" => TargetISA::SSE4i32x4,
            "sse4-i32x8" => TargetISA::SSE4i32x8,
            "sse4-i16x8" => TargetISA::SSE4i16x8,
            "sse4-i8x16" => TargetISA::SSE4i8x16,
            "avx2-i32x8" => TargetISA::AVX2i32x8,
            "avx2-i32x4" => TargetISA::AVX2i32x4,
            "avx2-i32x16" => TargetISA::AVX2i32x16,
            "avx2-i64x4" => TargetISA::AVX2i64x4,
            "avx2-i16x16" => TargetISA::AVX2i16x16,
            "avx512skx-x16" => TargetISA::AVX512SKXx16,
            "avx512skx-x8" => TargetISA::AVX512SKXx8,
            "avx512skx-x4" => TargetISA::AVX512SKXx4,
            "neon-i32x4" => TargetISA::Neoni32x4,
            "neon-i32x8" => TargetISA::Neoni32x8,
            "neon-i16x8" => TargetISA::Neoni16x8,
            "neon-i8x16" => TargetISA::Neoni8x16,
            // select_targets accepted only KNOWN_TARGETS, and every one is matched above.
            other => fail(format!("internal: no ispc_compile target for '{other}'")),
        }
    }

    /// clang arguments for the ISPC headers: freestanding (they need only stdint.h and stdbool.h, which
    /// clang ships itself), so a cross build needs no C library headers of the target.
    fn clang_args(triple: &str) -> [String; 2] {
        ["-ffreestanding".to_string(), format!("--target={triple}")]
    }

    /// One ISA's bindings: its own functions only. The structs they take live once in the types file
    /// (`use super::*` reaches them), so every ISA's `skin_group` takes the same `SkinGroupArgs` type.
    fn isa_bindings_builder(t: &IsaTarget, triple: &str) -> bindgen::Builder {
        bindgen::Builder::default()
            .clang_args(clang_args(triple))
            .allowlist_function(format!(".*_{}", t.isa))
            .blocklist_type(".*")
            .raw_line("#[allow(unused_imports)]")
            .raw_line("use super::*;")
            .layout_tests(false)
            .generate_comments(false)
    }

    /// The structs of the ISPC headers (the headers of the last ISA; every ISA declares the same ones),
    /// written once to OUT_DIR/TYPES_FILE.
    fn write_types(out_dir: &Path, triple: &str, targets: &[IsaTarget], sources: &[PathBuf]) {
        let isa = targets.last().map_or("", |t| t.isa);
        let mut wrapper = String::from("#include <stdint.h>\n#include <stdbool.h>\n");
        for src in sources
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "ispc") && !is_det(p))
        {
            let stem = src.file_stem().unwrap().to_string_lossy();
            writeln!(wrapper, "#include \"{isa}_{stem}_ispc.h\"").unwrap();
        }
        let wrapper_path = out_dir.join("ispc_skinning_types.h");
        fs::write(&wrapper_path, wrapper).unwrap();
        let bindings = bindgen::Builder::default()
            .header(wrapper_path.to_string_lossy())
            .clang_args(clang_args(triple))
            .clang_arg(format!("-I{}", out_dir.display()))
            .allowlist_file(".*_ispc\\.h")
            .blocklist_function(".*")
            .layout_tests(false)
            .generate_comments(false)
            .generate()
            .unwrap_or_else(|e| {
                fail(format!(
                    "bindgen failed on the ISPC headers (is libclang installed?): {e}"
                ))
            });
        let mut text = String::from(
            "// The structs the ISPC kernels take, generated by build.rs with bindgen from the ISPC headers.\n\
             // Do not edit; tools/regen-prebuilt refreshes the packaged copy.\n",
        );
        text.push_str(&bindings.to_string());
        fs::write(out_dir.join(TYPES_FILE), text).unwrap();
        println!(
            "cargo:rustc-env=ISPC_SKINNING_TYPES={}",
            out_dir.join(TYPES_FILE).display()
        );
    }

    /// Copies the fresh libraries, bindings and types into DIR/<triple>/ (types into DIR/) with a MANIFEST.
    fn export(
        dir: &Path,
        version: &str,
        manifest_dir: &Path,
        out_dir: &Path,
        triple: &str,
        targets: &[IsaTarget],
        sources: &[PathBuf],
    ) {
        let dest = dir.join(triple);
        fs::create_dir_all(&dest)
            .unwrap_or_else(|e| fail(format!("cannot create {}: {e}", dest.display())));
        let mut files = Vec::new();
        for (lib, _) in targets.iter().flat_map(IsaTarget::libs) {
            for name in [lib_file(&lib, triple), format!("{lib}.rs")] {
                fs::copy(out_dir.join(&name), dest.join(&name)).unwrap_or_else(|e| {
                    fail(format!("cannot copy {name} to {}: {e}", dest.display()))
                });
                files.push(dest.join(name));
            }
        }
        fs::copy(out_dir.join(TYPES_FILE), dir.join(TYPES_FILE)).unwrap();
        files.push(dir.join(TYPES_FILE));
        let manifest = render_manifest(
            version,
            triple,
            targets,
            sources,
            manifest_dir,
            &dest,
            &files,
        );
        fs::write(dest.join("MANIFEST"), manifest).unwrap();
    }
}

#[cfg(not(feature = "compile-kernels"))]
mod compile {
    use super::*;

    /// Never called: `compile_if_possible` compiles only with the feature on.
    pub fn run(_: &Path, _: &Path, _: &Path, _: &str, _: &[IsaTarget], _: &[PathBuf]) -> String {
        unreachable!("the compile-kernels feature is off")
    }
}

/// A static library's file name on `triple`: ispc_rt's convention (`NAME<triple>.lib` on Windows,
/// `libNAME<triple>.a` elsewhere), except on windows-gnu, where rustc and the MinGW linker look for
/// `libNAME<triple>.a` (see `link_prebuilt`).
fn lib_file(lib: &str, triple: &str) -> String {
    if triple.ends_with("windows-msvc") {
        format!("{lib}{triple}.lib")
    } else {
        format!("lib{lib}{triple}.a")
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn file_sha256(path: &Path) -> Option<String> {
    fs::read(path).ok().map(|b| sha256_hex(&b))
}

/// The MANIFEST beside prebuilt files. Every line is `key value`; `source` and `file` lines use the
/// `sha256sum` format (file paths relative to the triple's folder), so a shell can recheck them.
/// tools/regen-prebuilt writes the same format for the triples it builds through LLVM IR.
#[cfg_attr(not(feature = "compile-kernels"), allow(dead_code))]
fn render_manifest(
    version: &str,
    triple: &str,
    targets: &[IsaTarget],
    sources: &[PathBuf],
    manifest_dir: &Path,
    dest: &Path,
    files: &[PathBuf],
) -> String {
    let mut m = String::new();
    writeln!(m, "# Prebuilt ISPC kernels for ispc-skinning. Generated by tools/regen-prebuilt; do not edit.").unwrap();
    writeln!(m, "ispc_version {version}").unwrap();
    writeln!(m, "triple {triple}").unwrap();
    let list: Vec<&str> = targets.iter().map(|t| t.ispc_target).collect();
    writeln!(m, "targets {}", list.join(",")).unwrap();
    writeln!(m, "flags {ISPC_FLAGS}").unwrap();
    writeln!(m, "det_flags {ISPC_DET_FLAGS}").unwrap();
    writeln!(m, "route ISPC through ispc_compile (build.rs)").unwrap();
    for src in sources {
        let rel = src.strip_prefix(manifest_dir).unwrap_or(src);
        writeln!(
            m,
            "source {}  {}",
            file_sha256(src).unwrap_or_default(),
            rel.display()
        )
        .unwrap();
    }
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy();
        let rel = if file.parent() == Some(dest) {
            name.to_string()
        } else {
            format!("../{name}")
        };
        writeln!(m, "file {}  {rel}", file_sha256(file).unwrap_or_default()).unwrap();
    }
    m
}

/// Links `prebuilt/<triple>/` after proving that it was built from exactly these sources, targets, flags
/// and ISPC version, and that every file is intact.
fn link_prebuilt(
    manifest_dir: &Path,
    dir: &Path,
    triple: &str,
    targets: &[IsaTarget],
    sources: &[PathBuf],
) {
    let fix = "regenerate them with tools/regen-prebuilt, or build with `--features compile-kernels` and \
               ISPC installed (tools/install-ispc) to compile the kernels";
    let shown = dir.display();
    let manifest = fs::read_to_string(dir.join("MANIFEST")).unwrap_or_else(|_| {
        fail(format!(
            "there are no prebuilt kernels for {triple} ({shown}/MANIFEST is missing, and this \
             target should have them); restore the package ispc-skinning-kernels-{triple} (prebuilt/{triple}/ \
             in the repository), or {fix}"
        ))
    });
    let field = |key: &str| -> Vec<&str> {
        manifest
            .lines()
            .filter_map(|l| l.strip_prefix(key).and_then(|rest| rest.strip_prefix(' ')))
            .collect()
    };
    let stale = |what: String| -> ! {
        fail(format!(
            "the prebuilt kernels in {shown} are stale: {what}; {fix}"
        ))
    };
    let version = field("ispc_version").first().copied().unwrap_or("");
    if version != ISPC_VERSION {
        stale(format!("they come from ISPC '{version}', and this crate's kernels are built with ISPC {ISPC_VERSION}"));
    }
    let want: Vec<&str> = targets.iter().map(|t| t.ispc_target).collect();
    let have = field("targets").first().copied().unwrap_or("");
    if have != want.join(",") {
        stale(format!(
            "they hold targets '{have}' but this build wants '{}'",
            want.join(",")
        ));
    }
    if field("flags").first().copied() != Some(ISPC_FLAGS) {
        stale(format!(
            "they were compiled with other ISPC flags than build.rs records ({ISPC_FLAGS})"
        ));
    }
    if field("det_flags").first().copied() != Some(ISPC_DET_FLAGS) {
        stale(format!(
            "their deterministic kernels were compiled with other ISPC flags than build.rs records \
             ({ISPC_DET_FLAGS})"
        ));
    }
    // Compare the source list both ways: a changed, added or removed kernel file makes them stale.
    let pairs = |key: &str| -> Vec<(String, String)> {
        field(key)
            .iter()
            .filter_map(|l| {
                l.split_once("  ")
                    .map(|(h, p)| (p.to_string(), h.to_string()))
            })
            .collect()
    };
    let recorded = pairs("source");
    for src in sources {
        let rel = src
            .strip_prefix(manifest_dir)
            .unwrap_or(src)
            .display()
            .to_string();
        match recorded.iter().find(|(p, _)| *p == rel) {
            None => stale(format!("{rel} is not in the manifest")),
            Some((_, hash)) if Some(hash) != file_sha256(src).as_ref() => {
                stale(format!("{rel} changed since they were built"))
            }
            Some(_) => {}
        }
    }
    if let Some((path, _)) = recorded
        .iter()
        .find(|(p, _)| !manifest_dir.join(p).is_file())
    {
        stale(format!("{path} is in the manifest but no longer exists"));
    }
    // Every file the build needs is listed, present and intact: a damaged archive is caught here, with
    // the fix named, and never as a link error from inside rustc. The shared struct declarations are
    // this package's (prebuilt/ispc_skinning_types.rs), recorded as `../` of the kernels' folder, which
    // is where they lie in the repository.
    let files = pairs("file");
    let types_name = format!("../{TYPES_FILE}");
    let types_path = manifest_dir.join("prebuilt").join(TYPES_FILE);
    let mut needed: Vec<String> = vec![types_name.clone()];
    for (lib, _) in targets.iter().flat_map(IsaTarget::libs) {
        needed.push(lib_file(&lib, triple));
        needed.push(format!("{lib}.rs"));
    }
    for name in &needed {
        let Some((_, hash)) = files.iter().find(|(p, _)| p == name) else {
            stale(format!("{name} is not in MANIFEST"))
        };
        let path = if *name == types_name {
            types_path.clone()
        } else {
            dir.join(name)
        };
        match file_sha256(&path) {
            None => fail(format!(
                "{} is missing; restore it from the package or repository, or {fix}",
                path.display()
            )),
            Some(actual) if actual != *hash => fail(format!(
                "{} is damaged (its SHA-256 differs from MANIFEST); restore it, or {fix}",
                path.display()
            )),
            Some(_) => {}
        }
    }
    println!(
        "cargo:rustc-env=ISPC_SKINNING_TYPES={}",
        types_path.display()
    );
    if triple.ends_with("windows-gnu") {
        // ispc_rt names a Windows library NAME<triple>.lib for both ABIs, but for windows-gnu rustc (which
        // copies a static library into the rlib) looks only for libNAME<triple>.a. So this one step is
        // ours: the same three lines PackagedModule prints, with the file name rustc finds.
        println!("cargo:rustc-link-search=native={}", dir.display());
        for (lib, _) in targets.iter().flat_map(IsaTarget::libs) {
            println!("cargo:rustc-link-lib=static={lib}{triple}");
        }
        println!("cargo:rustc-env=ISPC_OUT_DIR={}", dir.display());
    } else {
        // Reached only with the `kernels` feature, which brings in ispc_rt.
        #[cfg(feature = "kernels")]
        for (lib, _) in targets.iter().flat_map(IsaTarget::libs) {
            ispc_rt::PackagedModule::new(&lib).lib_path(dir).link();
        }
    }
}
