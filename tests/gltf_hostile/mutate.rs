//! Class 6: a property test on the real assets (`../shared/assets`, skipped visibly when absent).
//! Each asset gets [`mutations`] seeded mutations: bit flips, bytes set to 0 or 0xFF, truncation,
//! and, in its JSON (the .gltf itself or the GLB JSON chunk, the container rebuilt around it), index
//! and count fields replaced by off-by-one, zero, negative, huge, fractional or string values. Every
//! load must return (Ok or a typed error) without a panic, and every file that loads must evaluate
//! on the reference and on the automatic backend without one.

use super::*;
use ispc_skinning::gltf::{LoadOptions, Wrap};
use ispc_skinning::{Backend, Isa};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

/// Mutations per asset: `GLTF_HOSTILE_MUTATIONS` when set, else 500 (about 2.5 s for the six assets
/// in release).
fn mutations() -> usize {
    std::env::var("GLTF_HOSTILE_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500)
}

/// Every .glb and .gltf under the assets folder, sorted; `None` (after the skip line) without it.
fn asset_files() -> Option<Vec<PathBuf>> {
    let dir = common::assets()?;
    let mut files = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("glb" | "gltf")
            ) {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(!files.is_empty(), "no .glb or .gltf in the assets folder");
    Some(files)
}

/// Keys whose numbers are indices, counts, offsets or enums.
const NUMBER_KEYS: [&str; 22] = [
    "bufferView",
    "buffer",
    "byteOffset",
    "byteLength",
    "byteStride",
    "count",
    "componentType",
    "node",
    "mesh",
    "skin",
    "skeleton",
    "inverseBindMatrices",
    "input",
    "output",
    "sampler",
    "indices",
    "material",
    "scene",
    "source",
    "index",
    "mode",
    "camera",
];
/// Keys whose arrays hold indices.
const INDEX_ARRAYS: [&str; 3] = ["children", "joints", "nodes"];

/// JSON pointers to every mutable number: fields of [`NUMBER_KEYS`], attribute accessors (upper-case
/// keys such as POSITION and JOINTS_0), and the elements of [`INDEX_ARRAYS`].
fn numbers(v: &Value, pointer: &str, key: Option<&str>, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let p = format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1"));
                numbers(x, &p, Some(k), out);
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                let p = format!("{pointer}/{i}");
                if x.is_number() && key.is_some_and(|k| INDEX_ARRAYS.contains(&k)) {
                    out.push(p);
                } else {
                    numbers(x, &p, None, out);
                }
            }
        }
        Value::Number(_) => {
            let attribute = |k: &str| {
                k.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            };
            if key.is_some_and(|k| NUMBER_KEYS.contains(&k) || attribute(k)) {
                out.push(pointer.to_string());
            }
        }
        _ => {}
    }
}

/// A hostile replacement for the number `n`.
fn replacement(rng: &mut common::Rng, n: &Value) -> Value {
    let n = n.as_i64().unwrap_or(0);
    match rng.below(12) {
        0 => json!(n + 1),
        1 => json!(n - 1),
        2 => json!(0),
        3 => json!(-1),
        4 => json!(n.saturating_mul(1000).saturating_add(7)),
        5 => json!(u32::MAX),
        6 => json!(1u64 << 31),
        7 => json!(u64::MAX),
        8 => json!(1e300),
        9 => json!(n as f64 + 0.5),
        10 => json!(n.to_string()),
        _ => json!(i64::MIN),
    }
}

/// One asset and how to rebuild it after its JSON changed.
struct Asset {
    name: String,
    bytes: Vec<u8>,
    base: PathBuf,
    /// The JSON (of a .gltf, or the GLB JSON chunk) and the GLB BIN chunk.
    json: Value,
    glb_bin: Option<Option<Vec<u8>>>,
    /// Bytes of every file in the asset's folder (the file itself and any external buffers).
    size: usize,
}

