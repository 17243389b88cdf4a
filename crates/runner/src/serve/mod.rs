//! `conform serve`: the model served over HTTP with the Rust `resonate`
//! server's wire protocol, so the same trace can be run against the model
//! in-process and over a socket, and so SDKs and tools can be pointed at
//! the reference semantics.
//!
//! - `POST /` takes request envelopes ([`model::wire`]); `GET /health` is 200.
//! - One [`LocalServer`](crate::target::LocalServer) behind a mutex. A request is
//!   decoded (400 naming the field on failure), checked against the server's
//!   400 rules ([`model::wire::validate`]), applied at `now` = the head's
//!   `resonate:debug_time` or the wall clock, and answered with the
//!   envelope's status as the HTTP status, as the Rust server does.
//! - The server's debug surface (`debug.start`, `debug.stop`, `debug.reset`,
//!   `debug.snap`, `debug.tick`) is always available; see [`debug`].
//! - [`ServeOptions::materialize`] fires due promise timeouts on access;
//!   [`ServeOptions::mutants`] plants bugs from the deviation catalogue
//!   (`deviate`). Both live in the shared pipeline,
//!   [`crate::target::LocalServer`].
//! - [`ServeOptions::races`] makes handlers non-atomic ([`races`]: planted
//!   concurrency bugs for the concurrent run).
//! - [`ServeOptions::log`] is the persistent mode ([`log`]): every applied
//!   step logged before its answer, the log replayed at start;
//!   [`ServeOptions::durability_bugs`] plants bugs in it ([`durability`]).

mod app;
mod core;
pub mod debug;
pub mod durability;
pub mod log;
pub mod races;

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::oneshot;

/// How to serve the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeOptions {
    /// TCP port; 0 picks an ephemeral one.
    pub port: u16,
    /// Address to bind (default `127.0.0.1`).
    pub bind: IpAddr,
    /// The model's `retry_timeout` (ms).
    pub retry_timeout: u64,
    /// Fire due promise timeouts of the promises a request names before
    /// handling it, instead of only projecting them on read.
    pub materialize: bool,
    /// Planted bugs, by catalogue name (`deviate::names`), outermost first.
    pub mutants: Vec<String>,
    /// Apply the Rust server's 400 rules (`model::wire::validate`).
    pub validate: bool,
    /// Planted races, by catalogue name ([`races::all`]): their handlers
    /// check, release the lock, and write after [`ServeOptions::race_window`].
    pub races: Vec<String>,
    /// The bound of a racy handler's wait between its check and its write
    /// (it ends when a rival was handled; a handler that wrote nothing
    /// does not wait).
    pub race_window: Duration,
    /// Persistent mode: the log of applied steps, replayed at start.
    pub log: Option<PathBuf>,
    /// Planted durability bugs of the persistent mode, by name
    /// ([`durability::ALL`]).
    pub durability_bugs: Vec<String>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            port: 0,
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            retry_timeout: model::state::DEFAULT_RETRY_TIMEOUT,
            materialize: false,
            mutants: Vec::new(),
            validate: true,
            races: Vec::new(),
            race_window: races::DEFAULT_WINDOW,
            log: None,
            durability_bugs: Vec::new(),
        }
    }
}

/// A server running on a background thread; dropping it stops it.
#[derive(Debug)]
pub struct ServerHandle {
    /// The bound address.
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ServerHandle {
    /// `http://ADDR`, the base URL to post envelopes to.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stop serving and wait for the thread to end.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Bind and check the options; the listener is handed to the runtime.
fn bind(opts: &ServeOptions) -> io::Result<(TcpListener, Arc<app::Shared>)> {
    let shared = app::Shared::new(opts)?;
    let listener = TcpListener::bind((opts.bind, opts.port))?;
    listener.set_nonblocking(true)?;
    Ok((listener, Arc::new(shared)))
}

fn runtime() -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// Start serving on a background thread with its own runtime; returns once
/// the socket is bound (and a log replayed). An unknown mutant, race or
/// durability bug, a race with a log, a durability bug without one, and a
/// malformed log are `InvalidInput` errors.
pub fn spawn(opts: ServeOptions) -> io::Result<ServerHandle> {
    let (listener, shared) = bind(&opts)?;
    let addr = listener.local_addr()?;
    let rt = runtime()?;
    let (tx, rx) = oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(format!("conform-serve-{}", addr.port()))
        .spawn(move || {
            rt.block_on(async move {
                let stop = async {
                    let _ = rx.await;
                };
                if let Err(e) = app::serve(listener, shared, stop).await {
                    eprintln!("conform serve on {addr}: {e}");
                }
            });
        })?;
    Ok(ServerHandle {
        addr,
        stop: Some(tx),
        thread: Some(thread),
    })
}

/// Serve in the foreground until Ctrl-C, after printing
/// `listening on http://ADDR` to stdout.
pub fn run_blocking(opts: ServeOptions) -> io::Result<()> {
    use std::io::Write;
    let (listener, shared) = bind(&opts)?;
    let addr = listener.local_addr()?;
    let mut out = io::stdout();
    writeln!(out, "listening on http://{addr}")?;
    out.flush()?;
    runtime()?.block_on(async move {
        let stop = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        app::serve(listener, shared, stop).await
    })
}
