//! What the effects since a journal mark wrote, read back from the journal.
//!
//! Two users, both of the concurrent run:
//! - a **non-atomic handler** (the reference server's planted races) checks
//!   and computes on the state under its lock, takes [`State::writes_since`],
//!   rolls back, releases the lock, and later applies the writes blindly
//!   with [`State::apply_writes`]: last writer wins per key, as a server
//!   that lost its transaction does;
//! - the **linearizability checker** memoises on the state reached from an
//!   epoch's start, named by [`State::fingerprint_since`].
//!
//! A key is one entry of one table: a promise, a task, a schedule, the
//! promise, task (both kinds together, as the journal keeps them) and
//! schedule timeouts, an outbox entry. The derived indexes (`awaiting`,
//! the deadline order) are not keys: every write goes through the same
//! effects as a handler's, which keep them in step and journal the write.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

use super::{Mark, OutboxEntry, PromiseObject, State, TaskObject, Undo, LEASE, RETRY};
use crate::types::{Schedule, Time};

/// The current value, or absence (`None`), of every key written since a
/// mark, one ordered map per table (keyed by id; the outbox by
/// [`OutboxEntry::key`]). Task timeouts are written as the pair
/// `[retry, lease]`, as the journal records them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Writes {
    /// Promises, by id.
    pub promises: BTreeMap<String, Option<PromiseObject>>,
    /// Tasks, by id.
    pub tasks: BTreeMap<String, Option<TaskObject>>,
    /// Schedules, by id.
    pub schedules: BTreeMap<String, Option<Schedule>>,
    /// Promise timeouts, by promise id.
    pub promise_timeouts: BTreeMap<String, Option<Time>>,
    /// Task timeouts `[retry, lease]`, by task id.
    pub task_timeouts: BTreeMap<String, [Option<Time>; 2]>,
    /// Schedule timeouts, by schedule id.
    pub schedule_timeouts: BTreeMap<String, Option<Time>>,
    /// Outbox entries, by key.
    pub outbox: BTreeMap<String, Option<OutboxEntry>>,
}

impl Writes {
    /// Number of keys written.
    pub fn len(&self) -> usize {
        self.promises.len()
            + self.tasks.len()
            + self.schedules.len()
            + self.promise_timeouts.len()
            + self.task_timeouts.len()
            + self.schedule_timeouts.len()
            + self.outbox.len()
    }

