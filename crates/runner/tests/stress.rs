//! The concurrent run end to end: the reference server under 2, 4 and 8
//! clients is linearizable on many seeds; a server that loses its state at
//! a crash is not, and the history it leaves is judged the same again
//! offline; the history file and `check-history` refuse what is malformed.

use std::process::Command;
use std::time::Duration;

use runner::lin::history;
use runner::profile::Profile;
use runner::serve::{spawn, ServeOptions};
use runner::stress::process::ServerProcess;
use runner::stress::{self, StressConfig, StressVerdict};
use runner::target::HttpTarget;

fn config(url: &str, dir: &std::path::Path) -> StressConfig {
    let mut cfg = StressConfig::new(url, Profile::default(), Vec::new());
    cfg.out_dir = dir.to_path_buf();
    cfg.shrink_time = Duration::from_secs(10);
    cfg
}

#[test]
fn the_reference_server_is_linearizable_under_2_4_and_8_clients() {
    let dir = tempfile::tempdir().unwrap();
    let server = spawn(ServeOptions::default()).unwrap();
    let mut ops = 0;
    for clients in [2, 4, 8] {
        for seed in 1..=6 {
            let mut target = HttpTarget::new(&server.url(), Duration::from_secs(5)).unwrap();
            let mut cfg = config(&server.url(), dir.path());
            cfg.clients = clients;
            cfg.seed = seed;
            cfg.epochs = 40;
            let mut out = Vec::new();
            let o = stress::run(&cfg, &mut target, None, &mut out);
            assert!(
                matches!(o.verdict, StressVerdict::Linearizable),
                "clients {clients} seed {seed}: {:?}\n{}",
                o.verdict,
                String::from_utf8_lossy(&out)
            );
            assert_eq!(o.stats.epochs, 40);
            assert_eq!(o.stats.pinned_epochs, 40, "every barrier pins the state");
            assert_eq!(
                o.stats.incremental_barriers, 39,
                "every barrier after the first compares only what can differ"
            );
            ops += o.ops;
        }
    }
    assert!(
        ops > 18 * 40 * 8,
        "rivals come on top of the generated operations: {ops}"
    );
}

/// A free loopback port for a server the test starts itself.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn a_server_that_forgets_at_a_crash_is_not_linearizable_and_says_so_offline() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let cmd = format!("{} serve --port {port}", env!("CARGO_BIN_EXE_conform"));
    let mut process = ServerProcess::start(&cmd, &url).unwrap();
    let mut target = HttpTarget::new(&url, Duration::from_secs(5)).unwrap();
    let mut cfg = config(&url, dir.path());
    cfg.crash_pct = 30;
    cfg.epochs = 40;
    cfg.server_cmd = Some(cmd);
    let mut out = Vec::new();
    let o = stress::run(&cfg, &mut target, Some(&mut process), &mut out);
    let log = String::from_utf8_lossy(&out);
    let StressVerdict::NotLinearizable { file, .. } = o.verdict else {
        panic!(
            "a server without a log loses what it acknowledged: {:?}\n{log}",
            o.verdict
        );
    };
    assert!(o.stats.crashes >= 1);
    assert!(log.contains("no order gives the state"), "{log}");
    assert!(
        file.with_extension("html").exists(),
        "the timeline is drawn beside it"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let h = history::parse(&text).unwrap();
    assert!(h
        .faults
        .iter()
        .any(|f| matches!(f, history::Fault::Crash { .. })));
    let again = Command::new(env!("CARGO_BIN_EXE_conform"))
        .arg("check-history")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(
        again.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
    assert!(String::from_utf8_lossy(&again.stdout).contains("not linearizable"));
}

#[test]
fn check_history_refuses_a_malformed_file_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.history.ndjson");
    std::fs::write(
        &f,
        "{\"kind\":\"header\",\"format\":\"conform-history/7\"}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .arg("check-history")
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1"));
}

#[test]
fn crash_flags_need_a_process_the_harness_owns() {
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["stress", "--crash-pct", "10", "--epochs", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--server-cmd"));
}
