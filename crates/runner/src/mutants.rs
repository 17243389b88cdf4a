//! `conform mutants`: the harness measured against every planted bug of
//! the catalogue in turn. For each, the model with that one deviation plays
//! the target (in this process, or served over HTTP), and generated cases
//! run against the spec's model until the first divergence or the step
//! budget: killed or survived, steps and seconds until detection, and the
//! shrunk counterexample's length next to the hand-minimal witness.
//!
//! With a baseline, the target also carries that baseline's deviations and
//! the checker's model applies them: the same bug must still be found, in
//! not many more steps (baselines must not blind the harness).

use std::time::{Duration, Instant};

use serde::Serialize;

use deviate::{Deviant, Deviation};
use model::state::ServerConfig;
use model::view::StateView;

use crate::check::Checker;
use crate::exec::{execute, execute_stream, ExecOptions, Expect};
use crate::profile::Profile;
use crate::shrink::{shrink, ShrinkOptions};
use crate::target::{LocalServer, LocalTarget, Target};

/// Candidates a hunt's shrink may run by default: past the most the
/// catalogue's shrinks need (measured: see the README's "`conform
/// mutants`"), so it binds only on a shrink that would wander.
pub const SHRINK_CANDIDATES: usize = 2_000;

/// How to hunt each bug.
#[derive(Clone, Debug)]
pub struct HuntConfig {
    /// The run seed: case `i` is the steered campaign's case `i`
    /// ([`Checker::campaign`]), the one `conform run --seed` sends.
    pub seed: u64,
    /// Steps per case.
    pub steps: usize,
    /// A kill within this many steps in all is on time.
    pub budget_steps: usize,
    /// Past `budget_steps`, go on until this many steps (a kill then is
    /// slow: a rare shape, reported as such); at most `budget_steps`: none.
    pub slow_budget: usize,
    /// Time ceiling of each shrink.
    pub shrink_time: Duration,
    /// Candidates each shrink may run: the budget that binds, the same
    /// under load as idle, so a kill shrinks to the same trace on every
    /// machine (`None`: only `shrink_time` bounds it).
    pub shrink_candidates: Option<usize>,
    /// Deviations the target has besides the planted bug, which the
    /// checker's model applies too (a baseline).
    pub baseline: Vec<&'static Deviation>,
    /// The profile the checker runs under (its retry timeout is the
    /// served model's too).
    pub profile: Profile,
    /// Percent of requests that are validation probes.
    pub probe_pct: u64,
    /// Shrink what is found (off when only detection is measured).
    pub shrink: bool,
}

impl Default for HuntConfig {
    fn default() -> Self {
        HuntConfig {
            seed: 1,
            steps: 60,
            budget_steps: 20_000,
            slow_budget: 400_000,
            shrink_time: Duration::from_secs(10),
            shrink_candidates: Some(SHRINK_CANDIDATES),
            baseline: Vec::new(),
            profile: Profile::default(),
            probe_pct: 0,
            shrink: true,
        }
    }
}

/// What hunting one bug found.
#[derive(Clone, Debug, PartialEq)]
pub struct Hunted {
    /// The bug.
    pub name: &'static str,
    /// Its Lean line.
    pub spec: &'static str,
    /// The hand-minimal witness's length.
    pub minimal: usize,
    /// `Some` when it was found.
    pub kill: Option<Kill>,
    /// Steps run in all.
    pub steps: usize,
    /// Not found on time, and the baseline leaves it nothing to change
    /// ([`equivalence`]): an equivalent mutant there, with what it was
    /// tried on.
    pub equivalent: Option<Equivalence>,
    /// Not found on time, and shown observable under the baseline (so it
    /// was hunted on): where.
    pub observable: Option<Shown>,
    /// A target fault that ended the hunt (over HTTP): not a survivor.
    pub fault: Option<String>,
}

/// What an equivalence verdict rests on: the bug changed nothing on these.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Equivalence {
    /// Steps of its witness: through the checker against a target with the
    /// bug and the baseline, and the two models compared step by step.
    pub witness_steps: usize,
    /// Generated steps (under the hunt's profile, from the baseline's
    /// model, on seeds the hunt did not use) on which the model with the
    /// bug and the model without gave the same answers and states: at
    /// least as many as the on-time hunt ran.
    pub sampled_steps: usize,
}

