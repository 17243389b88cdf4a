//! Requests aimed at what has just come due. When the clock passes a
//! deadline, the next step is about it: a tick that fires it, or a request
//! that names it while it is expired and not yet fired. `now == timeoutAt`
//! is where a handler's `<` and `≤` part ways (a read projects or not, a
//! settle is refused or not, a suspend counts the awaited promise settled
//! or live); just past it, a read projects what no tick has settled yet,
//! and a server that settles expired promises on first read (a known
//! departure of real servers) shows its behaviour only to that first read.
//! Random requests rarely name the one object whose deadline it is.
//!
//! The candidates, for a pending promise whose `timeoutAt` has come: read
//! it, create it again, settle it, listen to it; read, acquire, heartbeat
//! or fulfil its task; suspend a task of its origin on it, or register such
//! a task's callback on it. For a task whose lease or retry has come: read
//! it, heartbeat it, acquire it. Only well-formed candidates are offered.

use model::api::*;
use model::state::{PromiseObject, LEASE, RETRY};
use model::types::{PromiseState, TaskState, Time};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::pools::{self, World};

/// Whether deadline `at` came due when the clock went from `since` to
/// `now`: passed in this advance, or exactly now (several steps may share
/// the instant of a deadline).
fn came_due(at: Time, since: Time, now: Time) -> bool {
    at <= now && (at > since || at == now)
}

/// The deadlines that [`came_due`] between `since` and `now`, as a window
/// `from ≤ at ≤ now` of an ordered index: past `since` (`now` never goes
/// back), or `now` alone when the clock did not move.
fn due_window(since: Time, now: Time) -> (Time, Time) {
    let from = if since < now { since + 1 } else { now };
    (from, now)
}

/// What came due as the clock went from `since` to `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Due {
    /// Nothing.
    Nothing,
    /// A deadline passed in this advance, none is exactly `now`.
    Passed,
    /// A deadline is exactly `now`: the boundary itself.
    Exact,
}

/// Whether a pending promise's deadline or an armed task timeout came due
/// between `since` and `now`, and whether one is exactly `now`.
pub(crate) fn due(w: World, since: Time, now: Time) -> Due {
    // Only what is in the window, read from the ordered indexes: no scan.
    let (from, until) = due_window(since, now);
    let promises = w.ix.pending_within(from, until).map(|(at, _)| at);
    let tasks = [RETRY, LEASE].into_iter().flat_map(|kind| {
        (w.m.state.task_timeouts(kind))
            .within(from, until)
            .map(|(at, _)| at)
    });
    let mut due = Due::Nothing;
    for at in promises.chain(tasks).filter(|&at| came_due(at, since, now)) {
        if at == now {
            return Due::Exact;
        }
        due = Due::Passed;
    }
    due
}

/// A request about something whose deadline came due between `since` and
/// `now`, if any.
pub(crate) fn just_due(w: World, since: Time, now: Time, rng: &mut TestRng) -> Option<Request> {
    let (from, until) = due_window(since, now);
    let mut c: Vec<Request> = Vec::new();
    // By id, as they always were: the window comes by deadline.
    let mut promises: Vec<&str> = w.ix.pending_within(from, until).map(|(_, id)| id).collect();
    promises.sort_unstable();
    for id in promises {
        let p = w.m.state.get_promise(id).expect("indexed promises exist");
        about_promise(w, p, &mut c);
    }
    for kind in [RETRY, LEASE] {
        let mut ids: Vec<&str> = (w.m.state.task_timeouts(kind))
            .within(from, until)
            .map(|(_, id)| id)
            .collect();
        ids.sort_unstable();
        for id in ids {
            about_task(w, id, &mut c);
        }
    }
    c.retain(|r| crate::rules::well_formed_request(r, w.m).is_ok());
    rng.pick(&c).cloned()
}

/// The candidates about pending promise `p` (also [`crate::sharpen::near`]'s).
pub(crate) fn about_promise(w: World, p: &PromiseObject, c: &mut Vec<Request>) {
    let id = p.id.as_str();
    c.push(Request::PromiseGet(PromiseGetReq { id: id.into() }));
    c.push(Request::PromiseCreate(PromiseCreateReq {
        id: id.into(),
        timeout_at: p.timeout_at,
        param: p.param.clone(),
        tags: p.tags.clone(),
    }));
    c.push(Request::PromiseSettle(PromiseSettleReq {
        id: id.into(),
        state: PromiseState::Resolved,
        value: Default::default(),
    }));
    c.push(Request::PromiseRegisterListener(
        PromiseRegisterListenerReq {
            awaited: id.into(),
            address: pools::LISTENERS[0].into(),
        },
    ));
    about_task(w, id, c);
    for tid in w.ix.origin(pools::origin(id)).acquired.iter() {
        let t = w.m.state.get_task(tid).expect("indexed tasks exist");
        if t.id != id {
            c.push(Request::TaskSuspend(TaskSuspendReq {
                id: t.id.clone(),
                version: t.version,
                actions: vec![PromiseRegisterCallbackReq {
                    awaited: id.into(),
                    awaiter: t.id.clone(),
                }],
            }));
            c.push(Request::PromiseRegisterCallback(
                PromiseRegisterCallbackReq {
                    awaited: id.into(),
                    awaiter: t.id.clone(),
                },
            ));
        }
    }
}

fn about_task(w: World, id: &str, c: &mut Vec<Request>) {
    let Some(t) = w.m.state.get_task(id) else {
        return;
    };
    c.push(Request::TaskGet(TaskGetReq { id: id.into() }));
    match t.state {
        TaskState::Pending => c.push(Request::TaskAcquire(TaskAcquireReq {
            id: id.into(),
            version: t.version,
            pid: pools::PIDS[0].into(),
            ttl: 10_000,
        })),
        TaskState::Acquired => {
            c.push(Request::TaskHeartbeat(TaskHeartbeatReq {
                pid: t.pid.clone().unwrap_or_else(|| pools::PIDS[0].into()),
                tasks: vec![TaskRef {
                    id: id.into(),
                    version: t.version,
                }],
            }));
            c.push(Request::TaskFulfill(TaskFulfillReq {
                id: id.into(),
                version: t.version,
                action: PromiseSettleReq {
                    id: id.into(),
                    state: PromiseState::Resolved,
                    value: Default::default(),
                },
            }));
        }
        _ => {}
    }
}
