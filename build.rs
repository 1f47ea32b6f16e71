//! Builds the ISPC kernels once per target ISA, or links the committed prebuilt ones.
//!
//! The whole script is one decision table:
//!
//! | question                       | answer                                                                 |
//! |--------------------------------|------------------------------------------------------------------------|
//! | which ISPC targets?            | `ISPC_SKINNING_TARGETS`, else the default list for `CARGO_CFG_TARGET_ARCH` |
//! | which compiler?                | `ISPC` env var, else `<repo>/.ispc/bin/ispc` (tools/install-ispc), else `ispc` on PATH |
//! | compiler found                 | compile every `ispc/*.ispc` per target with `-DISA_SUFFIX=_<isa>`, archive with `cc`, bindgen the headers |
//! | no compiler                    | use `prebuilt/<target triple>/`, after checking its manifest against the sources and targets |
//! | `ISPC_SKINNING_EXPORT_PREBUILT`| also copy the fresh library, bindings and manifest into that directory (tools/regen-prebuilt) |
//! | `ISPC_SKINNING_VERBOSE=1`      | report the compiler, its version and ISPC's own warnings as `cargo:warning` |
//!
//! Why not `ispc_compile`: it builds one multi-target object whose exports are ISPC's dispatcher plus
//! ISPC-named variants (`_avx512skx`), it generates bindings only for the dispatch symbol, and it looks
//! for `ispc` on PATH only. This crate wants Rust to own dispatch over `_sse4/_avx2/_avx512/_neon`
//! symbols and a project-local compiler, so it drives ISPC itself (see README, "Build").

use sha2::{Digest, Sha256};
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The one name of the static library, in OUT_DIR and in prebuilt/.
const LIB_NAME: &str = "ispc_skinning_kernels";
/// The ISPC version the prebuilt files must come from.
const ISPC_VERSION: &str = "1.26.0";
/// Flags shared by every target. Assertions are off because the safe Rust layer validates every input
/// before a kernel runs; --pic because the objects end up in position-independent Rust executables.
const ISPC_FLAGS: &[&str] = &[
    "-O3",
    "--pic",
    "--opt=disable-assertions",
    "--math-lib=default",
];

/// One ISA of the crate's vocabulary. The suffix is what each exported symbol ends with.
struct IsaTarget {
    /// ISPC's target string, for example `avx2-i32x8`.
    ispc_target: String,
    /// `sse4`, `avx2`, `avx512` or `neon`.
    isa: &'static str,
}

fn isa_of_ispc_target(target: &str) -> Option<&'static str> {
    // Only the families that Rust knows how to detect at run time are accepted.
    let family = target.split('-').next()?;
    match family {
        "sse4" | "sse4.2" => Some("sse4"),
        "avx2" => Some("avx2"),
        "avx512skx" => Some("avx512"),
        "neon" => Some("neon"),
        _ => None,
    }
}

fn default_targets(arch: &str) -> &'static [&'static str] {
    match arch {
        "x86_64" => &["sse4-i32x4", "avx2-i32x8", "avx512skx-x16"],
        "aarch64" => &["neon-i32x4"],
        _ => &[],
    }
}

fn ispc_arch(arch: &str) -> Option<&'static str> {
    match arch {
        "x86_64" => Some("x86-64"),
        "aarch64" => Some("aarch64"),
        _ => None,
    }
}

fn ispc_os(os: &str) -> &'static str {
    match os {
        "macos" => "macos",
        "windows" => "windows",
        "android" => "android",
        _ => "linux",
    }
}

