//! A target server reached over HTTP: one keep-alive connection
//! ([`super::conn`], in the caller's thread), one envelope per call, and
//! every way a target can fail turned into a [`TargetError`] that names
//! the cause. A target fault is never a divergence and never a panic.

use std::collections::VecDeque;
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};

use gen::{Op, Step};
use model::wire::PROTOCOL_VERSION;

use super::conn::{Conn, Endpoint};
use super::envelope::{self, EnvelopeDeparture, HeadView};
use super::url::{self, UrlError};
use super::{Dialect, Target, TargetError};
use crate::snapshot::Snap;

/// A request envelope as sent, serialised straight from borrowed parts
/// (the fields in the order the protocol shows them).
#[derive(Serialize)]
struct Outgoing<'a, D: Serialize> {
    kind: &'a str,
    head: OutgoingHead<'a>,
    data: &'a D,
}

/// The head of a request envelope.
#[derive(Serialize)]
struct OutgoingHead<'a> {
    #[serde(rename = "corrId")]
    corr_id: &'a str,
    version: &'a str,
    #[serde(
        rename = "resonate:debug_time",
        skip_serializing_if = "Option::is_none"
    )]
    debug_time: Option<u64>,
}

/// A target server reached over HTTP.
pub struct HttpTarget {
    url: String,
    conn: Conn,
    corr: u64,
    dialect: Dialect,
    timeout: Duration,
    /// Envelope departures not yet asked for (see [`Target::departures`]).
    departures: Vec<EnvelopeDeparture>,
    /// How many steps may be sent before the answer of the first is read
    /// ([`Target::pipeline_depth`]).
    pipeline: usize,
    /// The steps sent ahead whose answers are not read yet, oldest first:
    /// their kind and `corrId`.
    ahead: VecDeque<(&'static str, String)>,
}

/// The default of `--pipeline`: steps sent before the first one's answer
/// is read, when responses alone are compared.
pub const DEFAULT_PIPELINE: usize = 32;

impl HttpTarget {
    /// A client for `url`, which must be a loopback address, with a
    /// per-request timeout.
    pub fn new(url: &str, timeout: Duration) -> Result<HttpTarget, UrlError> {
        HttpTarget::connect(url, false, timeout)
    }

    /// A client for `url` on any host: only for a user who said so
    /// (`--allow-remote-target`), since every case wipes the target.
    pub fn any_host(url: &str, timeout: Duration) -> Result<HttpTarget, UrlError> {
        HttpTarget::connect(url, true, timeout)
    }

    /// A client for `url` if [`url::check`] allows it.
    fn connect(url: &str, allow_remote: bool, timeout: Duration) -> Result<HttpTarget, UrlError> {
        url::check(url, allow_remote)?;
        let endpoint = Endpoint::of(url).ok_or_else(|| UrlError::NotHttp(url.to_string()))?;
        Ok(HttpTarget {
            url: url.trim_end_matches('/').to_string(),
            conn: Conn::new(endpoint, timeout),
            corr: 0,
            dialect: Dialect::default(),
            timeout,
            departures: Vec::new(),
            pipeline: 1,
            ahead: VecDeque::new(),
        })
    }

    /// Another connection to the same target, with the same dialect and
    /// timeout (a client of a concurrent run). Its `corrId`s are its own.
    pub fn fork(&self) -> Result<HttpTarget, TargetError> {
        let t = HttpTarget::any_host(&self.url, self.timeout)
            .map_err(|e| TargetError::Unreachable(e.to_string()))?;
        Ok(t.with_dialect(self.dialect.clone())
            .with_pipeline(self.pipeline))
    }

    /// The same target, sent up to `depth` steps before the answer of the
    /// first is read (1: one at a time). See [`Target::pipeline_depth`].
    pub fn with_pipeline(mut self, depth: usize) -> HttpTarget {
        self.pipeline = depth.max(1);
        self
    }

    /// The same target read through `dialect`.
    pub fn with_dialect(mut self, dialect: Dialect) -> HttpTarget {
        self.dialect = dialect;
        self
    }

    /// POST one envelope of `kind` with `data`, stamped with `debug_time`;
    /// return the response envelope. Non-2xx statuses below 500 (and 501)
    /// are answers, not faults; the answer's envelope departures are kept
    /// for [`Target::departures`].
    pub fn call(
        &mut self,
        kind: &str,
        data: &impl Serialize,
        debug_time: Option<u64>,
    ) -> Result<Value, TargetError> {
        self.settle()?;
        let corr_id = self.queue(kind, debug_time, data);
        self.answer(kind, &corr_id)
    }

    /// Read the answer to the oldest request sent and judge its envelope
    /// (`corr_id` is what it was sent with).
    fn answer(&mut self, kind: &str, corr_id: &str) -> Result<Value, TargetError> {
        let (http, bytes) = self.conn.answer(kind).inspect_err(|_| self.ahead.clear())?;
        let env = Self::envelope(kind, http, &bytes)?;
        let departures =
            envelope::judge(kind, corr_id, http, &HeadView::of(&env), &|| truncate(&env))?;
        self.departures.extend(departures);
        Ok(env)
    }

