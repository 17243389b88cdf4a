//! Request envelope and `data` → [`Request`], as the Rust server's serde
//! derives read them (`types.rs`), but field by field so that every failure
//! names its path. Unknown fields are ignored, as serde does.
//!
//! Two places where the wire is narrower than the model: a settle state is
//! one of `resolved`, `rejected`, `rejected_canceled` (the server's
//! `SettleState`), and integers stop at `i64::MAX`.

use serde_json::Value as Json;

use super::fields::Obj;
use super::{DecodeError, Head, PROTOCOL_VERSION};
use crate::api::*;
use crate::types::{PromiseState, TaskState};

/// A request envelope opened but not yet decoded: what the server checks
/// before dispatching on `kind` (debug operations are dispatched from here).
#[derive(Clone, Debug)]
pub struct Envelope<'a> {
    /// `kind`, non-empty.
    pub kind: &'a str,
    /// The head.
    pub head: Head,
    /// `data`, an object.
    pub data: &'a Json,
}

/// Check the envelope's shape: `kind` a non-empty string, `head` with a
/// string `corrId`, the supported `version` and an optional non-negative
/// `resonate:debug_time`, and `data` an object.
pub fn open_envelope(body: &Json) -> Result<Envelope<'_>, DecodeError> {
    let env = Obj::new(body, "")?;
    let kind = env
        .req("kind")?
        .as_str()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| DecodeError::new("kind", "expected a non-empty string"))?;
    let head = env.obj("head")?;
    let corr_id = head.str("corrId")?;
    let version = head.str("version")?;
    if version != PROTOCOL_VERSION {
        return Err(DecodeError::new(
            "head.version",
            format!("unsupported protocol version `{version}`, expected `{PROTOCOL_VERSION}`"),
        ));
    }
    let debug_time = head.opt_nat("resonate:debug_time")?;
    let data = env.req("data")?;
    Obj::new(data, "data")?;
    Ok(Envelope {
        kind,
        head: Head {
            corr_id,
            debug_time,
        },
        data,
    })
}

/// Decode a whole request envelope.
pub fn decode_envelope(body: &Json) -> Result<(Request, Head), DecodeError> {
    let env = open_envelope(body)?;
    Ok((decode_request(env.kind, env.data)?, env.head))
}

/// Decode the `data` of a request of kind `kind`. An unknown kind is an
/// error at path `kind`.
pub fn decode_request(kind: &str, data: &Json) -> Result<Request, DecodeError> {
    let d = Obj::new(data, "data")?;
    let id = || d.str("id");
    Ok(match kind {
        "promise.get" => Request::PromiseGet(PromiseGetReq { id: id()? }),
        "promise.create" => Request::PromiseCreate(create(&d)?),
        "promise.settle" => Request::PromiseSettle(settle(&d)?),
        "promise.register_callback" => Request::PromiseRegisterCallback(callback(&d)?),
        "promise.register_listener" => {
            Request::PromiseRegisterListener(PromiseRegisterListenerReq {
                awaited: d.str("awaited")?,
                address: d.str("address")?,
            })
        }
        "promise.search" => Request::PromiseSearch(PromiseSearchReq {
            state: d.opt_choice("state", PROMISE_STATES, promise_state)?,
            tags: d.opt_tags("tags")?,
            limit: d.opt_nat("limit")?,
            cursor: d.opt_str("cursor")?,
        }),
        "task.get" => Request::TaskGet(TaskGetReq { id: id()? }),
        "task.create" => Request::TaskCreate(TaskCreateReq {
            pid: d.str("pid")?,
            ttl: d.nat("ttl")?,
            action: create(&action(&d.obj("action")?, true)?)?,
        }),
        "task.acquire" => Request::TaskAcquire(TaskAcquireReq {
            id: id()?,
            version: d.nat("version")?,
            pid: d.str("pid")?,
            ttl: d.nat("ttl")?,
        }),
        "task.fence" => Request::TaskFence(TaskFenceReq {
            id: id()?,
            version: d.nat("version")?,
            action: fence_action(&d.obj("action")?)?,
        }),
        "task.heartbeat" => Request::TaskHeartbeat(TaskHeartbeatReq {
            pid: d.str("pid")?,
            tasks: elements(&d, "tasks", |t| {
                Ok(TaskRef {
                    id: t.str("id")?,
                    version: t.nat("version")?,
                })
            })?,
        }),
        "task.suspend" => Request::TaskSuspend(TaskSuspendReq {
            id: id()?,
            version: d.nat("version")?,
            actions: elements(&d, "actions", |a| callback(&action(&a, true)?))?,
        }),
        "task.fulfill" => Request::TaskFulfill(TaskFulfillReq {
            id: id()?,
            version: d.nat("version")?,
            action: settle(&action(&d.obj("action")?, true)?)?,
        }),
        "task.release" => Request::TaskRelease(TaskReleaseReq {
            id: id()?,
            version: d.nat("version")?,
        }),
        "task.halt" => Request::TaskHalt(TaskHaltReq { id: id()? }),
        "task.continue" => Request::TaskContinue(TaskContinueReq { id: id()? }),
        "task.search" => Request::TaskSearch(TaskSearchReq {
            state: d.opt_choice("state", TASK_STATES, task_state)?,
            limit: d.opt_nat("limit")?,
            cursor: d.opt_str("cursor")?,
        }),
        "schedule.get" => Request::ScheduleGet(ScheduleGetReq { id: id()? }),
        "schedule.create" => Request::ScheduleCreate(ScheduleCreateReq {
            id: id()?,
            cron: d.str("cron")?,
            promise_id: d.str("promiseId")?,
            promise_timeout: d.nat("promiseTimeout")?,
            promise_param: d.value("promiseParam")?,
            promise_tags: d.tags("promiseTags")?,
        }),
        "schedule.delete" => Request::ScheduleDelete(ScheduleDeleteReq { id: id()? }),
        "schedule.search" => {
            // The model's search has no tag filter; the field is still
            // type-checked, as the server does.
            d.opt_tags("tags")?;
            Request::ScheduleSearch(ScheduleSearchReq {
                limit: d.opt_nat("limit")?,
                cursor: d.opt_str("cursor")?,
            })
        }
        other => return Err(DecodeError::new("kind", format!("unknown kind `{other}`"))),
    })
}

