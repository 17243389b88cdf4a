//! What a request names, field by field: the ids, task versions, pids,
//! schedule ids, deadlines, tags and values it carries. One place for the
//! shape of every request, used by the materialising server (which
//! timeouts a request touches), the latitude search (which timers to try
//! first), the generator's repair (which versions to re-point) and the
//! shrinker (what to rename, retime and simplify).

use crate::api::{PromiseCreateReq, Request, TaskFenceAction};
use crate::types::{Tags, Time, Value};

/// The ids a request names, in order, as references made by `&$m`
/// (`&` or `&mut`): one list of the fields for [`ids_mut`] and [`named`].
macro_rules! ids_of {
    ($r:expr, $($m:tt)*) => {
        match $r {
            Request::PromiseGet(c) => vec![&$($m)* c.id],
            Request::PromiseCreate(c) => vec![&$($m)* c.id],
            Request::PromiseSettle(c) => vec![&$($m)* c.id],
            Request::PromiseRegisterCallback(c) => vec![&$($m)* c.awaited, &$($m)* c.awaiter],
            Request::PromiseRegisterListener(c) => vec![&$($m)* c.awaited],
            Request::TaskGet(c) => vec![&$($m)* c.id],
            Request::TaskCreate(c) => vec![&$($m)* c.action.id],
            Request::TaskAcquire(c) => vec![&$($m)* c.id],
            Request::TaskFence(c) => {
                let inner = match &$($m)* c.action {
                    TaskFenceAction::Create(a) => &$($m)* a.id,
                    TaskFenceAction::Settle(a) => &$($m)* a.id,
                };
                vec![&$($m)* c.id, inner]
            }
            Request::TaskHeartbeat(c) => (&$($m)* c.tasks).into_iter().map(|t| &$($m)* t.id).collect(),
            Request::TaskSuspend(c) => {
                let mut v = vec![&$($m)* c.id];
                for a in &$($m)* c.actions {
                    v.push(&$($m)* a.awaited);
                    v.push(&$($m)* a.awaiter);
                }
                v
            }
            Request::TaskFulfill(c) => vec![&$($m)* c.id, &$($m)* c.action.id],
            Request::TaskRelease(c) => vec![&$($m)* c.id],
            Request::TaskHalt(c) => vec![&$($m)* c.id],
            Request::TaskContinue(c) => vec![&$($m)* c.id],
            Request::PromiseSearch(_)
            | Request::TaskSearch(_)
            | Request::ScheduleGet(_)
            | Request::ScheduleCreate(_)
            | Request::ScheduleDelete(_)
            | Request::ScheduleSearch(_) => Vec::new(),
        }
    };
}

/// Every promise/task id a request names, mutably (tasks share their
/// promise's id): ids, awaited and awaiter promises, a create's or
/// fence's action id, heartbeat and suspend entries.
pub fn ids_mut(r: &mut Request) -> Vec<&mut String> {
    ids_of!(r, mut)
}

/// Every promise/task id a request names (see [`ids_mut`]), deduplicated,
/// in order of appearance.
pub fn ids(r: &Request) -> Vec<String> {
    named(r).into_iter().map(str::to_string).collect()
}

/// [`ids`], borrowed: what a hook asks of every request it sees, so it
/// copies nothing (not the request, as [`ids_mut`] would need).
pub fn named(r: &Request) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let all: Vec<&String> = ids_of!(r,);
    for id in all.into_iter().map(String::as_str) {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// The (task id, version) pairs a request presents, mutably.
pub fn versions_mut(req: &mut Request) -> Vec<(&str, &mut u64)> {
    match req {
        Request::TaskAcquire(r) => vec![(r.id.as_str(), &mut r.version)],
        Request::TaskFence(r) => vec![(r.id.as_str(), &mut r.version)],
        Request::TaskSuspend(r) => vec![(r.id.as_str(), &mut r.version)],
        Request::TaskFulfill(r) => vec![(r.id.as_str(), &mut r.version)],
        Request::TaskRelease(r) => vec![(r.id.as_str(), &mut r.version)],
        Request::TaskHeartbeat(r) => r
            .tasks
            .iter_mut()
            .map(|t| (t.id.as_str(), &mut t.version))
            .collect(),
        _ => Vec::new(),
    }
}

/// The promise a request creates (directly, by `task.create`, or fenced).
pub fn create_mut(r: &mut Request) -> Option<&mut PromiseCreateReq> {
    match r {
        Request::PromiseCreate(c) => Some(c),
        Request::TaskCreate(c) => Some(&mut c.action),
        Request::TaskFence(f) => match &mut f.action {
            TaskFenceAction::Create(c) => Some(c),
            TaskFenceAction::Settle(_) => None,
        },
        _ => None,
    }
}

/// The absolute deadlines a request carries.
pub fn deadlines_mut(r: &mut Request) -> Vec<&mut Time> {
    create_mut(r)
        .map(|c| vec![&mut c.timeout_at])
        .unwrap_or_default()
}

/// The tag sets a request carries.
pub fn tags_mut(r: &mut Request) -> Vec<&mut Tags> {
    match r {
        Request::ScheduleCreate(c) => vec![&mut c.promise_tags],
        other => create_mut(other)
            .map(|c| vec![&mut c.tags])
            .unwrap_or_default(),
    }
}

/// The params and values a request carries.
pub fn values_mut(r: &mut Request) -> Vec<&mut Value> {
    match r {
        Request::PromiseSettle(c) => vec![&mut c.value],
        Request::TaskFulfill(c) => vec![&mut c.action.value],
        Request::TaskFence(f) => match &mut f.action {
            TaskFenceAction::Create(c) => vec![&mut c.param],
            TaskFenceAction::Settle(c) => vec![&mut c.value],
        },
        Request::ScheduleCreate(c) => vec![&mut c.promise_param],
        other => create_mut(other)
            .map(|c| vec![&mut c.param])
            .unwrap_or_default(),
    }
}

/// The process id a request names.
pub fn pid_mut(r: &mut Request) -> Option<&mut String> {
    match r {
        Request::TaskCreate(c) => Some(&mut c.pid),
        Request::TaskAcquire(c) => Some(&mut c.pid),
        Request::TaskHeartbeat(c) => Some(&mut c.pid),
        _ => None,
    }
}

/// The schedule id a request names.
pub fn schedule_id_mut(r: &mut Request) -> Option<&mut String> {
    match r {
        Request::ScheduleCreate(c) => Some(&mut c.id),
        Request::ScheduleGet(c) => Some(&mut c.id),
        Request::ScheduleDelete(c) => Some(&mut c.id),
        _ => None,
    }
}
