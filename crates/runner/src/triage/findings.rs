//! What differs, fact by fact: a divergence broken into findings that
//! name their own remedy. A status the spec gives another 2xx spelling, a
//! field the target never writes or always adds, `null` where the spec
//! writes an empty value: spelling (a dialect rule). A kind the spec
//! answers and the target refuses, or one the spec leaves unspecified
//! (501): a profile's `omitKinds`. A pending retry armed at another
//! distance: the profile's retry timeout. Everything else is behaviour,
//! which only a deviation in a baseline may absorb.
//!
//! Spelling is proposed only for what the spec does not define at that
//! place ([`defined`]): a rule can drop a field the spec has no name for,
//! never one it compares.

use std::fmt;

use serde_json::Value;

use crate::check::{Difference, Divergence};
use crate::compare::StateDiff;

/// Where a field sits: a kind's response `data`, or a snapshot component.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Place {
    /// The response of this kind.
    Response(String),
    /// Entries of this snapshot component.
    State(String),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Response(k) => write!(f, "{k} response"),
            Place::State(c) => write!(f, "snapshot {c}"),
        }
    }
}

/// One fact of a divergence, with what would absorb it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Finding {
    /// Both statuses are successes of the same class: spelling.
    StatusRemap {
        /// Request kind.
        kind: String,
        /// The spec's status.
        model: u64,
        /// The target's.
        target: u64,
    },
    /// The target refuses (400) a kind the spec answers otherwise, or
    /// answers a kind the spec leaves unspecified (501).
    Refused {
        /// Request kind.
        kind: String,
        /// The spec's status.
        model: u64,
        /// The target's.
        target: u64,
    },
    /// The target lacks a field the spec writes here.
    FieldMissing {
        /// Where.
        at: Place,
        /// Dotted path.
        path: String,
        /// The spec's value (JSON).
        model: String,
    },
    /// The target adds a field the spec has no name for here.
    FieldExtra {
        /// Where.
        at: Place,
        /// Dotted path.
        path: String,
        /// The answer's status, when the spec defines the field in other
        /// answers of the kind but not in this one (a 200 `task.suspend`'s
        /// `preload`, which only its 300 carries).
        status: Option<u64>,
    },
    /// The target writes `null` (or nothing) where the spec writes an
    /// empty object, list or string.
    NullForEmpty {
        /// Where.
        at: Place,
        /// Dotted path.
        path: String,
        /// The empty value the spec writes (JSON).
        empty: String,
    },
    /// A pending task's retry is armed this far from the spec's: the
    /// target's retry timeout is the profile's plus this (ms).
    RetryOffset {
        /// Target minus model, ms.
        delta: i64,
    },
    /// Behaviour: a fact of the class no spelling or setting absorbs.
    Behaviour {
        /// Request kind.
        kind: String,
        /// The fact (as [`crate::check::DiffClass::facts`] names it).
        fact: String,
    },
}

impl Finding {
    /// Whether a dialect rule would absorb it.
    pub fn is_spelling(&self) -> bool {
        matches!(
            self,
            Finding::StatusRemap { .. }
                | Finding::FieldMissing { .. }
                | Finding::FieldExtra { .. }
                | Finding::NullForEmpty { .. }
        )
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::StatusRemap {
                kind,
                model,
                target,
            } => write!(
                f,
                "status remap: {kind} answers {target} where the spec answers {model}"
            ),
            Finding::Refused {
                kind,
                model,
                target,
            } => write!(
                f,
                "kind refused: {kind} answers {target} where the spec answers {model}"
            ),
            Finding::FieldMissing { at, path, model } => {
                write!(f, "field removed: {at} lacks `{path}` (spec: {model})")
            }
            Finding::FieldExtra {
                at,
                path,
                status: None,
            } => write!(f, "field added: {at} has `{path}`"),
            Finding::FieldExtra {
                at,
                path,
                status: Some(s),
            } => write!(f, "field added: {at} has `{path}` in its {s}"),
            Finding::NullForEmpty { at, path, empty } => {
                write!(
                    f,
                    "field respelled: {at} `{path}` is null where the spec writes {empty}"
                )
            }
            Finding::RetryOffset { delta } => {
                write!(
                    f,
                    "setting: pending retries armed {delta:+} ms from the spec's"
                )
            }
            Finding::Behaviour { kind, fact } => write!(f, "behaviour: {kind} [{fact}]"),
        }
    }
}

