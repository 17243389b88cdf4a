//! P-04 `promise.register_callback`: `spec/02-actions/P-04-promise.register_callback.lean`.
//! The awaiter must exist (422) and carry a target (422); the callback is
//! recorded only while both promises are live, yet the answer is 200 with
//! the awaited promise either way.

use crate::actions::guard::NotLive;
use crate::api::{PromiseRegisterCallbackReq, PromiseRes};
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::state::TARGET;
use crate::types::{PromiseState, Time};

const AWAITER_NOT_LIVE: NotLive = NotLive {
    settled: PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200_SETTLED,
    expired: PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200_EXPIRED,
};

/// `promiseRegisterCallback`.
pub fn promise_register_callback(
    m: &mut Machine,
    req: &PromiseRegisterCallbackReq,
    now: Time,
) -> PromiseRes {
    let Some(awaited) = m.state.get_promise(&req.awaited) else {
        m.hits.push(PROMISE_REGISTER_CALLBACK_AWAITED_NOT_FOUND_404);
        return PromiseRes {
            status: 404,
            promise: None,
        };
    };
    let Some(awaiter) = m.state.get_promise(&req.awaiter) else {
        m.hits.push(PROMISE_REGISTER_CALLBACK_AWAITER_NOT_FOUND_422);
        return PromiseRes {
            status: 422,
            promise: None,
        };
    };
    if !awaiter.tags.contains_key(TARGET) {
        m.hits.push(PROMISE_REGISTER_CALLBACK_AWAITER_NO_TARGET_422);
        return PromiseRes {
            status: 422,
            promise: None,
        };
    }
    if awaited.state != PromiseState::Pending {
        m.hits.push(PROMISE_REGISTER_CALLBACK_AWAITED_SETTLED_200);
        let record = awaited.to_record();
        return PromiseRes {
            status: 200,
            promise: Some(record),
        };
    }
    marker::CALLBACK_AWAITED.record(&mut m.marks, awaited.timeout_at, now);
    if awaited.timeout_at <= now {
        m.hits
            .push(PROMISE_REGISTER_CALLBACK_AWAITED_EXPIRED_PROJECTED_200);
        let record = awaited.projected_record();
        return PromiseRes {
            status: 200,
            promise: Some(record),
        };
    }
    // The response carries the awaited promise as read, before the callback
    // is added (`pAwaited.toRecord`; callbacks are not on the wire anyway).
    let record = awaited.to_record();
    if awaiter.state == PromiseState::Pending {
        marker::CALLBACK_AWAITER.record(&mut m.marks, awaiter.timeout_at, now);
    }
    if awaiter.is_live(now) {
        m.hits.push(PROMISE_REGISTER_CALLBACK_REGISTERED_200);
        let mut awaited = awaited.clone();
        awaited.add_callback(&req.awaiter);
        m.state.set_promise(awaited);
    } else {
        m.hits.push(PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200);
        m.hits.push(AWAITER_NOT_LIVE.of(awaiter));
    }
    PromiseRes {
        status: 200,
        promise: Some(record),
    }
}
