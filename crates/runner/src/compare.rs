//! Wire normalisation and comparison of responses and states.
//!
//! Responses compare on the status, and for statuses below 400 on `data`
//! after normalisation: `null` and absent are the same, empty `headers`
//! and absent are the same, the fenced action's `head` keeps only its
//! status, and error messages (free text) are never compared. States
//! compare component by component as keyed sets: order never matters, and a
//! component the target's snapshot lacks is skipped.

pub mod typed;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use model::view::{Component, COMPONENTS};

/// The comparable form of a response envelope: `{status, data?}`.
pub fn normalize_response(env: &Value) -> Value {
    let status = env.pointer("/head/status").cloned().unwrap_or(Value::Null);
    let mut out = Map::new();
    out.insert("status".into(), status.clone());
    if status.as_u64().is_some_and(|s| s < 400) {
        let mut data = canon(env.get("data").unwrap_or(&Value::Null));
        if let Some(action) = data.get_mut("action") {
            *action = normalize_response(action);
        }
        out.insert("data".into(), data);
    }
    Value::Object(out)
}

/// Whether two response envelopes are equal once normalised:
/// `normalize_response(a) == normalize_response(b)`, decided without
/// building either (the checker asks it of every step, and nearly every
/// step agrees; the normal forms are built only for a difference, and
/// compared then, so a `false` here can never make a divergence).
pub fn same_response(a: &Value, b: &Value) -> bool {
    static NULL: Value = Value::Null;
    fn status(env: &Value) -> &Value {
        env.get("head")
            .and_then(|h| h.get("status"))
            .unwrap_or(&NULL)
    }
    let (sa, sb) = (status(a), status(b));
    if sa != sb {
        return false;
    }
    if sa.as_u64().is_none_or(|s| s >= 400) {
        return true;
    }
    let (da, db) = (
        a.get("data").unwrap_or(&NULL),
        b.get("data").unwrap_or(&NULL),
    );
    match (da, db) {
        // `normalize_response` puts the canonical `action` back normalised.
        (Value::Object(x), Value::Object(y)) => {
            fn action(m: &Map<String, Value>) -> Option<&Value> {
                m.get("action").filter(|v| !v.is_null())
            }
            match (action(x), action(y)) {
                (None, None) => {}
                (Some(p), Some(q)) if same_response(p, q) => {}
                _ => return false,
            }
            same_object(x, y, |k| k == "action")
        }
        _ => same_canon(da, db),
    }
}

/// `canon(a) == canon(b)`, without building either.
pub fn same_canon(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => same_object(x, y, |_| false),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_canon(p, q))
        }
        (Value::Object(_) | Value::Array(_), _) | (_, Value::Object(_) | Value::Array(_)) => false,
        _ => a == b,
    }
}

/// Two objects equal once canonical, keys for which `apart` holds aside
/// (compared by the caller): the same keys that are not blank, each with
/// values equal once canonical. Order never matters, as for `Map`'s `==`.
fn same_object(
    x: &Map<String, Value>,
    y: &Map<String, Value>,
    apart: impl Fn(&str) -> bool,
) -> bool {
    let kept = |m: &Map<String, Value>| {
        m.iter()
            .filter(|(k, v)| !is_blank(k, v) && !apart(k))
            .count()
    };
    kept(x) == kept(y)
        && x.iter()
            .filter(|(k, v)| !is_blank(k, v) && !apart(k))
            .all(|(k, v)| {
                y.get(k)
                    .is_some_and(|w| !is_blank(k, w) && same_canon(v, w))
            })
}

/// Drop `null`s and empty `headers` objects, recursively.
pub fn canon(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, v)| !is_blank(k, v))
                .map(|(k, v)| (k.clone(), canon(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(canon).collect()),
        other => other.clone(),
    }
}

/// `null`, or an empty `headers` object: both mean "absent" on the wire.
fn is_blank(key: &str, v: &Value) -> bool {
    v.is_null() || (key == "headers" && v.as_object().is_some_and(Map::is_empty))
}

/// The dotted paths (array indices dropped) of the leaves where two values
/// differ; the response part of a divergence's class.
pub fn differing_paths(a: &Value, b: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk(a, b, String::new(), &mut out);
    out
}

fn walk(a: &Value, b: &Value, at: String, out: &mut BTreeSet<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let sub = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                walk(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    sub,
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, j) in x.iter().zip(y) {
                walk(i, j, at.clone(), out);
            }
        }
        _ if a == b => {}
        _ => {
            out.insert(if at.is_empty() {
                "(root)".to_string()
            } else {
                at
            });
        }
    }
}

