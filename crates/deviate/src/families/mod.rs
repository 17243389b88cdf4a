//! One file per family of deviations (a handler area of the spec). Each
//! exports `ALL`, its entries grouped by handler in the Lean's line order,
//! and opens with a table of them. `witness` holds the
//! constructors the witness traces are written with, `effects` the small
//! reads and patches the hooks share.

pub mod deadline;
pub mod loop_mix;
pub mod promise;
pub mod schedule;
pub mod schedule_stub;
pub mod suspend_redirect;
pub mod task_claim;
pub mod task_halt;
pub mod task_lease;
pub mod task_suspend;
pub mod task_version;
pub mod timeouts;

pub(crate) mod effects;
pub mod witness;
