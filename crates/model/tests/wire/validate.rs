//! The Rust server's 400 rules: every valid sample passes, and each rule
//! rejects the request that breaks it.

use model::api::*;
use model::calendar::RustServerCalendar;
use model::types::PromiseState;
use model::wire::address::is_valid_address;
use model::wire::validate;

use crate::{callback, create, samples, settle, tags};

fn check(r: &Request) -> Result<(), String> {
    validate(r, &RustServerCalendar)
}

#[test]
fn every_sample_is_valid() {
    for r in samples() {
        assert_eq!(check(&r), Ok(()), "{r:?}");
    }
}

fn task_create(action: PromiseCreateReq) -> Request {
    Request::TaskCreate(TaskCreateReq {
        pid: "w".into(),
        ttl: 10,
        action,
    })
}

fn schedule(id: &str, cron: &str, t: &[(&str, &str)]) -> Request {
    Request::ScheduleCreate(ScheduleCreateReq {
        id: id.into(),
        cron: cron.into(),
        promise_id: "x".into(),
        promise_timeout: 1,
        promise_param: Default::default(),
        promise_tags: tags(t),
    })
}

fn suspend(id: &str, actions: Vec<PromiseRegisterCallbackReq>) -> Request {
    Request::TaskSuspend(TaskSuspendReq {
        id: id.into(),
        version: 1,
        actions,
    })
}

