//! The state check at a barrier, incremental: compare the model with the
//! target's snapshot only on the objects that can differ, not the whole
//! state at every barrier (which made a history's check quadratic in its
//! length: every epoch paid for the whole state).
//!
//! Every snapshot entry belongs to one **object** of the model: a promise
//! (its record, its timeout, the callbacks registered on it, its
//! listeners), a task (its record, its timeouts, its buffered resumes), a
//! schedule (its record, its timeout), an outbox entry (by the spec's
//! `OutboxEntry.key`). A barrier's snapshot is indexed by object, each
//! object with an order-independent hash of its entries ([`SnapIndex`]).
//!
//! **Why comparing a few objects is sound.** At the start of an epoch the
//! model (every configuration carried) equals the previous barrier's
//! snapshot on every compared component: the previous barrier checked
//! exactly that. An object is then the same on both sides at this barrier
//! unless the model wrote it in the epoch (its undo journal since the
//! epoch's start names every key it wrote, [`model::state::State::writes_since`])
//! or the target's snapshot shows it otherwise than the previous one did
//! (its hash changed, or it appeared or disappeared): a target may change
//! objects the model never touched (a lost write, a resurrected promise),
//! and those are caught by the second set, not the first. So the barrier
//! compares the union of the two sets, entry by entry, with the same typed
//! comparison as a full snapshot ([`Snap::agrees`]); a hash collision
//! could only hide a change the target made to an object the model did not
//! touch (2⁻⁶⁴ per object). The first barrier, a barrier after one without
//! a snapshot, and one whose components are not the previous one's are
//! compared whole.

use std::cell::OnceCell;
use std::collections::{BTreeSet, HashMap};
use std::hash::Hasher;

use serde_json::{Map, Value};

use model::state::{Message, State, LEASE, RETRY};
use model::view::{
    message_json, CallbackView, IdTimeout, ListenerView, MessageView, ResumeView, StateView,
    TaskTimeoutView, COMPONENTS,
};

use super::partition::Key;
use crate::compare::diff_state;
use crate::snapshot::{Agreement, Snap};

/// The model object a snapshot entry belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Object {
    /// A promise, by id.
    Promise(String),
    /// A task, by id.
    Task(String),
    /// A schedule, by id.
    Schedule(String),
    /// An outbox entry, by `OutboxEntry.key`.
    Message(String),
}

/// A barrier's snapshot, hashed per object: what the next barrier's
/// snapshot is compared against.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapIndex {
    /// The components the snapshot holds (as lists).
    components: BTreeSet<&'static str>,
    /// Per object, the sum of its entries' hashes.
    objects: HashMap<Object, u64>,
}

/// What a barrier expects of the model's state: the snapshot, its index,
/// and which objects can differ from the previous barrier's.
pub struct Expected<'a> {
    /// The snapshot's `data`.
    data: &'a Value,
    /// The snapshot read whole, on demand: for a full comparison and for
    /// the diff of a refused state.
    full: OnceCell<Snap>,
    /// The snapshot's index.
    index: SnapIndex,
    /// The snapshot's entries by object, each with its component.
    entries: HashMap<Object, Vec<(&'static str, &'a Value)>>,
    /// The objects the target shows otherwise than at the previous
    /// barrier; `None`: compare whole (no usable previous barrier).
    changed: Option<BTreeSet<Object>>,
}

