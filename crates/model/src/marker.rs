//! Markers: the ways a branch is taken that one-line bugs get wrong.
//!
//! A branch says *which* way a handler went; a marker says *how close* it
//! came to going the other way, or *how* a loop's elements split. Two kinds,
//! both recorded by the model as it evaluates the Lean (only where the Lean
//! evaluates the comparison or runs the loop, so a marker costs what the
//! comparison or the loop already costs, never a scan):
//!
//! - **boundaries**: every comparison of a deadline with `now` in the Lean at
//!   83d64c3 (`timeoutAt > now`, `timeoutAt ≤ now`, a delay, and the
//!   environment's `deadline ≤ now` that makes a timer due: a lease, a
//!   retry, a schedule's next run, a promise timeout), marked when the
//!   deadline is `now` exactly (`…/at_now`), one millisecond ahead of it
//!   (`…/one_ahead`: `now` is one before the deadline) or one behind
//!   (`…/one_past`), the three instants at which `<` for `≤` or `≥` for `>`
//!   changes the answer. An instant is marked only where the comparison
//!   decides the answer: where another check refuses either way (a stale
//!   version after a task's deadline, another awaited promise of the same
//!   suspend settled or expired), an off-by-one there would go unseen, and
//!   a marker reached there would tell the steered generator the shape
//!   was built when it was not;
//! - **loop shapes**: where a handler or transition walks a list (a
//!   suspend's actions, a heartbeat's refs, a settlement's awaiters and
//!   listeners, the promise timeouts of one tick, a schedule's catch-up),
//!   how many of the elements took the body's branch: `none`, the only one
//!   (`one`, a list of one), `all` of several, or a `mix`, the shapes a bug
//!   that treats "some" like "all" or "none" gets wrong; where the body has
//!   one branch, the count: `one` or `many`.
//!
//! Markers are [`Branch`] values in their own list ([`ALL`], with
//! [`UNREACHABLE`] giving a reason for each one no wire sequence reaches),
//! recorded apart from branches ([`crate::machine::Machine::take_marks`]),
//! so a handler's branch sequence stays what the Lean's returns are, while
//! coverage, reports and the steered generator count both. Each reachable
//! marker has a test named after it (`tests/markers.rs`).

use crate::branch::Branch;
use crate::types::Time;

macro_rules! markers {
    ($($c:ident = $name:literal;)*) => {
        $(#[doc = $name] pub const $c: Branch = Branch($name);)*
        /// Every marker, in spec order.
        pub const ALL: &[Branch] = &[$($c),*];
    };
}

/// The three instants of one deadline comparison.
#[derive(Clone, Copy, Debug)]
pub struct Boundary {
    /// The deadline is `now`.
    pub at_now: Branch,
    /// The deadline is `now + 1`: `now` is one millisecond before it.
    pub one_ahead: Branch,
    /// The deadline is `now - 1`: `now` is one millisecond past it.
    pub one_past: Branch,
}

impl Boundary {
    /// The marker of `deadline` compared with `now`, if it is one of the
    /// three instants.
    pub fn of(&self, deadline: Time, now: Time) -> Option<Branch> {
        if deadline == now {
            Some(self.at_now)
        } else if deadline.checked_sub(1) == Some(now) {
            Some(self.one_ahead)
        } else if deadline.checked_add(1) == Some(now) {
            Some(self.one_past)
        } else {
            None
        }
    }

    /// Record the marker of `deadline` compared with `now`, if any.
    pub fn record(&self, marks: &mut Vec<Branch>, deadline: Time, now: Time) {
        marks.extend(self.of(deadline, now));
    }

    /// Its three markers.
    pub fn all(&self) -> [Branch; 3] {
        [self.at_now, self.one_ahead, self.one_past]
    }
}

/// The shapes of a loop whose body has two branches: how many of `n`
/// elements took the marked one.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// None of them (`n ≥ 1`).
    pub none: Branch,
    /// The only element of a list of one.
    pub one: Branch,
    /// All of several (`n ≥ 2`).
    pub all: Branch,
    /// Some but not all (`0 < k < n`).
    pub mix: Branch,
}

