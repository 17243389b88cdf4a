//! T-11 `task.search`: `spec/02-actions/T-11-task.search.lean`.
//! The filtering contract is not yet specified: the spec answers 501.

use crate::api::TaskSearchReq;
use crate::branch::*;
use crate::machine::Machine;
use crate::types::Time;

/// `taskSearch`: always 501.
pub fn task_search(m: &mut Machine, _req: &TaskSearchReq, _now: Time) -> u16 {
    m.hits.push(TASK_SEARCH_NOT_IMPLEMENTED_501);
    501
}
