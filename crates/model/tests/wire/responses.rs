//! Response envelopes: every shape the model produces round-trips, the
//! encoding has the server's shapes, and samples written by hand from the
//! Rust server's `server.rs` decode into the expected typed responses.

use model::api::*;
use model::machine::Machine;
use model::types::{PromiseRecord, PromiseState, TaskRecord, TaskState, Value};
use model::wire::*;
use serde_json::{json, Value as Json};

use crate::{callback, create, settle};

fn record(id: &str) -> PromiseRecord {
    PromiseRecord {
        id: id.into(),
        state: PromiseState::Pending,
        param: Value::default(),
        value: Value::default(),
        tags: crate::tags(&[("resonate:target", "poll://any@g")]),
        timeout_at: 100,
        created_at: 0,
        settled_at: None,
    }
}

/// Drive the model through every handler so that each response shape it
/// can produce (successes and failures) is collected with its kind.
fn model_responses() -> Vec<(&'static str, Response)> {
    let target = [("resonate:target", "poll://any@g")];
    let mut m = Machine::default();
    let mut out = Vec::new();
    let mut run = |m: &mut Machine, r: Request, now: u64| {
        let res = m.apply(&r, now);
        out.push((r.kind(), res));
    };
    let task = |id: &str, version: u64| TaskRef {
        id: id.into(),
        version,
    };
    use Request as R;
    run(
        &mut m,
        R::PromiseGet(PromiseGetReq { id: "none".into() }),
        0,
    );
    run(&mut m, R::PromiseCreate(create("p", 100, &[])), 0);
    run(&mut m, R::PromiseGet(PromiseGetReq { id: "p".into() }), 200); // projected
    run(
        &mut m,
        R::PromiseSettle(settle("none", PromiseState::Resolved)),
        0,
    );
    run(
        &mut m,
        R::TaskCreate(TaskCreateReq {
            pid: "w".into(),
            ttl: 1000,
            action: create("t", 10_000, &target),
        }),
        0,
    );
    run(&mut m, R::TaskGet(TaskGetReq { id: "t".into() }), 1);
    run(&mut m, R::TaskGet(TaskGetReq { id: "none".into() }), 1);
    let fence = |action| {
        R::TaskFence(TaskFenceReq {
            id: "t".into(),
            version: 1,
            action,
        })
    };
    run(
        &mut m,
        fence(TaskFenceAction::Create(create("t.1", 5000, &target))),
        1,
    );
    run(
        &mut m,
        fence(TaskFenceAction::Settle(settle(
            "t.x",
            PromiseState::Resolved,
        ))),
        1,
    );
    run(
        &mut m,
        fence(TaskFenceAction::Settle(settle(
            "t.1",
            PromiseState::Rejected,
        ))),
        1,
    );
    run(
        &mut m,
        R::TaskFence(TaskFenceReq {
            id: "t".into(),
            version: 9,
            action: TaskFenceAction::Create(create("t.2", 5000, &[])),
        }),
        1,
    );
    run(&mut m, R::PromiseCreate(create("t.3", 5000, &[])), 1);
    run(&mut m, R::PromiseRegisterCallback(callback("t.3", "t")), 1);
    run(
        &mut m,
        R::PromiseRegisterListener(PromiseRegisterListenerReq {
            awaited: "t.3".into(),
            address: "poll://any@g".into(),
        }),
        1,
    );
    let suspend = |awaited: &str| {
        R::TaskSuspend(TaskSuspendReq {
            id: "t".into(),
            version: 1,
            actions: vec![callback(awaited, "t")],
        })
    };
    run(&mut m, suspend("t.1"), 2); // settled: 300
    run(&mut m, suspend("t.none"), 2); // 422
    run(
        &mut m,
        R::TaskHeartbeat(TaskHeartbeatReq {
            pid: "w".into(),
            tasks: vec![task("t", 1)],
        }),
        2,
    );
    run(&mut m, suspend("t.3"), 2); // 200
    run(
        &mut m,
        R::PromiseSettle(settle("t.3", PromiseState::Resolved)),
        3,
    );
    run(
        &mut m,
        R::TaskAcquire(TaskAcquireReq {
            id: "t".into(),
            version: 1,
            pid: "w".into(),
            ttl: 1000,
        }),
        4,
    );
    run(
        &mut m,
        R::TaskRelease(TaskReleaseReq {
            id: "t".into(),
            version: 0,
        }),
        5,
    );
    run(&mut m, R::TaskHalt(TaskHaltReq { id: "t".into() }), 5);
    run(
        &mut m,
        R::TaskContinue(TaskContinueReq { id: "t".into() }),
        5,
    );
    let version = m.state.get_task("t").unwrap().version;
    run(
        &mut m,
        R::TaskAcquire(TaskAcquireReq {
            id: "t".into(),
            version,
            pid: "w".into(),
            ttl: 1000,
        }),
        5,
    );
    run(
        &mut m,
        R::TaskFulfill(TaskFulfillReq {
            id: "t".into(),
            version: version + 1,
            action: settle("t", PromiseState::Resolved),
        }),
        6,
    );
    run(&mut m, R::PromiseSearch(PromiseSearchReq::default()), 6);
    run(&mut m, R::TaskSearch(TaskSearchReq::default()), 6);
    let schedule = ScheduleCreateReq {
        id: "s".into(),
        cron: "* * * * *".into(),
        promise_id: "{{.id}}.{{.timestamp}}".into(),
        promise_timeout: 1000,
        promise_param: Value::default(),
        promise_tags: crate::tags(&target),
    };
    run(&mut m, R::ScheduleCreate(schedule), 6);
    run(&mut m, R::ScheduleGet(ScheduleGetReq { id: "s".into() }), 6);
    run(
        &mut m,
        R::ScheduleDelete(ScheduleDeleteReq { id: "s".into() }),
        6,
    );
    run(
        &mut m,
        R::ScheduleDelete(ScheduleDeleteReq { id: "s".into() }),
        6,
    );
    run(&mut m, R::ScheduleSearch(ScheduleSearchReq::default()), 6);
    out
}