/// Where a bug showed under a baseline, refuting its equivalence.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Shown {
    /// `witness` (through the checker), `witness (models)` or
    /// `sample case N` (models).
    pub on: String,
    /// The 1-based step.
    pub step: usize,
    /// The divergence class, or what differed between the models.
    pub what: String,
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} step {}: {}", self.on, self.step, self.what)
    }
}

/// How a bug was found.
#[derive(Clone, Debug, PartialEq)]
pub struct Kill {
    /// Steps run until (and including) the diverging step, over all cases.
    pub steps: usize,
    /// Seconds until detection.
    pub seconds: f64,
    /// The case that found it.
    pub case: u64,
    /// Its divergence class.
    pub class: String,
    /// Steps of the shrunk counterexample.
    pub shrunk: usize,
    /// Seconds spent shrinking.
    pub shrink_seconds: f64,
    /// Candidates the shrink ran.
    pub shrink_tried: usize,
    /// Found only past the on-time budget.
    pub slow: bool,
}

/// Hunt `bug` with a local target playing it.
pub fn hunt(bug: &'static Deviation, cfg: &HuntConfig) -> Hunted {
    let mut devs = vec![bug];
    devs.extend(cfg.baseline.iter().copied().filter(|d| *d != bug));
    let (server, cfg) = playing(bug, devs, cfg);
    hunt_on(bug, &mut LocalTarget::new(server), &cfg)
}

/// The in-process server playing `devs` (`bug` first), and the hunt's
/// config for it: a bug only a validation probe reaches is served without
/// the Rust server's rules, with probes in the traffic.
fn playing(
    bug: &Deviation,
    devs: Vec<&'static Deviation>,
    cfg: &HuntConfig,
) -> (LocalServer, HuntConfig) {
    let config = ServerConfig {
        retry_timeout: cfg.profile.retry_timeout,
    };
    let mut server = LocalServer::new(config, devs, false);
    let mut cfg = cfg.clone();
    if probe_only(bug) {
        server = server.without_validation();
        cfg.probe_pct = cfg.probe_pct.max(10);
    }
    (server, cfg)
}

/// Whether `bug`'s witness needs a validation probe (a request the Rust
/// server's rules refuse).
pub fn probe_only(bug: &Deviation) -> bool {
    let mut m = model::machine::Machine::default();
    (bug.witness)().iter().any(|s| {
        let probe = gen::is_probe(s, &m);
        gen::apply(&mut m, s);
        probe
    })
}

/// Hunt `bug` played by `target` (which must carry `bug` and the baseline).
pub fn hunt_on(bug: &'static Deviation, target: &mut dyn Target, cfg: &HuntConfig) -> Hunted {
    let profile = cfg.profile.clone();
    let baseline: Vec<_> = cfg.baseline.iter().copied().filter(|d| *d != bug).collect();
    let mut checker = Checker::with_deviations(profile.clone(), baseline);
    // The cases `run` would send: steered, on the checker's model.
    let mut campaign = checker.campaign(cfg.seed, cfg.steps, cfg.probe_pct);
    let opts = ExecOptions { check_state: true };
    let started = Instant::now();
    let mut total = 0;
    let mut case = 0;
    let mut found = None;
    let mut fault = None;
    while total < cfg.budget_steps.max(cfg.slow_budget) {
        let mut steps = campaign.case(case);
        let ex = execute_stream(target, &mut checker, steps.by_ref(), Expect::Model, opts);
        campaign.learn(steps);
        total += ex.lines.len();
        if let Some(e) = &ex.fault {
            fault = Some(format!("case {case}: {e}"));
            break;
        }
        if let Some((_, d)) = &ex.divergence {
            let seconds = started.elapsed().as_secs_f64();
            let class = d.class.to_string();
            if !cfg.shrink {
                found = Some(Kill {
                    steps: total,
                    seconds,
                    case,
                    class,
                    shrunk: ex.lines.len(),
                    shrink_seconds: 0.0,
                    shrink_tried: 0,
                    slow: total > cfg.budget_steps,
                });
                break;
            }
            let shrunk = shrink(
                target,
                &mut checker,
                ex,
                &ShrinkOptions {
                    check_state: true,
                    time: cfg.shrink_time,
                    candidates: cfg.shrink_candidates,
                    headline: true,
                },
                &mut std::io::sink(),
            );
            if let Some(e) = &shrunk.fault {
                fault = Some(format!("case {case}, while shrinking: {e}"));
            }
            found = Some(Kill {
                steps: total,
                seconds,
                case,
                class,
                shrunk: shrunk.best.lines.len(),
                shrink_seconds: shrunk.elapsed.as_secs_f64(),
                shrink_tried: shrunk.tried,
                slow: total > cfg.budget_steps,
            });
            break;
        }
        case += 1;
    }
    Hunted {
        name: bug.name,
        spec: bug.spec,
        minimal: (bug.witness)().len(),
        kill: found,
        steps: total,
        equivalent: None,
        observable: None,
        fault,
    }
}

