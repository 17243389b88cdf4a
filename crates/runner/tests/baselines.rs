//! What a run reports against a baseline: a deviation the target no longer
//! shows is "possibly fixed"; a divergence known by signature ends its case
//! as known, counted apart, and is not a divergence.

mod common;

use runner::baseline::{Baseline, Known};
use runner::report::{CaseStatus, Verdict};

use runner::run::{run_on, RunConfig};
use runner::target::{LocalServer, LocalTarget};

fn config(dir: &std::path::Path) -> RunConfig {
    RunConfig {
        fail_fast: true,
        ..common::config("http://127.0.0.1:1", dir, 40, 80)
    }
}

fn target(deviations: Vec<&'static deviate::Deviation>) -> LocalTarget {
    LocalTarget::new(LocalServer::new(Default::default(), deviations, false))
}

#[test]
fn a_baselined_deviation_the_target_no_longer_has_is_possibly_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let known = deviate::lookup("timer-without-target-unarmed").unwrap();
    let cfg = RunConfig {
        deviations: vec![known],
        baseline: Some(Baseline {
            name: "old".into(),
            deviations: vec![known.name.into()],
            ..Baseline::default()
        }),
        ..config(dir.path())
    };
    let mut out = Vec::new();
    // The target is the spec itself: the deviation is "fixed".
    let s = run_on(&cfg, &mut target(vec![]), &mut out);
    let log = String::from_utf8_lossy(&out);
    assert_eq!(s.possibly_fixed, 1, "{log}");
    assert_eq!(s.divergences, 0, "{log}");
    assert_eq!(s.verdict(), Verdict::Diverged);
    let fixed = s.case_reports.iter().find_map(|c| match &c.status {
        CaseStatus::PossiblyFixed { deviation, .. } => Some(deviation.clone()),
        _ => None,
    });
    assert_eq!(fixed.as_deref(), Some(known.name));
    assert!(log.contains("POSSIBLY FIXED"), "{log}");
}

#[test]
fn a_divergence_known_by_signature_ends_its_case_as_known() {
    let dir = tempfile::tempdir().unwrap();
    let bug = deviate::lookup("listener-refuses-internal").unwrap();
    // First find its signature, as a user would from a red run.
    let s = run_on(&config(dir.path()), &mut target(vec![bug]), &mut Vec::new());
    let class = s
        .case_reports
        .iter()
        .find_map(|c| match &c.status {
            CaseStatus::Diverged { class, .. } => Some(class.clone()),
            _ => None,
        })
        .expect("the bug is found");
    let cfg = RunConfig {
        fail_fast: false,
        cases: 10,
        baseline: Some(Baseline {
            name: "sig".into(),
            known: vec![Known {
                signature: class.clone(),
                reason: "not yet a deviation".into(),
            }],
            ..Baseline::default()
        }),
        ..config(dir.path())
    };
    let s = run_on(&cfg, &mut target(vec![bug]), &mut Vec::new());
    assert!(s.known > 0, "{s:?}");
    // The signature is exact: the same bug seen with another difference
    // too (a listener missing from the state) is not known, and stays a
    // divergence.
    for c in &s.case_reports {
        match &c.status {
            CaseStatus::Known { class: k, .. } => assert_eq!(k, &class),
            CaseStatus::Diverged { class: d, .. } => assert_ne!(d, &class),
            _ => {}
        }
    }
    assert_eq!(s.known + s.divergences + count_passes(&s), s.cases);
}

fn count_passes(s: &runner::report::Summary) -> usize {
    s.case_reports
        .iter()
        .filter(|c| c.status == CaseStatus::Pass)
        .count()
}
