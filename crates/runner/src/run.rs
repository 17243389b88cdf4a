//! `conform run`: generate cases, run each against the target and the
//! model, save and shrink what diverges, summarise.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use deviate::Deviation;

use crate::baseline::Baseline;
use crate::check::Checker;
use crate::exec::{execute, execute_stream_lean, ExecOptions, Execution, Expect};
use crate::partition::Partition;
use crate::profile::Profile;
use crate::report::{CaseReport, CaseStatus, Summary};
use crate::repro::{self, Reach, Which};
use crate::shrink::{shrink, ShrinkOptions};
use crate::target::{HttpTarget, Target, TargetError, UrlError};
use crate::trace::{Header, Options};

/// Everything `conform run` was asked.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// The URL to connect to (the embedded server's too).
    pub target: String,
    /// How printed commands reach the target again.
    pub reach: Reach,
    /// Run seed.
    pub seed: u64,
    /// Number of cases.
    pub cases: u64,
    /// Run only this case of the seed.
    pub only_case: Option<u64>,
    /// Run only this job's share of the cases (`--partition K/N`).
    pub partition: Option<Partition>,
    /// Steps per case.
    pub steps: usize,
    /// The target's profile.
    pub profile: Profile,
    /// The baseline's deviations, applied to the model.
    pub deviations: Vec<&'static Deviation>,
    /// The baseline itself (its known signatures), when one is applied.
    pub baseline: Option<Baseline>,
    /// Stop at the first failing case.
    pub fail_fast: bool,
    /// Where failing traces go.
    pub out_dir: PathBuf,
    /// Shrink divergences before reporting.
    pub shrink: bool,
    /// Time budget per shrink.
    pub shrink_time: Duration,
    /// Draw a progress bar.
    pub progress: bool,
    /// Percent of requests that are validation probes (0: none).
    pub probe_pct: u64,
}

impl RunConfig {
    /// The options recorded in trace headers.
    pub fn options(&self) -> Options {
        Options {
            steps: Some(self.steps),
            retry_timeout: Some(self.profile.retry_timeout),
            check_state: Some(self.reach.check_state),
            profile: Some(self.profile.name.clone()),
            baseline: self.reach.baseline.clone(),
            ..Options::default()
        }
    }

    /// The command that re-runs case `case`, or the whole run.
    pub fn rerun_command(&self, case: Option<u64>) -> String {
        let which = match (case.or(self.only_case), self.partition) {
            (Some(c), _) => Which::Case(c),
            (None, Some(p)) => Which::Partition(self.cases, p),
            (None, None) => Which::Cases(self.cases),
        };
        self.reach
            .rerun_command(self.seed, which, self.steps, self.probe_pct > 0)
    }

    fn exec_options(&self) -> ExecOptions {
        ExecOptions {
            check_state: self.reach.check_state,
        }
    }
}

/// Run every case against `cfg.target` over HTTP; `out` gets the log. A
/// URL that may not be a target ([`crate::target::check_url`]) is refused
/// before anything is sent: bad usage, not a target fault.
pub fn run(cfg: &RunConfig, out: &mut dyn Write) -> Result<Summary, UrlError> {
    let timeout = Duration::from_millis(cfg.reach.timeout_ms);
    let mut target = if cfg.reach.allow_remote {
        HttpTarget::any_host(&cfg.target, timeout)
    } else {
        HttpTarget::new(&cfg.target, timeout)
    }?
    .with_pipeline(cfg.reach.pipeline);
    Ok(run_on(cfg, &mut target, out))
}

