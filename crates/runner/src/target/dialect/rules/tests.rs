//! One test per rule kind (it translates) and per refusal (the load names
//! the rule and why): the catalogue of what a rule may and may not do.

use serde_json::{json, Value};

use model::api::*;
use model::types::Value as PValue;

use crate::target::dialect::{Dialect, DialectSpec};

/// A dialect of the rules given as JSON, or the refusal.
fn dialect(rules: Value) -> Result<Dialect, String> {
    let spec: DialectSpec =
        serde_json::from_value(json!({ "rules": rules })).map_err(|e| e.to_string())?;
    Dialect::new(spec)
}

fn refused(rule: Value) -> String {
    dialect(json!([rule])).expect_err("refused")
}

fn create() -> PromiseCreateReq {
    PromiseCreateReq {
        id: "p".into(),
        timeout_at: 10,
        param: PValue::default(),
        tags: Default::default(),
    }
}

fn promise_create() -> Request {
    Request::PromiseCreate(create())
}

fn fence() -> Request {
    Request::TaskFence(TaskFenceReq {
        id: "t".into(),
        version: 1,
        action: TaskFenceAction::Create(create()),
    })
}

fn answer(status: u16, data: Value) -> Value {
    json!({"kind": "x", "head": {"corrId": "c", "status": status, "version": "v"}, "data": data})
}

#[test]
fn status_remaps_a_status_the_spec_never_answers() {
    let d = dialect(json!([
        {"rule": "status", "kinds": ["promise.create"], "from": 201, "to": 200}
    ]))
    .unwrap();
    let mut env = answer(201, json!({}));
    d.response(&promise_create(), &mut env);
    assert_eq!(env["head"]["status"], 200);
    let mut other = answer(201, json!({}));
    d.response(&fence(), &mut other);
    assert_eq!(other["head"]["status"], 201, "only its kinds");
}

#[test]
fn status_from_an_answered_status_is_refused() {
    let e = refused(json!({"rule": "status", "kinds": ["promise.get"], "from": 404, "to": 200}));
    assert!(
        e.contains("rule 1 (status 404 → 200)") && e.contains("answers 404"),
        "{e}"
    );
    let e = refused(json!({"rule": "status", "kinds": ["task.get"], "from": 400, "to": 404}));
    assert!(
        e.contains("answers 400"),
        "unknown kind is never spelling: {e}"
    );
    let e = refused(json!({"rule": "status", "kinds": ["promise.get"], "from": 503, "to": 200}));
    assert!(e.contains("server error"), "{e}");
    let e = refused(json!({"rule": "status", "kinds": ["promise.create"], "from": 201, "to": 404}));
    assert!(e.contains("never answers 404"), "{e}");
}

#[test]
fn null_is_empty_fills_only_nulls() {
    let d = dialect(json!([
        {"rule": "nullIsEmpty", "kinds": ["*"], "components": ["promises", "messages"], "fields": ["value"]}
    ]))
    .unwrap();
    let mut env = answer(
        200,
        json!({"promise": {"value": null, "param": null}, "preload": [{"value": null}, {"value": {"data": "x"}}]}),
    );
    d.response(&promise_create(), &mut env);
    assert_eq!(env["data"]["promise"]["value"], json!({}));
    assert_eq!(env["data"]["promise"]["param"], Value::Null, "not named");
    assert_eq!(env["data"]["preload"][0]["value"], json!({}));
    assert_eq!(env["data"]["preload"][1]["value"], json!({"data": "x"}));
    let mut snap = json!({
        "promises": [{"id": "p", "value": null}],
        "messages": [{"address": "a", "message": {"kind": "unblock", "data": {"promise": {"value": null}}}}],
    });
    d.snapshot(&mut snap);
    assert_eq!(snap["promises"][0]["value"], json!({}));
    assert_eq!(
        snap["messages"][0]["message"]["data"]["promise"]["value"],
        json!({})
    );
}

#[test]
fn null_is_empty_of_a_scalar_or_an_unknown_field_is_refused() {
    let e =
        refused(json!({"rule": "nullIsEmpty", "kinds": ["promise.get"], "fields": ["timeoutAt"]}));
    assert!(e.contains("not an object or a list"), "{e}");
    let e = refused(json!({"rule": "nullIsEmpty", "kinds": ["promise.get"], "fields": ["nope"]}));
    assert!(e.contains("no canonical shape"), "{e}");
}

