//! `conform run --partition K/N` and `conform merge-reports`: the N jobs of
//! a partitioned run hold the cases of the whole run, each once and each
//! the same as in the whole run, and their merged report is the whole
//! run's report (times aside).

use std::path::Path;
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

/// `conform run` of seed 5, 7 cases of 30 steps, against `url`, with
/// `extra` options; the report it wrote.
fn run_to(url: &str, dir: &Path, name: &str, extra: &[&str]) -> (i32, serde_json::Value) {
    let report = dir.join(format!("{name}.json"));
    let out = dir.join(name);
    let (code, _, err) = run(conform()
        .args(["run", "--target", url, "--no-progress", "--no-shrink"])
        .args(["--seed", "5", "--cases", "7", "--steps", "30"])
        .arg("--out-dir")
        .arg(&out)
        .arg("--report")
        .arg(&report)
        .args(extra));
    assert!(code == 0 || code == 1, "{name}: exit {code}: {err}");
    let text = std::fs::read_to_string(&report).expect("the report");
    (code, serde_json::from_str(&text).unwrap())
}

/// What a case report says about the case itself: everything but the time
/// and where its files went.
fn cases(r: &serde_json::Value) -> Vec<serde_json::Value> {
    r["case_reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            serde_json::json!([
                c["case"],
                c["seed"],
                c["steps"],
                c["latitude"],
                c["outcome"],
                c["step"],
                c["class"]
            ])
        })
        .collect()
}

#[test]
fn the_jobs_of_a_partitioned_run_merge_into_the_whole_run() {
    // A planted bug some cases find and some do not, so outcomes differ.
    let (mut server, url) = common::spawn_listening(conform().args([
        "serve",
        "--port",
        "0",
        "--mutant",
        "acquire-keeps-version",
    ]));
    let dir = tempfile::tempdir().unwrap();
    let (whole_code, whole) = run_to(&url, dir.path(), "whole", &[]);
    let mut files = Vec::new();
    for k in 1..=3 {
        let p = format!("{k}/3");
        let (_, part) = run_to(&url, dir.path(), &format!("part{k}"), &["--partition", &p]);
        assert_eq!(part["partition"], p.as_str());
        let held: Vec<u64> = part["case_reports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["case"].as_u64().unwrap())
            .collect();
        let want: Vec<u64> = (0..7).filter(|c| c % 3 == k - 1).collect();
        assert_eq!(held, want, "partition {p}");
        files.push(dir.path().join(format!("part{k}.json")));
    }
    server.kill().unwrap();
    let outcomes: std::collections::BTreeSet<String> =
        cases(&whole).iter().map(|c| c[4].to_string()).collect();
    assert!(
        outcomes.len() > 1,
        "the bug shows in some cases only: {outcomes:?}"
    );

    let merged_path = dir.path().join("merged.json");
    let junit = dir.path().join("merged.xml");
    let (code, out, err) = run(conform()
        .arg("merge-reports")
        .args(&files)
        .arg("--report")
        .arg(&merged_path)
        .arg("--junit")
        .arg(&junit));
    assert_eq!(
        code, whole_code,
        "the merged verdict is the whole run's: {out}{err}"
    );
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged_path).unwrap()).unwrap();
    assert_eq!(cases(&merged), cases(&whole));
    for field in [
        "seed",
        "cases",
        "steps",
        "coverage_hit",
        "coverage_total",
        "coverage_missed",
        "latitude",
        "divergences",
        "faults",
        "known",
        "possibly_fixed",
        "skipped_components",
        "validation",
        "profile",
        "baseline",
    ] {
        assert_eq!(merged[field], whole[field], "{field}");
    }
    assert!(
        merged.get("partition").is_none(),
        "a merged report is the whole run"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase").count(), 7, "{xml}");

    // Not one whole run: a partition missing, or given twice.
    let (code, _, err) = run(conform().arg("merge-reports").args(&files[..2]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no report of partition 3/3"), "{err}");
    let (code, _, err) = run(conform().arg("merge-reports").args(&files).arg(&files[0]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("partition 1/3 is given twice"), "{err}");
    // The whole run's report is no partition's.
    let whole_path = dir.path().join("whole.json");
    let (code, _, err) = run(conform().arg("merge-reports").arg(&whole_path));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not the report of a partitioned run"), "{err}");
}
