//! The baseline inferred from the catalogue: for each behavioural class,
//! the deviations (one, or two or three together, in every order: the
//! first listed is outermost) that explain it.
//!
//! Screening is offline and cheap: the catalogue's model with the
//! candidate plays the target on the class's shrunk trace, in this
//! process. A candidate passes the screen when that model answers every
//! step as the target did (normalised, as the checker compares) and,
//! against the baseline so far, diverges at the same step in the same
//! class (the same facts: the state's included, which the saved trace does
//! not record). Only what passes is confirmed for real: the target is reset
//! and replayed through the checker with the candidate, on the shrunk
//! trace and on the case's own steps up to its divergence, and must pass
//! both (green), where without it the shrunk trace still diverges, and
//! must pass the whole-fit check on the trace's neighbours; look-alikes
//! green on the class are told apart there ([`super::distinguish`]).

use std::collections::BTreeSet;
use std::io::Write;

use deviate::Deviation;
use gen::{Op, Step};
use model::state::{ServerConfig, State};

use super::campaign::Found;
use super::distinguish::{self, Verdict};
use super::pin::{self, Past};
use crate::check::{Checker, DiffClass};
use crate::compare::normalize_response;
use crate::exec::ExecOptions;
use crate::profile::Profile;
use crate::snapshot::Snap;
use crate::target::{LocalServer, Target, TargetError};

/// The most single candidates combined into pairs and triples.
const MAX_RELEVANT: usize = 8;
/// The cases of a class confirmed by real reruns.
const CONFIRM_CASES: usize = 3;

/// What the inference made of one class.
#[derive(Clone, Debug)]
pub struct Proposal {
    /// The class (the shrunk traces', [`super::rollup::class_key`]).
    pub class: String,
    /// Its cases.
    pub cases: Vec<u64>,
    /// The deviations proposed, outermost first (empty: residue).
    pub deviations: Vec<&'static Deviation>,
    /// Candidates that passed the offline screen.
    pub screened: Vec<Vec<&'static Deviation>>,
    /// Whether the reruns confirmed it (green with, diverging without).
    pub kept: bool,
    /// Ties: other candidates of the same size the reruns confirmed too,
    /// which no neighbour of the trace tells apart from the kept one
    /// ([`distinguish::decide`]; the first in catalogue order is kept, the
    /// table names both for review).
    pub alternatives: Vec<Vec<&'static Deviation>>,
    /// Candidates green on the class's cases that a neighbour of its trace
    /// told apart from the kept one, the target answering as the kept one.
    pub told_apart: Vec<Vec<&'static Deviation>>,
    /// Candidates green on the class's cases but refused by the whole-fit
    /// check: on a neighbour of the trace they changed an answer and the
    /// target did not follow ([`distinguish::refuting`]).
    pub refused: Vec<Vec<&'static Deviation>>,
    /// Already explained by a deviation kept for another class.
    pub covered: bool,
}

/// How the inference is run.
#[derive(Clone, Copy, Debug)]
pub struct ExplainOptions<'a> {
    /// At most this many deviations together (1–3).
    pub max_together: usize,
    /// Compare state.
    pub check_state: bool,
    /// The deviations to infer from (the catalogue, or part of it).
    pub catalogue: &'a [&'static Deviation],
    /// Known residue classes ([`super::rollup::class_key`]): a confirming replay goes on past
    /// these and only these ([`pin::replay`]), unless `past` is given.
    pub known: &'a BTreeSet<String>,
    /// When given, a confirming replay goes on past these divergences
    /// (step, class) only, whatever `known` holds: those the replay of a
    /// witness with the baseline alone went past ([`super::sweep`]).
    pub past: Option<&'a BTreeSet<(usize, String)>>,
    /// Candidates an earlier round refused for this class (a partial
    /// fit): a refutation stands, whatever case a later round shrinks to.
    pub refused: &'a [Vec<&'static Deviation>],
}

