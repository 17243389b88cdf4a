//! Internal objects, the server state and its effects: `spec/01-objects/state.lean`.
//!
//! The Lean keeps every component as a list and scans it. Here each component
//! is keyed (`FxHashMap`, never iterated where order is observable), and two
//! indexes make every effect independent of the state's size:
//! - `awaiting`: awaiter id → the awaited promises whose `callbacks` hold it,
//!   so the settlement scrub touches only the promises it must;
//! - `due`: the armed timeouts ordered by deadline, so `tick` finds what is
//!   due without a scan.
//!
//! Every mutation goes through one of the effects below, which also records
//! the previous value in an optional undo journal. The runner uses
//! [`State::checkpoint`] / [`State::rollback`] to try the schedules of
//! internal transitions the spec allows without cloning the whole state.
//! The same journal says which keys a step wrote ([`State::writes_since`],
//! replayed blindly by [`State::apply_writes`]: a non-atomic handler's
//! last-writer-wins write) and fingerprints what changed since a mark
//! ([`State::fingerprint_since`]), in [`writes`].

//! A reader that keeps its own index of the state (the generator's sorted
//! pools) asks for a change feed instead ([`State::watch`]): the ids of the
//! promises and tasks each effect wrote, so it re-reads only those.

mod writes;

pub use writes::Writes;

use std::collections::BTreeSet;
use std::sync::Arc;

/// The keyed tables: the state is looked up by id several times a step, and
/// std's SipHash (built to resist adversarial keys, which a harness's own
/// model never sees) was a few percent of an aimed step's CPU.
use rustc_hash::FxHashMap;

use crate::types::{
    PromiseRecord, PromiseState, Schedule, Tags, TaskRecord, TaskState, Time, Value,
};

/// `PromiseObject`: a promise with its internal `callbacks` and `listeners`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PromiseObject {
    /// Promise id.
    pub id: String,
    /// Current state.
    pub state: PromiseState,
    /// Parameter.
    pub param: Value,
    /// Settlement value.
    pub value: Value,
    /// Tags.
    pub tags: Tags,
    /// Deadline.
    pub timeout_at: Time,
    /// Creation time.
    pub created_at: Time,
    /// Settlement time.
    pub settled_at: Option<Time>,
    /// Awaiter promise ids to resume on settlement (deduplicated, in order).
    pub callbacks: Vec<String>,
    /// Addresses to send `unblock` to on settlement (deduplicated, in order).
    pub listeners: Vec<String>,
}

impl PromiseObject {
    /// `PromiseObject.toRecord`: strips callbacks and listeners.
    pub fn to_record(&self) -> PromiseRecord {
        PromiseRecord {
            id: self.id.clone(),
            state: self.state,
            param: self.param.clone(),
            value: self.value.clone(),
            tags: self.tags.clone(),
            timeout_at: self.timeout_at,
            created_at: self.created_at,
            settled_at: self.settled_at,
        }
    }

    /// `PromiseObject.isTimer`.
    pub fn is_timer(&self) -> bool {
        is_timer(&self.tags)
    }

    /// `PromiseObject.external`: has a target or is a timer.
    pub fn external(&self) -> bool {
        self.tags.contains_key(TARGET) || self.is_timer()
    }

    /// `resonate:target`, or `""` when absent (`(get? …).getD ""`).
    pub fn target(&self) -> &str {
        self.tags.get(TARGET).map(String::as_str).unwrap_or("")
    }

    /// Pending and not past its deadline at `now`.
    pub fn is_live(&self, now: Time) -> bool {
        self.state == PromiseState::Pending && self.timeout_at > now
    }

    /// The state a deadline settles this promise into: `resolved` for a
    /// timer, `rejectedTimedout` otherwise.
    pub fn timeout_state(&self) -> PromiseState {
        timeout_state(&self.tags)
    }

    /// The read-time projection of a pending promise past its deadline
    /// (`{ p with state := …, settledAt := some p.timeoutAt }`), as a record.
    /// Writes nothing.
    pub fn projected_record(&self) -> PromiseRecord {
        let mut r = self.to_record();
        r.state = self.timeout_state();
        r.settled_at = Some(self.timeout_at);
        r
    }

