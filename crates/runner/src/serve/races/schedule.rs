//! Schedules: a delete, and the tick that fires them
//! (`schedule.delete`, the tick's `onScheduleTimeout`).

use deviate::families::witness::*;

use super::{Race, Witness, TICK};

/// Every race of this family.
pub const ALL: &[Race] = &[
    Race {
        name: "race-schedule.delete",
        kind: "schedule.delete",
        spec: "spec/02-actions/S-03-schedule.delete.lean:6",
        summary: "two deletes of one schedule both find it: both answer 200 where one must answer 404",
        witness: || Witness {
            prefix: vec![at(T0, schedule("s1", EVERY_MINUTE))],
            concurrent: vec![at(T0, schedule_delete("s1")), at(T0, schedule_delete("s1"))],
        },
    },
    Race {
        name: "race-tick",
        kind: TICK,
        spec: "spec/02-actions/02-timeouts.lean:88",
        summary: "a tick fires a schedule, then writes it back re-armed over a delete that raced it: the deleted schedule lives on",
        witness: || Witness {
            prefix: vec![at(T0, schedule("s1", EVERY_MINUTE))],
            concurrent: vec![tick(M1), at(M1, schedule_delete("s1"))],
        },
    },
];
