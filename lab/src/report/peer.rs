//! `bench --peers`: ozz-animation-rs measured in the same run as our rows, sample by sample.
//!
//! The peer (`peers/ozz-rs`) needs a pinned nightly toolchain, so it is its own binary: [`Peer::start`]
//! builds it (`cargo +<channel> build --profile peer`, with `-C target-cpu=native` and a target
//! directory of its own) and starts it as a child process. It speaks a line protocol on stdin and
//! stdout (documented in `peers/ozz-rs/src/main.rs`): `setup`, `calibrate` and `sample`, and it times
//! its calls itself, so no pipe round trip is in a figure. [`median_ns_per_call`] puts its samples in
//! the same round-robin as our backends through [`Remote`].
//!
//! The peer's rows are kept apart from ours ([`Peer::rows`]), so the families' summaries and the chart
//! see only our rows; [`merge`] puts them in the printed table and the JSON beside the rows of the same
//! kernel and size, and [`print_ratios`] prints each peer row against our reference and ISAs.

use crate::report::row::Row;
use crate::report::timing::{median_ns_per_call_with, Budget, Remote};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

/// The `isa` of the peer's rows.
pub const ISA: &str = "ozz-rs";

/// The peer crate, in this repository.
fn crate_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../peers/ozz-rs")
}

/// One answer of the peer.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `ready <what>`: the peer started.
    Ready(String),
    /// `ok <id>`: a workload is set up and checked.
    Ok(usize),
    /// `reps <n>`: calls per sample.
    Reps(u64),
    /// `ns <t>`: mean nanoseconds per call of one sample.
    Ns(f64),
}

/// Parses one line of the peer.
///
/// # Errors
/// The peer's own `error <message>`, or a line that is not an answer.
pub fn parse_reply(line: &str) -> Result<Reply, String> {
    let line = line.trim();
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    let bad = || format!("ozz-rs peer: unexpected answer {line:?}");
    match word {
        "ready" => Ok(Reply::Ready(rest.to_string())),
        "ok" => rest.parse().map(Reply::Ok).map_err(|_| bad()),
        "reps" => rest.parse().map(Reply::Reps).map_err(|_| bad()),
        "ns" => match rest.parse::<f64>() {
            Ok(t) if t.is_finite() && t >= 0.0 => Ok(Reply::Ns(t)),
            _ => Err(bad()),
        },
        "error" => Err(format!("ozz-rs peer: {rest}")),
        _ => Err(bad()),
    }
}

/// The channel of `rust-toolchain.toml`'s `[toolchain]` table.
pub fn toolchain_channel(toml: &str) -> Option<String> {
    toml.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("channel"))
        .and_then(|v| v.trim().strip_prefix('='))
        .map(|v| v.trim().trim_matches('"').to_string())
        .filter(|v| !v.is_empty())
}

/// The running peer process and the rows measured on it.
pub struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// The peer's rows, in the order they were measured.
    pub rows: Vec<Row>,
    /// The first failure (a workload that disagrees with the reference, a dead process); `bench` stops
    /// with it after the family that hit it.
    error: Option<String>,
}

/// Pins the calling thread (the report's main thread, which runs every round-robin) to the CPU it is on
/// now, with `taskset`, and returns that CPU for the peer. On these VMs the two vCPUs have different
/// neighbours at different times: with the peer free to run on the other one, its times moved by up to
/// 1.6x between runs while ours did not, which no interleaving can correct. `None` off Linux or without
/// `taskset`; rayon's worker threads are not pinned, so the threaded rows keep every CPU.
fn pin_to_one_cpu() -> Option<usize> {
    // Field 39 of /proc/thread-self/stat is the CPU the thread last ran on; the command name (field 2)
    // may hold spaces, so the count starts after its closing parenthesis.
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    let cpu: usize = after.split_whitespace().nth(36)?.parse().ok()?;
    let tid = std::fs::read_link("/proc/thread-self")
        .ok()?
        .file_name()?
        .to_str()?
        .to_string();
    let pinned = Command::new("taskset")
        .args(["-cp", &cpu.to_string(), &tid])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    pinned.success().then_some(cpu)
}

