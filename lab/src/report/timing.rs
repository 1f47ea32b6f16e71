//! Timing for the report: interleaved samples and medians, so every backend of one row sees the same
//! machine state. Times are report figures only; no test ever asserts on them.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// How long each timed sample runs, and how many samples each backend gets.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// How long one timed sample runs (the call is repeated to fill it).
    pub sample: Duration,
    /// How many samples each candidate gets; the median is reported.
    pub samples: usize,
}

impl Budget {
    /// The budget of a full report: 15 samples of 4 ms each per candidate.
    pub fn full() -> Budget {
        Budget {
            sample: Duration::from_millis(4),
            samples: 15,
        }
    }
    /// The budget of `bench --quick`: 5 samples of 1 ms each per candidate.
    pub fn quick() -> Budget {
        Budget {
            sample: Duration::from_millis(1),
            samples: 5,
        }
    }
}

/// A candidate that times itself in another process (the peers of `bench --peers`): a pipe round trip
/// would dwarf a call of a few microseconds, so the other side runs the calls and reports the time.
pub trait Remote {
    /// Warms the candidate up and returns how many calls fill one sample of `sample`.
    ///
    /// # Errors
    /// When the other side fails or is gone.
    fn calibrate(&mut self, sample: Duration) -> Result<u64, String>;
    /// Runs `reps` calls and returns the mean nanoseconds per call, as measured by the other side.
    ///
    /// # Errors
    /// When the other side fails or is gone.
    fn sample(&mut self, reps: u64) -> Result<f64, String>;
}

/// Runs each candidate `budget.samples` times, round-robin, and returns each one's median time per call
/// in nanoseconds. Each sample repeats the call enough times to fill `budget.sample`.
pub fn median_ns_per_call<F: FnMut() + ?Sized>(
    budget: Budget,
    candidates: &mut [Box<F>],
) -> Vec<f64> {
    median_ns_per_call_with(budget, candidates, None).0
}

/// [`median_ns_per_call`] with one more candidate that is timed remotely: its samples take their turn
/// in the same round-robin, after the local candidates, so it sees the same machine conditions. Returns
/// the local medians and the remote one (`None` without a remote; an error stops only the remote).
pub fn median_ns_per_call_with<F: FnMut() + ?Sized>(
    budget: Budget,
    candidates: &mut [Box<F>],
    mut remote: Option<&mut dyn Remote>,
) -> (Vec<f64>, Option<Result<f64, String>>) {
    // Calibrate once per candidate: warm the caches and find a repeat count for one sample.
    let reps: Vec<u64> = candidates
        .iter_mut()
        .map(|f| {
            let mut n = 1u64;
            loop {
                let t = Instant::now();
                for _ in 0..n {
                    f();
                }
                let e = t.elapsed();
                if e >= budget.sample / 4 || n >= 1 << 30 {
                    let per = e.as_secs_f64() / n as f64;
                    break ((budget.sample.as_secs_f64() / per.max(1e-9)) as u64).max(1);
                }
                n *= 4;
            }
        })
        .collect();
    let mut remote_reps = remote.as_mut().map(|r| r.calibrate(budget.sample));
    let mut remote_samples = Vec::with_capacity(budget.samples);
    let mut samples = vec![Vec::with_capacity(budget.samples); candidates.len()];
    for _ in 0..budget.samples {
        for (i, f) in candidates.iter_mut().enumerate() {
            let t = Instant::now();
            for _ in 0..reps[i] {
                f();
            }
            samples[i].push(t.elapsed().as_secs_f64() * 1e9 / reps[i] as f64);
        }
        if let (Some(r), Some(Ok(n))) = (remote.as_mut(), &remote_reps) {
            match r.sample(*n) {
                Ok(t) => remote_samples.push(t),
                Err(e) => remote_reps = Some(Err(e)),
            }
        }
    }
    black_box(&samples);
    let remote = remote_reps.map(|r| r.map(|_| median(remote_samples)));
    (samples.into_iter().map(median).collect(), remote)
}

/// The median of samples (NaN for none).
fn median(mut s: Vec<f64>) -> f64 {
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

/// [`median_ns_per_call`] from inside rayon's pool, as a job system calls threaded work. From a thread
/// outside the pool, every call that uses the pool pays a thread wake-up (about 16 us on this VM), and
/// the blocked caller competes with the workers for the two cores.
pub fn median_ns_per_call_in_pool(
    budget: Budget,
    candidates: &mut [Box<dyn FnMut() + Send + '_>],
) -> Vec<f64> {
    rayon::scope(|_| median_ns_per_call(budget, candidates))
}
