//! The wire codec against hand-written samples shaped like the Rust server's
//! requests and responses: round trips, decode errors naming their path, and
//! the server's 400 rules. Split by concern into `wire/*.rs`.

#[path = "wire/requests.rs"]
mod requests;
#[path = "wire/responses.rs"]
mod responses;
#[path = "wire/validate.rs"]
mod validate;

use model::api::*;
use model::types::{PromiseState, Tags, Value};

/// Tags from pairs.
pub fn tags(pairs: &[(&str, &str)]) -> Tags {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A `promise.create` request.
pub fn create(id: &str, timeout_at: u64, t: &[(&str, &str)]) -> PromiseCreateReq {
    PromiseCreateReq {
        id: id.into(),
        timeout_at,
        param: Value::default(),
        tags: tags(t),
    }
}

/// A `promise.settle` request.
pub fn settle(id: &str, state: PromiseState) -> PromiseSettleReq {
    PromiseSettleReq {
        id: id.into(),
        state,
        value: Value::default(),
    }
}

/// A callback registration.
pub fn callback(awaited: &str, awaiter: &str) -> PromiseRegisterCallbackReq {
    PromiseRegisterCallbackReq {
        awaited: awaited.into(),
        awaiter: awaiter.into(),
    }
}

/// One valid request of every kind, several for kinds with optional parts.
pub fn samples() -> Vec<Request> {
    let target = [("resonate:target", "poll://any@default")];
    let full = Value {
        headers: tags(&[("h", "v")]),
        data: Some("ZGF0YQ==".into()),
    };
    vec![
        Request::PromiseGet(PromiseGetReq { id: "p".into() }),
        Request::PromiseCreate(create("p", 100, &[])),
        Request::PromiseCreate(PromiseCreateReq {
            param: full.clone(),
            ..create(
                "p.1",
                100,
                &[("resonate:target", "http://w:8080"), ("a", "b")],
            )
        }),
        Request::PromiseSettle(settle("p", PromiseState::Resolved)),
        Request::PromiseSettle(PromiseSettleReq {
            value: full.clone(),
            ..settle("p", PromiseState::Rejected)
        }),
        Request::PromiseSettle(settle("p", PromiseState::RejectedCanceled)),
        Request::PromiseRegisterCallback(callback("p.1", "p")),
        Request::PromiseRegisterListener(PromiseRegisterListenerReq {
            awaited: "p".into(),
            address: "poll://uni@g/1".into(),
        }),
        Request::PromiseSearch(PromiseSearchReq::default()),
        Request::PromiseSearch(PromiseSearchReq {
            state: Some(PromiseState::RejectedTimedout),
            tags: tags(&[("a", "b")]),
            limit: Some(10),
            cursor: Some("c".into()),
        }),
        Request::TaskGet(TaskGetReq { id: "t".into() }),
        Request::TaskCreate(TaskCreateReq {
            pid: "w".into(),
            ttl: 30_000,
            action: PromiseCreateReq {
                param: full.clone(),
                ..create("t", 100, &target)
            },
        }),
        Request::TaskAcquire(TaskAcquireReq {
            id: "t".into(),
            version: 3,
            pid: "w".into(),
            ttl: 1,
        }),
        Request::TaskFence(TaskFenceReq {
            id: "t".into(),
            version: 1,
            action: TaskFenceAction::Create(create("t.1", 50, &target)),
        }),
        Request::TaskFence(TaskFenceReq {
            id: "t".into(),
            version: 1,
            action: TaskFenceAction::Settle(settle("t.1", PromiseState::Rejected)),
        }),
        Request::TaskHeartbeat(TaskHeartbeatReq {
            pid: "w".into(),
            tasks: vec![
                TaskRef {
                    id: "t".into(),
                    version: 1,
                },
                TaskRef {
                    id: "t.2".into(),
                    version: 0,
                },
            ],
        }),
        Request::TaskSuspend(TaskSuspendReq {
            id: "t".into(),
            version: 2,
            actions: vec![callback("t.1", "t"), callback("t.2", "t")],
        }),
        Request::TaskFulfill(TaskFulfillReq {
            id: "t".into(),
            version: 2,
            action: PromiseSettleReq {
                value: full,
                ..settle("t", PromiseState::Resolved)
            },
        }),
        Request::TaskRelease(TaskReleaseReq {
            id: "t".into(),
            version: 1,
        }),
        Request::TaskHalt(TaskHaltReq { id: "t".into() }),
        Request::TaskContinue(TaskContinueReq { id: "t".into() }),
        Request::TaskSearch(TaskSearchReq::default()),
        Request::TaskSearch(TaskSearchReq {
            state: Some(model::types::TaskState::Halted),
            limit: Some(1000),
            cursor: Some("x".into()),
        }),
        Request::ScheduleGet(ScheduleGetReq { id: "s".into() }),
        Request::ScheduleCreate(ScheduleCreateReq {
            id: "s".into(),
            cron: "*/5 * * * *".into(),
            promise_id: "{{.id}}.{{.timestamp}}".into(),
            promise_timeout: 60_000,
            promise_param: Value::default(),
            promise_tags: tags(&target),
        }),
        Request::ScheduleDelete(ScheduleDeleteReq { id: "s".into() }),
        Request::ScheduleSearch(ScheduleSearchReq::default()),
        Request::ScheduleSearch(ScheduleSearchReq {
            limit: Some(5),
            cursor: Some("s".into()),
        }),
    ]
}
