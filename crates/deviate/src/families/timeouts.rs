//! The four timeout transitions of `02-timeouts.lean`.

use crate::Deviation;

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[];
