//! A task's version (its fencing token) kept another way: where a task is
//! made (`task.create`, T-02), acquired (`task.acquire`, T-03) and released
//! by its lease timing out (`onTaskLeaseTimeout`, `02-timeouts.lean`). The
//! Python SDK's server (`resonate/connections/local.py`) starts a task at 0
//! and bumps it on every return to pending instead of on every acquire
//! (`scripts/py-server/DIALECT.md` B5, B7, B8, B9), and checks no version
//! where the task is held (B11).
//!
//! | name | Lean line | what |
//! |---|---|---|
//! | `task-create-new-version-zero` | T-02:16 | `task.create` of a new promise makes its task acquired at version 0, not 1 (Python server, B5) |
//! | `acquire-keeps-version` | T-03:17 | `task.acquire` leaves the version as it was instead of incrementing it (Python server, B7) |
//! | `release-bumps-version-in-execute` | T-08:18 | `task.release` increments the version and its `execute` carries the new one (Python server, B8; `release-bumps-version` keeps the old one in the message) |
//! | `release-no-version-check` | T-08:17 | `task.release` of an acquired task ignores the requested version (Python server, B11) |
//! | `fulfill-no-version-check` | T-07:16 | `task.fulfill` of an acquired task ignores the requested version (Python server, B11) |
//! | `suspend-no-version-check` | T-06:16 | `task.suspend` of an acquired task ignores the requested version (Python server, B11) |
//! | `lease-expiry-bumps-version` | 02-timeouts:67 | a lease timing out returns the task to pending with its version incremented, and the `execute` carries the new one (Python server, B9) |

use model::api::{Request, Response, TaskFulfillReq, TaskReleaseReq, TaskSuspendReq};
use model::machine::{Machine, Timer};
use model::types::{TaskState, Time};

use super::effects::{patch_task, redispatch_current};
use super::witness::*;
use crate::{Class, Deviation, Hooks, Next, NextFire};

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[
    Deviation {
        name: "task-create-new-version-zero",
        spec: "spec/02-actions/T-02-task.create.lean:16",
        class: Class::Bug,
        summary: "task.create of a new promise makes its task acquired at version 0 instead of 1",
        hooks: &TaskCreateNewVersionZero,
        witness: || vec![at(T0, task_create("a", "p1", 60_000, LATER))],
    },
    Deviation {
        name: "acquire-keeps-version",
        spec: "spec/02-actions/T-03-task.acquire.lean:17",
        class: Class::Bug,
        summary: "task.acquire keeps the task's version instead of incrementing it",
        hooks: &AcquireKeepsVersion,
        witness: || {
            vec![
                // A pending task at version 0.
                at(T0, create("a", LATER, target())),
                at(T0, acquire("a", 0, "p1", 60_000)),
            ]
        },
    },
    Deviation {
        name: "release-bumps-version-in-execute",
        spec: "spec/02-actions/T-08-task.release.lean:18",
        class: Class::Bug,
        summary: "task.release increments the version and sends execute with the new one",
        hooks: &ReleaseBumpsVersionInExecute,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, release("a", 1)),
            ]
        },
    },
    Deviation {
        name: "release-no-version-check",
        spec: "spec/02-actions/T-08-task.release.lean:17",
        class: Class::Bug,
        summary: "task.release of an acquired task ignores the requested version",
        hooks: &HeldNoVersionCheck("task.release"),
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, release("a", 7)),
            ]
        },
    },
    Deviation {
        name: "fulfill-no-version-check",
        spec: "spec/02-actions/T-07-task.fulfill.lean:16",
        class: Class::Bug,
        summary: "task.fulfill of an acquired task ignores the requested version",
        hooks: &HeldNoVersionCheck("task.fulfill"),
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, fulfill("a", 7, model::types::PromiseState::Resolved)),
            ]
        },
    },
    Deviation {
        name: "suspend-no-version-check",
        spec: "spec/02-actions/T-06-task.suspend.lean:16",
        class: Class::Bug,
        summary: "task.suspend of an acquired task ignores the requested version",
        hooks: &HeldNoVersionCheck("task.suspend"),
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, suspend("a", 7, &[])),
            ]
        },
    },
    Deviation {
        name: "lease-expiry-bumps-version",
        spec: "spec/02-actions/02-timeouts.lean:67",
        class: Class::Bug,
        summary: "a lease timing out returns the task to pending with its version incremented (and the execute carries it)",
        hooks: &LeaseExpiryBumpsVersion,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 1_000, LATER)),
                tick(T0 + 1_000),
            ]
        },
    },
];

