//! One test per branch of the internal transitions: `enqueueResume`
//! (`00-resume.lean`), the four timeouts and `catchUp` (`02-timeouts.lean`),
//! named after the branch (`Branch::test_name`). Timeouts are fired by
//! `tick` (as the runner does) or, for a timer that is not armed, by `fire`.
#![allow(non_snake_case)]

mod common;

use common::*;
use model::branch::*;
use model::machine::{Machine, Timer};
use model::state::{TaskObject, TARGET};
use model::types::{PromiseRecord, PromiseState, TaskState};

fn promise_timer(id: &str) -> Timer {
    Timer::Promise(id.to_string())
}

fn retry_timer(id: &str) -> Timer {
    Timer::TaskRetry(id.to_string())
}

fn lease_timer(id: &str) -> Timer {
    Timer::TaskLease(id.to_string())
}

fn schedule_timer(id: &str) -> Timer {
    Timer::Schedule(id.to_string())
}

/// A plain promise `b` (deadline 50 000) whose callbacks hold `awaiters`,
/// written directly.
fn b_awaited_by(m: &mut Machine, awaiters: &[&str]) {
    let mut b = promise_object("b", 50_000, 1000, plain());
    b.callbacks = awaiters.iter().map(|a| a.to_string()).collect();
    m.state.set_promise(b);
}

// ----- 00-resume enqueueResume -----

#[test]
fn resume__no_task() {
    let mut m = Machine::default();
    b_awaited_by(&mut m, &["ghost"]);
    let want = Want::of(&m);
    let b = settled(
        &pending("b", 50_000, 1000, plain()),
        PromiseState::Resolved,
        2000,
    );
    assert_eq!(
        m.apply(&promise_settle("b", PromiseState::Resolved), 2000),
        ok(b.clone())
    );
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_SETTLE_SETTLED_200,
            RESUME_NO_TASK,
            PROMISE_SETTLE_SETTLED_WITHOUT_TASK
        ]
    );
    want.promise(b).callbacks("b", &[]).check(&m);
}

#[test]
fn resume__suspended_resumed() {
    // `a` suspended on `b` and `c`; `b` is a task's promise, fulfilled.
    let mut m = setup(&[
        (1000, task_create("p1", 30_000, "a", 100_000, target())),
        (1000, task_create("p2", 30_000, "b", 100_000, target())),
        (1000, promise_create("c", 100_000, plain())),
        (1000, suspend("a", 1, &["b", "c"])),
    ]);
    let want = Want::of(&m);
    let b = settled(
        &pending("b", 100_000, 1000, target()),
        PromiseState::Resolved,
        2000,
    );
    assert_eq!(
        m.apply(&fulfill("b", 1, PromiseState::Resolved), 2000),
        fulfill_res(200, Some(b.clone()))
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_FULFILL_FULFILLED_200,
            RESUME_SUSPENDED_RESUMED,
            RESUME_SUSPENDED_EXECUTE_SENT
        ]
    );
    // Pending at the same version with `b` as its trigger; still registered
    // on `c`, so `c` settling later is buffered.
    want.promise(b)
        .no_promise_timeout("b")
        .callbacks("b", &[])
        .task(task("b", TaskState::Fulfilled, 1, 0))
        .no_task_timeouts("b")
        .task(task("a", TaskState::Pending, 1, 1))
        .resumes("a", &["b"])
        .task_timeout("a", RETRY, 2000 + RETRY_MS)
        .execute(W, "a", 1)
        .check(&m);
}

#[test]
fn resume__suspended_no_promise() {
    let mut m = Machine::default();
    m.state
        .set_task(TaskObject::new("ghost", TaskState::Suspended, 2));
    b_awaited_by(&mut m, &["ghost"]);
    let want = Want::of(&m);
    let b = settled(
        &pending("b", 50_000, 1000, plain()),
        PromiseState::Resolved,
        2000,
    );
    assert_eq!(
        m.apply(&promise_settle("b", PromiseState::Resolved), 2000),
        ok(b.clone())
    );
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_SETTLE_SETTLED_200,
            RESUME_SUSPENDED_RESUMED,
            RESUME_SUSPENDED_NO_PROMISE,
            PROMISE_SETTLE_SETTLED_WITHOUT_TASK
        ]
    );
    // The state changes without the promise; only the message needs it.
    want.promise(b)
        .callbacks("b", &[])
        .task(task("ghost", TaskState::Pending, 2, 1))
        .resumes("ghost", &["b"])
        .task_timeout("ghost", RETRY, 2000 + RETRY_MS)
        .check(&m);
}

