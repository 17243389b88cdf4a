//! Promises: `promise.get`, `promise.create`, `promise.settle`,
//! `promise.register_callback`, `promise.register_listener` (P-01 … P-05),
//! and the client settlement site (`promise.settle`, also behind
//! `task.fence`).
//!
//! | name | Lean line | what |
//! |---|---|---|
//! | `get-strict-deadline` | P-01:11 | `promise.get` compares with `<`: at `now == timeoutAt` it still reads `pending` |
//! | `materialize-unarmed-expired` | P-01:12 | a request naming an expired unarmed promise settles it first (Rust server, row 04) |
//! | `materialize-named-expired` | P-01:12 | a request settles every expired pending promise it names first, armed or not, in the order it names them (TS server eager mode B2, Rust server row 04; with `timeout-skips-due-awaiters` for their batch ticks) |
//! | `settle-timedout-early` | P-01:19 | `promise.get` times out a live non-timer promise within 1000 ms of its deadline |
//! | `timer-without-target-unarmed` | P-02:18 | a timer promise without a target gets no promise timeout (`external`, state:35, read as "has a target"; Rust server, row 02) |
//! | `create-arms-internal-timeout` | P-02:18 | every new pending promise gets a promise timeout, not only external ones |
//! | `delay-ignored` | P-02:33 | a future `resonate:delay` still dispatches now (Rust server, row 03) |
//! | `create-expired-created-now` | P-02:52 | a promise created past its deadline records `createdAt = now` |
//! | `create-existing-unprojected` | P-02:64 | re-creating an expired pending promise answers it unprojected |
//! | `settle-at-deadline` | P-03:11 | `promise.settle` compares with `≥`: at `now == timeoutAt` it settles |
//! | `settle-keeps-listeners` | P-03:14 | the settled promise keeps its callbacks and listeners |
//! | `settle-no-scrub` | P-03:24 | settling skips the scrub of its id from pending promises' callbacks |
//! | `settle-overwrites-settled` | P-03:43 | settling a settled promise overwrites its state and value |
//! | `callback-before-awaiter-check` | P-04:12 | a not-live awaited answers 200 before the awaiter is checked (422) |
//! | `callback-expired-awaiter` | P-04:17 | the callback is recorded for an awaiter past its deadline |
//! | `callback-on-settled-resumes` | P-04:28 | a callback on a settled promise resumes or buffers the awaiter (Rust server, row 05) |
//! | `listener-refuses-internal` | P-05:10 | `register_listener` answers 422 for a promise with neither target nor timer, settled or not (TS server, B3) |
//! | `settle-drops-execute` | P-03:17 | a settlement (request or timeout) also removes the settled promise's task's `execute` from the outbox (resonate-pg, P1) |
//! | `callback-refuses-internal` | P-04:15 | `register_callback` answers 422 without a callback when the awaited promise has neither target nor timer nor `resonate:external`, settled or not (resonate-pg, P2) |
//! | `empty-target-is-no-target` | P-02:20 | an empty `resonate:target` counts as no target: no task, no timeout (TS server, B11; reached by validation probing) |
//! | `listener-past-deadline` | P-05:11 | a listener is recorded on a pending promise past its deadline |

use model::actions::promise_create::to_nat;
use model::actions::resume::enqueue_resume;
use model::api::{PromiseRes, Request, Response};
use model::machine::{Machine, Timer};
use model::state::{is_timer, Message, DELAY, RETRY, TARGET};
use model::types::{PromiseState, TaskState, Time};