    /// `PromiseObject.addCallback`: append unless present.
    pub fn add_callback(&mut self, awaiter: &str) {
        if !self.callbacks.iter().any(|c| c == awaiter) {
            self.callbacks.push(awaiter.to_string());
        }
    }

    /// `PromiseObject.addListener`: append unless present.
    pub fn add_listener(&mut self, address: &str) {
        if !self.listeners.iter().any(|l| l == address) {
            self.listeners.push(address.to_string());
        }
    }
}

/// The tag naming a promise's task address.
pub const TARGET: &str = "resonate:target";
/// The tag marking a timer promise (value `"true"`).
pub const TIMER: &str = "resonate:timer";
/// The tag delaying a task's first dispatch until an absolute time.
pub const DELAY: &str = "resonate:delay";

/// `Tags.isTimer`.
pub fn is_timer(tags: &Tags) -> bool {
    tags.get(TIMER).map(String::as_str) == Some("true")
}

/// Settled state on deadline: `resolved` for timers, else `rejectedTimedout`.
pub fn timeout_state(tags: &Tags) -> PromiseState {
    if is_timer(tags) {
        PromiseState::Resolved
    } else {
        PromiseState::RejectedTimedout
    }
}

/// `TaskObject`: a task with its internal `resumes` ids.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TaskObject {
    /// Task id (= promise id).
    pub id: String,
    /// Current state.
    pub state: TaskState,
    /// Fencing token.
    pub version: u64,
    /// Lease length while acquired.
    pub ttl: Option<u64>,
    /// Lease holder while acquired.
    pub pid: Option<String>,
    /// Ids of the awaited promises whose settlement is buffered.
    pub resumes: Vec<String>,
}

impl TaskObject {
    /// A task with no lease and no resumes.
    pub fn new(id: &str, state: TaskState, version: u64) -> Self {
        TaskObject {
            id: id.to_string(),
            state,
            version,
            ttl: None,
            pid: None,
            resumes: Vec::new(),
        }
    }

    /// `TaskObject.toRecord`: `resumes` becomes a count.
    pub fn to_record(&self) -> TaskRecord {
        TaskRecord {
            id: self.id.clone(),
            state: self.state,
            version: self.version,
            resumes: self.resumes.len() as u64,
            ttl: self.ttl,
            pid: self.pid.clone(),
        }
    }
}

/// `Message`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Message {
    /// Dispatch task `task_id` at `version` to a worker.
    Execute {
        /// Task id.
        task_id: String,
        /// The task's current version (not bumped by the enqueue).
        version: u64,
    },
    /// Tell a listener a promise settled.
    Unblock {
        /// The settled promise.
        promise: PromiseRecord,
    },
}

/// `OutboxEntry`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OutboxEntry {
    /// Delivery address.
    pub address: String,
    /// Payload.
    pub message: Message,
}

impl OutboxEntry {
    /// `OutboxEntry.key`: the task id for `execute`,
    /// `"{promiseId}:notify:{address}"` for `unblock`.
    pub fn key(&self) -> String {
        match &self.message {
            Message::Execute { task_id, .. } => task_id.clone(),
            Message::Unblock { promise } => format!("{}:notify:{}", promise.id, self.address),
        }
    }
}

/// `ServerConfig`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ServerConfig {
    /// Delay before a pending task's `execute` is re-sent (ms).
    pub retry_timeout: u64,
}

/// The retry timeout of the spec-exact reference configuration (ms): the
/// one default every part of the project uses.
pub const DEFAULT_RETRY_TIMEOUT: u64 = 5000;

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            retry_timeout: DEFAULT_RETRY_TIMEOUT,
        }
    }
}

/// Task timeout kinds (`TaskTimeout.kind`).
pub const RETRY: usize = 0;
/// Lease expiry kind.
pub const LEASE: usize = 1;

/// One undo record: the previous value under a key.
#[derive(Clone, Debug)]
enum Undo {
    Promise(String, Option<PromiseObject>),
    Task(String, Option<TaskObject>),
    Schedule(String, Option<Schedule>),
    PromiseTimeout(String, Option<Time>),
    TaskTimeout(String, [Option<Time>; 2]),
    ScheduleTimeout(String, Option<Time>),
    Outbox(String, Option<OutboxEntry>),
}

