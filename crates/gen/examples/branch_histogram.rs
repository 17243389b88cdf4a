//! How often each model branch is taken over many generated traces: the
//! tool for tuning the generator's weights.
//!
//! `cargo run --release -p resonate-gen --example branch_histogram -- [SEEDS] [STEPS]`

use std::collections::BTreeMap;

use gen::{apply, generate, GenConfig};
use model::machine::Machine;
use model::state::ServerConfig;

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>());
    let seeds = args
        .next()
        .transpose()
        .expect("SEEDS: a number")
        .unwrap_or(200);
    let steps = args
        .next()
        .transpose()
        .expect("STEPS: a number")
        .unwrap_or(60);
    let cfg = GenConfig {
        steps: steps as usize,
        ..GenConfig::default()
    };
    println!("seeds 0..{seeds}, {cfg:?}");
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for seed in 0..seeds {
        let mut m = Machine::new(ServerConfig {
            retry_timeout: cfg.retry_timeout,
        });
        for s in generate(seed, &cfg) {
            apply(&mut m, &s);
            for b in m.take_hits() {
                *counts.entry(b.name()).or_default() += 1;
            }
        }
    }
    for b in model::branch::ALL {
        let mark = if b.reachable() { "" } else { " (unreachable)" };
        println!(
            "{:60} {:>7}{mark}",
            b.name(),
            counts.get(b.name()).unwrap_or(&0)
        );
    }
}
