//! A target's `debug.snap`, read for speed: the runner compares a snapshot
//! after every step, so the common case (the target agrees) must not cost
//! a generic JSON tree. The body is parsed straight into typed components
//! and compared with the model's typed view; only when they differ (or the
//! body does not fit the types) is it read as JSON for the keyed diff.

use std::cell::OnceCell;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use model::view::StateView;

use crate::target::{AnswerHead, HeadFields};

/// The typed snapshot, expanded from the view's one list of components
/// ([`model::for_each_component`]): each component absent when the target
/// does not report it.
macro_rules! typed_components {
    ($($(#[$doc:meta])* $field:ident: $ty:ty = $name:literal [$($key:literal),*] by $by:expr;)*) => {
        /// The snapshot components, each absent when the target does not
        /// report it.
        #[derive(Debug, Default, Deserialize, Serialize, PartialEq)]
        pub struct Components {
            $(
                #[serde(rename = $name, skip_serializing_if = "Option::is_none")]
                $field: Option<Vec<$ty>>,
            )*
        }

        impl Components {
            /// Every component of a view, present.
            fn of_view(v: StateView) -> Components {
                Components { $($field: Some(v.$field),)* }
            }

            /// Whether every component present and not in `skip` equals
            /// the view's as a multiset; those absent are named in
            /// `missing`.
            fn agree(&self, view: &StateView, skip: &[String], missing: &mut Vec<&'static str>) -> bool {
                let mut same = true;
                $(
                    if !skip.iter().any(|s| s == $name) {
                        match &self.$field {
                            None => missing.push($name),
                            Some(v) => same &= sorted_eq(v, &view.$field, $by),
                        }
                    }
                )*
                same
            }
        }
    };
}

model::for_each_component!(typed_components);

/// A whole `debug.snap` answer read at once: its head (judged by the
/// target, [`crate::target::AnswerHead`]) and its typed components.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    kind: Value,
    #[serde(default)]
    head: HeadFields,
    data: Components,
}

/// One snapshot: its JSON `data` (parsed on demand) and, when it fits, its
/// typed components.
#[derive(Debug)]
pub struct Snap {
    data: Vec<u8>,
    typed: Option<Components>,
    json: OnceCell<Value>,
}

impl Snap {
    /// From a whole response envelope's bytes: its head, for the target to
    /// judge, and the snapshot in its `data`.
    pub fn from_envelope(body: &[u8]) -> Result<(AnswerHead, Snap), String> {
        if let Ok(e) = serde_json::from_slice::<Envelope>(body) {
            let head = AnswerHead {
                kind: e.kind,
                head: e.head,
            };
            let snap = Snap {
                data: body.to_vec(),
                typed: Some(e.data),
                json: OnceCell::new(),
            };
            return Ok((head, snap));
        }
        let v: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
        let data = v
            .get("data")
            .filter(|d| d.is_object())
            .cloned()
            .ok_or("no object `data`")?;
        let json = OnceCell::new();
        let _ = json.set(data);
        let snap = Snap {
            data: body.to_vec(),
            typed: None,
            json,
        };
        Ok((AnswerHead::of(&v), snap))
    }

    /// From the model's own view (an in-process target): typed, no JSON.
    pub fn from_view(v: StateView) -> Snap {
        let typed = Components::of_view(v);
        let json = OnceCell::new();
        let _ = json.set(serde_json::to_value(&typed).unwrap_or(Value::Null));
        Snap {
            data: Vec::new(),
            typed: Some(typed),
            json,
        }
    }

    /// From a snapshot `data` object (tests, golden states).
    pub fn from_json(data: Value) -> Snap {
        let typed = Components::deserialize(&data).ok();
        let json = OnceCell::new();
        let _ = json.set(data);
        Snap {
            data: Vec::new(),
            typed,
            json,
        }
    }

    /// The components as the keyed diff should see them: when the body fits
    /// the types, its typed reading re-serialised (absent fields at their
    /// defaults, unknown fields dropped), so the JSON diff and the typed fast
    /// path never disagree; otherwise the raw `data`.
    pub fn normalized(&self) -> Value {
        match &self.typed {
            Some(t) => serde_json::to_value(t).unwrap_or(Value::Null),
            None => self.json().clone(),
        }
    }

    /// The `data` object as JSON.
    pub fn json(&self) -> &Value {
        self.json.get_or_init(|| {
            serde_json::from_slice::<Value>(&self.data)
                .ok()
                .and_then(|v| v.get("data").cloned())
                .unwrap_or(Value::Null)
        })
    }

    /// Whether the typed components equal the model's view, component by
    /// component, for those the target reports and `skip` does not name.
    pub fn agrees(&self, view: &StateView, skip: &[String]) -> Agreement {
        let Some(t) = self.typed.as_ref() else {
            return Agreement::Untyped;
        };
        let mut missing = Vec::new();
        let same = t.agree(view, skip, &mut missing);
        if same {
            Agreement::Same { missing }
        } else {
            Agreement::Differs
        }
    }
}

/// What the typed fast path found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// Every compared component is equal; `missing` names those the target
    /// does not report (not compared).
    Same {
        /// Components absent from the snapshot.
        missing: Vec<&'static str>,
    },
    /// Some component differs: the keyed JSON diff tells where.
    Differs,
    /// The snapshot does not fit the types: only the JSON diff can read it.
    Untyped,
}

