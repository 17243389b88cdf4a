//! The partial-order reduction of one component's search: what a due
//! timer's firing and an operation can touch (a [`Footprint`]), which due
//! timers an operation observes, and whether a move stayed inside what it
//! was said to touch.
//!
//! The search ([`super::search`]) fires a due timer only where its place
//! can matter: just before a move whose footprint meets its own (an
//! operation, a tick's end, or a timer that must come first), or at the
//! close, where independent groups of timers are decided by the final
//! snapshot one group at a time. Two moves whose footprints are disjoint
//! commute: neither reads nor writes what the other does, so swapping them
//! changes neither response nor end state. Why the footprints below cover
//! what the Lean handlers read and write is in ARCHITECTURE.md ("The
//! checker's partial-order reduction"); a move whose writes leave its
//! footprint makes the search fall back to the full one.

use std::collections::HashSet;

use deviate::Deviant;
use model::api::Request;
use model::machine::Timer;
use model::state::{Mark, State};

use super::partition::{request_keys, timer_keys, Key};

/// The objects a move may read or write: ids (a promise and the task of
/// the same id), schedules, or every object of a kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    ids: HashSet<String>,
    schedules: HashSet<String>,
    all_ids: bool,
    all_schedules: bool,
}

impl Footprint {
    fn add(&mut self, state: &State, k: Key) {
        match k {
            Key::Id(id) => self.add_linked(state, id),
            Key::Schedule(s) => {
                self.schedules.insert(s);
            }
            Key::AllIds => self.all_ids = true,
            Key::AllSchedules => self.all_schedules = true,
            Key::Op(_) => {}
        }
    }

    /// An id and what a settlement or resume of it reaches in `state`: the
    /// awaiters of its callbacks (resumed), the promises that hold it as
    /// an awaiter (scrubbed), the promises its task's buffered resumes
    /// name.
    fn add_linked(&mut self, state: &State, id: String) {
        if let Some(p) = state.get_promise(&id) {
            self.ids.extend(p.callbacks.iter().cloned());
        }
        if let Some(t) = state.get_task(&id) {
            self.ids.extend(t.resumes.iter().cloned());
        }
        self.ids.extend(state.awaited_by(&id).map(str::to_string));
        self.ids.insert(id);
    }

    /// Whether the object of `k` is in the footprint.
    pub fn holds(&self, k: &Key) -> bool {
        match k {
            Key::Id(id) => self.all_ids || self.ids.contains(id),
            Key::Schedule(s) => self.all_schedules || self.schedules.contains(s),
            Key::AllIds => self.all_ids || !self.ids.is_empty(),
            Key::AllSchedules => self.all_schedules || !self.schedules.is_empty(),
            Key::Op(_) => false,
        }
    }

    /// Whether two footprints share an object (then the moves may not
    /// commute).
    pub fn meets(&self, other: &Footprint) -> bool {
        let ids = (self.all_ids && (other.all_ids || !other.ids.is_empty()))
            || (other.all_ids && !self.ids.is_empty())
            || smaller_first(&self.ids, &other.ids);
        let schedules = (self.all_schedules
            && (other.all_schedules || !other.schedules.is_empty()))
            || (other.all_schedules && !self.schedules.is_empty())
            || smaller_first(&self.schedules, &other.schedules);
        ids || schedules
    }

    /// Grow by `other`.
    pub fn extend(&mut self, other: &Footprint) {
        self.ids.extend(other.ids.iter().cloned());
        self.schedules.extend(other.schedules.iter().cloned());
        self.all_ids |= other.all_ids;
        self.all_schedules |= other.all_schedules;
    }
}

fn smaller_first(a: &HashSet<String>, b: &HashSet<String>) -> bool {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    small.iter().any(|x| large.contains(x))
}

/// What request `req` may touch from the state it is applied in.
pub fn of_request(state: &State, req: &Request) -> Footprint {
    let mut f = Footprint::default();
    for k in request_keys(req) {
        f.add(state, k);
    }
    f
}

/// What firing `t` at `now` may touch from the model's state now (a
/// schedule whose catch-up is too long to name touches every id).
pub fn of_timer(model: &Deviant, t: &Timer, now: u64) -> Footprint {
    let mut f = Footprint::default();
    match timer_keys(model, t, now) {
        Some(keys) => {
            for k in keys {
                f.add(&model.state, k);
            }
        }
        None => {
            f.add(&model.state, Key::of_timer(t));
            f.all_ids = true;
        }
    }
    f
}