impl Peer {
    /// Builds the peer with its pinned toolchain and starts it, printing what it does.
    ///
    /// # Errors
    /// A missing toolchain (naming the `rustup toolchain install` command), a failed build, or a peer
    /// that does not start.
    pub fn start() -> Result<Peer, String> {
        let dir = crate_dir();
        let toml = std::fs::read_to_string(dir.join("rust-toolchain.toml"))
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let channel =
            toolchain_channel(&toml).ok_or("peers/ozz-rs/rust-toolchain.toml: no channel")?;
        let install = format!("rustup toolchain install {channel} --profile minimal");
        let listed = Command::new("rustup")
            .args(["toolchain", "list"])
            .output()
            .map_err(|e| {
                format!("bench --peers needs rustup and the {channel} toolchain ({e}); {install}")
            })?;
        if !String::from_utf8_lossy(&listed.stdout)
            .lines()
            .any(|l| l.starts_with(&channel))
        {
            return Err(format!(
                "bench --peers: the peer needs the {channel} toolchain, which is not installed; run: {install}"
            ));
        }
        let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/peer-ozz-rs");
        println!(
            "bench --peers: building the ozz-rs peer: cargo +{channel} build --profile peer (in {}, CARGO_TARGET_DIR={}, RUSTFLAGS=\"-C target-cpu=native\")",
            dir.display(),
            target.display()
        );
        // The proxy's `+channel` picks the toolchain; the variables `cargo run` passes down would
        // otherwise pin the outer toolchain or its flags.
        let status = Command::new("cargo")
            .arg(format!("+{channel}"))
            .args(["build", "--profile", "peer"])
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", &target)
            .env("RUSTFLAGS", "-C target-cpu=native")
            .env_remove("RUSTUP_TOOLCHAIN")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("RUSTC")
            .env_remove("RUSTDOC")
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .status()
            .map_err(|e| format!("bench --peers: cannot run cargo: {e}"))?;
        if !status.success() {
            return Err(format!(
                "bench --peers: building the ozz-rs peer failed ({status})"
            ));
        }
        let bin = target.join("peer/ispc-skinning-peer-ozz-rs");
        let mut command = match pin_to_one_cpu() {
            Some(cpu) => {
                println!(
                    "bench --peers: the report's main thread and the peer both run on CPU {cpu} (taskset), so that they meet the same neighbours"
                );
                let mut c = Command::new("taskset");
                c.arg("-c").arg(cpu.to_string()).arg(&bin);
                c
            }
            None => {
                println!(
                    "bench --peers: taskset is not available here, so the peer and the report may run on different CPUs"
                );
                Command::new(&bin)
            }
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("bench --peers: cannot start {}: {e}", bin.display()))?;
        let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(i), Some(o)) => (i, BufReader::new(o)),
            _ => return Err("bench --peers: the peer's pipes are missing".into()),
        };
        let mut peer = Peer {
            child,
            stdin,
            stdout,
            rows: Vec::new(),
            error: None,
        };
        match peer.read()? {
            Reply::Ready(what) => {
                println!("bench --peers: measuring {what} in the same round-robins")
            }
            other => return Err(format!("ozz-rs peer: expected ready, got {other:?}")),
        }
        Ok(peer)
    }

    fn read(&mut self) -> Result<Reply, String> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(0) => Err("ozz-rs peer: the process ended".into()),
            Ok(_) => parse_reply(&line),
            Err(e) => Err(format!("ozz-rs peer: {e}")),
        }
    }

    fn request(&mut self, line: &str) -> Result<Reply, String> {
        writeln!(self.stdin, "{line}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| format!("ozz-rs peer: {e}"))?;
        self.read()
    }

    /// Sets up `kernel` on `size` items (and the glTF `file` for `gltf_frame`); `None` after a failure,
    /// which is kept for [`Peer::check`].
    pub fn workload(
        &mut self,
        kernel: &str,
        size: usize,
        file: Option<&Path>,
    ) -> Option<Workload<'_>> {
        if self.error.is_some() {
            return None;
        }
        let file = file
            .map(|f| format!(" {}", f.display()))
            .unwrap_or_default();
        match self.request(&format!("setup {kernel} {size}{file}")) {
            Ok(Reply::Ok(id)) => Some(Workload { peer: self, id }),
            Ok(other) => {
                self.error = Some(format!("ozz-rs peer: setup {kernel}: unexpected {other:?}"));
                None
            }
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    /// The first failure, if any.
    ///
    /// # Errors
    /// That failure.
    pub fn check(&self) -> Result<(), String> {
        self.error.clone().map_or(Ok(()), Err)
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}

/// One workload set up in the peer.
pub struct Workload<'a> {
    peer: &'a mut Peer,
    id: usize,
}

impl Remote for Workload<'_> {
    fn calibrate(&mut self, sample: Duration) -> Result<u64, String> {
        match self
            .peer
            .request(&format!("calibrate {} {}", self.id, sample.as_nanos()))?
        {
            Reply::Reps(n) => Ok(n.max(1)),
            other => Err(format!("ozz-rs peer: calibrate: unexpected {other:?}")),
        }
    }
    fn sample(&mut self, reps: u64) -> Result<f64, String> {
        match self.peer.request(&format!("sample {} {reps}", self.id))? {
            Reply::Ns(t) => Ok(t),
            other => Err(format!("ozz-rs peer: sample: unexpected {other:?}")),
        }
    }
}

