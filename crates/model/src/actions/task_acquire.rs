//! T-03 `task.acquire`: `spec/02-actions/T-03-task.acquire.lean`.
//! The pending→acquired transition: bump the version, take the lease, drop
//! buffered resumes, swap the retry timeout for a lease timeout.

use crate::actions::guard::{check, Failures, NotLive};
use crate::api::{TaskAcquireReq, TaskClaimRes};
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::state::{TaskObject, LEASE};
use crate::types::{TaskState, Time};

const FAILURES: Failures = Failures {
    task_not_found_404: TASK_ACQUIRE_TASK_NOT_FOUND_404,
    promise_not_found_409: TASK_ACQUIRE_PROMISE_NOT_FOUND_409,
    wrong_state_409: TASK_ACQUIRE_NOT_PENDING_409,
    promise_not_live_409: TASK_ACQUIRE_PROMISE_NOT_LIVE_409,
    promise_not_live_409_why: NotLive {
        settled: TASK_ACQUIRE_PROMISE_NOT_LIVE_409_SETTLED,
        expired: TASK_ACQUIRE_PROMISE_NOT_LIVE_409_EXPIRED,
    },
    version_mismatch_409: TASK_ACQUIRE_VERSION_MISMATCH_409,
    deadline: marker::TASK_ACQUIRE,
};

/// `taskAcquire`.
pub fn task_acquire(m: &mut Machine, req: &TaskAcquireReq, now: Time) -> TaskClaimRes {
    let (t, p) = match check(m, &req.id, req.version, TaskState::Pending, &FAILURES, now) {
        Ok(found) => found,
        Err(status) => {
            return TaskClaimRes {
                status,
                task: None,
                promise: None,
                preload: Vec::new(),
            }
        }
    };
    m.hits.push(TASK_ACQUIRE_ACQUIRED_200);
    let t = TaskObject {
        state: TaskState::Acquired,
        version: t.version + 1,
        ttl: Some(req.ttl),
        pid: Some(req.pid.clone()),
        resumes: Vec::new(),
        ..t
    };
    let task = t.to_record();
    let id = t.id.clone();
    m.state.set_task(t);
    m.state.del_task_timeout(&id);
    m.state
        .set_task_timeout(&id, LEASE, now.saturating_add(req.ttl));
    TaskClaimRes {
        status: 200,
        task: Some(task),
        promise: Some(p.to_record()),
        preload: Vec::new(),
    }
}
