//! The Rust server's 400 rules (`types.rs` validators and the address and
//! cron checks of `server.rs`) for requests that decode. **These are the
//! server's rules, not the spec's**: the Lean handlers accept every
//! well-typed request. The served model applies them first so that it
//! answers 400 where the server does; the generator uses them to keep to the
//! requests both can be compared on.
//!
//! Messages are ours; only the 400 is observable to the runner.

use super::address::is_valid_address;
use crate::api::*;
use crate::calendar::Calendar;
use crate::state::{DELAY, TARGET};

/// `Ok` when the server would pass `req` to its handler, else the reason it
/// answers 400.
pub fn validate(req: &Request, calendar: &dyn Calendar) -> Result<(), String> {
    match req {
        Request::PromiseGet(r) => required(&r.id, "promise id"),
        Request::PromiseCreate(r) => promise_create(r),
        Request::PromiseSettle(r) => required(&r.id, "promise id"),
        Request::PromiseRegisterCallback(r) => callback(r),
        Request::PromiseRegisterListener(r) => {
            required(&r.awaited, "awaited promise id")?;
            required(&r.address, "address")?;
            check(is_valid_address(&r.address), "invalid listener address")
        }
        Request::PromiseSearch(r) => limit(r.limit),
        Request::TaskGet(r) => required(&r.id, "task id"),
        Request::TaskCreate(r) => {
            required(&r.pid, "process id")?;
            ttl(r.ttl)?;
            check(
                r.action.tags.contains_key(TARGET),
                "action must have a resonate:target tag",
            )?;
            check(
                !r.action.tags.contains_key(DELAY),
                "action must not have a resonate:delay tag",
            )?;
            promise_create(&r.action)
        }
        Request::TaskAcquire(r) => {
            required(&r.id, "task id")?;
            required(&r.pid, "process id")?;
            ttl(r.ttl)
        }
        Request::TaskFence(r) => {
            required(&r.id, "task id")?;
            match &r.action {
                TaskFenceAction::Create(c) => {
                    check(c.id != r.id, "action id must not equal the task id")?;
                    promise_create(c)
                }
                TaskFenceAction::Settle(s) => {
                    check(s.id != r.id, "action id must not equal the task id")?;
                    required(&s.id, "promise id")
                }
            }
        }
        Request::TaskHeartbeat(r) => {
            required(&r.pid, "process id")?;
            let first = r.tasks.first().ok_or("tasks must not be empty")?;
            check(
                r.tasks.iter().all(|t| origin(&t.id) == origin(&first.id)),
                "all tasks must belong to the same origin",
            )
        }
        Request::TaskSuspend(r) => {
            required(&r.id, "task id")?;
            check(!r.actions.is_empty(), "actions must not be empty")?;
            for a in &r.actions {
                callback(a)?;
                check(a.awaiter == r.id, "every awaiter must be the task id")?;
                check(a.awaited != r.id, "an awaited promise must not be the task")?;
                check(
                    origin(&a.awaited) == origin(&r.id),
                    "awaited promises must belong to the task's origin",
                )?;
            }
            Ok(())
        }
        Request::TaskFulfill(r) => {
            required(&r.id, "task id")?;
            required(&r.action.id, "promise id")?;
            check(r.action.id == r.id, "action id must equal the task id")
        }
        Request::TaskRelease(r) => required(&r.id, "task id"),
        Request::TaskHalt(r) => required(&r.id, "task id"),
        Request::TaskContinue(r) => required(&r.id, "task id"),
        Request::TaskSearch(r) => limit(r.limit),
        Request::ScheduleGet(r) => required(&r.id, "schedule id"),
        Request::ScheduleCreate(r) => {
            required(&r.id, "schedule id")?;
            required(&r.cron, "cron expression")?;
            required(&r.promise_id, "promise id template")?;
            check(!r.id.contains('.'), "schedule id must not contain '.'")?;
            check(
                r.promise_tags.contains_key(TARGET),
                "promiseTags must include a resonate:target tag",
            )?;
            check(calendar.is_valid(&r.cron), "invalid cron expression")
        }
        Request::ScheduleDelete(r) => required(&r.id, "schedule id"),
        Request::ScheduleSearch(r) => limit(r.limit),
    }
}

/// The origin of an id: its part before the first `.`.
pub fn origin(id: &str) -> &str {
    id.split_once('.').map_or(id, |(o, _)| o)
}

/// `id` equals `prefix` or starts with `prefix.`.
fn prefixed(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

fn check(ok: bool, message: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(message.to_string())
    }
}

/// The message is formatted only for an empty field: the generator
/// validates every request it draws, nearly all of them well formed.
fn required(s: &str, what: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err(format!("{what} is required"));
    }
    Ok(())
}

fn ttl(ttl: u64) -> Result<(), String> {
    check(ttl >= 1, "ttl must be a positive integer")
}

fn limit(limit: Option<u64>) -> Result<(), String> {
    match limit {
        Some(n) if !(1..=1000).contains(&n) => Err("limit must be between 1 and 1000".into()),
        _ => Ok(()),
    }
}

/// `PromiseCreateData`'s rules, shared by `promise.create`, `task.create`'s
/// action and a fenced create.
fn promise_create(r: &PromiseCreateReq) -> Result<(), String> {
    required(&r.id, "promise id")?;
    check(
        !r.id.contains('\0'),
        "promise id must not contain null bytes",
    )?;
    let tag = |k: &str| r.tags.get(k).map(String::as_str);
    if let Some(o) = tag("resonate:origin") {
        check(!o.contains('.'), "resonate:origin must not contain '.'")?;
        check(
            prefixed(&r.id, o),
            "promise id must be prefixed by resonate:origin",
        )?;
    }
    for t in ["resonate:branch", "resonate:parent"] {
        if let Some(p) = tag(t) {
            if !prefixed(&r.id, p) {
                return Err(format!("promise id must be prefixed by {t}"));
            }
        }
    }
    if let Some(p) = tag("resonate:prefix") {
        check(!p.contains('.'), "resonate:prefix must not contain '.'")?;
    }
    if let Some(d) = tag(DELAY) {
        // The server reads the delay as an `i64` (a leading `+` allowed).
        let delay = d
            .parse::<i64>()
            .ok()
            .filter(|v| *v >= 0)
            .ok_or("resonate:delay must be a non-negative integer")?;
        check(
            (delay as u64) < r.timeout_at,
            "resonate:delay must be less than timeoutAt",
        )?;
        check(
            r.tags.contains_key(TARGET),
            "resonate:delay requires a resonate:target tag",
        )?;
    }
    if let Some(t) = tag(TARGET) {
        check(is_valid_address(t), "invalid resonate:target address")?;
    }
    Ok(())
}

/// `PromiseRegisterCallbackData`'s rules.
fn callback(r: &PromiseRegisterCallbackReq) -> Result<(), String> {
    required(&r.awaited, "awaited promise id")?;
    required(&r.awaiter, "awaiter promise id")?;
    check(
        r.awaited != r.awaiter,
        "awaited and awaiter must be different promises",
    )?;
    check(
        origin(&r.awaited) == origin(&r.awaiter),
        "awaiter and awaited must belong to the same origin",
    )
}
