//! A tick under concurrency is an interval of firings, not one point: it
//! reads what is due where it starts, and each of those has fired by where
//! it ends; what other operations arm while it runs it need not fire
//! (ARCHITECTURE.md, "The concurrent run"). The histories are resonate-pg's
//! (`traces/histories/pg/`, triaged in `traces/divergences/README.md`):
//! two overlapping ticks, one of which read the promise timeouts before the
//! other's schedule firing armed a due one, are linearizable; a tick that
//! leaves what was due at its start unfired, or a lease expired that was
//! renewed, still is not.

use std::path::PathBuf;

use deviate::Deviant;
use model::state::ServerConfig;
use runner::baseline::Baseline;
use runner::lin::{self, history, LinOptions, Verdict};
use serde_json::Value;

fn text(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces/histories/pg")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

fn verdict(text: &str) -> Verdict {
    let h = history::parse(text).unwrap();
    let (_, deviations) = Baseline::load("pg").unwrap();
    let model = Deviant::new(
        ServerConfig {
            retry_timeout: h.header.retry_timeout(),
        },
        deviations,
    );
    lin::check(&h, model, &[], LinOptions::default()).verdict
}

/// The history's lines, with `edit` applied to each parsed line (`None`
/// drops it).
fn edited(text: &str, mut edit: impl FnMut(Value) -> Option<Value>) -> String {
    text.lines()
        .filter_map(|l| edit(serde_json::from_str(l).unwrap()))
        .map(|v| v.to_string() + "\n")
        .collect()
}

const OVERLAPPING: &str = "01-overlapping-ticks.history.ndjson";

#[test]
fn overlapping_ticks_need_not_fire_what_the_other_armed_meanwhile() {
    // Epoch 1: two ticks at once; schedule s1 catches up two occurrences,
    // the first already past its deadline, and neither tick times it out:
    // the one that fired s1 had read its promise timeouts before, and so
    // had the other.
    let v = verdict(&text(OVERLAPPING));
    assert!(matches!(v, Verdict::Linearizable), "{v:?}");
}

#[test]
fn a_tick_must_still_fire_what_was_due_where_it_started() {
    let t = text(OVERLAPPING);
    // The state before the ticks (epoch 0's barrier) as epoch 1's: the
    // due schedule never fired, though a tick started after it was due.
    let before = t
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["type"] == "barrier" && v["epoch"] == 0)
        .unwrap()["snap"]
        .clone();
    let unfired = |drop_second: bool| {
        edited(&t, |mut v| {
            if drop_second && v["type"] == "op" && v["id"] == 2 {
                return None;
            }
            if v["type"] == "barrier" && v["epoch"] == 1 {
                v["snap"] = before.clone();
            }
            Some(v)
        })
    };
    for drop_second in [true, false] {
        let v = verdict(&unfired(drop_second));
        assert!(
            matches!(v, Verdict::NotLinearizable(_)),
            "one tick alone: {drop_second}: {v:?}"
        );
    }
}

#[test]
fn a_lease_expired_after_its_renewal_is_still_not_linearizable() {
    // resonate-pg's stale scan: a tick expires the lease a concurrent
    // task.create has just renewed (a server bug, triaged).
    let v = verdict(&text("02-lease-expired-on-a-stale-scan.history.ndjson"));
    let Verdict::NotLinearizable(f) = v else {
        panic!("{v:?}")
    };
    assert_eq!(f.epoch, 14);
}
