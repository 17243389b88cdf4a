//! The `conform` binary: exit codes, the messages a user sees for bad
//! input, and the files it writes.

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

#[test]
fn bad_usage_exits_2() {
    let (code, _, err) = run(conform().args(["run", "--cases", "many"]));
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_malformed_trace_exits_2_naming_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.ndjson");
    std::fs::write(
        &f,
        "{\"kind\":\"promise.get\",\"now\":1,\"req\":{\"id\":\"a\"}}\n{\"kind\": oops}\n",
    )
    .unwrap();
    let (code, _, err) = run(conform().arg("replay").arg(&f));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bad.ndjson:2:"), "{err}");
}

#[test]
fn a_trace_with_a_bad_request_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.ndjson");
    std::fs::write(&f, "{\"kind\":\"task.acquire\",\"now\":1,\"req\":{\"id\":\"a\",\"version\":\"x\",\"pid\":\"p\",\"ttl\":1}}\n").unwrap();
    let (code, _, err) = run(conform().arg("replay").arg(&f));
    assert_eq!(code, 2);
    assert!(err.contains("version"), "{err}");
}

#[test]
fn an_unreachable_target_exits_3() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = run(conform()
        .args([
            "run",
            "--cases",
            "1",
            "--steps",
            "5",
            "--no-progress",
            "--target",
            &url,
        ])
        .arg("--out-dir")
        .arg(dir.path()));
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("TARGET FAULT"), "{out}");
}

#[test]
fn a_clean_run_against_the_embedded_server_exits_0_and_writes_reports() {
    let dir = tempfile::tempdir().unwrap();
    let (junit, report) = (dir.path().join("j.xml"), dir.path().join("r.json"));
    let (code, out, err) = run(conform()
        .args([
            "run",
            "--seed",
            "3",
            "--cases",
            "3",
            "--steps",
            "30",
            "--no-progress",
        ])
        .arg("--junit")
        .arg(&junit)
        .arg("--report")
        .arg(&report));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("seed 3"), "the seed is printed first: {out}");
    assert!(out.contains("branch coverage"), "{out}");
    let x = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(x.matches("<testcase").count(), 3, "{x}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["cases"], 3);
    assert_eq!(r["divergences"], 0);
}

#[test]
fn export_writes_the_spec_format() {
    let dir = tempfile::tempdir().unwrap();
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces/golden/task.acquire.ndjson");
    let out = dir.path().join("spec.ndjson");
    let (code, _, err) = run(conform()
        .arg("export")
        .arg(&golden)
        .args(["--format", "spec", "--out"])
        .arg(&out));
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["kind", "now", "req", "res"]);
        assert_ne!(v["kind"], "debug.tick");
    }
}

/// Start `conform serve` with a planted bug; returns the child and its URL.
fn serve_mutant(name: &str) -> (std::process::Child, String) {
    common::spawn_listening(conform().args(["serve", "--port", "0", "--mutant", name]))
}

#[test]
fn a_divergence_exits_1_and_the_saved_trace_shrinks_and_replays() {
    let (mut server, url) = serve_mutant("halt-not-idempotent");
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = run(conform()
        .args([
            "run",
            "--seed",
            "1",
            "--cases",
            "100",
            "--steps",
            "60",
            "--fail-fast",
            "--no-shrink",
            "--no-progress",
            "--target",
            &url,
        ])
        .arg("--out-dir")
        .arg(dir.path()));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("replay:"), "{out}");
    let saved = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();

    let (code, out, err) =
        run(conform()
            .arg("shrink")
            .arg(&saved)
            .args(["--target", &url, "--shrink-time", "20"]));
    assert_eq!(code, 1, "{out}{err}");
    let shrunk = saved.with_file_name(format!(
        "{}.shrunk.ndjson",
        saved.file_stem().unwrap().to_string_lossy()
    ));
    assert!(shrunk.exists(), "{out}");
    let steps = std::fs::read_to_string(&shrunk).unwrap().lines().count() - 1;
    assert_eq!(steps, 3, "create, halt, halt: {out}");

    let (code, out, _) = run(conform()
        .arg("replay")
        .arg(&shrunk)
        .args(["--target", &url]));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("task.halt [status:200->409]"), "{out}");
    server.kill().unwrap();
}

