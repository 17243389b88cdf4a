//! The latitude search, in named phases, each with its own budget:
//!
//! 1. **before**: schedules of due timers fired before the request (for a
//!    tick: other orders of the whole tick), most likely first
//!    ([`crate::latitude`]); the first that explains response and snapshot
//!    wins;
//! 2. **after**: for each before-schedule (the plain one first) whose
//!    response fits, schedules of what is then due fired after the step.
//!
//! Breadth first: no after-schedule is tried before every before-schedule
//! has been. Each phase may try [`PHASE_BUDGET`] schedules, the number of
//! candidates the rule gives for [`latitude::MAX_EXHAUSTIVE`] due timers:
//! so every documented before-candidate is tried, and the after phase
//! always reaches every after-candidate of the plain schedule (then of the
//! others, in order, while the budget lasts).

use std::collections::BTreeSet;

use serde_json::Value;

use gen::{Op, Step};
use model::machine::Timer;
use model::state::Mark;

use super::{Attempt, Checker};
use crate::latitude;
use crate::snapshot::Snap;

/// Schedules one phase may try: every candidate of the exhaustive rule.
pub const PHASE_BUDGET: usize = latitude::EXHAUSTIVE_CANDIDATES;

/// At most this many schedules are tried for one step (both phases).
pub const MAX_ATTEMPTS: usize = 2 * PHASE_BUDGET;

/// What is left to spend on one step.
struct Budget(usize);

impl Budget {
    /// Spend one attempt; `false` when nothing is left.
    fn spend(&mut self) -> bool {
        let ok = self.0 > 0;
        self.0 = self.0.saturating_sub(1);
        ok
    }
}

impl Checker {
    /// An allowed schedule that explains the target, if any; the model is
    /// left in its state (uncommitted). `mark` is the state before the step.
    pub(super) fn search(
        &mut self,
        step: &Step,
        plain: &Attempt,
        res: Option<&Value>,
        snap: Option<&Snap>,
        mark: Mark,
    ) -> Option<Attempt> {
        let hints = hints(step, plain);
        let mut budget = Budget(PHASE_BUDGET);
        let mut response_fits: Vec<Vec<Timer>> = Vec::new();
        if plain.response.is_none() {
            response_fits.push(Vec::new());
        }
        // Phase 1: before the request (or the order of a tick).
        let due = self.model.due(step.now);
        let befores = match &step.op {
            Op::Tick => latitude::tick_orders(&due, &self.model),
            Op::Request(_) => latitude::around_request(&due, &hints),
        };
        for before in befores {
            if !budget.spend() {
                // The after phase has its own budget: still try it.
                break;
            }
            let a = self.attempt(step, &before, &[], res, snap);
            if a.fits() {
                return Some(a);
            }
            if a.response.is_none() {
                response_fits.push(before);
            }
            self.model.state.rollback(mark);
        }
        // Phase 2: after the step, only the state is left to explain.
        snap?;
        let mut budget = Budget(PHASE_BUDGET);
        for before in response_fits {
            if let Some(a) = self.after(step, &before, &hints, res, snap, &mut budget) {
                return Some(a);
            }
            self.model.state.rollback(mark);
        }
        None
    }

    /// Phase 2 for one before-schedule: what is due after the step, fired
    /// in each candidate schedule.
    fn after(
        &mut self,
        step: &Step,
        before: &[Timer],
        hints: &BTreeSet<String>,
        res: Option<&Value>,
        snap: Option<&Snap>,
        budget: &mut Budget,
    ) -> Option<Attempt> {
        let inner = self.model.state.checkpoint();
        let _ = self.attempt(step, before, &[], res, None);
        let due_after = self.model.due(step.now);
        self.model.state.rollback(inner);
        for after in latitude::around_request(&due_after, hints) {
            if !budget.spend() {
                return None;
            }
            let a = self.attempt(step, before, &after, res, snap);
            if a.fits() {
                return Some(a);
            }
            self.model.state.rollback(inner);
        }
        None
    }
}

/// Ids worth firing first: those the request names and those the plain
/// attempt's state diff names.
fn hints(step: &Step, plain: &Attempt) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    if let Op::Request(r) = &step.op {
        ids.extend(model::names::ids(r));
    }
    for d in &plain.state {
        ids.extend(d.ids.iter().cloned());
    }
    ids
}
