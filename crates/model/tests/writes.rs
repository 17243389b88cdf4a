//! `State::writes_since`, `State::apply_writes` and
//! `State::fingerprint_since` over every step of the golden corpus (every
//! reachable branch of every handler and timer, and every planted bug's
//! witness), plus hand-made cases:
//!
//! - a step's writes, rolled back and written blindly, give the state the
//!   step gave, and a machine carried on from that written state answers
//!   as one that applied every step itself (so the indexes are right);
//! - writes applied over a state that changed meanwhile clobber exactly
//!   the keys they name and leave every other key as it was;
//! - a fingerprint from one mark is the same for two orders of two steps
//!   exactly when the two orders end in the same state.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use model::api::Request;
use model::machine::Machine;
use model::state::{State, Writes, LEASE, RETRY};
use model::types::{TaskState, Time};
use model::view::StateView;

#[path = "common/mod.rs"]
mod common;

use common::*;

/// A step of a golden file: a request, or a tick (`None`).
type Step = (Time, Option<Request>);

/// Every `.ndjson` file under `traces/golden`, witnesses included.
fn golden_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("golden directory") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "ndjson") {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/golden");
    let mut out = Vec::new();
    walk(&root, &mut out);
    out.sort();
    assert!(out.len() > 60, "the golden corpus is there: {}", out.len());
    out
}

/// The steps of a golden file, decoded with the model's own codec.
fn steps(path: &Path) -> Vec<Step> {
    let text = std::fs::read_to_string(path).expect("golden file");
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json line"))
        .filter(|v| v["kind"] != "header")
        .map(|v| {
            let now = v["now"].as_u64().expect("now");
            let kind = v["kind"].as_str().expect("kind");
            let req = (kind != "debug.tick").then(|| {
                model::wire::decode_request(kind, &v["req"])
                    .unwrap_or_else(|e| panic!("{}: {kind}: {e}", path.display()))
            });
            (now, req)
        })
        .collect()
}

/// Apply one step; a request's response is returned as debug text.
fn apply(m: &mut Machine, (now, req): &Step) -> String {
    let out = match req {
        Some(r) => format!("{:?}", m.apply(r, *now)),
        None => format!("{:?}", m.tick(*now)),
    };
    m.clear_hits();
    out
}

#[test]
fn writes_of_every_golden_step_reproduce_it_and_keep_the_indexes() {
    let mut checked = 0;
    for path in golden_files() {
        let trace = steps(&path);
        // `m` carries on from each step's blind write; `twin` applies every
        // step itself and never journals.
        let mut m = Machine::default();
        let mut twin = Machine::default();
        for (i, step) in trace.iter().enumerate() {
            let before = m.state.clone();
            let mark = m.state.checkpoint();
            let res = apply(&mut m, step);
            let after = m.state.clone();
            let writes = m.state.writes_since(mark);
            m.state.rollback(mark);
            assert_eq!(m.state, before, "{}:{i}: rollback", path.display());
            m.state.apply_writes(&writes);
            let at = format!("{}:{i}: {:?}", path.display(), step);
            assert_eq!(m.state, after, "{at}: written state");
            assert_eq!(StateView::of(&m.state), StateView::of(&after), "{at}: view");
            // The blind write is an effect like any other: it rolls back.
            m.state.rollback(mark);
            assert_eq!(m.state, before, "{at}: rollback of the blind write");
            // Carry on from the blind write itself (unjournaled, so no
            // rollback can mend an index it left wrong).
            m.state.commit();
            m.state.apply_writes(&writes);
            assert_eq!(res, apply(&mut twin, step), "{at}: response");
            // The deadline index: everything armed, in due order.
            assert_eq!(m.due(Time::MAX), twin.due(Time::MAX), "{at}: due index");
            checked += 1;
        }
        assert_eq!(StateView::of(&m.state), StateView::of(&twin.state));
    }
    assert!(checked > 300, "steps checked: {checked}");
}

/// Every key's value in one table of a state, for the clobber check.
#[derive(Debug, PartialEq)]
struct Tables {
    promises: BTreeMap<String, String>,
    tasks: BTreeMap<String, String>,
    schedules: BTreeMap<String, String>,
    promise_timeouts: BTreeMap<String, Time>,
    task_timeouts: BTreeMap<String, [Option<Time>; 2]>,
    schedule_timeouts: BTreeMap<String, Time>,
    outbox: BTreeMap<String, String>,
}

