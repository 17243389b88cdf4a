//! Partitioning one epoch into independent components (porcupine's
//! P-compositionality), sound with Resonate's links.
//!
//! Two operations (or due timers) belong to one component when they can
//! touch a common object, with the links closed over. The objects are
//! named by [`Key`]: an id names a promise *and* the task of the same id
//! (task.create and a target tag make the task of its promise; the outbox
//! entries of either are keyed by it), a schedule id names the schedule.
//! The links, from the state at the epoch's start and from what each
//! operation names:
//! - a settlement of promise `p` (by a request, a fulfil, a fence's inner
//!   settle or `p`'s timeout) resumes the awaiters of `p`'s callbacks, and
//!   scrubs the callbacks `p` registered as an awaiter: a callback in the
//!   state links its promise with its awaiter when either may settle in
//!   the epoch (an operation names it, its timer is due, a due schedule
//!   creates it; nothing else settles a promise); a callback registered
//!   in the epoch is named by its request (register_callback, suspend);
//! - a task's buffered resumes link it with the promises they name;
//! - task.create and fence name the promise they create or settle;
//! - a schedule's timeout creates promises named from its template: it
//!   links the schedule with the ids of every occurrence due by `now` (a
//!   schedule created in the epoch is first due after it);
//! - a search reads nothing: the spec answers 501 (P-06, T-11, S-04);
//!   were it to read every object of its kind, `Key::AllIds` and
//!   `Key::AllSchedules` join them;
//! - a tick touches every due object, but its response carries nothing:
//!   it is projected onto each component as "fire what of this component
//!   was due at my start, by my end", and joins none.
//!
//! A due timer no operation's component reaches commutes with everything:
//! it is a component of its own (with the timers it links to), and its
//! search is the closing snapshot's decision whether it fired (one or two
//! configurations).
//!
//! **Where it is not sound, it merges**: a model with a deviation that
//! does not declare it stays in its footprint
//! (`deviate::Hooks::stays_in_footprint`: others may fire or read objects
//! their request does not name) is one
//! component, as is a search that carries every end (the snapshot does not
//! pin the state: the ends of components would have to be crossed).

use std::collections::{BTreeMap, HashMap, HashSet};

use deviate::Deviant;
use gen::Op;
use model::api::{Request, TaskFenceAction};
use model::machine::Timer;

use super::history::Operation;

/// An object an operation can touch.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// A promise and the task of the same id.
    Id(String),
    /// A schedule.
    Schedule(String),
    /// Every id (a promise or task search).
    AllIds,
    /// Every schedule (a schedule search).
    AllSchedules,
    /// Operation `i` itself (one that names nothing still has a node).
    Op(usize),
}

impl Key {
    /// The key of a timer's object.
    pub fn of_timer(t: &Timer) -> Key {
        match t {
            Timer::Schedule(id) => Key::Schedule(id.clone()),
            t => Key::Id(t.id().to_string()),
        }
    }
}

/// What a request names: the keys it can touch.
pub fn request_keys(req: &Request) -> Vec<Key> {
    let id = |s: &str| Key::Id(s.to_string());
    match req {
        Request::PromiseGet(r) => vec![id(&r.id)],
        Request::PromiseCreate(r) => vec![id(&r.id)],
        Request::PromiseSettle(r) => vec![id(&r.id)],
        Request::PromiseRegisterCallback(r) => vec![id(&r.awaited), id(&r.awaiter)],
        Request::PromiseRegisterListener(r) => vec![id(&r.awaited)],
        // P-06, T-11 and S-04 answer 501 without reading the state (the
        // filtering contract is not specified at this spec commit): a
        // search touches nothing. Naming every object instead joined every
        // id of its epoch into one component and, under the reduction,
        // made every due timer observed while the search was unplaced: the
        // full search over every subset of firings (issue 15's 8-client
        // blow-up: 300,000 configurations and 1.2 M memo hits in one epoch).
        Request::PromiseSearch(_) | Request::TaskSearch(_) | Request::ScheduleSearch(_) => {
            Vec::new()
        }
        Request::TaskGet(r) => vec![id(&r.id)],
        Request::TaskCreate(r) => vec![id(&r.action.id)],
        Request::TaskAcquire(r) => vec![id(&r.id)],
        Request::TaskFence(r) => vec![
            id(&r.id),
            match &r.action {
                TaskFenceAction::Create(c) => id(&c.id),
                TaskFenceAction::Settle(s) => id(&s.id),
            },
        ],
        Request::TaskHeartbeat(r) => r.tasks.iter().map(|t| id(&t.id)).collect(),
        Request::TaskSuspend(r) => std::iter::once(id(&r.id))
            .chain(
                r.actions
                    .iter()
                    .flat_map(|a| [id(&a.awaited), id(&a.awaiter)]),
            )
            .collect(),
        Request::TaskFulfill(r) => vec![id(&r.id), id(&r.action.id)],
        Request::TaskRelease(r) => vec![id(&r.id)],
        Request::TaskHalt(r) => vec![id(&r.id)],
        Request::TaskContinue(r) => vec![id(&r.id)],
        Request::ScheduleGet(r) => vec![Key::Schedule(r.id.clone())],
        Request::ScheduleCreate(r) => vec![Key::Schedule(r.id.clone())],
        Request::ScheduleDelete(r) => vec![Key::Schedule(r.id.clone())],
    }
}