    /// Read and drop the answers of steps sent ahead past where the step
    /// loop stopped (a divergence or the end of a case): they were applied
    /// and are never checked, and the connection must be back in step
    /// before anything else is sent on it. A fault reading one is a fault
    /// of the next request.
    fn settle(&mut self) -> Result<(), TargetError> {
        while let Some((kind, _)) = self.ahead.pop_front() {
            let _ = self.conn.answer(kind).inspect_err(|_| self.ahead.clear())?;
        }
        Ok(())
    }

    /// A fresh `corrId` for the next request.
    fn next_corr_id(&mut self) -> String {
        self.corr += 1;
        format!("conform-{}", self.corr)
    }

    /// Queue the envelope `{kind, head: {corrId, version,
    /// resonate:debug_time?}, data}` on the connection; its `corrId`.
    fn queue(&mut self, kind: &str, debug_time: Option<u64>, data: &impl Serialize) -> String {
        let corr_id = self.next_corr_id();
        let out = Outgoing {
            kind,
            head: OutgoingHead {
                corr_id: &corr_id,
                version: PROTOCOL_VERSION,
                debug_time,
            },
            data,
        };
        let body = serde_json::to_vec(&out).expect("an envelope serialises");
        self.conn.queue(&body);
        corr_id
    }

    /// Read a response body as an envelope: JSON, with a `data` (the rest
    /// of the envelope is [`envelope::judge`]'s).
    fn envelope(kind: &str, http: u16, bytes: &[u8]) -> Result<Value, TargetError> {
        let env: Value = serde_json::from_slice(bytes).map_err(|e| {
            let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
            TargetError::Garbage(format!("{kind}: HTTP {http}, {e}: {shown:?}"))
        })?;
        if !env["data"].is_object() && !env["data"].is_string() && !env["data"].is_array() {
            return Err(TargetError::BadEnvelope(format!(
                "{kind}: no data in {}",
                truncate(&env)
            )));
        }
        Ok(env)
    }

    /// A debug answer must be 200: the harness cannot drive a target whose
    /// debug surface refuses.
    fn debug_ok(kind: &str, env: &Value) -> Result<(), TargetError> {
        match envelope_status(env) {
            Some(200) => Ok(()),
            s => Err(TargetError::NotDebug(format!(
                "{kind} answered {}: {}",
                s.map_or("no status".to_string(), |s| s.to_string()),
                truncate(&env["data"])
            ))),
        }
    }
}

/// A client of a concurrent run. An answer that breaks the envelope (a
/// wrong `corrId`, `kind`, `version` or HTTP status) stops the run as a
/// misbehaving target: the history checker judges what the server did,
/// not how it spelled the envelope, which a sequential run does.
impl super::Client for HttpTarget {
    fn send(&mut self, step: &Step) -> Result<Option<Value>, TargetError> {
        let res = Target::send(self, step)?;
        match self.departures.first() {
            None => Ok(res),
            Some(d) => Err(TargetError::BadEnvelope(d.to_string())),
        }
    }
}

impl Target for HttpTarget {
    fn describe(&self) -> String {
        self.url.clone()
    }

    /// `debug.start` then `debug.reset`. Refuses a target that does not
    /// answer both with 200: the harness never wipes a server that is not in
    /// debug mode. A new case: the departures of an earlier one are gone,
    /// and those of these two answers go with the case's first step.
    fn start(&mut self) -> Result<(), TargetError> {
        self.departures.clear();
        for kind in ["debug.start", "debug.reset"] {
            let env = self.call(kind, &json!({}), None).map_err(|e| match e {
                TargetError::Unreachable(_) | TargetError::Timeout(_) => e,
                other => TargetError::NotDebug(other.to_string()),
            })?;
            if envelope_status(&env) != Some(200) {
                return Err(TargetError::NotDebug(format!(
                    "{kind} answered {} ({}); start the server in debug mode",
                    envelope_status(&env).map_or("no status".to_string(), |s| s.to_string()),
                    truncate(&env["data"])
                )));
            }
        }
        Ok(())
    }

    fn reset(&mut self) -> Result<(), TargetError> {
        let env = self.call("debug.reset", &json!({}), None)?;
        Self::debug_ok("debug.reset", &env)
    }

    /// A request as its envelope stamped with `now`; a tick as
    /// `debug.tick {time}` stamped with the same time. A step sent ahead
    /// is not sent again: its answer is read.
    fn send(&mut self, step: &Step) -> Result<Option<Value>, TargetError> {
        let kind = envelope_kind(step);
        if matches!(self.ahead.front(), Some((SNAP, _))) {
            // The snapshot of a step whose answer was refused (a fault):
            // read and dropped, so this step's answer is its own. Only
            // that one: the steps sent ahead after it are owed theirs.
            self.ahead.pop_front();
            self.conn.answer(SNAP).inspect_err(|_| self.ahead.clear())?;
        }
        let env = match self.ahead.pop_front() {
            Some((sent, corr_id)) => {
                assert_eq!(
                    sent, kind,
                    "the step loop sends steps in the order sent ahead"
                );
                self.answer(kind, &corr_id)?
            }
            None => self.call(kind, &envelope_data(step), Some(step.now))?,
        };
        match &step.op {
            Op::Request(r) => {
                let mut env = env;
                if !self.dialect.is_canonical() {
                    self.dialect.response(r, &mut env);
                }
                Ok(Some(env))
            }
            Op::Tick => {
                Self::debug_ok("debug.tick", &env)?;
                Ok(None)
            }
        }
    }

