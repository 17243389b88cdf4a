//! Planted bugs: each a small wrapper around the model that deviates from
//! the spec in one named way, so the harness can be shown to catch, shrink
//! and report a wrong server (`conform serve --mutant NAME`).
//!
//! | name | bug |
//! |---|---|
//! | `acquire-no-version-check` | `task.acquire` of a pending task ignores the requested version |
//! | `settle-timedout-early` | `promise.get` of a pending non-timer promise within 1000 ms of its deadline times it out now |
//! | `release-bumps-version` | `task.release` increments the version |
//! | `suspend-no-300` | `task.suspend` on an already-settled awaited promise parks the task (200) instead of answering 300 |
//! | `heartbeat-ignores-pid` | `task.heartbeat` refreshes leases held by any pid |
//! | `halt-not-idempotent` | `task.halt` of a halted task answers 409 |
//!
//! Every mutant works through the model's public API (requests rewritten,
//! timers fired early, state effects applied after the fact); the handlers
//! themselves are untouched.

use model::api::*;
use model::machine::{Machine, Timer};
use model::state::TaskObject;
use model::types::{TaskState, Time};

const NAMES: [&str; 6] = [
    "acquire-no-version-check",
    "settle-timedout-early",
    "release-bumps-version",
    "suspend-no-300",
    "heartbeat-ignores-pid",
    "halt-not-idempotent",
];

/// How close to its deadline `settle-timedout-early` strikes (ms).
pub const EARLY_MS: Time = 1000;

/// Every mutant's name.
pub fn mutant_names() -> &'static [&'static str] {
    &NAMES
}

/// What a mutant gets wrong, in one line.
pub fn mutant_description(name: &str) -> &'static str {
    match name {
        "acquire-no-version-check" => {
            "task.acquire of a pending task ignores the requested version"
        }
        "settle-timedout-early" => {
            "promise.get times out a pending non-timer promise up to 1000 ms before its deadline"
        }
        "release-bumps-version" => "task.release increments the version",
        "suspend-no-300" => {
            "task.suspend on an already-settled awaited promise parks the task (200) instead of 300"
        }
        "heartbeat-ignores-pid" => "task.heartbeat refreshes leases held by any pid",
        "halt-not-idempotent" => "task.halt of a halted task answers 409",
        _ => "",
    }
}

/// The canonical `'static` spelling of a mutant name.
pub(crate) fn lookup(name: &str) -> Option<&'static str> {
    NAMES.iter().copied().find(|n| *n == name)
}

/// Handle `req` the mutant's way, or `None` to let the model handle it.
pub fn apply_mutant(name: &str, m: &mut Machine, req: &Request, now: Time) -> Option<Response> {
    match (name, req) {
        ("acquire-no-version-check", Request::TaskAcquire(r)) => {
            let t = m.state.get_task(&r.id)?;
            if t.state != TaskState::Pending || t.version == r.version {
                return None;
            }
            let forged = TaskAcquireReq {
                version: t.version,
                ..r.clone()
            };
            Some(m.apply(&Request::TaskAcquire(forged), now))
        }
        ("settle-timedout-early", Request::PromiseGet(r)) => {
            let p = m.state.get_promise(&r.id)?;
            let early =
                !p.is_timer() && p.is_live(now) && p.timeout_at.saturating_sub(now) <= EARLY_MS;
            if early {
                // `onPromiseTimeout` does not look at the clock.
                m.fire(&Timer::Promise(r.id.clone()), now);
            }
            None
        }
        ("release-bumps-version", Request::TaskRelease(r)) => {
            let res = m.apply(req, now);
            if res.status() == 200 {
                if let Some(t) = m.state.get_task(&r.id) {
                    let bumped = TaskObject {
                        version: t.version + 1,
                        ..t.clone()
                    };
                    m.state.set_task(bumped);
                }
            }
            Some(res)
        }
        ("suspend-no-300", Request::TaskSuspend(r)) => {
            let res = m.apply(req, now);
            if res.status() != 300 {
                return Some(res);
            }
            park(m, r);
            Some(Response::TaskSuspend(TaskSuspendRes {
                status: 200,
                preload: Vec::new(),
            }))
        }
        ("heartbeat-ignores-pid", Request::TaskHeartbeat(r)) => {
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
                m.apply(&Request::TaskHeartbeat(one), now);
            }
            Some(Response::Status(200))
        }
        ("halt-not-idempotent", Request::TaskHalt(r)) => {
            let halted = m.state.get_task(&r.id)?.state == TaskState::Halted;
            halted.then_some(Response::Status(409))
        }
        _ => None,
    }
}

/// Do what a 200 suspension does even though an awaited promise is settled:
/// register the callbacks and park the task without a lease or timeout.
fn park(m: &mut Machine, r: &TaskSuspendReq) {
    for a in &r.actions {
        if let Some(p) = m.state.get_promise(&a.awaited) {
            let mut p = p.clone();
            p.add_callback(&r.id);
            m.state.set_promise(p);
        }
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
