//! S-04 `schedule.search`: `spec/02-actions/S-04-schedule.search.lean`.
//! The filtering contract is not yet specified: the spec answers 501.

use crate::api::ScheduleSearchReq;
use crate::branch::*;
use crate::machine::Machine;
use crate::types::Time;

/// `scheduleSearch`: always 501.
pub fn schedule_search(m: &mut Machine, _req: &ScheduleSearchReq, _now: Time) -> u16 {
    m.hits.push(SCHEDULE_SEARCH_NOT_IMPLEMENTED_501);
    501
}
