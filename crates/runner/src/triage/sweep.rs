//! The catalogue's witnesses, replayed against the target once the rounds
//! are done (`conform triage`, unless `--no-witnesses`): a departure the
//! random cases never met (a shape the generator seldom builds, such as a
//! cycle of awaits timing out in one tick) is still met on the witness of
//! the catalogue entry that describes it, which is that departure's
//! shortest trace.
//!
//! Every witness of an entry the baseline lacks is replayed with the
//! baseline, going on past known residue. Where it diverges, the
//! divergence is a class of its own and is explained as a round's class is
//! ([`explain`]: the catalogue screened offline, the candidates confirmed
//! by replays, refused where a neighbour of the trace refutes them, told
//! apart or named as a tie: the witness's own entry is tried first, so it
//! is the one kept in a tie), with two rules of the sweep's own:
//!
//! - a confirming replay goes on past only the divergences (step and
//!   class) the replay without the candidate went past
//!   ([`Past::Exactly`]): a candidate that turns the witness's departure
//!   into one that looks like known residue does not pass;
//! - a confirmed candidate is kept only when a campaign with it shows no
//!   class that the same campaign without it does not show (the same
//!   spec: seed, cases, steps, unsteered, under the proposed profile): it
//!   hides nothing it does not explain.
//!
//! A candidate the rounds refused is never kept here, and the witness of an
//! entry the rounds refused alone is not replayed. A divergence nothing
//! explains is residue ([`Met::residue_class`]) and later replays go on
//! past it; a witness's replay goes on until the witness passes. A witness
//! naming a kind the profile leaves out is not replayed (as `conform
//! check` skips such a golden file). A target fault stops the sweep: what
//! it kept before stands, and the fault is reported ([`Sweep::fault`]).

use std::collections::BTreeSet;
use std::io::Write;

use deviate::Deviation;
use gen::{Op, Step};

use super::campaign::{campaign, Found};
use super::explain::{explain, ExplainOptions, Proposal};
use super::pin::{self, Past, Replayed};
use super::rollup::{self, class_key};
use super::{names, TriageConfig};
use crate::exec::ExecOptions;
use crate::profile::Profile;
use crate::repro;
use crate::target::{Target, TargetError};
use crate::trace::{Header, Options};

/// What the sweep did.
#[derive(Clone, Debug, Default)]
pub struct Sweep {
    /// Witnesses replayed.
    pub replayed: usize,
    /// Entries whose witness was not replayed, with why (it names a kind
    /// the profile leaves out; the rounds refused the entry).
    pub skipped: Vec<(&'static str, String)>,
    /// Witnesses that ended at known residue they could not go on past
    /// (the snapshot does not pin): they say nothing of their entry.
    pub stuck: Vec<&'static str>,
    /// Every divergence a witness met, in order, and what was made of it.
    pub met: Vec<Met>,
    /// The target fault that stopped the sweep.
    pub fault: Option<TargetError>,
}

/// A divergence of a witness with the baseline of the moment.
#[derive(Clone, Debug)]
pub struct Met {
    /// The entry whose witness it is.
    pub witness: &'static str,
    /// Its class ([`class_key`]).
    pub class: String,
    /// The witness up to it, as a finding (its trace under `witnesses/`).
    pub found: Found,
    /// What the inference made of it (class `witness of NAME`); not kept:
    /// residue.
    pub proposal: Proposal,
    /// The candidates the campaign refused, each with the classes the
    /// campaign with it showed and the campaign without it did not.
    pub shows: Vec<(Vec<&'static Deviation>, Vec<String>)>,
}

impl Met {
    /// Whether nothing explains it: residue.
    pub fn is_residue(&self) -> bool {
        !self.proposal.kept
    }

    /// Whether a deviation was kept for it.
    pub fn is_kept(&self) -> bool {
        self.proposal.kept && !self.proposal.covered
    }

    /// Its residue class: `witness of NAME: CLASS`.
    pub fn residue_class(&self) -> String {
        format!("witness of {}: {}", self.witness, self.class)
    }
}

impl Sweep {
    /// The departures met on witnesses that nothing explains.
    pub fn residue(&self) -> impl Iterator<Item = &Met> {
        self.met.iter().filter(|m| m.is_residue())
    }

    /// The divergences a deviation was kept for.
    pub fn kept(&self) -> impl Iterator<Item = &Met> {
        self.met.iter().filter(|m| m.is_kept())
    }