#[test]
fn each_rule_rejects_what_breaks_it() {
    let target = ("resonate:target", "poll://any@g");
    let pc = |id: &str, at: u64, t: &[(&str, &str)]| Request::PromiseCreate(create(id, at, t));
    let heartbeat = |ids: &[&str]| {
        Request::TaskHeartbeat(TaskHeartbeatReq {
            pid: "w".into(),
            tasks: ids
                .iter()
                .map(|id| TaskRef {
                    id: id.to_string(),
                    version: 0,
                })
                .collect(),
        })
    };
    let cases: Vec<(Request, &str)> = vec![
        (
            Request::PromiseGet(PromiseGetReq { id: "".into() }),
            "promise id is required",
        ),
        (pc("", 1, &[]), "promise id is required"),
        (pc("a\0b", 1, &[]), "null bytes"),
        (
            pc("a.b", 1, &[("resonate:origin", "x")]),
            "prefixed by resonate:origin",
        ),
        (
            pc("x.b", 1, &[("resonate:origin", "x.b")]),
            "resonate:origin must not contain",
        ),
        (
            pc("ab", 1, &[("resonate:branch", "a")]),
            "prefixed by resonate:branch",
        ),
        (
            pc("ab.c", 1, &[("resonate:parent", "a")]),
            "prefixed by resonate:parent",
        ),
        (
            pc("a", 1, &[("resonate:prefix", "a.b")]),
            "resonate:prefix must not contain",
        ),
        (
            pc("a", 10, &[("resonate:delay", "-1"), target]),
            "non-negative integer",
        ),
        (
            pc("a", 10, &[("resonate:delay", "soon"), target]),
            "non-negative integer",
        ),
        (
            pc("a", 10, &[("resonate:delay", "10"), target]),
            "less than timeoutAt",
        ),
        (
            pc("a", 10, &[("resonate:delay", "5")]),
            "requires a resonate:target",
        ),
        (
            pc("a", 10, &[("resonate:target", "localhost:1")]),
            "invalid resonate:target",
        ),
        (
            Request::PromiseSettle(settle("", PromiseState::Resolved)),
            "promise id is required",
        ),
        (
            Request::PromiseRegisterCallback(callback("a", "a")),
            "different promises",
        ),
        (
            Request::PromiseRegisterCallback(callback("a.1", "b")),
            "same origin",
        ),
        (
            Request::PromiseRegisterCallback(callback("", "b")),
            "awaited promise id is required",
        ),
        (
            Request::PromiseRegisterListener(PromiseRegisterListenerReq {
                awaited: "a".into(),
                address: "poll://nobody@g".into(),
            }),
            "invalid listener address",
        ),
        (
            Request::PromiseSearch(PromiseSearchReq {
                limit: Some(0),
                ..Default::default()
            }),
            "limit",
        ),
        (
            Request::TaskSearch(TaskSearchReq {
                limit: Some(1001),
                ..Default::default()
            }),
            "limit",
        ),
        (task_create(create("t", 10, &[])), "resonate:target tag"),
        (
            task_create(create("t", 10, &[target, ("resonate:delay", "1")])),
            "must not have a resonate:delay",
        ),
        (
            Request::TaskCreate(TaskCreateReq {
                pid: "w".into(),
                ttl: 0,
                action: create("t", 1, &[target]),
            }),
            "ttl",
        ),
        (
            Request::TaskCreate(TaskCreateReq {
                pid: "".into(),
                ttl: 1,
                action: create("t", 1, &[target]),
            }),
            "process id",
        ),
        (
            Request::TaskAcquire(TaskAcquireReq {
                id: "t".into(),
                version: 0,
                pid: "w".into(),
                ttl: 0,
            }),
            "ttl",
        ),
        (
            Request::TaskFence(TaskFenceReq {
                id: "t".into(),
                version: 0,
                action: TaskFenceAction::Create(create("t", 1, &[])),
            }),
            "must not equal the task id",
        ),
        (
            Request::TaskFence(TaskFenceReq {
                id: "t".into(),
                version: 0,
                action: TaskFenceAction::Settle(settle("t", PromiseState::Resolved)),
            }),
            "must not equal the task id",
        ),
        (
            Request::TaskFence(TaskFenceReq {
                id: "t".into(),
                version: 0,
                action: TaskFenceAction::Create(create("t.1", 1, &[("resonate:target", "x")])),
            }),
            "invalid resonate:target",
        ),
        (heartbeat(&[]), "tasks must not be empty"),
        (heartbeat(&["a.1", "b.1"]), "same origin"),
        (suspend("t", vec![]), "actions must not be empty"),
        (suspend("t", vec![callback("t.1", "t.2")]), "every awaiter"),
        (suspend("t", vec![callback("t", "t")]), "different promises"),
        (suspend("t.1", vec![callback("u.2", "t.1")]), "origin"),
        (
            Request::TaskFulfill(TaskFulfillReq {
                id: "t".into(),
                version: 0,
                action: settle("u", PromiseState::Resolved),
            }),
            "action id must equal the task id",
        ),
        (
            Request::TaskRelease(TaskReleaseReq {
                id: "".into(),
                version: 0,
            }),
            "task id",
        ),
        (
            schedule("a.b", "* * * * *", &[target]),
            "must not contain '.'",
        ),
        (schedule("s", "* * * * *", &[]), "resonate:target"),
        (schedule("s", "every minute", &[target]), "invalid cron"),
        (schedule("s", "", &[target]), "cron expression is required"),
    ];
    for (r, want) in cases {
        match check(&r) {
            Err(e) => assert!(e.contains(want), "{r:?}: {e:?} lacks {want:?}"),
            Ok(()) => panic!("{r:?} passed, expected {want:?}"),
        }
    }
}

#[test]
fn rules_accept_their_edges() {
    let ok = |t: &[(&str, &str)], id: &str| check(&Request::PromiseCreate(create(id, 10, t)));
    assert_eq!(ok(&[("resonate:origin", "a")], "a"), Ok(()));
    assert_eq!(ok(&[("resonate:origin", "a")], "a.b.c"), Ok(()));
    assert_eq!(ok(&[("resonate:branch", "a.b")], "a.b.c"), Ok(()));
    assert_eq!(
        ok(
            &[("resonate:delay", "9"), ("resonate:target", "http://w")],
            "a"
        ),
        Ok(())
    );
    let six = Request::ScheduleCreate(ScheduleCreateReq {
        id: "s".into(),
        cron: "0 */5 * * * *".into(),
        promise_id: "x".into(),
        promise_timeout: 0,
        promise_param: Default::default(),
        promise_tags: tags(&[("resonate:target", "poll://uni@g/1")]),
    });
    assert_eq!(check(&six), Ok(()));
    assert!(is_valid_address("https://example.com:8443/hook"));
    assert!(!is_valid_address("poll://g"));
}
