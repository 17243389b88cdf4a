//! [`Request`] → request `data` and envelope, the inverse of
//! [`decode_request`](super::decode_request): for every request the wire can
//! express (settle states among `resolved`, `rejected`, `rejected_canceled`;
//! integers ≤ `i64::MAX`), decoding the encoding gives the request back.
//!
//! Optional fields are omitted when absent; `param`, `value` and `tags` are
//! always written, as an SDK does. Nested actions carry a head of their own
//! with the outer `corrId`.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{json, Value as Json};

use super::PROTOCOL_VERSION;
use crate::api::*;

/// The `data` object of `req` (nested action heads get an empty `corrId`).
pub fn encode_request(req: &Request) -> Json {
    serde_json::to_value(request_data(req)).expect("a request always serialises")
}

/// The `data` object of `req`, to serialise straight to bytes (what
/// [`encode_request`] gives as JSON): a harness sends a request a step,
/// and building the JSON value first cost as much as serialising it.
pub fn request_data(req: &Request) -> Data<'_> {
    Data { req, corr_id: "" }
}

/// The whole envelope of `req`: `{kind, head: {corrId, version,
/// resonate:debug_time?}, data}`.
pub fn request_envelope(req: &Request, corr_id: &str, debug_time: Option<u64>) -> Json {
    let mut head = json!({"corrId": corr_id, "version": PROTOCOL_VERSION});
    if let Some(t) = debug_time {
        head["resonate:debug_time"] = json!(t);
    }
    let data = serde_json::to_value(Data { req, corr_id }).expect("a request always serialises");
    json!({"kind": req.kind(), "head": head, "data": data})
}

/// A request's `data`, serialised as the wire has it (see the module doc):
/// nested actions carry a head with `corr_id`.
#[derive(Clone, Copy, Debug)]
pub struct Data<'a> {
    req: &'a Request,
    corr_id: &'a str,
}

/// A map of these entries, in order.
macro_rules! map {
    ($s:expr; $($k:literal => $v:expr),* $(,)?) => {{
        let mut m = $s.serialize_map(None)?;
        $(m.serialize_entry($k, $v)?;)*
        m.end()
    }};
}

impl Serialize for Data<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let nested = |kind, data| Nested {
            kind,
            corr_id: self.corr_id,
            data,
        };
        match self.req {
            Request::PromiseGet(r) => map!(s; "id" => &r.id),
            Request::PromiseCreate(r) => Create(r).serialize(s),
            Request::PromiseSettle(r) => Settle(r).serialize(s),
            Request::PromiseRegisterCallback(r) => Callback(r).serialize(s),
            Request::PromiseRegisterListener(r) => {
                map!(s; "awaited" => &r.awaited, "address" => &r.address)
            }
            Request::PromiseSearch(r) => {
                let tags = (!r.tags.is_empty()).then_some(&r.tags);
                let state = r.state.map(|s| s.as_str());
                search(s, state, tags, r.limit, r.cursor.as_deref())
            }
            Request::TaskGet(r) => map!(s; "id" => &r.id),
            Request::TaskCreate(r) => map!(s;
                "pid" => &r.pid,
                "ttl" => &r.ttl,
                "action" => &nested("promise.create", Action::Create(&r.action)),
            ),
            Request::TaskAcquire(r) => map!(s;
                "id" => &r.id, "version" => &r.version, "pid" => &r.pid, "ttl" => &r.ttl,
            ),
            Request::TaskFence(r) => {
                let action = match &r.action {
                    TaskFenceAction::Create(c) => nested("promise.create", Action::Create(c)),
                    TaskFenceAction::Settle(a) => nested("promise.settle", Action::Settle(a)),
                };
                map!(s; "id" => &r.id, "version" => &r.version, "action" => &action)
            }
            Request::TaskHeartbeat(r) => {
                let tasks: Vec<Held> = r.tasks.iter().map(Held).collect();
                map!(s; "pid" => &r.pid, "tasks" => &tasks)
            }
            Request::TaskSuspend(r) => {
                let actions: Vec<Nested> = (r.actions.iter())
                    .map(|a| nested("promise.register_callback", Action::Callback(a)))
                    .collect();
                map!(s; "id" => &r.id, "version" => &r.version, "actions" => &actions)
            }
            Request::TaskFulfill(r) => map!(s;
                "id" => &r.id,
                "version" => &r.version,
                "action" => &nested("promise.settle", Action::Settle(&r.action)),
            ),
            Request::TaskRelease(r) => map!(s; "id" => &r.id, "version" => &r.version),
            Request::TaskHalt(r) => map!(s; "id" => &r.id),
            Request::TaskContinue(r) => map!(s; "id" => &r.id),
            Request::TaskSearch(r) => {
                let state = r.state.map(|s| s.as_str());
                search(s, state, None, r.limit, r.cursor.as_deref())
            }
            Request::ScheduleGet(r) => map!(s; "id" => &r.id),
            Request::ScheduleCreate(r) => map!(s;
                "id" => &r.id,
                "cron" => &r.cron,
                "promiseId" => &r.promise_id,
                "promiseTimeout" => &r.promise_timeout,
                "promiseParam" => &r.promise_param,
                "promiseTags" => &r.promise_tags,
            ),
            Request::ScheduleDelete(r) => map!(s; "id" => &r.id),
            Request::ScheduleSearch(r) => search(s, None, None, r.limit, r.cursor.as_deref()),
        }
    }
}

