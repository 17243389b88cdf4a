//! What the linearizability checker costs as histories grow: histories
//! recorded by `conform stress` against the reference server in this
//! process (schedules included, every barrier's snapshot compared), at 2, 4
//! and 8 clients and 100 to 10,000 operations, each saved as a history
//! file, read back and checked again offline (`runner::lin::check`, what
//! `conform check-history` runs), the best of three. Prints operations per
//! second of CPU time (the check's own thread, so a loaded machine does
//! not inflate it; the wall time is beside it), events (an invocation and a completion per operation,
//! porcupine's unit), configurations explored, memo hits, how the epochs
//! partitioned the history (epochs, the widest, those whose snapshot pinned
//! the state), how the epochs split into independent components
//! (`runner::lin::partition`: components searched, epochs split, the
//! largest component), the entries of the last snapshot and the file's
//! size.
//!
//! `cargo bench -p resonate-runner --bench lin [-- --quick]`: `--quick`
//! stops at 1,000 operations; the full table (to 10,000) takes minutes,
//! which is why CI does not run it. `LIN_BENCH_ROWS=8x10000,2x1000` runs
//! only those rows (clients x operations); `LIN_BENCH_BUDGET=N` lets the
//! recording run's own check give up past N configurations in an epoch,
//! saving the history so far (its path is printed) instead of stopping the
//! bench. "file KB" is the history as written (barriers as deltas),
//! "whole KB" the same with every snapshot whole.

use std::time::{Duration, Instant};

use deviate::Deviant;
use model::state::ServerConfig;
use runner::lin::history::{self, History, Snapshot};
use runner::lin::shown::Shown;
use runner::lin::{check, LinOptions, Verdict};
use runner::profile::Profile;
use runner::serve::{spawn, ServeOptions};
use runner::stress::{self, StressConfig};
use runner::target::HttpTarget;

/// Record a history of about `ops` operations on `clients` clients. With
/// `budget`, the run's own check gives up on an epoch past that many
/// configurations: the run then stops, saves its history (under the bench's
/// temp dir) and `Err` names the file, to check offline with `conform
/// check-history` (the in-process run checks each epoch as it records it:
/// a search that blows up would otherwise stop the recording too).
fn record(clients: usize, ops: usize, budget: Option<u64>) -> Result<History, String> {
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
    if let Some(b) = budget {
        cfg.lin.budget = b;
    }
    let mut sink = std::io::sink();
    let o = stress::run(&cfg, &mut target, None, &mut sink);
    match o.verdict {
        stress::StressVerdict::Linearizable => Ok(o.history),
        stress::StressVerdict::Undecided(why) if budget.is_some() => Err(why),
        v => panic!("the reference server must be linearizable: {v:?}"),
    }
}

/// This thread's CPU time, s: what the check costs whatever else the
/// machine runs (the wall time is printed beside it).
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a pointer to a live timespec.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(r, 0, "clock_gettime");
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// Entries of the last barrier's snapshot, all components, and the size
/// (bytes) the file would have with every barrier's snapshot whole (the
/// `conform-history/1` way).
fn snapshot_sizes(h: &History) -> (usize, usize) {
    let mut held = None;
    let mut whole = h.clone();
    for e in &mut whole.epochs {
        if let Some(s) = e.barrier.as_mut().and_then(|b| b.snap.as_mut()) {
            Shown::follow(&mut held, s).expect("the run's deltas follow");
            *s = Snapshot::Full(held.as_ref().expect("followed").to_json());
        }
    }
    (held.map_or(0, |s| s.len()), whole.to_ndjson().len())
}

/// A run's figures, by the clients and operations of the row.
fn rows() -> Option<Vec<(usize, usize)>> {
    let v = std::env::var("LIN_BENCH_ROWS").ok()?;
    Some(
        v.split(',')
            .filter_map(|r| {
                let (c, n) = r.split_once('x')?;
                Some((c.trim().parse().ok()?, n.trim().parse().ok()?))
            })
            .collect(),
    )
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[usize] = if quick {
        &[100, 1000]
    } else {
        &[100, 1000, 2200, 10_000]
    };
    let dir = std::env::temp_dir().join("conform-bench-lin");
    std::fs::create_dir_all(&dir).expect("a temp dir");
    println!(
        "{:>7} {:>7} {:>7} {:>9} {:>9} {:>10} {:>8} {:>9} {:>7} {:>6} {:>6} {:>6} {:>6} {:>7} {:>8} {:>8} {:>8}",
        "clients",
        "ops",
        "events",
        "wall ms",
        "cpu ms",
        "ops/s",
        "nodes",
        "memo hits",
        "epochs",
        "widest",
        "pinned",
        "comps",
        "split",
        "largest",
        "entries",
        "file KB",
        "whole KB"
    );
    let budget = std::env::var("LIN_BENCH_BUDGET")
        .ok()
        .map(|b| b.parse().expect("LIN_BENCH_BUDGET: a number"));
    let all: Vec<(usize, usize)> = [2, 4, 8]
        .into_iter()
        .flat_map(|c| sizes.iter().map(move |&n| (c, n)))
        .collect();
    for (clients, n) in rows().unwrap_or(all) {
        {
            let recorded = match record(clients, n, budget) {
                Ok(h) => h,
                Err(why) => {
                    println!("{clients:>7} {n:>7} the run's check gave up: {why}");
                    continue;
                }
            };
            let file = dir.join(format!("c{clients}-n{n}.history.ndjson"));
            std::fs::write(&file, recorded.to_ndjson()).expect("the history is written");
            let text = std::fs::read_to_string(&file).expect("the history is read");
            let h = history::parse(&text).expect("the history parses");
            let (mut best, mut best_cpu) = (f64::MAX, f64::MAX);
            let mut last = None;
            for _ in 0..3 {
                let model = Deviant::new(ServerConfig::default(), Vec::new());
                let (t, cpu) = (Instant::now(), cpu_seconds());
                let c = check(&h, model, &[], LinOptions::default());
                best = best.min(t.elapsed().as_secs_f64());
                best_cpu = best_cpu.min(cpu_seconds() - cpu);
                assert!(matches!(c.verdict, Verdict::Linearizable));
                last = Some(c.stats);
            }
            let st = last.expect("three rounds");
            let (entries, whole) = snapshot_sizes(&h);
            println!(
                "{:>7} {:>7} {:>7} {:>9.1} {:>9.1} {:>10.0} {:>8} {:>9} {:>7} {:>6} {:>6} {:>6} {:>6} {:>7} {:>8} {:>8} {:>8}",
                clients,
                st.ops,
                2 * st.ops,
                best * 1e3,
                best_cpu * 1e3,
                st.ops as f64 / best_cpu,
                st.nodes,
                st.memo_hits,
                st.epochs,
                st.widest_epoch,
                st.pinned_epochs,
                st.components,
                st.split_epochs,
                st.largest_component,
                entries,
                text.len() / 1024,
                whole / 1024
            );
        }
    }
}