/// Explain `class` (its cases, the first one its representative) under
/// `profile` and the baseline so far (`base`), which grows with every kept
/// proposal.
pub fn explain(
    class: &str,
    cases: &[&Found],
    profile: &Profile,
    base: &mut Vec<&'static Deviation>,
    target: &mut dyn Target,
    opts: ExplainOptions,
    out: &mut dyn Write,
) -> Result<Proposal, TargetError> {
    let mut p = Proposal {
        class: class.to_string(),
        cases: cases.iter().map(|f| f.case).collect(),
        deviations: Vec::new(),
        screened: Vec::new(),
        kept: false,
        alternatives: Vec::new(),
        told_apart: Vec::new(),
        // A refutation stands: a later round's cases (another shrunk trace,
        // a steered campaign) may never get as far as a neighbour again.
        refused: opts.refused.to_vec(),
        covered: false,
    };
    let Some(rep) = cases.first() else {
        return Ok(p);
    };
    // Already explained by what was kept for another class?
    if confirm(rep, profile, base, target, opts)? {
        p.covered = true;
        p.kept = true;
        return Ok(p);
    }
    let base_before = base.clone();
    for cand in candidates(rep, profile, &base_before, opts) {
        if p.kept && cand.devs.len() > p.deviations.len() {
            break;
        }
        let Candidate {
            devs: cand,
            full: with,
        } = cand;
        p.screened.push(cand.clone());
        let mut green = true;
        for f in cases.iter().take(CONFIRM_CASES) {
            if !confirm(f, profile, &with, target, opts)? {
                green = false;
                break;
            }
        }
        let names: Vec<&str> = cand.iter().map(|d| d.name).collect();
        let names = names.join(" + ");
        if !green {
            let _ = writeln!(out, "  screened but not confirmed: {names} for {class}");
            continue;
        }
        if p.kept && cand == p.deviations {
            // The same deviations in the other placement.
            continue;
        }
        if p.alternatives.contains(&cand) || p.told_apart.contains(&cand) {
            continue;
        }
        let ro = distinguish::ReplayOptions {
            profile,
            check_state: opts.check_state,
            known: opts.known,
        };
        if opts.refused.contains(&cand) {
            if !p.refused.contains(&cand) {
                p.refused.push(cand);
            }
            continue;
        }
        if let Some(n) = distinguish::refuting(rep, ro, &base_before, &with, target)? {
            let _ = writeln!(
                out,
                "  refused (a partial fit: a neighbour of its trace, {} steps, answers otherwise): {names} for {class}",
                n.len()
            );
            if !p.refused.contains(&cand) {
                p.refused.push(cand);
            }
            continue;
        }
        if p.kept {
            match distinguish::decide(rep, ro, &base_before, base, &with, target)? {
                Verdict::Tie => {
                    let _ = writeln!(out, "  tie (no case tells them apart): {names} for {class}");
                    p.alternatives.push(cand);
                }
                Verdict::Second => {
                    let _ = writeln!(
                        out,
                        "  told apart, the target goes with {names} for {class}"
                    );
                    p.told_apart
                        .push(std::mem::replace(&mut p.deviations, cand));
                    *base = with;
                }
                Verdict::First | Verdict::Neither => {
                    let _ = writeln!(out, "  told apart, not {names} for {class}");
                    p.told_apart.push(cand);
                }
            }
        } else if diverges(rep, profile, &base_before, target, opts)? {
            let _ = writeln!(out, "  kept: {names} explains {class}");
            p.deviations = cand;
            p.kept = true;
            *base = with;
        } else {
            let _ = writeln!(out, "  screened but not confirmed: {names} for {class}");
        }
    }
    Ok(p)
}

/// A candidate: the deviations it adds, and the whole baseline with them
/// in place (outermost first: before the baseline so far, or after it).
struct Candidate {
    devs: Vec<&'static Deviation>,
    full: Vec<&'static Deviation>,
}

/// `cand` outermost, then innermost, around `base` (once when `base` is
/// empty): a hook that must see the request first goes first.
fn placements(base: &[&'static Deviation], cand: &[&'static Deviation]) -> Vec<Candidate> {
    let mut outer = cand.to_vec();
    outer.extend(base.iter().copied());
    let mut inner = base.to_vec();
    inner.extend(cand.iter().copied());
    let mut out = vec![Candidate {
        devs: cand.to_vec(),
        full: inner,
    }];
    if !base.is_empty() {
        out.push(Candidate {
            devs: cand.to_vec(),
            full: outer,
        });
    }
    out
}

