//! Names for every branch of every handler and internal transition.
//!
//! A branch is a `return` or an effect-bearing path of the Lean, named
//! `handler/branch` (e.g. `task.acquire/version_mismatch_409`). Handlers
//! record the branches a step takes; the runner reports coverage from them,
//! and each has a unit test named after it (`task_acquire__version_mismatch_409`).
//!
//! Where the Lean's guard is a conjunction or a disjunction, the branch is
//! followed by a marker naming the reason that decided it, evaluated in the
//! Lean's order (`handler/branch/reason`): the first false conjunct
//! (`task.heartbeat/ref_not_held_skipped/pid`), or why a promise is not
//! live, `settled` (state ≠ pending) before `expired` (timeoutAt ≤ now).
//! The marker is recorded in addition to, right after, its branch, so a
//! scenario that takes one reason cannot stand in for another.

use std::fmt;

/// One branch of one handler or transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Branch(pub &'static str);

impl Branch {
    /// The branch's name, `handler/branch`.
    pub fn name(self) -> &'static str {
        self.0
    }

    /// The name as a unit-test identifier: `task.acquire/version_mismatch_409`
    /// → `task_acquire__version_mismatch_409`.
    pub fn test_name(self) -> String {
        self.0.replace('/', "__").replace(['.', '-'], "_")
    }

    /// Whether a sequence of well-formed wire requests and ticks can take
    /// this branch or reach this marker (see [`UNREACHABLE`] and
    /// [`crate::marker::UNREACHABLE`]).
    pub fn reachable(self) -> bool {
        !UNREACHABLE.contains(&self) && !crate::marker::UNREACHABLE.iter().any(|(m, _)| *m == self)
    }
}

impl fmt::Display for Branch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