    /// A sweep that could not start: the target did not connect.
    pub fn faulted(e: TargetError, out: &mut dyn Write) -> Sweep {
        let _ = writeln!(out, "witnesses: stopped by a target fault: {e}");
        Sweep {
            fault: Some(e),
            ..Sweep::default()
        }
    }
}

/// Replay every catalogue entry's witness the baseline lacks and explain
/// each divergence; what is kept is added to `baseline`. `known` is the
/// rounds' residue (classes a replay goes on past), `refused` every
/// candidate the rounds refused. A target fault stops it, in
/// [`Sweep::fault`].
pub fn sweep(
    cfg: &TriageConfig,
    profile: &Profile,
    baseline: &mut Vec<&'static Deviation>,
    known: &BTreeSet<String>,
    refused: &[Vec<&'static Deviation>],
    target: &mut dyn Target,
    out: &mut dyn Write,
) -> Sweep {
    let mut s = Sweep::default();
    let mut run = Run {
        cfg,
        profile,
        known: known.clone(),
        refused: refused.to_vec(),
        without: None,
    };
    if let Err(e) = run.all(baseline, target, out, &mut s) {
        let _ = writeln!(
            out,
            "witnesses: stopped by a target fault: {e} (what was kept before it stands)"
        );
        s.fault = Some(e);
    }
    let _ = writeln!(
        out,
        "witnesses: {} replayed, {} kept, {} left as residue, {} not replayed; baseline [{}]",
        s.replayed,
        s.kept().count(),
        s.residue().count(),
        s.skipped.len(),
        names(baseline)
    );
    s
}

/// The sweep's state across witnesses.
struct Run<'a> {
    cfg: &'a TriageConfig,
    profile: &'a Profile,
    /// Residue classes a replay goes on past: the rounds', then the
    /// sweep's own.
    known: BTreeSet<String>,
    /// Candidates refused, by the rounds and by the sweep so far.
    refused: Vec<Vec<&'static Deviation>>,
    /// The campaign without a candidate: its baseline and its classes
    /// (run again only when the baseline is another).
    without: Option<(Vec<&'static Deviation>, BTreeSet<String>)>,
}

impl Run<'_> {
    fn all(
        &mut self,
        baseline: &mut Vec<&'static Deviation>,
        target: &mut dyn Target,
        out: &mut dyn Write,
        s: &mut Sweep,
    ) -> Result<(), TargetError> {
        for (n, &d) in self.cfg.catalogue.iter().enumerate() {
            if baseline.contains(&d) {
                continue;
            }
            if self.refused.contains(&vec![d]) {
                let why = "refused before (by the rounds or on an earlier witness)";
                s.skipped.push((d.name, why.into()));
                continue;
            }
            let w = (d.witness)();
            let left = left_out(&w, self.profile);
            if !left.is_empty() {
                let why = format!("kinds the profile leaves out: {}", left.join(", "));
                s.skipped.push((d.name, why));
                continue;
            }
            s.replayed += 1;
            self.witness(n, d, &w, baseline, target, out, s)?;
        }
        Ok(())
    }

    /// Replay the witness `w` of `d` (the `n`th entry) until it passes:
    /// each divergence explained, or left as residue and gone past.
    #[allow(clippy::too_many_arguments)]
    fn witness(
        &mut self,
        n: usize,
        d: &'static Deviation,
        w: &[Step],
        baseline: &mut Vec<&'static Deviation>,
        target: &mut dyn Target,
        out: &mut dyn Write,
        s: &mut Sweep,
    ) -> Result<(), TargetError> {
        let opts = ExecOptions {
            check_state: self.cfg.check_state,
        };
        // Its own entry first: in a tie (no neighbour tells it from another
        // entry) the one whose witness this is is kept.
        let catalogue: Vec<&'static Deviation> = std::iter::once(d)
            .chain(self.cfg.catalogue.iter().copied().filter(|&e| e != d))
            .collect();
        // Each pass ends at a later step (the divergence explained, or
        // residue gone past), so a pass per step is enough.
        for k in 0..w.len() {
            let r = pin::replay(
                w,
                self.profile,
                baseline,
                target,
                opts,
                Past::Known(&self.known),
            )?;
            if !r.diverges() {
                return Ok(());
            }
            if r.stuck {
                if k == 0 {
                    s.stuck.push(d.name);
                }
                return Ok(());
            }
            let found = self.found(n, d, k, &r, target, out);
            let class = class_key(&found.first);
            let label = format!("witness of {}", d.name);
            let mut shows = Vec::new();
            // Explained again while the campaign refuses what is kept: a
            // tie's alternative may be the one that fits.
            let p = loop {
                let eopts = ExplainOptions {
                    past: Some(&r.past),
                    catalogue: &catalogue,
                    ..self.cfg.explain(&self.known, &self.refused)
                };
                let mut with = baseline.clone();
                let mut p = explain(
                    &label,
                    &[&found],
                    self.profile,
                    &mut with,
                    target,
                    eopts,
                    out,
                )?;
                // Its own refusals, and those of before that concern it.
                p.refused
                    .retain(|c| !self.refused.contains(c) || p.screened.contains(c));
                for c in &p.refused {
                    if !self.refused.contains(c) {
                        self.refused.push(c.clone());
                    }
                }
                if !p.kept || p.covered {
                    break p;
                }
                let new = self.shows(baseline, &with, &p.deviations, target, out)?;
                if new.is_empty() {
                    let _ = writeln!(
                        out,
                        "  {label}: kept {} (a campaign with it shows no class the campaign without it does not)",
                        names(&p.deviations)
                    );
                    *baseline = with;
                    break p;
                }
                let _ = writeln!(
                    out,
                    "  {label}: {} passes it, but a campaign with it shows {}, which the campaign without it does not: refused",
                    names(&p.deviations),
                    new.join(", ")
                );
                self.refused.push(p.deviations.clone());
                shows.push((p.deviations, new));
            };
            let m = Met {
                witness: d.name,
                class,
                found,
                proposal: p,
                shows,
            };
            if m.is_residue() {
                let _ = writeln!(
                    out,
                    "  {label}: {} at step {}, nothing explains it: residue",
                    m.class,
                    m.found.cut.len()
                );
                self.known.insert(m.class.clone());
            }
            let covered = m.proposal.covered;
            s.met.push(m);
            if covered {
                // It passed the baseline after all (a replay that does
                // not repeat): nothing more to learn from it.
                return Ok(());
            }
        }
        Ok(())
    }

    /// The witness's replay up to where it diverged, as a finding, its
    /// trace saved as `witnesses/NAME.ndjson` (`NAME-K.ndjson` for its
    /// `K`th divergence).
    fn found(
        &self,
        n: usize,
        d: &'static Deviation,
        k: usize,
        r: &Replayed,
        target: &dyn Target,
        out: &mut dyn Write,
    ) -> Found {
        let (_, first) = r.divergence().expect("a replay that diverged");
        let file = match k {
            0 => format!("{}.ndjson", d.name),
            k => format!("{}-{}.ndjson", d.name, k + 1),
        };
        let path = self.cfg.out.join("witnesses").join(file);
        let options = Options {
            steps: Some(r.lines.len()),
            retry_timeout: Some(self.profile.retry_timeout),
            check_state: Some(self.cfg.check_state),
            profile: Some(self.profile.name.clone()),
            ..Options::default()
        };
        let header = Header::new(None, None, options, Some(target.describe()));
        if let Err(w) = repro::save(&path, &header, &r.lines) {
            let _ = writeln!(out, "  {w}");
        }
        Found {
            case: n as u64,
            trace: path.clone(),
            shrunk: path,
            cut: r.lines.iter().map(|l| l.step.clone()).collect(),
            first: first.clone(),
            best: r.part.clone(),
            pin: r.pin.clone(),
        }
    }

    /// The classes a campaign with `with` (the baseline with `devs` in
    /// place) shows that the same campaign with `baseline` alone does not.
    fn shows(
        &mut self,
        baseline: &[&'static Deviation],
        with: &[&'static Deviation],
        devs: &[&'static Deviation],
        target: &mut dyn Target,
        out: &mut dyn Write,
    ) -> Result<Vec<String>, TargetError> {
        let dir = self.cfg.out.join("witnesses");
        let without = match &self.without {
            Some((b, c)) if b == baseline => c.clone(),
            _ => {
                let spec = self.cfg.spec(dir.join("without"), gen::Kinds::NONE);
                let c = campaign(&spec, self.profile, baseline, target, out)?;
                rollup::by_class(&c).into_keys().collect()
            }
        };
        let name: Vec<&str> = devs.iter().map(|d| d.name).collect();
        let spec = self.cfg.spec(dir.join(name.join("+")), gen::Kinds::NONE);
        let c = campaign(&spec, self.profile, with, target, out)?;
        let classes: BTreeSet<String> = rollup::by_class(&c).into_keys().collect();
        let new: Vec<String> = classes.difference(&without).cloned().collect();
        self.without = match new.is_empty() {
            // Kept: the campaign with it is the next one without.
            true => Some((with.to_vec(), classes)),
            false => Some((baseline.to_vec(), without)),
        };
        Ok(new)
    }
}

/// The kinds of `steps`' requests the profile leaves out, each once.
fn left_out(steps: &[Step], profile: &Profile) -> Vec<String> {
    let mut kinds: Vec<String> = steps
        .iter()
        .filter_map(|s| match &s.op {
            Op::Request(r) => Some(r.kind().to_string()),
            Op::Tick => None,
        })
        .filter(|k| profile.omit_kinds.contains(k))
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
}
