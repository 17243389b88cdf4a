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
