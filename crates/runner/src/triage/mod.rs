//! `conform triage`: the first command a new user runs against a new
//! server. Campaigns of generated cases are rolled up by what differs
//! ([`findings`], [`rollup`]); from that the triage proposes what the spec
//! leaves open and the spelling ([`draft`]: a profile and dialect rules),
//! runs again with them, and then infers a baseline from the catalogue
//! ([`explain`]: each behavioural class's deviations, screened offline and
//! confirmed by reruns). What no catalogue entry explains is the residue,
//! each class with a scaffolded deviation ([`scaffold`]). After the
//! rounds, the catalogue's witnesses are replayed ([`sweep`]): a departure
//! no case met is met on its entry's witness, explained as a class is or
//! left as residue. [`write`] puts the profile, the baseline, the triage
//! table and the scaffolds in the output directory.
//!
//! Rounds: a round whose rollup proposes a new setting or spelling rule
//! runs again with it before any behaviour is judged (a class mixing
//! spelling with behaviour is judged once the spelling is read); a round
//! whose classes are all behaviour explains them, and runs again with what
//! was kept, to reach what those departures hid. A residue class ends every
//! case that meets it, so the next rounds leave its request kind out of
//! generation (exploration only: never in the proposed profile, which can
//! not hide what the spec defines) to reach what it hid. Once there is
//! residue, later rounds are steered toward its kinds (their requests drawn
//! more often, the clock sharpened onto deadlines: [`campaign::steered`]):
//! the unexplained departures live there, and so do the cases that reach
//! what they hide or resemble (a cycle of suspended tasks timing out in
//! one tick, behind a suspend's residue). It stops when a round keeps
//! nothing new, leaves nothing new out and has no new residue kind to steer
//! toward, or after the rounds budget.

pub mod campaign;
pub mod distinguish;
pub mod draft;
pub mod explain;
pub mod findings;
pub mod pin;
pub mod rollup;
pub mod scaffold;
pub mod sweep;
pub mod write;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use deviate::Deviation;

use crate::profile::Profile;
use crate::target::{Target, TargetError};
use campaign::{campaign, Campaign, CampaignSpec, Found};
use draft::Draft;
use explain::{explain, ExplainOptions, Proposal};
use rollup::Row;

/// Everything `conform triage` was asked.
#[derive(Clone, Debug)]
pub struct TriageConfig {
    /// Run seed of every campaign.
    pub seed: u64,
    /// Cases per campaign.
    pub cases: u64,
    /// Steps per case.
    pub steps: usize,
    /// At most this many campaigns.
    pub rounds: usize,
    /// Time budget of each shrink.
    pub shrink_time: Duration,
    /// At most this many deviations together in a proposal (1–3).
    pub max_together: usize,
    /// Compare state.
    pub check_state: bool,
    /// Where everything is written.
    pub out: PathBuf,
    /// The profile the first campaign runs under (the spec's, or the one
    /// given).
    pub profile: Profile,
    /// What the target is, for the baseline's `target` field.
    pub target_name: String,
    /// The deviations a baseline is inferred from: the catalogue
    /// ([`deviate::all`]), or the part of it `--catalogue-without` leaves.
    pub catalogue: Vec<&'static Deviation>,
    /// After the rounds, replay every catalogue entry's witness the
    /// baseline lacks ([`sweep`]).
    pub witnesses: bool,
}

impl TriageConfig {
    /// The options of one explanation or confirmation under this
    /// configuration: `known` the residue classes a replay may go on past,
    /// `refused` the candidates refuted for the class before.
    fn explain<'a>(
        &'a self,
        known: &'a BTreeSet<String>,
        refused: &'a [Vec<&'static Deviation>],
    ) -> ExplainOptions<'a> {
        ExplainOptions {
            max_together: self.max_together,
            check_state: self.check_state,
            catalogue: &self.catalogue,
            known,
            past: None,
            refused,
        }
    }

    /// A campaign of this configuration's seed, cases and steps (every
    /// round's, and the sweep's), its traces under `dir`, steered toward
    /// `favour`.
    fn spec(&self, dir: PathBuf, favour: gen::Kinds) -> CampaignSpec {
        CampaignSpec {
            seed: self.seed,
            cases: self.cases,
            steps: self.steps,
            check_state: self.check_state,
            shrink_time: self.shrink_time,
            dir,
            favour,
        }
    }
}

/// One campaign and what was made of it.
#[derive(Debug)]
pub struct Round {
    /// Its profile's name, retry timeout and left-out kinds.
    pub profile: Profile,
    /// The baseline it ran with.
    pub baseline: Vec<&'static Deviation>,
    /// The residue kinds its cases were steered toward (empty: none).
    pub steered: Vec<String>,
    /// What it saw.
    pub campaign: Campaign,
    /// Its rollup by finding.
    pub rows: Vec<Row>,
}

