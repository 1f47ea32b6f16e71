//! Hostile glTF input (issue 15: "Hostile input never panics, never reads outside, never runs away"):
//! one module per class of the issue, each test asserting the exact typed error and its message.
//!
//! - `json`: documents that panicked inside the gltf crate, now [`GltfError::Json`] with the JSON path
//!   (as .gltf and as the same JSON inside a GLB container);
//! - `paths`: external buffer URIs that lead out of the asset's directory;
//! - `limits`: every [`ImportLimits`](ispc_skinning::gltf::ImportLimits) field at and one past its
//!   value, the instancing amplification, and files that are not regular files;
//! - `amplify`: small files that still ask for far more memory or time than they hold, held to the
//!   read budget the module docs state;
//! - `keys`: finite key times whose spans overflow;
//! - `api`: the typed errors at the crate's API edges (crowds, palettes, meshes, skeletons);
//! - `mutate`: seeded mutations of the real assets, none of which may panic;
//! - `numbers`: issue 31's rules: node matrices that are a TRS, rotations of a normal squared length,
//!   finite vertex attributes, and public functions given `usize::MAX` as an index.
//!
//! The binary counts the bytes each thread allocates ([`peak_alloc`], [`counted`]), so a test can show
//! that a refused file was refused before anything large was allocated, and bound the work a load
//! does by counting it (bytes and calls allocated), never by the clock.
#![cfg(feature = "gltf")]

#[path = "../common/mod.rs"]
mod common;

mod amplify;
mod api;
mod json;
mod keys;
mod limits;
mod mutate;
mod numbers;
mod paths;

use base64::Engine as _;
use ispc_skinning::gltf::{GltfError, GltfScene};
use ispc_skinning::Error;
use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------------
// Allocation accounting, per thread (the importer runs on the caller's thread).

/// The system allocator, counting the live bytes of each thread and their peak.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    static TOTAL: Cell<usize> = const { Cell::new(0) };
    static CALLS: Cell<usize> = const { Cell::new(0) };
}

/// Adds an allocation (or the growth of a reallocation) to this thread's running work counts.
fn count_work(bytes: usize) {
    let _ = TOTAL.try_with(|t| t.set(t.get().saturating_add(bytes)));
    let _ = CALLS.try_with(|c| c.set(c.get() + 1));
}

