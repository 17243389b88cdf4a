//! One test per branch of the promise handlers (P-01..P-06), named after
//! the branch (`Branch::test_name`). Each asserts the whole response, the
//! whole resulting state and the branches taken.
#![allow(non_snake_case)]

mod common;

use common::*;
use model::api::{PromiseCreateReq, PromiseSearchReq, Request, Response};
use model::branch::*;
use model::machine::Machine;
use model::types::{PromiseRecord, PromiseState, TaskState};

// ----- P-01 promise.get -----

#[test]
fn promise_get__not_found_404() {
    let mut m = Machine::default();
    assert_eq!(m.apply(&promise_get("a"), 1000), promise_res(404, None));
    assert_eq!(m.take_hits(), [PROMISE_GET_NOT_FOUND_404]);
    Want::empty().check(&m);
}

#[test]
fn promise_get__pending_expired_projected_200() {
    let mut m = setup(&[
        (1000, promise_create("a", 10_000, plain())),
        (1000, promise_create("t", 10_000, timer())),
    ]);
    let before = m.state.clone();
    // At the deadline exactly (`timeoutAt ≤ now`), settled at the deadline.
    let a = PromiseRecord {
        state: PromiseState::RejectedTimedout,
        settled_at: Some(10_000),
        ..pending("a", 10_000, 1000, plain())
    };
    assert_eq!(m.apply(&promise_get("a"), 10_000), ok(a));
    assert_eq!(m.take_hits(), [PROMISE_GET_PENDING_EXPIRED_PROJECTED_200]);
    // A timer whose timeout has not fired yet reads resolved, still at its
    // deadline rather than `now`.
    let t = PromiseRecord {
        state: PromiseState::Resolved,
        settled_at: Some(10_000),
        ..pending("t", 10_000, 1000, timer())
    };
    assert_eq!(m.apply(&promise_get("t"), 20_000), ok(t));
    assert_eq!(m.take_hits(), [PROMISE_GET_PENDING_EXPIRED_PROJECTED_200]);
    // A projection writes nothing.
    assert_eq!(m.state, before);
}

#[test]
fn promise_get__pending_200() {
    let mut m = setup(&[(1000, promise_create("a", 10_000, target()))]);
    assert_writes_nothing(
        &mut m,
        &promise_get("a"),
        9_999,
        ok(pending("a", 10_000, 1000, target())),
        &[PROMISE_GET_PENDING_200],
    );
}

#[test]
fn promise_get__settled_200() {
    let mut m = setup(&[
        (1000, promise_create("a", 10_000, plain())),
        (2000, promise_settle("a", PromiseState::Rejected)),
    ]);
    let before = m.state.clone();
    // Past the deadline a settled promise is returned as stored.
    let a = settled(
        &pending("a", 10_000, 1000, plain()),
        PromiseState::Rejected,
        2000,
    );
    assert_eq!(m.apply(&promise_get("a"), 20_000), ok(a));
    assert_eq!(m.take_hits(), [PROMISE_GET_SETTLED_200]);
    assert_eq!(m.state, before);
}

// ----- P-02 promise.create -----

#[test]
fn promise_create__new_pending_200() {
    let mut m = Machine::default();
    let req = PromiseCreateReq {
        param: value("in"),
        ..create_req("a", 10_000, tags(&[("k", "v")]))
    };
    let a = PromiseRecord {
        param: value("in"),
        ..pending("a", 10_000, 1000, tags(&[("k", "v")]))
    };
    assert_eq!(m.apply(&Request::PromiseCreate(req), 1000), ok(a.clone()));
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_CREATE_NEW_PENDING_200,
            PROMISE_CREATE_NEW_NO_TARGET_200
        ]
    );
    // Internal: no promise timeout, no task.
    Want::empty().promise(a).check(&m);
}

