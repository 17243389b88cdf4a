//! Holding a task: `task.heartbeat` (T-05), `task.fulfill` (T-07, a
//! settlement site), `task.release` (T-08).
//!
//! | name | Lean line | what |
//! |---|---|---|
//! | `heartbeat-ignores-pid` | T-05:11 | `task.heartbeat` refreshes leases held by any pid |
//! | `heartbeat-ignores-expiry` | T-05:14 | the lease is renewed although the task's promise has expired (Rust server, row 06) |
//! | `heartbeat-extends-from-deadline` | T-05:16 | the new lease is the old deadline plus `ttl`, not `now + ttl` |
//! | `fulfill-always-resolved` | T-07:19 | `task.fulfill` settles the promise `resolved` whatever the requested state |
//! | `fulfill-keeps-lease-timeout` | T-07:23 | the fulfilled task's lease timeout stays armed |
//! | `fulfill-no-unblock` | T-07:31 | `task.fulfill` sends no `unblock` to the promise's listeners |
//! | `release-bumps-version` | T-08:18 | `task.release` increments the version |
//! | `release-no-retry` | T-08:21 | the released task gets no retry timeout |

use std::collections::BTreeMap;

use model::api::{PromiseSettleReq, Request, Response, TaskFulfillReq, TaskHeartbeatReq};
use model::machine::Machine;
use model::state::{LEASE, RETRY};
use model::types::{PromiseState, TaskState, Time};

use super::effects::{is_live, patch_promise, patch_task};
use super::witness::*;
use crate::{Class, Deviation, Hooks, Next};

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[
    Deviation {
        name: "heartbeat-ignores-pid",
        spec: "spec/02-actions/T-05-task.heartbeat.lean:11",
        class: Class::Bug,
        summary: "task.heartbeat refreshes leases held by any pid",
        hooks: &HeartbeatIgnoresPid,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 1000, LATER)),
                at(T0 + 1, heartbeat("p2", &[("a", 1)])),
            ]
        },
    },
    Deviation {
        name: "heartbeat-ignores-expiry",
        spec: "spec/02-actions/T-05-task.heartbeat.lean:14",
        class: Class::Bug,
        summary: "task.heartbeat renews the lease although the task's promise is past its deadline",
        hooks: &HeartbeatIgnoresExpiry,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, T0 + 10)),
                at(T0 + 20, heartbeat("p1", &[("a", 1)])),
            ]
        },
    },
    Deviation {
        name: "heartbeat-extends-from-deadline",
        spec: "spec/02-actions/T-05-task.heartbeat.lean:16",
        class: Class::Bug,
        summary: "task.heartbeat extends the lease from its current deadline (deadline + ttl) instead of now + ttl",
        hooks: &HeartbeatExtendsFromDeadline,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 1000, LATER)),
                at(T0 + 1, heartbeat("p1", &[("a", 1)])),
            ]
        },
    },
    Deviation {
        name: "fulfill-always-resolved",
        spec: "spec/02-actions/T-07-task.fulfill.lean:19",
        class: Class::Bug,
        summary: "task.fulfill settles the task's promise as resolved whatever state the action asks for",
        hooks: &FulfillAlwaysResolved,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, fulfill("a", 1, PromiseState::Rejected)),
            ]
        },
    },
    Deviation {
        name: "fulfill-keeps-lease-timeout",
        spec: "spec/02-actions/T-07-task.fulfill.lean:23",
        class: Class::Bug,
        summary: "task.fulfill leaves the fulfilled task's lease timeout armed",
        hooks: &FulfillKeepsLeaseTimeout,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, fulfill("a", 1, PromiseState::Resolved)),
            ]
        },
    },
    Deviation {
        name: "fulfill-no-unblock",
        spec: "spec/02-actions/T-07-task.fulfill.lean:31",
        class: Class::Bug,
        summary: "task.fulfill settles the promise without sending unblock to its listeners",
        hooks: &FulfillNoUnblock,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, listen("a")),
                at(T0, fulfill("a", 1, PromiseState::Resolved)),
            ]
        },
    },
    Deviation {
        name: "release-bumps-version",
        spec: "spec/02-actions/T-08-task.release.lean:18",
        class: Class::Bug,
        summary: "task.release increments the version",
        hooks: &ReleaseBumpsVersion,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, release("a", 1)),
            ]
        },
    },
    Deviation {
        name: "release-no-retry",
        spec: "spec/02-actions/T-08-task.release.lean:21",
        class: Class::Bug,
        summary: "task.release returns the task to pending without arming its retry timeout",
        hooks: &ReleaseNoRetry,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, release("a", 1)),
            ]
        },
    },
];

/// Ported from the runner's planted bugs: the holder check compares the
/// task with itself (its own pid) instead of with the request's, so any
/// process keeps any lease alive.
struct HeartbeatIgnoresPid;

impl Hooks for HeartbeatIgnoresPid {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskHeartbeat(r) = req else {
            return next(m, req, now);
        };
        for t in &r.tasks {
            let pid = m
                .state
                .get_task(&t.id)
                .and_then(|task| task.pid.clone())
                .unwrap_or_else(|| r.pid.clone());
            let one = TaskHeartbeatReq {
                pid,
                tasks: vec![t.clone()],
            };
            next(m, &Request::TaskHeartbeat(one), now);
        }
        Response::Status(200)
    }
}

