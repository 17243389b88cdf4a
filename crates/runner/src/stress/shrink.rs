//! Shrinking a history no order explains, by re-running it: a *scenario*
//! is the sequential prefix that rebuilds the failing epoch's start state
//! (an order the checker found for the epochs before it) and the failing
//! epoch's operations, client by client. A candidate scenario is kept when
//! re-running it (up to [`StressConfig::attempts`] times: a race shows only
//! in some interleavings; three times that for the first, the whole
//! failing epoch; once for a candidate of one client, which is one
//! sequence) ends in an epoch no order explains, at its last epoch. Every
//! other attempt is paced: the operations invoked in the failing run's
//! order, a gap apart ([`gap_of`]), so the rival still lands inside the
//! racy handler's window on a loaded machine. Passes: keep only the prefix steps that name what the failing
//! epoch names, closed backwards (one re-run; the failing epoch's
//! operations are already one component of it, `lin::partition`); drop
//! prefix chunks, halves first down to single steps
//! (the sequential shrinker's `delete_chunks`); drop concurrent operations
//! one at a time (fewer operations, then fewer clients). Repeated until a
//! round gains nothing or the time budget ends.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use gen::{Op, Step};

use super::process::ServerProcess;
use super::{crash_one, run_one, Clock, Pace, StressConfig, CRASH_AFTER};
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
    /// The client of each of them, in the order the failing run invoked
    /// them: a paced re-run sends them in that order ([`Pace`]).
    pub order: Vec<usize>,
    /// Whether the target is killed and restarted after them, before the
    /// barrier (the failing epoch crashed).
    pub crash: bool,
}

impl Scenario {
    /// The scenario of a failure: its prefix, and its epoch's operations
    /// (without the indeterminate ones of earlier epochs) per client. When
    /// the epoch crashed, only the operations acknowledged before the
    /// crash: a re-run kills the target after its operations, so the crash
    /// comes at the same point of the history, after the last one
    /// acknowledged. Sending an operation that was in flight at the crash
    /// would move it past that one: what a durability bug loses (the last
    /// step logged, or held back) would then be another step, perhaps one
    /// whose loss changes nothing (a heartbeat at the `now` its acquire
    /// already set the lease for).
    pub fn of(f: &Failure, clients: usize, crash: bool) -> Scenario {
        let mut queues = vec![Vec::new(); clients];
        let mut ops: Vec<_> = f
            .ops
            .iter()
            .filter(|o| o.epoch == f.epoch && (!crash || o.is_ok()))
            .collect();
        ops.sort_by_key(|o| o.id);
        for op in &ops {
            queues[op.client].push(op.step.clone());
        }
        Scenario {
            prefix: f.prefix.clone(),
            now: f.now,
            queues,
            order: ops.iter().map(|o| o.client).collect(),
            crash,
        }
    }

    /// The scenario without client `client`'s `i`-th concurrent operation.
    fn without(&self, client: usize, i: usize) -> Scenario {
        let mut c = self.clone();
        c.queues[client].remove(i);
        let at = self
            .order
            .iter()
            .enumerate()
            .filter(|(_, &k)| k == client)
            .nth(i)
            .map(|(at, _)| at);
        if let Some(at) = at {
            c.order.remove(at);
        }
        c
    }

    /// Whether its concurrent epoch has operations of two clients or more:
    /// else every re-run sends one sequence, and one attempt says all that
    /// re-running it can.
    fn concurrent(&self) -> bool {
        self.queues.iter().filter(|q| !q.is_empty()).count() > 1
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
    /// The client of each operation in invocation order, to pace a re-run
    /// by ([`Pace`]); empty: not known, or one client.
    pub order: Vec<usize>,
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
                        order: Vec::new(),
                        crash: false,
                    });
                }
            }
        }
        groups.push(Group {
            now: self.now,
            queues: self.queues.clone(),
            order: self.order.clone(),
            crash: self.crash,
        });
        groups
    }
}

/// The gaps a paced attempt leaves between two invocations, in turn: a
/// racy handler's window stays open until its rival was handled (up to
/// `serve::races::DEFAULT_WINDOW`), so a gap only has to be longer than
/// the time the operation before takes to reach its handler, and shorter
/// than that window.
const GAPS: [Duration; 2] = [Duration::from_millis(2), Duration::from_millis(6)];