use super::effects::{
    creation, is_live, is_pending, patch_promise, pg_external, record_mut, settle_request,
    settle_target, settlement, task_state, with_deadline,
};
use super::witness::*;
use crate::{Class, Deviation, Fire, Hooks, Next, NextFire};

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[
    Deviation {
        name: "get-strict-deadline",
        spec: "spec/02-actions/P-01-promise.get.lean:11",
        class: Class::Bug,
        summary: "promise.get reads a pending promise as live at now == timeoutAt (< for ≤)",
        hooks: &GetStrictDeadline,
        witness: || {
            vec![
                at(T0, create("a", T0 + 10, none())),
                at(T0 + 10, get("a")),
            ]
        },
    },
    Deviation {
        name: "materialize-unarmed-expired",
        spec: "spec/02-actions/P-01-promise.get.lean:12",
        class: Class::Bug,
        summary: "a request naming an expired pending promise with no timeout armed settles it as timed out first",
        hooks: &MaterializeUnarmedExpired,
        witness: || {
            vec![
                // No target, no timer: nothing is armed for it.
                at(T0, create("a", T0 + 10, none())),
                // The read projects; the deviant writes the settlement.
                at(T0 + 20, get("a")),
            ]
        },
    },
    Deviation {
        name: "materialize-named-expired",
        spec: "spec/02-actions/P-01-promise.get.lean:12",
        class: Class::Bug,
        summary: "a request first settles, in the order it names them, every expired pending promise it names, whether a timeout is armed for it or not",
        hooks: &MaterializeNamedExpired,
        witness: || {
            vec![
                // No target, no timer: nothing is armed for it.
                at(T0, create("a", T0 + 10, none())),
                // The read projects; the deviant writes the settlement.
                at(T0 + 20, get("a")),
            ]
        },
    },
    Deviation {
        name: "settle-timedout-early",
        spec: "spec/02-actions/P-01-promise.get.lean:19",
        class: Class::Bug,
        summary: "promise.get times out a pending non-timer promise up to 1000 ms before its deadline",
        hooks: &SettleTimedoutEarly,
        witness: || {
            vec![
                at(T0, create("a", T0 + EARLY_MS, none())),
                at(T0, get("a")),
            ]
        },
    },
    Deviation {
        name: "timer-without-target-unarmed",
        spec: "spec/02-actions/P-02-promise.create.lean:18",
        class: Class::Bug,
        summary: "a new timer promise without a resonate:target gets no promise timeout",
        hooks: &TimerWithoutTargetUnarmed,
        witness: || vec![at(T0, create("a", T0 + 10, timer()))],
    },
    Deviation {
        name: "create-arms-internal-timeout",
        spec: "spec/02-actions/P-02-promise.create.lean:18",
        class: Class::Bug,
        summary: "promise.create arms a promise timeout for an internal promise (no target, no timer)",
        hooks: &CreateArmsInternalTimeout,
        witness: || vec![at(T0, create("a", T0 + 10, none()))],
    },
    Deviation {
        name: "delay-ignored",
        spec: "spec/02-actions/P-02-promise.create.lean:33",
        class: Class::Bug,
        summary: "a resonate:delay in the future still sends execute now and arms the retry from now",
        hooks: &DelayIgnored,
        witness: || {
            let delay = (T0 + 1000).to_string();
            let mut tags = target();
            tags.insert(DELAY.into(), delay);
            vec![at(T0, create("a", LATER, tags))]
        },
    },
    Deviation {
        name: "create-expired-created-now",
        spec: "spec/02-actions/P-02-promise.create.lean:52",
        class: Class::Bug,
        summary: "a promise created already past its deadline records createdAt = now, not timeoutAt",
        hooks: &CreateExpiredCreatedNow,
        witness: || vec![at(T0, create("a", T0 - 1, none()))],
    },
    Deviation {
        name: "create-existing-unprojected",
        spec: "spec/02-actions/P-02-promise.create.lean:64",
        class: Class::Bug,
        summary: "promise.create of an existing pending promise past its deadline answers it as pending",
        hooks: &CreateExistingUnprojected,
        witness: || {
            vec![
                at(T0, create("a", T0 + 10, none())),
                at(T0 + 20, create("a", T0 + 10, none())),
            ]
        },
    },
    Deviation {
        name: "settle-at-deadline",
        spec: "spec/02-actions/P-03-promise.settle.lean:11",
        class: Class::Bug,
        summary: "promise.settle settles a pending promise at now == timeoutAt (≥ for >)",
        hooks: &SettleAtDeadline,
        witness: || {
            vec![
                at(T0, create("a", T0 + 10, none())),
                at(T0 + 10, settle("a", PromiseState::Resolved)),
            ]
        },
    },
    Deviation {
        name: "settle-keeps-listeners",
        spec: "spec/02-actions/P-03-promise.settle.lean:14",
        class: Class::Bug,
        summary: "promise.settle leaves the settled promise's callbacks and listeners in place",
        hooks: &SettleKeepsListeners,
        witness: || {
            vec![
                at(T0, create("a", LATER, none())),
                at(T0, listen("a")),
                at(T0, settle("a", PromiseState::Resolved)),
            ]
        },
    },
    Deviation {
        name: "settle-no-scrub",
        spec: "spec/02-actions/P-03-promise.settle.lean:24",
        class: Class::Bug,
        summary: "promise.settle does not drop the settled id from pending promises' callbacks",
        hooks: &SettleNoScrub,
        witness: || {
            vec![
                // `a` has a (pending) task, so it may await `a.1`.
                at(T0, create("a", LATER, target())),
                at(T0, create("a.1", LATER, none())),
                at(T0, callback("a.1", "a")),
                at(T0, settle("a", PromiseState::Resolved)),
            ]
        },
    },
    Deviation {
        name: "settle-overwrites-settled",
        spec: "spec/02-actions/P-03-promise.settle.lean:43",
        class: Class::Bug,
        summary: "promise.settle of an already settled promise overwrites its state, value and settledAt",
        hooks: &SettleOverwritesSettled,
        witness: || {
            vec![
                // Settled (timed out) at creation ...
                at(T0, create("a", T0 - 1, none())),
                // ... and settled again by a client.
                at(T0, settle("a", PromiseState::Resolved)),
            ]
        },
    },
    Deviation {
        name: "callback-before-awaiter-check",
        spec: "spec/02-actions/P-04-promise.register_callback.lean:12",
        class: Class::Bug,
        summary: "register_callback on a settled or expired awaited answers 200 before checking the awaiter (422)",
        hooks: &CallbackBeforeAwaiterCheck,
        witness: || {
            vec![
                // Settled at creation; the awaiter `a` does not exist.
                at(T0, create("a.1", T0 - 1, none())),
                at(T0, callback("a.1", "a")),
            ]
        },
    },
    Deviation {
        name: "callback-expired-awaiter",
        spec: "spec/02-actions/P-04-promise.register_callback.lean:17",
        class: Class::Bug,
        summary: "register_callback records the callback although the awaiter is past its deadline",
        hooks: &CallbackExpiredAwaiter,
        witness: || {
            vec![
                at(T0, create("a", T0 + 10, target())),
                at(T0, create("a.1", LATER, none())),
                at(T0 + 10, callback("a.1", "a")),
            ]
        },
    },
    Deviation {
        name: "callback-on-settled-resumes",
        spec: "spec/02-actions/P-04-promise.register_callback.lean:28",
        class: Class::Bug,
        summary: "register_callback on an already settled promise resumes (suspended) or buffers (pending, acquired) the awaiter",
        hooks: &CallbackOnSettledResumes,
        witness: || {
            vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                // Settled (timed out) at creation.
                at(T0, create("a.1", T0 - 1, none())),
                at(T0, callback("a.1", "a")),
            ]
        },
    },
    Deviation {
        name: "listener-refuses-internal",
        spec: "spec/02-actions/P-05-promise.register_listener.lean:10",
        class: Class::Validation,
        summary: "register_listener answers 422 without a listener for a promise with no resonate:target and no timer (resonate:scope global and resonate:external true count as targets)",
        hooks: &ListenerRefusesInternal,
        witness: || {
            vec![
                at(T0, create("a", LATER, none())),
                at(T0, listen("a")),
            ]
        },
    },
    Deviation {
        name: "settle-drops-execute",
        spec: "spec/02-actions/P-03-promise.settle.lean:17",
        class: Class::Bug,
        summary: "settling a promise (settle, fenced settle, task.fulfill or its timeout) also removes its task's execute message from the outbox, where the spec fulfils the task and leaves the outbox as it was",
        hooks: &SettleDropsExecute,
        witness: || {
            vec![
                at(T0, create("a", LATER, target())),
                at(T0, settle("a", PromiseState::Resolved)),
            ]
        },
    },
    Deviation {
        name: "callback-refuses-internal",
        spec: "spec/02-actions/P-04-promise.register_callback.lean:15",
        class: Class::Validation,
        summary: "register_callback answers 422 without a callback when the awaited promise has no resonate:target, no timer and no resonate:external true (after the awaiter's checks, before its state's)",
        hooks: &CallbackRefusesInternal,
        witness: || {
            vec![
                at(T0, create("a", LATER, target())),
                at(T0, create("a.1", LATER, none())),
                at(T0, callback("a.1", "a")),
            ]
        },
    },
    Deviation {
        name: "empty-target-is-no-target",
        spec: "spec/02-actions/P-02-promise.create.lean:20",
        class: Class::Bug,
        summary: "an empty resonate:target is stored but read as no target (by truthiness, not presence): promise.create makes no task, no execute, no promise timeout, and later requests naming the promise see no target either",
        hooks: &EmptyTargetIsNoTarget,
        witness: || vec![at(T0, create("a", LATER, tags(&[(TARGET, "")])))],
    },
    Deviation {
        name: "listener-past-deadline",
        spec: "spec/02-actions/P-05-promise.register_listener.lean:11",
        class: Class::Bug,
        summary: "register_listener records the listener on a pending promise past its deadline (the projection is still answered)",
        hooks: &ListenerPastDeadline,
        witness: || {
            vec![
                at(T0, create("a", T0 + 10, none())),
                at(T0 + 20, listen("a")),
            ]
        },
    },
];