impl Shape {
    /// The shape of `k` of `n` elements; `None` for an empty list.
    pub fn of(&self, n: usize, k: usize) -> Option<Branch> {
        match (n, k) {
            (0, _) => None,
            (_, 0) => Some(self.none),
            (1, _) => Some(self.one),
            _ if k >= n => Some(self.all),
            _ => Some(self.mix),
        }
    }

    /// Record the shape of `k` of `n` elements.
    pub fn record(&self, marks: &mut Vec<Branch>, n: usize, k: usize) {
        marks.extend(self.of(n, k));
    }
}

/// The shapes of a loop whose body has one branch: how many elements.
#[derive(Clone, Copy, Debug)]
pub struct Count {
    /// One element.
    pub one: Branch,
    /// Two or more.
    pub many: Branch,
}

impl Count {
    /// Record the count `n` (nothing for an empty list).
    pub fn record(&self, marks: &mut Vec<Branch>, n: usize) {
        match n {
            0 => {}
            1 => marks.push(self.one),
            _ => marks.push(self.many),
        }
    }
}

markers! {
    // P-01:11 `p.timeoutAt ≤ now` (a pending promise)
    PROMISE_GET_TIMEOUT_AT_AT_NOW = "promise.get/timeout_at/at_now";
    PROMISE_GET_TIMEOUT_AT_ONE_AHEAD = "promise.get/timeout_at/one_ahead";
    PROMISE_GET_TIMEOUT_AT_ONE_PAST = "promise.get/timeout_at/one_past";
    // P-02:9 `req.timeoutAt > now` (a new promise)
    PROMISE_CREATE_TIMEOUT_AT_AT_NOW = "promise.create/timeout_at/at_now";
    PROMISE_CREATE_TIMEOUT_AT_ONE_AHEAD = "promise.create/timeout_at/one_ahead";
    PROMISE_CREATE_TIMEOUT_AT_ONE_PAST = "promise.create/timeout_at/one_past";
    // P-02:33 `delay > now`
    PROMISE_CREATE_DELAY_AT_NOW = "promise.create/delay/at_now";
    PROMISE_CREATE_DELAY_ONE_AHEAD = "promise.create/delay/one_ahead";
    PROMISE_CREATE_DELAY_ONE_PAST = "promise.create/delay/one_past";
    // P-02:64 `p.state == .pending ∧ p.timeoutAt ≤ now` (an existing promise)
    PROMISE_CREATE_EXISTING_TIMEOUT_AT_AT_NOW = "promise.create/existing_timeout_at/at_now";
    PROMISE_CREATE_EXISTING_TIMEOUT_AT_ONE_AHEAD = "promise.create/existing_timeout_at/one_ahead";
    PROMISE_CREATE_EXISTING_TIMEOUT_AT_ONE_PAST = "promise.create/existing_timeout_at/one_past";
    // P-03:11 `p.timeoutAt > now`
    PROMISE_SETTLE_TIMEOUT_AT_AT_NOW = "promise.settle/timeout_at/at_now";
    PROMISE_SETTLE_TIMEOUT_AT_ONE_AHEAD = "promise.settle/timeout_at/one_ahead";
    PROMISE_SETTLE_TIMEOUT_AT_ONE_PAST = "promise.settle/timeout_at/one_past";
    // P-04:16 `pAwaited.timeoutAt > now`
    PROMISE_REGISTER_CALLBACK_AWAITED_TIMEOUT_AT_AT_NOW = "promise.register_callback/awaited_timeout_at/at_now";
    PROMISE_REGISTER_CALLBACK_AWAITED_TIMEOUT_AT_ONE_AHEAD = "promise.register_callback/awaited_timeout_at/one_ahead";
    PROMISE_REGISTER_CALLBACK_AWAITED_TIMEOUT_AT_ONE_PAST = "promise.register_callback/awaited_timeout_at/one_past";
    // P-04:17 `pAwaiter.state == .pending ∧ pAwaiter.timeoutAt > now`
    PROMISE_REGISTER_CALLBACK_AWAITER_TIMEOUT_AT_AT_NOW = "promise.register_callback/awaiter_timeout_at/at_now";
    PROMISE_REGISTER_CALLBACK_AWAITER_TIMEOUT_AT_ONE_AHEAD = "promise.register_callback/awaiter_timeout_at/one_ahead";
    PROMISE_REGISTER_CALLBACK_AWAITER_TIMEOUT_AT_ONE_PAST = "promise.register_callback/awaiter_timeout_at/one_past";
    // P-05:11 `pAwaited.timeoutAt > now`
    PROMISE_REGISTER_LISTENER_TIMEOUT_AT_AT_NOW = "promise.register_listener/timeout_at/at_now";
    PROMISE_REGISTER_LISTENER_TIMEOUT_AT_ONE_AHEAD = "promise.register_listener/timeout_at/one_ahead";
    PROMISE_REGISTER_LISTENER_TIMEOUT_AT_ONE_PAST = "promise.register_listener/timeout_at/one_past";
    // T-01:14 `p.state == .pending ∧ p.timeoutAt > now`
    TASK_GET_TIMEOUT_AT_AT_NOW = "task.get/timeout_at/at_now";
    TASK_GET_TIMEOUT_AT_ONE_AHEAD = "task.get/timeout_at/one_ahead";
    TASK_GET_TIMEOUT_AT_ONE_PAST = "task.get/timeout_at/one_past";
    // T-02:9 `a.timeoutAt > now` (a new promise)
    TASK_CREATE_TIMEOUT_AT_AT_NOW = "task.create/timeout_at/at_now";
    TASK_CREATE_TIMEOUT_AT_ONE_AHEAD = "task.create/timeout_at/one_ahead";
    TASK_CREATE_TIMEOUT_AT_ONE_PAST = "task.create/timeout_at/one_past";
    // T-03:15 `p.state != .pending ∨ p.timeoutAt ≤ now`
    TASK_ACQUIRE_TIMEOUT_AT_AT_NOW = "task.acquire/timeout_at/at_now";
    TASK_ACQUIRE_TIMEOUT_AT_ONE_AHEAD = "task.acquire/timeout_at/one_ahead";
    TASK_ACQUIRE_TIMEOUT_AT_ONE_PAST = "task.acquire/timeout_at/one_past";
    // T-04:16
    TASK_FENCE_TIMEOUT_AT_AT_NOW = "task.fence/timeout_at/at_now";
    TASK_FENCE_TIMEOUT_AT_ONE_AHEAD = "task.fence/timeout_at/one_ahead";
    TASK_FENCE_TIMEOUT_AT_ONE_PAST = "task.fence/timeout_at/one_past";
    // T-05:14 `p.state == .pending ∧ p.timeoutAt > now` (a held ref)
    TASK_HEARTBEAT_TIMEOUT_AT_AT_NOW = "task.heartbeat/timeout_at/at_now";
    TASK_HEARTBEAT_TIMEOUT_AT_ONE_AHEAD = "task.heartbeat/timeout_at/one_ahead";
    TASK_HEARTBEAT_TIMEOUT_AT_ONE_PAST = "task.heartbeat/timeout_at/one_past";
    // T-06:15 the task's own promise
    TASK_SUSPEND_TIMEOUT_AT_AT_NOW = "task.suspend/timeout_at/at_now";
    TASK_SUSPEND_TIMEOUT_AT_ONE_AHEAD = "task.suspend/timeout_at/one_ahead";
    TASK_SUSPEND_TIMEOUT_AT_ONE_PAST = "task.suspend/timeout_at/one_past";
    // T-06:23 an awaited promise
    TASK_SUSPEND_AWAITED_TIMEOUT_AT_AT_NOW = "task.suspend/awaited_timeout_at/at_now";
    TASK_SUSPEND_AWAITED_TIMEOUT_AT_ONE_AHEAD = "task.suspend/awaited_timeout_at/one_ahead";
    TASK_SUSPEND_AWAITED_TIMEOUT_AT_ONE_PAST = "task.suspend/awaited_timeout_at/one_past";
    // T-07:15
    TASK_FULFILL_TIMEOUT_AT_AT_NOW = "task.fulfill/timeout_at/at_now";
    TASK_FULFILL_TIMEOUT_AT_ONE_AHEAD = "task.fulfill/timeout_at/one_ahead";
    TASK_FULFILL_TIMEOUT_AT_ONE_PAST = "task.fulfill/timeout_at/one_past";
    // T-08:16
    TASK_RELEASE_TIMEOUT_AT_AT_NOW = "task.release/timeout_at/at_now";
    TASK_RELEASE_TIMEOUT_AT_ONE_AHEAD = "task.release/timeout_at/one_ahead";
    TASK_RELEASE_TIMEOUT_AT_ONE_PAST = "task.release/timeout_at/one_past";
    // 02-timeouts: the environment's `deadline ≤ now` that makes a timer due
    // (at_now and one_past where it fires, one_ahead where a tick leaves it)
    PROMISE_TIMEOUT_DEADLINE_AT_NOW = "promise_timeout/deadline/at_now";
    PROMISE_TIMEOUT_DEADLINE_ONE_AHEAD = "promise_timeout/deadline/one_ahead";
    PROMISE_TIMEOUT_DEADLINE_ONE_PAST = "promise_timeout/deadline/one_past";
    TASK_RETRY_TIMEOUT_DEADLINE_AT_NOW = "task_retry_timeout/deadline/at_now";
    TASK_RETRY_TIMEOUT_DEADLINE_ONE_AHEAD = "task_retry_timeout/deadline/one_ahead";
    TASK_RETRY_TIMEOUT_DEADLINE_ONE_PAST = "task_retry_timeout/deadline/one_past";
    TASK_LEASE_TIMEOUT_DEADLINE_AT_NOW = "task_lease_timeout/deadline/at_now";
    TASK_LEASE_TIMEOUT_DEADLINE_ONE_AHEAD = "task_lease_timeout/deadline/one_ahead";
    TASK_LEASE_TIMEOUT_DEADLINE_ONE_PAST = "task_lease_timeout/deadline/one_past";
    SCHEDULE_TIMEOUT_DEADLINE_AT_NOW = "schedule_timeout/deadline/at_now";
    SCHEDULE_TIMEOUT_DEADLINE_ONE_AHEAD = "schedule_timeout/deadline/one_ahead";
    SCHEDULE_TIMEOUT_DEADLINE_ONE_PAST = "schedule_timeout/deadline/one_past";

    // T-06:18 the actions' promises not live (→ 300), of those found
    TASK_SUSPEND_ACTIONS_NOT_LIVE_NONE = "task.suspend/actions_not_live/none";
    TASK_SUSPEND_ACTIONS_NOT_LIVE_ONE = "task.suspend/actions_not_live/one";
    TASK_SUSPEND_ACTIONS_NOT_LIVE_ALL = "task.suspend/actions_not_live/all";
    TASK_SUSPEND_ACTIONS_NOT_LIVE_MIX = "task.suspend/actions_not_live/mix";
    // T-05:6 the refs refreshed
    TASK_HEARTBEAT_REFS_REFRESHED_NONE = "task.heartbeat/refs_refreshed/none";
    TASK_HEARTBEAT_REFS_REFRESHED_ONE = "task.heartbeat/refs_refreshed/one";
    TASK_HEARTBEAT_REFS_REFRESHED_ALL = "task.heartbeat/refs_refreshed/all";
    TASK_HEARTBEAT_REFS_REFRESHED_MIX = "task.heartbeat/refs_refreshed/mix";
    // P-03:32, T-07:33, 02-timeouts:40 the awaiters resumed (suspended), not buffered
    PROMISE_SETTLE_AWAITERS_RESUMED_NONE = "promise.settle/awaiters_resumed/none";
    PROMISE_SETTLE_AWAITERS_RESUMED_ONE = "promise.settle/awaiters_resumed/one";
    PROMISE_SETTLE_AWAITERS_RESUMED_ALL = "promise.settle/awaiters_resumed/all";
    PROMISE_SETTLE_AWAITERS_RESUMED_MIX = "promise.settle/awaiters_resumed/mix";
    TASK_FULFILL_AWAITERS_RESUMED_NONE = "task.fulfill/awaiters_resumed/none";
    TASK_FULFILL_AWAITERS_RESUMED_ONE = "task.fulfill/awaiters_resumed/one";
    TASK_FULFILL_AWAITERS_RESUMED_ALL = "task.fulfill/awaiters_resumed/all";
    TASK_FULFILL_AWAITERS_RESUMED_MIX = "task.fulfill/awaiters_resumed/mix";
    PROMISE_TIMEOUT_AWAITERS_RESUMED_NONE = "promise_timeout/awaiters_resumed/none";
    PROMISE_TIMEOUT_AWAITERS_RESUMED_ONE = "promise_timeout/awaiters_resumed/one";
    PROMISE_TIMEOUT_AWAITERS_RESUMED_ALL = "promise_timeout/awaiters_resumed/all";
    PROMISE_TIMEOUT_AWAITERS_RESUMED_MIX = "promise_timeout/awaiters_resumed/mix";
    // P-03:30, T-07:31, 02-timeouts:38 the listeners unblocked
    PROMISE_SETTLE_LISTENERS_ONE = "promise.settle/listeners/one";
    PROMISE_SETTLE_LISTENERS_MANY = "promise.settle/listeners/many";
    TASK_FULFILL_LISTENERS_ONE = "task.fulfill/listeners/one";
    TASK_FULFILL_LISTENERS_MANY = "task.fulfill/listeners/many";
    PROMISE_TIMEOUT_LISTENERS_ONE = "promise_timeout/listeners/one";
    PROMISE_TIMEOUT_LISTENERS_MANY = "promise_timeout/listeners/many";
    // A tick's promise timeouts (02-timeouts:25): those whose promise has a task
    TICK_PROMISE_TIMEOUTS_WITH_TASK_NONE = "tick/promise_timeouts_with_task/none";
    TICK_PROMISE_TIMEOUTS_WITH_TASK_ONE = "tick/promise_timeouts_with_task/one";
    TICK_PROMISE_TIMEOUTS_WITH_TASK_ALL = "tick/promise_timeouts_with_task/all";
    TICK_PROMISE_TIMEOUTS_WITH_TASK_MIX = "tick/promise_timeouts_with_task/mix";
    // 02-timeouts:77 the occurrences one firing catches up
    CATCH_UP_OCCURRENCES_ONE = "catch_up/occurrences/one";
    CATCH_UP_OCCURRENCES_MANY = "catch_up/occurrences/many";
}