#[test]
fn resume__suspended_no_target() {
    // An empty `resonate:target`: the wire refuses it as an address (400),
    // the Lean does not.
    let empty = tags(&[(TARGET, "")]);
    let mut m = setup(&[
        (1000, task_create("p1", 30_000, "a", 100_000, empty)),
        (1000, promise_create("b", 50_000, plain())),
        (1000, suspend("a", 1, &["b"])),
    ]);
    let want = Want::of(&m);
    let b = settled(
        &pending("b", 50_000, 1000, plain()),
        PromiseState::Resolved,
        2000,
    );
    assert_eq!(
        m.apply(&promise_settle("b", PromiseState::Resolved), 2000),
        ok(b.clone())
    );
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_SETTLE_SETTLED_200,
            RESUME_SUSPENDED_RESUMED,
            RESUME_SUSPENDED_NO_TARGET,
            PROMISE_SETTLE_SETTLED_WITHOUT_TASK
        ]
    );
    // Resumed, but nothing is sent.
    want.promise(b)
        .callbacks("b", &[])
        .task(task("a", TaskState::Pending, 1, 1))
        .resumes("a", &["b"])
        .task_timeout("a", RETRY, 2000 + RETRY_MS)
        .check(&m);
}

#[test]
fn resume__suspended_execute_sent() {
    // Created pending (execute v0 sent), acquired as v1, suspended on `b`.
    let mut m = setup(&[
        (1000, promise_create("a", 100_000, target())),
        (1500, task_acquire("a", 0, "p1", 30_000)),
        (1500, promise_create("b", 50_000, plain())),
        (1500, suspend("a", 1, &["b"])),
    ]);
    let want = Want::of(&m);
    let b = settled(
        &pending("b", 50_000, 1500, plain()),
        PromiseState::Rejected,
        2000,
    );
    assert_eq!(
        m.apply(&promise_settle("b", PromiseState::Rejected), 2000),
        ok(b.clone())
    );
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_SETTLE_SETTLED_200,
            RESUME_SUSPENDED_RESUMED,
            RESUME_SUSPENDED_EXECUTE_SENT,
            PROMISE_SETTLE_SETTLED_WITHOUT_TASK
        ]
    );
    // The execute carries the current version (a wake-up, not a new
    // fencing token) and replaces the v0 one under the task's key.
    want.promise(b)
        .callbacks("b", &[])
        .task(task("a", TaskState::Pending, 1, 1))
        .resumes("a", &["b"])
        .task_timeout("a", RETRY, 2000 + RETRY_MS)
        .execute(W, "a", 1)
        .check(&m);
}

#[test]
fn resume__buffered() {
    // `a` pending, `x` acquired, `h` halted, all awaiting `b`.
    let mut m = setup(&[
        (1000, promise_create("a", 100_000, target())),
        (1000, task_create("p1", 30_000, "x", 100_000, target())),
        (1000, promise_create("h", 100_000, target())),
        (1000, halt("h")),
        (1000, promise_create("b", 50_000, plain())),
        (1000, register_callback("b", "a")),
        (1000, register_callback("b", "x")),
        (1000, register_callback("b", "h")),
    ]);
    let want = Want::of(&m);
    let b = settled(
        &pending("b", 50_000, 1000, plain()),
        PromiseState::Resolved,
        2000,
    );
    assert_eq!(
        m.apply(&promise_settle("b", PromiseState::Resolved), 2000),
        ok(b.clone())
    );
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_SETTLE_SETTLED_200,
            RESUME_BUFFERED,
            RESUME_BUFFERED,
            RESUME_BUFFERED,
            PROMISE_SETTLE_SETTLED_WITHOUT_TASK
        ]
    );
    // Only the resumes change: no state, timeout or message.
    want.promise(b)
        .callbacks("b", &[])
        .task(task("a", TaskState::Pending, 0, 1))
        .resumes("a", &["b"])
        .task(held("x", 1, "p1", 30_000, 1))
        .resumes("x", &["b"])
        .task(task("h", TaskState::Halted, 0, 1))
        .resumes("h", &["b"])
        .check(&m);
}