/// The triage's result.
#[derive(Debug)]
pub struct Triage {
    /// Every round, in order.
    pub rounds: Vec<Round>,
    /// The proposed settings and spelling.
    pub draft: Draft,
    /// The proposed profile.
    pub profile: Profile,
    /// The proposed baseline's deviations, outermost first.
    pub baseline: Vec<&'static Deviation>,
    /// What the inference made of every behavioural class of the rounds
    /// (the sweep's are in [`Triage::sweep`]).
    pub proposals: Vec<Proposal>,
    /// The residue: classes nothing explained, with a case of each; the
    /// rounds' first, then the departures met on witnesses
    /// ([`sweep::Met::residue_class`]).
    pub residue: Vec<(String, Found)>,
    /// Kinds the later rounds left out to explore past residue (kind →
    /// the class), never in the proposed profile.
    pub explored: BTreeMap<String, String>,
    /// What the witness sweep did (`None`: `--no-witnesses`).
    pub sweep: Option<sweep::Sweep>,
    /// Wall time.
    pub elapsed: Duration,
}

impl Triage {
    /// The last round's campaign: the run with everything proposed.
    pub fn last(&self) -> Option<&Campaign> {
        self.rounds.last().map(|r| &r.campaign)
    }

    /// Green: no residue (a departure met on a witness included), the last
    /// round without divergences, and the sweep, if on, not stopped by a
    /// target fault.
    pub fn green(&self) -> bool {
        self.residue.is_empty()
            && self.last().is_some_and(|c| c.found.is_empty())
            && self.sweep.as_ref().is_none_or(|s| s.fault.is_none())
    }
}

/// The baseline a class's candidates were refused against, and those
/// candidates.
type Refusals = (Vec<&'static Deviation>, Vec<Vec<&'static Deviation>>);

/// The most passes over a round's classes (see [`triage`]).
const MAX_PASSES: usize = 3;

/// Connects to the target read through a profile's dialect (the draft's
/// spelling rules in it).
pub type Connect<'a> = dyn FnMut(&Profile) -> Result<Box<dyn Target>, TargetError> + 'a;