#[test]
fn promise_create__new_external_timeout_armed() {
    let mut m = Machine::default();
    let t = pending("t", 10_000, 1000, timer());
    assert_eq!(
        m.apply(&promise_create("t", 10_000, timer()), 1000),
        ok(t.clone())
    );
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_CREATE_NEW_PENDING_200,
            PROMISE_CREATE_NEW_EXTERNAL_TIMEOUT_ARMED,
            PROMISE_CREATE_NEW_NO_TARGET_200
        ]
    );
    // Only `resonate:timer = "true"` makes a timer: "false" is internal.
    let not_timer = tags(&[("resonate:timer", "false")]);
    let f = pending("f", 10_000, 1000, not_timer.clone());
    assert_eq!(
        m.apply(&promise_create("f", 10_000, not_timer), 1000),
        ok(f.clone())
    );
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_CREATE_NEW_PENDING_200,
            PROMISE_CREATE_NEW_NO_TARGET_200
        ]
    );
    Want::empty()
        .promise(t)
        .promise_timeout("t", 10_000)
        .promise(f)
        .check(&m);
}

#[test]
fn promise_create__new_no_target_200() {
    let mut m = Machine::default();
    let a = pending("a", 10_000, 1000, plain());
    assert_eq!(
        m.apply(&promise_create("a", 10_000, plain()), 1000),
        ok(a.clone())
    );
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_CREATE_NEW_PENDING_200,
            PROMISE_CREATE_NEW_NO_TARGET_200
        ]
    );
    // No task, no message, no timeout.
    Want::empty().promise(a).check(&m);
}

#[test]
fn promise_create__new_target_200() {
    let mut m = Machine::default();
    let a = pending("a", 10_000, 1000, target());
    assert_eq!(
        m.apply(&promise_create("a", 10_000, target()), 1000),
        ok(a.clone())
    );
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_CREATE_NEW_PENDING_200,
            PROMISE_CREATE_NEW_EXTERNAL_TIMEOUT_ARMED,
            PROMISE_CREATE_NEW_TARGET_200
        ]
    );
    Want::empty()
        .promise(a)
        .promise_timeout("a", 10_000)
        .task(task("a", TaskState::Pending, 0, 0))
        .task_timeout("a", RETRY, 1000 + RETRY_MS)
        .execute(W, "a", 0)
        .check(&m);
}

#[test]
fn promise_create__new_target_delayed_200() {
    let mut m = Machine::default();
    // `resonate:delay` is an absolute time; `_` separates digits as in
    // Lean's `String.toNat!`.
    for (id, delay) in [("a", "30000"), ("b", "30_000")] {
        assert_eq!(
            m.apply(&promise_create(id, 100_000, delayed(delay)), 1000),
            ok(pending(id, 100_000, 1000, delayed(delay)))
        );
        assert_eq!(
            m.take_hits(),
            [
                PROMISE_CREATE_NEW_PENDING_200,
                PROMISE_CREATE_NEW_EXTERNAL_TIMEOUT_ARMED,
                PROMISE_CREATE_NEW_TARGET_DELAYED_200
            ]
        );
    }
    // The retry timeout waits for the delay, and no execute is sent yet.
    let want = Want::empty()
        .promise(pending("a", 100_000, 1000, delayed("30000")))
        .promise(pending("b", 100_000, 1000, delayed("30_000")))
        .promise_timeout("a", 100_000)
        .promise_timeout("b", 100_000)
        .task(task("a", TaskState::Pending, 0, 0))
        .task(task("b", TaskState::Pending, 0, 0))
        .task_timeout("a", RETRY, 30_000)
        .task_timeout("b", RETRY, 30_000);
    want.clone().check(&m);
    assert!(m.tick(29_999).is_empty());
    // The first execute goes out when the delay elapses.
    m.tick(30_000);
    assert_eq!(
        m.take_hits(),
        [TASK_RETRY_TIMEOUT_REQUEUED, TASK_RETRY_TIMEOUT_REQUEUED]
    );
    want.task_timeout("a", RETRY, 30_000 + RETRY_MS)
        .task_timeout("b", RETRY, 30_000 + RETRY_MS)
        .execute(W, "a", 0)
        .execute(W, "b", 0)
        .check(&m);
}