    fn pipeline_depth(&self) -> usize {
        self.pipeline
    }

    fn snap_ahead(&mut self) {
        let corr_id = self.queue(SNAP, None, &json!({}));
        self.ahead.push_back((SNAP, corr_id));
    }

    fn send_ahead(&mut self, step: &Step) {
        let kind = envelope_kind(step);
        let corr_id = self.queue(kind, Some(step.now), &envelope_data(step));
        self.ahead.push_back((kind, corr_id));
    }

    /// `debug.start` alone, on a fresh connection (the old one died with
    /// the process).
    fn resume(&mut self) -> Result<(), TargetError> {
        *self = self.fork()?;
        let env = self.call("debug.start", &json!({}), None)?;
        match envelope_status(&env) {
            Some(200) => Ok(()),
            s => Err(TargetError::NotDebug(format!("debug.start answered {s:?}"))),
        }
    }

    fn clients(&mut self, n: usize) -> Result<Vec<Box<dyn super::Client>>, TargetError> {
        (0..n)
            .map(|_| Ok(Box::new(self.fork()?) as Box<dyn super::Client>))
            .collect()
    }

    /// `debug.snap`: the target's whole state. A canonical body is read
    /// straight into types (its head judged as every answer's is); any
    /// other, or one that does not fit them, as JSON.
    fn snap(&mut self) -> Result<Snap, TargetError> {
        const KIND: &str = SNAP;
        let corr_id = match self.ahead.front() {
            // Sent right after the step it follows (`snap_ahead`).
            Some((SNAP, _)) => self.ahead.pop_front().expect("a front").1,
            _ => {
                self.settle()?;
                self.queue(KIND, None, &json!({}))
            }
        };
        // A failed read gives up every answer owed (`Conn::answer`): so
        // does the queue of what was sent ahead.
        let (http, bytes) = self.conn.answer(KIND).inspect_err(|_| self.ahead.clear())?;
        if self.dialect.snapshot_is_canonical() {
            if let Ok((answer, snap)) = Snap::from_envelope(&bytes) {
                if answer.status() == Some(200) {
                    let shown =
                        || String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
                    let departures = envelope::judge(KIND, &corr_id, http, &answer.view(), &shown)?;
                    self.departures.extend(departures);
                    return Ok(snap);
                }
            }
        }
        let mut env = Self::envelope(KIND, http, &bytes)?;
        let departures = envelope::judge(KIND, &corr_id, http, &HeadView::of(&env), &|| {
            truncate(&env)
        })?;
        self.departures.extend(departures);
        Self::debug_ok(KIND, &env)?;
        match env.get_mut("data") {
            Some(data) if data.is_object() => {
                let mut data = data.take();
                self.dialect.snapshot(&mut data);
                Ok(Snap::from_json(data))
            }
            _ => Err(TargetError::BadEnvelope(format!(
                "{KIND}: data is not an object: {}",
                truncate(&env)
            ))),
        }
    }

    fn departures(&mut self) -> Vec<EnvelopeDeparture> {
        std::mem::take(&mut self.departures)
    }
}

/// The kind of a snapshot's request.
const SNAP: &str = "debug.snap";

/// The envelope kind a step is sent as: its request's, or `debug.tick`.
fn envelope_kind(step: &Step) -> &'static str {
    match &step.op {
        Op::Request(r) => r.kind(),
        Op::Tick => "debug.tick",
    }
}

/// The envelope `data` of a step: its request's, or a tick's `{time}`,
/// serialised straight from the step (no JSON value built on the way).
#[derive(Serialize)]
#[serde(untagged)]
enum StepData<'a> {
    Request(model::wire::Data<'a>),
    Tick { time: u64 },
}

/// [`StepData`] of `step`.
fn envelope_data(step: &Step) -> StepData<'_> {
    match &step.op {
        Op::Request(r) => StepData::Request(model::wire::request_data(r)),
        Op::Tick => StepData::Tick { time: step.now },
    }
}

/// `head.status` of an envelope.
pub fn envelope_status(env: &Value) -> Option<u16> {
    env.get("head")?
        .get("status")?
        .as_u64()
        .and_then(|s| u16::try_from(s).ok())
}

fn truncate(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 300 {
        format!(
            "{}…",
            &s[..s
                .char_indices()
                .take_while(|(i, _)| *i < 300)
                .last()
                .map_or(0, |(i, _)| i)]
        )
    } else {
        s
    }
}
