//! T-10 `task.continue`: `spec/02-actions/T-10-task.continue.lean`.
//! Halted → pending with the version kept: a retry timeout is armed and
//! `execute` re-sent. The promise is looked up only after the state check,
//! and its absence is 404 (not 409 as in the spine).

use crate::api::TaskContinueReq;
use crate::branch::*;
use crate::machine::Machine;
use crate::state::{Message, TaskObject, RETRY};
use crate::types::{TaskState, Time};

/// `taskContinue`.
pub fn task_continue(m: &mut Machine, req: &TaskContinueReq, now: Time) -> u16 {
    let retry_timeout = m.retry_timeout();
    let Some(t) = m.state.get_task(&req.id) else {
        m.hits.push(TASK_CONTINUE_NOT_FOUND_404);
        return 404;
    };
    if t.state != TaskState::Halted {
        m.hits.push(TASK_CONTINUE_NOT_HALTED_409);
        return 409;
    }
    let Some(p) = m.state.get_promise(&t.id) else {
        m.hits.push(TASK_CONTINUE_PROMISE_NOT_FOUND_404);
        return 404;
    };
    m.hits.push(TASK_CONTINUE_CONTINUED_200);
    let target = p.target().to_string();
    let t = TaskObject {
        state: TaskState::Pending,
        ..t.clone()
    };
    let (id, version) = (t.id.clone(), t.version);
    m.state.set_task(t);
    m.state
        .set_task_timeout(&id, RETRY, now.saturating_add(retry_timeout));
    m.state.set_message(
        &target,
        Message::Execute {
            task_id: id,
            version,
        },
    );
    200
}
