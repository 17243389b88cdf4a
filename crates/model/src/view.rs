//! The canonical state view: what the runner diffs against a target's
//! `debug.snap`. It has the shape of the Rust `resonate` server's snapshot
//! (`promises`, `promiseTimeouts`, `callbacks`, `listeners`, `tasks`,
//! `taskTimeouts`, `messages`) plus what that snapshot lacks
//! (`schedules`, `scheduleTimeouts`, `resumes`). Every component is sorted
//! by its key, so two equal states have byte-equal views.

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::state::{Message, OutboxEntry, State, LEASE, RETRY};
use crate::types::Time;

/// An armed promise or schedule timeout.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct IdTimeout {
    /// Object id.
    pub id: String,
    /// Deadline.
    pub timeout: Time,
}

/// An armed task timeout; `type` is the Lean's `kind` (0 retry, 1 lease).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TaskTimeoutView {
    /// Task id.
    pub id: String,
    /// 0 = pending retry, 1 = lease expiry.
    #[serde(rename = "type")]
    pub kind: u8,
    /// Deadline.
    pub timeout: Time,
}

/// A registered callback: `awaiter` is in `awaited`'s callbacks.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CallbackView {
    /// The waiting promise (its task id).
    pub awaiter: String,
    /// The promise waited on.
    pub awaited: String,
}

/// A registered listener.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ListenerView {
    /// The promise listened to.
    pub id: String,
    /// Delivery address.
    pub address: String,
}

/// A buffered resume: task `id` holds `awaited` in its `resumes`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ResumeView {
    /// Task id.
    pub id: String,
    /// The awaited promise whose settlement is buffered.
    pub awaited: String,
}

/// An outbox entry, shaped as the Rust server's snapshot shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageView {
    /// Delivery address.
    pub address: String,
    /// `{kind: "execute"|"unblock", head: {}, data: {task: {id, version}} | {promise}}`.
    pub message: serde_json::Value,
}

impl MessageView {
    /// The spec's outbox key (`OutboxEntry.key`): `execute:{taskId}`, or
    /// `{promiseId}:notify:{address}`; any other message by its JSON. It
    /// does not depend on the order of the fields of the message's JSON,
    /// which a server is free to choose, so two snapshots holding the same
    /// outbox sort it the same way.
    pub fn key(&self) -> String {
        let m = &self.message;
        let text = |v: &serde_json::Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
        match m["kind"].as_str() {
            Some("execute") => format!("execute:{}", text(&m["data"]["task"]["id"])),
            Some("unblock") => format!(
                "{}:notify:{}",
                text(&m["data"]["promise"]["id"]),
                self.address
            ),
            _ => m.to_string() + &self.address,
        }
    }
}

/// One component of the state view: its name in a snapshot and the fields
/// that key its entries (`messages` has none: an outbox entry is keyed by
/// the spec's outbox key, which the runner's diff computes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Component {
    /// Its name in a snapshot (`promises`, `taskTimeouts`, …).
    pub name: &'static str,
    /// The fields of an entry that key it.
    pub key: &'static [&'static str],
}

/// The state view's components, written once: everything that walks them
/// (the [`StateView`] itself, [`COMPONENTS`], the runner's typed snapshot
/// and its keyed diff) expands this list, so a component is one line here.
///
/// `for_each_component!(then)` calls `then!` with one entry per component,
/// in comparison order: `docs field: EntryType = "name" [key fields] by
/// typed_key;`, where `typed_key` maps a typed entry to a string that
/// orders entries as the key fields do.
#[macro_export]
macro_rules! for_each_component {
    ($then:ident) => {
        $then! {
            /// Promise records, by id.
            promises: $crate::types::PromiseRecord = "promises" ["id"]
                by |x: &$crate::types::PromiseRecord| x.id.clone();
            /// Promise timeouts, by id.
            promise_timeouts: $crate::view::IdTimeout = "promiseTimeouts" ["id"]
                by |x: &$crate::view::IdTimeout| x.id.clone();
            /// Callbacks, by (awaiter, awaited).
            callbacks: $crate::view::CallbackView = "callbacks" ["awaiter", "awaited"]
                by |x: &$crate::view::CallbackView| format!("{}/{}", x.awaiter, x.awaited);
            /// Listeners, by (id, address).
            listeners: $crate::view::ListenerView = "listeners" ["id", "address"]
                by |x: &$crate::view::ListenerView| format!("{}/{}", x.id, x.address);
            /// Task records, by id.
            tasks: $crate::types::TaskRecord = "tasks" ["id"]
                by |x: &$crate::types::TaskRecord| x.id.clone();
            /// Task timeouts, by (id, type).
            task_timeouts: $crate::view::TaskTimeoutView = "taskTimeouts" ["id", "type"]
                by |x: &$crate::view::TaskTimeoutView| format!("{}/{}", x.id, x.kind);
            /// Outbox entries, by key.
            messages: $crate::view::MessageView = "messages" []
                by |x: &$crate::view::MessageView| x.key();
            /// Schedules, by id.
            schedules: $crate::types::Schedule = "schedules" ["id"]
                by |x: &$crate::types::Schedule| x.id.clone();
            /// Schedule timeouts, by id.
            schedule_timeouts: $crate::view::IdTimeout = "scheduleTimeouts" ["id"]
                by |x: &$crate::view::IdTimeout| x.id.clone();
            /// Buffered resume ids, by (task, awaited).
            resumes: $crate::view::ResumeView = "resumes" ["id", "awaited"]
                by |x: &$crate::view::ResumeView| format!("{}/{}", x.id, x.awaited);
        }
    };
}