/// What the peer measures beside one of our round-robins.
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    /// The kernel name, the same as our rows'.
    pub kernel: &'static str,
    /// Items per call, the same as our rows'.
    pub size: usize,
    /// Influences per vertex, for skinning.
    pub influences: Option<u32>,
    /// The glTF file, for `gltf_frame`.
    pub file: Option<&'a Path>,
}

/// [`median_ns_per_call`](crate::report::timing::median_ns_per_call) of our candidates, with the peer's
/// `job` in the same round-robin when there is a peer; the peer's row goes to [`Peer::rows`], its
/// reference time being our candidate 0's (every family puts the serial reference first).
pub fn median_ns_per_call<F: FnMut() + ?Sized>(
    peer: Option<&mut Peer>,
    job: Job<'_>,
    budget: Budget,
    candidates: &mut [Box<F>],
) -> Vec<f64> {
    let Some(peer) = peer else {
        return median_ns_per_call_with(budget, candidates, None).0;
    };
    let (times, remote) = {
        let mut w = peer.workload(job.kernel, job.size, job.file);
        median_ns_per_call_with(budget, candidates, w.as_mut().map(|w| w as &mut dyn Remote))
    };
    match remote {
        Some(Ok(t)) => peer.rows.push(Row {
            kernel: job.kernel,
            isa: ISA.into(),
            size: job.size,
            influences: job.influences,
            threads: 1,
            ns_per_item: t / job.size as f64,
            reference_ns_per_item: times.first().copied().unwrap_or(f64::NAN) / job.size as f64,
        }),
        Some(Err(e)) if peer.error.is_none() => peer.error = Some(e),
        _ => {}
    }
    times
}

/// Whether `ours` was measured in the same round-robin as the peer row `p`: same kernel and size, and
/// the same reference time (the peer row copies its round-robin's reference time bit for bit, and a
/// kernel's other groups measure the reference again, so the times differ).
fn same_round(ours: &Row, p: &Row) -> bool {
    ours.kernel == p.kernel
        && ours.size == p.size
        && ours.reference_ns_per_item.to_bits() == p.reference_ns_per_item.to_bits()
        && ours.isa != ISA
}

/// Our rows with the peer's, each peer row after the last of our rows of its round-robin (at the end
/// when there is none).
pub fn merge(ours: &[Row], peer: &[Row]) -> Vec<Row> {
    let mut all = ours.to_vec();
    for p in peer {
        let at = all
            .iter()
            .rposition(|r| same_round(r, p))
            .map_or(all.len(), |i| i + 1);
        all.insert(at, p.clone());
    }
    all
}

/// One line of the ratio table: how many times faster than the peer our `isa` ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Ratio {
    /// The kernel.
    pub kernel: &'static str,
    /// Items per call.
    pub size: usize,
    /// Our backend (`reference`, `glam` or an ISA).
    pub isa: String,
    /// The peer's ns per item over ours: above 1, ours is faster.
    pub ratio: f64,
}

/// For each peer row, every row of ours from the same round-robin against it.
pub fn ratios(ours: &[Row], peer: &[Row]) -> Vec<Ratio> {
    peer.iter()
        .flat_map(|p| {
            ours.iter()
                .filter(move |r| same_round(r, p))
                .map(move |r| Ratio {
                    kernel: p.kernel,
                    size: p.size,
                    isa: r.isa.clone(),
                    ratio: p.ns_per_item / r.ns_per_item,
                })
        })
        .collect()
}

