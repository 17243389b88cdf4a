//! One test per branch of the task handlers (T-01..T-11), named after the
//! branch (`Branch::test_name`). Each asserts the whole response, the whole
//! resulting state and the branches taken. Branches only hand-built states
//! reach (a task without its promise …) build that state through the
//! public effects.
#![allow(non_snake_case)]

mod common;

use common::*;
use model::api::{
    PromiseRegisterCallbackReq, PromiseRes, Request, Response, TaskFenceInnerRes, TaskFulfillReq,
    TaskSearchReq, TaskSuspendReq,
};
use model::branch::*;
use model::machine::Machine;
use model::state::TaskObject;
use model::types::{PromiseRecord, PromiseState, TaskState};
use model::view::StateView;

/// `a` created by `task.create` at 1000: acquired by p1 at version 1, lease
/// 30 s (until 31 000), deadline 100 000.
fn acquired_a() -> Vec<(u64, Request)> {
    vec![(1000, task_create("p1", 30_000, "a", 100_000, target()))]
}

/// `a` created by `promise.create` at 1000: pending at version 0, retry
/// at 6000, execute v0 sent; deadline 100 000.
fn pending_a() -> Vec<(u64, Request)> {
    vec![(1000, promise_create("a", 100_000, target()))]
}

/// The record of `a`'s promise, as created by either of the above.
fn a_promise() -> PromiseRecord {
    pending("a", 100_000, 1000, target())
}

/// `b` (internal) registered as awaited by `a` and settled at 1500, so `a`
/// holds the buffered resume `b` (when `a` is not suspended).
fn buffer_b_into_a() -> Vec<(u64, Request)> {
    vec![
        (1000, promise_create("b", 50_000, plain())),
        (1000, register_callback("b", "a")),
        (1500, promise_settle("b", PromiseState::Resolved)),
    ]
}

/// A machine whose only content is a task `a` (in `state`) without its promise.
fn orphan_task(t: TaskObject) -> Machine {
    let mut m = Machine::default();
    m.state.set_task(t);
    m
}

/// Settle `id`'s promise behind its task's back (resolved with `"v"` at
/// `at`, timeout disarmed), leaving the task as it was: a state the
/// protocol never builds, since settling fulfills the task.
fn settle_behind_task(m: &mut Machine, id: &str, at: u64) {
    let mut p = m.state.get_promise(id).expect("promise").clone();
    p.state = PromiseState::Resolved;
    p.value = value("v");
    p.settled_at = Some(at);
    m.state.set_promise(p);
    m.state.del_promise_timeout(id);
}

// ----- T-01 task.get -----

#[test]
fn task_get__task_not_found_404() {
    // A promise without a target has no task.
    let mut m = setup(&[(1000, promise_create("b", 10_000, plain()))]);
    assert_writes_nothing(
        &mut m,
        &task_get("b"),
        2000,
        task_res(404, None),
        &[TASK_GET_TASK_NOT_FOUND_404],
    );
}

#[test]
fn task_get__promise_not_found_404() {
    let mut m = orphan_task(TaskObject::new("a", TaskState::Pending, 3));
    assert_writes_nothing(
        &mut m,
        &task_get("a"),
        2000,
        task_res(404, None),
        &[TASK_GET_PROMISE_NOT_FOUND_404],
    );
}

#[test]
fn task_get__live_200() {
    let mut m = setup(&acquired_a());
    assert_writes_nothing(
        &mut m,
        &task_get("a"),
        99_999,
        task_res(200, Some(held("a", 1, "p1", 30_000, 0))),
        &[TASK_GET_LIVE_200],
    );
}

#[test]
fn task_get__projected_fulfilled_200() {
    let mut m = setup(&[acquired_a(), buffer_b_into_a()].concat());
    let before = m.state.clone();
    assert_eq!(
        StateView::of(&m.state).tasks,
        [held("a", 1, "p1", 30_000, 1)]
    );
    // Past the deadline: fulfilled, version kept, no lease, no resumes.
    assert_eq!(
        m.apply(&task_get("a"), 100_000),
        task_res(200, Some(task("a", TaskState::Fulfilled, 1, 0)))
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_GET_PROJECTED_FULFILLED_200,
            TASK_GET_PROJECTED_FULFILLED_200_EXPIRED
        ]
    );
    assert_eq!(m.state, before);
}

#[test]
fn task_get__projected_fulfilled_200__settled() {
    let mut m = setup(
        &[
            acquired_a(),
            vec![(2000, fulfill("a", 1, PromiseState::Resolved))],
        ]
        .concat(),
    );
    let before = m.state.clone();
    // Settled, before and past its deadline: `settled` is read first.
    for now in [3000, 100_000] {
        assert_eq!(
            m.apply(&task_get("a"), now),
            task_res(200, Some(task("a", TaskState::Fulfilled, 1, 0)))
        );
        assert_eq!(
            m.take_hits(),
            [
                TASK_GET_PROJECTED_FULFILLED_200,
                TASK_GET_PROJECTED_FULFILLED_200_SETTLED
            ]
        );
    }
    assert_eq!(m.state, before);
}

#[test]
fn task_get__projected_fulfilled_200__expired() {
    let mut m = setup(&acquired_a());
    let before = m.state.clone();
    // Live one millisecond before the deadline, projected from it on.
    assert_eq!(
        m.apply(&task_get("a"), 99_999),
        task_res(200, Some(held("a", 1, "p1", 30_000, 0)))
    );
    assert_eq!(m.take_hits(), [TASK_GET_LIVE_200]);
    assert_eq!(
        m.apply(&task_get("a"), 100_000),
        task_res(200, Some(task("a", TaskState::Fulfilled, 1, 0)))
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_GET_PROJECTED_FULFILLED_200,
            TASK_GET_PROJECTED_FULFILLED_200_EXPIRED
        ]
    );
    assert_eq!(m.state, before);
}

// ----- T-02 task.create -----

#[test]
fn task_create__new_acquired_200() {
    let mut m = Machine::default();
    // No target (the wire requires one here, the Lean does not): the promise
    // timeout is armed all the same (unlike `promise.create`), and no
    // execute is sent.
    let a = pending("a", 100_000, 1000, plain());
    assert_eq!(
        m.apply(&task_create("p1", 30_000, "a", 100_000, plain()), 1000),
        claimed(held("a", 1, "p1", 30_000, 0), a.clone())
    );
    assert_eq!(m.take_hits(), [TASK_CREATE_NEW_ACQUIRED_200]);
    Want::empty()
        .promise(a)
        .promise_timeout("a", 100_000)
        .task(held("a", 1, "p1", 30_000, 0))
        .task_timeout("a", LEASE, 31_000)
        .check(&m);
}

