//! S-02 `schedule.create`: `spec/02-actions/S-02-schedule.create.lean`.
//! Idempotent on an existing id (the stored schedule is returned, the
//! request ignored); a new schedule arms its first fire at `nextCron cron now`.

use crate::api::{ScheduleCreateReq, ScheduleRes};
use crate::branch::*;
use crate::machine::Machine;
use crate::types::{Schedule, Time};

/// `scheduleCreate`.
pub fn schedule_create(m: &mut Machine, req: &ScheduleCreateReq, now: Time) -> ScheduleRes {
    if let Some(s) = m.state.get_schedule(&req.id) {
        let s = s.clone();
        m.hits.push(SCHEDULE_CREATE_EXISTS_200);
        return ScheduleRes {
            status: 200,
            schedule: Some(s),
        };
    }
    m.hits.push(SCHEDULE_CREATE_CREATED_200);
    let s = Schedule {
        id: req.id.clone(),
        cron: req.cron.clone(),
        promise_id: req.promise_id.clone(),
        promise_timeout: req.promise_timeout,
        promise_param: req.promise_param.clone(),
        promise_tags: req.promise_tags.clone(),
        created_at: now,
        next_run_at: m.calendar().next_cron(&req.cron, now),
        last_run_at: None,
    };
    m.state.set_schedule(s.clone());
    m.state.set_schedule_timeout(&s.id, s.next_run_at);
    ScheduleRes {
        status: 200,
        schedule: Some(s),
    }
}