/// Markers no sequence of well-formed wire requests and ticks reaches, each
/// with its reason; left out of run coverage. Every marker of the Lean's
/// comparisons and loops at 83d64c3 is reachable: the list is empty, and
/// kept so that one that is not says why.
pub const UNREACHABLE: &[(Branch, &str)] = &[];

macro_rules! boundary {
    ($name:ident, $a:ident, $b:ident, $c:ident) => {
        #[doc = concat!("The instants of ", stringify!($name), "'s comparison.")]
        pub const $name: Boundary = Boundary {
            at_now: $a,
            one_ahead: $b,
            one_past: $c,
        };
    };
}

macro_rules! shape {
    ($name:ident, $a:ident, $b:ident, $c:ident, $d:ident) => {
        #[doc = concat!("The shapes of ", stringify!($name), "'s loop.")]
        pub const $name: Shape = Shape {
            none: $a,
            one: $b,
            all: $c,
            mix: $d,
        };
    };
}

boundary!(
    PROMISE_GET,
    PROMISE_GET_TIMEOUT_AT_AT_NOW,
    PROMISE_GET_TIMEOUT_AT_ONE_AHEAD,
    PROMISE_GET_TIMEOUT_AT_ONE_PAST
);
boundary!(
    PROMISE_CREATE,
    PROMISE_CREATE_TIMEOUT_AT_AT_NOW,
    PROMISE_CREATE_TIMEOUT_AT_ONE_AHEAD,
    PROMISE_CREATE_TIMEOUT_AT_ONE_PAST
);
boundary!(
    PROMISE_CREATE_DELAY,
    PROMISE_CREATE_DELAY_AT_NOW,
    PROMISE_CREATE_DELAY_ONE_AHEAD,
    PROMISE_CREATE_DELAY_ONE_PAST
);
boundary!(
    PROMISE_CREATE_EXISTING,
    PROMISE_CREATE_EXISTING_TIMEOUT_AT_AT_NOW,
    PROMISE_CREATE_EXISTING_TIMEOUT_AT_ONE_AHEAD,
    PROMISE_CREATE_EXISTING_TIMEOUT_AT_ONE_PAST
);
boundary!(
    PROMISE_SETTLE,
    PROMISE_SETTLE_TIMEOUT_AT_AT_NOW,
    PROMISE_SETTLE_TIMEOUT_AT_ONE_AHEAD,
    PROMISE_SETTLE_TIMEOUT_AT_ONE_PAST
);
boundary!(
    CALLBACK_AWAITED,
    PROMISE_REGISTER_CALLBACK_AWAITED_TIMEOUT_AT_AT_NOW,
    PROMISE_REGISTER_CALLBACK_AWAITED_TIMEOUT_AT_ONE_AHEAD,
    PROMISE_REGISTER_CALLBACK_AWAITED_TIMEOUT_AT_ONE_PAST
);
boundary!(
    CALLBACK_AWAITER,
    PROMISE_REGISTER_CALLBACK_AWAITER_TIMEOUT_AT_AT_NOW,
    PROMISE_REGISTER_CALLBACK_AWAITER_TIMEOUT_AT_ONE_AHEAD,
    PROMISE_REGISTER_CALLBACK_AWAITER_TIMEOUT_AT_ONE_PAST
);
boundary!(
    LISTENER,
    PROMISE_REGISTER_LISTENER_TIMEOUT_AT_AT_NOW,
    PROMISE_REGISTER_LISTENER_TIMEOUT_AT_ONE_AHEAD,
    PROMISE_REGISTER_LISTENER_TIMEOUT_AT_ONE_PAST
);
boundary!(
    TASK_GET,
    TASK_GET_TIMEOUT_AT_AT_NOW,
    TASK_GET_TIMEOUT_AT_ONE_AHEAD,
    TASK_GET_TIMEOUT_AT_ONE_PAST
);
boundary!(
    TASK_CREATE,
    TASK_CREATE_TIMEOUT_AT_AT_NOW,
    TASK_CREATE_TIMEOUT_AT_ONE_AHEAD,
    TASK_CREATE_TIMEOUT_AT_ONE_PAST
);
boundary!(
    TASK_ACQUIRE,
    TASK_ACQUIRE_TIMEOUT_AT_AT_NOW,
    TASK_ACQUIRE_TIMEOUT_AT_ONE_AHEAD,
    TASK_ACQUIRE_TIMEOUT_AT_ONE_PAST
);
boundary!(
    TASK_FENCE,
    TASK_FENCE_TIMEOUT_AT_AT_NOW,
    TASK_FENCE_TIMEOUT_AT_ONE_AHEAD,
    TASK_FENCE_TIMEOUT_AT_ONE_PAST
);
boundary!(
    TASK_HEARTBEAT,
    TASK_HEARTBEAT_TIMEOUT_AT_AT_NOW,
    TASK_HEARTBEAT_TIMEOUT_AT_ONE_AHEAD,
    TASK_HEARTBEAT_TIMEOUT_AT_ONE_PAST
);
boundary!(
    TASK_SUSPEND,
    TASK_SUSPEND_TIMEOUT_AT_AT_NOW,
    TASK_SUSPEND_TIMEOUT_AT_ONE_AHEAD,
    TASK_SUSPEND_TIMEOUT_AT_ONE_PAST
);
boundary!(
    TASK_SUSPEND_AWAITED,
    TASK_SUSPEND_AWAITED_TIMEOUT_AT_AT_NOW,
    TASK_SUSPEND_AWAITED_TIMEOUT_AT_ONE_AHEAD,
    TASK_SUSPEND_AWAITED_TIMEOUT_AT_ONE_PAST
);
boundary!(
    TASK_FULFILL,
    TASK_FULFILL_TIMEOUT_AT_AT_NOW,
    TASK_FULFILL_TIMEOUT_AT_ONE_AHEAD,
    TASK_FULFILL_TIMEOUT_AT_ONE_PAST
);
boundary!(
    TASK_RELEASE,
    TASK_RELEASE_TIMEOUT_AT_AT_NOW,
    TASK_RELEASE_TIMEOUT_AT_ONE_AHEAD,
    TASK_RELEASE_TIMEOUT_AT_ONE_PAST
);