/// The findings of one divergence of a step of `kind`.
pub fn findings(kind: &str, d: &Divergence) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some((m, t)) = &d.response {
        let (ms, ts) = (m["status"].as_u64(), t["status"].as_u64());
        match (ms, ts) {
            (Some(ms), Some(ts)) if ms != ts => out.push(status(kind, ms, ts)),
            (Some(_), Some(st)) => {
                let at = Place::Response(kind.to_string());
                fields(&at, &m["data"], &t["data"], kind, Some(st), &mut out);
            }
            _ => out.push(behaviour(kind, "status")),
        }
    }
    for s in &d.state {
        state(kind, s, &mut out);
    }
    for w in &d.class.what {
        if matches!(
            w,
            Difference::Envelope { .. } | Difference::RefusedButChanged
        ) {
            out.push(behaviour(kind, &w.to_string()));
        }
    }
    out.sort();
    out.dedup();
    out
}

fn behaviour(kind: &str, fact: &str) -> Finding {
    Finding::Behaviour {
        kind: kind.to_string(),
        fact: fact.to_string(),
    }
}

fn status(kind: &str, model: u64, target: u64) -> Finding {
    let kind = kind.to_string();
    if model == 501 || (target == 400 && model != 400) {
        Finding::Refused {
            kind,
            model,
            target,
        }
    } else if (200..300).contains(&model) && (200..300).contains(&target) {
        Finding::StatusRemap {
            kind,
            model,
            target,
        }
    } else {
        let fact = format!("status:{model}->{target}");
        Finding::Behaviour { kind, fact }
    }
}

/// A snapshot difference: fields of one entry, or entries missing, extra
/// or multiplied (behaviour), and the retry timeout.
fn state(kind: &str, s: &StateDiff, out: &mut Vec<Finding>) {
    let at = Place::State(s.component.clone());
    match (s.model.as_slice(), s.target.as_slice()) {
        ([m], [t]) => {
            if s.component == "taskTimeouts" && m["type"] == 0 && t["type"] == 0 {
                if let (Some(a), Some(b)) = (m["timeout"].as_i64(), t["timeout"].as_i64()) {
                    if a != b {
                        out.push(Finding::RetryOffset { delta: b - a });
                        let (mut m, mut t) = (m.clone(), t.clone());
                        m["timeout"] = Value::Null;
                        t["timeout"] = Value::Null;
                        fields(&at, &m, &t, kind, None, out);
                        return;
                    }
                }
            }
            fields(&at, m, t, kind, None, out);
        }
        _ => out.push(behaviour(
            kind,
            &Difference::State {
                component: s.component.clone(),
                change: s.change(),
            }
            .to_string(),
        )),
    }
}

/// Compare two values leaf by leaf (as [`crate::compare::differing_paths`]
/// walks them) and sort each differing leaf; `status` is an answer's (both
/// sides the same), `None` for a snapshot entry.
fn fields(
    at: &Place,
    m: &Value,
    t: &Value,
    kind: &str,
    status: Option<u64>,
    out: &mut Vec<Finding>,
) {
    let mut leaves = Vec::new();
    walk(m, t, String::new(), &mut leaves);
    for (path, m, t) in leaves {
        let f = match (m.is_null(), t.is_null()) {
            (false, true) if is_empty(&m) => Finding::NullForEmpty {
                at: at.clone(),
                path,
                empty: m.to_string(),
            },
            (false, true) => Finding::FieldMissing {
                at: at.clone(),
                path,
                model: m.to_string(),
            },
            (true, false) if !defined(at, &path) => Finding::FieldExtra {
                at: at.clone(),
                path,
                status: None,
            },
            (true, false) if status.is_some_and(|s| !defined_at(kind, s, &path)) => {
                Finding::FieldExtra {
                    at: at.clone(),
                    path,
                    status,
                }
            }
            _ => behaviour(kind, &fact(at, &path)),
        };
        out.push(f);
    }
}

