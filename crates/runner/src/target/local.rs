//! A server in this process: the model, with deviations when planted bugs
//! are asked for, behind the same request pipeline as the HTTP reference
//! server (the wire's 400 rules, optional materialising reads, encoding).
//! [`LocalServer`] is that pipeline, shared with `conform serve`;
//! [`LocalTarget`] drives it as a [`Target`] with no socket in between.

use serde_json::Value;

use deviate::{Deviant, Deviation};
use gen::{Op, Step};
use model::api::Request;
use model::state::{ServerConfig, Writes};
use model::types::Time;
use model::view::StateView;

use super::{Target, TargetError};
use crate::snapshot::Snap;

/// The model served: validation, then (optionally) materialising reads,
/// then the handler with its deviations, then the wire encoding.
#[derive(Clone, Debug)]
pub struct LocalServer {
    machine: Deviant,
    materialize: bool,
    validate: bool,
}

impl LocalServer {
    /// A fresh server with the retry timeout of `config`.
    pub fn new(
        config: ServerConfig,
        deviations: Vec<&'static Deviation>,
        materialize: bool,
    ) -> LocalServer {
        LocalServer {
            machine: Deviant::new(config, deviations),
            materialize,
            validate: true,
        }
    }

    /// The same server without the Rust server's 400 rules: the spec has
    /// none, and a server without them (the TypeScript one) takes what
    /// validation probes send.
    pub fn without_validation(mut self) -> LocalServer {
        self.validate = false;
        self
    }

    /// The same server holding `state` (triage screens a candidate from the
    /// state a target was pinned to).
    pub fn from_state(mut self, state: model::state::State) -> LocalServer {
        self.machine.state = state;
        self
    }

    /// Handle one decoded request at `now`: its response envelope.
    pub fn handle(&mut self, req: &Request, now: Time, corr_id: &str) -> Value {
        if self.validate {
            if let Err(msg) = model::wire::validate(req, self.machine.calendar()) {
                return model::wire::response::error_envelope(req.kind(), corr_id, 400, &msg);
            }
        }
        if self.materialize {
            fire_named(&mut self.machine, req, now);
        }
        let res = self.machine.apply(req, now);
        // Branch hits are for the checker's model; a server drops them.
        self.machine.clear_hits();
        self.machine.encode(req, &res, corr_id)
    }

    /// Fire every armed timeout due at `now`.
    pub fn tick(&mut self, now: Time) {
        self.machine.tick(now);
        self.machine.clear_hits();
    }

    /// [`LocalServer::handle`] as a handler that lost its lock runs it:
    /// the checks and the computation see the state as it is now, the
    /// state is left as it was, and the writes the handling made are
    /// returned, to land later, blindly ([`LocalServer::write`]). The
    /// server does not journal otherwise, so the journal is dropped after.
    pub fn handle_deferred(&mut self, req: &Request, now: Time, corr_id: &str) -> (Value, Writes) {
        let mark = self.machine.state.checkpoint();
        let env = self.handle(req, now, corr_id);
        let writes = self.machine.state.writes_since(mark);
        self.machine.state.rollback(mark);
        self.machine.state.commit();
        (env, writes)
    }

    /// [`LocalServer::tick`] as a non-atomic handler runs it: what is due
    /// now is fired on the current state, and the writes are returned
    /// instead of kept.
    pub fn tick_deferred(&mut self, now: Time) -> Writes {
        let mark = self.machine.state.checkpoint();
        self.tick(now);
        let writes = self.machine.state.writes_since(mark);
        self.machine.state.rollback(mark);
        self.machine.state.commit();
        writes
    }

    /// Land deferred writes: every key they name is overwritten, whatever
    /// happened to it meanwhile (last writer wins).
    pub fn write(&mut self, writes: &Writes) {
        self.machine.state.apply_writes(writes);
    }

    /// Forget everything, keeping the configuration.
    pub fn reset(&mut self) {
        self.machine.reset();
    }

    /// The state as `debug.snap` shows it.
    pub fn view(&self) -> StateView {
        StateView::of(&self.machine.state)
    }
}

/// Materialising reads: before handling a request, fire the due promise
/// timeouts of the promises it names, in due order.
///
/// The spec only *projects* a pending promise past its deadline on read;
/// the promise stays pending until the environment fires
/// `onPromiseTimeout`. But the environment may fire any armed timeout whose
/// deadline has passed at any moment, so firing it just before a request is
/// a schedule the spec allows, and the runner must accept a server that
/// does it (as the Rust server's `try_timeout` does). Only *armed* timeouts
/// fire: an internal promise past its deadline stays pending and projected.
fn fire_named(m: &mut Deviant, req: &Request, now: Time) {
    let ids = model::names::named(req);
    let due: Vec<_> = m
        .due_in_group(0, now)
        .into_iter()
        .filter(|t| ids.contains(&t.id()))
        .collect();
    for t in &due {
        m.fire(t, now);
    }
}

/// A [`LocalServer`] driven directly: a target with no transport.
#[derive(Clone, Debug)]
pub struct LocalTarget {
    server: LocalServer,
}

impl LocalTarget {
    /// A target serving `server`.
    pub fn new(server: LocalServer) -> LocalTarget {
        LocalTarget { server }
    }
}

impl Target for LocalTarget {
    fn describe(&self) -> String {
        "in-process".to_string()
    }

    fn start(&mut self) -> Result<(), TargetError> {
        self.server.reset();
        Ok(())
    }

    fn reset(&mut self) -> Result<(), TargetError> {
        self.server.reset();
        Ok(())
    }

    fn send(&mut self, step: &Step) -> Result<Option<Value>, TargetError> {
        Ok(match &step.op {
            Op::Request(r) => Some(self.server.handle(r, step.now, "local")),
            Op::Tick => {
                self.server.tick(step.now);
                None
            }
        })
    }

    fn snap(&mut self) -> Result<Snap, TargetError> {
        Ok(Snap::from_view(self.server.view()))
    }
}