fn fail(msg: impl AsRef<str>) -> ! {
    // A build script reports a hard error by failing; the message is what the user sees first.
    eprintln!("\nispc-skinning build error: {}\n", msg.as_ref());
    std::process::exit(1);
}

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap();
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap();
    let triple = env::var("TARGET").unwrap();
    let verbose = env::var("ISPC_SKINNING_VERBOSE").is_ok_and(|v| v != "0" && !v.is_empty());

    for var in [
        "ISPC",
        "ISPC_SKINNING_TARGETS",
        "ISPC_SKINNING_VERBOSE",
        "ISPC_SKINNING_EXPORT_PREBUILT",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=ispc");
    println!("cargo:rerun-if-changed=prebuilt/{triple}");
    // Every ISA the crate can name becomes a known cfg, so `#[cfg(ispc_avx512)]` never warns.
    println!("cargo::rustc-check-cfg=cfg(ispc_sse4, ispc_avx2, ispc_avx512, ispc_neon)");

    let targets = select_targets(&arch);
    let sources = ispc_sources(&manifest_dir.join("ispc"));
    let flags = ISPC_FLAGS.join(" ");

    let how = match find_ispc(&manifest_dir) {
        // An architecture without ISPC targets (or an empty target list) builds the crate with the serial
        // reference only; neither a compiler nor prebuilt files are needed.
        _ if targets.is_empty() => {
            generate_bindings(&targets, &sources, &out_dir, &triple);
            "no ISPC kernels (no targets for this architecture)".to_string()
        }
        Some(ispc) => {
            let version = ispc_version(&ispc);
            if verbose {
                println!(
                    "cargo:warning=ispc-skinning: compiling kernels with {} (ISPC {version})",
                    ispc.display()
                );
            }
            let arch_flag = ispc_arch(&arch).unwrap_or_else(|| {
                fail(format!(
                    "ISPC kernels are not supported on target arch '{arch}'"
                ))
            });
            compile_kernels(
                &ispc,
                arch_flag,
                ispc_os(&os),
                &targets,
                &sources,
                &out_dir,
                verbose,
            );
            generate_bindings(&targets, &sources, &out_dir, &triple);
            let manifest = render_manifest(
                &version,
                &triple,
                &targets,
                &flags,
                &sources,
                &manifest_dir,
                &out_dir,
            );
            if let Ok(dir) = env::var("ISPC_SKINNING_EXPORT_PREBUILT") {
                export_prebuilt(Path::new(&dir), &triple, &out_dir, &manifest);
            }
            format!("compiled with ISPC {version}")
        }
        None => {
            use_prebuilt(&manifest_dir, &out_dir, &triple, &targets, &flags, &sources);
            if verbose {
                println!("cargo:warning=ispc-skinning: no ISPC found, linking prebuilt/{triple}");
            }
            format!("prebuilt ISPC {ISPC_VERSION} kernels")
        }
    };

    if !targets.is_empty() {
        println!("cargo:rustc-link-search=native={}", out_dir.display());
        println!("cargo:rustc-link-lib=static={LIB_NAME}");
    }
    for t in &targets {
        println!("cargo:rustc-cfg=ispc_{}", t.isa);
    }
    let target_list: Vec<&str> = targets.iter().map(|t| t.ispc_target.as_str()).collect();
    println!("cargo:rustc-env=ISPC_SKINNING_BUILD_KERNELS={how}");
    println!(
        "cargo:rustc-env=ISPC_SKINNING_BUILD_TARGETS={}",
        target_list.join(",")
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
    for ispc_target in requested {
        let isa = isa_of_ispc_target(&ispc_target).unwrap_or_else(|| {
            fail(format!(
                "ISPC_SKINNING_TARGETS names '{ispc_target}', which is not an sse4-*, avx2-*, avx512skx-* or neon-* target"
            ))
        });
        let arch_ok = match isa {
            "neon" => arch == "aarch64",
            _ => arch == "x86_64",
        };
        if !arch_ok {
            fail(format!(
                "ISPC target '{ispc_target}' cannot be built for target arch '{arch}'"
            ));
        }
        if let Some(other) = targets.iter().find(|t| t.isa == isa) {
            fail(format!(
                "ISPC_SKINNING_TARGETS names two targets for the {isa} ISA ('{}' and '{ispc_target}'); \
                 each ISA exports one set of *_{isa} symbols, so pick one gang width",
                other.ispc_target
            ));
        }
        targets.push(IsaTarget { ispc_target, isa });
    }
    targets
}

/// The kernel sources (`*.ispc`) and headers (`*.isph`), sorted so hashes and link order are stable.
fn ispc_sources(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", dir.display())))
        .filter_map(|e| e.ok().map(|e| e.path()))
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
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|d| d.join("ispc"))
        .find(|p| p.is_file())
}

fn ispc_version(ispc: &Path) -> String {
    let out = Command::new(ispc)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| fail(format!("cannot run {}: {e}", ispc.display())));
    let text = String::from_utf8_lossy(&out.stdout);
    // "Intel(r) Implicit SPMD Program Compiler (Intel(r) ISPC), 1.26.0 (build ...)"
    text.split("ISPC), ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .map(str::to_string)
        .unwrap_or_else(|| {
            fail(format!(
                "cannot read the version from `{} --version`: {text}",
                ispc.display()
            ))
        })
}