/// [`hunt`] through `cfg.baseline`: a bug not found on time is first asked
/// whether the baseline leaves it anything to change ([`equivalence`]);
/// only if it does is it hunted on to `cfg.slow_budget` (an equivalent
/// mutant never would be found).
pub fn hunt_through_baseline(bug: &'static Deviation, cfg: &HuntConfig) -> Hunted {
    if cfg.baseline.is_empty() {
        return hunt(bug, cfg);
    }
    let on_time = HuntConfig {
        slow_budget: 0,
        ..cfg.clone()
    };
    let row = hunt(bug, &on_time);
    if row.kill.is_some() || row.fault.is_some() {
        return row;
    }
    match equivalence(bug, cfg) {
        Ok(e) => Hunted {
            equivalent: Some(e),
            ..row
        },
        Err(shown) => Hunted {
            observable: Some(shown),
            ..hunt(bug, cfg)
        },
    }
}

/// Whether `bug` changes nothing a target shows once `cfg.baseline` is
/// there (the baseline's own departure takes the path the bug is on): an
/// equivalent mutant under that baseline, not a blindness of the harness.
/// It must survive, in this order, where the bug is known to show without
/// the baseline and where the hunt looked:
///
/// 1. its witness, through the checker (latitude included), against the
///    in-process server with the bug and the baseline ([`on_witness`]);
/// 2. its witness again, the model with the bug and the model without it
///    compared at every step (no latitude: a change latitude would absorb
///    is still a change);
/// 3. generated cases under the hunt's profile (its kinds and retry
///    timeout, probes for a bug only probes reach), from the baseline's
///    model, on seeds the hunt did not use, at least as many steps as the
///    on-time hunt ran: the two models compared at every step.
///
/// This is evidence, not proof: hooks are code, and what they would do on
/// a trace no one ran is not known. The first place the bug shows is
/// returned instead.
pub fn equivalence(bug: &'static Deviation, cfg: &HuntConfig) -> Result<Equivalence, Shown> {
    if let Some(shown) = on_witness(bug, cfg) {
        return Err(shown);
    }
    let baseline: Vec<&'static Deviation> =
        cfg.baseline.iter().copied().filter(|d| *d != bug).collect();
    let config = ServerConfig {
        retry_timeout: cfg.profile.retry_timeout,
    };
    let witness = (bug.witness)();
    if let Some((step, what)) = first_difference(bug, &baseline, config, &witness) {
        return Err(Shown {
            on: "witness (models)".into(),
            step,
            what,
        });
    }
    let gen_cfg = gen::GenConfig {
        steps: cfg.steps,
        retry_timeout: cfg.profile.retry_timeout,
        kinds: cfg.profile.kinds(),
        probe_pct: if probe_only(bug) {
            cfg.probe_pct.max(10)
        } else {
            cfg.probe_pct
        },
        ..gen::GenConfig::default()
    };
    let stepper = deviate::stepper(baseline.clone());
    // The hunt draws `case_seed(seed, 0..)`; these come from another run seed.
    let seed = !cfg.seed;
    let mut sampled = 0;
    let mut case = 0;
    while sampled < cfg.budget_steps.max(1) {
        let steps = gen::generate_with(gen::case_seed(seed, case), &gen_cfg, &stepper);
        if let Some((step, what)) = first_difference(bug, &baseline, config, &steps) {
            return Err(Shown {
                on: format!("sample case {case}"),
                step,
                what,
            });
        }
        sampled += steps.len().max(1);
        case += 1;
    }
    Ok(Equivalence {
        witness_steps: witness.len(),
        sampled_steps: sampled,
    })
}

