//! State-aware generation of Resonate request traces.
//!
//! A trace is a list of [`Step`]s: a request or a tick, each at a `now` that
//! never decreases. The [`Generator`] owns a [`model::machine::Machine`] and
//! chooses every step by reading that model's state (which ids exist, which
//! task versions are current, which deadlines are armed), then applies the
//! step to its own machine before choosing the next one, in the manner of
//! proptest-state-machine's `ReferenceStateMachine`. That is what lets short
//! random traces reach deep states: suspended tasks resumed by a settlement,
//! leases expiring, retries re-sent, schedules catching up. It is an endless
//! iterator of steps ([`stream`] is a case of it), so a runner sends each
//! step as it is chosen; its choices read an index of the model's state
//! kept up to date step by step, so a step costs the same however long the
//! case is.
//!
//! Every generated request is well formed under the real servers' request
//! validation ([`well_formed`]), so targets are not drowned in 400s. The
//! runner shrinks failing traces itself; [`repair`] keeps an edited trace
//! well formed (versions re-pointed at the changed history), and
//! [`coverage`] reports which model branches a trace takes.
//!
//! ```
//! use gen::{generate, GenConfig, Op};
//!
//! let cfg = GenConfig { steps: 20, ..GenConfig::default() };
//! let trace = generate(7, &cfg);
//! assert_eq!(trace.len(), 20);
//! assert_eq!(trace, generate(7, &cfg)); // deterministic per seed
//! assert!(trace.windows(2).all(|w| w[0].now <= w[1].now));
//! assert!(trace.iter().any(|s| matches!(s.op, Op::Request(_))));
//! ```
#![warn(missing_docs)]

mod aim;
mod clock;
mod clone;
mod coverage;
mod dice;
pub mod epoch;
mod focus;
mod generator;
mod index;
mod pools;
mod probe;
mod promise_ops;
mod ranked;
mod repair;
mod rules;
mod schedule_ops;
mod sharpen;
mod steer;
mod task_claim;
mod task_ops;
mod walk;

use model::api::Request;
use model::machine::Machine;

pub use aim::Aim;
pub use coverage::{coverage, Coverage};
pub use dice::{below, case_seed, chance, seeded_rng};
pub use generator::{
    generate, generate_with, stream, trace_strategy, Generator, Stepper, BUILD, FAVOUR,
};
pub use repair::repair;
pub use rules::{is_probe, probe_rule, well_formed};
pub use steer::{Campaign, RARE, STEER_PCT};

/// What one step does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// An external request.
    Request(Request),
    /// Fire every armed timeout due at the step's `now` (`debug.tick {time: now}`).
    Tick,
}

/// One step of a trace: an [`Op`] at a point in time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Unix milliseconds; never smaller than the previous step's.
    pub now: u64,
    /// The request or tick.
    pub op: Op,
}

/// Generation options. Every one is logged with the seed by the runner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenConfig {
    /// Number of steps per trace.
    pub steps: usize,
    /// The servers' retry timeout (ms), the model's `ServerConfig::retry_timeout`.
    pub retry_timeout: u64,
    /// The `now` of the first step (Unix ms).
    pub start: u64,
    /// The request kinds to generate (a target that does not implement a
    /// kind at all is still checkable on the rest).
    pub kinds: Kinds,
    /// Percent of requests that are validation probes: requests the spec
    /// accepts but the Rust server's 400 rules refuse (0: none).
    pub probe_pct: u64,
    /// Kinds drawn [`FAVOUR`] times as often as their weight
    /// says (none: the plain weights): a campaign steered toward where its
    /// unexplained departures lie (`conform triage`'s residue).
    pub favour: Kinds,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            steps: 50,
            retry_timeout: model::state::DEFAULT_RETRY_TIMEOUT,
            start: 1_700_000_000_000,
            kinds: Kinds::ALL,
            probe_pct: 0,
            favour: Kinds::NONE,
        }
    }
}

/// A set of request kinds, by their wire names (`model::api::KINDS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kinds(u32);

impl Kinds {
    /// Every kind.
    pub const ALL: Kinds = Kinds((1 << model::api::KINDS.len()) - 1);

    /// No kind.
    pub const NONE: Kinds = Kinds(0);

    /// The set with `kind` too; `None` when `kind` is no request kind.
    pub fn with(self, kind: &str) -> Option<Kinds> {
        let i = model::api::KINDS.iter().position(|k| *k == kind)?;
        Some(Kinds(self.0 | (1 << i)))
    }

    /// The set of `kinds`; `None` when one is no request kind.
    pub fn of(kinds: &[&str]) -> Option<Kinds> {
        kinds.iter().try_fold(Kinds::NONE, |set, k| set.with(k))
    }

    /// The set without `kind`; `None` when `kind` is no request kind.
    pub fn without(self, kind: &str) -> Option<Kinds> {
        let i = model::api::KINDS.iter().position(|k| *k == kind)?;
        Some(Kinds(self.0 & !(1 << i)))
    }

    /// Whether `kind` is in the set.
    pub fn contains(self, kind: &str) -> bool {
        model::api::KINDS
            .iter()
            .position(|k| *k == kind)
            .is_some_and(|i| self.0 & (1 << i) != 0)
    }

    /// Whether no kind is left.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The kinds left out, in wire order.
    pub fn omitted(self) -> Vec<&'static str> {
        model::api::KINDS
            .iter()
            .copied()
            .filter(|k| !self.contains(k))
            .collect()
    }
}

/// Apply one step to a machine: a request is applied at `step.now`, a tick
/// fires what is due at `step.now`. The generator, [`coverage`] and the
/// runner's in-process backend all go through here.
pub fn apply(m: &mut Machine, step: &Step) -> Option<model::api::Response> {
    match &step.op {
        Op::Request(r) => Some(m.apply(r, step.now)),
        Op::Tick => {
            m.tick(step.now);
            None
        }
    }
}