#[test]
fn resume__already_buffered() {
    // A promise settles twice only through a settle to `pending`, which the
    // Lean allows and the wire refuses (400): `b` resumes `a`, is registered
    // again, then settles for good, finding `b` already buffered.
    let mut m = setup(&[
        (1000, promise_create("a", 100_000, target())),
        (1000, promise_create("b", 50_000, plain())),
        (1000, register_callback("b", "a")),
        (1500, promise_settle("b", PromiseState::Pending)),
        (1600, register_callback("b", "a")),
    ]);
    let want = Want::of(&m);
    assert_eq!(want.0.resumes.len(), 1);
    let b = settled(
        &pending("b", 50_000, 1000, plain()),
        PromiseState::Resolved,
        2000,
    );
    assert_eq!(
        m.apply(&promise_settle("b", PromiseState::Resolved), 2000),
        ok(b.clone())
    );
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_SETTLE_SETTLED_200,
            RESUME_ALREADY_BUFFERED,
            PROMISE_SETTLE_SETTLED_WITHOUT_TASK
        ]
    );
    want.promise(b).callbacks("b", &[]).check(&m);
}

#[test]
fn resume__fulfilled_ignored() {
    // A task awaiting its own promise (the Lean allows it, the wire refuses
    // it with 400): settling it fulfills the task before the cascade reaches
    // the callback.
    let mut m = setup(&[
        (1000, task_create("p1", 30_000, "a", 100_000, target())),
        (1000, suspend("a", 1, &["a"])),
    ]);
    let want = Want::of(&m);
    assert_eq!(want.0.callbacks.len(), 1);
    let a = settled(
        &pending("a", 100_000, 1000, target()),
        PromiseState::Resolved,
        2000,
    );
    assert_eq!(
        m.apply(&promise_settle("a", PromiseState::Resolved), 2000),
        ok(a.clone())
    );
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_SETTLE_SETTLED_200,
            RESUME_FULFILLED_IGNORED,
            PROMISE_SETTLE_SETTLED_WITH_TASK
        ]
    );
    want.promise(a)
        .no_promise_timeout("a")
        .callbacks("a", &[])
        .task(task("a", TaskState::Fulfilled, 1, 0))
        .check(&m);
}

// ----- onPromiseTimeout -----

#[test]
fn promise_timeout__no_promise() {
    let mut m = Machine::default();
    m.fire(&promise_timer("ghost"), 1000);
    assert_eq!(m.take_hits(), [PROMISE_TIMEOUT_NO_PROMISE]);
    Want::empty().check(&m);
}

#[test]
fn promise_timeout__not_pending() {
    let mut m = setup(&[
        (1000, promise_create("a", 10_000, plain())),
        (2000, promise_settle("a", PromiseState::Resolved)),
    ]);
    m.state.set_promise_timeout("a", 10_000);
    let before = m.state.clone();
    assert_eq!(m.tick(10_000), [promise_timer("a")]);
    assert_eq!(m.take_hits(), [PROMISE_TIMEOUT_NOT_PENDING]);
    // Nothing written, not even the timeout disarmed.
    assert_eq!(m.state, before);
}

#[test]
fn promise_timeout__timer_resolved() {
    let mut m = setup(&[
        (1000, promise_create("t", 10_000, timer())),
        (1000, register_listener("t", L)),
    ]);
    let want = Want::of(&m);
    // Fired late: settled at the deadline, not at `now`.
    assert_eq!(m.tick(25_000), [promise_timer("t")]);
    assert_eq!(
        m.take_hits(),
        [PROMISE_TIMEOUT_TIMER_RESOLVED, PROMISE_TIMEOUT_WITHOUT_TASK]
    );
    let t = PromiseRecord {
        state: PromiseState::Resolved,
        settled_at: Some(10_000),
        ..pending("t", 10_000, 1000, timer())
    };
    want.promise(t.clone())
        .no_promise_timeout("t")
        .listeners("t", &[])
        .unblock(L, t)
        .check(&m);
}

