//! Which branches of the model a trace takes.
//!
//! Coverage is measured on the model, not on a target: a fresh machine
//! replays the steps and its recorded branches are collected. Branches the
//! model marks unreachable (`model::branch::UNREACHABLE`) are left out of
//! the total.

use std::collections::BTreeSet;

use model::branch::{Branch, ALL, RESUME_ALREADY_BUFFERED, RESUME_FULFILLED_IGNORED, UNREACHABLE};
use model::machine::Machine;
use model::state::ServerConfig;

use crate::{apply, Step};

/// Branches `model::branch::UNREACHABLE` counts as reachable but that no
/// well-formed trace can take; they stay in [`Coverage::missed`] (the model
/// owns that list) and the coverage test tolerates exactly these.
///
/// - `resume/already_buffered`: `enqueueResume B A` runs once per entry of
///   `B.callbacks` (deduplicated) when `B` settles, and `B` settles at most
///   once (every settlement needs `B` pending and leaves it settled). A
///   task's `resumes` gains ids only there, so `B` cannot already be in it.
/// - `resume/fulfilled_ignored`: `A` enters `B.callbacks` only while `A`'s
///   promise is live (register_callback checks the awaiter, suspend checks
///   the task's promise). `A`'s task becomes fulfilled only when `A`
///   settles (or is created settled), and that settlement scrubs `A` from
///   the callbacks of every pending promise, `B` included; a settled `A`
///   cannot register again. So no settlement finds a fulfilled awaiter.
pub const NEVER_TAKEN: &[Branch] = &[RESUME_ALREADY_BUFFERED, RESUME_FULFILLED_IGNORED];

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
