//! The HTTP layer: parse → open envelope → debug op, or decode and hand
//! the request to the [`Core`] (the [`LocalServer`] pipeline: validate →
//! materialise → apply with deviations → encode; then the log, in
//! persistent mode). Everything after parsing is synchronous under one
//! mutex, so the served model sees requests in a total order, as the
//! spec's machine does — except where a planted race
//! ([`super::races`]) splits a handler: its check runs under the lock,
//! its writes land under the lock again after the race window, and the
//! lock is free in between.

use std::future::Future;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use model::state::{ServerConfig, Writes};
use model::wire::{self, open_envelope, PROTOCOL_VERSION};
use serde_json::{json, Value as JsonValue};

use super::core::Core;
use super::durability::Bugs;
use super::log::Log;
use super::races::Races;
use super::{debug, ServeOptions};
use crate::target::LocalServer;

/// What every request handler shares.
pub(crate) struct Shared {
    core: Mutex<Core>,
    /// The handlers made non-atomic, and the window.
    pub(crate) races: Races,
    /// `debug.start`/`debug.stop` flag; recorded, never gating (we are
    /// always in debug mode).
    pub(crate) debug_mode: AtomicBool,
    /// Latest wall-clock time handed out, so `now` never goes backwards.
    last_now: AtomicU64,
}

/// What handling a request gave: an answer, or a racy handler's answer
/// with the writes to land first.
pub(crate) enum Handled {
    /// Answer this.
    Done(JsonValue),
    /// Once a rival was handled (or the window's bound passed), land
    /// `writes`, then answer `envelope`.
    Deferred {
        /// The answer.
        envelope: JsonValue,
        /// What the handler wrote.
        writes: Writes,
        /// Hears when a rival was handled ([`super::races::rendezvous`]).
        rival: tokio::sync::oneshot::Receiver<()>,
    },
}

impl Handled {
    /// A racy handler's answer: deferred behind its `rival`, or at once
    /// when it has none to wait for (it wrote nothing).
    pub(crate) fn racy(
        envelope: JsonValue,
        writes: Writes,
        rival: Option<tokio::sync::oneshot::Receiver<()>>,
    ) -> Handled {
        match rival {
            Some(rival) => Handled::Deferred {
                envelope,
                writes,
                rival,
            },
            None => Handled::Done(envelope),
        }
    }
}

impl Shared {
    /// The served model, with its planted bugs, races and log (replayed
    /// into it). Unknown names, a race with a log, a durability bug
    /// without one and a malformed log are `InvalidInput` errors.
    pub(crate) fn new(opts: &ServeOptions) -> io::Result<Self> {
        let invalid = |e: String| io::Error::new(io::ErrorKind::InvalidInput, e);
        let deviations = deviate::catalogue::resolve(&opts.mutants).map_err(invalid)?;
        let races = super::races::resolve(&opts.races).map_err(invalid)?;
        let bugs = Bugs::resolve(&opts.durability_bugs).map_err(invalid)?;
        if opts.log.is_some() && !races.is_empty() {
            return Err(invalid(
                "--race with --log: a log of steps cannot replay a race's blind writes".into(),
            ));
        }
        if opts.log.is_none() && !bugs.is_empty() {
            return Err(invalid("--durability-bug needs --log FILE".into()));
        }
        let config = ServerConfig {
            retry_timeout: opts.retry_timeout,
        };
        let mut server = LocalServer::new(config, deviations, opts.materialize);
        if !opts.validate {
            server = server.without_validation();
        }
        let log = match &opts.log {
            Some(path) => Some(Log::open(path, bugs, &mut server)?),
            None => None,
        };
        Ok(Shared {
            core: Mutex::new(Core::new(server, log)),
            races: Races::new(&races, opts.race_window),
            debug_mode: AtomicBool::new(false),
            last_now: AtomicU64::new(0),
        })
    }