/// Run the triage. A target fault in the rounds ends it (exit 3); one in
/// the witness sweep stops the sweep only ([`sweep::Sweep::fault`]): the
/// rounds' results, and what the sweep kept before it, stand.
pub fn triage(
    cfg: &TriageConfig,
    connect: &mut Connect,
    out: &mut dyn Write,
) -> Result<Triage, TargetError> {
    let started = Instant::now();
    let mut draft = Draft::default();
    let mut baseline: Vec<&'static Deviation> = Vec::new();
    let mut rounds = Vec::new();
    let mut proposals: BTreeMap<String, Proposal> = BTreeMap::new();
    // Per class, the candidates refused and the baseline they were refused
    // against.
    let mut refusals: BTreeMap<String, Refusals> = BTreeMap::new();
    let mut residue: BTreeMap<String, Found> = BTreeMap::new();
    let name = "triage";
    // Kinds left out to explore past residue, with the class that did it
    // (only where a case could not go on past it: [`pin`]).
    let mut explore: BTreeMap<String, String> = BTreeMap::new();
    // The classes ([`rollup::class_key`]) of every residue case, its first
    // divergence and its shrunk one: a confirming replay goes on past these
    // only.
    let mut known: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // The residue's kinds the campaigns are steered toward, once met.
    let mut steer: BTreeSet<String> = BTreeSet::new();
    for r in 0..cfg.rounds {
        let mut profile = draft.profile(&cfg.profile, name);
        for (k, class) in &explore {
            if !profile.omit_kinds.contains(k) {
                profile.omit_kinds.push(k.clone());
                profile.reasons.insert(
                    format!("omitKinds.{k}"),
                    format!("exploring past residue `{class}`"),
                );
            }
        }
        let mut target = connect(&profile)?;
        let spec = cfg.spec(
            cfg.out.join(format!("round-{}", r + 1)),
            favour(&steer, &profile),
        );
        let steered: Vec<String> = steer
            .iter()
            .filter(|k| spec.favour.contains(k))
            .cloned()
            .collect();
        let _ = writeln!(
            out,
            "round {}: {} cases × {} steps, retry timeout {}, {} kinds left out, {} spelling rules, baseline [{}]{}",
            r + 1,
            cfg.cases,
            cfg.steps,
            profile.retry_timeout,
            profile.omit_kinds.len(),
            draft.rules.len(),
            names(&baseline),
            match steered.is_empty() {
                true => String::new(),
                false => format!(", steered toward [{}]", steered.join(", ")),
            }
        );
        let c = campaign(&spec, &profile, &baseline, target.as_mut(), out)?;
        let rows = rollup::by_finding(&c, profile.retry_timeout, &baseline);
        let more = draft::propose(&rows, &c, &profile, &draft);
        let before = (draft.retry_timeout, draft.omit.len(), draft.rules.len());
        let mut merged = draft.clone();
        merged.merge(more);
        let grew = (merged.retry_timeout, merged.omit.len(), merged.rules.len()) != before;
        let mut classes: Vec<(String, Vec<Found>)> = rollup::by_class(&c)
            .into_iter()
            .map(|(k, v)| (k, v.into_iter().cloned().collect()))
            .collect();
        // Shallowest first: a class met past an earlier divergence is judged
        // once that one is explained or known residue.
        classes.sort_by_key(|(_, v)| v.iter().map(depth).min().unwrap_or(0));
        // A target no case could go on past (its snapshot cannot pin):
        // residue kinds are left out of the next rounds instead.
        let unpinned = !c.unpinned.is_empty() && c.found.iter().all(|f| f.pin.is_none());
        rounds.push(Round {
            profile: profile.clone(),
            baseline: baseline.clone(),
            steered,
            campaign: c,
            rows,
        });
        if grew {
            // Judge behaviour once the settings and spelling are read.
            draft = merged;
            continue;
        }
        let kept_before = baseline.len();
        // A kept explanation whose own class (the same difference at the
        // same Lean branch) comes back in a run with it, and whose case a
        // replay with the baseline does not pass (a continued case is never
        // evidence alone), is a partial fit: the run with it is not green.
        // It leaves the baseline, refused against the baseline without it,
        // and its class is judged again.
        for (class, cases) in &classes {
            let Some(p) = proposals.get_mut(class) else {
                continue;
            };
            if !p.kept || p.covered || p.deviations.is_empty() {
                continue;
            }
            let others = known_except(&known, class, cases.iter());
            let opts = cfg.explain(&others, &[]);
            if explain::confirm(&cases[0], &profile, &baseline, target.as_mut(), opts)? {
                continue;
            }
            let devs = std::mem::take(&mut p.deviations);
            baseline.retain(|d| !devs.contains(d));
            let _ = writeln!(
                out,
                "  refused (its class recurs with it in the baseline): {} for {class}",
                names(&devs)
            );
            p.kept = false;
            p.refused.push(devs.clone());
            let entry = refusals
                .entry(class.clone())
                .or_insert_with(|| (baseline.clone(), Vec::new()));
            if entry.0 != baseline {
                *entry = (baseline.clone(), Vec::new());
            }
            entry.1.push(devs);
        }
        // Passes until nothing changes: a class met past an earlier
        // divergence of its case is confirmed only once that one is
        // explained or known residue, which a later class of the same pass
        // may settle.
        let mut open: Vec<&(String, Vec<Found>)> = classes.iter().collect();
        for _pass in 0..MAX_PASSES {
            let before = (baseline.len(), known.len());
            let mut still = Vec::new();
            for entry in open {
                let (class, cases) = entry;
                let others = known_except(&known, class, cases.iter());
                // A refusal stands while the baseline it was made against
                // does: a neighbour may have refuted it through a departure
                // explained since.
                let refused = match refusals.get(class) {
                    Some((against, r)) if *against == baseline => r.clone(),
                    _ => Vec::new(),
                };
                let against = baseline.clone();
                let opts = cfg.explain(&others, &refused);
                let refs: Vec<&Found> = cases.iter().collect();
                let p = explain(
                    class,
                    &refs,
                    &profile,
                    &mut baseline,
                    target.as_mut(),
                    opts,
                    out,
                )?;
                if p.kept {
                    residue.remove(class);
                    known.remove(class);
                } else {
                    residue.insert(class.clone(), cases[0].clone());
                    let mut strings: BTreeSet<String> =
                        cases.iter().map(|f| rollup::class_key(&f.first)).collect();
                    strings.insert(class.clone());
                    known.insert(class.clone(), strings);
                    still.push(entry);
                }
                if !p.refused.is_empty() {
                    refusals.insert(class.clone(), (against, p.refused.clone()));
                }
                proposals.insert(class.clone(), p);
            }
            open = still;
            if open.is_empty() || (baseline.len(), known.len()) == before {
                break;
            }
        }
        // A residue class of an earlier round that what was kept since
        // explains (its shrunk trace and its case pass) is residue no more.
        let seen: Vec<&String> = classes.iter().map(|(c, _)| c).collect();
        let earlier: Vec<String> = residue
            .keys()
            .filter(|c| !seen.contains(c))
            .cloned()
            .collect();
        for class in earlier {
            let f = &residue[&class];
            let others = known_except(&known, &class, std::iter::once(f));
            let opts = cfg.explain(&others, &[]);
            if explain::confirm(f, &profile, &baseline, target.as_mut(), opts)? {
                let _ = writeln!(out, "  {class}: explained by what was kept since");
                residue.remove(&class);
                known.remove(&class);
                if let Some(p) = proposals.get_mut(&class) {
                    p.kept = true;
                    p.covered = true;
                }
            }
        }
        let explored = explore.len();
        for (class, f) in &residue {
            let kind = rollup::kind_of(f);
            let left = model::api::KINDS
                .iter()
                .filter(|k| !profile.omit_kinds.contains(&k.to_string()))
                .count();
            if unpinned && kind != "debug.tick" && left > 1 && !explore.contains_key(&kind) {
                explore.insert(kind, class.clone());
            }
        }
        // Steer the next rounds toward the residue's kinds too; a kind
        // new to the steering is worth a round even when nothing was kept.
        let steered_before = favour(&steer, &profile);
        steer.extend(residue.values().map(rollup::kind_of));
        let steers_anew = favour(&steer, &profile) != steered_before;
        if baseline.len() == kept_before && explore.len() == explored && !steers_anew {
            break;
        }
    }
    let profile = draft.profile(&cfg.profile, name);
    let mut residue: Vec<(String, Found)> = residue.into_iter().collect();
    let sweep = match cfg.witnesses {
        true => {
            let known: BTreeSet<String> = known.values().flatten().cloned().collect();
            let s = witnesses(
                cfg,
                &profile,
                &mut baseline,
                &known,
                &proposals,
                connect,
                out,
            );
            residue.extend(s.residue().map(|m| (m.residue_class(), m.found.clone())));
            Some(s)
        }
        false => None,
    };
    Ok(Triage {
        rounds,
        draft,
        profile,
        baseline,
        proposals: proposals.into_values().collect(),
        residue,
        explored: explore,
        sweep,
        elapsed: started.elapsed(),
    })
}

