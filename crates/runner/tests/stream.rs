//! `run` pulls each step of a case from the generator when it sends it:
//! the first request goes out before the case's last step exists, so a
//! long case starts at once (and its progress bar moves), and nothing past
//! the step where a case stops is ever generated.

mod common;

use gen::Step;
use model::state::ServerConfig;
use runner::check::Checker;
use runner::profile::Profile;
use runner::report::{CaseStatus, Verdict};
use runner::run::run_on;
use runner::snapshot::Snap;
use runner::target::{LocalServer, LocalTarget, Target, TargetError};
use serde_json::Value;

/// The reference server, gone after `limit` steps: a target fault then.
struct Dying {
    inner: LocalTarget,
    sent: usize,
    limit: usize,
}

impl Target for Dying {
    fn describe(&self) -> String {
        "dying".to_string()
    }
    fn start(&mut self) -> Result<(), TargetError> {
        self.inner.start()
    }
    fn reset(&mut self) -> Result<(), TargetError> {
        self.inner.reset()
    }
    fn send(&mut self, step: &Step) -> Result<Option<Value>, TargetError> {
        if self.sent == self.limit {
            return Err(TargetError::Unreachable("gone".to_string()));
        }
        self.sent += 1;
        self.inner.send(step)
    }
    fn snap(&mut self) -> Result<Snap, TargetError> {
        self.inner.snap()
    }
}

/// A case of `usize::MAX` steps runs (it was built whole before its first
/// request: a capacity overflow), and the steps it sent are the start of
/// the trace [`Checker::generate`] gives for its seed.
#[test]
fn a_case_is_generated_as_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::config("in-process", dir.path(), 1, usize::MAX);
    let server = LocalServer::new(ServerConfig::default(), Vec::new(), false);
    let mut target = Dying {
        inner: LocalTarget::new(server),
        sent: 0,
        limit: 40,
    };
    let summary = run_on(&cfg, &mut target, &mut Vec::new());
    assert_eq!(summary.verdict(), Verdict::Fault);
    let report = &summary.case_reports[0];
    assert_eq!(report.steps, 41, "40 answered, the 41st faulted");
    let CaseStatus::Fault { trace, .. } = &report.status else {
        panic!("{:?}", report.status)
    };
    let sent: Vec<Step> = runner::trace::read(trace)
        .unwrap()
        .lines
        .into_iter()
        .map(|l| l.step)
        .collect();
    let whole = Checker::new(Profile::default()).generate(report.seed, 41, 0);
    assert_eq!(sent, whole);
}