fn synthetic_responses() -> Vec<(&'static str, Response)> {
    vec![
        (
            "task.acquire",
            Response::TaskClaim(TaskClaimRes {
                status: 200,
                task: Some(TaskRecord {
                    id: "t".into(),
                    state: TaskState::Acquired,
                    version: 2,
                    resumes: 1,
                    ttl: Some(5),
                    pid: Some("w".into()),
                }),
                promise: Some(record("t")),
                preload: vec![record("t.1")],
            }),
        ),
        (
            "task.suspend",
            Response::TaskSuspend(TaskSuspendRes {
                status: 300,
                preload: vec![record("t.1")],
            }),
        ),
        ("task.heartbeat", Response::Status(400)),
        (
            "promise.create",
            Response::Promise(PromiseRes {
                status: 400,
                promise: None,
            }),
        ),
    ]
}

#[test]
fn every_response_round_trips() {
    let all: Vec<_> = model_responses()
        .into_iter()
        .chain(synthetic_responses())
        .collect();
    let statuses: std::collections::BTreeSet<(&str, u16)> =
        all.iter().map(|(k, r)| (*k, r.status())).collect();
    // The walk reached the shapes it means to.
    for want in [
        ("promise.get", 404),
        ("task.suspend", 300),
        ("task.suspend", 200),
        ("task.suspend", 422),
        ("task.fence", 409),
        ("promise.search", 501),
        ("schedule.delete", 404),
        ("task.fulfill", 200),
    ] {
        assert!(
            statuses.contains(&want),
            "{want:?} not reached: {statuses:?}"
        );
    }
    for (kind, res) in all {
        let env = encode_response(kind, &res, "c");
        assert_eq!(decode_response(kind, &env).as_ref(), Ok(&res), "{env}");
    }
}

