//! Holding a task: `task.heartbeat` (T-05), `task.fulfill` (T-07), `task.release` (T-08).

use crate::Deviation;

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[];
