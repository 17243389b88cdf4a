//! Validation probing: refused probes are tallied and not applied; accepted
//! ones are held to the spec; a refused request that still changes the
//! target's state is a divergence.

mod common;

use gen::Step;
use runner::run::{run_on, RunConfig};
use runner::snapshot::Snap;
use runner::target::{LocalServer, LocalTarget, Target, TargetError};
use serde_json::Value;

fn probing(dir: &std::path::Path) -> RunConfig {
    RunConfig {
        probe_pct: 15,
        fail_fast: true,
        ..common::config("http://127.0.0.1:1", dir, 10, 80)
    }
}

#[test]
fn a_server_with_the_rust_rules_refuses_every_probe_and_stays_green() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = LocalTarget::new(LocalServer::new(Default::default(), vec![], false));
    let s = run_on(&probing(dir.path()), &mut t, &mut Vec::new());
    assert_eq!(s.divergences, 0);
    assert!(s.validation.len() >= 8, "{:?}", s.validation);
    assert!(s.validation.iter().all(|p| p.refused == p.sent));
}

#[test]
fn a_server_without_them_is_held_to_the_spec_on_every_probe() {
    let dir = tempfile::tempdir().unwrap();
    let server = LocalServer::new(Default::default(), vec![], false).without_validation();
    let mut t = LocalTarget::new(server);
    let s = run_on(&probing(dir.path()), &mut t, &mut Vec::new());
    assert_eq!(s.divergences, 0, "the spec's model is that server");
    assert!(!s.validation.is_empty());
    assert!(s.validation.iter().all(|p| p.refused == 0));
}

/// Answers 400 to every probe, but applies it first: a refusal that leaves
/// a trace.
struct LeakyRefusals(LocalTarget);

impl Target for LeakyRefusals {
    fn describe(&self) -> String {
        "leaky".into()
    }
    fn start(&mut self) -> Result<(), TargetError> {
        self.0.start()
    }
    fn reset(&mut self) -> Result<(), TargetError> {
        self.0.reset()
    }
    fn send(&mut self, step: &Step) -> Result<Option<Value>, TargetError> {
        let probe = gen::is_probe(step, &model::machine::Machine::default());
        let mut res = self.0.send(step)?;
        if let (true, Some(env)) = (probe, res.as_mut()) {
            env["head"]["status"] = 400.into();
            env["data"] = "refused".into();
        }
        Ok(res)
    }
    fn snap(&mut self) -> Result<Snap, TargetError> {
        self.0.snap()
    }
}

#[test]
fn a_refusal_that_changes_the_state_is_a_divergence() {
    let dir = tempfile::tempdir().unwrap();
    let server = LocalServer::new(Default::default(), vec![], false).without_validation();
    let mut t = LeakyRefusals(LocalTarget::new(server));
    let mut out = Vec::new();
    let s = run_on(&probing(dir.path()), &mut t, &mut out);
    let log = String::from_utf8_lossy(&out);
    assert!(s.divergences > 0, "{log}");
    assert!(log.contains("refused-but-changed-state"), "{log}");
}