#[test]
fn promise_create__new_target_delay_elapsed_200() {
    let mut m = Machine::default();
    // A delay equal to `now` has elapsed; one that is not a natural number
    // reads as 0 (`toNat!`'s default).
    let mut want = Want::empty();
    for (id, delay) in [("a", "1000"), ("b", "soon"), ("c", "_1"), ("d", "1__0")] {
        let tags = delayed(delay);
        assert_eq!(
            m.apply(&promise_create(id, 10_000, tags.clone()), 1000),
            ok(pending(id, 10_000, 1000, tags.clone()))
        );
        assert_eq!(
            m.take_hits(),
            [
                PROMISE_CREATE_NEW_PENDING_200,
                PROMISE_CREATE_NEW_EXTERNAL_TIMEOUT_ARMED,
                PROMISE_CREATE_NEW_TARGET_DELAY_ELAPSED_200
            ]
        );
        want = want
            .promise(pending(id, 10_000, 1000, tags))
            .promise_timeout(id, 10_000)
            .task(task(id, TaskState::Pending, 0, 0))
            .task_timeout(id, RETRY, 1000 + RETRY_MS)
            .execute(W, id, 0);
    }
    want.check(&m);
}

#[test]
fn promise_create__new_expired_200() {
    let mut m = Machine::default();
    // Created at its deadline: settled at once, `createdAt` = `settledAt` =
    // the deadline (not `now`), no timeout, no cascade.
    let a = PromiseRecord {
        state: PromiseState::RejectedTimedout,
        settled_at: Some(10_000),
        ..pending("a", 10_000, 10_000, plain())
    };
    assert_eq!(
        m.apply(&promise_create("a", 10_000, plain()), 10_000),
        ok(a.clone())
    );
    assert_eq!(m.take_hits(), [PROMISE_CREATE_NEW_EXPIRED_200]);
    // A timer resolves.
    let t = PromiseRecord {
        state: PromiseState::Resolved,
        settled_at: Some(10_000),
        ..pending("t", 10_000, 10_000, timer())
    };
    assert_eq!(
        m.apply(&promise_create("t", 10_000, timer()), 12_000),
        ok(t.clone())
    );
    assert_eq!(m.take_hits(), [PROMISE_CREATE_NEW_EXPIRED_200]);
    Want::empty().promise(a).promise(t).check(&m);
}

#[test]
fn promise_create__new_expired_target_200() {
    let mut m = Machine::default();
    let a = PromiseRecord {
        state: PromiseState::RejectedTimedout,
        settled_at: Some(10_000),
        ..pending("a", 10_000, 10_000, target())
    };
    assert_eq!(
        m.apply(&promise_create("a", 10_000, target()), 12_000),
        ok(a.clone())
    );
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_CREATE_NEW_EXPIRED_200,
            PROMISE_CREATE_NEW_EXPIRED_TARGET_200
        ]
    );
    // A fulfilled task at version 0; nothing armed, nothing sent.
    Want::empty()
        .promise(a)
        .task(task("a", TaskState::Fulfilled, 0, 0))
        .check(&m);
}

#[test]
fn promise_create__exists_pending_expired_projected_200() {
    let mut m = setup(&[(1000, promise_create("a", 10_000, plain()))]);
    let before = m.state.clone();
    // The request's own deadline and tags are ignored.
    let a = PromiseRecord {
        state: PromiseState::RejectedTimedout,
        settled_at: Some(10_000),
        ..pending("a", 10_000, 1000, plain())
    };
    assert_eq!(
        m.apply(&promise_create("a", 50_000, target()), 10_000),
        ok(a)
    );
    assert_eq!(
        m.take_hits(),
        [PROMISE_CREATE_EXISTS_PENDING_EXPIRED_PROJECTED_200]
    );
    assert_eq!(m.state, before);
}

#[test]
fn promise_create__exists_200() {
    let mut m = setup(&[
        (1000, promise_create("a", 10_000, target())),
        (1000, promise_create("s", 10_000, plain())),
        (2000, promise_settle("s", PromiseState::Resolved)),
    ]);
    let before = m.state.clone();
    // The stored promise, whatever the request says; no second task.
    assert_eq!(
        m.apply(&promise_create("a", 50_000, plain()), 3000),
        ok(pending("a", 10_000, 1000, target()))
    );
    assert_eq!(m.take_hits(), [PROMISE_CREATE_EXISTS_200]);
    let s = settled(
        &pending("s", 10_000, 1000, plain()),
        PromiseState::Resolved,
        2000,
    );
    assert_eq!(
        m.apply(&promise_create("s", 50_000, plain()), 20_000),
        ok(s)
    );
    assert_eq!(m.take_hits(), [PROMISE_CREATE_EXISTS_200]);
    assert_eq!(m.state, before);
}