impl Asset {
    fn open(path: &Path) -> Asset {
        let bytes = std::fs::read(path).unwrap();
        let (json, glb_bin) = match glb_chunks(&bytes) {
            Some((json, bin)) => (json, Some(bin)),
            None => (bytes.clone(), None),
        };
        let size = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok()?.metadata().ok())
            .filter(|m| m.is_file())
            .map(|m| m.len() as usize)
            .sum();
        Asset {
            size,
            name: path.file_name().unwrap().to_string_lossy().into_owned(),
            base: path.parent().unwrap().to_path_buf(),
            json: serde_json::from_slice(&json).unwrap(),
            glb_bin,
            bytes,
        }
    }

    fn rebuild(&self, json: &Value) -> Vec<u8> {
        let text = serde_json::to_vec(json).unwrap();
        match &self.glb_bin {
            Some(bin) => glb(&text, bin.as_deref()),
            None => text,
        }
    }

    /// Mutation `i`: the bytes and a description.
    fn mutate(&self, rng: &mut common::Rng) -> (Vec<u8>, String) {
        let mut bytes = self.bytes.clone();
        let len = bytes.len();
        match rng.below(8) {
            0 | 1 => {
                let flips = 1 + rng.below(8);
                let mut at = Vec::new();
                for _ in 0..flips {
                    let i = rng.below(len);
                    bytes[i] ^= 1 << rng.below(8);
                    at.push(i);
                }
                (bytes, format!("bit flips at {at:?}"))
            }
            2 => {
                let mut at = Vec::new();
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(len);
                    bytes[i] = if rng.below(2) == 0 { 0 } else { 0xFF };
                    at.push((i, bytes[i]));
                }
                (bytes, format!("bytes set {at:?}"))
            }
            3 => {
                let cut = rng.below(len);
                bytes.truncate(cut);
                (bytes, format!("truncated to {cut} bytes"))
            }
            _ => {
                let mut json = self.json.clone();
                let mut fields = Vec::new();
                numbers(&json, "", None, &mut fields);
                let mut what = Vec::new();
                for _ in 0..1 + rng.below(3) {
                    let pointer = &fields[rng.below(fields.len())];
                    let slot = json.pointer_mut(pointer).unwrap();
                    let new = replacement(rng, slot);
                    what.push(format!("{pointer}: {slot} -> {new}"));
                    *slot = new;
                }
                (self.rebuild(&json), what.join(", "))
            }
        }
    }
}

/// What one mutated file did.
enum Outcome {
    Loaded,
    Refused,
}

/// Loads `bytes` and, when it loads, evaluates one frame on the reference and on the automatic
/// backend; a panic anywhere is an `Err` naming where.
fn run_one(bytes: &[u8], base: &Path, rng: &mut common::Rng) -> Result<Outcome, String> {
    let options = LoadOptions::default();
    let loaded = catch_unwind(AssertUnwindSafe(|| {
        GltfScene::from_slice_with(bytes, Some(base), &options)
    }))
    .map_err(|_| "the load panicked".to_string())?;
    let Ok(scene) = loaded else {
        return Ok(Outcome::Refused);
    };
    let clips = scene.clips().len();
    let clip = (clips > 0).then(|| rng.below(clips));
    let time = clip.map_or(0.0, |c| {
        scene.clips()[c].start() + 0.37 * scene.clips()[c].duration()
    });
    for backend in [Backend::Reference, Backend::Auto] {
        let evaluated = catch_unwind(AssertUnwindSafe(|| {
            let mut frame = scene.frame_buffers().backend(backend);
            scene.evaluate(clip, time, Wrap::Loop, &mut frame)
        }))
        .map_err(|_| format!("evaluate on {backend:?} panicked"))?;
        // Finite values that overflow f32 together are refused by the frame (the numeric rules); a
        // value the importer should have refused is not.
        match evaluated {
            Ok(()) | Err(ispc_skinning::Error::ResultNotFinite { .. }) => {}
            Err(e) => {
                return Err(format!(
                    "a loaded file failed to evaluate on {backend:?}: {e}"
                ))
            }
        }
    }
    Ok(Outcome::Loaded)
}

/// A seed from the asset's name, so each asset's mutations are fixed.
fn seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// The bytes one mutation's load and two evaluations may allocate in all, per byte of the asset (its
/// file and external buffers), plus [`WORK_SLACK`].
const WORK_PER_FILE_BYTE: usize = 64;
/// See [`WORK_PER_FILE_BYTE`]: 64 MiB.
const WORK_SLACK: usize = 64 << 20;

