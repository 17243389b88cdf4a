//! The handlers of `spec/02-actions/`, one module per Lean file, each
//! named after the handler it implements and written in the Lean's branch
//! order. `resume` and `timeouts` are the internal transitions.

pub mod guard;
pub mod promise_create;
pub mod promise_get;
pub mod promise_register_callback;
pub mod promise_register_listener;
pub mod promise_search;
pub mod promise_settle;
pub mod resume;
pub mod schedule_create;
pub mod schedule_delete;
pub mod schedule_get;
pub mod schedule_search;
pub mod settle;
pub mod task_acquire;
pub mod task_continue;
pub mod task_create;
pub mod task_fence;
pub mod task_fulfill;
pub mod task_get;
pub mod task_halt;
pub mod task_heartbeat;
pub mod task_release;
pub mod task_search;
pub mod task_suspend;
pub mod timeouts;