#[test]
fn golden_writes_a_corpus_covering_every_reachable_branch() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run(conform()
        .arg("golden")
        .arg("--out")
        .arg(dir.path())
        .args(["--count", "200"]));
    assert_eq!(code, 0, "{err}");
    let reachable = model::branch::ALL.iter().filter(|b| b.reachable()).count();
    assert!(
        out.contains(&format!("branch coverage: {reachable}/{reachable}")),
        "{out}"
    );
    let (code, out, _) = run(conform().arg("check").arg(dir.path()));
    assert_eq!(
        code, 0,
        "the embedded reference server passes what the model wrote: {out}"
    );
}

#[test]
fn golden_refuses_to_overwrite_a_corpus_without_bless() {
    let dir = tempfile::tempdir().unwrap();
    let gen = |bless: bool| {
        let mut c = conform();
        c.arg("golden")
            .arg("--out")
            .arg(dir.path())
            .args(["--count", "50"]);
        if bless {
            c.arg("--bless");
        }
        run(&mut c)
    };
    assert_eq!(gen(false).0, 0);
    std::fs::write(
        dir.path().join("mine.ndjson"),
        "{\"kind\":\"promise.get\",\"now\":1,\"req\":{\"id\":\"a\"}}\n",
    )
    .unwrap();
    let (code, _, err) = gen(false);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--bless"), "{err}");
    assert_eq!(gen(true).0, 0);
    assert!(
        dir.path().join("mine.ndjson").exists(),
        "--bless removes golden files only"
    );
}

#[test]
fn targets_must_be_loopback_http_urls() {
    for (url, says) in [
        ("http://192.0.2.1:8001", "only loopback addresses"),
        ("ftp://127.0.0.1:21", "expected an http:// URL"),
        ("127.0.0.1:8001", "expected an http:// URL"),
        // This build has no TLS: refused as usage, not tried and failed.
        ("https://127.0.0.1:8001", "no TLS"),
    ] {
        let (code, out, err) =
            run(conform().args(["run", "--cases", "1", "--no-progress", "--target", url]));
        assert_eq!(code, 2, "{url}: {out}{err}");
        assert!(err.contains(says), "{url}: {err}");
        assert!(!out.contains("TARGET FAULT"), "{url}: {out}");
    }
    // Allowing remote targets allows no TLS.
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces/golden/task.acquire.ndjson");
    let (code, _, err) = run(conform().arg("replay").arg(&golden).args([
        "--allow-remote-target",
        "--target",
        "https://10.1.2.3/",
    ]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no TLS"), "{err}");
}

#[test]
fn zero_cases_steps_or_timeout_is_bad_usage() {
    assert_eq!(run(conform().args(["run", "--steps", "0"])).0, 2);
    assert_eq!(run(conform().args(["run", "--cases", "0"])).0, 2);
    let (code, out, err) = run(conform().args(["run", "--cases", "1", "--timeout-ms", "0"]));
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("--timeout-ms"), "{err}");
}

#[test]
fn check_refuses_a_file_with_nothing_to_compare() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bare.ndjson");
    std::fs::write(
        &f,
        "{\"kind\":\"promise.get\",\"now\":1,\"req\":{\"id\":\"a\"}}\n",
    )
    .unwrap();
    let (code, out, err) = run(conform().arg("check").arg(&f));
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("MALFORMED") && out.contains("no recorded answers"),
        "{out}"
    );
}

#[test]
fn a_now_the_wire_cannot_carry_is_refused_naming_file_line_and_field() {
    // `now` is sent as `resonate:debug_time`, an i64 on the wire: the
    // reader refuses what the codec cannot send, rather than the replay
    // blaming the reference server for it.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("late.ndjson");
    let max = i64::MAX as u64;
    std::fs::write(
        &f,
        format!(
            "{{\"kind\":\"promise.get\",\"now\":{max},\"req\":{{\"id\":\"a\"}}}}\n{{\"kind\":\"promise.get\",\"now\":{},\"req\":{{\"id\":\"a\"}}}}\n",
            max + 1
        ),
    )
    .unwrap();
    let (code, out, err) = run(conform().arg("replay").arg(&f));
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("late.ndjson:2:"), "{err}");
    assert!(
        err.contains("`now`") && err.contains(&(max + 1).to_string()),
        "{err}"
    );
    // At the limit itself it replays.
    std::fs::write(
        &f,
        format!("{{\"kind\":\"promise.get\",\"now\":{max},\"req\":{{\"id\":\"a\"}}}}\n"),
    )
    .unwrap();
    let (code, out, err) = run(conform().arg("replay").arg(&f));
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_trace_of_another_format_is_refused_naming_the_supported_one() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("future.ndjson");
    std::fs::write(
        &f,
        "{\"kind\":\"header\",\"format\":\"conform-trace/99\",\"harness\":\"conform 9\",\"spec\":\"83d64c3\"}\n{\"kind\":\"promise.get\",\"now\":1,\"req\":{\"id\":\"a\"}}\n",
    )
    .unwrap();
    let (code, _, err) = run(conform().arg("replay").arg(&f));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("future.ndjson:1:"), "{err}");
    assert!(
        err.contains("conform-trace/99") && err.contains("conform-trace/1"),
        "{err}"
    );
}

