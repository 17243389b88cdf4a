//! Small constructors for hand-written witness traces.

use std::collections::BTreeMap;

use gen::{Op, Step};
use model::api::*;
use model::types::Time;

/// The `now` witnesses start at.
pub const T0: Time = 1_700_000_000_000;

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
pub fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The tag that makes a promise a task's: `resonate:target`.
pub fn target() -> BTreeMap<String, String> {
    tags(&[("resonate:target", "poll://any@w")])
}

/// `promise.create` of `id` with `tags`, deadline `timeout_at`.
pub fn create(id: &str, timeout_at: Time, tags: BTreeMap<String, String>) -> Request {
    Request::PromiseCreate(PromiseCreateReq {
        id: id.into(),
        timeout_at,
        param: Default::default(),
        tags,
    })
}

/// `task.create` of `id` by `pid` with lease `ttl`, deadline `timeout_at`.
pub fn task_create(id: &str, pid: &str, ttl: Time, timeout_at: Time) -> Request {
    Request::TaskCreate(TaskCreateReq {
        pid: pid.into(),
        ttl,
        action: PromiseCreateReq {
            id: id.into(),
            timeout_at,
            param: Default::default(),
            tags: target(),
        },
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