/// How close to its deadline `settle-timedout-early` strikes (ms).
pub const EARLY_MS: Time = 1000;

/// Ported from the runner's planted bugs: a read that "helps" by timing out
/// a promise about to expire. `onPromiseTimeout` does not look at the clock,
/// so firing it early settles the promise before its deadline, which no
/// schedule of the environment can do.
struct SettleTimedoutEarly;

impl Hooks for SettleTimedoutEarly {
    fn apply_firing(
        &self,
        m: &mut Machine,
        req: &Request,
        now: Time,
        next: Next,
        fire: Fire,
    ) -> Response {
        if let Request::PromiseGet(r) = req {
            let early = m.state.get_promise(&r.id).is_some_and(|p| {
                !p.is_timer() && p.is_live(now) && p.timeout_at.saturating_sub(now) <= EARLY_MS
            });
            if early {
                fire(m, &Timer::Promise(r.id.clone()), now);
            }
        }
        next(m, req, now)
    }
}

/// An off-by-one in the read's deadline test (`timeoutAt < now`): at the
/// very millisecond of its deadline the promise is answered as pending,
/// which no firing can explain (a fired promise is settled, an unfired one
/// is projected).
struct GetStrictDeadline;

impl Hooks for GetStrictDeadline {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::PromiseGet(r) = req else {
            return next(m, req, now);
        };
        let stored = m
            .state
            .get_promise(&r.id)
            .filter(|p| p.state == PromiseState::Pending && p.timeout_at == now)
            .map(|p| p.to_record());
        let mut res = next(m, req, now);
        if let (Some(stored), Some(rec)) = (stored, record_mut(&mut res)) {
            *rec = stored;
        }
        res
    }
}