/// A directory holding copies of golden files (by name under
/// `traces/golden`) and a malformed `bad.ndjson`.
fn corpus_with_a_malformed_file(golden: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/golden");
    for g in golden {
        let name = std::path::Path::new(g).file_name().unwrap();
        std::fs::copy(root.join(g), dir.path().join(name)).unwrap();
    }
    std::fs::write(
        dir.path().join("bad.ndjson"),
        "{\"kind\":\"promise.get\",\"now\":1,\"req\":{\"id\":\"a\"},\"res\":{}}\n{oops\n",
    )
    .unwrap();
    dir
}

#[test]
fn check_names_each_malformed_file_and_still_checks_and_reports_the_others() {
    let corpus = corpus_with_a_malformed_file(&["promise.get.ndjson", "task.get.ndjson"]);
    let out_dir = tempfile::tempdir().unwrap();
    let (junit, report) = (out_dir.path().join("j.xml"), out_dir.path().join("r.json"));
    let (code, out, err) = run(conform()
        .arg("check")
        .arg(corpus.path())
        .arg("--junit")
        .arg(&junit)
        .arg("--report")
        .arg(&report));
    assert_eq!(code, 2, "a malformed file: exit 2 at the end\n{out}{err}");
    assert!(
        out.contains("MALFORMED") && out.contains("bad.ndjson:2:"),
        "{out}"
    );
    assert!(
        out.contains("ok   ") && out.contains("promise.get.ndjson"),
        "{out}"
    );
    assert!(out.contains("task.get.ndjson"), "{out}");
    assert!(
        out.contains("3 files, 2 passed, 0 failed, 0 target faults, 1 malformed"),
        "{out}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["cases"], 2, "{r}");
    assert_eq!(r["malformed"].as_array().unwrap().len(), 1, "{r}");
    assert!(r["malformed"][0]["file"]
        .as_str()
        .unwrap()
        .ends_with("bad.ndjson"));
    let x = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(x.matches("<testcase").count(), 3, "{x}");
    assert_eq!(x.matches("<error").count(), 1, "{x}");
}

#[test]
fn check_with_a_malformed_file_still_reports_a_divergence_and_exits_2() {
    let (mut server, url) = serve_mutant("halt-not-idempotent");
    let corpus = corpus_with_a_malformed_file(&["task.halt.ndjson", "promise.get.ndjson"]);
    let (code, out, err) = run(conform()
        .arg("check")
        .arg(corpus.path())
        .args(["--target", &url]));
    server.kill().unwrap();
    assert_eq!(code, 2, "bad input wins over a divergence\n{out}{err}");
    assert!(
        out.contains("FAIL ") && out.contains("task.halt.ndjson"),
        "{out}"
    );
    assert!(out.contains("MALFORMED"), "{out}");
}

#[test]
fn check_stops_at_the_first_target_fault_and_still_writes_its_report() {
    let corpus = corpus_with_a_malformed_file(&[
        "promise.get.ndjson",
        "task.get.ndjson",
        "task.halt.ndjson",
    ]);
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("r.json");
    let (code, out, err) = run(conform()
        .arg("check")
        .arg(corpus.path())
        .args(["--target", &common::refused_url()])
        .arg("--report")
        .arg(&report));
    assert_eq!(code, 3, "a fault wins over a malformed file\n{out}{err}");
    assert_eq!(
        out.matches("TARGET FAULT").count(),
        1,
        "one message:\n{out}"
    );
    assert!(
        out.contains("the remaining 2 files were not checked"),
        "{out}"
    );
    assert!(out.contains("2 not checked"), "{out}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(
        (r["cases"].as_u64(), r["faults"].as_u64()),
        (Some(1), Some(1)),
        "{r}"
    );
    assert_eq!(r["malformed"].as_array().unwrap().len(), 1, "{r}");
}

#[test]
fn a_missing_trace_file_says_it_cannot_be_read() {
    let (code, _, err) = run(conform().args(["replay", "/nonexistent/x.ndjson"]));
    assert_eq!(code, 2);
    assert!(err.contains("cannot read trace"), "{err}");
}

#[test]
fn a_remote_target_is_refused_without_the_flag_that_names_the_risk() {
    // Never connected to: refused before any request.
    let (code, _, err) = run(conform().args(["run", "--target", "http://10.1.2.3:8001"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--allow-remote-target") && err.contains("wiped"),
        "{err}"
    );
    // The flag parses; a URL that is not http(s) is still refused, before
    // any connection is tried.
    let (code, _, err) = run(conform().args([
        "run",
        "--allow-remote-target",
        "--target",
        "ftp://10.1.2.3/",
    ]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("expected an http:// URL"), "{err}");
}

#[test]
fn diffs_are_coloured_only_when_asked_or_on_a_terminal() {
    let (mut server, url) = serve_mutant("halt-not-idempotent");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.ndjson");
    std::fs::write(
        &f,
        concat!(
            "{\"kind\":\"task.create\",\"now\":1,\"req\":{\"pid\":\"p\",\"ttl\":100,\"action\":{\"kind\":\"promise.create\",\"head\":{\"corrId\":\"\",\"version\":\"2026-04-01\"},\"data\":{\"id\":\"a\",\"timeoutAt\":100000,\"param\":{},\"tags\":{\"resonate:target\":\"poll://any@w\"}}}}}\n",
            "{\"kind\":\"task.halt\",\"now\":2,\"req\":{\"id\":\"a\"}}\n",
            "{\"kind\":\"task.halt\",\"now\":3,\"req\":{\"id\":\"a\"}}\n",
        ),
    )
    .unwrap();
    let replay = |color: &str| {
        run(conform()
            .args(["replay", "--color", color, "--target", &url])
            .arg(&f))
    };
    let (code, out, _) = replay("always");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("\u{1b}[31m") && out.contains("\u{1b}[32m"),
        "{out}"
    );
    let (_, out, _) = replay("never");
    assert!(!out.contains('\u{1b}'), "{out}");
    // Piped (not a terminal): auto is plain.
    let (_, out, _) = replay("auto");
    assert!(!out.contains('\u{1b}'), "{out}");
    server.kill().unwrap();
}

/// A numeric flag and the range it takes (README "The CLI"). `lo: None`:
/// the lower bound is checked elsewhere (`--timeout-ms 0`, a usage error of
/// its own), and the parser is clap's, whose message names the flag only.
struct Numeric {
    command: &'static str,
    flag: &'static str,
    lo: Option<u64>,
    hi: u64,
}

const fn n(command: &'static str, flag: &'static str, lo: u64, hi: u64) -> Numeric {
    Numeric {
        command,
        flag,
        lo: Some(lo),
        hi,
    }
}

/// Every numeric flag of every command, with its range.
const NUMERIC: &[Numeric] = &[
    n("serve", "port", 0, 65_535),
    n("serve", "retry-timeout", 0, 86_400_000),
    n("serve", "race-window-ms", 0, 1_000),
    n("run", "seed", 0, u64::MAX),
    n("run", "cases", 1, 1_000_000),
    n("run", "case", 0, u64::MAX),
    n("run", "steps", 1, 1_000_000),
    n("run", "shrink-time", 0, 86_400),
    n("run", "retry-timeout", 0, 86_400_000),
    Numeric {
        command: "run",
        flag: "timeout-ms",
        lo: None,
        hi: u64::MAX,
    },
    n("run", "pipeline", 1, 64),
    n("replay", "retry-timeout", 0, 86_400_000),
    Numeric {
        command: "replay",
        flag: "timeout-ms",
        lo: None,
        hi: u64::MAX,
    },
    n("replay", "pipeline", 1, 64),
    n("shrink", "retry-timeout", 0, 86_400_000),
    n("shrink", "shrink-time", 0, 86_400),
    Numeric {
        command: "shrink",
        flag: "timeout-ms",
        lo: None,
        hi: u64::MAX,
    },
    n("shrink", "pipeline", 1, 64),
    n("golden", "count", 1, 100_000),
    n("golden", "seed", 0, u64::MAX),
    n("golden", "steps", 1, 1_000_000),
    n("golden", "retry-timeout", 0, 86_400_000),
    n("check", "retry-timeout", 0, 86_400_000),
    Numeric {
        command: "check",
        flag: "timeout-ms",
        lo: None,
        hi: u64::MAX,
    },
    n("check", "pipeline", 1, 64),
    n("mutants", "budget-steps", 1, 100_000_000),
    n("mutants", "slow-budget", 0, 100_000_000),
    n("mutants", "seed", 0, u64::MAX),
    n("mutants", "steps", 1, 1_000_000),
    n("mutants", "shrink-time", 0, 86_400),
    n("mutants", "shrink-candidates", 0, 100_000_000),
    n("mutants", "seeds", 1, 10_000),
    n("stress", "seed", 0, u64::MAX),
    n("stress", "clients", 1, 64),
    n("stress", "epochs", 1, 1_000_000),
    n("stress", "ops", 1, 64),
    n("stress", "rival-pct", 0, 100),
    n("stress", "shrink-time", 1, 86_400),
    n("stress", "shrink-reruns", 0, 1_000_000),
    n("stress", "attempts", 1, 1_000),
    n("stress", "search-budget", 1, u64::MAX),
    n("stress", "crash-pct", 0, 100),
    n("stress", "retry-timeout", 0, 86_400_000),
    Numeric {
        command: "stress",
        flag: "timeout-ms",
        lo: None,
        hi: u64::MAX,
    },
    n("stress", "pipeline", 1, 64),
    n("check-history", "retry-timeout", 0, 86_400_000),
    n("check-history", "search-budget", 1, u64::MAX),
    n("races", "runs", 1, 100),
    n("races", "epochs", 1, 1_000_000),
    n("races", "clients", 2, 64),
    n("races", "shrink-time", 1, 3_600),
    n("races", "shrink-reruns", 0, 1_000_000),
    n("races", "shrink-goal", 0, 1_000_000),
    n("races", "search-budget", 1, u64::MAX),
    n("races", "race-window-ms", 1, 1_000),
    n("replay-history", "attempts", 1, 1_000),
    n("replay-history", "search-budget", 1, u64::MAX),
    n("replay-history", "retry-timeout", 0, 86_400_000),
    Numeric {
        command: "replay-history",
        flag: "timeout-ms",
        lo: None,
        hi: u64::MAX,
    },
    n("replay-history", "pipeline", 1, 64),
    n("triage", "seed", 0, u64::MAX),
    n("triage", "cases", 1, 1_000_000),
    n("triage", "steps", 1, 1_000_000),
    n("triage", "rounds", 1, 20),
    n("triage", "shrink-time", 0, 86_400),
    n("triage", "together", 1, 3),
    n("triage", "retry-timeout", 0, 86_400_000),
    Numeric {
        command: "triage",
        flag: "timeout-ms",
        lo: None,
        hi: u64::MAX,
    },
    n("triage", "pipeline", 1, 64),
];

/// The flags that take a value that is no number.
const NOT_NUMERIC: &[&str] = &[
    "color",
    "target",
    "profile",
    "baseline",
    "out-dir",
    "junit",
    "report",
    "out",
    "mutant",
    "format",
    "bind",
    "race",
    "log",
    "durability-bug",
    "partition",
    "server-cmd",
    "catalogue-without",
];

const COMMANDS: &[&str] = &[
    "serve",
    "run",
    "replay",
    "shrink",
    "golden",
    "check",
    "export",
    "mutants",
    "baseline",
    "stress",
    "check-history",
    "races",
    "replay-history",
    "triage",
];

/// Every flag of `command` that takes a value, from its `--help`.
fn value_flags(command: &str) -> Vec<String> {
    let (code, help, err) = run(conform().args([command, "--help"]));
    assert_eq!(code, 0, "{err}");
    help.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l.strip_prefix("--")?;
            let (flag, value) = rest.split_once(' ')?;
            value.starts_with('<').then(|| flag.to_string())
        })
        .collect()
}

/// A numeric flag nobody gave a range is a flag a user can overflow: every
/// flag that takes a value is either in [`NUMERIC`] or known not to be a
/// number.
#[test]
fn every_numeric_flag_has_a_range() {
    for command in COMMANDS {
        for flag in value_flags(command) {
            let known = NUMERIC
                .iter()
                .any(|f| f.command == *command && f.flag == flag);
            assert!(
                known || NOT_NUMERIC.contains(&flag.as_str()),
                "`conform {command} --{flag}` is in no table: a number needs a range (and a row in NUMERIC), anything else a place in NOT_NUMERIC"
            );
        }
    }
    for f in NUMERIC {
        assert!(
            value_flags(f.command).contains(&f.flag.to_string()),
            "`conform {} --{}` is no flag",
            f.command,
            f.flag
        );
    }
}

/// Whether an outcome (exit code, stderr) shows a flag's value was taken.
type Taken = fn(i32, &str) -> bool;

/// A cheap invocation of `command` that gets past parsing: the arguments
/// around the flag (a refused target, a file that exists, an output that
/// is refused later), in groups, and whether its outcome shows the value
/// was taken.
fn around(command: &str, files: &std::path::Path) -> (Vec<Vec<String>>, Taken) {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let refused = common::refused_url();
    let golden = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../traces/golden/promise.get.ndjson"
    );
    let dir = files.display().to_string();
    let fault: Taken = |code, _| code == 3;
    match command {
        "serve" => (vec![s(&["serve"]), s(&["--list-mutants"])], |code, _| {
            code == 0
        }),
        "run" => (
            vec![
                s(&["run"]),
                s(&["--target", &refused]),
                s(&["--cases", "1"]),
                s(&["--steps", "1"]),
                s(&["--no-progress"]),
                s(&["--out-dir", &dir]),
            ],
            fault,
        ),
        "triage" => (
            vec![
                s(&["triage"]),
                s(&["--target", &refused]),
                s(&["--cases", "1"]),
                s(&["--steps", "1"]),
                s(&["--out", &dir]),
            ],
            fault,
        ),
        "replay" | "shrink" | "check" => (
            vec![s(&[command, golden]), s(&["--target", &refused])],
            fault,
        ),
        // Refused after parsing: the output already holds golden files.
        "golden" => (vec![s(&["golden"]), s(&["--out", &dir])], |code, err| {
            code == 2 && err.contains("already holds")
        }),
        // Refused at the first request (the target is refused), or, with
        // crashes asked for, for want of a process to crash.
        "stress" => (
            vec![
                s(&["stress"]),
                s(&["--target", &refused]),
                s(&["--epochs", "1"]),
                s(&["--out-dir", &dir]),
            ],
            |code, err| code == 3 || (code == 2 && err.contains("--server-cmd")),
        ),
        // Refused after parsing: the history is malformed.
        "check-history" | "replay-history" => (
            vec![s(&[command, golden]), s(&["--target", &refused])]
                .into_iter()
                .filter(|g| command == "replay-history" || g[0] != "--target")
                .collect(),
            |code, err| code == 2 && err.contains("malformed history"),
        ),
        // Refused after parsing: no such race.
        "races" => (
            vec![s(&["races"]), s(&["--race", "race-nothing"])],
            |code, err| code == 2 && err.contains("race-nothing"),
        ),
        // Refused after parsing: no such bug.
        "mutants" => (
            vec![s(&["mutants"]), s(&["--mutant", "no-such-bug"])],
            |code, err| code == 2 && err.contains("no-such-bug"),
        ),
        _ => unreachable!("{command}"),
    }
}