macro_rules! state_view {
    ($($(#[$doc:meta])* $field:ident: $ty:ty = $name:literal [$($key:literal),*] by $by:expr;)*) => {
        /// The whole state, keyed and ordered: one list per component.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        pub struct StateView {
            $(
                $(#[$doc])*
                #[serde(rename = $name)]
                pub $field: Vec<$ty>,
            )*
        }

        /// The components, in comparison order.
        pub const COMPONENTS: &[Component] = &[$(Component { name: $name, key: &[$($key),*] },)*];
    };
}

for_each_component!(state_view);

/// The JSON of one outbox message as the Rust server's snapshot writes it.
pub fn message_json(entry: &OutboxEntry) -> serde_json::Value {
    match &entry.message {
        Message::Execute { task_id, version } => {
            json!({"kind": "execute", "head": {}, "data": {"task": {"id": task_id, "version": version}}})
        }
        Message::Unblock { promise } => {
            json!({"kind": "unblock", "head": {}, "data": {"promise": promise}})
        }
    }
}

impl StateView {
    /// The view of a state.
    pub fn of(s: &State) -> StateView {
        let mut v = StateView::default();
        for p in s.promises() {
            v.promises.push(p.to_record());
            v.callbacks.extend(p.callbacks.iter().map(|c| CallbackView {
                awaiter: c.clone(),
                awaited: p.id.clone(),
            }));
            v.listeners.extend(p.listeners.iter().map(|a| ListenerView {
                id: p.id.clone(),
                address: a.clone(),
            }));
        }
        for t in s.tasks() {
            v.tasks.push(t.to_record());
            v.resumes.extend(t.resumes.iter().map(|r| ResumeView {
                id: t.id.clone(),
                awaited: r.clone(),
            }));
        }
        v.schedules.extend(s.schedules().cloned());
        let timeouts = |d: &crate::state::Deadlines| {
            d.sorted()
                .into_iter()
                .map(|(id, t)| IdTimeout {
                    id: id.to_string(),
                    timeout: t,
                })
                .collect::<Vec<_>>()
        };
        v.promise_timeouts = timeouts(s.promise_timeouts());
        v.schedule_timeouts = timeouts(s.schedule_timeouts());
        for kind in [RETRY, LEASE] {
            v.task_timeouts
                .extend(s.task_timeouts(kind).sorted().into_iter().map(|(id, t)| {
                    TaskTimeoutView {
                        id: id.to_string(),
                        kind: kind as u8,
                        timeout: t,
                    }
                }));
        }
        let mut outbox: Vec<_> = s.outbox().collect();
        outbox.sort_by(|a, b| a.0.cmp(b.0));
        v.messages = outbox
            .into_iter()
            .map(|(_, e)| MessageView {
                address: e.address.clone(),
                message: message_json(e),
            })
            .collect();
        v.promises.sort_by(|a, b| a.id.cmp(&b.id));
        v.tasks.sort_by(|a, b| a.id.cmp(&b.id));
        v.schedules.sort_by(|a, b| a.id.cmp(&b.id));
        v.callbacks.sort();
        v.listeners.sort();
        v.resumes.sort();
        v.task_timeouts.sort();
        v
    }
}

impl StateView {
    /// The state this view shows, with `config`: the inverse of
    /// [`StateView::of`], for a reader that must go on from what a target
    /// holds (triage pins its model to a target's snapshot after a
    /// divergence it cannot explain, to see what lies past it). The view
    /// keeps callbacks, listeners and buffered resumes as sets, so their
    /// order is taken from `like` (the model the view replaces) where it
    /// names them, and is the view's own order otherwise. `Err` names an
    /// entry that is not a state's: a callback, listener or resume of an
    /// object the view lacks, a task timeout of an unknown kind, a message
    /// that is neither `execute` nor `unblock`.
    pub fn to_state(
        &self,
        config: crate::state::ServerConfig,
        like: &State,
    ) -> Result<State, String> {
        use crate::state::{PromiseObject, TaskObject};
        let mut s = State::new(config);
        let ordered = |mut ids: Vec<String>, old: Option<&Vec<String>>| {
            if let Some(old) = old {
                ids.sort_by_key(|x| old.iter().position(|o| o == x).unwrap_or(usize::MAX));
            }
            ids
        };
        for p in &self.promises {
            let of = |f: fn(&PromiseObject) -> &Vec<String>| like.get_promise(&p.id).map(f);
            let callbacks: Vec<String> = self
                .callbacks
                .iter()
                .filter(|c| c.awaited == p.id)
                .map(|c| c.awaiter.clone())
                .collect();
            let listeners: Vec<String> = self
                .listeners
                .iter()
                .filter(|l| l.id == p.id)
                .map(|l| l.address.clone())
                .collect();
            s.set_promise(PromiseObject {
                id: p.id.clone(),
                state: p.state,
                param: p.param.clone(),
                value: p.value.clone(),
                tags: p.tags.clone(),
                timeout_at: p.timeout_at,
                created_at: p.created_at,
                settled_at: p.settled_at,
                callbacks: ordered(callbacks, of(|o| &o.callbacks)),
                listeners: ordered(listeners, of(|o| &o.listeners)),
            });
        }
        let orphan = |what: &str, id: &str| Err(format!("{what} of `{id}`, which the view lacks"));
        if let Some(c) = self
            .callbacks
            .iter()
            .find(|c| s.get_promise(&c.awaited).is_none())
        {
            return orphan("a callback", &c.awaited);
        }
        if let Some(l) = self
            .listeners
            .iter()
            .find(|l| s.get_promise(&l.id).is_none())
        {
            return orphan("a listener", &l.id);
        }
        for t in &self.tasks {
            let resumes: Vec<String> = self
                .resumes
                .iter()
                .filter(|r| r.id == t.id)
                .map(|r| r.awaited.clone())
                .collect();
            let mut task = TaskObject::new(&t.id, t.state, t.version);
            task.ttl = t.ttl;
            task.pid = t.pid.clone();
            task.resumes = ordered(resumes, like.get_task(&t.id).map(|o| &o.resumes));
            s.set_task(task);
        }
        if let Some(r) = self.resumes.iter().find(|r| s.get_task(&r.id).is_none()) {
            return orphan("a resume", &r.id);
        }
        for x in &self.schedules {
            s.set_schedule(x.clone());
        }
        for t in &self.promise_timeouts {
            s.set_promise_timeout(&t.id, t.timeout);
        }
        for t in &self.schedule_timeouts {
            s.set_schedule_timeout(&t.id, t.timeout);
        }
        for t in &self.task_timeouts {
            let kind = usize::from(t.kind);
            if kind != RETRY && kind != LEASE {
                return Err(format!("a task timeout of `{}` of kind {}", t.id, t.kind));
            }
            s.set_task_timeout(&t.id, kind, t.timeout);
        }
        for m in &self.messages {
            let d = &m.message["data"];
            let message = match m.message["kind"].as_str() {
                Some("execute") => Message::Execute {
                    task_id: d["task"]["id"].as_str().unwrap_or_default().to_string(),
                    version: d["task"]["version"].as_u64().unwrap_or_default(),
                },
                Some("unblock") => Message::Unblock {
                    promise: serde_json::from_value(d["promise"].clone())
                        .map_err(|e| format!("an unblock message's promise: {e}"))?,
                },
                _ => {
                    return Err(format!(
                        "a message that is neither execute nor unblock: {}",
                        m.message
                    ))
                }
            };
            s.set_message(&m.address, message);
        }
        Ok(s)
    }
}
