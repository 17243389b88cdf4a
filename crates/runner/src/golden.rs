//! Golden trace files: the model's expected answers written down, so a
//! target can be checked without running the model, and a model change is
//! always a reviewed diff of `traces/golden/`.
//!
//! How the corpus is built, deterministically from a seed:
//! 1. generate a pool of traces and replay each in the model, noting the
//!    branches every step takes;
//! 2. for each reachable branch not yet covered, take the first pool trace
//!    that reaches it, cut it after that step and delete steps (delta
//!    debugging, candidates repaired as the shrinker does) while the branch
//!    is still reached: a scenario of a few steps;
//! 3. group scenarios by the handler of the branch they were built for; in
//!    a group, give each scenario its own ids (`a1`, `a1.1`, `b1` … then
//!    `a2` …) and its own hour of time, and concatenate them;
//! 4. replay each file in the model and record its responses (and, with
//!    `--with-state`, the state after each step);
//! 5. add, under `witnesses/`, every planted bug's hand-minimal witness
//!    with the model's answers, so the corpus shows every planted bug at
//!    the instant its witness fixes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use gen::{case_seed, Coverage, GenConfig, Op, Step};
use model::branch::{Branch, ALL};
use model::machine::Machine;
use model::state::ServerConfig;
use model::view::StateView;

use crate::edit::{rename_all, shift_up, Renamer};
use crate::shrink::delete_chunks;
use crate::trace::{Header, Line, Options, Trace};

/// What `conform golden` was asked.
#[derive(Clone, Debug)]
pub struct GoldenOptions {
    /// Seed of the pool.
    pub seed: u64,
    /// Traces in the pool.
    pub count: u64,
    /// Steps per pool trace.
    pub steps: usize,
    /// Record the state after every step.
    pub with_state: bool,
    /// The model's retry timeout.
    pub retry_timeout: u64,
}

/// One golden file: a handler group and its trace.
#[derive(Clone, Debug)]
pub struct GoldenFile {
    /// Handler group (`task.acquire`, `promise_timeout`, …): the file stem.
    pub group: String,
    /// The trace.
    pub trace: Trace,
}

const HOUR: u64 = 3_600_000;

/// Replay `steps` in a fresh model; the branches each step took.
fn hits_per_step(steps: &[Step], retry_timeout: u64) -> Vec<Vec<Branch>> {
    let mut m = Machine::new(ServerConfig { retry_timeout });
    steps
        .iter()
        .map(|s| {
            gen::apply(&mut m, s);
            m.take_hits()
        })
        .collect()
}

fn reaches(steps: &[Step], b: Branch, retry_timeout: u64) -> bool {
    hits_per_step(steps, retry_timeout)
        .iter()
        .any(|h| h.contains(&b))
}

/// The smallest sub-trace of `steps` (repaired) that still reaches `b`.
fn minimise(steps: &[Step], b: Branch, retry_timeout: u64) -> Vec<Step> {
    delete_chunks(steps.to_vec(), |best, cand| {
        let cand = gen::repair(&cand, best, retry_timeout);
        (cand.len() < best.len() && reaches(&cand, b, retry_timeout)).then_some(cand)
    })
}

/// The handler group of a branch: its name up to `/`, with `catch_up`
/// folded into `schedule_timeout`.
pub fn group_of(b: Branch) -> String {
    let g = b.name().split('/').next().unwrap_or(b.name());
    if g == "catch_up" {
        "schedule_timeout"
    } else {
        g
    }
    .to_string()
}

/// Record the model's responses (and states) for `steps`.
pub fn record(steps: &[Step], retry_timeout: u64, with_state: bool) -> Vec<Line> {
    let mut m = Machine::new(ServerConfig { retry_timeout });
    steps
        .iter()
        .map(|s| {
            let res = gen::apply(&mut m, s);
            m.clear_hits();
            let mut line = Line::of(s.clone());
            if let (Some(r), Op::Request(req)) = (res, &s.op) {
                line.res = Some(model::wire::encode_response(req.kind(), &r, "golden"));
            }
            if with_state {
                line.state =
                    Some(serde_json::to_value(StateView::of(&m.state)).expect("view serialises"));
            }
            line
        })
        .collect()
}

/// A scenario for `b`: from the pool traces that reach it, the first whose
/// minimised form still reaches it once renamed and moved in time as
/// [`assemble`] will (a schedule-made id, for one, does not survive that).
fn scenario(
    pool: &[Vec<Step>],
    pool_hits: &[Vec<Vec<Branch>>],
    b: Branch,
    retry_timeout: u64,
) -> Option<Vec<Step>> {
    let reaching = pool_hits
        .iter()
        .enumerate()
        .filter_map(|(t, hits)| hits.iter().position(|h| h.contains(&b)).map(|i| (t, i)));
    for (t, i) in reaching.take(32) {
        let sc = minimise(&pool[t][..=i], b, retry_timeout);
        let moved = shift_up(&rename_all(&sc, &mut Renamer::with_suffix("9")), 24 * HOUR);
        if reaches(&moved, b, retry_timeout) {
            return Some(sc);
        }
    }
    None
}

