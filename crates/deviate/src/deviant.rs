//! The model with deviations applied: what every in-process server and the
//! runner's checker drive.

use std::ops::{Deref, DerefMut};

use model::api::{Request, Response};
use model::machine::{Machine, Timer};
use model::state::ServerConfig;
use model::types::Time;

use crate::Deviation;

/// A [`Machine`] whose requests, timers and responses go through a list of
/// deviations, first listed outermost. It dereferences to the machine, so
/// state reads (`due`, `state`, hits) are the machine's own.
#[derive(Clone, Debug)]
pub struct Deviant {
    machine: Machine,
    deviations: Vec<&'static Deviation>,
}

impl Deviant {
    /// A fresh machine with `deviations` (none: the spec exactly).
    pub fn new(config: ServerConfig, deviations: Vec<&'static Deviation>) -> Deviant {
        Deviant {
            machine: Machine::new(config),
            deviations,
        }
    }

    /// The deviations applied.
    pub fn deviations(&self) -> &[&'static Deviation] {
        &self.deviations
    }

    /// Forget the state, keeping the config and the deviations.
    pub fn reset(&mut self) {
        self.machine = Machine::new(self.machine.state.config);
    }

    /// Apply one request at `now`.
    pub fn apply(&mut self, req: &Request, now: Time) -> Response {
        let devs = &self.deviations;
        apply_through(devs, devs, &mut self.machine, req, now)
    }

    /// Fire one timer at `now`.
    pub fn fire(&mut self, timer: &Timer, now: Time) {
        fire_through(&self.deviations, &mut self.machine, timer, now)
    }

    /// Fire everything due at `now`, in the model's tick order, each timer
    /// through the deviations.
    pub fn tick(&mut self, now: Time) -> Vec<Timer> {
        let devs = &self.deviations;
        tick_through(devs, devs, &mut self.machine, now)
    }

    /// One step: a request (its response) or a tick (`None`).
    pub fn step(&mut self, step: &gen::Step) -> Option<Response> {
        match &step.op {
            gen::Op::Request(r) => Some(self.apply(r, step.now)),
            gen::Op::Tick => {
                self.tick(step.now);
                None
            }
        }
    }

    /// The generator's step for this model: each step goes through the same
    /// deviations, so a generator reads the state this model would have.
    pub fn stepper(&self) -> gen::Stepper {
        stepper(self.deviations.clone())
    }

    /// Whether [`Deviant::encode`] is the spec's encoding unchanged (no
    /// deviation rewrites it), so `res` alone says what the envelope holds.
    pub fn encodes_plainly(&self) -> bool {
        self.deviations.iter().all(|d| !d.hooks.rewrites_encoding())
    }

    /// The response envelope of `res` to `req`, as the deviant server
    /// would encode it.
    pub fn encode(&self, req: &Request, res: &Response, corr_id: &str) -> serde_json::Value {
        let mut env = model::wire::encode_response(req.kind(), res, corr_id);
        for d in &self.deviations {
            d.hooks.encode(req, &mut env);
        }
        env
    }
}

impl Deref for Deviant {
    type Target = Machine;
    fn deref(&self) -> &Machine {
        &self.machine
    }
}

impl DerefMut for Deviant {
    fn deref_mut(&mut self) -> &mut Machine {
        &mut self.machine
    }
}

/// The generator's step through `deviations` (none: the spec's step).
pub fn stepper(deviations: Vec<&'static Deviation>) -> gen::Stepper {
    if deviations.is_empty() {
        return gen::Stepper::spec();
    }
    gen::Stepper::new(move |m, step| match &step.op {
        gen::Op::Request(r) => {
            apply_through(&deviations, &deviations, m, r, step.now);
        }
        gen::Op::Tick => {
            tick_through(&deviations, &deviations, m, step.now);
        }
    })
}

/// `req` through `devs` (the rest of `all`, outermost first); a firing on
/// access goes through `all`.
fn apply_through(
    all: &[&Deviation],
    devs: &[&Deviation],
    m: &mut Machine,
    req: &Request,
    now: Time,
) -> Response {
    match devs.split_first() {
        None => m.apply(req, now),
        Some((d, rest)) => d.hooks.apply_firing(
            m,
            req,
            now,
            &mut |m, r, t| apply_through(all, rest, m, r, t),
            &|m, timer, t| fire_through(all, m, timer, t),
        ),
    }
}

/// A tick through `devs` (the rest of `all`); each timer fires through `all`.
fn tick_through(all: &[&Deviation], devs: &[&Deviation], m: &mut Machine, now: Time) -> Vec<Timer> {
    match devs.split_first() {
        None => m.tick_with(now, |m, t| fire_through(all, m, t, now)),
        Some((d, rest)) => d
            .hooks
            .tick(m, now, &mut |m, n| tick_through(all, rest, m, n)),
    }
}

fn fire_through(devs: &[&Deviation], m: &mut Machine, timer: &Timer, now: Time) {
    match devs.split_first() {
        None => m.fire(timer, now),
        Some((d, rest)) => d
            .hooks
            .fire(m, timer, now, &mut |m, t, n| fire_through(rest, m, t, n)),
    }
}
