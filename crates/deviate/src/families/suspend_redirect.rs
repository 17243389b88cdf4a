//! `task.suspend` (T-06) as a redirect first: the Python SDK's server
//! (`task_suspend`, `resonate/connections/local.py:822-879`) answers 300
//! for any buffered resume before it reads the awaited promises, skips the
//! ones that do not exist, and registers its callbacks on the pending ones
//! even when it then answers 300 (`scripts/py-server/DIALECT.md` B15-B17).
//!
//! | name | Lean line | what |
//! |---|---|---|
//! | `suspend-redirects-on-buffered-resume` | T-06:17 | an acquired task with a buffered resume answers 300 (and forgets the resume) whatever it awaits (Python server, B15) |
//! | `suspend-skips-missing-awaited` | T-06:20 | an awaited promise that does not exist is skipped instead of answering 422 (Python server, B16) |
//! | `suspend-300-keeps-callbacks` | T-06:25 | answering 300 for a settled awaited promise, the callbacks on the pending ones are registered anyway (Python server, B17) |
//!
//! In a baseline, `suspend-no-version-check` (if named) goes before these
//! (outermost), so they see the task's own version; and
//! `suspend-redirects-on-buffered-resume` before `suspend-300-keeps-callbacks`,
//! which leaves a redirect it did not make alone.

use model::api::{Request, Response, TaskSuspendReq, TaskSuspendRes};
use model::machine::Machine;
use model::types::{PromiseState, TaskState, Time};

use super::effects::{is_live, patch_promise, patch_task};
use super::witness::*;
use crate::{Class, Deviation, Hooks, Next};

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[
    Deviation {
        name: "suspend-redirects-on-buffered-resume",
        spec: "spec/02-actions/T-06-task.suspend.lean:17",
        class: Class::Bug,
        summary: "task.suspend of an acquired task with a buffered resume answers 300 and drops the resume, whatever it awaits",
        hooks: &SuspendRedirectsOnBufferedResume,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, create("a.1", LATER, none())),
                at(T0, callback("a.1", "a")),
                // Buffers a resume on the acquired task.
                at(T0, settle("a.1", PromiseState::Resolved)),
                at(T0, suspend("a", 1, &[])),
            ]
        },
    },
    Deviation {
        name: "suspend-skips-missing-awaited",
        spec: "spec/02-actions/T-06-task.suspend.lean:20",
        class: Class::Bug,
        summary: "task.suspend skips an awaited promise that does not exist instead of answering 422",
        hooks: &SuspendSkipsMissingAwaited,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, suspend("a", 1, &["a.1"])),
            ]
        },
    },
    Deviation {
        name: "suspend-300-keeps-callbacks",
        spec: "spec/02-actions/T-06-task.suspend.lean:25",
        class: Class::Bug,
        summary: "task.suspend answering 300 for a settled awaited promise still registers callbacks on the pending ones",
        hooks: &Suspend300KeepsCallbacks,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, create("a.1", LATER, none())),
                at(T0, create("a.2", T0 - 1, none())),
                at(T0, suspend("a", 1, &["a.1", "a.2"])),
            ]
        },
    },
];

/// The task as `task.suspend` finds it when every guard before the
/// awaited promises passes (acquired, the version asked, its promise
/// live): its buffered resumes.
fn held_resumes(m: &Machine, r: &TaskSuspendReq, now: Time) -> Option<usize> {
    let t = m.state.get_task(&r.id)?;
    (t.state == TaskState::Acquired && t.version == r.version && is_live(m, &r.id, now))
        .then_some(t.resumes.len())
}

/// `if t.resumes: t.resumes.clear(); return 300` (local.py:832-840), before
/// the actions are read.
struct SuspendRedirectsOnBufferedResume;

impl Hooks for SuspendRedirectsOnBufferedResume {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskSuspend(r) = req else {
            return next(m, req, now);
        };
        if held_resumes(m, r, now).unwrap_or(0) == 0 {
            return next(m, req, now);
        }
        patch_task(m, &r.id, |t| t.resumes.clear());
        Response::TaskSuspend(TaskSuspendRes {
            status: 300,
            preload: Vec::new(),
        })
    }
}

/// `if p is None: continue` (local.py:855-857): the request is handed on
/// without the missing awaited promises.
struct SuspendSkipsMissingAwaited;

impl Hooks for SuspendSkipsMissingAwaited {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskSuspend(r) = req else {
            return next(m, req, now);
        };
        let exists =
            |a: &model::api::PromiseRegisterCallbackReq| m.state.get_promise(&a.awaited).is_some();
        if r.actions.iter().all(exists) {
            return next(m, req, now);
        }
        let kept = TaskSuspendReq {
            actions: r.actions.iter().filter(|a| exists(a)).cloned().collect(),
            ..r.clone()
        };
        next(m, &Request::TaskSuspend(kept), now)
    }
}

/// The loop registers the task on every pending awaited promise and only
/// then answers 300 if one was settled (local.py:854-870).
struct Suspend300KeepsCallbacks;

impl Hooks for Suspend300KeepsCallbacks {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskSuspend(r) = req else {
            return next(m, req, now);
        };
        // A redirect for a buffered resume registers nothing.
        let settled_redirect = held_resumes(m, r, now) == Some(0);
        let res = next(m, req, now);
        if settled_redirect && res.status() == 300 {
            for a in &r.actions {
                if is_live(m, &a.awaited, now) {
                    patch_promise(m, &a.awaited, |p| {
                        if !p.callbacks.contains(&r.id) {
                            p.callbacks.push(r.id.clone());
                        }
                    });
                }
            }
        }
        res
    }
}
