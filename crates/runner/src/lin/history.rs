//! A concurrent history as plain data, in the manner of Jepsen's: every
//! operation with its client, its invocation and completion on one
//! monotonic clock, and its outcome (`ok` with the response, or `info`:
//! indeterminate); the barriers that close each epoch with the target's
//! snapshot; the faults injected, as events of the same history.
//!
//! On disk it is NDJSON (`conform-history/2`): a header line, then one line
//! per event in the order the run recorded them (README, "History files").
//! This module reads and writes the text; it never touches a file, so the
//! checker stays free of IO.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use gen::{Op, Step};

use super::shown::{Delta, Recorder, Shown};

/// The format name of line 1.
pub const FORMAT: &str = "conform-history/2";

/// The format before barrier deltas: every barrier's snapshot whole. Still
/// read (a `/1` file is a `/2` file without `delta`).
pub const FORMAT_V1: &str = "conform-history/1";

/// Line 1 of a history file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryHeader {
    /// Always `"header"`.
    pub kind: String,
    /// [`FORMAT`].
    pub format: String,
    /// `conform <version>`.
    pub harness: String,
    /// The spec commit of the model.
    pub spec: String,
    /// The run's seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The number of clients.
    pub clients: usize,
    /// The target's URL.
    #[serde(default)]
    pub target: String,
    /// Options of the run (retry timeout, profile, baseline, epochs, …),
    /// kept as read.
    #[serde(default)]
    pub options: Map<String, Value>,
}

impl HistoryHeader {
    /// The retry timeout the run used (the model's `ServerConfig`).
    pub fn retry_timeout(&self) -> u64 {
        self.options
            .get("retryTimeout")
            .and_then(Value::as_u64)
            .unwrap_or(model::state::DEFAULT_RETRY_TIMEOUT)
    }
}

/// How an operation ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The target answered: the response envelope (`None` for a tick).
    Ok(Option<Value>),
    /// Unknown: the operation was in flight at a crash, or its client gave
    /// up waiting. It may have taken effect at any point after its
    /// invocation, or never.
    Info(String),
}

/// One operation of one client.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    /// Its index in the history (unique, in invocation order).
    pub id: usize,
    /// The client that sent it.
    pub client: usize,
    /// The epoch it belongs to.
    pub epoch: usize,
    /// The request or tick, at the epoch's `now`.
    pub step: Step,
    /// Invocation, µs on the run's monotonic clock.
    pub invoke: u64,
    /// Completion, µs; `None` for an indeterminate operation.
    pub complete: Option<u64>,
    /// What came back.
    pub outcome: Outcome,
}

impl Operation {
    /// Whether the outcome is known.
    pub fn is_ok(&self) -> bool {
        matches!(self.outcome, Outcome::Ok(_))
    }

    /// The recorded response envelope, if any.
    pub fn response(&self) -> Option<&Value> {
        match &self.outcome {
            Outcome::Ok(r) => r.as_ref(),
            Outcome::Info(_) => None,
        }
    }

    /// The request kind, or `debug.tick`.
    pub fn kind(&self) -> &'static str {
        match &self.step.op {
            Op::Request(r) => r.kind(),
            Op::Tick => "debug.tick",
        }
    }
}

/// A fault the run injected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The target was killed (SIGKILL) at `at` µs, during `epoch`.
    Crash {
        /// The epoch it happened in.
        epoch: usize,
        /// When, µs.
        at: u64,
    },
    /// The target answered again (after `debug.start`) at `at` µs.
    Restart {
        /// The epoch it happened in.
        epoch: usize,
        /// When, µs.
        at: u64,
    },
}

/// The end of an epoch: every operation done, the target's state read.
#[derive(Clone, Debug, PartialEq)]
pub struct Barrier {
    /// The epoch it closes.
    pub epoch: usize,
    /// The epoch's `now`.
    pub now: u64,
    /// When the snapshot was taken, µs.
    pub at: u64,
    /// The snapshot (absent when state is not compared).
    pub snap: Option<Snapshot>,
}