/// The new task is made as the promise's own would be (version 0) and
/// acquired without the bump (`Task(version=0, state="acquired")`,
/// local.py:669).
struct TaskCreateNewVersionZero;

impl Hooks for TaskCreateNewVersionZero {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskCreate(r) = req else {
            return next(m, req, now);
        };
        let id = &r.action.id;
        let new = m.state.get_promise(id).is_none();
        let mut res = next(m, req, now);
        let acquired = m
            .state
            .get_task(id)
            .is_some_and(|t| t.state == TaskState::Acquired && t.version > 0);
        if let (true, true, Response::TaskClaim(c)) = (new, acquired, &mut res) {
            if c.status == 200 {
                patch_task(m, id, |t| t.version -= 1);
                if let Some(t) = c.task.as_mut() {
                    t.version -= 1;
                }
            }
        }
        res
    }
}

/// The acquire sets state, pid and ttl and no version (local.py:710-714).
struct AcquireKeepsVersion;

impl Hooks for AcquireKeepsVersion {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskAcquire(r) = req else {
            return next(m, req, now);
        };
        let before = m.state.get_task(&r.id).map(|t| t.version);
        let mut res = next(m, req, now);
        if let (Some(version), Response::TaskClaim(c)) = (before, &mut res) {
            if c.status == 200 {
                patch_task(m, &r.id, |t| t.version = version);
                if let Some(t) = c.task.as_mut() {
                    t.version = version;
                }
            }
        }
        res
    }
}

/// The tick's lease phase writes `version + 1` and sends `execute` with it
/// (local.py:357-371).
struct LeaseExpiryBumpsVersion;

impl Hooks for LeaseExpiryBumpsVersion {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let Timer::TaskLease(id) = timer else {
            return next(m, timer, now);
        };
        let acquired = m
            .state
            .get_task(id)
            .is_some_and(|t| t.state == TaskState::Acquired);
        next(m, timer, now);
        if !acquired {
            return;
        }
        patch_task(m, id, |t| t.version += 1);
        redispatch_current(m, id);
    }
}

/// The release writes `version + 1` and sends `execute` with it
/// (local.py:735-745).
struct ReleaseBumpsVersionInExecute;

impl Hooks for ReleaseBumpsVersionInExecute {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskRelease(r) = req else {
            return next(m, req, now);
        };
        let res = next(m, req, now);
        if res.status() == 200 {
            patch_task(m, &r.id, |t| t.version += 1);
            redispatch_current(m, &r.id);
        }
        res
    }
}

/// Release, fulfil and suspend look the task up, check it is acquired and
/// go on with no version compare (local.py:726-746, 748-782, 822-879): the
/// request is handed on with the task's own version, so every other guard
/// is the spec's. One hook for the kind it names, three entries: each is
/// its own departure, on its own Lean line, and a baseline names the ones
/// its server has.
struct HeldNoVersionCheck(&'static str);

impl Hooks for HeldNoVersionCheck {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        if req.kind() != self.0 {
            return next(m, req, now);
        }
        let id = match req {
            Request::TaskRelease(r) => &r.id,
            Request::TaskFulfill(r) => &r.id,
            Request::TaskSuspend(r) => &r.id,
            _ => return next(m, req, now),
        };
        let Some(version) = m
            .state
            .get_task(id)
            .filter(|t| t.state == TaskState::Acquired)
            .map(|t| t.version)
        else {
            return next(m, req, now);
        };
        let forged = match req {
            Request::TaskRelease(r) if r.version != version => {
                Request::TaskRelease(TaskReleaseReq {
                    version,
                    ..r.clone()
                })
            }
            Request::TaskFulfill(r) if r.version != version => {
                Request::TaskFulfill(TaskFulfillReq {
                    version,
                    ..r.clone()
                })
            }
            Request::TaskSuspend(r) if r.version != version => {
                Request::TaskSuspend(TaskSuspendReq {
                    version,
                    ..r.clone()
                })
            }
            _ => return next(m, req, now),
        };
        next(m, &forged, now)
    }
}