#[test]
fn add_fills_an_absent_field_and_leaves_a_present_one() {
    let d = dialect(json!([
        {"rule": "add", "kinds": ["task.create"], "field": "task.resumes", "value": 0},
        {"rule": "add", "components": ["messages"], "field": "message.head", "value": {}}
    ]))
    .unwrap();
    let req = Request::TaskCreate(TaskCreateReq {
        pid: "w".into(),
        ttl: 1,
        action: create(),
    });
    let mut env = answer(200, json!({"task": {"id": "p"}}));
    d.response(&req, &mut env);
    assert_eq!(env["data"]["task"]["resumes"], 0);
    let mut env = answer(200, json!({"task": {"id": "p", "resumes": 2}}));
    d.response(&req, &mut env);
    assert_eq!(env["data"]["task"]["resumes"], 2, "never rewritten");
    let mut snap =
        json!({"messages": [{"message": {"kind": "execute"}}, {"message": {"head": {"x": "1"}}}]});
    d.snapshot(&mut snap);
    assert_eq!(snap["messages"][0]["message"]["head"], json!({}));
    assert_eq!(snap["messages"][1]["message"]["head"], json!({"x": "1"}));
}

#[test]
fn add_of_no_canonical_field_or_of_the_wrong_type_is_refused() {
    let e = refused(
        json!({"rule": "add", "kinds": ["task.create"], "field": "task.extra", "value": 0}),
    );
    assert!(e.contains("no canonical field"), "{e}");
    let e = refused(
        json!({"rule": "add", "kinds": ["task.create"], "field": "task.resumes", "value": "0"}),
    );
    assert!(e.contains("not of the type"), "{e}");
}

#[test]
fn drop_removes_a_field_the_spec_does_not_define() {
    let d = dialect(json!([
        {"rule": "drop", "kinds": ["task.create", "task.acquire"], "field": "task.promiseId"},
        {"rule": "drop", "kinds": ["task.suspend"], "field": "redirect"}
    ]))
    .unwrap();
    let req = Request::TaskSuspend(TaskSuspendReq {
        id: "t".into(),
        version: 1,
        actions: Vec::new(),
    });
    let mut env = answer(300, json!({"redirect": true, "preload": []}));
    d.response(&req, &mut env);
    assert_eq!(env["data"], json!({"preload": []}));
}

#[test]
fn drop_of_a_defined_field_is_refused() {
    let e = refused(json!({"rule": "drop", "kinds": ["task.create"], "field": "task.version"}));
    assert!(
        e.contains("rule 1 (drop task.version)") && e.contains("defines `task.version`"),
        "{e}"
    );
    let e = refused(json!({"rule": "drop", "kinds": ["promise.get"], "field": "promise"}));
    assert!(
        e.contains("defines `promise`"),
        "a record holding fields: {e}"
    );
    let e = refused(
        json!({"rule": "drop", "kinds": ["promise.get"], "field": "promise.tags.resonate:target"}),
    );
    assert!(e.contains("defines"), "user data: {e}");
    let e = refused(json!({"rule": "drop", "components": ["tasks"], "field": "resumes"}));
    assert!(e.contains("tasks entries"), "{e}");
}