/// The Rust server's `try_timeout`: before handling a request it settles
/// every pending promise the request names whose deadline has passed,
/// whether or not a timeout was armed for it. For armed ones that is
/// latitude; for an internal promise (no target, no timer) nothing is armed
/// in the spec, so reads must only project it and nothing may ever settle
/// it. The ids are the server's: each handler's own id, both promises of
/// `register_callback`, the task and its awaited promises for `suspend`, the
/// task and the action's promise for `fence`; none for `heartbeat` and the
/// schedule requests.
struct MaterializeUnarmedExpired;

fn named(req: &Request) -> Vec<&str> {
    use Request as R;
    match req {
        R::PromiseGet(r) => vec![&r.id],
        R::PromiseCreate(r) => vec![&r.id],
        R::PromiseSettle(r) => vec![&r.id],
        R::PromiseRegisterCallback(r) => vec![&r.awaited, &r.awaiter],
        R::PromiseRegisterListener(r) => vec![&r.awaited],
        R::TaskGet(r) => vec![&r.id],
        R::TaskCreate(r) => vec![&r.action.id],
        R::TaskAcquire(r) => vec![&r.id],
        R::TaskRelease(r) => vec![&r.id],
        R::TaskFulfill(r) => vec![&r.action.id],
        R::TaskSuspend(r) => std::iter::once(r.id.as_str())
            .chain(r.actions.iter().map(|a| a.awaited.as_str()))
            .collect(),
        R::TaskFence(r) => {
            let action = match &r.action {
                model::api::TaskFenceAction::Create(c) => &c.id,
                model::api::TaskFenceAction::Settle(s) => &s.id,
            };
            vec![&r.id, action]
        }
        R::TaskHalt(r) => vec![&r.id],
        R::TaskContinue(r) => vec![&r.id],
        _ => Vec::new(),
    }
}

impl Hooks for MaterializeUnarmedExpired {
    fn apply_firing(
        &self,
        m: &mut Machine,
        req: &Request,
        now: Time,
        next: Next,
        fire: Fire,
    ) -> Response {
        for id in named(req) {
            let unarmed_expired = m
                .state
                .get_promise(id)
                .is_some_and(|p| p.state == PromiseState::Pending && p.timeout_at <= now)
                && m.state.promise_timeouts().get(id).is_none();
            if unarmed_expired {
                // Unarmed promises have no task and are nobody's awaiter, so
                // the order among them does not matter.
                fire(m, &Timer::Promise(id.to_string()), now);
            }
        }
        next(m, req, now)
    }
}

