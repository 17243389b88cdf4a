//! Claiming and reading a task: `task.get` (T-01), `task.create` (T-02),
//! `task.acquire` (T-03) and `task.fence` (T-04).
//!
//! | name | Lean line | what |
//! |---|---|---|
//! | `task-get-projection-keeps-lease` | T-01:17 | the `fulfilled` projection keeps `pid` and `ttl` |
//! | `task-get-projection-keeps-resumes` | T-01:17 | the `fulfilled` projection keeps the buffered resumes (TS server, none mode, B5) |
//! | `task-create-no-promise-timeout` | T-02:14 | a new task's promise gets no promise timeout |
//! | `task-create-no-target-409` | T-02:37 | an existing promise without target answers 409 (task looked up first), not 422 |
//! | `task-create-reacquire-no-bump` | T-02:44 | re-acquiring a pending task through `task.create` keeps its version |
//! | `task-create-acquired-idempotent` | T-02:50 | `task.create` of a task its pid already holds answers 200, not 409 |
//! | `acquire-at-deadline` | T-03:15 | `task.acquire` at `now == timeoutAt` of the promise succeeds (`<` for `≤`) |
//! | `acquire-no-version-check` | T-03:16 | `task.acquire` of a pending task ignores the requested version |
//! | `acquire-keeps-retry-timeout` | T-03:19 | the retry timeout stays armed next to the new lease |
//! | `fence-hoists-inner-status` | T-04:24 | the fence answers its inner action's status (404) instead of 200 |

use model::api::{
    Request, Response, TaskAcquireReq, TaskClaimRes, TaskFenceInnerRes, TaskFenceRes,
};
use model::machine::Machine;
use model::state::{RETRY, TARGET};
use model::types::{PromiseState, TaskState, Time};

use super::effects::{is_pending, patch_task, with_deadline};
use super::witness::*;
use crate::{Class, Deviation, Hooks, Next};

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[
    Deviation {
        name: "task-get-projection-keeps-lease",
        spec: "spec/02-actions/T-01-task.get.lean:17",
        class: Class::Bug,
        summary: "task.get of a task whose promise is no longer live reads fulfilled but keeps pid and ttl",
        hooks: &TaskGetProjectionKeepsLease,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, T0 + 10)),
                at(T0 + 20, task_get("a")),
            ]
        },
    },
    Deviation {
        name: "task-get-projection-keeps-resumes",
        spec: "spec/02-actions/T-01-task.get.lean:17",
        class: Class::Bug,
        summary: "task.get of a task whose promise has expired answers it fulfilled but with its buffered resumes (resumes := [] forgotten)",
        hooks: &TaskGetProjectionKeepsResumes,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, T0 + 10)),
                at(T0, create("a.1", LATER, none())),
                at(T0, callback("a.1", "a")),
                // Buffers a resume on the acquired task.
                at(T0, settle("a.1", PromiseState::Resolved)),
                at(T0 + 10, task_get("a")),
            ]
        },
    },
    Deviation {
        name: "task-create-no-promise-timeout",
        spec: "spec/02-actions/T-02-task.create.lean:14",
        class: Class::Bug,
        summary: "task.create of a new live promise does not arm its promise timeout",
        hooks: &TaskCreateNoPromiseTimeout,
        witness: || vec![at(T0, task_create("a", "p1", 60_000, LATER))],
    },
    Deviation {
        name: "task-create-no-target-409",
        spec: "spec/02-actions/T-02-task.create.lean:37",
        class: Class::Bug,
        summary: "task.create on an existing promise without target answers 409 (no task) instead of 422",
        hooks: &TaskCreateNoTarget409,
        witness: || {
            vec![
                at(T0, create("a", LATER, none())),
                at(T0, task_create("a", "p1", 60_000, LATER)),
            ]
        },
    },
    Deviation {
        name: "task-create-reacquire-no-bump",
        spec: "spec/02-actions/T-02-task.create.lean:44",
        class: Class::Bug,
        summary: "task.create re-acquiring an existing pending task keeps its version instead of bumping it",
        hooks: &TaskCreateReacquireNoBump,
        witness: || {
            vec![
                // A pending task at version 0.
                at(T0, create("a", LATER, target())),
                at(T0, task_create("a", "p1", 60_000, LATER)),
            ]
        },
    },
    Deviation {
        name: "task-create-acquired-idempotent",
        spec: "spec/02-actions/T-02-task.create.lean:50",
        class: Class::Bug,
        summary: "task.create of a task already acquired by the same pid answers 200 with it instead of 409",
        hooks: &TaskCreateAcquiredIdempotent,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, task_create("a", "p1", 60_000, LATER)),
            ]
        },
    },
    Deviation {
        name: "acquire-at-deadline",
        spec: "spec/02-actions/T-03-task.acquire.lean:15",
        class: Class::Bug,
        summary: "task.acquire succeeds at now == timeoutAt of the task's promise (< for ≤)",
        hooks: &AcquireAtDeadline,
        witness: || {
            vec![
                at(T0, create("a", T0 + 10, target())),
                at(T0 + 10, acquire("a", 0, "p1", 60_000)),
            ]
        },
    },
    Deviation {
        name: "acquire-no-version-check",
        spec: "spec/02-actions/T-03-task.acquire.lean:16",
        class: Class::Bug,
        summary: "task.acquire of a pending task ignores the requested version",
        hooks: &AcquireNoVersionCheck,
        witness: || {
            vec![
                // A pending task at version 0 ...
                at(T0, create("a", LATER, target())),
                // ... acquired at a version it does not have.
                at(T0, acquire("a", 7, "p2", 1000)),
            ]
        },
    },
    Deviation {
        name: "acquire-keeps-retry-timeout",
        spec: "spec/02-actions/T-03-task.acquire.lean:19",
        class: Class::Bug,
        summary: "task.acquire arms the lease without disarming the pending task's retry timeout",
        hooks: &AcquireKeepsRetryTimeout,
        witness: || {
            vec![
                at(T0, create("a", LATER, target())),
                at(T0, acquire("a", 0, "p1", 60_000)),
            ]
        },
    },
    Deviation {
        name: "fence-hoists-inner-status",
        spec: "spec/02-actions/T-04-task.fence.lean:24",
        class: Class::Bug,
        summary: "task.fence answers its delegated action's status (404 for a missing promise) instead of 200 with the inner response",
        hooks: &FenceHoistsInnerStatus,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, fence_settle("a", 1, "a.1")),
            ]
        },
    },
];

