//! S-03 `schedule.delete`: `spec/02-actions/S-03-schedule.delete.lean`.
//! Removes the schedule and disarms its timeout; promises it created stay.

use crate::api::ScheduleDeleteReq;
use crate::branch::*;
use crate::machine::Machine;
use crate::types::Time;

/// `scheduleDelete`.
pub fn schedule_delete(m: &mut Machine, req: &ScheduleDeleteReq, _now: Time) -> u16 {
    if m.state.get_schedule(&req.id).is_none() {
        m.hits.push(SCHEDULE_DELETE_NOT_FOUND_404);
        return 404;
    }
    m.hits.push(SCHEDULE_DELETE_DELETED_200);
    m.state.del_schedule(&req.id);
    m.state.del_schedule_timeout(&req.id);
    200
}