/// The TS server's eager mode (`tryEagerTimeout`, local.js:1048, called
/// for each id the request names, local.js:42-116, in that order), and the
/// Rust server's `try_timeout` over the same ids: every
/// named pending promise past its deadline is settled with its whole
/// cascade before the handler runs, armed or not. For an armed one that is
/// a firing the spec allows, made here deterministic and in the server's
/// order; for an unarmed one it is the same departure as
/// `materialize-unarmed-expired`. The firing is the server's own promise
/// timeout (through every deviation's `fire`: the TS server's
/// `tryEagerTimeout` settles with the tick's `timeoutState` and the same
/// cascade), but not its tick: departures of the tick as a whole
/// (`timeout-skips-due-awaiters`) do not apply to it, as in the server.
struct MaterializeNamedExpired;

impl Hooks for MaterializeNamedExpired {
    fn apply_firing(
        &self,
        m: &mut Machine,
        req: &Request,
        now: Time,
        next: Next,
        fire: Fire,
    ) -> Response {
        for id in named(req) {
            let expired = m
                .state
                .get_promise(id)
                .is_some_and(|p| p.state == PromiseState::Pending && p.timeout_at <= now);
            if expired {
                fire(m, &Timer::Promise(id.to_string()), now);
            }
        }
        next(m, req, now)
    }
}

/// The Rust server arms a promise timeout only when the promise has a
/// target, reading `external` (`state.lean:35`: a target *or* a timer) as
/// "has a task" and forgetting timers; a task suspended on such a timer (a
/// sleep) never wakes.
struct TimerWithoutTargetUnarmed;

impl Hooks for TimerWithoutTargetUnarmed {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Some(c) = creation(req) else {
            return next(m, req, now);
        };
        let fresh = m.state.get_promise(&c.id).is_none()
            && c.timeout_at > now
            && is_timer(&c.tags)
            && !c.tags.contains_key(TARGET);
        let res = next(m, req, now);
        if fresh && m.state.get_promise(&c.id).is_some() {
            m.state.del_promise_timeout(&c.id);
        }
        res
    }
}

/// A target read by truthiness (`if (address)`, as in JavaScript): an
/// empty `resonate:target` counts as none, though `Tags.has` counts any
/// value (`state.lean:8`). Only the Rust server's validation keeps empty
/// targets out; validation probing sends them.
struct EmptyTargetIsNoTarget;

impl Hooks for EmptyTargetIsNoTarget {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        if let Request::PromiseCreate(c) = req {
            let empty = c.tags.get(TARGET).is_some_and(String::is_empty);
            if empty && m.state.get_promise(&c.id).is_none() {
                let mut stripped = c.clone();
                stripped.tags.remove(TARGET);
                let mut res = next(m, &Request::PromiseCreate(stripped), now);
                restore_empty_targets(m, std::slice::from_ref(&c.id), &mut res);
                return res;
            }
            return next(m, req, now);
        }
        // Every other handler reads the named promises' targets the same
        // way: an empty one is none while the handler runs.
        let blanked: Vec<String> = model::names::named(req)
            .into_iter()
            .filter(|id| {
                m.state
                    .get_promise(id)
                    .is_some_and(|p| p.tags.get(TARGET).is_some_and(String::is_empty))
            })
            .map(str::to_string)
            .collect();
        for id in &blanked {
            patch_promise(m, id, |p| {
                p.tags.remove(TARGET);
            });
        }
        let mut res = next(m, req, now);
        restore_empty_targets(m, &blanked, &mut res);
        res
    }
}

/// Put the empty `resonate:target` back on the promises (and the answered
/// record) it was taken from: the server stores and answers the tag.
fn restore_empty_targets(m: &mut Machine, ids: &[String], res: &mut Response) {
    if ids.is_empty() {
        // Nothing was blanked: no outbox scan on every request.
        return;
    }
    for id in ids {
        patch_promise(m, id, |p| {
            p.tags.insert(TARGET.to_string(), String::new());
        });
    }
    // The `unblock` a settlement sent carries the promise as stored.
    let unblocks: Vec<(String, model::types::PromiseRecord)> = m
        .state
        .outbox()
        .filter_map(|(_, e)| match &e.message {
            Message::Unblock { promise }
                if ids.contains(&promise.id) && !promise.tags.contains_key(TARGET) =>
            {
                Some((e.address.clone(), promise.clone()))
            }
            _ => None,
        })
        .collect();
    for (address, mut promise) in unblocks {
        promise.tags.insert(TARGET.to_string(), String::new());
        m.state.set_message(&address, Message::Unblock { promise });
    }
    if let Some(r) = record_mut(res) {
        if ids.contains(&r.id) {
            r.tags.insert(TARGET.to_string(), String::new());
        }
    }
}