#[test]
fn promise_timeout__rejected_timedout() {
    let mut m = setup(&[(1000, promise_create("a", 10_000, target()))]);
    let want = Want::of(&m);
    // The retry (due at 6000) is read after the promise group has fulfilled
    // the task and disarmed it, so it does not fire.
    assert_eq!(m.tick(10_000), [promise_timer("a")]);
    assert_eq!(
        m.take_hits(),
        [PROMISE_TIMEOUT_REJECTED_TIMEDOUT, PROMISE_TIMEOUT_WITH_TASK]
    );
    let a = PromiseRecord {
        state: PromiseState::RejectedTimedout,
        settled_at: Some(10_000),
        ..pending("a", 10_000, 1000, target())
    };
    want.promise(a)
        .no_promise_timeout("a")
        .task(task("a", TaskState::Fulfilled, 0, 0))
        .no_task_timeouts("a")
        .check(&m);
}

#[test]
fn promise_timeout__with_task() {
    // `a` acquired (lease until 51 000), awaited by suspended `x`, and
    // itself awaiting `c`.
    let mut m = setup(&[
        (1000, task_create("p1", 50_000, "a", 20_000, target())),
        (1000, task_create("p1", 50_000, "x", 100_000, target())),
        (1000, suspend("x", 1, &["a"])),
        (1000, promise_create("c", 100_000, plain())),
        (1000, register_callback("c", "a")),
    ]);
    let want = Want::of(&m);
    assert_eq!(m.tick(20_000), [promise_timer("a")]);
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_TIMEOUT_REJECTED_TIMEDOUT,
            RESUME_SUSPENDED_RESUMED,
            RESUME_SUSPENDED_EXECUTE_SENT,
            PROMISE_TIMEOUT_WITH_TASK
        ]
    );
    let a = PromiseRecord {
        state: PromiseState::RejectedTimedout,
        settled_at: Some(20_000),
        ..pending("a", 20_000, 1000, target())
    };
    want.promise(a)
        .no_promise_timeout("a")
        .callbacks("a", &[])
        .task(task("a", TaskState::Fulfilled, 1, 0))
        .no_task_timeouts("a")
        // the scrub
        .callbacks("c", &[])
        .task(task("x", TaskState::Pending, 1, 1))
        .resumes("x", &["a"])
        .task_timeout("x", RETRY, 20_000 + RETRY_MS)
        .execute(W, "x", 1)
        .check(&m);
}

#[test]
fn promise_timeout__without_task() {
    // A durable sleep: `a` suspended on a timer.
    let mut m = setup(&[
        (1000, task_create("p1", 30_000, "a", 100_000, target())),
        (1000, promise_create("t", 10_000, timer())),
        (1000, suspend("a", 1, &["t"])),
    ]);
    let want = Want::of(&m);
    assert_eq!(m.tick(12_000), [promise_timer("t")]);
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_TIMEOUT_TIMER_RESOLVED,
            RESUME_SUSPENDED_RESUMED,
            RESUME_SUSPENDED_EXECUTE_SENT,
            PROMISE_TIMEOUT_WITHOUT_TASK
        ]
    );
    let t = PromiseRecord {
        state: PromiseState::Resolved,
        settled_at: Some(10_000),
        ..pending("t", 10_000, 1000, timer())
    };
    want.promise(t)
        .no_promise_timeout("t")
        .callbacks("t", &[])
        .task(task("a", TaskState::Pending, 1, 1))
        .resumes("a", &["t"])
        .task_timeout("a", RETRY, 12_000 + RETRY_MS)
        .execute(W, "a", 1)
        .check(&m);
}

// ----- onTaskRetryTimeout -----

#[test]
fn task_retry_timeout__no_task() {
    let mut m = Machine::default();
    m.fire(&retry_timer("ghost"), 1000);
    assert_eq!(m.take_hits(), [TASK_RETRY_TIMEOUT_NO_TASK]);
    Want::empty().check(&m);
}

