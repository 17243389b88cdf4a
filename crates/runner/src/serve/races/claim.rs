//! Claims: two workers taking one task or one promise at once
//! (`task.acquire`, `task.create`, `promise.create`).

use deviate::families::witness::*;

use super::{create_with, Race, Witness};

/// Every race of this family.
pub const ALL: &[Race] = &[
    Race {
        name: "race-task.acquire",
        kind: "task.acquire",
        spec: "spec/02-actions/T-03-task.acquire.lean:14",
        summary: "two acquires of one pending task both pass the pending check and both win: two workers hold one task at one version",
        witness: || Witness {
            prefix: vec![at(T0, create("a", LATER, target()))],
            concurrent: vec![
                at(T0, acquire("a", 0, "p1", 60_000)),
                at(T0, acquire("a", 0, "p2", 60_000)),
            ],
        },
    },
    Race {
        name: "race-task.create",
        kind: "task.create",
        spec: "spec/02-actions/T-02-task.create.lean:7",
        summary: "two task.creates of one new id both find no promise and both claim the task, each answered as its holder",
        witness: || Witness {
            prefix: vec![],
            concurrent: vec![
                at(T0, task_create("a", "p1", 60_000, LATER)),
                at(T0, task_create("a", "p2", 60_000, LATER)),
            ],
        },
    },
    Race {
        name: "race-promise.create",
        kind: "promise.create",
        spec: "spec/02-actions/P-02-promise.create.lean:7",
        summary: "two creates of one new promise with different params both find it absent: both answer with their own param, one is lost",
        witness: || Witness {
            prefix: vec![],
            concurrent: vec![at(T0, create_with("a", "1")), at(T0, create_with("a", "2"))],
        },
    },
];