/// An object an effect wrote (or a rollback restored), named by component
/// and id: what [`State::take_touched`] reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Touched {
    /// The promise of this id was created, changed or removed.
    Promise(String),
    /// The task of this id was created, changed or removed.
    Task(String),
}

/// The change feed of a watched state. A clone does not watch: a copy of
/// the generator's model handed to someone else must not fill a feed no
/// one drains.
#[derive(Debug, Default)]
struct Feed(Option<Vec<Touched>>);

impl Clone for Feed {
    fn clone(&self) -> Feed {
        Feed(None)
    }
}

impl Feed {
    fn push(&mut self, t: impl FnOnce() -> Touched) {
        if let Some(v) = self.0.as_mut() {
            v.push(t());
        }
    }
}

/// A keyed deadline table with an ordered index of `(deadline, id)`. The
/// table and the index share one allocation of each id: a timer is armed,
/// cleared and re-armed by every effect and every rollback of a trial, and
/// copying its id twice each time was most of the cost of arming it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deadlines {
    by_id: FxHashMap<Arc<str>, Time>,
    due: BTreeSet<(Time, Arc<str>)>,
}

impl Deadlines {
    /// The deadline armed for `id`.
    pub fn get(&self, id: &str) -> Option<Time> {
        self.by_id.get(id).copied()
    }

    /// Arm or clear `id`, returning the previous deadline. Allocates the
    /// id only for a new key.
    fn put(&mut self, id: &str, at: Option<Time>) -> Option<Time> {
        let (key, prev) = match self.by_id.get_key_value(id) {
            Some((k, t)) => (k.clone(), Some(*t)),
            None if at.is_none() => return None,
            None => (Arc::from(id), None),
        };
        if prev == at {
            return prev;
        }
        match at {
            Some(t) => {
                self.by_id.insert(key.clone(), t);
            }
            None => {
                self.by_id.remove(id);
            }
        }
        if let Some(p) = prev {
            self.due.remove(&(p, key.clone()));
        }
        if let Some(t) = at {
            self.due.insert((t, key));
        }
        prev
    }

    /// Entries with deadline ≤ `now`, earliest first (ties by id).
    pub fn due(&self, now: Time) -> impl Iterator<Item = (Time, &str)> {
        self.due
            .iter()
            .take_while(move |(t, _)| *t <= now)
            .map(|(t, id)| (*t, &**id))
    }

    /// Entries with `from ≤ deadline ≤ until`, earliest first (ties by
    /// id): a window of the ordered index, read without a scan.
    pub fn within(&self, from: Time, until: Time) -> impl Iterator<Item = (Time, &str)> {
        use std::ops::Bound::{Excluded, Included, Unbounded};
        // The least id, shared: a bound is a key, and a fresh `Arc` would
        // allocate on every window the generator reads.
        static LEAST: std::sync::LazyLock<Arc<str>> = std::sync::LazyLock::new(|| Arc::from(""));
        let hi = match until.checked_add(1) {
            Some(h) => Excluded((h, LEAST.clone())),
            None => Unbounded,
        };
        (from <= until)
            .then(|| self.due.range((Included((from, LEAST.clone())), hi)))
            .into_iter()
            .flatten()
            .map(|(t, id)| (*t, &**id))
    }

    /// Every entry, ordered by id.
    pub fn sorted(&self) -> Vec<(&str, Time)> {
        let mut v: Vec<_> = self.by_id.iter().map(|(k, t)| (&**k, *t)).collect();
        v.sort();
        v
    }

    /// Number of armed entries.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// No armed entries.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

/// `ServerState`.
#[derive(Clone, Debug, Default)]
pub struct State {
    /// `config`.
    pub config: ServerConfig,
    promises: FxHashMap<String, PromiseObject>,
    /// awaiter id → ids of the promises whose `callbacks` contain it.
    awaiting: FxHashMap<String, BTreeSet<String>>,
    tasks: FxHashMap<String, TaskObject>,
    schedules: FxHashMap<String, Schedule>,
    promise_timeouts: Deadlines,
    /// Indexed by kind: `RETRY` (0) and `LEASE` (1).
    task_timeouts: [Deadlines; 2],
    schedule_timeouts: Deadlines,
    outbox: FxHashMap<String, OutboxEntry>,
    journal: Option<Vec<Undo>>,
    touched: Feed,
}

/// A position in the undo journal, from [`State::checkpoint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mark(usize);

impl State {
    /// `ServerState.init` with a given config.
    pub fn new(config: ServerConfig) -> Self {
        State {
            config,
            ..State::default()
        }
    }