/// Equal as multisets: equal as they are (the usual case, both sorted by
/// key), else equal once both are sorted by `key`.
fn sorted_eq<T: PartialEq + Clone>(a: &[T], b: &[T], key: impl Fn(&T) -> String) -> bool {
    if a == b {
        return true;
    }
    if a.len() != b.len() {
        return false;
    }
    let mut x: Vec<(String, &T)> = a.iter().map(|e| (key(e), e)).collect();
    let mut y: Vec<(String, &T)> = b.iter().map(|e| (key(e), e)).collect();
    x.sort_by(|p, q| p.0.cmp(&q.0));
    y.sort_by(|p, q| p.0.cmp(&q.0));
    x.iter().zip(&y).all(|(p, q)| p.0 == q.0 && p.1 == q.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::api::{PromiseCreateReq, Request};
    use model::machine::Machine;
    use serde_json::json;

    fn view() -> StateView {
        let mut m = Machine::default();
        for id in ["b", "a"] {
            let tags = [("resonate:target".to_string(), "http://w".to_string())].into();
            let req = PromiseCreateReq {
                id: id.into(),
                timeout_at: 100,
                param: Default::default(),
                tags,
            };
            m.apply(&Request::PromiseCreate(req), 0);
        }
        StateView::of(&m.state)
    }

    #[test]
    fn the_same_state_in_another_order_agrees() {
        let v = view();
        let mut data = serde_json::to_value(&v).unwrap();
        data["promises"].as_array_mut().unwrap().reverse();
        data["tasks"].as_array_mut().unwrap().reverse();
        let snap = Snap::from_json(data);
        assert_eq!(snap.agrees(&v, &[]), Agreement::Same { missing: vec![] });
    }

    #[test]
    fn missing_components_are_named_and_a_difference_is_reported() {
        let v = view();
        let mut data = serde_json::to_value(&v).unwrap();
        data.as_object_mut().unwrap().remove("resumes");
        data["tasks"][0]["version"] = json!(7);
        let snap = Snap::from_json(data.clone());
        assert_eq!(snap.agrees(&v, &[]), Agreement::Differs);
        data["tasks"][0]["version"] = json!(0);
        assert_eq!(
            Snap::from_json(data).agrees(&v, &[]),
            Agreement::Same {
                missing: vec!["resumes"]
            }
        );
    }

    /// A view with one entry in every component.
    fn full() -> StateView {
        serde_json::from_value(json!({
            "promises": [{"id": "a", "state": "pending", "param": {}, "timeoutAt": 9, "createdAt": 0}],
            "promiseTimeouts": [{"id": "a", "timeout": 9}],
            "callbacks": [{"awaiter": "b", "awaited": "a"}],
            "listeners": [{"id": "a", "address": "http://l"}],
            "tasks": [{"id": "b", "state": "suspended", "version": 1, "resumes": 1}],
            "taskTimeouts": [{"id": "b", "type": 0, "timeout": 5}],
            "messages": [{"address": "http://w", "message": {"kind": "execute", "head": {}, "data": {"task": {"id": "b", "version": 1}}}}],
            "schedules": [{"id": "s", "cron": "* * * * *", "promiseId": "p", "promiseTimeout": 1, "nextRunAt": 60000, "createdAt": 0}],
            "scheduleTimeouts": [{"id": "s", "timeout": 60000}],
            "resumes": [{"id": "b", "awaited": "c"}],
        }))
        .unwrap()
    }

    #[test]
    fn every_component_is_compared_by_the_fast_path_and_the_keyed_diff() {
        let full = full();
        let model = serde_json::to_value(&full).unwrap();
        let names: Vec<&str> = model::view::COMPONENTS.iter().map(|c| c.name).collect();
        let keys: Vec<&str> = model
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys, names,
            "the view serialises the listed components, in order"
        );
        for c in model::view::COMPONENTS {
            // The target lost the one entry of this component.
            let mut data = model.clone();
            data[c.name] = json!([]);
            let snap = Snap::from_json(data);
            assert_eq!(snap.agrees(&full, &[]), Agreement::Differs, "{}", c.name);
            let skip = [c.name.to_string()];
            let none_missing = Agreement::Same { missing: vec![] };
            assert_eq!(
                snap.agrees(&full, &skip),
                none_missing,
                "skipped: {}",
                c.name
            );
            let mut skipped = std::collections::BTreeSet::new();
            let d = crate::compare::diff_state(&model, &snap.normalized(), &[], &mut skipped);
            let differing: Vec<&str> = d.iter().map(|d| d.component.as_str()).collect();
            assert_eq!(differing, [c.name]);
            // The target has no such component: not compared, and named.
            let mut data = model.clone();
            data.as_object_mut().unwrap().remove(c.name);
            let snap = Snap::from_json(data);
            let same = Agreement::Same {
                missing: vec![c.name],
            };
            assert_eq!(snap.agrees(&full, &[]), same);
        }
    }

    /// A server writes a message's promise with its fields in an order of
    /// its own: the outbox is the same, and the fast path must say so (it
    /// used to sort messages by their JSON text, so two of them in another
    /// order sent every step to the keyed JSON diff).
    #[test]
    fn the_outbox_agrees_whatever_the_order_of_a_messages_fields() {
        let promise = |id: &str| json!({"id": id, "state": "resolved", "param": {}, "value": {}, "tags": {}, "timeoutAt": 9, "createdAt": 0, "settledAt": 1});
        let unblock = |id: &str, address: &str| json!({"address": address, "message": {"kind": "unblock", "head": {}, "data": {"promise": promise(id)}}});
        let model = StateView {
            messages: serde_json::from_value(json!([unblock("a", "http://z"), unblock("b", "http://y"), {"address": "http://x", "message": {"kind": "execute", "head": {}, "data": {"task": {"id": "c", "version": 1}}}}]))
            .unwrap(),
            ..StateView::default()
        };
        let mut data = serde_json::to_value(&model).unwrap();
        // The target's JSON: promise fields reversed, messages in another order.
        for m in data["messages"].as_array_mut().unwrap() {
            if let Some(p) = m.pointer_mut("/message/data/promise") {
                let fields: Vec<(String, Value)> =
                    p.as_object().unwrap().clone().into_iter().rev().collect();
                *p = Value::Object(fields.into_iter().collect());
            }
        }
        data["messages"].as_array_mut().unwrap().reverse();
        let snap = Snap::from_json(data);
        assert_eq!(
            snap.agrees(&model, &[]),
            Agreement::Same { missing: vec![] }
        );
        // And a message that differs still differs.
        let mut other = serde_json::to_value(&model).unwrap();
        other["messages"][0]["message"]["data"]["promise"]["value"] = json!({"data": "x"});
        assert_eq!(
            Snap::from_json(other).agrees(&model, &[]),
            Agreement::Differs
        );
    }

    #[test]
    fn a_body_that_does_not_fit_the_types_is_still_read_as_json() {
        let body = br#"{"kind":"debug.snap","head":{"status":200},"data":{"promises":[{"id":1}]}}"#;
        let (head, snap) = Snap::from_envelope(body).unwrap();
        assert_eq!(head.status(), Some(200));
        assert_eq!(snap.agrees(&view(), &[]), Agreement::Untyped);
        assert_eq!(snap.json()["promises"][0]["id"], json!(1));
    }
}
