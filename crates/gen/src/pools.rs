//! Id, address and duration pools, and sorted views of the model state.
//!
//! Ids follow the servers' origin rule (origin = id up to the first `.`):
//! roots are `a`, `b`, … and their children `a.1`, `a.2`, …, so any two
//! promises of one origin may await each other. Fresh ids are derived from
//! the state (the first unused one), never from a counter, so a step means
//! the same thing when [`crate::repair`] replays it on another history.
//! The model keeps its objects in hash maps; every list here is sorted so
//! that choices are deterministic per seed.

use model::machine::Machine;
use model::state::{PromiseObject, TaskObject};
use model::types::{PromiseState, Tags, TaskState, Time};

use crate::dice::Dice;
use proptest::test_runner::TestRng;

/// The tag naming a promise's task address.
pub(crate) const TARGET: &str = model::state::TARGET;
/// The timer tag.
pub(crate) const TIMER: &str = model::state::TIMER;
/// The delayed-dispatch tag.
pub(crate) const DELAY: &str = model::state::DELAY;

/// Claimants.
pub(crate) const PIDS: [&str; 2] = ["p1", "p2"];
/// Listener addresses (valid for `parse_address`).
pub(crate) const LISTENERS: [&str; 2] = ["http://listener.local/1", "poll://any@listeners"];
/// Schedule ids (no `.`).
pub(crate) const SCHEDULES: [&str; 3] = ["s1", "s2", "s3"];
/// Dialect-neutral cron expressions (5 fields, every 1 or 2 minutes).
pub(crate) const CRONS: [&str; 2] = ["* * * * *", "*/2 * * * *"];
/// Promise id template of every generated schedule: the origin is the
/// schedule id, so its promises share an origin with nothing else.
pub(crate) const TEMPLATE: &str = "{{.id}}.{{.timestamp}}";

/// The origin of an id: up to the first `.`.
pub(crate) use model::wire::validate::origin;

/// A task address for promises of `origin`.
pub(crate) fn target(rng: &mut TestRng, origin: &str) -> String {
    if rng.chance(70) {
        format!("http://worker.local/{origin}")
    } else {
        "poll://any@workers".to_string()
    }
}

/// The `i`-th root id: `a` … `z`, then `r26`, `r27`, ….
fn root(i: usize) -> String {
    if i < 26 {
        ((b'a' + i as u8) as char).to_string()
    } else {
        format!("r{i}")
    }
}

/// The first root id with no promise.
pub(crate) fn fresh_root(m: &Machine) -> String {
    (0..)
        .map(root)
        .find(|id| m.state.get_promise(id).is_none())
        .expect("unbounded")
}

/// The first `n` child ids of `origin` with no promise.
pub(crate) fn fresh_children(m: &Machine, origin: &str, n: usize) -> Vec<String> {
    (1..)
        .map(|i| format!("{origin}.{i}"))
        .filter(|id| m.state.get_promise(id).is_none())
        .take(n)
        .collect()
}

/// The first child id of `origin` with no promise.
pub(crate) fn fresh_child(m: &Machine, origin: &str) -> String {
    fresh_children(m, origin, 1).remove(0)
}

/// Every promise, by id.
pub(crate) fn promises(m: &Machine) -> Vec<&PromiseObject> {
    let mut v: Vec<_> = m.state.promises().collect();
    v.sort_by(|a, b| a.id.cmp(&b.id));
    v
}

/// Every task, by id.
pub(crate) fn tasks(m: &Machine) -> Vec<&TaskObject> {
    let mut v: Vec<_> = m.state.tasks().collect();
    v.sort_by(|a, b| a.id.cmp(&b.id));
    v
}

/// Tasks in `state`, by id.
pub(crate) fn tasks_in(m: &Machine, state: TaskState) -> Vec<&TaskObject> {
    tasks(m).into_iter().filter(|t| t.state == state).collect()
}

