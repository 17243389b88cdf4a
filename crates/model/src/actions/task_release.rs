//! T-08 `task.release`: `spec/02-actions/T-08-task.release.lean`.
//! Acquired → pending without a version bump: the lease is dropped, a retry
//! timeout armed, and `execute` re-sent with the current version.

use crate::actions::guard::{check, Failures, NotLive};
use crate::api::TaskReleaseReq;
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::state::{Message, TaskObject, RETRY};
use crate::types::{TaskState, Time};

const FAILURES: Failures = Failures {
    task_not_found_404: TASK_RELEASE_TASK_NOT_FOUND_404,
    promise_not_found_409: TASK_RELEASE_PROMISE_NOT_FOUND_409,
    wrong_state_409: TASK_RELEASE_NOT_ACQUIRED_409,
    promise_not_live_409: TASK_RELEASE_PROMISE_NOT_LIVE_409,
    promise_not_live_409_why: NotLive {
        settled: TASK_RELEASE_PROMISE_NOT_LIVE_409_SETTLED,
        expired: TASK_RELEASE_PROMISE_NOT_LIVE_409_EXPIRED,
    },
    version_mismatch_409: TASK_RELEASE_VERSION_MISMATCH_409,
    deadline: marker::TASK_RELEASE,
};

/// `taskRelease`.
pub fn task_release(m: &mut Machine, req: &TaskReleaseReq, now: Time) -> u16 {
    let retry_timeout = m.retry_timeout();
    let (t, p) = match check(m, &req.id, req.version, TaskState::Acquired, &FAILURES, now) {
        Ok(found) => found,
        Err(status) => return status,
    };
    m.hits.push(TASK_RELEASE_RELEASED_200);
    let t = TaskObject {
        state: TaskState::Pending,
        pid: None,
        ttl: None,
        ..t
    };
    let (id, version) = (t.id.clone(), t.version);
    m.state.set_task(t);
    m.state.del_task_timeout(&id);
    m.state
        .set_task_timeout(&id, RETRY, now.saturating_add(retry_timeout));
    m.state.set_message(
        p.target(),
        Message::Execute {
            task_id: id,
            version,
        },
    );
    200
}