/// One difference in one snapshot component, under one key.
#[derive(Clone, Debug, PartialEq)]
pub struct StateDiff {
    /// Component name (`promises`, `taskTimeouts`, …).
    pub component: String,
    /// The entry's key within the component, for display (`a/b`,
    /// `execute:a`, `a:notify:addr`).
    pub key: String,
    /// The promise, task or schedule ids the key names: where the latitude
    /// search looks first.
    pub ids: Vec<String>,
    /// The model's entries under that key.
    pub model: Vec<Value>,
    /// The target's entries under that key.
    pub target: Vec<Value>,
}

/// What kind of difference a [`StateDiff`] is, ids aside.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StateChange {
    /// The model has the entry, the target does not.
    Missing,
    /// The target has an entry the model does not.
    Extra,
    /// One entry each, differing in these dotted fields.
    Fields(Vec<String>),
    /// Several entries under the key, in different numbers or values.
    Count,
}

impl StateDiff {
    /// Its kind of difference, independent of ids.
    pub fn change(&self) -> StateChange {
        match (self.model.len(), self.target.len()) {
            (_, 0) => StateChange::Missing,
            (0, _) => StateChange::Extra,
            (1, 1) => StateChange::Fields(
                differing_paths(&self.model[0], &self.target[0])
                    .into_iter()
                    .collect(),
            ),
            _ => StateChange::Count,
        }
    }
}

/// The names of the snapshot components, in comparison order: the view's
/// ([`model::view::COMPONENTS`], the one list).
pub const COMPONENT_NAMES: [&str; COMPONENTS.len()] = {
    let mut names = [""; COMPONENTS.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = COMPONENTS[i].name;
        i += 1;
    }
    names
};

/// The spec's outbox key of a snapshot message: the task id for `execute`,
/// `{promiseId}:notify:{address}` for `unblock`.
fn message_key(m: &Value) -> String {
    let msg = &m["message"];
    match msg["kind"].as_str() {
        Some("execute") => format!("execute:{}", text(&msg["data"]["task"]["id"])),
        Some("unblock") => format!(
            "{}:notify:{}",
            text(&msg["data"]["promise"]["id"]),
            text(&m["address"])
        ),
        _ => msg.to_string(),
    }
}

fn text(v: &Value) -> String {
    v.as_str()
        .map(str::to_string)
        .unwrap_or_else(|| v.to_string())
}

/// The ids an entry is keyed by: its key fields, or a message's task or
/// promise id.
fn entry_ids(component: &str, fields: &[&str], e: &Value) -> Vec<String> {
    if component == "messages" {
        let msg = &e["message"];
        let id = match msg["kind"].as_str() {
            Some("execute") => &msg["data"]["task"]["id"],
            _ => &msg["data"]["promise"]["id"],
        };
        return vec![text(id)];
    }
    fields
        .iter()
        .filter(|f| **f != "address" && **f != "type")
        .map(|f| text(&e[*f]))
        .collect()
}

type Keyed = BTreeMap<String, (Vec<String>, Vec<Value>)>;

fn keyed(component: &str, fields: &[&str], entries: &[Value]) -> Keyed {
    let mut map: Keyed = BTreeMap::new();
    for e in entries {
        let key = if component == "messages" {
            message_key(e)
        } else {
            fields
                .iter()
                .map(|f| text(&e[*f]))
                .collect::<Vec<_>>()
                .join("/")
        };
        let ids = entry_ids(component, fields, e);
        let e = canon(e);
        let slot = map.entry(key).or_insert_with(|| (ids, Vec::new()));
        slot.1.push(e);
    }
    for (_, v) in map.values_mut() {
        v.sort_by_key(|e| e.to_string());
    }
    map
}

