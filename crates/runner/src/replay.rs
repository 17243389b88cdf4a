//! `conform replay` and `conform shrink` of a saved trace: the library
//! side, so the commands only parse, call and map the outcome.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::check::Checker;
use crate::exec::{execute, ExecOptions, Execution, Expect};
use crate::repro;
use crate::shrink::{shrink, ShrinkOptions, ShrinkResult};
use crate::target::{Target, TargetError};
use crate::trace::Trace;

/// Re-run a trace's steps against `target`, judged by `checker`.
pub fn replay(
    target: &mut dyn Target,
    checker: &mut Checker,
    trace: &Trace,
    check_state: bool,
) -> Execution {
    execute(
        target,
        checker,
        &trace.steps(),
        Expect::Model,
        ExecOptions { check_state },
    )
}

/// What shrinking a saved trace came to.
#[derive(Debug)]
pub enum ShrunkFile {
    /// The trace does not diverge against this target: nothing to shrink.
    NoDivergence(Execution),
    /// It diverged; the smallest form found was saved to `path`.
    Shrunk {
        /// Steps of the original run.
        original: usize,
        /// The shrink result.
        result: ShrinkResult,
        /// Where the shrunk trace was written.
        path: PathBuf,
    },
}

/// Why shrinking a saved trace could not finish its job.
#[derive(Debug)]
pub enum ShrinkFileError {
    /// The target failed on the first replay (nothing to shrink yet).
    Target(TargetError),
    /// The shrunk trace could not be saved: nothing is wrong with the
    /// target (the message names the path).
    Save(String),
}

impl std::fmt::Display for ShrinkFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShrinkFileError::Target(e) => write!(f, "{e}"),
            ShrinkFileError::Save(m) => f.write_str(m),
        }
    }
}

/// Replay `trace` (saved at `file`) once, and if it diverges shrink that
/// execution and save the result to `out` (default beside `file`). A fault
/// while shrinking ends the search: the best so far is saved and the fault
/// is in the result ([`ShrinkResult::fault`]).
pub fn shrink_file(
    target: &mut dyn Target,
    checker: &mut Checker,
    trace: &Trace,
    file: &Path,
    opts: &ShrinkOptions,
    out: Option<&Path>,
    log: &mut dyn Write,
) -> Result<ShrunkFile, ShrinkFileError> {
    let first = replay(target, checker, trace, opts.check_state);
    if let Some(e) = first.fault.clone() {
        return Err(ShrinkFileError::Target(e));
    }
    let Some((_, d)) = &first.divergence else {
        return Ok(ShrunkFile::NoDivergence(first));
    };
    let _ = writeln!(
        log,
        "shrinking {} ({} steps, {}) against {}",
        file.display(),
        trace.lines.len(),
        d.class,
        target.describe()
    );
    let original = trace.lines.len();
    let result = shrink(target, checker, first, opts, log);
    let path = repro::save_shrunk(file, &trace.header, &result.best.lines, out)
        .map_err(ShrinkFileError::Save)?;
    Ok(ShrunkFile::Shrunk {
        original,
        result,
        path,
    })
}

/// The shrinker's default time budget.
pub const DEFAULT_SHRINK_TIME: Duration = Duration::from_secs(60);
