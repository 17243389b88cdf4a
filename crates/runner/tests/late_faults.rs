//! A fault anywhere wins: a target that fails after a case's divergence,
//! while the run shrinks it or re-runs it to see whether a baseline
//! deviation is fixed, ends the run as a fault (exit 3), never as a
//! divergence or as "not fixed"; a file that cannot be written is an IO
//! error of its own (exit 4), naming the path, and not a target fault.

use std::path::Path;
use std::process::Command;

use gen::Step;
use runner::report::{CaseStatus, Summary, Verdict};
use runner::run::run_on;
use runner::snapshot::Snap;
use runner::target::{LocalServer, LocalTarget, Target, TargetError};

mod common;

/// An in-process target that stops answering after `good` starts.
struct Failing {
    inner: LocalTarget,
    starts: usize,
    good: usize,
}

impl Failing {
    fn new(mutants: &[&str], good: usize) -> Failing {
        let devs = deviate::catalogue::resolve(mutants).unwrap();
        Failing {
            inner: LocalTarget::new(LocalServer::new(Default::default(), devs, false)),
            starts: 0,
            good,
        }
    }

    fn dead(&self) -> Result<(), TargetError> {
        if self.starts > self.good {
            return Err(TargetError::Unreachable("gone".into()));
        }
        Ok(())
    }
}

impl Target for Failing {
    fn describe(&self) -> String {
        "failing".into()
    }
    fn start(&mut self) -> Result<(), TargetError> {
        self.starts += 1;
        self.dead()?;
        self.inner.start()
    }
    fn reset(&mut self) -> Result<(), TargetError> {
        self.dead()?;
        self.inner.reset()
    }
    fn send(&mut self, s: &Step) -> Result<Option<serde_json::Value>, TargetError> {
        self.dead()?;
        self.inner.send(s)
    }
    fn snap(&mut self) -> Result<Snap, TargetError> {
        self.dead()?;
        self.inner.snap()
    }
}

/// Run `cases` cases (stopping at the first divergence) against the model
/// with `mutants`, the checker applying `baseline`, failing after `good`
/// starts; with `shrink`; traces go to `dir`.
fn run_failing(
    dir: &Path,
    mutants: &[&str],
    baseline: &[&str],
    shrink: bool,
    good: usize,
) -> (Summary, String) {
    let mut cfg = common::config("in-process", dir, 40, 40);
    cfg.deviations = deviate::catalogue::resolve(baseline).unwrap();
    cfg.shrink = shrink;
    let mut target = Failing::new(mutants, good);
    let mut out = Vec::new();
    let s = run_on(&cfg, &mut target, &mut out);
    (s, String::from_utf8_lossy(&out).into_owned())
}

/// The index of the first case that fails (no fault): it diverges, or a
/// baseline deviation is possibly fixed there.
fn diverging_case(mutants: &[&str], baseline: &[&str]) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let (s, log) = run_failing(dir.path(), mutants, baseline, false, usize::MAX);
    assert_eq!(s.divergences + s.possibly_fixed, 1, "{log}");
    s.case_reports.len() - 1
}

#[test]
fn a_fault_while_shrinking_is_a_fault_not_a_divergence() {
    let bug = ["settle-overwrites-settled"];
    let c = diverging_case(&bug, &[]);
    // Every start up to the diverging case's works; the shrinker's first
    // candidate finds the target gone.
    let dir = tempfile::tempdir().unwrap();
    let (s, log) = run_failing(dir.path(), &bug, &[], true, c + 1);
    assert_eq!(s.verdict(), Verdict::Fault, "{log}");
    let CaseStatus::Fault { message, trace } = &s.case_reports[c].status else {
        panic!("{:?}\n{log}", s.case_reports[c].status)
    };
    assert!(message.contains("while shrinking"), "{message}");
    assert!(trace.exists(), "the divergence's trace is kept");
}

#[test]
fn a_fault_while_rerunning_for_a_possibly_fixed_deviation_is_a_fault() {
    // The target is the spec; the baseline says it has a deviation: the
    // divergence is re-run without it, and the target is gone by then.
    let known = ["heartbeat-ignores-expiry"];
    let c = diverging_case(&[], &known);
    let dir = tempfile::tempdir().unwrap();
    let (s, log) = run_failing(dir.path(), &[], &known, false, c + 1);
    assert_eq!(s.verdict(), Verdict::Fault, "{log}");
    assert_eq!(s.possibly_fixed, 0, "{log}");
    let CaseStatus::Fault { message, .. } = &s.case_reports[c].status else {
        panic!("{:?}\n{log}", s.case_reports[c].status)
    };
    assert!(message.contains("heartbeat-ignores-expiry"), "{message}");
    // With the target alive, the same case is reported possibly fixed.
    let (s, _) = run_failing(dir.path(), &[], &known, false, usize::MAX);
    assert_eq!(s.possibly_fixed, 1);
}

fn conform() -> Command {
    Command::new(env!("CARGO_BIN_EXE_conform"))
}

fn exit(cmd: &mut Command) -> (i32, String, String) {
    let o = cmd.output().expect("conform runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A path that cannot be written: under a regular file.
fn unwritable(dir: &Path, name: &str) -> std::path::PathBuf {
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    file.join(name)
}

#[test]
fn a_report_that_cannot_be_written_exits_4_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let bad = unwritable(dir.path(), "r.json");
    let small = ["--cases", "1", "--steps", "3", "--no-progress"];
    for flag in ["--report", "--junit"] {
        let (code, _, err) = exit(conform().arg("run").args(small).arg(flag).arg(&bad));
        assert_eq!(code, 4, "run {flag}: {err}");
        assert!(err.contains(&bad.display().to_string()), "{err}");
    }
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/golden/task.get.ndjson");
    let (code, _, err) = exit(
        conform()
            .arg("check")
            .arg(&golden)
            .arg("--report")
            .arg(&bad),
    );
    assert_eq!(code, 4, "check: {err}");
    let (code, _, err) = exit(
        conform()
            .args([
                "mutants",
                "--mutant",
                "delay-ignored",
                "--shrink-time",
                "1",
                "--report",
            ])
            .arg(&bad),
    );
    assert_eq!(code, 4, "mutants: {err}");
    // A target fault still wins over the report it could not write.
    let (code, _, err) = exit(
        conform()
            .arg("run")
            .args(small)
            .args(["--target", &common::refused_url(), "--out-dir"])
            .arg(dir.path())
            .arg("--report")
            .arg(&bad),
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains(&bad.display().to_string()), "{err}");
}

#[test]
fn a_shrink_that_cannot_save_its_file_exits_4_not_3() {
    let (child, url) = common::spawn_listening(conform().args([
        "serve",
        "--port",
        "0",
        "--mutant",
        "settle-timedout-early",
    ]));
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _server = Kill(child);
    let dir = tempfile::tempdir().unwrap();
    let w = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces/golden/witnesses/settle-timedout-early.ndjson");
    let bad = unwritable(dir.path(), "w.shrunk.ndjson");
    let (code, out, err) = exit(
        conform()
            .arg("shrink")
            .arg(&w)
            .args(["--target", &url, "--shrink-time", "2", "--out"])
            .arg(&bad),
    );
    assert_eq!(code, 4, "{out}{err}");
    assert!(err.contains(&bad.display().to_string()), "{err}");
}
