//! The canonical shapes a dialect rule is checked against: every field a
//! response of each kind and an entry of each snapshot component can carry,
//! and the statuses the spec answers per kind.
//!
//! Derived, never listed: a response shape is what the model's own codec
//! writes for a maximal answer (one holding every record, every optional
//! field present) of each success status the kind has. The answer is made
//! by decoding one universal `data` object (a record under every key any
//! kind reads) with [`decode_response`], which alone knows which keys a kind
//! reads, and encoding it back with [`encode_response`], which alone knows
//! how it is written. A snapshot entry's shape is the serde form of a
//! maximal [`StateView`] entry. The statuses are the ones the model's branch
//! names carry ([`model::branch::ALL`], `…_404`), plus the wire's 400 (its
//! validation answers it to any kind).
//!
//! Maps with user keys (`tags`, `headers`) are written with the key `*`:
//! everything under such a key is the user's data, which the spec compares.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use model::types::{PromiseRecord, PromiseState, Schedule, TaskRecord, TaskState, Value as PValue};
use model::view::{
    message_json, CallbackView, IdTimeout, ListenerView, MessageView, ResumeView, StateView,
    TaskTimeoutView,
};
use model::wire::{decode_response, encode_response, PROTOCOL_VERSION};

/// The JSON type of a field, as far as a rule needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ty {
    /// An object (a record, or a map).
    Object,
    /// A list.
    Array,
    /// A string.
    String,
    /// A number.
    Number,
    /// `true` / `false`.
    Bool,
}

impl Ty {
    /// The type of a JSON value; `null` has none.
    pub fn of(v: &Value) -> Option<Ty> {
        Some(match v {
            Value::Object(_) => Ty::Object,
            Value::Array(_) => Ty::Array,
            Value::String(_) => Ty::String,
            Value::Number(_) => Ty::Number,
            Value::Bool(_) => Ty::Bool,
            Value::Null => return None,
        })
    }

    /// The empty value of a container type (`null` ≡ empty); none for a
    /// scalar, whose empty value would be a claim (`0`, `""`).
    pub fn empty(self) -> Option<Value> {
        match self {
            Ty::Object => Some(json!({})),
            Ty::Array => Some(json!([])),
            _ => None,
        }
    }
}

/// Every field of one shape, by dotted path (list elements share their
/// list's path, as divergence classes write them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    fields: BTreeMap<String, Ty>,
}

impl Shape {
    /// The fields of a JSON value.
    pub fn of(v: &Value) -> Shape {
        let mut s = Shape::default();
        s.walk(v, "");
        s
    }

    fn walk(&mut self, v: &Value, at: &str) {
        if !at.is_empty() {
            if let Some(t) = Ty::of(v) {
                self.fields.insert(at.to_string(), t);
            }
        }
        self.inside(v, at);
    }

    /// The fields inside `v`: an object's by name, a list's elements'
    /// under the list's own path.
    fn inside(&mut self, v: &Value, at: &str) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let sub = if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    };
                    self.walk(x, &sub);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| self.inside(x, at)),
            _ => {}
        }
    }

    /// Add another shape's fields.
    pub fn merge(&mut self, other: Shape) {
        self.fields.extend(other.fields);
    }

    /// Whether the shape has no field at all.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The type of the field at exactly `path` (`*` matching a user key).
    pub fn field(&self, path: &str) -> Option<Ty> {
        let want: Vec<&str> = path.split('.').collect();
        self.fields.iter().find_map(|(p, t)| {
            let have: Vec<&str> = p.split('.').collect();
            (have.len() == want.len() && matches(&have, &want)).then_some(*t)
        })
    }

    /// Whether removing the field at `path` would remove something the
    /// spec defines: the path is a field, holds one (an ancestor of a
    /// field), or lies under a user-keyed map.
    pub fn defines(&self, path: &str) -> bool {
        let want: Vec<&str> = path.split('.').collect();
        self.fields.keys().any(|p| {
            let have: Vec<&str> = p.split('.').collect();
            let n = have.len().min(want.len());
            matches(&have[..n], &want[..n])
                && (want.len() <= have.len() || have.last() == Some(&"*"))
        })
    }

    /// The types of every field whose last name is `name`.
    pub fn named(&self, name: &str) -> BTreeSet<Ty> {
        self.fields
            .iter()
            .filter(|(p, _)| p.rsplit('.').next() == Some(name))
            .map(|(_, t)| *t)
            .collect()
    }
}

