//! Request decoding and encoding: round trips of every kind, SDK-shaped
//! samples, and decode errors that name the offending field.

use model::api::*;
use model::types::PromiseState;
use model::wire::*;
use serde_json::{json, Value as Json};

use crate::{create, samples, tags};

fn error(kind: &str, data: Json) -> String {
    decode_request(kind, &data).unwrap_err().to_string()
}

#[test]
fn every_kind_round_trips() {
    let mut kinds: Vec<&str> = Vec::new();
    for r in samples() {
        let data = encode_request(&r);
        assert_eq!(decode_request(r.kind(), &data).as_ref(), Ok(&r), "{data}");
        kinds.push(r.kind());
    }
    kinds.dedup();
    assert_eq!(kinds, KINDS.to_vec());
}

/// What a harness sends, the data serialised straight from the request,
/// is byte for byte the JSON [`encode_request`] gives (the same keys in
/// the same order, none twice).
#[test]
fn the_data_serialised_straight_is_the_bytes_of_its_json() {
    for r in samples() {
        let direct = serde_json::to_vec(&request_data(&r)).unwrap();
        assert_eq!(
            direct,
            serde_json::to_vec(&encode_request(&r)).unwrap(),
            "{r:?}"
        );
    }
}

/// A search writes each filter it has, in the wire's order, and leaves
/// out each it has not.
#[test]
fn a_search_writes_the_filters_it_has() {
    let full = Request::PromiseSearch(PromiseSearchReq {
        state: Some(PromiseState::Pending),
        tags: tags(&[("a", "b")]),
        limit: Some(3),
        cursor: Some("c".into()),
    });
    let text = serde_json::to_string(&request_data(&full)).unwrap();
    assert_eq!(
        text,
        r#"{"state":"pending","tags":{"a":"b"},"limit":3,"cursor":"c"}"#
    );
    let bare = [
        Request::PromiseSearch(PromiseSearchReq::default()),
        Request::TaskSearch(TaskSearchReq::default()),
        Request::ScheduleSearch(ScheduleSearchReq::default()),
    ];
    for r in bare {
        assert_eq!(encode_request(&r), json!({}), "{r:?}");
    }
    let task = Request::TaskSearch(TaskSearchReq {
        state: Some(model::types::TaskState::Acquired),
        limit: Some(1),
        cursor: None,
    });
    assert_eq!(
        encode_request(&task),
        json!({"state": "acquired", "limit": 1})
    );
}

#[test]
fn every_envelope_round_trips() {
    for r in samples() {
        for t in [None, Some(1_700_000_000_000)] {
            let env = request_envelope(&r, "c-1", t);
            assert_eq!(env["head"]["version"], PROTOCOL_VERSION);
            let head = Head {
                corr_id: "c-1".into(),
                debug_time: t,
            };
            assert_eq!(decode_envelope(&env), Ok((r.clone(), head)));
        }
    }
}

#[test]
fn encodes_camel_case_and_nested_envelopes() {
    let samples = samples();
    let r = samples.iter().find(|r| r.kind() == "task.create").unwrap();
    let env = request_envelope(r, "c", Some(7));
    assert_eq!(
        env,
        json!({
            "kind": "task.create",
            "head": {"corrId": "c", "version": "2026-04-01", "resonate:debug_time": 7},
            "data": {
                "pid": "w",
                "ttl": 30000,
                "action": {
                    "kind": "promise.create",
                    "head": {"corrId": "c", "version": "2026-04-01"},
                    "data": {
                        "id": "t",
                        "timeoutAt": 100,
                        "param": {"headers": {"h": "v"}, "data": "ZGF0YQ=="},
                        "tags": {"resonate:target": "poll://any@default"},
                    },
                },
            },
        })
    );
}

#[test]
fn decodes_sdk_shaped_requests_with_defaults_and_extra_fields() {
    // Missing param/tags default; unknown fields (auth, iKey) are ignored.
    let env = json!({
        "kind": "promise.create",
        "head": {"corrId": "x", "version": "2026-04-01", "auth": "token"},
        "data": {"id": "p", "timeoutAt": 5, "iKey": "ignored"},
    });
    let (r, head) = decode_envelope(&env).unwrap();
    assert_eq!(r, Request::PromiseCreate(create("p", 5, &[])));
    assert_eq!(head.debug_time, None);

    let r = decode_request(
        "task.suspend",
        &json!({"id": "t", "version": 1, "actions": [
            {"kind": "promise.register_callback", "head": {}, "data": {"awaited": "t.1", "awaiter": "t"}}
        ]}),
    );
    assert!(matches!(r, Ok(Request::TaskSuspend(s)) if s.actions.len() == 1));

    // The fence action's head is optional; null optionals read as absent.
    let r = decode_request(
        "task.fence",
        &json!({"id": "t", "version": 0, "action": {"kind": "promise.settle",
            "data": {"id": "t.1", "state": "rejected_canceled", "value": {"headers": null, "data": null}}}}),
    );
    assert_eq!(
        r,
        Ok(Request::TaskFence(TaskFenceReq {
            id: "t".into(),
            version: 0,
            action: TaskFenceAction::Settle(crate::settle("t.1", PromiseState::RejectedCanceled)),
        }))
    );
    let r = decode_request(
        "promise.search",
        &json!({"state": null, "tags": {"a": "b"}}),
    );
    assert_eq!(
        r,
        Ok(Request::PromiseSearch(PromiseSearchReq {
            tags: tags(&[("a", "b")]),
            ..Default::default()
        }))
    );
}

