//! T-06 `task.suspend`: `spec/02-actions/T-06-task.suspend.lean`.
//!
//! After the spine, every awaited promise must exist (the first missing one
//! answers 422, whatever came before it). If any awaited promise is settled
//! or past its deadline the task stays acquired, its resumes are cleared and
//! the answer is 300 (marked `settled` if some awaited promise is settled,
//! `expired` if some is pending past its deadline, both if both). Otherwise the task's id (`req.id`, not the actions'
//! `awaiter`) is registered as a callback on each awaited promise and the
//! task parks: suspended, no lease, no resumes, no timeout.

use crate::actions::guard::{check, Failures, NotLive};
use crate::api::{TaskSuspendReq, TaskSuspendRes};
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::state::TaskObject;
use crate::types::{PromiseState, TaskState, Time};

const FAILURES: Failures = Failures {
    task_not_found_404: TASK_SUSPEND_TASK_NOT_FOUND_404,
    promise_not_found_409: TASK_SUSPEND_PROMISE_NOT_FOUND_409,
    wrong_state_409: TASK_SUSPEND_NOT_ACQUIRED_409,
    promise_not_live_409: TASK_SUSPEND_PROMISE_NOT_LIVE_409,
    promise_not_live_409_why: NotLive {
        settled: TASK_SUSPEND_PROMISE_NOT_LIVE_409_SETTLED,
        expired: TASK_SUSPEND_PROMISE_NOT_LIVE_409_EXPIRED,
    },
    version_mismatch_409: TASK_SUSPEND_VERSION_MISMATCH_409,
    deadline: marker::TASK_SUSPEND,
};

fn res(status: u16) -> TaskSuspendRes {
    TaskSuspendRes {
        status,
        preload: Vec::new(),
    }
}

/// `taskSuspend`.
pub fn task_suspend(m: &mut Machine, req: &TaskSuspendReq, now: Time) -> TaskSuspendRes {
    let t = match check(m, &req.id, req.version, TaskState::Acquired, &FAILURES, now) {
        Ok((t, _)) => t,
        Err(status) => return res(status),
    };
    // Whether some awaited promise is settled, and whether some is pending
    // past its deadline: either makes the 300, each has its marker.
    let (mut settled, mut expired, mut not_live) = (false, false, 0);
    // The one promise every not-live action names, unless they name
    // several (`None` while none is not live).
    let (mut lone, mut several) = (None::<&str>, false);
    for action in &req.actions {
        let live = match m.state.get_promise(&action.awaited) {
            None => {
                m.hits.push(TASK_SUSPEND_AWAITED_NOT_FOUND_422);
                return res(422);
            }
            Some(pa) if pa.state != PromiseState::Pending => {
                settled = true;
                false
            }
            Some(pa) => {
                let live = pa.timeout_at > now;
                expired |= !live;
                live
            }
        };
        if !live {
            not_live += 1;
            several |= lone.is_some_and(|id| id != action.awaited);
            lone = Some(&action.awaited);
        }
    }
    marker::SUSPEND_ACTIONS.record(&mut m.marks, req.actions.len(), not_live);
    // An awaited deadline's instant decides the answer only where no other
    // awaited promise is settled or expired (else the 300 comes either
    // way): a live one while none is not live, an expired one while every
    // not-live action names it (listed twice, both flip together). Marked
    // there alone, as the guard marks its deadline.
    if !several {
        for action in &req.actions {
            if let Some(pa) = m.state.get_promise(&action.awaited) {
                if pa.state == PromiseState::Pending && lone.is_none_or(|id| id == pa.id) {
                    marker::TASK_SUSPEND_AWAITED.record(&mut m.marks, pa.timeout_at, now);
                }
            }
        }
    }
    if settled || expired {
        m.hits.push(TASK_SUSPEND_ALREADY_SETTLED_300);
        if settled {
            m.hits.push(TASK_SUSPEND_ALREADY_SETTLED_300_SETTLED);
        }
        if expired {
            m.hits.push(TASK_SUSPEND_ALREADY_SETTLED_300_EXPIRED);
        }
        m.state.set_task(TaskObject {
            resumes: Vec::new(),
            ..t
        });
        return res(300);
    }
    m.hits.push(TASK_SUSPEND_SUSPENDED_200);
    for action in &req.actions {
        if let Some(pa) = m.state.get_promise(&action.awaited) {
            let mut pa = pa.clone();
            pa.add_callback(&req.id);
            m.state.set_promise(pa);
        }
    }
    let id = t.id.clone();
    m.state.set_task(TaskObject {
        state: TaskState::Suspended,
        pid: None,
        ttl: None,
        resumes: Vec::new(),
        ..t
    });
    m.state.del_task_timeout(&id);
    res(200)
}