/// The projection of a task whose promise is settled or expired sets the
/// state but forgets to drop the lease fields (`pid := none, ttl := none`).
struct TaskGetProjectionKeepsLease;

impl Hooks for TaskGetProjectionKeepsLease {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskGet(r) = req else {
            return next(m, req, now);
        };
        let lease = m.state.get_task(&r.id).map(|t| (t.pid.clone(), t.ttl));
        let mut res = next(m, req, now);
        if let (Response::TaskGet(g), Some((pid, ttl))) = (&mut res, lease) {
            if let Some(t) = g.task.as_mut().filter(|t| t.state == TaskState::Fulfilled) {
                t.pid = pid;
                t.ttl = ttl;
            }
        }
        res
    }
}

/// `task.create` writes the promise as `promise.create` would but skips
/// `setPromiseTimeout` (unlike `promise.create`, it arms unconditionally):
/// the promise never times out and its task is held past the deadline.
struct TaskCreateNoPromiseTimeout;

impl Hooks for TaskCreateNoPromiseTimeout {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskCreate(r) = req else {
            return next(m, req, now);
        };
        let fresh = m.state.get_promise(&r.action.id).is_none() && r.action.timeout_at > now;
        let res = next(m, req, now);
        if fresh {
            m.state.del_promise_timeout(&r.action.id);
        }
        res
    }
}

/// The existing branch looks the task up before checking the promise's
/// target: a promise without target has no task, so the answer is the
/// "no task" 409 instead of the 422 for a promise that is not a task's.
struct TaskCreateNoTarget409;

impl Hooks for TaskCreateNoTarget409 {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskCreate(r) = req else {
            return next(m, req, now);
        };
        let untargeted = m
            .state
            .get_promise(&r.action.id)
            .is_some_and(|p| !p.tags.contains_key(TARGET))
            && m.state.get_task(&r.action.id).is_none();
        let res = next(m, req, now);
        if untargeted {
            return Response::TaskClaim(TaskClaimRes {
                status: 409,
                task: None,
                promise: None,
                preload: Vec::new(),
            });
        }
        res
    }
}

/// The re-acquire branch copies the lease fields but forgets the version
/// bump `task.acquire` does: the new holder gets the fencing token the
/// previous holder (or the pending dispatch) already has.
struct TaskCreateReacquireNoBump;

impl Hooks for TaskCreateReacquireNoBump {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskCreate(r) = req else {
            return next(m, req, now);
        };
        let id = &r.action.id;
        let pending = m
            .state
            .get_promise(id)
            .is_some_and(|p| p.tags.contains_key(TARGET))
            .then(|| m.state.get_task(id))
            .flatten()
            .filter(|t| t.state == TaskState::Pending)
            .map(|t| t.version);
        let mut res = next(m, req, now);
        if let (Some(version), Response::TaskClaim(c)) = (pending, &mut res) {
            if c.status == 200 {
                patch_task(m, id, |t| t.version = version);
                if let Some(t) = c.task.as_mut() {
                    t.version = version;
                }
            }
        }
        res
    }
}

