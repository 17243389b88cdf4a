//! Generation steps per second through each built-in baseline, for one
//! case of 1,000, 10,000 and 100,000 steps: what `conform run --baseline B`
//! asks of its generator (and, step for step, of its checker's model). A
//! deviation that reads the whole state at a step (a copy of the machine,
//! a sort of a table) shows here as a rate that falls with the case.
//!
//! Time is the thread's CPU time; the generator is pulled one step at a
//! time, as `run` pulls it. The spec's own figure is
//! `cargo bench -p resonate-gen --bench generate`.
//!
//! Run: `cargo bench -p resonate-runner --bench generate_baseline [-- STEPS…]`.

use runner::baseline::Baseline;
use runner::check::Checker;
use runner::profile::Profile;

#[path = "../../gen/benches/support/mod.rs"]
mod support;
use support::{cpu_now, sizes};

fn main() {
    let sizes = sizes();
    println!("generate_baseline: one case per size, seed 1, thread CPU time");
    for name in ["resonate", "ts-eager", "ts-none"] {
        let (_, deviations) = Baseline::load(name).expect("built in");
        let profile = Profile::load(name).expect("built in");
        let checker = Checker::with_deviations(profile, deviations);
        let mut first = None;
        for &n in &sizes {
            let start = cpu_now();
            let pulled = checker.stream(1, n, 0).count();
            let rate = pulled as f64 / (cpu_now() - start).as_secs_f64();
            let base = *first.get_or_insert(rate);
            println!(
                "generate_baseline: {name:<9} {n:>7} steps: {rate:>9.0} steps/s (×{:.2} of the first)",
                rate / base
            );
        }
    }
}