/// The keys firing `t` at `now` names before its cascade: its object,
/// and for a schedule every promise its catch-up creates (`None` when
/// there are too many to name). What the cascade reaches through the
/// state's links (callbacks, awaiters) is added by the reduction
/// ([`super::reduce`]), which reads the state where the timer fires.
pub fn timer_keys(model: &Deviant, t: &Timer, now: u64) -> Option<Vec<Key>> {
    let mut keys = vec![Key::of_timer(t)];
    if let Timer::Schedule(sid) = t {
        keys.extend(occurrences(model, sid, now)?.into_iter().map(Key::Id));
    }
    Some(keys)
}

/// A schedule's catch-up may run at most this many occurrences before the
/// partition gives up naming them (and merges).
const MAX_OCCURRENCES: usize = 10_000;

/// One component: operations (indices into the epoch's candidates; every
/// tick is in every component) and how many timers due at the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Component {
    /// Indices into the candidates, in order.
    pub ops: Vec<usize>,
    /// Timers due at the epoch's start that belong to it.
    pub timers: usize,
}

/// The components of one epoch.
#[derive(Clone, Debug)]
pub struct Partition {
    /// The components, by their first operation (timer-only ones last).
    pub components: Vec<Component>,
    /// Per key, its component; `None`: one component holds everything.
    of_key: Option<HashMap<Key, usize>>,
}

impl Partition {
    /// One component of every candidate: nothing is split.
    pub fn whole(n: usize) -> Partition {
        Partition {
            components: vec![Component {
                ops: (0..n).collect(),
                timers: 0,
            }],
            of_key: None,
        }
    }

    /// Whether nothing is split.
    pub fn is_whole(&self) -> bool {
        self.of_key.is_none()
    }

    /// Whether the object of `key` belongs to component `c` (every object
    /// does when nothing is split; an object no component reaches belongs
    /// to none: only the closing check sees it).
    pub fn holds(&self, c: usize, key: &Key) -> bool {
        match &self.of_key {
            None => true,
            Some(m) => m.get(key) == Some(&c),
        }
    }

