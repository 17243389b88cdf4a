//! What the harness costs a target: steps per second of the runner against
//! `conform serve`, responses only and with the state diff, next to a bare
//! keep-alive client sending the very same requests (and, for the state
//! mode, the same `debug.snap` calls). Prints the figures and the ratios.
//!
//! `cargo bench -p resonate-runner --bench overhead [-- --target URL
//! --profile NAME --baseline NAME]`: without `--target`, against `conform
//! serve` in this process; with it, against that server (loopback only; it
//! must pass the traces under the profile and baseline given, e.g. the
//! TypeScript server with `--profile ts-eager --baseline ts-eager`).

use std::time::{Duration, Instant};

use serde_json::json;

use gen::{GenConfig, Op, Step};
use runner::check::Checker;
use runner::exec::{execute, ExecOptions, Expect};
use runner::profile::Profile;
use runner::serve::{spawn, ServeOptions};
use runner::target::HttpTarget;

const CASES: u64 = 30;
const STEPS: usize = 100;
const ROUNDS: usize = 3;

/// The profile and baseline the harness runs under.
struct Setup {
    profile: Profile,
    deviations: Vec<&'static deviate::Deviation>,
}

fn traces(profile: &Profile) -> Vec<Vec<Step>> {
    let cfg = GenConfig {
        steps: STEPS,
        retry_timeout: profile.retry_timeout,
        kinds: profile.kinds(),
        ..GenConfig::default()
    };
    (0..CASES)
        .map(|i| gen::generate(gen::case_seed(42, i), &cfg))
        .collect()
}

/// The same traffic with no model, no comparison, no trace keeping.
fn bare(url: &str, traces: &[Vec<Step>], snap: bool) -> Duration {
    let client = reqwest::blocking::Client::builder()
        .tcp_nodelay(true)
        .build()
        .unwrap();
    let post = |kind: &str, data: serde_json::Value, now: Option<u64>| {
        let mut head = json!({"corrId": "b", "version": "2026-04-01"});
        if let Some(t) = now {
            head["resonate:debug_time"] = json!(t);
        }
        let body = json!({"kind": kind, "head": head, "data": data});
        let r = client.post(format!("{url}/")).json(&body).send().unwrap();
        let _: serde_json::Value = r.json().unwrap();
    };
    let started = Instant::now();
    for t in traces {
        post("debug.start", json!({}), None);
        post("debug.reset", json!({}), None);
        for s in t {
            match &s.op {
                Op::Request(r) => post(r.kind(), model::wire::encode_request(r), Some(s.now)),
                Op::Tick => post("debug.tick", json!({"time": s.now}), Some(s.now)),
            }
            if snap {
                post("debug.snap", json!({}), None);
            }
        }
    }
    started.elapsed()
}

fn harness(url: &str, traces: &[Vec<Step>], check_state: bool, setup: &Setup) -> Duration {
    let mut target = HttpTarget::new(url, Duration::from_secs(5))
        .unwrap()
        .with_dialect(setup.profile.dialect.clone());
    let mut checker = Checker::with_deviations(setup.profile.clone(), setup.deviations.clone());
    let started = Instant::now();
    for t in traces {
        let ex = execute(
            &mut target,
            &mut checker,
            t,
            Expect::Model,
            ExecOptions { check_state },
        );
        assert!(ex.fault.is_none(), "{:?}", ex.fault);
        assert!(
            ex.divergence.is_none(),
            "the bench needs a conforming target"
        );
    }
    started.elapsed()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let given = args
        .iter()
        .position(|a| a == "--target")
        .and_then(|i| args.get(i + 1).cloned());
    let server = given
        .is_none()
        .then(|| spawn(ServeOptions::default()).unwrap());
    let url = given.unwrap_or_else(|| server.as_ref().map(|s| s.url()).unwrap_or_default());
    assert!(
        runner::target::is_loopback_url(&url),
        "loopback targets only"
    );
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let profile = arg("--profile").map_or_else(Profile::default, |p| Profile::load(&p).unwrap());
    let deviations = arg("--baseline").map_or_else(Vec::new, |b| {
        runner::baseline::Baseline::load(&b).unwrap().1
    });
    let setup = Setup {
        profile,
        deviations,
    };
    let traces = traces(&setup.profile);
    let steps = (CASES as usize * STEPS) as f64;
    let rate = |d: Duration| steps / d.as_secs_f64();
    let best = |f: &dyn Fn() -> Duration| (0..ROUNDS).map(|_| f()).min().unwrap();
    let _ = harness(&url, &traces, true, &setup); // warm up
    let bare_resp = best(&|| bare(&url, &traces, false));
    let run_resp = best(&|| harness(&url, &traces, false, &setup));
    let bare_state = best(&|| bare(&url, &traces, true));
    let run_state = best(&|| harness(&url, &traces, true, &setup));
    println!("{CASES} cases x {STEPS} steps against {url}, best of {ROUNDS}");
    println!(
        "responses only:  bare client {:>8.0} steps/s, conform {:>8.0} steps/s, ratio {:.2}",
        rate(bare_resp),
        rate(run_resp),
        bare_resp.as_secs_f64() / run_resp.as_secs_f64()
    );
    println!(
        "with state diff: bare client {:>8.0} steps/s, conform {:>8.0} steps/s, ratio {:.2}",
        rate(bare_state),
        rate(run_state),
        bare_state.as_secs_f64() / run_state.as_secs_f64()
    );
}
