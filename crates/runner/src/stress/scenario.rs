//! What a shrink re-runs: a *scenario* is the sequential prefix that
//! rebuilds the failing epoch's start state (an order the checker found
//! for the epochs before it) and the failing epoch's operations, client by
//! client, with the order the failing run invoked them in; and the
//! candidates the shrink makes of it (fewer prefix steps, fewer
//! operations, fewer clients). Pure data: re-running is `shrink`'s.

use std::collections::BTreeSet;

use gen::{Op, Step};

use crate::lin::partition::{request_keys, Key};
use crate::lin::Failure;

/// What is re-run: a prefix, then one concurrent epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// Sequential steps, each epoch one `now`.
    pub prefix: Vec<Step>,
    /// The concurrent epoch's `now`.
    pub now: u64,
    /// Its operations, per client.
    pub queues: Vec<Vec<Step>>,
    /// The client of each of them, in the order the failing run invoked
    /// them: a paced re-run sends them in that order ([`super::Pace`]).
    pub order: Vec<usize>,
    /// Whether the target is killed and restarted after them, before the
    /// barrier (the failing epoch crashed).
    pub crash: bool,
}

impl Scenario {
    /// The scenario of a failure: its prefix, and its epoch's operations
    /// (without the indeterminate ones of earlier epochs) per client. When
    /// the epoch crashed, only the operations acknowledged before the
    /// crash: a re-run kills the target after its operations, so the crash
    /// comes at the same point of the history, after the last one
    /// acknowledged. Sending an operation that was in flight at the crash
    /// would move it past that one: what a durability bug loses (the last
    /// step logged, or held back) would then be another step, perhaps one
    /// whose loss changes nothing (a heartbeat at the `now` its acquire
    /// already set the lease for).
    pub fn of(f: &Failure, clients: usize, crash: bool) -> Scenario {
        let mut queues = vec![Vec::new(); clients];
        let mut ops: Vec<_> = f
            .ops
            .iter()
            .filter(|o| o.epoch == f.epoch && (!crash || o.is_ok()))
            .collect();
        ops.sort_by_key(|o| o.id);
        for op in &ops {
            queues[op.client].push(op.step.clone());
        }
        Scenario {
            prefix: f.prefix.clone(),
            now: f.now,
            queues,
            order: ops.iter().map(|o| o.client).collect(),
            crash,
        }
    }

    /// The scenario without client `client`'s `i`-th concurrent operation.
    pub fn without(&self, client: usize, i: usize) -> Scenario {
        let mut c = self.clone();
        c.queues[client].remove(i);
        let at = self
            .order
            .iter()
            .enumerate()
            .filter(|(_, &k)| k == client)
            .nth(i)
            .map(|(at, _)| at);
        if let Some(at) = at {
            c.order.remove(at);
        }
        c
    }

    /// Whether its concurrent epoch has operations of two clients or more:
    /// else every re-run sends one sequence, and one attempt says all that
    /// re-running it can.
    pub fn concurrent(&self) -> bool {
        self.queues.iter().filter(|q| !q.is_empty()).count() > 1
    }

    /// The scenario with only the prefix steps that can matter to its
    /// concurrent epoch: a request naming an object the epoch's operations
    /// name, or one a kept later step names (`lin::partition`'s keys),
    /// and the ticks when `keep_ticks`. `None` when the epoch holds a
    /// search (it reads every object).
    pub fn relevant(&self, keep_ticks: bool) -> Option<Scenario> {
        let mut keys: BTreeSet<Key> = BTreeSet::new();
        for step in self.queues.iter().flatten() {
            if let Op::Request(r) = &step.op {
                keys.extend(request_keys(r));
            }
        }
        if keys.contains(&Key::AllIds) || keys.contains(&Key::AllSchedules) {
            return None;
        }
        let mut kept: Vec<Step> = Vec::new();
        for step in self.prefix.iter().rev() {
            let keep = match &step.op {
                Op::Tick => keep_ticks,
                Op::Request(r) => {
                    let named = request_keys(r);
                    let hit = named.iter().any(|k| keys.contains(k));
                    if hit {
                        keys.extend(named);
                    }
                    hit
                }
            };
            if keep {
                kept.push(step.clone());
            }
        }
        kept.reverse();
        Some(Scenario {
            prefix: kept,
            ..self.clone()
        })
    }

    /// Its size: operations, then clients used.
    pub fn size(&self) -> (usize, usize) {
        let ops = self.prefix.len() + self.queues.iter().map(Vec::len).sum::<usize>();
        (ops, self.queues.iter().filter(|q| !q.is_empty()).count())
    }

