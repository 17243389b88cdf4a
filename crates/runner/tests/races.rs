//! The planted races of `conform serve --race`, over real HTTP:
//!
//! - under each race, its witness (the prefix one step after another,
//!   then its operations from threads at once) gives responses and a
//!   final `debug.snap` that no sequential order of the operations gives
//!   on the model, latitude included (`common/explain.rs`);
//! - without the race, some order explains every attempt (the control:
//!   the helper is not blind);
//! - alone, a racy handler answers as the spec does: a sequential run
//!   against a server with every race planted is green;
//! - the CLI lists the races and refuses unknown names.

use std::process::Command;
use std::sync::Barrier;
use std::time::Duration;

use runner::serve::races::{self, Witness};
use runner::serve::{spawn, ServeOptions, ServerHandle};
use runner::target::{HttpTarget, Target};

mod common;
#[path = "common/explain.rs"]
mod explain;

use explain::{explaining_order, Observed};

/// Attempts per race before giving up: a race shows only when the
/// operations meet inside its window.
const ATTEMPTS: usize = 40;

fn client(url: &str) -> HttpTarget {
    HttpTarget::new(url, Duration::from_secs(5)).expect("a loopback url")
}

fn serve(races: &[&str]) -> ServerHandle {
    spawn(ServeOptions {
        races: races.iter().map(|r| r.to_string()).collect(),
        ..ServeOptions::default()
    })
    .expect("the server starts")
}

/// How far apart the concurrent operations are sent: the racy one first,
/// each other one this much later, well inside the default window (2 ms),
/// so they overlap it and come after its check.
const STAGGER: Duration = Duration::from_micros(400);

/// Send `w` once: wipe, the prefix in order, then the concurrent
/// operations from one thread (and one connection) each, released together
/// and staggered by [`STAGGER`].
fn observe(url: &str, w: &Witness) -> Observed {
    let mut t = client(url);
    t.start().expect("debug mode");
    for s in &w.prefix {
        t.send(s).expect("prefix step");
    }
    let mut clients: Vec<HttpTarget> = w.concurrent.iter().map(|_| client(url)).collect();
    for c in &mut clients {
        c.snap().expect("the connection is open");
    }
    let go = Barrier::new(clients.len());
    let responses = std::thread::scope(|scope| {
        let handles: Vec<_> = clients
            .iter_mut()
            .zip(&w.concurrent)
            .enumerate()
            .map(|(i, (c, step))| {
                let go = &go;
                scope.spawn(move || {
                    go.wait();
                    std::thread::sleep(STAGGER * i as u32);
                    c.send(step).expect("concurrent step")
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    let snap = t.snap().expect("snap").normalized();
    Observed { responses, snap }
}

#[test]
fn under_each_race_its_witness_shows_what_no_order_explains() {
    let mut table = Vec::new();
    for race in races::all() {
        let server = serve(&[race.name]);
        let w = (race.witness)();
        let found = (1..=ATTEMPTS).find(|_| {
            let o = observe(&server.url(), &w);
            explaining_order(&w.prefix, &w.concurrent, &o).is_none()
        });
        let Some(attempts) = found else {
            panic!(
                "{}: every one of {ATTEMPTS} attempts had an order",
                race.name
            );
        };
        table.push(format!(
            "{:<32} unexplained at attempt {attempts}",
            race.name
        ));
    }
    println!("{}", table.join("\n"));
}

#[test]
fn without_a_race_some_order_explains_every_witness() {
    let server = serve(&[]);
    for race in races::all() {
        let w = (race.witness)();
        for attempt in 0..ATTEMPTS / 4 {
            let o = observe(&server.url(), &w);
            assert!(
                explaining_order(&w.prefix, &w.concurrent, &o).is_some(),
                "{} attempt {attempt}: the plain server gave {o:?}",
                race.name
            );
        }
    }
}

#[test]
fn a_server_with_every_race_answers_a_sequential_run_as_the_spec() {
    let names: Vec<&str> = races::all().map(|r| r.name).collect();
    let server = spawn(ServeOptions {
        races: names.iter().map(|n| n.to_string()).collect(),
        race_window: Duration::from_micros(100),
        ..ServeOptions::default()
    })
    .expect("the server starts");
    let dir = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    let summary = runner::run::run(&common::config(&server.url(), dir.path(), 6, 60), &mut out)
        .expect("a loopback target");
    assert_eq!(summary.divergences, 0, "{}", String::from_utf8_lossy(&out));
    assert_eq!(summary.faults, 0, "{}", String::from_utf8_lossy(&out));
    assert_eq!(summary.steps, 6 * 60);
}

/// A racy handler that writes nothing (a callback on a missing promise,
/// a tick with nothing due) has nothing a rival could overwrite: it
/// answers at once instead of holding its window open, here 60 s.
#[test]
fn a_racy_handler_that_writes_nothing_answers_at_once() {
    use deviate::families::witness::{at, callback, T0};
    let server = spawn(ServeOptions {
        races: vec!["race-promise.register_callback".into(), "race-tick".into()],
        race_window: Duration::from_secs(60),
        ..ServeOptions::default()
    })
    .expect("the server starts");
    let mut t = HttpTarget::new(&server.url(), Duration::from_secs(20)).expect("a loopback url");
    t.start().expect("debug mode");
    let res = t
        .send(&at(T0, callback("a.1", "a")))
        .expect("answered before the client's 20 s timeout");
    assert_eq!(res.expect("a response")["head"]["status"], 404);
    t.send(&gen::Step {
        now: T0,
        op: gen::Op::Tick,
    })
    .expect("answered before the client's 20 s timeout");
}

fn conform() -> Command {
    Command::new(env!("CARGO_BIN_EXE_conform"))
}

#[test]
fn the_cli_lists_races_and_refuses_unknown_ones() {
    let o = conform().args(["serve", "--list-races"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    for r in races::all() {
        assert!(out.contains(r.name) && out.contains(r.spec), "{out}");
    }
    let o = conform()
        .args(["serve", "--race", "race-nothing"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("unknown race `race-nothing`") && err.contains("race-tick"),
        "{err}"
    );
}