/// How [`crate::check::DiffClass::facts`] names a path at a place.
fn fact(at: &Place, path: &str) -> String {
    match at {
        Place::Response(_) => format!("data:{path}"),
        Place::State(c) => format!("state:{c}.{path}"),
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

fn walk(a: &Value, b: &Value, at: String, out: &mut Vec<(String, Value, Value)>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let sub = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                let null = Value::Null;
                walk(
                    x.get(k).unwrap_or(&null),
                    y.get(k).unwrap_or(&null),
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
        _ => out.push((
            if at.is_empty() { "(root)".into() } else { at },
            a.clone(),
            b.clone(),
        )),
    }
}

const PROMISE: &[&str] = &[
    "id",
    "state",
    "param",
    "value",
    "tags",
    "timeoutAt",
    "createdAt",
    "settledAt",
];
const TASK: &[&str] = &["id", "state", "version", "resumes", "ttl", "pid"];
const SCHEDULE: &[&str] = &[
    "id",
    "cron",
    "promiseId",
    "promiseTimeout",
    "promiseParam",
    "promiseTags",
    "nextRunAt",
    "lastRunAt",
    "createdAt",
];
/// Fields under which anything is the user's (a value, tags).
const OPEN: &[&str] = &["param", "value", "tags", "promiseParam", "promiseTags"];

/// Whether the spec defines `path` in `kind`'s answers with `status` (the
/// canonical shape the model's codec writes for that status,
/// [`crate::target::dialect::shape::response_at`]).
fn defined_at(kind: &str, status: u64, path: &str) -> bool {
    let Ok(status) = u16::try_from(status) else {
        return false;
    };
    !model::api::KINDS.contains(&kind)
        || crate::target::dialect::shape::response_at(kind, status).defines(path)
}

/// Whether the spec names the field at `path` in this place (types.lean's
/// records, the response shapes of `model::wire::response`, the snapshot
/// components of the README): a rule may never drop such a field.
pub fn defined(at: &Place, path: &str) -> bool {
    let segs: Vec<&str> = path.split('.').collect();
    let record = |name: &str| -> Option<&'static [&'static str]> {
        match name {
            "promise" | "promises" | "preload" => Some(PROMISE),
            "task" | "tasks" => Some(TASK),
            "schedule" | "schedules" => Some(SCHEDULE),
            _ => None,
        }
    };
    let in_record = |fields: &[&str], rest: &[&str]| match rest.first() {
        None => true,
        Some(f) => fields.contains(f) && (rest.len() == 1 || OPEN.contains(f)),
    };
    match at {
        Place::Response(_) => match segs.as_slice() {
            ["action", rest @ ..] => match rest {
                [] | ["kind"] | ["head"] | ["head", "status"] | ["data"] => true,
                ["data", "promise", r @ ..] => in_record(PROMISE, r),
                _ => false,
            },
            [top, rest @ ..] => record(top).is_some_and(|f| in_record(f, rest)),
            [] => false,
        },
        Place::State(c) => {
            let fields: &[&str] = match c.as_str() {
                "promises" => PROMISE,
                "tasks" => TASK,
                "schedules" => SCHEDULE,
                "promiseTimeouts" | "scheduleTimeouts" => &["id", "timeout"],
                "callbacks" => &["awaiter", "awaited"],
                "listeners" => &["id", "address"],
                "taskTimeouts" => &["id", "type", "timeout"],
                "resumes" => &["id", "awaited"],
                "messages" => {
                    return matches!(
                        segs.as_slice(),
                        ["address"] | ["message"] | ["message", "kind" | "head" | "data", ..]
                    )
                }
                _ => return false,
            };
            in_record(fields, &segs)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{DiffClass, Judge};
    use serde_json::json;

    fn div(m: Value, t: Value, state: Vec<StateDiff>) -> Divergence {
        let response = Some((m, t));
        Divergence {
            class: DiffClass::of("task.create", response.as_ref(), &state),
            response,
            state,
            envelope: Vec::new(),
            judge: Judge::Model,
            branches: Vec::new(),
        }
    }

    /// A field the spec defines in another answer of the kind (the 300
    /// suspend's `preload`) is spelling in an answer whose status defines
    /// none, scoped to that status; in an answer that defines it, it is
    /// behaviour.
    #[test]
    fn a_field_only_another_status_defines_is_spelling_at_this_one() {
        let d = div(
            json!({"status": 200, "data": {}}),
            json!({"status": 200, "data": {"preload": []}}),
            Vec::new(),
        );
        let f = findings("task.suspend", &d);
        assert_eq!(
            f,
            vec![Finding::FieldExtra {
                at: Place::Response("task.suspend".into()),
                path: "preload".into(),
                status: Some(200),
            }]
        );
        let d = div(
            json!({"status": 300, "data": {"preload": [{"id": "a"}]}}),
            json!({"status": 300, "data": {"preload": [{"id": "a"}], "extra": 1}}),
            Vec::new(),
        );
        assert!(findings("task.suspend", &d).contains(&Finding::FieldExtra {
            at: Place::Response("task.suspend".into()),
            path: "extra".into(),
            status: None,
        }));
    }

    #[test]
    fn spelling_is_told_from_behaviour() {
        let d = div(
            json!({"status": 200, "data": {"task": {"id": "a", "version": 1, "resumes": 0}, "promise": {"value": {}}}}),
            json!({"status": 200, "data": {"task": {"id": "a", "version": 0, "promiseId": "a"}, "promise": {}}}),
            vec![StateDiff {
                component: "taskTimeouts".into(),
                key: "a".into(),
                ids: vec!["a".into()],
                model: vec![json!({"id": "a", "type": 0, "timeout": 6000})],
                target: vec![json!({"id": "a", "type": 0, "timeout": 31000})],
            }],
        );
        let f = findings("task.create", &d);
        let resp = Place::Response("task.create".into());
        assert!(f.contains(&Finding::FieldExtra {
            at: resp.clone(),
            path: "task.promiseId".into(),
            status: None,
        }));
        assert!(f.contains(&Finding::FieldMissing {
            at: resp.clone(),
            path: "task.resumes".into(),
            model: "0".into()
        }));
        assert!(f.contains(&Finding::NullForEmpty {
            at: resp,
            path: "promise.value".into(),
            empty: "{}".into()
        }));
        assert!(f.contains(&Finding::RetryOffset { delta: 25000 }));
        assert!(f.contains(&Finding::Behaviour {
            kind: "task.create".into(),
            fact: "data:task.version".into()
        }));
        assert_eq!(f.len(), 5, "{f:?}");
    }

    #[test]
    fn a_field_the_spec_defines_is_never_spelling() {
        // A settledAt the spec does not write is behaviour (a settlement).
        let state = vec![StateDiff {
            component: "promises".into(),
            key: "a".into(),
            ids: vec!["a".into()],
            model: vec![json!({"id": "a", "state": "pending"})],
            target: vec![json!({"id": "a", "state": "rejected_timedout", "settledAt": 5})],
        }];
        let d = div(
            json!({"status": 200, "data": {}}),
            json!({"status": 200, "data": {}}),
            state,
        );
        let f = findings("promise.get", &d);
        assert!(f.iter().all(|f| !f.is_spelling()), "{f:?}");
        assert!(!defined(
            &Place::Response("task.suspend".into()),
            "redirect"
        ));
        assert!(defined(&Place::State("messages".into()), "message.head"));
        assert!(!defined(
            &Place::Response("task.create".into()),
            "task.promiseId"
        ));
        assert!(defined(
            &Place::Response("promise.get".into()),
            "promise.value.data"
        ));
    }

    #[test]
    fn statuses_sort_into_refusals_remaps_and_behaviour() {
        assert!(matches!(
            status("task.halt", 404, 400),
            Finding::Refused { .. }
        ));
        assert!(matches!(
            status("promise.search", 501, 200),
            Finding::Refused { .. }
        ));
        assert!(matches!(
            status("promise.create", 200, 201),
            Finding::StatusRemap { .. }
        ));
        assert!(matches!(
            status("task.acquire", 409, 200),
            Finding::Behaviour { .. }
        ));
    }
}
