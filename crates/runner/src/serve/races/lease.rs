//! The lease: what a holder does while the task may be taken from it
//! (`task.heartbeat`, `task.fence`, `task.release`).

use deviate::families::witness::*;
use model::api::{Request, TaskFenceAction, TaskFenceReq};
use model::types::PromiseState;

use super::{create_req, create_with, Race, Witness};

/// The lease `task.create` gives in these witnesses: it runs out at
/// `T0 + LEASE_MS`.
const LEASE_MS: u64 = 10;

/// `task.fence` of `a` at version 1 around a create of `a.1` with `data`.
fn fence_create(data: &str) -> Request {
    Request::TaskFence(TaskFenceReq {
        id: "a".into(),
        version: 1,
        action: TaskFenceAction::Create(create_req("a.1", data)),
    })
}

/// Every race of this family.
pub const ALL: &[Race] = &[
    Race {
        name: "race-task.heartbeat",
        kind: "task.heartbeat",
        spec: "spec/02-actions/T-05-task.heartbeat.lean:11",
        summary: "a heartbeat checks the lease held, then re-arms it over the tick that just expired it: a pending task left with a lease timeout and no retry",
        witness: || Witness {
            prefix: vec![at(T0, task_create("a", "p1", LEASE_MS, LATER))],
            concurrent: vec![
                at(T0 + LEASE_MS, heartbeat("p1", &[("a", 1)])),
                tick(T0 + LEASE_MS),
            ],
        },
    },
    Race {
        name: "race-task.fence",
        kind: "task.fence",
        spec: "spec/02-actions/T-04-task.fence.lean:15",
        summary: "a fence checks the lease and runs its inner create on a state a racing create of the same promise has not reached yet: both answer as the promise's creator",
        witness: || Witness {
            prefix: vec![at(T0, task_create("a", "p1", 60_000, LATER))],
            concurrent: vec![at(T0, fence_create("1")), at(T0, create_with("a.1", "2"))],
        },
    },
    Race {
        name: "race-task.release",
        kind: "task.release",
        spec: "spec/02-actions/T-08-task.release.lean:15",
        summary: "a release checks the task acquired, then writes it pending over a racing fulfill: both succeed, and the task of a settled promise is pending again, dispatched anew",
        witness: || Witness {
            prefix: vec![at(T0, task_create("a", "p1", 60_000, LATER))],
            concurrent: vec![
                at(T0, release("a", 1)),
                at(T0, fulfill("a", 1, PromiseState::Resolved)),
            ],
        },
    },
];
