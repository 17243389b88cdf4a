//! The target's state as the barriers showed it, held per object, and a
//! barrier's snapshot as a change against the previous one ([`Delta`]).
//!
//! Every snapshot entry belongs to one **object** of the model: a promise
//! (its record, its timeout, the callbacks registered on it, its
//! listeners), a task (its record, its timeouts, its buffered resumes), a
//! schedule (its record, its timeout), an outbox entry (by the spec's
//! `OutboxEntry.key`). [`Shown`] holds each object's entries with an
//! order-independent hash of them. A run reads a whole snapshot at every
//! barrier (that is what `debug.snap` answers) but records only the
//! objects whose hash changed; the checker applies that delta to its own
//! [`Shown`], so a barrier costs it what changed, not the whole state
//! (reading, copying and hashing the whole snapshot at every barrier made
//! a history's check grow faster than its length).

use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hasher;

use serde_json::{Map, Value};

use model::view::COMPONENTS;

use super::history::Snapshot;

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

/// The kinds of [`Object`], as a delta's `changed` names them.
const KINDS: [&str; 4] = ["promise", "task", "schedule", "message"];

impl Object {
    fn kind(&self) -> &'static str {
        match self {
            Object::Promise(_) => KINDS[0],
            Object::Task(_) => KINDS[1],
            Object::Schedule(_) => KINDS[2],
            Object::Message(_) => KINDS[3],
        }
    }

    fn name(&self) -> &str {
        match self {
            Object::Promise(s) | Object::Task(s) | Object::Schedule(s) | Object::Message(s) => s,
        }
    }

    fn of_kind(kind: &str, name: String) -> Option<Object> {
        Some(match kind {
            "promise" => Object::Promise(name),
            "task" => Object::Task(name),
            "schedule" => Object::Schedule(name),
            "message" => Object::Message(name),
            _ => return None,
        })
    }
}

/// One object's entries, each with its component, and their hash.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Held {
    /// The entries.
    pub entries: Vec<(&'static str, Value)>,
    /// The sum of the entries' hashes (order-independent).
    hash: u64,
}

impl Held {
    fn push(&mut self, component: &'static str, e: Value) {
        self.hash = self.hash.wrapping_add(entry_hash(component, &e));
        self.entries.push((component, e));
    }
}

/// The target's state as a barrier showed it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shown {
    /// The components the snapshot holds (as lists).
    components: BTreeSet<&'static str>,
    /// Per object, its entries.
    objects: BTreeMap<Object, Held>,
    /// The snapshot as read, when some of it names no object (an entry no
    /// object owns, a field that is not a component, a component that is
    /// not a list): then it is compared whole, and no delta is taken
    /// against it.
    raw: Option<Value>,
}

/// The objects added, changed or removed between two barriers' snapshots,
/// each with all its new entries (none: removed).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Delta {
    /// Per object, its entries now.
    pub objects: BTreeMap<Object, Vec<(&'static str, Value)>>,
}

impl Shown {
    /// A snapshot `data`, indexed by object.
    pub fn of(data: Value) -> Shown {
        let mut s = Shown::default();
        let Value::Object(map) = data else {
            s.raw = Some(data);
            return s;
        };
        let whole = map.iter().any(|(name, list)| {
            let c = COMPONENTS.iter().find(|c| c.name == name);
            match (c, list.as_array()) {
                (Some(c), Some(list)) => list.iter().any(|e| owner(c.name, e).is_none()),
                _ => true,
            }
        });
        if whole {
            s.raw = Some(Value::Object(map.clone()));
        }
        for (name, list) in map {
            let (Some(c), Value::Array(list)) = (COMPONENTS.iter().find(|c| c.name == name), list)
            else {
                continue;
            };
            s.components.insert(c.name);
            for e in list {
                if let Some(o) = owner(c.name, &e) {
                    s.objects.entry(o).or_default().push(c.name, e);
                }
            }
        }
        s
    }

    /// Whether it can be compared object by object (and a delta taken
    /// against it).
    pub fn by_object(&self) -> bool {
        self.raw.is_none()
    }

