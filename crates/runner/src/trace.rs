//! The trace file: the unit of reproduction.
//!
//! NDJSON. Line 1 is a header: `{"kind":"header", "format", "harness",
//! "spec", "seed", "case", "options", "target"}`. Every other line is one
//! step in the format of the spec repository's `valid/` traces,
//! `{"kind","now","req","res"}` (`req` the request's `data`, `res` the whole
//! response envelope the target returned), with optional extras:
//! `expect` (the model's envelope), `state` (the expected state view after
//! the step, in golden files), `diverged: true` on the failing step. A tick
//! is `{"kind":"debug.tick","now":T}`. The README documents every field.

use std::fmt;
use std::io::{BufRead, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use gen::{Op, Step};

/// The format tag written in every header.
pub const FORMAT: &str = "conform-trace/1";

/// The first line of a trace file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    /// Always `conform-trace/1`.
    pub format: String,
    /// `conform <version>` that wrote the file.
    pub harness: String,
    /// The spec commit of the model (`83d64c3`).
    pub spec: String,
    /// The run's seed, when generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The case index within the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<u64>,
    /// The options that produced the trace.
    #[serde(default)]
    pub options: Options,
    /// The target URL it was run against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

impl Header {
    /// A header for this harness and spec.
    pub fn new(
        seed: Option<u64>,
        case: Option<u64>,
        options: Options,
        target: Option<String>,
    ) -> Self {
        Header {
            format: FORMAT.to_string(),
            harness: format!("conform {}", env!("CARGO_PKG_VERSION")),
            spec: model::SPEC_COMMIT.to_string(),
            seed,
            case,
            options,
            target,
        }
    }

    /// The retry timeout recorded in the options (else the spec default).
    pub fn retry_timeout(&self) -> u64 {
        self.options
            .retry_timeout
            .unwrap_or(model::state::DEFAULT_RETRY_TIMEOUT)
    }

    /// Whether the trace was run comparing state (default yes).
    pub fn check_state(&self) -> bool {
        self.options.check_state.unwrap_or(true)
    }
}

/// The options recorded in a header, each absent when it does not apply.
/// Options a later harness adds are kept (`extra`), never lost.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Options {
    /// Golden files: the handler group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Golden files: pool size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Steps per generated case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
    /// The target's retry timeout (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_timeout: Option<u64>,
    /// Golden files: states recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_state: Option<bool>,
    /// Whether `debug.snap` was compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_state: Option<bool>,
    /// The profile's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The baseline's name, when one was applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Shrunk traces: the path of the original.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrunk_from: Option<String>,
    /// Anything else, as read.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One step line.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The step.
    pub step: Step,
    /// The target's response envelope (or, in a golden file, the expected one).
    pub res: Option<Value>,
    /// The model's response envelope.
    pub expect: Option<Value>,
    /// The expected state view after the step.
    pub state: Option<Value>,
    /// Whether this is the step where the target diverged.
    pub diverged: bool,
}

impl Line {
    /// A bare step.
    pub fn of(step: Step) -> Line {
        Line {
            step,
            res: None,
            expect: None,
            state: None,
            diverged: false,
        }
    }
}

/// A whole trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// Line 1.
    pub header: Header,
    /// The steps.
    pub lines: Vec<Line>,
}

impl Trace {
    /// The bare steps.
    pub fn steps(&self) -> Vec<Step> {
        self.lines.iter().map(|l| l.step.clone()).collect()
    }
}

/// A malformed trace file: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// File name.
    pub file: String,
    /// 1-based line (0 when the file could not be read at all).
    pub line: usize,
    /// 1-based column, when known.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for TraceError {}

/// The JSON of one step line.
pub fn line_json(l: &Line) -> Value {
    let mut o = Map::new();
    match &l.step.op {
        Op::Request(r) => {
            o.insert("kind".into(), json!(r.kind()));
            o.insert("now".into(), json!(l.step.now));
            o.insert("req".into(), model::wire::encode_request(r));
        }
        Op::Tick => {
            o.insert("kind".into(), json!("debug.tick"));
            o.insert("now".into(), json!(l.step.now));
        }
    }
    for (k, v) in [("res", &l.res), ("expect", &l.expect), ("state", &l.state)] {
        if let Some(v) = v {
            o.insert(k.into(), v.clone());
        }
    }
    if l.diverged {
        o.insert("diverged".into(), json!(true));
    }
    Value::Object(o)
}