/// "Every promise has a deadline, so arm it": an internal promise's timeout
/// is armed although only external ones are, so it will later be settled by
/// the environment where the spec leaves it pending (reads only project it).
struct CreateArmsInternalTimeout;

impl Hooks for CreateArmsInternalTimeout {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Some(c) = creation(req) else {
            return next(m, req, now);
        };
        let fresh = m.state.get_promise(&c.id).is_none()
            && c.timeout_at > now
            && !is_timer(&c.tags)
            && !c.tags.contains_key(TARGET);
        let res = next(m, req, now);
        if fresh && m.state.get_promise(&c.id).is_some() {
            m.state.set_promise_timeout(&c.id, c.timeout_at);
        }
        res
    }
}

/// The Rust server reads `resonate:delay` only to validate it: the new
/// task's first `execute` goes out at once and its retry counts from now,
/// where the spec holds the dispatch until the delay (a retry timeout at the
/// delay, no message). Covers `promise.create` and a fenced create.
struct DelayIgnored;

impl Hooks for DelayIgnored {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Some(c) = creation(req) else {
            return next(m, req, now);
        };
        let delayed = m.state.get_promise(&c.id).is_none()
            && c.timeout_at > now
            && c.tags.get(DELAY).is_some_and(|d| to_nat(d) > now);
        let target = c.tags.get(TARGET).filter(|_| delayed).cloned();
        let res = next(m, req, now);
        if let Some(target) = target {
            if m.state.get_task(&c.id).is_some() {
                let retry = m.state.config.retry_timeout;
                m.state
                    .set_task_timeout(&c.id, RETRY, now.saturating_add(retry));
                m.state.set_message(
                    &target,
                    Message::Execute {
                        task_id: c.id.clone(),
                        version: 0,
                    },
                );
            }
        }
        res
    }
}

/// The expired-at-creation branch copies the live branch's `createdAt :=
/// now`; the spec dates such a promise at its deadline (it never lived).
struct CreateExpiredCreatedNow;

impl Hooks for CreateExpiredCreatedNow {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Some(c) = creation(req) else {
            return next(m, req, now);
        };
        let expired = m.state.get_promise(&c.id).is_none() && c.timeout_at <= now;
        let mut res = next(m, req, now);
        if expired && m.state.get_promise(&c.id).is_some() {
            patch_promise(m, &c.id, |p| p.created_at = now);
            if let Some(rec) = record_mut(&mut res) {
                rec.created_at = now;
            }
        }
        res
    }
}

/// The idempotent branch returns the stored promise as is, forgetting the
/// projection every other read applies past the deadline.
struct CreateExistingUnprojected;

impl Hooks for CreateExistingUnprojected {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Some(c) = creation(req) else {
            return next(m, req, now);
        };
        let stored = m
            .state
            .get_promise(&c.id)
            .filter(|p| p.state == PromiseState::Pending && p.timeout_at <= now)
            .map(|p| p.to_record());
        let mut res = next(m, req, now);
        if let (Some(stored), Some(rec)) = (stored, record_mut(&mut res)) {
            *rec = stored;
        }
        res
    }
}

/// An off-by-one in the settle's deadline test (`timeoutAt ≥ now`): at the
/// millisecond of its deadline the client's settlement wins, where the spec
/// answers the timed-out projection and writes nothing.
struct SettleAtDeadline;

impl Hooks for SettleAtDeadline {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        if let Some(id) = settle_target(req) {
            let at_deadline = m
                .state
                .get_promise(id)
                .is_some_and(|p| p.state == PromiseState::Pending && p.timeout_at == now);
            if at_deadline {
                return with_deadline(m, id, now + 1, |m| next(m, req, now));
            }
        }
        next(m, req, now)
    }
}

/// The settled promise is written with its registrations still on it
/// (`callbacks := [], listeners := []` forgotten): the settlement itself
/// notifies and resumes as the spec does, but the settled promise keeps
/// callbacks and listeners that nothing will ever serve.
struct SettleKeepsListeners;

impl Hooks for SettleKeepsListeners {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Some(id) = settle_target(req) else {
            return next(m, req, now);
        };
        let kept = m
            .state
            .get_promise(id)
            .filter(|p| p.is_live(now))
            .map(|p| (p.callbacks.clone(), p.listeners.clone()));
        let res = next(m, req, now);
        if let Some((callbacks, listeners)) = kept {
            if !is_pending(m, id) {
                patch_promise(m, id, |p| {
                    p.callbacks = callbacks;
                    p.listeners = listeners;
                });
            }
        }
        res
    }
}

