//! The catalogue's witnesses, replayed against the target once the
//! campaigns are done (`conform triage`, unless `--no-witnesses`): a departure the
//! random cases never met (a shape the generator seldom builds, such as a
//! cycle of awaits timing out in one tick) is still met on the witness of
//! the catalogue entry that describes it, which is that departure's
//! shortest trace.
//!
//! An entry is proposed when its witness diverges with the baseline so far
//! (the target departs from the spec there) and passes with the entry
//! added to it, at some place in its order (first listed is outermost);
//! it is kept only when a campaign of the same seed, cases and steps with
//! it shows no class that neither the last round nor the residue showed
//! (it hides nothing it does not explain). A witness naming a kind the
//! profile leaves out is not replayed.

use std::collections::BTreeSet;
use std::io::Write;

use deviate::Deviation;
use gen::Op;

use super::campaign::{campaign, CampaignSpec};
use super::explain::Proposal;
use super::pin::{self, Past};
use super::{names, rollup, TriageConfig};
use crate::exec::ExecOptions;
use crate::profile::Profile;
use crate::target::{Target, TargetError};

/// Replay every catalogue entry's witness that the baseline lacks; the
/// proposals made (kept or refused), the kept ones added to `baseline`.
/// `seen` is every class the last round and the residue showed; `known`
/// the residue's classes, which a witness's replay goes on past (a
/// target's departure at a witness's first step, already residue, hides
/// nothing of its last); `spec` the campaign a candidate is confirmed by
/// (its directory per entry).
#[allow(clippy::too_many_arguments)]
pub fn sweep(
    cfg: &TriageConfig,
    profile: &Profile,
    baseline: &mut Vec<&'static Deviation>,
    seen: &BTreeSet<String>,
    known: &BTreeSet<String>,
    spec: &CampaignSpec,
    target: &mut dyn Target,
    out: &mut dyn Write,
) -> Result<Vec<Proposal>, TargetError> {
    let opts = ExecOptions {
        check_state: cfg.check_state,
    };
    let kinds = profile.kinds();
    let mut made = Vec::new();
    let mut replayed = 0;
    for &d in &cfg.catalogue {
        if baseline.contains(&d) {
            continue;
        }
        let w = (d.witness)();
        let leaves_out = w
            .iter()
            .any(|s| matches!(&s.op, Op::Request(r) if !kinds.contains(r.kind())));
        if leaves_out {
            continue;
        }
        replayed += 1;
        if !pin::replay_diverges(&w, profile, baseline, target, opts, Past::Known(known))? {
            continue;
        }
        let mut with = None;
        for at in 0..=baseline.len() {
            let mut devs = baseline.clone();
            devs.insert(at, d);
            if !pin::replay_diverges(&w, profile, &devs, target, opts, Past::Known(known))? {
                with = Some(devs);
                break;
            }
        }
        let Some(devs) = with else {
            continue;
        };
        let mut spec = spec.clone();
        spec.dir = spec.dir.join(d.name);
        let c = campaign(&spec, profile, &devs, target, out)?;
        let new: Vec<String> = rollup::by_class(&c)
            .into_keys()
            .filter(|k| !seen.contains(k))
            .collect();
        let kept = new.is_empty();
        let _ = match kept {
            true => writeln!(
                out,
                "  witness of {}: diverges without it, passes with it; kept (a campaign with it shows nothing new)",
                d.name
            ),
            false => writeln!(
                out,
                "  witness of {}: passes with it, but a campaign with it shows {} new: refused",
                d.name,
                new.join(", ")
            ),
        };
        made.push(Proposal {
            class: format!("witness of {}", d.name),
            cases: Vec::new(),
            deviations: if kept { vec![d] } else { Vec::new() },
            screened: vec![vec![d]],
            kept,
            alternatives: Vec::new(),
            told_apart: Vec::new(),
            refused: if kept { Vec::new() } else { vec![vec![d]] },
            covered: false,
        });
        if kept {
            *baseline = devs;
        }
    }
    let _ = writeln!(
        out,
        "witnesses: {replayed} replayed, {} kept; baseline [{}]",
        made.iter().filter(|p| p.kept).count(),
        names(baseline)
    );
    Ok(made)
}
