//! Shrinking a history no order explains, by re-running it: a
//! [`Scenario`] is the sequential prefix that rebuilds the failing epoch's
//! start state (an order the checker found for the epochs before it) and
//! the failing epoch's operations, client by client. A candidate scenario is kept when
//! re-running it (up to [`StressConfig::attempts`] times: a race shows only
//! in some interleavings; three times that for the first, the whole
//! failing epoch; once for a candidate of one client, which is one
//! sequence) ends in an epoch no order explains, at its last epoch. Every
//! other attempt is paced: the operations invoked one at a time, a gap
//! apart, in the failing run's order, its reverse or a shuffle of it
//! ([`gap_of`]), so the rival still lands inside the racy handler's window
//! on a loaded machine. Passes: keep only the prefix steps that name what the failing
//! epoch names, closed backwards (one re-run; the failing epoch's
//! operations are already one component of it, `lin::partition`); drop
//! prefix chunks, halves first down to single steps
//! (the sequential shrinker's `delete_chunks`); drop concurrent operations
//! one at a time (fewer operations); move one client's operations onto
//! another's, in invocation order (fewer clients: the operations around a
//! racing pair need not run beside it). Repeated until a round gains
//! nothing or the budget ends: [`StressConfig::shrink_reruns`] re-runs
//! (each attempt of each candidate is one), `shrink_time` a ceiling.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::process::ServerProcess;
use super::{crash_one, run_one, Clock, Pace, Sending, StressConfig, CRASH_AFTER};
use crate::lin::history::{History, HistoryHeader};
use crate::lin::shown::Recorder;
use crate::lin::{Failure, Linearizer, Verdict};
use crate::target::{Client, Target, TargetError};

pub use super::scenario::{Group, Scenario};

/// The gaps a paced attempt leaves between two invocations, in turn: a
/// racy handler's window stays open until its rival was handled (up to
/// `serve::races::DEFAULT_WINDOW`), so a gap only has to be longer than
/// the time the operation before takes to reach its handler, and shorter
/// than that window.
const GAPS: [Duration; 2] = [Duration::from_millis(2), Duration::from_millis(6)];

/// How attempt `attempt` (from 0) of a re-run sends its concurrent epochs:
/// even attempts paced (a race shows when its rival lands inside the racy
/// handler's window, and a paced order puts it there whatever the
/// machine's load does to the threads), odd ones all at once (an
/// interleaving no pacing chose; without the run's pairs of a step and its
/// rival met at one moment, which the history does not keep: the paced
/// attempts put a rival where it races).
///
/// The paced orders take turns ([`Paced::order`]), each at both gaps: the
/// failing run's invocation order first, then its reverse, then shuffles
/// of it. The
/// invocation stamps do not say in which order the handlers ran: an
/// operation invoked after its rival may still have been checked before
/// it (a tick invoked while a halt was on the wire, whose check ran first
/// and whose write then landed over the halt), so the recorded order alone
/// may never show the race again.
pub fn gap_of(attempt: usize) -> Option<Paced> {
    attempt.is_multiple_of(2).then(|| {
        let turn = attempt / 2;
        Paced {
            gap: GAPS[turn % GAPS.len()],
            order: turn / GAPS.len(),
        }
    })
}

/// A paced attempt: the gap between invocations, and which order
/// (0: as recorded, 1: reversed, `n`: the `n`-th shuffle).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Paced {
    /// Between two invocations.
    pub gap: Duration,
    /// Which order.
    pub order: usize,
}