/// Each numeric flag at both ends of its range is taken, and below it,
/// above it, past what its type holds and not a number it is bad usage
/// (exit 2) naming the flag and its range; never a panic.
#[test]
fn numeric_flags_are_range_checked() {
    let files = tempfile::tempdir().unwrap();
    std::fs::write(
        files.path().join("promise.get.ndjson"),
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../traces/golden/promise.get.ndjson"
        ))
        .unwrap(),
    )
    .unwrap();
    for f in NUMERIC {
        let (ctx, taken) = around(f.command, files.path());
        let with = |value: &str| {
            let mut cmd = conform();
            for group in ctx.iter().filter(|g| g[0] != format!("--{}", f.flag)) {
                cmd.args(group);
            }
            let r = run(cmd.arg(format!("--{}", f.flag)).arg(value));
            assert!(
                !r.2.contains("panicked"),
                "{} --{} {value}: {}",
                f.command,
                f.flag,
                r.2
            );
            r
        };
        let name = format!("--{}", f.flag);
        let range = f.lo.map(|lo| format!("{lo}..={}", f.hi));
        let mut refused = vec!["18446744073709551616".to_string(), "x".to_string()];
        if let Some(lo) = f.lo.filter(|lo| *lo > 0) {
            refused.push((lo - 1).to_string());
        }
        if f.hi < u64::MAX {
            refused.push((f.hi + 1).to_string());
        }
        for value in &refused {
            let (code, _, err) = with(value);
            assert_eq!(code, 2, "{} {name} {value}: {err}", f.command);
            assert!(err.contains(&name), "{} {name} {value}: {err}", f.command);
            if let Some(range) = &range {
                assert!(err.contains(range), "{} {name} {value}: {err}", f.command);
            }
        }
        let ends = [f.lo, Some(f.hi)];
        for value in ends.iter().flatten() {
            let (code, _, err) = with(&value.to_string());
            assert!(
                taken(code, &err),
                "{} {name} {value} was not taken (exit {code}): {err}",
                f.command
            );
        }
    }
}