fn compile_kernels(
    ispc: &Path,
    arch: &str,
    os: &str,
    targets: &[IsaTarget],
    sources: &[PathBuf],
    out_dir: &Path,
    verbose: bool,
) {
    let include_dir = sources
        .first()
        .and_then(|p| p.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    // Every (target, source) pair is its own ISPC run. They run on as many threads as cargo allows this
    // build script (NUM_JOBS), because the skinning file alone takes ISPC over ten seconds per target.
    // The objects keep the order of the pairs, so the archive does not depend on which run ends first.
    let jobs: Vec<(&IsaTarget, &PathBuf)> = targets
        .iter()
        .flat_map(|t| {
            sources
                .iter()
                .filter(|p| p.extension().is_some_and(|e| e == "ispc"))
                .map(move |src| (t, src))
        })
        .collect();
    let workers = env::var("NUM_JOBS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, jobs.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<(PathBuf, String)>>> =
        jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(t, src)) = jobs.get(i) else {
                    break;
                };
                let done = compile_one(ispc, arch, os, t, src, &include_dir, out_dir);
                *results[i].lock().unwrap() = Some(done);
            });
        }
    });
    let mut objects = Vec::new();
    for slot in results {
        let (obj, stderr) = slot.into_inner().unwrap().expect("every job ran");
        if verbose {
            for line in stderr.lines().filter(|l| l.contains("Warning")) {
                println!("cargo:warning={line}");
            }
        }
        objects.push(obj);
    }
    if objects.is_empty() {
        return;
    }
    // cc picks the archiver for the target triple (for example aarch64-linux-gnu-ar when cross building).
    cc::Build::new()
        .objects(&objects)
        .cargo_metadata(false)
        .compile(LIB_NAME);
}

/// Compiles one kernel file for one target; returns the object's path and ISPC's warnings. Any failure
/// ends the build with ISPC's message.
fn compile_one(
    ispc: &Path,
    arch: &str,
    os: &str,
    t: &IsaTarget,
    src: &Path,
    include_dir: &Path,
    out_dir: &Path,
) -> (PathBuf, String) {
    let stem = src.file_stem().unwrap().to_string_lossy();
    let obj = out_dir.join(format!("{stem}_{}.o", t.isa));
    let header = out_dir.join(format!("{stem}_{}.h", t.isa));
    let out = Command::new(ispc)
        .args(ISPC_FLAGS)
        .arg(format!("--arch={arch}"))
        .arg(format!("--target-os={os}"))
        .arg(format!("--target={}", t.ispc_target))
        .arg(format!("-DISA_SUFFIX=_{}", t.isa))
        .arg("-I")
        .arg(include_dir)
        .arg(src)
        .arg("-o")
        .arg(&obj)
        .arg("-h")
        .arg(&header)
        .output()
        .unwrap_or_else(|e| fail(format!("cannot run {}: {e}", ispc.display())));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        fail(format!(
            "ISPC failed on {} for {}:\n{stderr}",
            src.display(),
            t.ispc_target
        ));
    }
    (obj, stderr)
}

fn generate_bindings(targets: &[IsaTarget], sources: &[PathBuf], out_dir: &Path, triple: &str) {
    let bindings_path = out_dir.join("ispc_bindings.rs");
    if targets.is_empty() {
        fs::write(&bindings_path, "// No ISPC targets were built.\n").unwrap();
        return;
    }
    // One wrapper includes every per-ISA header, so shared declarations appear once.
    let mut wrapper = String::new();
    for t in targets {
        for src in sources
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "ispc"))
        {
            let stem = src.file_stem().unwrap().to_string_lossy();
            writeln!(wrapper, "#include \"{stem}_{}.h\"", t.isa).unwrap();
        }
    }
    let wrapper_path = out_dir.join("ispc_wrapper.h");
    fs::write(&wrapper_path, wrapper).unwrap();
    let suffixes: Vec<&str> = targets.iter().map(|t| t.isa).collect();
    let bindings = bindgen::Builder::default()
        .header(wrapper_path.to_string_lossy())
        // Freestanding: the headers only need stdint.h and stdbool.h, which clang ships itself, so a
        // cross build does not need the target's C library headers.
        .clang_args([
            "-ffreestanding",
            &format!("--target={triple}"),
            &format!("-I{}", out_dir.display()),
        ])
        .allowlist_function(format!(".*_({})", suffixes.join("|")))
        .layout_tests(false)
        .generate_comments(false)
        .generate()
        .unwrap_or_else(|e| {
            fail(format!(
                "bindgen failed on the ISPC headers (is libclang installed?): {e}"
            ))
        });
    let mut text =
        String::from("// Generated by build.rs with bindgen from the ISPC headers. Do not edit.\n");
    text.push_str(&bindings.to_string());
    fs::write(&bindings_path, text).unwrap();
}

fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn file_sha256(path: &Path) -> String {
    sha256_hex(
        &fs::read(path).unwrap_or_else(|e| fail(format!("cannot read {}: {e}", path.display()))),
    )
}

fn lib_file_name() -> String {
    format!("lib{LIB_NAME}.a")
}

