//! What a failure leaves behind, in one place: the saved trace, the shrunk
//! trace beside it (with `shrunkFrom`), and the ready-to-paste commands that
//! reproduce a divergence (`replay`, `rerun`, `check`). Every command that
//! reports a failure builds them here, from the same [`Reach`], so a printed
//! command always carries every option that shaped the result.

use std::path::{Path, PathBuf};

use crate::trace::{self, Header, Line, Trace};

/// How to reach and judge the target again: the options every reproducing
/// command must carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reach {
    /// The target URL; `None` for the embedded reference server (a
    /// temporary port is never printed: it is gone when the process ends).
    pub target: Option<String>,
    /// `--profile` as given (a built-in name or a path).
    pub profile: Option<String>,
    /// `--baseline` as given (a built-in name or a path).
    pub baseline: Option<String>,
    /// The retry timeout in effect.
    pub retry_timeout: u64,
    /// The per-request timeout, ms.
    pub timeout_ms: u64,
    /// Whether state is compared.
    pub check_state: bool,
    /// `--allow-remote-target` was given.
    pub allow_remote: bool,
    /// `--pipeline`: steps sent before the first one's answer is read.
    pub pipeline: usize,
}

/// The per-request timeout when none is given (ms).
pub const DEFAULT_TIMEOUT_MS: u64 = 5000;

impl Reach {
    /// The flags that reproduce this setting.
    pub fn flags(&self) -> String {
        let mut f = String::new();
        if let Some(t) = &self.target {
            f.push_str(&format!(" --target {t}"));
        }
        if self.allow_remote {
            f.push_str(" --allow-remote-target");
        }
        if let Some(p) = &self.profile {
            f.push_str(&format!(" --profile {p}"));
        }
        if let Some(b) = &self.baseline {
            f.push_str(&format!(" --baseline {b}"));
        }
        f.push_str(&format!(" --retry-timeout {}", self.retry_timeout));
        if self.timeout_ms != DEFAULT_TIMEOUT_MS {
            f.push_str(&format!(" --timeout-ms {}", self.timeout_ms));
        }
        if !self.check_state {
            f.push_str(" --no-state");
        }
        if self.pipeline != crate::target::DEFAULT_PIPELINE {
            f.push_str(&format!(" --pipeline {}", self.pipeline));
        }
        f
    }

    /// `conform replay FILE …`.
    pub fn replay_command(&self, file: &Path) -> String {
        format!("{} replay {}{}", program(), file.display(), self.flags())
    }

    /// `conform check FILE …`.
    pub fn check_command(&self, file: &Path) -> String {
        format!("{} check {}{}", program(), file.display(), self.flags())
    }

    /// `conform run --seed S --case I …` (or `--cases N` for a whole run),
    /// with `--probe-validation` when the run probed.
    pub fn rerun_command(&self, seed: u64, which: Which, steps: usize, probe: bool) -> String {
        let which = match which {
            Which::Case(c) => format!("--case {c}"),
            Which::Cases(n) => format!("--cases {n}"),
            Which::Partition(n, p) => format!("--cases {n} --partition {p}"),
        };
        format!(
            "{} run --seed {seed} {which} --steps {steps}{}{}",
            program(),
            if probe { " --probe-validation" } else { "" },
            self.flags()
        )
    }
}

/// One case of a run, or all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// `--case I`.
    Case(u64),
    /// `--cases N`.
    Cases(u64),
    /// `--cases N --partition K/N`: one job's share of them.
    Partition(u64, crate::partition::Partition),
}

/// The name this binary was invoked by, for ready-to-paste commands.
pub fn program() -> String {
    std::env::args()
        .next()
        .unwrap_or_else(|| "conform".to_string())
}

/// A file name stamp with milliseconds: `20261130T011500123`.
pub fn stamp() -> String {
    chrono::Utc::now().format("%Y%m%dT%H%M%S%3f").to_string()
}

/// Where a failing case's trace goes: `DIR/<stamp>-<seed>-<case>.ndjson`.
pub fn failure_path(dir: &Path, seed: u64, case: u64) -> PathBuf {
    dir.join(format!("{}-{seed}-{case}.ndjson", stamp()))
}

/// Where the shrunk form of `original` goes by default:
/// `NAME.shrunk.ndjson` beside it.
pub fn shrunk_path(original: &Path) -> PathBuf {
    let stem = original
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    original.with_file_name(format!("{stem}.shrunk.ndjson"))
}

/// Save a trace; the error names the path.
pub fn save(path: &Path, header: &Header, lines: &[Line]) -> Result<(), String> {
    trace::write(
        path,
        &Trace {
            header: header.clone(),
            lines: lines.to_vec(),
        },
    )
    .map_err(|e| format!("could not save the trace to {}: {e}", path.display()))
}

/// Save the shrunk form of the trace at `original` to `out` (default
/// [`shrunk_path`]), its header saying where it came from.
pub fn save_shrunk(
    original: &Path,
    header: &Header,
    lines: &[Line],
    out: Option<&Path>,
) -> Result<PathBuf, String> {
    let path = out.map_or_else(|| shrunk_path(original), Path::to_path_buf);
    let mut h = header.clone();
    h.options.shrunk_from = Some(original.display().to_string());
    save(&path, &h, lines)?;
    Ok(path)
}