/// Where `bug`'s witness diverges through the checker when the target also
/// carries `cfg.baseline` and the checker applies it: `None` if it does
/// not (the witness's departure is taken by the baseline's), the first
/// thing an equivalence verdict must survive.
pub fn on_witness(bug: &'static Deviation, cfg: &HuntConfig) -> Option<Shown> {
    let baseline: Vec<&'static Deviation> =
        cfg.baseline.iter().copied().filter(|d| *d != bug).collect();
    let devs = [vec![bug], baseline.clone()].concat();
    let (server, _) = playing(bug, devs, cfg);
    let mut target = LocalTarget::new(server);
    let mut checker = Checker::with_deviations(cfg.profile.clone(), baseline);
    let ex = execute(
        &mut target,
        &mut checker,
        &(bug.witness)(),
        Expect::Model,
        ExecOptions { check_state: true },
    );
    ex.divergence.map(|(i, d)| Shown {
        on: "witness".into(),
        step: i + 1,
        what: d.class.to_string(),
    })
}

/// The first step (1-based) of `steps` where the model with `bug` and
/// `baseline` and the model with `baseline` alone answer or end in a
/// different state, and what differed.
fn first_difference(
    bug: &'static Deviation,
    baseline: &[&'static Deviation],
    config: ServerConfig,
    steps: &[gen::Step],
) -> Option<(usize, String)> {
    let mut with = Deviant::new(config, [vec![bug], baseline.to_vec()].concat());
    let mut without = Deviant::new(config, baseline.to_vec());
    for (i, s) in steps.iter().enumerate() {
        let (a, b) = (with.step(s), without.step(s));
        if let (gen::Op::Request(r), Some(a), Some(b)) = (&s.op, &a, &b) {
            if with.encode(r, a, "x") != without.encode(r, b, "x") {
                return Some((i + 1, format!("{} response", r.kind())));
            }
        }
        if StateView::of(&with.state) != StateView::of(&without.state) {
            return Some((i + 1, format!("{} state", crate::check::step_kind(s))));
        }
    }
    None
}

/// What one row says, in a line: killed (slowly), equivalent (on what
/// evidence), survived (and where it showed), or a fault.
pub fn outcome(r: &Hunted) -> String {
    if let Some(e) = &r.fault {
        return format!("TARGET FAULT: {e}");
    }
    let shown = r
        .observable
        .as_ref()
        .map(|s| format!(" (observable under the baseline: {s})"))
        .unwrap_or_default();
    match (&r.kill, &r.equivalent) {
        (Some(k), _) => format!(
            "killed{} at step {} ({:.3}s), shrunk to {} (minimal {}){shown}",
            if k.slow { " slowly" } else { "" },
            k.steps,
            k.seconds,
            k.shrunk,
            r.minimal
        ),
        (None, Some(e)) => format!(
            "equivalent: under this baseline it changes nothing on its witness ({} steps, through the checker and model to model) nor on {} generated steps",
            e.witness_steps, e.sampled_steps
        ),
        (None, None) => format!("SURVIVED{shown}"),
    }
}

/// How a hunt of `rows` ends: a fault anywhere wins; a survivor (neither
/// killed nor equivalent) is a failure.
pub fn verdict(rows: &[Hunted]) -> crate::report::Verdict {
    use crate::report::Verdict;
    if rows.iter().any(|r| r.fault.is_some()) {
        Verdict::Fault
    } else if rows
        .iter()
        .all(|r| r.kill.is_some() || r.equivalent.is_some())
    {
        Verdict::Clean
    } else {
        Verdict::Diverged
    }
}

/// One row of the `--report` JSON (README, "`conform mutants`").
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportRow<'a> {
    bug: &'a str,
    spec: &'a str,
    minimal: usize,
    killed: bool,
    equivalent: bool,
    slow: bool,
    steps: usize,
    seconds: Option<f64>,
    class: Option<&'a str>,
    shrunk: Option<usize>,
    shrink_seconds: Option<f64>,
    shrink_tried: Option<usize>,
    equivalence: Option<&'a Equivalence>,
    observable: Option<&'a Shown>,
    fault: Option<&'a str>,
}