/// A barrier's snapshot as recorded.
#[derive(Clone, Debug, PartialEq)]
pub enum Snapshot {
    /// The whole `debug.snap` data.
    Full(Value),
    /// What changed since the previous barrier's snapshot (which the
    /// previous epoch's barrier must hold).
    Delta(Delta),
}

/// One epoch: a window of one `now`, between two barriers.
#[derive(Clone, Debug, PartialEq)]
pub struct Epoch {
    /// Its index.
    pub index: usize,
    /// The `now` every operation in it carries.
    pub now: u64,
    /// Its operations, in invocation order.
    pub ops: Vec<Operation>,
    /// Whether the target crashed (and was restarted) during it.
    pub crashed: bool,
    /// The barrier that closes it (absent if the run stopped inside it).
    pub barrier: Option<Barrier>,
}

/// A whole history.
#[derive(Clone, Debug, PartialEq)]
pub struct History {
    /// Line 1.
    pub header: HistoryHeader,
    /// The epochs in order.
    pub epochs: Vec<Epoch>,
    /// Every fault, in order.
    pub faults: Vec<Fault>,
}

impl History {
    /// An empty history under `header`.
    pub fn new(header: HistoryHeader) -> History {
        History {
            header,
            epochs: Vec::new(),
            faults: Vec::new(),
        }
    }

    /// Every operation, in epoch and invocation order.
    pub fn operations(&self) -> impl Iterator<Item = &Operation> {
        self.epochs.iter().flat_map(|e| e.ops.iter())
    }

    /// The number of operations.
    pub fn len(&self) -> usize {
        self.epochs.iter().map(|e| e.ops.len()).sum()
    }

    /// Whether it holds no operation.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The same history with its barriers' snapshots recorded as a run
    /// records them ([`Recorder`]): the first whole, each later one as a
    /// delta against the one before (an old file's whole snapshots made
    /// small). `Err`: a delta that does not follow.
    pub fn with_deltas(&self) -> Result<History, String> {
        let mut out = self.clone();
        let (mut held, mut rec) = (None, Recorder::default());
        for e in &mut out.epochs {
            let Some(b) = e.barrier.as_mut() else {
                continue;
            };
            match &b.snap {
                Some(s) => {
                    Shown::follow(&mut held, s)?;
                    let whole = held.as_ref().expect("just followed").to_json();
                    b.snap = Some(rec.record(whole));
                }
                None => {
                    held = None;
                    rec.forget();
                }
            }
        }
        Ok(out)
    }

    /// The NDJSON text: header, then per epoch its operations, its faults
    /// and its barrier.
    pub fn to_ndjson(&self) -> String {
        let mut out = String::new();
        let mut push = |v: Value| {
            out.push_str(&v.to_string());
            out.push('\n');
        };
        push(serde_json::to_value(&self.header).expect("header serialises"));
        for e in &self.epochs {
            for op in &e.ops {
                push(op_json(op));
            }
            for f in self.faults.iter().filter(|f| fault_epoch(f) == e.index) {
                push(fault_json(f, e.now));
            }
            if let Some(b) = &e.barrier {
                let mut o = json!({"type": "barrier", "epoch": b.epoch, "now": b.now, "at": b.at});
                match &b.snap {
                    Some(Snapshot::Full(s)) => o["snap"] = s.clone(),
                    Some(Snapshot::Delta(d)) => o["delta"] = d.to_json(),
                    None => {}
                }
                push(o);
            }
        }
        out
    }
}

fn fault_epoch(f: &Fault) -> usize {
    match f {
        Fault::Crash { epoch, .. } | Fault::Restart { epoch, .. } => *epoch,
    }
}

/// A fault's line carries its epoch's `now`: an epoch whose only events
/// are a crash, a restart and the barrier (a shrunk durability bug: the
/// crash alone loses what the prefix acknowledged) opens at its crash.
fn fault_json(f: &Fault, now: u64) -> Value {
    match f {
        Fault::Crash { epoch, at } => {
            json!({"type": "crash", "epoch": epoch, "now": now, "at": at})
        }
        Fault::Restart { epoch, at } => {
            json!({"type": "restart", "epoch": epoch, "now": now, "at": at})
        }
    }
}

