//! The runner end to end against `conform serve` on an ephemeral port: a
//! clean run passes, a materialising server passes through latitude, a
//! planted bug is caught, saved, replayed to the same diff and shrunk.

mod common;

use std::time::Duration;

use runner::check::Checker;
use runner::exec::{execute, ExecOptions, Expect};
use runner::profile::Profile;
use runner::report::CaseStatus;
use runner::report::Verdict;
use runner::run::run;
use runner::serve::{spawn, ServeOptions};
use runner::shrink::{shrink, ShrinkOptions};
use runner::target::HttpTarget;
use runner::trace;

fn server(materialize: bool, mutant: Option<&str>) -> runner::serve::ServerHandle {
    spawn(ServeOptions {
        materialize,
        mutants: mutant.into_iter().map(str::to_string).collect(),
        ..ServeOptions::default()
    })
    .expect("serve")
}

#[test]
fn a_clean_run_against_the_reference_server_passes() {
    let s = server(false, None);
    let dir = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    let summary = run(&common::config(&s.url(), dir.path(), 8, 60), &mut out).unwrap();
    assert_eq!(summary.divergences, 0, "{}", String::from_utf8_lossy(&out));
    assert_eq!(summary.faults, 0);
    assert_eq!(summary.steps, 8 * 60);
    assert_eq!(
        summary.latitude, 0,
        "the reference server needs no latitude"
    );
    assert!(
        summary.coverage_hit > summary.coverage_total / 2,
        "{summary:?}"
    );
    assert_eq!(summary.verdict(), Verdict::Clean);
}

#[test]
fn a_materialising_server_passes_through_latitude() {
    let s = server(true, None);
    let dir = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    let summary = run(&common::config(&s.url(), dir.path(), 12, 80), &mut out).unwrap();
    assert_eq!(summary.divergences, 0, "{}", String::from_utf8_lossy(&out));
    assert!(
        summary.latitude > 0,
        "materialised reads must be explained by latitude: {summary:?}"
    );
}

#[test]
fn a_server_that_times_out_a_promise_early_is_caught_replayed_and_shrunk() {
    let s = server(false, Some("settle-timedout-early"));
    let dir = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    // The seed is fixed: generation is deterministic, so this case list is too.
    let cfg = runner::run::RunConfig {
        seed: 1,
        ..common::config(&s.url(), dir.path(), 200, 60)
    };
    let summary = run(&cfg, &mut out).unwrap();
    let log = String::from_utf8_lossy(&out);
    assert_eq!(summary.divergences, 1, "{log}");
    assert_eq!(summary.verdict(), Verdict::Diverged);
    let CaseStatus::Diverged {
        trace: path,
        class,
        replay,
        ..
    } = &summary.case_reports.last().unwrap().status
    else {
        panic!("{log}")
    };
    assert!(
        replay.contains("replay") && replay.contains(&s.url()),
        "{replay}"
    );
    assert!(log.contains("DIVERGENCE"), "{log}");

    // The saved trace replays to the same divergence.
    let t = trace::read(path).unwrap();
    assert!(t.lines.last().unwrap().diverged);
    let mut target = HttpTarget::new(&s.url(), Duration::from_secs(2)).unwrap();
    let mut checker = Checker::new(Profile::default());
    let ex = execute(
        &mut target,
        &mut checker,
        &t.steps(),
        Expect::Model,
        ExecOptions { check_state: true },
    );
    let (i, d) = ex.divergence.clone().expect("replay diverges");
    assert_eq!(i + 1, t.lines.len());
    assert_eq!(&d.class.to_string(), class);

    // And shrinks to a handful of steps diverging the same way.
    let opts = ShrinkOptions {
        check_state: true,
        time: Duration::from_secs(30),
        candidates: None,
        headline: false,
    };
    let r = shrink(
        &mut target,
        &mut checker,
        ex.clone(),
        &opts,
        &mut Vec::new(),
    );
    let best = r.best;
    assert!(
        best.lines.len() <= 4,
        "shrunk to {} steps",
        best.lines.len()
    );
    assert!(best.lines.len() < t.lines.len());
    // The same departure: the same step kind and a fact in common (a
    // shorter trace may show it with fewer side effects).
    let shrunk = best.divergence.unwrap().1.class;
    assert_eq!(shrunk.kind, d.class.kind);
    assert!(
        !shrunk.facts().is_disjoint(&d.class.facts()),
        "{shrunk} vs {}",
        d.class
    );
}

#[test]
fn a_server_that_does_not_bump_versions_is_caught() {
    let s = server(false, Some("acquire-no-version-check"));
    let dir = tempfile::tempdir().unwrap();
    let summary = run(
        &common::config(&s.url(), dir.path(), 100, 60),
        &mut Vec::new(),
    )
    .unwrap();
    assert_eq!(summary.divergences, 1, "fail-fast stops at the first");
}