    /// The components the snapshot holds.
    pub fn components(&self) -> &BTreeSet<&'static str> {
        &self.components
    }

    /// The entries of object `o` (none when the target does not hold it).
    pub fn entries(&self, o: &Object) -> &[(&'static str, Value)] {
        self.objects.get(o).map_or(&[], |h| &h.entries)
    }

    /// The objects it holds.
    pub fn objects(&self) -> impl Iterator<Item = &Object> {
        self.objects.keys()
    }

    /// Its entries, all components.
    pub fn len(&self) -> usize {
        self.objects.values().map(|h| h.entries.len()).sum()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The snapshot's `data`, whole (entries grouped by object: the
    /// comparison reads a component as a multiset).
    pub fn to_json(&self) -> Value {
        if let Some(raw) = &self.raw {
            return raw.clone();
        }
        let mut out = Map::new();
        for c in &self.components {
            out.insert(c.to_string(), Value::Array(Vec::new()));
        }
        for h in self.objects.values() {
            for (c, e) in &h.entries {
                if let Some(Value::Array(a)) = out.get_mut(*c) {
                    a.push(e.clone());
                }
            }
        }
        Value::Object(out)
    }

    /// The change from `self` to `next`; `None` when one of them is not
    /// held object by object or their components differ (then `next` is
    /// recorded whole).
    pub fn delta_to(&self, next: &Shown) -> Option<Delta> {
        if !self.by_object() || !next.by_object() || self.components != next.components {
            return None;
        }
        let mut d = Delta::default();
        for (o, h) in &next.objects {
            if self.objects.get(o).map(|p| p.hash) != Some(h.hash) {
                d.objects.insert(o.clone(), h.entries.clone());
            }
        }
        for o in self.objects.keys() {
            if !next.objects.contains_key(o) {
                d.objects.insert(o.clone(), Vec::new());
            }
        }
        Some(d)
    }

    /// The objects whose entries differ between `self` and `next` (by
    /// hash); `None` when they cannot be compared object by object.
    pub fn changed_to(&self, next: &Shown) -> Option<BTreeSet<Object>> {
        if !self.by_object() || !next.by_object() || self.components != next.components {
            return None;
        }
        let hash = |s: &Shown, o: &Object| s.objects.get(o).map(|h| h.hash);
        Some(
            next.objects
                .keys()
                .filter(|o| hash(self, o) != hash(next, o))
                .chain(
                    self.objects
                        .keys()
                        .filter(|o| !next.objects.contains_key(*o)),
                )
                .cloned()
                .collect(),
        )
    }

    /// Follow one barrier's recorded snapshot: `held` (the state the
    /// previous barrier showed, if it had a snapshot) becomes this one's.
    /// The objects it shows otherwise (`None`: compare whole), or why a
    /// delta cannot be followed.
    pub fn follow(
        held: &mut Option<Shown>,
        snap: &Snapshot,
    ) -> Result<Option<BTreeSet<Object>>, String> {
        match snap {
            Snapshot::Full(data) => {
                let next = Shown::of(data.clone());
                let changed = held.as_ref().and_then(|p| p.changed_to(&next));
                *held = Some(next);
                Ok(changed)
            }
            Snapshot::Delta(d) => {
                let shown = held.as_mut().ok_or("a delta without a previous snapshot")?;
                shown.apply(d).map(Some)
            }
        }
    }

    /// Apply `d`: the objects it names take its entries. The objects whose
    /// entries changed are returned (a delta may name an unchanged one).
    /// `Err`: `self` is not held object by object, or an entry of `d` is
    /// of a component the snapshot does not hold.
    pub fn apply(&mut self, d: &Delta) -> Result<BTreeSet<Object>, String> {
        if !self.by_object() {
            return Err("a delta against a snapshot compared whole".into());
        }
        let mut changed = BTreeSet::new();
        for (o, entries) in &d.objects {
            let mut h = Held::default();
            for (c, e) in entries {
                if !self.components.contains(c) {
                    return Err(format!("a delta entry of `{c}`, not in the snapshot"));
                }
                h.push(c, e.clone());
            }
            let before = self.objects.get(o).map(|p| p.hash);
            let after = (!h.entries.is_empty()).then_some(h.hash);
            if before != after {
                changed.insert(o.clone());
            }
            if h.entries.is_empty() {
                self.objects.remove(o);
            } else {
                self.objects.insert(o.clone(), h);
            }
        }
        Ok(changed)
    }
}

impl Delta {
    /// The delta's JSON: `changed`, the objects it names by kind
    /// (`promise`, `task`, `schedule`, `message`: lists of ids or keys),
    /// and `entries`, their entries now in the snapshot's shape (only the
    /// components that hold some).
    pub fn to_json(&self) -> Value {
        let mut changed = Map::new();
        let mut entries = Map::new();
        for (o, es) in &self.objects {
            let list = changed
                .entry(o.kind())
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(a) = list {
                a.push(Value::String(o.name().to_string()));
            }
            for (c, e) in es {
                let list = entries
                    .entry(c.to_string())
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(a) = list {
                    a.push(e.clone());
                }
            }
        }
        serde_json::json!({"changed": changed, "entries": entries})
    }

    /// Read a delta's JSON; every entry must belong to an object `changed`
    /// names.
    pub fn from_json(v: &Value) -> Result<Delta, String> {
        let mut d = Delta::default();
        for (kind, names) in lists(v, "changed")? {
            for n in names {
                let n = n
                    .as_str()
                    .ok_or_else(|| format!("delta: `changed.{kind}` holds a non-string"))?;
                let o = Object::of_kind(kind, n.to_string())
                    .ok_or_else(|| format!("delta: unknown object kind `{kind}`"))?;
                d.objects.insert(o, Vec::new());
            }
        }
        for (name, list) in lists(v, "entries")? {
            let c = COMPONENTS
                .iter()
                .find(|c| c.name == name)
                .ok_or_else(|| format!("delta: unknown component `{name}`"))?;
            for e in list {
                let o = owner(c.name, e)
                    .ok_or_else(|| format!("delta: an entry of `{name}` names no object"))?;
                d.objects
                    .get_mut(&o)
                    .ok_or_else(|| {
                        format!("delta: an entry of `{name}` of an object not in `changed`")
                    })?
                    .push((c.name, e.clone()));
            }
        }
        Ok(d)
    }
}

/// The field `field` of a delta: an object of lists, each by its name.
fn lists<'a>(v: &'a Value, field: &str) -> Result<Vec<(&'a String, &'a Vec<Value>)>, String> {
    let m = v
        .get(field)
        .and_then(Value::as_object)
        .ok_or_else(|| format!("a delta without a `{field}` object"))?;
    m.iter()
        .map(|(k, l)| {
            l.as_array()
                .map(|l| (k, l))
                .ok_or_else(|| format!("delta: `{field}.{k}` is not a list"))
        })
        .collect()
}