impl Tables {
    fn of(s: &State) -> Tables {
        let mut task_timeouts: BTreeMap<String, [Option<Time>; 2]> = BTreeMap::new();
        for kind in [RETRY, LEASE] {
            for (id, t) in s.task_timeouts(kind).sorted() {
                task_timeouts.entry(id.to_string()).or_default()[kind] = Some(t);
            }
        }
        let owned = |v: Vec<(&str, Time)>| v.into_iter().map(|(k, t)| (k.to_string(), t)).collect();
        Tables {
            promises: s
                .promises()
                .map(|p| (p.id.clone(), format!("{p:?}")))
                .collect(),
            tasks: s
                .tasks()
                .map(|t| (t.id.clone(), format!("{t:?}")))
                .collect(),
            schedules: s
                .schedules()
                .map(|x| (x.id.clone(), format!("{x:?}")))
                .collect(),
            promise_timeouts: owned(s.promise_timeouts().sorted()),
            task_timeouts,
            schedule_timeouts: owned(s.schedule_timeouts().sorted()),
            outbox: s
                .outbox()
                .map(|(k, e)| (k.clone(), format!("{e:?}")))
                .collect(),
        }
    }

    /// `self` with every key of `w` overwritten (or removed).
    fn overwritten(mut self, w: &Writes) -> Tables {
        fn put<T>(t: &mut BTreeMap<String, T>, k: &str, v: Option<T>) {
            match v {
                Some(v) => t.insert(k.to_string(), v),
                None => t.remove(k),
            };
        }
        let dbg = |v: &Option<_>| v.as_ref().map(|x| format!("{x:?}"));
        for (k, v) in &w.promises {
            put(&mut self.promises, k, dbg(v));
        }
        for (k, v) in &w.tasks {
            put(&mut self.tasks, k, v.as_ref().map(|x| format!("{x:?}")));
        }
        for (k, v) in &w.schedules {
            put(&mut self.schedules, k, v.as_ref().map(|x| format!("{x:?}")));
        }
        for (k, v) in &w.promise_timeouts {
            put(&mut self.promise_timeouts, k, *v);
        }
        for (k, v) in &w.task_timeouts {
            put(
                &mut self.task_timeouts,
                k,
                v.iter().any(Option::is_some).then_some(*v),
            );
        }
        for (k, v) in &w.schedule_timeouts {
            put(&mut self.schedule_timeouts, k, *v);
        }
        for (k, v) in &w.outbox {
            put(&mut self.outbox, k, v.as_ref().map(|x| format!("{x:?}")));
        }
        self
    }
}

#[test]
fn blind_writes_over_a_changed_state_clobber_exactly_their_keys() {
    let mut clobbered = 0;
    for path in golden_files() {
        let trace = steps(&path);
        let mut m = Machine::default();
        for pair in trace.windows(2) {
            let (x, y) = (&pair[0], &pair[1]);
            // X's writes, computed at the state before X …
            let mark = m.state.checkpoint();
            apply(&mut m, x);
            let writes = m.state.writes_since(mark);
            m.state.rollback(mark);
            // … applied blindly after Y ran instead.
            apply(&mut m, y);
            let changed = Tables::of(&m.state);
            m.state.apply_writes(&writes);
            let at = format!("{}: {x:?} over {y:?}", path.display());
            assert_eq!(Tables::of(&m.state), changed.overwritten(&writes), "{at}");
            m.state.rollback(mark);
            m.state.commit();
            apply(&mut m, x);
            clobbered += usize::from(!writes.is_empty());
        }
    }
    assert!(clobbered > 150, "pairs with writes: {clobbered}");
}

/// Two acquires of one pending task, each checked on the state before
/// either: both win, and the later write is all that remains of the task.
#[test]
fn two_racing_acquires_both_win_and_the_last_write_stays() {
    let t0 = 1_000;
    let mut m = setup(&[
        (t0, promise_create("a", t0 + 60_000, target())),
        (t0, promise_create("b", t0 + 60_000, target())),
    ]);
    let mark = m.state.checkpoint();
    let first = m.apply(&task_acquire("a", 0, "p1", 10_000), t0);
    let w1 = m.state.writes_since(mark);
    m.state.rollback(mark);
    let second = m.apply(&task_acquire("a", 0, "p2", 20_000), t0);
    let w2 = m.state.writes_since(mark);
    m.state.rollback(mark);
    assert_eq!(first.status(), 200);
    assert_eq!(second.status(), 200);
    // The task and its timeouts, and nothing else.
    assert_eq!(w1.tasks.keys().collect::<Vec<_>>(), ["a"]);
    assert_eq!(w1.task_timeouts.keys().collect::<Vec<_>>(), ["a"]);
    assert!(w1.promises.is_empty() && w1.outbox.is_empty());
    // Meanwhile, b is acquired; then both writes land, p2's last.
    m.apply(&task_acquire("b", 0, "p3", 5_000), t0);
    m.state.apply_writes(&w1);
    m.state.apply_writes(&w2);
    m.state.commit();
    let v = StateView::of(&m.state);
    let a = v.tasks.iter().find(|t| t.id == "a").unwrap();
    assert_eq!(
        (a.state, a.version, a.pid.as_deref()),
        (TaskState::Acquired, 1, Some("p2"))
    );
    let b = v.tasks.iter().find(|t| t.id == "b").unwrap();
    assert_eq!(
        b.pid.as_deref(),
        Some("p3"),
        "an unwritten key is left alone"
    );
    assert_eq!(m.state.task_timeouts(LEASE).get("a"), Some(t0 + 20_000));
    assert_eq!(m.state.task_timeouts(LEASE).get("b"), Some(t0 + 5_000));
}

