//! Helpers shared by the integration tests (`mod common;` in each test file, and by path from the ISA
//! parity harness): the deterministic generator, random transforms, skeleton shapes, the backends to
//! compare, and the real glTF assets, which are skipped visibly when absent.

// Each test binary uses some of these helpers, never all.
#![allow(dead_code)]

use glam::{Mat4, Quat, Vec3};
use ispc_skinning::{Backend, Isa};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The procedural rigs, meshes and poses the lab shares (its `scenes` crate is this same file), compiled
/// into each test as a module, so that the published package, which carries the file, tests on its own.
#[path = "../support/scenes.rs"]
pub mod scenes;

/// The crate's deterministic generator, so failures reproduce exactly.
pub use scenes::Rng;

/// A random forest of `n` joints with `roots` roots, in a shuffled original order (parents may come after
/// their children), so the skeleton's re-indexing is exercised.
pub fn shuffled_tree(n: usize, roots: usize, seed: u64) -> Vec<Option<usize>> {
    let mut rng = Rng::new(seed);
    let roots = roots.clamp(1, n.max(1));
    let tree: Vec<Option<usize>> = (0..n)
        .map(|i| if i < roots { None } else { Some(rng.below(i)) })
        .collect();
    let mut perm: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        perm.swap(i, rng.below(i + 1));
    }
    let mut out = vec![None; n];
    for i in 0..n {
        out[perm[i]] = tree[i].map(|p| perm[p]);
    }
    out
}

/// A tree of `levels` levels below one root, `width` joints each, whose parents are mostly every ninth
/// joint of the level above and sometimes any joint: consecutive joints of a level then have parents far
/// apart, with runs of childless joints between them.
pub fn gappy_tree(levels: usize, width: usize, seed: u64) -> Vec<Option<usize>> {
    let mut rng = Rng::new(seed);
    let mut parents = vec![None];
    let mut above = 0..1;
    for _ in 0..levels {
        let start = parents.len();
        for _ in 0..width {
            let k = above.len();
            let p = if rng.below(4) == 0 {
                rng.below(k)
            } else {
                9 * rng.below(k.div_ceil(9))
            };
            parents.push(Some(above.start + p));
        }
        above = start..parents.len();
    }
    parents
}

/// Skeleton shapes every hierarchy kernel is checked on: a single joint, small random trees around the
/// gang widths, a deep chain (1,100 levels), a wide fan (1,100 children), a forest, humanoid rigs of 20,
/// 67 and 120 joints, a 3,000-joint tree of the seed's shape, and trees whose consecutive joints have
/// parents far apart (levels of 16 to 200 joints).
pub fn shapes() -> Vec<(String, Vec<Option<usize>>)> {
    use scenes::{humanoid_parents, level_tree};
    let mut v = vec![("single".to_string(), vec![None])];
    for n in [2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33] {
        v.push((format!("random{n}"), shuffled_tree(n, 1, n as u64)));
    }
    v.push((
        "chain1100".into(),
        (0..1100usize).map(|i| i.checked_sub(1)).collect(),
    ));
    v.push((
        "fan1100".into(),
        (0..1100usize)
            .map(|i| if i == 0 { None } else { Some(0) })
            .collect(),
    ));
    v.push(("forest300".into(), shuffled_tree(300, 4, 77)));
    for n in [20, 67, 120] {
        v.push((format!("humanoid{n}"), humanoid_parents(n)));
    }
    v.push(("tree3000".into(), level_tree(3000, 12, 5)));
    for width in [16, 17, 40, 200] {
        v.push((format!("gappy{width}"), gappy_tree(6, width, width as u64)));
    }
    v
}

/// A vector with each coordinate drawn from `range`, x first.
pub fn random_vec3(rng: &mut Rng, range: Range<f32>) -> Vec3 {
    Vec3::new(
        rng.range(range.start, range.end),
        rng.range(range.start, range.end),
        rng.range(range.start, range.end),
    )
}

/// A random affine transform: a non-uniform scale drawn from `scale`, XYZ Euler angles in [-3, 3) and a
/// translation drawn from `translation` (drawn in that order, so a seed always gives the same matrix).
pub fn random_transform(rng: &mut Rng, scale: Range<f32>, translation: Range<f32>) -> Mat4 {
    let s = random_vec3(rng, scale);
    let r = Quat::from_euler(
        glam::EulerRot::XYZ,
        rng.range(-3.0, 3.0),
        rng.range(-3.0, 3.0),
        rng.range(-3.0, 3.0),
    );
    Mat4::from_scale_rotation_translation(s, r, random_vec3(rng, translation))
}

/// The serial reference, then every ISA this build contains and this CPU runs: the backends whose
/// results a test compares.
pub fn backends() -> Vec<Backend> {
    let mut b = vec![Backend::Reference];
    b.extend(Isa::available().into_iter().map(Backend::Isa));
    b
}

/// Every shared glTF asset, relative to [`assets`]; RobotExpressive has rigid, node-attached parts and
/// morph targets.
pub const SHARED_ASSETS: [&str; 6] = [
    "SimpleSkin/SimpleSkin.gltf",
    "RiggedSimple/RiggedSimple.glb",
    "RiggedFigure/RiggedFigure.glb",
    "CesiumMan/CesiumMan.glb",
    "Fox/Fox.glb",
    "RobotExpressive/RobotExpressive.glb",
];

/// How many real-asset checks this test binary has skipped so far.
static ASSET_SKIPS: AtomicUsize = AtomicUsize::new(0);

/// The real glTF assets folder: `ISPC_SKINNING_ASSETS` when set, else `../shared/assets` beside the
/// repository. `None` when it is absent (as on a fresh machine): the caller returns early, and a
/// `skipped:` line naming the test, the folder and the running count of skips goes to the real stderr
/// (past libtest's capture), so a skipped check is never silently counted as a pass.
pub fn assets() -> Option<PathBuf> {
    let dir = match std::env::var_os("ISPC_SKINNING_ASSETS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets"),
    };
    if dir.is_dir() {
        return Some(dir);
    }
    let skips = ASSET_SKIPS.fetch_add(1, Ordering::Relaxed) + 1;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    // Written to the stderr handle itself: libtest captures eprintln! but not direct writes.
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {test}: {} is absent (real-asset skip #{skips} in this test binary; set ISPC_SKINNING_ASSETS to run it)",
        dir.display()
    );
    None
}