#[test]
fn task_create__new_expired_fulfilled_200() {
    let mut m = Machine::default();
    let a = PromiseRecord {
        state: PromiseState::RejectedTimedout,
        settled_at: Some(10_000),
        ..pending("a", 10_000, 10_000, plain())
    };
    let a_task = task("a", TaskState::Fulfilled, 0, 0);
    assert_eq!(
        m.apply(&task_create("p1", 30_000, "a", 10_000, plain()), 10_000),
        claimed(a_task.clone(), a.clone())
    );
    assert_eq!(m.take_hits(), [TASK_CREATE_NEW_EXPIRED_FULFILLED_200]);
    let t = PromiseRecord {
        state: PromiseState::Resolved,
        settled_at: Some(10_000),
        ..pending("t", 10_000, 10_000, timer())
    };
    let t_task = task("t", TaskState::Fulfilled, 0, 0);
    assert_eq!(
        m.apply(&task_create("p1", 30_000, "t", 10_000, timer()), 20_000),
        claimed(t_task.clone(), t.clone())
    );
    assert_eq!(m.take_hits(), [TASK_CREATE_NEW_EXPIRED_FULFILLED_200]);
    // A task even without a target; nothing armed, nothing sent.
    Want::empty()
        .promise(a)
        .task(a_task)
        .promise(t)
        .task(t_task)
        .check(&m);
}

#[test]
fn task_create__exists_no_target_422() {
    let mut m = setup(&[(1000, promise_create("a", 100_000, plain()))]);
    assert_writes_nothing(
        &mut m,
        &task_create("p1", 30_000, "a", 100_000, target()),
        2000,
        claim_failed(422),
        &[TASK_CREATE_EXISTS_NO_TARGET_422],
    );
}

#[test]
fn task_create__exists_fulfilled_200() {
    let mut m = setup(
        &[
            pending_a(),
            vec![(2000, promise_settle("a", PromiseState::Resolved))],
        ]
        .concat(),
    );
    let before = m.state.clone();
    // The stored task and promise; the request is ignored.
    assert_eq!(
        m.apply(&task_create("p2", 1, "a", 5, plain()), 3000),
        claimed(
            task("a", TaskState::Fulfilled, 0, 0),
            settled(&a_promise(), PromiseState::Resolved, 2000)
        )
    );
    assert_eq!(m.take_hits(), [TASK_CREATE_EXISTS_FULFILLED_200]);
    assert_eq!(m.state, before);
}

#[test]
fn task_create__exists_pending_reacquired_200() {
    let mut m = setup(&[pending_a(), buffer_b_into_a()].concat());
    let want = Want::of(&m);
    assert_eq!(want.0.resumes.len(), 1);
    // The pending→acquired transition: version 0 → 1, the buffered resume
    // dropped, retry swapped for a lease. The request's promise fields are
    // ignored.
    assert_eq!(
        m.apply(&task_create("p2", 20_000, "a", 5, plain()), 3000),
        claimed(held("a", 1, "p2", 20_000, 0), a_promise())
    );
    assert_eq!(m.take_hits(), [TASK_CREATE_EXISTS_PENDING_REACQUIRED_200]);
    let want = want
        .task(held("a", 1, "p2", 20_000, 0))
        .resumes("a", &[])
        .no_task_timeouts("a")
        .task_timeout("a", LEASE, 23_000);
    want.clone().check(&m);
    // Released (version kept) and re-created: the next bump, 1 → 2.
    run(&mut m, &[(4000, release("a", 1))]);
    assert_eq!(
        m.apply(&task_create("p1", 10_000, "a", 5, plain()), 5000),
        claimed(held("a", 2, "p1", 10_000, 0), a_promise())
    );
    assert_eq!(m.take_hits(), [TASK_CREATE_EXISTS_PENDING_REACQUIRED_200]);
    want.task(held("a", 2, "p1", 10_000, 0))
        .no_task_timeouts("a")
        .task_timeout("a", LEASE, 15_000)
        .execute(W, "a", 1)
        .check(&m);
    // Neither the promise's state nor its deadline is checked: past it,
    // the task is re-acquired and the promise returned unprojected.
    let mut m = setup(&[(1000, promise_create("e", 10_000, target()))]);
    assert_eq!(
        m.apply(&task_create("p1", 1000, "e", 10_000, target()), 10_000),
        claimed(
            held("e", 1, "p1", 1000, 0),
            pending("e", 10_000, 1000, target())
        )
    );
    assert_eq!(m.take_hits(), [TASK_CREATE_EXISTS_PENDING_REACQUIRED_200]);
}

#[test]
fn task_create__exists_busy_409() {
    let mut m = setup(&[
        (1000, task_create("p1", 30_000, "a", 100_000, target())),
        (1000, task_create("p1", 30_000, "s", 100_000, target())),
        (1000, promise_create("b", 100_000, plain())),
        (1000, suspend("s", 1, &["b"])),
        (1000, promise_create("h", 100_000, target())),
        (1000, halt("h")),
    ]);
    let before = m.state.clone();
    // Acquired, suspended, halted: all busy.
    for id in ["a", "s", "h"] {
        assert_eq!(
            m.apply(&task_create("p2", 30_000, id, 100_000, target()), 2000),
            claim_failed(409)
        );
        assert_eq!(m.take_hits(), [TASK_CREATE_EXISTS_BUSY_409]);
    }
    assert_eq!(m.state, before);
}

#[test]
fn task_create__exists_no_task_409() {
    let mut m = Machine::default();
    m.state
        .set_promise(promise_object("a", 100_000, 1000, target()));
    assert_writes_nothing(
        &mut m,
        &task_create("p1", 30_000, "a", 100_000, target()),
        2000,
        claim_failed(409),
        &[TASK_CREATE_EXISTS_NO_TASK_409],
    );
}

// ----- T-03 task.acquire -----

#[test]
fn task_acquire__task_not_found_404() {
    let mut m = Machine::default();
    assert_eq!(
        m.apply(&task_acquire("a", 0, "p1", 30_000), 1000),
        claim_failed(404)
    );
    assert_eq!(m.take_hits(), [TASK_ACQUIRE_TASK_NOT_FOUND_404]);
    Want::empty().check(&m);
}

#[test]
fn task_acquire__promise_not_found_409() {
    let mut m = orphan_task(TaskObject::new("a", TaskState::Pending, 0));
    assert_writes_nothing(
        &mut m,
        &task_acquire("a", 0, "p1", 30_000),
        1000,
        claim_failed(409),
        &[TASK_ACQUIRE_PROMISE_NOT_FOUND_409],
    );
}

