//! Small reads and patches shared by the families' hooks, all through the
//! model's public API (`State` effects): which promise a request creates or
//! settles, the promise record inside a response, read-modify-write of one
//! promise or task.

use model::api::{
    PromiseCreateReq, PromiseSettleReq, Request, Response, TaskFenceAction, TaskFenceInnerRes,
};
use model::machine::Machine;
use model::state::{Message, PromiseObject, TaskObject};
use model::types::{PromiseRecord, TaskState};

/// The `promise.create` a request performs, if any: `promise.create` itself
/// or the one a `task.fence` delegates to (the same Lean handler).
pub(crate) fn creation(req: &Request) -> Option<&PromiseCreateReq> {
    match req {
        Request::PromiseCreate(r) => Some(r),
        Request::TaskFence(f) => match &f.action {
            TaskFenceAction::Create(r) => Some(r),
            TaskFenceAction::Settle(_) => None,
        },
        _ => None,
    }
}

/// The `promise.settle` a request performs, if any: `promise.settle`
/// itself or the one a `task.fence` delegates to (the same Lean handler).
pub(crate) fn settle_request(req: &Request) -> Option<&PromiseSettleReq> {
    match req {
        Request::PromiseSettle(r) => Some(r),
        Request::TaskFence(f) => match &f.action {
            TaskFenceAction::Settle(r) => Some(r),
            TaskFenceAction::Create(_) => None,
        },
        _ => None,
    }
}

/// The id of the promise a `promise.settle` (direct or fenced) settles.
pub(crate) fn settle_target(req: &Request) -> Option<&str> {
    settle_request(req).map(|r| r.id.as_str())
}

/// The id of the promise a request may settle by a client settlement:
/// `promise.settle`, a fenced settle, or `task.fulfill` (the task's own).
pub(crate) fn settlement(req: &Request) -> Option<&str> {
    match req {
        Request::TaskFulfill(r) => Some(&r.id),
        _ => settle_target(req),
    }
}

/// The promise record a response carries (for `task.fence`, its inner
/// action's), to patch what a deviation changes.
pub(crate) fn record_mut(res: &mut Response) -> Option<&mut PromiseRecord> {
    match res {
        Response::Promise(r) => r.promise.as_mut(),
        Response::TaskClaim(r) => r.promise.as_mut(),
        Response::TaskFulfill(r) => r.promise.as_mut(),
        Response::TaskFence(r) => match r.action.as_mut()? {
            TaskFenceInnerRes::Create(p) | TaskFenceInnerRes::Settle(p) => p.promise.as_mut(),
        },
        _ => None,
    }
}

/// Read-modify-write of promise `id`, when it exists.
pub(crate) fn patch_promise(m: &mut Machine, id: &str, f: impl FnOnce(&mut PromiseObject)) {
    if let Some(p) = m.state.get_promise(id) {
        let mut p = p.clone();
        f(&mut p);
        m.state.set_promise(p);
    }
}

/// Read-modify-write of task `id`, when it exists.
pub(crate) fn patch_task(m: &mut Machine, id: &str, f: impl FnOnce(&mut TaskObject)) {
    if let Some(t) = m.state.get_task(id) {
        let mut t = t.clone();
        f(&mut t);
        m.state.set_task(t);
    }
}

/// Whether promise `id` is pending and its deadline not yet reached.
pub(crate) fn is_live(m: &Machine, id: &str, now: u64) -> bool {
    m.state.get_promise(id).is_some_and(|p| p.is_live(now))
}

/// Whether promise `id` is pending (whatever its deadline).
pub(crate) fn is_pending(m: &Machine, id: &str) -> bool {
    m.state
        .get_promise(id)
        .is_some_and(|p| p.state == model::types::PromiseState::Pending)
}

/// The state of task `id`.
pub(crate) fn task_state(m: &Machine, id: &str) -> Option<TaskState> {
    m.state.get_task(id).map(|t| t.state)
}

/// The awaiters registered on pending promise `id` whose task is in `state`.
pub(crate) fn awaiters_in(m: &Machine, id: &str, state: TaskState) -> Vec<String> {
    let Some(p) = m.state.get_promise(id) else {
        return Vec::new();
    };
    if p.state != model::types::PromiseState::Pending {
        return Vec::new();
    }
    p.callbacks
        .iter()
        .filter(|c| task_state(m, c) == Some(state))
        .cloned()
        .collect()
}

/// Re-send `unblock` to each of `listeners` with promise `id`'s current
/// record (after a deviation patched the settled promise): the outbox is
/// keyed by promise and address, so the patched message replaces the spec's.
pub(crate) fn renotify(m: &mut Machine, id: &str, listeners: &[String]) {
    let Some(record) = m.state.get_promise(id).map(PromiseObject::to_record) else {
        return;
    };
    for address in listeners {
        m.state.set_message(
            address,
            Message::Unblock {
                promise: record.clone(),
            },
        );
    }
}

/// Run `f` with promise `id`'s deadline moved to `at`, then put the real
/// deadline back on the promise (and on the record `f`'s response carries,
/// and on the `unblock` messages of `listeners`). This is how a deviation
/// makes the spec's handler take a deadline comparison the other way
/// (`<` for `≤`) without touching its code: only the promise object moves,
/// not its armed timeout.
pub(crate) fn with_deadline(
    m: &mut Machine,
    id: &str,
    at: u64,
    f: impl FnOnce(&mut Machine) -> Response,
) -> Response {
    let Some(p) = m.state.get_promise(id) else {
        return f(m);
    };
    let (real, listeners) = (p.timeout_at, p.listeners.clone());
    patch_promise(m, id, |p| p.timeout_at = at);
    let mut res = f(m);
    patch_promise(m, id, |p| p.timeout_at = real);
    if let Some(r) = record_mut(&mut res) {
        if r.id == id {
            r.timeout_at = real;
        }
    }
    if !is_pending(m, id) {
        renotify(m, id, &listeners);
    }
    res
}

/// Whether resonate-pg counts a promise as *external* (its generated
/// column `external`, resonate.sql:38-41): a `resonate:target` tag (present,
/// whatever its value), `resonate:timer` `"true"`, or `resonate:external`
/// `"true"`. It refuses to let anything await a promise that is not (its
/// deviations `callback-refuses-internal`, `suspend-refuses-internal`).
pub(crate) fn pg_external(tags: &model::types::Tags) -> bool {
    tags.contains_key(model::state::TARGET)
        || model::state::is_timer(tags)
        || tags.get("resonate:external").map(String::as_str) == Some("true")
}

/// The task's `execute` (if its promise has a target) rewritten with the
/// task's current version.
pub(crate) fn redispatch_current(m: &mut Machine, id: &str) {
    let version = m.state.get_task(id).map_or(0, |t| t.version);
    let target = m
        .state
        .get_promise(id)
        .map(|p| p.target().to_string())
        .unwrap_or_default();
    if !target.is_empty() {
        m.state.set_message(
            &target,
            Message::Execute {
                task_id: id.to_string(),
                version,
            },
        );
    }
}
