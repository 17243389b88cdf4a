//! The `conform` binary's verdicts on what it was given: the retry timeout's
//! one precedence (printed first), profiles and baselines that would check
//! nothing or say something twice, files of kinds a profile leaves out.

use std::path::{Path, PathBuf};
use std::process::Command;

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

fn golden(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces/golden")
        .join(rel)
}

/// `conform serve` with these arguments; killed when dropped.
struct Served(std::process::Child, String);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(args: &[&str]) -> Served {
    let (child, url) = common::spawn_listening(conform().args(["serve", "--port", "0"]).args(args));
    Served(child, url)
}

#[test]
fn the_retry_timeout_is_the_flag_then_the_profile_then_the_recording_printed_first() {
    // A server with the resonate profile's retry timeout, and a witness
    // recorded with 5000 ms whose state holds a retry deadline.
    let s = serve(&["--retry-timeout", "30000"]);
    let w = golden("witnesses/acquire-keeps-retry-timeout.ndjson");
    let cases: [(&[&str], i32, &str); 4] = [
        (&[], 1, "retry-timeout 5000 (recorded)"),
        (
            &["--profile", "resonate"],
            0,
            "retry-timeout 30000 (profile resonate)",
        ),
        (
            &["--profile", "resonate", "--retry-timeout", "5000"],
            1,
            "retry-timeout 5000 (--retry-timeout)",
        ),
        (
            &["--retry-timeout", "30000"],
            0,
            "retry-timeout 30000 (--retry-timeout)",
        ),
    ];
    for cmd in ["replay", "check"] {
        for (flags, code, said) in cases {
            let (got, out, err) = run(conform()
                .arg(cmd)
                .arg(&w)
                .args(["--target", &s.1])
                .args(flags));
            let first = out.lines().next().unwrap_or_default();
            assert!(first.contains(said), "{cmd} {flags:?}: {first}");
            assert_eq!(got, code, "{cmd} {flags:?}:\n{out}{err}");
        }
    }
    let (code, out, _) = run(conform().arg("run").args([
        "--cases",
        "1",
        "--steps",
        "2",
        "--no-progress",
        "--profile",
        "resonate",
    ]));
    assert_eq!(code, 0, "{out}");
    assert!(out
        .lines()
        .next()
        .unwrap()
        .contains("retry-timeout 30000 (profile resonate)"));
    let (code, out, _) = run(conform().args([
        "mutants",
        "--mutant",
        "delay-ignored",
        "--shrink-time",
        "1",
        "--profile",
        "resonate",
    ]));
    assert_eq!(code, 0, "{out}");
    let first = out.lines().next().unwrap();
    assert!(
        first.contains("retry-timeout 30000 (profile resonate)"),
        "{first}"
    );
}

#[test]
fn golden_files_recorded_with_different_retry_timeouts_need_a_flag() {
    let dir = tempfile::tempdir().unwrap();
    let a = std::fs::read_to_string(golden("task.release.ndjson")).unwrap();
    std::fs::write(dir.path().join("a.ndjson"), &a).unwrap();
    let b = a.replacen("\"retryTimeout\":5000", "\"retryTimeout\":30000", 1);
    assert_ne!(a, b);
    std::fs::write(dir.path().join("b.ndjson"), b).unwrap();
    let (code, _, err) = run(conform().arg("check").arg(dir.path()));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("a.ndjson") && err.contains("b.ndjson"),
        "{err}"
    );
    let (code, out, _) = run(conform()
        .arg("check")
        .arg(dir.path())
        .args(["--retry-timeout", "5000"]));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn check_skips_and_lists_files_of_kinds_the_profile_leaves_out() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["promise.search.ndjson", "promise.get.ndjson"] {
        std::fs::copy(golden(f), dir.path().join(f)).unwrap();
    }
    let (code, out, err) = run(conform()
        .arg("check")
        .arg(dir.path())
        .args(["--profile", "resonate"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("promise.search.ndjson: kinds the profile leaves out: promise.search"),
        "{out}"
    );
    assert!(
        out.contains("2 files, 1 passed, 0 failed, 0 target faults, 0 malformed, 1 skipped"),
        "{out}"
    );
    // A check in which every file was skipped checked nothing: not green.
    let (code, out, _) = run(conform()
        .arg("check")
        .arg(dir.path().join("promise.search.ndjson"))
        .args(["--profile", "resonate"]));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("nothing was checked"), "{out}");
}

#[test]
fn a_profile_that_leaves_out_every_kind_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("none.json");
    let kinds = serde_json::json!({ "omitKinds": model::api::KINDS });
    std::fs::write(&f, kinds.to_string()).unwrap();
    let (code, out, err) = run(conform()
        .args([
            "run",
            "--cases",
            "1",
            "--steps",
            "5",
            "--no-progress",
            "--profile",
        ])
        .arg(&f));
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("none.json") && err.contains("every request kind"),
        "{err}"
    );
}

#[test]
fn a_nameless_profile_file_is_named_by_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("mine.json");
    std::fs::write(&f, r#"{"retryTimeout": 5000}"#).unwrap();
    let (code, out, _) = run(conform()
        .args([
            "run",
            "--cases",
            "1",
            "--steps",
            "3",
            "--no-progress",
            "--profile",
        ])
        .arg(&f));
    assert_eq!(code, 0, "{out}");
    let first = out.lines().next().unwrap();
    assert!(
        first.contains(&format!("profile {} ", f.display())),
        "{first}"
    );
    assert!(!first.contains("profile spec"), "{first}");
}

#[test]
fn a_baseline_listing_a_deviation_twice_is_refused_and_a_nameless_one_is_named_by_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("b.json");
    std::fs::write(&f, r#"{"deviations": ["delay-ignored", "delay-ignored"]}"#).unwrap();
    let (code, _, err) = run(conform().arg("baseline").arg(&f));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`delay-ignored` is listed twice"), "{err}");
    std::fs::write(&f, r#"{"name": "", "deviations": ["delay-ignored"]}"#).unwrap();
    let (code, out, _) = run(conform().arg("baseline").arg(&f));
    assert_eq!(code, 0);
    assert!(
        out.starts_with(&format!("baseline {}:", f.display())),
        "{out}"
    );
}