/// Segment by segment, a shape's `*` matching any key.
fn matches(have: &[&str], want: &[&str]) -> bool {
    have.iter().zip(want).all(|(h, w)| h == w || *h == "*")
}

/// The statuses the spec answers to `kind`: those its branches carry, and
/// the wire's 400.
pub fn statuses(kind: &str) -> BTreeSet<u16> {
    let mut out = BTreeSet::from([400]);
    for b in model::branch::ALL {
        let mut parts = b.name().split('/');
        if parts.next() != Some(kind) {
            continue;
        }
        let status = parts
            .next()
            .and_then(|branch| branch.rsplit('_').next())
            .and_then(|s| s.parse::<u16>().ok());
        out.extend(status);
    }
    out
}

/// The canonical `data` fields of `kind`'s answers: the union over the
/// success statuses (below 400) the spec answers it with.
pub fn response(kind: &str) -> Shape {
    let mut shape = Shape::default();
    for status in statuses(kind).into_iter().filter(|s| *s < 400) {
        shape.merge(response_at(kind, status));
    }
    shape
}

/// The canonical `data` fields of `kind`'s answers with `status` (none
/// for a failure, whose `data` is a message): a 200 `task.suspend`
/// carries nothing, its 300 a `preload`.
pub fn response_at(kind: &str, status: u16) -> Shape {
    if status >= 400 {
        return Shape::default();
    }
    let env = json!({
        "kind": kind,
        "head": {"corrId": "*", "status": status, "version": PROTOCOL_VERSION},
        "data": universal_data(),
    });
    let res = decode_response(kind, &env)
        .unwrap_or_else(|e| panic!("the universal data decodes as every kind: {kind}: {e}"));
    Shape::of(&encode_response(kind, &res, "*")["data"])
}

/// The canonical fields of an entry of snapshot component `name`.
pub fn component(name: &str) -> Shape {
    let view = serde_json::to_value(exemplar_view()).expect("a view serializes");
    let mut shape = Shape::default();
    for e in view[name].as_array().into_iter().flatten() {
        shape.merge(Shape::of(e));
    }
    shape
}

fn user_map() -> model::types::Tags {
    [("*".to_string(), "*".to_string())].into()
}

fn promise() -> PromiseRecord {
    let value = PValue {
        headers: user_map(),
        data: Some("*".into()),
    };
    PromiseRecord {
        id: "*".into(),
        state: PromiseState::Resolved,
        param: value.clone(),
        value,
        tags: user_map(),
        timeout_at: 1,
        created_at: 1,
        settled_at: Some(1),
    }
}

fn task() -> TaskRecord {
    TaskRecord {
        id: "*".into(),
        state: TaskState::Acquired,
        version: 1,
        resumes: 1,
        ttl: Some(1),
        pid: Some("*".into()),
    }
}

fn schedule() -> Schedule {
    Schedule {
        id: "*".into(),
        cron: "*".into(),
        promise_id: "*".into(),
        promise_timeout: 1,
        promise_param: promise().param,
        promise_tags: user_map(),
        next_run_at: 1,
        last_run_at: Some(1),
        created_at: 1,
    }
}

/// A record under every key any kind's answer reads: decoding picks what
/// the kind has.
fn universal_data() -> Value {
    let action = json!({
        "kind": "promise.create",
        "head": {"corrId": "*", "status": 200, "version": PROTOCOL_VERSION},
        "data": {"promise": promise()},
    });
    json!({
        "promise": promise(),
        "task": task(),
        "schedule": schedule(),
        "preload": [promise()],
        "action": action,
    })
}

