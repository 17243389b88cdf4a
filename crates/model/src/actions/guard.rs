//! The validation spine shared by T-03, T-04, T-06, T-07 and T-08, in the
//! Lean's order: task exists (404), its promise exists (409), the task is in
//! the required state (409), the promise is pending and unexpired (409), the
//! version matches (409).

use crate::branch::Branch;
use crate::machine::Machine;
use crate::state::{PromiseObject, TaskObject};
use crate::types::{TaskState, Time};

/// The branch names of one handler's five guard failures.
pub(crate) struct Failures {
    pub task_not_found_404: Branch,
    pub promise_not_found_409: Branch,
    pub wrong_state_409: Branch,
    pub promise_not_live_409: Branch,
    pub version_mismatch_409: Branch,
}

/// Run the spine; on success return clones of the task and its promise, on
/// failure record the branch and return the status.
pub(crate) fn check(
    m: &mut Machine,
    id: &str,
    version: u64,
    required: TaskState,
    f: &Failures,
    now: Time,
) -> Result<(TaskObject, PromiseObject), u16> {
    let Some(t) = m.state.get_task(id) else {
        m.hits.push(f.task_not_found_404);
        return Err(404);
    };
    let Some(p) = m.state.get_promise(&t.id) else {
        m.hits.push(f.promise_not_found_409);
        return Err(409);
    };
    let failure = if t.state != required {
        Some(f.wrong_state_409)
    } else if !p.is_live(now) {
        Some(f.promise_not_live_409)
    } else if t.version != version {
        Some(f.version_mismatch_409)
    } else {
        None
    };
    if let Some(b) = failure {
        m.hits.push(b);
        return Err(409);
    }
    Ok((t.clone(), p.clone()))
}
