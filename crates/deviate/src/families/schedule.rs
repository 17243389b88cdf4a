//! Schedules: `schedule.get` (S-01), `schedule.create` (S-02),
//! `schedule.delete` (S-03), and the schedule timeout with its catch-up
//! (`onScheduleTimeout`, `catchUp` in `02-timeouts.lean`).
//!
//! The witnesses use `* * * * *`: created at `T0`, a schedule's first
//! occurrence is `M1`, the next `M2`.
//!
//! | name | Lean line | what |
//! |---|---|---|
//! | `schedule-get-drops-tags` | S-01:10 | `schedule.get` answers the schedule without its `promiseTags` |
//! | `schedule-create-overwrites` | S-02:8 | `schedule.create` of an existing id replaces it (upsert) |
//! | `schedule-first-run-inclusive` | S-02:18 | created exactly on an occurrence, the first run is now (next at-or-after) |
//! | `schedule-delete-keeps-timeout` | S-03:11 | the deleted schedule's timeout stays armed |
//! | `schedule-extra-tags` | 02-timeouts:83 | created promises carry `resonate:schedule/origin/branch/parent/prefix` (Rust server, row 07) |
//! | `schedule-retry-from-tick` | 02-timeouts:83 | a created task's retry counts from the firing, not the occurrence (Rust server, row 07) |
//! | `schedule-tag-schedule-id` | 02-timeouts:83 | created promises carry `resonate:schedule` = the schedule id, nothing else added (TS server, B6a) |
//! | `schedule-created-at-tick` | 02-timeouts:83 | an occurrence's promise is created as of the firing time, not its occurrence: `createdAt`, retry base, delay and expiry all read at the tick (TS server, B6b) |
//! | `schedule-expired-occurrence-settled` | 02-timeouts:83 | an occurrence already past its deadline at the firing is created timed out, dated at its occurrence, with no `execute` (Rust server, row 09) |
//! | `schedule-one-per-tick` | 02-timeouts:84 | a firing creates only the first due occurrence; the others wait for later firings (TS server B6c, Rust server row 08) |
//! | `catchup-next-from-now` | 02-timeouts:84 | after the first missed occurrence the next run is computed from now, skipping the others |
//! | `schedule-not-rearmed` | 02-timeouts:96 | after firing, the schedule timeout is not re-armed |
//!
//! The occurrence hooks compose in one order, outermost first: the tag
//! hooks (`schedule-extra-tags`, `schedule-tag-schedule-id`) and
//! `schedule-retry-from-tick`, then `schedule-created-at-tick` or
//! `schedule-expired-occurrence-settled`, then `schedule-one-per-tick`
//! (which hands the inner firing the first occurrence's time as `now`).

use model::actions::promise_create::promise_create;
use model::api::{PromiseCreateReq, Request, Response};
use model::machine::{Machine, Timer};
use model::state::{DELAY, RETRY};
use model::types::{TaskState, Time};