/// Compare the model's view (as JSON) with a target snapshot. Components
/// named in `skip` (a profile's) are not compared; components the target
/// lacks are added to `skipped` and not compared.
pub fn diff_state(
    model: &Value,
    target: &Value,
    skip: &[String],
    skipped: &mut BTreeSet<String>,
) -> Vec<StateDiff> {
    let mut diffs = Vec::new();
    for Component {
        name: component,
        key: fields,
    } in COMPONENTS
    {
        if skip.iter().any(|c| c == component) {
            continue;
        }
        let Some(theirs) = target.get(*component).and_then(Value::as_array) else {
            skipped.insert(component.to_string());
            continue;
        };
        let ours = model
            .get(*component)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let a = keyed(component, fields, ours);
        let b = keyed(component, fields, theirs);
        let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        for key in keys {
            let (ids, x) = a.get(key).cloned().unwrap_or_default();
            let (their_ids, y) = b.get(key).cloned().unwrap_or_default();
            if x != y {
                diffs.push(StateDiff {
                    component: component.to_string(),
                    key: key.clone(),
                    ids: if ids.is_empty() { their_ids } else { ids },
                    model: x,
                    target: y,
                });
            }
        }
    }
    diffs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn null_absent_and_empty_headers_are_the_same() {
        let a = json!({"head": {"status": 200}, "data": {"promise": {"id": "a", "settledAt": null, "param": {"headers": {}}}}});
        let b = json!({"head": {"status": 200}, "data": {"promise": {"id": "a", "param": {}}}});
        assert_eq!(normalize_response(&a), normalize_response(&b));
    }

    #[test]
    fn error_messages_and_fenced_corr_ids_are_not_compared() {
        let e1 = json!({"head": {"status": 409}, "data": "conflict"});
        let e2 = json!({"head": {"status": 409}, "data": "Version mismatch"});
        assert_eq!(normalize_response(&e1), normalize_response(&e2));
        let f = |corr: &str, msg: &str| json!({"head": {"status": 200}, "data": {"action": {"kind": "promise.settle", "head": {"corrId": corr, "status": 404}, "data": msg}, "preload": []}});
        assert_eq!(
            normalize_response(&f("x", "not found")),
            normalize_response(&f("y", "Promise not found"))
        );
    }

    /// `same_response` decides exactly what comparing the normal forms
    /// does, on answers that differ in every way normalisation cares about.
    #[test]
    fn same_response_agrees_with_the_normal_forms() {
        let answers = [
            json!({"head": {"status": 200}, "data": {"promise": {"id": "a", "settledAt": null, "param": {"headers": {}}}}}),
            json!({"head": {"status": 200}, "data": {"promise": {"id": "a", "param": {}}}}),
            json!({"head": {"status": 200}, "data": {"promise": {"param": {}, "id": "a"}}}),
            json!({"head": {"status": 200}, "data": {"promise": {"id": "a", "param": {"headers": {"h": "1"}}}}}),
            json!({"head": {"status": 200}, "data": {"promise": {"id": "b", "param": {}}}}),
            json!({"head": {"status": 200}, "data": {"promise": {"id": "a", "param": {}, "extra": 1}}}),
            json!({"head": {"status": 200}, "data": {"promise": {"id": "a", "param": {}}, "headers": {}}}),
            json!({"head": {"status": 200}, "data": {"tasks": [1, 2]}}),
            json!({"head": {"status": 200}, "data": {"tasks": [2, 1]}}),
            json!({"head": {"status": 200}, "data": {"tasks": [1, null]}}),
            json!({"head": {"status": 200}, "data": null}),
            json!({"head": {"status": 200}}),
            json!({"head": {"status": 200}, "data": {}}),
            json!({"head": {"status": 200}, "data": "text"}),
            json!({"head": {"status": 409}, "data": "conflict"}),
            json!({"head": {"status": 409}, "data": "other"}),
            json!({"head": {"status": 409.0}, "data": "conflict"}),
            json!({"head": {}, "data": {}}),
            json!({"data": {"a": 1}}),
            json!({"head": {"status": 200}, "data": {"action": {"kind": "promise.settle", "head": {"corrId": "x", "status": 404}, "data": "no"}, "preload": []}}),
            json!({"head": {"status": 200}, "data": {"action": {"kind": "promise.settle", "head": {"corrId": "y", "status": 404}, "data": "other"}, "preload": []}}),
            json!({"head": {"status": 200}, "data": {"action": {"head": {"status": 200}, "data": {"id": "a", "v": null}}, "preload": []}}),
            json!({"head": {"status": 200}, "data": {"action": {"head": {"status": 200}, "data": {"id": "a"}}, "preload": []}}),
            json!({"head": {"status": 200}, "data": {"action": {"head": {"status": 200}, "data": {"id": "b"}}, "preload": []}}),
            json!({"head": {"status": 200}, "data": {"action": null, "preload": []}}),
            json!({"head": {"status": 200}, "data": {"preload": []}}),
            json!({"head": {"status": 200}, "data": {"action": "x", "preload": []}}),
            json!({"head": {"status": 200}, "data": {"action": 5, "preload": []}}),
        ];
        for a in &answers {
            for b in &answers {
                assert_eq!(
                    same_response(a, b),
                    normalize_response(a) == normalize_response(b),
                    "{a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn states_compare_as_keyed_sets_and_skip_what_the_target_lacks() {
        let model = json!({"promises": [{"id": "a"}, {"id": "b"}], "resumes": [{"id": "t", "awaited": "a"}]});
        let target = json!({"promises": [{"id": "b"}, {"id": "a", "state": null}]});
        let mut skipped = BTreeSet::new();
        assert!(diff_state(&model, &target, &[], &mut skipped).is_empty());
        assert!(skipped.contains("resumes"));
        let target = json!({"promises": [{"id": "a"}, {"id": "c"}]});
        let d = diff_state(&model, &target, &[], &mut skipped);
        let keys: Vec<_> = d.iter().map(|d| (d.key.as_str(), d.change())).collect();
        assert_eq!(
            keys,
            [("b", StateChange::Missing), ("c", StateChange::Extra)]
        );
        assert_eq!(d[0].ids, ["b"]);
    }
}
