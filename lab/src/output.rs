//! Every file the `ispc-skinning` command writes (`skin --out`, `bench --json`, `bench --plot`) goes
//! through this module, under two rules:
//!
//! - **An output never replaces an input.** Before any work, each output path is compared with the
//!   files the command reads ([`Protected`]): the input file itself and, for a glTF, every file its
//!   `buffers` and `images` name by a relative URI (the `.bin` of a `.gltf`, its textures), so a run
//!   can destroy neither the character nor the data it points to. Files are compared by device and
//!   inode, so another name of the same file is caught whatever its extension (a JSON glTF named
//!   `.json`, a GLB named `.png`), and so are symbolic and hard links to it. The refusal is a usage
//!   error (exit status 2) that names the flag and the file; nothing is written.
//! - **A failed write leaves the old file whole.** The bytes go to a new temporary file in the
//!   destination's folder (`.NAME.ispc-skinning-PID-N.tmp`, NAME cut to 64 characters, created
//!   exclusively), are flushed to disk, and only then is the temporary file renamed over the
//!   destination, which is atomic on one file system: a reader sees the old file or the new one, never
//!   a part. If anything fails (a full disk, a file size limit, a folder that cannot be written) the
//!   temporary file is removed and the destination is as it was. A destination that is a symbolic link is resolved first, so the file it
//!   points to is replaced and the link kept; a destination with other hard links gets a new inode (the
//!   other names keep the old content). The new file keeps the permissions of the one it replaces.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The identity of a file: device and inode on Unix; elsewhere, the canonical path.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FileId(#[cfg(unix)] (u64, u64), #[cfg(not(unix))] PathBuf);

/// The identity of the file `path` names (following symbolic links), or `None` when there is none.
fn file_id(path: &Path) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let meta = std::fs::metadata(path).ok()?;
        Some(FileId((meta.dev(), meta.ino())))
    }
    #[cfg(not(unix))]
    {
        path.canonicalize().ok().map(FileId)
    }
}

/// The files a command reads, which none of its outputs may replace.
#[derive(Debug, Default)]
pub struct Protected {
    /// Each file as the user or the glTF named it, with its identity.
    files: Vec<(PathBuf, FileId)>,
}

impl Protected {
    /// Nothing protected yet.
    pub fn new() -> Protected {
        Protected::default()
    }

    /// Protects the file at `path`, when there is one (a path that names nothing cannot be replaced by
    /// an output without first being created, and a command that reads it fails anyway).
    pub fn file(&mut self, path: &Path) {
        if let Some(id) = file_id(path) {
            self.files.push((path.to_path_buf(), id));
        }
    }

    /// Protects a glTF file (`.gltf` or `.glb`) and every file its `buffers` and `images` name by a
    /// relative URI (percent-decoded, relative to the file's folder). Only the JSON is read, at most
    /// `max_bytes` of it; a file that is not a regular file, or whose JSON cannot be read, protects
    /// itself only (the importer refuses it anyway).
    pub fn gltf(&mut self, path: &Path, max_bytes: usize) {
        self.file(path);
        let Some(json) = gltf_json(path, max_bytes) else {
            return;
        };
        let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&json) else {
            return;
        };
        let dir = path.parent().unwrap_or(Path::new(""));
        for list in ["buffers", "images"] {
            let Some(items) = doc.get(list).and_then(|v| v.as_array()) else {
                continue;
            };
            for uri in items.iter().filter_map(|b| b.get("uri")?.as_str()) {
                if uri.starts_with("data:") {
                    continue;
                }
                // The raw and the decoded spelling, in case a name holds a literal '%'.
                for name in [Some(uri.to_string()), percent_decode(uri)]
                    .into_iter()
                    .flatten()
                {
                    self.file(&dir.join(name));
                }
            }
        }
    }

    /// Refuses `out` (given by `flag`) when it names a protected file, by identity.
    ///
    /// # Errors
    /// `"{flag} {out}: refusing to overwrite the input {file}"`, with the input's own name.
    pub fn check(&self, flag: &str, out: &Path) -> Result<(), String> {
        let Some(id) = file_id(out) else {
            return Ok(());
        };
        match self.files.iter().find(|(_, f)| *f == id) {
            Some((input, _)) => Err(format!(
                "{flag} {}: refusing to overwrite the input {} (it is the same file); choose another output path",
                ispc_skinning::Escaped(&out.display().to_string()),
                ispc_skinning::Escaped(&input.display().to_string())
            )),
            None => Ok(()),
        }
    }
}