/// The witness sweep after the rounds ([`sweep`]): `known` the residue's
/// classes, every candidate a round refused never kept. A target that does
/// not connect stops it as a fault in it does.
fn witnesses(
    cfg: &TriageConfig,
    profile: &Profile,
    baseline: &mut Vec<&'static Deviation>,
    known: &BTreeSet<String>,
    proposals: &BTreeMap<String, Proposal>,
    connect: &mut Connect,
    out: &mut dyn Write,
) -> sweep::Sweep {
    let mut refused: Vec<Vec<&'static Deviation>> = Vec::new();
    for r in proposals.values().flat_map(|p| p.refused.iter()) {
        if !refused.contains(r) {
            refused.push(r.clone());
        }
    }
    let _ = writeln!(
        out,
        "witnesses: replaying the catalogue's, baseline [{}]",
        names(baseline)
    );
    match connect(profile) {
        Ok(mut target) => sweep::sweep(
            cfg,
            profile,
            baseline,
            known,
            &refused,
            target.as_mut(),
            out,
        ),
        Err(e) => sweep::Sweep::faulted(e, out),
    }
}

/// The known residue classes' strings but those of `class` and of its
/// cases' first divergences: a class is never gone past in its own
/// confirmation.
fn known_except<'a>(
    known: &BTreeMap<String, BTreeSet<String>>,
    class: &str,
    cases: impl Iterator<Item = &'a Found>,
) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = known
        .iter()
        .filter(|(c, _)| c.as_str() != class)
        .flat_map(|(_, s)| s.iter().cloned())
        .collect();
    out.remove(class);
    for f in cases {
        out.remove(&rollup::class_key(&f.first));
    }
    out
}

/// The request kinds of `steer` the profile generates (a tick's residue
/// steers by the sharpened clock alone, which every steered case has).
fn favour(steer: &BTreeSet<String>, profile: &Profile) -> gen::Kinds {
    let kinds = profile.kinds();
    steer
        .iter()
        .filter(|k| kinds.contains(k))
        .fold(gen::Kinds::NONE, |f, k| f.with(k).unwrap_or(f))
}

/// How many divergences a finding's case went on past before it.
fn depth(f: &Found) -> usize {
    f.pin.as_ref().map_or(0, |p| p.depth + 1)
}

/// Deviation names joined for a line of output.
pub fn names(devs: &[&'static Deviation]) -> String {
    devs.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
}
