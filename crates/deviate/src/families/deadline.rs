//! Boundaries: an off-by-one at the deadline, the first bug shape of
//! issue 17. Every comparison of a deadline with `now` in the Lean has an
//! equality case that `<` for `≤` (or `≥` for `>`) gets wrong, and only
//! there: `now` exactly at the deadline. Each entry moves one comparison
//! by one millisecond, in a handler (the request sees a promise at its
//! deadline as still live) or in a transition (the timer is due only once
//! `now` is past its deadline, so a tick exactly at it fires nothing).
//! The model marks these instants (`model::marker`'s `…/at_now`), which
//! the steered generator aims at.
//!
//! The older off-by-ones of the catalogue stay in their handler's family:
//! `get-strict-deadline` (P-01), `settle-at-deadline` (P-03),
//! `acquire-at-deadline` (T-03), `suspend-at-deadline` (T-06) and
//! `schedule-first-run-inclusive` (S-02).
//!
//! | name | Lean line | what |
//! |---|---|---|
//! | `create-at-deadline-pending` | P-02:9 | `promise.create` with `timeoutAt == now` creates a pending promise (`≥` for `>`) |
//! | `delay-at-now-held` | P-02:33 | a `resonate:delay` equal to `now` holds the task until `now` instead of dispatching it (`≥` for `>`) |
//! | `fence-at-deadline` | T-04:16 | `task.fence` at `now == timeoutAt` of the task's promise runs its action (`<` for `≤`) |
//! | `heartbeat-at-deadline` | T-05:14 | `task.heartbeat` renews a lease whose promise is at `now == timeoutAt` (`≥` for `>`) |
//! | `fulfill-at-deadline` | T-07:15 | `task.fulfill` at `now == timeoutAt` settles the promise (`<` for `≤`) |
//! | `release-at-deadline` | T-08:16 | `task.release` at `now == timeoutAt` releases the task (`<` for `≤`) |
//! | `promise-timeout-late` | 02-timeouts:8 | a promise timeout is due only past its deadline: a tick at it fires nothing |
//! | `retry-late` | 02-timeouts:43 | a retry timeout is due only past its deadline |
//! | `lease-expiry-late` | 02-timeouts:59 | a lease timeout is due only past its deadline |
//! | `schedule-run-late` | 02-timeouts:88 | a schedule timeout is due only past its next run |

use model::api::{Request, Response};
use model::machine::{Machine, Timer};
use model::state::{Message, DELAY, RETRY, TARGET};
use model::types::{PromiseState, Time};

