//! Every way a target can fail maps to exit code 3 with the trace so far
//! saved, never to a divergence or a panic.

mod common;

use common::{fake_target, refused_url, Misbehave};

use runner::report::CaseStatus;
use runner::report::Verdict;
use runner::run::run;
use runner::target::UrlError;

fn assert_fault(url: &str, expect: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    let summary = run(&common::config(url, dir.path(), 3, 20), &mut out).unwrap();
    let log = String::from_utf8_lossy(&out);
    assert_eq!(summary.verdict(), Verdict::Fault, "{log}");
    assert_eq!(summary.divergences, 0, "{log}");
    let CaseStatus::Fault { message, trace } = &summary.case_reports[0].status else {
        panic!("{log}")
    };
    assert!(message.contains(expect), "{message}");
    assert!(trace.exists(), "trace so far saved: {}", trace.display());
    assert!(log.contains("TARGET FAULT"), "{log}");
}

#[test]
fn connection_refused_is_a_target_fault() {
    assert_fault(&refused_url(), "unreachable");
}

#[test]
fn a_server_dying_mid_run_is_a_target_fault_with_the_trace_so_far() {
    let upstream = runner::serve::spawn(runner::serve::ServeOptions::default()).unwrap();
    let url = common::failing_proxy(&upstream.url(), Misbehave::Die, 30);
    let dir = tempfile::tempdir().unwrap();
    let summary = run(&common::config(&url, dir.path(), 3, 20), &mut Vec::new()).unwrap();
    assert_eq!(summary.verdict(), Verdict::Fault);
    let CaseStatus::Fault { trace, .. } = &summary.case_reports[0].status else {
        panic!()
    };
    let t = runner::trace::read(trace).unwrap();
    assert!(!t.lines.is_empty(), "the steps before the death are saved");
}

#[test]
fn a_hanging_server_times_out() {
    assert_fault(&fake_target(Misbehave::Hang, 2), "timed out");
}

#[test]
fn a_garbage_body_is_a_target_fault() {
    assert_fault(&fake_target(Misbehave::Garbage, 2), "not JSON");
}

#[test]
fn a_5xx_is_a_target_fault() {
    assert_fault(&fake_target(Misbehave::ServerError, 2), "server error");
}

#[test]
fn json_that_is_not_an_envelope_is_a_target_fault() {
    assert_fault(
        &fake_target(Misbehave::NotEnvelope, 2),
        "malformed envelope",
    );
}

#[test]
fn a_target_url_the_harness_may_not_use_is_refused_before_any_request() {
    // Bad usage, not a target fault: no case is run, nothing is reported
    // as the target's failure.
    let dir = tempfile::tempdir().unwrap();
    for (url, want) in [
        (
            "http://192.0.2.1:8001",
            UrlError::NotLoopback("http://192.0.2.1:8001".into()),
        ),
        (
            "https://127.0.0.1:8001",
            UrlError::Tls("https://127.0.0.1:8001".into()),
        ),
    ] {
        let got = run(&common::config(url, dir.path(), 1, 5), &mut Vec::new()).map(|_| ());
        assert_eq!(got, Err(want));
    }
}
