//! The clone mutation: a kept prefix with one object's history played
//! twice, the second time under a fresh id.
//!
//! A loop's "all" and "mix" of several need several elements of one list
//! in the same or in different states: two tasks suspended on one pending
//! promise, two tasks one claimant holds, two promises due in one tick.
//! The generator builds a list one element a step, and the steps that
//! built one element seldom come again for a second before the list is
//! walked or gone (in the default steered runs of seeds 1–18, 42 of
//! 18,000 steps held a pending promise with two suspended awaiters). A
//! kept prefix already holds one element's whole history; grammar fuzzers
//! repeat a subtree for the same reason. [`clone_history`] picks an id the
//! prefix names, and after each step that names it inserts the same step
//! with that id renamed to a fresh one of its origin (same `now`, same
//! pid, same versions: the clone's versions move as the original's do,
//! since every step that moves them is cloned too). What names the
//! original and something else (a suspend on a pending promise, a
//! callback, a heartbeat) then names the clone with the same something
//! else: a second awaiter, a second ref. A copy that is not well formed
//! where it lands is left out, so a cloned prefix is as well formed as
//! any other.

use model::machine::Machine;
use model::names::{ids, ids_mut};
use model::types::{PromiseState, TaskState, Time};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::generator::Stepper;
use crate::pools::origin;
use crate::{Op, Step};

/// `prefix` with the history of one id it names (at least twice) cloned
/// under a fresh id of the same origin, each copy checked on `m` (an empty
/// model, stepped with `stepper` through the result); `None` when no id is
/// named twice.
pub(crate) fn clone_history(
    prefix: &[Step],
    mut m: Machine,
    stepper: &Stepper,
    rng: &mut TestRng,
) -> Option<Vec<Step>> {
    let named: Vec<Vec<String>> = prefix.iter().map(names).collect();
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for id in named.iter().flatten() {
        match counts.iter_mut().find(|(x, _)| x == id) {
            Some((_, n)) => *n += 1,
            None => counts.push((id, 1)),
        }
    }
    let twice: Vec<&str> = counts
        .iter()
        .filter(|(_, n)| *n >= 2)
        .map(|(x, _)| *x)
        .collect();
    let mut end = m.clone();
    for step in prefix {
        stepper.step(&mut end, step);
    }
    let awaiters = awaiters(&end);
    let elements: Vec<&str> = twice
        .iter()
        .copied()
        .filter(|id| awaiters.contains(id) || held(&end, id))
        .collect();
    let from = *rng.pick(if elements.is_empty() {
        &twice
    } else {
        &elements
    })?;
    let to = fresh(from, &named);
    let mut out = Vec::with_capacity(prefix.len() * 2);
    for (step, ids) in prefix.iter().zip(&named) {
        stepper.step(&mut m, step);
        out.push(step.clone());
        if !ids.iter().any(|x| x == from) {
            continue;
        }
        let copy = renamed(step, from, &to);
        if crate::well_formed(&copy, &m).is_ok() {
            stepper.step(&mut m, &copy);
            out.push(copy);
        }
    }
    Some(out)
}

/// The awaiters of pending promises in `m` (elements of the lists a
/// settlement walks), read once per prefix.
fn awaiters(m: &Machine) -> std::collections::BTreeSet<&str> {
    m.state
        .promises()
        .filter(|p| p.state == PromiseState::Pending)
        .flat_map(|p| p.callbacks.iter().map(String::as_str))
        .collect()
}

/// Whether `id`'s task is held (an element of a heartbeat's list).
fn held(m: &Machine, id: &str) -> bool {
    m.state
        .get_task(id)
        .is_some_and(|t| t.state == TaskState::Acquired)
}

/// The requests of `log` that name `from`, renamed `to`, all at `now`:
/// one element's history played again at once under a fresh id (its
/// deadlines are absolute, its leases relative to `now`, so an element
/// still live now gives a clone live now).
pub(crate) fn replayed(log: &[Step], from: &str, to: &str, now: Time) -> Vec<Step> {
    log.iter()
        .filter_map(|s| {
            // `to` is fresh, so the copy differs exactly when `s` names `from`.
            let copy = renamed(s, from, to);
            (copy.op != s.op).then_some(Step { now, ..copy })
        })
        .collect()
}

/// The ids a step names (none for a tick).
fn names(step: &Step) -> Vec<String> {
    match &step.op {
        Op::Request(r) => ids(r),
        Op::Tick => Vec::new(),
    }
}

/// The first child id of `id`'s origin that no step names.
fn fresh(id: &str, named: &[Vec<String>]) -> String {
    let o = origin(id);
    (1..)
        .map(|i| format!("{o}.{i}"))
        .find(|c| !named.iter().flatten().any(|x| x == c))
        .expect("unbounded")
}

