//! [`Request`] → request `data` and envelope, the inverse of
//! [`decode_request`](super::decode_request): for every request the wire can
//! express (settle states among `resolved`, `rejected`, `rejected_canceled`;
//! integers ≤ `i64::MAX`), decoding the encoding gives the request back.
//!
//! Optional fields are omitted when absent; `param`, `value` and `tags` are
//! always written, as an SDK does. Nested actions carry a head of their own
//! with the outer `corrId`.

use serde_json::{json, Map, Value as Json};

use super::PROTOCOL_VERSION;
use crate::api::*;
use crate::types::{Tags, Value};

/// The `data` object of `req` (nested action heads get an empty `corrId`).
pub fn encode_request(req: &Request) -> Json {
    data(req, "")
}

/// The whole envelope of `req`: `{kind, head: {corrId, version,
/// resonate:debug_time?}, data}`.
pub fn request_envelope(req: &Request, corr_id: &str, debug_time: Option<u64>) -> Json {
    let mut head = json!({"corrId": corr_id, "version": PROTOCOL_VERSION});
    if let Some(t) = debug_time {
        head["resonate:debug_time"] = json!(t);
    }
    json!({"kind": req.kind(), "head": head, "data": data(req, corr_id)})
}

fn data(req: &Request, corr_id: &str) -> Json {
    let nested = |kind: &str, data: Json| {
        json!({
            "kind": kind,
            "head": {"corrId": corr_id, "version": PROTOCOL_VERSION},
            "data": data,
        })
    };
    match req {
        Request::PromiseGet(r) => json!({"id": r.id}),
        Request::PromiseCreate(r) => create(r),
        Request::PromiseSettle(r) => settle(r),
        Request::PromiseRegisterCallback(r) => callback(r),
        Request::PromiseRegisterListener(r) => {
            json!({"awaited": r.awaited, "address": r.address})
        }
        Request::PromiseSearch(r) => {
            let mut m = Map::new();
            put(&mut m, "state", r.state.map(|s| s.as_str()));
            if !r.tags.is_empty() {
                m.insert("tags".into(), tags(&r.tags));
            }
            put(&mut m, "limit", r.limit);
            put(&mut m, "cursor", r.cursor.as_deref());
            Json::Object(m)
        }
        Request::TaskGet(r) => json!({"id": r.id}),
        Request::TaskCreate(r) => json!({
            "pid": r.pid,
            "ttl": r.ttl,
            "action": nested("promise.create", create(&r.action)),
        }),
        Request::TaskAcquire(r) => {
            json!({"id": r.id, "version": r.version, "pid": r.pid, "ttl": r.ttl})
        }
        Request::TaskFence(r) => {
            let action = match &r.action {
                TaskFenceAction::Create(c) => nested("promise.create", create(c)),
                TaskFenceAction::Settle(s) => nested("promise.settle", settle(s)),
            };
            json!({"id": r.id, "version": r.version, "action": action})
        }
        Request::TaskHeartbeat(r) => {
            let tasks: Vec<Json> = r
                .tasks
                .iter()
                .map(|t| json!({"id": t.id, "version": t.version}))
                .collect();
            json!({"pid": r.pid, "tasks": tasks})
        }
        Request::TaskSuspend(r) => {
            let actions: Vec<Json> = r
                .actions
                .iter()
                .map(|a| nested("promise.register_callback", callback(a)))
                .collect();
            json!({"id": r.id, "version": r.version, "actions": actions})
        }
        Request::TaskFulfill(r) => json!({
            "id": r.id,
            "version": r.version,
            "action": nested("promise.settle", settle(&r.action)),
        }),
        Request::TaskRelease(r) => json!({"id": r.id, "version": r.version}),
        Request::TaskHalt(r) => json!({"id": r.id}),
        Request::TaskContinue(r) => json!({"id": r.id}),
        Request::TaskSearch(r) => {
            let mut m = Map::new();
            put(&mut m, "state", r.state.map(|s| s.as_str()));
            put(&mut m, "limit", r.limit);
            put(&mut m, "cursor", r.cursor.as_deref());
            Json::Object(m)
        }
        Request::ScheduleGet(r) => json!({"id": r.id}),
        Request::ScheduleCreate(r) => json!({
            "id": r.id,
            "cron": r.cron,
            "promiseId": r.promise_id,
            "promiseTimeout": r.promise_timeout,
            "promiseParam": value(&r.promise_param),
            "promiseTags": tags(&r.promise_tags),
        }),
        Request::ScheduleDelete(r) => json!({"id": r.id}),
        Request::ScheduleSearch(r) => {
            let mut m = Map::new();
            put(&mut m, "limit", r.limit);
            put(&mut m, "cursor", r.cursor.as_deref());
            Json::Object(m)
        }
    }
}

fn create(r: &PromiseCreateReq) -> Json {
    json!({
        "id": r.id,
        "timeoutAt": r.timeout_at,
        "param": value(&r.param),
        "tags": tags(&r.tags),
    })
}

fn settle(r: &PromiseSettleReq) -> Json {
    json!({"id": r.id, "state": r.state.as_str(), "value": value(&r.value)})
}

fn callback(r: &PromiseRegisterCallbackReq) -> Json {
    json!({"awaited": r.awaited, "awaiter": r.awaiter})
}

fn value(v: &Value) -> Json {
    serde_json::to_value(v).expect("a Value always serializes")
}

fn tags(t: &Tags) -> Json {
    serde_json::to_value(t).expect("tags always serialize")
}

fn put<T: serde::Serialize>(m: &mut Map<String, Json>, key: &str, v: Option<T>) {
    if let Some(v) = v {
        m.insert(key.into(), json!(v));
    }
}
