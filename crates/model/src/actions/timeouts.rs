//! The four internal transitions of `spec/02-actions/02-timeouts.lean`,
//! fired by the environment once a deadline has passed.
//!
//! - `onPromiseTimeout`: a pending promise settles as `resolved` (timer) or
//!   `rejectedTimedout`, with `settledAt` its deadline (not `now`), then the
//!   settlement cascade runs as for `promise.settle`.
//! - `onTaskRetryTimeout`: a pending task re-arms its retry and re-sends
//!   `execute` (to `""` when its promise has no target, as the Lean's `getD`).
//! - `onTaskLeaseTimeout`: an acquired task returns to pending, keeping its
//!   version and its buffered resumes, and is re-dispatched.
//! - `onScheduleTimeout`: `catchUp` creates, through the complete
//!   `promise.create` at each occurrence's own time, one promise per missed
//!   occurrence up to `now`, then re-arms at the next occurrence.
//!
//! `catchUp` is `partial` in the Lean: it terminates only if `nextCron`
//! advances. A calendar answer that does not advance is taken as one
//! millisecond later, so the model stays total.

use crate::actions::promise_create::promise_create;
use crate::actions::settle::settle;
use crate::api::PromiseCreateReq;
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::state::{Message, PromiseObject, TaskObject, RETRY};
use crate::types::{PromiseState, Schedule, TaskState, Time};

/// `onPromiseTimeout`.
pub fn on_promise_timeout(m: &mut Machine, id: &str, now: Time) {
    let Some(p) = m.state.get_promise(id) else {
        m.hits.push(PROMISE_TIMEOUT_NO_PROMISE);
        return;
    };
    if p.state != PromiseState::Pending {
        m.hits.push(PROMISE_TIMEOUT_NOT_PENDING);
        return;
    }
    m.hits.push(if p.is_timer() {
        PROMISE_TIMEOUT_TIMER_RESOLVED
    } else {
        PROMISE_TIMEOUT_REJECTED_TIMEDOUT
    });
    let p = PromiseObject {
        state: p.timeout_state(),
        settled_at: Some(p.timeout_at),
        ..p.clone()
    };
    let (_, had_task) = settle(m, p, now, &marker::TIMEOUT);
    m.hits.push(if had_task {
        PROMISE_TIMEOUT_WITH_TASK
    } else {
        PROMISE_TIMEOUT_WITHOUT_TASK
    });
}

/// `onTaskRetryTimeout`.
pub fn on_task_retry_timeout(m: &mut Machine, id: &str, now: Time) {
    let retry_timeout = m.retry_timeout();
    let Some(t) = m.state.get_task(id) else {
        m.hits.push(TASK_RETRY_TIMEOUT_NO_TASK);
        return;
    };
    if t.state != TaskState::Pending {
        m.hits.push(TASK_RETRY_TIMEOUT_NOT_PENDING);
        return;
    }
    let (id, version) = (t.id.clone(), t.version);
    m.state.del_task_timeout(&id);
    m.state
        .set_task_timeout(&id, RETRY, now.saturating_add(retry_timeout));
    redispatch(
        m,
        &id,
        version,
        TASK_RETRY_TIMEOUT_NO_PROMISE,
        TASK_RETRY_TIMEOUT_REQUEUED,
    );
}

/// `onTaskLeaseTimeout`.
pub fn on_task_lease_timeout(m: &mut Machine, id: &str, now: Time) {
    let retry_timeout = m.retry_timeout();
    let Some(t) = m.state.get_task(id) else {
        m.hits.push(TASK_LEASE_TIMEOUT_NO_TASK);
        return;
    };
    if t.state != TaskState::Acquired {
        m.hits.push(TASK_LEASE_TIMEOUT_NOT_ACQUIRED);
        return;
    }
    let t = TaskObject {
        state: TaskState::Pending,
        pid: None,
        ttl: None,
        ..t.clone()
    };
    let (id, version) = (t.id.clone(), t.version);
    m.state.set_task(t);
    m.state.del_task_timeout(&id);
    m.state
        .set_task_timeout(&id, RETRY, now.saturating_add(retry_timeout));
    redispatch(
        m,
        &id,
        version,
        TASK_LEASE_TIMEOUT_NO_PROMISE,
        TASK_LEASE_TIMEOUT_EXPIRED,
    );
}

/// `setMessage ((p.tags.get? "resonate:target").getD "") (.execute id version)`
/// when the task's promise exists.
fn redispatch(m: &mut Machine, id: &str, version: u64, no_promise: Branch, sent: Branch) {
    let Some(p) = m.state.get_promise(id) else {
        m.hits.push(no_promise);
        return;
    };
    let target = p.target().to_string();
    m.hits.push(sent);
    m.state.set_message(
        &target,
        Message::Execute {
            task_id: id.to_string(),
            version,
        },
    );
}

/// `catchUp now s`.
pub fn catch_up(m: &mut Machine, now: Time, mut s: Schedule) -> Schedule {
    let mut occurrences = 0;
    while s.next_run_at <= now {
        occurrences += 1;
        m.hits.push(CATCH_UP_OCCURRENCE);
        let cron_time = s.next_run_at;
        let promise_id = m.calendar().expand(&s.promise_id, &s.id, cron_time);
        let req = PromiseCreateReq {
            id: promise_id,
            timeout_at: cron_time.saturating_add(s.promise_timeout),
            param: s.promise_param.clone(),
            tags: s.promise_tags.clone(),
        };
        let _ = promise_create(m, &req, cron_time);
        let next = m.calendar().next_cron(&s.cron, cron_time);
        s.last_run_at = Some(cron_time);
        s.next_run_at = next.max(cron_time.saturating_add(1));
    }
    m.hits.push(CATCH_UP_CURRENT);
    marker::CATCH_UP.record(&mut m.marks, occurrences);
    s
}

/// `onScheduleTimeout`.
pub fn on_schedule_timeout(m: &mut Machine, id: &str, now: Time) {
    let Some(s0) = m.state.get_schedule(id).cloned() else {
        m.hits.push(SCHEDULE_TIMEOUT_NO_SCHEDULE);
        return;
    };
    m.hits.push(SCHEDULE_TIMEOUT_FIRED);
    let s = catch_up(m, now, s0);
    let (sid, next) = (s.id.clone(), s.next_run_at);
    m.state.set_schedule(s);
    m.state.del_schedule_timeout(&sid);
    m.state.set_schedule_timeout(&sid, next);
}
