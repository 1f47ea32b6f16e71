//! The shared ISA parity harness: every kernel, on every ISA, against the serial reference.
//!
//! Each check becomes one test per ISA named `<kernel>::<isa>`. An ISA that is not compiled in, or that
//! this CPU cannot run, becomes an *ignored* test, and the reason is printed before the tests run; it is
//! never counted as passed. (`cargo test -- --ignored` runs them anyway and they fail with the reason.)

#![allow(dead_code)]

use ispc_skinning::{Backend, Isa};
use libtest_mimic::{Arguments, Failed, Trial};

/// Sizes every kernel is checked at: empty, single, around each gang width (4, 8 and 16 lanes), around
/// the four-group blocks of the horizontal kernels (4, 8 and 16 vertices for those widths, with their
/// remainder loops), and large.
pub const SIZES: &[usize] = &[
    0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 1000, 65_536,
];

/// Start offsets (in items) into a larger buffer: 12-byte items at offsets 0..=3 start at every 4-byte
/// position modulo 16, so most slices are not 16-byte aligned.
pub const OFFSETS: &[usize] = &[0, 1, 2, 3];

/// A check of one kernel on one ISA. It returns a short summary on success, or a message that shows the
/// actual difference on failure.
pub type Check = fn(Isa) -> Result<String, String>;

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

/// Prints which ISAs run and which do not (with the reason), then runs every check on every ISA.
pub fn run(checks: &[(&'static str, Check)]) -> ! {
    let args = Arguments::from_args();
    if !args.list {
        println!("ISA parity harness (reference: serial Rust):");
        for isa in Isa::ALL {
            match isa.runnable() {
                Ok(_) => println!(
                    "  {isa:<7} runs  (ISPC target {})",
                    isa.ispc_target().unwrap_or("?")
                ),
                Err(e) => println!("  {isa:<7} NOT RUN: {e}"),
            }
        }
        match Backend::selected() {
            Ok(b) => println!("  Backend::Auto selects: {}", b.name()),
            Err(e) => println!("  Backend::Auto: {e}"),
        }
    }
    let mut trials = Vec::new();
    for &(kernel, check) in checks {
        for isa in Isa::ALL {
            let trial = Trial::test(format!("{kernel}::{isa}"), move || match check(isa) {
                Ok(_) => Ok(()),
                Err(msg) => Err(Failed::from(msg)),
            });
            trials.push(trial.with_ignored_flag(!isa.is_available()));
        }
    }
    libtest_mimic::run(&args, trials).exit()
}
