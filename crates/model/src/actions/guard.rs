//! The validation spine shared by T-03, T-04, T-06, T-07 and T-08, in the
//! Lean's order: task exists (404), its promise exists (409), the task is in
//! the required state (409), the promise is pending and unexpired (409), the
//! version matches (409). A promise that is not live is followed by its
//! reason, `settled` before `expired` as the Lean's disjunction reads.

use crate::branch::Branch;
use crate::machine::Machine;
use crate::marker::Boundary;
use crate::state::{PromiseObject, TaskObject};
use crate::types::{PromiseState, TaskState, Time};

/// The branch names of one handler's five guard failures, and the two
/// reasons of the fourth.
pub(crate) struct Failures {
    pub task_not_found_404: Branch,
    pub promise_not_found_409: Branch,
    pub wrong_state_409: Branch,
    pub promise_not_live_409: Branch,
    pub promise_not_live_409_why: NotLive,
    pub version_mismatch_409: Branch,
    /// The boundary markers of the promise's `timeoutAt ≤ now`.
    pub deadline: Boundary,
}

/// The reason markers of a branch taken because a promise is not live
/// (`p.state != .pending ∨ p.timeoutAt ≤ now`).
pub(crate) struct NotLive {
    /// The promise is settled (`state != .pending`).
    pub settled: Branch,
    /// The promise is pending past its deadline (`timeoutAt ≤ now`).
    pub expired: Branch,
}

impl NotLive {
    /// The reason `p`, known not live, is not: the first true disjunct.
    pub(crate) fn of(&self, p: &PromiseObject) -> Branch {
        if p.state != PromiseState::Pending {
            self.settled
        } else {
            self.expired
        }
    }
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
    // The deadline's instant is marked only where it decides the answer:
    // with a stale version the 409 comes either way, so an off-by-one at
    // the deadline would go unseen there.
    if t.state == required && p.state == PromiseState::Pending && t.version == version {
        f.deadline.record(&mut m.marks, p.timeout_at, now);
    }
    let failure = if t.state != required {
        Some(f.wrong_state_409)
    } else if !p.is_live(now) {
        m.hits.push(f.promise_not_live_409);
        Some(f.promise_not_live_409_why.of(p))
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
