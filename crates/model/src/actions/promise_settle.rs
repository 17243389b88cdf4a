//! P-03 `promise.settle`: `spec/02-actions/P-03-promise.settle.lean`.
//! Settling a live promise fulfills its task and runs the cascade; a promise
//! past its deadline answers with its projection and writes nothing.

use crate::actions::settle::settle;
use crate::api::{PromiseRes, PromiseSettleReq};
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::state::PromiseObject;
use crate::types::{PromiseState, Time};

/// `promiseSettle`.
pub fn promise_settle(m: &mut Machine, req: &PromiseSettleReq, now: Time) -> PromiseRes {
    let Some(p) = m.state.get_promise(&req.id) else {
        m.hits.push(PROMISE_SETTLE_NOT_FOUND_404);
        return PromiseRes {
            status: 404,
            promise: None,
        };
    };
    if p.state != PromiseState::Pending {
        m.hits.push(PROMISE_SETTLE_ALREADY_SETTLED_200);
        let record = p.to_record();
        return PromiseRes {
            status: 200,
            promise: Some(record),
        };
    }
    marker::PROMISE_SETTLE.record(&mut m.marks, p.timeout_at, now);
    if p.timeout_at <= now {
        m.hits.push(PROMISE_SETTLE_PENDING_EXPIRED_PROJECTED_200);
        let record = p.projected_record();
        return PromiseRes {
            status: 200,
            promise: Some(record),
        };
    }
    let p = PromiseObject {
        state: req.state,
        value: req.value.clone(),
        settled_at: Some(now),
        ..p.clone()
    };
    m.hits.push(PROMISE_SETTLE_SETTLED_200);
    let (record, had_task) = settle(m, p, now, &marker::SETTLE);
    m.hits.push(if had_task {
        PROMISE_SETTLE_SETTLED_WITH_TASK
    } else {
        PROMISE_SETTLE_SETTLED_WITHOUT_TASK
    });
    PromiseRes {
        status: 200,
        promise: Some(record),
    }
}