#[test]
fn task_acquire__not_pending_409() {
    let mut m = setup(&acquired_a());
    assert_writes_nothing(
        &mut m,
        &task_acquire("a", 1, "p1", 30_000),
        2000,
        claim_failed(409),
        &[TASK_ACQUIRE_NOT_PENDING_409],
    );
}

#[test]
fn task_acquire__promise_not_live_409() {
    let mut m = setup(&pending_a());
    let before = m.state.clone();
    // At the deadline, before the timeout fires; checked before the version.
    for version in [0, 7] {
        assert_eq!(
            m.apply(&task_acquire("a", version, "p1", 30_000), 100_000),
            claim_failed(409)
        );
        assert_eq!(
            m.take_hits(),
            [
                TASK_ACQUIRE_PROMISE_NOT_LIVE_409,
                TASK_ACQUIRE_PROMISE_NOT_LIVE_409_EXPIRED
            ]
        );
    }
    assert_eq!(m.state, before);
}

#[test]
fn task_acquire__promise_not_live_409__settled() {
    // Unreachable (a pending task's promise is pending): hand-built.
    let mut m = setup(&pending_a());
    settle_behind_task(&mut m, "a", 2000);
    let before = m.state.clone();
    // Settled beats expired: the same reason before and past the deadline.
    for now in [3000, 100_000] {
        assert_eq!(
            m.apply(&task_acquire("a", 0, "p1", 30_000), now),
            claim_failed(409)
        );
        assert_eq!(
            m.take_hits(),
            [
                TASK_ACQUIRE_PROMISE_NOT_LIVE_409,
                TASK_ACQUIRE_PROMISE_NOT_LIVE_409_SETTLED
            ]
        );
    }
    assert_eq!(m.state, before);
}

#[test]
fn task_acquire__promise_not_live_409__expired() {
    let mut m = setup(&pending_a());
    let before = m.state.clone();
    // Pending, at and well past the deadline, the timeout not yet fired.
    for now in [100_000, 150_000] {
        assert_eq!(
            m.apply(&task_acquire("a", 0, "p1", 30_000), now),
            claim_failed(409)
        );
        assert_eq!(
            m.take_hits(),
            [
                TASK_ACQUIRE_PROMISE_NOT_LIVE_409,
                TASK_ACQUIRE_PROMISE_NOT_LIVE_409_EXPIRED
            ]
        );
    }
    assert_eq!(m.state, before);
}

#[test]
fn task_acquire__version_mismatch_409() {
    let mut m = setup(&pending_a());
    assert_writes_nothing(
        &mut m,
        &task_acquire("a", 1, "p1", 30_000),
        2000,
        claim_failed(409),
        &[TASK_ACQUIRE_VERSION_MISMATCH_409],
    );
}

#[test]
fn task_acquire__acquired_200() {
    let mut m = setup(&[pending_a(), buffer_b_into_a()].concat());
    let want = Want::of(&m);
    assert_eq!(
        m.apply(&task_acquire("a", 0, "p1", 30_000), 3000),
        claimed(held("a", 1, "p1", 30_000, 0), a_promise())
    );
    assert_eq!(m.take_hits(), [TASK_ACQUIRE_ACQUIRED_200]);
    // Version bumped, resumes cleared, retry swapped for a lease; the
    // execute already sent stays in the outbox.
    want.task(held("a", 1, "p1", 30_000, 0))
        .resumes("a", &[])
        .no_task_timeouts("a")
        .task_timeout("a", LEASE, 33_000)
        .check(&m);
}

// ----- T-04 task.fence -----

#[test]
fn task_fence__task_not_found_404() {
    let mut m = Machine::default();
    let req = fence_create("a", 1, create_req("a.1", 50_000, plain()));
    assert_eq!(m.apply(&req, 1000), fence_failed(404));
    assert_eq!(m.take_hits(), [TASK_FENCE_TASK_NOT_FOUND_404]);
    Want::empty().check(&m);
}

#[test]
fn task_fence__promise_not_found_409() {
    let mut m = orphan_task(held_object("a", 1, "p1", 30_000));
    let before = m.state.clone();
    let req = fence_create("a", 1, create_req("a.1", 50_000, plain()));
    assert_eq!(m.apply(&req, 1000), fence_failed(409));
    assert_eq!(m.take_hits(), [TASK_FENCE_PROMISE_NOT_FOUND_409]);
    assert_eq!(m.state, before);
}

#[test]
fn task_fence__not_acquired_409() {
    let mut m = setup(&pending_a());
    let before = m.state.clone();
    let req = fence_create("a", 0, create_req("a.1", 50_000, plain()));
    assert_eq!(m.apply(&req, 2000), fence_failed(409));
    assert_eq!(m.take_hits(), [TASK_FENCE_NOT_ACQUIRED_409]);
    assert_eq!(m.state, before);
}

#[test]
fn task_fence__promise_not_live_409() {
    let mut m = setup(&acquired_a());
    let before = m.state.clone();
    let req = fence_settle("a", 1, settle_req("a", PromiseState::Resolved));
    assert_eq!(m.apply(&req, 100_000), fence_failed(409));
    assert_eq!(
        m.take_hits(),
        [
            TASK_FENCE_PROMISE_NOT_LIVE_409,
            TASK_FENCE_PROMISE_NOT_LIVE_409_EXPIRED
        ]
    );
    assert_eq!(m.state, before);
}

#[test]
fn task_fence__promise_not_live_409__settled() {
    // Unreachable (an acquired task's promise is pending): hand-built.
    let mut m = setup(&acquired_a());
    settle_behind_task(&mut m, "a", 2000);
    let before = m.state.clone();
    let req = fence_create("a", 1, create_req("a.1", 50_000, plain()));
    assert_eq!(m.apply(&req, 3000), fence_failed(409));
    assert_eq!(
        m.take_hits(),
        [
            TASK_FENCE_PROMISE_NOT_LIVE_409,
            TASK_FENCE_PROMISE_NOT_LIVE_409_SETTLED
        ]
    );
    assert_eq!(m.state, before);
}

#[test]
fn task_fence__promise_not_live_409__expired() {
    let mut m = setup(&acquired_a());
    let before = m.state.clone();
    // The inner create is not run: no `a.1`.
    let req = fence_create("a", 1, create_req("a.1", 200_000, plain()));
    assert_eq!(m.apply(&req, 100_000), fence_failed(409));
    assert_eq!(
        m.take_hits(),
        [
            TASK_FENCE_PROMISE_NOT_LIVE_409,
            TASK_FENCE_PROMISE_NOT_LIVE_409_EXPIRED
        ]
    );
    assert_eq!(m.state, before);
}

