//! `conform merge-reports`: the JSON reports of the N jobs of one
//! partitioned run (`conform run --partition K/N`) made into the report
//! of the whole run, as if it had run in one job.
//!
//! The reports must be of one run: the same harness, spec, seed, profile,
//! baseline and kinds left out, each of partitions 1/N … N/N exactly once,
//! no case twice. Cases are listed by index; counts are summed; a branch
//! is missed only if every job missed it; a component is skipped if any
//! job's target lacked it; `seconds` is the jobs' time added up (the work
//! done, not the wall time of jobs that ran side by side), and
//! `steps_per_second` the steps over it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::partition::Partition;
use crate::report::{ProbeStat, Summary};

/// Merge the reports read from `reports` (each with the file it came
/// from, for messages). A set that is not one partitioned run is refused,
/// naming what disagrees.
pub fn merge(reports: Vec<(PathBuf, Summary)>) -> Result<Summary, String> {
    let Some((first_path, first)) = reports.first().cloned() else {
        return Err("no report to merge".into());
    };
    let mut seen: BTreeMap<Partition, PathBuf> = BTreeMap::new();
    for (path, r) in &reports {
        let p = r.partition.ok_or_else(|| {
            format!(
                "{}: not the report of a partitioned run (no `partition`): run with --partition K/N",
                path.display()
            )
        })?;
        let same = [
            ("harness", r.harness == first.harness),
            ("spec", r.spec == first.spec),
            ("seed", r.seed == first.seed),
            ("profile", r.profile == first.profile),
            ("baseline", r.baseline == first.baseline),
            ("omitted_kinds", r.omitted_kinds == first.omitted_kinds),
            ("coverage_total", r.coverage_total == first.coverage_total),
        ];
        if let Some((field, _)) = same.iter().find(|(_, same)| !same) {
            return Err(format!(
                "{} and {} are not of one run: their `{field}` differs",
                first_path.display(),
                path.display()
            ));
        }
        if let Some(other) = seen.insert(p, path.clone()) {
            return Err(format!(
                "partition {p} is given twice: {} and {}",
                other.display(),
                path.display()
            ));
        }
    }
    let count = seen.keys().next().map_or(0, |p| p.count);
    if let Some(p) = seen.keys().find(|p| p.count != count) {
        return Err(format!(
            "partitions of {count} and of {} jobs cannot be one run",
            p.count
        ));
    }
    let missing: Vec<String> = (1..=count)
        .map(|index| Partition { index, count })
        .filter(|p| !seen.contains_key(p))
        .map(|p| p.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the run is incomplete: no report of partition {}",
            missing.join(", ")
        ));
    }
    let mut m = first.clone();
    m.partition = None;
    let mut cases = BTreeMap::new();
    let mut missed: Option<BTreeSet<String>> = None;
    let mut skipped = BTreeSet::new();
    let mut validation: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    let mut targets = BTreeSet::new();
    let (mut steps, mut seconds, mut latitude) = (0, 0.0, 0);
    let (mut divergences, mut faults, mut known, mut fixed) = (0, 0, 0, 0);
    m.malformed.clear();
    for (path, r) in reports {
        for c in r.case_reports {
            let case = c.case;
            if cases.insert(case, c).is_some() {
                return Err(format!(
                    "case {case} is in two reports (the last: {})",
                    path.display()
                ));
            }
        }
        let mine: BTreeSet<String> = r.coverage_missed.into_iter().collect();
        missed = Some(match missed {
            None => mine,
            Some(m) => m.intersection(&mine).cloned().collect(),
        });
        skipped.extend(r.skipped_components);
        for v in r.validation {
            let e = validation.entry((v.kind, v.rule)).or_default();
            e.0 += v.sent;
            e.1 += v.refused;
        }
        targets.insert(r.target);
        steps += r.steps;
        seconds += r.seconds;
        latitude += r.latitude;
        divergences += r.divergences;
        faults += r.faults;
        known += r.known;
        fixed += r.possibly_fixed;
        m.malformed.extend(r.malformed);
    }
    // In the order the reports list them (the branches' own order).
    let missed_by_all = missed.unwrap_or_default();
    let missed: Vec<String> = first
        .coverage_missed
        .iter()
        .filter(|b| missed_by_all.contains(*b))
        .cloned()
        .collect();
    m.target = targets.into_iter().collect::<Vec<_>>().join(", ");
    m.cases = cases.len();
    m.case_reports = cases.into_values().collect();
    m.steps = steps;
    m.seconds = seconds;
    m.steps_per_second = if seconds > 0.0 {
        steps as f64 / seconds
    } else {
        0.0
    };
    m.coverage_hit = m.coverage_total.saturating_sub(missed.len());
    m.coverage_missed = missed;
    m.latitude = latitude;
    m.skipped_components = skipped.into_iter().collect();
    m.divergences = divergences;
    m.faults = faults;
    m.known = known;
    m.possibly_fixed = fixed;
    m.validation = validation
        .into_iter()
        .map(|((kind, rule), (sent, refused))| ProbeStat {
            kind,
            rule,
            sent,
            refused,
        })
        .collect();
    Ok(m)
}
