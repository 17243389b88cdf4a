//! Test helpers: a run configuration against a URL, and a fake target that
//! misbehaves on purpose (garbage bodies, hangs, dying mid-run).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use runner::profile::Profile;
use runner::repro::Reach;
use runner::run::RunConfig;

/// A run of `cases` × `steps` against `url`, writing traces under `dir`.
pub fn config(url: &str, dir: &Path, cases: u64, steps: usize) -> RunConfig {
    RunConfig {
        target: url.to_string(),
        reach: Reach {
            target: Some(url.to_string()),
            profile: None,
            baseline: None,
            retry_timeout: Profile::default().retry_timeout,
            timeout_ms: 500,
            check_state: true,
            allow_remote: false,
            pipeline: runner::target::DEFAULT_PIPELINE,
        },
        seed: 7,
        cases,
        only_case: None,
        partition: None,
        steps,
        profile: Profile::default(),
        deviations: Vec::new(),
        baseline: None,
        fail_fast: true,
        out_dir: dir.to_path_buf(),
        shrink: false,
        shrink_time: Duration::from_secs(5),
        progress: false,
        probe_pct: 0,
    }
}

/// How the fake target misbehaves once the handshake is over.
#[derive(Clone, Copy, Debug)]
pub enum Misbehave {
    /// Answer `not json` with HTTP 200.
    Garbage,
    /// Never answer.
    Hang,
    /// Close the connection without answering and stop listening.
    Die,
    /// Answer a 500 envelope.
    ServerError,
    /// Answer JSON that is not an envelope.
    NotEnvelope,
    /// Answer everything, until a `debug.snap` (from request number
    /// `after` on): close the connection without answering it and stop
    /// listening.
    DieAtSnap,
}

/// A fake target on an ephemeral loopback port: it answers `debug.*` like a
/// debug-mode server and misbehaves on request number `after` and later.
pub fn fake_target(mode: Misbehave, after: usize) -> String {
    proxy(None, mode, after).0
}

/// [`fake_target`], with the count of requests it has read (each one
/// once, however it was answered).
pub fn counted_fake_target(mode: Misbehave, after: usize) -> (String, Arc<AtomicUsize>) {
    proxy(None, mode, after)
}

/// A proxy in front of `upstream` that forwards every request until request
/// number `after`, then misbehaves: a server failing mid-run, reproducibly.
pub fn failing_proxy(upstream: &str, mode: Misbehave, after: usize) -> String {
    proxy(Some(upstream.to_string()), mode, after).0
}

fn proxy(upstream: Option<String>, mode: Misbehave, after: usize) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let count = count.clone();
            let dead = serve_conn(conn, upstream.as_deref(), mode, after, &count);
            if dead {
                return;
            }
        }
    });
    (url, counted)
}

fn forward(upstream: &str, body: &[u8]) -> (u16, String) {
    let client = reqwest::blocking::Client::new();
    let r = client
        .post(format!("{upstream}/"))
        .body(body.to_vec())
        .header("content-type", "application/json")
        .send()
        .expect("upstream");
    let status = r.status().as_u16();
    (status, r.text().unwrap_or_default())
}

fn serve_conn(
    mut conn: TcpStream,
    upstream: Option<&str>,
    mode: Misbehave,
    after: usize,
    count: &AtomicUsize,
) -> bool {
    let mut reader = BufReader::new(conn.try_clone().expect("clone"));
    loop {
        let Some(body) = read_request(&mut reader) else {
            return false;
        };
        let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let kind = req["kind"].as_str().unwrap_or("").to_string();
        let corr = req["head"]["corrId"].clone();
        let n = count.fetch_add(1, Ordering::SeqCst);
        let behaves = match mode {
            Misbehave::DieAtSnap => kind != "debug.snap" || n < after,
            _ => kind.starts_with("debug.") || n < after,
        };
        let (status, text) = if let (Some(up), true) = (upstream, behaves) {
            forward(up, &body)
        } else if behaves {
            (200, serde_json::json!({"kind": kind, "head": {"corrId": corr, "status": 200, "version": "2026-04-01"}, "data": {}}).to_string())
        } else {
            match mode {
                Misbehave::Garbage => (200, "not json".to_string()),
                Misbehave::Hang => {
                    std::thread::sleep(Duration::from_secs(5));
                    return false;
                }
                Misbehave::Die | Misbehave::DieAtSnap => return true,
                Misbehave::ServerError => (500, serde_json::json!({"kind": kind, "head": {"corrId": corr, "status": 500, "version": "2026-04-01"}, "data": "boom"}).to_string()),
                Misbehave::NotEnvelope => (200, "[1,2,3]".to_string()),
            }
        };
        if respond(&mut conn, status, &text).is_err() {
            return false;
        }
    }
}

/// One HTTP request's body off a keep-alive connection (`None` at its end).
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Vec<u8>> {
    let mut len = 0usize;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some(v) = l.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

/// Answer with `status` and a JSON `text`.
fn respond(conn: &mut TcpStream, status: u16, text: &str) -> std::io::Result<()> {
    let resp = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{text}",
        text.len()
    );
    conn.write_all(resp.as_bytes())
}

/// How a rewriting proxy changes an answer: given the request's kind, the
/// HTTP status and the response envelope, both changeable.
pub type Rewrite = fn(&str, &mut u16, &mut serde_json::Value);

/// A proxy in front of `upstream` that passes every request on and
/// rewrites every answer with `rewrite` (a server departing from the
/// protocol's envelope, on purpose).
pub fn rewriting_proxy(upstream: &str, rewrite: Rewrite) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let upstream = upstream.to_string();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let upstream = upstream.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().expect("clone"));
                while let Some(body) = read_request(&mut reader) {
                    let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                    let kind = req["kind"].as_str().unwrap_or("").to_string();
                    let (mut status, text) = forward(&upstream, &body);
                    let mut env: serde_json::Value =
                        serde_json::from_str(&text).expect("upstream answers JSON");
                    rewrite(&kind, &mut status, &mut env);
                    if respond(&mut conn, status, &env.to_string()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// A loopback URL where nothing listens.
pub fn refused_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", l.local_addr().expect("addr"));
    drop(l);
    url
}

/// Start a server that prints `listening on URL` first (`conform serve`,
/// the TypeScript shim); the child and the URL.
pub fn spawn_listening(cmd: &mut std::process::Command) -> (std::process::Child, String) {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the server starts");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().expect("piped"))
        .read_line(&mut line)
        .expect("the server prints its address");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("printed {line:?}, not its address"))
        .to_string();
    (child, url)
}
