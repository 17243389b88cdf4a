//! One test per reachable marker (`model::marker`), named after it
//! (`Branch::test_name`): deadline instants and loop shapes, each reached by
//! well-formed wire requests and ticks from an empty machine. A boundary
//! test also checks that the other two instants of the same comparison are
//! not recorded, and a shape test that no other shape of the same loop is.
//! The last tests hold the list to its tests, as `every_branch_has_a_test`
//! does for branches.
#![allow(non_snake_case)]

mod common;

use common::*;
use model::api::Request;
use model::branch::Branch;
use model::machine::Machine;
use model::marker::{self, *};
use model::types::{PromiseState, Time};

/// The deadline every boundary scenario compares with `now`.
const D: Time = 10_000;
/// Setup time, well before every instant.
const T: Time = 1_000;
/// A deadline no scenario reaches.
const LATER: Time = 1_000_000;

/// The final step of a scenario.
enum Last {
    Req(Request),
    Tick,
}

/// A boundary scenario: setup steps (each answering 200), the deadline
/// the last step compares with `now`, and the last step.
struct Site {
    setup: Vec<(Time, Request)>,
    deadline: Time,
    last: Last,
}

fn site(setup: Vec<(Time, Request)>, last: Request) -> Site {
    Site {
        setup,
        deadline: D,
        last: Last::Req(last),
    }
}

/// The markers the last step of `setup` then `last` at `now` records.
fn marks_at(setup: &[(Time, Request)], last: &Last, now: Time) -> Vec<Branch> {
    let mut m = setup_machine(setup);
    match last {
        Last::Req(r) => {
            m.apply(r, now);
        }
        Last::Tick => {
            m.tick(now);
        }
    }
    m.take_marks()
}

fn setup_machine(steps: &[(Time, Request)]) -> Machine {
    let mut m = Machine::default();
    run(&mut m, steps);
    m
}

/// `want` is one instant of the comparison `b`; the scenario reaches it at
/// the `now` its name says and records none of the other two.
#[track_caller]
fn instant(b: Boundary, want: Branch, s: Site) {
    let now = if want == b.at_now {
        s.deadline
    } else if want == b.one_ahead {
        s.deadline - 1
    } else {
        s.deadline + 1
    };
    let marks = marks_at(&s.setup, &s.last, now);
    assert!(marks.contains(&want), "{want} not in {marks:?}");
    for other in b.all().into_iter().filter(|o| *o != want) {
        assert!(!marks.contains(&other), "{other} also in {marks:?}");
    }
}

/// The last step records `want` and no other shape of `shape`.
#[track_caller]
fn shape(shape: &[Branch], want: Branch, setup: &[(Time, Request)], last: Last, now: Time) {
    let marks = marks_at(setup, &last, now);
    assert!(marks.contains(&want), "{want} not in {marks:?}");
    for other in shape.iter().filter(|o| **o != want) {
        assert!(!marks.contains(other), "{other} also in {marks:?}");
    }
}

// ----- boundaries: the scenarios -----

fn get_site() -> Site {
    site(vec![(T, promise_create("a", D, plain()))], promise_get("a"))
}

fn create_site() -> Site {
    site(vec![], promise_create("a", D, plain()))
}

fn delay_site() -> Site {
    site(vec![], promise_create("a", LATER, delayed(&D.to_string())))
}

fn existing_site() -> Site {
    site(
        vec![(T, promise_create("a", D, plain()))],
        promise_create("a", D, plain()),
    )
}

fn settle_site() -> Site {
    site(
        vec![(T, promise_create("a", D, plain()))],
        promise_settle("a", PromiseState::Resolved),
    )
}

fn callback_awaited_site() -> Site {
    site(
        vec![
            (T, promise_create("b", D, plain())),
            (T, promise_create("a", LATER, target())),
        ],
        register_callback("b", "a"),
    )
}

fn callback_awaiter_site() -> Site {
    site(
        vec![
            (T, promise_create("b", LATER, plain())),
            (T, promise_create("a", D, target())),
        ],
        register_callback("b", "a"),
    )
}

fn listener_site() -> Site {
    site(
        vec![(T, promise_create("a", D, plain()))],
        register_listener("a", L),
    )
}

/// A task `a` acquired by `p1` (version 1) on a promise with deadline `D`.
fn held_a() -> Vec<(Time, Request)> {
    vec![(T, task_create("p1", 60_000, "a", D, target()))]
}

fn task_get_site() -> Site {
    site(held_a(), task_get("a"))
}

fn task_create_site() -> Site {
    site(vec![], task_create("p1", 60_000, "a", D, target()))
}

fn acquire_site() -> Site {
    site(
        vec![(T, promise_create("a", D, target()))],
        task_acquire("a", 0, "p1", 60_000),
    )
}

