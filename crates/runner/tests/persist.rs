//! The persistent mode of `conform serve --log FILE`, with the real binary
//! as a child process killed by SIGKILL (`Child::kill`) and restarted on
//! the same port with the same log:
//!
//! - the restarted server is in the state it acknowledged before the kill
//!   (a generated trace with ticks, twice over), and `debug.reset`
//!   truncates the log;
//! - under each planted durability bug, its witness ends, after the
//!   restart, in a state that is not the one acknowledged;
//! - a malformed log refuses the start (exit 2, naming file and line), and
//!   the CLI refuses the combinations that cannot work.

use std::path::Path;
use std::process::{Child, Command};
use std::time::Duration;

use deviate::Deviant;
use gen::{GenConfig, Step};
use model::state::ServerConfig;
use model::view::StateView;
use runner::compare::diff_state;
use runner::serve::durability;
use runner::target::{HttpTarget, Target};
use serde_json::Value;

mod common;

fn conform() -> Command {
    Command::new(env!("CARGO_BIN_EXE_conform"))
}

/// A persistent server on `port` (0: any) with `bugs`; its URL.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(log: &Path, port: u16, bugs: &[&str]) -> Server {
        let mut cmd = conform();
        cmd.args(["serve", "--port", &port.to_string(), "--log"])
            .arg(log);
        for b in bugs {
            cmd.args(["--durability-bug", b]);
        }
        let (child, url) = common::spawn_listening(&mut cmd);
        Server { child, url }
    }

    fn port(&self) -> u16 {
        self.url.rsplit(':').next().unwrap().parse().unwrap()
    }

    fn client(&self) -> HttpTarget {
        HttpTarget::new(&self.url, Duration::from_secs(5)).unwrap()
    }

    /// SIGKILL, and wait for the process to be gone.
    fn kill(mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaped");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The state the model reaches with `steps`, as snapshot JSON.
fn model_state(steps: &[Step]) -> Value {
    let mut m = Deviant::new(ServerConfig::default(), Vec::new());
    for s in steps {
        m.step(s);
    }
    serde_json::to_value(StateView::of(&m.state)).unwrap()
}

fn same(model: &Value, snap: &Value) -> bool {
    diff_state(model, snap, &[], &mut Default::default()).is_empty()
}

/// Start, wipe, send `steps`, SIGKILL right after the last answer, restart
/// on the same port with the same log: the restarted server's snapshot.
fn after_crash(log: &Path, bugs: &[&str], steps: &[Step]) -> Value {
    let s = Server::start(log, 0, bugs);
    let mut t = s.client();
    t.start().expect("debug mode");
    for step in steps {
        t.send(step).expect("step");
    }
    let port = s.port();
    s.kill();
    let s = Server::start(log, port, bugs);
    let snap = s.client().snap().expect("snap").normalized();
    s.kill();
    snap
}

fn generated(seed: u64, start: u64) -> Vec<Step> {
    let cfg = GenConfig {
        steps: 80,
        start,
        ..GenConfig::default()
    };
    gen::generate(seed, &cfg)
}

#[test]
fn a_killed_server_comes_back_in_the_state_it_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("steps.ndjson");
    let first = generated(3, 1_700_000_000_000);
    assert!(
        first.iter().any(|s| s.op == gen::Op::Tick),
        "ticks are logged too"
    );
    let snap = after_crash(&log, &[], &first);
    assert!(
        same(&model_state(&first), &snap),
        "after the first kill: {snap}"
    );
    // Once more, on top of the replayed log: appends go on after a restart.
    let s = Server::start(&log, 0, &[]);
    let mut t = s.client();
    let second = generated(4, first.last().unwrap().now + 1);
    for step in &second {
        t.send(step).expect("step");
    }
    let port = s.port();
    s.kill();
    let s = Server::start(&log, port, &[]);
    let snap = s.client().snap().unwrap().normalized();
    let all: Vec<Step> = first.iter().chain(&second).cloned().collect();
    assert!(
        same(&model_state(&all), &snap),
        "after the second kill: {snap}"
    );
    // The log is a headerless trace of the steps that wrote something (a
    // read has nothing to make durable), in order, and it rebuilds the
    // same state.
    let trace = runner::trace::read(&log).expect("the log reads as a trace");
    let logged = trace.steps();
    assert!(logged.len() < all.len(), "reads are not logged");
    let mut rest = all.iter();
    assert!(
        logged.iter().all(|l| rest.any(|s| s == l)),
        "the log keeps the order of application"
    );
    assert_eq!(model_state(&logged), model_state(&all));
}

#[test]
fn debug_reset_truncates_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("steps.ndjson");
    let s = Server::start(&log, 0, &[]);
    let mut t = s.client();
    t.start().unwrap();
    let before = generated(5, 1_700_000_000_000);
    for step in &before {
        t.send(step).unwrap();
    }
    t.reset().unwrap();
    let after = generated(6, 1_700_000_000_000);
    for step in &after {
        t.send(step).unwrap();
    }
    let port = s.port();
    s.kill();
    let s = Server::start(&log, port, &[]);
    let snap = s.client().snap().unwrap().normalized();
    assert!(same(&model_state(&after), &snap), "{snap}");
}

/// Attempts at each witness (`ack-before-log` holds the last step back
/// until the next one, so one kill suffices; the bound is a safeguard).
const ATTEMPTS: usize = 5;

#[test]
fn each_durability_bug_loses_what_its_witness_acknowledged() {
    for bug in durability::ALL {
        let witness = (bug.witness)();
        let acknowledged = model_state(&witness);
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("steps.ndjson");
        // Without the bug, the witness survives the kill.
        let clean = after_crash(&log, &[], &witness);
        assert!(same(&acknowledged, &clean), "{}: clean {clean}", bug.name);
        let lost = (1..=ATTEMPTS).find(|_| {
            let snap = after_crash(&log, &[bug.name], &witness);
            !same(&acknowledged, &snap)
        });
        assert!(
            lost.is_some(),
            "{}: the state survived {ATTEMPTS} kills",
            bug.name
        );
    }
}

#[test]
fn a_malformed_log_refuses_the_start_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("steps.ndjson");
    std::fs::write(
        &log,
        "{\"kind\":\"promise.get\",\"now\":1,\"req\":{\"id\":\"a\"}}\n{\"kind\":\"promise.get\",\"now\":2}\n",
    )
    .unwrap();
    let o = conform()
        .args(["serve", "--log"])
        .arg(&log)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("steps.ndjson:2: malformed log line"), "{err}");
    assert!(err.contains("req"), "{err}");
}

#[test]
fn the_cli_lists_durability_bugs_and_refuses_what_cannot_work() {
    let o = conform()
        .args(["serve", "--list-durability-bugs"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    for b in durability::ALL {
        assert!(out.contains(b.name), "{out}");
    }
    for args in [
        &["serve", "--durability-bug", "ack-before-log"][..],
        &["serve", "--log", "x.ndjson", "--race", "race-tick"][..],
        &[
            "serve",
            "--log",
            "x.ndjson",
            "--durability-bug",
            "fsync-lies",
        ][..],
    ] {
        let o = conform().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    }
}
