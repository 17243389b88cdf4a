//! What the generation benches share: `cargo bench -p resonate-gen --bench
//! generate` and `cargo bench -p resonate-runner --bench generate_baseline`
//! (which includes this file by path) time one case per size the same
//! way, on the calling thread's CPU clock.

use std::time::Duration;

/// CPU time of the calling thread.
pub fn cpu_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant
    // every Linux and macOS libc knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The case sizes asked for on the command line (the arguments that are
/// not flags), else 1,000, 10,000 and 100,000 steps.
pub fn sizes() -> Vec<usize> {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .map(|a| a.parse().expect("a step count"))
        .collect();
    if sizes.is_empty() {
        vec![1_000, 10_000, 100_000]
    } else {
        sizes
    }
}
