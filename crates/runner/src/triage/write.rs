//! What the triage leaves in its output directory: `profile.json` (the
//! draft profile, its dialect rules in it), `baseline.json`, `TRIAGE.md`
//! (the rollup, the triage table, in the format of
//! `traces/divergences/README.md`, and what the witness sweep met), and
//! `residue/NN.rs`, one scaffolded deviation per class nothing explains
//! (a departure met on a witness included). The traces are under
//! `round-N/` and `witnesses/`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::draft::Rule;
use super::findings::Finding;
use super::rollup::{class_key, kind_of, lean};
use super::{names, scaffold, Triage};
use crate::baseline::Baseline;

/// Write every file; the paths written, or the first that could not be.
pub fn write_all(t: &Triage, dir: &Path, target_name: &str) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    let mut put = |name: &str, body: String| -> Result<(), String> {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("could not create {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, body)
            .map_err(|e| format!("could not write {}: {e}", path.display()))?;
        written.push(path);
        Ok(())
    };
    put("profile.json", profile_json(t))?;
    let b = Baseline {
        name: "triage".into(),
        target: target_name.to_string(),
        deviations: t.baseline.iter().map(|d| d.name.to_string()).collect(),
        known: Vec::new(),
    };
    put(
        "baseline.json",
        serde_json::to_string_pretty(&b).expect("a baseline serialises") + "\n",
    )?;
    for (i, (class, f)) in t.residue.iter().enumerate() {
        put(
            &format!("residue/{:02}.rs", i + 1),
            scaffold::scaffold(i + 1, class, f, witness_of(t, class)),
        )?;
    }
    put("TRIAGE.md", table(t))?;
    Ok(written)
}

/// The entry on whose witness residue class `class` was met, if it was.
fn witness_of(t: &Triage, class: &str) -> Option<&'static str> {
    let sweep = t.sweep.as_ref()?;
    let mut met = sweep.residue();
    met.find(|m| m.residue_class() == class).map(|m| m.witness)
}

/// The draft profile as JSON, its dialect (rules included) in place.
pub fn profile_json(t: &Triage) -> String {
    serde_json::to_string_pretty(&t.profile).expect("a profile serialises") + "\n"
}

/// One rule as JSON, in the dialect format.
pub fn rule_json(r: &Rule) -> serde_json::Value {
    serde_json::to_value(r.to_dialect()).expect("a rule serialises")
}

