//! [`Response`] ↔ response envelope `{kind, head: {corrId, status, version},
//! data}`, with the Rust server's `data` shapes:
//!
//! | kind | success `data` |
//! |---|---|
//! | `promise.*` (not search) | `{"promise": record}` |
//! | `task.get` | `{"task": record}` |
//! | `task.create`, `task.acquire` | `{"task", "promise", "preload": [...]}` |
//! | `task.fence` | `{"action": {kind, head: {corrId, status, version}, data}, "preload"}` |
//! | `task.suspend` | 200 `{}`, 300 `{"preload": [...]}` |
//! | `task.fulfill` | `{"promise": record}` |
//! | `task.heartbeat/release/halt/continue`, `schedule.delete` | `{}` |
//! | `schedule.get`, `schedule.create` | `{"schedule": record}` |
//! | `*.search` | `{"promises"/"tasks"/"schedules": [...]}` |
//!
//! Any other status carries a message string as `data`. The model produces
//! none of the server's exact messages (they are not part of the spec), so
//! [`status_message`] gives one per status, and decoding reads only the
//! status of a failure.

use serde::de::DeserializeOwned;
use serde_json::{json, Value as Json};

use super::fields::{nat, Obj};
use super::{DecodeError, PROTOCOL_VERSION};
use crate::api::*;
use crate::types::{PromiseRecord, Schedule, TaskRecord};

/// The message written as `data` of a non-success response.
pub fn status_message(status: u16) -> &'static str {
    match status {
        400 => "bad request",
        403 => "forbidden",
        404 => "not found",
        409 => "conflict",
        422 => "unprocessable entity",
        500 => "internal error",
        501 => "not implemented",
        _ => "error",
    }
}

/// Whether `status` carries a success body (`300` is `task.suspend`'s
/// "resume at once", which carries a preload).
fn success(status: u16) -> bool {
    (200..=300).contains(&status)
}

/// The response envelope of `res` to a request of kind `kind`.
pub fn encode_response(kind: &str, res: &Response, corr_id: &str) -> Json {
    json!({
        "kind": kind,
        "head": head(corr_id, res.status()),
        "data": data(kind, res, corr_id),
    })
}

/// An error envelope with a free-text `message` as `data` (a 400 naming the
/// offending field, a 500 naming what broke).
pub fn error_envelope(kind: &str, corr_id: &str, status: u16, message: &str) -> Json {
    json!({"kind": kind, "head": head(corr_id, status), "data": message})
}

fn head(corr_id: &str, status: u16) -> Json {
    json!({"corrId": corr_id, "status": status, "version": PROTOCOL_VERSION})
}

fn data(kind: &str, res: &Response, corr_id: &str) -> Json {
    let Some(fields) = success_data(kind, res) else {
        return json!(status_message(res.status()));
    };
    let mut out = serde_json::Map::new();
    for (key, field) in fields.iter() {
        let v = match field {
            DataField::Promise(p) => json!(p),
            DataField::Task(t) => json!(t),
            DataField::Schedule(s) => json!(s),
            DataField::Preload(p) => json!(p),
            DataField::Empty => json!([]),
            DataField::Action(a) => a.map_or(Json::Null, |(kind, inner)| {
                encode_response(kind, &Response::Promise(inner.clone()), corr_id)
            }),
        };
        out.insert(key.to_string(), v);
    }
    Json::Object(out)
}

/// One field of a success `data` object, borrowed from the [`Response`]:
/// what [`encode_response`] writes as JSON, and what a typed comparison
/// reads without building it (the one place the `data` shapes are
/// written).
#[derive(Clone, Copy, Debug)]
pub enum DataField<'a> {
    /// A promise record (`null` when absent).
    Promise(&'a Option<PromiseRecord>),
    /// A task record.
    Task(&'a Option<TaskRecord>),
    /// A schedule record.
    Schedule(&'a Option<Schedule>),
    /// A list of promise records (`preload`).
    Preload(&'a [PromiseRecord]),
    /// An empty list (a search's page: the model has no search results).
    Empty,
    /// A fenced action: its kind and the inner promise answer, written as
    /// a whole response envelope (`null` when absent).
    Action(Option<(&'static str, &'a PromiseRes)>),
}

/// The fields of a success `data` object, in the order they are written
/// (at most three).
#[derive(Clone, Copy, Debug, Default)]
pub struct DataFields<'a>([Option<(&'static str, DataField<'a>)>; 3]);

impl<'a> DataFields<'a> {
    fn of(fields: &[(&'static str, DataField<'a>)]) -> DataFields<'a> {
        let mut out = DataFields::default();
        for (slot, f) in out.0.iter_mut().zip(fields) {
            *slot = Some(*f);
        }
        out
    }

    /// The fields, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, DataField<'a>)> + '_ {
        self.0.iter().flatten().copied()
    }
}

/// The fields of `res`'s `data` to a request of kind `kind`, or `None`
/// when its status carries a message instead ([`status_message`]).
pub fn success_data<'a>(kind: &str, res: &'a Response) -> Option<DataFields<'a>> {
    use DataField as F;
    if !success(res.status()) {
        return None;
    }
    Some(match res {
        Response::Promise(r) => DataFields::of(&[("promise", F::Promise(&r.promise))]),
        Response::TaskGet(r) => DataFields::of(&[("task", F::Task(&r.task))]),
        Response::TaskClaim(r) => DataFields::of(&[
            ("task", F::Task(&r.task)),
            ("promise", F::Promise(&r.promise)),
            ("preload", F::Preload(&r.preload)),
        ]),
        Response::TaskFence(r) => {
            let action = r.action.as_ref().map(|a| match a {
                TaskFenceInnerRes::Create(p) => ("promise.create", p),
                TaskFenceInnerRes::Settle(p) => ("promise.settle", p),
            });
            DataFields::of(&[
                ("action", F::Action(action)),
                ("preload", F::Preload(&r.preload)),
            ])
        }
        Response::TaskSuspend(r) if r.status == 300 => {
            DataFields::of(&[("preload", F::Preload(&r.preload))])
        }
        Response::TaskSuspend(_) => DataFields::default(),
        Response::TaskFulfill(r) => DataFields::of(&[("promise", F::Promise(&r.promise))]),
        Response::Schedule(r) => DataFields::of(&[("schedule", F::Schedule(&r.schedule))]),
        Response::Status(_) => match kind {
            "promise.search" => DataFields::of(&[("promises", F::Empty)]),
            "task.search" => DataFields::of(&[("tasks", F::Empty)]),
            "schedule.search" => DataFields::of(&[("schedules", F::Empty)]),
            _ => DataFields::default(),
        },
    })
}