#[test]
fn task_fence__version_mismatch_409() {
    let mut m = setup(&acquired_a());
    let before = m.state.clone();
    let req = fence_create("a", 0, create_req("a.1", 50_000, plain()));
    assert_eq!(m.apply(&req, 2000), fence_failed(409));
    assert_eq!(m.take_hits(), [TASK_FENCE_VERSION_MISMATCH_409]);
    assert_eq!(m.state, before);
}

#[test]
fn task_fence__create_200() {
    let mut m = setup(&acquired_a());
    let want = Want::of(&m);
    // The complete `promise.create`: a target child gets its task and execute.
    let child = pending("a.1", 50_000, 2000, target());
    let req = fence_create("a", 1, create_req("a.1", 50_000, target()));
    let inner = |p: PromiseRecord| {
        fenced(TaskFenceInnerRes::Create(PromiseRes {
            status: 200,
            promise: Some(p),
        }))
    };
    assert_eq!(m.apply(&req, 2000), inner(child.clone()));
    assert_eq!(
        m.take_hits(),
        [
            TASK_FENCE_CREATE_200,
            PROMISE_CREATE_NEW_PENDING_200,
            PROMISE_CREATE_NEW_EXTERNAL_TIMEOUT_ARMED,
            PROMISE_CREATE_NEW_TARGET_200
        ]
    );
    let want = want
        .promise(child.clone())
        .promise_timeout("a.1", 50_000)
        .task(task("a.1", TaskState::Pending, 0, 0))
        .task_timeout("a.1", RETRY, 2000 + RETRY_MS)
        .execute(W, "a.1", 0);
    want.clone().check(&m);
    // Fenced again: the inner create finds it.
    let again = fence_create("a", 1, create_req("a.1", 70_000, plain()));
    assert_eq!(m.apply(&again, 3000), inner(child));
    assert_eq!(
        m.take_hits(),
        [TASK_FENCE_CREATE_200, PROMISE_CREATE_EXISTS_200]
    );
    want.check(&m);
}

#[test]
fn task_fence__settle_200() {
    let mut m = setup(
        &[
            acquired_a(),
            vec![(1000, promise_create("a.1", 50_000, plain()))],
        ]
        .concat(),
    );
    let want = Want::of(&m);
    let child = settled(
        &pending("a.1", 50_000, 1000, plain()),
        PromiseState::Resolved,
        2000,
    );
    let req = fence_settle("a", 1, settle_req("a.1", PromiseState::Resolved));
    assert_eq!(
        m.apply(&req, 2000),
        fenced(TaskFenceInnerRes::Settle(PromiseRes {
            status: 200,
            promise: Some(child.clone()),
        }))
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_FENCE_SETTLE_200,
            PROMISE_SETTLE_SETTLED_200,
            PROMISE_SETTLE_SETTLED_WITHOUT_TASK
        ]
    );
    let want = want.promise(child);
    want.clone().check(&m);
    // The fence succeeds even when the inner action does not.
    let missing = fence_settle("a", 1, settle_req("zz", PromiseState::Resolved));
    assert_eq!(
        m.apply(&missing, 3000),
        fenced(TaskFenceInnerRes::Settle(PromiseRes {
            status: 404,
            promise: None,
        }))
    );
    assert_eq!(
        m.take_hits(),
        [TASK_FENCE_SETTLE_200, PROMISE_SETTLE_NOT_FOUND_404]
    );
    want.check(&m);
}

// ----- T-05 task.heartbeat -----

#[test]
fn task_heartbeat__ok_200() {
    let mut m = setup(&acquired_a());
    let before = m.state.clone();
    assert_eq!(m.apply(&heartbeat("p1", &[]), 2000), Response::Status(200));
    assert_eq!(m.take_hits(), [TASK_HEARTBEAT_OK_200]);
    // Tasks are named, never looked up by pid: `a`'s lease is untouched.
    assert_eq!(m.state, before);
}

#[test]
fn task_heartbeat__ref_task_not_found_skipped() {
    let mut m = setup(&acquired_a());
    assert_writes_nothing(
        &mut m,
        &heartbeat("p1", &[("x", 1)]),
        2000,
        Response::Status(200),
        &[
            TASK_HEARTBEAT_REF_TASK_NOT_FOUND_SKIPPED,
            TASK_HEARTBEAT_OK_200,
        ],
    );
}

#[test]
fn task_heartbeat__ref_not_held_skipped() {
    let mut m = setup(
        &[
            acquired_a(),
            vec![(1000, promise_create("b", 100_000, target()))],
        ]
        .concat(),
    );
    let before = m.state.clone();
    // Wrong version, not acquired, wrong pid: skipped silently.
    assert_eq!(
        m.apply(&heartbeat("p1", &[("a", 0), ("b", 0)]), 2000),
        Response::Status(200)
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED,
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_VERSION,
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED,
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_NOT_ACQUIRED,
            TASK_HEARTBEAT_OK_200
        ]
    );
    assert_eq!(
        m.apply(&heartbeat("p2", &[("a", 1)]), 2000),
        Response::Status(200)
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED,
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_PID,
            TASK_HEARTBEAT_OK_200
        ]
    );
    assert_eq!(m.state, before);
}

#[test]
fn task_heartbeat__ref_not_held_skipped__not_acquired() {
    let mut m = setup(
        &[
            acquired_a(),
            vec![
                (1000, promise_create("b", 100_000, target())),
                (1000, halt("a")),
            ],
        ]
        .concat(),
    );
    let before = m.state.clone();
    // Pending `b` at its version, halted `a` at its version: not acquired.
    assert_eq!(
        m.apply(&heartbeat("p1", &[("b", 0), ("a", 1)]), 2000),
        Response::Status(200)
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED,
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_NOT_ACQUIRED,
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED,
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_NOT_ACQUIRED,
            TASK_HEARTBEAT_OK_200
        ]
    );
    assert_eq!(m.state, before);
}

#[test]
fn task_heartbeat__ref_not_held_skipped__version() {
    let mut m = setup(&acquired_a());
    let before = m.state.clone();
    // A stale and a future version; with the wrong pid as well, the version
    // is still the reason (the first false conjunct).
    assert_eq!(
        m.apply(&heartbeat("p1", &[("a", 0), ("a", 2)]), 2000),
        Response::Status(200)
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED,
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_VERSION,
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED,
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_VERSION,
            TASK_HEARTBEAT_OK_200
        ]
    );
    assert_eq!(
        m.apply(&heartbeat("p2", &[("a", 0)]), 2000),
        Response::Status(200)
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED,
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_VERSION,
            TASK_HEARTBEAT_OK_200
        ]
    );
    assert_eq!(m.state, before);
}