    /// The components of the candidates `ops` from `model`'s state at the
    /// epoch's start, at `now`.
    pub fn of(model: &Deviant, ops: &[&Operation], now: u64) -> Partition {
        if !deviate::all_stay_in_footprint(model.deviations()) {
            return Partition::whole(ops.len());
        }
        let mut uf = UnionFind::default();
        let mut ticks = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            let Op::Request(req) = &op.step.op else {
                ticks.push(i);
                continue;
            };
            let me = uf.node(Key::Op(i));
            for k in request_keys(req) {
                let n = uf.node(k);
                uf.union(me, n);
            }
        }
        let due = model.due(now);
        // What may settle in the epoch: a promise an operation names, one
        // whose timer is due, one a due schedule creates. Nothing else
        // settles (a resume changes a task, never settles a promise).
        let mut may_settle: HashSet<Key> = uf.keys.iter().cloned().collect();
        for t in &due {
            may_settle.insert(Key::of_timer(t));
            let me = uf.node(Key::of_timer(t));
            if let Timer::Schedule(sid) = t {
                let Some(ids) = occurrences(model, sid, now) else {
                    return Partition::whole(ops.len());
                };
                for id in ids {
                    may_settle.insert(Key::Id(id.clone()));
                    let n = uf.node(Key::Id(id));
                    uf.union(me, n);
                }
            }
        }
        // The links of the state at the start: a callback when its
        // promise may settle (that resumes its awaiter) or its awaiter may
        // (that scrubs it); a buffered resume likewise. A link neither of
        // whose ends settles joins nothing: reading or resuming a task
        // does not touch the promises it awaits.
        let settles = |a: &str, b: &str| {
            may_settle.contains(&Key::Id(a.to_string()))
                || may_settle.contains(&Key::Id(b.to_string()))
        };
        for p in model.state.promises() {
            for a in p.callbacks.iter().filter(|a| settles(&p.id, a)) {
                let (x, y) = (uf.node(Key::Id(p.id.clone())), uf.node(Key::Id(a.clone())));
                uf.union(x, y);
            }
        }
        for t in model.state.tasks() {
            for r in t.resumes.iter().filter(|r| settles(&t.id, r)) {
                let (x, y) = (uf.node(Key::Id(t.id.clone())), uf.node(Key::Id(r.clone())));
                uf.union(x, y);
            }
        }
        // A search reads every object of its kind.
        for (all, is_kind) in [
            (
                Key::AllIds,
                (|k: &Key| matches!(k, Key::Id(_))) as fn(&Key) -> bool,
            ),
            (Key::AllSchedules, |k: &Key| matches!(k, Key::Schedule(_))),
        ] {
            if let Some(&a) = uf.index.get(&all) {
                let members: Vec<usize> = uf
                    .keys
                    .iter()
                    .enumerate()
                    .filter(|(_, k)| is_kind(k))
                    .map(|(n, _)| n)
                    .collect();
                for n in members {
                    uf.union(a, n);
                }
            }
        }
        // Components: the classes holding an operation or a due timer.
        let mut by_root: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        let mut root_order: HashMap<usize, (usize, usize)> = HashMap::new();
        for (i, op) in ops.iter().enumerate() {
            if matches!(op.step.op, Op::Tick) {
                continue;
            }
            let r = uf.find(uf.index[&Key::Op(i)]);
            root_order.entry(r).or_insert((0, i));
        }
        for (j, t) in due.iter().enumerate() {
            let r = uf.find(uf.index[&Key::of_timer(t)]);
            root_order.entry(r).or_insert((1, j));
        }
        for (&r, &order) in &root_order {
            by_root.insert(order, r);
        }
        let mut comp_of_root = HashMap::new();
        let mut components = Vec::new();
        for r in by_root.values() {
            comp_of_root.insert(*r, components.len());
            components.push(Component {
                ops: Vec::new(),
                timers: 0,
            });
        }
        if components.is_empty() {
            // Only ticks (or nothing), and nothing due.
            return Partition::whole(ops.len());
        }
        for (i, op) in ops.iter().enumerate() {
            if matches!(op.step.op, Op::Tick) {
                continue;
            }
            let r = uf.find(uf.index[&Key::Op(i)]);
            components[comp_of_root[&r]].ops.push(i);
        }
        for t in &due {
            let r = uf.find(uf.index[&Key::of_timer(t)]);
            components[comp_of_root[&r]].timers += 1;
        }
        for c in &mut components {
            c.ops.extend(ticks.iter().copied());
            c.ops.sort_unstable();
        }
        let mut of_key = HashMap::new();
        for n in 0..uf.keys.len() {
            let r = uf.find(n);
            if let Some(&c) = comp_of_root.get(&r) {
                of_key.insert(uf.keys[n].clone(), c);
            }
        }
        Partition {
            components,
            of_key: Some(of_key),
        }
    }
}

/// The promise ids the timeout of schedule `sid` creates when it fires at
/// `now` (its catch-up: every occurrence due by then); `None` when there
/// are too many to name.
fn occurrences(model: &Deviant, sid: &str, now: u64) -> Option<Vec<String>> {
    let Some(s) = model.state.get_schedule(sid) else {
        return Some(Vec::new());
    };
    let cal = model.calendar();
    let mut out = Vec::new();
    let mut at = s.next_run_at;
    while at <= now {
        if out.len() >= MAX_OCCURRENCES {
            return None;
        }
        out.push(cal.expand(&s.promise_id, &s.id, at));
        at = cal.next_cron(&s.cron, at).max(at.saturating_add(1));
    }
    Some(out)
}

/// Union-find over keys.
#[derive(Default)]
struct UnionFind {
    keys: Vec<Key>,
    index: HashMap<Key, usize>,
    parent: Vec<usize>,
}

impl UnionFind {
    fn node(&mut self, k: Key) -> usize {
        if let Some(&n) = self.index.get(&k) {
            return n;
        }
        let n = self.keys.len();
        self.keys.push(k.clone());
        self.index.insert(k, n);
        self.parent.push(n);
        n
    }

    fn find(&mut self, mut n: usize) -> usize {
        while self.parent[n] != n {
            self.parent[n] = self.parent[self.parent[n]];
            n = self.parent[n];
        }
        n
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[a.max(b)] = a.min(b);
        }
    }
}