fn fence_site() -> Site {
    site(
        held_a(),
        fence_create("a", 1, create_req("x", LATER, plain())),
    )
}

fn heartbeat_site() -> Site {
    site(held_a(), heartbeat("p1", &[("a", 1)]))
}

fn suspend_site() -> Site {
    let mut setup = held_a();
    setup.push((T, promise_create("b", LATER, plain())));
    site(setup, suspend("a", 1, &["b"]))
}

fn suspend_awaited_site() -> Site {
    site(
        vec![
            (T, task_create("p1", 60_000, "a", LATER, target())),
            (T, promise_create("b", D, plain())),
        ],
        suspend("a", 1, &["b"]),
    )
}

fn fulfill_site() -> Site {
    site(held_a(), fulfill("a", 1, PromiseState::Resolved))
}

fn release_site() -> Site {
    site(held_a(), release("a", 1))
}

fn tick_site(setup: Vec<(Time, Request)>, deadline: Time) -> Site {
    Site {
        setup,
        deadline,
        last: Last::Tick,
    }
}

/// A timer promise (its timeout armed) due at `LATER`.
fn promise_timeout_site() -> Site {
    tick_site(vec![(T, promise_create("a", LATER, timer()))], LATER)
}

/// A promise with a target created at `D - 5000`: its retry is due at `D`.
fn retry_site() -> Site {
    tick_site(
        vec![(D - RETRY_MS, promise_create("a", LATER, target()))],
        D,
    )
}

/// A task acquired at `T` with a lease of `D - T`.
fn lease_site() -> Site {
    tick_site(vec![(T, task_create("p1", D - T, "a", LATER, target()))], D)
}

/// A schedule firing every minute, created at `T`: its next run is 60 000.
fn schedule_site() -> Site {
    tick_site(
        vec![(
            T,
            schedule_create("s", EVERY_MINUTE, "s.{{.timestamp}}", 1000, plain()),
        )],
        60_000,
    )
}

// ----- boundaries: one test per instant -----

