//! Suspending and resuming: `task.suspend` (T-06) and the resume cascade
//! (`00-resume.lean`), which runs at every settlement site (`promise.settle`,
//! a fenced settle, `task.fulfill`, the promise timeout).
//!
//! | name | Lean line | what |
//! |---|---|---|
//! | `suspend-300-before-422` | T-06:21 | a settled awaited answers 300 before a later missing one is found (422) |
//! | `suspend-at-deadline` | T-06:23 | an awaited promise at `now == timeoutAt` counts as live: 200 instead of 300 |
//! | `suspend-reads-stored-state` | T-06:23 | an awaited promise counts as settled only by its stored state: past its deadline but not yet timed out it is awaited (200) (TS server, none mode, B4) |
//! | `suspend-refuses-internal` | T-06:22 | an awaited promise with neither target nor timer nor `resonate:external` answers 422, before the 300 (resonate-pg, P3) |
//! | `suspend-no-300` | T-06:25 | an already-settled awaited promise parks the task (200) instead of 300 |
//! | `suspend-keeps-lease` | T-06:35 | the suspended task keeps its `pid` and `ttl` |
//! | `resume-bumps-version` | 00-resume:21 | resuming a suspended task bumps its version (and the `execute`'s) |
//! | `resume-execute-to-awaited-target` | 00-resume:24 | the resume's `execute` goes to the awaited promise's target |
//! | `resume-ignores-halted` | 00-resume:30 | a halted awaiter's resume is dropped instead of buffered |

use model::api::{Request, Response, TaskSuspendReq, TaskSuspendRes};
use model::machine::{Machine, Timer};
use model::state::{TaskObject, TARGET};
use model::types::{PromiseState, TaskState, Time};

use super::effects::{
    awaiters_in, patch_promise, patch_task, pg_external, redispatch_current, settlement,
};
use super::witness::*;
use crate::{Class, Deviation, Hooks, Next, NextFire};

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[
    Deviation {
        name: "suspend-300-before-422",
        spec: "spec/02-actions/T-06-task.suspend.lean:21",
        class: Class::Bug,
        summary: "task.suspend answers 300 at the first settled awaited promise without checking that the later ones exist (422)",
        hooks: &Suspend300Before422,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, create("a.1", T0 - 1, none())),
                at(T0, suspend("a", 1, &["a.1", "a.2"])),
            ]
        },
    },
    Deviation {
        name: "suspend-at-deadline",
        spec: "spec/02-actions/T-06-task.suspend.lean:23",
        class: Class::Bug,
        summary: "task.suspend takes an awaited promise at now == timeoutAt as live (< for ≤) and parks the task",
        hooks: &SuspendAtDeadline,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, create("a.1", T0 + 10, none())),
                at(T0 + 10, suspend("a", 1, &["a.1"])),
            ]
        },
    },
    Deviation {
        name: "suspend-reads-stored-state",
        spec: "spec/02-actions/T-06-task.suspend.lean:23",
        class: Class::Bug,
        summary: "task.suspend counts an awaited promise as settled by its stored state only: a pending one past its deadline is awaited (200, callback registered) instead of 300",
        hooks: &SuspendReadsStoredState,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, create("a.1", T0 + 10, none())),
                at(T0 + 20, suspend("a", 1, &["a.1"])),
            ]
        },
    },
    Deviation {
        name: "suspend-refuses-internal",
        spec: "spec/02-actions/T-06-task.suspend.lean:22",
        class: Class::Validation,
        summary: "task.suspend answers 422 and changes nothing when an awaited promise has no resonate:target, no timer and no resonate:external true (after the task's checks and the missing-awaited 422, before the 300)",
        hooks: &SuspendRefusesInternal,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, create("a.1", LATER, none())),
                at(T0, suspend("a", 1, &["a.1"])),
            ]
        },
    },
    Deviation {
        name: "suspend-no-300",
        spec: "spec/02-actions/T-06-task.suspend.lean:25",
        class: Class::Bug,
        summary: "task.suspend on an already-settled awaited promise parks the task (200) instead of answering 300",
        hooks: &SuspendNo300,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, create("a.1", T0 - 1, none())),
                at(T0, suspend("a", 1, &["a.1"])),
            ]
        },
    },
    Deviation {
        name: "suspend-keeps-lease",
        spec: "spec/02-actions/T-06-task.suspend.lean:35",
        class: Class::Bug,
        summary: "task.suspend parks the task but keeps its pid and ttl",
        hooks: &SuspendKeepsLease,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, create("a.1", LATER, none())),
                at(T0, suspend("a", 1, &["a.1"])),
            ]
        },
    },
    Deviation {
        name: "resume-bumps-version",
        spec: "spec/02-actions/00-resume.lean:21",
        class: Class::Bug,
        summary: "resuming a suspended task increments its version and sends execute with the new one",
        hooks: &ResumeBumpsVersion,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, create("a.1", LATER, none())),
                at(T0, suspend("a", 1, &["a.1"])),
                at(T0, settle("a.1", PromiseState::Resolved)),
            ]
        },
    },
    Deviation {
        name: "resume-execute-to-awaited-target",
        spec: "spec/02-actions/00-resume.lean:24",
        class: Class::Bug,
        summary: "the resumed task's execute is addressed to the settled (awaited) promise's target instead of the awaiter's",
        hooks: &ResumeExecuteToAwaitedTarget,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(
                    T0,
                    create("a.1", LATER, tags(&[("resonate:target", "poll://any@other")])),
                ),
                at(T0, suspend("a", 1, &["a.1"])),
                at(T0, settle("a.1", PromiseState::Resolved)),
            ]
        },
    },
    Deviation {
        name: "resume-ignores-halted",
        spec: "spec/02-actions/00-resume.lean:30",
        class: Class::Bug,
        summary: "a settlement awaited by a halted task is dropped instead of buffered in its resumes",
        hooks: &ResumeIgnoresHalted,
        witness: || {
            vec![
                // A pending task `a` (version 0) registers on `a.1`.
                at(T0, create("a", LATER, target())),
                at(T0, create("a.1", LATER, none())),
                at(T0, callback("a.1", "a")),
                at(T0, halt("a")),
                at(T0, settle("a.1", PromiseState::Resolved)),
            ]
        },
    },
];

