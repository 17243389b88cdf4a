//! T-09 `task.halt`: `spec/02-actions/T-09-task.halt.lean`.
//! An administrative override: no version check, no promise lookup;
//! idempotent on a halted task, 409 on a fulfilled one. Halting keeps the
//! version and the resumes, drops the lease and every task timeout.

use crate::api::TaskHaltReq;
use crate::branch::*;
use crate::machine::Machine;
use crate::state::TaskObject;
use crate::types::{TaskState, Time};

/// `taskHalt`.
pub fn task_halt(m: &mut Machine, req: &TaskHaltReq, _now: Time) -> u16 {
    let Some(t) = m.state.get_task(&req.id) else {
        m.hits.push(TASK_HALT_NOT_FOUND_404);
        return 404;
    };
    match t.state {
        TaskState::Fulfilled => {
            m.hits.push(TASK_HALT_FULFILLED_409);
            409
        }
        TaskState::Halted => {
            m.hits.push(TASK_HALT_ALREADY_HALTED_200);
            200
        }
        _ => {
            m.hits.push(TASK_HALT_HALTED_200);
            let t = TaskObject {
                state: TaskState::Halted,
                pid: None,
                ttl: None,
                ..t.clone()
            };
            let id = t.id.clone();
            m.state.set_task(t);
            m.state.del_task_timeout(&id);
            200
        }
    }
}
