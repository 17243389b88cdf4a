//! `conform replay-history`: a saved history is sent again to a target and
//! checked again.
//!
//! - end to end: `conform stress` against a server with a planted race
//!   finds it, shrinks it, and prints a `replay-history` command; that
//!   command, pasted, shows the race again (exit 1, the re-run saved);
//! - the same history against the plain reference server is green (exit
//!   0): the replay judges the target, not the file;
//! - a malformed history is bad input (exit 2) naming file and line, and a
//!   history with a crash cannot be replayed without a process to crash.

use std::process::{Child, Command};

use runner::lin::history::{self, Barrier, Epoch, History, HistoryHeader, Operation, Outcome};
use serde_json::json;

mod common;

fn conform() -> Command {
    Command::new(env!("CARGO_BIN_EXE_conform"))
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let o = cmd.output().expect("conform runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `conform serve` with `args`, as a child; its URL.
struct Served(Child, String);

impl Served {
    fn start(args: &[&str]) -> Served {
        let mut cmd = conform();
        cmd.arg("serve").args(args);
        let (child, url) = common::spawn_listening(&mut cmd);
        Served(child, url)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The line of `out` that starts with `prefix`, without it.
fn line_after<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in:\n{out}"))
}

/// Run a printed command line (the harness quotes nothing but
/// `--server-cmd`, which these runs do not use).
/// Runs a printed command line as a user pasting it would, from `cwd`: a
/// replay command names no `--out-dir`, so what it saves goes under the
/// directory it runs in (a temporary one here, never the source tree).
fn paste(line: &str, cwd: &std::path::Path) -> (i32, String, String) {
    let mut words = line.split_whitespace();
    let program = words.next().expect("a program");
    assert!(program.ends_with("conform"), "{line}");
    run(conform().current_dir(cwd).args(words))
}

#[test]
fn a_printed_replay_command_shows_the_race_again_and_a_plain_server_is_green() {
    let dir = tempfile::tempdir().unwrap();
    let racy = Served::start(&["--race", "race-task.acquire"]);
    let out_dir = dir.path().display().to_string();
    let (code, out, err) = run(conform().args([
        "stress",
        "--target",
        &racy.1,
        "--seed",
        "1",
        "--shrink-time",
        "10",
        "--out-dir",
        &out_dir,
    ]));
    assert_eq!(code, 1, "the race is found:\n{out}\n{err}");
    let replay = line_after(&out, "replay it against the target: ");
    assert!(
        replay.contains("replay-history") && replay.contains(&racy.1),
        "{replay}"
    );
    let (code, again, err) = paste(replay, dir.path());
    assert_eq!(code, 1, "the replay shows the race:\n{again}\n{err}");
    let saved = line_after(&again, "history saved: ");
    let saved = saved.split(" (timeline").next().unwrap();
    let h = history::parse(&std::fs::read_to_string(dir.path().join(saved)).unwrap()).unwrap();
    assert!(h.len() >= 2, "the re-run is saved: {saved}");

    // The same file against the plain reference server: green.
    let plain = Served::start(&[]);
    let file = replay.split_whitespace().nth(2).unwrap();
    let (code, out, err) = run(conform().args([
        "replay-history",
        file,
        "--target",
        &plain.1,
        "--attempts",
        "3",
        "--out-dir",
        &out_dir,
    ]));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("green: linearizable in each of 3 re-runs"),
        "{out}"
    );
}

fn header(clients: usize) -> HistoryHeader {
    HistoryHeader {
        kind: "header".into(),
        format: history::FORMAT.into(),
        harness: "conform test".into(),
        spec: model::SPEC_COMMIT.into(),
        seed: Some(1),
        clients,
        target: "http://127.0.0.1:1".into(),
        options: Default::default(),
    }
}

#[test]
fn a_malformed_history_names_file_and_line_and_a_crash_needs_a_process() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.history.ndjson");
    let head = serde_json::to_string(&header(1)).unwrap();
    std::fs::write(
        &f,
        format!("{head}\n{{\"type\":\"barrier\",\"epoch\":0,\"now\":5,\"at\":1}}\n{{\"type\":\"op\"}}\n"),
    )
    .unwrap();
    for command in ["check-history", "replay-history"] {
        let (code, out, err) = run(conform().arg(command).arg(&f));
        assert_eq!(code, 2, "{command}: {out}\n{err}");
        let want = format!("{}:3:", f.display());
        assert!(err.contains(&want), "{command} names {want}: {err}");
    }

    // A history whose target crashed: replaying it needs --server-cmd.
    let mut h = History::new(header(1));
    let step = deviate::families::witness::at(
        deviate::families::witness::T0,
        deviate::families::witness::create(
            "a",
            deviate::families::witness::LATER,
            deviate::families::witness::none(),
        ),
    );
    h.epochs.push(Epoch {
        index: 0,
        now: step.now,
        ops: vec![Operation {
            id: 0,
            client: 0,
            epoch: 0,
            step: step.clone(),
            invoke: 1,
            complete: None,
            outcome: Outcome::Info("in flight at a crash".into()),
        }],
        crashed: true,
        barrier: Some(Barrier {
            epoch: 0,
            now: step.now,
            at: 5,
            snap: Some(history::Snapshot::Full(json!({}))),
        }),
    });
    h.faults.push(history::Fault::Crash { epoch: 0, at: 2 });
    h.faults.push(history::Fault::Restart { epoch: 0, at: 3 });
    let f = dir.path().join("crashed.history.ndjson");
    std::fs::write(&f, h.to_ndjson()).unwrap();
    let (code, _, err) = run(conform()
        .arg("replay-history")
        .arg(&f)
        .args(["--target", &common::refused_url()]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--server-cmd"), "{err}");
}