/// The fingerprint after `first` then `second`, from one mark, and the
/// state's view; the machine is left as before.
fn fingerprint_after(m: &mut Machine, steps: &[&Step]) -> (u64, StateView) {
    let mark = m.state.checkpoint();
    for s in steps {
        apply(m, s);
    }
    let out = (m.state.fingerprint_since(mark), StateView::of(&m.state));
    assert_eq!(
        out.0,
        m.state.fingerprint_since(mark),
        "a fingerprint is stable"
    );
    m.state.rollback(mark);
    out
}

#[test]
fn fingerprints_agree_exactly_when_two_orders_end_in_one_state() {
    let (mut same, mut different) = (0, 0);
    for path in golden_files() {
        let trace = steps(&path);
        let mut m = Machine::default();
        for pair in trace.windows(2) {
            // Both at the later time, so either may come first.
            let now = pair[1].0;
            let x = (now, pair[0].1.clone());
            let y = (now, pair[1].1.clone());
            let (fxy, vxy) = fingerprint_after(&mut m, &[&x, &y]);
            let (fyx, vyx) = fingerprint_after(&mut m, &[&y, &x]);
            let at = format!("{}: {x:?} and {y:?}", path.display());
            if vxy == vyx {
                assert_eq!(fxy, fyx, "{at}: one state, two fingerprints");
                same += 1;
            } else {
                assert_ne!(fxy, fyx, "{at}: two states, one fingerprint");
                different += 1;
            }
            m.state.commit();
            apply(&mut m, &pair[0]);
        }
    }
    assert!(
        same > 50 && different > 50,
        "same {same}, different {different}"
    );
}

#[test]
fn a_fingerprint_names_what_changed_not_what_was_written() {
    let t0 = 1_000;
    let mut m = setup(&[(t0, promise_create("a", t0 + 60_000, plain()))]);
    let listen = (t0, Some(register_listener("a", "http://l")));
    let (once, _) = fingerprint_after(&mut m, &[&listen]);
    assert_ne!(once, 0);
    m.state.commit();
    apply(&mut m, &listen);
    // Registering the same listener again writes the promise unchanged.
    let mark = m.state.checkpoint();
    apply(&mut m, &listen);
    assert!(!m.state.writes_since(mark).is_empty(), "it was written");
    assert_eq!(m.state.fingerprint_since(mark), 0, "nothing changed");
    m.state.rollback(mark);
    // Commuting creates from one mark: one fingerprint; another deadline
    // makes another.
    let b = (t0, Some(promise_create("b", t0 + 60_000, target())));
    let c = (t0, Some(promise_create("c", t0 + 60_000, timer())));
    let c2 = (t0, Some(promise_create("c", t0 + 60_001, timer())));
    let (bc, _) = fingerprint_after(&mut m, &[&b, &c]);
    let (cb, _) = fingerprint_after(&mut m, &[&c, &b]);
    let (bc2, _) = fingerprint_after(&mut m, &[&b, &c2]);
    assert_eq!(bc, cb);
    assert_ne!(bc, bc2);
    // The same in every process and build: a fixed hasher, pinned here
    // (it changes only if std's `Hash` of strings, options or integers does).
    assert_eq!(
        bc, 0x9435_00ab_dd1f_fc74,
        "pinned fingerprint of creating b and c"
    );
    let keys: BTreeSet<_> = {
        let mark = m.state.checkpoint();
        apply(&mut m, &b);
        let w = m.state.writes_since(mark);
        m.state.rollback(mark);
        w.promises.into_keys().chain(w.tasks.into_keys()).collect()
    };
    assert_eq!(keys, BTreeSet::from(["b".to_string()]));
}