/// The awaited loop returns 300 as soon as it meets a settled or expired
/// promise, so a later awaited id that does not exist goes unnoticed (the
/// spec's loop runs to the end, and a missing promise answers 422 whatever
/// came before it).
struct Suspend300Before422;

impl Hooks for Suspend300Before422 {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskSuspend(r) = req else {
            return next(m, req, now);
        };
        let mut cut = None;
        for (i, a) in r.actions.iter().enumerate() {
            match m.state.get_promise(&a.awaited) {
                None => break,
                Some(p) if !p.is_live(now) => {
                    cut = Some(i);
                    break;
                }
                Some(_) => {}
            }
        }
        if let Some(i) = cut {
            let missing_later = r.actions[i + 1..]
                .iter()
                .any(|a| m.state.get_promise(&a.awaited).is_none());
            if missing_later {
                let forged = TaskSuspendReq {
                    actions: r.actions[..=i].to_vec(),
                    ..r.clone()
                };
                return next(m, &Request::TaskSuspend(forged), now);
            }
        }
        next(m, req, now)
    }
}

/// An off-by-one in the awaited test (`timeoutAt < now`): an awaited
/// promise at the millisecond of its deadline is taken as live, so the task
/// parks on a promise that can only time out (or, with nothing armed for
/// it, never settle) instead of resuming at once.
struct SuspendAtDeadline;

impl Hooks for SuspendAtDeadline {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskSuspend(r) = req else {
            return next(m, req, now);
        };
        let mut moved: Vec<String> = Vec::new();
        for a in &r.actions {
            let at_deadline = m
                .state
                .get_promise(&a.awaited)
                .is_some_and(|p| p.state == PromiseState::Pending && p.timeout_at == now);
            if at_deadline && !moved.contains(&a.awaited) {
                moved.push(a.awaited.clone());
            }
        }
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

/// Ported from the runner's planted bugs: the "already settled" test is
/// skipped, so the task parks (200) on promises that are already settled
/// (its callbacks registered on them) and is never resumed.
struct SuspendNo300;

impl Hooks for SuspendNo300 {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskSuspend(r) = req else {
            return next(m, req, now);
        };
        let res = next(m, req, now);
        if res.status() != 300 {
            return res;
        }
        park(m, r);
        Response::TaskSuspend(TaskSuspendRes {
            status: 200,
            preload: Vec::new(),
        })
    }
}

