//! Choosing the `task.*` requests that act on a held or existing task.
//!
//! Every request respects the servers' origin rules: a suspend awaits
//! promises of the task's own origin other than the task, a fence acts on a
//! child of that origin, a heartbeat lists tasks of one origin. A suspend
//! mostly awaits live promises (200, the task parks), sometimes one that is
//! settled or expired (300), rarely a missing one (422).

use model::api::{
    PromiseRegisterCallbackReq, PromiseSettleReq, Request, TaskContinueReq, TaskFenceAction,
    TaskFenceReq, TaskFulfillReq, TaskGetReq, TaskHaltReq, TaskHeartbeatReq, TaskRef,
    TaskReleaseReq, TaskSearchReq, TaskSuspendReq,
};
use model::types::{TaskState, Time};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::index::{window, Id};
use crate::pools::{self, World};
use crate::promise_ops::new_promise;
use crate::ranked::{Seq, Skipping, Union};
use crate::task_claim::{jitter, pid, task, versioned};

/// The other promises of `id`'s origin: its members without `id`.
fn siblings<'a>(w: World<'a>, id: &str) -> Skipping<'a, Id> {
    Skipping::new(&w.ix.origin(pools::origin(id)).members, [id])
}

/// `task.fence`: a fenced create of a child (mostly new), or a fenced
/// settle of another promise of the origin.
pub(crate) fn fence(w: World, rng: &mut TestRng, now: Time) -> Request {
    let (id, version) = versioned(w, rng, TaskState::Acquired);
    let o = pools::origin(&id).to_string();
    let others = siblings(w, &id);
    let action = if others.is_empty() || rng.chance(60) {
        let child = match rng.pick_from(&others) {
            Some(p) if rng.chance(20) => p.to_string(),
            _ => pools::fresh_child(w, &o),
        };
        TaskFenceAction::Create(new_promise(w, rng, now, child, None))
    } else {
        let org = w.ix.origin(&o);
        let pending = Skipping::new(&org.pending, [id.as_str()]);
        let awaited = Skipping::new(&org.awaited, [id.as_str()]);
        let target = match rng.below(100) {
            0..=39 => rng.pick_id(&awaited),
            40..=79 => rng.pick_id(&pending),
            80..=93 => rng.pick_id(&others),
            _ => None,
        }
        .unwrap_or_else(|| pools::fresh_child(w, &o));
        TaskFenceAction::Settle(PromiseSettleReq {
            id: target,
            state: pools::settle_state(rng),
            value: pools::value(rng),
        })
    };
    Request::TaskFence(TaskFenceReq {
        id,
        version,
        action,
    })
}

/// `task.heartbeat`: tasks of one origin, mostly by their claimant at their
/// current versions.
pub(crate) fn heartbeat(w: World, rng: &mut TestRng) -> Request {
    let (o, claimant) = match rng.pick_from(&w.ix.in_state(TaskState::Acquired)) {
        Some(t) if rng.chance(85) => {
            let t = task(w, t);
            let p = match &t.pid {
                Some(p) if rng.chance(85) => p.clone(),
                _ => pid(rng),
            };
            (pools::origin(&t.id).to_string(), p)
        }
        _ => {
            let o = rng
                .pick_from(&w.ix.tasks())
                .map_or_else(|| pools::fresh_root(w), |t| pools::origin(t).to_string());
            (o, pid(rng))
        }
    };
    let mut tasks: Vec<TaskRef> = Vec::new();
    let members = &w.ix.origin(&o).tasks;
    for _ in 0..rng.range(1, 3) {
        if let Some(t) = rng.pick_from(&members) {
            if !tasks.iter().any(|r| *r.id == **t) {
                tasks.push(TaskRef {
                    id: t.to_string(),
                    version: jitter(rng, task(w, t).version),
                });
            }
        }
    }
    if tasks.is_empty() || rng.chance(8) {
        tasks.push(TaskRef {
            id: pools::fresh_child(w, &o),
            version: 1,
        });
    }
    Request::TaskHeartbeat(TaskHeartbeatReq {
        pid: claimant,
        tasks,
    })
}