use super::effects::patch_promise;
use super::witness::*;
use crate::{Class, Deviation, Hooks, Next, NextFire};

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[
    Deviation {
        name: "schedule-get-drops-tags",
        spec: "spec/02-actions/S-01-schedule.get.lean:10",
        class: Class::Bug,
        summary: "schedule.get answers the schedule with empty promiseTags",
        hooks: &ScheduleGetDropsTags,
        witness: || {
            vec![
                at(T0, schedule("s1", EVERY_MINUTE)),
                at(T0, schedule_get("s1")),
            ]
        },
    },
    Deviation {
        name: "schedule-create-overwrites",
        spec: "spec/02-actions/S-02-schedule.create.lean:8",
        class: Class::Bug,
        summary: "schedule.create of an existing id replaces the stored schedule with the request's",
        hooks: &ScheduleCreateOverwrites,
        witness: || {
            vec![
                at(T0, schedule("s1", EVERY_MINUTE)),
                at(T0 + 1, schedule("s1", "*/5 * * * *")),
            ]
        },
    },
    Deviation {
        name: "schedule-first-run-inclusive",
        spec: "spec/02-actions/S-02-schedule.create.lean:18",
        class: Class::Bug,
        summary: "schedule.create exactly on an occurrence takes now as the first run (at-or-after for strictly-after)",
        hooks: &ScheduleFirstRunInclusive,
        witness: || vec![at(M1, schedule("s1", EVERY_MINUTE))],
    },
    Deviation {
        name: "schedule-delete-keeps-timeout",
        spec: "spec/02-actions/S-03-schedule.delete.lean:11",
        class: Class::Bug,
        summary: "schedule.delete removes the schedule but leaves its schedule timeout armed",
        hooks: &ScheduleDeleteKeepsTimeout,
        witness: || {
            vec![
                at(T0, schedule("s1", EVERY_MINUTE)),
                at(T0, schedule_delete("s1")),
            ]
        },
    },
    Deviation {
        name: "schedule-extra-tags",
        spec: "spec/02-actions/02-timeouts.lean:83",
        class: Class::Bug,
        summary: "schedule-created promises carry resonate:schedule = the schedule id and resonate:origin/branch/parent/prefix = the promise id",
        hooks: &ScheduleExtraTags,
        witness: || {
            vec![
                at(T0, schedule("s1", EVERY_MINUTE)),
                tick(M1),
            ]
        },
    },
    Deviation {
        name: "schedule-retry-from-tick",
        spec: "spec/02-actions/02-timeouts.lean:83",
        class: Class::Bug,
        summary: "a schedule-created task's retry timeout counts from the firing time instead of the occurrence",
        hooks: &ScheduleRetryFromTick,
        witness: || {
            vec![
                at(T0, schedule("s1", EVERY_MINUTE)),
                tick(M1 + 1),
            ]
        },
    },
    Deviation {
        name: "schedule-tag-schedule-id",
        spec: "spec/02-actions/02-timeouts.lean:83",
        class: Class::Bug,
        summary: "schedule-created promises carry resonate:schedule = the schedule id besides the schedule's promiseTags",
        hooks: &ScheduleTagScheduleId,
        witness: || {
            vec![
                at(T0, schedule("s1", EVERY_MINUTE)),
                tick(M1),
            ]
        },
    },
    Deviation {
        name: "schedule-created-at-tick",
        spec: "spec/02-actions/02-timeouts.lean:83",
        class: Class::Bug,
        summary: "an occurrence's promise is created through promise.create at the firing time instead of its occurrence (createdAt, retry base, delay and expiry read at the tick)",
        hooks: &ScheduleCreatedAtTick,
        witness: || {
            vec![
                at(T0, schedule("s1", EVERY_MINUTE)),
                // Fired 1 ms after the occurrence: created at M1 + 1.
                tick(M1 + 1),
            ]
        },
    },
    Deviation {
        name: "schedule-expired-occurrence-settled",
        spec: "spec/02-actions/02-timeouts.lean:83",
        class: Class::Bug,
        summary: "an occurrence whose deadline has passed by the firing is created timed out (task fulfilled, no execute sent), dated at its occurrence",
        hooks: &ScheduleExpiredOccurrenceSettled,
        witness: || {
            vec![
                at(T0, schedule("s1", EVERY_MINUTE)),
                // M1's promise lives a minute: at M2 it is past its deadline.
                tick(M2),
            ]
        },
    },
    Deviation {
        name: "schedule-one-per-tick",
        spec: "spec/02-actions/02-timeouts.lean:84",
        class: Class::Bug,
        summary: "a schedule firing creates only the first due occurrence and re-arms at the next one, even when that is due too",
        hooks: &ScheduleOnePerTick,
        witness: || {
            vec![
                at(T0, schedule("s1", EVERY_MINUTE)),
                // Two occurrences are due: M1 and M2.
                tick(M2),
            ]
        },
    },
    Deviation {
        name: "catchup-next-from-now",
        spec: "spec/02-actions/02-timeouts.lean:84",
        class: Class::Bug,
        summary: "the catch-up creates the first missed occurrence, then computes the next run from now, skipping the other missed ones",
        hooks: &CatchupNextFromNow,
        witness: || {
            vec![
                at(T0, schedule("s1", EVERY_MINUTE)),
                // Two occurrences are due: M1 and M2.
                tick(M2),
            ]
        },
    },
    Deviation {
        name: "schedule-not-rearmed",
        spec: "spec/02-actions/02-timeouts.lean:96",
        class: Class::Bug,
        summary: "the schedule timeout advances the schedule but does not re-arm itself",
        hooks: &ScheduleNotRearmed,
        witness: || {
            vec![
                at(T0, schedule("s1", EVERY_MINUTE)),
                tick(M1),
            ]
        },
    },
];