#[test]
fn task_heartbeat__ref_not_held_skipped__pid() {
    let mut m = setup(&acquired_a());
    let before = m.state.clone();
    // Acquired at this version, by another pid: the lease is not refreshed.
    assert_eq!(
        m.apply(&heartbeat("p2", &[("a", 1)]), 20_000),
        Response::Status(200)
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED,
            TASK_HEARTBEAT_REF_NOT_HELD_SKIPPED_PID,
            TASK_HEARTBEAT_OK_200
        ]
    );
    assert_eq!(m.state, before);
}

#[test]
fn task_heartbeat__ref_promise_not_found_skipped() {
    let mut m = orphan_task(held_object("a", 1, "p1", 30_000));
    m.state.set_task_timeout("a", 1, 31_000);
    assert_writes_nothing(
        &mut m,
        &heartbeat("p1", &[("a", 1)]),
        2000,
        Response::Status(200),
        &[
            TASK_HEARTBEAT_REF_PROMISE_NOT_FOUND_SKIPPED,
            TASK_HEARTBEAT_OK_200,
        ],
    );
}

#[test]
fn task_heartbeat__ref_promise_not_live_skipped() {
    let mut m = setup(&[(1000, task_create("p1", 200_000, "a", 100_000, target()))]);
    assert_writes_nothing(
        &mut m,
        &heartbeat("p1", &[("a", 1)]),
        100_000,
        Response::Status(200),
        &[
            TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED,
            TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED_EXPIRED,
            TASK_HEARTBEAT_OK_200,
        ],
    );
}

#[test]
fn task_heartbeat__ref_promise_not_live_skipped__settled() {
    // Unreachable (an acquired task's promise is pending): hand-built.
    let mut m = setup(&acquired_a());
    settle_behind_task(&mut m, "a", 2000);
    assert_writes_nothing(
        &mut m,
        &heartbeat("p1", &[("a", 1)]),
        3000,
        Response::Status(200),
        &[
            TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED,
            TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED_SETTLED,
            TASK_HEARTBEAT_OK_200,
        ],
    );
}

#[test]
fn task_heartbeat__ref_promise_not_live_skipped__expired() {
    // Leases outlive `a`'s deadline (100 000) but not `c`'s (300 000).
    let mut m = setup(&[
        (1000, task_create("p1", 200_000, "a", 100_000, target())),
        (1000, task_create("p1", 200_000, "c", 300_000, target())),
    ]);
    let want = Want::of(&m);
    assert_eq!(
        m.apply(&heartbeat("p1", &[("a", 1), ("c", 1)]), 100_000),
        Response::Status(200)
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED,
            TASK_HEARTBEAT_REF_PROMISE_NOT_LIVE_SKIPPED_EXPIRED,
            TASK_HEARTBEAT_REF_REFRESHED,
            TASK_HEARTBEAT_OK_200
        ]
    );
    // `a`'s lease stays at 201 000; `c`'s is re-armed.
    want.task_timeout("c", LEASE, 300_000).check(&m);
}

#[test]
fn task_heartbeat__ref_refreshed() {
    let mut m = setup(&acquired_a());
    let want = Want::of(&m);
    assert_eq!(
        m.apply(&heartbeat("p1", &[("a", 1), ("x", 1)]), 20_000),
        Response::Status(200)
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_HEARTBEAT_REF_REFRESHED,
            TASK_HEARTBEAT_REF_TASK_NOT_FOUND_SKIPPED,
            TASK_HEARTBEAT_OK_200
        ]
    );
    // The lease re-armed at now + ttl; the task itself is unchanged.
    want.task_timeout("a", LEASE, 50_000).check(&m);
}

// ----- T-06 task.suspend -----

#[test]
fn task_suspend__task_not_found_404() {
    let mut m = Machine::default();
    assert_eq!(m.apply(&suspend("a", 1, &[]), 1000), suspend_res(404));
    assert_eq!(m.take_hits(), [TASK_SUSPEND_TASK_NOT_FOUND_404]);
    Want::empty().check(&m);
}

#[test]
fn task_suspend__promise_not_found_409() {
    let mut m = orphan_task(held_object("a", 1, "p1", 30_000));
    assert_writes_nothing(
        &mut m,
        &suspend("a", 1, &[]),
        1000,
        suspend_res(409),
        &[TASK_SUSPEND_PROMISE_NOT_FOUND_409],
    );
}

#[test]
fn task_suspend__not_acquired_409() {
    let mut m = setup(
        &[
            pending_a(),
            vec![(1000, promise_create("b", 50_000, plain()))],
        ]
        .concat(),
    );
    assert_writes_nothing(
        &mut m,
        &suspend("a", 0, &["b"]),
        2000,
        suspend_res(409),
        &[TASK_SUSPEND_NOT_ACQUIRED_409],
    );
}

#[test]
fn task_suspend__promise_not_live_409() {
    let mut m = setup(
        &[
            acquired_a(),
            vec![(1000, promise_create("b", 500_000, plain()))],
        ]
        .concat(),
    );
    assert_writes_nothing(
        &mut m,
        &suspend("a", 1, &["b"]),
        100_000,
        suspend_res(409),
        &[
            TASK_SUSPEND_PROMISE_NOT_LIVE_409,
            TASK_SUSPEND_PROMISE_NOT_LIVE_409_EXPIRED,
        ],
    );
}

#[test]
fn task_suspend__promise_not_live_409__settled() {
    // Unreachable (an acquired task's promise is pending): hand-built.
    let mut m = setup(
        &[
            acquired_a(),
            vec![(1000, promise_create("b", 50_000, plain()))],
        ]
        .concat(),
    );
    settle_behind_task(&mut m, "a", 2000);
    assert_writes_nothing(
        &mut m,
        &suspend("a", 1, &["b"]),
        3000,
        suspend_res(409),
        &[
            TASK_SUSPEND_PROMISE_NOT_LIVE_409,
            TASK_SUSPEND_PROMISE_NOT_LIVE_409_SETTLED,
        ],
    );
}