// ----- P-03 promise.settle -----

#[test]
fn promise_settle__not_found_404() {
    let mut m = Machine::default();
    assert_eq!(
        m.apply(&promise_settle("a", PromiseState::Resolved), 1000),
        promise_res(404, None)
    );
    assert_eq!(m.take_hits(), [PROMISE_SETTLE_NOT_FOUND_404]);
    Want::empty().check(&m);
}

#[test]
fn promise_settle__settled_200() {
    // `a` is suspended on `b`; `b` has a listener.
    let mut m = setup(&[
        (1000, task_create("p1", 60_000, "a", 100_000, target())),
        (1000, promise_create("b", 50_000, plain())),
        (1000, suspend("a", 1, &["b"])),
        (1000, register_listener("b", L)),
        (1000, register_listener("b", L)),
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
            RESUME_SUSPENDED_EXECUTE_SENT,
            PROMISE_SETTLE_SETTLED_WITHOUT_TASK
        ]
    );
    // Registrations cleared, one unblock per listener, the awaiter resumed
    // at its current version with `b` as its trigger.
    want.promise(b.clone())
        .callbacks("b", &[])
        .listeners("b", &[])
        .unblock(L, b)
        .task(task("a", TaskState::Pending, 1, 1))
        .resumes("a", &["b"])
        .task_timeout("a", RETRY, 2000 + RETRY_MS)
        .execute(W, "a", 1)
        .check(&m);
}

#[test]
fn promise_settle__settled_with_task() {
    // `a` (suspended) awaits `c`; `d` is acquired under a lease.
    let mut m = setup(&[
        (1000, task_create("p1", 60_000, "a", 100_000, target())),
        (1000, promise_create("c", 50_000, plain())),
        (1000, suspend("a", 1, &["c"])),
        (1000, task_create("p1", 60_000, "d", 100_000, target())),
    ]);
    let want = Want::of(&m);
    let a = settled(
        &pending("a", 100_000, 1000, target()),
        PromiseState::Rejected,
        2000,
    );
    assert_eq!(
        m.apply(&promise_settle("a", PromiseState::Rejected), 2000),
        ok(a.clone())
    );
    assert_eq!(
        m.take_hits(),
        [PROMISE_SETTLE_SETTLED_200, PROMISE_SETTLE_SETTLED_WITH_TASK]
    );
    // The task is fulfilled, and the scrub drops `a` from `c`'s callbacks:
    // `a` can never be resumed again.
    let want = want
        .promise(a)
        .no_promise_timeout("a")
        .task(task("a", TaskState::Fulfilled, 1, 0))
        .callbacks("c", &[]);
    want.clone().check(&m);
    // An acquired task loses its lease and its lease timeout.
    let d = settled(
        &pending("d", 100_000, 1000, target()),
        PromiseState::RejectedCanceled,
        3000,
    );
    assert_eq!(
        m.apply(&promise_settle("d", PromiseState::RejectedCanceled), 3000),
        ok(d.clone())
    );
    assert_eq!(
        m.take_hits(),
        [PROMISE_SETTLE_SETTLED_200, PROMISE_SETTLE_SETTLED_WITH_TASK]
    );
    want.promise(d)
        .no_promise_timeout("d")
        .task(task("d", TaskState::Fulfilled, 1, 0))
        .no_task_timeouts("d")
        .check(&m);
}

