//! What the linearizability checker costs as histories grow: histories
//! recorded by `conform stress` against the reference server in this
//! process (schedules included, every barrier's snapshot compared), at 2, 4
//! and 8 clients and 100 to 10,000 operations, each checked again offline
//! (`runner::lin::check`, what `conform check-history` runs), the best of
//! three. Prints operations per second, events (an invocation and a
//! completion per operation, porcupine's unit), configurations explored,
//! memo hits and how the epochs partitioned the history.
//!
//! `cargo bench -p resonate-runner --bench lin [-- --quick]`

use std::time::{Duration, Instant};

use deviate::Deviant;
use model::state::ServerConfig;
use runner::lin::{check, LinOptions, Verdict};
use runner::profile::Profile;
use runner::serve::{spawn, ServeOptions};
use runner::stress::{self, StressConfig};
use runner::target::HttpTarget;

fn record(clients: usize, ops: usize) -> runner::lin::history::History {
    let server = spawn(ServeOptions::default()).expect("serve");
    let mut target = HttpTarget::new(&server.url(), Duration::from_secs(5)).expect("target");
    let per_epoch = 8;
    let mut cfg = StressConfig::new(&server.url(), Profile::default(), Vec::new());
    cfg.clients = clients;
    // About 1.4 operations per generated one, with rivals.
    cfg.epochs = (ops * 10 / (per_epoch * 14)).max(1);
    cfg.ops = per_epoch;
    cfg.shrink = false;
    cfg.out_dir = std::env::temp_dir().join("conform-bench-lin");
    let mut sink = std::io::sink();
    let o = stress::run(&cfg, &mut target, None, &mut sink);
    assert!(
        matches!(o.verdict, stress::StressVerdict::Linearizable),
        "the reference server must be linearizable: {:?}",
        o.verdict
    );
    o.history
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[usize] = if quick {
        &[100, 1000]
    } else {
        &[100, 1000, 2200, 10_000]
    };
    println!(
        "{:>7} {:>7} {:>7} {:>10} {:>12} {:>10} {:>10} {:>7} {:>7}",
        "clients", "ops", "events", "check ms", "ops/s", "nodes", "memo hits", "epochs", "widest"
    );
    for clients in [2, 4, 8] {
        for &n in sizes {
            let h = record(clients, n);
            let mut best = f64::MAX;
            let mut last = None;
            for _ in 0..3 {
                let model = Deviant::new(ServerConfig::default(), Vec::new());
                let t = Instant::now();
                let c = check(&h, model, &[], LinOptions::default());
                best = best.min(t.elapsed().as_secs_f64());
                assert!(matches!(c.verdict, Verdict::Linearizable));
                last = Some(c.stats);
            }
            let st = last.expect("three rounds");
            println!(
                "{:>7} {:>7} {:>7} {:>10.1} {:>12.0} {:>10} {:>10} {:>7} {:>7}",
                clients,
                st.ops,
                2 * st.ops,
                best * 1e3,
                st.ops as f64 / best,
                st.nodes,
                st.memo_hits,
                st.epochs,
                st.widest_epoch
            );
        }
    }
}