/// The candidates that pass the offline screen, singles first, then pairs,
/// then triples of the deviations relevant to the class, each in both
/// placements around the baseline so far.
fn candidates(
    rep: &Found,
    profile: &Profile,
    base: &[&'static Deviation],
    opts: ExplainOptions,
) -> Vec<Candidate> {
    let Some((at, d)) = rep.best.divergence.as_ref() else {
        return Vec::new();
    };
    let steps = rep.shrunk_steps();
    let start = rep.start(profile.retry_timeout);
    let fits = |full: &[&'static Deviation]| match shown(&steps, &start, profile, base, full, opts)
    {
        Some((i, c)) if i == *at && c.kind == d.class.kind => {
            if c.facts() == d.class.facts() && answers_match(rep, &start, profile, full) {
                Some(true)
            } else {
                Some(!c.facts().is_disjoint(&d.class.facts()))
            }
        }
        _ => None,
    };
    let fresh: Vec<&'static Deviation> = opts
        .catalogue
        .iter()
        .copied()
        .filter(|d| !base.contains(d))
        .collect();
    let mut passed = Vec::new();
    let mut relevant = Vec::new();
    for &dev in &fresh {
        for c in placements(base, &[dev]) {
            match fits(&c.full) {
                Some(true) => passed.push(c),
                Some(false) if !relevant.contains(&dev) => relevant.push(dev),
                _ => {}
            }
        }
    }
    if !passed.is_empty() || opts.max_together < 2 {
        return passed;
    }
    relevant.truncate(MAX_RELEVANT);
    let mut combos: Vec<Vec<&'static Deviation>> = Vec::new();
    for (i, &a) in relevant.iter().enumerate() {
        for (j, &b) in relevant.iter().enumerate() {
            if i != j {
                combos.push(vec![a, b]);
            }
        }
    }
    if opts.max_together >= 3 {
        let pairs = combos.clone();
        for pair in &pairs {
            for &c in &relevant {
                if !pair.contains(&c) {
                    let mut t = pair.clone();
                    t.push(c);
                    combos.push(t);
                }
            }
        }
    }
    for cand in combos {
        if passed.iter().any(|p: &Candidate| p.devs.len() < cand.len()) {
            // A smaller combination already explains it.
            break;
        }
        for c in placements(base, &cand) {
            if fits(&c.full) == Some(true) {
                passed.push(c);
            }
        }
    }
    passed
}

/// Where and how the catalogue's model with the deviations `full` departs
/// from the model with `base` alone on `steps`, both from `start`, in this
/// process.
fn shown(
    steps: &[Step],
    start: &State,
    profile: &Profile,
    base: &[&'static Deviation],
    full: &[&'static Deviation],
    opts: ExplainOptions,
) -> Option<(usize, DiffClass)> {
    let mut s = server(profile, full.to_vec(), start);
    let mut checker = Checker::with_deviations(profile.clone(), base.to_vec());
    pin::pin(&mut checker, start.clone());
    for (i, step) in steps.iter().enumerate() {
        let res = match &step.op {
            Op::Request(r) => Some(s.handle(r, step.now, "triage")),
            Op::Tick => {
                s.tick(step.now);
                None
            }
        };
        let snap = opts.check_state.then(|| Snap::from_view(s.view()));
        if let Some(d) = checker.check(step, res.as_ref(), snap.as_ref()).divergence {
            return Some((i, d.class));
        }
    }
    None
}

fn server(profile: &Profile, deviations: Vec<&'static Deviation>, start: &State) -> LocalServer {
    LocalServer::new(
        ServerConfig {
            retry_timeout: profile.retry_timeout,
        },
        deviations,
        false,
    )
    .from_state(start.clone())
}

/// Whether the catalogue's model with the deviations `full` answers every
/// step of the shrunk trace as the target did.
fn answers_match(
    rep: &Found,
    start: &State,
    profile: &Profile,
    full: &[&'static Deviation],
) -> bool {
    let mut s = server(profile, full.to_vec(), start);
    rep.best.lines.iter().all(|l| match &l.step.op {
        Op::Request(r) => {
            let env = s.handle(r, l.step.now, "triage");
            l.res
                .as_ref()
                .is_none_or(|res| normalize_response(res) == normalize_response(&env))
        }
        Op::Tick => {
            s.tick(l.step.now);
            true
        }
    })
}

/// The target, reset and replayed through the checker with `devs`, passes
/// the shrunk trace and the case's steps up to its divergence (a continued
/// finding: the case's steps), apart from known residue.
pub fn confirm(
    f: &Found,
    profile: &Profile,
    devs: &[&'static Deviation],
    target: &mut dyn Target,
    opts: ExplainOptions,
) -> Result<bool, TargetError> {
    for steps in f.replays() {
        if replay_diverges(&steps, profile, devs, target, opts)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The shrunk trace (a continued finding: the case's steps) diverges
/// under `devs`, apart from known residue (the run without the candidate
/// is not green).
fn diverges(
    f: &Found,
    profile: &Profile,
    devs: &[&'static Deviation],
    target: &mut dyn Target,
    opts: ExplainOptions,
) -> Result<bool, TargetError> {
    replay_diverges(&f.replays()[0], profile, devs, target, opts)
}

fn replay_diverges(
    steps: &[Step],
    profile: &Profile,
    devs: &[&'static Deviation],
    target: &mut dyn Target,
    opts: ExplainOptions,
) -> Result<bool, TargetError> {
    let eopts = ExecOptions {
        check_state: opts.check_state,
    };
    let past = opts.past.map_or(Past::Known(opts.known), Past::Exactly);
    pin::replay_diverges(steps, profile, devs, target, eopts, past)
}
