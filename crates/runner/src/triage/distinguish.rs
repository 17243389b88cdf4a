//! Telling look-alike explanations apart, and refusing a partial fit.
//!
//! A shrunk trace is one situation: two deviations that both answer it as
//! the target did (`materialize-named-expired` and
//! `materialize-unarmed-expired` on an unarmed promise) may part on the
//! very next case, and a deviation may fit it by accident while it is
//! wrong wherever it fires elsewhere (`suspend-300-before-422` on a server
//! that answers 300 for another reason). Both are settled the same way: on
//! the trace's neighbours (the case's own steps cut at a few points before
//! its divergence, each continued by the generator), two models run in
//! lockstep until they answer differently (response or state), and that
//! step is sent to the target, which decides.
//!
//! Only the step where the two models part is evidence: a neighbour that
//! diverges earlier met some other departure of the target and says
//! nothing about these two, so it is passed over, never counted against
//! either.

use std::collections::BTreeSet;

use deviate::{Deviant, Deviation};
use gen::{Op, Step};
use model::state::State;

use super::campaign::Found;
use super::pin;
use crate::check::{Checker, Divergence};
use crate::compare::normalize_response;
use crate::exec::{continue_stream, execute, ExecOptions, Expect};
use crate::profile::Profile;
use crate::snapshot::Snap;
use crate::target::{LocalServer, Target, TargetError};

/// How many neighbours a trace has: cut points before its divergence.
const NEIGHBOURS: usize = 6;
/// Steps the generator adds past a cut point, at least.
const MIN_CONTINUATION: usize = 12;

/// What the target made of two explanations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A neighbour tells them apart and the target answered as the first.
    First,
    /// As the second.
    Second,
    /// As neither: both are wrong on that case.
    Neither,
    /// No neighbour tells them apart (or every one that does diverged
    /// before the two models parted).
    Tie,
}