impl<'a> Expected<'a> {
    /// The expectation of a snapshot `data`, compared incrementally against
    /// `prev` (the previous barrier's index, when it had one). A snapshot
    /// with an entry that names no object is compared whole.
    pub fn new(data: &'a Value, prev: Option<&SnapIndex>) -> Expected<'a> {
        let (index, entries, ok) = index(data);
        let changed = prev
            .filter(|p| ok && p.components == index.components)
            .map(|p| changed(p, &index));
        Expected {
            data,
            full: OnceCell::new(),
            index,
            entries,
            changed,
        }
    }

    /// The snapshot, whole.
    pub fn snap(&self) -> &Snap {
        self.full.get_or_init(|| Snap::from_json(self.data.clone()))
    }

    /// Whether the barrier compares only the objects that can differ.
    pub fn incremental(&self) -> bool {
        self.changed.is_some()
    }

    /// The index, for the next barrier.
    pub fn into_index(self) -> SnapIndex {
        self.index
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
        match Snap::from_json(self.part(&objects)).agrees(&view, skip) {
            Agreement::Same { .. } => true,
            Agreement::Differs => false,
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
                let mut all: BTreeSet<Object> = self.entries.keys().cloned().collect();
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
        match Snap::from_json(self.part(&objects)).agrees(&view, skip) {
            Agreement::Same { .. } => Some(true),
            Agreement::Differs => Some(false),
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
                let from_snap = self.entries.get(o).and_then(|es| {
                    es.iter().find_map(|(_, e)| {
                        let m = &e["message"];
                        let id = match m["kind"].as_str()? {
                            "execute" => m["data"]["task"]["id"].as_str()?,
                            _ => m["data"]["promise"]["id"].as_str()?,
                        };
                        Some(id.to_string())
                    })
                });
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
        for c in &self.index.components {
            out.insert(c.to_string(), Value::Array(Vec::new()));
        }
        for o in objects {
            for (c, e) in self.entries.get(o).into_iter().flatten() {
                if let Some(Value::Array(a)) = out.get_mut(*c) {
                    a.push((*e).clone());
                }
            }
        }
        Value::Object(out)
    }
}

/// The objects whose hash differs between two indexes, or that only one
/// of them holds.
fn changed(prev: &SnapIndex, next: &SnapIndex) -> BTreeSet<Object> {
    let mut out: BTreeSet<Object> = next
        .objects
        .iter()
        .filter(|(o, h)| prev.objects.get(*o) != Some(*h))
        .map(|(o, _)| o.clone())
        .collect();
    out.extend(
        prev.objects
            .keys()
            .filter(|o| !next.objects.contains_key(*o))
            .cloned(),
    );
    out
}

type Entries<'a> = HashMap<Object, Vec<(&'static str, &'a Value)>>;

/// Index a snapshot; `false` when some entry names no object.
fn index(data: &Value) -> (SnapIndex, Entries<'_>, bool) {
    let mut idx = SnapIndex::default();
    let mut entries: Entries<'_> = HashMap::new();
    let mut ok = true;
    for c in COMPONENTS {
        let Some(list) = data.get(c.name).and_then(Value::as_array) else {
            continue;
        };
        idx.components.insert(c.name);
        for e in list {
            let Some(o) = owner(c.name, e) else {
                ok = false;
                continue;
            };
            let mut h = Fnv::default();
            h.write(c.name.as_bytes());
            hash_value(e, &mut h);
            let sum = idx.objects.entry(o.clone()).or_insert(0);
            *sum = sum.wrapping_add(mix(h.finish()));
            entries.entry(o).or_default().push((c.name, e));
        }
    }
    (idx, entries, ok)
}

/// The object an entry of `component` belongs to.
fn owner(component: &str, e: &Value) -> Option<Object> {
    let s = |v: &Value| v.as_str().map(str::to_string);
    Some(match component {
        "promises" | "promiseTimeouts" | "listeners" => Object::Promise(s(&e["id"])?),
        "callbacks" => Object::Promise(s(&e["awaited"])?),
        "tasks" | "taskTimeouts" | "resumes" => Object::Task(s(&e["id"])?),
        "schedules" | "scheduleTimeouts" => Object::Schedule(s(&e["id"])?),
        "messages" => {
            let m = &e["message"];
            match m["kind"].as_str()? {
                "execute" => Object::Message(s(&m["data"]["task"]["id"])?),
                _ => Object::Message(format!(
                    "{}:notify:{}",
                    m["data"]["promise"]["id"].as_str()?,
                    e["address"].as_str()?
                )),
            }
        }
        _ => return None,
    })
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

/// FNV-1a, 64 bit: a fixed hasher (the index lives in one process, but a
/// fixed one keeps figures the same from run to run).
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The splitmix64 finaliser: spreads every bit before hashes are summed.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hash a JSON value as the comparison sees it: an object's fields in any
/// order, a `null` field as an absent one.
fn hash_value(v: &Value, h: &mut Fnv) {
    match v {
        Value::Null => h.write_u8(0),
        Value::Bool(b) => h.write_u8(1 + u8::from(*b)),
        Value::Number(n) => {
            h.write_u8(3);
            match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => h.write_u64(u),
                (None, Some(i)) => h.write_i64(i),
                _ => h.write_u64(n.as_f64().unwrap_or(0.0).to_bits()),
            }
        }
        Value::String(s) => {
            h.write_u8(4);
            h.write(s.as_bytes());
            h.write_u8(0xff);
        }
        Value::Array(a) => {
            h.write_u8(5);
            h.write_usize(a.len());
            for x in a {
                hash_value(x, h);
            }
        }
        Value::Object(o) => {
            let mut sum = 0u64;
            for (k, x) in o.iter().filter(|(_, x)| !x.is_null()) {
                let mut f = Fnv::default();
                f.write(k.as_bytes());
                f.write_u8(0xff);
                hash_value(x, &mut f);
                sum = sum.wrapping_add(mix(f.finish()));
            }
            h.write_u8(6);
            h.write_u64(sum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn snap(promises: Value) -> Value {
        json!({"promises": promises, "promiseTimeouts": [], "callbacks": [], "listeners": [],
               "tasks": [], "taskTimeouts": [], "messages": [], "schedules": [],
               "scheduleTimeouts": [], "resumes": []})
    }

    #[test]
    fn an_object_the_target_changed_is_named_whatever_the_field_order() {
        let a = snap(json!([{"id": "a", "state": "pending"}, {"id": "b", "state": "pending"}]));
        let same = snap(
            json!([{"state": "pending", "id": "b", "x": null}, {"id": "a", "state": "pending"}]),
        );
        let b = snap(json!([{"id": "a", "state": "resolved"}, {"id": "c", "state": "pending"}]));
        let (ia, _, ok) = index(&a);
        assert!(ok);
        assert!(changed(&ia, &index(&same).0).is_empty());
        let got = changed(&ia, &index(&b).0);
        let want: BTreeSet<Object> = ["a", "b", "c"]
            .into_iter()
            .map(|i| Object::Promise(i.into()))
            .collect();
        assert_eq!(got, want, "changed, gone and new");
    }

    #[test]
    fn an_entry_that_names_no_object_compares_the_whole_snapshot() {
        let prev = index(&snap(json!([]))).0;
        let bad = snap(json!([{"state": "pending"}]));
        assert!(Expected::new(&bad, Some(&prev)).changed.is_none());
        let good = snap(json!([]));
        assert!(Expected::new(&good, Some(&prev)).changed.is_some());
    }
}