/// Whether `task.heartbeat`'s holder test passes for ref `(id, version)`.
fn held(m: &Machine, id: &str, version: u64, pid: &str) -> bool {
    m.state.get_task(id).is_some_and(|t| {
        t.state == TaskState::Acquired && t.version == version && t.pid.as_deref() == Some(pid)
    })
}

/// The Rust server's heartbeat updates the lease of a held task without
/// looking at its promise, so a task whose promise has expired (and which
/// can only be fulfilled by the timeout) keeps being renewed.
struct HeartbeatIgnoresExpiry;

impl Hooks for HeartbeatIgnoresExpiry {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskHeartbeat(r) = req else {
            return next(m, req, now);
        };
        let res = next(m, req, now);
        for t in &r.tasks {
            let expired = m
                .state
                .get_promise(&t.id)
                .is_some_and(|p| p.state == PromiseState::Pending && p.timeout_at <= now);
            if held(m, &t.id, t.version, &r.pid) && expired {
                let ttl = m.state.get_task(&t.id).and_then(|t| t.ttl).unwrap_or(0);
                m.state.del_task_timeout(&t.id);
                m.state
                    .set_task_timeout(&t.id, LEASE, now.saturating_add(ttl));
            }
        }
        res
    }
}

/// "Extend the lease by its ttl": the renewal adds `ttl` to the current
/// deadline instead of counting from now, so a process heartbeating early
/// and often accumulates a lease far beyond `now + ttl`.
struct HeartbeatExtendsFromDeadline;

impl Hooks for HeartbeatExtendsFromDeadline {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskHeartbeat(r) = req else {
            return next(m, req, now);
        };
        let mut leases: BTreeMap<&str, Time> = r
            .tasks
            .iter()
            .filter_map(|t| Some((t.id.as_str(), m.state.task_timeouts(LEASE).get(&t.id)?)))
            .collect();
        let res = next(m, req, now);
        let mut extended: BTreeMap<&str, Time> = BTreeMap::new();
        for t in &r.tasks {
            if held(m, &t.id, t.version, &r.pid) && is_live(m, &t.id, now) {
                let ttl = m.state.get_task(&t.id).and_then(|t| t.ttl).unwrap_or(0);
                let from = leases.get(t.id.as_str()).copied().unwrap_or(now);
                let to = from.saturating_add(ttl);
                leases.insert(&t.id, to);
                extended.insert(&t.id, to);
            }
        }
        for (id, at) in extended {
            m.state.set_task_timeout(id, LEASE, at);
        }
        res
    }
}

/// "Fulfill" read as "succeed": the action's state is ignored and the
/// task's promise resolves, so a task reporting failure looks successful.
struct FulfillAlwaysResolved;

impl Hooks for FulfillAlwaysResolved {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        if let Request::TaskFulfill(r) = req {
            if r.action.state != PromiseState::Resolved {
                let forged = TaskFulfillReq {
                    action: PromiseSettleReq {
                        state: PromiseState::Resolved,
                        ..r.action.clone()
                    },
                    ..r.clone()
                };
                return next(m, &Request::TaskFulfill(forged), now);
            }
        }
        next(m, req, now)
    }
}

/// The task is written fulfilled but `delTaskTimeout` is forgotten: its
/// lease timeout stays armed on a task that can never be acquired again.
struct FulfillKeepsLeaseTimeout;

impl Hooks for FulfillKeepsLeaseTimeout {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskFulfill(r) = req else {
            return next(m, req, now);
        };
        let armed = [RETRY, LEASE].map(|kind| m.state.task_timeouts(kind).get(&r.id));
        let res = next(m, req, now);
        if res.status() == 200 {
            for (kind, at) in armed.into_iter().enumerate() {
                if let Some(at) = at {
                    m.state.set_task_timeout(&r.id, kind, at);
                }
            }
        }
        res
    }
}

/// The fulfill path settles the promise and resumes its awaiters but skips
/// the listeners' `unblock` (only `promise.settle` was taught to notify):
/// whoever listens on a task's result never hears of it.
struct FulfillNoUnblock;

impl Hooks for FulfillNoUnblock {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskFulfill(r) = req else {
            return next(m, req, now);
        };
        let Some(before) = m.state.get_promise(&r.id).cloned() else {
            return next(m, req, now);
        };
        if before.listeners.is_empty() {
            return next(m, req, now);
        }
        // Settle with no listeners to notify; a refused fulfill writes
        // nothing, so the promise is put back as it was.
        patch_promise(m, &r.id, |p| p.listeners.clear());
        let res = next(m, req, now);
        if res.status() != 200 {
            m.state.set_promise(before);
        }
        res
    }
}

/// Ported from the runner's planted bugs: release treated as a claim
/// transition, bumping the fencing token (the `execute` it sends still
/// carries the old one).
struct ReleaseBumpsVersion;

impl Hooks for ReleaseBumpsVersion {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskRelease(r) = req else {
            return next(m, req, now);
        };
        let res = next(m, req, now);
        if res.status() == 200 {
            patch_task(m, &r.id, |t| t.version += 1);
        }
        res
    }
}

/// The lease is dropped (`delTaskTimeout`) but the retry is not armed: the
/// released task is dispatched once and, if that `execute` is lost, never
/// again.
struct ReleaseNoRetry;

impl Hooks for ReleaseNoRetry {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskRelease(r) = req else {
            return next(m, req, now);
        };
        let res = next(m, req, now);
        if res.status() == 200 {
            m.state.del_task_timeout(&r.id);
        }
        res
    }
}
