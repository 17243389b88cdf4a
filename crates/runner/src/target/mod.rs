//! What the runner drives: a [`Target`], in the spirit of
//! proptest-state-machine's system under test. The runner's one step loop
//! ([`crate::exec`]) sees only this trait, so a server over HTTP
//! ([`HttpTarget`]) and a machine in this process ([`LocalTarget`]: the
//! model, or the model with planted bugs) share every line of it.
//!
//! What may live behind the trait: transport, the target's debug surface,
//! the envelope's echo against what was sent ([`EnvelopeDeparture`]), and
//! translation of its wire and snapshot into the canonical form. What may
//! not: comparison with the model, latitude, or any knowledge of what the
//! model expects. A target reports what it did; the step loop and the
//! checker judge it.

mod conn;
pub mod dialect;
mod envelope;
mod error;
mod http;
mod local;
mod url;

use serde_json::Value;

use gen::Step;

use crate::snapshot::Snap;

pub use self::url::{check as check_url, is_loopback_url, UrlError};
pub use dialect::{Base, Dialect, DialectSpec, Rule};
pub use envelope::{AnswerHead, EnvelopeDeparture, EnvelopeField, HeadFields, HeadView};
pub use error::TargetError;
pub use http::{envelope_status, HttpTarget, DEFAULT_PIPELINE};
pub use local::{LocalServer, LocalTarget};

/// One client of a concurrent run: it only sends steps, on a connection of
/// its own, from a thread of its own.
pub trait Client: Send {
    /// Send one step at its `now`, as [`Target::send`] does.
    fn send(&mut self, step: &Step) -> Result<Option<Value>, TargetError>;
}

/// A server the runner drives: reset it, send it steps, read its state.
pub trait Target {
    /// Where it is (a URL, or `in-process`), for messages and reports.
    fn describe(&self) -> String;
    /// Put it in debug mode and wipe it: the start of a case. Refuses a
    /// target that is not in debug mode, so nothing else is ever wiped.
    fn start(&mut self) -> Result<(), TargetError>;
    /// Wipe it again (between shrink candidates).
    fn reset(&mut self) -> Result<(), TargetError>;
    /// Send one step at its `now`: the response envelope of a request,
    /// `None` for a tick (which fires every armed timeout due at `now`).
    fn send(&mut self, step: &Step) -> Result<Option<Value>, TargetError>;
    /// Its whole state, as `debug.snap` shows it.
    fn snap(&mut self) -> Result<Snap, TargetError>;
    /// How many steps the step loop may send before it reads the first
    /// one's answer (HTTP/1.1 pipelining; 1: one at a time, the default).
    /// The loop pipelines only steps that need nothing from the target's
    /// answers: when responses alone are compared, since the generator
    /// chooses every step from its own model; with state compared, each
    /// with its snapshot after it ([`Target::snap_ahead`]), or, where the
    /// caller may go on past a divergence (triage), one step with its
    /// snapshot at a time.
    fn pipeline_depth(&self) -> usize {
        1
    }
    /// Send `step` now, ahead of the answers of the steps before it: the
    /// next [`Target::send`] of it reads its answer instead of sending it
    /// again. Only called where [`Target::pipeline_depth`] is above 1.
    /// Steps sent ahead past where the loop stops are applied by the
    /// target and never checked; the next `start`, `reset` or `snap` reads
    /// their answers first.
    fn send_ahead(&mut self, step: &Step) {
        let _ = step;
        unreachable!("send_ahead on a target that does not pipeline")
    }
    /// Send `debug.snap` now, right after the step just sent ahead, before
    /// that step's answer is read: the [`Target::snap`] after that step's
    /// [`Target::send`] reads its answer instead of asking again. Only
    /// called where [`Target::pipeline_depth`] is above 1, after
    /// [`Target::send_ahead`] of the step whose state it shows: the server
    /// answers in order, and runs pipelined requests one after another, so
    /// it is the state after that step (a server that runs them at once
    /// needs `--pipeline 1`: a snapshot could see the next step's writes).
    fn snap_ahead(&mut self) {
        unreachable!("snap_ahead on a target that does not pipeline")
    }
    /// Back in debug mode after a restart, its state kept: `debug.start`
    /// alone, never a wipe. A target the harness cannot restart says so.
    fn resume(&mut self) -> Result<(), TargetError> {
        Err(TargetError::Unreachable(format!(
            "{} cannot be restarted by the harness",
            self.describe()
        )))
    }
    /// `n` clients that may send at once (a concurrent run). A target that
    /// serves one caller at a time says so.
    fn clients(&mut self, n: usize) -> Result<Vec<Box<dyn Client>>, TargetError> {
        let _ = n;
        Err(TargetError::Unreachable(format!(
            "{} takes one client at a time; a concurrent run needs a server over HTTP",
            self.describe()
        )))
    }
    /// The envelope departures of its answers since the last call: fields
    /// of well-formed answers that break the protocol's envelope rules
    /// (`corrId`, `kind`, `version`, the HTTP status; see
    /// [`EnvelopeDeparture`]). The step loop asks after every step, so each
    /// is judged as a divergence of the step it belongs to; those of
    /// [`Target::start`]'s answers go with the case's first step. A target
    /// with no wire (in process) has none.
    fn departures(&mut self) -> Vec<EnvelopeDeparture> {
        Vec::new()
    }
}