/// The JSON line of one operation.
pub fn op_json(op: &Operation) -> Value {
    let mut o = Map::new();
    o.insert("type".into(), json!("op"));
    o.insert("id".into(), json!(op.id));
    o.insert("client".into(), json!(op.client));
    o.insert("epoch".into(), json!(op.epoch));
    o.insert("kind".into(), json!(op.kind()));
    o.insert("now".into(), json!(op.step.now));
    if let Op::Request(r) = &op.step.op {
        o.insert("req".into(), model::wire::encode_request(r));
    }
    o.insert("invoke".into(), json!(op.invoke));
    match &op.outcome {
        Outcome::Ok(res) => {
            o.insert("complete".into(), json!(op.complete));
            o.insert("outcome".into(), json!("ok"));
            if let Some(r) = res {
                o.insert("res".into(), r.clone());
            }
        }
        Outcome::Info(why) => {
            o.insert("outcome".into(), json!("info"));
            o.insert("reason".into(), json!(why));
        }
    }
    Value::Object(o)
}

/// A malformed history: the line (1-based) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for HistoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Read a history from its NDJSON text.
pub fn parse(text: &str) -> Result<History, HistoryError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let err = |line: usize, message: String| HistoryError {
        line: line + 1,
        message,
    };
    let (n, first) = lines.next().ok_or_else(|| err(0, "empty file".into()))?;
    let header: HistoryHeader =
        serde_json::from_str(first).map_err(|e| err(n, format!("header: {e}")))?;
    if header.kind != "header" {
        return Err(err(n, "line 1 is not a header".into()));
    }
    if header.format != FORMAT && header.format != FORMAT_V1 {
        return Err(err(
            n,
            format!(
                "format `{}` is neither `{FORMAT}` nor `{FORMAT_V1}`",
                header.format
            ),
        ));
    }
    if header.clients == 0 {
        return Err(err(n, "header: `clients` must be at least 1".into()));
    }
    let mut h = History::new(header);
    for (n, l) in lines {
        let v: Value = serde_json::from_str(l).map_err(|e| err(n, e.to_string()))?;
        read_event(&mut h, &v).map_err(|m| err(n, m))?;
    }
    Ok(h)
}

fn field_u64(v: &Value, k: &str) -> Result<u64, String> {
    v.get(k)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("missing non-negative integer field `{k}`"))
}

/// The epoch `index`, opened if it is the next one; events of an earlier,
/// closed epoch or skipping one are refused.
fn epoch_at(h: &mut History, index: usize, now: u64) -> Result<&mut Epoch, String> {
    let open = h.epochs.last().is_some_and(|e| e.index == index);
    if !open {
        let next = h.epochs.last().map_or(0, |e| e.index + 1);
        if index != next {
            return Err(format!("epoch {index} out of order (expected {next})"));
        }
        if let Some(prev) = h.epochs.last() {
            if prev.barrier.is_none() {
                return Err(format!("epoch {} has no barrier", prev.index));
            }
            if now < prev.now {
                return Err(format!("epoch {index}: `now` {now} goes back"));
            }
        }
        h.epochs.push(Epoch {
            index,
            now,
            ops: Vec::new(),
            crashed: false,
            barrier: None,
        });
    }
    let e = h.epochs.last_mut().expect("just ensured");
    if e.barrier.is_some() {
        return Err(format!("event after the barrier of epoch {index}"));
    }
    if e.now != now {
        return Err(format!(
            "epoch {index} has `now` {}, this event {now}",
            e.now
        ));
    }
    Ok(e)
}