#[test]
fn promise_get__timeout_at__at_now() {
    instant(PROMISE_GET, PROMISE_GET_TIMEOUT_AT_AT_NOW, get_site());
}
#[test]
fn promise_get__timeout_at__one_ahead() {
    instant(PROMISE_GET, PROMISE_GET_TIMEOUT_AT_ONE_AHEAD, get_site());
}
#[test]
fn promise_get__timeout_at__one_past() {
    instant(PROMISE_GET, PROMISE_GET_TIMEOUT_AT_ONE_PAST, get_site());
}
#[test]
fn promise_create__timeout_at__at_now() {
    instant(
        PROMISE_CREATE,
        PROMISE_CREATE_TIMEOUT_AT_AT_NOW,
        create_site(),
    );
}
#[test]
fn promise_create__timeout_at__one_ahead() {
    instant(
        PROMISE_CREATE,
        PROMISE_CREATE_TIMEOUT_AT_ONE_AHEAD,
        create_site(),
    );
}
#[test]
fn promise_create__timeout_at__one_past() {
    instant(
        PROMISE_CREATE,
        PROMISE_CREATE_TIMEOUT_AT_ONE_PAST,
        create_site(),
    );
}
#[test]
fn promise_create__delay__at_now() {
    instant(
        PROMISE_CREATE_DELAY,
        PROMISE_CREATE_DELAY_AT_NOW,
        delay_site(),
    );
}
#[test]
fn promise_create__delay__one_ahead() {
    instant(
        PROMISE_CREATE_DELAY,
        PROMISE_CREATE_DELAY_ONE_AHEAD,
        delay_site(),
    );
}
#[test]
fn promise_create__delay__one_past() {
    instant(
        PROMISE_CREATE_DELAY,
        PROMISE_CREATE_DELAY_ONE_PAST,
        delay_site(),
    );
}
#[test]
fn promise_create__existing_timeout_at__at_now() {
    instant(
        PROMISE_CREATE_EXISTING,
        PROMISE_CREATE_EXISTING_TIMEOUT_AT_AT_NOW,
        existing_site(),
    );
}
#[test]
fn promise_create__existing_timeout_at__one_ahead() {
    instant(
        PROMISE_CREATE_EXISTING,
        PROMISE_CREATE_EXISTING_TIMEOUT_AT_ONE_AHEAD,
        existing_site(),
    );
}
#[test]
fn promise_create__existing_timeout_at__one_past() {
    instant(
        PROMISE_CREATE_EXISTING,
        PROMISE_CREATE_EXISTING_TIMEOUT_AT_ONE_PAST,
        existing_site(),
    );
}
#[test]
fn promise_settle__timeout_at__at_now() {
    instant(
        PROMISE_SETTLE,
        PROMISE_SETTLE_TIMEOUT_AT_AT_NOW,
        settle_site(),
    );
}
#[test]
fn promise_settle__timeout_at__one_ahead() {
    instant(
        PROMISE_SETTLE,
        PROMISE_SETTLE_TIMEOUT_AT_ONE_AHEAD,
        settle_site(),
    );
}
#[test]
fn promise_settle__timeout_at__one_past() {
    instant(
        PROMISE_SETTLE,
        PROMISE_SETTLE_TIMEOUT_AT_ONE_PAST,
        settle_site(),
    );
}
#[test]
fn promise_register_callback__awaited_timeout_at__at_now() {
    instant(
        CALLBACK_AWAITED,
        PROMISE_REGISTER_CALLBACK_AWAITED_TIMEOUT_AT_AT_NOW,
        callback_awaited_site(),
    );
}
#[test]
fn promise_register_callback__awaited_timeout_at__one_ahead() {
    instant(
        CALLBACK_AWAITED,
        PROMISE_REGISTER_CALLBACK_AWAITED_TIMEOUT_AT_ONE_AHEAD,
        callback_awaited_site(),
    );
}
#[test]
fn promise_register_callback__awaited_timeout_at__one_past() {
    instant(
        CALLBACK_AWAITED,
        PROMISE_REGISTER_CALLBACK_AWAITED_TIMEOUT_AT_ONE_PAST,
        callback_awaited_site(),
    );
}
#[test]
fn promise_register_callback__awaiter_timeout_at__at_now() {
    instant(
        CALLBACK_AWAITER,
        PROMISE_REGISTER_CALLBACK_AWAITER_TIMEOUT_AT_AT_NOW,
        callback_awaiter_site(),
    );
}
#[test]
fn promise_register_callback__awaiter_timeout_at__one_ahead() {
    instant(
        CALLBACK_AWAITER,
        PROMISE_REGISTER_CALLBACK_AWAITER_TIMEOUT_AT_ONE_AHEAD,
        callback_awaiter_site(),
    );
}
#[test]
fn promise_register_callback__awaiter_timeout_at__one_past() {
    instant(
        CALLBACK_AWAITER,
        PROMISE_REGISTER_CALLBACK_AWAITER_TIMEOUT_AT_ONE_PAST,
        callback_awaiter_site(),
    );
}
#[test]
fn promise_register_listener__timeout_at__at_now() {
    instant(
        LISTENER,
        PROMISE_REGISTER_LISTENER_TIMEOUT_AT_AT_NOW,
        listener_site(),
    );
}
#[test]
fn promise_register_listener__timeout_at__one_ahead() {
    instant(
        LISTENER,
        PROMISE_REGISTER_LISTENER_TIMEOUT_AT_ONE_AHEAD,
        listener_site(),
    );
}
#[test]
fn promise_register_listener__timeout_at__one_past() {
    instant(
        LISTENER,
        PROMISE_REGISTER_LISTENER_TIMEOUT_AT_ONE_PAST,
        listener_site(),
    );
}
#[test]
fn task_get__timeout_at__at_now() {
    instant(TASK_GET, TASK_GET_TIMEOUT_AT_AT_NOW, task_get_site());
}
#[test]
fn task_get__timeout_at__one_ahead() {
    instant(TASK_GET, TASK_GET_TIMEOUT_AT_ONE_AHEAD, task_get_site());
}
#[test]
fn task_get__timeout_at__one_past() {
    instant(TASK_GET, TASK_GET_TIMEOUT_AT_ONE_PAST, task_get_site());
}
#[test]
fn task_create__timeout_at__at_now() {
    instant(
        TASK_CREATE,
        TASK_CREATE_TIMEOUT_AT_AT_NOW,
        task_create_site(),
    );
}
#[test]
fn task_create__timeout_at__one_ahead() {
    instant(
        TASK_CREATE,
        TASK_CREATE_TIMEOUT_AT_ONE_AHEAD,
        task_create_site(),
    );
}
#[test]
fn task_create__timeout_at__one_past() {
    instant(
        TASK_CREATE,
        TASK_CREATE_TIMEOUT_AT_ONE_PAST,
        task_create_site(),
    );
}
#[test]
fn task_acquire__timeout_at__at_now() {
    instant(TASK_ACQUIRE, TASK_ACQUIRE_TIMEOUT_AT_AT_NOW, acquire_site());
}
#[test]
fn task_acquire__timeout_at__one_ahead() {
    instant(
        TASK_ACQUIRE,
        TASK_ACQUIRE_TIMEOUT_AT_ONE_AHEAD,
        acquire_site(),
    );
}
#[test]
fn task_acquire__timeout_at__one_past() {
    instant(
        TASK_ACQUIRE,
        TASK_ACQUIRE_TIMEOUT_AT_ONE_PAST,
        acquire_site(),
    );
}
#[test]
fn task_fence__timeout_at__at_now() {
    instant(TASK_FENCE, TASK_FENCE_TIMEOUT_AT_AT_NOW, fence_site());
}
#[test]
fn task_fence__timeout_at__one_ahead() {
    instant(TASK_FENCE, TASK_FENCE_TIMEOUT_AT_ONE_AHEAD, fence_site());
}
#[test]
fn task_fence__timeout_at__one_past() {
    instant(TASK_FENCE, TASK_FENCE_TIMEOUT_AT_ONE_PAST, fence_site());
}
#[test]
fn task_heartbeat__timeout_at__at_now() {
    instant(
        TASK_HEARTBEAT,
        TASK_HEARTBEAT_TIMEOUT_AT_AT_NOW,
        heartbeat_site(),
    );
}
#[test]
fn task_heartbeat__timeout_at__one_ahead() {
    instant(
        TASK_HEARTBEAT,
        TASK_HEARTBEAT_TIMEOUT_AT_ONE_AHEAD,
        heartbeat_site(),
    );
}
#[test]
fn task_heartbeat__timeout_at__one_past() {
    instant(
        TASK_HEARTBEAT,
        TASK_HEARTBEAT_TIMEOUT_AT_ONE_PAST,
        heartbeat_site(),
    );
}
#[test]
fn task_suspend__timeout_at__at_now() {
    instant(TASK_SUSPEND, TASK_SUSPEND_TIMEOUT_AT_AT_NOW, suspend_site());
}
#[test]
fn task_suspend__timeout_at__one_ahead() {
    instant(
        TASK_SUSPEND,
        TASK_SUSPEND_TIMEOUT_AT_ONE_AHEAD,
        suspend_site(),
    );
}
#[test]
fn task_suspend__timeout_at__one_past() {
    instant(
        TASK_SUSPEND,
        TASK_SUSPEND_TIMEOUT_AT_ONE_PAST,
        suspend_site(),
    );
}
#[test]
fn task_suspend__awaited_timeout_at__at_now() {
    instant(
        TASK_SUSPEND_AWAITED,
        TASK_SUSPEND_AWAITED_TIMEOUT_AT_AT_NOW,
        suspend_awaited_site(),
    );
}
#[test]
fn task_suspend__awaited_timeout_at__one_ahead() {
    instant(
        TASK_SUSPEND_AWAITED,
        TASK_SUSPEND_AWAITED_TIMEOUT_AT_ONE_AHEAD,
        suspend_awaited_site(),
    );
}
#[test]
fn task_suspend__awaited_timeout_at__one_past() {
    instant(
        TASK_SUSPEND_AWAITED,
        TASK_SUSPEND_AWAITED_TIMEOUT_AT_ONE_PAST,
        suspend_awaited_site(),
    );
}
#[test]
fn task_fulfill__timeout_at__at_now() {
    instant(TASK_FULFILL, TASK_FULFILL_TIMEOUT_AT_AT_NOW, fulfill_site());
}
#[test]
fn task_fulfill__timeout_at__one_ahead() {
    instant(
        TASK_FULFILL,
        TASK_FULFILL_TIMEOUT_AT_ONE_AHEAD,
        fulfill_site(),
    );
}
#[test]
fn task_fulfill__timeout_at__one_past() {
    instant(
        TASK_FULFILL,
        TASK_FULFILL_TIMEOUT_AT_ONE_PAST,
        fulfill_site(),
    );
}
#[test]
fn task_release__timeout_at__at_now() {
    instant(TASK_RELEASE, TASK_RELEASE_TIMEOUT_AT_AT_NOW, release_site());
}
#[test]
fn task_release__timeout_at__one_ahead() {
    instant(
        TASK_RELEASE,
        TASK_RELEASE_TIMEOUT_AT_ONE_AHEAD,
        release_site(),
    );
}
#[test]
fn task_release__timeout_at__one_past() {
    instant(
        TASK_RELEASE,
        TASK_RELEASE_TIMEOUT_AT_ONE_PAST,
        release_site(),
    );
}
#[test]
fn promise_timeout__deadline__at_now() {
    instant(
        TIMER_GROUPS[0],
        PROMISE_TIMEOUT_DEADLINE_AT_NOW,
        promise_timeout_site(),
    );
}
#[test]
fn promise_timeout__deadline__one_ahead() {
    instant(
        TIMER_GROUPS[0],
        PROMISE_TIMEOUT_DEADLINE_ONE_AHEAD,
        promise_timeout_site(),
    );
}
#[test]
fn promise_timeout__deadline__one_past() {
    instant(
        TIMER_GROUPS[0],
        PROMISE_TIMEOUT_DEADLINE_ONE_PAST,
        promise_timeout_site(),
    );
}
#[test]
fn task_retry_timeout__deadline__at_now() {
    instant(
        TIMER_GROUPS[1],
        TASK_RETRY_TIMEOUT_DEADLINE_AT_NOW,
        retry_site(),
    );
}
#[test]
fn task_retry_timeout__deadline__one_ahead() {
    instant(
        TIMER_GROUPS[1],
        TASK_RETRY_TIMEOUT_DEADLINE_ONE_AHEAD,
        retry_site(),
    );
}
#[test]
fn task_retry_timeout__deadline__one_past() {
    instant(
        TIMER_GROUPS[1],
        TASK_RETRY_TIMEOUT_DEADLINE_ONE_PAST,
        retry_site(),
    );
}
#[test]
fn task_lease_timeout__deadline__at_now() {
    instant(
        TIMER_GROUPS[2],
        TASK_LEASE_TIMEOUT_DEADLINE_AT_NOW,
        lease_site(),
    );
}
#[test]
fn task_lease_timeout__deadline__one_ahead() {
    instant(
        TIMER_GROUPS[2],
        TASK_LEASE_TIMEOUT_DEADLINE_ONE_AHEAD,
        lease_site(),
    );
}
#[test]
fn task_lease_timeout__deadline__one_past() {
    instant(
        TIMER_GROUPS[2],
        TASK_LEASE_TIMEOUT_DEADLINE_ONE_PAST,
        lease_site(),
    );
}
#[test]
fn schedule_timeout__deadline__at_now() {
    instant(
        TIMER_GROUPS[3],
        SCHEDULE_TIMEOUT_DEADLINE_AT_NOW,
        schedule_site(),
    );
}
#[test]
fn schedule_timeout__deadline__one_ahead() {
    instant(
        TIMER_GROUPS[3],
        SCHEDULE_TIMEOUT_DEADLINE_ONE_AHEAD,
        schedule_site(),
    );
}
#[test]
fn schedule_timeout__deadline__one_past() {
    instant(
        TIMER_GROUPS[3],
        SCHEDULE_TIMEOUT_DEADLINE_ONE_PAST,
        schedule_site(),
    );
}

