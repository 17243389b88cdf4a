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
use model::machine::Machine;
use model::state::PromiseObject;
use model::types::{PromiseState, TaskState, Time};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::pools;
use crate::promise_ops::new_promise;
use crate::task_claim::{jitter, pid, versioned};

/// The other promises of `id`'s origin.
fn siblings<'a>(m: &'a Machine, id: &str) -> Vec<&'a PromiseObject> {
    pools::in_origin(m, pools::origin(id))
        .into_iter()
        .filter(|p| p.id != id)
        .collect()
}

/// `task.fence`: a fenced create of a child (mostly new), or a fenced
/// settle of another promise of the origin.
pub(crate) fn fence(m: &Machine, rng: &mut TestRng, now: Time) -> Request {
    let (id, version) = versioned(m, rng, TaskState::Acquired);
    let o = pools::origin(&id).to_string();
    let others = siblings(m, &id);
    let action = if others.is_empty() || rng.chance(60) {
        let child = match rng.pick(&others) {
            Some(p) if rng.chance(20) => p.id.clone(),
            _ => pools::fresh_child(m, &o),
        };
        TaskFenceAction::Create(new_promise(m, rng, now, child, None))
    } else {
        let pending: Vec<_> = others.iter().filter(|p| pools::pending(p)).collect();
        let awaited: Vec<_> = pending.iter().filter(|p| !p.callbacks.is_empty()).collect();
        let target = match rng.below(100) {
            0..=39 => rng.pick(&awaited).map(|p| p.id.clone()),
            40..=79 => rng.pick(&pending).map(|p| p.id.clone()),
            80..=93 => rng.pick(&others).map(|p| p.id.clone()),
            _ => None,
        }
        .unwrap_or_else(|| pools::fresh_child(m, &o));
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
pub(crate) fn heartbeat(m: &Machine, rng: &mut TestRng) -> Request {
    let acquired = pools::tasks_in(m, TaskState::Acquired);
    let (o, claimant) = match rng.pick(&acquired) {
        Some(t) if rng.chance(85) => {
            let p = match &t.pid {
                Some(p) if rng.chance(85) => p.clone(),
                _ => pid(rng),
            };
            (pools::origin(&t.id).to_string(), p)
        }
        _ => {
            let all = pools::tasks(m);
            let o = rng.pick(&all).map_or_else(
                || pools::fresh_root(m),
                |t| pools::origin(&t.id).to_string(),
            );
            (o, pid(rng))
        }
    };
    let mut tasks: Vec<TaskRef> = Vec::new();
    let members: Vec<_> = pools::tasks(m)
        .into_iter()
        .filter(|t| pools::origin(&t.id) == o)
        .collect();
    for _ in 0..rng.range(1, 3) {
        if let Some(t) = rng.pick(&members) {
            if !tasks.iter().any(|r| r.id == t.id) {
                tasks.push(TaskRef {
                    id: t.id.clone(),
                    version: jitter(rng, t.version),
                });
            }
        }
    }
    if tasks.is_empty() || rng.chance(8) {
        tasks.push(TaskRef {
            id: pools::fresh_child(m, &o),
            version: 1,
        });
    }
    Request::TaskHeartbeat(TaskHeartbeatReq {
        pid: claimant,
        tasks,
    })
}

/// `task.suspend` awaiting 1–3 promises of the task's origin.
pub(crate) fn suspend(m: &Machine, rng: &mut TestRng, now: Time) -> Request {
    // Prefer a held task that has something live to wait for.
    // (or one whose deadline is exactly now: live a millisecond ago, and
    // the instant where `<` and `≤` part ways).
    let boundary = |p: &PromiseObject| p.state == PromiseState::Pending && p.timeout_at == now;
    let ready: Vec<_> = pools::tasks_in(m, TaskState::Acquired)
        .into_iter()
        .filter(|t| {
            siblings(m, &t.id)
                .iter()
                .any(|p| p.is_live(now) || boundary(p))
        })
        .collect();
    let (id, version) = match rng.pick(&ready) {
        Some(t) if rng.chance(75) => (t.id.clone(), jitter(rng, t.version)),
        _ => versioned(m, rng, TaskState::Acquired),
    };
    let others = siblings(m, &id);
    let live: Vec<&PromiseObject> = others.iter().copied().filter(|p| p.is_live(now)).collect();
    let dead: Vec<&PromiseObject> = others.iter().copied().filter(|p| !p.is_live(now)).collect();
    let mut awaited: Vec<String> = Vec::new();
    for _ in 0..rng.range(1, 3) {
        if let Some(p) = rng.pick(&live) {
            if !awaited.contains(&p.id) {
                awaited.push(p.id.clone());
            }
        }
    }
    // Sometimes closing a cycle of awaits: the promise of a task already
    // suspended on this one's (a timeout then has to resume one of them
    // while the other is due too).
    let waiting_on_us: Vec<&PromiseObject> = m.state.get_promise(&id).map_or(Vec::new(), |p| {
        live.iter()
            .copied()
            .filter(|q| p.callbacks.contains(&q.id))
            .collect()
    });
    if let Some(q) = rng.pick(&waiting_on_us) {
        if rng.chance(60) && !awaited.contains(&q.id) {
            awaited.insert(0, q.id.clone());
        }
    }
    // Mostly only live ones; sometimes one settled or expired (300);
    // rarely, or when nothing exists to await, a missing one (422).
    let missing = || pools::fresh_child(m, pools::origin(&id));
    let r = rng.below(100);
    let edge: Vec<&PromiseObject> = dead.iter().copied().filter(|p| boundary(p)).collect();
    let odd = if !edge.is_empty() && rng.chance(50) {
        rng.pick(&edge).map(|p| p.id.clone())
    } else if r < 72 && !awaited.is_empty() {
        None
    } else if r < 94 {
        match rng.pick(&dead) {
            Some(p) => Some(p.id.clone()),
            None => awaited.is_empty().then(missing),
        }
    } else {
        Some(missing())
    };
    if let Some(x) = odd {
        let settled = m.state.get_promise(&x).is_some();
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
pub(crate) fn fulfill(m: &Machine, rng: &mut TestRng) -> Request {
    let (id, version) = versioned(m, rng, TaskState::Acquired);
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
pub(crate) fn release(m: &Machine, rng: &mut TestRng) -> Request {
    let (id, version) = versioned(m, rng, TaskState::Acquired);
    Request::TaskRelease(TaskReleaseReq { id, version })
}

/// A task id in `prefer` state (`pct` percent), else any task, else missing.
fn task_id(m: &Machine, rng: &mut TestRng, prefer: &[TaskState], pct: u64) -> String {
    let preferred: Vec<_> = pools::tasks(m)
        .into_iter()
        .filter(|t| prefer.contains(&t.state))
        .collect();
    if rng.chance(pct) {
        if let Some(t) = rng.pick(&preferred) {
            return t.id.clone();
        }
    }
    let all = pools::tasks(m);
    match rng.pick(&all) {
        Some(t) if rng.chance(80) => t.id.clone(),
        _ => pools::fresh_root(m),
    }
}

/// `task.halt`, mostly of a live task.
pub(crate) fn halt(m: &Machine, rng: &mut TestRng) -> Request {
    use TaskState::*;
    Request::TaskHalt(TaskHaltReq {
        id: task_id(m, rng, &[Pending, Acquired, Suspended], 70),
    })
}

/// `task.continue`, mostly of a halted task.
pub(crate) fn resume(m: &Machine, rng: &mut TestRng) -> Request {
    Request::TaskContinue(TaskContinueReq {
        id: task_id(m, rng, &[TaskState::Halted], 75),
    })
}

/// `task.get`.
pub(crate) fn get(m: &Machine, rng: &mut TestRng) -> Request {
    Request::TaskGet(TaskGetReq {
        id: task_id(m, rng, &[], 0),
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