#[test]
fn task_suspend__promise_not_live_409__expired() {
    let mut m = setup(
        &[
            acquired_a(),
            vec![(1000, promise_create("b", 500_000, plain()))],
        ]
        .concat(),
    );
    let before = m.state.clone();
    // The task's own promise at its deadline, before the version (wrong).
    assert_eq!(m.apply(&suspend("a", 2, &["b"]), 100_000), suspend_res(409));
    assert_eq!(
        m.take_hits(),
        [
            TASK_SUSPEND_PROMISE_NOT_LIVE_409,
            TASK_SUSPEND_PROMISE_NOT_LIVE_409_EXPIRED
        ]
    );
    assert_eq!(m.state, before);
}

#[test]
fn task_suspend__version_mismatch_409() {
    let mut m = setup(
        &[
            acquired_a(),
            vec![(1000, promise_create("b", 50_000, plain()))],
        ]
        .concat(),
    );
    assert_writes_nothing(
        &mut m,
        &suspend("a", 2, &["b"]),
        2000,
        suspend_res(409),
        &[TASK_SUSPEND_VERSION_MISMATCH_409],
    );
}

#[test]
fn task_suspend__awaited_not_found_422() {
    let mut m = setup(&[acquired_a(), buffer_b_into_a()].concat());
    let before = m.state.clone();
    // 422 beats 300: `b` is settled but `x` is missing, in either order,
    // and the buffered resume is not cleared.
    for awaited in [["b", "x"], ["x", "b"]] {
        assert_eq!(m.apply(&suspend("a", 1, &awaited), 2000), suspend_res(422));
        assert_eq!(m.take_hits(), [TASK_SUSPEND_AWAITED_NOT_FOUND_422]);
    }
    assert_eq!(StateView::of(&m.state).resumes.len(), 1);
    assert_eq!(m.state, before);
}

#[test]
fn task_suspend__already_settled_300() {
    let mut m = setup(
        &[
            acquired_a(),
            buffer_b_into_a(),
            vec![
                (1000, promise_create("c", 50_000, plain())),
                (1000, promise_create("e", 10_000, plain())),
            ],
        ]
        .concat(),
    );
    let want = Want::of(&m);
    // `b` is settled: no suspension, no callback on `c`, the task stays
    // acquired under its lease, and its resumes are cleared.
    assert_eq!(
        m.apply(&suspend("a", 1, &["c", "b"]), 2000),
        suspend_res(300)
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_SUSPEND_ALREADY_SETTLED_300,
            TASK_SUSPEND_ALREADY_SETTLED_300_SETTLED
        ]
    );
    let want = want.task(held("a", 1, "p1", 30_000, 0)).resumes("a", &[]);
    want.clone().check(&m);
    // A pending promise past its deadline counts as settled.
    assert_eq!(m.apply(&suspend("a", 1, &["e"]), 10_000), suspend_res(300));
    assert_eq!(
        m.take_hits(),
        [
            TASK_SUSPEND_ALREADY_SETTLED_300,
            TASK_SUSPEND_ALREADY_SETTLED_300_EXPIRED
        ]
    );
    want.check(&m);
}

#[test]
fn task_suspend__already_settled_300__settled() {
    let mut m = setup(
        &[
            acquired_a(),
            buffer_b_into_a(),
            vec![(1000, promise_create("e", 60_000, plain()))],
        ]
        .concat(),
    );
    let want = Want::of(&m);
    // `b` (deadline 50 000) is settled and past its deadline: settled only.
    assert_eq!(m.apply(&suspend("a", 1, &["b"]), 60_000), suspend_res(300));
    assert_eq!(
        m.take_hits(),
        [
            TASK_SUSPEND_ALREADY_SETTLED_300,
            TASK_SUSPEND_ALREADY_SETTLED_300_SETTLED
        ]
    );
    let want = want.task(held("a", 1, "p1", 30_000, 0)).resumes("a", &[]);
    want.clone().check(&m);
    // With `e` at its deadline as well, both reasons, settled first
    // whatever the order of the actions.
    assert_eq!(
        m.apply(&suspend("a", 1, &["e", "b"]), 60_000),
        suspend_res(300)
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_SUSPEND_ALREADY_SETTLED_300,
            TASK_SUSPEND_ALREADY_SETTLED_300_SETTLED,
            TASK_SUSPEND_ALREADY_SETTLED_300_EXPIRED
        ]
    );
    want.check(&m);
}

#[test]
fn task_suspend__already_settled_300__expired() {
    let mut m = setup(
        &[
            acquired_a(),
            buffer_b_into_a(),
            vec![
                (1000, promise_create("c", 50_000, plain())),
                (1000, promise_create("e", 10_000, plain())),
            ],
        ]
        .concat(),
    );
    let want = Want::of(&m);
    // `e` pending at its deadline, `c` live: no callback on `c`, the
    // buffered resume cleared.
    assert_eq!(
        m.apply(&suspend("a", 1, &["c", "e"]), 10_000),
        suspend_res(300)
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_SUSPEND_ALREADY_SETTLED_300,
            TASK_SUSPEND_ALREADY_SETTLED_300_EXPIRED
        ]
    );
    want.task(held("a", 1, "p1", 30_000, 0))
        .resumes("a", &[])
        .check(&m);
}

#[test]
fn task_suspend__suspended_200() {
    let mut m = setup(
        &[
            acquired_a(),
            vec![
                (1000, promise_create("b", 50_000, plain())),
                (1000, promise_create("c", 50_000, plain())),
            ],
        ]
        .concat(),
    );
    let want = Want::of(&m);
    // The task's id is registered, whatever the actions name as awaiter;
    // `b` twice is registered once.
    let actions = ["b", "c", "b"]
        .iter()
        .map(|awaited| PromiseRegisterCallbackReq {
            awaited: awaited.to_string(),
            awaiter: "other".to_string(),
        })
        .collect();
    let req = Request::TaskSuspend(TaskSuspendReq {
        id: "a".to_string(),
        version: 1,
        actions,
    });
    assert_eq!(m.apply(&req, 2000), suspend_res(200));
    assert_eq!(m.take_hits(), [TASK_SUSPEND_SUSPENDED_200]);
    want.callbacks("b", &["a"])
        .callbacks("c", &["a"])
        .task(task("a", TaskState::Suspended, 1, 0))
        .no_task_timeouts("a")
        .check(&m);
}

// ----- T-07 task.fulfill -----

#[test]
fn task_fulfill__task_not_found_404() {
    let mut m = Machine::default();
    assert_eq!(
        m.apply(&fulfill("a", 1, PromiseState::Resolved), 1000),
        fulfill_res(404, None)
    );
    assert_eq!(m.take_hits(), [TASK_FULFILL_TASK_NOT_FOUND_404]);
    Want::empty().check(&m);
}