#[test]
fn promise_settle__settled_without_task() {
    // A timer settled by a caller before its deadline: `settledAt` is now
    // and its timeout is disarmed.
    let mut m = setup(&[(1000, promise_create("t", 10_000, timer()))]);
    let want = Want::of(&m);
    let t = settled(
        &pending("t", 10_000, 1000, timer()),
        PromiseState::Rejected,
        9_999,
    );
    assert_eq!(
        m.apply(&promise_settle("t", PromiseState::Rejected), 9_999),
        ok(t.clone())
    );
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_SETTLE_SETTLED_200,
            PROMISE_SETTLE_SETTLED_WITHOUT_TASK
        ]
    );
    want.promise(t).no_promise_timeout("t").check(&m);
}

#[test]
fn promise_settle__pending_expired_projected_200() {
    let mut m = setup(&[(1000, promise_create("a", 10_000, target()))]);
    let before = m.state.clone();
    // Not the requested state and value: the deadline's.
    let a = PromiseRecord {
        state: PromiseState::RejectedTimedout,
        settled_at: Some(10_000),
        ..pending("a", 10_000, 1000, target())
    };
    assert_eq!(
        m.apply(&promise_settle("a", PromiseState::Resolved), 10_000),
        ok(a)
    );
    assert_eq!(
        m.take_hits(),
        [PROMISE_SETTLE_PENDING_EXPIRED_PROJECTED_200]
    );
    // Nothing written: the task stays pending until the timeout fires.
    assert_eq!(m.state, before);
}

#[test]
fn promise_settle__already_settled_200() {
    let mut m = setup(&[
        (1000, promise_create("a", 10_000, target())),
        (2000, promise_settle("a", PromiseState::Rejected)),
    ]);
    let before = m.state.clone();
    let a = settled(
        &pending("a", 10_000, 1000, target()),
        PromiseState::Rejected,
        2000,
    );
    assert_eq!(
        m.apply(&promise_settle("a", PromiseState::Resolved), 3000),
        ok(a)
    );
    assert_eq!(m.take_hits(), [PROMISE_SETTLE_ALREADY_SETTLED_200]);
    assert_eq!(m.state, before);
}

// ----- P-04 promise.register_callback -----

#[test]
fn promise_register_callback__awaited_not_found_404() {
    let mut m = setup(&[(1000, promise_create("a", 10_000, target()))]);
    let before = m.state.clone();
    assert_eq!(
        m.apply(&register_callback("x", "a"), 2000),
        promise_res(404, None)
    );
    assert_eq!(
        m.take_hits(),
        [PROMISE_REGISTER_CALLBACK_AWAITED_NOT_FOUND_404]
    );
    // The awaited promise is looked up first.
    assert_eq!(
        m.apply(&register_callback("x", "y"), 2000),
        promise_res(404, None)
    );
    assert_eq!(
        m.take_hits(),
        [PROMISE_REGISTER_CALLBACK_AWAITED_NOT_FOUND_404]
    );
    assert_eq!(m.state, before);
}

#[test]
fn promise_register_callback__awaiter_not_found_422() {
    let mut m = setup(&[(1000, promise_create("b", 10_000, plain()))]);
    assert_writes_nothing(
        &mut m,
        &register_callback("b", "a"),
        2000,
        promise_res(422, None),
        &[PROMISE_REGISTER_CALLBACK_AWAITER_NOT_FOUND_422],
    );
}

#[test]
fn promise_register_callback__awaiter_no_target_422() {
    let mut m = setup(&[
        (1000, promise_create("b", 10_000, plain())),
        (1000, promise_create("c", 10_000, timer())),
        (1000, promise_create("s", 10_000, plain())),
        (1500, promise_settle("s", PromiseState::Resolved)),
    ]);
    let before = m.state.clone();
    // A timer is external but has no task to resume.
    assert_eq!(
        m.apply(&register_callback("b", "c"), 2000),
        promise_res(422, None)
    );
    assert_eq!(
        m.take_hits(),
        [PROMISE_REGISTER_CALLBACK_AWAITER_NO_TARGET_422]
    );
    // The awaiter is checked before the awaited promise's state.
    assert_eq!(
        m.apply(&register_callback("s", "b"), 2000),
        promise_res(422, None)
    );
    assert_eq!(
        m.take_hits(),
        [PROMISE_REGISTER_CALLBACK_AWAITER_NO_TARGET_422]
    );
    assert_eq!(m.state, before);
}

