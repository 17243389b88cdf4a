//! The state check at a barrier, incremental: compare the model with the
//! target's snapshot only on the objects that can differ, not the whole
//! state at every barrier (which made a history's check quadratic in its
//! length: every epoch paid for the whole state).
//!
//! The target's state is held per object ([`Shown`]); a barrier names the
//! objects the target shows otherwise than at the previous barrier (a
//! delta's objects, or those whose hash changed in a whole snapshot).
//!
//! **Why comparing a few objects is sound.** At the start of an epoch the
//! model (every configuration carried) equals the previous barrier's
//! snapshot on every compared component: the previous barrier checked
//! exactly that. An object is then the same on both sides at this barrier
//! unless the model wrote it in the epoch (its undo journal since the
//! epoch's start names every key it wrote, [`model::state::State::writes_since`])
//! or the target's snapshot shows it otherwise than the previous one did
//! (it changed, appeared or disappeared): a target may change objects the
//! model never touched (a lost write, a resurrected promise), and those
//! are caught by the second set, not the first. So the barrier compares
//! the union of the two sets, entry by entry, with the same comparison as
//! a full snapshot (typed first, [`Snap::agrees`], and on a typed
//! difference the keyed JSON diff a whole comparison ends in); a hash collision
//! could only hide a change the target made to an object the model did not
//! touch (2⁻⁶⁴ per object) in a snapshot recorded whole. The first
//! barrier, a barrier after one without a snapshot, one whose components
//! are not the previous one's, and one with an entry that names no object
//! are compared whole.

use std::cell::OnceCell;
use std::collections::BTreeSet;

use serde_json::{Map, Value};

use model::state::{Message, State, LEASE, RETRY};
use model::view::{
    message_json, CallbackView, IdTimeout, ListenerView, MessageView, ResumeView, StateView,
    TaskTimeoutView,
};

use super::partition::Key;
pub use super::shown::Object;
use super::shown::Shown;
use crate::compare::diff_state;
use crate::snapshot::{Agreement, Snap};

/// What a barrier expects of the model's state: the target's state, and
/// which objects can differ from the previous barrier's.
pub struct Expected<'a> {
    /// The target's state at this barrier.
    shown: &'a Shown,
    /// The snapshot read whole, on demand: for a full comparison and for
    /// the diff of a refused state.
    full: OnceCell<Snap>,
    /// The objects the target shows otherwise than at the previous
    /// barrier; `None`: compare whole (no usable previous barrier).
    changed: Option<BTreeSet<Object>>,
}