/// Do what a 200 suspension does even though an awaited promise is settled:
/// register the callbacks and park the task without a lease or timeout.
fn park(m: &mut Machine, r: &TaskSuspendReq) {
    for a in &r.actions {
        patch_promise(m, &a.awaited, |p| p.add_callback(&r.id));
    }
    if let Some(t) = m.state.get_task(&r.id) {
        let parked = TaskObject {
            state: TaskState::Suspended,
            ttl: None,
            pid: None,
            resumes: Vec::new(),
            ..t.clone()
        };
        m.state.set_task(parked);
        m.state.del_task_timeout(&r.id);
    }
}

/// The parked task is written `suspended` with its lease fields kept
/// (`pid := none, ttl := none` forgotten): it looks held by a process that
/// no longer holds it.
struct SuspendKeepsLease;

impl Hooks for SuspendKeepsLease {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskSuspend(r) = req else {
            return next(m, req, now);
        };
        let lease = m.state.get_task(&r.id).map(|t| (t.pid.clone(), t.ttl));
        let res = next(m, req, now);
        if let (200, Some((pid, ttl))) = (res.status(), lease) {
            patch_task(m, &r.id, |t| {
                t.pid = pid;
                t.ttl = ttl;
            });
        }
        res
    }
}

/// The promise a request or a timer may settle, whose awaiters the cascade
/// resumes.
fn settling_req(req: &Request) -> Option<String> {
    settlement(req).map(str::to_string)
}

fn settling_timer(timer: &Timer) -> Option<String> {
    match timer {
        Timer::Promise(id) => Some(id.clone()),
        _ => None,
    }
}

/// The resume treated as a fresh dispatch: the version is bumped as on
/// acquire, so the `execute` carries a new fencing token (the spec re-emits
/// the current one: a resume is a wake-up hint).
struct ResumeBumpsVersion;

fn bump_resumed(m: &mut Machine, awaited: &str, woken: &[String]) {
    for w in woken {
        let resumed = m.state.get_task(w).is_some_and(|t| {
            t.state == TaskState::Pending && t.resumes.len() == 1 && t.resumes[0] == awaited
        });
        if !resumed {
            continue;
        }
        patch_task(m, w, |t| t.version += 1);
        redispatch_current(m, w);
    }
}

impl Hooks for ResumeBumpsVersion {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Some(id) = settling_req(req) else {
            return next(m, req, now);
        };
        let woken = awaiters_in(m, &id, TaskState::Suspended);
        let res = next(m, req, now);
        bump_resumed(m, &id, &woken);
        res
    }

    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let Some(id) = settling_timer(timer) else {
            return next(m, timer, now);
        };
        let woken = awaiters_in(m, &id, TaskState::Suspended);
        next(m, timer, now);
        bump_resumed(m, &id, &woken);
    }
}

/// `getPromise awaitedId` where `getPromise awaiterId` is meant: the
/// resumed task's `execute` goes to the target of the promise that settled
/// (none if it has no target) instead of to the awaiter's own worker. The
/// hook lends each suspended awaiter the awaited promise's target for the
/// duration of the cascade.
struct ResumeExecuteToAwaitedTarget;

fn swap_targets(m: &mut Machine, awaited: &str, woken: &[String]) -> Vec<(String, Option<String>)> {
    let lent = m
        .state
        .get_promise(awaited)
        .and_then(|p| p.tags.get(TARGET).cloned());
    let mut own = Vec::new();
    for w in woken {
        let Some(p) = m.state.get_promise(w) else {
            continue;
        };
        own.push((w.clone(), p.tags.get(TARGET).cloned()));
        set_target(m, w, lent.clone());
    }
    own
}

fn set_target(m: &mut Machine, id: &str, target: Option<String>) {
    patch_promise(m, id, |p| match target {
        Some(t) => {
            p.tags.insert(TARGET.into(), t);
        }
        None => {
            p.tags.remove(TARGET);
        }
    });
}