/// The promise tags live beside the schedule and the read forgets to join
/// them: the schedule is answered with no `promiseTags` (so a client cannot
/// see where its promises go).
struct ScheduleGetDropsTags;

impl Hooks for ScheduleGetDropsTags {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let mut res = next(m, req, now);
        if let (Request::ScheduleGet(_), Response::Schedule(r)) = (req, &mut res) {
            if let Some(s) = r.schedule.as_mut() {
                s.promise_tags = Default::default();
            }
        }
        res
    }
}

/// An upsert where the spec is idempotent: the second create replaces the
/// schedule (new cron, new `createdAt`, first run recomputed) instead of
/// answering the stored one.
struct ScheduleCreateOverwrites;

impl Hooks for ScheduleCreateOverwrites {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        if let Request::ScheduleCreate(r) = req {
            // With the old one gone, the spec's create writes the new one
            // and re-arms its timeout.
            m.state.del_schedule(&r.id);
        }
        next(m, req, now)
    }
}

/// `nextCron` read as "at or after": a schedule created on the very
/// millisecond of an occurrence runs now instead of at the next one.
struct ScheduleFirstRunInclusive;

impl Hooks for ScheduleFirstRunInclusive {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::ScheduleCreate(r) = req else {
            return next(m, req, now);
        };
        let fresh = m.state.get_schedule(&r.id).is_none();
        let on_occurrence = m.calendar().next_cron(&r.cron, now.saturating_sub(1)) == now;
        let mut res = next(m, req, now);
        if fresh && on_occurrence {
            if let Some(mut s) = m.state.get_schedule(&r.id).cloned() {
                s.next_run_at = now;
                m.state.set_schedule(s.clone());
                m.state.set_schedule_timeout(&r.id, now);
                if let Response::Schedule(out) = &mut res {
                    out.schedule = Some(s);
                }
            }
        }
        res
    }
}

/// The schedule row is deleted but `delScheduleTimeout` is forgotten: a
/// timeout stays armed for a schedule that no longer exists.
struct ScheduleDeleteKeepsTimeout;

impl Hooks for ScheduleDeleteKeepsTimeout {
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        let Request::ScheduleDelete(r) = req else {
            return next(m, req, now);
        };
        let armed = m.state.schedule_timeouts().get(&r.id);
        let res = next(m, req, now);
        if let (200, Some(at)) = (res.status(), armed) {
            m.state.set_schedule_timeout(&r.id, at);
        }
        res
    }
}

/// The occurrences a firing of schedule `id` at `now` creates: each missed
/// occurrence's promise id and time, as `catchUp` walks them (a calendar
/// answer that does not advance taken as 1 ms later, as the model does),
/// keeping only ids that do not exist yet (an existing one is left as is).
fn new_occurrences(m: &Machine, id: &str, now: Time) -> Vec<(String, Time)> {
    let Some(s) = m.state.get_schedule(id) else {
        return Vec::new();
    };
    let cal = m.calendar();
    let mut out: Vec<(String, Time)> = Vec::new();
    let mut at = s.next_run_at;
    while at <= now {
        let pid = cal.expand(&s.promise_id, &s.id, at);
        if m.state.get_promise(&pid).is_none() && !out.iter().any(|(p, _)| *p == pid) {
            out.push((pid, at));
        }
        at = cal.next_cron(&s.cron, at).max(at.saturating_add(1));
    }
    out
}

