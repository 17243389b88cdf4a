//! Loop shapes: a loop that treats a mix as all or none, the second bug
//! shape of issue 17. Where a handler or transition walks a list, the
//! body takes one branch for some elements and the other for the rest; a
//! bug that decides for the whole list at once (all-or-nothing, or "the
//! first decides") is right whenever the elements agree and wrong only on
//! a mix. Each entry here is right on `none`, `one` and `all` and departs
//! on a `mix` alone, the shape `model::marker` marks (`…/mix`) and the
//! steered generator aims at.
//!
//! | name | Lean line | what |
//! |---|---|---|
//! | `suspend-mix-parks` | T-06:24 | a suspend awaiting settled and pending promises parks on the pending ones (200) instead of answering 300: a mix read as none settled |
//! | `heartbeat-all-or-none` | T-05:6 | a heartbeat naming tasks it may renew and tasks it may not renews none of them |
//! | `settle-resumes-none-on-mix` | P-03:32 | a settlement whose awaiters are suspended and not resumes none of the suspended ones |
//! | `fulfill-resumes-none-on-mix` | T-07:33 | the same in `task.fulfill`'s settlement |
//! | `timeout-resumes-none-on-mix` | 02-timeouts:40 | the same in the promise timeout |

use model::api::{Request, Response, TaskHeartbeatReq, TaskSuspendReq};
use model::machine::{Machine, Timer};
use model::types::{PromiseState, TaskState, Time};

use super::effects::{patch_promise, settle_target, task_state};
use super::witness::*;
use crate::{Class, Deviation, Hooks, Next, NextFire};

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[
    Deviation {
        name: "suspend-mix-parks",
        spec: "spec/02-actions/T-06-task.suspend.lean:24",
        class: Class::Bug,
        summary: "a suspend awaiting both settled and pending promises parks the task on the pending ones (200) instead of answering 300",
        hooks: &SuspendMixParks,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, create("a.1", LATER, none())),
                at(T0, create("a.2", T0, none())),
                at(T0, suspend("a", 1, &["a.1", "a.2"])),
            ]
        },
    },
    Deviation {
        name: "heartbeat-all-or-none",
        spec: "spec/02-actions/T-05-task.heartbeat.lean:6",
        class: Class::Bug,
        summary: "a heartbeat naming tasks it may renew and tasks it may not renews none of them (all or nothing)",
        hooks: &HeartbeatAllOrNone,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0 + 1, heartbeat("p1", &[("a", 1), ("a.9", 1)])),
            ]
        },
    },
    Deviation {
        name: "settle-resumes-none-on-mix",
        spec: "spec/02-actions/P-03-promise.settle.lean:32",
        class: Class::Bug,
        summary: "promise.settle of a promise awaited by suspended and unsuspended tasks resumes none of the suspended ones",
        hooks: &ResumesNoneOnMix(Site::Settle),
        witness: || {
            let mut steps = mixed_awaiters();
            steps.push(at(T0, settle(AWAITED, PromiseState::Resolved)));
            steps
        },
    },
    Deviation {
        name: "fulfill-resumes-none-on-mix",
        spec: "spec/02-actions/T-07-task.fulfill.lean:33",
        class: Class::Bug,
        summary: "task.fulfill of a promise awaited by suspended and unsuspended tasks resumes none of the suspended ones",
        hooks: &ResumesNoneOnMix(Site::Fulfill),
        witness: || {
            let mut steps = mixed_awaiters();
            steps.insert(0, at(T0, task_create(AWAITED, "p3", 60_000, LATER)));
            steps.retain(|s| !matches!(&s.op, gen::Op::Request(Request::PromiseCreate(r)) if r.id == AWAITED));
            steps.push(at(T0, fulfill(AWAITED, 1, PromiseState::Resolved)));
            steps
        },
    },
    Deviation {
        name: "timeout-resumes-none-on-mix",
        spec: "spec/02-actions/02-timeouts.lean:40",
        class: Class::Bug,
        summary: "the promise timeout of a promise awaited by suspended and unsuspended tasks resumes none of the suspended ones",
        hooks: &ResumesNoneOnMix(Site::Timeout),
        witness: || {
            let mut steps = mixed_awaiters();
            for s in &mut steps {
                if let gen::Op::Request(Request::PromiseCreate(r)) = &mut s.op {
                    if r.id == AWAITED {
                        r.timeout_at = T0 + 10;
                        r.tags = timer();
                    }
                }
            }
            steps.push(tick(T0 + 10));
            steps
        },
    },
];

/// The promise the mixed awaiters of [`mixed_awaiters`] await.
const AWAITED: &str = "a.c";