/// The origins of every promise, sorted, deduplicated.
pub(crate) fn origins(m: &Machine) -> Vec<String> {
    let mut v: Vec<String> = promises(m)
        .iter()
        .map(|p| origin(&p.id).to_string())
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Promises of `origin`, by id.
pub(crate) fn in_origin<'a>(m: &'a Machine, o: &str) -> Vec<&'a PromiseObject> {
    promises(m)
        .into_iter()
        .filter(|p| origin(&p.id) == o)
        .collect()
}

/// Whether a promise is still pending in storage (whatever its deadline).
pub(crate) fn pending(p: &PromiseObject) -> bool {
    p.state == PromiseState::Pending
}

/// An existing promise id, preferring pending ones (`pct_pending` percent),
/// or `None` when there is none.
pub(crate) fn existing(m: &Machine, rng: &mut TestRng, pct_pending: u64) -> Option<String> {
    let all = promises(m);
    let live: Vec<_> = all.iter().filter(|p| pending(p)).collect();
    if !live.is_empty() && rng.chance(pct_pending) {
        return rng.pick(&live).map(|p| p.id.clone());
    }
    rng.pick(&all).map(|p| p.id.clone())
}

/// A deadline relative to `now`: mostly seconds to a minute away (to
/// expire within a trace), often minutes, sometimes already past (`≥ 0`).
pub(crate) fn timeout_at(rng: &mut TestRng, now: Time) -> Time {
    match rng.below(100) {
        0..=49 => now + rng.range(2_000, 60_000),
        50..=89 => now + rng.range(120_000, 900_000),
        _ => now.saturating_sub(rng.range(0, 5_000)),
    }
}

/// A task's deadline: mostly minutes away, so that the task lives through
/// acquire, fence, suspend and resume; sometimes short or already past.
pub(crate) fn task_timeout_at(rng: &mut TestRng, now: Time) -> Time {
    match rng.below(100) {
        0..=69 => now + rng.range(120_000, 900_000),
        70..=91 => now + rng.range(2_000, 60_000),
        _ => now.saturating_sub(rng.range(0, 5_000)),
    }
}

/// A lease length (`ttl ≥ 1`): mostly seconds, sometimes a minute or two.
pub(crate) fn ttl(rng: &mut TestRng) -> u64 {
    if rng.chance(65) {
        rng.range(2_000, 20_000)
    } else {
        rng.range(30_000, 120_000)
    }
}

/// A pending promise someone awaits (non-empty callbacks), else any
/// pending one (`pct` percent), else any promise.
pub(crate) fn awaited_first(m: &Machine, rng: &mut TestRng, pct: u64) -> Option<String> {
    let awaited: Vec<_> = promises(m)
        .into_iter()
        .filter(|p| pending(p) && !p.callbacks.is_empty())
        .collect();
    match rng.pick(&awaited) {
        Some(p) if rng.chance(50) => Some(p.id.clone()),
        _ => existing(m, rng, pct),
    }
}

/// A settlement state a client may ask for.
pub(crate) fn settle_state(rng: &mut TestRng) -> PromiseState {
    *rng.pick(&[
        PromiseState::Resolved,
        PromiseState::Resolved,
        PromiseState::Rejected,
        PromiseState::RejectedCanceled,
    ])
    .expect("non-empty")
}

/// A small value, sometimes with data and a header.
pub(crate) fn value(rng: &mut TestRng) -> model::types::Value {
    let mut v = model::types::Value::default();
    if rng.chance(40) {
        v.data = Some("eyJvayI6dHJ1ZX0=".to_string());
    }
    if rng.chance(15) {
        v.headers.insert("h".to_string(), "1".to_string());
    }
    v
}

/// Tags with one entry.
pub(crate) fn tag(k: &str, v: &str) -> Tags {
    let mut t = Tags::new();
    t.insert(k.to_string(), v.to_string());
    t
}