/// The Rust server adds its own bookkeeping tags to every promise a
/// schedule creates (`resonate:schedule` naming the schedule, and
/// `resonate:origin`, `branch`, `parent`, `prefix` all set to the promise's
/// own id, overriding the schedule's), where the spec creates it with the
/// schedule's `promiseTags` exactly.
struct ScheduleExtraTags;

impl Hooks for ScheduleExtraTags {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let Timer::Schedule(sid) = timer else {
            return next(m, timer, now);
        };
        let created = new_occurrences(m, sid, now);
        next(m, timer, now);
        for (pid, _) in created {
            patch_promise(m, &pid, |p| {
                p.tags.insert("resonate:schedule".into(), sid.clone());
                for key in ["origin", "branch", "parent", "prefix"] {
                    p.tags.insert(format!("resonate:{key}"), pid.clone());
                }
            });
        }
    }
}

/// The Rust server creates a schedule's promise dated at its occurrence
/// but arms the new task's retry at the firing time plus the retry timeout,
/// where the spec's `promiseCreate … cronTime` counts it from the
/// occurrence. (Promises with a `resonate:delay` are left to the spec.)
struct ScheduleRetryFromTick;

impl Hooks for ScheduleRetryFromTick {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let Timer::Schedule(sid) = timer else {
            return next(m, timer, now);
        };
        let created = new_occurrences(m, sid, now);
        next(m, timer, now);
        let retry = m.state.config.retry_timeout;
        for (pid, _) in created {
            let dispatched = m
                .state
                .get_task(&pid)
                .is_some_and(|t| t.state == TaskState::Pending)
                && m.state
                    .get_promise(&pid)
                    .is_some_and(|p| !p.tags.contains_key(DELAY))
                && m.state.task_timeouts(RETRY).get(&pid).is_some();
            if dispatched {
                m.state
                    .set_task_timeout(&pid, RETRY, now.saturating_add(retry));
            }
        }
    }
}

/// `nextCron s.cron now` where `nextCron s.cron cronTime` is meant: after
/// the first missed occurrence the schedule jumps past `now`, so the other
/// missed occurrences are never created. The hook runs the spec's firing
/// as of the first occurrence (one iteration), then moves the next run.
struct CatchupNextFromNow;

impl Hooks for CatchupNextFromNow {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let Timer::Schedule(sid) = timer else {
            return next(m, timer, now);
        };
        let Some(s) = m.state.get_schedule(sid) else {
            return next(m, timer, now);
        };
        if s.next_run_at > now {
            return next(m, timer, now);
        }
        let (first, cron) = (s.next_run_at, s.cron.clone());
        next(m, timer, first);
        let after = m
            .calendar()
            .next_cron(&cron, now)
            .max(now.saturating_add(1));
        if let Some(mut s) = m.state.get_schedule(sid).cloned() {
            s.next_run_at = after;
            m.state.set_schedule(s);
            m.state.set_schedule_timeout(sid, after);
        }
    }
}

/// The firing advances the schedule and deletes its timeout but forgets
/// `setScheduleTimeout`: the schedule runs once and never again.
struct ScheduleNotRearmed;

impl Hooks for ScheduleNotRearmed {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        next(m, timer, now);
        if let Timer::Schedule(sid) = timer {
            if m.state.get_schedule(sid).is_some() {
                m.state.del_schedule_timeout(sid);
            }
        }
    }
}

/// The occurrences (promise id, occurrence time) that the firing `next`
/// would create: the candidates of [`new_occurrences`] that exist after
/// running `next` on trial (undone at once: a copy of the machine would
/// cost the whole state at every schedule firing). Inner deviations may
/// create fewer than the spec (`schedule-one-per-tick`), so the hooks that
/// must act *before* the creation ask the inner firing itself.
fn created_by(
    m: &mut Machine,
    sid: &str,
    timer: &Timer,
    now: Time,
    next: NextFire,
) -> Vec<(String, Time)> {
    let candidates = new_occurrences(m, sid, now);
    if candidates.is_empty() {
        return candidates;
    }
    m.trial(|m| {
        next(m, timer, now);
        candidates
            .into_iter()
            .filter(|(pid, _)| m.state.get_promise(pid).is_some())
            .collect()
    })
}