/// Promise `a.c` awaited by task `a`, suspended on it, and by task `a.b`,
/// acquired (its callback registered on its behalf): a settlement of `a.c`
/// resumes `a` and buffers a resume on `a.b`. One origin throughout, as
/// the wire's rules require of a suspend and a callback.
fn mixed_awaiters() -> Vec<gen::Step> {
    vec![
        at(T0, create(AWAITED, LATER, none())),
        at(T0, task_create("a", "p1", 60_000, LATER)),
        at(T0, suspend("a", 1, &[AWAITED])),
        at(T0, task_create("a.b", "p2", 60_000, LATER)),
        at(T0, callback(AWAITED, "a.b")),
    ]
}

/// The suspend's loop sets `settled` only if every awaited promise is
/// settled or expired: a mix parks the task, its callbacks registered on
/// the live ones only.
struct SuspendMixParks;

impl Hooks for SuspendMixParks {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskSuspend(r) = req else {
            return next(m, req, now);
        };
        let mut live = Vec::new();
        let mut not_live = 0;
        for a in &r.actions {
            match m.state.get_promise(&a.awaited) {
                // A missing awaited is the spec's 422, whatever the rest.
                None => return next(m, req, now),
                Some(p) if p.is_live(now) => live.push(a.clone()),
                Some(_) => not_live += 1,
            }
        }
        if not_live == 0 || live.is_empty() {
            return next(m, req, now);
        }
        let parked = Request::TaskSuspend(TaskSuspendReq {
            actions: live,
            ..r.clone()
        });
        next(m, &parked, now)
    }
}

/// The heartbeat checks every ref before renewing any: one it may not
/// renew (missing, another pid's, another version, not acquired, its
/// promise not live) and it renews none.
struct HeartbeatAllOrNone;

impl Hooks for HeartbeatAllOrNone {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskHeartbeat(r) = req else {
            return next(m, req, now);
        };
        let renewable = r
            .tasks
            .iter()
            .filter(|t| {
                m.state.get_task(&t.id).is_some_and(|task| {
                    task.state == TaskState::Acquired
                        && task.version == t.version
                        && task.pid.as_deref() == Some(r.pid.as_str())
                }) && m
                    .state
                    .get_promise(&t.id)
                    .is_some_and(|p| p.state == PromiseState::Pending && p.timeout_at > now)
            })
            .count();
        if renewable == 0 || renewable == r.tasks.len() {
            return next(m, req, now);
        }
        let none = Request::TaskHeartbeat(TaskHeartbeatReq {
            pid: r.pid.clone(),
            tasks: Vec::new(),
        });
        next(m, &none, now)
    }
}

/// Which settlement site a [`ResumesNoneOnMix`] departs at.
enum Site {
    Settle,
    Fulfill,
    Timeout,
}

/// The cascade resumes the awaiters only if all of them are suspended: on
/// a mix the suspended ones are dropped (they stay suspended, their wake-up
/// lost) while the others still get their buffered resume.
struct ResumesNoneOnMix(Site);

/// Drop the suspended awaiters of pending promise `id` when its awaiters
/// are a mix of suspended tasks and others.
fn drop_suspended_on_mix(m: &mut Machine, id: &str) {
    let Some(p) = m.state.get_promise(id) else {
        return;
    };
    if p.state != PromiseState::Pending {
        return;
    }
    let suspended = |c: &String| task_state(m, c) == Some(TaskState::Suspended);
    let n = p.callbacks.iter().filter(|c| suspended(c)).count();
    if n == 0 || n == p.callbacks.len() {
        return;
    }
    let kept: Vec<String> = p
        .callbacks
        .iter()
        .filter(|c| !suspended(c))
        .cloned()
        .collect();
    patch_promise(m, id, |p| p.callbacks = kept);
}

impl Hooks for ResumesNoneOnMix {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let id = match (&self.0, req) {
            (Site::Settle, _) => settle_target(req),
            (Site::Fulfill, Request::TaskFulfill(r)) => Some(r.id.as_str()),
            _ => None,
        };
        if let Some(id) = id {
            // The handler may refuse (409, 404): then nothing settles and
            // the callbacks must stay as they were.
            let before = m.state.get_promise(id).cloned();
            drop_suspended_on_mix(m, id);
            let res = next(m, req, now);
            if let Some(p) = before {
                if m.state
                    .get_promise(&p.id)
                    .is_some_and(|q| q.state == PromiseState::Pending)
                {
                    m.state.set_promise(p);
                }
            }
            return res;
        }
        next(m, req, now)
    }

    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        if let (Site::Timeout, Timer::Promise(id)) = (&self.0, timer) {
            drop_suspended_on_mix(m, id);
        }
        next(m, timer, now)
    }
}
