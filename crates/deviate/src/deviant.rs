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
        apply_through(&self.deviations, &mut self.machine, req, now)
    }

    /// Fire one timer at `now`.
    pub fn fire(&mut self, timer: &Timer, now: Time) {
        fire_through(&self.deviations, &mut self.machine, timer, now)
    }

    /// Fire everything due at `now`, in the model's tick order, each timer
    /// through the deviations.
    pub fn tick(&mut self, now: Time) -> Vec<Timer> {
        let devs = &self.deviations;
        self.machine
            .tick_with(now, |m, t| fire_through(devs, m, t, now))
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

fn apply_through(devs: &[&Deviation], m: &mut Machine, req: &Request, now: Time) -> Response {
    match devs.split_first() {
        None => m.apply(req, now),
        Some((d, rest)) => d
            .hooks
            .apply(m, req, now, &mut |m, r, t| apply_through(rest, m, r, t)),
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
