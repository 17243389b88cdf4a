//! P-06 `promise.search`: `spec/02-actions/P-06-promise.search.lean`.
//! The filtering contract is not yet specified: the spec answers 501.

use crate::api::PromiseSearchReq;
use crate::branch::*;
use crate::machine::Machine;
use crate::types::Time;

/// `promiseSearch`: always 501.
pub fn promise_search(m: &mut Machine, _req: &PromiseSearchReq, _now: Time) -> u16 {
    m.hits.push(PROMISE_SEARCH_NOT_IMPLEMENTED_501);
    501
}
