//! Linearizability of a concurrent history against the model: a pure
//! function of the history and the checker's model, with no IO, as the
//! model is (Jepsen's checkers, porcupine's `CheckOperations`).
//!
//! **The contract.** For the responses the server gave, there must be one
//! sequential order of the operations, consistent with real time (an
//! operation that completed before another began comes first), in which
//! the model — with the internal transitions the spec allows between
//! operations — gives the same responses; and the state at every barrier
//! must be the state of that order.
//!
//! **Epochs make it cheap.** Time advances only at barriers, where nothing
//! is in flight and the target's snapshot is read (ARCHITECTURE.md, "The
//! concurrent run"). When the snapshot shows every component and no
//! indeterminate operation is open (or the epoch crashed, which closes
//! them), it pins the model's state, so each
//! epoch is searched from one configuration ([`search`]); otherwise the
//! search carries every configuration the snapshot allows, up to
//! [`LinOptions::max_configs`]. A barrier compares only the objects that
//! can differ from the previous one ([`barrier`]), and a run records it as
//! a delta against that one ([`shown`]), so a barrier costs what changed.
//!
//! **Partitioning.** Porcupine partitions a history into independent keys.
//! Resonate's objects are not independent: a settlement resumes the tasks
//! awaiting it, a suspend links a task to promises, a tick touches every
//! due object, a schedule makes promises. The barrier is the partition
//! that is always sound: epochs are checked one after another from the
//! state the previous one pinned, never across. Inside an epoch the
//! operations and due timers are split into components with those links
//! closed over ([`partition`]), each searched alone.

pub mod barrier;
pub mod history;
pub mod partition;
pub mod reduce;
pub mod report;
pub mod search;
pub mod shown;

use std::collections::BTreeSet;
use std::sync::Arc;

use deviate::Deviant;
use gen::Step;
use model::view::StateView;

use barrier::Expected;
use history::{Epoch, History, Operation};
use search::{search_epoch, EpochInput, Found, Move};
use shown::Shown;

/// Search limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinOptions {
    /// Configurations one epoch's search may explore before it gives up
    /// (the verdict is then *undecided*, never green).
    pub budget: u64,
    /// Configurations carried from one epoch to the next when the
    /// snapshot does not pin the state.
    pub max_configs: usize,
    /// The partial-order reduction inside a component ([`reduce`]): a due
    /// timer fires only just before a move that observes it, or at the
    /// close. Off: every due timer may fire between any two moves (the
    /// full search, which the reduction must agree with).
    pub reduce: bool,
}

impl Default for LinOptions {
    fn default() -> Self {
        LinOptions {
            budget: 2_000_000,
            max_configs: 64,
            reduce: true,
        }
    }
}

/// Figures of one check.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Epochs checked.
    pub epochs: usize,
    /// Operations checked.
    pub ops: usize,
    /// Of which indeterminate.
    pub indeterminate: usize,
    /// Epochs with a crash.
    pub crashes: usize,
    /// Configurations explored, all epochs.
    pub nodes: u64,
    /// Configurations found again in the memo.
    pub memo_hits: u64,
    /// The most operations one epoch's search held.
    pub widest_epoch: usize,
    /// The most configurations carried between two epochs.
    pub most_configs: usize,
    /// Epochs whose snapshot pinned the state (searched to the first order).
    pub pinned_epochs: usize,
    /// Barriers compared only on the objects that could differ
    /// ([`barrier`]); the others were compared whole.
    pub incremental_barriers: usize,
    /// Components searched, all epochs ([`partition`]; an epoch not split
    /// counts one).
    pub components: usize,
    /// Epochs split into more than one component.
    pub split_epochs: usize,
    /// The most candidates one component held.
    pub largest_component: usize,
    /// Components searched in full although the reduction was on (it could
    /// not vouch for them: [`search::Found::unreduced`]).
    pub unreduced: usize,
}

/// A history no order explains.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The epoch that cannot be ordered.
    pub epoch: usize,
    /// Its `now`.
    pub now: u64,
    /// Its candidate operations (indeterminate ones of earlier epochs first).
    pub ops: Vec<Operation>,
    /// The smallest window of it that cannot be ordered.
    pub window: report::Window,
    /// The deepest partial orders and the operation each could not place.
    pub misfits: Vec<search::Misfit>,
    /// A full order whose state the snapshot refused, with the difference.
    pub state_refused: Option<(Vec<Move>, Vec<crate::compare::StateDiff>)>,
    /// What the model answers in each real-time order of the window.
    pub orders: Vec<report::OrderTried>,
    /// The model's state at the epoch's start (the snapshot shape).
    pub start: serde_json::Value,
    /// The operations of an order of every earlier epoch, in order: a
    /// sequential trace that rebuilds the start state.
    pub prefix: Vec<Step>,
}

