//! `conform run`: generate cases, run each against the target and the
//! model, save and shrink what diverges, summarise.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crate::check::Checker;
use crate::exec::{execute, ExecOptions, Execution};
use crate::profile::Profile;
use crate::report::{CaseReport, CaseStatus, Summary};
use crate::shrink::{shrink, ShrinkOptions};
use crate::target::Target;
use crate::trace::{self, Header, Trace};

/// Everything `conform run` was asked.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Target URL.
    pub target: String,
    /// Whether the target is the embedded reference server.
    pub embedded: bool,
    /// Run seed.
    pub seed: u64,
    /// Number of cases.
    pub cases: u64,
    /// Run only this case of the seed.
    pub only_case: Option<u64>,
    /// Steps per case.
    pub steps: usize,
    /// The target's profile.
    pub profile: Profile,
    /// Where the profile came from (for the replay command).
    pub profile_path: Option<PathBuf>,
    /// Compare `debug.snap` after every step.
    pub check_state: bool,
    /// Stop at the first failing case.
    pub fail_fast: bool,
    /// Where failing traces go.
    pub out_dir: PathBuf,
    /// Per-request timeout.
    pub request_timeout: Duration,
    /// Shrink divergences before reporting.
    pub shrink: bool,
    /// Time budget per shrink.
    pub shrink_time: Duration,
    /// Draw a progress bar.
    pub progress: bool,
}

impl RunConfig {
    /// The options recorded in trace headers.
    pub fn options(&self) -> Map<String, Value> {
        let mut o = Map::new();
        o.insert("steps".into(), json!(self.steps));
        o.insert("retryTimeout".into(), json!(self.profile.retry_timeout));
        o.insert("checkState".into(), json!(self.check_state));
        o.insert("profile".into(), json!(self.profile.name));
        o
    }

    /// The target and comparison flags that reproduce this run's setting.
    fn target_flags(&self) -> String {
        let mut f = String::new();
        if !self.embedded {
            f.push_str(&format!(" --target {}", self.target));
        }
        if let Some(p) = &self.profile_path {
            f.push_str(&format!(" --profile {}", p.display()));
        }
        f.push_str(&format!(" --retry-timeout {}", self.profile.retry_timeout));
        if self.request_timeout != Duration::from_millis(5000) {
            f.push_str(&format!(
                " --timeout-ms {}",
                self.request_timeout.as_millis()
            ));
        }
        if !self.check_state {
            f.push_str(" --no-state");
        }
        f
    }

    /// The exact command that replays a trace against this run's target.
    pub fn replay_command(&self, path: &Path) -> String {
        format!(
            "{} replay {}{}",
            program(),
            path.display(),
            self.target_flags()
        )
    }

    /// The exact command that re-runs case `case` (or the whole run).
    pub fn run_command(&self, case: Option<u64>) -> String {
        let which = match case.or(self.only_case) {
            Some(c) => format!("--case {c}"),
            None => format!("--cases {}", self.cases),
        };
        format!(
            "{} run --seed {} {which} --steps {}{}",
            program(),
            self.seed,
            self.steps,
            self.target_flags()
        )
    }
}

/// The name this binary was invoked by, for ready-to-paste commands.
pub fn program() -> String {
    std::env::args()
        .next()
        .unwrap_or_else(|| "conform".to_string())
}