    // ----- journal -----

    /// Start (or continue) journaling and return the current position.
    pub fn checkpoint(&mut self) -> Mark {
        Mark(self.journal.get_or_insert_with(Vec::new).len())
    }

    /// Undo every effect since `mark`.
    pub fn rollback(&mut self, mark: Mark) {
        let mut entries = match self.journal.take() {
            Some(j) => j,
            None => return,
        };
        while entries.len() > mark.0 {
            match entries.pop().expect("length checked") {
                Undo::Promise(id, p) => {
                    self.put_promise(&id, p);
                }
                Undo::Task(id, t) => {
                    self.touched.push(|| Touched::Task(id.clone()));
                    let _ = match t {
                        Some(t) => self.tasks.insert(id, t),
                        None => self.tasks.remove(&id),
                    };
                }
                Undo::Schedule(id, s) => {
                    let _ = match s {
                        Some(s) => self.schedules.insert(id, s),
                        None => self.schedules.remove(&id),
                    };
                }
                Undo::PromiseTimeout(id, t) => {
                    self.promise_timeouts.put(&id, t);
                }
                Undo::TaskTimeout(id, ts) => {
                    for (kind, t) in ts.into_iter().enumerate() {
                        self.task_timeouts[kind].put(&id, t);
                    }
                }
                Undo::ScheduleTimeout(id, t) => {
                    self.schedule_timeouts.put(&id, t);
                }
                Undo::Outbox(key, e) => {
                    let _ = match e {
                        Some(e) => self.outbox.insert(key, e),
                        None => self.outbox.remove(&key),
                    };
                }
            }
        }
        self.journal = Some(entries);
    }

    /// Whether effects are being journaled (a checkpoint is open).
    pub fn journaling(&self) -> bool {
        self.journal.is_some()
    }

    /// Stop journaling and drop the journal.
    pub fn commit(&mut self) {
        self.journal = None;
    }

    // ----- change feed -----

    /// Start recording the id of every promise and task an effect writes
    /// (or a rollback restores), for [`State::take_touched`]; a
    /// [`crate::machine::Machine::trial`]'s writes, all undone, are not
    /// recorded.
    pub fn watch(&mut self) {
        self.touched.0.get_or_insert_with(Vec::new);
    }

    /// The objects written since the last call, in order and possibly
    /// repeated; empty when the state is not watched.
    pub fn take_touched(&mut self) -> Vec<Touched> {
        match self.touched.0.as_mut() {
            Some(v) => std::mem::take(v),
            None => Vec::new(),
        }
    }

    /// Stop recording into the change feed, handing back what it holds
    /// for [`State::unpause_feed`]: a trial's writes are all undone, so
    /// every object is as it was and the index need not read any again.
    pub(crate) fn pause_feed(&mut self) -> Option<Vec<Touched>> {
        self.touched.0.take()
    }

    /// Put back a feed [`State::pause_feed`] took.
    pub(crate) fn unpause_feed(&mut self, feed: Option<Vec<Touched>>) {
        debug_assert!(self.touched.0.is_none(), "a trial watched the state");
        self.touched.0 = feed;
    }

    fn record(&mut self, undo: impl FnOnce() -> Undo) {
        if let Some(j) = self.journal.as_mut() {
            j.push(undo());
        }
    }

    // ----- promises -----

    /// `getPromise`.
    pub fn get_promise(&self, id: &str) -> Option<&PromiseObject> {
        self.promises.get(id)
    }

    /// `setPromise`: keyed upsert. The object it replaces goes to the
    /// journal as it is (no copy), or is dropped when nothing journals.
    pub fn set_promise(&mut self, p: PromiseObject) {
        let id = p.id.clone();
        let prev = self.put_promise(&id, Some(p));
        self.record(|| Undo::Promise(id, prev));
    }

