//! One campaign of the triage: generated cases against the target under a
//! profile and a set of deviations, each diverging case saved and shrunk.
//! What it keeps is typed (the [`Divergence`] of the first and of the
//! shrunk trace, the target's answers), so the rollup never reads a class
//! back out of a printed string.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use deviate::Deviation;
use gen::Step;

use crate::check::{step_kind, Checker, Divergence};
use crate::exec::{continue_stream, execute_stream, ExecOptions, Execution, Expect};
use crate::profile::Profile;
use crate::repro;
use crate::shrink::{shrink, ShrinkOptions};
use crate::snapshot::Snap;
use crate::target::{envelope_status, Target, TargetError};
use crate::trace::{Header, Line, Options};
use model::state::{ServerConfig, State};

use super::pin::{self, state_of, Pin, MAX_PINS};

/// What one campaign is asked.
#[derive(Clone, Debug)]
pub struct CampaignSpec {
    /// Run seed.
    pub seed: u64,
    /// Cases.
    pub cases: u64,
    /// Steps per case.
    pub steps: usize,
    /// Compare `debug.snap` after every step.
    pub check_state: bool,
    /// Time budget of each shrink.
    pub shrink_time: Duration,
    /// Where the traces go.
    pub dir: PathBuf,
    /// The kinds the cases are steered toward (none: plain cases): drawn
    /// more often, the clock sharpened onto deadlines ([`steered`]).
    pub favour: gen::Kinds,
}

/// A case that diverged.
#[derive(Clone, Debug)]
pub struct Found {
    /// The case index.
    pub case: u64,
    /// The saved trace of the case.
    pub trace: PathBuf,
    /// Its shrunk trace.
    pub shrunk: PathBuf,
    /// The case's steps up to and including the diverging one.
    pub cut: Vec<Step>,
    /// The divergence of the case.
    pub first: Divergence,
    /// The shrunk execution (its lines carry the target's answers). A
    /// continued finding is not shrunk (its start is a pinned state no
    /// target can be reset to): this is its part of the case, from the pin.
    pub best: Execution,
    /// Where a finding past an earlier divergence of its case begins
    /// ([`super::pin`]); `None` for a case's first divergence.
    pub pin: Option<Pin>,
}

impl Found {
    /// The shrunk trace's divergence (the original's when nothing smaller
    /// diverged the same way).
    pub fn shrunk_divergence(&self) -> &Divergence {
        self.best
            .divergence
            .as_ref()
            .map_or(&self.first, |(_, d)| d)
    }

    /// The shrunk trace's steps (a continued finding's: its part of the
    /// case, to be played from [`Found::start`]).
    pub fn shrunk_steps(&self) -> Vec<Step> {
        self.best.steps()
    }

    /// The state [`Found::shrunk_steps`] start from: empty, or the pinned
    /// one of a continued finding.
    pub fn start(&self, retry_timeout: u64) -> State {
        self.pin.as_ref().map_or_else(
            || State::new(ServerConfig { retry_timeout }),
            |p| p.state.clone(),
        )
    }

    /// The steps a reset target replays to show it: the shrunk trace, or,
    /// for a continued finding, the case's own steps up to it (through the
    /// earlier divergences).
    pub fn replays(&self) -> Vec<Vec<Step>> {
        match self.pin {
            None => vec![self.shrunk_steps(), self.cut.clone()],
            Some(_) => vec![self.cut.clone()],
        }
    }
}

/// What a campaign saw.
#[derive(Clone, Debug, Default)]
pub struct Campaign {
    /// The cases that diverged, in case order.
    pub found: Vec<Found>,
    /// Cases run.
    pub cases: u64,
    /// Steps sent (shrinking aside).
    pub steps: usize,
    /// Every status the target answered, per request kind, with counts.
    pub statuses: BTreeMap<String, BTreeMap<u16, u64>>,
    /// Every leaf path of the target's successful answers' `data`, per
    /// kind (a field it sometimes writes is not one it never writes).
    pub paths: BTreeMap<String, BTreeSet<String>>,
    /// Cases that ended at a divergence they could not go on past (the
    /// snapshot could not pin), with why.
    pub unpinned: Vec<(u64, String)>,
    /// Cases that met more divergences than a case goes on past
    /// ([`MAX_PINS`]).
    pub capped: u64,
}

