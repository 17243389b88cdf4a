//! Promises: `promise.get`, `promise.create`, `promise.settle`, `promise.register_callback`, `promise.register_listener` (P-01 … P-05) and the three settlement sites.

use crate::Deviation;

/// Every deviation of this family.
pub const ALL: &[Deviation] = &[];