    /// The scenario with client `from`'s operations sent by client `into`
    /// instead, each where the invocation order puts it among `into`'s own:
    /// one client fewer, the same operations in the same order. A race
    /// needs its two racing operations on two clients, not the operations
    /// around them (what creates the object a moment before, or reads it
    /// after): those can go on either client. Without an order that counts
    /// every operation, `from`'s go after `into`'s.
    pub fn merged(&self, from: usize, into: usize) -> Scenario {
        let mut c = self.clone();
        let moved = std::mem::take(&mut c.queues[from]);
        let total: usize = self.queues.iter().map(Vec::len).sum();
        if self.order.len() != total {
            c.queues[into].extend(moved);
            c.order.clear();
            return c;
        }
        let mut next = [0usize, 0usize];
        let mut queue = Vec::with_capacity(self.queues[into].len() + moved.len());
        for &k in &self.order {
            let (side, q) = if k == into {
                (0, &self.queues[into])
            } else if k == from {
                (1, &moved)
            } else {
                continue;
            };
            queue.push(q[next[side]].clone());
            next[side] += 1;
        }
        c.queues[into] = queue;
        for k in &mut c.order {
            if *k == from {
                *k = into;
            }
        }
        c
    }
}

/// One epoch to send again: its `now`, its operations per client, and
/// whether the target is killed and restarted after them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The epoch's `now`.
    pub now: u64,
    /// Its operations, per client.
    pub queues: Vec<Vec<Step>>,
    /// The client of each operation in invocation order, to pace a re-run
    /// by ([`super::Pace`]); empty: not known, or one client.
    pub order: Vec<usize>,
    /// Crash after the operations, before the barrier.
    pub crash: bool,
}

impl Scenario {
    /// The epochs that re-run it on `clients` clients: one per `now` of
    /// the prefix (all on client 0), then the concurrent one.
    pub fn groups(&self, clients: usize) -> Vec<Group> {
        let mut groups: Vec<Group> = Vec::new();
        for step in &self.prefix {
            match groups.last_mut() {
                Some(g) if g.now == step.now => g.queues[0].push(step.clone()),
                _ => {
                    let mut queues = vec![Vec::new(); clients];
                    queues[0].push(step.clone());
                    groups.push(Group {
                        now: step.now,
                        queues,
                        order: Vec::new(),
                        crash: false,
                    });
                }
            }
        }
        groups.push(Group {
            now: self.now,
            queues: self.queues.clone(),
            order: self.order.clone(),
            crash: self.crash,
        });
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::api::{PromiseGetReq, Request};

    fn get(id: &str) -> Step {
        Step {
            now: 7,
            op: Op::Request(Request::PromiseGet(PromiseGetReq { id: id.into() })),
        }
    }

    fn scenario(queues: Vec<Vec<Step>>, order: Vec<usize>) -> Scenario {
        Scenario {
            prefix: Vec::new(),
            now: 7,
            queues,
            order,
            crash: false,
        }
    }

    #[test]
    fn a_merge_keeps_the_invocation_order_with_one_client_fewer() {
        // c2 invoked first, then c0, then c2 again, then c1.
        let s = scenario(
            vec![vec![get("b")], vec![get("d")], vec![get("a"), get("c")]],
            vec![2, 0, 2, 1],
        );
        let m = s.merged(2, 0);
        assert_eq!(m.queues[0], vec![get("a"), get("b"), get("c")]);
        assert!(m.queues[2].is_empty());
        assert_eq!(m.queues[1], vec![get("d")]);
        assert_eq!(m.order, vec![0, 0, 0, 1]);
        assert_eq!(m.size(), (4, 2));
        assert_eq!(s.size(), (4, 3));
    }

    #[test]
    fn a_merge_without_a_whole_order_appends() {
        let s = scenario(vec![vec![get("a")], vec![get("b")]], Vec::new());
        let m = s.merged(0, 1);
        assert_eq!(m.queues[1], vec![get("b"), get("a")]);
        assert!(m.order.is_empty());
    }

    #[test]
    fn dropping_an_operation_drops_its_place_in_the_order() {
        let s = scenario(
            vec![vec![get("a"), get("c")], vec![get("b")]],
            vec![0, 1, 0],
        );
        let d = s.without(0, 1);
        assert_eq!(d.queues[0], vec![get("a")]);
        assert_eq!(d.order, vec![0, 1]);
        assert!(d.concurrent());
        assert!(!d.without(1, 0).concurrent());
    }
}
