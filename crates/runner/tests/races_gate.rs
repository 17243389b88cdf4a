//! The gate of the concurrency catalogue, as `tests/mutants.rs` is the
//! sequential one's: every planted race of the reference server and every
//! durability bug of its persistent mode is found by the concurrent run
//! with its defaults (4 clients, 100 epochs of 8 operations; up to five
//! seeds), and shrunk by re-running to a history of a few operations.
//!
//! It does not depend on the machine being idle: a racy handler holds its
//! window open until a rival request was actually handled (a rendezvous,
//! `serve::races::rendezvous`, bounded by the window), so a rival whose
//! client a loaded machine schedules late still lands inside it; the
//! persistent mode logs only steps that write, so a crash under
//! `log-loses-tail` always loses a write; and every wait of a re-run is
//! bounded (requests by their timeout, restarts by the process's, the
//! shrink's attempts by its deadline). `conform races` prints the same
//! table.
//!
//! The failing epochs' search is split into independent components
//! (`lin::partition`), so a failing epoch costs its own component's search,
//! not every subset of the epoch's due timers; and the shrink's first
//! candidate keeps only the prefix steps that name what the failing
//! component names, so a re-run is a few steps, not the whole prefix.
//! Both once kept these tests out of `cargo test` (a hunt over 8 minutes,
//! two durability bugs not shrunk within 20 s); `ack-before-log` no
//! longer races a flush timer (its held-back line is written when the next
//! step is logged), so its crash always loses a step. Both gates are
//! still ignored, each for the reason it gives.

use std::time::Duration;

use runner::stress::hunt::{hunt_durability, hunt_races, table, HuntOptions};

fn options(dir: &std::path::Path) -> HuntOptions {
    HuntOptions {
        runs: 5,
        epochs: 100,
        clients: 4,
        shrink_time: Duration::from_secs(20),
        out_dir: dir.to_path_buf(),
        conform: env!("CARGO_BIN_EXE_conform").into(),
        race_window: runner::serve::races::DEFAULT_WINDOW,
    }
}

fn gate(rows: Vec<runner::stress::hunt::Hunted>, most_ops: usize) {
    let t = table(&rows);
    println!("{t}");
    for r in &rows {
        assert!(r.found, "{} survived:\n{t}", r.name);
        let n = r
            .shrunk_ops
            .unwrap_or_else(|| panic!("{} was not shrunk:\n{t}", r.name));
        assert!(n <= most_ops, "{} shrunk to {n} operations:\n{t}", r.name);
    }
}

#[test]
#[ignore = "every race is found (14 of 14 in `conform races`, 3 min), but race-tick and race-promise.register_callback are not reliably shrunk to 24 operations: a failing component with many due timers of its own is still searched exhaustively; run with --ignored, or `conform races`"]
fn every_planted_race_is_found_and_shrunk() {
    let dir = tempfile::tempdir().unwrap();
    let rows = hunt_races(&[], &options(dir.path()), &mut std::io::sink());
    assert_eq!(rows.len(), runner::serve::races::all().count());
    gate(rows, 24);
}

#[test]
#[ignore = "every durability bug is found, and all three shrank (1-2 operations) in 5.3 s in one debug run, but two of three later runs failed the shrink bar (not shrunk, or over 6 operations): not yet reliable; run with --ignored, or `conform races`"]
fn every_durability_bug_is_found_under_crashes_and_shrunk() {
    let dir = tempfile::tempdir().unwrap();
    let rows = hunt_durability(&[], &options(dir.path()), &mut std::io::sink());
    assert_eq!(rows.len(), runner::serve::durability::ALL.len());
    gate(rows, 6);
}