/// The settlement scrub is skipped: a settled task promise stays registered
/// as an awaiter in the callbacks of the pending promises it awaited. (The
/// hook finds those by a scan of the promises: a planted bug may be slow.)
struct SettleNoScrub;

impl Hooks for SettleNoScrub {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Some(id) = settle_target(req) else {
            return next(m, req, now);
        };
        if !is_live(m, id, now) {
            return next(m, req, now);
        }
        let holders: Vec<(String, Vec<String>)> = m
            .state
            .promises()
            .filter(|q| {
                q.id != id
                    && q.state == PromiseState::Pending
                    && q.callbacks.iter().any(|c| c == id)
            })
            .map(|q| (q.id.clone(), q.callbacks.clone()))
            .collect();
        let res = next(m, req, now);
        if !is_pending(m, id) {
            for (q, callbacks) in holders {
                patch_promise(m, &q, |q| q.callbacks = callbacks);
            }
        }
        res
    }
}

/// "Last write wins": a second settlement overwrites the first instead of
/// answering the settled promise unchanged, so a retried or racing settle
/// changes a result others may already have read.
struct SettleOverwritesSettled;

impl Hooks for SettleOverwritesSettled {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Some(s) = settle_request(req) else {
            return next(m, req, now);
        };
        let settled = m
            .state
            .get_promise(&s.id)
            .is_some_and(|p| p.state != PromiseState::Pending);
        let mut res = next(m, req, now);
        if !settled {
            return res;
        }
        // Only when the handler ran (a fence that failed answers no record).
        if let Some(rec) = record_mut(&mut res) {
            patch_promise(m, &s.id, |p| {
                p.state = s.state;
                p.value = s.value.clone();
                p.settled_at = Some(now);
            });
            if let Some(p) = m.state.get_promise(&s.id) {
                *rec = p.to_record();
            }
        }
        res
    }
}

/// The awaited promise's fast path (settled: answer it; expired: answer its
/// projection) is taken before the awaiter is looked up, so a missing or
/// target-less awaiter is answered 200 instead of 422.
struct CallbackBeforeAwaiterCheck;

impl Hooks for CallbackBeforeAwaiterCheck {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::PromiseRegisterCallback(r) = req else {
            return next(m, req, now);
        };
        let awaiter_ok = m
            .state
            .get_promise(&r.awaiter)
            .is_some_and(|p| p.tags.contains_key(TARGET));
        let early = m
            .state
            .get_promise(&r.awaited)
            .filter(|aw| !aw.is_live(now) && !awaiter_ok)
            .map(|aw| {
                if aw.state != PromiseState::Pending {
                    aw.to_record()
                } else {
                    aw.projected_record()
                }
            });
        let res = next(m, req, now);
        match early {
            Some(record) => Response::Promise(PromiseRes {
                status: 200,
                promise: Some(record),
            }),
            None => res,
        }
    }
}

/// The awaiter's liveness test checks only its state (`pending`), not its
/// deadline: an awaiter past its deadline, which can only time out, is
/// registered on the awaited promise.
struct CallbackExpiredAwaiter;

impl Hooks for CallbackExpiredAwaiter {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::PromiseRegisterCallback(r) = req else {
            return next(m, req, now);
        };
        let res = next(m, req, now);
        let awaiter_expired = m.state.get_promise(&r.awaiter).is_some_and(|w| {
            w.tags.contains_key(TARGET) && w.state == PromiseState::Pending && w.timeout_at <= now
        });
        if res.status() == 200 && awaiter_expired && is_live(m, &r.awaited, now) {
            patch_promise(m, &r.awaited, |p| p.add_callback(&r.awaiter));
        }
        res
    }
}

/// The Rust server's direct resume: a callback registered on a promise that
/// is already settled runs the awaiter's resumption at once (a suspended
/// task goes pending with an `execute`; a pending or acquired one buffers
/// the resume), where the spec answers the settled promise and changes
/// nothing (the task learns of it on its own, e.g. through suspend's 300).
/// A halted awaiter is left alone, as the server does.
struct CallbackOnSettledResumes;

impl Hooks for CallbackOnSettledResumes {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::PromiseRegisterCallback(r) = req else {
            return next(m, req, now);
        };
        let settled = m
            .state
            .get_promise(&r.awaited)
            .is_some_and(|p| p.state != PromiseState::Pending);
        let res = next(m, req, now);
        let resumable = matches!(
            task_state(m, &r.awaiter),
            Some(TaskState::Suspended | TaskState::Pending | TaskState::Acquired)
        );
        if settled && resumable {
            enqueue_resume(m, &r.awaited, &r.awaiter, now);
        }
        res
    }
}