fn read_event(h: &mut History, v: &Value) -> Result<(), String> {
    let ty = v
        .get("type")
        .and_then(Value::as_str)
        .ok_or("missing string field `type`")?;
    let epoch = field_u64(v, "epoch")? as usize;
    match ty {
        "op" => {
            let line = crate::trace::parse_line(v)?;
            let id = field_u64(v, "id")? as usize;
            let clients = h.header.clients;
            let client = field_u64(v, "client")? as usize;
            if client >= clients {
                return Err(format!("client {client} of {clients}"));
            }
            let invoke = field_u64(v, "invoke")?;
            let outcome = v.get("outcome").and_then(Value::as_str);
            let (complete, outcome) = match outcome {
                Some("ok") => {
                    let c = field_u64(v, "complete")?;
                    if c < invoke {
                        return Err("`complete` before `invoke`".into());
                    }
                    let is_tick = line.step.op == Op::Tick;
                    if !is_tick && line.res.is_none() {
                        return Err("an `ok` request without `res`".into());
                    }
                    (Some(c), Outcome::Ok(line.res))
                }
                Some("info") => {
                    let why = v.get("reason").and_then(Value::as_str).unwrap_or("");
                    (None, Outcome::Info(why.to_string()))
                }
                _ => return Err("`outcome` must be \"ok\" or \"info\"".into()),
            };
            let expected = h.len();
            if id != expected {
                return Err(format!("operation id {id}, expected {expected}"));
            }
            let e = epoch_at(h, epoch, line.step.now)?;
            e.ops.push(Operation {
                id,
                client,
                epoch,
                step: line.step,
                invoke,
                complete,
                outcome,
            });
        }
        "crash" | "restart" => {
            let at = field_u64(v, "at")?;
            // With its `now` a fault may open its epoch (one with no
            // operation); a line without it (files written before the
            // field) belongs to the epoch already open.
            let now = match v.get("now") {
                Some(_) => field_u64(v, "now")?,
                None => match h.epochs.last() {
                    Some(e) if e.index == epoch => e.now,
                    _ => return Err(format!("{ty} outside an open epoch {epoch}")),
                },
            };
            let e = epoch_at(h, epoch, now)?;
            e.crashed = true;
            h.faults.push(if ty == "crash" {
                Fault::Crash { epoch, at }
            } else {
                Fault::Restart { epoch, at }
            });
        }
        "barrier" => {
            let now = field_u64(v, "now")?;
            let at = field_u64(v, "at")?;
            let full = v.get("snap").filter(|s| !s.is_null()).cloned();
            if full.as_ref().is_some_and(|s| !s.is_object()) {
                return Err("`snap` must be an object".into());
            }
            let delta = match v.get("delta").filter(|d| !d.is_null()) {
                Some(d) => Some(Delta::from_json(d)?),
                None => None,
            };
            let snap = match (full, delta) {
                (Some(_), Some(_)) => return Err("a barrier with both `snap` and `delta`".into()),
                (Some(s), None) => Some(Snapshot::Full(s)),
                (None, Some(d)) => {
                    let before = h.epochs.iter().rev().find(|e| e.index < epoch);
                    if before
                        .and_then(|e| e.barrier.as_ref()?.snap.as_ref())
                        .is_none()
                    {
                        return Err("a `delta` whose previous barrier has no snapshot".into());
                    }
                    Some(Snapshot::Delta(d))
                }
                (None, None) => None,
            };
            let e = epoch_at(h, epoch, now)?;
            e.barrier = Some(Barrier {
                epoch,
                now,
                at,
                snap,
            });
        }
        other => return Err(format!("unknown event type `{other}`")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::api::{PromiseGetReq, Request};

    fn header() -> HistoryHeader {
        HistoryHeader {
            kind: "header".into(),
            format: FORMAT.into(),
            harness: "conform test".into(),
            spec: "83d64c3".into(),
            seed: Some(1),
            clients: 2,
            target: "in-process".into(),
            options: Map::new(),
        }
    }

    fn get(id: usize, client: usize, outcome: Outcome) -> Operation {
        Operation {
            id,
            client,
            epoch: 0,
            step: Step {
                now: 5,
                op: Op::Request(Request::PromiseGet(PromiseGetReq { id: "p".into() })),
            },
            invoke: 10,
            complete: matches!(outcome, Outcome::Ok(_)).then_some(20),
            outcome,
        }
    }

    #[test]
    fn a_history_survives_its_own_text() {
        let mut h = History::new(header());
        let res = json!({"kind": "promise.get", "head": {"status": 404}, "data": "not found"});
        h.epochs.push(Epoch {
            index: 0,
            now: 5,
            ops: vec![
                get(0, 0, Outcome::Ok(Some(res))),
                get(1, 1, Outcome::Info("crash".into())),
            ],
            crashed: true,
            barrier: Some(Barrier {
                epoch: 0,
                now: 5,
                at: 30,
                snap: Some(Snapshot::Full(json!({"promises": []}))),
            }),
        });
        h.faults.push(Fault::Crash { epoch: 0, at: 15 });
        h.faults.push(Fault::Restart { epoch: 0, at: 25 });
        assert_eq!(parse(&h.to_ndjson()), Ok(h));
    }

    #[test]
    fn an_epoch_with_only_a_crash_survives_its_own_text() {
        // A shrunk durability bug: the prefix's epoch, then an epoch with
        // no operation whose crash alone loses what was acknowledged.
        let mut h = History::new(header());
        let res = json!({"kind": "promise.get", "head": {"status": 404}, "data": "not found"});
        let barrier = |epoch, now| Barrier {
            epoch,
            now,
            at: 40,
            snap: None,
        };
        h.epochs.push(Epoch {
            index: 0,
            now: 5,
            ops: vec![get(0, 0, Outcome::Ok(Some(res)))],
            crashed: false,
            barrier: Some(barrier(0, 5)),
        });
        h.epochs.push(Epoch {
            index: 1,
            now: 9,
            ops: Vec::new(),
            crashed: true,
            barrier: Some(barrier(1, 9)),
        });
        h.faults.push(Fault::Crash { epoch: 1, at: 50 });
        h.faults.push(Fault::Restart { epoch: 1, at: 60 });
        assert_eq!(parse(&h.to_ndjson()), Ok(h));
    }

    #[test]
    fn a_fault_line_without_now_belongs_to_the_open_epoch() {
        let head = serde_json::to_string(&header()).unwrap();
        let op = op_json(&get(0, 0, Outcome::Info("crash".into())));
        let crash = "{\"type\":\"crash\",\"epoch\":0,\"at\":15}";
        let h = parse(&format!("{head}\n{op}\n{crash}")).unwrap();
        assert!(h.epochs[0].crashed);
        assert_eq!(h.faults, vec![Fault::Crash { epoch: 0, at: 15 }]);
        let e = parse(&format!("{head}\n{crash}")).unwrap_err();
        assert!(e.message.contains("outside an open epoch"), "{e}");
    }

    #[test]
    fn malformed_histories_name_the_line() {
        let head = serde_json::to_string(&header()).unwrap();
        let bad = [
            ("", 1, "empty"),
            ("{\"kind\":\"header\"}", 1, "header"),
            (&head.replace("history/2", "history/9"), 1, "format"),
            (
                &format!("{head}\n{{\"type\":\"op\",\"epoch\":0}}"),
                2,
                "kind",
            ),
            (
                &format!("{head}\n{{\"type\":\"barrier\",\"epoch\":1,\"now\":1,\"at\":1}}"),
                2,
                "out of order",
            ),
            (
                &format!("{head}\n{{\"type\":\"nemesis\",\"epoch\":0}}"),
                2,
                "unknown",
            ),
            (
                &format!(
                    "{head}\n{{\"type\":\"barrier\",\"epoch\":0,\"now\":1,\"at\":1,\"delta\":{{\"changed\":{{}},\"entries\":{{}}}}}}"
                ),
                2,
                "no snapshot",
            ),
        ];
        for (text, line, what) in bad {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text}: {e}");
            assert!(e.message.contains(what), "{text}: {e}");
        }
    }
}
