//! P-05 `promise.register_listener`: `spec/02-actions/P-05-promise.register_listener.lean`.
//! A listener is recorded only on a live promise; otherwise the promise (or
//! its projection) is returned and nothing is written.

use crate::api::{PromiseRegisterListenerReq, PromiseRes};
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::types::{PromiseState, Time};

/// `promiseRegisterListener`.
pub fn promise_register_listener(
    m: &mut Machine,
    req: &PromiseRegisterListenerReq,
    now: Time,
) -> PromiseRes {
    let Some(p) = m.state.get_promise(&req.awaited) else {
        m.hits.push(PROMISE_REGISTER_LISTENER_NOT_FOUND_404);
        return PromiseRes {
            status: 404,
            promise: None,
        };
    };
    if p.state != PromiseState::Pending {
        m.hits.push(PROMISE_REGISTER_LISTENER_SETTLED_200);
        let record = p.to_record();
        return PromiseRes {
            status: 200,
            promise: Some(record),
        };
    }
    marker::LISTENER.record(&mut m.marks, p.timeout_at, now);
    if p.timeout_at <= now {
        m.hits.push(PROMISE_REGISTER_LISTENER_EXPIRED_PROJECTED_200);
        let record = p.projected_record();
        return PromiseRes {
            status: 200,
            promise: Some(record),
        };
    }
    m.hits.push(PROMISE_REGISTER_LISTENER_REGISTERED_200);
    let mut p = p.clone();
    p.add_listener(&req.address);
    let record = p.to_record();
    m.state.set_promise(p);
    PromiseRes {
        status: 200,
        promise: Some(record),
    }
}
