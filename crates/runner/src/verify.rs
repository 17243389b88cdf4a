//! `conform check`: replay golden files against a target and hold its
//! answers to the recorded ones, with the normalisation of `run`.
//!
//! The recorded answers are the verdict ([`crate::recorded`]): a step
//! passes when the target matches its line's records. Golden files are
//! latitude-free (a tick precedes every request that would run with a due
//! timeout), so a conforming target matches them as they are. Where it does
//! not, a record the spec's model does not reproduce (edited, or written by
//! something else) binds: the step diverges against it. A record that is
//! the model's own answer leaves the mismatch to the model, with the same
//! latitude search and baseline as `run`: firing due timeouts in another
//! allowed order, or a known departure, passes, and from then on the model,
//! which has adopted the target's schedule, judges what the records (made
//! on the plain schedule) no longer describe. A part of a step its line
//! does not record is judged by the model, and the summary counts them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use deviate::Deviation;

use crate::check::Checker;
use crate::exec::{execute, ExecOptions, Expect};
use crate::profile::Profile;
use crate::report::{CaseReport, CaseStatus, Malformed, Summary};
use crate::repro::Reach;
use crate::target::Target;
use crate::trace::{self, Trace, TraceError};

/// Every `.ndjson` file under `path`, subdirectories included (or `path`
/// itself), sorted.
pub fn golden_files(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut v = Vec::new();
    for e in std::fs::read_dir(path)? {
        let p = e?.path();
        if p.is_dir() {
            v.extend(golden_files(&p)?);
        } else if p.extension().is_some_and(|x| x == "ndjson") {
            v.push(p);
        }
    }
    v.sort();
    Ok(v)
}

/// A file holding requests of kinds the profile leaves out is not run (the
/// target does not implement them, as `run` never generates them): it is
/// skipped and listed, with those kinds.
fn skip_omitted(t: &Trace, f: &Path, profile: &Profile, out: &mut dyn Write) -> Option<CaseStatus> {
    let mut kinds: Vec<String> = t
        .lines
        .iter()
        .filter_map(|l| match &l.step.op {
            gen::Op::Request(r) => Some(r.kind().to_string()),
            gen::Op::Tick => None,
        })
        .filter(|k| profile.omit_kinds.contains(k))
        .collect();
    kinds.sort();
    kinds.dedup();
    if kinds.is_empty() {
        return None;
    }
    let _ = writeln!(
        out,
        "skip {}: kinds the profile leaves out: {}",
        f.display(),
        kinds.join(", ")
    );
    Some(CaseStatus::Skipped { kinds })
}

/// The retry timeouts `files` were recorded with, from their headers (a
/// file without one, or unreadable, says nothing here: reading it is the
/// check's business), for the precedence of
/// [`crate::profile::RetryTimeout::resolve`].
pub fn recorded_retry_timeouts(files: &[PathBuf]) -> Vec<(String, u64)> {
    use std::io::BufRead;
    files
        .iter()
        .filter_map(|f| {
            let file = std::fs::File::open(f).ok()?;
            let mut first = String::new();
            std::io::BufReader::new(file).read_line(&mut first).ok()?;
            let v: serde_json::Value = serde_json::from_str(&first).ok()?;
            v.get("kind")?.as_str().filter(|k| *k == "header")?;
            let ms = v.pointer("/options/retryTimeout")?.as_u64()?;
            Some((f.display().to_string(), ms))
        })
        .collect()
}

/// What `conform check` was asked.
#[derive(Clone, Debug)]
pub struct CheckConfig {
    /// The target's profile.
    pub profile: Profile,
    /// The baseline's deviations, applied to the model.
    pub deviations: Vec<&'static Deviation>,
    /// How printed commands reach the target again (and whether state is
    /// compared).
    pub reach: Reach,
}

/// Read a golden file, refusing one with nothing to compare, and recompute
/// its expectations when it was recorded with another retry timeout.
pub fn load(f: &Path, retry_timeout: u64) -> Result<(Trace, bool), TraceError> {
    let mut t = trace::read(f)?;
    if !t
        .lines
        .iter()
        .any(|l| l.res.is_some() || l.expect.is_some() || l.state.is_some())
    {
        return Err(TraceError {
            file: f.display().to_string(),
            line: 1,
            column: 1,
            message: "no recorded answers to check against (is this a golden file?)".into(),
        });
    }
    if t.header.retry_timeout() == retry_timeout {
        return Ok((t, false));
    }
    // Deadlines depend on the retry timeout: recompute the expectations with
    // the model for the target's, rather than report every retry deadline.
    let with_state = t.lines.iter().any(|l| l.state.is_some());
    t.lines = crate::golden::record(&t.steps(), retry_timeout, with_state);
    t.header.options.retry_timeout = Some(retry_timeout);
    Ok((t, true))
}

