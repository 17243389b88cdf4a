//! Which branches of the model a trace takes.
//!
//! Coverage is measured on the model, not on a target: a fresh machine
//! replays the steps and its recorded branches are collected. Branches the
//! model marks unreachable (`model::branch::UNREACHABLE`) are left out of
//! the total.

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
    /// The number of reachable branches.
    pub reachable_total: usize,
}

impl Coverage {
    /// No branch taken yet.
    pub fn new() -> Self {
        Coverage {
            hit: BTreeSet::new(),
            reachable_total: ALL.iter().filter(|b| !UNREACHABLE.contains(b)).count(),
        }
    }

    /// Reachable branches not taken, in spec order.
    pub fn missed(&self) -> Vec<Branch> {
        ALL.iter()
            .copied()
            .filter(|b| !UNREACHABLE.contains(b) && !self.hit.contains(b))
            .collect()
    }

    /// The number of reachable branches taken.
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