/// The seed of case `i` of a run: SplitMix64 of the run seed and index.
pub fn case_seed(seed: u64, case: u64) -> u64 {
    let mut z = seed ^ case.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A file name stamp with milliseconds: `20261130T011500123`.
pub fn stamp() -> String {
    chrono::Utc::now().format("%Y%m%dT%H%M%S%3f").to_string()
}

/// Run every case; `out` gets the human-readable log.
pub fn run(cfg: &RunConfig, out: &mut dyn Write) -> Summary {
    let started = Instant::now();
    let cases: Vec<u64> = match cfg.only_case {
        Some(c) => vec![c],
        None => (0..cfg.cases).collect(),
    };
    let bar = progress_bar(cfg, cases.len() as u64 * cfg.steps as u64);
    let mut checker = Checker::new(cfg.profile.clone());
    let mut reports = Vec::new();
    let mut target = match Target::new(&cfg.target, cfg.request_timeout) {
        Ok(t) => Some(t),
        Err(e) => {
            let _ = writeln!(out, "error: {e}");
            None
        }
    };
    for &case in &cases {
        let Some(t) = target.as_mut() else { break };
        let seed = case_seed(cfg.seed, case);
        let steps = gen::generate(
            seed,
            &gen::GenConfig {
                steps: cfg.steps,
                retry_timeout: cfg.profile.retry_timeout,
                ..Default::default()
            },
        );
        let case_started = Instant::now();
        let ex = execute(
            t,
            &mut checker,
            &steps,
            ExecOptions {
                check_state: cfg.check_state,
            },
        );
        bar.inc(ex.lines.len() as u64);
        let status = bar.suspend(|| finish_case(cfg, case, &ex, t, out));
        let failed = status != CaseStatus::Pass;
        reports.push(CaseReport {
            name: None,
            case,
            seed,
            steps: ex.lines.len(),
            latitude: ex.latitude,
            seconds: case_started.elapsed().as_secs_f64(),
            status,
        });
        if failed && cfg.fail_fast {
            break;
        }
        if matches!(
            reports.last().map(|r| &r.status),
            Some(CaseStatus::Fault { .. })
        ) {
            // A target that failed once is not worth another case per second.
            bar.suspend(|| {
                let _ = writeln!(
                    out,
                    "stopping: the target failed; the remaining cases were not run"
                );
            });
            break;
        }
    }
    bar.finish_and_clear();
    if target.is_none() {
        reports.push(CaseReport {
            name: None,
            case: 0,
            seed: case_seed(cfg.seed, 0),
            steps: 0,
            latitude: 0,
            seconds: 0.0,
            status: CaseStatus::Fault {
                message: format!("target is not a loopback address: {}", cfg.target),
                trace: PathBuf::new(),
            },
        });
    }
    summarise(cfg, &checker, reports, started.elapsed())
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
    ex: &Execution,
    target: &mut Target,
    out: &mut dyn Write,
) -> CaseStatus {
    let header = Header::new(
        Some(cfg.seed),
        Some(case),
        cfg.options(),
        Some(cfg.target.clone()),
    );
    let path = cfg
        .out_dir
        .join(format!("{}-{}-{}.ndjson", stamp(), cfg.seed, case));
    if let Some(e) = &ex.fault {
        let saved = trace::write(
            &path,
            &Trace {
                header,
                lines: ex.lines.clone(),
            },
        );
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
                let _ = writeln!(out, "  could not save the trace to {}: {w}", path.display());
            }
        }
        return CaseStatus::Fault {
            message: e.to_string(),
            trace: path,
        };
    }
    let Some((at, d)) = &ex.divergence else {
        return CaseStatus::Pass;
    };
    let line = &ex.lines[*at];
    let diff = crate::render::divergence(line, d);
    let _ = writeln!(
        out,
        "DIVERGENCE in case {case} of seed {} at step {} of {}: {}",
        cfg.seed,
        at + 1,
        cfg.steps,
        d.class
    );
    let _ = write!(out, "{diff}");
    if let Err(w) = trace::write(
        &path,
        &Trace {
            header: header.clone(),
            lines: ex.lines.clone(),
        },
    ) {
        let _ = writeln!(out, "  could not save the trace to {}: {w}", path.display());
    }
    let _ = writeln!(out, "  trace:    {}", path.display());
    let mut replay_path = path.clone();
    let (mut shrunk, mut shrunk_steps) = (None, None);
    if cfg.shrink {
        let opts = ShrinkOptions {
            check_state: cfg.check_state,
            time: cfg.shrink_time,
            verbose: false,
        };
        let steps: Vec<_> = ex.lines.iter().map(|l| l.step.clone()).collect();
        let result = shrink(target, &cfg.profile, &steps, &d.class, &opts, out);
        if let Some(best) = result.best {
            let spath = path.with_extension("shrunk.ndjson");
            let mut h = header.clone();
            h.options
                .insert("shrunkFrom".into(), json!(path.display().to_string()));
            match trace::write(
                &spath,
                &Trace {
                    header: h,
                    lines: best.lines.clone(),
                },
            ) {
                Ok(()) => {
                    let _ = writeln!(
                        out,
                        "  shrunk:   {} ({} → {} steps, {} candidates, {:.1}s)",
                        spath.display(),
                        ex.lines.len(),
                        best.lines.len(),
                        result.tried,
                        result.elapsed.as_secs_f64()
                    );
                    if let Some((i, sd)) = &best.divergence {
                        let _ = write!(out, "{}", crate::render::divergence(&best.lines[*i], sd));
                    }
                    shrunk_steps = Some(best.lines.len());
                    replay_path = spath.clone();
                    shrunk = Some(spath);
                }
                Err(w) => {
                    let _ = writeln!(
                        out,
                        "  could not save the shrunk trace to {}: {w}",
                        spath.display()
                    );
                }
            }
        }
    }
    let replay = cfg.replay_command(&replay_path);
    let _ = writeln!(out, "  replay:   {replay}");
    let _ = writeln!(out, "  rerun:    {}", cfg.run_command(Some(case)));
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

