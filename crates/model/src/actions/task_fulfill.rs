//! T-07 `task.fulfill`: `spec/02-actions/T-07-task.fulfill.lean`.
//! Settles the task's promise with the action's state and value and fulfills
//! the task in one transition, running the settlement cascade. The action's
//! own `id` is not read: the task's promise is the one settled.

use crate::actions::guard::{check, Failures, NotLive};
use crate::actions::settle::settle;
use crate::api::{TaskFulfillReq, TaskFulfillRes};
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::state::PromiseObject;
use crate::types::{TaskState, Time};

const FAILURES: Failures = Failures {
    task_not_found_404: TASK_FULFILL_TASK_NOT_FOUND_404,
    promise_not_found_409: TASK_FULFILL_PROMISE_NOT_FOUND_409,
    wrong_state_409: TASK_FULFILL_NOT_ACQUIRED_409,
    promise_not_live_409: TASK_FULFILL_PROMISE_NOT_LIVE_409,
    promise_not_live_409_why: NotLive {
        settled: TASK_FULFILL_PROMISE_NOT_LIVE_409_SETTLED,
        expired: TASK_FULFILL_PROMISE_NOT_LIVE_409_EXPIRED,
    },
    version_mismatch_409: TASK_FULFILL_VERSION_MISMATCH_409,
    deadline: marker::TASK_FULFILL,
};

/// `taskFulfill`.
pub fn task_fulfill(m: &mut Machine, req: &TaskFulfillReq, now: Time) -> TaskFulfillRes {
    let p = match check(m, &req.id, req.version, TaskState::Acquired, &FAILURES, now) {
        Ok((_, p)) => p,
        Err(status) => {
            return TaskFulfillRes {
                status,
                promise: None,
            }
        }
    };
    m.hits.push(TASK_FULFILL_FULFILLED_200);
    let p = PromiseObject {
        state: req.action.state,
        value: req.action.value.clone(),
        settled_at: Some(now),
        ..p
    };
    let (record, _) = settle(m, p, now, &marker::FULFILL);
    TaskFulfillRes {
        status: 200,
        promise: Some(record),
    }
}
