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
//! shrink by its re-runs and, above them, its time). `conform races` prints the same
//! table.
//!
//! A race is found when its racy handler checks before its rival: the
//! clients invoke a step and its rival at one moment (a pair), and a step
//! a rival joins is one that writes on the model (redrawn up to eight
//! times, `gen::epoch::WRITING_TRIES`). Before both, a CI run missed
//! `race-promise.register_callback` on all five seeds: measured in debug
//! with two busy loops on the 2-core machine, seeds 1–10, it was found on
//! 17 of 30 runs (seeds 1–10 three times; a run held 0 to 2 callbacks a
//! rival joined whose ends were live). With only racy handlers that write
//! nothing answering at once, one run of seeds 1–10 per race: the
//! callbacks' race on 5 seeds, `race-task.heartbeat` on 8,
//! `race-task.fence` on 8, `race-schedule.delete` on 9, the others on 10.
//! After, seeds 1–10 twice: every race on 20 of 20,
//! `race-promise.register_callback` on 18.
//!
//! A shrink is bounded by its re-runs (`stress::hunt::SHRINK_RERUNS`), its
//! time only a ceiling: with a 20 s budget a loaded CI machine once shrank
//! `race-tick` to 58 operations where an idle one reaches 3 or 4, and with
//! 120 s a machine also running valgrind and two release builds stopped
//! `race-task.fence` at 91 operations after 797 of its 1,000 re-runs (the
//! whole test takes 39 s idle), so the ceiling is 300 s. A find
//! whose failing epoch does not show again when re-run is not shrunk, and
//! the hunt tries the next seeds for one that is; the paced re-runs take
//! the recorded invocation order, its reverse and shuffles in turn, since
//! a handler invoked after its rival may have run its check first.
//!
//! The failing epochs' search is split into independent components
//! (`lin::partition`), so a failing epoch costs its own component's search,
//! not every subset of the epoch's due timers; and the shrink's first
//! candidate keeps only the prefix steps that name what the failing
//! component names, so a re-run is a few steps, not the whole prefix.
//! Both once kept these tests out of `cargo test` (a hunt over 8 minutes,
//! two durability bugs not shrunk within 20 s); `ack-before-log` no
//! longer races a flush timer (its held-back line is written when the next
//! step is logged), so its crash always loses a step. The race gate was
//! once ignored too: one run spent over 20 minutes in its own check of a
//! failing epoch (the run's 2,000,000-configuration search budget, in
//! debug). The hunt now checks each epoch with at most
//! `stress::hunt::SEARCH_BUDGET` configurations: an epoch the search cannot
//! decide within them ends that run undecided (never found) and the hunt
//! tries the next seed, so its time is bounded.

use std::time::Duration;

use runner::stress::hunt::{hunt_durability, hunt_races, table, HuntOptions};

/// The most operations a race's shrunk history may keep. The hunt is told
/// it as its goal: a shrink that stopped above it on a loaded machine (a
/// CI run once stopped `race-task.release` at 218 operations after its
/// 1,000 re-runs, where an idle one reaches a handful) sends the hunt on
/// to the next seeds.
const RACE_OPS: usize = 24;
/// The most operations a durability bug's shrunk history may keep.
const DURABILITY_OPS: usize = 6;

fn options(dir: &std::path::Path, most_ops: usize) -> HuntOptions {
    HuntOptions {
        runs: 5,
        epochs: 100,
        clients: 4,
        shrink_time: Duration::from_secs(300),
        shrink_reruns: Some(runner::stress::hunt::SHRINK_RERUNS),
        shrink_goal: Some(most_ops),
        out_dir: dir.to_path_buf(),
        conform: env!("CARGO_BIN_EXE_conform").into(),
        race_window: runner::serve::races::DEFAULT_WINDOW,
        search_budget: runner::stress::hunt::SEARCH_BUDGET,
    }
}

fn gate(rows: Vec<runner::stress::hunt::Hunted>, log: Vec<u8>, most_ops: usize) {
    let t = table(&rows) + "\n" + &String::from_utf8_lossy(&log);
    println!("{t}");
    for r in &rows {
        assert!(r.found, "{} survived:\n{t}", r.name);
        let n = r
            .shrunk_ops
            .unwrap_or_else(|| panic!("{} was not shrunk:\n{t}", r.name));
        assert!(n <= most_ops, "{} shrunk to {n} operations:\n{t}", r.name);
    }
}

/// Under load the clients' threads are scheduled late and out of order;
/// the shrink's paced re-runs send the failing epoch one operation at a
/// time (in the order the run invoked it, its reverse, shuffles), so the
/// rival lands inside the racy handler's window again.
#[test]
fn every_planted_race_is_found_and_shrunk() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Vec::new();
    let rows = hunt_races(&[], &options(dir.path(), RACE_OPS), &mut log);
    assert_eq!(rows.len(), runner::serve::races::all().count());
    gate(rows, log, RACE_OPS);
}

/// A shrunk durability bug is often a prefix and a crash alone (its epoch
/// has no operation: the history file writes the epoch's `now` on its
/// crash line, so it reads back); the shrink re-runs a crashed epoch with
/// only the operations acknowledged before the crash, so what the bug
/// loses is the step the run lost.
#[test]
fn every_durability_bug_is_found_under_crashes_and_shrunk() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Vec::new();
    let rows = hunt_durability(&[], &options(dir.path(), DURABILITY_OPS), &mut log);
    assert_eq!(rows.len(), runner::serve::durability::ALL.len());
    gate(rows, log, DURABILITY_OPS);
}

/// A shrink that stops above the goal (here every shrink: the goal is no
/// operation at all) sends the hunt on to the next seed, and the row keeps
/// the smallest history with its seed; without a goal the first shrunk
/// history ends the hunt.
#[test]
fn a_shrink_above_the_goal_sends_the_hunt_to_the_next_seed() {
    let bug = vec![runner::serve::durability::ALL[0].name.to_string()];
    let hunt = |goal: Option<usize>| {
        let dir = tempfile::tempdir().unwrap();
        let o = HuntOptions {
            runs: 2,
            shrink_goal: goal,
            ..options(dir.path(), DURABILITY_OPS)
        };
        let mut log = Vec::new();
        let rows = hunt_durability(&bug, &o, &mut log);
        let log = String::from_utf8_lossy(&log).to_string();
        // The size of each seed's shrunk history, read back from its file.
        let shrunk: Vec<(u64, usize)> = (1..=2u64)
            .filter_map(|s| {
                let tag = format!("(seed {s}): shrunk to ");
                let line = log.lines().find(|l| l.contains(&tag))?;
                let path = line.rsplit(": ").next()?;
                let text = std::fs::read_to_string(path).ok()?;
                Some((s, runner::lin::history::parse(&text).ok()?.len()))
            })
            .collect();
        (rows[0].clone(), shrunk, log)
    };
    let (row, shrunk, log) = hunt(None);
    assert!(row.found, "{log}");
    assert_eq!(
        shrunk.len(),
        1,
        "the first shrunk history ends the hunt:\n{log}"
    );
    assert_eq!(
        (row.shrunk_seed, row.shrunk_ops),
        (Some(shrunk[0].0), Some(shrunk[0].1))
    );
    let (row, shrunk, log) = hunt(Some(0));
    assert_eq!(
        shrunk.len(),
        2,
        "a shrink above the goal tries the next seed:\n{log}"
    );
    let best = shrunk.iter().min_by_key(|(_, n)| *n).unwrap();
    assert_eq!(
        (row.shrunk_seed, row.shrunk_ops),
        (Some(best.0), Some(best.1)),
        "{log}"
    );
}