/// A retried `task.create` from the process that already holds the task is
/// treated as idempotent: 200 with the task as it is, where the spec says
/// 409 for any task neither pending nor fulfilled.
struct TaskCreateAcquiredIdempotent;

impl Hooks for TaskCreateAcquiredIdempotent {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskCreate(r) = req else {
            return next(m, req, now);
        };
        let id = &r.action.id;
        let held = m
            .state
            .get_promise(id)
            .filter(|p| p.tags.contains_key(TARGET))
            .and_then(|p| {
                let t = m.state.get_task(id)?;
                let mine = t.state == TaskState::Acquired && t.pid.as_deref() == Some(&r.pid);
                mine.then(|| (t.to_record(), p.to_record()))
            });
        let res = next(m, req, now);
        match held {
            Some((task, promise)) => Response::TaskClaim(TaskClaimRes {
                status: 200,
                task: Some(task),
                promise: Some(promise),
                preload: Vec::new(),
            }),
            None => res,
        }
    }
}

/// An off-by-one in the spine's liveness test (`timeoutAt < now`): at the
/// millisecond of its promise's deadline the task is still handed out.
struct AcquireAtDeadline;

impl Hooks for AcquireAtDeadline {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        if let Request::TaskAcquire(r) = req {
            let at_deadline = m.state.get_task(&r.id).is_some()
                && is_pending(m, &r.id)
                && m.state
                    .get_promise(&r.id)
                    .is_some_and(|p| p.timeout_at == now);
            if at_deadline {
                return with_deadline(m, &r.id, now + 1, |m| next(m, req, now));
            }
        }
        next(m, req, now)
    }
}

/// The fencing check is skipped for a pending task: any version acquires.
struct AcquireNoVersionCheck;

impl Hooks for AcquireNoVersionCheck {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        if let Request::TaskAcquire(r) = req {
            if let Some(t) = m.state.get_task(&r.id) {
                if t.state == TaskState::Pending && t.version != r.version {
                    let forged = TaskAcquireReq {
                        version: t.version,
                        ..r.clone()
                    };
                    return next(m, &Request::TaskAcquire(forged), now);
                }
            }
        }
        next(m, req, now)
    }
}

/// `setTaskTimeout` replaces only the entry of the same kind: arming the
/// lease without `delTaskTimeout` leaves the retry armed, so the acquired
/// task is re-dispatched by a stale retry once its lease ends.
struct AcquireKeepsRetryTimeout;

impl Hooks for AcquireKeepsRetryTimeout {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskAcquire(r) = req else {
            return next(m, req, now);
        };
        let retry = m.state.task_timeouts(RETRY).get(&r.id);
        let res = next(m, req, now);
        if let (200, Some(at)) = (res.status(), retry) {
            m.state.set_task_timeout(&r.id, RETRY, at);
        }
        res
    }
}

/// The fence forwards its delegate's status as its own: a fenced settle of
/// a missing promise answers 404 with no action, where the spec's fence
/// answers 200 and the inner response carries the 404.
struct FenceHoistsInnerStatus;

impl Hooks for FenceHoistsInnerStatus {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let res = next(m, req, now);
        if let Response::TaskFence(f) = &res {
            let inner = match &f.action {
                Some(TaskFenceInnerRes::Create(p) | TaskFenceInnerRes::Settle(p)) => p.status,
                None => f.status,
            };
            if inner != f.status {
                return Response::TaskFence(TaskFenceRes {
                    status: inner,
                    action: None,
                    preload: Vec::new(),
                });
            }
        }
        res
    }
}

/// The TS server's `projectedTask` (`local.js:1174-1183`) is `{ ...task,
/// state: "fulfilled", pid: undefined, ttl: undefined }`: the buffered
/// resumes stay in the projection, where T-01:17 clears them. (With eager
/// timeouts the promise is settled first and the task really fulfilled,
/// so only a server that projects shows it.)
struct TaskGetProjectionKeepsResumes;

impl Hooks for TaskGetProjectionKeepsResumes {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskGet(r) = req else {
            return next(m, req, now);
        };
        let buffered = m
            .state
            .get_task(&r.id)
            .filter(|t| t.state != TaskState::Fulfilled)
            .map(|t| t.resumes.len() as u64);
        let mut res = next(m, req, now);
        if let (Response::TaskGet(g), Some(n)) = (&mut res, buffered) {
            if let Some(t) = g.task.as_mut().filter(|t| t.state == TaskState::Fulfilled) {
                t.resumes = n;
            }
        }
        res
    }
}