/// Parse one step line.
pub fn parse_line(v: &Value) -> Result<Line, String> {
    let kind = v
        .get("kind")
        .and_then(Value::as_str)
        .ok_or("missing string field `kind`")?;
    let now = v
        .get("now")
        .and_then(Value::as_u64)
        .ok_or("missing non-negative integer field `now`")?;
    // `now` is sent as `resonate:debug_time`: what the wire cannot carry
    // cannot be replayed.
    if now > model::wire::MAX_INT {
        return Err(format!(
            "`now`: {now} is above {}, the largest time the wire carries",
            model::wire::MAX_INT
        ));
    }
    let op = if kind == "debug.tick" {
        Op::Tick
    } else {
        let req = v.get("req").ok_or("missing field `req`")?;
        Op::Request(model::wire::decode_request(kind, req).map_err(|e| format!("req: {e}"))?)
    };
    let get = |k: &str| v.get(k).filter(|x| !x.is_null()).cloned();
    Ok(Line {
        step: Step { now, op },
        res: get("res"),
        expect: get("expect"),
        state: get("state"),
        diverged: v.get("diverged").and_then(Value::as_bool).unwrap_or(false),
    })
}

/// Read a trace file. A file without a header line is accepted (a spec
/// `valid/` trace) and gets a default header.
pub fn read(path: &Path) -> Result<Trace, TraceError> {
    let file = path.display().to_string();
    let err = |line, column, message: String| TraceError {
        file: file.clone(),
        line,
        column,
        message,
    };
    let f = std::fs::File::open(path).map_err(|e| err(0, 0, e.to_string()))?;
    let mut header = None;
    let mut lines = Vec::new();
    let mut prev_now = 0;
    for (i, text) in std::io::BufReader::new(f).lines().enumerate() {
        let n = i + 1;
        let text = text.map_err(|e| err(n, 1, e.to_string()))?;
        if text.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(&text).map_err(|e| err(n, e.column(), e.to_string()))?;
        if v.get("kind").and_then(Value::as_str) == Some("header") {
            if header.is_some() || !lines.is_empty() {
                return Err(err(n, 1, "a header may only be the first line".into()));
            }
            let h: Header =
                serde_json::from_value(v).map_err(|e| err(n, 1, format!("header: {e}")))?;
            if h.format != FORMAT {
                return Err(err(
                    n,
                    1,
                    format!(
                        "header: format `{}` is not supported; this harness reads `{FORMAT}`",
                        h.format
                    ),
                ));
            }
            header = Some(h);
            continue;
        }
        let line = parse_line(&v).map_err(|m| err(n, 1, m))?;
        if line.step.now < prev_now {
            return Err(err(
                n,
                1,
                format!("`now` decreases: {} after {}", line.step.now, prev_now),
            ));
        }
        prev_now = line.step.now;
        lines.push(line);
    }
    let header = header.unwrap_or_else(|| Header::new(None, None, Options::default(), None));
    Ok(Trace { header, lines })
}

/// Write a trace file (creating parent directories).
pub fn write(path: &Path, t: &Trace) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut h = serde_json::to_value(&t.header)?;
    h.as_object_mut()
        .expect("header is an object")
        .insert("kind".into(), json!("header"));
    // Put `kind` first for readability.
    let mut first = Map::new();
    first.insert("kind".into(), json!("header"));
    first.extend(
        h.as_object()
            .expect("object")
            .clone()
            .into_iter()
            .filter(|(k, _)| k != "kind"),
    );
    writeln!(out, "{}", Value::Object(first))?;
    for l in &t.lines {
        writeln!(out, "{}", line_json(l))?;
    }
    out.flush()
}
