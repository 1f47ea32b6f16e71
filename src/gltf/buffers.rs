//! Buffers: the GLB `BIN` chunk, base64 data URIs, and external files next to the `.gltf` (relative,
//! percent-decoded, read no further than their declared length).

use super::error::GltfError;
use super::limits::ImportLimits;
use super::schema::Document;
use crate::Error;
use base64::Engine as _;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One buffer's bytes: the first `len` bytes of data that several buffers may share (the GLB `BIN`
/// chunk, or one external file named by several buffers), so that a file cannot multiply its own size
/// by naming the same data many times.
pub(super) struct LoadedBuffer {
    data: Arc<[u8]>,
    len: usize,
}

impl LoadedBuffer {
    /// The buffer's bytes (`byteLength` of them; checked when loaded).
    pub(super) fn bytes(&self) -> &[u8] {
        &self.data[..self.len.min(self.data.len())]
    }
}

/// Every buffer's bytes, cut to its declared `byteLength`, and the bytes actually held (each shared
/// source counted once), which sets the read budget.
pub(super) fn load_buffers(
    doc: &Document,
    blob: Option<&[u8]>,
    base_dir: Option<&Path>,
    max_file_bytes: usize,
) -> Result<(Vec<LoadedBuffer>, usize), GltfError<Error>> {
    let mut out = Vec::new();
    let mut held = 0usize;
    let mut bin: Option<Arc<[u8]>> = None;
    let mut files: HashMap<PathBuf, Arc<[u8]>> = HashMap::new();
    for (index, buffer) in doc.buffers.iter().enumerate() {
        let err = |reason: String| GltfError::Buffer {
            buffer: index,
            reason,
        };
        let length = buffer.length;
        let data: Arc<[u8]> = match buffer.uri.as_deref() {
            None => {
                // The spec lets only the first buffer be the BIN chunk.
                if index != 0 {
                    return Err(err(
                        "only the first buffer may leave out its uri (the GLB BIN chunk)".into(),
                    ));
                }
                let chunk = blob.ok_or_else(|| {
                    err("it refers to the GLB BIN chunk, which is missing".into())
                })?;
                bin.get_or_insert_with(|| {
                    held = held.saturating_add(chunk.len());
                    Arc::from(chunk)
                })
                .clone()
            }
            Some(uri) if uri.starts_with("data:") => {
                let (_, payload) = uri
                    .split_once(";base64,")
                    .ok_or_else(|| err("only base64 data URIs are supported".into()))?;
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(payload)
                    .map_err(|e| err(format!("bad base64 data URI: {e}")))?;
                held = held.saturating_add(decoded.len());
                Arc::from(decoded)
            }
            Some(uri) => {
                let path = external_path(uri, base_dir).map_err(|r| err(r.to_string()))?;
                ImportLimits::check("file_bytes", length, max_file_bytes)?;
                // A file named by several buffers is read once, whole (up to the limit).
                let key = path.canonicalize().unwrap_or_else(|_| path.clone());
                match files.get(&key) {
                    Some(data) => data.clone(),
                    None => {
                        let bytes = read_capped(&path, max_file_bytes).map_err(|e| match e {
                            GltfError::Io { path, message } if message == NOT_REGULAR => {
                                err(format!("'{path}' is {message}"))
                            }
                            GltfError::Io { path, message } => {
                                err(format!("cannot open '{path}': {message}"))
                            }
                            other => other,
                        })?;
                        let data: Arc<[u8]> = Arc::from(bytes);
                        held = held.saturating_add(data.len());
                        files.insert(key, data.clone());
                        data
                    }
                }
            }
        };
        if data.len() < length {
            return Err(err(format!(
                "it holds {} bytes, fewer than its byteLength {length}",
                data.len()
            )));
        }
        out.push(LoadedBuffer { data, len: length });
    }
    Ok((out, held))
}

/// The file an external buffer URI names: relative, no scheme, percent-decoded, and inside `base_dir`
/// after normalization. A `..` component (written out or percent-encoded as `%2e%2e`, with `/` or `\`
/// separators), an absolute path, a drive letter, a `file:` or other scheme, a NUL, or a symbolic link
/// that leads outside the directory are all refused, so a file can never make the importer read
/// anything but the files beside it.
fn external_path(uri: &str, base_dir: Option<&Path>) -> Result<PathBuf, &'static str> {
    let base = base_dir.ok_or(
        "it is an external file, and a glTF loaded from bytes without a directory cannot read one",
    )?;
    let scheme = uri
        .split_once(':')
        .is_some_and(|(s, _)| !s.is_empty() && !s.contains('/'));
    if scheme {
        return Err("only data URIs and relative file paths are supported");
    }
    let decoded = percent_decode(uri).ok_or("the URI has a bad percent escape")?;
    if decoded.contains('\0') {
        return Err("an external buffer path cannot contain a NUL");
    }
    let outside = "an external buffer path must stay inside the directory of the .gltf file";
    if decoded.starts_with(['/', '\\']) || Path::new(&decoded).is_absolute() {
        return Err(outside);
    }
    // Either separator, whatever the platform: a Windows-style "..\\x" is as much a way out.
    let mut relative = PathBuf::new();
    for part in decoded.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => return Err(outside),
            // A drive prefix ("C:") after decoding is a way to an absolute path on Windows.
            p if p.contains(':') => return Err(outside),
            p => relative.push(p),
        }
    }
    // A bare file name ("model.gltf") has the empty path as its directory: the current one.
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    let path = base.join(relative);
    // A symbolic link inside the directory may still lead out of it: compare the resolved paths. A
    // directory that cannot be resolved is refused rather than trusted; a file that does not exist
    // (or a link to nothing) cannot be resolved either, and fails when it is opened.
    let real_base = base
        .canonicalize()
        .map_err(|_| "the directory of the .gltf file cannot be resolved")?;
    if let Ok(real) = path.canonicalize() {
        if !real.starts_with(&real_base) {
            return Err(outside);
        }
    }
    Ok(path)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The message of a path that names something other than a regular file.
const NOT_REGULAR: &str = "not a regular file";

/// Reads a whole file of at most `max` bytes that is a regular file: a FIFO, a device such as
/// `/dev/zero` or a file past the limit is an error before (or instead of) reading without end.
pub(super) fn read_capped(path: &Path, max: usize) -> Result<Vec<u8>, GltfError<Error>> {
    let io = |message: String| GltfError::Io {
        path: path.display().to_string(),
        message,
    };
    // The type is checked before the file is opened: opening a FIFO would wait for a writer.
    let meta = std::fs::metadata(path).map_err(|e| io(e.to_string()))?;
    if !meta.is_file() {
        return Err(io(NOT_REGULAR.into()));
    }
    let file = std::fs::File::open(path).map_err(|e| io(e.to_string()))?;
    // Checked again on the open file, in case the path was replaced in between.
    if !file.metadata().map_err(|e| io(e.to_string()))?.is_file() {
        return Err(io(NOT_REGULAR.into()));
    }
    let declared = usize::try_from(meta.len()).unwrap_or(usize::MAX);
    ImportLimits::check("file_bytes", declared, max)?;
    let mut data = Vec::new();
    // One byte more than the limit, so a file that grew after the metadata was read is caught too.
    file.take((max as u64).saturating_add(1))
        .read_to_end(&mut data)
        .map_err(|e| io(e.to_string()))?;
    ImportLimits::check("file_bytes", data.len(), max)?;
    Ok(data)
}