/// The due-ness of each timer group (0 promise, 1 retry, 2 lease,
/// 3 schedule), the order of [`crate::machine::Machine::due`].
pub const TIMER_GROUPS: [Boundary; 4] = [
    Boundary {
        at_now: PROMISE_TIMEOUT_DEADLINE_AT_NOW,
        one_ahead: PROMISE_TIMEOUT_DEADLINE_ONE_AHEAD,
        one_past: PROMISE_TIMEOUT_DEADLINE_ONE_PAST,
    },
    Boundary {
        at_now: TASK_RETRY_TIMEOUT_DEADLINE_AT_NOW,
        one_ahead: TASK_RETRY_TIMEOUT_DEADLINE_ONE_AHEAD,
        one_past: TASK_RETRY_TIMEOUT_DEADLINE_ONE_PAST,
    },
    Boundary {
        at_now: TASK_LEASE_TIMEOUT_DEADLINE_AT_NOW,
        one_ahead: TASK_LEASE_TIMEOUT_DEADLINE_ONE_AHEAD,
        one_past: TASK_LEASE_TIMEOUT_DEADLINE_ONE_PAST,
    },
    Boundary {
        at_now: SCHEDULE_TIMEOUT_DEADLINE_AT_NOW,
        one_ahead: SCHEDULE_TIMEOUT_DEADLINE_ONE_AHEAD,
        one_past: SCHEDULE_TIMEOUT_DEADLINE_ONE_PAST,
    },
];

