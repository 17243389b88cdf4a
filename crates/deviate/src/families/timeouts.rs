//! The promise, retry and lease timeouts of `02-timeouts.lean` (the
//! schedule timeout and its catch-up are in [`super::schedule`]). The
//! promise timeout is the third settlement site.
//!
//! Every witness fires a timer at or after its deadline, as the environment
//! may; what differs is what the firing does.
//!
//! | name | Lean line | what |
//! |---|---|---|
//! | `timeout-timer-rejected` | 02-timeouts:19 | a timer promise times out `rejected_timedout` instead of `resolved` |
//! | `timeout-settled-at-now` | 02-timeouts:22 | a timed-out promise records `settledAt = now`, not its deadline |
//! | `timeout-keeps-task` | 02-timeouts:27 | the promise timeout leaves its task (and the task's timeouts) as they were |
//! | `timeout-no-resume` | 02-timeouts:40 | the promise timeout resumes none of its awaiters |
//! | `timeout-skips-due-awaiters` | 02-timeouts:40 | the promise timeout does not resume an awaiter whose own promise is armed and due too (a batch tick: settle all, then resume; TS server B13, Rust server row 10) |
//! | `retry-not-rearmed` | 02-timeouts:52 | a retry re-sends `execute` but is not re-armed |
//! | `lease-timeout-keeps-pid` | 02-timeouts:67 | an expired lease returns the task to pending with its `pid` and `ttl` |

use model::machine::{Machine, Timer};
use model::state::{LEASE, RETRY};
use model::types::{PromiseState, TaskState, Time};

use super::effects::{is_pending, patch_promise, patch_task, renotify, task_state};
use super::witness::*;
use crate::{Class, Deviation, Hooks, NextFire, NextTick};

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[
    Deviation {
        name: "timeout-timer-rejected",
        spec: "spec/02-actions/02-timeouts.lean:19",
        class: Class::Bug,
        summary: "the promise timeout of a timer promise settles it rejected_timedout instead of resolved",
        hooks: &TimeoutTimerRejected,
        witness: || {
            vec![
                at(T0, create("a", T0 + 10, timer())),
                tick(T0 + 10),
            ]
        },
    },
    Deviation {
        name: "timeout-settled-at-now",
        spec: "spec/02-actions/02-timeouts.lean:22",
        class: Class::Bug,
        summary: "the promise timeout records settledAt = the firing time instead of the deadline",
        hooks: &TimeoutSettledAtNow,
        witness: || {
            vec![
                at(T0, create("a", T0 + 10, target())),
                // Any firing after the deadline: the spec dates it at T0 + 10.
                tick(T0 + 11),
            ]
        },
    },
    Deviation {
        name: "timeout-keeps-task",
        spec: "spec/02-actions/02-timeouts.lean:27",
        class: Class::Bug,
        summary: "the promise timeout settles the promise but leaves its task (state, lease, timeouts) untouched",
        hooks: &TimeoutKeepsTask,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, T0 + 10)),
                tick(T0 + 10),
            ]
        },
    },
    Deviation {
        name: "timeout-no-resume",
        spec: "spec/02-actions/02-timeouts.lean:40",
        class: Class::Bug,
        summary: "the promise timeout settles the promise without resuming the tasks awaiting it",
        hooks: &TimeoutNoResume,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, create("a.1", T0 + 10, timer())),
                at(T0, suspend("a", 1, &["a.1"])),
                tick(T0 + 10),
            ]
        },
    },
    Deviation {
        name: "timeout-skips-due-awaiters",
        spec: "spec/02-actions/02-timeouts.lean:40",
        class: Class::Bug,
        summary: "the promise timeout does not resume an awaiter whose own promise is armed and past its deadline (it is timed out in the same batch), even in a cycle of awaits",
        hooks: &TimeoutSkipsDueAwaiters,
        witness: || {
            // A cycle: each task awaits the other's promise, both due at
            // the tick. Whichever fires first resumes the other (an
            // execute) in every order the spec allows; a batch that times
            // both out first resumes nobody. (Without the cycle, firing the
            // awaiter first is an allowed order: latitude, not a bug.)
            vec![
                at(T0, task_create("a", "p1", 60_000, T0 + 20)),
                at(T0, task_create("a.1", "p2", 60_000, T0 + 10)),
                at(T0, suspend("a", 1, &["a.1"])),
                at(T0, suspend("a.1", 1, &["a"])),
                tick(T0 + 20),
            ]
        },
    },
    Deviation {
        name: "retry-not-rearmed",
        spec: "spec/02-actions/02-timeouts.lean:52",
        class: Class::Bug,
        summary: "the retry timeout re-sends execute but is not re-armed",
        hooks: &RetryNotRearmed,
        witness: || {
            vec![
                // A pending task, dispatched now, retried at T0 + 5000.
                at(T0, create("a", LATER, target())),
                tick(T0 + 5000),
            ]
        },
    },
    Deviation {
        name: "lease-timeout-keeps-pid",
        spec: "spec/02-actions/02-timeouts.lean:67",
        class: Class::Bug,
        summary: "an expired lease returns the task to pending but keeps its pid and ttl",
        hooks: &LeaseTimeoutKeepsPid,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 10, LATER)),
                tick(T0 + 10),
            ]
        },
    },
];

/// The listeners of promise `id` when it is pending (the ones the timeout
/// is about to notify), or `None` when the timeout would do nothing.
fn pending_listeners(m: &Machine, timer: &Timer) -> Option<(String, Vec<String>)> {
    let Timer::Promise(id) = timer else {
        return None;
    };
    let p = m.state.get_promise(id)?;
    (p.state == PromiseState::Pending).then(|| (id.clone(), p.listeners.clone()))
}

