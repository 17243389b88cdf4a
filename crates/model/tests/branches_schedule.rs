//! One test per branch of the schedule handlers (S-01..S-04), named after
//! the branch (`Branch::test_name`). Times are ms; `nextCron` is strictly
//! after its argument at whole-second granularity.
#![allow(non_snake_case)]

mod common;

use common::*;
use model::api::{Request, Response, ScheduleSearchReq};
use model::branch::*;
use model::machine::{Machine, Timer};

/// The template every test uses: one promise id per occurrence.
const TEMPLATE: &str = "{{.id}}.{{.timestamp}}";

// ----- S-01 schedule.get -----

#[test]
fn schedule_get__not_found_404() {
    let mut m = Machine::default();
    assert_eq!(m.apply(&schedule_get("s"), 1000), schedule_res(404, None));
    assert_eq!(m.take_hits(), [SCHEDULE_GET_NOT_FOUND_404]);
    Want::empty().check(&m);
}

#[test]
fn schedule_get__found_200() {
    let mut m = setup(&[(
        1000,
        schedule_create("s", EVERY_MINUTE, TEMPLATE, 30_000, target()),
    )]);
    let before = m.state.clone();
    let s = every_minute("s", TEMPLATE, 30_000, target(), 1000, 60_000, None);
    assert_eq!(
        m.apply(&schedule_get("s"), 2000),
        schedule_res(200, Some(s))
    );
    assert_eq!(m.take_hits(), [SCHEDULE_GET_FOUND_200]);
    assert_eq!(m.state, before);
}

// ----- S-02 schedule.create -----

#[test]
fn schedule_create__exists_200() {
    let mut m = setup(&[(
        1000,
        schedule_create("s", EVERY_MINUTE, TEMPLATE, 30_000, target()),
    )]);
    let before = m.state.clone();
    // The stored schedule; the request's fields are ignored.
    let s = every_minute("s", TEMPLATE, 30_000, target(), 1000, 60_000, None);
    assert_eq!(
        m.apply(&schedule_create("s", "0 * * * *", "x", 1, plain()), 2000),
        schedule_res(200, Some(s))
    );
    assert_eq!(m.take_hits(), [SCHEDULE_CREATE_EXISTS_200]);
    assert_eq!(m.state, before);
}

#[test]
fn schedule_create__created_200() {
    let mut m = Machine::default();
    // Created mid-second: the next whole minute strictly after.
    let s = every_minute("s", TEMPLATE, 30_000, plain(), 60_500, 120_000, None);
    assert_eq!(
        m.apply(
            &schedule_create("s", EVERY_MINUTE, TEMPLATE, 30_000, plain()),
            60_500
        ),
        schedule_res(200, Some(s.clone()))
    );
    assert_eq!(m.take_hits(), [SCHEDULE_CREATE_CREATED_200]);
    // Created on an occurrence: strictly after, so the next one.
    let t = every_minute("t", TEMPLATE, 30_000, plain(), 60_000, 120_000, None);
    assert_eq!(
        m.apply(
            &schedule_create("t", EVERY_MINUTE, TEMPLATE, 30_000, plain()),
            60_000
        ),
        schedule_res(200, Some(t.clone()))
    );
    assert_eq!(m.take_hits(), [SCHEDULE_CREATE_CREATED_200]);
    // Nothing runs at creation: no promise until the timeout fires.
    Want::empty()
        .schedule(s)
        .schedule_timeout("s", 120_000)
        .schedule(t)
        .schedule_timeout("t", 120_000)
        .check(&m);
}

// ----- S-03 schedule.delete -----

#[test]
fn schedule_delete__not_found_404() {
    let mut m = Machine::default();
    assert_eq!(m.apply(&schedule_delete("s"), 1000), Response::Status(404));
    assert_eq!(m.take_hits(), [SCHEDULE_DELETE_NOT_FOUND_404]);
    Want::empty().check(&m);
}

#[test]
fn schedule_delete__deleted_200() {
    let mut m = setup(&[(
        1000,
        schedule_create("s", EVERY_MINUTE, TEMPLATE, 30_000, plain()),
    )]);
    assert_eq!(m.tick(60_000), [Timer::Schedule("s".to_string())]);
    m.clear_hits();
    let want = Want::of(&m);
    assert_eq!(
        m.apply(&schedule_delete("s"), 61_000),
        Response::Status(200)
    );
    assert_eq!(m.take_hits(), [SCHEDULE_DELETE_DELETED_200]);
    // The promise it created stays.
    want.no_schedule("s").no_schedule_timeout("s").check(&m);
    assert_eq!(
        m.apply(&promise_get("s.60000"), 61_000),
        ok(pending("s.60000", 90_000, 60_000, plain()))
    );
}

// ----- S-04 schedule.search -----

#[test]
fn schedule_search__not_implemented_501() {
    let mut m = setup(&[(
        1000,
        schedule_create("s", EVERY_MINUTE, TEMPLATE, 30_000, plain()),
    )]);
    let before = m.state.clone();
    let req = Request::ScheduleSearch(ScheduleSearchReq {
        limit: Some(1),
        cursor: None,
    });
    assert_eq!(m.apply(&req, 2000), Response::Status(501));
    assert_eq!(m.take_hits(), [SCHEDULE_SEARCH_NOT_IMPLEMENTED_501]);
    assert_eq!(m.state, before);
}