/// The JSON of a glTF: a `.glb`'s JSON chunk or a `.gltf`'s whole text, at most `max` bytes.
fn gltf_json(path: &Path, max: usize) -> Option<Vec<u8>> {
    let meta = std::fs::metadata(path).ok()?;
    // A FIFO or a device would block or never end.
    if !meta.is_file() {
        return None;
    }
    let max = max as u64;
    let mut file = std::fs::File::open(path).ok()?;
    let mut data = Vec::new();
    (&mut file).take(20).read_to_end(&mut data).ok()?;
    // The GLB header (magic, version, length), then the JSON chunk's length and type.
    if let [b'g', b'l', b'T', b'F', _, _, _, _, _, _, _, _, l0, l1, l2, l3, b'J', b'S', b'O', b'N'] =
        data[..]
    {
        let length = u64::from(u32::from_le_bytes([l0, l1, l2, l3]));
        if length > max {
            return None;
        }
        let mut json = Vec::new();
        file.take(length).read_to_end(&mut json).ok()?;
        return Some(json);
    }
    file.take(max.saturating_sub(data.len() as u64))
        .read_to_end(&mut data)
        .ok()?;
    Some(data)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Refuses two outputs of one run that name the same file (the second would replace the first).
///
/// # Errors
/// `"{flag_a} and {flag_b} name the same file {path}"`.
pub fn distinct(a: (&str, &Path), b: (&str, &Path)) -> Result<(), String> {
    let same = match (file_id(a.1), file_id(b.1)) {
        (Some(x), Some(y)) => x == y,
        // Not there yet: the same folder and name.
        _ => {
            let place = |p: &Path| {
                let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
                let dir = dir.unwrap_or(Path::new("."));
                (dir.canonicalize().ok(), p.file_name().map(|n| n.to_owned()))
            };
            let (pa, pb) = (place(a.1), place(b.1));
            pa.0.is_some() && pa == pb || a.1 == b.1
        }
    };
    if same {
        return Err(format!(
            "{} and {} name the same file {}",
            a.0,
            b.0,
            ispc_skinning::Escaped(&b.1.display().to_string())
        ));
    }
    Ok(())
}

/// Counts temporary files, so that two writes of one process never pick the same name.
static TEMPORARIES: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `out` (given by `flag`) as the module docs describe: `protected` is checked again,
/// then the bytes go to a temporary file in the same folder that is renamed over `out`.
///
/// # Errors
/// A protected destination (as [`Protected::check`]) or any failure to write, as
/// `"cannot write '{out}': {reason}"`; then the destination is untouched and no temporary file is left.
pub fn write(flag: &str, out: &Path, bytes: &[u8], protected: &Protected) -> Result<(), String> {
    protected.check(flag, out)?;
    let shown = || ispc_skinning::Escaped(&out.display().to_string()).to_string();
    let fail = |e: std::io::Error| format!("cannot write '{}': {e}", shown());
    // A symbolic link is followed: the file it points to is replaced, the link stays.
    let target = match std::fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() => out.canonicalize().map_err(fail)?,
        _ => out.to_path_buf(),
    };
    let old = std::fs::metadata(&target).ok();
    if old.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(format!("cannot write '{}': it is a directory", shown()));
    }
    let name = target
        .file_name()
        .ok_or_else(|| format!("cannot write '{}': it names no file", shown()))?;
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty());
    let dir = dir.unwrap_or(Path::new("."));
    // At most 64 characters of the name, so that a long name still leaves room for the suffix.
    let stem: String = name.to_string_lossy().chars().take(64).collect();
    let temporary = dir.join(format!(
        ".{stem}.ispc-skinning-{}-{}.tmp",
        std::process::id(),
        TEMPORARIES.fetch_add(1, Ordering::Relaxed)
    ));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .map_err(fail)?;
    let written = (|| {
        file.write_all(bytes)?;
        if let Some(old) = &old {
            file.set_permissions(old.permissions())?;
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temporary, &target)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        fail(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "ispc-skinning-output-{}-{test}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn write_replaces_whole_and_leaves_no_temporary() {
        let dir = scratch("replace");
        let out = dir.join("a.json");
        std::fs::write(&out, b"old").unwrap();
        write("--out", &out, b"new bytes", &Protected::new()).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new bytes");
        assert!(leftovers(&dir).is_empty());
        // A directory in the way: an error, nothing left behind.
        let sub = dir.join("sub");
        std::fs::create_dir(&sub).unwrap();
        assert!(write("--out", &sub, b"x", &Protected::new()).is_err());
        assert!(leftovers(&dir).is_empty());
        // A folder that does not exist: an error.
        assert!(write("--out", &dir.join("no/such.json"), b"x", &Protected::new()).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn inputs_and_the_files_they_name_are_refused_by_identity() {
        let dir = scratch("protect");
        let gltf = dir.join("rig.gltf");
        let doc = r#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":4,"uri":"rig%20data.bin"},{"byteLength":1,"uri":"data:application/octet-stream;base64,AA=="}],"images":[{"uri":"skin.png"}]}"#;
        std::fs::write(&gltf, doc).unwrap();
        std::fs::write(dir.join("rig data.bin"), b"1234").unwrap();
        std::fs::write(dir.join("skin.png"), b"png").unwrap();
        std::fs::write(dir.join("other.json"), b"other").unwrap();
        let mut protected = Protected::new();
        protected.gltf(&gltf, 1 << 20);
        std::os::unix::fs::symlink(&gltf, dir.join("link.obj")).unwrap();
        std::fs::hard_link(&gltf, dir.join("hard.png")).unwrap();
        for refused in [
            "rig.gltf",
            "link.obj",
            "hard.png",
            "rig data.bin",
            "skin.png",
            "./rig.gltf",
        ] {
            let out = dir.join(refused);
            let e = write("--out", &out, b"x", &protected).unwrap_err();
            assert!(
                e.contains("refusing to overwrite the input"),
                "{refused}: {e}"
            );
        }
        assert_eq!(std::fs::read_to_string(&gltf).unwrap(), doc);
        assert_eq!(std::fs::read(dir.join("rig data.bin")).unwrap(), b"1234");
        write("--out", &dir.join("other.json"), b"y", &protected).unwrap();
        write("--out", &dir.join("new.json"), b"z", &protected).unwrap();
        assert!(distinct(("--json", &dir.join("a")), ("--plot", &dir.join("./a"))).is_err());
        assert!(distinct(
            ("--json", &dir.join("other.json")),
            ("--plot", &dir.join("hard.png"))
        )
        .is_ok());
        assert!(distinct(("--json", &dir.join("hard.png")), ("--plot", &gltf)).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_destination_keeps_the_link() {
        let dir = scratch("link");
        let target = dir.join("real.json");
        std::fs::write(&target, b"old").unwrap();
        let link = dir.join("link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write("--out", &link, b"new", &Protected::new()).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert!(leftovers(&dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