#[test]
fn encodes_the_servers_shapes() {
    let res = |kind, r| encode_response(kind, &r, "c");
    let head = |s: u16| json!({"corrId": "c", "status": s, "version": "2026-04-01"});
    assert_eq!(
        res(
            "promise.get",
            Response::Promise(PromiseRes {
                status: 404,
                promise: None
            })
        ),
        json!({"kind": "promise.get", "head": head(404), "data": "not found"})
    );
    assert_eq!(
        res(
            "task.suspend",
            Response::TaskSuspend(TaskSuspendRes {
                status: 200,
                preload: vec![]
            })
        )["data"],
        json!({})
    );
    assert_eq!(
        res(
            "task.suspend",
            Response::TaskSuspend(TaskSuspendRes {
                status: 300,
                preload: vec![]
            })
        )["data"],
        json!({"preload": []})
    );
    assert_eq!(
        res("task.release", Response::Status(200))["data"],
        json!({})
    );
    assert_eq!(
        res("task.search", Response::Status(501))["data"],
        json!("not implemented")
    );
    let fence = Response::TaskFence(TaskFenceRes {
        status: 200,
        action: Some(TaskFenceInnerRes::Settle(PromiseRes {
            status: 404,
            promise: None,
        })),
        preload: vec![],
    });
    assert_eq!(
        res("task.fence", fence),
        json!({"kind": "task.fence", "head": head(200), "data": {
            "action": {"kind": "promise.settle", "head": head(404), "data": "not found"},
            "preload": [],
        }})
    );
    // Records: optional fields omitted when absent, empty value headers too.
    let p = res(
        "promise.create",
        Response::Promise(PromiseRes {
            status: 200,
            promise: Some(record("p")),
        }),
    );
    assert_eq!(
        p["data"],
        json!({"promise": {"id": "p", "state": "pending", "param": {}, "value": {},
            "tags": {"resonate:target": "poll://any@g"}, "timeoutAt": 100, "createdAt": 0}})
    );
}

/// Envelopes written by hand from `server.rs`'s `ResponseEnvelope`s.
fn server(kind: &str, status: u16, data: Json) -> Json {
    json!({"kind": kind, "head": {"corrId": "c", "status": status, "version": "2026-04-01"}, "data": data})
}

fn server_promise() -> Json {
    json!({"id": "p", "state": "rejected_timedout", "param": {"headers": {}, "data": "e30="},
        "value": {}, "tags": {}, "timeoutAt": 10, "createdAt": 1, "settledAt": 10})
}