    /// The served model; a panic of an earlier request does not wedge it.
    pub(crate) fn core(&self) -> MutexGuard<'_, Core> {
        self.core.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wall-clock Unix milliseconds, monotonic.
    fn wall_clock(&self) -> u64 {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        self.last_now.fetch_max(now, Ordering::Relaxed).max(now)
    }
}

/// Serve `listener` until `stop` completes.
pub(crate) async fn serve(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    stop: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let app = Router::new()
        .route("/", post(api))
        .route("/health", get(|| async { StatusCode::OK }))
        .with_state(shared.clone());
    // Without `TCP_NODELAY` the second of two answers written back to back
    // waits for the client's delayed ACK of the first (40 ms): a pipelined
    // run against this server ran 15 times slower than one at a time.
    let served = axum::serve(listener, app)
        .tcp_nodelay(true)
        .with_graceful_shutdown(stop)
        .await;
    // A clean stop loses nothing, whatever the log holds back.
    if let Err(e) = shared.core().flush() {
        eprintln!("conform serve: {e}");
    }
    served
}

async fn api(State(shared): State<Arc<Shared>>, body: Bytes) -> (StatusCode, Json<JsonValue>) {
    let panicked = |_| error("unknown", "0", 500, "internal error: the model panicked");
    let envelope = match catch_unwind(AssertUnwindSafe(|| handle(&shared, &body))) {
        Ok(Handled::Done(env)) => env,
        Ok(Handled::Deferred {
            envelope,
            writes,
            rival,
        }) => {
            // The lock is free for the window: whatever runs now, these
            // writes land after it. It stays open until a rival was
            // handled, at most the bound.
            let _ = tokio::time::timeout(shared.races.window, rival).await;
            match catch_unwind(AssertUnwindSafe(|| shared.core().write(&writes))) {
                Ok(()) => envelope,
                Err(p) => panicked(p),
            }
        }
        Err(p) => panicked(p),
    };
    let status = envelope["head"]["status"]
        .as_u64()
        .and_then(|s| StatusCode::from_u16(s as u16).ok())
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(envelope))
}

/// An error envelope with a message as `data`.
pub(crate) fn error(kind: &str, corr_id: &str, status: u16, message: &str) -> JsonValue {
    wire::response::error_envelope(kind, corr_id, status, message)
}

/// A success envelope.
pub(crate) fn ok(kind: &str, corr_id: &str, data: JsonValue) -> JsonValue {
    json!({
        "kind": kind,
        "head": {"corrId": corr_id, "status": 200, "version": PROTOCOL_VERSION},
        "data": data,
    })
}

/// One request body → its response envelope (or a racy handler's).
fn handle(shared: &Shared, body: &[u8]) -> Handled {
    let raw: JsonValue = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Handled::Done(error(
                "unknown",
                "0",
                400,
                &format!("invalid request envelope: {e}"),
            ))
        }
    };
    let env = match open_envelope(&raw) {
        Ok(env) => env,
        Err(e) => {
            // Echo what can be read, as the server's error context does.
            let kind = raw["kind"].as_str().unwrap_or("unknown");
            let corr_id = raw["head"]["corrId"].as_str().unwrap_or("0");
            return Handled::Done(error(kind, corr_id, 400, &e.to_string()));
        }
    };
    let (kind, corr_id) = (env.kind, env.head.corr_id.as_str());
    if let Some(op) = debug::op(kind) {
        return debug::run(shared, op, &env);
    }
    let req = match wire::decode_request(kind, env.data) {
        Ok(r) => r,
        Err(e) => return Handled::Done(error(kind, corr_id, 400, &e.to_string())),
    };
    let now = env.head.debug_time.unwrap_or_else(|| shared.wall_clock());
    if shared.races.covers(kind) {
        let (envelope, writes, rival) = shared.core().handle_deferred(&req, now, corr_id);
        return Handled::racy(envelope, writes, rival);
    }
    Handled::Done(shared.core().handle(&req, now, corr_id))
}