/// `--partition K/N` (the one flag of `run` that takes two numbers): K of
/// N with 1 <= K <= N is taken, in nextest's `count:K/N` spelling too;
/// anything else, N above `--cases`, or `--case` beside it, is bad usage
/// (exit 2) naming the flag, before any request.
#[test]
fn partition_is_checked_at_parse() {
    let refused = common::refused_url();
    let dir = tempfile::tempdir().unwrap();
    let with = |value: &str, extra: &[&str]| {
        let out = dir.path().display().to_string();
        let mut cmd = conform();
        cmd.args([
            "run",
            "--target",
            &refused,
            "--no-progress",
            "--out-dir",
            &out,
        ])
        .args(["--cases", "4", "--steps", "1", "--partition", value])
        .args(extra);
        let r = run(&mut cmd);
        assert!(!r.2.contains("panicked"), "{value}: {}", r.2);
        r
    };
    for value in [
        "0/4", "5/4", "1/0", "4", "x/4", "1/x", "1/2/3", "hash:1/2", "",
    ] {
        let (code, _, err) = with(value, &[]);
        assert_eq!(code, 2, "--partition {value:?}: {err}");
        assert!(err.contains("--partition"), "--partition {value:?}: {err}");
    }
    let (code, _, err) = with("1/8", &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--partition 1/8") && err.contains("--cases"),
        "{err}"
    );
    let (code, _, err) = with("1/2", &["--case", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--partition") && err.contains("--case"),
        "{err}"
    );
    // Taken: the refused target is the only complaint.
    for value in ["1/4", "4/4", "count:2/4", "1/1"] {
        let (code, _, err) = with(value, &[]);
        assert_eq!(code, 3, "--partition {value}: {err}");
    }
}

/// `mutants --versus-clean` hunts on seeds `--seed` … `--seed + --seeds - 1`:
/// past the largest seed they wrap (they are names), no overflow.
#[test]
fn versus_clean_seeds_wrap_past_the_largest() {
    let (code, out, err) = run(conform().args([
        "mutants",
        "--mutant",
        "settle-timedout-early",
        "--baseline",
        "resonate",
        "--versus-clean",
        "--seed",
        "18446744073709551615",
        "--seeds",
        "2",
        "--budget-steps",
        "50",
    ]));
    assert!(!err.contains("panicked"), "{err}");
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    assert!(out.contains("seeds 18446744073709551615..0"), "{out}");
}

#[test]
fn a_dialect_rule_that_would_hide_a_defined_field_exits_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mine.dialect.json"),
        r#"{"rules": [{"rule": "status", "kinds": ["promise.create"], "from": 201, "to": 200},
                      {"rule": "drop", "kinds": ["task.create"], "field": "task.version"}]}"#,
    )
    .unwrap();
    let f = dir.path().join("mine.json");
    std::fs::write(&f, r#"{"dialect": "mine.dialect.json"}"#).unwrap();
    let (code, _, err) = run(conform()
        .args(["run", "--cases", "1", "--steps", "1", "--profile"])
        .arg(&f));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("mine.dialect.json") && err.contains("dialect rule 2 (drop task.version)"),
        "{err}"
    );
}
