//! Wire records and enums of `spec/01-objects/types.lean`.
//!
//! `Tags` is a `List (String × String)` in the Lean, read with `find?` (first
//! match wins). On the wire tags are a JSON object, so duplicate keys cannot
//! be expressed; a `BTreeMap` is the faithful image of every list the wire can
//! produce, and it keeps iteration deterministic.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Times are Unix milliseconds. The Lean uses `Nat`; `u64` covers every value
/// the wire (`i64 ≥ 0`) can carry. Sums saturate instead of overflowing.
pub type Time = u64;

/// `Tags := List (String × String)`, keyed (see the module doc), and
/// shared: a promise's tags and its values' headers are copied into every
/// record, response, journal entry and request about it, and written only
/// where they are made, so a copy shares them (one count, no allocation)
/// and a write copies them first ([`Arc::make_mut`]). It reads as the
/// `BTreeMap` it holds.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tags(Arc<BTreeMap<String, String>>);

impl Tags {
    /// No tags.
    pub fn new() -> Tags {
        Tags::default()
    }

    /// Set `key` to `value`; the value it replaces.
    pub fn insert(&mut self, key: String, value: String) -> Option<String> {
        Arc::make_mut(&mut self.0).insert(key, value)
    }

    /// Drop `key`; the value it had.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        Arc::make_mut(&mut self.0).remove(key)
    }

    /// The map, to write in place.
    pub fn make_mut(&mut self) -> &mut BTreeMap<String, String> {
        Arc::make_mut(&mut self.0)
    }
}

impl std::ops::Deref for Tags {
    type Target = BTreeMap<String, String>;
    fn deref(&self) -> &BTreeMap<String, String> {
        &self.0
    }
}

impl std::fmt::Debug for Tags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl From<BTreeMap<String, String>> for Tags {
    fn from(m: BTreeMap<String, String>) -> Tags {
        Tags(Arc::new(m))
    }
}

impl<const N: usize> From<[(String, String); N]> for Tags {
    fn from(a: [(String, String); N]) -> Tags {
        Tags(Arc::new(a.into()))
    }
}

impl FromIterator<(String, String)> for Tags {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(it: I) -> Tags {
        Tags(Arc::new(it.into_iter().collect()))
    }
}

impl<'a> IntoIterator for &'a Tags {
    type Item = (&'a String, &'a String);
    type IntoIter = std::collections::btree_map::Iter<'a, String, String>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl Serialize for Tags {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Tags {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Tags, D::Error> {
        BTreeMap::deserialize(d).map(Tags::from)
    }
}

/// `Value`: headers and an optional data string.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Value {
    /// `headers : Tags := []`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: Tags,
    /// `data : Option String := none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

/// `PromiseState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromiseState {
    /// Not yet settled.
    Pending,
    /// Settled successfully (also: a timer promise past its deadline).
    Resolved,
    /// Rejected by a caller.
    Rejected,
    /// Rejected administratively.
    RejectedCanceled,
    /// Rejected by its deadline passing.
    RejectedTimedout,
}

impl PromiseState {
    /// The wire spelling (`rejected_timedout` …).
    pub fn as_str(self) -> &'static str {
        match self {
            PromiseState::Pending => "pending",
            PromiseState::Resolved => "resolved",
            PromiseState::Rejected => "rejected",
            PromiseState::RejectedCanceled => "rejected_canceled",
            PromiseState::RejectedTimedout => "rejected_timedout",
        }
    }
}

/// `TaskState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Claimable.
    Pending,
    /// Held under a lease.
    Acquired,
    /// Parked on awaited promises.
    Suspended,
    /// Taken out of circulation by `task.halt`.
    Halted,
    /// Terminal.
    Fulfilled,
}

impl TaskState {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Pending => "pending",
            TaskState::Acquired => "acquired",
            TaskState::Suspended => "suspended",
            TaskState::Halted => "halted",
            TaskState::Fulfilled => "fulfilled",
        }
    }
}

/// `PromiseRecord`: the wire view of a promise.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromiseRecord {
    /// Promise id.
    pub id: String,
    /// Current state.
    pub state: PromiseState,
    /// Creation parameter.
    pub param: Value,
    /// Settlement value.
    #[serde(default)]
    pub value: Value,
    /// Tags.
    #[serde(default)]
    pub tags: Tags,
    /// Deadline.
    pub timeout_at: Time,
    /// Creation time.
    pub created_at: Time,
    /// Settlement time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled_at: Option<Time>,
}

/// `TaskRecord`: the wire view of a task (`resumes` is a count).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TaskRecord {
    /// Task id (equal to its promise id).
    pub id: String,
    /// Current state.
    pub state: TaskState,
    /// Fencing token.
    pub version: u64,
    /// Number of buffered resumes.
    #[serde(default)]
    pub resumes: u64,
    /// Lease deadline length (ms) while acquired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
    /// Lease holder while acquired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<String>,
}

/// `Schedule`: stored and sent as-is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    /// Schedule id.
    pub id: String,
    /// Cron expression.
    pub cron: String,
    /// Promise id template (`{{.id}}`, `{{.timestamp}}`).
    pub promise_id: String,
    /// Relative timeout of each created promise.
    pub promise_timeout: u64,
    /// Param of each created promise.
    #[serde(default)]
    pub promise_param: Value,
    /// Tags of each created promise.
    #[serde(default)]
    pub promise_tags: Tags,
    /// Next fire time.
    pub next_run_at: Time,
    /// Last fire time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run_at: Option<Time>,
    /// Creation time.
    pub created_at: Time,
}

#[cfg(test)]
mod tags_tests {
    use super::*;

    /// A copy shares the map until one of them writes: the writer copies
    /// first, so the other keeps what it had (a journal entry keeps the
    /// tags its promise had before a write).
    #[test]
    fn a_write_to_shared_tags_leaves_the_other_copy_as_it_was() {
        let mut a = Tags::from([("k".to_string(), "1".to_string())]);
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.0, &b.0), "a copy shares");
        a.insert("k".into(), "2".into());
        a.insert("l".into(), "3".into());
        assert_eq!(b.get("k").map(String::as_str), Some("1"));
        assert_eq!(b.len(), 1);
        assert_eq!(a.get("k").map(String::as_str), Some("2"));
        a.remove("l");
        a.make_mut().clear();
        assert!(a.is_empty() && !b.is_empty());
    }

    /// On the wire and in files, tags are the JSON object of their map.
    #[test]
    fn tags_read_and_write_as_their_map() {
        let m: BTreeMap<String, String> =
            [("a".into(), "x".into()), ("b".into(), "y".into())].into();
        let t = Tags::from(m.clone());
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, serde_json::to_string(&m).unwrap());
        assert_eq!(serde_json::from_str::<Tags>(&json).unwrap(), t);
        assert_eq!(format!("{t:?}"), format!("{m:?}"));
        assert_eq!((&t).into_iter().count(), 2);
        let pairs = t.iter().map(|(k, v)| (k.clone(), v.clone()));
        assert_eq!(pairs.collect::<Tags>(), t);
    }
}
