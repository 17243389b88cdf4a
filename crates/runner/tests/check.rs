//! `conform check`'s contract: the answers a golden file records are the
//! verdict. A record the model does not reproduce binds (a wrong recorded
//! status fails a correct server); a record that is the model's own answer
//! leaves a mismatch to the model with its latitude and the baseline; a
//! step a line does not record is judged by the model and counted; and a
//! refused request is compared with the state before it, whatever path
//! the step before took.

use std::path::{Path, PathBuf};

use gen::{Op, Step};
use model::api::{Request, TaskHeartbeatReq};
use runner::golden::record;
use runner::profile::Profile;
use runner::report::{CaseStatus, Summary};
use runner::repro::Reach;
use runner::target::{LocalServer, LocalTarget};
use runner::trace::{self, Header, Line, Options, Trace};
use runner::verify::{check_all, CheckConfig};

/// Write `lines` as a golden file recorded with the spec's retry timeout.
fn golden_file(dir: &Path, name: &str, lines: Vec<Line>) -> PathBuf {
    let options = Options {
        group: Some(name.to_string()),
        retry_timeout: Some(Profile::default().retry_timeout),
        with_state: Some(true),
        ..Options::default()
    };
    let path = dir.join(format!("{name}.ndjson"));
    let t = Trace {
        header: Header::new(None, None, options, None),
        lines,
    };
    trace::write(&path, &t).unwrap();
    path
}

/// `check` the file against the model with `mutants` planted (in process),
/// the checker applying `baseline`.
fn check(path: &Path, mutants: &[&str], baseline: &[&str]) -> Summary {
    let devs = |names: &[&str]| deviate::catalogue::resolve(names).unwrap();
    let server = LocalServer::new(Default::default(), devs(mutants), false);
    let mut target = LocalTarget::new(server);
    let cfg = CheckConfig {
        profile: Profile::default(),
        deviations: devs(baseline),
        reach: Reach {
            target: None,
            profile: None,
            baseline: None,
            retry_timeout: Profile::default().retry_timeout,
            timeout_ms: 1000,
            check_state: true,
            allow_remote: false,
            pipeline: runner::target::DEFAULT_PIPELINE,
        },
    };
    check_all(&mut target, &[path.to_path_buf()], &cfg, &mut Vec::new())
}

fn witness(name: &str) -> Vec<Step> {
    (deviate::lookup(name).unwrap().witness)()
}

/// The status of a response envelope, rewritten.
fn set_status(env: &mut serde_json::Value, status: u64) {
    env["head"]["status"] = status.into();
}

#[test]
fn a_wrong_recorded_status_fails_a_correct_server() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = record(&witness("settle-timedout-early"), 5000, true);
    // The correct answer to the read is 200 (pending); the file says 404.
    set_status(lines[1].res.as_mut().unwrap(), 404);
    let f = golden_file(dir.path(), "wrong-status", lines);
    let s = check(&f, &[], &[]);
    assert_eq!(s.divergences, 1, "{:?}", s.case_reports);
    let CaseStatus::Diverged {
        step, class, diff, ..
    } = &s.case_reports[0].status
    else {
        panic!("{:?}", s.case_reports[0].status)
    };
    assert_eq!(*step, 2);
    assert_eq!(class, "promise.get [status:404->200]");
    assert!(diff.contains("(- record, + target)"), "{diff}");
}

#[test]
fn a_wrong_recorded_state_fails_a_correct_server() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = record(&witness("settle-timedout-early"), 5000, true);
    let state = lines[1].state.as_mut().unwrap();
    state["promises"][0]["state"] = "resolved".into();
    let f = golden_file(dir.path(), "wrong-state", lines);
    let s = check(&f, &[], &[]);
    assert_eq!(s.divergences, 1, "{:?}", s.case_reports);
}

#[test]
fn a_step_whose_record_was_removed_is_judged_by_the_model_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = record(&witness("settle-timedout-early"), 5000, true);
    lines[1].res = None;
    lines[1].state = None;
    let f = golden_file(dir.path(), "no-record", lines);
    // The planted bug answers the read it no longer has a record for: the
    // model judges it, as `replay` does.
    let s = check(&f, &["settle-timedout-early"], &[]);
    assert_eq!(s.divergences, 1, "{:?}", s.case_reports);
    assert_eq!(s.unrecorded, 1);
    // A correct server passes it, and the summary still says it was the
    // model's call.
    let s = check(&f, &[], &[]);
    assert_eq!((s.divergences, s.unrecorded), (0, 1));
}

#[test]
fn a_baseline_still_excuses_a_known_departure_from_a_faithful_record() {
    let dir = tempfile::tempdir().unwrap();
    let lines = record(&witness("heartbeat-ignores-expiry"), 5000, true);
    let f = golden_file(dir.path(), "known", lines);
    let bug = ["heartbeat-ignores-expiry"];
    assert_eq!(check(&f, &bug, &[]).divergences, 1);
    let s = check(&f, &bug, &bug);
    assert_eq!((s.divergences, s.faults), (0, 0), "{:?}", s.case_reports);
}

#[test]
fn a_record_the_model_does_not_reproduce_binds_even_where_a_baseline_departs() {
    // The record says what the known departure answers: a target without
    // the departure (the spec exactly) departs from the record, and the
    // baseline cannot excuse that, because the record is not the model's.
    let dir = tempfile::tempdir().unwrap();
    let steps = witness("heartbeat-ignores-expiry");
    let mut lines = record(&steps, 5000, true);
    let devs = deviate::catalogue::resolve(&["heartbeat-ignores-expiry"]).unwrap();
    let mut deviant = deviate::Deviant::new(Default::default(), devs);
    for (l, s) in lines.iter_mut().zip(&steps) {
        let r = deviant.step(s);
        if let (Some(r), Op::Request(req)) = (r, &s.op) {
            l.res = Some(deviant.encode(req, &r, "golden"));
        }
        l.state = Some(serde_json::to_value(model::view::StateView::of(&deviant.state)).unwrap());
    }
    let f = golden_file(dir.path(), "foreign", lines);
    let s = check(&f, &[], &["heartbeat-ignores-expiry"]);
    assert_eq!(s.divergences, 1, "{:?}", s.case_reports);
}

#[test]
fn a_refused_request_is_compared_with_the_state_just_before_it() {
    // A promise, then a request the reference server's rules refuse (an
    // empty heartbeat), recorded as refused: the refusal changes nothing,
    // which must be judged against the state after the create, not the
    // empty state the case started from.
    let dir = tempfile::tempdir().unwrap();
    let mut steps = witness("settle-timedout-early");
    steps.truncate(1);
    let now = steps[0].now;
    steps.push(Step {
        now,
        op: Op::Request(Request::TaskHeartbeat(TaskHeartbeatReq {
            pid: "p1".into(),
            tasks: vec![],
        })),
    });
    let mut lines = record(&steps, 5000, true);
    lines[1].res = Some(model::wire::response::error_envelope(
        "task.heartbeat",
        "golden",
        400,
        "tasks must not be empty",
    ));
    let f = golden_file(dir.path(), "refused", lines);
    let s = check(&f, &[], &[]);
    assert_eq!(
        (s.divergences, s.faults),
        (0, 0),
        "{:?}",
        s.case_reports[0].status
    );
    assert_eq!(s.steps, 2);
}
