//! P-02 `promise.create`: `spec/02-actions/P-02-promise.create.lean`.
//!
//! Only an external promise (target or timer) arms a promise timeout here;
//! a `resonate:target` also creates a pending task (version 0) whose first
//! `execute` is sent now, or held until `resonate:delay` when that is later.
//! `resonate:delay` is read as Lean's `String.toNat!` reads it (`_` may
//! separate digits, as in `30_000`); one that is not a natural number reads
//! as 0 (the panic's default): the task is dispatched at once.

use crate::api::{PromiseCreateReq, PromiseRes};
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::state::{timeout_state, Message, PromiseObject, TaskObject, DELAY, RETRY, TARGET};
use crate::types::{PromiseState, TaskState, Time, Value};

/// `promiseCreate`.
pub fn promise_create(m: &mut Machine, req: &PromiseCreateReq, now: Time) -> PromiseRes {
    let retry_timeout = m.retry_timeout();
    if let Some(p) = m.state.get_promise(&req.id) {
        if p.state == PromiseState::Pending {
            marker::PROMISE_CREATE_EXISTING.record(&mut m.marks, p.timeout_at, now);
        }
        let (branch, record) = if p.state == PromiseState::Pending && p.timeout_at <= now {
            (
                PROMISE_CREATE_EXISTS_PENDING_EXPIRED_PROJECTED_200,
                p.projected_record(),
            )
        } else {
            (PROMISE_CREATE_EXISTS_200, p.to_record())
        };
        m.hits.push(branch);
        return PromiseRes {
            status: 200,
            promise: Some(record),
        };
    }
    marker::PROMISE_CREATE.record(&mut m.marks, req.timeout_at, now);
    if req.timeout_at > now {
        m.hits.push(PROMISE_CREATE_NEW_PENDING_200);
        let p = PromiseObject {
            id: req.id.clone(),
            state: PromiseState::Pending,
            param: req.param.clone(),
            value: Value::default(),
            tags: req.tags.clone(),
            timeout_at: req.timeout_at,
            created_at: now,
            settled_at: None,
            callbacks: Vec::new(),
            listeners: Vec::new(),
        };
        let record = p.to_record();
        let external = p.external();
        m.state.set_promise(p);
        if external {
            m.hits.push(PROMISE_CREATE_NEW_EXTERNAL_TIMEOUT_ARMED);
            m.state.set_promise_timeout(&req.id, req.timeout_at);
        }
        let Some(target) = req.tags.get(TARGET) else {
            m.hits.push(PROMISE_CREATE_NEW_NO_TARGET_200);
            return PromiseRes {
                status: 200,
                promise: Some(record),
            };
        };
        let t = TaskObject::new(&req.id, TaskState::Pending, 0);
        let execute = Message::Execute {
            task_id: t.id.clone(),
            version: t.version,
        };
        m.state.set_task(t);
        match req.tags.get(DELAY) {
            None => {
                m.hits.push(PROMISE_CREATE_NEW_TARGET_200);
                m.state
                    .set_task_timeout(&req.id, RETRY, now.saturating_add(retry_timeout));
                m.state.set_message(target, execute);
            }
            Some(delay_str) => {
                let delay = to_nat(delay_str);
                marker::PROMISE_CREATE_DELAY.record(&mut m.marks, delay, now);
                if delay > now {
                    m.hits.push(PROMISE_CREATE_NEW_TARGET_DELAYED_200);
                    m.state.set_task_timeout(&req.id, RETRY, delay);
                } else {
                    m.hits.push(PROMISE_CREATE_NEW_TARGET_DELAY_ELAPSED_200);
                    m.state
                        .set_task_timeout(&req.id, RETRY, now.saturating_add(retry_timeout));
                    m.state.set_message(target, execute);
                }
            }
        }
        return PromiseRes {
            status: 200,
            promise: Some(record),
        };
    }
    m.hits.push(PROMISE_CREATE_NEW_EXPIRED_200);
    let p = PromiseObject {
        id: req.id.clone(),
        state: timeout_state(&req.tags),
        param: req.param.clone(),
        value: Value::default(),
        tags: req.tags.clone(),
        timeout_at: req.timeout_at,
        created_at: req.timeout_at,
        settled_at: Some(req.timeout_at),
        callbacks: Vec::new(),
        listeners: Vec::new(),
    };
    let record = p.to_record();
    let has_target = p.tags.contains_key(TARGET);
    m.state.set_promise(p);
    if has_target {
        m.hits.push(PROMISE_CREATE_NEW_EXPIRED_TARGET_200);
        m.state
            .set_task(TaskObject::new(&req.id, TaskState::Fulfilled, 0));
    }
    PromiseRes {
        status: 200,
        promise: Some(record),
    }
}

/// Lean's `String.toNat!` (toolchain v4.31.0): the decimal value of a
/// non-empty string of ASCII digits in which single `_` may separate digits
/// (not leading, trailing or doubled), the `_` ignored; anything else is the
/// panic default 0. Saturates at `u64::MAX`.
pub fn to_nat(s: &str) -> u64 {
    let b = s.as_bytes();
    let well_formed = !b.is_empty()
        && b.iter().all(|c| c.is_ascii_digit() || *c == b'_')
        && b[0] != b'_'
        && b[b.len() - 1] != b'_'
        && !s.contains("__");
    if !well_formed {
        return 0;
    }
    b.iter().filter(|c| c.is_ascii_digit()).fold(0u64, |n, c| {
        n.saturating_mul(10).saturating_add(u64::from(c - b'0'))
    })
}
