//! What runs under the served model's one lock: the request pipeline
//! ([`LocalServer`]) and, in persistent mode, its [`Log`], so a step is
//! applied and logged in one critical section and the log's order is the
//! order of application.

use std::io;

use gen::{Op, Step};
use model::api::Request;
use model::state::Writes;
use model::types::Time;
use model::view::StateView;
use serde_json::Value as JsonValue;
use tokio::sync::oneshot;

use super::log::Log;
use super::races::rendezvous::Waiters;
use crate::target::LocalServer;

/// The served model and its log.
#[derive(Debug)]
pub(crate) struct Core {
    server: LocalServer,
    log: Option<Log>,
    /// Racy handlers waiting for a rival ([`super::races::rendezvous`]).
    waiters: Waiters,
}

impl Core {
    pub(crate) fn new(server: LocalServer, log: Option<Log>) -> Core {
        Core {
            server,
            log,
            waiters: Waiters::default(),
        }
    }

    /// Handle a request and log it when it wrote something (a read has
    /// nothing to make durable, and a log of writes is what a real server's
    /// write-ahead log holds: a bug that loses the log's last entry then
    /// always loses a write); the envelope to answer. A step that was
    /// applied but could not be logged answers 500: its durability is not
    /// what the server claims.
    pub(crate) fn handle(&mut self, req: &Request, now: Time, corr_id: &str) -> JsonValue {
        if self.waiters.is_empty() && self.log.is_none() {
            return self.server.handle(req, now, corr_id);
        }
        // Learn what it writes (the same state as handling it directly): a
        // racy handler may be waiting for it as its rival, and a step that
        // writes nothing has nothing to make durable.
        let (env, writes) = self.server.handle_deferred(req, now, corr_id);
        self.server.write(&writes);
        self.waiters.arrived(&writes);
        let Some(log) = self.log.as_mut().filter(|_| !writes.is_empty()) else {
            return env;
        };
        let step = Step {
            now,
            op: Op::Request(req.clone()),
        };
        match log.append(&step) {
            Ok(()) => env,
            Err(e) => not_logged(req.kind(), corr_id, &e),
        }
    }

    /// Fire what is due at `now` and log the tick, when it fired something.
    pub(crate) fn tick(&mut self, now: Time) -> io::Result<()> {
        if self.waiters.is_empty() && self.log.is_none() {
            self.server.tick(now);
            return Ok(());
        }
        let writes = self.server.tick_deferred(now);
        self.server.write(&writes);
        self.waiters.arrived(&writes);
        match self.log.as_mut().filter(|_| !writes.is_empty()) {
            Some(log) => log.append(&Step { now, op: Op::Tick }),
            None => Ok(()),
        }
    }

    /// Forget everything, the log too.
    pub(crate) fn reset(&mut self) -> io::Result<()> {
        self.server.reset();
        match &mut self.log {
            Some(log) => log.truncate(),
            None => Ok(()),
        }
    }

    /// The state, as `debug.snap` shows it.
    pub(crate) fn view(&self) -> StateView {
        self.server.view()
    }

    /// A racy handler's check and computation
    /// ([`LocalServer::handle_deferred`]), and the rendezvous it waits at:
    /// it is the rival of the handlers already waiting whose objects it
    /// writes, and the receiver hears when its own rival was handled.
    /// Races are not served with a log (a log of steps cannot replay blind
    /// writes), so nothing is logged.
    pub(crate) fn handle_deferred(
        &mut self,
        req: &Request,
        now: Time,
        corr_id: &str,
    ) -> (JsonValue, Writes, Option<oneshot::Receiver<()>>) {
        let (env, writes) = self.server.handle_deferred(req, now, corr_id);
        let rival = self.rendezvous(&writes);
        (env, writes, rival)
    }

    /// A racy tick's firing ([`LocalServer::tick_deferred`]), with its
    /// rendezvous as [`Core::handle_deferred`]'s.
    pub(crate) fn tick_deferred(&mut self, now: Time) -> (Writes, Option<oneshot::Receiver<()>>) {
        let writes = self.server.tick_deferred(now);
        let rival = self.rendezvous(&writes);
        (writes, rival)
    }

    /// Deferred `writes` meet the handlers waiting for them as a rival,
    /// and wait for their own. A handler that writes nothing has nothing
    /// a rival could overwrite (its answer is a read, linearized at its
    /// check), so it answers at once: it used to wait out the window
    /// (25 ms) and hold its client back, and most racy requests of a run
    /// write nothing (a callback on a missing or expired promise).
    fn rendezvous(&mut self, writes: &Writes) -> Option<oneshot::Receiver<()>> {
        self.waiters.arrived(writes);
        (!writes.is_empty()).then(|| self.waiters.wait(writes))
    }

    /// Land a racy handler's writes.
    pub(crate) fn write(&mut self, writes: &Writes) {
        self.server.write(writes);
    }

    /// Write what the log holds back (`ack-before-log`).
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        match &mut self.log {
            Some(log) => log.flush(),
            None => Ok(()),
        }
    }
}

/// The 500 of a step applied but not logged.
pub(crate) fn not_logged(kind: &str, corr_id: &str, e: &io::Error) -> JsonValue {
    model::wire::response::error_envelope(
        kind,
        corr_id,
        500,
        &format!("the step was applied but could not be logged: {e}"),
    )
}
