//! `enqueueResume`: `spec/02-actions/00-resume.lean`, the settlement cascade.
//!
//! A suspended awaiter returns to pending with `resumes := [awaited]`, a
//! retry timeout, and an `execute` at its current version (a wake-up hint,
//! not a new fencing token) sent to its promise's target when that is a
//! non-empty string. A pending, acquired or halted awaiter buffers the
//! resume, deduplicated. A fulfilled or absent awaiter is left alone.

use crate::branch::*;
use crate::machine::Machine;
use crate::state::{Message, TaskObject, RETRY};
use crate::types::{TaskState, Time};

/// `enqueueResume awaitedId awaiterId now`.
pub fn enqueue_resume(m: &mut Machine, awaited: &str, awaiter: &str, now: Time) {
    let retry_timeout = m.retry_timeout();
    let Some(t) = m.state.get_task(awaiter) else {
        m.hits.push(RESUME_NO_TASK);
        return;
    };
    match t.state {
        TaskState::Suspended => {
            m.hits.push(RESUME_SUSPENDED_RESUMED);
            let t = TaskObject {
                state: TaskState::Pending,
                resumes: vec![awaited.to_string()],
                ..t.clone()
            };
            let (id, version) = (t.id.clone(), t.version);
            m.state.set_task(t);
            m.state
                .set_task_timeout(&id, RETRY, now.saturating_add(retry_timeout));
            let target = match m.state.get_promise(awaiter) {
                None => {
                    m.hits.push(RESUME_SUSPENDED_NO_PROMISE);
                    return;
                }
                Some(p) => p.target().to_string(),
            };
            if target.is_empty() {
                m.hits.push(RESUME_SUSPENDED_NO_TARGET);
            } else {
                m.hits.push(RESUME_SUSPENDED_EXECUTE_SENT);
                m.state.set_message(
                    &target,
                    Message::Execute {
                        task_id: id,
                        version,
                    },
                );
            }
        }
        TaskState::Pending | TaskState::Acquired | TaskState::Halted => {
            if t.resumes.iter().any(|r| r == awaited) {
                m.hits.push(RESUME_ALREADY_BUFFERED);
            } else {
                m.hits.push(RESUME_BUFFERED);
                let mut t = t.clone();
                t.resumes.push(awaited.to_string());
                m.state.set_task(t);
            }
        }
        TaskState::Fulfilled => m.hits.push(RESUME_FULFILLED_IGNORED),
    }
}
