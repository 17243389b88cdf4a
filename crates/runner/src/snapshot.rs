//! A target's `debug.snap`, read for speed: the runner compares a snapshot
//! after every step, so the common case (the target agrees) must not cost
//! a generic JSON tree. The body is parsed straight into typed components
//! and compared with the model's typed view; only when they differ (or the
//! body does not fit the types) is it read as JSON for the keyed diff.

use std::cell::OnceCell;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use model::types::{PromiseRecord, Schedule, TaskRecord};
use model::view::{
    CallbackView, IdTimeout, ListenerView, MessageView, ResumeView, StateView, TaskTimeoutView,
};

use crate::target::{AnswerHead, HeadFields};

/// The snapshot components, each absent when the target does not report it.
#[derive(Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Components {
    #[serde(skip_serializing_if = "Option::is_none")]
    promises: Option<Vec<PromiseRecord>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    promise_timeouts: Option<Vec<IdTimeout>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    callbacks: Option<Vec<CallbackView>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    listeners: Option<Vec<ListenerView>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tasks: Option<Vec<TaskRecord>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task_timeouts: Option<Vec<TaskTimeoutView>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    messages: Option<Vec<MessageView>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schedules: Option<Vec<Schedule>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schedule_timeouts: Option<Vec<IdTimeout>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resumes: Option<Vec<ResumeView>>,
}

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
        let typed = Components {
            promises: Some(v.promises),
            promise_timeouts: Some(v.promise_timeouts),
            callbacks: Some(v.callbacks),
            listeners: Some(v.listeners),
            tasks: Some(v.tasks),
            task_timeouts: Some(v.task_timeouts),
            messages: Some(v.messages),
            schedules: Some(v.schedules),
            schedule_timeouts: Some(v.schedule_timeouts),
            resumes: Some(v.resumes),
        };
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
        let typed = serde_json::from_value::<Components>(data.clone()).ok();
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
        let mut same = true;
        let skipped = |n: &str| skip.iter().any(|s| s == n);
        macro_rules! cmp {
            ($field:ident, $name:literal, $key:expr) => {
                if !skipped($name) {
                    match &t.$field {
                        None => missing.push($name),
                        Some(v) => same &= sorted_eq(v, &view.$field, $key),
                    }
                }
            };
        }
        cmp!(promises, "promises", |x: &PromiseRecord| x.id.clone());
        cmp!(promise_timeouts, "promiseTimeouts", |x: &IdTimeout| x
            .id
            .clone());
        cmp!(callbacks, "callbacks", |x: &CallbackView| format!(
            "{}/{}",
            x.awaiter, x.awaited
        ));
        cmp!(listeners, "listeners", |x: &ListenerView| format!(
            "{}/{}",
            x.id, x.address
        ));
        cmp!(tasks, "tasks", |x: &TaskRecord| x.id.clone());
        cmp!(
            task_timeouts,
            "taskTimeouts",
            |x: &TaskTimeoutView| format!("{}/{}", x.id, x.kind)
        );
        cmp!(messages, "messages", |x: &MessageView| x
            .message
            .to_string()
            + &x.address);
        cmp!(schedules, "schedules", |x: &Schedule| x.id.clone());
        cmp!(schedule_timeouts, "scheduleTimeouts", |x: &IdTimeout| x
            .id
            .clone());
        cmp!(resumes, "resumes", |x: &ResumeView| format!(
            "{}/{}",
            x.id, x.awaited
        ));
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

    #[test]
    fn a_body_that_does_not_fit_the_types_is_still_read_as_json() {
        let body = br#"{"kind":"debug.snap","head":{"status":200},"data":{"promises":[{"id":1}]}}"#;
        let (head, snap) = Snap::from_envelope(body).unwrap();
        assert_eq!(head.status(), Some(200));
        assert_eq!(snap.agrees(&view(), &[]), Agreement::Untyped);
        assert_eq!(snap.json()["promises"][0]["id"], json!(1));
    }
}