/// The due timers (with their footprints) connected to `seed` through a
/// chain of shared objects: the ones that may have to fire before the move
/// of footprint `seed`. A timer sharing nothing with the seed or with a
/// timer that does commutes with the move and may wait.
pub fn observed(due: &[(Timer, Footprint)], seed: &Footprint) -> Vec<bool> {
    let mut reach = seed.clone();
    let mut inside = vec![false; due.len()];
    loop {
        let mut grew = false;
        for (i, (_, f)) in due.iter().enumerate() {
            if !inside[i] && reach.meets(f) {
                inside[i] = true;
                reach.extend(f);
                grew = true;
            }
        }
        if !grew {
            return inside;
        }
    }
}

/// The due timers split into groups no chain of shared objects joins,
/// each with the union of its footprints.
pub fn groups(due: &[(Timer, Footprint)]) -> Vec<(Vec<usize>, Footprint)> {
    let mut out: Vec<(Vec<usize>, Footprint)> = Vec::new();
    let mut placed = vec![false; due.len()];
    for start in 0..due.len() {
        if placed[start] {
            continue;
        }
        let inside = observed(due, &due[start].1);
        let mut members = Vec::new();
        let mut f = Footprint::default();
        for (i, &yes) in inside.iter().enumerate() {
            if yes || i == start {
                placed[i] = true;
                members.push(i);
                f.extend(&due[i].1);
            }
        }
        out.push((members, f));
    }
    out
}

/// Whether everything written since `mark` lies inside `f`.
pub fn writes_within(state: &State, mark: Mark, f: &Footprint) -> bool {
    let w = state.writes_since(mark);
    let id = |k: &String| f.holds(&Key::Id(k.clone()));
    w.promises.keys().all(id)
        && w.promise_timeouts.keys().all(id)
        && w.tasks.keys().all(id)
        && w.task_timeouts.keys().all(id)
        && w.schedules
            .keys()
            .chain(w.schedule_timeouts.keys())
            .all(|s| f.holds(&Key::Schedule(s.clone())))
        && w.outbox.iter().all(|(key, e)| {
            let owner = match e.as_ref().map(|e| &e.message) {
                Some(model::state::Message::Execute { task_id, .. }) => task_id.clone(),
                Some(model::state::Message::Unblock { promise }) => promise.id.clone(),
                None => key
                    .split_once(":notify:")
                    .map_or(key.clone(), |(p, _)| p.to_string()),
            };
            f.holds(&Key::Id(owner))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gen::{GenConfig, Op};
    use model::state::ServerConfig;

    /// Every deviation that declares it stays in its footprint
    /// ([`deviate::Hooks::stays_in_footprint`]) writes, on generated
    /// traces from its own model, only inside the footprint of the request
    /// (or of each due timer a tick fires, until nothing is due) that the
    /// reduction computes: the declaration the checker's partition and
    /// reduction trust. A spec model beside it shows the deviation's
    /// branches were taken (some answer differs).
    #[test]
    fn declared_deviations_write_inside_their_footprint() {
        let declared: Vec<_> = deviate::catalogue::all()
            .filter(|d| d.hooks.stays_in_footprint())
            .collect();
        assert!(!declared.is_empty());
        let config = ServerConfig {
            retry_timeout: 5_000,
        };
        for d in declared {
            assert!(!d.hooks.batches_tick(), "{}", d.name);
            let (mut requests, mut firings, mut departed) = (0, 0, 0);
            for seed in 1..=12 {
                let mut m = Deviant::new(config, vec![d]);
                let mut spec = Deviant::new(config, Vec::new());
                let cfg = GenConfig {
                    steps: 200,
                    ..GenConfig::default()
                };
                for step in gen::generate_with(seed, &cfg, &m.stepper()) {
                    match &step.op {
                        Op::Request(req) => {
                            let f = of_request(&m.state, req);
                            let mark = m.state.checkpoint();
                            let res = m.apply(req, step.now);
                            requests += 1;
                            assert!(
                                writes_within(&m.state, mark, &f),
                                "{}: seed {seed}: {req:?} wrote outside its footprint",
                                d.name
                            );
                            m.state.commit();
                            departed += usize::from(spec.apply(req, step.now) != res);
                        }
                        Op::Tick => {
                            // Each due timer fired alone, its writes checked,
                            // until nothing is due (a firing may arm more).
                            for _ in 0..16 {
                                let due = m.due(step.now);
                                if due.is_empty() {
                                    break;
                                }
                                for t in due {
                                    let f = of_timer(&m, &t, step.now);
                                    let mark = m.state.checkpoint();
                                    m.fire(&t, step.now);
                                    firings += 1;
                                    assert!(
                                        writes_within(&m.state, mark, &f),
                                        "{}: seed {seed}: firing {t:?} wrote outside its footprint",
                                        d.name
                                    );
                                    m.state.commit();
                                }
                            }
                            spec.tick(step.now);
                        }
                    }
                }
            }
            assert!(
                requests > 2_000 && firings > 100 && departed > 0,
                "{}: {requests} requests, {firings} firings, {departed} answers departed",
                d.name
            );
        }
    }
}