use super::effects::{is_pending, patch_promise, record_mut, with_deadline};
use super::witness::*;
use crate::{Class, Deviation, Hooks, Next, NextFire};

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[
    Deviation {
        name: "create-at-deadline-pending",
        spec: "spec/02-actions/P-02-promise.create.lean:9",
        class: Class::Bug,
        summary: "promise.create with timeoutAt == now creates the promise pending instead of timed out (≥ for >)",
        hooks: &CreateAtDeadlinePending,
        witness: || vec![at(T0, create("a", T0, none()))],
    },
    Deviation {
        name: "delay-at-now-held",
        spec: "spec/02-actions/P-02-promise.create.lean:33",
        class: Class::Bug,
        summary: "a resonate:delay equal to now holds the new task (its retry at the delay, no execute) instead of dispatching it (≥ for >)",
        hooks: &DelayAtNowHeld,
        witness: || {
            let t0 = T0.to_string();
            let tags = tags(&[("resonate:target", "poll://any@w"), ("resonate:delay", &t0)]);
            vec![at(T0, create("a", LATER, tags))]
        },
    },
    Deviation {
        name: "fence-at-deadline",
        spec: "spec/02-actions/T-04-task.fence.lean:16",
        class: Class::Bug,
        summary: "task.fence at now == timeoutAt of the task's promise runs its action instead of answering 409 (< for ≤)",
        hooks: &FenceAtDeadline,
        witness: || {
            vec![
                // The action need not succeed: the spec's 409 is the point.
                at(T0, task_create("a", "p1", 60_000, T0 + 10)),
                at(T0 + 10, fence_settle("a", 1, "b")),
            ]
        },
    },
    Deviation {
        name: "heartbeat-at-deadline",
        spec: "spec/02-actions/T-05-task.heartbeat.lean:14",
        class: Class::Bug,
        summary: "task.heartbeat renews the lease of a task whose promise is at now == timeoutAt (≥ for >)",
        hooks: &HeartbeatAtDeadline,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, T0 + 10)),
                at(T0 + 10, heartbeat("p1", &[("a", 1)])),
            ]
        },
    },
    Deviation {
        name: "fulfill-at-deadline",
        spec: "spec/02-actions/T-07-task.fulfill.lean:15",
        class: Class::Bug,
        summary: "task.fulfill at now == timeoutAt settles the task's promise instead of answering 409 (< for ≤)",
        hooks: &FulfillAtDeadline,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, T0 + 10)),
                at(T0 + 10, fulfill("a", 1, PromiseState::Resolved)),
            ]
        },
    },
    Deviation {
        name: "release-at-deadline",
        spec: "spec/02-actions/T-08-task.release.lean:16",
        class: Class::Bug,
        summary: "task.release at now == timeoutAt releases the task instead of answering 409 (< for ≤)",
        hooks: &ReleaseAtDeadline,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, T0 + 10)),
                at(T0 + 10, release("a", 1)),
            ]
        },
    },
    Deviation {
        name: "promise-timeout-late",
        spec: "spec/02-actions/02-timeouts.lean:8",
        class: Class::Bug,
        summary: "a promise timeout is due only once now is past its deadline: a tick exactly at it leaves the promise pending",
        hooks: &Late(0),
        witness: || {
            vec![
                at(T0, create("a", T0 + 10, timer())),
                tick(T0 + 10),
            ]
        },
    },
    Deviation {
        name: "retry-late",
        spec: "spec/02-actions/02-timeouts.lean:43",
        class: Class::Bug,
        summary: "a task retry timeout is due only once now is past its deadline: a tick exactly at it re-sends nothing",
        hooks: &Late(1),
        witness: || {
            vec![
                at(T0, create("a", LATER, target())),
                tick(T0 + 5000),
            ]
        },
    },
    Deviation {
        name: "lease-expiry-late",
        spec: "spec/02-actions/02-timeouts.lean:59",
        class: Class::Bug,
        summary: "a lease timeout is due only once now is past its deadline: a tick exactly at it leaves the task acquired",
        hooks: &Late(2),
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 10, LATER)),
                tick(T0 + 10),
            ]
        },
    },
    Deviation {
        name: "schedule-run-late",
        spec: "spec/02-actions/02-timeouts.lean:88",
        class: Class::Bug,
        summary: "a schedule timeout is due only once now is past its next run: a tick exactly at it creates nothing",
        hooks: &Late(3),
        witness: || {
            vec![
                at(T0, schedule("s1", EVERY_MINUTE)),
                tick(M1),
            ]
        },
    },
];

/// The creation's deadline test is `timeoutAt ≥ now`: a promise created
/// exactly at its deadline is written pending (and armed, and its task
/// dispatched) where the spec writes it timed out.
struct CreateAtDeadlinePending;

impl Hooks for CreateAtDeadlinePending {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::PromiseCreate(r) = req else {
            return next(m, req, now);
        };
        if r.timeout_at != now || m.state.get_promise(&r.id).is_some() {
            return next(m, req, now);
        }
        // The spec's live path, one millisecond later, then the real
        // deadline put back where it was written.
        let mut live = r.clone();
        live.timeout_at = now + 1;
        let mut res = next(m, &Request::PromiseCreate(live), now);
        patch_promise(m, &r.id, |p| p.timeout_at = now);
        if m.state.promise_timeouts().get(&r.id).is_some() {
            m.state.set_promise_timeout(&r.id, now);
        }
        if let Some(rec) = record_mut(&mut res) {
            rec.timeout_at = now;
        }
        res
    }
}