/// A search's filters and page, each left out when absent.
fn search<S: Serializer>(
    s: S,
    state: Option<&str>,
    tags: Option<&crate::types::Tags>,
    limit: Option<u64>,
    cursor: Option<&str>,
) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(None)?;
    opt(&mut m, "state", state)?;
    opt(&mut m, "tags", tags)?;
    opt(&mut m, "limit", limit)?;
    opt(&mut m, "cursor", cursor)?;
    m.end()
}

/// `key: v` when there is a `v`: optional fields are left out.
fn opt<M: SerializeMap, T: Serialize>(m: &mut M, key: &str, v: Option<T>) -> Result<(), M::Error> {
    match v {
        Some(v) => m.serialize_entry(key, &v),
        None => Ok(()),
    }
}

/// A nested action's envelope: `{kind, head: {corrId, version}, data}`.
#[derive(Debug)]
struct Nested<'a> {
    kind: &'static str,
    corr_id: &'a str,
    data: Action<'a>,
}

impl Serialize for Nested<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let head = Head(self.corr_id);
        map!(s; "kind" => self.kind, "head" => &head, "data" => &self.data)
    }
}

struct Head<'a>(&'a str);

impl Serialize for Head<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        map!(s; "corrId" => self.0, "version" => PROTOCOL_VERSION)
    }
}

/// The actions a request nests.
#[derive(Debug)]
enum Action<'a> {
    Create(&'a PromiseCreateReq),
    Settle(&'a PromiseSettleReq),
    Callback(&'a PromiseRegisterCallbackReq),
}

impl Serialize for Action<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Action::Create(r) => Create(r).serialize(s),
            Action::Settle(r) => Settle(r).serialize(s),
            Action::Callback(r) => Callback(r).serialize(s),
        }
    }
}

struct Create<'a>(&'a PromiseCreateReq);

impl Serialize for Create<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        map!(s; "id" => &r.id, "timeoutAt" => &r.timeout_at, "param" => &r.param, "tags" => &r.tags)
    }
}

struct Settle<'a>(&'a PromiseSettleReq);

impl Serialize for Settle<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        map!(s; "id" => &r.id, "state" => r.state.as_str(), "value" => &r.value)
    }
}

struct Callback<'a>(&'a PromiseRegisterCallbackReq);

impl Serialize for Callback<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        map!(s; "awaited" => &self.0.awaited, "awaiter" => &self.0.awaiter)
    }
}

/// A task a heartbeat names.
struct Held<'a>(&'a TaskRef);

impl Serialize for Held<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        map!(s; "id" => &self.0.id, "version" => &self.0.version)
    }
}