// ----- loop shapes: the scenarios -----

const SUSPEND: [Branch; 4] = [
    TASK_SUSPEND_ACTIONS_NOT_LIVE_NONE,
    TASK_SUSPEND_ACTIONS_NOT_LIVE_ONE,
    TASK_SUSPEND_ACTIONS_NOT_LIVE_ALL,
    TASK_SUSPEND_ACTIONS_NOT_LIVE_MIX,
];

/// Task `a` held by `p1`, a live promise `b`, and settled `c` and `d`.
fn suspend_world() -> Vec<(Time, Request)> {
    vec![
        (T, task_create("p1", 60_000, "a", LATER, target())),
        (T, promise_create("b", LATER, plain())),
        (T, promise_create("c", LATER, plain())),
        (T, promise_settle("c", PromiseState::Resolved)),
        (T, promise_create("d", T, plain())),
    ]
}

fn suspend_on(want: Branch, awaited: &[&str]) {
    shape(
        &SUSPEND,
        want,
        &suspend_world(),
        Last::Req(suspend("a", 1, awaited)),
        T,
    );
}

const HEARTBEAT: [Branch; 4] = [
    TASK_HEARTBEAT_REFS_REFRESHED_NONE,
    TASK_HEARTBEAT_REFS_REFRESHED_ONE,
    TASK_HEARTBEAT_REFS_REFRESHED_ALL,
    TASK_HEARTBEAT_REFS_REFRESHED_MIX,
];

