//! `conform check`: replay golden files against a target and compare its
//! answers with the recorded ones, with the normalisation of `run`.
//!
//! The recorded answers are the verdict. Golden files are latitude-free (a
//! tick precedes every request that would run with a due timeout), so a
//! conforming target matches them as they are; when one does not, the
//! same latitude search as `run` asks whether firing due timeouts the spec
//! allows explains the target (e.g. a different firing order within a
//! tick). If it does, the rest of that file is checked against the model,
//! which has adopted the target's schedule.

use std::path::{Path, PathBuf};
use std::time::Instant;

use gen::Op;

use crate::check::{Checker, Divergence};
use crate::compare::{diff_state, normalize_response};
use crate::profile::Profile;
use crate::report::{CaseReport, CaseStatus};
use crate::target::{Target, TargetError};
use crate::trace::{self, Trace};

/// Every `.ndjson` file under `path` (or `path` itself), sorted.
pub fn golden_files(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
        .collect();
    v.sort();
    Ok(v)
}

/// Check one golden trace; `(executed lines, divergence)` or a fault.
/// With `check_state` false, recorded states are not compared.
pub fn check_trace(
    target: &mut Target,
    t: &Trace,
    profile: &Profile,
    check_state: bool,
) -> Result<(usize, Option<(usize, Divergence)>), TargetError> {
    let mut checker = Checker::new(Profile {
        retry_timeout: t.header.retry_timeout(),
        ..profile.clone()
    });
    target.start_and_reset()?;
    let mut on_model = false;
    for (i, line) in t.lines.iter().enumerate() {
        let want_state = line.state.as_ref().filter(|_| check_state);
        let res = match &line.step.op {
            Op::Request(r) => Some(target.call(
                r.kind(),
                model::wire::encode_request(r),
                Some(line.step.now),
            )?),
            Op::Tick => {
                target.tick(line.step.now)?;
                None
            }
        };
        let snap = if want_state.is_some() || (on_model && check_state) {
            Some(target.snap()?)
        } else {
            None
        };
        let recorded_fits = !on_model && {
            // A golden file records the expectation in `res`; a run trace
            // records the target's answer there and the model's in `expect`.
            let want_res = line.expect.as_ref().or(line.res.as_ref());
            let res_ok = match (want_res, &res) {
                (Some(want), Some(got)) => {
                    normalize_response(want, profile) == normalize_response(got, profile)
                }
                _ => true,
            };
            let state_ok = match (want_state, &snap) {
                (Some(want), Some(got)) => {
                    diff_state(want, &got.normalized(), profile, &mut checker.skipped).is_empty()
                }
                _ => true,
            };
            res_ok && state_ok
        };
        let checked = checker.check(&line.step, res.as_ref(), snap.as_ref());
        if recorded_fits {
            continue;
        }
        match checked.divergence {
            None => on_model = true,
            Some(d) => return Ok((i + 1, Some((i, d)))),
        }
    }
    Ok((t.lines.len(), None))
}

/// Check every golden file under `path`; one report per file.
pub fn check_all(
    target: &mut Target,
    files: &[PathBuf],
    profile: &Profile,
    check_state: bool,
    out: &mut dyn std::io::Write,
) -> Result<Vec<CaseReport>, trace::TraceError> {
    let mut reports = Vec::new();
    for (n, f) in files.iter().enumerate() {
        let t = trace::read(f)?;
        if !t
            .lines
            .iter()
            .any(|l| l.res.is_some() || l.expect.is_some() || l.state.is_some())
        {
            return Err(trace::TraceError {
                file: f.display().to_string(),
                line: 1,
                column: 1,
                message: "no recorded answers to check against (is this a golden file?)".into(),
            });
        }
        let started = Instant::now();
        let mut t = t;
        if t.header.retry_timeout() != profile.retry_timeout {
            // Deadlines depend on the retry timeout: recompute the
            // expectations with the model for the target's, rather than
            // report every retry deadline as a divergence.
            let with_state = t.lines.iter().any(|l| l.state.is_some());
            t.lines = crate::golden::record(&t.steps(), profile.retry_timeout, with_state);
            t.header.options.insert(
                "retryTimeout".into(),
                serde_json::json!(profile.retry_timeout),
            );
            let _ = writeln!(
                out,
                "note {}: recorded with another retry timeout; expectations recomputed by the model for {} ms",
                f.display(),
                profile.retry_timeout
            );
        }
        let status = match check_trace(target, &t, profile, check_state) {
            Err(e) => {
                let _ = writeln!(out, "TARGET FAULT on {}: {e}", f.display());
                CaseStatus::Fault {
                    message: e.to_string(),
                    trace: f.clone(),
                }
            }
            Ok((_, None)) => {
                let _ = writeln!(out, "ok   {}", f.display());
                CaseStatus::Pass
            }
            Ok((_, Some((i, d)))) => {
                let diff = crate::render::divergence(&t.lines[i], &d);
                let _ = writeln!(
                    out,
                    "FAIL {} at step {} (line {}): {}",
                    f.display(),
                    i + 1,
                    i + 2,
                    d.class
                );
                let _ = write!(out, "{diff}");
                let replay = format!(
                    "{} check {} --target {}",
                    crate::run::program(),
                    f.display(),
                    target.url()
                );
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
        reports.push(CaseReport {
            name: f.file_stem().map(|s| s.to_string_lossy().into_owned()),
            case: n as u64,
            seed: t.header.seed.unwrap_or(0),
            steps: t.lines.len(),
            latitude: 0,
            seconds: started.elapsed().as_secs_f64(),
            status,
        });
    }
    Ok(reports)
}
