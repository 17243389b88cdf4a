//! Requests aimed at the instant: when the clock has landed exactly on a
//! deadline, ask about what is due at it. `now == timeoutAt` is where a
//! handler's `<` and `≤` part ways (a read projects or not, a settle is
//! refused or not, a suspend counts the awaited promise settled or live),
//! and random requests rarely name the one object whose deadline it is.
//!
//! The candidates, for a pending promise whose `timeoutAt` is now: read
//! it, settle it, listen to it; read, acquire, heartbeat or fulfil its
//! task; suspend a task of its origin on it, or register such a task's
//! callback on it. For a task whose lease or retry is due now: read it,
//! heartbeat it, acquire it. Only well-formed candidates are offered.

use model::api::*;
use model::machine::Machine;
use model::state::{LEASE, RETRY};
use model::types::{PromiseState, TaskState, Time};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::pools;
use crate::{well_formed, Op, Step};

/// A request about something whose deadline is exactly `now`, if any.
pub(crate) fn at_deadline(m: &Machine, now: Time, rng: &mut TestRng) -> Option<Request> {
    let mut c: Vec<Request> = Vec::new();
    for p in pools::promises(m) {
        if p.state == PromiseState::Pending && p.timeout_at == now {
            about_promise(m, &p.id, &mut c);
        }
    }
    for kind in [RETRY, LEASE] {
        for (id, at) in m.state.task_timeouts(kind).sorted() {
            if at == now {
                about_task(m, id, &mut c);
            }
        }
    }
    c.retain(|r| {
        let step = Step {
            now,
            op: Op::Request(r.clone()),
        };
        well_formed(&step, m).is_ok()
    });
    rng.pick(&c).cloned()
}

fn about_promise(m: &Machine, id: &str, c: &mut Vec<Request>) {
    c.push(Request::PromiseGet(PromiseGetReq { id: id.into() }));
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
    about_task(m, id, c);
    let origin = pools::origin(id);
    for t in pools::tasks_in(m, TaskState::Acquired) {
        if t.id != id && pools::origin(&t.id) == origin {
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

fn about_task(m: &Machine, id: &str, c: &mut Vec<Request>) {
    let Some(t) = m.state.get_task(id) else {
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
