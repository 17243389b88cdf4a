//! The spec, except here: named, small departures from the model.
//!
//! A [`Deviation`] is one clause of the Lean done differently, written as a
//! change of the model's behaviour rather than of its code: hooks around
//! the spec's handling of a request ([`Hooks::apply`]), of a timer
//! ([`Hooks::fire`]), of a tick ([`Hooks::tick`]) and of the encoded
//! response ([`Hooks::encode`]). The
//! same catalogue serves two purposes:
//!
//! - **planted bugs**: `conform serve --mutant NAME` serves the model with
//!   a deviation, so the harness can be shown to catch, shrink and report
//!   it (`conform mutants` measures every one);
//! - **known departures of real servers**: a baseline names the deviations
//!   a target has, and the runner's model applies them, so a run goes on
//!   past what is known and still compares everything else exactly.
//!
//! [`Deviant`] is the model with a set of deviations applied: the one
//! machine that the reference server, the in-process target and the
//! runner's checker all drive. With no deviations it is the model exactly.
//!
//! Every entry names the Lean file and line it departs from, a [`Class`],
//! a one-line summary, and a hand-minimal *witness*: the shortest trace on
//! which the deviant and the model differ at the last step and nowhere
//! before (`tests/witnesses.rs` checks every one).
#![warn(missing_docs)]

pub mod catalogue;
mod deviant;
pub mod families;

pub use catalogue::{all, lookup, names};
pub use deviant::{stepper, Deviant};

use gen::Step;
use model::api::{Request, Response};
use model::machine::{Machine, Timer};
use model::types::Time;

/// What kind of departure a deviation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// The server does something the spec does not allow on input it accepts.
    Bug,
    /// The server refuses (400) input the spec accepts.
    Validation,
    /// Encoding only: the same behaviour spelled differently on the wire.
    Wire,
}

impl Class {
    /// `bug`, `validation` or `wire`.
    pub fn name(self) -> &'static str {
        match self {
            Class::Bug => "bug",
            Class::Validation => "validation",
            Class::Wire => "wire",
        }
    }
}

/// The spec's handling of a request, or the next deviation's.
pub type Next<'a> = &'a mut dyn FnMut(&mut Machine, &Request, Time) -> Response;
/// The spec's firing of a timer, or the next deviation's.
pub type NextFire<'a> = &'a mut dyn FnMut(&mut Machine, &Timer, Time);
/// The spec's tick (every due timer, each through the firing hooks), or the
/// next deviation's; returns the timers fired.
pub type NextTick<'a> = &'a mut dyn FnMut(&mut Machine, Time) -> Vec<Timer>;
/// The server's own firing of one timer: through every deviation's
/// [`Hooks::fire`], as a tick fires it.
pub type Fire<'a> = &'a dyn Fn(&mut Machine, &Timer, Time);

/// How a deviation changes the model. Every hook defaults to the spec's
/// behaviour (`next`), so a deviation overrides only what it changes.
/// Hooks work through the model's public API: rewrite the request, call
/// `next`, patch the state with its effects, or answer on their own.
pub trait Hooks: Sync {
    /// Handle `req` at `now`; `next` is the spec's handling.
    fn apply(&self, m: &mut Machine, req: &Request, now: Time, next: Next) -> Response {
        next(m, req, now)
    }

    /// Handle `req` at `now` where the server may fire timers on access
    /// (`fire`: its own firing, deviations included, so a server that
    /// settles expired promises when a request names them settles them as
    /// its timeout does). Defaults to [`Hooks::apply`].
    fn apply_firing(
        &self,
        m: &mut Machine,
        req: &Request,
        now: Time,
        next: Next,
        _fire: Fire,
    ) -> Response {
        self.apply(m, req, now, next)
    }

    /// Fire `timer` at `now`; `next` is the spec's transition.
    fn fire(&self, m: &mut Machine, timer: &Timer, now: Time, next: NextFire) {
        next(m, timer, now)
    }

    /// Tick at `now`; `next` is the spec's tick (what is due fired one by
    /// one through [`Hooks::fire`]). For departures of the tick as a whole
    /// (its order, its batching) that a single firing on access does not
    /// share.
    fn tick(&self, m: &mut Machine, now: Time, next: NextTick) -> Vec<Timer> {
        next(m, now)
    }

    /// Whether this deviation changes the tick as a whole ([`Hooks::tick`]):
    /// its server's tick is then one batch, and a concurrent run's checker
    /// places it at one point instead of spreading its firings over its
    /// interval.
    fn batches_tick(&self) -> bool {
        false
    }

    /// Whether this deviation reads and writes only what the spec's
    /// handling of the same request (or firing) may: the objects its
    /// request names and what a settlement or resume of them reaches. A
    /// concurrent run's checker keeps its partition and partial-order
    /// reduction for a model whose deviations all stay so
    /// (`runner::lin::reduce`); any other deviation makes it search every
    /// order of every due firing. A deviation that fires on access
    /// ([`Hooks::apply_firing`]) or changes the tick ([`Hooks::tick`])
    /// reaches past its request and must not declare it (a batched tick
    /// is refused whatever it declares: [`all_stay_in_footprint`]).
    fn stays_in_footprint(&self) -> bool {
        false
    }

    /// Adjust the encoded response envelope of `req` (wire deviations). A
    /// deviation that does must say so in [`Hooks::rewrites_encoding`].
    fn encode(&self, _req: &Request, _envelope: &mut serde_json::Value) {}

    /// Whether this deviation adjusts the encoded envelope
    /// ([`Hooks::encode`]): the checker then compares answers through the
    /// encoded JSON, never through the typed answer alone.
    fn rewrites_encoding(&self) -> bool {
        false
    }
}

/// One named departure from the spec.
pub struct Deviation {
    /// Kebab-case name, unique in the catalogue (`acquire-no-version-check`).
    pub name: &'static str,
    /// The Lean file and line it departs from
    /// (`spec/02-actions/T-03-task.acquire.lean:41`), at spec commit 83d64c3.
    pub spec: &'static str,
    /// Bug, validation or wire.
    pub class: Class,
    /// What it does differently, in one line.
    pub summary: &'static str,
    /// The behaviour.
    pub hooks: &'static dyn Hooks,
    /// The shortest trace that shows it: the deviant and the model agree on
    /// every step but the last (response and state view).
    pub witness: fn() -> Vec<Step>,
}

impl std::fmt::Debug for Deviation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deviation")
            .field("name", &self.name)
            .field("spec", &self.spec)
            .field("class", &self.class)
            .finish()
    }
}

impl PartialEq for Deviation {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// Whether every one of `deviations` stays in its footprint
/// ([`Hooks::stays_in_footprint`]) and none batches the tick: a model the
/// concurrent run's checker may split and reduce as the spec's.
pub fn all_stay_in_footprint(deviations: &[&Deviation]) -> bool {
    deviations
        .iter()
        .all(|d| d.hooks.stays_in_footprint() && !d.hooks.batches_tick())
}
