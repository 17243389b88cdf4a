//! Halting and continuing: `task.halt` (T-09), `task.continue` (T-10).

use crate::Deviation;

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[];