/// Run every case against `target`.
pub fn run_on(cfg: &RunConfig, target: &mut dyn Target, out: &mut dyn Write) -> Summary {
    let started = Instant::now();
    let cases: Vec<u64> = match cfg.only_case {
        Some(c) => vec![c],
        None => (0..cfg.cases)
            .filter(|&c| cfg.partition.is_none_or(|p| p.holds(c)))
            .collect(),
    };
    let bar = progress_bar(cfg, (cases.len() as u64).saturating_mul(cfg.steps as u64));
    let mut checker = Checker::with_deviations(cfg.profile.clone(), cfg.deviations.clone());
    let mut reports = Vec::new();
    let mut probes = Vec::new();
    // The steered cases: each job of a partition learns the corpus of the
    // cases before its own on the model, so case I is the same in every job.
    let mut campaign = checker.campaign(cfg.seed, cfg.steps, cfg.probe_pct);
    for &case in &cases {
        let seed = gen::case_seed(cfg.seed, case);
        // Each step is generated when the loop pulls it, so the first
        // request goes out at once and the bar moves step by step.
        let counted = bar.clone();
        let mut steps = campaign.case(case);
        let case_started = Instant::now();
        // A passing case's lines are dropped unread: the model's envelopes
        // are encoded only for a case that stops (its trace is saved).
        let ex = execute_stream_lean(
            target,
            &mut checker,
            steps.by_ref().inspect(move |_| counted.inc(1)),
            Expect::Model,
            cfg.exec_options(),
        );
        campaign.learn(steps);
        probes.extend(ex.probes.iter().cloned());
        let (steps_run, latitude) = (ex.lines.len(), ex.latitude);
        let status = bar.suspend(|| finish_case(cfg, case, ex, target, &mut checker, out));
        let stop = match status {
            CaseStatus::Pass => false,
            CaseStatus::Fault { .. } => {
                // A target that failed once is not worth another case per second.
                bar.suspend(|| {
                    let _ = writeln!(
                        out,
                        "stopping: the target failed; the remaining cases were not run"
                    );
                });
                true
            }
            CaseStatus::Diverged { .. } | CaseStatus::PossiblyFixed { .. } => cfg.fail_fast,
            CaseStatus::Known { .. } | CaseStatus::Skipped { .. } => false,
        };
        reports.push(CaseReport {
            name: None,
            case,
            seed,
            steps: steps_run,
            latitude,
            seconds: case_started.elapsed().as_secs_f64(),
            status,
        });
        if stop {
            break;
        }
    }
    bar.finish_and_clear();
    let mut s = Summary::new(
        cfg.seed,
        &cfg.target,
        &cfg.profile.name,
        reports,
        started.elapsed(),
        &checker,
    );
    s.baseline = cfg.baseline.as_ref().map(|b| b.name.clone());
    s.partition = cfg.partition;
    s.validation = crate::report::ProbeStat::tally(&probes);
    s
}