#[test]
fn task_fulfill__promise_not_found_409() {
    let mut m = orphan_task(held_object("a", 1, "p1", 30_000));
    assert_writes_nothing(
        &mut m,
        &fulfill("a", 1, PromiseState::Resolved),
        1000,
        fulfill_res(409, None),
        &[TASK_FULFILL_PROMISE_NOT_FOUND_409],
    );
}

#[test]
fn task_fulfill__not_acquired_409() {
    let mut m = setup(&pending_a());
    assert_writes_nothing(
        &mut m,
        &fulfill("a", 0, PromiseState::Resolved),
        2000,
        fulfill_res(409, None),
        &[TASK_FULFILL_NOT_ACQUIRED_409],
    );
}

#[test]
fn task_fulfill__promise_not_live_409() {
    let mut m = setup(&acquired_a());
    assert_writes_nothing(
        &mut m,
        &fulfill("a", 1, PromiseState::Resolved),
        100_000,
        fulfill_res(409, None),
        &[
            TASK_FULFILL_PROMISE_NOT_LIVE_409,
            TASK_FULFILL_PROMISE_NOT_LIVE_409_EXPIRED,
        ],
    );
}

#[test]
fn task_fulfill__promise_not_live_409__settled() {
    // Unreachable (an acquired task's promise is pending): hand-built.
    let mut m = setup(&acquired_a());
    settle_behind_task(&mut m, "a", 2000);
    assert_writes_nothing(
        &mut m,
        &fulfill("a", 1, PromiseState::Rejected),
        3000,
        fulfill_res(409, None),
        &[
            TASK_FULFILL_PROMISE_NOT_LIVE_409,
            TASK_FULFILL_PROMISE_NOT_LIVE_409_SETTLED,
        ],
    );
}

#[test]
fn task_fulfill__promise_not_live_409__expired() {
    let mut m = setup(&acquired_a());
    let before = m.state.clone();
    // Past the deadline (and the lease), nothing fired yet: not settled.
    assert_eq!(
        m.apply(&fulfill("a", 1, PromiseState::Resolved), 150_000),
        fulfill_res(409, None)
    );
    assert_eq!(
        m.take_hits(),
        [
            TASK_FULFILL_PROMISE_NOT_LIVE_409,
            TASK_FULFILL_PROMISE_NOT_LIVE_409_EXPIRED
        ]
    );
    assert_eq!(m.state, before);
}

#[test]
fn task_fulfill__version_mismatch_409() {
    let mut m = setup(&acquired_a());
    assert_writes_nothing(
        &mut m,
        &fulfill("a", 0, PromiseState::Resolved),
        2000,
        fulfill_res(409, None),
        &[TASK_FULFILL_VERSION_MISMATCH_409],
    );
}

#[test]
fn task_fulfill__fulfilled_200() {
    // `a` (acquired) has a listener, is awaited by suspended `x`, and awaits `c`.
    let mut m = setup(
        &[
            acquired_a(),
            vec![
                (1000, register_listener("a", L)),
                (1000, task_create("p1", 30_000, "x", 100_000, target())),
                (1000, suspend("x", 1, &["a"])),
                (1000, promise_create("c", 50_000, plain())),
                (1000, register_callback("c", "a")),
            ],
        ]
        .concat(),
    );
    let want = Want::of(&m);
    // The action's own id is not read: the task's promise is settled.
    let req = Request::TaskFulfill(TaskFulfillReq {
        id: "a".to_string(),
        version: 1,
        action: settle_req("ignored", PromiseState::Resolved),
    });
    let a = settled(&a_promise(), PromiseState::Resolved, 2000);
    assert_eq!(m.apply(&req, 2000), fulfill_res(200, Some(a.clone())));
    assert_eq!(
        m.take_hits(),
        [
            TASK_FULFILL_FULFILLED_200,
            RESUME_SUSPENDED_RESUMED,
            RESUME_SUSPENDED_EXECUTE_SENT
        ]
    );
    want.promise(a.clone())
        .no_promise_timeout("a")
        .callbacks("a", &[])
        .listeners("a", &[])
        .task(task("a", TaskState::Fulfilled, 1, 0))
        .no_task_timeouts("a")
        // the scrub: `a` is dropped from the pending `c`'s callbacks
        .callbacks("c", &[])
        .unblock(L, a)
        .task(task("x", TaskState::Pending, 1, 1))
        .resumes("x", &["a"])
        .task_timeout("x", RETRY, 2000 + RETRY_MS)
        .execute(W, "x", 1)
        .check(&m);
}

// ----- T-08 task.release -----

#[test]
fn task_release__task_not_found_404() {
    let mut m = Machine::default();
    assert_eq!(m.apply(&release("a", 1), 1000), Response::Status(404));
    assert_eq!(m.take_hits(), [TASK_RELEASE_TASK_NOT_FOUND_404]);
    Want::empty().check(&m);
}

#[test]
fn task_release__promise_not_found_409() {
    let mut m = orphan_task(held_object("a", 1, "p1", 30_000));
    assert_writes_nothing(
        &mut m,
        &release("a", 1),
        1000,
        Response::Status(409),
        &[TASK_RELEASE_PROMISE_NOT_FOUND_409],
    );
}

#[test]
fn task_release__not_acquired_409() {
    let mut m = setup(&pending_a());
    assert_writes_nothing(
        &mut m,
        &release("a", 0),
        2000,
        Response::Status(409),
        &[TASK_RELEASE_NOT_ACQUIRED_409],
    );
}

#[test]
fn task_release__promise_not_live_409() {
    let mut m = setup(&acquired_a());
    assert_writes_nothing(
        &mut m,
        &release("a", 1),
        100_000,
        Response::Status(409),
        &[
            TASK_RELEASE_PROMISE_NOT_LIVE_409,
            TASK_RELEASE_PROMISE_NOT_LIVE_409_EXPIRED,
        ],
    );
}

#[test]
fn task_release__promise_not_live_409__settled() {
    // Unreachable (an acquired task's promise is pending): hand-built.
    let mut m = setup(&acquired_a());
    settle_behind_task(&mut m, "a", 2000);
    assert_writes_nothing(
        &mut m,
        &release("a", 1),
        3000,
        Response::Status(409),
        &[
            TASK_RELEASE_PROMISE_NOT_LIVE_409,
            TASK_RELEASE_PROMISE_NOT_LIVE_409_SETTLED,
        ],
    );
}