shape!(
    SUSPEND_ACTIONS,
    TASK_SUSPEND_ACTIONS_NOT_LIVE_NONE,
    TASK_SUSPEND_ACTIONS_NOT_LIVE_ONE,
    TASK_SUSPEND_ACTIONS_NOT_LIVE_ALL,
    TASK_SUSPEND_ACTIONS_NOT_LIVE_MIX
);
shape!(
    HEARTBEAT_REFS,
    TASK_HEARTBEAT_REFS_REFRESHED_NONE,
    TASK_HEARTBEAT_REFS_REFRESHED_ONE,
    TASK_HEARTBEAT_REFS_REFRESHED_ALL,
    TASK_HEARTBEAT_REFS_REFRESHED_MIX
);
shape!(
    TICK_PROMISE_TIMEOUTS,
    TICK_PROMISE_TIMEOUTS_WITH_TASK_NONE,
    TICK_PROMISE_TIMEOUTS_WITH_TASK_ONE,
    TICK_PROMISE_TIMEOUTS_WITH_TASK_ALL,
    TICK_PROMISE_TIMEOUTS_WITH_TASK_MIX
);

/// The loop markers of one settlement site: its awaiters and listeners.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settlement {
    pub awaiters: Shape,
    pub listeners: Count,
}

/// `promise.settle` (P-03), also a fenced settle.
pub(crate) const SETTLE: Settlement = Settlement {
    awaiters: Shape {
        none: PROMISE_SETTLE_AWAITERS_RESUMED_NONE,
        one: PROMISE_SETTLE_AWAITERS_RESUMED_ONE,
        all: PROMISE_SETTLE_AWAITERS_RESUMED_ALL,
        mix: PROMISE_SETTLE_AWAITERS_RESUMED_MIX,
    },
    listeners: Count {
        one: PROMISE_SETTLE_LISTENERS_ONE,
        many: PROMISE_SETTLE_LISTENERS_MANY,
    },
};