/// `task.suspend` awaiting 1–3 promises of the task's origin.
pub(crate) fn suspend(w: World, rng: &mut TestRng, now: Time) -> Request {
    // Prefer a held task that has something live to wait for (or one whose
    // deadline is exactly now: live a millisecond ago, and the instant
    // where `<` and `≤` part ways): a pending sibling due at `now` or later.
    let ready: Vec<&Id> = (w.ix.in_state(TaskState::Acquired).iter())
        .filter(|t| {
            let org = w.ix.origin(pools::origin(t));
            window(&org.deadlines, now, Time::MAX)
                .take(2)
                .any(|(_, p)| p != &***t)
        })
        .collect();
    let (id, version) = match rng.pick(&ready) {
        Some(t) if rng.chance(75) => (t.to_string(), jitter(rng, task(w, t).version)),
        _ => versioned(w, rng, TaskState::Acquired),
    };
    let org = w.ix.origin(pools::origin(&id));
    // Pending siblings by deadline: live after `now`, on the boundary at it.
    let by_id = |from: Time, until: Time| {
        let mut v: Vec<&str> = window(&org.deadlines, from, until)
            .map(|(_, p)| p)
            .filter(|p| *p != id)
            .collect();
        v.sort_unstable();
        v
    };
    let live: Vec<&str> = now
        .checked_add(1)
        .map_or(Vec::new(), |t| by_id(t, Time::MAX));
    let edge: Vec<&str> = by_id(now, now);
    // The rest of the origin: settled, or expired (the boundary too).
    let dead = Skipping::new(&org.members, live.iter().copied().chain([id.as_str()]));
    let mut awaited: Vec<String> = Vec::new();
    for _ in 0..rng.range(1, 3) {
        if let Some(p) = rng.pick(&live) {
            if !awaited.iter().any(|a| a == p) {
                awaited.push(p.to_string());
            }
        }
    }
    // Sometimes closing a cycle of awaits: the promise of a task already
    // suspended on this one's (a timeout then has to resume one of them
    // while the other is due too).
    let waiting_on_us: Vec<&str> = w.m.state.get_promise(&id).map_or(Vec::new(), |p| {
        live.iter()
            .copied()
            .filter(|q| p.callbacks.iter().any(|c| c == q))
            .collect()
    });
    if let Some(q) = rng.pick(&waiting_on_us) {
        if rng.chance(60) && !awaited.iter().any(|a| a == q) {
            awaited.insert(0, q.to_string());
        }
    }
    // Mostly only live ones; sometimes one settled or expired (300);
    // rarely, or when nothing exists to await, a missing one (422).
    let missing = || pools::fresh_child(w, pools::origin(&id));
    let r = rng.below(100);
    let odd = if !edge.is_empty() && rng.chance(50) {
        rng.pick(&edge).map(|p| p.to_string())
    } else if r < 72 && !awaited.is_empty() {
        None
    } else if r < 94 {
        match rng.pick_id(&dead) {
            Some(p) => Some(p),
            None => awaited.is_empty().then(missing),
        }
    } else {
        Some(missing())
    };
    if let Some(x) = odd {
        let settled = w.m.state.get_promise(&x).is_some();
        let at = rng.below(awaited.len() as u64 + 1) as usize;
        awaited.insert(at, x);
        // Sometimes a settled one and a missing one together: which of
        // 300 and 422 a handler checks first shows only then.
        if settled && rng.chance(25) {
            let at = rng.below(awaited.len() as u64 + 1) as usize;
            awaited.insert(at, missing());
        }
    }
    Request::TaskSuspend(TaskSuspendReq {
        actions: awaited
            .into_iter()
            .map(|a| PromiseRegisterCallbackReq {
                awaited: a,
                awaiter: id.clone(),
            })
            .collect(),
        id,
        version,
    })
}

/// `task.fulfill` of a held task's own promise.
pub(crate) fn fulfill(w: World, rng: &mut TestRng) -> Request {
    let (id, version) = versioned(w, rng, TaskState::Acquired);
    Request::TaskFulfill(TaskFulfillReq {
        action: PromiseSettleReq {
            id: id.clone(),
            state: pools::settle_state(rng),
            value: pools::value(rng),
        },
        id,
        version,
    })
}

/// `task.release` of a held task.
pub(crate) fn release(w: World, rng: &mut TestRng) -> Request {
    let (id, version) = versioned(w, rng, TaskState::Acquired);
    Request::TaskRelease(TaskReleaseReq { id, version })
}

/// A task id in `prefer` state (`pct` percent), else any task, else missing.
fn task_id(w: World, rng: &mut TestRng, prefer: &[TaskState], pct: u64) -> String {
    let preferred = Union::new(prefer.iter().map(|s| w.ix.in_state(*s)).collect());
    if rng.chance(pct) {
        if let Some(t) = rng.pick_id(&preferred) {
            return t;
        }
    }
    match rng.pick_from(&w.ix.tasks()) {
        Some(t) if rng.chance(80) => t.to_string(),
        _ => pools::fresh_root(w),
    }
}

/// `task.halt`, mostly of a live task.
pub(crate) fn halt(w: World, rng: &mut TestRng) -> Request {
    use TaskState::*;
    Request::TaskHalt(TaskHaltReq {
        id: task_id(w, rng, &[Pending, Acquired, Suspended], 70),
    })
}

/// `task.continue`, mostly of a halted task.
pub(crate) fn resume(w: World, rng: &mut TestRng) -> Request {
    Request::TaskContinue(TaskContinueReq {
        id: task_id(w, rng, &[TaskState::Halted], 75),
    })
}

/// `task.get`.
pub(crate) fn get(w: World, rng: &mut TestRng) -> Request {
    Request::TaskGet(TaskGetReq {
        id: task_id(w, rng, &[], 0),
    })
}

/// `task.search` (501 in the spec).
pub(crate) fn search(rng: &mut TestRng) -> Request {
    let mut r = TaskSearchReq::default();
    if rng.chance(50) {
        r.state = Some(TaskState::Acquired);
        r.limit = Some(rng.range(1, 20));
    }
    Request::TaskSearch(r)
}
