//! T-01 `task.get`: `spec/02-actions/T-01-task.get.lean`.
//! Once its promise is no longer live the task reads as `fulfilled` without
//! lease or resumes: a projection, nothing is written.

use crate::actions::guard::NotLive;
use crate::api::{TaskGetReq, TaskGetRes};
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::types::{PromiseState, TaskState, Time};

const NOT_LIVE: NotLive = NotLive {
    settled: TASK_GET_PROJECTED_FULFILLED_200_SETTLED,
    expired: TASK_GET_PROJECTED_FULFILLED_200_EXPIRED,
};

/// `taskGet`.
pub fn task_get(m: &mut Machine, req: &TaskGetReq, now: Time) -> TaskGetRes {
    let Some(t) = m.state.get_task(&req.id) else {
        m.hits.push(TASK_GET_TASK_NOT_FOUND_404);
        return TaskGetRes {
            status: 404,
            task: None,
        };
    };
    let Some(p) = m.state.get_promise(&t.id) else {
        m.hits.push(TASK_GET_PROMISE_NOT_FOUND_404);
        return TaskGetRes {
            status: 404,
            task: None,
        };
    };
    let mut record = t.to_record();
    if p.state == PromiseState::Pending {
        marker::TASK_GET.record(&mut m.marks, p.timeout_at, now);
    }
    if p.is_live(now) {
        m.hits.push(TASK_GET_LIVE_200);
    } else {
        m.hits.push(TASK_GET_PROJECTED_FULFILLED_200);
        m.hits.push(NOT_LIVE.of(p));
        record.state = TaskState::Fulfilled;
        record.pid = None;
        record.ttl = None;
        record.resumes = 0;
    }
    TaskGetRes {
        status: 200,
        task: Some(record),
    }
}
