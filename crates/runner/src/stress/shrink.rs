//! Shrinking a history no order explains, by re-running it: a *scenario*
//! is the sequential prefix that rebuilds the failing epoch's start state
//! (an order the checker found for the epochs before it) and the failing
//! epoch's operations, client by client. A candidate scenario is kept when
//! re-running it (up to [`StressConfig::attempts`] times: a race shows only
//! in some interleavings) ends in an epoch no order explains, at its last
//! epoch. Passes: keep only the prefix steps that name what the failing
//! epoch names, closed backwards (one re-run; the failing epoch's
//! operations are already one component of it, `lin::partition`); drop
//! prefix chunks, halves first down to single steps
//! (the sequential shrinker's `delete_chunks`); drop concurrent operations
//! one at a time (fewer operations, then fewer clients). Repeated until a
//! round gains nothing or the time budget ends.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use gen::{Op, Step};

use super::process::ServerProcess;
use super::{crash_one, run_one, Clock, StressConfig, CRASH_AFTER};
use crate::lin::history::{History, HistoryHeader};
use crate::lin::partition::{request_keys, Key};
use crate::lin::shown::Recorder;
use crate::lin::{Failure, Linearizer, Verdict};
use crate::target::{Client, Target, TargetError};

/// What is re-run: a prefix, then one concurrent epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// Sequential steps, each epoch one `now`.
    pub prefix: Vec<Step>,
    /// The concurrent epoch's `now`.
    pub now: u64,
    /// Its operations, per client.
    pub queues: Vec<Vec<Step>>,
    /// Whether the target is killed and restarted after them, before the
    /// barrier (the failing epoch crashed).
    pub crash: bool,
}

impl Scenario {
    /// The scenario of a failure: its prefix, and its epoch's operations
    /// (without the indeterminate ones of earlier epochs) per client.
    pub fn of(f: &Failure, clients: usize, crash: bool) -> Scenario {
        let mut queues = vec![Vec::new(); clients];
        for op in f.ops.iter().filter(|o| o.epoch == f.epoch) {
            queues[op.client].push(op.step.clone());
        }
        Scenario {
            prefix: f.prefix.clone(),
            now: f.now,
            queues,
            crash,
        }
    }

    /// The scenario with only the prefix steps that can matter to its
    /// concurrent epoch: a request naming an object the epoch's operations
    /// name, or one a kept later step names (`lin::partition`'s keys),
    /// and the ticks when `keep_ticks`. `None` when the epoch holds a
    /// request that reads every object of a kind (none does at this spec
    /// commit: a search answers 501).
    fn relevant(&self, keep_ticks: bool) -> Option<Scenario> {
        let mut keys: BTreeSet<Key> = BTreeSet::new();
        for step in self.queues.iter().flatten() {
            if let Op::Request(r) = &step.op {
                keys.extend(request_keys(r));
            }
        }
        if keys.contains(&Key::AllIds) || keys.contains(&Key::AllSchedules) {
            return None;
        }
        let mut kept: Vec<Step> = Vec::new();
        for step in self.prefix.iter().rev() {
            let keep = match &step.op {
                Op::Tick => keep_ticks,
                Op::Request(r) => {
                    let named = request_keys(r);
                    let hit = named.iter().any(|k| keys.contains(k));
                    if hit {
                        keys.extend(named);
                    }
                    hit
                }
            };
            if keep {
                kept.push(step.clone());
            }
        }
        kept.reverse();
        Some(Scenario {
            prefix: kept,
            ..self.clone()
        })
    }

    /// Its size: operations, then clients used.
    fn size(&self) -> (usize, usize) {
        let ops = self.prefix.len() + self.queues.iter().map(Vec::len).sum::<usize>();
        (ops, self.queues.iter().filter(|q| !q.is_empty()).count())
    }
}

/// One epoch to send again: its `now`, its operations per client, and
/// whether the target is killed and restarted after them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The epoch's `now`.
    pub now: u64,
    /// Its operations, per client.
    pub queues: Vec<Vec<Step>>,
    /// Crash after the operations, before the barrier.
    pub crash: bool,
}

