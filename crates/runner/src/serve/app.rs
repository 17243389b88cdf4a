//! The HTTP layer: parse → open envelope → debug op, or decode and hand
//! the request to the [`LocalServer`] pipeline (validate → materialise →
//! apply with deviations → encode). Everything after parsing is synchronous
//! under one mutex, so the served model sees requests in a total order, as
//! the spec's machine does.

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
use model::state::ServerConfig;
use model::wire::{self, open_envelope, PROTOCOL_VERSION};
use serde_json::{json, Value as JsonValue};

use super::{debug, ServeOptions};
use crate::target::LocalServer;

/// What every request handler shares.
pub(crate) struct Shared {
    server: Mutex<LocalServer>,
    /// `debug.start`/`debug.stop` flag; recorded, never gating (we are
    /// always in debug mode).
    pub(crate) debug_mode: AtomicBool,
    /// Latest wall-clock time handed out, so `now` never goes backwards.
    last_now: AtomicU64,
}

impl Shared {
    pub(crate) fn new(opts: &ServeOptions) -> io::Result<Self> {
        let deviations = deviate::catalogue::resolve(&opts.mutants)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let config = ServerConfig {
            retry_timeout: opts.retry_timeout,
        };
        let mut server = LocalServer::new(config, deviations, opts.materialize);
        if !opts.validate {
            server = server.without_validation();
        }
        Ok(Shared {
            server: Mutex::new(server),
            debug_mode: AtomicBool::new(false),
            last_now: AtomicU64::new(0),
        })
    }

    /// The server; a panic of an earlier request does not wedge it.
    pub(crate) fn server(&self) -> MutexGuard<'_, LocalServer> {
        self.server.lock().unwrap_or_else(|e| e.into_inner())
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
        .with_state(shared);
    axum::serve(listener, app)
        .with_graceful_shutdown(stop)
        .await
}

async fn api(State(shared): State<Arc<Shared>>, body: Bytes) -> (StatusCode, Json<JsonValue>) {
    let envelope = catch_unwind(AssertUnwindSafe(|| handle(&shared, &body)))
        .unwrap_or_else(|_| error("unknown", "0", 500, "internal error: the model panicked"));
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

/// One request body → its response envelope.
fn handle(shared: &Shared, body: &[u8]) -> JsonValue {
    let raw: JsonValue = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                "unknown",
                "0",
                400,
                &format!("invalid request envelope: {e}"),
            )
        }
    };
    let env = match open_envelope(&raw) {
        Ok(env) => env,
        Err(e) => {
            // Echo what can be read, as the server's error context does.
            let kind = raw["kind"].as_str().unwrap_or("unknown");
            let corr_id = raw["head"]["corrId"].as_str().unwrap_or("0");
            return error(kind, corr_id, 400, &e.to_string());
        }
    };
    let (kind, corr_id) = (env.kind, env.head.corr_id.as_str());
    if let Some(op) = debug::op(kind) {
        return debug::run(shared, op, &env);
    }
    let req = match wire::decode_request(kind, env.data) {
        Ok(r) => r,
        Err(e) => return error(kind, corr_id, 400, &e.to_string()),
    };
    let now = env.head.debug_time.unwrap_or_else(|| shared.wall_clock());
    shared.server().handle(&req, now, corr_id)
}