#[test]
fn seeded_mutations_of_the_real_assets_never_panic() {
    let Some(files) = asset_files() else { return };
    let n = mutations();
    let start = Instant::now();
    let mut failures = Vec::new();
    for path in &files {
        let asset = Asset::open(path);
        let mut rng = common::Rng::new(seed(&asset.name));
        let (mut loaded, mut refused) = (0, 0);
        // The work of each mutation, counted (bytes allocated in all, load and evaluations): a
        // mutation that made the importer loop or amplify would count far past the bound below.
        let mut heaviest = (0usize, String::new());
        let bound = WORK_PER_FILE_BYTE * asset.size + WORK_SLACK;
        for i in 0..n {
            let (bytes, what) = asset.mutate(&mut rng);
            let (outcome, work) = counted(|| run_one(&bytes, &asset.base, &mut rng));
            match outcome {
                Ok(Outcome::Loaded) => loaded += 1,
                Ok(Outcome::Refused) => refused += 1,
                Err(e) => failures.push(format!("{} mutation {i} ({what}): {e}", asset.name)),
            }
            if work.total > heaviest.0 {
                heaviest = (work.total, format!("mutation {i} ({what})"));
            }
        }
        note(&format!(
            "mutate: {}: {n} mutations, {loaded} loaded, {refused} refused; heaviest {} bytes allocated: {}",
            asset.name, heaviest.0, heaviest.1
        ));
        assert!(
            heaviest.0 <= bound,
            "{}: {} allocated {} bytes in all, over {bound} for {} bytes of asset",
            asset.name,
            heaviest.1,
            heaviest.0,
            asset.size
        );
    }
    note(&format!(
        "mutate: {} assets x {n} mutations in {:?}",
        files.len(),
        start.elapsed()
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Largest distance between two position lists, and the largest coordinate magnitude of the first.
fn max_diff(a: &[glam::Vec3], b: &[glam::Vec3]) -> (f32, f32) {
    assert_eq!(a.len(), b.len());
    let d = a
        .iter()
        .zip(b)
        .map(|(x, y)| (*x - *y).abs().max_element())
        .fold(0.0, f32::max);
    let m = a.iter().map(|x| x.abs().max_element()).fold(0.0, f32::max);
    (d, m)
}

/// The unmutated assets still load and evaluate as before: a second load gives the same frame bit
/// for bit, every position is finite, and the best ISA agrees with the reference within the
/// tolerance of tests/gltf/ (2e-5 of the mesh's extent plus 1e-5).
#[test]
fn the_unmutated_assets_still_load_and_evaluate_alike() {
    let Some(files) = asset_files() else { return };
    for path in &files {
        let name = path.display();
        let scene = GltfScene::load(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let again = GltfScene::load(path).unwrap();
        let clip = (!scene.clips().is_empty()).then_some(0);
        let time = clip.map_or(0.0, |c| {
            scene.clips()[c].start() + 0.37 * scene.clips()[c].duration()
        });
        let frame = |scene: &GltfScene, backend: Backend| {
            let mut frame = scene.frame_buffers().backend(backend);
            scene
                .evaluate(clip, time, Wrap::Loop, &mut frame)
                .unwrap_or_else(|e| panic!("{name} {backend:?}: {e}"));
            frame
        };
        let reference = frame(&scene, Backend::Reference);
        assert_eq!(
            reference.meshes(),
            frame(&again, Backend::Reference).meshes(),
            "{name}"
        );
        for m in reference.meshes() {
            assert!(m.positions.iter().all(|p| p.is_finite()), "{name}");
        }
        let Some(isa) = Isa::detect() else { continue };
        let best = frame(&scene, Backend::Isa(isa));
        for (r, o) in reference.meshes().iter().zip(best.meshes()) {
            let (d, m) = max_diff(&r.positions, &o.positions);
            assert!(d <= 2e-5 * m + 1e-5, "{name} {isa}: {d} (extent {m})");
        }
    }
}