/// What a run records at each barrier: the first snapshot whole, then
/// each as a delta against the one before (whole again when no delta can
/// be taken: [`Shown::delta_to`]).
#[derive(Debug, Default)]
pub struct Recorder {
    prev: Option<Shown>,
}

impl Recorder {
    /// The record of a barrier whose snapshot is `data`.
    pub fn record(&mut self, data: Value) -> Snapshot {
        let next = Shown::of(data);
        let snap = match self.prev.as_ref().and_then(|p| p.delta_to(&next)) {
            Some(d) => Snapshot::Delta(d),
            None => Snapshot::Full(next.to_json()),
        };
        self.prev = Some(next);
        snap
    }

    /// A barrier without a snapshot: the next one is recorded whole.
    pub fn forget(&mut self) {
        self.prev = None;
    }
}

/// The object an entry of `component` belongs to.
pub fn owner(component: &str, e: &Value) -> Option<Object> {
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

/// The hash of one entry of `component`, spread for summing.
fn entry_hash(component: &str, e: &Value) -> u64 {
    let mut h = Fnv::default();
    h.write(component.as_bytes());
    hash_value(e, &mut h);
    mix(h.finish())
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

    fn promises(ids: &[&str]) -> BTreeSet<Object> {
        ids.iter().map(|i| Object::Promise(i.to_string())).collect()
    }

    #[test]
    fn an_object_the_target_changed_is_named_whatever_the_field_order() {
        let a = Shown::of(snap(
            json!([{"id": "a", "state": "pending"}, {"id": "b", "state": "pending"}]),
        ));
        let same = Shown::of(snap(
            json!([{"state": "pending", "id": "b", "x": null}, {"id": "a", "state": "pending"}]),
        ));
        let b = Shown::of(snap(
            json!([{"id": "a", "state": "resolved"}, {"id": "c", "state": "pending"}]),
        ));
        assert!(a.by_object());
        assert_eq!(a.changed_to(&same), Some(BTreeSet::new()));
        assert_eq!(a.changed_to(&b), Some(promises(&["a", "b", "c"])));
    }

    #[test]
    fn a_delta_survives_its_json_and_rebuilds_the_next_snapshot() {
        let a = Shown::of(snap(
            json!([{"id": "a", "state": "pending"}, {"id": "b", "state": "pending"}]),
        ));
        let mut next = snap(json!([{"id": "a", "state": "resolved"}]));
        next["listeners"] = json!([{"id": "a", "address": "x"}]);
        let b = Shown::of(next);
        let d = a.delta_to(&b).expect("both by object");
        assert_eq!(Delta::from_json(&d.to_json()), Ok(d.clone()));
        let mut rebuilt = a.clone();
        assert_eq!(rebuilt.apply(&d), Ok(promises(&["a", "b"])));
        assert_eq!(rebuilt, b);
    }

    #[test]
    fn an_entry_that_names_no_object_is_held_whole_and_takes_no_delta() {
        let prev = Shown::of(snap(json!([])));
        let bad = Shown::of(snap(json!([{"state": "pending"}])));
        assert!(!bad.by_object());
        assert!(prev.delta_to(&bad).is_none());
        assert_eq!(bad.to_json(), snap(json!([{"state": "pending"}])));
        let delta = json!({"changed": {}, "entries": {"promises": [{"id": "z"}]}});
        assert!(
            Delta::from_json(&delta).is_err(),
            "an entry of no named object"
        );
    }
}
