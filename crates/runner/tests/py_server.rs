//! The Python SDK's in-process server (`scripts/py-server`, `resonate-sdk`
//! 0.8.1 pinned in its requirements) behind its shim: the debug surface the
//! harness needs works (start, reset, a request, a tick, a snapshot with all
//! ten components), and a run against it ends in divergences, never in a
//! target fault or a skipped component.
//!
//! Needs Python >= 3.12 and the venv (`scripts/py-server/install.sh`).
//! Without them the tests say SKIPPED and pass, unless
//! `CONFORM_REQUIRE_PYTHON=1` (as `.ci/run` sets it), which makes a missing
//! venv a failure.

use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::Duration;

use serde_json::{json, Value};

mod common;

use gen::{Op, Step};
use runner::profile::Profile;
use runner::run::run_on;
use runner::target::{envelope_status, HttpTarget, Target};

/// The ten snapshot components (README, "What your server must speak").
const COMPONENTS: [&str; 10] = [
    "promises",
    "promiseTimeouts",
    "callbacks",
    "listeners",
    "tasks",
    "taskTimeouts",
    "messages",
    "schedules",
    "scheduleTimeouts",
    "resumes",
];

fn shim_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/py-server")
}

fn python() -> PathBuf {
    shim_dir().join(".venv/bin/python")
}