/// `task.fulfill` (T-07).
pub(crate) const FULFILL: Settlement = Settlement {
    awaiters: Shape {
        none: TASK_FULFILL_AWAITERS_RESUMED_NONE,
        one: TASK_FULFILL_AWAITERS_RESUMED_ONE,
        all: TASK_FULFILL_AWAITERS_RESUMED_ALL,
        mix: TASK_FULFILL_AWAITERS_RESUMED_MIX,
    },
    listeners: Count {
        one: TASK_FULFILL_LISTENERS_ONE,
        many: TASK_FULFILL_LISTENERS_MANY,
    },
};

/// `onPromiseTimeout` (02-timeouts).
pub(crate) const TIMEOUT: Settlement = Settlement {
    awaiters: Shape {
        none: PROMISE_TIMEOUT_AWAITERS_RESUMED_NONE,
        one: PROMISE_TIMEOUT_AWAITERS_RESUMED_ONE,
        all: PROMISE_TIMEOUT_AWAITERS_RESUMED_ALL,
        mix: PROMISE_TIMEOUT_AWAITERS_RESUMED_MIX,
    },
    listeners: Count {
        one: PROMISE_TIMEOUT_LISTENERS_ONE,
        many: PROMISE_TIMEOUT_LISTENERS_MANY,
    },
};

