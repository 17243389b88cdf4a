//! The rollup: every finding of every diverging case, grouped by what
//! differs, each with its cases, its first and shrunk trace and the Lean
//! it rests on; and the behavioural classes, grouped by the shrunk trace's
//! class.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use deviate::{Deviant, Deviation};
use model::state::ServerConfig;

use super::campaign::{Campaign, Found};
use super::findings::{findings, Finding};
use crate::check::{step_kind, Divergence};

/// One line of the rollup.
#[derive(Clone, Debug)]
pub struct Row {
    /// What differs.
    pub finding: Finding,
    /// The cases showing it (in their first divergence).
    pub cases: Vec<u64>,
    /// The first such case's trace.
    pub first: PathBuf,
    /// Its shrunk trace.
    pub shrunk: PathBuf,
    /// The Lean file and the branch the spec takes there.
    pub lean: String,
}

/// Roll a campaign up by finding, in finding order.
pub fn by_finding(c: &Campaign, retry: u64, deviations: &[&'static Deviation]) -> Vec<Row> {
    let mut rows: BTreeMap<Finding, Row> = BTreeMap::new();
    for f in &c.found {
        let kind = kind_of(f);
        for finding in findings(&kind, &f.first) {
            let row = rows.entry(finding.clone()).or_insert_with(|| Row {
                finding,
                cases: Vec::new(),
                first: f.trace.clone(),
                shrunk: f.shrunk.clone(),
                lean: lean(f, retry, deviations),
            });
            row.cases.push(f.case);
        }
    }
    rows.into_values().collect()
}

/// The cases of a campaign grouped by their shrunk trace's [`class_key`],
/// the cases of each in case order.
pub fn by_class(c: &Campaign) -> BTreeMap<String, Vec<&Found>> {
    let mut out: BTreeMap<String, Vec<&Found>> = BTreeMap::new();
    for f in &c.found {
        out.entry(class_key(f.shrunk_divergence()))
            .or_default()
            .push(f);
    }
    out
}

/// A behavioural class: what differs (the class as printed) and where in
/// the Lean the model was when it did, `CLASS at BRANCH, …`. What differs
/// alone lumps departures that show alike: a task kept at its version
/// when created new (`task.create/new_acquired_200`) and when re-acquired
/// (`task.create/exists_pending_reacquired_200`) differ the same way, and
/// one class would be explained (or left as residue) for both by its
/// first case. A request's branches are its own handler's (a cascade's
/// resumes and settlements belong to the departure, not to which one it
/// is); a tick's are every timeout it fired, each once.
pub fn class_key(d: &Divergence) -> String {
    let kind = d.class.kind.as_str();
    let own: BTreeSet<&str> = d
        .branches
        .iter()
        .map(|b| b.name())
        .filter(|b| kind == "debug.tick" || b.split('/').next() == Some(kind))
        .collect();
    if own.is_empty() {
        return d.class.to_string();
    }
    let own: Vec<&str> = own.into_iter().collect();
    format!("{} at {}", d.class, own.join(", "))
}

/// The request kind (or `debug.tick`) of a case's diverging step.
pub fn kind_of(f: &Found) -> String {
    f.cut.last().map(step_kind).unwrap_or_default()
}

/// The Lean file of a kind's handler (`debug.tick`: the timeouts).
pub fn lean_file(kind: &str) -> String {
    let code = match kind {
        "promise.get" => "P-01",
        "promise.create" => "P-02",
        "promise.settle" => "P-03",
        "promise.register_callback" => "P-04",
        "promise.register_listener" => "P-05",
        "promise.search" => "P-06",
        "task.get" => "T-01",
        "task.create" => "T-02",
        "task.acquire" => "T-03",
        "task.fence" => "T-04",
        "task.heartbeat" => "T-05",
        "task.suspend" => "T-06",
        "task.fulfill" => "T-07",
        "task.release" => "T-08",
        "task.halt" => "T-09",
        "task.continue" => "T-10",
        "task.search" => "T-11",
        "schedule.get" => "S-01",
        "schedule.create" => "S-02",
        "schedule.delete" => "S-03",
        "schedule.search" => "S-04",
        _ => return "spec/02-actions/02-timeouts.lean".to_string(),
    };
    format!("spec/02-actions/{code}-{kind}.lean")
}

/// The Lean file of the diverging step and the branches the spec's model
/// took there (replayed on the shrunk steps, with the same deviations).
pub fn lean(f: &Found, retry: u64, deviations: &[&'static Deviation]) -> String {
    let steps = f.shrunk_steps();
    let mut m = Deviant::new(
        ServerConfig {
            retry_timeout: retry,
        },
        deviations.to_vec(),
    );
    m.state = f.start(retry);
    let Some((last, before)) = steps.split_last() else {
        return lean_file(&kind_of(f));
    };
    for s in before {
        m.step(s);
    }
    m.clear_hits();
    m.step(last);
    let hits: Vec<String> = m.take_hits().iter().map(|b| b.to_string()).collect();
    let file = lean_file(&step_kind(last));
    if hits.is_empty() {
        file
    } else {
        format!("{file} ({})", hits.join(", "))
    }
}