impl<'a> Expected<'a> {
    /// The expectation of the target's state `shown`, `changed` naming the
    /// objects it shows otherwise than the previous barrier did (`None`:
    /// compare whole).
    pub fn new(shown: &'a Shown, changed: Option<BTreeSet<Object>>) -> Expected<'a> {
        Expected {
            shown,
            full: OnceCell::new(),
            changed: changed.filter(|_| shown.by_object()),
        }
    }

    /// The snapshot, whole.
    pub fn snap(&self) -> &Snap {
        self.full
            .get_or_init(|| Snap::from_json(self.shown.to_json()))
    }

    /// Whether the barrier compares only the objects that can differ.
    pub fn incremental(&self) -> bool {
        self.changed.is_some()
    }

    /// Whether the model's state agrees with the snapshot, the journal
    /// since `base` (the epoch's start) naming what the model wrote.
    pub fn agrees(&self, state: &State, base: model::state::Mark, skip: &[String]) -> bool {
        self.agrees_within(state, base, skip, &|_| true)
    }

    /// [`Expected::agrees`] on one component of a partitioned epoch: the
    /// objects the model wrote since `base` (the component's start), and
    /// those the target changed whose key `keep` holds. Objects the target
    /// changed that no component holds are left to the closing check
    /// (`keep` always true). Only an incremental barrier can be split so:
    /// a whole one compares everything.
    pub fn agrees_within(
        &self,
        state: &State,
        base: model::state::Mark,
        skip: &[String],
        keep: &dyn Fn(&Key) -> bool,
    ) -> bool {
        let Some(changed) = &self.changed else {
            return self.diff(state, skip).is_empty();
        };
        let mut objects: BTreeSet<Object> = changed
            .iter()
            .filter(|o| self.key_of(o, state).is_some_and(|k| keep(&k)))
            .cloned()
            .collect();
        let w = state.writes_since(base);
        let ids = |m: &mut BTreeSet<Object>, keys: Vec<&String>, f: fn(String) -> Object| {
            m.extend(keys.into_iter().map(|k| f(k.clone())));
        };
        ids(&mut objects, w.promises.keys().collect(), Object::Promise);
        ids(
            &mut objects,
            w.promise_timeouts.keys().collect(),
            Object::Promise,
        );
        ids(&mut objects, w.tasks.keys().collect(), Object::Task);
        ids(&mut objects, w.task_timeouts.keys().collect(), Object::Task);
        ids(&mut objects, w.schedules.keys().collect(), Object::Schedule);
        ids(
            &mut objects,
            w.schedule_timeouts.keys().collect(),
            Object::Schedule,
        );
        ids(&mut objects, w.outbox.keys().collect(), Object::Message);
        let view = view_of(state, &objects);
        let part = Snap::from_json(self.part(&objects));
        match part.agrees(&view, skip) {
            Agreement::Same { .. } => true,
            Agreement::Differs => keyed_agree(&part, view, skip),
            // Not the typed shape: only the keyed JSON diff can judge it.
            Agreement::Untyped => self.diff(state, skip).is_empty(),
        }
    }

    /// Whether the model agrees with the snapshot on some objects alone:
    /// the target's changed objects (every object, when the barrier is
    /// compared whole) whose key `keep_changed` holds, and those the model
    /// wrote since `base` whose key `keep_written` holds. The reduction's
    /// close decides each independent group of timers on its own objects
    /// so. `None`:
    /// the snapshot is not of the typed shape and only a whole comparison
    /// can judge it.
    pub fn agrees_on(
        &self,
        state: &State,
        base: model::state::Mark,
        skip: &[String],
        keep_changed: &dyn Fn(&Key) -> bool,
        keep_written: &dyn Fn(&Key) -> bool,
    ) -> Option<bool> {
        let mut objects: BTreeSet<Object> = match &self.changed {
            Some(changed) => changed.clone(),
            None => {
                let mut all: BTreeSet<Object> = self.shown.objects().cloned().collect();
                all.extend(state.promises().map(|p| Object::Promise(p.id.clone())));
                all.extend(state.tasks().map(|t| Object::Task(t.id.clone())));
                all.extend(state.schedules().map(|s| Object::Schedule(s.id.clone())));
                all.extend(state.outbox().map(|(k, _)| Object::Message(k.clone())));
                all
            }
        };
        objects.retain(|o| self.key_of(o, state).is_some_and(|k| keep_changed(&k)));
        let w = state.writes_since(base);
        let mut written: BTreeSet<Object> = BTreeSet::new();
        let objects_w = &mut written;
        objects_w.extend(w.promises.keys().cloned().map(Object::Promise));
        objects_w.extend(w.promise_timeouts.keys().cloned().map(Object::Promise));
        objects_w.extend(w.tasks.keys().cloned().map(Object::Task));
        objects_w.extend(w.task_timeouts.keys().cloned().map(Object::Task));
        objects_w.extend(w.schedules.keys().cloned().map(Object::Schedule));
        objects_w.extend(w.schedule_timeouts.keys().cloned().map(Object::Schedule));
        objects_w.extend(w.outbox.keys().cloned().map(Object::Message));
        written.retain(|o| self.key_of(o, state).is_some_and(|k| keep_written(&k)));
        objects.extend(written);
        let view = view_of(state, &objects);
        let part = Snap::from_json(self.part(&objects));
        match part.agrees(&view, skip) {
            Agreement::Same { .. } => Some(true),
            Agreement::Differs => Some(keyed_agree(&part, view, skip)),
            Agreement::Untyped => None,
        }
    }

    /// The partition key of an object: its id, or for an outbox entry the
    /// task or promise it belongs to (read from the snapshot's entry, else
    /// from the model's); `None` when neither holds it (then both lack it).
    fn key_of(&self, o: &Object, state: &State) -> Option<Key> {
        Some(match o {
            Object::Promise(id) | Object::Task(id) => Key::Id(id.clone()),
            Object::Schedule(id) => Key::Schedule(id.clone()),
            Object::Message(key) => {
                let from_snap = {
                    self.shown.entries(o).iter().find_map(|(_, e)| {
                        let m = &e["message"];
                        let id = match m["kind"].as_str()? {
                            "execute" => m["data"]["task"]["id"].as_str()?,
                            _ => m["data"]["promise"]["id"].as_str()?,
                        };
                        Some(id.to_string())
                    })
                };
                match from_snap {
                    Some(id) => Key::Id(id),
                    None => match &state.get_message(key)?.message {
                        Message::Execute { task_id, .. } => Key::Id(task_id.clone()),
                        Message::Unblock { promise } => Key::Id(promise.id.clone()),
                    },
                }
            }
        })
    }

    /// The whole state against the whole snapshot: empty when they agree
    /// (the typed fast path first, the keyed JSON diff on any difference).
    pub fn diff(&self, state: &State, skip: &[String]) -> Vec<crate::compare::StateDiff> {
        let view = StateView::of(state);
        if let Agreement::Same { .. } = self.snap().agrees(&view, skip) {
            return Vec::new();
        }
        let view = serde_json::to_value(view).expect("view serialises");
        let mut skipped = BTreeSet::new();
        diff_state(&view, &self.snap().normalized(), skip, &mut skipped)
    }

    /// The snapshot's entries of `objects`, in the snapshot's shape: each
    /// component the snapshot holds, with only those entries.
    fn part(&self, objects: &BTreeSet<Object>) -> Value {
        let mut out = Map::new();
        for c in self.shown.components() {
            out.insert(c.to_string(), Value::Array(Vec::new()));
        }
        for o in objects {
            for (c, e) in self.shown.entries(o) {
                if let Some(Value::Array(a)) = out.get_mut(*c) {
                    a.push((*e).clone());
                }
            }
        }
        Value::Object(out)
    }
}

/// Whether a typed difference of `part` (the snapshot's entries of some
/// objects) from `view` (the model's of the same) survives the keyed JSON
/// diff, which is where a whole comparison ends ([`Expected::diff`]): a
/// message's promise spelled `"param": {"data": null, "headers": {}}`
/// where the model writes `"param": {}` differs as typed JSON (a message
/// is held as JSON) but is the same record, and an incremental barrier
/// must refuse exactly what a whole one refuses.
fn keyed_agree(part: &Snap, view: StateView, skip: &[String]) -> bool {
    let view = serde_json::to_value(view).expect("view serialises");
    let mut skipped = BTreeSet::new();
    diff_state(&view, &part.normalized(), skip, &mut skipped).is_empty()
}

/// The model's entries of `objects`, as [`StateView::of`] shows them.
fn view_of(s: &State, objects: &BTreeSet<Object>) -> StateView {
    let mut v = StateView::default();
    for o in objects {
        match o {
            Object::Promise(id) => {
                if let Some(p) = s.get_promise(id) {
                    v.promises.push(p.to_record());
                    v.callbacks.extend(p.callbacks.iter().map(|c| CallbackView {
                        awaiter: c.clone(),
                        awaited: id.clone(),
                    }));
                    v.listeners.extend(p.listeners.iter().map(|a| ListenerView {
                        id: id.clone(),
                        address: a.clone(),
                    }));
                }
                if let Some(t) = s.promise_timeouts().get(id) {
                    v.promise_timeouts.push(IdTimeout {
                        id: id.clone(),
                        timeout: t,
                    });
                }
            }
            Object::Task(id) => {
                if let Some(t) = s.get_task(id) {
                    v.tasks.push(t.to_record());
                    v.resumes.extend(t.resumes.iter().map(|r| ResumeView {
                        id: id.clone(),
                        awaited: r.clone(),
                    }));
                }
                for kind in [RETRY, LEASE] {
                    if let Some(t) = s.task_timeouts(kind).get(id) {
                        v.task_timeouts.push(TaskTimeoutView {
                            id: id.clone(),
                            kind: kind as u8,
                            timeout: t,
                        });
                    }
                }
            }
            Object::Schedule(id) => {
                if let Some(x) = s.get_schedule(id) {
                    v.schedules.push(x.clone());
                }
                if let Some(t) = s.schedule_timeouts().get(id) {
                    v.schedule_timeouts.push(IdTimeout {
                        id: id.clone(),
                        timeout: t,
                    });
                }
            }
            Object::Message(key) => {
                if let Some(e) = s.get_message(key) {
                    v.messages.push(MessageView {
                        address: e.address.clone(),
                        message: message_json(e),
                    });
                }
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::api::{PromiseCreateReq, PromiseRegisterListenerReq, PromiseSettleReq, Request};
    use model::machine::Machine;
    use serde_json::json;

    /// resonate-pg writes an unblock message's promise with `"param":
    /// {"data": null, "headers": {}}` where the model writes `"param": {}`:
    /// the same record, as the keyed diff of a whole comparison reads it.
    /// An incremental barrier (its objects named by a delta) agrees too;
    /// it once refused it (the typed message is held as JSON), so a crash
    /// run of resonate-pg failed at its first barrier with no difference
    /// to show.
    #[test]
    fn an_incremental_barrier_agrees_where_a_whole_one_does() {
        let mut m = Machine::default();
        let before = Shown::of(serde_json::to_value(StateView::of(&m.state)).unwrap());
        let base = m.state.checkpoint();
        let reqs = [
            Request::PromiseCreate(PromiseCreateReq {
                id: "c".into(),
                timeout_at: 100,
                param: Default::default(),
                tags: Default::default(),
            }),
            Request::PromiseRegisterListener(PromiseRegisterListenerReq {
                awaited: "c".into(),
                address: "poll://l".into(),
            }),
            Request::PromiseSettle(PromiseSettleReq {
                id: "c".into(),
                state: model::types::PromiseState::Resolved,
                value: Default::default(),
            }),
        ];
        for r in &reqs {
            m.apply(r, 1);
        }
        let mut snap = serde_json::to_value(StateView::of(&m.state)).unwrap();
        let messages = snap["messages"].as_array_mut().unwrap();
        assert_eq!(messages.len(), 1, "one unblock: {messages:?}");
        messages[0]["message"]["data"]["promise"]["param"] = json!({"data": null, "headers": {}});
        let shown = Shown::of(snap);
        let changed = before.changed_to(&shown);
        assert!(changed.is_some(), "comparable object by object");
        let whole = Expected::new(&shown, None);
        assert!(whole.agrees(&m.state, base, &[]), "whole");
        let incremental = Expected::new(&shown, changed);
        assert!(incremental.incremental());
        assert!(incremental.agrees(&m.state, base, &[]), "incremental");
        assert!(
            incremental.agrees_on(&m.state, base, &[], &|_| true, &|_| true) == Some(true),
            "one group of objects"
        );
        // A real difference is still one.
        let mut snap = serde_json::to_value(StateView::of(&m.state)).unwrap();
        snap["messages"][0]["message"]["data"]["promise"]["param"] = json!({"data": "eA=="});
        let shown = Shown::of(snap);
        let incremental = Expected::new(&shown, before.changed_to(&shown));
        assert!(!incremental.agrees(&m.state, base, &[]));
    }
}
