//! Schedules: `schedule.*` (S-01 … S-04) and the schedule timeout / catch-up.

use crate::Deviation;

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[];