fn account(delta: isize) {
    // `try_with`: a thread's last frees can come after its locals are gone.
    let _ = LIVE.try_with(|live| {
        let v = live.get() + delta;
        live.set(v);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(v)));
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counting touches only
// const-initialized thread locals without destructors, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            account(layout.size() as isize);
            count_work(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            account(layout.size() as isize);
            count_work(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        account(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            account(new_size as isize - layout.size() as isize);
            count_work(new_size.saturating_sub(layout.size()));
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the most bytes this thread held at once during it, beyond
/// what it held before.
pub fn peak_alloc<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, (peak - start).max(0) as usize)
}

/// What a call did, counted by this thread's allocator: the most bytes it held at once beyond what
/// the thread held before, every byte it allocated (a freed and reallocated byte counts again, so
/// work repeated N times counts N times), and its allocation calls. The tests bound work with these
/// counts, never with the clock, so a bound holds on any machine and under an emulator.
#[derive(Clone, Copy, Debug)]
pub struct Work {
    pub peak: usize,
    pub total: usize,
    pub calls: usize,
}

/// Runs `f` and counts its [`Work`] on this thread.
pub fn counted<T>(f: impl FnOnce() -> T) -> (T, Work) {
    let (total, calls) = (TOTAL.with(Cell::get), CALLS.with(Cell::get));
    let (out, peak) = peak_alloc(f);
    let work = Work {
        peak,
        total: TOTAL.with(Cell::get) - total,
        calls: CALLS.with(Cell::get) - calls,
    };
    (out, work)
}

// ---------------------------------------------------------------------------------------------------
// Small files.

/// Builds a glTF: binary data goes into one buffer, embedded as a base64 data URI, a GLB BIN chunk or
/// an external file.
#[derive(Default, Clone)]
pub struct Builder {
    pub bin: Vec<u8>,
    pub views: Vec<Value>,
    pub accessors: Vec<Value>,
}

impl Builder {
    pub fn raw(&mut self, bytes: &[u8], component: u32, count: usize, ty: &str) -> usize {
        while self.bin.len() % 4 != 0 {
            self.bin.push(0);
        }
        self.views
            .push(json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()}));
        self.bin.extend_from_slice(bytes);
        self.accessors.push(json!({"bufferView": self.views.len() - 1, "componentType": component, "count": count, "type": ty}));
        self.accessors.len() - 1
    }

    fn comps(ty: &str) -> usize {
        match ty {
            "SCALAR" => 1,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            _ => panic!("{ty}"),
        }
    }

    pub fn f32s(&mut self, data: &[f32], ty: &str) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let a = self.raw(&bytes, 5126, data.len() / Self::comps(ty), ty);
        // The spec (and the gltf crate's validation) requires bounds on POSITION accessors.
        if ty == "VEC3" {
            let bound = |f: fn(f32, f32) -> f32, init: f32| -> Vec<f32> {
                (0..3)
                    .map(|c| data.iter().skip(c).step_by(3).copied().fold(init, f))
                    .collect()
            };
            self.accessors[a]["min"] = json!(bound(f32::min, f32::INFINITY));
            self.accessors[a]["max"] = json!(bound(f32::max, f32::NEG_INFINITY));
        }
        a
    }

    pub fn u8s(&mut self, data: &[u8], ty: &str) -> usize {
        self.raw(data, 5121, data.len() / Self::comps(ty), ty)
    }

    /// The document with the views and accessors, without buffers.
    pub fn document(&self, mut doc: Value) -> Value {
        doc["asset"] = json!({"version": "2.0"});
        doc["bufferViews"] = json!(self.views);
        doc["accessors"] = json!(self.accessors);
        doc
    }

    /// The document of a .gltf whose buffer is a base64 data URI.
    pub fn gltf_doc(&self, doc: Value) -> Value {
        let mut doc = self.document(doc);
        let uri = format!(
            "data:application/octet-stream;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&self.bin)
        );
        doc["buffers"] = json!([{"byteLength": self.bin.len(), "uri": uri}]);
        doc
    }

    /// The document of a .glb whose buffer is the BIN chunk.
    pub fn glb_doc(&self, doc: Value) -> Value {
        let mut doc = self.document(doc);
        doc["buffers"] = json!([{"byteLength": self.bin.len()}]);
        doc
    }

    /// A .gltf with the buffer as a data URI.
    pub fn gltf(&self, doc: Value) -> Vec<u8> {
        serde_json::to_vec(&self.gltf_doc(doc)).unwrap()
    }

    /// A .glb with the buffer as the BIN chunk.
    pub fn glb(&self, doc: Value) -> Vec<u8> {
        glb(
            &serde_json::to_vec(&self.glb_doc(doc)).unwrap(),
            Some(&self.bin),
        )
    }
}

/// A GLB container: the 12-byte header, the JSON chunk (padded with spaces) and, when given, the BIN
/// chunk (padded with zeros), every length consistent.
pub fn glb(json: &[u8], bin: Option<&[u8]>) -> Vec<u8> {
    let mut json = json.to_vec();
    while json.len() % 4 != 0 {
        json.push(b' ');
    }
    let bin = bin.map(|b| {
        let mut b = b.to_vec();
        while b.len() % 4 != 0 {
            b.push(0);
        }
        b
    });
    let total = 12 + 8 + json.len() + bin.as_ref().map_or(0, |b| 8 + b.len());
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    if let Some(bin) = bin {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
    }
    out
}

/// The JSON chunk and the BIN chunk of a GLB written by [`glb`] or a real exporter; `None` when the
/// container is not one.
pub fn glb_chunks(bytes: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let word = |i: usize| -> Option<usize> {
        Some(u32::from_le_bytes(bytes.get(i..i + 4)?.try_into().ok()?) as usize)
    };
    if !bytes.starts_with(b"glTF") {
        return None;
    }
    let json_len = word(12)?;
    let json = bytes.get(20..20 + json_len)?.to_vec();
    let at = 20 + json_len;
    let bin = match (word(at), bytes.get(at + 4..at + 8)) {
        (Some(len), Some(b"BIN\0")) => Some(bytes.get(at + 8..at + 8 + len)?.to_vec()),
        _ => None,
    };
    Some((json, bin))
}