/// Run the campaign. A target fault ends it (the fault wins, as in `run`).
pub fn campaign(
    spec: &CampaignSpec,
    profile: &Profile,
    deviations: &[&'static Deviation],
    target: &mut dyn Target,
    out: &mut dyn Write,
) -> Result<Campaign, TargetError> {
    let mut checker = Checker::with_deviations(profile.clone(), deviations.to_vec());
    let opts = ExecOptions {
        check_state: spec.check_state,
    };
    let mut c = Campaign::default();
    for case in 0..spec.cases {
        let seed = gen::case_seed(spec.seed, case);
        let steps = match spec.favour.is_empty() {
            true => checker.stream(seed, spec.steps, 0),
            false => steered(&checker, seed, spec.steps, spec.favour),
        };
        let mut ex = execute_stream(target, &mut checker, steps, Expect::Model, opts);
        // The case's lines so far, and where the current part began.
        let mut lines: Vec<Line> = Vec::new();
        let mut pin: Option<Pin> = None;
        loop {
            c.steps += ex.lines.len();
            tally(&mut c, &ex);
            if let Some(e) = ex.fault {
                return Err(e);
            }
            let from = lines.len();
            lines.extend(ex.lines.iter().cloned());
            let Some((at, first)) = ex.divergence.clone() else {
                break;
            };
            let at = from + at;
            let depth = pin.as_ref().map_or(0, |p| p.depth + 1);
            let header = Header::new(
                Some(spec.seed),
                Some(case),
                options(spec, profile),
                Some(target.describe()),
            );
            let path = match depth {
                0 => spec.dir.join(format!("case-{case}.ndjson")),
                n => spec.dir.join(format!("case-{case}-past-{n}.ndjson")),
            };
            save(&path, &header, &lines, out);
            let cut: Vec<Step> = lines.iter().map(|l| l.step.clone()).collect();
            // The target's state after the diverging step, to go on from.
            let after = match spec.check_state && depth < MAX_PINS {
                true => Some(target.snap()?),
                false => None,
            };
            let next = match &after {
                Some(snap) => state_of(snap, &checker),
                None if spec.check_state => {
                    c.capped += 1;
                    Err(String::new())
                }
                None => Err("state is not compared".to_string()),
            };
            let shrinking = pin.is_none();
            let found = match pin.take() {
                None => {
                    let sopts = ShrinkOptions {
                        check_state: spec.check_state,
                        time: spec.shrink_time,
                        candidates: None,
                        headline: false,
                    };
                    let r = shrink(target, &mut checker, ex, &sopts, &mut std::io::sink());
                    if let Some(e) = r.fault {
                        return Err(e);
                    }
                    let shrunk = repro::save_shrunk(&path, &header, &r.best.lines, None)
                        .unwrap_or_else(|w| {
                            let _ = writeln!(out, "  {w}");
                            path.clone()
                        });
                    let _ = writeln!(
                        out,
                        "  case {case}: step {} {} → shrunk to {} steps",
                        at + 1,
                        first.class,
                        r.best.lines.len()
                    );
                    Found {
                        case,
                        trace: path.clone(),
                        shrunk,
                        cut: cut.clone(),
                        first,
                        best: r.best,
                        pin: None,
                    }
                }
                Some(p) => {
                    let _ = writeln!(
                        out,
                        "  case {case}: step {} {} (past {} earlier divergences)",
                        at + 1,
                        first.class,
                        p.depth + 1
                    );
                    let mut part = ex;
                    part.divergence = Some((at - p.from, first.clone()));
                    Found {
                        case,
                        trace: path.clone(),
                        shrunk: path.clone(),
                        cut: cut.clone(),
                        first,
                        best: part,
                        pin: Some(p),
                    }
                }
            };
            c.found.push(found);
            let (state, Some(snap)) = (
                match next {
                    Ok(s) => s,
                    Err(why) => {
                        if !why.is_empty() {
                            c.unpinned.push((case, why));
                        }
                        break;
                    }
                },
                after,
            ) else {
                break;
            };
            let left = spec.steps - lines.len();
            if left == 0 {
                break;
            }
            // The shrink reset the target: bring it back to the case's
            // state, its steps sent again as they were.
            if shrinking && !restore(target, &cut, &snap)? {
                c.unpinned.push((
                    case,
                    "the target did not replay the case to the same state".into(),
                ));
                break;
            }
            let now = lines.last().map_or(0, |l| l.step.now);
            pin::pin(&mut checker, state.clone());
            let rest = pin::resume(&checker, &state, now, seed, depth + 1, left, spec.favour);
            pin = Some(Pin {
                from: lines.len(),
                state,
                depth,
            });
            ex = continue_stream(target, &mut checker, rest, Expect::Model, opts, Some(snap));
        }
        c.cases += 1;
    }
    Ok(c)
}

/// A case steered toward `favour`: the checker's model and the profile's
/// kinds, as [`Checker::stream`], but the favoured kinds drawn
/// [`gen::FAVOUR`] times as often and the clock sharpened (it
/// lands on deadlines' instants more often, where a tick fires several
/// timeouts at once). A residue's departures sit in its kinds, and what
/// they hide or resemble is met by more cases of them.
fn steered(
    checker: &Checker,
    seed: u64,
    steps: usize,
    favour: gen::Kinds,
) -> std::iter::Take<gen::Generator> {
    let cfg = super::pin::gen_config(checker, steps, favour);
    gen::Generator::with_stepper(seed, &cfg, checker.model.stepper())
        .sharpened()
        .take(steps)
}

/// Reset the target and send `steps` again: whether it then shows the
/// state `was` (a deterministic target does).
fn restore(target: &mut dyn Target, steps: &[Step], was: &Snap) -> Result<bool, TargetError> {
    target.start()?;
    for s in steps {
        target.send(s)?;
    }
    Ok(target.snap()?.normalized() == was.normalized())
}

fn options(spec: &CampaignSpec, profile: &Profile) -> Options {
    Options {
        steps: Some(spec.steps),
        retry_timeout: Some(profile.retry_timeout),
        check_state: Some(spec.check_state),
        profile: Some(profile.name.clone()),
        ..Options::default()
    }
}

fn save(path: &Path, header: &Header, lines: &[Line], out: &mut dyn Write) {
    if let Err(w) = repro::save(path, header, lines) {
        let _ = writeln!(out, "  {w}");
    }
}

/// Count the statuses the target answered and the fields it wrote, per kind.
fn tally(c: &mut Campaign, ex: &Execution) {
    for l in &ex.lines {
        let Some(res) = &l.res else { continue };
        let Some(s) = envelope_status(res) else {
            continue;
        };
        let kind = step_kind(&l.step);
        *c.statuses
            .entry(kind.clone())
            .or_default()
            .entry(s)
            .or_default() += 1;
        if s < 400 {
            let data = crate::compare::canon(&res["data"]);
            leaf_paths(&data, "", c.paths.entry(kind).or_default());
        }
    }
}

/// The dotted paths (array indices dropped) of every leaf and every
/// object of `v`, as [`crate::compare::differing_paths`] names them.
fn leaf_paths(v: &serde_json::Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let sub = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                out.insert(sub.clone());
                leaf_paths(v, &sub, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| leaf_paths(v, at, out)),
        _ => {}
    }
}