/// The JSON report of a hunt: one object per bug.
pub fn report(rows: &[Hunted]) -> serde_json::Value {
    let rows: Vec<ReportRow> = rows
        .iter()
        .map(|r| {
            let k = r.kill.as_ref();
            ReportRow {
                bug: r.name,
                spec: r.spec,
                minimal: r.minimal,
                killed: k.is_some(),
                equivalent: r.equivalent.is_some(),
                slow: k.is_some_and(|k| k.slow),
                steps: k.map_or(r.steps, |k| k.steps),
                seconds: k.map(|k| k.seconds),
                class: k.map(|k| k.class.as_str()),
                shrunk: k.map(|k| k.shrunk),
                shrink_seconds: k.map(|k| k.shrink_seconds),
                shrink_tried: k.map(|k| k.shrink_tried),
                equivalence: r.equivalent.as_ref(),
                observable: r.observable.as_ref(),
                fault: r.fault.as_deref(),
            }
        })
        .collect();
    serde_json::to_value(rows).expect("rows serialise")
}

/// Write [`report`] to `path` (creating its directory).
pub fn write_report(path: &std::path::Path, rows: &[Hunted]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, serde_json::to_string_pretty(&report(rows))? + "\n")
}

/// The results as a table, one row a bug, with totals below.
pub fn table(rows: &[Hunted]) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{:<34} {:<46} {:>8} {:>7} {:>8} {:>7} {:>7}",
        "bug", "spec line", "outcome", "steps", "seconds", "shrunk", "minimal"
    );
    for r in rows {
        match &r.kill {
            Some(k) => {
                let outcome = if k.slow { "slow" } else { "killed" };
                let _ = writeln!(
                    t,
                    "{:<34} {:<46} {:>8} {:>7} {:>8.3} {:>7} {:>7}",
                    r.name, r.spec, outcome, k.steps, k.seconds, k.shrunk, r.minimal
                );
            }
            None => {
                let outcome = if r.fault.is_some() {
                    "FAULT"
                } else if r.equivalent.is_some() {
                    "equiv"
                } else {
                    "SURVIVED"
                };
                let _ = writeln!(
                    t,
                    "{:<34} {:<46} {:>8} {:>7} {:>8} {:>7} {:>7}",
                    r.name, r.spec, outcome, r.steps, "-", "-", r.minimal
                );
            }
        }
    }
    let kills: Vec<&Kill> = rows.iter().filter_map(|r| r.kill.as_ref()).collect();
    let slow: Vec<&str> = rows
        .iter()
        .filter(|r| r.kill.as_ref().is_some_and(|k| k.slow))
        .map(|r| r.name)
        .collect();
    let _ = writeln!(
        t,
        "killed {} of {} ({} equivalent under the baseline); {} of them slowly (past the on-time budget){}",
        kills.len(),
        rows.len(),
        rows.iter().filter(|r| r.equivalent.is_some()).count(),
        slow.len(),
        if slow.is_empty() {
            String::new()
        } else {
            format!(": {}", slow.join(", "))
        }
    );
    if !kills.is_empty() {
        let mut steps: Vec<usize> = kills.iter().map(|k| k.steps).collect();
        let mut secs: Vec<f64> = kills.iter().map(|k| k.seconds).collect();
        steps.sort_unstable();
        secs.sort_by(f64::total_cmp);
        let over: Vec<String> = rows
            .iter()
            .filter_map(|r| {
                let k = r.kill.as_ref()?;
                (k.shrunk > r.minimal + 1)
                    .then(|| format!("{} ({} vs {})", r.name, k.shrunk, r.minimal))
            })
            .collect();
        let _ = writeln!(
            t,
            "steps to detection: median {}, worst {}; seconds: median {:.3}, worst {:.3}",
            steps[steps.len() / 2],
            steps[steps.len() - 1],
            secs[secs.len() / 2],
            secs[secs.len() - 1]
        );
        let _ = writeln!(
            t,
            "shrunk more than one step above the hand-minimal length: {}",
            if over.is_empty() {
                "none".to_string()
            } else {
                over.join(", ")
            }
        );
    }
    t
}

