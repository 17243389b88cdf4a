//! P-01 `promise.get`: `spec/02-actions/P-01-promise.get.lean`.
//! A read: a pending promise past its deadline is projected, never written.

use crate::api::{PromiseGetReq, PromiseRes};
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::types::{PromiseState, Time};

/// `promiseGet`.
pub fn promise_get(m: &mut Machine, req: &PromiseGetReq, now: Time) -> PromiseRes {
    let Some(p) = m.state.get_promise(&req.id) else {
        m.hits.push(PROMISE_GET_NOT_FOUND_404);
        return PromiseRes {
            status: 404,
            promise: None,
        };
    };
    let (branch, record) = if p.state == PromiseState::Pending {
        marker::PROMISE_GET.record(&mut m.marks, p.timeout_at, now);
        if p.timeout_at <= now {
            (
                PROMISE_GET_PENDING_EXPIRED_PROJECTED_200,
                p.projected_record(),
            )
        } else {
            (PROMISE_GET_PENDING_200, p.to_record())
        }
    } else {
        (PROMISE_GET_SETTLED_200, p.to_record())
    };
    m.hits.push(branch);
    PromiseRes {
        status: 200,
        promise: Some(record),
    }
}
