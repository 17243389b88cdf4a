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
use crate::exec::{execute_stream, ExecOptions, Execution, Expect};
use crate::profile::Profile;
use crate::repro;
use crate::shrink::{shrink, ShrinkOptions};
use crate::target::{envelope_status, Target, TargetError};
use crate::trace::{Header, Options};

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
    /// The shrunk execution (its lines carry the target's answers).
    pub best: Execution,
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

    /// The shrunk trace's steps.
    pub fn shrunk_steps(&self) -> Vec<Step> {
        self.best.steps()
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
        let steps = checker.stream(seed, spec.steps, 0);
        let ex = execute_stream(target, &mut checker, steps, Expect::Model, opts);
        c.cases += 1;
        c.steps += ex.lines.len();
        tally(&mut c, &ex);
        if let Some(e) = ex.fault {
            return Err(e);
        }
        let Some((at, first)) = ex.divergence.clone() else {
            continue;
        };
        let header = Header::new(
            Some(spec.seed),
            Some(case),
            options(spec, profile),
            Some(target.describe()),
        );
        let path = spec.dir.join(format!("case-{case}.ndjson"));
        save(&path, &header, &ex, out);
        let cut = ex.lines[..=at].iter().map(|l| l.step.clone()).collect();
        let sopts = ShrinkOptions {
            check_state: spec.check_state,
            time: spec.shrink_time,
        };
        let r = shrink(target, &mut checker, ex, &sopts, &mut std::io::sink());
        if let Some(e) = r.fault {
            return Err(e);
        }
        let shrunk = repro::save_shrunk(&path, &header, &r.best.lines, None).unwrap_or_else(|w| {
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
        c.found.push(Found {
            case,
            trace: path,
            shrunk,
            cut,
            first,
            best: r.best,
        });
    }
    Ok(c)
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

fn save(path: &Path, header: &Header, ex: &Execution, out: &mut dyn Write) {
    if let Err(w) = repro::save(path, header, &ex.lines) {
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
