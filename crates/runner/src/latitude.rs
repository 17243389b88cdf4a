//! The schedules of internal transitions the latitude search tries (see
//! `check` for the rule). Each candidate is a list of timers to fire in
//! order; a timer is fired only if it is still armed and due when its turn
//! comes, so every candidate is a schedule the spec allows. Candidates come
//! most-likely first, without duplicates:
//!
//! - around a request: the due timers of the ids the request names or the
//!   state diff mentions (what a materialising read fires), then every
//!   subset of the due timers smallest first when there are at most
//!   [`MAX_EXHAUSTIVE`], else each single timer and all of them; subsets of
//!   at most [`MAX_PERMUTED`] timers also in every other order;
//! - for a tick (which fires everything due): every order when at most
//!   [`MAX_PERMUTED`] are due; else the 24 orders of the four groups, each
//!   with promise timeouts in documented order and awaiters-first (a server
//!   that settles a batch of promises before resuming anyone, as the Rust
//!   server does, looks like firing each awaiter before what it awaits),
//!   and the reverse of the documented order.

use std::collections::{BTreeSet, HashSet};

use itertools::Itertools;

use model::machine::{Machine, Timer, GROUPS};

/// Subsets are enumerated exhaustively up to this many due timers.
pub const MAX_EXHAUSTIVE: usize = 6;
/// Orders are permuted up to this many timers.
pub const MAX_PERMUTED: usize = 4;
/// The most candidates [`around_request`] gives when subsets are still
/// exhaustive ([`MAX_EXHAUSTIVE`] due timers: 523): every subset, those of
/// at most [`MAX_PERMUTED`] timers in every order. The search's budget per
/// phase is this, so the documented candidates are all tried.
pub const EXHAUSTIVE_CANDIDATES: usize = exhaustive_candidates(MAX_EXHAUSTIVE);

/// Distinct candidates of `n` due timers under the exhaustive rule:
/// `Σ C(n,k)·k!` for subsets of up to [`MAX_PERMUTED`], `Σ C(n,k)` above.
const fn exhaustive_candidates(n: usize) -> usize {
    let mut total = 0;
    let mut k = 1;
    while k <= n {
        // C(n, k), then times k! while k is permuted.
        let mut c = 1;
        let mut i = 0;
        while i < k {
            c = c * (n - i) / (i + 1);
            i += 1;
        }
        if k <= MAX_PERMUTED {
            let mut f = 1;
            let mut j = 2;
            while j <= k {
                f *= j;
                j += 1;
            }
            c *= f;
        }
        total += c;
        k += 1;
    }
    total
}

/// Collects candidates, dropping empty ones and repeats.
#[derive(Default)]
struct Candidates {
    seen: HashSet<Vec<Timer>>,
    out: Vec<Vec<Timer>>,
}

impl Candidates {
    fn push(&mut self, c: Vec<Timer>) {
        if !c.is_empty() && self.seen.insert(c.clone()) {
            self.out.push(c);
        }
    }
}

/// Schedules to fire before (or after) a request, given the due timers in
/// documented order and the ids worth trying first.
pub fn around_request(due: &[Timer], hints: &BTreeSet<String>) -> Vec<Vec<Timer>> {
    let mut c = Candidates::default();
    let hinted: Vec<Timer> = due
        .iter()
        .filter(|t| hints.contains(t.id()))
        .cloned()
        .collect();
    c.push(hinted.clone());
    if hinted.len() <= MAX_PERMUTED {
        permutations(&hinted).into_iter().for_each(|p| c.push(p));
    }
    let subsets: Vec<Vec<Timer>> = if due.len() <= MAX_EXHAUSTIVE {
        // Smallest first, each size in the documented order.
        due.iter().cloned().powerset().skip(1).collect()
    } else {
        let mut s: Vec<Vec<Timer>> = due.iter().map(|t| vec![t.clone()]).collect();
        s.push(due.to_vec());
        s
    };
    for s in &subsets {
        c.push(s.clone());
    }
    for s in subsets
        .iter()
        .filter(|s| s.len() > 1 && s.len() <= MAX_PERMUTED)
    {
        permutations(s).into_iter().for_each(|p| c.push(p));
    }
    c.out
}

