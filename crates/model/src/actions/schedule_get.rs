//! S-01 `schedule.get`: `spec/02-actions/S-01-schedule.get.lean`.

use crate::api::{ScheduleGetReq, ScheduleRes};
use crate::branch::*;
use crate::machine::Machine;
use crate::types::Time;

/// `scheduleGet`.
pub fn schedule_get(m: &mut Machine, req: &ScheduleGetReq, _now: Time) -> ScheduleRes {
    match m.state.get_schedule(&req.id).cloned() {
        None => {
            m.hits.push(SCHEDULE_GET_NOT_FOUND_404);
            ScheduleRes {
                status: 404,
                schedule: None,
            }
        }
        Some(s) => {
            m.hits.push(SCHEDULE_GET_FOUND_200);
            ScheduleRes {
                status: 200,
                schedule: Some(s),
            }
        }
    }
}
