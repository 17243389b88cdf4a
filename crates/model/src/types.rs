//! Wire records and enums of `spec/01-objects/types.lean`.
//!
//! `Tags` is a `List (String × String)` in the Lean, read with `find?` (first
//! match wins). On the wire tags are a JSON object, so duplicate keys cannot
//! be expressed; a `BTreeMap` is the faithful image of every list the wire can
//! produce, and it keeps iteration deterministic.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Times are Unix milliseconds. The Lean uses `Nat`; `u64` covers every value
/// the wire (`i64 ≥ 0`) can carry. Sums saturate instead of overflowing.
pub type Time = u64;

/// `Tags := List (String × String)`, keyed (see the module doc).
pub type Tags = BTreeMap<String, String>;

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