#[test]
fn promise_register_callback__registered_200() {
    let mut m = setup(&[
        (1000, promise_create("a", 100_000, target())),
        (1000, promise_create("x", 100_000, target())),
        (1000, promise_create("b", 10_000, plain())),
    ]);
    let want = Want::of(&m);
    let b = pending("b", 10_000, 1000, plain());
    assert_eq!(m.apply(&register_callback("b", "a"), 2000), ok(b.clone()));
    assert_eq!(m.take_hits(), [PROMISE_REGISTER_CALLBACK_REGISTERED_200]);
    // Registering again changes nothing (callbacks deduplicate).
    assert_eq!(m.apply(&register_callback("b", "a"), 2000), ok(b.clone()));
    assert_eq!(m.take_hits(), [PROMISE_REGISTER_CALLBACK_REGISTERED_200]);
    let want = want.callbacks("b", &["a"]);
    want.clone().check(&m);
    assert_eq!(m.apply(&register_callback("b", "x"), 2000), ok(b));
    assert_eq!(m.take_hits(), [PROMISE_REGISTER_CALLBACK_REGISTERED_200]);
    want.callbacks("b", &["a", "x"]).check(&m);
}

#[test]
fn promise_register_callback__awaiter_not_live_200() {
    let mut m = setup(&[
        (1000, promise_create("a", 10_000, target())),
        (1000, promise_create("s", 100_000, target())),
        (1000, promise_create("b", 100_000, plain())),
        (1500, promise_settle("s", PromiseState::Resolved)),
    ]);
    let before = m.state.clone();
    let b = pending("b", 100_000, 1000, plain());
    // An awaiter past its deadline (its timeout not yet fired) …
    assert_eq!(m.apply(&register_callback("b", "a"), 10_000), ok(b.clone()));
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200,
            PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200_EXPIRED
        ]
    );
    // … or settled: 200 with the awaited promise, nothing recorded.
    assert_eq!(m.apply(&register_callback("b", "s"), 2000), ok(b));
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200,
            PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200_SETTLED
        ]
    );
    assert_eq!(m.state, before);
}

#[test]
fn promise_register_callback__awaiter_not_live_200__settled() {
    let mut m = setup(&[
        (1000, promise_create("s", 10_000, target())),
        (1000, promise_create("b", 100_000, plain())),
        (1500, promise_settle("s", PromiseState::Resolved)),
    ]);
    let before = m.state.clone();
    let b = pending("b", 100_000, 1000, plain());
    // Settled, before and past the awaiter's deadline: settled is read first.
    for now in [2000, 20_000] {
        assert_eq!(m.apply(&register_callback("b", "s"), now), ok(b.clone()));
        assert_eq!(
            m.take_hits(),
            [
                PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200,
                PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200_SETTLED
            ]
        );
    }
    assert_eq!(m.state, before);
}

#[test]
fn promise_register_callback__awaiter_not_live_200__expired() {
    let mut m = setup(&[
        (1000, promise_create("a", 10_000, target())),
        (1000, promise_create("b", 100_000, plain())),
    ]);
    let before = m.state.clone();
    let b = pending("b", 100_000, 1000, plain());
    // The awaiter pending at its deadline, its timeout not yet fired.
    assert_eq!(m.apply(&register_callback("b", "a"), 10_000), ok(b));
    assert_eq!(
        m.take_hits(),
        [
            PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200,
            PROMISE_REGISTER_CALLBACK_AWAITER_NOT_LIVE_200_EXPIRED
        ]
    );
    assert_eq!(m.state, before);
}

#[test]
fn promise_register_callback__awaited_expired_projected_200() {
    let mut m = setup(&[
        (1000, promise_create("a", 100_000, target())),
        (1000, promise_create("b", 10_000, plain())),
    ]);
    let before = m.state.clone();
    let b = PromiseRecord {
        state: PromiseState::RejectedTimedout,
        settled_at: Some(10_000),
        ..pending("b", 10_000, 1000, plain())
    };
    assert_eq!(m.apply(&register_callback("b", "a"), 10_000), ok(b));
    assert_eq!(
        m.take_hits(),
        [PROMISE_REGISTER_CALLBACK_AWAITED_EXPIRED_PROJECTED_200]
    );
    assert_eq!(m.state, before);
}

