//! The generator's preconditions: the request validation the real servers
//! apply before any handler runs (the spec has none of it), which
//! `model::wire::validate` implements, plus what the servers' JSON decoder
//! refuses before validation and our `Request` type can still express. A
//! request that breaks one of these is answered 400 by the servers and would
//! only test their parsers, so the generator never emits one and the
//! shrinker never keeps one.

use model::api::{PromiseSettleReq, Request, TaskFenceAction};
use model::machine::Machine;
use model::types::PromiseState;

use crate::{Op, Step};

/// Whether `step` satisfies the generator's preconditions on `m`: a tick
/// always does; a request must pass `model::wire::validate` (with `m`'s
/// calendar, for crons), fit the wire's `i64` integers, and ask for a
/// client settlement state (`resolved`, `rejected`, `rejected_canceled`)
/// wherever it settles. That `now` never decreases is
/// the caller's to check, across steps. A request may name ids that do not
/// exist in `m`: the spec answers those with 404 or 422, which is behaviour
/// worth comparing.
pub fn well_formed(step: &Step, m: &Machine) -> Result<(), String> {
    match &step.op {
        Op::Tick => Ok(()),
        Op::Request(r) => well_formed_request(r, m),
    }
}

/// [`well_formed`] of a request, whatever its `now` (the rules never read
/// it): a candidate is checked without being copied into a step.
pub(crate) fn well_formed_request(r: &Request, m: &Machine) -> Result<(), String> {
    model::wire::validate(r, m.calendar())?;
    decodable(r)
}

/// Whether `step` is a validation probe ([`crate::GenConfig::probe_pct`]):
/// a request the servers' decoder reads but their 400 rules refuse.
pub fn is_probe(step: &Step, m: &Machine) -> bool {
    probe_rule(step, m).is_some()
}

/// The one rule a validation probe breaks (`model::wire::validate`'s
/// message), or `None` when `step` is no probe.
pub fn probe_rule(step: &Step, m: &Machine) -> Option<String> {
    match &step.op {
        Op::Tick => None,
        Op::Request(r) => decodable(r)
            .ok()
            .and_then(|()| model::wire::validate(r, m.calendar()).err()),
    }
}

/// What the servers' decoder refuses before validating: integers beyond
/// `i64`, and a settlement state other than `resolved`, `rejected` or
/// `rejected_canceled` (their `SettleState` has no other variant).
fn decodable(req: &Request) -> Result<(), String> {
    use Request as R;
    let fits = |what: &str, v: u64| {
        if v <= i64::MAX as u64 {
            Ok(())
        } else {
            Err(format!("{what} exceeds i64"))
        }
    };
    match req {
        R::PromiseCreate(r) => fits("timeoutAt", r.timeout_at),
        R::PromiseSettle(r) => settle_state(r),
        R::TaskCreate(r) => {
            fits("ttl", r.ttl)?;
            fits("timeoutAt", r.action.timeout_at)
        }
        R::TaskAcquire(r) => {
            fits("version", r.version)?;
            fits("ttl", r.ttl)
        }
        R::TaskFence(r) => {
            fits("version", r.version)?;
            match &r.action {
                TaskFenceAction::Create(c) => fits("timeoutAt", c.timeout_at),
                TaskFenceAction::Settle(s) => settle_state(s),
            }
        }
        R::TaskHeartbeat(r) => r.tasks.iter().try_for_each(|t| fits("version", t.version)),
        R::TaskSuspend(r) => fits("version", r.version),
        R::TaskFulfill(r) => {
            fits("version", r.version)?;
            settle_state(&r.action)
        }
        R::TaskRelease(r) => fits("version", r.version),
        R::ScheduleCreate(r) => fits("promiseTimeout", r.promise_timeout),
        _ => Ok(()),
    }
}

fn settle_state(r: &PromiseSettleReq) -> Result<(), String> {
    match r.state {
        PromiseState::Resolved | PromiseState::Rejected | PromiseState::RejectedCanceled => Ok(()),
        s => Err(format!("settle state {} is not a client state", s.as_str())),
    }
}