fn summarise(
    cfg: &RunConfig,
    checker: &Checker,
    reports: Vec<CaseReport>,
    elapsed: Duration,
) -> Summary {
    let reachable: Vec<_> = model::branch::ALL
        .iter()
        .filter(|b| b.reachable())
        .collect();
    let missed: Vec<String> = reachable
        .iter()
        .filter(|b| !checker.hits.contains(b))
        .map(|b| b.name().to_string())
        .collect();
    let mut s = Summary::new(cfg.seed, &cfg.target, &cfg.profile.name, reports, elapsed);
    s.coverage_hit = reachable.len() - missed.len();
    s.coverage_total = reachable.len();
    s.coverage_missed = missed;
    s.skipped_components = checker.skipped.iter().cloned().collect();
    s
}

/// Print the end-of-run summary.
pub fn print_summary(s: &Summary, out: &mut dyn Write) {
    let _ = writeln!(
        out,
        "summary: {} cases, {} steps, {:.0} steps/s, {:.1}s",
        s.cases, s.steps, s.steps_per_second, s.seconds
    );
    let _ = writeln!(
        out,
        "  branch coverage: {}/{} reachable",
        s.coverage_hit, s.coverage_total
    );
    if !s.coverage_missed.is_empty() {
        const SHOWN: usize = 12;
        let more = s.coverage_missed.len().saturating_sub(SHOWN);
        let shown: Vec<&str> = s
            .coverage_missed
            .iter()
            .take(SHOWN)
            .map(String::as_str)
            .collect();
        let tail = if more > 0 {
            format!(" (+{more} more; --report lists all)")
        } else {
            String::new()
        };
        let _ = writeln!(out, "  missed: {}{tail}", shown.join(", "));
    }
    let _ = writeln!(
        out,
        "  latitude: {} steps explained by timeouts the spec lets fire",
        s.latitude
    );
    if !s.skipped_components.is_empty() {
        let _ = writeln!(
            out,
            "  not compared (absent from the target's snapshot): {}",
            s.skipped_components.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "  divergences: {}, target faults: {}",
        s.divergences, s.faults
    );
}

/// The process exit code for a summary: 3 on any target fault, else 1 on
/// any divergence, else 0.
pub fn exit_code(s: &Summary) -> i32 {
    if s.faults > 0 {
        3
    } else if s.divergences > 0 {
        1
    } else {
        0
    }
}
