//! Settlement and its registrations: a settle, a suspend and a callback
//! each read a promise and write it back whole (`promise.settle`,
//! `task.suspend`, `promise.register_callback`).

use deviate::families::witness::*;
use model::types::PromiseState;

use super::{Race, Witness};

/// A task `a` held by `p1` at version 1, and the internal promise `a.1`
/// it is about to await.
fn holding_a_awaiting_a1() -> Vec<gen::Step> {
    vec![
        at(T0, task_create("a", "p1", 60_000, LATER)),
        at(T0, create("a.1", LATER, none())),
    ]
}

/// `a` suspends on `a.1`.
fn suspend_on_a1() -> gen::Step {
    at(T0, suspend("a", 1, &["a.1"]))
}

/// `a.1` is settled.
fn settle_a1() -> gen::Step {
    at(T0, settle("a.1", PromiseState::Resolved))
}

/// Every race of this family.
pub const ALL: &[Race] = &[
    Race {
        name: "race-promise.settle",
        kind: "promise.settle",
        spec: "spec/02-actions/P-03-promise.settle.lean:10",
        summary: "a settle reads the promise's callbacks before a racing suspend registers one and writes the promise back without it: the task stays suspended on a settled promise, never resumed",
        witness: || Witness {
            prefix: holding_a_awaiting_a1(),
            concurrent: vec![settle_a1(), suspend_on_a1()],
        },
    },
    Race {
        name: "race-task.suspend",
        kind: "task.suspend",
        spec: "spec/02-actions/T-06-task.suspend.lean:23",
        summary: "a suspend checks its awaited promise pending, then writes it back with its callback over a settlement that raced it: the acknowledged settlement is undone",
        witness: || Witness {
            prefix: holding_a_awaiting_a1(),
            concurrent: vec![suspend_on_a1(), settle_a1()],
        },
    },
    Race {
        name: "race-promise.register_callback",
        kind: "promise.register_callback",
        spec: "spec/02-actions/P-04-promise.register_callback.lean:18",
        summary: "two callbacks registered at once on one promise each write it back with only their own: one awaiter is never resumed",
        witness: || Witness {
            prefix: vec![
                at(T0, create("a", LATER, target())),
                at(T0, create("a.2", LATER, target())),
                at(T0, create("a.1", LATER, none())),
            ],
            concurrent: vec![at(T0, callback("a.1", "a")), at(T0, callback("a.1", "a.2"))],
        },
    },
];