/// The settlement sites' "all" and "mix" of awaiters: the shapes that need
/// a list of several awaiters, at least one of them suspended.
pub const AWAITERS_OF_SEVERAL: [Branch; 6] = [
    SETTLE.awaiters.all,
    SETTLE.awaiters.mix,
    FULFILL.awaiters.all,
    FULFILL.awaiters.mix,
    TIMEOUT.awaiters.all,
    TIMEOUT.awaiters.mix,
];

/// The settlement sites' "mix" of awaiters: the shapes a mix made around
/// an acquired task reaches (gen's `walk::mixed_awaiters`).
pub const AWAITERS_MIXED: [Branch; 3] = [
    SETTLE.awaiters.mix,
    FULFILL.awaiters.mix,
    TIMEOUT.awaiters.mix,
];

/// A schedule's catch-up.
pub(crate) const CATCH_UP: Count = Count {
    one: CATCH_UP_OCCURRENCES_ONE,
    many: CATCH_UP_OCCURRENCES_MANY,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_apart_from_branches() {
        let mut names: Vec<&str> = ALL.iter().map(|b| b.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        assert!(ALL.iter().all(|m| !crate::branch::ALL.contains(m)));
    }

    #[test]
    fn shapes_and_instants() {
        let s = SUSPEND_ACTIONS;
        assert_eq!(s.of(0, 0), None);
        assert_eq!(s.of(3, 0), Some(s.none));
        assert_eq!(s.of(1, 1), Some(s.one));
        assert_eq!(s.of(2, 2), Some(s.all));
        assert_eq!(s.of(3, 1), Some(s.mix));
        let b = PROMISE_GET;
        assert_eq!(b.of(10, 10), Some(b.at_now));
        assert_eq!(b.of(11, 10), Some(b.one_ahead));
        assert_eq!(b.of(9, 10), Some(b.one_past));
        assert_eq!(b.of(12, 10), None);
        assert_eq!(b.of(0, u64::MAX), None);
    }
}
