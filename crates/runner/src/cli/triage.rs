//! `conform triage`: parse, call [`runner::triage::triage`], write its
//! files, print the figures, map the outcome to an exit code.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use runner::report::Verdict;
use runner::target::{HttpTarget, Target};
use runner::triage::{self, names, write, TriageConfig};

use super::args::TriageArgs;
use super::commands::{setup, Recorded};
use super::error::{bad, fault, Failure};

/// `println!` that does not panic when stdout is closed.
macro_rules! say {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

pub(super) fn triage_cmd(a: TriageArgs) -> Result<Verdict, Failure> {
    let catalogue = deviate::catalogue::without(&a.catalogue_without).map_err(bad)?;
    let s = setup(&a.target, &Recorded::default())?;
    let cfg = TriageConfig {
        seed: a.seed,
        cases: a.cases,
        steps: a.steps,
        rounds: a.rounds,
        shrink_time: Duration::from_secs(a.shrink_time),
        max_together: a.together,
        check_state: s.reach.check_state,
        out: a.out.clone(),
        profile: s.profile.clone(),
        target_name: s.url.clone(),
        catalogue,
        witnesses: !a.no_witnesses,
    };
    if !a.catalogue_without.is_empty() {
        say!(
            "catalogue without {}: {} of {} deviations",
            a.catalogue_without.join(", "),
            cfg.catalogue.len(),
            deviate::all().count()
        );
    }
    say!(
        "conform {} (spec {}) triage: seed {} cases {} steps {} rounds {} together {} target {} profile {} retry-timeout {} state {} shrink {}s timeout-ms {} witnesses {} out {}",
        env!("CARGO_PKG_VERSION"),
        model::SPEC_COMMIT,
        cfg.seed,
        cfg.cases,
        cfg.steps,
        cfg.rounds,
        cfg.max_together,
        if s.reach.target.is_none() { format!("{} (embedded)", s.url) } else { s.url.clone() },
        s.profile.name,
        s.retry,
        if cfg.check_state { "on" } else { "off" },
        a.shrink_time,
        s.reach.timeout_ms,
        if cfg.witnesses { "on" } else { "off" },
        cfg.out.display()
    );
    let (url, timeout, remote) = (
        s.url.clone(),
        Duration::from_millis(s.reach.timeout_ms),
        s.reach.allow_remote,
    );
    let mut connect =
        |p: &runner::profile::Profile| -> Result<Box<dyn Target>, runner::target::TargetError> {
            let t = if remote {
                HttpTarget::any_host(&url, timeout)
            } else {
                HttpTarget::new(&url, timeout)
            }
            .map_err(|e| runner::target::TargetError::Unreachable(e.to_string()))?;
            Ok(Box::new(t.with_dialect(p.dialect.clone())))
        };
    let mut out = std::io::stdout();
    let t = triage::triage(&cfg, &mut connect, &mut out).map_err(|e| fault(format!("{e}")))?;
    let written = write::write_all(&t, &cfg.out, &cfg.target_name).map_err(Failure::Io)?;
    print_summary(&t);
    for p in &written {
        say!("wrote {}", p.display());
    }
    if let Some(e) = t.sweep.as_ref().and_then(|s| s.fault.as_ref()) {
        // The rounds' results are written; the fault still wins (exit 3).
        say!(
            "the witness sweep was stopped by a target fault (the rounds' results and what the sweep kept before it are written)"
        );
        return Err(fault(format!("target fault in the witness sweep: {e}")));
    }
    if t.green() {
        say!("green: the proposed profile and baseline leave no divergence");
        Ok(Verdict::Clean)
    } else {
        say!(
            "{} residue classes: fill in the scaffolds under {}/residue, or check the proposed files with: conform run --target {} --profile {}/profile.json --baseline {}/baseline.json",
            t.residue.len(),
            cfg.out.display(),
            s.url,
            cfg.out.display(),
            cfg.out.display()
        );
        Ok(Verdict::Diverged)
    }
}

/// The figures: rounds, classes by kind, proposed against kept, residue.
fn print_summary(t: &triage::Triage) {
    say!(
        "triage: {} rounds in {:.1}s",
        t.rounds.len(),
        t.elapsed.as_secs_f64()
    );
    for (i, r) in t.rounds.iter().enumerate() {
        let past = r.campaign.found.iter().filter(|f| f.pin.is_some()).count();
        let cases: std::collections::BTreeSet<u64> =
            r.campaign.found.iter().map(|f| f.case).collect();
        say!(
            "  round {}: {} of {} cases diverged, {} divergences ({past} past an earlier one), {} findings, {} steps",
            i + 1,
            cases.len(),
            r.campaign.cases,
            r.campaign.found.len(),
            r.rows.len(),
            r.campaign.steps
        );
        if r.campaign.capped > 0 {
            say!(
                "    {} cases stopped after going on past {} divergences",
                r.campaign.capped,
                runner::triage::pin::MAX_PINS
            );
        }
        for (case, why) in &r.campaign.unpinned {
            say!("    case {case} ended at a divergence it could not go on past: {why}");
        }
    }
    let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
    for p in &t.proposals {
        let kind = p.class.split(' ').next().unwrap_or_default().to_string();
        *by_kind.entry(kind).or_default() += 1;
    }
    let kinds: Vec<String> = by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
    say!("behavioural classes by kind: {}", kinds.join(", "));
    let screened = t
        .proposals
        .iter()
        .filter(|p| !p.screened.is_empty())
        .count();
    let kept = t.proposals.iter().filter(|p| p.kept && !p.covered).count();
    let covered = t.proposals.iter().filter(|p| p.covered).count();
    let rounds_residue = t.residue.len() - t.sweep.as_ref().map_or(0, |s| s.residue().count());
    say!(
        "proposed (passed the offline screen) for {screened} classes, kept {kept} (and {covered} explained by those), residue {rounds_residue}"
    );
    match &t.sweep {
        None => say!("witnesses: not replayed (--no-witnesses)"),
        Some(s) => {
            say!(
                "witnesses: {} replayed, {} divergences met: {} kept, {} residue; {} not replayed, {} stopped at residue they could not go past",
                s.replayed,
                s.met.len(),
                s.kept().count(),
                s.residue().count(),
                s.skipped.len(),
                s.stuck.len()
            );
            for m in &s.met {
                let what = match (m.is_kept(), m.is_residue()) {
                    (true, _) => format!("kept {}", names(&m.proposal.deviations)),
                    (_, true) => "residue".to_string(),
                    _ => "explained by the baseline".to_string(),
                };
                say!(
                    "  witness of {}: {} ({}): {what}",
                    m.witness,
                    m.class,
                    m.found.trace.display()
                );
            }
            if let Some(e) = &s.fault {
                say!("  stopped by a target fault: {e}");
            }
        }
    }
    say!(
        "profile: retry timeout {}, left out [{}], {} spelling rules",
        t.profile.retry_timeout,
        t.profile.omit_kinds.join(", "),
        t.draft.rules.len()
    );
    for r in &t.draft.rules {
        say!("  rule {}", write::rule_json(r));
    }
    for (r, why) in &t.draft.refused {
        say!(
            "  not a rule (left to behaviour) {}: {why}",
            write::rule_json(r)
        );
    }
    for (kind, class) in &t.explored {
        say!(
            "  explored past residue `{class}` by leaving out {kind} (not in the proposed profile)"
        );
    }
    say!("baseline (outermost first): [{}]", names(&t.baseline));
    for (class, f) in &t.residue {
        say!("  residue: {class} ({} shrunk)", f.shrunk.display());
    }
}