/// Tasks `a` and `b` held by `p1` at version 1.
fn two_held() -> Vec<(Time, Request)> {
    vec![
        (T, task_create("p1", 60_000, "a", LATER, target())),
        (T, task_create("p1", 60_000, "b", LATER, target())),
    ]
}

fn heartbeat_of(want: Branch, refs: &[(&str, u64)]) {
    shape(
        &HEARTBEAT,
        want,
        &two_held(),
        Last::Req(heartbeat("p1", refs)),
        T,
    );
}

/// Where a promise `x` is settled, and how: a settle, a fulfill of its
/// task, or its timeout at a tick.
#[derive(Clone, Copy)]
enum Via {
    Settle,
    Fulfill,
    Timeout,
}

/// `x` (deadline `D`; a task held by `p9` for `Fulfill`, a target for
/// `Timeout` so its timeout is armed), awaited by a task `s{i}` suspended
/// on it for each `true` in `suspended` and a pending task `w{i}`
/// registered by callback for each `false`, and listened to at each of
/// `listeners`; then the settlement.
fn settlement(
    via: Via,
    suspended: &[bool],
    listeners: &[&str],
) -> (Vec<(Time, Request)>, Last, Time) {
    let mut setup = vec![match via {
        Via::Fulfill => (T, task_create("p9", LATER, "x", D, target())),
        Via::Settle => (T, promise_create("x", D, plain())),
        Via::Timeout => (T, promise_create("x", D, timer())),
    }];
    for (i, s) in suspended.iter().enumerate() {
        if *s {
            let id = format!("s{i}");
            setup.push((T, task_create("p1", LATER, &id, LATER, target())));
            setup.push((T, suspend(&id, 1, &["x"])));
        } else {
            let id = format!("w{i}");
            setup.push((T, promise_create(&id, LATER, target())));
            setup.push((T, register_callback("x", &id)));
        }
    }
    for l in listeners {
        setup.push((T, register_listener("x", l)));
    }
    let (last, now) = match via {
        Via::Settle => (Last::Req(promise_settle("x", PromiseState::Resolved)), T),
        Via::Fulfill => (Last::Req(fulfill("x", 1, PromiseState::Resolved)), T),
        Via::Timeout => (Last::Tick, D),
    };
    (setup, last, now)
}

