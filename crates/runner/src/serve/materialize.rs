//! Materialising mode: before handling a request, fire the due promise
//! timeouts of the promises it names, one by one, in the spirit of the Rust
//! server's `try_timeout` (which goes further: it settles any expired
//! pending promise it is asked about, armed or not, and as one batch).
//!
//! The spec only *projects* a pending promise past its deadline on read; the
//! promise stays pending in the state until the environment fires
//! `onPromiseTimeout`. But the environment may fire any armed timeout whose
//! deadline has passed at any moment, so firing it just before a request is
//! a schedule the spec allows, and the runner must accept a target that does
//! it (its check explores timeout firings before comparing). Serving the
//! model this way makes it behave like the Rust server on reads, so the
//! runner's tolerance for it can itself be tested.
//!
//! Only *armed* timeouts are fired (those in [`Machine::due`]): the spec arms
//! a promise timeout only for external promises (a target or a timer), so an
//! internal promise past its deadline stays pending and projected.

use std::collections::BTreeSet;

use model::api::{Request, TaskFenceAction};
use model::machine::{Machine, Timer};
use model::types::Time;

/// The promise ids `req` names (the server's `try_timeout` arguments):
/// ids, awaited and awaiter promises, a task create's or fence's action id.
/// Heartbeats and schedule operations name none.
pub fn named_ids(req: &Request) -> BTreeSet<&str> {
    let ids: Vec<&String> = match req {
        Request::PromiseGet(r) => vec![&r.id],
        Request::PromiseCreate(r) => vec![&r.id],
        Request::PromiseSettle(r) => vec![&r.id],
        Request::PromiseRegisterCallback(r) => vec![&r.awaited, &r.awaiter],
        Request::PromiseRegisterListener(r) => vec![&r.awaited],
        Request::TaskGet(r) => vec![&r.id],
        Request::TaskCreate(r) => vec![&r.action.id],
        Request::TaskAcquire(r) => vec![&r.id],
        Request::TaskFence(r) => match &r.action {
            TaskFenceAction::Create(c) => vec![&r.id, &c.id],
            TaskFenceAction::Settle(s) => vec![&r.id, &s.id],
        },
        Request::TaskSuspend(r) => std::iter::once(&r.id)
            .chain(r.actions.iter().map(|a| &a.awaited))
            .collect(),
        Request::TaskFulfill(r) => vec![&r.action.id],
        Request::TaskRelease(r) => vec![&r.id],
        Request::TaskHalt(r) => vec![&r.id],
        Request::TaskContinue(r) => vec![&r.id],
        Request::TaskHeartbeat(_)
        | Request::PromiseSearch(_)
        | Request::TaskSearch(_)
        | Request::ScheduleGet(_)
        | Request::ScheduleCreate(_)
        | Request::ScheduleDelete(_)
        | Request::ScheduleSearch(_) => Vec::new(),
    };
    ids.into_iter().map(String::as_str).collect()
}

/// Fire, in [`Machine::due`] order, the armed promise timeouts due at `now`
/// of the promises `req` names. Returns what fired.
pub fn fire_named(m: &mut Machine, req: &Request, now: Time) -> Vec<Timer> {
    let ids = named_ids(req);
    let due: Vec<Timer> = m
        .due(now)
        .into_iter()
        .filter(|t| matches!(t, Timer::Promise(id) if ids.contains(id.as_str())))
        .collect();
    for t in &due {
        m.fire(t, now);
    }
    due
}