/// `TRIAGE.md`: the figures, the rollup of every round, and the triage
/// table (one row per behavioural class) in the divergences format.
pub fn table(t: &Triage) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Triage\n");
    let _ = writeln!(
        s,
        "{} rounds in {:.1} s. Proposed profile: retry timeout {}, kinds left out [{}], {} spelling rules. Proposed baseline (outermost first): [{}]. Residue: {} classes ({} of them met on witnesses).\n",
        t.rounds.len(),
        t.elapsed.as_secs_f64(),
        t.profile.retry_timeout,
        t.profile.omit_kinds.join(", "),
        t.draft.rules.len(),
        names(&t.baseline),
        t.residue.len(),
        t.sweep.as_ref().map_or(0, |w| w.residue().count())
    );
    for (kind, class) in &t.explored {
        let _ = writeln!(
            s,
            "Later rounds left out `{kind}` to explore past residue `{class}` (not in the proposed profile).\n"
        );
    }
    for (r, why) in &t.draft.refused {
        let _ = writeln!(
            s,
            "Not a rule (left to behaviour): `{}`: {why}.\n",
            rule_json(r)
        );
    }
    for (i, r) in t.rounds.iter().enumerate() {
        let c = &r.campaign;
        let _ = writeln!(
            s,
            "## Round {}: retry timeout {}, {} kinds left out, baseline [{}]{}\n\n{} of {} cases diverged ({} steps).\n",
            i + 1,
            r.profile.retry_timeout,
            r.profile.omit_kinds.len(),
            names(&r.baseline),
            match r.steered.is_empty() {
                true => String::new(),
                false => format!(", steered toward [{}]", r.steered.join(", ")),
            },
            c.found.len(),
            c.cases,
            c.steps
        );
        let _ = writeln!(
            s,
            "| what differs | remedy | cases | first | shrunk | Lean |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for row in &r.rows {
            let _ = writeln!(
                s,
                "| {} | {} | {} | `{}` | `{}` | {} |",
                row.finding,
                remedy(&row.finding),
                row.cases.len(),
                row.first.display(),
                row.shrunk.display(),
                row.lean
            );
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "## Behavioural classes\n");
    let _ = writeln!(
        s,
        "| file | handler | Lean | spec | server | class | absorbed by |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    let residue: Vec<&String> = t.residue.iter().map(|(c, _)| c).collect();
    for p in &t.proposals {
        let Some(f) = t
            .rounds
            .iter()
            .flat_map(|r| r.campaign.found.iter())
            .find(|f| class_key(f.shrunk_divergence()) == p.class)
        else {
            continue;
        };
        let d = f.shrunk_divergence();
        let (spec, server) = d.response.as_ref().map_or_else(
            || ("(state)".to_string(), "(state)".to_string()),
            |(m, t)| (m.to_string(), t.to_string()),
        );
        let absorbed = if p.covered {
            "a deviation kept for another class".to_string()
        } else if p.kept && !p.alternatives.is_empty() {
            format!("tie: {}", tie(p))
        } else if p.kept {
            format!("`{}`{}", names(&p.deviations), refused_note(p))
        } else {
            let n = residue
                .iter()
                .position(|c| **c == p.class)
                .map_or(0, |i| i + 1);
            format!("residue: `residue/{n:02}.rs`{}", refused_note(p))
        };
        let class = p.deviations.first().map_or("bug", |d| d.class.name());
        let _ = writeln!(
            s,
            "| `{}` | `{}` | {} | `{}` | `{}` | {} | {} |",
            f.shrunk.display(),
            kind_of(f),
            lean(f, t.profile.retry_timeout, &[]),
            cell(&spec),
            cell(&server),
            class,
            absorbed
        );
    }
    witnesses(t, &mut s);
    s
}

/// The sweep's section of `TRIAGE.md`: its figures, and a row per
/// divergence a witness met (as the classes' table has them).
fn witnesses(t: &Triage, s: &mut String) {
    let _ = writeln!(s, "\n## Witnesses\n");
    let Some(w) = &t.sweep else {
        let _ = writeln!(s, "Not replayed (`--no-witnesses`).");
        return;
    };
    let _ = writeln!(
        s,
        "{} of the catalogue's witnesses replayed with the baseline after the rounds; {} divergences met: {} kept, {} left as residue.\n",
        w.replayed,
        w.met.len(),
        w.kept().count(),
        w.residue().count()
    );
    for (name, why) in &w.skipped {
        let _ = writeln!(s, "Not replayed: `{name}` ({why}).\n");
    }
    for name in &w.stuck {
        let _ = writeln!(
            s,
            "Stopped at residue it could not go on past (the snapshot does not pin): `{name}`.\n"
        );
    }
    if let Some(e) = &w.fault {
        let _ = writeln!(
            s,
            "**Stopped by a target fault**: {e}. The rounds' results and what the sweep kept before it stand; the witnesses after it were not replayed.\n"
        );
    }
    if w.met.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "| witness | trace | handler | Lean | spec | server | outcome |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for m in &w.met {
        let f = &m.found;
        let (spec, server) = f.first.response.as_ref().map_or_else(
            || ("(state)".to_string(), "(state)".to_string()),
            |(m, t)| (m.to_string(), t.to_string()),
        );
        let p = &m.proposal;
        let refused: Vec<String> = p
            .refused
            .iter()
            .map(|a| format!("`{}`", names(a)))
            .collect();
        let refused = match refused.is_empty() {
            true => String::new(),
            false => format!(" (refused: {})", refused.join(", ")),
        };
        let outcome = if m.is_kept() && !p.alternatives.is_empty() {
            format!("kept, a tie: {}{refused}", tie(p))
        } else if m.is_kept() {
            format!("kept `{}`{refused}", names(&p.deviations))
        } else if !m.is_residue() {
            "explained by the baseline".to_string()
        } else {
            let n = t
                .residue
                .iter()
                .position(|(c, _)| *c == m.residue_class())
                .map_or(0, |i| i + 1);
            let shows: String = m
                .shows
                .iter()
                .map(|(devs, classes)| {
                    format!(
                        " (a campaign with `{}` shows {}, which the campaign without it does not)",
                        names(devs),
                        classes.join(", ")
                    )
                })
                .collect();
            format!("residue: `residue/{n:02}.rs`{refused}{shows}")
        };
        let _ = writeln!(
            s,
            "| `{}` | `{}` | `{}` | {} | `{}` | `{}` | {} |",
            m.witness,
            f.trace.display(),
            kind_of(f),
            lean(f, t.profile.retry_timeout, &[]),
            cell(&spec),
            cell(&server),
            outcome
        );
    }
}

fn cell(s: &str) -> String {
    let s = s.replace('|', "\\|");
    if s.len() > 160 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(160).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

fn remedy(f: &Finding) -> &'static str {
    match f {
        Finding::StatusRemap { .. }
        | Finding::FieldMissing { .. }
        | Finding::FieldExtra { .. }
        | Finding::NullForEmpty { .. } => "dialect",
        Finding::Refused { .. } => "profile: omitKinds",
        Finding::RetryOffset { .. } => "profile: retryTimeout",
        Finding::Behaviour { .. } => "baseline or residue",
    }
}

/// The partial fits the whole-fit check refused for a class, for its row.
/// A kept proposal and the look-alikes no neighbour of its trace told
/// apart from it: "`A` or `B` (…)".
fn tie(p: &super::explain::Proposal) -> String {
    let alts: Vec<String> = p
        .alternatives
        .iter()
        .map(|a| format!("`{}`", names(a)))
        .collect();
    format!(
        "`{}` or {} (no neighbour of the trace tells them apart)",
        names(&p.deviations),
        alts.join(" or ")
    )
}

fn refused_note(p: &super::explain::Proposal) -> String {
    if p.refused.is_empty() {
        return String::new();
    }
    let r: Vec<String> = p
        .refused
        .iter()
        .map(|a| format!("`{}`", names(a)))
        .collect();
    format!(" (refused, a partial fit: {})", r.join(", "))
}