/// Prints the ratio table: per peer row, its time and each of ours as "avx2 vs ozz-rs 1.23x".
pub fn print_ratios(ours: &[Row], peer: &[Row]) {
    if peer.is_empty() {
        return;
    }
    println!("against ozz-animation-rs, measured in the same round-robins (ozz-rs ns / our ns; above 1x, ours is faster):");
    let all = ratios(ours, peer);
    for p in peer {
        println!(
            "  {} {}: ozz-rs {:.3} ns/item",
            p.kernel, p.size, p.ns_per_item
        );
        for r in all
            .iter()
            .filter(|r| r.kernel == p.kernel && r.size == p.size)
        {
            println!("    {:<10} vs {ISA} {:.2}x", r.isa, r.ratio);
        }
    }
    println!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kernel: &'static str, isa: &str, size: usize, ns: f64) -> Row {
        Row {
            kernel,
            isa: isa.into(),
            size,
            influences: None,
            threads: 1,
            ns_per_item: ns,
            reference_ns_per_item: 4.0,
        }
    }

    #[test]
    fn replies_parse() {
        assert_eq!(
            parse_reply("ready ozz 1\n"),
            Ok(Reply::Ready("ozz 1".into()))
        );
        assert_eq!(parse_reply("ok 3"), Ok(Reply::Ok(3)));
        assert_eq!(parse_reply("reps 1200"), Ok(Reply::Reps(1200)));
        assert_eq!(parse_reply("ns 12.5"), Ok(Reply::Ns(12.5)));
        assert!(parse_reply("ns NaN").is_err());
        assert!(parse_reply("ns -1").is_err());
        assert!(parse_reply("ok x").is_err());
        assert!(parse_reply("hello").is_err());
        assert_eq!(
            parse_reply("error skin_p 1024: differs by 0.5"),
            Err("ozz-rs peer: skin_p 1024: differs by 0.5".into())
        );
    }

    #[test]
    fn the_channel_is_read_from_the_toolchain_file() {
        let toml =
            "# pinned\n[toolchain]\nchannel = \"nightly-2025-07-01\"\nprofile = \"minimal\"\n";
        assert_eq!(
            toolchain_channel(toml).as_deref(),
            Some("nightly-2025-07-01")
        );
        assert_eq!(toolchain_channel("[toolchain]\n"), None);
        // The file the peer ships with names a channel.
        let shipped = std::fs::read_to_string(crate_dir().join("rust-toolchain.toml")).unwrap();
        assert!(toolchain_channel(&shipped).is_some());
    }

    #[test]
    fn ratios_are_peer_over_ours_and_rows_merge_by_kernel_and_size() {
        let ours = vec![
            row("skin_p", "reference", 1024, 4.0),
            row("skin_p", "avx2", 1024, 1.0),
            row("skin_p", "avx2", 1 << 20, 2.0),
            row("copy", "memcpy", 8, 1.0),
            // Another group of the same kernel and size, with its own reference time.
            Row {
                reference_ns_per_item: 5.0,
                ..row("skin_p", "bone_major", 1024, 3.0)
            },
        ];
        let peer = vec![row("skin_p", ISA, 1024, 2.0)];
        let r = ratios(&ours, &peer);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].isa.as_str(), r[0].ratio), ("reference", 0.5));
        assert_eq!((r[1].isa.as_str(), r[1].ratio), ("avx2", 2.0));
        let all = merge(&ours, &peer);
        let order: Vec<(&str, &str)> = all.iter().map(|r| (r.kernel, r.isa.as_str())).collect();
        assert_eq!(
            order,
            [
                ("skin_p", "reference"),
                ("skin_p", "avx2"),
                ("skin_p", ISA),
                ("skin_p", "avx2"),
                ("copy", "memcpy"),
                ("skin_p", "bone_major")
            ]
        );
    }

    /// A remote that reports a fixed time, and records that its samples came between local ones.
    struct Fake(std::rc::Rc<std::cell::RefCell<Vec<char>>>);
    impl Remote for Fake {
        fn calibrate(&mut self, _: Duration) -> Result<u64, String> {
            Ok(7)
        }
        fn sample(&mut self, reps: u64) -> Result<f64, String> {
            assert_eq!(reps, 7);
            self.0.borrow_mut().push('r');
            Ok(42.0)
        }
    }

    #[test]
    fn the_remote_samples_take_turns_with_the_local_ones() {
        let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let budget = Budget {
            sample: Duration::from_micros(50),
            samples: 3,
        };
        let l = log.clone();
        let mut c: Vec<Box<dyn FnMut()>> = vec![Box::new(move || {
            let mut l = l.borrow_mut();
            if l.last() != Some(&'l') {
                l.push('l');
            }
        })];
        let mut fake = Fake(log.clone());
        let (times, remote) = median_ns_per_call_with(budget, &mut c, Some(&mut fake));
        assert_eq!(times.len(), 1);
        assert_eq!(remote, Some(Ok(42.0)));
        assert_eq!(log.borrow().iter().collect::<String>(), "lrlrlr");
    }
}
