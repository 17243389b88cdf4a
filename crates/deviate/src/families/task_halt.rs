//! Halting and continuing: `task.halt` (T-09), `task.continue` (T-10).
//!
//! | name | Lean line | what |
//! |---|---|---|
//! | `halt-fulfilled-ok` | T-09:10 | `task.halt` of a fulfilled task answers 200 instead of 409 |
//! | `halt-not-idempotent` | T-09:11 | `task.halt` of a halted task answers 409 instead of 200 |
//! | `continue-bumps-version` | T-10:16 | `task.continue` increments the version (and the `execute`'s) |

use model::api::{Request, Response};
use model::machine::Machine;
use model::state::Message;
use model::types::{TaskState, Time};

use super::effects::{patch_task, task_state};
use super::witness::*;
use crate::{Class, Deviation, Hooks, Next};

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[
    Deviation {
        name: "halt-fulfilled-ok",
        spec: "spec/02-actions/T-09-task.halt.lean:10",
        class: Class::Bug,
        summary: "task.halt of a fulfilled task answers 200 (nothing to do) instead of 409",
        hooks: &HaltFulfilledOk,
        witness: || {
            vec![
                // Created past its deadline: the task is fulfilled at once.
                at(T0, task_create("a", "p1", 60_000, T0 - 1)),
                at(T0, halt("a")),
            ]
        },
    },
    Deviation {
        name: "halt-not-idempotent",
        spec: "spec/02-actions/T-09-task.halt.lean:11",
        class: Class::Bug,
        summary: "task.halt of a halted task answers 409",
        hooks: &HaltNotIdempotent,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, halt("a")),
                at(T0, halt("a")),
            ]
        },
    },
    Deviation {
        name: "continue-bumps-version",
        spec: "spec/02-actions/T-10-task.continue.lean:16",
        class: Class::Bug,
        summary: "task.continue increments the task's version and sends execute with the new one",
        hooks: &ContinueBumpsVersion,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, halt("a")),
                at(T0, continue_task("a")),
            ]
        },
    },
];

/// The terminal states are folded together: halting a fulfilled task is
/// "already stopped, nothing to do" (200), where the spec refuses it (409)
/// so the caller learns the task finished.
struct HaltFulfilledOk;

impl Hooks for HaltFulfilledOk {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskHalt(r) = req else {
            return next(m, req, now);
        };
        let fulfilled = task_state(m, &r.id) == Some(TaskState::Fulfilled);
        let res = next(m, req, now);
        if fulfilled {
            return Response::Status(200);
        }
        res
    }
}

/// Ported from the runner's planted bugs: halt guarded as a transition
/// from the live states only, so a repeated (retried) halt is refused.
struct HaltNotIdempotent;

impl Hooks for HaltNotIdempotent {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        if let Request::TaskHalt(r) = req {
            if task_state(m, &r.id) == Some(TaskState::Halted) {
                return Response::Status(409);
            }
        }
        next(m, req, now)
    }
}

/// Continue treated as a new claim: the version is bumped and the
/// `execute` carries it, so a worker holding the pre-halt version is fenced
/// out although only `acquire` may change the token.
struct ContinueBumpsVersion;

impl Hooks for ContinueBumpsVersion {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskContinue(r) = req else {
            return next(m, req, now);
        };
        let res = next(m, req, now);
        if res.status() != 200 {
            return res;
        }
        patch_task(m, &r.id, |t| t.version += 1);
        let version = m.state.get_task(&r.id).map_or(0, |t| t.version);
        let target = m
            .state
            .get_promise(&r.id)
            .map(|p| p.target().to_string())
            .unwrap_or_default();
        m.state.set_message(
            &target,
            Message::Execute {
                task_id: r.id.clone(),
                version,
            },
        );
        res
    }
}
