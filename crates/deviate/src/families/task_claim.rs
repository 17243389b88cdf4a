//! Claiming a task: `task.create` (T-02), `task.acquire` (T-03) and
//! `task.fence` (T-04).

use model::api::{Request, Response, TaskAcquireReq};
use model::machine::Machine;
use model::types::{TaskState, Time};

use super::witness::{acquire, at, task_create, T0};
use crate::{Class, Deviation, Hooks, Next};

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[Deviation {
    name: "acquire-no-version-check",
    spec: "spec/02-actions/T-03-task.acquire.lean:16",
    class: Class::Bug,
    summary: "task.acquire of a pending task ignores the requested version",
    hooks: &AcquireNoVersionCheck,
    witness: || {
        vec![
            // Created acquired at version 1; its lease runs out at T0+10.
            at(T0, task_create("a", "p1", 10, T0 + 60_000)),
            // Lease expiry: pending again at version 1, retried later.
            super::witness::tick(T0 + 10),
            at(T0 + 10, acquire("a", 7, "p2", 1000)),
        ]
    },
}];

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