/// `Some(reason)` when the shim cannot run here.
fn missing() -> Option<String> {
    let ok = Command::new(python())
        .args([
            "-c",
            "import sys; assert sys.version_info >= (3, 12); import resonate.connections.local",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    (!ok).then(|| {
        format!(
            "no venv with resonate-sdk on Python >= 3.12 at {} (run scripts/py-server/install.sh)",
            python().display()
        )
    })
}

/// Skip (or, with `CONFORM_REQUIRE_PYTHON`, fail) when the shim cannot run.
fn require_shim() -> bool {
    match missing() {
        None => true,
        Some(why) if std::env::var_os("CONFORM_REQUIRE_PYTHON").is_some() => {
            panic!("CONFORM_REQUIRE_PYTHON is set but {why}")
        }
        Some(why) => {
            eprintln!("SKIPPED: the Python SDK server tests: {why}");
            false
        }
    }
}

/// The shim on an ephemeral loopback port; killed on drop.
struct Shim {
    child: Child,
    url: String,
}

impl Shim {
    fn start() -> Shim {
        let (child, url) = common::spawn_listening(
            Command::new(python())
                .arg(shim_dir().join("server.py"))
                .args(["--port", "0"]),
        );
        Shim { child, url }
    }

    fn target(&self) -> HttpTarget {
        HttpTarget::new(&self.url, Duration::from_secs(5)).unwrap()
    }
}

impl Drop for Shim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `kind` with `data` at `now`; the envelope, after checking its status.
fn call(t: &mut HttpTarget, kind: &str, data: Value, now: u64, status: u16) -> Value {
    let env = t.call(kind, &data, Some(now)).unwrap();
    assert_eq!(envelope_status(&env), Some(status), "{kind}: {env}");
    env
}

fn snap(t: &mut HttpTarget) -> Value {
    let s = t.snap().unwrap();
    let data = s.json().clone();
    for c in COMPONENTS {
        assert!(data[c].is_array(), "component {c} in {data}");
    }
    data
}

fn callback(awaited: &str, awaiter: &str) -> Value {
    json!({"kind": "promise.register_callback",
           "head": {"corrId": "", "version": "2026-04-01"},
           "data": {"awaited": awaited, "awaiter": awaiter}})
}

#[test]
fn the_python_server_serves_the_debug_surface() {
    if !require_shim() {
        return;
    }
    let shim = Shim::start();
    let mut t = shim.target();
    t.start().unwrap();
    let tags = json!({"resonate:target": "http://worker.local/a"});

    // a task suspended on a.1, resumed when a.1 settles: every component
    // but the schedule ones gets an entry
    let p = json!({"id": "a", "timeoutAt": 900_000, "param": {}, "tags": tags});
    let created = call(&mut t, "promise.create", p, 1000, 201);
    assert_eq!(created["head"]["corrId"], "conform-3", "{created}");
    let acquire = json!({"id": "a", "version": 0, "pid": "p1", "ttl": 5000});
    call(&mut t, "task.acquire", acquire, 1000, 200);
    let p1 = json!({"id": "a.1", "timeoutAt": 50_000, "param": {}, "tags": tags});
    call(&mut t, "promise.create", p1, 1000, 201);
    let suspend = json!({"id": "a", "version": 0, "actions": [callback("a.1", "a")]});
    call(&mut t, "task.suspend", suspend, 1000, 200);
    let l = json!({"awaited": "a.1", "address": "http://listener.local/1"});
    call(&mut t, "promise.register_listener", l, 1000, 200);
    let s = snap(&mut t);
    assert_eq!(s["callbacks"], json!([{"awaiter": "a", "awaited": "a.1"}]));
    assert_eq!(
        s["listeners"],
        json!([{"id": "a.1", "address": "http://listener.local/1"}])
    );
    assert_eq!(s["promiseTimeouts"].as_array().unwrap().len(), 2, "{s}");

    let settle = json!({"id": "a.1", "state": "resolved", "value": {}});
    call(&mut t, "promise.settle", settle, 2000, 200);
    let s = snap(&mut t);
    assert_eq!(s["resumes"], json!([{"id": "a", "awaited": "a.1"}]));
    let task = &s["tasks"].as_array().unwrap()[0];
    assert_eq!(
        (&task["state"], &task["resumes"]),
        (&json!("pending"), &json!(1))
    );
    let kinds: Vec<&str> = s["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["message"]["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"execute") && kinds.contains(&"unblock"),
        "{s}"
    );

    // a schedule is stored (local.py never fires one: no schedule timeout)
    let sc = json!({"id": "s", "cron": "* * * * *", "promiseId": "{{.id}}.{{.timestamp}}",
                    "promiseTimeout": 1000, "promiseParam": {}, "promiseTags": tags});
    call(&mut t, "schedule.create", sc, 2000, 201);

    // the tick re-sends the retry of `a` (armed at 2000 + 30000)
    t.send(&Step {
        now: 40_000,
        op: Op::Tick,
    })
    .unwrap();
    let s = snap(&mut t);
    assert_eq!(s["schedules"].as_array().unwrap().len(), 1, "{s}");
    assert_eq!(s["scheduleTimeouts"], json!([]));
    let retry = json!([{"id": "a", "type": 0, "timeout": 70_000}]);
    assert_eq!(s["taskTimeouts"], retry, "{s}");

    t.reset().unwrap();
    let s = snap(&mut t);
    for c in COMPONENTS {
        assert_eq!(s[c], json!([]), "{c} after debug.reset: {s}");
    }
}

#[test]
fn a_run_against_the_python_server_ends_in_divergences_not_faults() {
    if !require_shim() {
        return;
    }
    let shim = Shim::start();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = common::config(&shim.url, dir.path(), 4, 30);
    cfg.fail_fast = false;
    cfg.profile = Profile::load("spec").unwrap();
    let mut target = shim.target();
    let mut out = Vec::new();
    let s = run_on(&cfg, &mut target, &mut out);
    let log = String::from_utf8_lossy(&out);
    assert_eq!(s.faults, 0, "{log}");
    assert!(
        s.skipped_components.is_empty(),
        "{:?}",
        s.skipped_components
    );
    assert_eq!(s.cases, 4, "{log}");
    assert!(
        s.divergences > 0,
        "the spec profile without a dialect: {log}"
    );
}

/// The Python server's shrunk traces (`traces/divergences/py/NN-DEVIATION`,
/// README rows) replay against it as documented: green with baseline `py`,
/// and diverging at their last step with `py` less the row's deviation.
#[test]
fn the_python_servers_triaged_traces_replay_as_documented() {
    if !require_shim() {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../traces/divergences/py");
    let files = runner::verify::golden_files(&dir).unwrap();
    assert!(files.len() >= 18, "{files:?}");
    let profile = Profile::load("py").unwrap();
    let (_, py) = runner::baseline::Baseline::load("py").unwrap();
    let shim = Shim::start();
    let mut target = shim.target().with_dialect(profile.dialect.clone());
    let opts = runner::exec::ExecOptions { check_state: true };
    for f in files {
        let name = f.file_stem().unwrap().to_str().unwrap();
        let departure = deviate::lookup(&name[3..]).unwrap_or_else(|| panic!("{name}"));
        assert!(py.contains(&departure), "{name} is not in baseline py");
        let t = runner::trace::read(&f).unwrap();
        let steps = t.steps();
        let run = |target: &mut dyn Target, devs: Vec<&'static deviate::Deviation>| {
            let mut checker = runner::check::Checker::with_deviations(profile.clone(), devs);
            runner::exec::execute(
                target,
                &mut checker,
                &steps,
                runner::exec::Expect::Model,
                opts,
            )
        };
        let with = run(&mut target, py.clone());
        assert!(
            with.fault.is_none() && with.divergence.is_none(),
            "{name} with py: {:?}",
            with.divergence
        );
        let less = py.iter().copied().filter(|d| *d != departure).collect();
        let without = run(&mut target, less);
        assert_eq!(
            without.divergence.as_ref().map(|(i, _)| *i),
            Some(steps.len() - 1),
            "{name} without {}: {:?}",
            departure.name,
            without.divergence
        );
    }
}