/// The neighbours of `f`'s trace: its case's steps cut before the
/// divergence at up to [`NEIGHBOURS`] points, each continued by the
/// generator from the state the model with `base` holds there (seeded per
/// cut point, so each is another case from the same prefix).
pub fn neighbours(f: &Found, profile: &Profile, base: &[&'static Deviation]) -> Vec<Vec<Step>> {
    let cut = &f.cut;
    let from = f.pin.as_ref().map_or(0, |p| p.from);
    let start = f.start(profile.retry_timeout);
    let last = cut.len().saturating_sub(1).max(from);
    let span = last - from;
    let mut points: Vec<usize> = (0..NEIGHBOURS)
        .map(|i| from + span * i / NEIGHBOURS.max(1))
        .collect();
    points.dedup();
    let mut out = Vec::new();
    for (i, &k) in points.iter().enumerate() {
        let mut checker = Checker::with_deviations(profile.clone(), base.to_vec());
        pin::pin(&mut checker, start.clone());
        let prefix = &cut[from..k];
        for s in prefix {
            checker.model.step(s);
        }
        let now = prefix.last().map_or_else(|| now_of(cut, from), |s| s.now);
        let len = (2 * (cut.len() - k)).max(MIN_CONTINUATION);
        let state = checker.model.state.clone();
        let seed = f.case.wrapping_mul(0x9E37_79B9).wrapping_add(k as u64);
        let rest = pin::resume(&checker, &state, now, seed, i, len, gen::Kinds::NONE);
        let mut steps: Vec<Step> = cut[..k].to_vec();
        steps.extend(rest);
        out.push(steps);
    }
    out
}

fn now_of(cut: &[Step], from: usize) -> u64 {
    match from {
        0 => 0,
        n => cut[n - 1].now,
    }
}

/// The first step (index into `steps`) where the models with `a` and with
/// `b` answer differently, both from `start` after the part before `from`
/// (played by neither: it is the target's own past for a continued
/// finding, replayed as such).
pub fn parting(
    steps: &[Step],
    from: usize,
    start: &State,
    profile: &Profile,
    a: &[&'static Deviation],
    b: &[&'static Deviation],
    check_state: bool,
) -> Option<usize> {
    let mut x = server(profile, a, start);
    let mut y = server(profile, b, start);
    for (i, step) in steps.iter().enumerate().skip(from) {
        match &step.op {
            Op::Request(r) => {
                let ra = x.handle(r, step.now, "distinguish");
                let rb = y.handle(r, step.now, "distinguish");
                if normalize_response(&ra) != normalize_response(&rb) {
                    return Some(i);
                }
            }
            Op::Tick => {
                x.tick(step.now);
                y.tick(step.now);
            }
        }
        if check_state
            && Snap::from_view(x.view()).normalized() != Snap::from_view(y.view()).normalized()
        {
            return Some(i);
        }
    }
    None
}

fn server(profile: &Profile, devs: &[&'static Deviation], start: &State) -> LocalServer {
    LocalServer::new(
        model::state::ServerConfig {
            retry_timeout: profile.retry_timeout,
        },
        devs.to_vec(),
        false,
    )
    .from_state(start.clone())
}

/// What the replay of a neighbour's steps up to `end` met.
enum Met {
    /// No divergence up to `end`.
    Green,
    /// The first divergence that counts, at this step.
    At(usize, Box<Divergence>),
    /// A divergence it could not go on past (no pin): it says nothing.
    Stuck,
}

/// What every replay of a neighbour on the target shares: the profile it
/// runs under, whether state is compared, and the known residue a replay
/// may go on past.
#[derive(Clone, Copy, Debug)]
pub struct ReplayOptions<'a> {
    /// The profile of the triage's round.
    pub profile: &'a Profile,
    /// Compare `debug.snap` after every step.
    pub check_state: bool,
    /// Known residue classes ([`super::rollup::class_key`]).
    pub known: &'a BTreeSet<String>,
}

/// Replay `steps[..=end]` on the reset target through a checker with
/// `devs`, going on past a divergence (the model pinned to the target's
/// snapshot) where it is part of the case's own past (before `from`, the
/// pin of a continued finding) or known residue, as a confirming replay
/// does ([`pin::replay_diverges`]), unless `stops` says it counts anyway.
fn replay(
    o: ReplayOptions,
    steps: &[Step],
    end: usize,
    from: usize,
    devs: &[&'static Deviation],
    target: &mut dyn Target,
    stops: &dyn Fn(usize, &Divergence) -> bool,
) -> Result<Met, TargetError> {
    let opts = ExecOptions {
        check_state: o.check_state,
    };
    let mut checker = Checker::with_deviations(o.profile.clone(), devs.to_vec());
    let mut ex = execute(target, &mut checker, &steps[..=end], Expect::Model, opts);
    let mut at = 0;
    loop {
        if let Some(e) = ex.fault {
            return Err(e);
        }
        let Some((i, d)) = ex.divergence else {
            return Ok(Met::Green);
        };
        let i = at + i;
        let known = o.known.contains(&super::rollup::class_key(&d));
        if i >= end || (i >= from && (!known || stops(i, &d))) {
            return Ok(Met::At(i, Box::new(d)));
        }
        if !o.check_state {
            return Ok(Met::Stuck);
        }
        let snap = target.snap()?;
        let Ok(state) = pin::state_of(&snap, &checker) else {
            return Ok(Met::Stuck);
        };
        pin::pin(&mut checker, state);
        at = i + 1;
        let rest = &steps[at..=end];
        ex = continue_stream(target, &mut checker, rest, Expect::Model, opts, Some(snap));
    }
}

/// Whether the target agrees at `at` with the checker's model with `devs`
/// (`None`: it diverged before, so the case says nothing of `at`).
fn agrees_at(
    o: ReplayOptions,
    steps: &[Step],
    at: usize,
    from: usize,
    devs: &[&'static Deviation],
    target: &mut dyn Target,
) -> Result<Option<bool>, TargetError> {
    Ok(
        match replay(o, steps, at, from, devs, target, &|_, _| false)? {
            Met::Green => Some(true),
            Met::At(i, _) if i == at => Some(false),
            _ => None,
        },
    )
}

/// Decide between two full baselines `a` and `b` (each the baseline so far
/// with one explanation in place) on `f`'s neighbours: the first neighbour
/// on which they part and the target goes as far as that step decides.
pub fn decide(
    f: &Found,
    o: ReplayOptions,
    base: &[&'static Deviation],
    a: &[&'static Deviation],
    b: &[&'static Deviation],
    target: &mut dyn Target,
) -> Result<Verdict, TargetError> {
    let start = f.start(o.profile.retry_timeout);
    let from = f.pin.as_ref().map_or(0, |p| p.from);
    for steps in neighbours(f, o.profile, base) {
        let Some(at) = parting(&steps, from, &start, o.profile, a, b, o.check_state) else {
            continue;
        };
        let with_a = agrees_at(o, &steps, at, from, a, target)?;
        let with_b = agrees_at(o, &steps, at, from, b, target)?;
        match (with_a, with_b) {
            (Some(true), Some(false)) => return Ok(Verdict::First),
            (Some(false), Some(true)) => return Ok(Verdict::Second),
            (Some(false), Some(false)) => return Ok(Verdict::Neither),
            _ => {}
        }
    }
    Ok(Verdict::Tie)
}

/// The whole-fit check: the candidate (`with`, the baseline before it,
/// `base`, with it in place) must answer as the target wherever it claims
/// to on the trace's neighbours. A neighbour refutes it when, replayed on
/// the target through a checker with `with`, it diverges either at the
/// first step where `with` and `base` part (the candidate changed an answer
/// and the target did not follow) or at a step of the class's kind where
/// the model answers with the status it answered in the class (the
/// departure the candidate was kept for recurs unexplained: a fit of one
/// situation only, as `suspend-300-before-422` for a server that skips a
/// missing awaited promise). A divergence anywhere else is another
/// departure of the target and says nothing of this one. `Some(steps)` is
/// the refuting neighbour, up to the step that refutes.
pub fn refuting(
    f: &Found,
    o: ReplayOptions,
    base: &[&'static Deviation],
    with: &[&'static Deviation],
    target: &mut dyn Target,
) -> Result<Option<Vec<Step>>, TargetError> {
    let profile = o.profile;
    let start = f.start(profile.retry_timeout);
    let from = f.pin.as_ref().map_or(0, |p| p.from);
    let kind = &f.shrunk_divergence().class.kind;
    let shrunk = f.shrunk_steps();
    let claimed = branches(&start, &shrunk, profile, base);
    for steps in neighbours(f, profile, base) {
        let part = parting(&steps, from, &start, profile, with, base, o.check_state);
        let end = part.unwrap_or(steps.len() - 1);
        // The class's own departure recurring counts even where it is
        // known residue: that is what the candidate claimed to explain.
        let recurs = |i: usize, d: &Divergence| {
            d.class.kind == *kind && branches(&start, &steps[from..=i], profile, base) == claimed
        };
        let Met::At(i, d) = replay(o, &steps, end, from, with, target, &recurs)? else {
            continue;
        };
        if Some(i) == part || recurs(i, &d) {
            return Ok(Some(steps[..=i].to_vec()));
        }
    }
    Ok(None)
}

/// The Lean branches the model with `devs`, from `start`, takes at the
/// last of `steps`.
fn branches(
    start: &State,
    steps: &[Step],
    profile: &Profile,
    devs: &[&'static Deviation],
) -> Vec<String> {
    let Some((last, before)) = steps.split_last() else {
        return Vec::new();
    };
    let mut m = Deviant::new(
        model::state::ServerConfig {
            retry_timeout: profile.retry_timeout,
        },
        devs.to_vec(),
    );
    m.state = start.clone();
    for s in before {
        m.step(s);
    }
    m.clear_hits();
    m.step(last);
    m.take_hits().iter().map(|b| b.to_string()).collect()
}
