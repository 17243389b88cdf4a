//! One file per family of deviations (a handler area of the spec). Each
//! exports `ALL`, its entries in the order of the Lean files they touch.

pub mod promise;
pub mod schedule;
pub mod task_claim;
pub mod task_halt;
pub mod task_lease;
pub mod task_suspend;
pub mod timeouts;

pub(crate) mod witness;