    /// Replace (or remove) a promise, keeping `awaiting` in step with the
    /// callbacks that change; returns the object replaced.
    fn put_promise(&mut self, id: &str, p: Option<PromiseObject>) -> Option<PromiseObject> {
        self.touched.push(|| Touched::Promise(id.to_string()));
        if let Some(p) = &p {
            for c in &p.callbacks {
                if let Some(set) = self.awaiting.get_mut(c) {
                    if !set.contains(id) {
                        set.insert(id.to_string());
                    }
                } else {
                    self.awaiting
                        .insert(c.clone(), BTreeSet::from([id.to_string()]));
                }
            }
        }
        // An existing key is kept (`insert` would allocate the id anew to
        // throw it away): most writes replace a promise.
        let old = match (p, self.promises.get_mut(id)) {
            (Some(p), Some(slot)) => Some(std::mem::replace(slot, p)),
            (Some(p), None) => self.promises.insert(id.to_string(), p),
            (None, _) => self.promises.remove(id),
        };
        let now = self.promises.get(id);
        if let Some(old) = &old {
            for c in &old.callbacks {
                let kept = now.is_some_and(|n| n.callbacks.contains(c));
                if !kept {
                    if let Some(set) = self.awaiting.get_mut(c) {
                        set.remove(id);
                        if set.is_empty() {
                            self.awaiting.remove(c);
                        }
                    }
                }
            }
        }
        old
    }

    /// The settlement scrub inlined at the three settlement sites: drop
    /// `settled` from the callbacks of every pending promise.
    pub fn scrub_callbacks(&mut self, settled: &str) {
        let holders: Vec<String> = match self.awaiting.get(settled) {
            Some(set) => set.iter().cloned().collect(),
            None => return,
        };
        for q in holders {
            let Some(p) = self.promises.get(&q) else {
                continue;
            };
            if p.state == PromiseState::Pending {
                let mut p = p.clone();
                p.callbacks.retain(|c| c != settled);
                self.set_promise(p);
            }
        }
    }

    /// The promises whose `callbacks` hold `awaiter` (what its settlement
    /// scrubs): the reverse of the callbacks, kept as an index.
    pub fn awaited_by(&self, awaiter: &str) -> impl Iterator<Item = &str> {
        self.awaiting
            .get(awaiter)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }

    /// Number of promises.
    pub fn promise_count(&self) -> usize {
        self.promises.len()
    }

    /// Every promise (unordered).
    pub fn promises(&self) -> impl Iterator<Item = &PromiseObject> {
        self.promises.values()
    }

    // ----- tasks -----

    /// `getTask`.
    pub fn get_task(&self, id: &str) -> Option<&TaskObject> {
        self.tasks.get(id)
    }

    /// `setTask`.
    pub fn set_task(&mut self, t: TaskObject) {
        self.touched.push(|| Touched::Task(t.id.clone()));
        // An existing key is kept, as in `put_promise`; the id is copied
        // for the journal only when there is one.
        match self.tasks.get_mut(t.id.as_str()) {
            Some(slot) => {
                let prev = std::mem::replace(slot, t);
                self.record(|| Undo::Task(prev.id.clone(), Some(prev)));
            }
            None => {
                self.record(|| Undo::Task(t.id.clone(), None));
                self.tasks.insert(t.id.clone(), t);
            }
        }
    }

    /// Every task (unordered).
    pub fn tasks(&self) -> impl Iterator<Item = &TaskObject> {
        self.tasks.values()
    }

    // ----- schedules -----

    /// `getSchedule`.
    pub fn get_schedule(&self, id: &str) -> Option<&Schedule> {
        self.schedules.get(id)
    }

    /// `setSchedule`.
    pub fn set_schedule(&mut self, s: Schedule) {
        let id = s.id.clone();
        let prev = self.schedules.insert(id.clone(), s);
        self.record(|| Undo::Schedule(id, prev));
    }

    /// `delSchedule`.
    pub fn del_schedule(&mut self, id: &str) {
        let prev = self.schedules.remove(id);
        if prev.is_some() {
            self.record(|| Undo::Schedule(id.to_string(), prev));
        }
    }