fn awaiters(via: Via, want: Branch, suspended: &[bool]) {
    let family: [Branch; 4] = match via {
        Via::Settle => [
            PROMISE_SETTLE_AWAITERS_RESUMED_NONE,
            PROMISE_SETTLE_AWAITERS_RESUMED_ONE,
            PROMISE_SETTLE_AWAITERS_RESUMED_ALL,
            PROMISE_SETTLE_AWAITERS_RESUMED_MIX,
        ],
        Via::Fulfill => [
            TASK_FULFILL_AWAITERS_RESUMED_NONE,
            TASK_FULFILL_AWAITERS_RESUMED_ONE,
            TASK_FULFILL_AWAITERS_RESUMED_ALL,
            TASK_FULFILL_AWAITERS_RESUMED_MIX,
        ],
        Via::Timeout => [
            PROMISE_TIMEOUT_AWAITERS_RESUMED_NONE,
            PROMISE_TIMEOUT_AWAITERS_RESUMED_ONE,
            PROMISE_TIMEOUT_AWAITERS_RESUMED_ALL,
            PROMISE_TIMEOUT_AWAITERS_RESUMED_MIX,
        ],
    };
    let (setup, last, now) = settlement(via, suspended, &[]);
    shape(&family, want, &setup, last, now);
}

fn listeners(via: Via, want: Branch, addresses: &[&str]) {
    let family: [Branch; 2] = match via {
        Via::Settle => [PROMISE_SETTLE_LISTENERS_ONE, PROMISE_SETTLE_LISTENERS_MANY],
        Via::Fulfill => [TASK_FULFILL_LISTENERS_ONE, TASK_FULFILL_LISTENERS_MANY],
        Via::Timeout => [
            PROMISE_TIMEOUT_LISTENERS_ONE,
            PROMISE_TIMEOUT_LISTENERS_MANY,
        ],
    };
    let (setup, last, now) = settlement(via, &[], addresses);
    shape(&family, want, &setup, last, now);
}

const TICK: [Branch; 4] = [
    TICK_PROMISE_TIMEOUTS_WITH_TASK_NONE,
    TICK_PROMISE_TIMEOUTS_WITH_TASK_ONE,
    TICK_PROMISE_TIMEOUTS_WITH_TASK_ALL,
    TICK_PROMISE_TIMEOUTS_WITH_TASK_MIX,
];

/// Promises due at `D`, with a task (a target) for each `true`, a timer
/// (armed, no task) for each `false`; then a tick at `D`.
fn tick_of(want: Branch, with_task: &[bool]) {
    let setup: Vec<(Time, Request)> = with_task
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let tags = if *t { target() } else { timer() };
            (T, promise_create(&format!("x{i}"), D, tags))
        })
        .collect();
    shape(&TICK, want, &setup, Last::Tick, D);
}

fn catch_up_at(want: Branch, now: Time) {
    let setup = vec![(
        T,
        schedule_create("s", EVERY_MINUTE, "s.{{.timestamp}}", 1000, plain()),
    )];
    shape(
        &[CATCH_UP_OCCURRENCES_ONE, CATCH_UP_OCCURRENCES_MANY],
        want,
        &setup,
        Last::Tick,
        now,
    );
}

// ----- loop shapes: one test per shape -----

