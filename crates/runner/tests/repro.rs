//! Every command a failure prints reproduces it: `run`'s replay and rerun
//! commands, `shrink`'s replay command and `check`'s replay command are
//! executed as printed, and each diverges again in the same class.

use std::process::{Child, Command};

mod common;

fn conform() -> Command {
    Command::new(env!("CARGO_BIN_EXE_conform"))
}

/// `conform serve` with planted bugs; the child and its URL.
fn serve(mutants: &[&str]) -> (Child, String) {
    let mut cmd = conform();
    cmd.args(["serve", "--port", "0", "--retry-timeout", "7000"]);
    for m in mutants {
        cmd.args(["--mutant", m]);
    }
    common::spawn_listening(&mut cmd)
}

/// Run a printed command line (paths here hold no spaces) in `dir`.
fn exec(line: &str, dir: &std::path::Path) -> (i32, String) {
    let mut words = line.split_whitespace();
    let program = words.next().unwrap();
    let o = Command::new(program)
        .args(words)
        .current_dir(dir)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    (o.status.code().unwrap_or(-1), text)
}

/// The text after `label` on the first line holding it.
fn after<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .unwrap_or_else(|| panic!("no `{label}` in:\n{out}"))
        .trim()
}

#[test]
fn every_printed_command_reproduces_the_divergence() {
    let (mut server, url) = serve(&["acquire-no-version-check"]);
    let dir = tempfile::tempdir().unwrap();
    let o = conform()
        .args([
            "run",
            "--seed",
            "1",
            "--cases",
            "100",
            "--steps",
            "60",
            "--fail-fast",
        ])
        .args([
            "--no-progress",
            "--shrink-time",
            "20",
            "--retry-timeout",
            "7000",
        ])
        .args(["--target", &url])
        .arg("--out-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{out}");
    let class = after(&out, "class:").to_string();

    // run's replay command (of the shrunk trace) and rerun command.
    for label in ["replay:", "rerun:"] {
        let cmd = after(&out, label);
        assert!(cmd.contains("--retry-timeout 7000"), "{cmd}");
        let (code, text) = exec(cmd, dir.path());
        assert_eq!(code, 1, "{cmd}\n{text}");
        assert!(text.contains(&class), "{cmd} did not show {class}:\n{text}");
    }

    // shrink's replay command.
    let saved = after(&out, "trace:");
    let o = conform()
        .args(["shrink", saved, "--target", &url, "--retry-timeout", "7000"])
        .output()
        .unwrap();
    let shrunk_out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{shrunk_out}");
    let cmd = after(&shrunk_out, "replay:");
    let (code, text) = exec(cmd, dir.path());
    assert_eq!(code, 1, "{cmd}\n{text}");
    assert!(text.contains(&class), "{text}");

    // check's replay command, on a golden file the bug fails.
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces/golden/task.acquire.ndjson");
    let o = conform()
        .arg("check")
        .arg(&golden)
        .args(["--target", &url, "--retry-timeout", "7000"])
        .output()
        .unwrap();
    let check_out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{check_out}");
    let cmd = after(&check_out, "replay:");
    let (code, text) = exec(cmd, dir.path());
    assert_eq!(code, 1, "{cmd}\n{text}");
    server.kill().unwrap();
}

#[test]
fn commands_for_the_embedded_server_carry_no_temporary_port() {
    let reach = runner::repro::Reach {
        target: None,
        profile: Some("ci/profiles/resonate-rust.json".into()),
        baseline: None,
        retry_timeout: 30000,
        timeout_ms: 5000,
        check_state: true,
        allow_remote: false,
        pipeline: runner::target::DEFAULT_PIPELINE,
    };
    let f = std::path::Path::new("t.ndjson");
    for cmd in [reach.replay_command(f), reach.check_command(f)] {
        assert!(!cmd.contains("--target"), "{cmd}");
        assert!(cmd.contains("--profile ci/profiles/resonate-rust.json --retry-timeout 30000"));
    }
}