    /// Every schedule (unordered).
    pub fn schedules(&self) -> impl Iterator<Item = &Schedule> {
        self.schedules.values()
    }

    // ----- timeouts -----

    /// `setPromiseTimeout`.
    pub fn set_promise_timeout(&mut self, id: &str, at: Time) {
        let prev = self.promise_timeouts.put(id, Some(at));
        self.record(|| Undo::PromiseTimeout(id.to_string(), prev));
    }

    /// `delPromiseTimeout`.
    pub fn del_promise_timeout(&mut self, id: &str) {
        let prev = self.promise_timeouts.put(id, None);
        if prev.is_some() {
            self.record(|| Undo::PromiseTimeout(id.to_string(), prev));
        }
    }

    /// `setTaskTimeout`: replaces the entry of the same id and kind only.
    pub fn set_task_timeout(&mut self, id: &str, kind: usize, at: Time) {
        let prev = self.task_timeout_pair(id);
        self.task_timeouts[kind].put(id, Some(at));
        self.record(|| Undo::TaskTimeout(id.to_string(), prev));
    }

    /// `delTaskTimeout`: removes every kind for `id`.
    pub fn del_task_timeout(&mut self, id: &str) {
        let prev = self.task_timeout_pair(id);
        if prev.iter().any(Option::is_some) {
            self.task_timeouts[RETRY].put(id, None);
            self.task_timeouts[LEASE].put(id, None);
            self.record(|| Undo::TaskTimeout(id.to_string(), prev));
        }
    }

    fn task_timeout_pair(&self, id: &str) -> [Option<Time>; 2] {
        [
            self.task_timeouts[RETRY].get(id),
            self.task_timeouts[LEASE].get(id),
        ]
    }

    /// `setScheduleTimeout`.
    pub fn set_schedule_timeout(&mut self, id: &str, at: Time) {
        let prev = self.schedule_timeouts.put(id, Some(at));
        self.record(|| Undo::ScheduleTimeout(id.to_string(), prev));
    }

    /// `delScheduleTimeout`.
    pub fn del_schedule_timeout(&mut self, id: &str) {
        let prev = self.schedule_timeouts.put(id, None);
        if prev.is_some() {
            self.record(|| Undo::ScheduleTimeout(id.to_string(), prev));
        }
    }

    /// The promise timeout table.
    pub fn promise_timeouts(&self) -> &Deadlines {
        &self.promise_timeouts
    }

    /// The task timeout table of one kind (`RETRY` or `LEASE`).
    pub fn task_timeouts(&self, kind: usize) -> &Deadlines {
        &self.task_timeouts[kind]
    }

    /// The schedule timeout table.
    pub fn schedule_timeouts(&self) -> &Deadlines {
        &self.schedule_timeouts
    }

    /// Every armed deadline (promise timeouts, retries, leases, schedules)
    /// in `from..=until`, ascending, each once: windows of the ordered
    /// indexes, never a scan of the state.
    pub fn armed_within(&self, from: Time, until: Time) -> Vec<Time> {
        let tables = [
            &self.promise_timeouts,
            &self.task_timeouts[RETRY],
            &self.task_timeouts[LEASE],
            &self.schedule_timeouts,
        ];
        let mut v: Vec<Time> = tables
            .iter()
            .flat_map(|t| t.within(from, until).map(|(at, _)| at))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    // ----- outbox -----

    /// `setMessage`: keyed by [`OutboxEntry::key`], the newest wins.
    pub fn set_message(&mut self, address: &str, message: Message) {
        let entry = OutboxEntry {
            address: address.to_string(),
            message,
        };
        let key = entry.key();
        let prev = self.outbox.insert(key.clone(), entry);
        self.record(|| Undo::Outbox(key, prev));
    }

    /// The outbox entry under `key` ([`OutboxEntry::key`]).
    pub fn get_message(&self, key: &str) -> Option<&OutboxEntry> {
        self.outbox.get(key)
    }

    /// Remove the outbox entry under `key`, if any. The spec never drains
    /// its outbox (`setMessage` only adds or replaces); this is for
    /// deviations of servers that do.
    pub fn del_message(&mut self, key: &str) {
        if let Some(prev) = self.outbox.remove(key) {
            self.record(|| Undo::Outbox(key.to_string(), Some(prev)));
        }
    }

    /// Every outbox entry with its key (unordered).
    pub fn outbox(&self) -> impl Iterator<Item = (&String, &OutboxEntry)> {
        self.outbox.iter()
    }
}

/// Structural equality of two states: the same objects, timeouts and outbox
/// (indexes are derived, the journal is bookkeeping).
impl PartialEq for State {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
            && self.promises == other.promises
            && self.tasks == other.tasks
            && self.schedules == other.schedules
            && self.promise_timeouts == other.promise_timeouts
            && self.task_timeouts == other.task_timeouts
            && self.schedule_timeouts == other.schedule_timeouts
            && self.outbox == other.outbox
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn promise(id: &str) -> PromiseObject {
        PromiseObject {
            id: id.to_string(),
            state: PromiseState::Pending,
            param: Value::default(),
            value: Value::default(),
            tags: Tags::new(),
            timeout_at: 10,
            created_at: 0,
            settled_at: None,
            callbacks: Vec::new(),
            listeners: Vec::new(),
        }
    }

