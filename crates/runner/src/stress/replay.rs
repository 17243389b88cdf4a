//! Re-running a saved history against a target (`conform replay-history`):
//! the counterexample a stress run saved — the shrunk history, or the whole
//! one — is sent again epoch by epoch, each epoch's operations from their
//! own clients at once, and checked as the run checks. A race shows in
//! some interleavings only, so it is re-run up to
//! [`StressConfig::attempts`] times, until one is not linearizable; every
//! other attempt is paced, as the shrink's are: the saved history's
//! invocation order, its reverse, then shuffles of it, each at two gaps
//! ([`gap_of`]).
//!
//! What cannot be re-run exactly is the moment of a crash: a replay kills
//! the target after the crashed epoch's operations (what they
//! acknowledged must survive it), as the shrink does.

use std::io::Write;
use std::path::PathBuf;

use super::process::ServerProcess;
use super::shrink::{gap_of, run_groups, Group, Rejudged};
use super::StressConfig;
use crate::lin::history::History;
use crate::lin::{report, Failure};
use crate::target::{Target, TargetError};

/// The epochs of `h`, to send again: each epoch's operations by client,
/// in invocation order, and a crash where one was injected.
pub fn groups(h: &History) -> Vec<Group> {
    h.epochs
        .iter()
        .map(|e| {
            let mut queues = vec![Vec::new(); h.header.clients];
            for op in &e.ops {
                queues[op.client].push(op.step.clone());
            }
            Group {
                now: e.now,
                queues,
                order: e.ops.iter().map(|o| o.client).collect(),
                crash: e.crashed,
            }
        })
        .collect()
}

/// How a replay ended.
#[derive(Debug)]
pub enum Replayed {
    /// A re-run no order explains: the attempt, the history it left
    /// (saved), and its failure.
    Reproduced {
        /// 1-based attempt.
        attempt: usize,
        /// The saved history of that attempt.
        file: PathBuf,
        /// Its failure.
        failure: Box<Failure>,
    },
    /// Every attempt was linearizable.
    NotReproduced {
        /// Attempts made.
        attempts: usize,
    },
    /// The search gave up on an attempt.
    Undecided(String),
    /// The target failed.
    Fault(TargetError),
}

/// Replay `h` against `target` (and `process`, when the harness owns it and
/// the history crashed it) up to `cfg.attempts` times; a failing attempt's
/// history is saved under `cfg.out_dir` with its timeline.
pub fn replay(
    cfg: &StressConfig,
    target: &mut dyn Target,
    mut process: Option<&mut ServerProcess>,
    h: &History,
    out: &mut dyn Write,
) -> Replayed {
    if let Err(e) = target.start() {
        return Replayed::Fault(e);
    }
    let mut clients = match target.clients(h.header.clients) {
        Ok(c) => c,
        Err(e) => return Replayed::Fault(e),
    };
    let groups = groups(h);
    let attempts = cfg.attempts.max(1);
    for attempt in 1..=attempts {
        let r = run_groups(
            cfg,
            target,
            process.as_deref_mut(),
            &mut clients,
            &h.header,
            &groups,
            gap_of(attempt - 1),
        );
        match r {
            Err(e) => return Replayed::Fault(e),
            Ok((_, Rejudged::Linearizable)) => {
                let _ = writeln!(out, "attempt {attempt}: linearizable");
            }
            Ok((_, Rejudged::Undecided(why))) => return Replayed::Undecided(why),
            Ok((again, Rejudged::NotLinearizable(_, failure))) => {
                let _ = writeln!(out, "{}", report::render(&failure));
                let file = match super::save(&again, &cfg.out_dir, cfg.seed) {
                    Ok(f) => f,
                    Err(e) => {
                        return Replayed::Undecided(format!("could not save the history: {e}"))
                    }
                };
                let _ = super::html::write_beside(&file, &again, Some(&failure));
                return Replayed::Reproduced {
                    attempt,
                    file,
                    failure,
                };
            }
        }
    }
    Replayed::NotReproduced { attempts }
}