impl Hooks for ResumeExecuteToAwaitedTarget {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Some(id) = settling_req(req) else {
            return next(m, req, now);
        };
        let woken = awaiters_in(m, &id, TaskState::Suspended);
        let own = swap_targets(m, &id, &woken);
        let res = next(m, req, now);
        for (w, t) in own {
            set_target(m, &w, t);
        }
        res
    }

    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let Some(id) = settling_timer(timer) else {
            return next(m, timer, now);
        };
        let woken = awaiters_in(m, &id, TaskState::Suspended);
        let own = swap_targets(m, &id, &woken);
        next(m, timer, now);
        for (w, t) in own {
            set_target(m, &w, t);
        }
    }
}

/// The buffering branch lists `pending | acquired` and forgets `halted`
/// (as the Rust server's resumption does): a halted task that is later
/// continued has lost the settlement it was waiting for.
struct ResumeIgnoresHalted;

fn halted_awaiters(m: &Machine, awaited: &str) -> Vec<String> {
    awaiters_in(m, awaited, TaskState::Halted)
        .into_iter()
        .filter(|w| {
            m.state
                .get_task(w)
                .is_some_and(|t| !t.resumes.iter().any(|r| r == awaited))
        })
        .collect()
}

fn unbuffer(m: &mut Machine, awaited: &str, halted: &[String]) {
    for w in halted {
        patch_task(m, w, |t| t.resumes.retain(|r| r != awaited));
    }
}

impl Hooks for ResumeIgnoresHalted {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Some(id) = settling_req(req) else {
            return next(m, req, now);
        };
        let halted = halted_awaiters(m, &id);
        let res = next(m, req, now);
        unbuffer(m, &id, &halted);
        res
    }

    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let Some(id) = settling_timer(timer) else {
            return next(m, timer, now);
        };
        let halted = halted_awaiters(m, &id);
        next(m, timer, now);
        unbuffer(m, &id, &halted);
    }
}

/// The TS server classifies the awaited promises by `awaitedPromise.state
/// === "pending"` (`local.js:676`) where T-06:23 also reads the deadline:
/// a pending promise past its deadline that nothing has timed out yet is
/// awaited (callback registered, task suspended) instead of answering 300.
/// (With eager timeouts the promises are settled first, so only a server
/// that projects shows it.) The hook moves those deadlines past `now` for
/// the spec's handler and puts them back.
struct SuspendReadsStoredState;

impl Hooks for SuspendReadsStoredState {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskSuspend(r) = req else {
            return next(m, req, now);
        };
        let mut moved: Vec<(String, Time)> = Vec::new();
        for a in &r.actions {
            let expired = m
                .state
                .get_promise(&a.awaited)
                .filter(|p| p.state == PromiseState::Pending && p.timeout_at <= now)
                .map(|p| p.timeout_at);
            if let Some(at) = expired {
                if !moved.iter().any(|(id, _)| *id == a.awaited) {
                    moved.push((a.awaited.clone(), at));
                }
            }
        }
        for (id, _) in &moved {
            patch_promise(m, id, |p| p.timeout_at = now + 1);
        }
        let res = next(m, req, now);
        for (id, at) in &moved {
            patch_promise(m, id, |p| p.timeout_at = *at);
        }
        res
    }
}

/// resonate-pg refuses to suspend on an awaited promise it does not count
/// as external (resonate.sql:718-722), once the task's checks have passed
/// and every awaited exists, before it looks for a settled one (the 300):
/// the spec suspends on any live awaited promises (T-06:18-35). The spec's
/// answer is asked on trial, so the 422 comes exactly where the spec would
/// have answered 200 or 300.
struct SuspendRefusesInternal;

impl Hooks for SuspendRefusesInternal {
    /// It reads the awaited promises' tags, tries the spec's answer, and
    /// writes nothing of its own.
    fn stays_in_footprint(&self) -> bool {
        true
    }

    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::TaskSuspend(r) = req else {
            return next(m, req, now);
        };
        let internal = r.actions.iter().any(|a| {
            m.state
                .get_promise(&a.awaited)
                .is_some_and(|p| !pg_external(&p.tags))
        });
        if !internal {
            return next(m, req, now);
        }
        let status = m.trial(|m| match next(m, req, now) {
            Response::TaskSuspend(res) => res.status,
            _ => 0,
        });
        if status == 200 || status == 300 {
            return Response::TaskSuspend(TaskSuspendRes {
                status: 422,
                preload: Vec::new(),
            });
        }
        next(m, req, now)
    }
}