/// The delay test is `delay ≥ now`: a task whose delay is `now` is held
/// until `now` (its retry timeout armed there, no `execute` sent) where
/// the spec dispatches it at once.
struct DelayAtNowHeld;

impl Hooks for DelayAtNowHeld {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::PromiseCreate(r) = req else {
            return next(m, req, now);
        };
        let held = m.state.get_promise(&r.id).is_none()
            && r.timeout_at > now
            && r.tags.get(TARGET).is_some_and(|t| !t.is_empty())
            && r.tags
                .get(DELAY)
                .is_some_and(|d| model::actions::promise_create::to_nat(d) == now);
        let res = next(m, req, now);
        if held {
            let execute = m
                .state
                .get_message(&r.id)
                .is_some_and(|e| matches!(e.message, Message::Execute { .. }));
            if execute {
                m.state.del_message(&r.id);
            }
            m.state.set_task_timeout(&r.id, RETRY, now);
        }
        res
    }
}

/// Run `next` with the task's promise one millisecond short of expiring
/// when it is pending exactly at its deadline: the handler's `timeoutAt ≤
/// now` test is then `<`.
fn live_at_deadline(m: &mut Machine, id: &str, req: &Request, now: Time, next: Next) -> Response {
    let at_deadline =
        is_pending(m, id) && m.state.get_promise(id).is_some_and(|p| p.timeout_at == now);
    if at_deadline {
        with_deadline(m, id, now + 1, |m| next(m, req, now))
    } else {
        next(m, req, now)
    }
}

/// `task.fence`'s test of the task's promise is `<`: at its deadline the
/// delegated action runs.
struct FenceAtDeadline;

impl Hooks for FenceAtDeadline {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        match req {
            Request::TaskFence(r) => live_at_deadline(m, &r.id, req, now, next),
            _ => next(m, req, now),
        }
    }
}

/// `task.fulfill`'s test of the task's promise is `<`: at its deadline
/// the client's settlement wins.
struct FulfillAtDeadline;

impl Hooks for FulfillAtDeadline {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        match req {
            Request::TaskFulfill(r) => live_at_deadline(m, &r.id, req, now, next),
            _ => next(m, req, now),
        }
    }
}

/// `task.release`'s test of the task's promise is `<`: at its deadline
/// the task goes back to pending.
struct ReleaseAtDeadline;

impl Hooks for ReleaseAtDeadline {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        match req {
            Request::TaskRelease(r) => live_at_deadline(m, &r.id, req, now, next),
            _ => next(m, req, now),
        }
    }
}

/// `task.heartbeat`'s test is `timeoutAt ≥ now`: every named task whose
/// promise is pending exactly at its deadline has its lease renewed too.
/// The deadlines are moved for the handler and put back after (a heartbeat
/// writes no promise).
struct HeartbeatAtDeadline;

impl Hooks for HeartbeatAtDeadline {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskHeartbeat(r) = req else {
            return next(m, req, now);
        };
        let moved: Vec<String> = r
            .tasks
            .iter()
            .filter(|t| {
                m.state
                    .get_promise(&t.id)
                    .is_some_and(|p| p.state == PromiseState::Pending && p.timeout_at == now)
            })
            .map(|t| t.id.clone())
            .collect();
        for id in &moved {
            patch_promise(m, id, |p| p.timeout_at = now + 1);
        }
        let res = next(m, req, now);
        for id in &moved {
            patch_promise(m, id, |p| p.timeout_at = now);
        }
        res
    }
}

/// The environment's due test for one group of timers (0 promise, 1
/// retry, 2 lease, 3 schedule, [`Timer::group`]) is `deadline < now`: a
/// timer of that group exactly at its deadline is not fired (it stays
/// armed, and the next tick past it fires it).
struct Late(usize);

impl Hooks for Late {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        if timer.group() == self.0 && m.deadline(timer) == Some(now) {
            return;
        }
        next(m, timer, now)
    }
}
