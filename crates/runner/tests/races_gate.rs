//! The gate of the concurrency catalogue, as `tests/mutants.rs` is the
//! sequential one's: every planted race of the reference server and every
//! durability bug of its persistent mode is found by the concurrent run
//! with its defaults (4 clients, 100 epochs of 8 operations; races show in
//! some interleavings only, so up to three seeds), and shrunk by re-running
//! to a history of a few operations. A shrink re-runs a race, so it may not
//! reproduce within its time on a loaded machine: every bug must be found,
//! every shrink that succeeds must be small, and most must succeed.
//!
//! Both tests are `#[ignore]`d in the default `cargo test`: they depend on
//! thread timing, and on a loaded two-core machine a hunt or a crash-restart
//! shrink can run long or miss. Run them with `cargo test -p
//! resonate-runner --test races_gate -- --ignored`, or `conform races`,
//! which prints the same table.

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
        // Wider than the default 2 ms: the gate runs on a loaded CI machine.
        race_window: Duration::from_millis(5),
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
#[ignore = "timing-dependent: run with --ignored, or `conform races`"]
fn every_planted_race_is_found_and_shrunk() {
    let dir = tempfile::tempdir().unwrap();
    let rows = hunt_races(&[], &options(dir.path()), &mut std::io::sink());
    assert_eq!(rows.len(), runner::serve::races::all().count());
    gate(rows, 24);
}

#[test]
#[ignore = "timing-dependent: run with --ignored, or `conform races`"]
fn every_durability_bug_is_found_under_crashes_and_shrunk() {
    let dir = tempfile::tempdir().unwrap();
    let rows = hunt_durability(&[], &options(dir.path()), &mut std::io::sink());
    assert_eq!(rows.len(), runner::serve::durability::ALL.len());
    gate(rows, 6);
}