#[test]
fn task_retry_timeout__not_pending() {
    let mut m = setup(&[(1000, task_create("p1", 30_000, "a", 100_000, target()))]);
    m.state.set_task_timeout("a", 0, 5000);
    let before = m.state.clone();
    assert_eq!(m.tick(5000), [retry_timer("a")]);
    assert_eq!(m.take_hits(), [TASK_RETRY_TIMEOUT_NOT_PENDING]);
    assert_eq!(m.state, before);
}

#[test]
fn task_retry_timeout__no_promise() {
    let mut m = Machine::default();
    m.state
        .set_task(TaskObject::new("a", TaskState::Pending, 0));
    m.state.set_task_timeout("a", 0, 6000);
    let want = Want::of(&m);
    assert_eq!(m.tick(6000), [retry_timer("a")]);
    assert_eq!(m.take_hits(), [TASK_RETRY_TIMEOUT_NO_PROMISE]);
    // Re-armed; nothing sent.
    want.task_timeout("a", RETRY, 6000 + RETRY_MS).check(&m);
}

#[test]
fn task_retry_timeout__requeued() {
    // Delayed to 30 000: no execute until the retry fires.
    let mut m = setup(&[(1000, promise_create("a", 100_000, delayed("30000")))]);
    let want = Want::of(&m);
    assert!(want.0.messages.is_empty());
    assert_eq!(m.tick(31_000), [retry_timer("a")]);
    assert_eq!(m.take_hits(), [TASK_RETRY_TIMEOUT_REQUEUED]);
    // Re-armed from `now`, execute at the current version.
    let want = want
        .task_timeout("a", RETRY, 31_000 + RETRY_MS)
        .execute(W, "a", 0);
    want.clone().check(&m);
    // Firing again re-sends under the same key: still one message.
    assert_eq!(m.tick(36_000), [retry_timer("a")]);
    assert_eq!(m.take_hits(), [TASK_RETRY_TIMEOUT_REQUEUED]);
    want.task_timeout("a", RETRY, 36_000 + RETRY_MS).check(&m);
}

// ----- onTaskLeaseTimeout -----

#[test]
fn task_lease_timeout__no_task() {
    let mut m = Machine::default();
    m.fire(&lease_timer("ghost"), 1000);
    assert_eq!(m.take_hits(), [TASK_LEASE_TIMEOUT_NO_TASK]);
    Want::empty().check(&m);
}

#[test]
fn task_lease_timeout__not_acquired() {
    let mut m = setup(&[(1000, promise_create("a", 100_000, target()))]);
    m.state.set_task_timeout("a", 1, 3000);
    let before = m.state.clone();
    assert_eq!(m.tick(3000), [lease_timer("a")]);
    assert_eq!(m.take_hits(), [TASK_LEASE_TIMEOUT_NOT_ACQUIRED]);
    assert_eq!(m.state, before);
}

#[test]
fn task_lease_timeout__no_promise() {
    let mut m = Machine::default();
    m.state.set_task(held_object("a", 1, "p1", 30_000));
    m.state.set_task_timeout("a", 1, 31_000);
    let want = Want::of(&m);
    assert_eq!(m.tick(31_000), [lease_timer("a")]);
    assert_eq!(m.take_hits(), [TASK_LEASE_TIMEOUT_NO_PROMISE]);
    want.task(task("a", TaskState::Pending, 1, 0))
        .no_task_timeouts("a")
        .task_timeout("a", RETRY, 31_000 + RETRY_MS)
        .check(&m);
}

#[test]
fn task_lease_timeout__expired() {
    // Created pending (execute v0), acquired as v1 at 2000 (lease until
    // 32 000), then a resume buffered.
    let mut m = setup(&[
        (1000, promise_create("a", 100_000, target())),
        (2000, task_acquire("a", 0, "p1", 30_000)),
        (2000, promise_create("b", 50_000, plain())),
        (2000, register_callback("b", "a")),
        (2500, promise_settle("b", PromiseState::Resolved)),
    ]);
    let want = Want::of(&m);
    assert_eq!(m.tick(32_000), [lease_timer("a")]);
    assert_eq!(m.take_hits(), [TASK_LEASE_TIMEOUT_EXPIRED]);
    // Version and resumes kept; execute re-sent at the current version.
    want.task(task("a", TaskState::Pending, 1, 1))
        .no_task_timeouts("a")
        .task_timeout("a", RETRY, 32_000 + RETRY_MS)
        .execute(W, "a", 1)
        .check(&m);
}