#[test]
fn decodes_the_servers_samples() {
    let p = PromiseRecord {
        id: "p".into(),
        state: PromiseState::RejectedTimedout,
        param: Value {
            headers: Default::default(),
            data: Some("e30=".into()),
        },
        value: Value::default(),
        tags: Default::default(),
        timeout_at: 10,
        created_at: 1,
        settled_at: Some(10),
    };
    let promise = |status, promise| Ok(Response::Promise(PromiseRes { status, promise }));
    let d = |kind: &str, env: Json| decode_response(kind, &env);

    assert_eq!(
        d(
            "promise.get",
            server("promise.get", 200, json!({"promise": server_promise()}))
        ),
        promise(200, Some(p.clone()))
    );
    assert_eq!(
        d(
            "promise.get",
            server("promise.get", 404, json!("Promise not found"))
        ),
        promise(404, None)
    );
    assert_eq!(
        d(
            "promise.register_callback",
            server(
                "promise.register_callback",
                422,
                json!("Awaiter promise has no resonate:target tag")
            )
        ),
        promise(422, None)
    );
    let task = json!({"id": "p", "state": "acquired", "version": 1, "resumes": 0, "ttl": 30000, "pid": "w"});
    let claim = d(
        "task.create",
        server(
            "task.create",
            200,
            json!({"task": task, "promise": server_promise(), "preload": []}),
        ),
    );
    let Ok(Response::TaskClaim(c)) = claim else {
        panic!("{claim:?}")
    };
    assert_eq!(c.task.unwrap().pid.as_deref(), Some("w"));
    assert_eq!(c.promise, Some(p.clone()));
    assert_eq!(
        d(
            "task.acquire",
            server("task.acquire", 409, json!("Version mismatch"))
        ),
        Ok(Response::TaskClaim(TaskClaimRes {
            status: 409,
            task: None,
            promise: None,
            preload: vec![]
        }))
    );
    let fenced = d(
        "task.fence",
        server(
            "task.fence",
            200,
            json!({
                "action": {"kind": "promise.create", "head": {"corrId": "c", "status": 200, "version": "2026-04-01"},
                    "data": {"promise": server_promise()}},
                "preload": [],
            }),
        ),
    );
    assert_eq!(
        fenced,
        Ok(Response::TaskFence(TaskFenceRes {
            status: 200,
            action: Some(TaskFenceInnerRes::Create(PromiseRes {
                status: 200,
                promise: Some(p.clone())
            })),
            preload: vec![],
        }))
    );
    let fenced = d(
        "task.fence",
        server(
            "task.fence",
            200,
            json!({
                "action": {"kind": "promise.settle", "head": {"corrId": "c", "status": 404, "version": "2026-04-01"},
                    "data": "Promise not found"},
                "preload": [],
            }),
        ),
    );
    assert!(matches!(
        fenced,
        Ok(Response::TaskFence(TaskFenceRes {
            action: Some(TaskFenceInnerRes::Settle(PromiseRes {
                status: 404,
                promise: None
            })),
            ..
        }))
    ));
    assert_eq!(
        d(
            "task.suspend",
            server("task.suspend", 300, json!({"preload": [server_promise()]}))
        ),
        Ok(Response::TaskSuspend(TaskSuspendRes {
            status: 300,
            preload: vec![p.clone()]
        }))
    );
    assert_eq!(
        d("task.suspend", server("task.suspend", 200, json!({}))),
        Ok(Response::TaskSuspend(TaskSuspendRes {
            status: 200,
            preload: vec![]
        }))
    );
    assert_eq!(
        d("task.heartbeat", server("task.heartbeat", 200, json!({}))),
        Ok(Response::Status(200))
    );
    assert_eq!(
        d(
            "promise.search",
            server(
                "promise.search",
                200,
                json!({"promises": [server_promise()], "cursor": "p"})
            )
        ),
        Ok(Response::Status(200))
    );
    // The server writes schedule fields in its own order.
    let s = d(
        "schedule.create",
        server(
            "schedule.create",
            200,
            json!({"schedule": {
        "id": "s", "cron": "* * * * *", "promiseId": "{{.id}}", "promiseTimeout": 5,
        "promiseParam": {}, "promiseTags": {"resonate:target": "poll://any@g"},
        "createdAt": 0, "nextRunAt": 60000}}),
        ),
    );
    let Ok(Response::Schedule(ScheduleRes {
        status: 200,
        schedule: Some(s),
    })) = s
    else {
        panic!("{s:?}")
    };
    assert_eq!((s.next_run_at, s.last_run_at), (60000, None));
}

#[test]
fn malformed_responses_are_errors_naming_the_path() {
    let e = |kind: &str, env: Json| decode_response(kind, &env).unwrap_err();
    assert_eq!(
        e("promise.get", json!({"kind": "promise.get", "data": {}})).path,
        "head"
    );
    assert_eq!(
        e("promise.get", server("promise.get", 200, json!({}))).path,
        "data.promise"
    );
    let bad = e(
        "promise.get",
        server("promise.get", 200, json!({"promise": {"id": "p"}})),
    );
    assert_eq!(bad.path, "data.promise");
    assert!(bad.message.contains("missing field"), "{bad}");
    assert_eq!(
        e("task.get", server("task.get", 200, json!("oops"))).path,
        "data"
    );
    assert_eq!(e("nope", server("nope", 200, json!({}))).path, "kind");
    let fence = server(
        "task.fence",
        200,
        json!({"action": {"kind": "promise.get",
        "head": {"status": 200}, "data": {}}}),
    );
    assert_eq!(e("task.fence", fence).path, "data.action.kind");
}
