//! Which branches of the model a trace takes.
//!
//! Coverage is measured on the model, not on a target: a fresh machine
//! replays the steps and its recorded branches are collected. Branches the
//! model marks unreachable (`model::branch::UNREACHABLE`) are left out of
//! the total, and so are the branches of request kinds a profile leaves out
//! (never generated, so never taken): those are listed apart
//! ([`Coverage::omitted`]), not counted as missed.

use std::collections::BTreeSet;

use model::branch::{Branch, ALL, UNREACHABLE};
use model::machine::Machine;
use model::state::ServerConfig;

use crate::{apply, Step};

/// The branches a set of traces took.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Every branch taken (reachable or not).
    pub hit: BTreeSet<Branch>,
    /// The number of reachable branches, those of omitted kinds aside.
    pub reachable_total: usize,
    /// Reachable branches of the request kinds left out.
    omitted: BTreeSet<Branch>,
}

impl Coverage {
    /// No branch taken yet.
    pub fn new() -> Self {
        Coverage::without_kinds::<&str>(&[])
    }

    /// No branch taken yet, the branches of `kinds` (request kinds a
    /// profile leaves out) out of the total.
    pub fn without_kinds<S: AsRef<str>>(kinds: &[S]) -> Self {
        let omitted: BTreeSet<Branch> = ALL
            .iter()
            .copied()
            .filter(|b| !UNREACHABLE.contains(b))
            .filter(|b| {
                let handler = b.name().split('/').next().unwrap_or("");
                kinds.iter().any(|k| k.as_ref() == handler)
            })
            .collect();
        Coverage {
            hit: BTreeSet::new(),
            reachable_total: ALL.iter().filter(|b| !UNREACHABLE.contains(b)).count()
                - omitted.len(),
            omitted,
        }
    }

    /// Reachable branches not taken, in spec order (those of omitted kinds
    /// aside).
    pub fn missed(&self) -> Vec<Branch> {
        ALL.iter()
            .copied()
            .filter(|b| !UNREACHABLE.contains(b) && !self.omitted.contains(b))
            .filter(|b| !self.hit.contains(b))
            .collect()
    }

    /// The branches of the omitted kinds, in spec order: not in the total.
    pub fn omitted(&self) -> Vec<Branch> {
        self.omitted.iter().copied().collect()
    }

    /// The number of reachable branches taken (those of omitted kinds
    /// aside).
    pub fn reachable_hit(&self) -> usize {
        self.reachable_total - self.missed().len()
    }

    /// Add what another measurement took.
    pub fn merge(&mut self, other: &Coverage) {
        self.hit.extend(other.hit.iter().copied());
    }
}

/// Replay `steps` on a fresh machine with `retry_timeout` and collect the
/// branches taken.
pub fn coverage(steps: &[Step], retry_timeout: u64) -> Coverage {
    let mut m = Machine::new(ServerConfig { retry_timeout });
    let mut c = Coverage::new();
    for s in steps {
        apply(&mut m, s);
        c.hit.extend(m.take_hits());
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_branches_of_omitted_kinds_are_out_of_the_total_and_listed_apart() {
        let all = Coverage::new();
        let some = Coverage::without_kinds(&["task.get", "promise.search"]);
        let omitted: Vec<&str> = some.omitted().iter().map(|b| b.name()).collect();
        assert!(omitted.contains(&"task.get/live_200"), "{omitted:?}");
        assert!(omitted.contains(&"promise.search/not_implemented_501"));
        assert!(
            !omitted.contains(&"task.get/promise_not_found_404"),
            "an unreachable branch is in no total"
        );
        assert!(omitted
            .iter()
            .all(|b| b.starts_with("task.get/") || b.starts_with("promise.search/")));
        assert_eq!(some.reachable_total, all.reachable_total - omitted.len());
        assert!(some.missed().iter().all(|b| !omitted.contains(&b.name())));
        assert_eq!(some.reachable_hit(), 0);
        assert!(all.omitted().is_empty());
    }
}