#[test]
fn task_suspend__actions_not_live__none() {
    suspend_on(TASK_SUSPEND_ACTIONS_NOT_LIVE_NONE, &["b"]);
}
#[test]
fn task_suspend__actions_not_live__one() {
    suspend_on(TASK_SUSPEND_ACTIONS_NOT_LIVE_ONE, &["c"]);
}
#[test]
fn task_suspend__actions_not_live__all() {
    suspend_on(TASK_SUSPEND_ACTIONS_NOT_LIVE_ALL, &["c", "d"]);
}
#[test]
fn task_suspend__actions_not_live__mix() {
    suspend_on(TASK_SUSPEND_ACTIONS_NOT_LIVE_MIX, &["b", "d"]);
}
#[test]
fn task_heartbeat__refs_refreshed__none() {
    heartbeat_of(TASK_HEARTBEAT_REFS_REFRESHED_NONE, &[("a", 2)]);
}
#[test]
fn task_heartbeat__refs_refreshed__one() {
    heartbeat_of(TASK_HEARTBEAT_REFS_REFRESHED_ONE, &[("a", 1)]);
}
#[test]
fn task_heartbeat__refs_refreshed__all() {
    heartbeat_of(TASK_HEARTBEAT_REFS_REFRESHED_ALL, &[("a", 1), ("b", 1)]);
}
#[test]
fn task_heartbeat__refs_refreshed__mix() {
    heartbeat_of(TASK_HEARTBEAT_REFS_REFRESHED_MIX, &[("a", 1), ("b", 2)]);
}
#[test]
fn promise_settle__awaiters_resumed__none() {
    awaiters(Via::Settle, PROMISE_SETTLE_AWAITERS_RESUMED_NONE, &[false]);
}
#[test]
fn promise_settle__awaiters_resumed__one() {
    awaiters(Via::Settle, PROMISE_SETTLE_AWAITERS_RESUMED_ONE, &[true]);
}
#[test]
fn promise_settle__awaiters_resumed__all() {
    awaiters(
        Via::Settle,
        PROMISE_SETTLE_AWAITERS_RESUMED_ALL,
        &[true, true],
    );
}
#[test]
fn promise_settle__awaiters_resumed__mix() {
    awaiters(
        Via::Settle,
        PROMISE_SETTLE_AWAITERS_RESUMED_MIX,
        &[true, false],
    );
}
#[test]
fn task_fulfill__awaiters_resumed__none() {
    awaiters(
        Via::Fulfill,
        TASK_FULFILL_AWAITERS_RESUMED_NONE,
        &[false, false],
    );
}
#[test]
fn task_fulfill__awaiters_resumed__one() {
    awaiters(Via::Fulfill, TASK_FULFILL_AWAITERS_RESUMED_ONE, &[true]);
}
#[test]
fn task_fulfill__awaiters_resumed__all() {
    awaiters(
        Via::Fulfill,
        TASK_FULFILL_AWAITERS_RESUMED_ALL,
        &[true, true],
    );
}
#[test]
fn task_fulfill__awaiters_resumed__mix() {
    awaiters(
        Via::Fulfill,
        TASK_FULFILL_AWAITERS_RESUMED_MIX,
        &[false, true],
    );
}
#[test]
fn promise_timeout__awaiters_resumed__none() {
    awaiters(
        Via::Timeout,
        PROMISE_TIMEOUT_AWAITERS_RESUMED_NONE,
        &[false],
    );
}
#[test]
fn promise_timeout__awaiters_resumed__one() {
    awaiters(Via::Timeout, PROMISE_TIMEOUT_AWAITERS_RESUMED_ONE, &[true]);
}
#[test]
fn promise_timeout__awaiters_resumed__all() {
    awaiters(
        Via::Timeout,
        PROMISE_TIMEOUT_AWAITERS_RESUMED_ALL,
        &[true, true],
    );
}
#[test]
fn promise_timeout__awaiters_resumed__mix() {
    awaiters(
        Via::Timeout,
        PROMISE_TIMEOUT_AWAITERS_RESUMED_MIX,
        &[true, false, true],
    );
}
#[test]
fn promise_settle__listeners__one() {
    listeners(Via::Settle, PROMISE_SETTLE_LISTENERS_ONE, &[L]);
}
#[test]
fn promise_settle__listeners__many() {
    listeners(Via::Settle, PROMISE_SETTLE_LISTENERS_MANY, &[L, W]);
}
#[test]
fn task_fulfill__listeners__one() {
    listeners(Via::Fulfill, TASK_FULFILL_LISTENERS_ONE, &[L]);
}
#[test]
fn task_fulfill__listeners__many() {
    listeners(Via::Fulfill, TASK_FULFILL_LISTENERS_MANY, &[L, W]);
}
#[test]
fn promise_timeout__listeners__one() {
    listeners(Via::Timeout, PROMISE_TIMEOUT_LISTENERS_ONE, &[L]);
}
#[test]
fn promise_timeout__listeners__many() {
    listeners(Via::Timeout, PROMISE_TIMEOUT_LISTENERS_MANY, &[L, W]);
}
#[test]
fn tick__promise_timeouts_with_task__none() {
    tick_of(TICK_PROMISE_TIMEOUTS_WITH_TASK_NONE, &[false, false]);
}
#[test]
fn tick__promise_timeouts_with_task__one() {
    tick_of(TICK_PROMISE_TIMEOUTS_WITH_TASK_ONE, &[true]);
}
#[test]
fn tick__promise_timeouts_with_task__all() {
    tick_of(TICK_PROMISE_TIMEOUTS_WITH_TASK_ALL, &[true, true]);
}
#[test]
fn tick__promise_timeouts_with_task__mix() {
    tick_of(TICK_PROMISE_TIMEOUTS_WITH_TASK_MIX, &[true, false]);
}
#[test]
fn catch_up__occurrences__one() {
    catch_up_at(CATCH_UP_OCCURRENCES_ONE, 60_000);
}
#[test]
fn catch_up__occurrences__many() {
    catch_up_at(CATCH_UP_OCCURRENCES_MANY, 180_000);
}

