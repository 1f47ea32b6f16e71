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

/// Runs each candidate `budget.samples` times, round-robin, and returns each one's median time per call
/// in nanoseconds. Each sample repeats the call enough times to fill `budget.sample`.
pub fn median_ns_per_call<F: FnMut() + ?Sized>(
    budget: Budget,
    candidates: &mut [Box<F>],
) -> Vec<f64> {
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
    let mut samples = vec![Vec::with_capacity(budget.samples); candidates.len()];
    for _ in 0..budget.samples {
        for (i, f) in candidates.iter_mut().enumerate() {
            let t = Instant::now();
            for _ in 0..reps[i] {
                f();
            }
            samples[i].push(t.elapsed().as_secs_f64() * 1e9 / reps[i] as f64);
        }
    }
    black_box(&samples);
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            s[s.len() / 2]
        })
        .collect()
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
