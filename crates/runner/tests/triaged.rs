//! Triaged divergences (`traces/divergences/`): every file replays cleanly
//! against the reference server, and the model still gives the answers
//! recorded when the verdict was reached (`expect`), so a model change that
//! would reopen a verdict fails here.

use std::path::PathBuf;
use std::time::Duration;

use gen::Op;
use model::state::ServerConfig;
use runner::check::Checker;
use runner::compare::normalize_response;
use runner::exec::{execute, ExecOptions, Expect};
use runner::profile::Profile;
use runner::serve::{spawn, ServeOptions};
use runner::target::HttpTarget;
use runner::trace;

fn files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../traces/divergences");
    let mut out = Vec::new();
    for sub in std::fs::read_dir(dir).unwrap() {
        let sub = sub.unwrap().path();
        if sub.is_dir() {
            out.extend(runner::verify::golden_files(&sub).unwrap());
        }
    }
    assert!(!out.is_empty());
    out
}

/// The deviations a file's `expect` answers carry: its header's
/// `deviations` (a trace shrunk under a baseline less its departure, as the
/// Python server's are), else none (the spec's answers).
fn deviations(t: &trace::Trace) -> Vec<&'static deviate::Deviation> {
    let names: Vec<String> = t
        .header
        .options
        .extra
        .get("deviations")
        .map(|v| serde_json::from_value(v.clone()).expect("`deviations` is a list of names"))
        .unwrap_or_default();
    deviate::catalogue::resolve(&names).unwrap()
}

#[test]
fn the_model_still_gives_the_recorded_answers() {
    for f in files() {
        let t = trace::read(&f).unwrap();
        let config = ServerConfig {
            retry_timeout: t.header.retry_timeout(),
        };
        let mut m = deviate::Deviant::new(config, deviations(&t));
        for (i, l) in t.lines.iter().enumerate() {
            let res = m.step(&l.step);
            if let (Some(expect), Some(r), Op::Request(req)) = (&l.expect, res, &l.step.op) {
                let now = m.encode(req, &r, "model");
                assert_eq!(
                    normalize_response(expect),
                    normalize_response(&now),
                    "{}:{}",
                    f.display(),
                    i + 2
                );
            }
        }
    }
}

#[test]
fn every_triaged_trace_replays_cleanly_against_the_reference_server() {
    for f in files() {
        let t = trace::read(&f).unwrap();
        let s = spawn(ServeOptions {
            retry_timeout: t.header.retry_timeout(),
            ..ServeOptions::default()
        })
        .unwrap();
        let mut target = HttpTarget::new(&s.url(), Duration::from_secs(2)).unwrap();
        let mut checker = Checker::new(Profile {
            retry_timeout: t.header.retry_timeout(),
            ..Profile::default()
        });
        let ex = execute(
            &mut target,
            &mut checker,
            &t.steps(),
            Expect::Model,
            ExecOptions { check_state: true },
        );
        assert!(
            ex.fault.is_none() && ex.divergence.is_none(),
            "{}: {:?}",
            f.display(),
            ex.divergence
        );
    }
}
