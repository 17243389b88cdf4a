//! T-04 `task.fence`: `spec/02-actions/T-04-task.fence.lean`.
//! Guarded by the acquired task's version, then delegates to the complete
//! `promise.create` / `promise.settle` handlers; the fence answers 200 and
//! the inner response carries its own status.

use crate::actions::guard::{check, Failures, NotLive};
use crate::actions::{promise_create::promise_create, promise_settle::promise_settle};
use crate::api::{TaskFenceAction, TaskFenceInnerRes, TaskFenceReq, TaskFenceRes};
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::types::{TaskState, Time};

const FAILURES: Failures = Failures {
    task_not_found_404: TASK_FENCE_TASK_NOT_FOUND_404,
    promise_not_found_409: TASK_FENCE_PROMISE_NOT_FOUND_409,
    wrong_state_409: TASK_FENCE_NOT_ACQUIRED_409,
    promise_not_live_409: TASK_FENCE_PROMISE_NOT_LIVE_409,
    promise_not_live_409_why: NotLive {
        settled: TASK_FENCE_PROMISE_NOT_LIVE_409_SETTLED,
        expired: TASK_FENCE_PROMISE_NOT_LIVE_409_EXPIRED,
    },
    version_mismatch_409: TASK_FENCE_VERSION_MISMATCH_409,
    deadline: marker::TASK_FENCE,
};

/// `taskFence`.
pub fn task_fence(m: &mut Machine, req: &TaskFenceReq, now: Time) -> TaskFenceRes {
    if let Err(status) = check(m, &req.id, req.version, TaskState::Acquired, &FAILURES, now) {
        return TaskFenceRes {
            status,
            action: None,
            preload: Vec::new(),
        };
    }
    let inner = match &req.action {
        TaskFenceAction::Create(r) => {
            m.hits.push(TASK_FENCE_CREATE_200);
            TaskFenceInnerRes::Create(promise_create(m, r, now))
        }
        TaskFenceAction::Settle(r) => {
            m.hits.push(TASK_FENCE_SETTLE_200);
            TaskFenceInnerRes::Settle(promise_settle(m, r, now))
        }
    };
    TaskFenceRes {
        status: 200,
        action: Some(inner),
        preload: Vec::new(),
    }
}