fn progress_bar(cfg: &RunConfig, len: u64) -> indicatif::ProgressBar {
    if !cfg.progress {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} steps {per_sec} eta {eta} {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// Save, shrink and print what a case produced.
fn finish_case(
    cfg: &RunConfig,
    case: u64,
    ex: Execution,
    target: &mut dyn Target,
    checker: &mut Checker,
    out: &mut dyn Write,
) -> CaseStatus {
    let header = Header::new(
        Some(cfg.seed),
        Some(case),
        cfg.options(),
        Some(target.describe()),
    );
    let path = repro::failure_path(&cfg.out_dir, cfg.seed, case);
    if let Some(e) = &ex.fault {
        let saved = repro::save(&path, &header, &ex.lines);
        let _ = writeln!(
            out,
            "TARGET FAULT in case {case} of seed {} at step {}: {e}",
            cfg.seed,
            ex.lines.len()
        );
        match saved {
            Ok(()) => {
                let _ = writeln!(out, "  trace so far: {}", path.display());
            }
            Err(w) => {
                let _ = writeln!(out, "  {w}");
            }
        }
        return CaseStatus::Fault {
            message: e.to_string(),
            trace: path,
        };
    }
    let Some((at, d)) = ex.divergence.clone() else {
        return CaseStatus::Pass;
    };
    let class = d.class.to_string();
    if cfg.baseline.as_ref().is_some_and(|b| b.knows(&class)) {
        let saved = repro::save(&path, &header, &ex.lines);
        let _ = writeln!(
            out,
            "known divergence in case {case} at step {}: {class} (baseline {}); not checked past it",
            at + 1,
            cfg.baseline.as_ref().map_or("", |b| b.name.as_str())
        );
        if let Err(w) = saved {
            let _ = writeln!(out, "  {w}");
        }
        return CaseStatus::Known {
            step: at + 1,
            class,
            trace: path,
        };
    }
    let fixed = match possibly_fixed(cfg, &ex, at, target) {
        Ok(f) => f,
        Err((dev, e)) => {
            let saved = repro::save(&path, &header, &ex.lines);
            return after_fault(
                out,
                format!(
                    "{e} (while re-running case {case} without baseline deviation `{}`, to see whether the divergence at step {} means it is fixed)",
                    dev.name,
                    at + 1
                ),
                path,
                saved,
            );
        }
    };
    if let Some(fixed) = fixed {
        let saved = repro::save(&path, &header, &ex.lines);
        let replay = cfg.reach.replay_command(&path);
        let _ = writeln!(
            out,
            "POSSIBLY FIXED in case {case} at step {}: the target did what the spec says where baseline deviation `{}` departs; update the baseline",
            at + 1,
            fixed.name
        );
        if let Err(w) = saved {
            let _ = writeln!(out, "  {w}");
        }
        let _ = writeln!(out, "  trace:    {}", path.display());
        let _ = writeln!(out, "  replay:   {replay}");
        return CaseStatus::PossiblyFixed {
            step: at + 1,
            deviation: fixed.name.to_string(),
            trace: path,
            replay,
        };
    }
    let diff = crate::render::divergence(&ex.lines[at], &d);
    let _ = writeln!(
        out,
        "DIVERGENCE in case {case} of seed {} at step {} of {}: {}",
        cfg.seed,
        at + 1,
        cfg.steps,
        d.class
    );
    let _ = write!(out, "{}", crate::render::paint(&diff));
    if let Err(w) = repro::save(&path, &header, &ex.lines) {
        let _ = writeln!(out, "  {w}");
    }
    let _ = writeln!(out, "  trace:    {}", path.display());
    if ex.sent_ahead > 0 {
        let _ = writeln!(
            out,
            "  pipelined: the target was also sent the {} step(s) after it, which it applied and nothing checked; the trace ends at the divergence and replays without them",
            ex.sent_ahead
        );
    }
    let mut replay_path = path.clone();
    let (mut shrunk, mut shrunk_steps) = (None, None);
    if cfg.shrink {
        let opts = ShrinkOptions {
            check_state: cfg.reach.check_state,
            time: cfg.shrink_time,
            candidates: None,
            headline: false,
        };
        let original = ex.lines.len();
        let r = shrink(target, checker, ex, &opts, out);
        match repro::save_shrunk(&path, &header, &r.best.lines, None) {
            Ok(spath) => {
                let _ = writeln!(
                    out,
                    "  shrunk:   {} ({} → {} steps, {} candidates, {:.1}s)",
                    spath.display(),
                    original,
                    r.best.lines.len(),
                    r.tried,
                    r.elapsed.as_secs_f64()
                );
                if let Some((i, sd)) = &r.best.divergence {
                    let shown = crate::render::divergence(&r.best.lines[*i], sd);
                    let _ = write!(out, "{}", crate::render::paint(&shown));
                }
                shrunk_steps = Some(r.best.lines.len());
                replay_path = spath.clone();
                shrunk = Some(spath);
            }
            Err(w) => {
                let _ = writeln!(out, "  {w}");
            }
        }
        if let Some(e) = &r.fault {
            let _ = writeln!(
                out,
                "  replay:   {}",
                cfg.reach.replay_command(&replay_path)
            );
            return after_fault(
                out,
                format!(
                    "{e} (while shrinking the divergence at step {} of case {case}: {})",
                    at + 1,
                    d.class
                ),
                path,
                Ok(()),
            );
        }
    }
    let replay = cfg.reach.replay_command(&replay_path);
    let _ = writeln!(out, "  replay:   {replay}");
    let _ = writeln!(out, "  rerun:    {}", cfg.rerun_command(Some(case)));
    CaseStatus::Diverged {
        step: at + 1,
        class: d.class.to_string(),
        diff,
        trace: path,
        shrunk,
        shrunk_steps,
        replay,
    }
}

/// A case that ended in a target fault after its verdict (a rerun, a
/// shrink): the fault wins, the run stops there; the divergence's trace
/// (`saved` at `path`) stays as the fault's.
fn after_fault(
    out: &mut dyn Write,
    message: String,
    path: PathBuf,
    saved: Result<(), String>,
) -> CaseStatus {
    let _ = writeln!(out, "TARGET FAULT: {message}");
    match saved {
        Ok(()) => {
            let _ = writeln!(out, "  trace:    {}", path.display());
        }
        Err(w) => {
            let _ = writeln!(out, "  {w}");
        }
    }
    CaseStatus::Fault {
        message,
        trace: path,
    }
}

/// The baseline deviation the target no longer shows, if that explains a
/// divergence at step `at`: the same steps, run again with one deviation
/// left out of the model, get past `at`. The target is reset and replayed
/// once per deviation, only for a divergence nothing else explains. A
/// fault on a rerun is the deviation and the fault (never "not fixed").
fn possibly_fixed(
    cfg: &RunConfig,
    ex: &Execution,
    at: usize,
    target: &mut dyn Target,
) -> Result<Option<&'static Deviation>, (&'static Deviation, TargetError)> {
    let steps = ex.steps();
    for &d in &cfg.deviations {
        let rest: Vec<_> = cfg.deviations.iter().copied().filter(|x| *x != d).collect();
        let mut checker = Checker::with_deviations(cfg.profile.clone(), rest);
        let again = execute(
            target,
            &mut checker,
            &steps,
            Expect::Model,
            cfg.exec_options(),
        );
        if let Some(e) = again.fault {
            return Err((d, e));
        }
        if again.divergence.as_ref().is_none_or(|(i, _)| *i > at) {
            return Ok(Some(d));
        }
    }
    Ok(None)
}
