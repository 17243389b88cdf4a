//! resonate-pg on a throwaway PostgreSQL cluster behind its shim
//! (`scripts/pg-server`): the debug surface the harness needs works (start,
//! reset, a request, a tick, a snapshot with all ten components built from
//! the schema's tables), a run against it ends in divergences, never in a
//! target fault or a skipped component, a run under its profile and
//! baseline (`pg`) is green, what it acknowledged survives SIGKILLs of the
//! shim and its persistent cluster (`--data-dir`), and the cluster is gone
//! when the shim stops.
//!
//! Needs the user's `resonate.sql` (from their resonate-pg checkout, never
//! committed or fetched here) in `RESONATE_PG_SQL`, the PostgreSQL server
//! binaries and the venv (`scripts/pg-server/install.sh`). Without them the
//! tests say SKIPPED and pass.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-server")
}

fn python() -> PathBuf {
    shim_dir().join(".venv/bin/python")
}

/// The user's resonate.sql, or why the tests cannot run.
fn prerequisites() -> Result<PathBuf, String> {
    let sql = std::env::var_os("RESONATE_PG_SQL")
        .map(PathBuf::from)
        .ok_or("RESONATE_PG_SQL is not set (the path of resonate-pg's resonate.sql)")?;
    if !sql.is_file() {
        return Err(format!("RESONATE_PG_SQL={} is not a file", sql.display()));
    }
    let venv = Command::new(python())
        .args(["-c", "import psycopg"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !venv {
        return Err(format!(
            "no venv with psycopg at {} (run scripts/pg-server/install.sh)",
            python().display()
        ));
    }
    let initdb = Command::new("sh")
        .args([
            "-c",
            "command -v initdb || ls /usr/lib/postgresql/*/bin/initdb",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !initdb {
        return Err("no PostgreSQL server binaries (initdb): apt-get install postgresql-15".into());
    }
    Ok(sql)
}

fn require_shim() -> Option<PathBuf> {
    match prerequisites() {
        Ok(sql) => Some(sql),
        Err(why) => {
            eprintln!("SKIPPED: the resonate-pg tests: {why}");
            None
        }
    }
}

/// The shim on an ephemeral loopback port, with the cluster directory it
/// names on stderr; stopped with SIGTERM on drop (SIGKILL only if that
/// fails), so it removes its cluster.
struct Shim {
    child: Child,
    url: String,
    cluster: PathBuf,
    stopped: bool,
}

impl Shim {
    fn start(sql: &PathBuf) -> Shim {
        let log = tempfile::NamedTempFile::new().unwrap();
        let (child, url) = common::spawn_listening(
            Command::new(python())
                .arg(shim_dir().join("server.py"))
                .arg("--sql")
                .arg(sql)
                .args(["--port", "0", "--log"])
                .stderr(log.reopen().unwrap()),
        );
        // From here on the shim is stopped (and its cluster removed) by
        // `Drop`, whatever fails.
        let mut shim = Shim {
            child,
            url,
            cluster: PathBuf::new(),
            stopped: false,
        };
        let err = std::fs::read_to_string(log.path()).unwrap();
        shim.cluster = err
            .lines()
            .find_map(|l| l.split_once(", cluster in ").map(|(_, d)| PathBuf::from(d)))
            .unwrap_or_else(|| panic!("no cluster directory on stderr: {err}"));
        shim
    }

    fn target(&self) -> HttpTarget {
        HttpTarget::new(&self.url, Duration::from_secs(10)).unwrap()
    }

    /// SIGTERM, then wait up to 20 s; whether it exited by itself. Once
    /// it has been reaped its pid is never signalled again.
    fn stop(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                self.stopped = true;
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}

impl Drop for Shim {
    fn drop(&mut self) {
        if !self.stop() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

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
fn resonate_pg_serves_the_debug_surface_and_removes_its_cluster() {
    let Some(sql) = require_shim() else {
        return;
    };
    let mut shim = Shim::start(&sql);
    assert!(shim.cluster.is_dir(), "{}", shim.cluster.display());
    let mut t = shim.target();
    t.start().unwrap();
    let tags = json!({"resonate:target": "http://worker.local/a"});

    let p = json!({"id": "a", "timeoutAt": 900_000, "param": {}, "tags": tags});
    let created = call(&mut t, "promise.create", p, 1000, 200);
    assert_eq!(created["head"]["corrId"], "conform-3", "{created}");
    let acquire = json!({"id": "a", "version": 0, "pid": "p1", "ttl": 5000});
    call(&mut t, "task.acquire", acquire, 1000, 200);
    let p1 = json!({"id": "a.1", "timeoutAt": 50_000, "param": {}, "tags": tags});
    call(&mut t, "promise.create", p1, 1000, 200);
    let suspend = json!({"id": "a", "version": 1, "actions": [callback("a.1", "a")]});
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
    let unblocked = s["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["message"]["kind"] == "unblock");
    assert!(unblocked, "{s}");

    let sc = json!({"id": "s", "cron": "* * * * *", "promiseId": "{{.id}}.{{.timestamp}}",
                    "promiseTimeout": 1000, "promiseParam": {}, "promiseTags": tags});
    call(&mut t, "schedule.create", sc, 2000, 200);
    let s = snap(&mut t);
    assert_eq!(
        s["scheduleTimeouts"],
        json!([{"id": "s", "timeout": 60_000}])
    );

    // the tick: the retry of `a` (armed at 2000 + 5000) and the schedule's
    // first occurrence (60000) fire
    t.send(&Step {
        now: 60_000,
        op: Op::Tick,
    })
    .unwrap();
    let s = snap(&mut t);
    let retry = s["taskTimeouts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == "a")
        .cloned();
    assert_eq!(
        retry,
        Some(json!({"id": "a", "type": 0, "timeout": 65_000})),
        "{s}"
    );
    assert_eq!(
        s["scheduleTimeouts"],
        json!([{"id": "s", "timeout": 120_000}])
    );
    let fired = s["promises"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["id"] == "s.60000");
    assert!(fired, "{s}");

    t.reset().unwrap();
    let s = snap(&mut t);
    for c in COMPONENTS {
        assert_eq!(s[c], json!([]), "{c} after debug.reset: {s}");
    }

    let cluster = shim.cluster.clone();
    assert!(shim.stop(), "the shim stops on SIGTERM");
    assert!(!cluster.exists(), "{} left behind", cluster.display());
}

#[test]
fn a_run_against_resonate_pg_ends_in_divergences_not_faults() {
    let Some(sql) = require_shim() else {
        return;
    };
    let shim = Shim::start(&sql);
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = common::config(&shim.url, dir.path(), 3, 30);
    cfg.fail_fast = false;
    cfg.reach.timeout_ms = 10_000;
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
    assert_eq!(s.cases, 3, "{log}");
}

#[test]
fn a_run_under_the_pg_profile_and_baseline_is_green() {
    let Some(sql) = require_shim() else {
        return;
    };
    let shim = Shim::start(&sql);
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = common::config(&shim.url, dir.path(), 4, 50);
    cfg.fail_fast = false;
    cfg.reach.timeout_ms = 10_000;
    cfg.profile = Profile::load("pg").unwrap();
    let (baseline, deviations) = runner::baseline::Baseline::load("pg").unwrap();
    cfg.deviations = deviations;
    cfg.baseline = Some(baseline);
    let mut target = shim.target().with_dialect(cfg.profile.dialect.clone());
    let mut out = Vec::new();
    let s = run_on(&cfg, &mut target, &mut out);
    let log = String::from_utf8_lossy(&out);
    assert_eq!((s.divergences, s.faults, s.known), (0, 0, 0), "{log}");
    assert_eq!(s.cases, 4, "{log}");
}

/// A free loopback port for a shim the harness owns.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn what_resonate_pg_acknowledged_survives_a_crash_of_its_persistent_cluster() {
    use runner::stress::process::ServerProcess;
    use runner::stress::{self, StressConfig, StressVerdict};
    let Some(sql) = require_shim() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let cmd = format!(
        "{} {} --sql {} --port {port} --data-dir {}",
        python().display(),
        shim_dir().join("server.py").display(),
        sql.display(),
        dir.path().join("data").display()
    );
    let mut process = ServerProcess::start(&cmd, &url).unwrap();
    let profile = Profile::load("pg").unwrap();
    let (_, deviations) = runner::baseline::Baseline::load("pg").unwrap();
    let mut target = HttpTarget::new(&url, Duration::from_secs(10))
        .unwrap()
        .with_dialect(profile.dialect.clone());
    let mut cfg = StressConfig::new(&url, profile, deviations);
    cfg.out_dir = dir.path().join("failures");
    // One client: what is checked is durability across SIGKILLs of the
    // shim and its postmaster, not the server's races (those are triaged
    // in traces/divergences/README.md).
    cfg.clients = 1;
    cfg.epochs = 24;
    cfg.crash_pct = 30;
    cfg.shrink = false;
    cfg.server_cmd = Some(cmd);
    let mut out = Vec::new();
    let o = stress::run(&cfg, &mut target, Some(&mut process), &mut out);
    let log = String::from_utf8_lossy(&out);
    assert!(
        matches!(o.verdict, StressVerdict::Linearizable),
        "{:?}\n{log}",
        o.verdict
    );
    assert!(o.stats.crashes >= 2, "crashes: {}", o.stats.crashes);
}
