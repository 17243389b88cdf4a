//! The Rust `resonate` server on a SQLite file under many clients and
//! crash-restart: linearizable against the model under its built-in
//! profile and baseline, with 8 clients at once, and with 4 while the
//! harness kills it (SIGKILL) and restarts it on the same file in a fifth
//! of the epochs, so everything it acknowledged must survive.
//!
//! Needs the server's binary in `RESONATE_BIN` (your own `cargo build
//! --release` of resonatehq/resonate: `target/release/resonate`); without
//! it the test says SKIPPED and passes. The server runs as `resonate dev
//! --debug` with `--storage-sqlite-path` on a file (the `dev` default is
//! `:memory:`, which a restart loses) and both background loops' poll
//! intervals set to a day: in debug mode the loops stand still only once
//! `debug.start` is heard, and a restarted server would otherwise drain
//! its outbox (the message loop claims and deletes every message, 100 ms
//! after start) before the harness can send it.

use std::path::PathBuf;
use std::time::Duration;

use runner::baseline::Baseline;
use runner::profile::Profile;
use runner::stress::process::ServerProcess;
use runner::stress::{self, StressConfig, StressVerdict};
use runner::target::HttpTarget;

fn binary() -> Option<PathBuf> {
    let Some(bin) = std::env::var_os("RESONATE_BIN").map(PathBuf::from) else {
        eprintln!("SKIPPED: the Rust server tests: RESONATE_BIN is not set (the path of a `resonate` binary)");
        return None;
    };
    assert!(
        bin.is_file(),
        "RESONATE_BIN={} is not a file",
        bin.display()
    );
    Some(bin)
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// The command the harness owns: `resonate dev --debug` on `db`.
fn command(bin: &std::path::Path, port: u16, db: &std::path::Path) -> String {
    format!(
        "{} dev --debug --server-port {port} --server-bind 127.0.0.1 --storage-sqlite-path {} \
         --timeouts-poll-interval 86400000 --messages-poll-interval 86400000",
        bin.display(),
        db.display()
    )
}

fn run(clients: usize, crash_pct: u64, seed: u64) -> (StressVerdict, usize, String) {
    let bin = binary().expect("checked by the caller");
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let cmd = command(&bin, port, &dir.path().join("resonate.db"));
    let mut process = ServerProcess::start(&cmd, &url).unwrap();
    let (_, deviations) = Baseline::load("resonate").unwrap();
    // A loaded machine stalls SQLite's checkpoints for seconds.
    let mut target = HttpTarget::new(&url, Duration::from_secs(30)).unwrap();
    let mut cfg = StressConfig::new(&url, Profile::load("resonate").unwrap(), deviations);
    cfg.out_dir = dir.path().join("failures");
    cfg.seed = seed;
    cfg.clients = clients;
    cfg.epochs = 25;
    cfg.crash_pct = crash_pct;
    cfg.shrink = false;
    cfg.server_cmd = Some(cmd);
    let mut out = Vec::new();
    let o = stress::run(&cfg, &mut target, Some(&mut process), &mut out);
    let crashes = o.stats.crashes;
    (
        o.verdict,
        crashes,
        String::from_utf8_lossy(&out).into_owned(),
    )
}

#[test]
fn the_rust_server_on_sqlite_is_linearizable_under_8_clients() {
    if binary().is_none() {
        return;
    }
    let (verdict, _, log) = run(8, 0, 1);
    assert!(
        matches!(verdict, StressVerdict::Linearizable),
        "{verdict:?}\n{log}"
    );
}

#[test]
fn the_rust_server_on_sqlite_keeps_what_it_acknowledged_across_crashes() {
    if binary().is_none() {
        return;
    }
    let (verdict, crashes, log) = run(4, 20, 2);
    assert!(
        matches!(verdict, StressVerdict::Linearizable),
        "{verdict:?}\n{log}"
    );
    assert!(crashes >= 2, "crashes: {crashes}");
}