/// How attempt `attempt` (from 0) of a re-run sends its concurrent epochs:
/// even attempts paced in the failing run's invocation order (a race shows
/// when its rival lands inside the racy handler's window, and the order
/// that showed it once is the one most likely to again, whatever the
/// machine's load does to the threads), odd ones all at once, as the run
/// sent them (an interleaving the invocation stamps did not capture).
pub fn gap_of(attempt: usize) -> Option<Duration> {
    attempt
        .is_multiple_of(2)
        .then(|| GAPS[(attempt / 2) % GAPS.len()])
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
    gap: Option<Duration>,
) -> Result<(History, Rejudged), TargetError> {
    target.reset()?;
    let clock = Clock::start();
    let mut rec = Recorder::default();
    let mut h = History::new(header.clone());
    let mut lin = Linearizer::new(cfg.model(), &cfg.profile.skip_components, cfg.lin);
    let mut process = process;
    for (i, g) in groups.iter().enumerate() {
        let pace = gap.filter(|_| !g.order.is_empty()).map(|gap| Pace {
            order: g.order.clone(),
            gap,
        });
        let pace = pace.as_ref();
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
                    pace,
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
                pace,
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
/// departure: not this one). `Err`: why the re-run says nothing (the
/// target failed, or the search gave up).
pub fn run_scenario(
    cfg: &StressConfig,
    target: &mut dyn Target,
    process: Option<&mut ServerProcess>,
    clients: &mut Vec<Box<dyn Client>>,
    header: &HistoryHeader,
    s: &Scenario,
    gap: Option<Duration>,
) -> Result<(History, bool), String> {
    let groups = s.groups(clients.len());
    let last = groups.len() - 1;
    match run_groups(cfg, target, process, clients, header, &groups, gap) {
        Err(e) => Err(format!("the target failed: {e}")),
        Ok((h, Rejudged::Linearizable)) => Ok((h, false)),
        Ok((h, Rejudged::NotLinearizable(i, _))) => Ok((h, i == last)),
        Ok((_, Rejudged::Undecided(why))) => Err(format!("the search gave up: {why}")),
    }
}

/// The search budget of each epoch of a shrink's re-run: a candidate whose
/// failing epoch takes more configurations than this to decide is one the
/// shrink does not keep (the run's own check has the whole budget), so a
/// re-run's check never outlasts the shrink's time by much, however wide
/// the epoch.
pub const SHRINK_SEARCH_BUDGET: u64 = 50_000;

/// The first candidate (the whole failing epoch) is re-run up to this many
/// times [`StressConfig::attempts`] (within the shrink's time): if it does
/// not show again there is nothing to shrink.
const FIRST_ATTEMPTS: usize = 3;

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
    let mut why = String::new();
    // Every re-run is bounded (each request by its timeout, a restart by
    // the process's), and the attempts stop at the deadline: a shrink never
    // outlasts its budget by more than one re-run, however slow the target.
    // A candidate of one client is one sequence: one attempt.
    let mut reproduce = |s: &Scenario, attempts: usize| -> Option<History> {
        let attempts = if s.concurrent() { attempts.max(1) } else { 1 };
        for attempt in 0..attempts {
            if attempt > 0 && Instant::now() > deadline {
                why = format!("the shrink's time ran out after {attempt} re-runs");
                return None;
            }
            let gap = gap_of(attempt);
            let c = &mut clients;
            match run_scenario(cfg, target, process.as_deref_mut(), c, header, s, gap) {
                Ok((h, true)) => return Some(h),
                Ok((_, false)) => {
                    why = format!("{attempts} re-runs did not fail at their last epoch");
                }
                Err(e) => {
                    why = e;
                    return None;
                }
            }
        }
        None
    };
    let attempts = cfg.attempts.max(1);
    let mut best = Scenario::of(f, cfg.clients, crashed);
    // The whole failing epoch is the one candidate the shrink cannot do
    // without: it gets more attempts than the others.
    let Some(mut best_history) = reproduce(&best, FIRST_ATTEMPTS * attempts) else {
        let _ = writeln!(
            out,
            "shrink: the failing epoch did not show again ({why}); the whole history is saved"
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
            if let Some(h) = reproduce(&c, attempts) {
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
                match reproduce(&c, attempts) {
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
                let c = best.without(client, i);
                match reproduce(&c, attempts) {
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