/// Timeouts always reject: the timer case (`resolved`, a timer's deadline
/// is its success) is forgotten, so a sleeping task wakes to a failure.
struct TimeoutTimerRejected;

impl Hooks for TimeoutTimerRejected {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let timer_promise = pending_listeners(m, timer)
            .filter(|(id, _)| m.state.get_promise(id).is_some_and(|p| p.is_timer()));
        next(m, timer, now);
        if let Some((id, listeners)) = timer_promise {
            patch_promise(m, &id, |p| p.state = PromiseState::RejectedTimedout);
            renotify(m, &id, &listeners);
        }
    }
}

/// The settlement is dated when the timeout is processed, as a client
/// settlement is (`settledAt := now`), instead of at the deadline; the
/// result then depends on when the environment got round to firing.
struct TimeoutSettledAtNow;

impl Hooks for TimeoutSettledAtNow {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let pending = pending_listeners(m, timer);
        next(m, timer, now);
        if let Some((id, listeners)) = pending {
            if !is_pending(m, &id) {
                patch_promise(m, &id, |p| p.settled_at = Some(now));
                renotify(m, &id, &listeners);
            }
        }
    }
}

/// The timeout handler settles the promise only (`promise.settle`'s task
/// step forgotten): its task stays acquired (or pending) with its lease or
/// retry armed, and can be claimed again on a settled promise.
struct TimeoutKeepsTask;

impl Hooks for TimeoutKeepsTask {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let kept = pending_listeners(m, timer).and_then(|(id, _)| {
            let t = m.state.get_task(&id)?.clone();
            let armed = [RETRY, LEASE].map(|kind| m.state.task_timeouts(kind).get(&id));
            Some((t, armed))
        });
        next(m, timer, now);
        if let Some((t, armed)) = kept {
            let id = t.id.clone();
            m.state.set_task(t);
            for (kind, at) in armed.into_iter().enumerate() {
                if let Some(at) = at {
                    m.state.set_task_timeout(&id, kind, at);
                }
            }
        }
    }
}

/// The timeout path notifies listeners but does not run `enqueueResume`
/// for the callbacks: a task suspended on a timer (a sleep) never wakes.
struct TimeoutNoResume;

impl Hooks for TimeoutNoResume {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        if let Some((id, _)) = pending_listeners(m, timer) {
            patch_promise(m, &id, |p| p.callbacks.clear());
        }
        next(m, timer, now)
    }
}

/// The retry deletes its timeout and sends `execute` but forgets to arm
/// the next retry: one lost message and the pending task is stuck.
struct RetryNotRearmed;

impl Hooks for RetryNotRearmed {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let pending = match timer {
            Timer::TaskRetry(id) => (task_state(m, id) == Some(TaskState::Pending)).then_some(id),
            _ => None,
        };
        next(m, timer, now);
        if let Some(id) = pending {
            m.state.del_task_timeout(id);
        }
    }
}

/// The expiry sets the task pending and forgets `pid := none, ttl := none`:
/// the task reads as still held by the process whose lease ran out.
struct LeaseTimeoutKeepsPid;

impl Hooks for LeaseTimeoutKeepsPid {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let lease = match timer {
            Timer::TaskLease(id) => m
                .state
                .get_task(id)
                .filter(|t| t.state == TaskState::Acquired)
                .map(|t| (id, t.pid.clone(), t.ttl)),
            _ => None,
        };
        next(m, timer, now);
        if let Some((id, pid, ttl)) = lease {
            patch_task(m, id, |t| {
                t.pid = pid;
                t.ttl = ttl;
            });
        }
    }
}

/// The TS server's tick (`local.js:873-950`), like the Rust server's,
/// settles every due promise first, then fulfils their tasks (scrubbing them from all callbacks),
/// then resumes the awaiters that are left: an awaiter whose own promise
/// is due in the same tick is fulfilled, never resumed. Without a cycle
/// that is the spec's awaiters-first order (latitude); in a cycle of
/// awaits (`a` on `a.1`, `a.1` on `a`) no order of single firings gives it,
/// since whichever fires first resumes the other. The hook is the tick's:
/// before it fires anything, every promise due in it (pending, armed, past
/// its deadline) drops from its callbacks every other promise due in it. A
/// single settlement on access (`materialize-named-expired`) is no tick and
/// does resume an awaiter whose promise is due too.
struct TimeoutSkipsDueAwaiters;

impl Hooks for TimeoutSkipsDueAwaiters {
    fn batches_tick(&self) -> bool {
        true
    }

    fn tick(&self, m: &mut Machine, now: Time, next: NextTick) -> Vec<Timer> {
        // The armed timeouts due now (each armed at its promise's
        // `timeoutAt`), read from the deadline index, not the whole table.
        let mut due: Vec<String> = m
            .state
            .promise_timeouts()
            .due(now)
            .filter(|(_, id)| {
                m.state
                    .get_promise(id)
                    .is_some_and(|p| p.state == PromiseState::Pending && p.timeout_at <= now)
            })
            .map(|(_, id)| id.to_string())
            .collect();
        due.sort_unstable();
        for id in &due {
            let skipped = m
                .state
                .get_promise(id)
                .is_some_and(|p| p.callbacks.iter().any(|w| w != id && due.contains(w)));
            if skipped {
                patch_promise(m, id, |p| {
                    p.callbacks.retain(|w| w == id || !due.contains(w))
                });
            }
        }
        next(m, now)
    }
}
