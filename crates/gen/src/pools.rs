//! Id, address and duration pools, and what every choice reads.
//!
//! Ids follow the servers' origin rule (origin = id up to the first `.`):
//! roots are `a`, `b`, … and their children `a.1`, `a.2`, …, so any two
//! promises of one origin may await each other. Fresh ids are derived from
//! the state (the first unused one), never from a counter, so a step means
//! the same thing when [`crate::repair`] replays it on another history.
//! The model keeps its objects in hash maps; the generator picks from the
//! sorted pools of its [`Index`], so choices are deterministic per seed.

use model::machine::Machine;
use model::state::PromiseObject;
use model::types::{PromiseState, Tags, Time};

use crate::dice::Dice;
use crate::index::Index;
use proptest::test_runner::TestRng;

/// What a choice reads: the generator's model and its index of it.
#[derive(Clone, Copy)]
pub(crate) struct World<'a> {
    /// The model, for the objects themselves.
    pub(crate) m: &'a Machine,
    /// The sorted pools of its state.
    pub(crate) ix: &'a Index,
}

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
pub(crate) fn root(i: usize) -> String {
    if i < 26 {
        ((b'a' + i as u8) as char).to_string()
    } else {
        format!("r{i}")
    }
}

/// The first root id with no promise.
pub(crate) fn fresh_root(w: World) -> String {
    w.ix.fresh_root()
}

/// The first `n` child ids of `origin` with no promise.
pub(crate) fn fresh_children(w: World, origin: &str, n: usize) -> Vec<String> {
    w.ix.fresh_children(origin, n)
}

/// The first child id of `origin` with no promise.
pub(crate) fn fresh_child(w: World, origin: &str) -> String {
    fresh_children(w, origin, 1).remove(0)
}

/// Whether a promise is still pending in storage (whatever its deadline).
pub(crate) fn pending(p: &PromiseObject) -> bool {
    p.state == PromiseState::Pending
}

/// An existing promise id, preferring pending ones (`pct_pending` percent),
/// or `None` when there is none.
pub(crate) fn existing(w: World, rng: &mut TestRng, pct_pending: u64) -> Option<String> {
    let live = w.ix.pending();
    if !live.is_empty() && rng.chance(pct_pending) {
        return rng.pick_id(&live);
    }
    rng.pick_id(&w.ix.promises())
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
pub(crate) fn awaited_first(w: World, rng: &mut TestRng, pct: u64) -> Option<String> {
    match rng.pick_from(&w.ix.awaited()) {
        Some(id) if rng.chance(50) => Some(id.to_string()),
        _ => existing(w, rng, pct),
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
