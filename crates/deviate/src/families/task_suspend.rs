//! Suspending and resuming: `task.suspend` (T-06) and the resume cascade (`00-resume.lean`).

use crate::Deviation;

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[];