macro_rules! branches {
    ($($c:ident = $name:literal;)*) => {
        $(#[doc = $name] pub const $c: Branch = Branch($name);)*
        /// Every branch, in spec order.
        pub const ALL: &[Branch] = &[$($c),*];
    };
}

branches! {
    // P-01
    PROMISE_GET_NOT_FOUND_404 = "promise.get/not_found_404";
    PROMISE_GET_PENDING_EXPIRED_PROJECTED_200 = "promise.get/pending_expired_projected_200";
    PROMISE_GET_PENDING_200 = "promise.get/pending_200";
    PROMISE_GET_SETTLED_200 = "promise.get/settled_200";
    // P-02
    PROMISE_CREATE_NEW_PENDING_200 = "promise.create/new_pending_200";
    PROMISE_CREATE_NEW_EXTERNAL_TIMEOUT_ARMED = "promise.create/new_external_timeout_armed";
    PROMISE_CREATE_NEW_NO_TARGET_200 = "promise.create/new_no_target_200";
    PROMISE_CREATE_NEW_TARGET_200 = "promise.create/new_target_200";
    PROMISE_CREATE_NEW_TARGET_DELAYED_200 = "promise.create/new_target_delayed_200";
    PROMISE_CREATE_NEW_TARGET_DELAY_ELAPSED_200 = "promise.create/new_target_delay_elapsed_200";
    PROMISE_CREATE_NEW_EXPIRED_200 = "promise.create/new_expired_200";
    PROMISE_CREATE_NEW_EXPIRED_TARGET_200 = "promise.create/new_expired_target_200";
    PROMISE_CREATE_EXISTS_PENDING_EXPIRED_PROJECTED_200 = "promise.create/exists_pending_expired_projected_200";
    PROMISE_CREATE_EXISTS_200 = "promise.create/exists_200";
    // P-03
    PROMISE_SETTLE_NOT_FOUND_404 = "promise.settle/not_found_404";
    PROMISE_SETTLE_SETTLED_200 = "promise.settle/settled_200";
    PROMISE_SETTLE_SETTLED_WITH_TASK = "promise.settle/settled_with_task";
    PROMISE_SETTLE_SETTLED_WITHOUT_TASK = "promise.settle/settled_without_task";
    PROMISE_SETTLE_PENDING_EXPIRED_PROJECTED_200 = "promise.settle/pending_expired_projected_200";
    PROMISE_SETTLE_ALREADY_SETTLED_200 = "promise.settle/already_settled_200";
    // P-04
    PROMISE_REGISTER_CALLBACK_AWAITED_NOT_FOUND_404 = "promise.register_callback/awaited_not_found_404";
    PROMISE_REGISTER_CALLBACK_AWAITER_NOT_FOUND_422 = "promise.register_callback/awaiter_not_found_422";
    PROMISE_REGISTER_CALLBACK_AWAITER_NO_TARGET_422 = "promise.register_callback/awaiter_no_target_422";
    PROMISE_REGISTER_CALLBACK_REGISTERED_200 = "promise.register_callback/registered_200";
    PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200 = "promise.register_callback/awaiter_not_live_200";
    PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200_SETTLED = "promise.register_callback/awaiter_not_live_200/settled";
    PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200_EXPIRED = "promise.register_callback/awaiter_not_live_200/expired";
    PROMISE_REGISTER_CALLBACK_AWAITED_EXPIRED_PROJECTED_200 = "promise.register_callback/awaited_expired_projected_200";
    PROMISE_REGISTER_CALLBACK_AWAITED_SETTLED_200 = "promise.register_callback/awaited_settled_200";
    // P-05
    PROMISE_REGISTER_LISTENER_NOT_FOUND_404 = "promise.register_listener/not_found_404";
    PROMISE_REGISTER_LISTENER_REGISTERED_200 = "promise.register_listener/registered_200";
    PROMISE_REGISTER_LISTENER_EXPIRED_PROJECTED_200 = "promise.register_listener/expired_projected_200";
    PROMISE_REGISTER_LISTENER_SETTLED_200 = "promise.register_listener/settled_200";
    // P-06
    PROMISE_SEARCH_NOT_IMPLEMENTED_501 = "promise.search/not_implemented_501";
    // T-01
    TASK_GET_TASK_NOT_FOUND_404 = "task.get/task_not_found_404";
    TASK_GET_PROMISE_NOT_FOUND_404 = "task.get/promise_not_found_404";
    TASK_GET_LIVE_200 = "task.get/live_200";
    TASK_GET_PROJECTED_FULFILLED_200 = "task.get/projected_fulfilled_200";
    TASK_GET_PROJECTED_FULFILLED_200_SETTLED = "task.get/projected_fulfilled_200/settled";
    TASK_GET_PROJECTED_FULFILLED_200_EXPIRED = "task.get/projected_fulfilled_200/expired";
    // T-02
    TASK_CREATE_NEW_ACQUIRED_200 = "task.create/new_acquired_200";
    TASK_CREATE_NEW_EXPIRED_FULFILLED_200 = "task.create/new_expired_fulfilled_200";
    TASK_CREATE_EXISTS_NO_TARGET_422 = "task.create/exists_no_target_422";
    TASK_CREATE_EXISTS_FULFILLED_200 = "task.create/exists_fulfilled_200";
    TASK_CREATE_EXISTS_PENDING_REACQUIRED_200 = "task.create/exists_pending_reacquired_200";
    TASK_CREATE_EXISTS_BUSY_409 = "task.create/exists_busy_409";
    TASK_CREATE_EXISTS_NO_TASK_409 = "task.create/exists_no_task_409";
    // T-03
    TASK_ACQUIRE_TASK_NOT_FOUND_404 = "task.acquire/task_not_found_404";
    TASK_ACQUIRE_PROMISE_NOT_FOUND_409 = "task.acquire/promise_not_found_409";
    TASK_ACQUIRE_NOT_PENDING_409 = "task.acquire/not_pending_409";
    TASK_ACQUIRE_PROMISE_NOT_LIVE_409 = "task.acquire/promise_not_live_409";
    TASK_ACQUIRE_PROMISE_NOT_LIVE_409_SETTLED = "task.acquire/promise_not_live_409/settled";
    TASK_ACQUIRE_PROMISE_NOT_LIVE_409_EXPIRED = "task.acquire/promise_not_live_409/expired";
    TASK_ACQUIRE_VERSION_MISMATCH_409 = "task.acquire/version_mismatch_409";
    TASK_ACQUIRE_ACQUIRED_200 = "task.acquire/acquired_200";
    // T-04
    TASK_FENCE_TASK_NOT_FOUND_404 = "task.fence/task_not_found_404";
    TASK_FENCE_PROMISE_NOT_FOUND_409 = "task.fence/promise_not_found_409";
    TASK_FENCE_NOT_ACQUIRED_409 = "task.fence/not_acquired_409";
    TASK_FENCE_PROMISE_NOT_LIVE_409 = "task.fence/promise_not_live_409";
    TASK_FENCE_PROMISE_NOT_LIVE_409_SETTLED = "task.fence/promise_not_live_409/settled";
    TASK_FENCE_PROMISE_NOT_LIVE_409_EXPIRED = "task.fence/promise_not_live_409/expired";
    TASK_FENCE_VERSION_MISMATCH_409 = "task.fence/version_mismatch_409";
    TASK_FENCE_CREATE_200 = "task.fence/create_200";
    TASK_FENCE_SETTLE_200 = "task.fence/settle_200";
    // T-05
    TASK_HEARTBEAT_OK_200 = "task.heartbeat/ok_200";
    TASK_HEARTBEAT_REF_TASK_NOT_FOUND_SKIPPED = "task.heartbeat/ref_task_not_found_skipped";
    TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED = "task.heartbeat/ref_not_held_skipped";
    TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_NOT_ACQUIRED = "task.heartbeat/ref_not_held_skipped/not_acquired";
    TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_VERSION = "task.heartbeat/ref_not_held_skipped/version";
    TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_PID = "task.heartbeat/ref_not_held_skipped/pid";
    TASK_HEARTBEAT_REF_PROMISE_NOT_FOUND_SKIPPED = "task.heartbeat/ref_promise_not_found_skipped";
    TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED = "task.heartbeat/ref_promise_not_live_skipped";
    TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED_SETTLED = "task.heartbeat/ref_promise_not_live_skipped/settled";
    TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED_EXPIRED = "task.heartbeat/ref_promise_not_live_skipped/expired";
    TASK_HEARTBEAT_REF_REFRESHED = "task.heartbeat/ref_refreshed";
    // T-06
    TASK_SUSPEND_TASK_NOT_FOUND_404 = "task.suspend/task_not_found_404";
    TASK_SUSPEND_PROMISE_NOT_FOUND_409 = "task.suspend/promise_not_found_409";
    TASK_SUSPEND_NOT_ACQUIRED_409 = "task.suspend/not_acquired_409";
    TASK_SUSPEND_PROMISE_NOT_LIVE_409 = "task.suspend/promise_not_live_409";
    TASK_SUSPEND_PROMISE_NOT_LIVE_409_SETTLED = "task.suspend/promise_not_live_409/settled";
    TASK_SUSPEND_PROMISE_NOT_LIVE_409_EXPIRED = "task.suspend/promise_not_live_409/expired";
    TASK_SUSPEND_VERSION_MISMATCH_409 = "task.suspend/version_mismatch_409";
    TASK_SUSPEND_AWAITED_NOT_FOUND_422 = "task.suspend/awaited_not_found_422";
    TASK_SUSPEND_ALREADY_SETTLED_300 = "task.suspend/already_settled_300";
    TASK_SUSPEND_ALREADY_SETTLED_300_SETTLED = "task.suspend/already_settled_300/settled";
    TASK_SUSPEND_ALREADY_SETTLED_300_EXPIRED = "task.suspend/already_settled_300/expired";
    TASK_SUSPEND_SUSPENDED_200 = "task.suspend/suspended_200";
    // T-07
    TASK_FULFILL_TASK_NOT_FOUND_404 = "task.fulfill/task_not_found_404";
    TASK_FULFILL_PROMISE_NOT_FOUND_409 = "task.fulfill/promise_not_found_409";
    TASK_FULFILL_NOT_ACQUIRED_409 = "task.fulfill/not_acquired_409";
    TASK_FULFILL_PROMISE_NOT_LIVE_409 = "task.fulfill/promise_not_live_409";
    TASK_FULFILL_PROMISE_NOT_LIVE_409_SETTLED = "task.fulfill/promise_not_live_409/settled";
    TASK_FULFILL_PROMISE_NOT_LIVE_409_EXPIRED = "task.fulfill/promise_not_live_409/expired";
    TASK_FULFILL_VERSION_MISMATCH_409 = "task.fulfill/version_mismatch_409";
    TASK_FULFILL_FULFILLED_200 = "task.fulfill/fulfilled_200";
    // T-08
    TASK_RELEASE_TASK_NOT_FOUND_404 = "task.release/task_not_found_404";
    TASK_RELEASE_PROMISE_NOT_FOUND_409 = "task.release/promise_not_found_409";
    TASK_RELEASE_NOT_ACQUIRED_409 = "task.release/not_acquired_409";
    TASK_RELEASE_PROMISE_NOT_LIVE_409 = "task.release/promise_not_live_409";
    TASK_RELEASE_PROMISE_NOT_LIVE_409_SETTLED = "task.release/promise_not_live_409/settled";
    TASK_RELEASE_PROMISE_NOT_LIVE_409_EXPIRED = "task.release/promise_not_live_409/expired";
    TASK_RELEASE_VERSION_MISMATCH_409 = "task.release/version_mismatch_409";
    TASK_RELEASE_RELEASED_200 = "task.release/released_200";
    // T-09
    TASK_HALT_NOT_FOUND_404 = "task.halt/not_found_404";
    TASK_HALT_FULFILLED_409 = "task.halt/fulfilled_409";
    TASK_HALT_ALREADY_HALTED_200 = "task.halt/already_halted_200";
    TASK_HALT_HALTED_200 = "task.halt/halted_200";
    // T-10
    TASK_CONTINUE_NOT_FOUND_404 = "task.continue/not_found_404";
    TASK_CONTINUE_NOT_HALTED_409 = "task.continue/not_halted_409";
    TASK_CONTINUE_PROMISE_NOT_FOUND_404 = "task.continue/promise_not_found_404";
    TASK_CONTINUE_CONTINUED_200 = "task.continue/continued_200";
    // T-11
    TASK_SEARCH_NOT_IMPLEMENTED_501 = "task.search/not_implemented_501";
    // S-01
    SCHEDULE_GET_NOT_FOUND_404 = "schedule.get/not_found_404";
    SCHEDULE_GET_FOUND_200 = "schedule.get/found_200";
    // S-02
    SCHEDULE_CREATE_EXISTS_200 = "schedule.create/exists_200";
    SCHEDULE_CREATE_CREATED_200 = "schedule.create/created_200";
    // S-03
    SCHEDULE_DELETE_NOT_FOUND_404 = "schedule.delete/not_found_404";
    SCHEDULE_DELETE_DELETED_200 = "schedule.delete/deleted_200";
    // S-04
    SCHEDULE_SEARCH_NOT_IMPLEMENTED_501 = "schedule.search/not_implemented_501";
    // 00-resume
    RESUME_NO_TASK = "resume/no_task";
    RESUME_SUSPENDED_RESUMED = "resume/suspended_resumed";
    RESUME_SUSPENDED_NO_PROMISE = "resume/suspended_no_promise";
    RESUME_SUSPENDED_NO_TARGET = "resume/suspended_no_target";
    RESUME_SUSPENDED_EXECUTE_SENT = "resume/suspended_execute_sent";
    RESUME_BUFFERED = "resume/buffered";
    RESUME_ALREADY_BUFFERED = "resume/already_buffered";
    RESUME_FULFILLED_IGNORED = "resume/fulfilled_ignored";
    // 02-timeouts
    PROMISE_TIMEOUT_NO_PROMISE = "promise_timeout/no_promise";
    PROMISE_TIMEOUT_NOT_PENDING = "promise_timeout/not_pending";
    PROMISE_TIMEOUT_TIMER_RESOLVED = "promise_timeout/timer_resolved";
    PROMISE_TIMEOUT_REJECTED_TIMEDOUT = "promise_timeout/rejected_timedout";
    PROMISE_TIMEOUT_WITH_TASK = "promise_timeout/with_task";
    PROMISE_TIMEOUT_WITHOUT_TASK = "promise_timeout/without_task";
    TASK_RETRY_TIMEOUT_NO_TASK = "task_retry_timeout/no_task";
    TASK_RETRY_TIMEOUT_NOT_PENDING = "task_retry_timeout/not_pending";
    TASK_RETRY_TIMEOUT_NO_PROMISE = "task_retry_timeout/no_promise";
    TASK_RETRY_TIMEOUT_REQUEUED = "task_retry_timeout/requeued";
    TASK_LEASE_TIMEOUT_NO_TASK = "task_lease_timeout/no_task";
    TASK_LEASE_TIMEOUT_NOT_ACQUIRED = "task_lease_timeout/not_acquired";
    TASK_LEASE_TIMEOUT_NO_PROMISE = "task_lease_timeout/no_promise";
    TASK_LEASE_TIMEOUT_EXPIRED = "task_lease_timeout/expired";
    SCHEDULE_TIMEOUT_NO_SCHEDULE = "schedule_timeout/no_schedule";
    SCHEDULE_TIMEOUT_FIRED = "schedule_timeout/fired";
    CATCH_UP_OCCURRENCE = "catch_up/occurrence";
    CATCH_UP_CURRENT = "catch_up/current";
}

/// Branches no sequence of well-formed wire requests and ticks can take:
/// they guard states the protocol never builds (a task without its promise,
/// a timeout armed for an object in the wrong state, an empty target). They
/// are unit-tested on hand-built states and left out of run coverage.
pub const UNREACHABLE: &[Branch] = &[
    TASK_GET_PROMISE_NOT_FOUND_404,
    TASK_CREATE_EXISTS_NO_TASK_409,
    TASK_ACQUIRE_PROMISE_NOT_FOUND_409,
    TASK_FENCE_PROMISE_NOT_FOUND_409,
    TASK_HEARTBEAT_REF_PROMISE_NOT_FOUND_SKIPPED,
    TASK_SUSPEND_PROMISE_NOT_FOUND_409,
    TASK_FULFILL_PROMISE_NOT_FOUND_409,
    TASK_RELEASE_PROMISE_NOT_FOUND_409,
    TASK_CONTINUE_PROMISE_NOT_FOUND_404,
    RESUME_NO_TASK,
    RESUME_SUSPENDED_NO_PROMISE,
    RESUME_SUSPENDED_NO_TARGET,
    // Needs the same awaited id enqueued twice to one awaiter, which takes a
    // settle to state `pending` (the Lean allows it; the wire accepts only
    // resolved, rejected and rejected_canceled).
    RESUME_ALREADY_BUFFERED,
    // Needs a fulfilled task still registered as an awaiter, which takes a
    // task awaiting its own promise (the wire rejects awaited = task id).
    RESUME_FULFILLED_IGNORED,
    PROMISE_TIMEOUT_NO_PROMISE,
    PROMISE_TIMEOUT_NOT_PENDING,
    TASK_RETRY_TIMEOUT_NO_TASK,
    TASK_RETRY_TIMEOUT_NOT_PENDING,
    TASK_RETRY_TIMEOUT_NO_PROMISE,
    TASK_LEASE_TIMEOUT_NO_TASK,
    TASK_LEASE_TIMEOUT_NOT_ACQUIRED,
    TASK_LEASE_TIMEOUT_NO_PROMISE,
    SCHEDULE_TIMEOUT_NO_SCHEDULE,
    // Settling a promise fulfills its task (`promise.settle`, `task.fulfill`
    // and `onPromiseTimeout` share the cascade), and a task created on an
    // expired promise is born fulfilled: a task that is pending or acquired
    // always has a pending promise (checked in `tests/invariants.rs`). These
    // guards require a pending or acquired task before they read the promise,
    // so its promise can only be expired, never settled.
    TASK_ACQUIRE_PROMISE_NOT_LIVE_409_SETTLED,
    TASK_FENCE_PROMISE_NOT_LIVE_409_SETTLED,
    TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED_SETTLED,
    TASK_SUSPEND_PROMISE_NOT_LIVE_409_SETTLED,
    TASK_FULFILL_PROMISE_NOT_LIVE_409_SETTLED,
    TASK_RELEASE_PROMISE_NOT_LIVE_409_SETTLED,
];