/// Concatenate a group's scenarios, each with its own ids and hours.
fn assemble(group: &str, scenarios: &[Vec<Step>], opts: &GoldenOptions, start: u64) -> GoldenFile {
    let mut steps: Vec<Step> = Vec::new();
    for (k, sc) in scenarios.iter().enumerate() {
        let renamed = rename_all(sc, &mut Renamer::with_suffix((k + 1).to_string()));
        let slot = steps.last().map_or(start, |l| (l.now / HOUR + 2) * HOUR);
        let first = renamed.first().map_or(slot, |f| f.now);
        let shifted = if slot > first {
            shift_up(&renamed, (slot - first) / HOUR * HOUR + HOUR)
        } else {
            renamed
        };
        steps.extend(shifted);
    }
    let options = Options {
        group: Some(group.to_string()),
        count: Some(opts.count),
        steps: Some(opts.steps),
        retry_timeout: Some(opts.retry_timeout),
        with_state: Some(opts.with_state),
        ..Options::default()
    };
    let header = Header::new(Some(opts.seed), None, options, None);
    let lines = record(&steps, opts.retry_timeout, opts.with_state);
    GoldenFile {
        group: group.to_string(),
        trace: Trace { header, lines },
    }
}

/// Build the corpus. A branch first reached only by another group's
/// scenario can be lost when scenarios are renamed and shifted; such a
/// branch then gets a scenario of its own, for up to three rounds.
pub fn build(opts: &GoldenOptions) -> Vec<GoldenFile> {
    let cfg = GenConfig {
        steps: opts.steps,
        retry_timeout: opts.retry_timeout,
        ..GenConfig::default()
    };
    let pool: Vec<Vec<Step>> = (0..opts.count)
        .map(|i| gen::generate(case_seed(opts.seed, i), &cfg))
        .collect();
    let pool_hits: Vec<Vec<Vec<Branch>>> = pool
        .iter()
        .map(|t| hits_per_step(t, opts.retry_timeout))
        .collect();
    let mut covered: BTreeSet<Branch> = BTreeSet::new();
    let mut groups: BTreeMap<String, Vec<Vec<Step>>> = BTreeMap::new();
    for &b in ALL.iter().filter(|b| b.reachable()) {
        if covered.contains(&b) {
            continue;
        }
        let Some(sc) = scenario(&pool, &pool_hits, b, opts.retry_timeout) else {
            continue;
        };
        covered.extend(hits_per_step(&sc, opts.retry_timeout).into_iter().flatten());
        groups.entry(group_of(b)).or_default().push(sc);
    }
    let mut files = Vec::new();
    for round in 0..4 {
        files = groups
            .iter()
            .map(|(g, scs)| assemble(g, scs, opts, cfg.start))
            .collect();
        let traces: Vec<Trace> = files.iter().map(|f| f.trace.clone()).collect();
        let missed = coverage(&traces).missed();
        if missed.is_empty() || round == 3 {
            break;
        }
        for b in missed {
            if let Some(sc) = scenario(&pool, &pool_hits, b, opts.retry_timeout) {
                groups.entry(group_of(b)).or_default().push(sc);
            }
        }
    }
    files.extend(witnesses(opts));
    files
}

/// The branches a set of golden traces takes.
pub fn coverage(traces: &[Trace]) -> Coverage {
    let mut c = Coverage::new();
    for t in traces {
        c.merge(&gen::coverage(&t.steps(), t.header.retry_timeout()));
    }
    c
}

/// Where the model's answers now differ from a golden trace's records:
/// `(line, what)` for each differing step (line numbers count the header).
pub fn model_differences(t: &Trace) -> Vec<(usize, String)> {
    let with_state = t.lines.iter().any(|l| l.state.is_some());
    let fresh = record(&t.steps(), t.header.retry_timeout(), with_state);
    let mut out = Vec::new();
    for (i, (old, new)) in t.lines.iter().zip(&fresh).enumerate() {
        if old.res != new.res {
            out.push((
                i + 2,
                format!(
                    "response: recorded {} model {}",
                    show(&old.res),
                    show(&new.res)
                ),
            ));
        }
        if old.state.is_some() && old.state != new.state {
            out.push((i + 2, "state after the step differs".to_string()));
        }
    }
    out
}

fn show(v: &Option<Value>) -> String {
    v.as_ref().map_or("(none)".to_string(), Value::to_string)
}

/// The golden files already in `dir`: `.ndjson` files whose header names
/// a handler group.
pub fn existing(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(files) = crate::verify::golden_files(dir) else {
        return Vec::new();
    };
    files
        .into_iter()
        .filter(|p| crate::trace::read(p).is_ok_and(|t| t.header.options.group.is_some()))
        .collect()
}

/// The planted bugs' witnesses as golden files (`witnesses/<name>`), each
/// the deviation's hand-minimal trace with the model's answers: every
/// planted bug shows on the corpus at the instant its witness fixes.
fn witnesses(opts: &GoldenOptions) -> Vec<GoldenFile> {
    deviate::all()
        .map(|d| {
            let group = format!("witnesses/{}", d.name);
            let options = Options {
                group: Some(group.clone()),
                retry_timeout: Some(opts.retry_timeout),
                with_state: Some(opts.with_state),
                ..Options::default()
            };
            let steps = (d.witness)();
            GoldenFile {
                group,
                trace: Trace {
                    header: Header::new(None, None, options, None),
                    lines: record(&steps, opts.retry_timeout, opts.with_state),
                },
            }
        })
        .collect()
}

/// Write the corpus into `dir`, one `<group>.ndjson` per group, after
/// removing the golden files already there (other files are left alone).
/// The caller decides whether replacing them is wanted (`--bless`).
pub fn write(dir: &Path, files: &[GoldenFile]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for old in existing(dir) {
        std::fs::remove_file(old)?;
    }
    for f in files {
        // `trace::write` creates the `witnesses/` directory as needed.
        crate::trace::write(&dir.join(format!("{}.ndjson", f.group)), &f.trace)?;
    }
    Ok(())
}