/// The manifest that sits beside prebuilt files. Every line is `key value`; `source` lines use the
/// `sha256sum` format so a shell can recheck them.
fn render_manifest(
    version: &str,
    triple: &str,
    targets: &[IsaTarget],
    flags: &str,
    sources: &[PathBuf],
    manifest_dir: &Path,
    out_dir: &Path,
) -> String {
    let mut m = String::new();
    writeln!(m, "# Prebuilt ISPC kernels for ispc-skinning. Generated by tools/regen-prebuilt; do not edit.").unwrap();
    writeln!(m, "ispc_version {version}").unwrap();
    writeln!(m, "triple {triple}").unwrap();
    let list: Vec<&str> = targets.iter().map(|t| t.ispc_target.as_str()).collect();
    writeln!(m, "targets {}", list.join(",")).unwrap();
    writeln!(m, "flags {flags}").unwrap();
    for src in sources {
        let rel = src.strip_prefix(manifest_dir).unwrap_or(src);
        writeln!(m, "source {}  {}", file_sha256(src), rel.display()).unwrap();
    }
    writeln!(
        m,
        "library {}  {}",
        file_sha256(&out_dir.join(lib_file_name())),
        lib_file_name()
    )
    .unwrap();
    writeln!(
        m,
        "bindings {}  ispc_bindings.rs",
        file_sha256(&out_dir.join("ispc_bindings.rs"))
    )
    .unwrap();
    m
}

fn export_prebuilt(dir: &Path, triple: &str, out_dir: &Path, manifest: &str) {
    let dest = dir.join(triple);
    fs::create_dir_all(&dest)
        .unwrap_or_else(|e| fail(format!("cannot create {}: {e}", dest.display())));
    for name in [lib_file_name().as_str(), "ispc_bindings.rs"] {
        fs::copy(out_dir.join(name), dest.join(name))
            .unwrap_or_else(|e| fail(format!("cannot copy {name} to {}: {e}", dest.display())));
    }
    fs::write(dest.join("MANIFEST"), manifest).unwrap();
}

/// Links `prebuilt/<triple>/` after proving that it was built from exactly these sources and targets.
fn use_prebuilt(
    manifest_dir: &Path,
    out_dir: &Path,
    triple: &str,
    targets: &[IsaTarget],
    flags: &str,
    sources: &[PathBuf],
) {
    let dir = manifest_dir.join("prebuilt").join(triple);
    let manifest_path = dir.join("MANIFEST");
    let hint =
        "install ISPC with tools/install-ispc (or set ISPC=/path/to/ispc) to compile the kernels";
    let manifest = fs::read_to_string(&manifest_path).unwrap_or_else(|_| {
        fail(format!(
            "no ISPC compiler was found and there are no prebuilt kernels for {triple}; {hint}"
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
            "the prebuilt kernels in prebuilt/{triple} are stale: {what}. \
             Regenerate them with tools/regen-prebuilt, or {hint}"
        ))
    };
    let want_targets: Vec<&str> = targets.iter().map(|t| t.ispc_target.as_str()).collect();
    let have_targets = field("targets").first().copied().unwrap_or("");
    if have_targets != want_targets.join(",") {
        stale(format!(
            "they hold targets '{have_targets}' but this build wants '{}'",
            want_targets.join(",")
        ));
    }
    if field("flags").first().copied() != Some(flags) {
        stale(format!(
            "they were compiled with different ISPC flags than build.rs uses ({flags})"
        ));
    }
    // Compare the source list both ways: a changed, added or removed kernel file makes them stale.
    let recorded: Vec<(String, String)> = field("source")
        .iter()
        .filter_map(|l| {
            l.split_once("  ")
                .map(|(h, p)| (p.to_string(), h.to_string()))
        })
        .collect();
    for src in sources {
        let rel = src
            .strip_prefix(manifest_dir)
            .unwrap_or(src)
            .display()
            .to_string();
        match recorded.iter().find(|(p, _)| *p == rel) {
            None => stale(format!("{rel} is not in the manifest")),
            Some((_, hash)) if *hash != file_sha256(src) => {
                stale(format!("{rel} changed since they were built"))
            }
            Some(_) => {}
        }
    }
    for (path, _) in &recorded {
        if !manifest_dir.join(path).is_file() {
            stale(format!("{path} is in the manifest but no longer exists"));
        }
    }
    for (key, name) in [
        ("library", lib_file_name()),
        ("bindings", "ispc_bindings.rs".to_string()),
    ] {
        let recorded = field(key)
            .first()
            .and_then(|l| l.split_once("  "))
            .map(|(h, _)| h.to_string());
        let actual = file_sha256(&dir.join(&name));
        if recorded.as_deref() != Some(actual.as_str()) {
            stale(format!("{name} does not match the hash in MANIFEST"));
        }
        fs::copy(dir.join(&name), out_dir.join(&name)).unwrap();
    }
}