#[test]
fn task_release__promise_not_live_409__expired() {
    let mut m = setup(&acquired_a());
    let before = m.state.clone();
    // At the deadline, before the version (wrong).
    assert_eq!(m.apply(&release("a", 2), 100_000), Response::Status(409));
    assert_eq!(
        m.take_hits(),
        [
            TASK_RELEASE_PROMISE_NOT_LIVE_409,
            TASK_RELEASE_PROMISE_NOT_LIVE_409_EXPIRED
        ]
    );
    assert_eq!(m.state, before);
}

#[test]
fn task_release__version_mismatch_409() {
    let mut m = setup(&acquired_a());
    assert_writes_nothing(
        &mut m,
        &release("a", 2),
        2000,
        Response::Status(409),
        &[TASK_RELEASE_VERSION_MISMATCH_409],
    );
}

#[test]
fn task_release__released_200() {
    // Pending v0 (execute v0 sent), acquired as v1, then a resume buffered.
    let mut m = setup(
        &[
            pending_a(),
            vec![(2000, task_acquire("a", 0, "p1", 30_000))],
            buffer_b_into_a(),
        ]
        .concat(),
    );
    let want = Want::of(&m);
    assert_eq!(m.apply(&release("a", 1), 3000), Response::Status(200));
    assert_eq!(m.take_hits(), [TASK_RELEASE_RELEASED_200]);
    // No version bump, resumes kept; the execute at the current version
    // replaces the v0 one (same outbox key).
    want.task(task("a", TaskState::Pending, 1, 1))
        .no_task_timeouts("a")
        .task_timeout("a", RETRY, 3000 + RETRY_MS)
        .execute(W, "a", 1)
        .check(&m);
    assert_eq!(StateView::of(&m.state).messages.len(), 1);
}

// ----- T-09 task.halt -----

#[test]
fn task_halt__not_found_404() {
    let mut m = Machine::default();
    assert_eq!(m.apply(&halt("a"), 1000), Response::Status(404));
    assert_eq!(m.take_hits(), [TASK_HALT_NOT_FOUND_404]);
    Want::empty().check(&m);
}

#[test]
fn task_halt__fulfilled_409() {
    let mut m = setup(
        &[
            acquired_a(),
            vec![(2000, fulfill("a", 1, PromiseState::Resolved))],
        ]
        .concat(),
    );
    assert_writes_nothing(
        &mut m,
        &halt("a"),
        3000,
        Response::Status(409),
        &[TASK_HALT_FULFILLED_409],
    );
}

#[test]
fn task_halt__already_halted_200() {
    let mut m = setup(&[acquired_a(), vec![(2000, halt("a"))]].concat());
    let before = m.state.clone();
    // Idempotent, and past the deadline too: no promise lookup.
    assert_eq!(m.apply(&halt("a"), 200_000), Response::Status(200));
    assert_eq!(m.take_hits(), [TASK_HALT_ALREADY_HALTED_200]);
    assert_eq!(m.state, before);
}

#[test]
fn task_halt__halted_200() {
    let mut m = setup(
        &[
            acquired_a(),
            buffer_b_into_a(),
            vec![
                (1000, promise_create("p", 100_000, target())),
                (1000, task_create("p1", 30_000, "s", 100_000, target())),
                (1000, promise_create("c", 100_000, plain())),
                (1000, suspend("s", 1, &["c"])),
            ],
        ]
        .concat(),
    );
    let want = Want::of(&m);
    // Acquired (with a buffered resume), pending, suspended: halted with
    // version and resumes kept, lease and timeouts dropped.
    for id in ["a", "p", "s"] {
        assert_eq!(m.apply(&halt(id), 2000), Response::Status(200));
        assert_eq!(m.take_hits(), [TASK_HALT_HALTED_200]);
    }
    want.task(task("a", TaskState::Halted, 1, 1))
        .no_task_timeouts("a")
        .task(task("p", TaskState::Halted, 0, 0))
        .no_task_timeouts("p")
        .task(task("s", TaskState::Halted, 1, 0))
        .check(&m);
}

// ----- T-10 task.continue -----

#[test]
fn task_continue__not_found_404() {
    let mut m = Machine::default();
    assert_eq!(m.apply(&task_continue("a"), 1000), Response::Status(404));
    assert_eq!(m.take_hits(), [TASK_CONTINUE_NOT_FOUND_404]);
    Want::empty().check(&m);
}

#[test]
fn task_continue__not_halted_409() {
    let mut m = setup(
        &[
            pending_a(),
            vec![
                (1000, promise_create("f", 100_000, target())),
                (2000, promise_settle("f", PromiseState::Resolved)),
            ],
        ]
        .concat(),
    );
    let before = m.state.clone();
    for id in ["a", "f"] {
        assert_eq!(m.apply(&task_continue(id), 3000), Response::Status(409));
        assert_eq!(m.take_hits(), [TASK_CONTINUE_NOT_HALTED_409]);
    }
    assert_eq!(m.state, before);
}

#[test]
fn task_continue__promise_not_found_404() {
    let mut m = orphan_task(TaskObject::new("a", TaskState::Halted, 2));
    assert_writes_nothing(
        &mut m,
        &task_continue("a"),
        1000,
        Response::Status(404),
        &[TASK_CONTINUE_PROMISE_NOT_FOUND_404],
    );
}

#[test]
fn task_continue__continued_200() {
    // Acquired v1, halted, then `b` settles: the resume is buffered.
    let mut m = setup(
        &[
            acquired_a(),
            vec![
                (1000, promise_create("b", 50_000, plain())),
                (1000, register_callback("b", "a")),
                (2000, halt("a")),
                (2500, promise_settle("b", PromiseState::Resolved)),
            ],
        ]
        .concat(),
    );
    let want = Want::of(&m);
    assert_eq!(StateView::of(&m.state).resumes.len(), 1);
    assert_eq!(m.apply(&task_continue("a"), 3000), Response::Status(200));
    assert_eq!(m.take_hits(), [TASK_CONTINUE_CONTINUED_200]);
    // Pending at the same version, resumes kept, retry armed, execute sent.
    want.task(task("a", TaskState::Pending, 1, 1))
        .task_timeout("a", RETRY, 3000 + RETRY_MS)
        .execute(W, "a", 1)
        .check(&m);
}

// ----- T-11 task.search -----

#[test]
fn task_search__not_implemented_501() {
    let mut m = setup(&acquired_a());
    let before = m.state.clone();
    let req = Request::TaskSearch(TaskSearchReq {
        state: Some(TaskState::Acquired),
        ..TaskSearchReq::default()
    });
    assert_eq!(m.apply(&req, 2000), Response::Status(501));
    assert_eq!(m.take_hits(), [TASK_SEARCH_NOT_IMPLEMENTED_501]);
    assert_eq!(m.state, before);
}