    /// Nothing written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One key of one table, borrowed from the journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key<'a> {
    Promise(&'a str),
    Task(&'a str),
    Schedule(&'a str),
    PromiseTimeout(&'a str),
    TaskTimeout(&'a str),
    ScheduleTimeout(&'a str),
    Outbox(&'a str),
}

impl Undo {
    fn key(&self) -> Key<'_> {
        match self {
            Undo::Promise(id, _) => Key::Promise(id),
            Undo::Task(id, _) => Key::Task(id),
            Undo::Schedule(id, _) => Key::Schedule(id),
            Undo::PromiseTimeout(id, _) => Key::PromiseTimeout(id),
            Undo::TaskTimeout(id, _) => Key::TaskTimeout(id),
            Undo::ScheduleTimeout(id, _) => Key::ScheduleTimeout(id),
            Undo::Outbox(key, _) => Key::Outbox(key),
        }
    }
}

/// Insert `id → value()` unless `id` is already there (the first record
/// of a key decides; the value read is the current one either way).
fn note<T>(map: &mut BTreeMap<String, T>, id: &str, value: impl FnOnce() -> T) {
    if !map.contains_key(id) {
        map.insert(id.to_string(), value());
    }
}

impl State {
    /// The journal records since `mark` (none when not journaling).
    fn journal_since(&self, mark: Mark) -> &[Undo] {
        self.journal
            .as_deref()
            .and_then(|j| j.get(mark.0..))
            .unwrap_or(&[])
    }

    /// The current value (or absence) of every key an effect touched since
    /// `mark`: what a handler applied since then wrote. Keys written and
    /// then restored are included (a handler that read-modify-writes a key
    /// writes it even when the value comes out the same).
    pub fn writes_since(&self, mark: Mark) -> Writes {
        let mut w = Writes::default();
        for undo in self.journal_since(mark) {
            match undo {
                Undo::Promise(id, _) => {
                    note(&mut w.promises, id, || self.promises.get(id).cloned())
                }
                Undo::Task(id, _) => note(&mut w.tasks, id, || self.tasks.get(id).cloned()),
                Undo::Schedule(id, _) => {
                    note(&mut w.schedules, id, || self.schedules.get(id).cloned())
                }
                Undo::PromiseTimeout(id, _) => note(&mut w.promise_timeouts, id, || {
                    self.promise_timeouts.get(id)
                }),
                Undo::TaskTimeout(id, _) => {
                    note(&mut w.task_timeouts, id, || self.task_timeout_pair(id))
                }
                Undo::ScheduleTimeout(id, _) => note(&mut w.schedule_timeouts, id, || {
                    self.schedule_timeouts.get(id)
                }),
                Undo::Outbox(key, _) => note(&mut w.outbox, key, || self.outbox.get(key).cloned()),
            }
        }
        w
    }

    /// Write every key of `writes` blindly (upsert, or remove for `None`),
    /// whatever the state holds there now, through journaled effects that
    /// keep the indexes right. Keys `writes` does not name are untouched.
    pub fn apply_writes(&mut self, writes: &Writes) {
        for (id, p) in &writes.promises {
            self.upsert_promise(id, p.clone());
        }
        for (id, t) in &writes.tasks {
            let prev = match t {
                Some(t) => self.tasks.insert(id.clone(), t.clone()),
                None => self.tasks.remove(id),
            };
            self.record(|| Undo::Task(id.clone(), prev));
        }
        for (id, s) in &writes.schedules {
            let prev = match s {
                Some(s) => self.schedules.insert(id.clone(), s.clone()),
                None => self.schedules.remove(id),
            };
            self.record(|| Undo::Schedule(id.clone(), prev));
        }
        for (id, at) in &writes.promise_timeouts {
            let prev = self.promise_timeouts.put(id, *at);
            self.record(|| Undo::PromiseTimeout(id.clone(), prev));
        }
        for (id, pair) in &writes.task_timeouts {
            let prev = self.task_timeout_pair(id);
            self.task_timeouts[RETRY].put(id, pair[RETRY]);
            self.task_timeouts[LEASE].put(id, pair[LEASE]);
            self.record(|| Undo::TaskTimeout(id.clone(), prev));
        }
        for (id, at) in &writes.schedule_timeouts {
            let prev = self.schedule_timeouts.put(id, *at);
            self.record(|| Undo::ScheduleTimeout(id.clone(), prev));
        }
        for (key, e) in &writes.outbox {
            let prev = match e {
                Some(e) => self.outbox.insert(key.clone(), e.clone()),
                None => self.outbox.remove(key),
            };
            self.record(|| Undo::Outbox(key.clone(), prev));
        }
    }

    /// Upsert or remove the promise under `id`, journaled.
    fn upsert_promise(&mut self, id: &str, p: Option<PromiseObject>) {
        let prev = self.promises.get(id).cloned();
        self.record(|| Undo::Promise(id.to_string(), prev));
        self.put_promise(id, p);
    }

    /// A hash of the current value of every key whose value differs from
    /// its value at `mark`: equal for two states reached from one state at
    /// `mark` exactly when they hold the same values (hash collisions
    /// aside), whatever the order of the effects and whatever was written
    /// and restored on the way. Order-independent (a sum of per-key
    /// hashes) and the same in every run and every build ([`Fnv`]: no
    /// random seed). 0 when nothing changed.
    pub fn fingerprint_since(&self, mark: Mark) -> u64 {
        // The first record of a key since `mark` holds its value at `mark`.
        let mut first: HashMap<Key<'_>, &Undo> = HashMap::new();
        for undo in self.journal_since(mark) {
            first.entry(undo.key()).or_insert(undo);
        }
        first
            .values()
            .filter_map(|before| self.changed_hash(before))
            .fold(0u64, u64::wrapping_add)
    }

    /// The hash of the key of `before` with its current value, if that
    /// value differs from the one `before` recorded.
    fn changed_hash(&self, before: &Undo) -> Option<u64> {
        let mut h = Fnv::default();
        let changed = match before {
            Undo::Promise(id, prev) => hash_if_changed(&mut h, 0, id, self.promises.get(id), prev),
            Undo::Task(id, prev) => hash_if_changed(&mut h, 1, id, self.tasks.get(id), prev),
            Undo::Schedule(id, prev) => {
                hash_if_changed(&mut h, 2, id, self.schedules.get(id), prev)
            }
            Undo::PromiseTimeout(id, prev) => {
                let now = self.promise_timeouts.get(id);
                hash_if_changed(&mut h, 3, id, now.as_ref(), prev)
            }
            Undo::TaskTimeout(id, prev) => {
                let now = self.task_timeout_pair(id);
                now != *prev && {
                    (4u8, id, now).hash(&mut h);
                    true
                }
            }
            Undo::ScheduleTimeout(id, prev) => {
                let now = self.schedule_timeouts.get(id);
                hash_if_changed(&mut h, 5, id, now.as_ref(), prev)
            }
            Undo::Outbox(key, prev) => hash_if_changed(&mut h, 6, key, self.outbox.get(key), prev),
        };
        changed.then(|| h.finish())
    }
}

/// FNV-1a (64 bit) with a final avalanche: a fixed hasher, so a
/// fingerprint is the same in every process (the std `RandomState` is
/// seeded per process, and `DefaultHasher`'s algorithm may change between
/// toolchains). The avalanche (the `splitmix64` finaliser) spreads every
/// input bit over the output before per-key hashes are summed.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Hash `(table, id, now)` into `h` when `now` differs from `prev`.
fn hash_if_changed<T: Hash + PartialEq>(
    h: &mut Fnv,
    table: u8,
    id: &str,
    now: Option<&T>,
    prev: &Option<T>,
) -> bool {
    if now == prev.as_ref() {
        return false;
    }
    (table, id, now).hash(h);
    true
}
