//! Choosing which task a versioned request names, and the two claiming
//! requests, `task.create` and `task.acquire`.
//!
//! A versioned request (acquire, fence, suspend, fulfill, release) mostly
//! names a task in the state it requires with the task's current version;
//! sometimes a stale (`version - 1`) or future (`version + 1`) one (409),
//! a task in another state (409), or a missing id (404). Tasks whose
//! promise has expired without a tick are not avoided: they take the
//! "promise not live" 409s.

use model::api::{Request, TaskAcquireReq, TaskCreateReq};
use model::state::TaskObject;
use model::types::{TaskState, Time};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::pools::{self, World};
use crate::promise_ops::new_promise;

/// The task of an id the index holds.
pub(crate) fn task<'a>(w: World<'a>, id: &str) -> &'a TaskObject {
    w.m.state.get_task(id).expect("indexed tasks exist")
}

/// A version near `current`: mostly equal, sometimes one behind or ahead.
pub(crate) fn jitter(rng: &mut TestRng, current: u64) -> u64 {
    match rng.below(100) {
        0..=85 => current,
        86..=92 if current > 0 => current - 1,
        _ => current + 1,
    }
}

/// A task id and version for a request that needs the task in `want`.
pub(crate) fn versioned(w: World, rng: &mut TestRng, want: TaskState) -> (String, u64) {
    if rng.chance(85) {
        if let Some(t) = rng.pick_from(&w.ix.in_state(want)) {
            let t = task(w, t);
            return (t.id.clone(), jitter(rng, t.version));
        }
    }
    match rng.pick_from(&w.ix.tasks()) {
        Some(t) if rng.chance(60) => (t.to_string(), task(w, t).version),
        _ => (pools::fresh_root(w), rng.below(3)),
    }
}

/// A claimant.
pub(crate) fn pid(rng: &mut TestRng) -> String {
    rng.pick(&pools::PIDS).expect("non-empty").to_string()
}

/// `task.create`: a new root or child task (its deadline sometimes past:
/// created fulfilled), or an existing promise (pending task: re-acquired;
/// fulfilled: returned; busy: 409; no target: 422).
pub(crate) fn create(w: World, rng: &mut TestRng, now: Time) -> Request {
    let origins = w.ix.origins();
    let r = rng.below(100);
    let id = if r < 40 || origins.is_empty() {
        pools::fresh_root(w)
    } else if r < 52 {
        pools::fresh_child(w, rng.pick_from(&origins).expect("non-empty"))
    } else {
        match rng.pick_from(&w.ix.in_state(TaskState::Pending)) {
            Some(t) if rng.chance(50) => t.to_string(),
            _ => pools::existing(w, rng, 50).unwrap_or_else(|| pools::fresh_root(w)),
        }
    };
    Request::TaskCreate(TaskCreateReq {
        pid: pid(rng),
        ttl: pools::ttl(rng),
        action: new_promise(w, rng, now, id, Some(true)),
    })
}

/// `task.acquire` of a pending task at (mostly) its current version.
pub(crate) fn acquire(w: World, rng: &mut TestRng) -> Request {
    let (id, version) = versioned(w, rng, TaskState::Pending);
    Request::TaskAcquire(TaskAcquireReq {
        id,
        version,
        pid: pid(rng),
        ttl: pools::ttl(rng),
    })
}
