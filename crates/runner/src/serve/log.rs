//! The persistent mode of the reference server (`conform serve --log
//! FILE`): a log of applied steps, replayed at start.
//!
//! Every request the served model applies (with the `now` it was applied
//! at) and every tick (with its time) that wrote something is appended to
//! the log as one NDJSON line (a read, a refused request, a tick with
//! nothing due change nothing: replaying them would change nothing) in the trace step format ([`crate::trace::line_json`]: `kind`,
//! `now`, `req`), under the server's lock, so the log's order is the order
//! of application; `debug.reset` truncates it. The line is written with
//! one `write(2)` before the answer is sent. That makes an acknowledged
//! step survive a SIGKILL of the server (the kernel holds the written page
//! whatever happens to the process); it does not survive a power loss or a
//! kernel crash, which would need an `fsync` per step: the persistent mode
//! claims crash durability of the process, not of the machine.
//!
//! At start an existing log is replayed into a fresh model through the
//! same pipeline (validation, materialising reads, planted bugs), so the
//! server comes back in the state it acknowledged. A malformed log refuses
//! the start, naming the file and line: a log that cannot be read is not
//! silently dropped. The log holds steps, not options: restart with the
//! options it was written with (retry timeout, `--materialize`,
//! `--mutant`). A file of these lines without a header is also a trace
//! (`conform replay` reads it).
//!
//! The planted durability bugs ([`super::durability`]) live here.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use gen::{Op, Step};

use super::durability::{Bugs, Fault};
use crate::target::LocalServer;
use crate::trace::{line_json, parse_line, Line};

/// An open log.
#[derive(Debug)]
pub struct Log {
    path: PathBuf,
    file: File,
    bugs: Bugs,
    /// Lines answered but not yet written (`ack-before-log` only).
    pending: Vec<u8>,
}

impl Log {
    /// Replay the log at `path` (if there is one) into `server`, then open
    /// it for appending. A malformed line is an `InvalidInput` error
    /// naming `FILE:LINE`.
    pub fn open(path: &Path, bugs: Bugs, server: &mut LocalServer) -> io::Result<Log> {
        let steps = match File::open(path) {
            Ok(f) => read(path, f)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(named(path, e)),
        };
        let mut steps = steps;
        if bugs.has(Fault::LogLosesTail) {
            // A torn last write: the entry is gone, from the file too.
            if let Some((_, start)) = steps.pop() {
                let f = OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(|e| named(path, e))?;
                f.set_len(start).map_err(|e| named(path, e))?;
            }
        }
        for (step, _) in &steps {
            apply(server, step);
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| named(path, e))?;
        Ok(Log {
            path: path.to_path_buf(),
            file,
            bugs,
            pending: Vec::new(),
        })
    }

    /// Log one applied step: written now, or (`ack-before-log`) held back
    /// until the next step is logged (that one is then held back in its
    /// turn), so the last acknowledged step is never on disk before a
    /// crash, whatever the machine's load; a tick not at all under
    /// `tick-not-logged`.
    pub fn append(&mut self, step: &Step) -> io::Result<()> {
        if step.op == Op::Tick && self.bugs.has(Fault::TickNotLogged) {
            return Ok(());
        }
        let mut line = line_json(&Line::of(step.clone())).to_string().into_bytes();
        line.push(b'\n');
        if self.bugs.has(Fault::AckBeforeLog) {
            let earlier = std::mem::replace(&mut self.pending, line);
            return self
                .file
                .write_all(&earlier)
                .map_err(|e| named(&self.path, e));
        }
        // One write(2) per line: a crash keeps a line whole or not at all.
        self.file.write_all(&line).map_err(|e| named(&self.path, e))
    }

    /// Write what is held back (`ack-before-log`, at a clean stop).
    pub fn flush(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        self.file
            .write_all(&pending)
            .map_err(|e| named(&self.path, e))
    }

    /// `debug.reset`: forget every step.
    pub fn truncate(&mut self) -> io::Result<()> {
        self.pending.clear();
        self.file.set_len(0).map_err(|e| named(&self.path, e))
    }
}

/// Apply one replayed step, as the server applied it.
fn apply(server: &mut LocalServer, step: &Step) {
    match &step.op {
        Op::Request(r) => {
            server.handle(r, step.now, "replay");
        }
        Op::Tick => server.tick(step.now),
    }
}

/// The steps of a log, each with the byte offset its line starts at.
fn read(path: &Path, f: File) -> io::Result<Vec<(Step, u64)>> {
    let mut out = Vec::new();
    let mut reader = BufReader::new(f);
    let mut offset = 0u64;
    let mut text = String::new();
    for n in 1.. {
        let bad = |m: String| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}:{n}: malformed log line: {m}", path.display()),
            )
        };
        text.clear();
        let len = reader
            .read_line(&mut text)
            .map_err(|e| bad(e.to_string()))?;
        if len == 0 {
            break;
        }
        let start = offset;
        offset += len as u64;
        if text.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let line = parse_line(&v).map_err(bad)?;
        out.push((line.step, start));
    }
    Ok(out)
}

/// An IO error that names the log.
fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("log {}: {e}", path.display()))
}