/// resonate-pg's W1: a 200 `task.suspend` carries `{"preload": []}`,
/// which only the spec's 300 defines; scoped to the 200 the drop hides
/// nothing the spec defines, and leaves the 300's `preload` to compare.
#[test]
fn drop_at_a_status_removes_only_from_answers_with_it() {
    let d = dialect(json!([
        {"rule": "drop", "kinds": ["task.suspend"], "field": "preload", "status": 200}
    ]))
    .unwrap();
    let req = Request::TaskSuspend(TaskSuspendReq {
        id: "t".into(),
        version: 1,
        actions: Vec::new(),
    });
    let mut ok = answer(200, json!({"preload": []}));
    d.response(&req, &mut ok);
    assert_eq!(ok["data"], json!({}));
    let mut redirect = answer(300, json!({"preload": []}));
    d.response(&req, &mut redirect);
    assert_eq!(
        redirect["data"],
        json!({"preload": []}),
        "the 300's is the spec's"
    );
    let text = serde_json::to_string(d.spec()).unwrap();
    assert!(text.contains(r#""status":200"#), "round-trips: {text}");
}

#[test]
fn drop_at_a_status_is_refused_where_that_answer_defines_the_field() {
    let e = refused(
        json!({"rule": "drop", "kinds": ["task.suspend"], "field": "preload", "status": 300}),
    );
    assert!(
        e.contains("rule 1 (drop preload at 300)") && e.contains("defines `preload` in 300"),
        "{e}"
    );
    let e = refused(json!({"rule": "drop", "kinds": ["task.suspend"], "field": "preload"}));
    assert!(
        e.contains("defines `preload`"),
        "unscoped, the 300 defines it: {e}"
    );
    let e = refused(
        json!({"rule": "drop", "kinds": ["task.suspend"], "field": "preload", "status": 201}),
    );
    assert!(e.contains("never answers 201"), "{e}");
    let e = refused(json!({"rule": "drop", "components": ["tasks"], "field": "x", "status": 200}));
    assert!(e.contains("names answers, not snapshot entries"), "{e}");
}

#[test]
fn rename_moves_a_field_to_its_canonical_name() {
    let d = dialect(json!([
        {"rule": "rename", "kinds": ["promise.get"], "field": "promise.timeout", "to": "timeoutAt"}
    ]))
    .unwrap();
    let get = Request::PromiseGet(PromiseGetReq { id: "p".into() });
    let mut env = answer(200, json!({"promise": {"timeout": 5}}));
    d.response(&get, &mut env);
    assert_eq!(env["data"]["promise"], json!({"timeoutAt": 5}));
    let mut both = answer(200, json!({"promise": {"timeout": 5, "timeoutAt": 6}}));
    d.response(&get, &mut both);
    assert_eq!(
        both["data"]["promise"],
        json!({"timeout": 5, "timeoutAt": 6})
    );
}

#[test]
fn rename_of_a_defined_field_or_to_no_field_is_refused() {
    let e = refused(
        json!({"rule": "rename", "kinds": ["promise.get"], "field": "promise.createdAt", "to": "timeoutAt"}),
    );
    assert!(e.contains("renaming it would hide it"), "{e}");
    let e = refused(
        json!({"rule": "rename", "kinds": ["promise.get"], "field": "promise.x", "to": "y"}),
    );
    assert!(e.contains("`promise.y` is no canonical field"), "{e}");
}

#[test]
fn action_head_derives_the_inner_status_and_kind() {
    let d = dialect(json!([
        {"rule": "actionHead", "kinds": ["task.fence"], "field": "action", "record": "promise", "present": 200, "absent": 404}
    ]))
    .unwrap();
    let mut env = answer(
        200,
        json!({"action": {"data": {"promise": {"id": "p"}}}, "preload": []}),
    );
    d.response(&fence(), &mut env);
    assert_eq!(env["data"]["action"]["head"], json!({"status": 200}));
    assert_eq!(env["data"]["action"]["kind"], "promise.create");
    let mut none = answer(200, json!({"action": {"data": {"promise": null}}}));
    d.response(&fence(), &mut none);
    assert_eq!(none["data"]["action"]["head"]["status"], 404);
    let headed = json!({"action": {"kind": "promise.create", "head": {"status": 201}, "data": {"promise": {"id": "p"}}}});
    let mut kept = answer(200, headed.clone());
    d.response(&fence(), &mut kept);
    assert_eq!(kept["data"], headed, "a head the target wrote is its own");
}

#[test]
fn action_head_that_could_hide_the_record_is_refused() {
    let e = refused(
        json!({"rule": "actionHead", "kinds": ["task.fence"], "field": "action", "record": "promise", "present": 404, "absent": 404}),
    );
    assert!(e.contains("not a success"), "{e}");
    let e = refused(
        json!({"rule": "actionHead", "kinds": ["task.fence"], "field": "action", "record": "promise", "present": 200, "absent": 200}),
    );
    assert!(e.contains("not a failure"), "{e}");
    let e = refused(
        json!({"rule": "actionHead", "kinds": ["promise.get"], "field": "promise", "record": "promise", "present": 200, "absent": 404}),
    );
    assert!(e.contains("no nested answer"), "{e}");
}

#[test]
fn a_scope_must_name_known_kinds_and_components() {
    let e = refused(json!({"rule": "drop", "kinds": ["task.nope"], "field": "x"}));
    assert!(e.contains("`task.nope` is not a request kind"), "{e}");
    let e = refused(json!({"rule": "drop", "components": ["outbox"], "field": "x"}));
    assert!(e.contains("`outbox` is not a snapshot component"), "{e}");
    let e = refused(json!({"rule": "drop", "field": "x"}));
    assert!(e.contains("apply nowhere"), "{e}");
    let e =
        dialect(json!([{"rule": "drop", "kinds": ["*"], "field": "x", "extra": 1}])).unwrap_err();
    assert!(e.contains("unknown field"), "{e}");
    let e = dialect(json!([{"rule": "reshape", "kinds": ["*"]}])).unwrap_err();
    assert!(e.contains("unknown variant"), "{e}");
}

#[test]
fn the_second_rule_refused_is_named_by_its_position() {
    let e = dialect(json!([
        {"rule": "drop", "kinds": ["task.create"], "field": "task.promiseId"},
        {"rule": "drop", "kinds": ["task.create"], "field": "task.id"}
    ]))
    .unwrap_err();
    assert!(e.starts_with("dialect rule 2 (drop task.id)"), "{e}");
}