/// `step` with every `from` it names renamed `to`.
fn renamed(step: &Step, from: &str, to: &str) -> Step {
    let mut step = step.clone();
    if let Op::Request(r) = &mut step.op {
        for id in ids_mut(r) {
            if id == from {
                *id = to.to_string();
            }
        }
    }
    step
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::api::*;
    use model::marker;
    use model::state::ServerConfig;

    const T0: u64 = 1_700_000_000_000;

    fn at(now: u64, r: Request) -> Step {
        Step {
            now,
            op: Op::Request(r),
        }
    }

    fn task(id: &str) -> Request {
        Request::TaskCreate(TaskCreateReq {
            pid: "p1".into(),
            ttl: 60_000,
            action: PromiseCreateReq {
                id: id.into(),
                timeout_at: T0 + 600_000,
                param: Default::default(),
                tags: [(crate::pools::TARGET.to_string(), "poll://any@w".to_string())].into(),
            },
        })
    }

    /// Task `a.1` suspended on pending `a.2`: cloning `a.1` gives `a.2` a
    /// second suspended awaiter, and settling it resumes "all" of them.
    #[test]
    fn a_cloned_awaiter_makes_a_list_of_two_suspended() {
        let prefix = vec![
            at(
                T0,
                Request::PromiseCreate(PromiseCreateReq {
                    id: "a.2".into(),
                    timeout_at: T0 + 600_000,
                    param: Default::default(),
                    tags: Default::default(),
                }),
            ),
            at(T0, task("a.1")),
            at(
                T0 + 5,
                Request::TaskSuspend(TaskSuspendReq {
                    id: "a.1".into(),
                    version: 1,
                    actions: vec![PromiseRegisterCallbackReq {
                        awaited: "a.2".into(),
                        awaiter: "a.1".into(),
                    }],
                }),
            ),
        ];
        // Only `a.1` and `a.2` are named twice; try seeds until `a.1` is picked.
        let cloned = (0..64)
            .filter_map(|seed| {
                let empty = Machine::new(ServerConfig::default());
                let mut rng = crate::dice::seeded_rng(seed);
                let out = clone_history(&prefix, empty, &Stepper::spec(), &mut rng)?;
                out.iter()
                    .any(|s| names(s).contains(&"a.3".to_string()) && names(s).len() == 2)
                    .then_some(out)
            })
            .next();
        let out = cloned.expect("some seed clones the awaiter");
        let mut m = Machine::new(ServerConfig::default());
        for s in &out {
            crate::apply(&mut m, s);
        }
        assert_eq!(out.len(), 5, "{out:?}");
        assert!(out.windows(2).all(|w| w[0].now <= w[1].now));
        let settle = at(
            T0 + 10,
            Request::PromiseSettle(PromiseSettleReq {
                id: "a.2".into(),
                state: model::types::PromiseState::Resolved,
                value: Default::default(),
            }),
        );
        m.take_marks();
        crate::apply(&mut m, &settle);
        assert!(m
            .take_marks()
            .contains(&marker::PROMISE_SETTLE_AWAITERS_RESUMED_ALL));
    }

    /// On generated prefixes: the original steps stay, in order; every
    /// other step is the step before it with one id renamed to one fresh
    /// id, at the same `now`; and every step is well formed where it lands.
    #[test]
    fn a_clone_keeps_the_prefix_and_adds_renamed_copies_that_are_well_formed() {
        let cfg = crate::GenConfig::default();
        let mut cloned = 0;
        for seed in 1..=20 {
            let prefix = crate::generate(seed, &cfg);
            let mut rng = crate::dice::seeded_rng(seed);
            let empty = Machine::new(ServerConfig::default());
            let Some(out) = clone_history(&prefix, empty, &Stepper::spec(), &mut rng) else {
                continue;
            };
            cloned += usize::from(out.len() > prefix.len());
            let mut m = Machine::new(ServerConfig::default());
            let (mut i, mut pair) = (0, None);
            for (k, s) in out.iter().enumerate() {
                assert!(crate::well_formed(s, &m).is_ok(), "seed {seed}: {s:?}");
                crate::apply(&mut m, s);
                if i < prefix.len() && *s == prefix[i] {
                    i += 1;
                    continue;
                }
                let before = &out[k - 1];
                assert_eq!(s.now, before.now);
                let (a, b) = (names(before), names(s));
                let renamed: Vec<(&String, &String)> =
                    a.iter().zip(&b).filter(|(x, y)| x != y).collect();
                assert!(!renamed.is_empty(), "seed {seed}: a copy renames: {s:?}");
                for (x, y) in renamed {
                    let p = pair.get_or_insert((x.clone(), y.clone()));
                    assert_eq!((x, y), (&p.0, &p.1), "seed {seed}: one id, one clone");
                }
            }
            assert_eq!(i, prefix.len(), "seed {seed}: every original step stays");
        }
        assert!(cloned >= 15, "{cloned} of 20 prefixes cloned");
    }

    #[test]
    fn nothing_named_twice_is_not_cloned() {
        let prefix = vec![at(T0, task("a.1")), at(T0, task("b.1"))];
        let empty = Machine::new(ServerConfig::default());
        let mut rng = crate::dice::seeded_rng(1);
        assert!(clone_history(&prefix, empty, &Stepper::spec(), &mut rng).is_none());
    }
}