#[test]
fn a_missing_field_is_named() {
    assert_eq!(
        error("promise.create", json!({"id": "p"})),
        "data.timeoutAt: missing field"
    );
    assert_eq!(
        error(
            "task.suspend",
            json!({"id": "t", "version": 1, "actions": [
                {"kind": "promise.register_callback", "head": {}, "data": {"awaited": "a", "awaiter": "t"}},
                {"kind": "promise.register_callback", "head": {}, "data": {"awaiter": "t"}},
            ]})
        ),
        "data.actions[1].data.awaited: missing field"
    );
    // task.create's nested action needs a head, as the server's serde does.
    assert_eq!(
        error(
            "task.create",
            json!({"pid": "w", "ttl": 1, "action": {"kind": "promise.create",
            "data": {"id": "t", "timeoutAt": 1}}})
        ),
        "data.action.head: missing field"
    );
}

#[test]
fn a_wrong_type_is_named() {
    let action = |t: Json| {
        json!({"pid": "w", "ttl": 1, "action": {"kind": "promise.create", "head": {},
            "data": {"id": "t", "timeoutAt": t}}})
    };
    for bad in [json!(-1), json!("5"), json!(1.5), json!(u64::MAX)] {
        assert_eq!(
            error("task.create", action(bad)),
            "data.action.data.timeoutAt: expected a non-negative integer"
        );
    }
    assert_eq!(
        error(
            "promise.create",
            json!({"id": "p", "timeoutAt": 1, "tags": {"a": 1}})
        ),
        "data.tags.a: expected a string"
    );
    assert_eq!(
        error(
            "promise.create",
            json!({"id": "p", "timeoutAt": 1, "tags": null})
        ),
        "data.tags: must not be null"
    );
    assert_eq!(
        error("promise.get", json!({"id": 7})),
        "data.id: expected a string"
    );
    assert_eq!(
        error("task.heartbeat", json!({"pid": "w", "tasks": {}})),
        "data.tasks: expected an array"
    );
    assert_eq!(error("promise.get", json!([])), "data: expected an object");
}

#[test]
fn a_bad_state_is_named() {
    for s in ["pending", "rejected_timedout", "RESOLVED"] {
        let e = error("promise.settle", json!({"id": "p", "state": s}));
        assert!(e.starts_with("data.state: expected one of resolved"), "{e}");
    }
    let e = error(
        "task.fulfill",
        json!({"id": "t", "version": 1, "action": {"kind": "promise.settle", "head": {},
            "data": {"id": "t", "state": "pending"}}}),
    );
    assert!(e.starts_with("data.action.data.state:"), "{e}");
    let e = error("task.search", json!({"state": "done"}));
    assert!(e.starts_with("data.state: expected a task state"), "{e}");
}

#[test]
fn a_bad_fence_kind_is_named() {
    for kind in ["promise.get", "task.create", ""] {
        assert_eq!(
            error(
                "task.fence",
                json!({"id": "t", "version": 1,
                "action": {"kind": kind, "data": {"id": "t.1"}}})
            ),
            "data.action.kind: expected promise.create or promise.settle"
        );
    }
}

#[test]
fn an_unknown_kind_is_named() {
    let e = decode_request("promise.frobnicate", &json!({})).unwrap_err();
    assert_eq!(e.path, "kind");
    assert_eq!(e.to_string(), "kind: unknown kind `promise.frobnicate`");
}

#[test]
fn envelope_errors_are_named() {
    let env = |f: &dyn Fn(&mut Json)| {
        let mut e = json!({"kind": "promise.get", "head": {"corrId": "c", "version": "2026-04-01"},
            "data": {"id": "p"}});
        f(&mut e);
        decode_envelope(&e).unwrap_err().path
    };
    assert_eq!(env(&|e| e["kind"] = json!("")), "kind");
    assert_eq!(
        env(&|e| e["head"]["version"] = json!("2025-01-01")),
        "head.version"
    );
    assert_eq!(env(&|e| e["head"]["corrId"] = json!(null)), "head.corrId");
    assert_eq!(
        env(&|e| e["head"]["resonate:debug_time"] = json!(-5)),
        "head.resonate:debug_time"
    );
    assert_eq!(env(&|e| e["data"] = json!("x")), "data");
    assert_eq!(env(&|e| e["data"] = json!({})), "data.id");
    assert_eq!(decode_envelope(&json!([1])).unwrap_err().path, "");
    // A valid envelope of a kind the model does not know opens fine.
    let e =
        json!({"kind": "debug.snap", "head": {"corrId": "c", "version": "2026-04-01"}, "data": {}});
    assert_eq!(open_envelope(&e).unwrap().kind, "debug.snap");
}
