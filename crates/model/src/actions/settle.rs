//! The settlement sequence shared, word for word, by P-03 `promise.settle`,
//! T-07 `task.fulfill` and `onPromiseTimeout` (the Lean inlines it at each
//! site): write the settled promise with callbacks and listeners cleared,
//! disarm its timeout, fulfill its task, scrub its id from pending promises'
//! callbacks, `unblock` every listener, resume every awaiter.

use crate::actions::resume::enqueue_resume;
use crate::machine::Machine;
use crate::marker::Settlement;
use crate::state::{Message, PromiseObject, TaskObject};
use crate::types::{PromiseRecord, TaskState, Time};

/// Write `p` (already carrying its settled state, value and `settledAt`,
/// and still its callbacks and listeners) and run the cascade. Returns the
/// settled record and whether the promise had a task (which is now fulfilled).
pub(crate) fn settle(
    m: &mut Machine,
    mut p: PromiseObject,
    now: Time,
    site: &Settlement,
) -> (PromiseRecord, bool) {
    let listeners = std::mem::take(&mut p.listeners);
    let callbacks = std::mem::take(&mut p.callbacks);
    let record = p.to_record();
    let id = p.id.clone();
    m.state.set_promise(p);
    m.state.del_promise_timeout(&id);
    let had_task = fulfill_task(m, &id);
    m.state.scrub_callbacks(&id);
    for address in &listeners {
        m.state.set_message(
            address,
            Message::Unblock {
                promise: record.clone(),
            },
        );
    }
    // The loop shapes, read as the loops run: each awaiter's task state is
    // read before its resume changes it, which the cascade reads anyway.
    site.listeners.record(&mut m.marks, listeners.len());
    let mut resumed = 0;
    for awaiter in &callbacks {
        if m.state.get_task(awaiter).map(|t| t.state) == Some(TaskState::Suspended) {
            resumed += 1;
        }
        enqueue_resume(m, &id, awaiter, now);
    }
    site.awaiters.record(&mut m.marks, callbacks.len(), resumed);
    (record, had_task)
}

/// `setTask { t with state := .fulfilled, pid := none, ttl := none, resumes := [] }`
/// and `delTaskTimeout`, when the task exists.
fn fulfill_task(m: &mut Machine, id: &str) -> bool {
    let Some(t) = m.state.get_task(id) else {
        return false;
    };
    let t = TaskObject {
        state: TaskState::Fulfilled,
        pid: None,
        ttl: None,
        resumes: Vec::new(),
        ..t.clone()
    };
    m.state.set_task(t);
    m.state.del_task_timeout(id);
    true
}