// ----- the list and its tests -----

/// The names of the `#[test]` functions of this file.
fn tests_here() -> Vec<&'static str> {
    let src: &'static str = include_str!("markers.rs");
    let lines: Vec<&str> = src.lines().map(str::trim).collect();
    let mut names = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(rest) = line.strip_prefix("fn ") {
            if i > 0 && lines[i - 1] == "#[test]" {
                names.push(rest.split('(').next().unwrap_or(rest));
            }
        }
    }
    names
}

/// The tests that name no marker: the meta tests below, and those of
/// where an instant is not marked.
const META: [&str; 5] = [
    "every_reachable_marker_has_a_test",
    "every_marker_test_names_a_marker",
    "unreachable_markers_have_no_test",
    "a_stale_version_marks_no_instant_of_its_tasks_deadline",
    "an_awaited_deadline_beside_a_settled_awaited_marks_no_instant",
];

#[test]
fn every_reachable_marker_has_a_test() {
    let tests = tests_here();
    let missing: Vec<String> = marker::ALL
        .iter()
        .filter(|m| m.reachable())
        .map(|m| m.test_name())
        .filter(|n| !tests.contains(&n.as_str()))
        .collect();
    assert!(missing.is_empty(), "markers without a test: {missing:#?}");
}

#[test]
fn every_marker_test_names_a_marker() {
    let names: Vec<String> = marker::ALL.iter().map(|m| m.test_name()).collect();
    for t in tests_here().into_iter().filter(|t| !META.contains(t)) {
        assert!(names.iter().any(|n| n == t), "`{t}` names no marker");
    }
}

/// A deadline's instant is marked only where it decides the answer: a
/// request of a stale version is refused (409) at every instant, so none
/// is marked, in each handler of the guard's spine.
#[test]
fn a_stale_version_marks_no_instant_of_its_tasks_deadline() {
    let stale = [
        (TASK_ACQUIRE, task_acquire("a", 1, "p1", 60_000), false),
        (
            TASK_FENCE,
            fence_create("a", 2, create_req("x", LATER, plain())),
            true,
        ),
        (TASK_FULFILL, fulfill("a", 2, PromiseState::Resolved), true),
        (TASK_RELEASE, release("a", 2), true),
        (TASK_SUSPEND, suspend("a", 2, &[]), true),
    ];
    for (b, last, held) in stale {
        let setup = if held {
            held_a()
        } else {
            vec![(T, promise_create("a", D, target()))]
        };
        for now in [D - 1, D, D + 1] {
            let marks = marks_at(&setup, &Last::Req(last.clone()), now);
            for i in b.all() {
                assert!(!marks.contains(&i), "{i} in {marks:?}");
            }
        }
    }
}

/// An awaited promise's instant is marked only where it decides the
/// suspend's answer: with another awaited promise settled, or expired,
/// the 300 comes at every instant, so none is marked; listed twice, both
/// flip together, so each instant is marked.
#[test]
fn an_awaited_deadline_beside_a_settled_awaited_marks_no_instant() {
    let mut setup = suspend_awaited_site().setup;
    setup.push((T, promise_create("c", LATER, plain())));
    setup.push((T, promise_settle("c", PromiseState::Resolved)));
    setup.push((T, promise_create("e", D - 5, plain())));
    for other in ["c", "e"] {
        for now in [D - 1, D, D + 1] {
            let marks = marks_at(&setup, &Last::Req(suspend("a", 1, &["b", other])), now);
            for i in TASK_SUSPEND_AWAITED.all() {
                assert!(!marks.contains(&i), "{other}: {i} in {marks:?}");
            }
        }
    }
    let twice = Last::Req(suspend("a", 1, &["b", "b"]));
    for (now, i) in [(D - 1, 1), (D, 0), (D + 1, 2)] {
        let marks = marks_at(&setup, &twice, now);
        assert!(
            marks.contains(&TASK_SUSPEND_AWAITED.all()[i]),
            "{now}: {marks:?}"
        );
    }
}

#[test]
fn unreachable_markers_have_no_test() {
    let tests = tests_here();
    for (m, why) in marker::UNREACHABLE {
        assert!(!why.is_empty(), "{m} has no reason");
        assert!(
            !tests.contains(&m.test_name().as_str()),
            "{m} is listed unreachable but tested"
        );
    }
}