/// The verdict on a history.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// Some order explains every response and every barrier.
    Linearizable,
    /// No order explains the history.
    NotLinearizable(Box<Failure>),
    /// The search gave up (budget, or configurations dropped before a
    /// failing epoch): not green.
    Undecided {
        /// The epoch.
        epoch: usize,
        /// Why.
        why: String,
    },
}

/// A check's verdict and figures.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The verdict.
    pub verdict: Verdict,
    /// The figures.
    pub stats: Stats,
}

/// One configuration between epochs.
struct Config {
    model: Deviant,
    /// Indeterminate operations that may still take effect.
    pending: Vec<Operation>,
    /// A sequential trace of what linearized so far.
    prefix: Prefix,
}

/// A sequential trace shared between configurations: each epoch adds its
/// order in front of the earlier ones', so carrying it costs nothing per
/// epoch (it is read only when an epoch fails).
#[derive(Clone, Default)]
struct Prefix(Option<Arc<PrefixNode>>);

struct PrefixNode {
    steps: Vec<Step>,
    earlier: Prefix,
}

impl Prefix {
    /// This trace followed by `steps`.
    fn then(&self, steps: Vec<Step>) -> Prefix {
        Prefix(Some(Arc::new(PrefixNode {
            steps,
            earlier: self.clone(),
        })))
    }

    /// The whole trace, in order.
    fn to_vec(&self) -> Vec<Step> {
        let mut chunks = Vec::new();
        let mut at = self;
        while let Some(node) = &at.0 {
            chunks.push(&node.steps);
            at = &node.earlier;
        }
        chunks.into_iter().rev().flatten().cloned().collect()
    }
}

/// The checker, epoch by epoch: a run checks each epoch as soon as its
/// barrier is read (and generates the next one from the state found);
/// `check-history` feeds it a saved history.
pub struct Linearizer {
    configs: Vec<Config>,
    skip: Vec<String>,
    opts: LinOptions,
    dropped: bool,
    /// The target's state as the last barrier showed it: the next
    /// barrier's delta applies to it.
    shown: Option<Shown>,
    /// Figures so far.
    pub stats: Stats,
}

impl Linearizer {
    /// A checker starting from `model` (fresh: the checker's model with
    /// its baseline), comparing snapshots except the `skip` components.
    pub fn new(model: Deviant, skip: &[String], opts: LinOptions) -> Linearizer {
        Linearizer {
            configs: vec![Config {
                model,
                pending: Vec::new(),
                prefix: Prefix::default(),
            }],
            skip: skip.to_vec(),
            opts,
            dropped: false,
            shown: None,
            stats: Stats::default(),
        }
    }

    /// The model of the first configuration: the state the next epoch
    /// starts from (the one a generator should read).
    pub fn model(&self) -> &Deviant {
        &self.configs[0].model
    }