impl Scenario {
    /// The epochs that re-run it on `clients` clients: one per `now` of
    /// the prefix (all on client 0), then the concurrent one.
    pub fn groups(&self, clients: usize) -> Vec<Group> {
        let mut groups: Vec<Group> = Vec::new();
        for step in &self.prefix {
            match groups.last_mut() {
                Some(g) if g.now == step.now => g.queues[0].push(step.clone()),
                _ => {
                    let mut queues = vec![Vec::new(); clients];
                    queues[0].push(step.clone());
                    groups.push(Group {
                        now: step.now,
                        queues,
                        crash: false,
                    });
                }
            }
        }
        groups.push(Group {
            now: self.now,
            queues: self.queues.clone(),
            crash: self.crash,
        });
        groups
    }
}

/// How a re-run was judged.
#[derive(Debug)]
pub enum Rejudged {
    /// Every epoch linearizable.
    Linearizable,
    /// The epoch (its index in the re-run) no order explains.
    NotLinearizable(usize, Box<Failure>),
    /// The search gave up.
    Undecided(String),
}

/// Send `groups` once from a wiped target and check the history they
/// leave: the history and its verdict, or the target's fault.
#[allow(clippy::result_large_err)]
pub fn run_groups(
    cfg: &StressConfig,
    target: &mut dyn Target,
    process: Option<&mut ServerProcess>,
    clients: &mut Vec<Box<dyn Client>>,
    header: &HistoryHeader,
    groups: &[Group],
) -> Result<(History, Rejudged), TargetError> {
    target.reset()?;
    let clock = Clock::start();
    let mut rec = Recorder::default();
    let mut h = History::new(header.clone());
    let mut lin = Linearizer::new(cfg.model(), &cfg.profile.skip_components, cfg.lin);
    let mut process = process;
    for (i, g) in groups.iter().enumerate() {
        let epoch = match process.as_deref_mut().filter(|_| g.crash) {
            // The crash comes after the operations: what they acknowledged
            // must survive it.
            Some(p) => {
                let e = crash_one(
                    clients,
                    target,
                    p,
                    CRASH_AFTER,
                    &g.queues,
                    i,
                    g.now,
                    &mut h,
                    clock,
                    cfg,
                    &mut rec,
                )
                .map_err(|(_, e)| e)?;
                *clients = target.clients(clients.len())?;
                e
            }
            None => run_one(
                clients,
                target,
                &g.queues,
                i,
                g.now,
                h.len(),
                clock,
                cfg,
                &mut rec,
            )
            .map_err(|(_, e)| e)?,
        };
        h.epochs.push(epoch);
    }
    // Checked after the run, so the re-run's timing is the target's alone
    // (a deferred flush, a race window) and not the checker's.
    for (i, epoch) in h.epochs.iter().enumerate() {
        match lin.check_epoch(epoch) {
            Ok(()) => {}
            Err(Verdict::NotLinearizable(f)) => {
                return Ok((h.clone(), Rejudged::NotLinearizable(i, f)));
            }
            Err(Verdict::Undecided { epoch, why }) => {
                return Ok((
                    h.clone(),
                    Rejudged::Undecided(format!("epoch {epoch}: {why}")),
                ));
            }
            Err(Verdict::Linearizable) => unreachable!("an epoch error is never linearizable"),
        }
    }
    Ok((h, Rejudged::Linearizable))
}

/// Re-run `s` once from a wiped target: its history, and whether its last
/// epoch is one no order explains (an earlier failing epoch is another
/// departure: not this one). `None`: the target failed, or the search gave
/// up.
pub fn run_scenario(
    cfg: &StressConfig,
    target: &mut dyn Target,
    process: Option<&mut ServerProcess>,
    clients: &mut Vec<Box<dyn Client>>,
    header: &HistoryHeader,
    s: &Scenario,
) -> Option<(History, bool)> {
    let groups = s.groups(clients.len());
    let last = groups.len() - 1;
    match run_groups(cfg, target, process, clients, header, &groups).ok()? {
        (h, Rejudged::Linearizable) => Some((h, false)),
        (h, Rejudged::NotLinearizable(i, _)) => Some((h, i == last)),
        (_, Rejudged::Undecided(_)) => None,
    }
}

