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

use deviate::Deviation;
use gen::{Op, Step};
use model::state::State;

use super::campaign::Found;
use super::pin;
use crate::check::Checker;
use crate::compare::normalize_response;
use crate::exec::{execute, ExecOptions, Expect};
use crate::profile::Profile;
use crate::snapshot::Snap;
use crate::target::{envelope_status, LocalServer, Target, TargetError};

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
        let rest = pin::resume(&checker, &state, now, seed, i, len);
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

/// Whether the target, reset and sent `steps[..=at]` through a checker
/// with `devs`, goes through every step before `at` (`None`: it diverged
/// earlier, so the case says nothing) and then whether it agrees at `at`.
fn agrees_at(
    steps: &[Step],
    at: usize,
    profile: &Profile,
    devs: &[&'static Deviation],
    target: &mut dyn Target,
    check_state: bool,
) -> Result<Option<bool>, TargetError> {
    let mut checker = Checker::with_deviations(profile.clone(), devs.to_vec());
    let ex = execute(
        target,
        &mut checker,
        &steps[..=at],
        Expect::Model,
        ExecOptions { check_state },
    );
    if let Some(e) = ex.fault {
        return Err(e);
    }
    Ok(match ex.divergence {
        None => Some(true),
        Some((i, _)) if i == at => Some(false),
        Some(_) => None,
    })
}

/// Decide between two full baselines `a` and `b` (each the baseline so far
/// with one explanation in place) on `f`'s neighbours: the first neighbour
/// on which they part and the target goes as far as that step decides.
pub fn decide(
    f: &Found,
    profile: &Profile,
    base: &[&'static Deviation],
    a: &[&'static Deviation],
    b: &[&'static Deviation],
    target: &mut dyn Target,
    check_state: bool,
) -> Result<Verdict, TargetError> {
    // A continued finding's neighbours start from a pinned state no target
    // can be reset to: they are not sent.
    if f.pin.is_some() {
        return Ok(Verdict::Tie);
    }
    let start = f.start(profile.retry_timeout);
    for steps in neighbours(f, profile, base) {
        let Some(at) = parting(&steps, 0, &start, profile, a, b, check_state) else {
            continue;
        };
        let with_a = agrees_at(&steps, at, profile, a, target, check_state)?;
        let with_b = agrees_at(&steps, at, profile, b, target, check_state)?;
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
    profile: &Profile,
    base: &[&'static Deviation],
    with: &[&'static Deviation],
    target: &mut dyn Target,
    check_state: bool,
) -> Result<Option<Vec<Step>>, TargetError> {
    if f.pin.is_some() {
        return Ok(None);
    }
    let start = f.start(profile.retry_timeout);
    let class = f.shrunk_divergence();
    let status = class
        .response
        .as_ref()
        .and_then(|(m, _)| envelope_status(m));
    for steps in neighbours(f, profile, base) {
        let part = parting(&steps, 0, &start, profile, with, base, check_state);
        let end = part.unwrap_or(steps.len() - 1);
        let mut checker = Checker::with_deviations(profile.clone(), with.to_vec());
        let ex = execute(
            target,
            &mut checker,
            &steps[..=end],
            Expect::Model,
            ExecOptions { check_state },
        );
        if let Some(e) = ex.fault {
            return Err(e);
        }
        let Some((i, d)) = ex.divergence else {
            continue;
        };
        let recurs = d.class.kind == class.class.kind
            && d.response.as_ref().and_then(|(m, _)| envelope_status(m)) == status;
        if Some(i) == part || recurs {
            return Ok(Some(steps[..=i].to_vec()));
        }
    }
    Ok(None)
}
