//! The TypeScript SDK's in-process server (`scripts/ts-server`, the SDK
//! pinned at 0.11.5) as a real target, in both timeout modes: every case
//! runs to its end with no target fault, under the server's built-in
//! profile and baseline, and nothing new diverges.
//!
//! Needs Node.js and `npm ci` in `scripts/ts-server`. Without them the
//! tests say so and pass, unless `CONFORM_REQUIRE_NODE=1` (as `.ci/run`
//! sets it), which makes a missing Node.js a failure: CI never skips them.

use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::Duration;

mod common;

use runner::baseline::Baseline;
use runner::profile::Profile;
use runner::repro::Reach;
use runner::run::{run_on, RunConfig};
use runner::target::HttpTarget;

fn shim_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ts-server")
}

/// `Some(reason)` when the shim cannot run here.
fn missing() -> Option<String> {
    let node = Command::new("node").arg("--version").output();
    if node.map_or(true, |o| !o.status.success()) {
        return Some("node is not installed".into());
    }
    let sdk = shim_dir().join("node_modules/@resonatehq/sdk/package.json");
    if !sdk.exists() {
        return Some(format!(
            "the shim is not installed (run `npm ci` in {})",
            shim_dir().display()
        ));
    }
    None
}

/// Skip (or, in CI, fail) when the shim cannot run.
fn require_shim() -> bool {
    match missing() {
        None => true,
        Some(why) if std::env::var_os("CONFORM_REQUIRE_NODE").is_some() => {
            panic!("CONFORM_REQUIRE_NODE is set but {why}")
        }
        Some(why) => {
            eprintln!("SKIPPED: the TypeScript server tests need Node.js and the shim: {why}");
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
    fn start(mode: &str) -> Shim {
        let (child, url) = common::spawn_listening(
            Command::new("node")
                .arg(shim_dir().join("server.mjs"))
                .args(["--port", "0", "--timeout-mode", mode]),
        );
        Shim { child, url }
    }
}

impl Drop for Shim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config(url: &str, name: &str, seed: u64, cases: u64, steps: usize) -> RunConfig {
    let profile = Profile::load(name).unwrap();
    let (baseline, deviations) = Baseline::load(name).unwrap();
    let dir = std::env::temp_dir().join(format!("conform-ts-{name}-{}", std::process::id()));
    RunConfig {
        target: url.to_string(),
        reach: Reach {
            target: Some(url.to_string()),
            profile: Some(name.into()),
            baseline: Some(name.into()),
            retry_timeout: profile.retry_timeout,
            timeout_ms: 5000,
            check_state: true,
            allow_remote: false,
            pipeline: runner::target::DEFAULT_PIPELINE,
        },
        seed,
        cases,
        only_case: None,
        partition: None,
        steps,
        profile,
        deviations,
        baseline: Some(baseline),
        fail_fast: false,
        out_dir: dir,
        shrink: true,
        shrink_time: Duration::from_secs(10),
        progress: false,
        probe_pct: 0,
    }
}

fn green_run(mode: &str) {
    if !require_shim() {
        return;
    }
    let shim = Shim::start(mode);
    let name = format!("ts-{mode}");
    let cfg = config(&shim.url, &name, 1, 12, 80);
    let mut target = HttpTarget::new(&shim.url, Duration::from_secs(5))
        .unwrap()
        .with_dialect(cfg.profile.dialect.clone());
    let mut out = Vec::new();
    let s = run_on(&cfg, &mut target, &mut out);
    let log = String::from_utf8_lossy(&out);
    assert_eq!(s.faults, 0, "{log}");
    assert_eq!(s.divergences + s.possibly_fixed, 0, "{log}");
    assert_eq!(s.steps, 12 * 80, "every case runs to its end: {log}");
    assert!(s.coverage_hit * 10 >= s.coverage_total * 7, "{s:?}");
}

#[test]
fn the_ts_server_in_eager_mode_is_green_against_its_baseline() {
    green_run("eager");
}

#[test]
fn the_ts_server_in_none_mode_is_green_against_its_baseline() {
    green_run("none");
}

/// The TypeScript server is single-threaded, so a concurrent run against it
/// is a control: any history it gives has an order, and a false alarm here
/// is a bug of the checker.
fn green_stress(mode: &str) {
    if !require_shim() {
        return;
    }
    let shim = Shim::start(mode);
    let name = format!("ts-{mode}");
    let profile = Profile::load(&name).unwrap();
    let (_, deviations) = Baseline::load(&name).unwrap();
    let dir = std::env::temp_dir().join(format!("conform-ts-stress-{name}-{}", std::process::id()));
    for (seed, clients) in [(1, 2), (2, 4), (3, 8)] {
        let mut cfg =
            runner::stress::StressConfig::new(&shim.url, profile.clone(), deviations.clone());
        cfg.seed = seed;
        cfg.clients = clients;
        cfg.epochs = 40;
        cfg.out_dir = dir.clone();
        cfg.shrink = false;
        let mut target = HttpTarget::new(&shim.url, Duration::from_secs(5))
            .unwrap()
            .with_dialect(profile.dialect.clone());
        let mut out = Vec::new();
        let o = runner::stress::run(&cfg, &mut target, None, &mut out);
        assert!(
            matches!(o.verdict, runner::stress::StressVerdict::Linearizable),
            "{name} seed {seed} clients {clients}: {:?}\n{}",
            o.verdict,
            String::from_utf8_lossy(&out)
        );
        assert_eq!(o.stats.epochs, 40);
    }
}

#[test]
fn the_ts_server_in_eager_mode_is_linearizable_under_concurrent_clients() {
    green_stress("eager");
}

#[test]
fn the_ts_server_in_none_mode_is_linearizable_under_concurrent_clients() {
    green_stress("none");
}