/// The search budget of each epoch of a shrink's re-run: a candidate whose
/// failing epoch takes more configurations than this to decide is one the
/// shrink does not keep (the run's own check has the whole budget), so a
/// re-run's check never outlasts the shrink's time by much, however wide
/// the epoch.
pub const SHRINK_SEARCH_BUDGET: u64 = 50_000;

/// Shrink the failure by re-running; the shrunk history's path when the
/// failure reproduced.
pub fn shrink(
    cfg: &StressConfig,
    target: &mut dyn Target,
    mut process: Option<&mut ServerProcess>,
    f: &Failure,
    crashed: bool,
    header: &HistoryHeader,
    out: &mut dyn Write,
) -> Option<PathBuf> {
    let mut clients = target.clients(cfg.clients).ok()?;
    // A re-run's check is bounded by configurations, not seconds: one whose
    // search gives up is a candidate that did not reproduce.
    let cfg = &StressConfig {
        lin: crate::lin::LinOptions {
            budget: cfg.lin.budget.min(SHRINK_SEARCH_BUDGET),
            ..cfg.lin
        },
        ..cfg.clone()
    };
    let deadline = Instant::now() + cfg.shrink_time;
    // Every re-run is bounded (each request by its timeout, a restart by
    // the process's), and the attempts stop at the deadline: a shrink never
    // outlasts its budget by more than one re-run, however slow the target.
    let mut reproduce = |s: &Scenario| -> Option<History> {
        for attempt in 0..cfg.attempts.max(1) {
            if attempt > 0 && Instant::now() > deadline {
                return None;
            }
            match run_scenario(cfg, target, process.as_deref_mut(), &mut clients, header, s) {
                Some((h, true)) => return Some(h),
                Some((_, false)) => continue,
                None => return None,
            }
        }
        None
    };
    let mut best = Scenario::of(f, cfg.clients, crashed);
    let Some(mut best_history) = reproduce(&best) else {
        let _ = writeln!(
            out,
            "shrink: the failing epoch did not show again in {} re-runs; the whole history is saved",
            cfg.attempts
        );
        return None;
    };
    // The prefix steps that name what the failing epoch names (closed
    // backwards over the prefix): one re-run, often most of the prefix
    // gone; without the ticks first, then with them.
    for keep_ticks in [false, true] {
        if let Some(c) = best
            .relevant(keep_ticks)
            .filter(|c| c.prefix.len() < best.prefix.len())
        {
            if let Some(h) = reproduce(&c) {
                best = c;
                best_history = h;
                break;
            }
        }
    }
    loop {
        let before = best.size();
        // Prefix chunks, halves first.
        let mut chunk = best.prefix.len().div_ceil(2).max(1);
        while chunk >= 1 && !best.prefix.is_empty() {
            let mut start = 0;
            while start < best.prefix.len() {
                if Instant::now() > deadline {
                    break;
                }
                let mut c = best.clone();
                let end = (start + chunk).min(c.prefix.len());
                c.prefix.drain(start..end);
                match reproduce(&c) {
                    Some(h) => {
                        best = c;
                        best_history = h;
                    }
                    None => start += chunk,
                }
            }
            if chunk == 1 {
                break;
            }
            chunk /= 2;
        }
        // Concurrent operations, one at a time.
        let mut client = 0;
        while client < best.queues.len() {
            let mut i = 0;
            while i < best.queues[client].len() {
                if Instant::now() > deadline {
                    break;
                }
                let mut c = best.clone();
                c.queues[client].remove(i);
                match reproduce(&c) {
                    Some(h) => {
                        best = c;
                        best_history = h;
                    }
                    None => i += 1,
                }
            }
            client += 1;
        }
        if best.size() >= before || Instant::now() > deadline {
            break;
        }
    }
    let (ops, clients_used) = best.size();
    let path = super::save(&best_history, &cfg.out_dir, cfg.seed).ok()?;
    let shrunk = path.with_file_name(
        path.file_name()?
            .to_string_lossy()
            .replace(".history.ndjson", ".shrunk.history.ndjson"),
    );
    std::fs::rename(&path, &shrunk).ok()?;
    let _ = super::html::write_beside(&shrunk, &best_history, None);
    let _ = writeln!(
        out,
        "shrunk to {ops} operations ({} before the concurrent epoch) on {clients_used} clients: {}",
        best.prefix.len(),
        shrunk.display()
    );
    Some(shrunk)
}