/// Orders, other than the documented one, in which a tick may fire `due`
/// (all of it).
pub fn tick_orders(due: &[Timer], m: &Machine) -> Vec<Vec<Timer>> {
    let mut c = Candidates::default();
    c.seen.insert(due.to_vec());
    if due.len() <= MAX_PERMUTED {
        permutations(due).into_iter().for_each(|p| c.push(p));
        return c.out;
    }
    let group =
        |k: usize| -> Vec<Timer> { due.iter().filter(|t| t.group() == k).cloned().collect() };
    let promises = group(0);
    let batched = awaiters_first(&promises, m);
    for order in (0..GROUPS).permutations(GROUPS) {
        for promise_order in [&promises, &batched] {
            let mut v = Vec::with_capacity(due.len());
            for k in &order {
                if *k == 0 {
                    v.extend(promise_order.iter().cloned());
                } else {
                    v.extend(group(*k));
                }
            }
            c.push(v);
        }
    }
    c.push(due.iter().rev().cloned().collect());
    c.out
}

/// Promise timers reordered so that an awaiter fires before any promise it
/// awaits (depth-first over the callbacks; ties keep the given order).
fn awaiters_first(promises: &[Timer], m: &Machine) -> Vec<Timer> {
    let ids: Vec<&str> = promises.iter().map(Timer::id).collect();
    let mut done: HashSet<&str> = HashSet::new();
    let mut out = Vec::with_capacity(promises.len());
    fn visit<'a>(
        id: &'a str,
        ids: &[&'a str],
        m: &'a Machine,
        done: &mut HashSet<&'a str>,
        out: &mut Vec<Timer>,
    ) {
        if !done.insert(id) {
            return;
        }
        if let Some(p) = m.state.get_promise(id) {
            for awaiter in &p.callbacks {
                if let Some(a) = ids.iter().find(|i| **i == awaiter.as_str()) {
                    visit(a, ids, m, done, out);
                }
            }
        }
        out.push(Timer::Promise(id.to_string()));
    }
    for id in &ids {
        visit(id, &ids, m, &mut done, &mut out);
    }
    out
}

/// Every order of `items`, the given order first.
pub fn permutations(items: &[Timer]) -> Vec<Vec<Timer>> {
    items.iter().cloned().permutations(items.len()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timers(n: usize) -> Vec<Timer> {
        (0..n).map(|i| Timer::Promise(format!("p{i}"))).collect()
    }

    #[test]
    fn hinted_timers_come_first_then_subsets_smallest_first() {
        let hints = ["p1".to_string()].into();
        let s = around_request(&timers(2), &hints);
        assert_eq!(s[0], vec![Timer::Promise("p1".into())]);
        assert_eq!(s[1], vec![Timer::Promise("p0".into())]);
        assert_eq!(s[2], timers(2));
        assert_eq!(s.len(), 4, "{s:?}");
    }

    #[test]
    fn the_exhaustive_rule_gives_as_many_candidates_as_the_budget_covers() {
        assert_eq!(EXHAUSTIVE_CANDIDATES, 523);
        for n in 0..=MAX_EXHAUSTIVE {
            let due = timers(n);
            // Hints add orders only of what is due: never more candidates.
            for hinted in 0..=n {
                let hints: BTreeSet<String> =
                    due[..hinted].iter().map(|t| t.id().to_string()).collect();
                let c = around_request(&due, &hints);
                assert_eq!(
                    c.len(),
                    exhaustive_candidates(n),
                    "{n} due, {hinted} hinted"
                );
            }
        }
    }

    #[test]
    fn many_due_timers_fall_back_to_singletons_and_all() {
        assert_eq!(around_request(&timers(9), &BTreeSet::new()).len(), 10);
    }

    #[test]
    fn a_tick_tries_every_other_order_of_a_few() {
        let m = Machine::default();
        assert!(tick_orders(&timers(1), &m).is_empty());
        assert_eq!(tick_orders(&timers(3), &m).len(), 5);
    }

    #[test]
    fn a_tick_of_many_tries_group_orders_and_the_reverse() {
        let m = Machine::default();
        let mut due = timers(4);
        due.push(Timer::TaskLease("t".into()));
        let orders = tick_orders(&due, &m);
        assert!(orders.contains(&due.iter().rev().cloned().collect()));
        let lease_first: Vec<Timer> = std::iter::once(due[4].clone())
            .chain(due[..4].iter().cloned())
            .collect();
        assert!(orders.contains(&lease_first));
    }
}