/// A two-joint rig with an animation: node 0 (joint, root, child 1), node 1 (joint), node 2 (the
/// skinned mesh). Skin 0 names both joints, inverse bind matrices and a skeleton root; animation 0
/// translates node 1 with one LINEAR sampler; scene 0 holds nodes 0 and 2.
pub fn rig(b: &mut Builder) -> Value {
    let pos = b.f32s(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0], "VEC3");
    let joints = b.u8s(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0], "VEC4");
    let weights = b.f32s(
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0],
        "VEC4",
    );
    let identity = glam::Mat4::IDENTITY.to_cols_array();
    let ibm = b.f32s(&[identity, identity].concat(), "MAT4");
    let times = b.f32s(&[0.0, 1.0], "SCALAR");
    let values = b.f32s(&[0.0, 1.0, 0.0, 0.0, 2.0, 0.0], "VEC3");
    json!({
        "nodes": [
            {"children": [1]},
            {"translation": [0.0, 1.0, 0.0]},
            {"mesh": 0, "skin": 0}
        ],
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}],
        "skins": [{"joints": [0, 1], "inverseBindMatrices": ibm, "skeleton": 0}],
        "animations": [{
            "samplers": [{"input": times, "output": values, "interpolation": "LINEAR"}],
            "channels": [{"sampler": 0, "target": {"node": 1, "path": "translation"}}]
        }],
        "scenes": [{"nodes": [0, 2]}],
        "scene": 0
    })
}

/// The glTF error of a load that must fail; any other outcome fails the test, showing what came.
pub fn gltf_err(result: Result<GltfScene, Error>) -> GltfError {
    match result {
        Err(Error::Gltf(e)) => e,
        Err(e) => panic!("expected a glTF error, got {e:?}: {e}"),
        Ok(_) => panic!("expected an error, the file loaded"),
    }
}

/// Asserts the exact error of a refused load and its exact message (`glTF: ` and the rule's words).
pub fn assert_refused(result: Result<GltfScene, Error>, want: GltfError, words: &str) {
    let got = gltf_err(result);
    assert_eq!(got, want, "message: {got}");
    assert_eq!(Error::Gltf(got).to_string(), format!("glTF: {words}"));
}

/// A scratch directory of one test, removed (with what is in it) when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "ispc-skinning-hostile-{}-{test}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes a line to the real stderr (past libtest's capture), as `common::assets` does for skips.
pub fn note(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Runs `f` (which reads `fifo`) on its own thread and, until it returns, keeps opening the FIFO's
/// write end without blocking: that succeeds only while a reader has the FIFO open, so a `true`
/// means that `f` opened the FIFO (and was released by the open, instead of waiting forever for a
/// writer). Decided by what happened, never by a time limit, so it holds on any machine.
#[cfg(unix)]
pub fn reads_fifo<T: Send + 'static>(
    fifo: &Path,
    f: impl FnOnce() -> T + Send + 'static,
) -> (T, bool) {
    let handle = std::thread::spawn(f);
    let mut opened = false;
    while !handle.is_finished() {
        opened |= open_write_end(fifo);
        std::thread::yield_now();
    }
    (handle.join().unwrap(), opened)
}

/// Makes a FIFO with `mkfifo`; `None` (after a visible skip line) where that is not possible.
pub fn mkfifo(path: &Path) -> Option<()> {
    match std::process::Command::new("mkfifo").arg(path).status() {
        Ok(s) if s.success() => Some(()),
        other => {
            note(&format!(
                "skipped: mkfifo {} is unavailable here ({other:?})",
                path.display()
            ));
            None
        }
    }
}

/// Opens the write end of a FIFO without blocking and closes it, so that a reader blocked in
/// `open` is released (and then sees end of file); `true` when there was a reader to open it for
/// (without one the open fails at once with ENXIO).
#[cfg(unix)]
pub fn open_write_end(path: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt as _;
    // O_NONBLOCK: fails at once with ENXIO when nobody is reading, instead of waiting for a reader.
    const O_NONBLOCK: i32 = if cfg!(any(target_os = "linux", target_os = "android")) {
        0o4000
    } else {
        0x0004
    };
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(O_NONBLOCK)
        .open(path)
        .is_ok()
}

/// Whether a test's child copy of this test binary could not start at all (exit status 127): a
/// cross-built binary run under qemu-user, as CI runs the aarch64 tests, cannot execute itself without
/// the emulator. The caller then reports the test as not run, visibly, instead of passing or failing it.
fn child_cannot_start(out: &std::process::Output, test: &str) -> bool {
    if out.status.code() == Some(127) {
        eprintln!("{test}: NOT RUN: this test binary cannot start a copy of itself here (under an emulator)");
        return true;
    }
    false
}
