//! Small constructors for hand-written traces: the witnesses, and tests
//! that need a trace of a given shape.
//!
//! Ids follow the wire's origin rules: a task `a` awaits promises `a.1`,
//! `a.2` (same origin), schedules are `s1`. Times are `T0` plus a few
//! milliseconds; `M1`, `M2` are the first two whole minutes after `T0`
//! (the occurrences of `* * * * *`).

use gen::{Op, Step};
use model::api::*;
use model::types::{PromiseState, Tags, Time, Value};

/// The `now` witnesses start at.
pub const T0: Time = 1_700_000_000_000;
/// The first whole minute after `T0` (2023-11-14T22:14:00Z).
pub const M1: Time = 1_700_000_040_000;
/// The second whole minute after `T0`.
pub const M2: Time = M1 + 60_000;
/// A deadline far enough away never to matter in a witness.
pub const LATER: Time = T0 + 600_000;
/// A listener's delivery address.
pub const ADDR: &str = "http://listener.local/1";
/// The cron of every schedule witness: each minute.
pub const EVERY_MINUTE: &str = "* * * * *";

/// A request step at `now`.
pub fn at(now: Time, r: Request) -> Step {
    Step {
        now,
        op: Op::Request(r),
    }
}

/// A tick at `now`.
pub fn tick(now: Time) -> Step {
    Step { now, op: Op::Tick }
}

/// Tags from pairs.
pub fn tags(pairs: &[(&str, &str)]) -> Tags {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The tag that makes a promise a task's: `resonate:target`.
pub fn target() -> Tags {
    tags(&[("resonate:target", "poll://any@w")])
}

/// The tag that makes a promise a timer: `resonate:timer = true`.
pub fn timer() -> Tags {
    tags(&[("resonate:timer", "true")])
}

/// No tags: an internal promise (no target, no timer, no timeout armed).
pub fn none() -> Tags {
    Tags::new()
}

/// `promise.create` of `id` with `tags`, deadline `timeout_at`.
pub fn create(id: &str, timeout_at: Time, tags: Tags) -> Request {
    Request::PromiseCreate(create_req(id, timeout_at, tags))
}

fn create_req(id: &str, timeout_at: Time, tags: Tags) -> PromiseCreateReq {
    PromiseCreateReq {
        id: id.into(),
        timeout_at,
        param: Default::default(),
        tags,
    }
}

fn settle_req(id: &str, state: PromiseState) -> PromiseSettleReq {
    PromiseSettleReq {
        id: id.into(),
        state,
        value: Value::default(),
    }
}

/// `promise.get` of `id`.
pub fn get(id: &str) -> Request {
    Request::PromiseGet(PromiseGetReq { id: id.into() })
}

/// `promise.settle` of `id` into `state`, no value.
pub fn settle(id: &str, state: PromiseState) -> Request {
    Request::PromiseSettle(settle_req(id, state))
}

/// `promise.register_callback`: `awaiter` waits on `awaited`.
pub fn callback(awaited: &str, awaiter: &str) -> Request {
    Request::PromiseRegisterCallback(PromiseRegisterCallbackReq {
        awaited: awaited.into(),
        awaiter: awaiter.into(),
    })
}

/// `promise.register_listener` of [`ADDR`] on `awaited`.
pub fn listen(awaited: &str) -> Request {
    Request::PromiseRegisterListener(PromiseRegisterListenerReq {
        awaited: awaited.into(),
        address: ADDR.into(),
    })
}

/// `task.get` of `id`.
pub fn task_get(id: &str) -> Request {
    Request::TaskGet(TaskGetReq { id: id.into() })
}

/// `task.create` of `id` by `pid` with lease `ttl`, deadline `timeout_at`.
pub fn task_create(id: &str, pid: &str, ttl: Time, timeout_at: Time) -> Request {
    Request::TaskCreate(TaskCreateReq {
        pid: pid.into(),
        ttl,
        action: create_req(id, timeout_at, target()),
    })
}

/// `task.acquire` of `id` at `version` by `pid`.
pub fn acquire(id: &str, version: u64, pid: &str, ttl: Time) -> Request {
    Request::TaskAcquire(TaskAcquireReq {
        id: id.into(),
        version,
        pid: pid.into(),
        ttl,
    })
}

/// `task.fence` of task `id` at `version` around `promise.settle` of `other`.
pub fn fence_settle(id: &str, version: u64, other: &str) -> Request {
    Request::TaskFence(TaskFenceReq {
        id: id.into(),
        version,
        action: TaskFenceAction::Settle(settle_req(other, PromiseState::Resolved)),
    })
}

/// `task.heartbeat` by `pid` of `(id, version)` refs.
pub fn heartbeat(pid: &str, refs: &[(&str, u64)]) -> Request {
    Request::TaskHeartbeat(TaskHeartbeatReq {
        pid: pid.into(),
        tasks: refs
            .iter()
            .map(|(id, version)| TaskRef {
                id: id.to_string(),
                version: *version,
            })
            .collect(),
    })
}

/// `task.suspend` of `id` at `version` on `awaited` promises.
pub fn suspend(id: &str, version: u64, awaited: &[&str]) -> Request {
    Request::TaskSuspend(TaskSuspendReq {
        id: id.into(),
        version,
        actions: awaited
            .iter()
            .map(|a| PromiseRegisterCallbackReq {
                awaited: a.to_string(),
                awaiter: id.into(),
            })
            .collect(),
    })
}

/// `task.fulfill` of `id` at `version` into `state`.
pub fn fulfill(id: &str, version: u64, state: PromiseState) -> Request {
    Request::TaskFulfill(TaskFulfillReq {
        id: id.into(),
        version,
        action: settle_req(id, state),
    })
}

/// `task.release` of `id` at `version`.
pub fn release(id: &str, version: u64) -> Request {
    Request::TaskRelease(TaskReleaseReq {
        id: id.into(),
        version,
    })
}

/// `task.halt` of `id`.
pub fn halt(id: &str) -> Request {
    Request::TaskHalt(TaskHaltReq { id: id.into() })
}

/// `task.continue` of `id`.
pub fn continue_task(id: &str) -> Request {
    Request::TaskContinue(TaskContinueReq { id: id.into() })
}

/// `schedule.create` of `id` with `cron`, promises `{{.id}}.{{.timestamp}}`
/// with a target, each with a minute to live.
pub fn schedule(id: &str, cron: &str) -> Request {
    Request::ScheduleCreate(ScheduleCreateReq {
        id: id.into(),
        cron: cron.into(),
        promise_id: "{{.id}}.{{.timestamp}}".into(),
        promise_timeout: 60_000,
        promise_param: Value::default(),
        promise_tags: target(),
    })
}

/// `schedule.get` of `id`.
pub fn schedule_get(id: &str) -> Request {
    Request::ScheduleGet(ScheduleGetReq { id: id.into() })
}

/// `schedule.delete` of `id`.
pub fn schedule_delete(id: &str) -> Request {
    Request::ScheduleDelete(ScheduleDeleteReq { id: id.into() })
}

#[cfg(test)]
mod tests {
    use model::calendar::{Calendar, RustServerCalendar};

    use super::*;

    #[test]
    fn m1_and_m2_are_the_first_two_minutes_after_t0() {
        let c = RustServerCalendar;
        assert_eq!(c.next_cron(EVERY_MINUTE, T0), M1);
        assert_eq!(c.next_cron(EVERY_MINUTE, M1), M2);
    }
}
