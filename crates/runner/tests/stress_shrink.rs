//! The concurrent shrink brings a counterexample to fewer clients: the
//! operations around a racing pair (what creates the object a moment
//! before) need not run on a client of their own, and the shrink moves
//! them onto another client's queue, in the order they were invoked. And
//! a shrink is bounded by its re-runs, not by luck or load.

use std::time::Duration;

use deviate::families::witness::*;
use model::types::PromiseState;
use runner::profile::Profile;
use runner::serve::{spawn, ServeOptions};
use runner::stress::shrink::{shrink_scenario, Scenario};
use runner::stress::StressConfig;
use runner::target::HttpTarget;

#[test]
fn a_race_on_three_clients_is_shrunk_to_two() {
    let server = spawn(ServeOptions {
        races: vec!["race-promise.settle".into()],
        ..ServeOptions::default()
    })
    .unwrap();
    let url = server.url();
    let mut target = HttpTarget::new(&url, Duration::from_secs(5)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = StressConfig::new(&url, Profile::default(), Vec::new());
    cfg.clients = 3;
    cfg.out_dir = dir.path().to_path_buf();
    cfg.shrink_time = Duration::from_secs(30);
    // Task `a` held at version 1; then, at once: client 2 creates `a.1`,
    // client 0 settles it (the racy handler), client 1 suspends `a` on it
    // inside the settle's window, so the settle writes `a.1` back without
    // the callback and `a` stays suspended on a settled promise.
    let start = Scenario {
        prefix: vec![at(T0, task_create("a", "p1", 60_000, LATER))],
        now: T0,
        queues: vec![
            vec![at(T0, settle("a.1", PromiseState::Resolved))],
            vec![at(T0, suspend("a", 1, &["a.1"]))],
            vec![at(T0, create("a.1", LATER, none()))],
        ],
        order: vec![2, 0, 1],
        crash: false,
    };
    assert_eq!(start.size(), (4, 3));
    let mut out = Vec::new();
    let shrunk = shrink_scenario(&cfg, &mut target, None, start, &cfg.header(), &mut out);
    let log = String::from_utf8_lossy(&out);
    let (best, history) = shrunk.unwrap_or_else(|| panic!("the race shows again: {log}"));
    assert_eq!(
        best.size(),
        (4, 2),
        "every operation is needed, one client is not: {best:?}"
    );
    let creator = best
        .queues
        .iter()
        .find(|q| q.len() == 2)
        .expect("one client sends two operations");
    assert_eq!(
        creator[0],
        at(T0, create("a.1", LATER, none())),
        "the create is still invoked before the settle it makes possible"
    );
    let last = history.epochs.last().unwrap();
    let mut clients: Vec<usize> = last.ops.iter().map(|o| o.client).collect();
    clients.sort_unstable();
    clients.dedup();
    assert_eq!(clients.len(), 2, "the failing re-run used two clients");
}

/// The shrink spends at most its re-runs (`StressConfig::shrink_reruns`),
/// however many attempts the first candidate would get: against a server
/// without the race, the scenario never fails again, and the shrink gives
/// up after exactly the cap, saying which limit ran out.
#[test]
fn a_shrink_spends_at_most_its_reruns() {
    let server = spawn(ServeOptions::default()).unwrap();
    let url = server.url();
    let mut target = HttpTarget::new(&url, Duration::from_secs(5)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = StressConfig::new(&url, Profile::default(), Vec::new());
    cfg.clients = 2;
    cfg.out_dir = dir.path().to_path_buf();
    cfg.shrink_time = Duration::from_secs(600);
    cfg.shrink_reruns = Some(3);
    // More attempts than the cap, so the cap is what stops it.
    cfg.attempts = 8;
    let start = Scenario {
        prefix: vec![at(T0, task_create("a", "p1", 60_000, LATER))],
        now: T0,
        queues: vec![
            vec![at(T0, settle("a.1", PromiseState::Resolved))],
            vec![at(T0, create("a.1", LATER, none()))],
        ],
        order: vec![1, 0],
        crash: false,
    };
    let mut out = Vec::new();
    let shrunk = shrink_scenario(&cfg, &mut target, None, start, &cfg.header(), &mut out);
    let log = String::from_utf8_lossy(&out);
    assert!(shrunk.is_none(), "nothing to reproduce: {log}");
    assert!(log.contains("the shrink's 3 re-runs were spent"), "{log}");
}