/// The wire spellings a settle state may take.
pub(crate) const SETTLE_STATES: &str = "one of resolved, rejected, rejected_canceled";
const PROMISE_STATES: &str =
    "a promise state (pending, resolved, rejected, rejected_canceled, rejected_timedout)";
const TASK_STATES: &str = "a task state (pending, acquired, suspended, halted, fulfilled)";

/// `SettleState`: the states a caller may settle a promise into.
pub(crate) fn settle_state(s: &str) -> Option<PromiseState> {
    match s {
        "resolved" => Some(PromiseState::Resolved),
        "rejected" => Some(PromiseState::Rejected),
        "rejected_canceled" => Some(PromiseState::RejectedCanceled),
        _ => None,
    }
}

fn promise_state(s: &str) -> Option<PromiseState> {
    match s {
        "pending" => Some(PromiseState::Pending),
        "rejected_timedout" => Some(PromiseState::RejectedTimedout),
        _ => settle_state(s),
    }
}

fn task_state(s: &str) -> Option<TaskState> {
    [
        TaskState::Pending,
        TaskState::Acquired,
        TaskState::Suspended,
        TaskState::Halted,
        TaskState::Fulfilled,
    ]
    .into_iter()
    .find(|t| t.as_str() == s)
}

fn create(d: &Obj) -> Result<PromiseCreateReq, DecodeError> {
    Ok(PromiseCreateReq {
        id: d.str("id")?,
        timeout_at: d.nat("timeoutAt")?,
        param: d.value("param")?,
        tags: d.tags("tags")?,
    })
}

fn settle(d: &Obj) -> Result<PromiseSettleReq, DecodeError> {
    Ok(PromiseSettleReq {
        id: d.str("id")?,
        state: d.choice("state", SETTLE_STATES, settle_state)?,
        value: d.value("value")?,
    })
}

fn callback(d: &Obj) -> Result<PromiseRegisterCallbackReq, DecodeError> {
    Ok(PromiseRegisterCallbackReq {
        awaited: d.str("awaited")?,
        awaiter: d.str("awaiter")?,
    })
}

/// A nested `{kind, head, data}` action: `kind` a string and `head` present
/// (the server requires both but reads neither), `data` returned.
fn action<'a>(a: &Obj<'a>, head_required: bool) -> Result<Obj<'a>, DecodeError> {
    a.str("kind")?;
    if head_required {
        a.req("head")?;
    }
    a.obj("data")
}

fn fence_action(a: &Obj) -> Result<TaskFenceAction, DecodeError> {
    let kind = a.str("kind")?;
    let is_create = match kind.as_str() {
        "promise.create" => true,
        "promise.settle" => false,
        _ => {
            return Err(DecodeError::new(
                a.at("kind"),
                "expected promise.create or promise.settle",
            ))
        }
    };
    let data = action(a, false)?;
    Ok(if is_create {
        TaskFenceAction::Create(create(&data)?)
    } else {
        TaskFenceAction::Settle(settle(&data)?)
    })
}

/// Decode every element of the array `key`, each an object.
fn elements<T>(
    d: &Obj,
    key: &str,
    each: impl Fn(Obj) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    d.arr(key)?
        .iter()
        .enumerate()
        .map(|(i, v)| each(Obj::new(v, &format!("{}[{i}]", d.at(key)))?))
        .collect()
}
