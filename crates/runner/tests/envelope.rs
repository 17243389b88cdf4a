//! The response envelope is part of the protocol. A loopback proxy in
//! front of the reference server (`conform serve`) rewrites one thing of
//! every answer; `conform run` must be red for each, with the exit code of
//! its class: a well-formed answer with a wrong `corrId`, `kind`,
//! `version` or HTTP status is the server departing from the protocol (a
//! divergence, exit 1, its class naming the field); a 5xx, or a debug
//! answer that is not 200, is a target fault (exit 3).

mod common;

use std::process::Command;

use serde_json::{json, Value};

/// `conform run` (seed 1, 5 × 30) against the reference server behind a
/// proxy rewriting every answer with `rewrite`: the exit code and stdout.
fn run_behind(rewrite: common::Rewrite) -> (i32, String) {
    let upstream = runner::serve::spawn(runner::serve::ServeOptions::default()).unwrap();
    let url = common::rewriting_proxy(&upstream.url(), rewrite);
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["run", "--seed", "1", "--cases", "5", "--steps", "30"])
        .args(["--no-progress", "--no-shrink", "--target", &url])
        .arg("--out-dir")
        .arg(dir.path())
        .output()
        .expect("conform runs");
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    (o.status.code().unwrap_or(-1), out)
}

fn assert_divergence(rewrite: common::Rewrite, class: &str, shown: &str) {
    let (code, out) = run_behind(rewrite);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(class), "class {class:?} in:\n{out}");
    assert!(out.contains(shown), "{shown:?} in:\n{out}");
    assert!(!out.contains("TARGET FAULT"), "{out}");
}

fn assert_fault(rewrite: common::Rewrite, message: &str) {
    let (code, out) = run_behind(rewrite);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("TARGET FAULT"), "{out}");
    assert!(out.contains(message), "{message:?} in:\n{out}");
}

#[test]
fn a_rewritten_corr_id_is_a_divergence_naming_it() {
    assert_divergence(
        |_, _, env| env["head"]["corrId"] = json!("rewritten"),
        "envelope:corrId",
        "answered corrId \"rewritten\", expected \"conform-",
    );
}

#[test]
fn a_rewritten_kind_is_a_divergence_naming_it() {
    assert_divergence(
        |_, _, env| env["kind"] = json!("promise.rewritten"),
        "envelope:kind",
        "answered kind \"promise.rewritten\"",
    );
}

#[test]
fn another_protocol_version_is_a_divergence_naming_it() {
    assert_divergence(
        |_, _, env| env["head"]["version"] = json!("1999-01-01"),
        "envelope:version",
        "answered version \"1999-01-01\", expected \"2026-04-01\"",
    );
}

#[test]
fn an_http_status_other_than_the_envelopes_is_a_divergence() {
    // Every answer as HTTP 200: the first refusal (404, 409, …) departs.
    assert_divergence(
        |_, http, _| *http = 200,
        "envelope:httpStatus",
        "answered httpStatus 200, expected 4",
    );
}

#[test]
fn a_snapshot_with_a_wrong_corr_id_is_a_divergence_of_its_step() {
    // Only `debug.snap`: the typed fast path judges its head too.
    assert_divergence(
        |kind, _, env| {
            if kind == "debug.snap" {
                env["head"]["corrId"] = json!("rewritten");
            }
        },
        "envelope:debug.snap.corrId",
        "debug.snap answered corrId \"rewritten\"",
    );
}

#[test]
fn http_500_with_a_valid_envelope_is_a_target_fault() {
    assert_fault(|_, http, _| *http = 500, "HTTP 500, head.status 200");
}

#[test]
fn a_snapshot_answering_404_is_a_target_fault() {
    assert_fault(
        |kind, http, env: &mut Value| {
            if kind == "debug.snap" {
                env["head"]["status"] = json!(404);
                *http = 404;
            }
        },
        "debug.snap answered 404",
    );
}

#[test]
fn the_unrewritten_proxy_is_green() {
    // The proxy itself changes nothing: what the tests above see is the
    // rewrite alone.
    let (code, out) = run_behind(|_, _, _| {});
    assert_eq!(code, 0, "{out}");
}