/// Read a target's response envelope to a request of kind `kind` into the
/// typed [`Response`]: the records of a success, only the status otherwise.
/// The `kind` argument (not the envelope's) decides the shape.
pub fn decode_response(kind: &str, envelope: &Json) -> Result<Response, DecodeError> {
    let env = Obj::new(envelope, "")?;
    let status = status(&env.obj("head")?)?;
    let ok = success(status);
    let data = || env.obj("data");
    Ok(match kind {
        "promise.get"
        | "promise.create"
        | "promise.settle"
        | "promise.register_callback"
        | "promise.register_listener" => Response::Promise(promise_res(status, &env)?),
        "task.get" => Response::TaskGet(TaskGetRes {
            status,
            task: if ok { record(&data()?, "task")? } else { None },
        }),
        "task.create" | "task.acquire" => {
            let mut r = TaskClaimRes {
                status,
                task: None,
                promise: None,
                preload: Vec::new(),
            };
            if ok {
                let d = data()?;
                r.task = record(&d, "task")?;
                r.promise = record(&d, "promise")?;
                r.preload = preload(&d)?;
            }
            Response::TaskClaim(r)
        }
        "task.fence" => {
            let mut r = TaskFenceRes {
                status,
                action: None,
                preload: Vec::new(),
            };
            if ok {
                let d = data()?;
                r.action = d
                    .opt("action")
                    .map(|a| fence_inner(&Obj::new(a, &d.at("action"))?))
                    .transpose()?;
                r.preload = preload(&d)?;
            }
            Response::TaskFence(r)
        }
        "task.suspend" => Response::TaskSuspend(TaskSuspendRes {
            status,
            preload: if ok { preload(&data()?)? } else { Vec::new() },
        }),
        "task.fulfill" => Response::TaskFulfill(TaskFulfillRes {
            status,
            promise: if ok {
                record(&data()?, "promise")?
            } else {
                None
            },
        }),
        "schedule.get" | "schedule.create" => Response::Schedule(ScheduleRes {
            status,
            schedule: if ok {
                record(&data()?, "schedule")?
            } else {
                None
            },
        }),
        "promise.search" | "task.search" | "schedule.search" | "task.heartbeat"
        | "task.release" | "task.halt" | "task.continue" | "schedule.delete" => {
            Response::Status(status)
        }
        other => return Err(DecodeError::new("kind", format!("unknown kind `{other}`"))),
    })
}

fn status(head: &Obj) -> Result<u16, DecodeError> {
    let n = nat(head.req("status")?, &head.at("status"))?;
    u16::try_from(n).map_err(|_| DecodeError::new(head.at("status"), "expected a status code"))
}

/// A `{kind, head, data}` envelope carrying a promise (or a message).
fn promise_res(status: u16, env: &Obj) -> Result<PromiseRes, DecodeError> {
    let promise = if success(status) {
        record(&env.obj("data")?, "promise")?
    } else {
        None
    };
    Ok(PromiseRes { status, promise })
}

fn fence_inner(a: &Obj) -> Result<TaskFenceInnerRes, DecodeError> {
    let wrap = match a.str("kind")?.as_str() {
        "promise.create" => TaskFenceInnerRes::Create,
        "promise.settle" => TaskFenceInnerRes::Settle,
        _ => {
            return Err(DecodeError::new(
                a.at("kind"),
                "expected promise.create or promise.settle",
            ))
        }
    };
    let status = status(&a.obj("head")?)?;
    Ok(wrap(promise_res(status, a)?))
}

/// A record field: required, `null` read as absent.
fn record<T: DeserializeOwned>(d: &Obj, key: &str) -> Result<Option<T>, DecodeError> {
    let v = d
        .get(key)
        .ok_or_else(|| DecodeError::new(d.at(key), "missing field"))?;
    serde_json::from_value(v.clone()).map_err(|e| DecodeError::new(d.at(key), e.to_string()))
}

/// `preload`, read as empty when absent (the spec's is always empty).
fn preload(d: &Obj) -> Result<Vec<PromiseRecord>, DecodeError> {
    match d.opt("preload") {
        None => Ok(Vec::new()),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| DecodeError::new(d.at("preload"), e.to_string())),
    }
}