/// Steps to detection of one bug over several seeds, on a clean server and
/// on one that also carries a baseline (run with that baseline).
#[derive(Clone, Debug, PartialEq)]
pub struct Detection {
    /// The bug.
    pub name: &'static str,
    /// Steps to detection per seed on the clean server (`None`: survived the budget).
    pub clean: Vec<Option<usize>>,
    /// The same with the baseline.
    pub with: Vec<Option<usize>>,
    /// Whether the baseline leaves the bug nothing to change ([`equivalence`]).
    pub unobservable: bool,
}

impl Detection {
    /// Mean steps, a survivor counted as the whole budget (so a ratio is
    /// never flattered by what was not found).
    fn mean(v: &[Option<usize>], budget: usize) -> f64 {
        v.iter().map(|s| s.unwrap_or(budget) as f64).sum::<f64>() / v.len().max(1) as f64
    }

    /// Mean steps with the baseline over mean steps without.
    pub fn ratio(&self, budget: usize) -> f64 {
        Detection::mean(&self.with, budget) / Detection::mean(&self.clean, budget).max(1.0)
    }
}

/// Measure `bug` on seeds `cfg.seed ..` (`seeds` of them), without shrinking:
/// once on a clean server, once on a server with `cfg.baseline` too.
pub fn detection(bug: &'static Deviation, cfg: &HuntConfig, seeds: u64) -> Detection {
    let runs = |baseline: Vec<&'static Deviation>| -> Vec<Option<usize>> {
        (0..seeds)
            .map(|i| {
                let c = HuntConfig {
                    // Seeds are names: past the largest they wrap.
                    seed: cfg.seed.wrapping_add(i),
                    shrink: false,
                    slow_budget: 0,
                    baseline: baseline.clone(),
                    ..cfg.clone()
                };
                hunt(bug, &c).kill.map(|k| k.steps)
            })
            .collect()
    };
    let with = runs(cfg.baseline.clone());
    let unobservable = with.iter().all(Option::is_none) && equivalence(bug, cfg).is_ok();
    Detection {
        name: bug.name,
        clean: runs(Vec::new()),
        with,
        unobservable,
    }
}

/// The detection comparison as a table, with the bugs over `bound`× below.
pub fn detection_table(rows: &[Detection], budget: usize, bound: f64) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{:<34} {:>10} {:>8} {:>10} {:>8} {:>7}",
        "bug", "clean mean", "missed", "with mean", "missed", "ratio"
    );
    let missed = |v: &[Option<usize>]| v.iter().filter(|s| s.is_none()).count();
    let mut over = Vec::new();
    let mut ratios = Vec::new();
    for r in rows {
        let ratio = r.ratio(budget);
        let note = if r.unobservable {
            "  (unobservable under the baseline)"
        } else {
            ""
        };
        let _ = writeln!(
            t,
            "{:<34} {:>10.0} {:>8} {:>10.0} {:>8} {:>7.2}{note}",
            r.name,
            Detection::mean(&r.clean, budget),
            missed(&r.clean),
            Detection::mean(&r.with, budget),
            missed(&r.with),
            ratio
        );
        if !r.unobservable {
            ratios.push(ratio);
            if ratio > bound {
                over.push(format!("{} ({ratio:.2})", r.name));
            }
        }
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios.get(ratios.len() / 2).copied().unwrap_or(0.0);
    let _ = writeln!(
        t,
        "observable bugs: {}; median ratio {median:.2}; over {bound}x: {}",
        ratios.len(),
        if over.is_empty() {
            "none".to_string()
        } else {
            over.join(", ")
        }
    );
    t
}