/// One maximal entry per component (every field written). A struct
/// literal, so a new component does not compile until it has one.
fn exemplar_view() -> StateView {
    use model::state::{Message, OutboxEntry};
    let message = |m| MessageView {
        address: "*".into(),
        message: message_json(&OutboxEntry {
            address: "*".into(),
            message: m,
        }),
    };
    StateView {
        promises: vec![promise()],
        promise_timeouts: vec![IdTimeout {
            id: "*".into(),
            timeout: 1,
        }],
        callbacks: vec![CallbackView {
            awaiter: "*".into(),
            awaited: "*".into(),
        }],
        listeners: vec![ListenerView {
            id: "*".into(),
            address: "*".into(),
        }],
        tasks: vec![task()],
        task_timeouts: vec![TaskTimeoutView {
            id: "*".into(),
            kind: 1,
            timeout: 1,
        }],
        messages: vec![
            message(Message::Execute {
                task_id: "*".into(),
                version: 1,
            }),
            message(Message::Unblock { promise: promise() }),
        ],
        schedules: vec![schedule()],
        schedule_timeouts: vec![IdTimeout {
            id: "*".into(),
            timeout: 1,
        }],
        resumes: vec![ResumeView {
            id: "*".into(),
            awaited: "*".into(),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_codec_shape() {
        for kind in model::api::KINDS {
            // Decoding the universal data is what `response` relies on.
            let _ = response(kind);
        }
        let claim = response("task.create");
        assert_eq!(claim.field("task.resumes"), Some(Ty::Number));
        assert_eq!(claim.field("preload.value"), Some(Ty::Object));
        assert_eq!(claim.field("task.promiseId"), None);
        let fence = response("task.fence");
        assert_eq!(fence.field("action.head.status"), Some(Ty::Number));
        assert_eq!(
            fence.field("action.data.promise.tags.anything"),
            Some(Ty::String)
        );
        let suspend = response("task.suspend");
        assert_eq!(suspend.field("preload"), Some(Ty::Array), "the 300 body");
        assert!(response_at("task.suspend", 300).defines("preload"));
        assert!(!response_at("task.suspend", 200).defines("preload"));
        assert!(
            response_at("task.suspend", 200).is_empty(),
            "a 200 carries nothing"
        );
        assert!(
            response_at("promise.get", 404).is_empty(),
            "a failure's data is a message"
        );
        assert!(response("task.heartbeat").is_empty());
    }

    #[test]
    fn every_component_has_an_entry_shape() {
        for c in model::view::COMPONENTS {
            assert!(!component(c.name).is_empty(), "{}", c.name);
            for k in c.key {
                assert!(component(c.name).field(k).is_some(), "{}.{k}", c.name);
            }
        }
        let m = component("messages");
        assert_eq!(m.field("message.head"), Some(Ty::Object));
        assert_eq!(m.field("message.data.promise.value"), Some(Ty::Object));
        assert_eq!(m.field("message.data.task.version"), Some(Ty::Number));
    }

    #[test]
    fn a_path_defines_what_it_holds_and_what_a_user_map_holds() {
        let s = response("promise.get");
        assert!(s.defines("promise"), "an ancestor of fields");
        assert!(s.defines("promise.id"));
        assert!(s.defines("promise.tags.resonate:target"), "user data");
        assert!(!s.defines("promise.promiseId"));
        assert!(!s.defines("redirect"));
        assert!(!s.defines("promise.value.extra"));
    }

    #[test]
    fn statuses_come_from_the_branch_names() {
        assert_eq!(statuses("promise.create"), BTreeSet::from([200, 400]));
        assert_eq!(
            statuses("task.suspend"),
            BTreeSet::from([200, 300, 400, 404, 409, 422])
        );
        assert_eq!(statuses("promise.search"), BTreeSet::from([400, 501]));
    }
}