    /// Check one epoch; `Err` is the verdict when no order explains it or
    /// the search gave up.
    pub fn check_epoch(&mut self, epoch: &Epoch) -> Result<(), Verdict> {
        let stats = &mut self.stats;
        stats.epochs += 1;
        stats.ops += epoch.ops.len();
        stats.indeterminate += epoch.ops.iter().filter(|o| !o.is_ok()).count();
        stats.crashes += usize::from(epoch.crashed);
        let snap = epoch.barrier.as_ref().and_then(|b| b.snap.as_ref());
        let changed = match snap {
            None => {
                self.shown = None;
                None
            }
            Some(s) => Shown::follow(&mut self.shown, s).map_err(|why| undecided(epoch, &why))?,
        };
        let shown = self.shown.as_ref().filter(|_| snap.is_some());
        let expected = shown.map(|s| Expected::new(s, changed));
        stats.incremental_barriers +=
            usize::from(expected.as_ref().is_some_and(|e| e.incremental()));
        // A snapshot of every component pins the state: every accepted end
        // is that state. The ends then differ only in the indeterminate
        // operations they leave open, and a crash closes those (the process
        // died), so after a crash the first end is all of them.
        let shows_all = shown.is_some_and(|s| shows_everything(s, &self.skip));
        let mut next: Vec<Config> = Vec::new();
        let mut first_failure: Option<(Config, Found, Vec<Operation>)> = None;
        let mut truncated = false;
        for mut cfg in std::mem::take(&mut self.configs) {
            let mut ops: Vec<&Operation> = cfg.pending.iter().collect();
            ops.extend(epoch.ops.iter());
            stats.widest_epoch = stats.widest_epoch.max(ops.len());
            if ops.len() > 128 {
                return Err(undecided(epoch, "more than 128 operations in one epoch"));
            }
            let pinned = shows_all && (epoch.crashed || ops.iter().all(|o| o.is_ok()));
            stats.pinned_epochs += usize::from(pinned);
            let input = EpochInput {
                ops: ops.clone(),
                now: epoch.now,
                snap: expected.as_ref(),
                skip: &self.skip,
                collect_all: !pinned,
                budget: self.opts.budget,
                max_ends: self.opts.max_configs,
                reduce: self.opts.reduce,
            };
            let mut found = search_epoch(&mut cfg.model, &input);
            stats.nodes += found.nodes;
            stats.memo_hits += found.memo_hits;
            stats.components += found.components;
            stats.unreduced += found.unreduced;
            stats.split_epochs += usize::from(found.components > 1);
            stats.largest_component = stats.largest_component.max(found.largest);
            truncated |= found.truncated;
            self.dropped |= found.dropped;
            let ends = std::mem::take(&mut found.ends);
            if ends.is_empty() {
                if first_failure.is_none() {
                    // A component no order explains is the failure: the
                    // others are independent of it.
                    let owned = ops
                        .iter()
                        .filter(|o| found.failing.as_ref().is_none_or(|f| f.contains(&o.id)))
                        .map(|o| (*o).clone())
                        .collect();
                    first_failure = Some((cfg, found, owned));
                }
                continue;
            }
            let prefix = cfg.prefix.then(order_steps(&found.order, &ops));
            let mut own = Some(cfg.model);
            for (end, left_out) in ends {
                let model = match end {
                    Some(m) => m,
                    None => own.take().expect("one end is the searched model"),
                };
                let prefix = prefix.clone();
                let pending = if epoch.crashed {
                    Vec::new()
                } else {
                    ops.iter()
                        .filter(|o| left_out.contains(&o.id))
                        .map(|o| (*o).clone())
                        .collect()
                };
                next.push(Config {
                    model,
                    pending,
                    prefix,
                });
            }
        }
        if next.is_empty() {
            if truncated {
                return Err(undecided(epoch, "the search budget ran out"));
            }
            if self.dropped {
                return Err(undecided(
                    epoch,
                    "configurations were dropped at an earlier epoch",
                ));
            }
            let (cfg, found, ops) = first_failure.expect("at least one configuration");
            let failure = report::failure(epoch, cfg.model, cfg.prefix.to_vec(), found, ops);
            return Err(Verdict::NotLinearizable(Box::new(failure)));
        }
        if next.len() > 1 {
            dedupe(&mut next);
        }
        if next.len() > self.opts.max_configs {
            next.truncate(self.opts.max_configs);
            self.dropped = true;
        }
        stats.most_configs = stats.most_configs.max(next.len());
        self.configs = next;
        Ok(())
    }
}

/// Check a whole history against `model` (fresh: the checker's model with
/// its baseline), comparing snapshots except the `skip` components.
pub fn check(history: &History, model: Deviant, skip: &[String], opts: LinOptions) -> Checked {
    let mut lin = Linearizer::new(model, skip, opts);
    let verdict = history
        .epochs
        .iter()
        .try_for_each(|e| lin.check_epoch(e))
        .err()
        .unwrap_or(Verdict::Linearizable);
    Checked {
        verdict,
        stats: lin.stats,
    }
}

fn undecided(epoch: &Epoch, why: &str) -> Verdict {
    Verdict::Undecided {
        epoch: epoch.index,
        why: why.to_string(),
    }
}

/// The steps of an order's operations (firings are the server's own); a
/// tick projected onto several components is listed once.
fn order_steps(order: &[Move], ops: &[&Operation]) -> Vec<Step> {
    let mut seen = BTreeSet::new();
    order
        .iter()
        .filter_map(|m| match m {
            Move::Op(id) if seen.insert(*id) => {
                ops.iter().find(|o| o.id == *id).map(|o| o.step.clone())
            }
            Move::Op(_) | Move::Fire(_) | Move::TickStart(_) => None,
        })
        .collect()
}

/// Whether a snapshot shows every component the model has, none skipped:
/// then it pins the model's state.
fn shows_everything(shown: &Shown, skip: &[String]) -> bool {
    skip.is_empty()
        && model::view::COMPONENTS
            .iter()
            .all(|c| shown.components().contains(c.name))
}

/// Drop configurations equal in state and open operations.
fn dedupe(configs: &mut Vec<Config>) {
    let mut seen = BTreeSet::new();
    configs.retain(|c| {
        let key = (
            serde_json::to_string(&StateView::of(&c.model.state)).expect("view serialises"),
            c.pending.iter().map(|o| o.id).collect::<Vec<_>>(),
        );
        seen.insert(key)
    });
}