/// Check every golden file; one case report per file checked. A file
/// that cannot be read is named and listed as malformed
/// ([`Summary::malformed`]), and the others are still checked; a target
/// fault stops the check there (the target failed: the files after it
/// would fail alike), with what was done reported.
pub fn check_all(
    target: &mut dyn Target,
    files: &[PathBuf],
    cfg: &CheckConfig,
    out: &mut dyn Write,
) -> Summary {
    let started = Instant::now();
    let mut checker = Checker::with_deviations(cfg.profile.clone(), cfg.deviations.clone());
    let mut reports = Vec::new();
    let mut unrecorded = 0;
    // Every file is read first, so each malformed one is named whatever
    // the target does later.
    let mut malformed = Vec::new();
    let mut loaded = Vec::new();
    for f in files {
        match load(f, cfg.profile.retry_timeout) {
            Ok(l) => loaded.push((f, l)),
            Err(e) => {
                let _ = writeln!(out, "MALFORMED {}: {e}", f.display());
                malformed.push(Malformed {
                    file: f.clone(),
                    message: e.to_string(),
                });
            }
        }
    }
    let total = loaded.len();
    for (n, (f, (t, recomputed))) in loaded.into_iter().enumerate() {
        if recomputed {
            let _ = writeln!(
                out,
                "note {}: recorded with another retry timeout; expectations recomputed by the model for {} ms",
                f.display(),
                cfg.profile.retry_timeout
            );
        }
        if let Some(status) = skip_omitted(&t, f, &cfg.profile, out) {
            reports.push(CaseReport {
                name: f.file_stem().map(|s| s.to_string_lossy().into_owned()),
                case: n as u64,
                seed: t.header.seed.unwrap_or(0),
                steps: 0,
                latitude: 0,
                seconds: 0.0,
                status,
            });
            continue;
        }
        let file_started = Instant::now();
        let ex = execute(
            target,
            &mut checker,
            &t.steps(),
            Expect::Recorded(&t.lines),
            ExecOptions {
                check_state: cfg.reach.check_state,
            },
        );
        unrecorded += ex.unrecorded;
        let status = match (&ex.fault, &ex.divergence) {
            (Some(e), _) => {
                let _ = writeln!(out, "TARGET FAULT on {}: {e}", f.display());
                CaseStatus::Fault {
                    message: e.to_string(),
                    trace: f.clone(),
                }
            }
            (None, None) => {
                let _ = writeln!(out, "ok   {}", f.display());
                CaseStatus::Pass
            }
            (None, Some((i, d))) => {
                let diff = crate::render::divergence(&ex.lines[*i], d);
                let _ = writeln!(
                    out,
                    "FAIL {} at step {} (line {}): {}",
                    f.display(),
                    i + 1,
                    i + 2,
                    d.class
                );
                let _ = write!(out, "{}", crate::render::paint(&diff));
                let replay = cfg.reach.check_command(f);
                let _ = writeln!(out, "  replay:   {replay}");
                CaseStatus::Diverged {
                    step: i + 1,
                    class: d.class.to_string(),
                    diff,
                    trace: f.clone(),
                    shrunk: None,
                    shrunk_steps: None,
                    replay,
                }
            }
        };
        let fault = matches!(status, CaseStatus::Fault { .. });
        reports.push(CaseReport {
            name: f.file_stem().map(|s| s.to_string_lossy().into_owned()),
            case: n as u64,
            seed: t.header.seed.unwrap_or(0),
            steps: ex.lines.len(),
            latitude: ex.latitude,
            seconds: file_started.elapsed().as_secs_f64(),
            status,
        });
        if fault {
            let _ = writeln!(
                out,
                "stopping: the target failed; the remaining {} files were not checked",
                total - n - 1
            );
            break;
        }
    }
    let mut summary = Summary::new(
        0,
        &target.describe(),
        &cfg.profile.name,
        reports,
        started.elapsed(),
        &checker,
    );
    summary.malformed = malformed;
    summary.unrecorded = unrecorded;
    summary
}