// ----- onScheduleTimeout and catchUp -----

const TEMPLATE: &str = "{{.id}}.{{.timestamp}}";

#[test]
fn schedule_timeout__no_schedule() {
    let mut m = Machine::default();
    m.fire(&schedule_timer("ghost"), 1000);
    assert_eq!(m.take_hits(), [SCHEDULE_TIMEOUT_NO_SCHEDULE]);
    Want::empty().check(&m);
}

#[test]
fn schedule_timeout__fired() {
    let mut m = setup(&[(
        1000,
        schedule_create("s", EVERY_MINUTE, TEMPLATE, 30_000, plain()),
    )]);
    let want = Want::of(&m);
    assert_eq!(m.tick(60_000), [schedule_timer("s")]);
    assert_eq!(
        m.take_hits(),
        [
            SCHEDULE_TIMEOUT_FIRED,
            CATCH_UP_OCCURRENCE,
            PROMISE_CREATE_NEW_PENDING_200,
            PROMISE_CREATE_NEW_NO_TARGET_200,
            CATCH_UP_CURRENT
        ]
    );
    // One promise, created at the occurrence; re-armed at the next one.
    want.promise(pending("s.60000", 90_000, 60_000, plain()))
        .schedule(every_minute(
            "s",
            TEMPLATE,
            30_000,
            plain(),
            1000,
            120_000,
            Some(60_000),
        ))
        .schedule_timeout("s", 120_000)
        .check(&m);
}

#[test]
fn catch_up__occurrence() {
    let mut m = setup(&[(
        1000,
        schedule_create("s", EVERY_MINUTE, TEMPLATE, 100_000, target()),
    )]);
    let mut want = Want::of(&m);
    // Three missed occurrences: one promise each, each created through the
    // complete `promise.create` at its own time.
    assert_eq!(m.tick(185_000), [schedule_timer("s")]);
    let created = [
        CATCH_UP_OCCURRENCE,
        PROMISE_CREATE_NEW_PENDING_200,
        PROMISE_CREATE_NEW_EXTERNAL_TIMEOUT_ARMED,
        PROMISE_CREATE_NEW_TARGET_200,
    ];
    let mut hits = vec![SCHEDULE_TIMEOUT_FIRED];
    for _ in 0..3 {
        hits.extend(created);
    }
    hits.push(CATCH_UP_CURRENT);
    assert_eq!(m.take_hits(), hits);
    for at in [60_000, 120_000, 180_000] {
        let id = format!("s.{at}");
        want = want
            .promise(pending(&id, at + 100_000, at, target()))
            .promise_timeout(&id, at + 100_000)
            .task(task(&id, TaskState::Pending, 0, 0))
            .task_timeout(&id, RETRY, at + RETRY_MS)
            .execute(W, &id, 0);
    }
    want.schedule(every_minute(
        "s",
        TEMPLATE,
        100_000,
        target(),
        1000,
        240_000,
        Some(180_000),
    ))
    .schedule_timeout("s", 240_000)
    .check(&m);
    // What the catch-up armed at or before `now` waits for the next tick:
    // the first promise is already past its deadline, two retries are due.
    assert_eq!(
        m.tick(185_000),
        [
            promise_timer("s.60000"),
            retry_timer("s.120000"),
            retry_timer("s.180000")
        ]
    );
}

#[test]
fn catch_up__current() {
    let mut m = setup(&[(
        1000,
        schedule_create("s", EVERY_MINUTE, TEMPLATE, 30_000, plain()),
    )]);
    let before = m.state.clone();
    // Fired before its occurrence: nothing to catch up, re-armed as it was.
    m.fire(&schedule_timer("s"), 30_000);
    assert_eq!(m.take_hits(), [SCHEDULE_TIMEOUT_FIRED, CATCH_UP_CURRENT]);
    assert_eq!(m.state, before);
}