impl Paced {
    /// Order `self.order` of `recorded` (the client of each operation, in
    /// invocation order): any permutation of it is an interleaving of the
    /// same queues, each client's steps still in their order.
    pub fn order_of(&self, recorded: &[usize]) -> Vec<usize> {
        let mut order = recorded.to_vec();
        match self.order {
            0 => {}
            1 => order.reverse(),
            n => {
                // Fisher-Yates over SplitMix64 draws: deterministic per turn.
                for i in (1..order.len()).rev() {
                    let j = (gen::case_seed(n as u64, i as u64) % (i as u64 + 1)) as usize;
                    order.swap(i, j);
                }
            }
        }
        order
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
    gap: Option<Paced>,
) -> Result<(History, Rejudged), TargetError> {
    target.reset()?;
    let clock = Clock::start();
    let mut rec = Recorder::default();
    let mut h = History::new(header.clone());
    let mut lin = Linearizer::new(cfg.model(), &cfg.profile.skip_components, cfg.lin);
    let mut process = process;
    for (i, g) in groups.iter().enumerate() {
        let pace = gap.filter(|_| !g.order.is_empty()).map(|p| Pace {
            order: p.order_of(&g.order),
            gap: p.gap,
        });
        let sending = pace.as_ref().map_or(Sending::AtOnce(&[]), Sending::Paced);
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
                    sending,
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
                sending,
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
    gap: Option<Paced>,
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
    process: Option<&mut ServerProcess>,
    f: &Failure,
    crashed: bool,
    header: &HistoryHeader,
    out: &mut dyn Write,
) -> Option<PathBuf> {
    let start = Scenario::of(f, cfg.clients, crashed);
    let (best, best_history) = shrink_scenario(cfg, target, process, start, header, out)?;
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

/// Shrink `start` (a scenario whose last epoch no order explains) by
/// re-running candidates on `cfg.clients` clients: the smallest that still
/// fails and the history of its failing re-run; `None` when `start`
/// itself did not fail again.
pub fn shrink_scenario(
    cfg: &StressConfig,
    target: &mut dyn Target,
    mut process: Option<&mut ServerProcess>,
    start: Scenario,
    header: &HistoryHeader,
    out: &mut dyn Write,
) -> Option<(Scenario, History)> {
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
    // Re-runs are the budget that does not depend on the machine's load
    // (a loaded machine reaches fewer in the same seconds); the time is a
    // ceiling above it.
    let reruns = std::cell::Cell::new(0usize);
    let spent =
        || Instant::now() > deadline || cfg.shrink_reruns.is_some_and(|cap| reruns.get() >= cap);
    let mut why = String::new();
    // Every re-run is bounded (each request by its timeout, a restart by
    // the process's), and the attempts stop at the deadline: a shrink never
    // outlasts its budget by more than one re-run, however slow the target.
    // A candidate of one client is one sequence: one attempt.
    let mut reproduce = |s: &Scenario, attempts: usize| -> Option<History> {
        let attempts = if s.concurrent() { attempts.max(1) } else { 1 };
        for attempt in 0..attempts {
            if attempt > 0 && spent() {
                why = match Instant::now() > deadline {
                    true => format!("the shrink's time ran out after {} re-runs", reruns.get()),
                    false => format!("the shrink's {} re-runs were spent", reruns.get()),
                };
                return None;
            }
            reruns.set(reruns.get() + 1);
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
    let mut best = start;
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
        if spent() {
            break;
        }
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
                if spent() {
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
                if spent() {
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
        // Fewer clients: a client's operations onto another's (a candidate
        // of one client costs one re-run).
        'merge: while best.size().1 > 1 {
            let used: Vec<usize> = (0..best.queues.len())
                .filter(|&c| !best.queues[c].is_empty())
                .collect();
            for &from in used.iter().rev() {
                for &into in used.iter().filter(|&&c| c != from) {
                    if spent() {
                        break 'merge;
                    }
                    let c = best.merged(from, into);
                    if let Some(h) = reproduce(&c, attempts) {
                        best = c;
                        best_history = h;
                        continue 'merge;
                    }
                }
            }
            break;
        }
        if best.size() >= before || spent() {
            break;
        }
    }
    let _ = writeln!(out, "shrink: {} re-runs", reruns.get());
    Some((best, best_history))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every paced order is an interleaving of the same queues (the same
    /// clients as often), the first two are the recorded one and its
    /// reverse, and a shuffle is the same on every call.
    #[test]
    fn paced_orders_permute_the_recorded_interleaving() {
        let recorded = vec![0, 1, 0, 2, 3, 1, 2];
        let sorted = |mut v: Vec<usize>| {
            v.sort();
            v
        };
        let turns: Vec<Paced> = (0..24).filter_map(gap_of).collect();
        assert_eq!(turns.len(), 12);
        assert_eq!(turns[0].order_of(&recorded), recorded);
        assert_eq!(
            turns[1].order_of(&recorded),
            recorded,
            "each order at both gaps"
        );
        assert_ne!(turns[0].gap, turns[1].gap);
        let mut rev = recorded.clone();
        rev.reverse();
        assert_eq!(turns[2].order_of(&recorded), rev);
        assert_eq!(turns[3].order_of(&recorded), rev);
        let mut distinct = std::collections::BTreeSet::new();
        for t in &turns {
            let o = t.order_of(&recorded);
            assert_eq!(sorted(o.clone()), sorted(recorded.clone()));
            assert_eq!(o, t.order_of(&recorded));
            distinct.insert(o);
        }
        assert!(distinct.len() >= 5, "{distinct:?}");
        assert_eq!(gap_of(1), None, "odd attempts send all at once");
    }
}