#[test]
fn promise_register_callback__awaited_settled_200() {
    let mut m = setup(&[
        (1000, promise_create("a", 100_000, target())),
        (1000, promise_create("b", 10_000, plain())),
        (2000, promise_settle("b", PromiseState::Resolved)),
    ]);
    let before = m.state.clone();
    let b = settled(
        &pending("b", 10_000, 1000, plain()),
        PromiseState::Resolved,
        2000,
    );
    assert_eq!(m.apply(&register_callback("b", "a"), 3000), ok(b));
    assert_eq!(
        m.take_hits(),
        [PROMISE_REGISTER_CALLBACK_AWAITED_SETTLED_200]
    );
    assert_eq!(m.state, before);
}

// ----- P-05 promise.register_listener -----

#[test]
fn promise_register_listener__not_found_404() {
    let mut m = Machine::default();
    assert_eq!(
        m.apply(&register_listener("b", L), 1000),
        promise_res(404, None)
    );
    assert_eq!(m.take_hits(), [PROMISE_REGISTER_LISTENER_NOT_FOUND_404]);
    Want::empty().check(&m);
}

#[test]
fn promise_register_listener__registered_200() {
    let mut m = setup(&[(1000, promise_create("b", 10_000, plain()))]);
    let want = Want::of(&m);
    let b = pending("b", 10_000, 1000, plain());
    assert_eq!(m.apply(&register_listener("b", L), 2000), ok(b.clone()));
    assert_eq!(m.take_hits(), [PROMISE_REGISTER_LISTENER_REGISTERED_200]);
    // Listeners deduplicate.
    assert_eq!(m.apply(&register_listener("b", L), 2000), ok(b.clone()));
    assert_eq!(m.take_hits(), [PROMISE_REGISTER_LISTENER_REGISTERED_200]);
    let want = want.listeners("b", &[L]);
    want.clone().check(&m);
    assert_eq!(m.apply(&register_listener("b", "http://m"), 2000), ok(b));
    assert_eq!(m.take_hits(), [PROMISE_REGISTER_LISTENER_REGISTERED_200]);
    want.listeners("b", &[L, "http://m"]).check(&m);
}

#[test]
fn promise_register_listener__expired_projected_200() {
    let mut m = setup(&[(1000, promise_create("t", 10_000, timer()))]);
    let before = m.state.clone();
    let t = PromiseRecord {
        state: PromiseState::Resolved,
        settled_at: Some(10_000),
        ..pending("t", 10_000, 1000, timer())
    };
    assert_eq!(m.apply(&register_listener("t", L), 15_000), ok(t));
    assert_eq!(
        m.take_hits(),
        [PROMISE_REGISTER_LISTENER_EXPIRED_PROJECTED_200]
    );
    assert_eq!(m.state, before);
}

#[test]
fn promise_register_listener__settled_200() {
    let mut m = setup(&[
        (1000, promise_create("b", 10_000, plain())),
        (2000, promise_settle("b", PromiseState::Rejected)),
    ]);
    let before = m.state.clone();
    let b = settled(
        &pending("b", 10_000, 1000, plain()),
        PromiseState::Rejected,
        2000,
    );
    assert_eq!(m.apply(&register_listener("b", L), 3000), ok(b));
    assert_eq!(m.take_hits(), [PROMISE_REGISTER_LISTENER_SETTLED_200]);
    assert_eq!(m.state, before);
}

// ----- P-06 promise.search -----

#[test]
fn promise_search__not_implemented_501() {
    let mut m = setup(&[(1000, promise_create("a", 10_000, plain()))]);
    let before = m.state.clone();
    let req = Request::PromiseSearch(PromiseSearchReq {
        state: Some(PromiseState::Pending),
        limit: Some(10),
        ..PromiseSearchReq::default()
    });
    assert_eq!(m.apply(&req, 2000), Response::Status(501));
    assert_eq!(m.take_hits(), [PROMISE_SEARCH_NOT_IMPLEMENTED_501]);
    assert_eq!(m.state, before);
}