/// The listener's liveness test checks only the state: a listener is added
/// to a pending promise past its deadline (the answer still projects it).
/// An internal promise is never settled, so nothing will ever notify it.
struct ListenerPastDeadline;

impl Hooks for ListenerPastDeadline {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::PromiseRegisterListener(r) = req else {
            return next(m, req, now);
        };
        let res = next(m, req, now);
        let expired = m
            .state
            .get_promise(&r.awaited)
            .is_some_and(|p| p.state == PromiseState::Pending && p.timeout_at <= now);
        if expired {
            patch_promise(m, &r.awaited, |p| p.add_listener(&r.address));
        }
        res
    }
}

/// The TS server's `isExternalPromise` (`local.js:9-15`): a promise is
/// awaitable when it has a `resonate:target`, is a timer, or is tagged
/// `resonate:scope = global` or `resonate:external = true`.
fn ts_external(tags: &model::types::Tags) -> bool {
    tags.contains_key(TARGET)
        || is_timer(tags)
        || tags.get("resonate:scope").map(String::as_str) == Some("global")
        || tags.get("resonate:external").map(String::as_str) == Some("true")
}

/// The TS server refuses a listener on a promise it does not count as
/// external (`local.js:370-375`, before looking at its state): 422 and no
/// listener, where the spec adds the listener to any live promise and
/// answers any other with its (projected) record.
struct ListenerRefusesInternal;

impl Hooks for ListenerRefusesInternal {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::PromiseRegisterListener(r) = req else {
            return next(m, req, now);
        };
        let refused = m
            .state
            .get_promise(&r.awaited)
            .is_some_and(|p| !ts_external(&p.tags));
        if refused {
            return Response::Promise(PromiseRes {
                status: 422,
                promise: None,
            });
        }
        next(m, req, now)
    }
}

/// resonate-pg's settlement cascade deletes the outbox row of the settled
/// promise's task (`_cascade_settle`, resonate.sql:275: `DELETE FROM outbox
/// WHERE task_id = p.id`) at every settlement site: `promise.settle` (and a
/// fenced settle through it), `task.fulfill`, the promise timeout. The
/// spec's outbox is never drained (`setMessage` only adds or replaces,
/// state.lean:166-170): the task is fulfilled, its `execute` stays.
struct SettleDropsExecute;

/// Drop the `execute` keyed by promise `id` (its task's) if `id` was pending
/// before the step and is settled after it.
fn drop_execute_if_settled(m: &mut Machine, id: &str, was_pending: bool) {
    if was_pending
        && !is_pending(m, id)
        && m.state
            .get_message(id)
            .is_some_and(|e| matches!(e.message, Message::Execute { .. }))
    {
        m.state.del_message(id);
    }
}

impl Hooks for SettleDropsExecute {
    /// It drops the message keyed by the id it settles: the request's, or
    /// the firing timer's.
    fn stays_in_footprint(&self) -> bool {
        true
    }

    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Some(id) = settlement(req) else {
            return next(m, req, now);
        };
        let was_pending = is_pending(m, id);
        let res = next(m, req, now);
        drop_execute_if_settled(m, id, was_pending);
        res
    }

    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let Timer::Promise(id) = timer else {
            return next(m, timer, now);
        };
        let was_pending = is_pending(m, id);
        next(m, timer, now);
        drop_execute_if_settled(m, id, was_pending);
    }
}

/// resonate-pg refuses a callback on an awaited promise it does not count
/// as external (resonate.sql:485-488: "an INTERNAL awaited must not have
/// awaiters"), after the awaiter's checks (404, 422, 422 as the spec) and
/// before looking at the awaited's state; the spec takes a callback on any
/// live awaited (P-04:15-19) and answers any other with its record.
struct CallbackRefusesInternal;

impl Hooks for CallbackRefusesInternal {
    /// It reads the awaiter's and the awaited's tags, and writes nothing.
    fn stays_in_footprint(&self) -> bool {
        true
    }

    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::PromiseRegisterCallback(r) = req else {
            return next(m, req, now);
        };
        let awaiter_ok = m
            .state
            .get_promise(&r.awaiter)
            .is_some_and(|p| p.tags.contains_key(TARGET));
        let refused = awaiter_ok
            && m.state
                .get_promise(&r.awaited)
                .is_some_and(|p| !pg_external(&p.tags));
        if refused {
            return Response::Promise(PromiseRes {
                status: 422,
                promise: None,
            });
        }
        next(m, req, now)
    }
}