/// The `promise.create` the spec's `catchUp` makes for occurrence `at` of
/// schedule `sid` (02-timeouts.lean:81-83), when the schedule exists.
fn occurrence_req(m: &Machine, sid: &str, pid: &str, at: Time) -> Option<PromiseCreateReq> {
    let s = m.state.get_schedule(sid)?;
    Some(PromiseCreateReq {
        id: pid.to_string(),
        timeout_at: at.saturating_add(s.promise_timeout),
        param: s.promise_param.clone(),
        tags: s.promise_tags.clone(),
    })
}

/// The TS server (`local.js:995`) creates each occurrence with the
/// schedule's `promiseTags` plus `resonate:schedule` naming the schedule,
/// where the spec uses `s.promiseTags` exactly.
struct ScheduleTagScheduleId;

impl Hooks for ScheduleTagScheduleId {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let Timer::Schedule(sid) = timer else {
            return next(m, timer, now);
        };
        let created = new_occurrences(m, sid, now);
        next(m, timer, now);
        for (pid, _) in created {
            patch_promise(m, &pid, |p| {
                p.tags.insert("resonate:schedule".into(), sid.clone());
            });
        }
    }
}

/// The TS server's tick (`local.js:988`) calls `promiseCreate(now, …)` with
/// the tick's time for every occurrence, where `catchUp` passes `cronTime`:
/// the promise is dated at the tick, its task's retry counts from the tick,
/// a `resonate:delay` is compared with the tick, and an occurrence whose
/// deadline has passed by the tick takes the expired branch (created
/// settled, `createdAt` = its deadline, a fulfilled task, no `execute`).
/// The hook makes those promises with the spec's `promise.create` at `now`
/// first; the spec's firing then finds them and only advances the schedule.
struct ScheduleCreatedAtTick;

impl Hooks for ScheduleCreatedAtTick {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let Timer::Schedule(sid) = timer else {
            return next(m, timer, now);
        };
        for (pid, at) in created_by(m, sid, timer, now, next) {
            if let Some(req) = occurrence_req(m, sid, &pid, at) {
                promise_create(m, &req, now);
            }
        }
        next(m, timer, now)
    }
}

/// The Rust server creates an occurrence whose deadline has already passed
/// at the firing as a timed-out promise dated at its occurrence
/// (`createdAt` = the occurrence, `settledAt` = its deadline, the task
/// fulfilled) and sends no `execute`, where the spec creates it pending at
/// `cronTime` (dispatching its task) and only then can its timeout fire.
struct ScheduleExpiredOccurrenceSettled;

impl Hooks for ScheduleExpiredOccurrenceSettled {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let Timer::Schedule(sid) = timer else {
            return next(m, timer, now);
        };
        for (pid, at) in created_by(m, sid, timer, now, next) {
            let Some(req) = occurrence_req(m, sid, &pid, at) else {
                continue;
            };
            if req.timeout_at <= now {
                // The expired branch of promise.create, then the date.
                promise_create(m, &req, now);
                patch_promise(m, &pid, |p| p.created_at = at);
            }
        }
        next(m, timer, now)
    }
}

/// Both servers advance a due schedule by one occurrence per firing
/// (`local.js:980-1006`; the Rust server's tick): the first due occurrence
/// is created and the schedule re-armed at the next one, due or not, where
/// `catchUp` creates every occurrence up to `now`. The hook runs the
/// firing as of the first occurrence, which creates exactly that one.
struct ScheduleOnePerTick;

impl Hooks for ScheduleOnePerTick {
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        let Timer::Schedule(sid) = timer else {
            return next(m, timer, now);
        };
        match m.state.get_schedule(sid).map(|s| s.next_run_at) {
            Some(first) if first <= now => next(m, timer, first),
            _ => next(m, timer, now),
        }
    }
}
