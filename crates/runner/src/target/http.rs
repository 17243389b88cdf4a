//! A target server reached over HTTP: one keep-alive connection, one
//! envelope per call, and every way a target can fail turned into a
//! [`TargetError`] that names the cause. A target fault is never a
//! divergence and never a panic.

use std::time::Duration;

use serde_json::{json, Value};

use gen::{Op, Step};
use model::wire::PROTOCOL_VERSION;

use super::{Dialect, Target, TargetError};
use crate::snapshot::Snap;

/// A target server reached over HTTP.
pub struct HttpTarget {
    url: String,
    client: reqwest::blocking::Client,
    corr: u64,
    dialect: Dialect,
    timeout: Duration,
}

/// Whether a URL's host is a loopback address (127.0.0.0/8, ::1, localhost).
pub fn is_loopback_url(url: &str) -> bool {
    let Ok(u) = reqwest::Url::parse(url) else {
        return false;
    };
    match u.host() {
        Some(url::Host::Domain(d)) => d == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

impl HttpTarget {
    /// A client for `url` (a loopback address) with a per-request timeout.
    pub fn new(url: &str, timeout: Duration) -> Result<HttpTarget, TargetError> {
        if !is_loopback_url(url) {
            return Err(TargetError::NotLoopback(url.to_string()));
        }
        HttpTarget::any_host(url, timeout)
    }

    /// A client for `url` on any host: only for a user who said so
    /// (`--allow-remote-target`), since every case wipes the target.
    pub fn any_host(url: &str, timeout: Duration) -> Result<HttpTarget, TargetError> {
        let client = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .pool_max_idle_per_host(1)
            .tcp_nodelay(true)
            .build()
            .map_err(|e| TargetError::Unreachable(e.to_string()))?;
        Ok(HttpTarget {
            url: url.trim_end_matches('/').to_string(),
            client,
            corr: 0,
            dialect: Dialect::Resonate,
            timeout,
        })
    }

    /// Another connection to the same target, with the same dialect and
    /// timeout (a client of a concurrent run). Its `corrId`s are its own.
    pub fn fork(&self) -> Result<HttpTarget, TargetError> {
        Ok(HttpTarget::any_host(&self.url, self.timeout)?.with_dialect(self.dialect))
    }

    /// The same target read through `dialect`.
    pub fn with_dialect(mut self, dialect: Dialect) -> HttpTarget {
        self.dialect = dialect;
        self
    }

    /// POST one envelope of `kind` with `data`, stamped with `debug_time`;
    /// return the response envelope. Non-2xx envelope statuses below 500 are
    /// answers, not faults.
    pub fn call(
        &mut self,
        kind: &str,
        data: Value,
        debug_time: Option<u64>,
    ) -> Result<Value, TargetError> {
        self.corr += 1;
        let mut head =
            json!({"corrId": format!("conform-{}", self.corr), "version": PROTOCOL_VERSION});
        if let Some(t) = debug_time {
            head["resonate:debug_time"] = json!(t);
        }
        let body = json!({"kind": kind, "head": head, "data": data});
        self.post(kind, &body)
    }

    /// POST a ready-made envelope.
    pub fn post(&mut self, kind: &str, body: &Value) -> Result<Value, TargetError> {
        let (http, bytes) = self.post_raw(kind, body)?;
        Self::envelope(kind, http, &bytes)
    }

    /// POST a ready-made envelope; the HTTP status and the body.
    fn post_raw(&mut self, kind: &str, body: &Value) -> Result<(u16, Vec<u8>), TargetError> {
        let resp = self
            .client
            .post(format!("{}/", self.url))
            .json(body)
            .send()
            .map_err(|e| classify(&e, kind))?;
        let http = resp.status().as_u16();
        let bytes = resp.bytes().map_err(|e| classify(&e, kind))?;
        Ok((http, bytes.to_vec()))
    }

    /// Read and check a response envelope: JSON, a numeric `head.status`
    /// below 500 (501 is an answer), a `kind` and a `data`.
    fn envelope(kind: &str, http: u16, bytes: &[u8]) -> Result<Value, TargetError> {
        let env: Value = serde_json::from_slice(bytes).map_err(|e| {
            let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
            TargetError::Garbage(format!("{kind}: HTTP {http}, {e}: {shown:?}"))
        })?;
        let status = envelope_status(&env).ok_or_else(|| {
            TargetError::BadEnvelope(format!(
                "{kind}: no numeric head.status in {}",
                truncate(&env)
            ))
        })?;
        if status >= 500 && status != 501 {
            return Err(TargetError::ServerError(format!(
                "{kind}: status {status}: {}",
                truncate(&env["data"])
            )));
        }
        if !env["kind"].is_string()
            || !env["data"].is_object() && !env["data"].is_string() && !env["data"].is_array()
        {
            return Err(TargetError::BadEnvelope(format!(
                "{kind}: missing kind or data in {}",
                truncate(&env)
            )));
        }
        Ok(env)
    }
}

impl super::Client for HttpTarget {
    fn send(&mut self, step: &Step) -> Result<Option<Value>, TargetError> {
        Target::send(self, step)
    }
}

impl Target for HttpTarget {
    fn describe(&self) -> String {
        self.url.clone()
    }

    /// `debug.start` then `debug.reset`. Refuses a target that does not
    /// answer both with 200: the harness never wipes a server that is not in
    /// debug mode.
    fn start(&mut self) -> Result<(), TargetError> {
        for kind in ["debug.start", "debug.reset"] {
            let env = self.call(kind, json!({}), None).map_err(|e| match e {
                TargetError::Unreachable(_) | TargetError::Timeout(_) => e,
                other => TargetError::NotDebug(other.to_string()),
            })?;
            let status = envelope_status(&env).unwrap_or(0);
            if status != 200 {
                return Err(TargetError::NotDebug(format!(
                    "{kind} answered {status} ({}); start the server in debug mode",
                    truncate(&env["data"])
                )));
            }
        }
        Ok(())
    }

    fn reset(&mut self) -> Result<(), TargetError> {
        let env = self.call("debug.reset", json!({}), None)?;
        match envelope_status(&env) {
            Some(200) => Ok(()),
            s => Err(TargetError::NotDebug(format!("debug.reset answered {s:?}"))),
        }
    }

    /// A request as its envelope stamped with `now`; a tick as
    /// `debug.tick {time}` stamped with the same time.
    fn send(&mut self, step: &Step) -> Result<Option<Value>, TargetError> {
        match &step.op {
            Op::Request(r) => {
                let mut env =
                    self.call(r.kind(), model::wire::encode_request(r), Some(step.now))?;
                self.dialect.response(r.kind(), &mut env);
                Ok(Some(env))
            }
            Op::Tick => {
                let env = self.call("debug.tick", json!({"time": step.now}), Some(step.now))?;
                match envelope_status(&env) {
                    Some(200) => Ok(None),
                    s => Err(TargetError::BadEnvelope(format!(
                        "debug.tick answered {s:?}: {}",
                        truncate(&env["data"])
                    ))),
                }
            }
        }
    }

    /// `debug.start` alone, on a fresh connection (the old one died with
    /// the process).
    fn resume(&mut self) -> Result<(), TargetError> {
        *self = self.fork()?;
        let env = self.call("debug.start", json!({}), None)?;
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

    /// `debug.snap`: the target's whole state.
    fn snap(&mut self) -> Result<Snap, TargetError> {
        self.corr += 1;
        let head = json!({"corrId": format!("conform-{}", self.corr), "version": PROTOCOL_VERSION});
        let body = json!({"kind": "debug.snap", "head": head, "data": {}});
        let (http, bytes) = self.post_raw("debug.snap", &body)?;
        if http == 200 && self.dialect.is_canonical() {
            if let Ok(snap) = Snap::from_envelope(&bytes) {
                return Ok(snap);
            }
        }
        let env = Self::envelope("debug.snap", http, &bytes)?;
        match (envelope_status(&env), env.get("data")) {
            (Some(200), Some(data)) if data.is_object() => {
                let mut data = data.clone();
                self.dialect.snapshot(&mut data);
                Ok(Snap::from_json(data))
            }
            (s, _) => Err(TargetError::BadEnvelope(format!(
                "debug.snap answered {s:?}: {}",
                truncate(&env)
            ))),
        }
    }
}

/// `head.status` of an envelope.
pub fn envelope_status(env: &Value) -> Option<u16> {
    env.get("head")?
        .get("status")?
        .as_u64()
        .and_then(|s| u16::try_from(s).ok())
}

fn classify(e: &reqwest::Error, kind: &str) -> TargetError {
    let msg = format!("{kind}: {}", error_chain(e));
    if e.is_timeout() {
        TargetError::Timeout(msg)
    } else if e.is_decode() || e.is_body() {
        TargetError::Garbage(msg)
    } else {
        TargetError::Unreachable(msg)
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
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