    /// The feed names what effects and rollbacks write, only while
    /// watched, and a clone does not watch.
    #[test]
    fn the_change_feed_names_what_was_written() {
        let mut s = State::default();
        s.set_promise(promise("a"));
        assert!(s.take_touched().is_empty(), "not watched");
        s.watch();
        let mark = s.checkpoint();
        s.set_promise(promise("b"));
        s.set_task(TaskObject::new("b", TaskState::Pending, 0));
        s.set_promise_timeout("b", 10);
        s.rollback(mark);
        s.commit();
        assert_eq!(
            s.take_touched(),
            [
                Touched::Promise("b".into()),
                Touched::Task("b".into()),
                Touched::Task("b".into()),
                Touched::Promise("b".into()),
            ]
        );
        assert!(s.take_touched().is_empty(), "taken");
        let mut copy = s.clone();
        copy.set_promise(promise("c"));
        assert!(copy.take_touched().is_empty(), "a clone does not watch");
    }

    /// `within` is the window of the ordered index, bounds included.
    #[test]
    fn within_reads_a_window_of_deadlines() {
        let mut d = Deadlines::default();
        for (id, at) in [("a", 5), ("b", 7), ("c", 7), ("d", 9), ("e", Time::MAX)] {
            d.put(id, Some(at));
        }
        let ids = |from, until| d.within(from, until).map(|(_, id)| id).collect::<Vec<_>>();
        assert_eq!(ids(5, 7), ["a", "b", "c"]);
        assert_eq!(ids(6, 8), ["b", "c"]);
        assert_eq!(ids(7, 7), ["b", "c"]);
        assert_eq!(ids(8, 6), Vec::<&str>::new());
        assert_eq!(ids(9, Time::MAX), ["d", "e"]);
    }

    /// Re-arming an id moves its one entry in the ordered index; clearing
    /// it (or an id never armed) leaves no entry; each returns the
    /// deadline it replaced.
    #[test]
    fn put_keeps_one_entry_per_id_in_step_with_the_table() {
        let mut d = Deadlines::default();
        assert_eq!(d.put("x", None), None, "clearing nothing");
        assert!(d.is_empty() && d.due(Time::MAX).next().is_none());
        assert_eq!(d.put("x", Some(5)), None);
        assert_eq!(d.put("y", Some(5)), None);
        assert_eq!(d.put("x", Some(5)), Some(5), "the same deadline");
        assert_eq!(d.put("x", Some(9)), Some(5), "re-armed");
        fn due(d: &Deadlines) -> Vec<(Time, &str)> {
            d.due(Time::MAX).collect()
        }
        assert_eq!(due(&d), [(5, "y"), (9, "x")]);
        assert_eq!(d.put("x", None), Some(9), "cleared");
        assert_eq!((due(&d), d.get("x"), d.len()), (vec![(5, "y")], None, 1));
        assert_eq!(d.sorted(), [("y", 5)]);
    }
}
