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
use model::machine::Machine;
use model::types::{TaskState, Time};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::pools;
use crate::promise_ops::new_promise;

/// A version near `current`: mostly equal, sometimes one behind or ahead.
pub(crate) fn jitter(rng: &mut TestRng, current: u64) -> u64 {
    match rng.below(100) {
        0..=85 => current,
        86..=92 if current > 0 => current - 1,
        _ => current + 1,
    }
}

/// A task id and version for a request that needs the task in `want`.
pub(crate) fn versioned(m: &Machine, rng: &mut TestRng, want: TaskState) -> (String, u64) {
    let wanted = pools::tasks_in(m, want);
    if rng.chance(85) {
        if let Some(t) = rng.pick(&wanted) {
            return (t.id.clone(), jitter(rng, t.version));
        }
    }
    let all = pools::tasks(m);
    match rng.pick(&all) {
        Some(t) if rng.chance(60) => (t.id.clone(), t.version),
        _ => (pools::fresh_root(m), rng.below(3)),
    }
}

/// A claimant.
pub(crate) fn pid(rng: &mut TestRng) -> String {
    rng.pick(&pools::PIDS).expect("non-empty").to_string()
}

/// `task.create`: a new root or child task (its deadline sometimes past:
/// created fulfilled), or an existing promise (pending task: re-acquired;
/// fulfilled: returned; busy: 409; no target: 422).
pub(crate) fn create(m: &Machine, rng: &mut TestRng, now: Time) -> Request {
    let origins = pools::origins(m);
    let r = rng.below(100);
    let id = if r < 40 || origins.is_empty() {
        pools::fresh_root(m)
    } else if r < 52 {
        pools::fresh_child(m, rng.pick(&origins).expect("non-empty"))
    } else {
        let pending = pools::tasks_in(m, TaskState::Pending);
        match rng.pick(&pending) {
            Some(t) if rng.chance(50) => t.id.clone(),
            _ => pools::existing(m, rng, 50).unwrap_or_else(|| pools::fresh_root(m)),
        }
    };
    Request::TaskCreate(TaskCreateReq {
        pid: pid(rng),
        ttl: pools::ttl(rng),
        action: new_promise(m, rng, now, id, Some(true)),
    })
}

/// `task.acquire` of a pending task at (mostly) its current version.
pub(crate) fn acquire(m: &Machine, rng: &mut TestRng) -> Request {
    let (id, version) = versioned(m, rng, TaskState::Pending);
    Request::TaskAcquire(TaskAcquireReq {
        id,
        version,
        pid: pid(rng),
        ttl: pools::ttl(rng),
    })
}
