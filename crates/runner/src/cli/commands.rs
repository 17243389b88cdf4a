//! One function per subcommand: parse what is left, call the library,
//! return the verdict (or a [`Failure`]) for [`super::error::exit_code`].

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use deviate::Deviation;
use runner::baseline::Baseline;
use runner::check::Checker;
use runner::profile::{Profile, RetryTimeout};
use runner::replay::{self, ShrinkFileError, ShrunkFile};
use runner::report::{self, Summary, Verdict};
use runner::repro::Reach;
use runner::run::{self, RunConfig};
use runner::serve::{self, ServeOptions, ServerHandle};
use runner::shrink::ShrinkOptions;
use runner::target::HttpTarget;
use runner::{export, golden, mutants, trace, verify};

use super::args::*;
use super::error::{bad, fault, io, Failure};

/// `println!` that does not panic when stdout is closed (`| head`).
macro_rules! say {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// Percent of requests that are probes under `--probe-validation`.
const PROBE_PCT: u64 = 10;

/// Run the parsed command.
pub fn dispatch(cli: Cli) -> Result<Verdict, Failure> {
    runner::render::set_color(match cli.color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        // As cargo: a terminal, and neither NO_COLOR nor CLICOLOR=0.
        ColorWhen::Auto => {
            anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
        }
    });
    match cli.command {
        Command::Serve(a) => serve_cmd(a),
        Command::Run(a) => run_cmd(a),
        Command::Replay(a) => replay_cmd(a),
        Command::Shrink(a) => shrink_cmd(a),
        Command::Golden(a) => golden_cmd(a),
        Command::Check(a) => check_cmd(a),
        Command::Export(a) => export_cmd(a),
        Command::Mutants(a) => mutants_cmd(a),
        Command::Baseline(a) => baseline_cmd(a),
        Command::Stress(a) => super::stress::stress_cmd(a),
        Command::CheckHistory(a) => super::stress::check_history_cmd(a),
        Command::Races(a) => super::stress::races_cmd(a),
        Command::MergeReports(a) => merge_reports_cmd(a),
        Command::ReplayHistory(a) => super::stress::replay_history_cmd(a),
        Command::Triage(a) => super::triage::triage_cmd(a),
    }
}

/// Everything a command that talks to a target needs: the profile, the
/// baseline's deviations, how to reach the target again, and the
/// connection (with the embedded server behind it, if any, kept alive).
pub(super) struct Setup {
    pub(super) baseline: Option<Baseline>,
    pub(super) profile: Profile,
    pub(super) deviations: Vec<&'static Deviation>,
    pub(super) reach: Reach,
    pub(super) url: String,
    pub(super) target: HttpTarget,
    /// The retry timeout in effect and where it came from (first line).
    pub(super) retry: RetryTimeout,
    pub(super) _server: Option<ServerHandle>,
}

impl Setup {
    fn checker(&self) -> Checker {
        Checker::with_deviations(self.profile.clone(), self.deviations.clone())
    }
}

/// What the input files say about how they were made.
#[derive(Default)]
pub(super) struct Recorded {
    /// A trace run without state comparison.
    no_state: bool,
    /// The retry timeouts they were recorded with (file, ms).
    retry: Vec<(String, u64)>,
}

impl Recorded {
    /// What a saved history was recorded with.
    pub(super) fn history(file: &Path, retry_timeout: u64, check_state: bool) -> Recorded {
        Recorded {
            no_state: !check_state,
            retry: vec![(file.display().to_string(), retry_timeout)],
        }
    }

    fn trace(file: &Path, t: &trace::Trace) -> Recorded {
        Recorded {
            no_state: !t.header.check_state(),
            retry: t
                .header
                .options
                .retry_timeout
                .map(|ms| (file.display().to_string(), ms))
                .into_iter()
                .collect(),
        }
    }
}

/// Load the profile, settle the retry timeout by the one precedence of
/// every command ([`RetryTimeout::resolve`]: `--retry-timeout`, then
/// `--profile`, then what the files were recorded with), check `--target`,
/// start the embedded reference server when none is given, and connect.
pub(super) fn setup(t: &TargetArgs, recorded: &Recorded) -> Result<Setup, Failure> {
    let named = match &t.profile {
        Some(p) => Some(Profile::load(p).map_err(bad)?),
        None => None,
    };
    let retry =
        RetryTimeout::resolve(t.retry_timeout, named.as_ref(), &recorded.retry).map_err(bad)?;
    let mut profile = named.unwrap_or_default();
    profile.retry_timeout = retry.ms;
    let (baseline_name, deviations) = match &t.baseline {
        Some(b) => {
            let (b, devs) = Baseline::load(b).map_err(bad)?;
            (Some(b), devs)
        }
        None => (None, Vec::new()),
    };
    let check_state = !t.no_state && !recorded.no_state;
    // A target given is made first: a URL the library refuses is bad usage,
    // before anything is started or sent.
    let timeout = Duration::from_millis(t.timeout_ms);
    let connect = |url: &str| {
        if t.allow_remote_target {
            HttpTarget::any_host(url, timeout)
        } else {
            HttpTarget::new(url, timeout)
        }
        .map(|h| h.with_pipeline(t.pipeline))
    };
    let given = match &t.target {
        Some(url) => Some(connect(url).map_err(|e| bad(format!("--target {e}")))?),
        None => None,
    };
    if let Some(url) = t
        .target
        .as_deref()
        .filter(|u| !runner::target::is_loopback_url(u))
    {
        eprintln!(
            "warning: --allow-remote-target: {url} is not a loopback address; it is wiped with debug.reset before every case"
        );
    }
    let (url, server) = match &t.target {
        Some(url) => (url.clone(), None),
        None => {
            let h = serve::spawn(ServeOptions {
                retry_timeout: profile.retry_timeout,
                ..ServeOptions::default()
            })
            .map_err(|e| {
                fault(format!(
                    "could not start the embedded reference server: {e}"
                ))
            })?;
            (h.url(), Some(h))
        }
    };
    let target = match given {
        Some(t) => t,
        None => connect(&url).map_err(bad)?,
    }
    .with_dialect(profile.dialect.clone());
    let reach = Reach {
        target: t.target.clone(),
        profile: t.profile.clone(),
        baseline: t.baseline.clone(),
        retry_timeout: profile.retry_timeout,
        timeout_ms: t.timeout_ms,
        check_state,
        allow_remote: t.allow_remote_target,
        pipeline: t.pipeline,
    };
    Ok(Setup {
        baseline: baseline_name,
        profile,
        deviations,
        reach,
        url,
        target,
        retry,
        _server: server,
    })
}

/// Read a trace, mapping a malformed file to a bad input.
fn read_trace(path: &Path) -> Result<trace::Trace, Failure> {
    trace::read(path).map_err(|e| {
        if e.line == 0 {
            bad(format!("cannot read trace {}: {}", e.file, e.message))
        } else {
            bad(format!("malformed trace: {e}"))
        }
    })
}

/// Write the reports asked for (each is attempted); the first that cannot
/// be written is an IO failure naming its path.
fn write_reports(s: &Summary, junit: Option<&Path>, json: Option<&Path>) -> Result<(), Failure> {
    let junit = junit.map_or(Ok(()), |p| report::write_junit(p, s).map_err(|e| io(p, e)));
    let json = json.map_or(Ok(()), |p| report::write_json(p, s).map_err(|e| io(p, e)));
    junit.and(json)
}

/// The command's result once its files are written: a target fault still
/// wins (the write error is printed); otherwise a file that could not be
/// written is the result (exit 4), since what was asked is missing.
fn finish(verdict: Verdict, written: Result<(), Failure>) -> Result<Verdict, Failure> {
    match written {
        Ok(()) => Ok(verdict),
        Err(e) if verdict == Verdict::Fault => {
            eprintln!("error: {e}");
            Ok(verdict)
        }
        Err(e) => Err(e),
    }
}

fn serve_cmd(a: ServeArgs) -> Result<Verdict, Failure> {
    if a.list_mutants {
        for d in deviate::all() {
            say!(
                "{:<32} {:<10} {:<48} {}",
                d.name,
                d.class.name(),
                d.spec,
                d.summary
            );
        }
        return Ok(Verdict::Clean);
    }
    if a.list_races {
        for r in serve::races::all() {
            say!("{:<32} {:<48} {}", r.name, r.spec, r.summary);
        }
        return Ok(Verdict::Clean);
    }
    if a.list_durability_bugs {
        for b in serve::durability::ALL {
            say!("{:<18} {:<30} {}", b.name, b.breaks, b.summary);
        }
        return Ok(Verdict::Clean);
    }
    if !a.bind.is_loopback() {
        return Err(bad(format!(
            "--bind {}: the reference server binds loopback addresses only",
            a.bind
        )));
    }
    let opts = ServeOptions {
        port: a.port,
        bind: a.bind,
        retry_timeout: a.retry_timeout,
        materialize: a.materialize,
        mutants: a.mutant,
        validate: !a.no_validation,
        races: a.race,
        race_window: Duration::from_millis(a.race_window_ms),
        log: a.log,
        durability_bugs: a.durability_bug,
    };
    match serve::run_blocking(opts) {
        Ok(()) => Ok(Verdict::Clean),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Err(bad(e)),
        Err(e) => Err(bad(format!("cannot serve on {}:{}: {e}", a.bind, a.port))),
    }
}

/// A seed for a run given none (it is printed, so the run reproduces).
pub(super) fn random_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

fn run_cmd(a: RunArgs) -> Result<Verdict, Failure> {
    if let Some(p) = a.partition.filter(|p| p.count > a.cases) {
        return Err(bad(format!(
            "--partition {p}: {} jobs share {} cases, so some would run none; give --cases at least {}",
            p.count, a.cases, p.count
        )));
    }
    let mut s = setup(&a.target, &Recorded::default())?;
    let seed = a.seed.unwrap_or_else(random_seed);
    let cfg = RunConfig {
        target: s.url.clone(),
        reach: s.reach.clone(),
        seed,
        cases: a.cases,
        only_case: a.case,
        partition: a.partition,
        steps: a.steps,
        profile: s.profile.clone(),
        deviations: s.deviations.clone(),
        baseline: s.baseline.clone(),
        fail_fast: a.fail_fast,
        out_dir: a.out_dir,
        shrink: !a.no_shrink,
        shrink_time: Duration::from_secs(a.shrink_time),
        progress: !a.no_progress,
        probe_pct: if a.probe_validation { PROBE_PCT } else { 0 },
    };
    let mut out = std::io::stdout();
    say!(
        "conform {} (spec {}) run: seed {} cases {} steps {} target {} profile {} baseline {} retry-timeout {} state {} shrink {} timeout-ms {} fail-fast {} probe-validation {} out-dir {}",
        env!("CARGO_PKG_VERSION"),
        model::SPEC_COMMIT,
        cfg.seed,
        match (cfg.only_case, cfg.partition) {
            (Some(c), _) => format!("#{c}"),
            (None, Some(p)) => format!(
                "{} partition {p} ({} of them)",
                cfg.cases,
                (0..cfg.cases).filter(|&c| p.holds(c)).count()
            ),
            (None, None) => cfg.cases.to_string(),
        },
        cfg.steps,
        if s.reach.target.is_none() { format!("{} (embedded)", cfg.target) } else { cfg.target.clone() },
        cfg.profile.name,
        cfg.baseline.as_ref().map_or("none", |b| b.name.as_str()),
        s.retry,
        if s.reach.check_state { "on" } else { "off" },
        if cfg.shrink { format!("{}s", a.shrink_time) } else { "off".into() },
        s.reach.timeout_ms,
        if cfg.fail_fast { "on" } else { "off" },
        if cfg.probe_pct > 0 { "on" } else { "off" },
        cfg.out_dir.display(),
    );
    let summary = run::run_on(&cfg, &mut s.target, &mut out);
    if summary.verdict() != Verdict::Clean {
        say!("reproduce the run: {}", cfg.rerun_command(None));
    }
    summary.print(&mut out);
    let written = write_reports(&summary, a.junit.as_deref(), a.report.as_deref());
    finish(summary.verdict(), written)
}

fn merge_reports_cmd(a: MergeReportsArgs) -> Result<Verdict, Failure> {
    let mut reports = Vec::new();
    for f in &a.files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| bad(format!("cannot read {}: {e}", f.display())))?;
        let r: Summary = serde_json::from_str(&text).map_err(|e| {
            bad(format!(
                "{}:{}:{}: not a conform JSON report: {e}",
                f.display(),
                e.line(),
                e.column()
            ))
        })?;
        reports.push((f.clone(), r));
    }
    let merged = runner::merge::merge(reports).map_err(bad)?;
    say!(
        "conform {} (spec {}) merge-reports: {} reports of seed {}",
        env!("CARGO_PKG_VERSION"),
        model::SPEC_COMMIT,
        a.files.len(),
        merged.seed
    );
    merged.print(&mut std::io::stdout());
    let written = write_reports(&merged, a.junit.as_deref(), a.report.as_deref());
    finish(merged.verdict(), written)
}

fn replay_cmd(a: ReplayArgs) -> Result<Verdict, Failure> {
    let t = read_trace(&a.file)?;
    let mut s = setup(&a.target, &Recorded::trace(&a.file, &t))?;
    let mut checker = s.checker();
    let embedded = if s.reach.target.is_none() {
        " (embedded reference server)"
    } else {
        ""
    };
    say!(
        "replay {} ({} steps) against {}{embedded} profile {} retry-timeout {} state {}",
        a.file.display(),
        t.lines.len(),
        s.url,
        s.profile.name,
        s.retry,
        if s.reach.check_state { "on" } else { "off" },
    );
    let ex = replay::replay(&mut s.target, &mut checker, &t, s.reach.check_state);
    if t.header.spec != model::SPEC_COMMIT {
        say!(
            "note: recorded against spec {}, this model is spec {}",
            t.header.spec,
            model::SPEC_COMMIT
        );
    }
    if let Some(e) = ex.fault {
        return Err(fault(format!("{e} (at step {})", ex.lines.len())));
    }
    match ex.divergence {
        Some((i, d)) => {
            say!(
                "DIVERGENCE at step {} of {}: {}",
                i + 1,
                t.lines.len(),
                d.class
            );
            let _ = write!(
                std::io::stdout(),
                "{}",
                runner::render::paint(&runner::render::divergence(&ex.lines[i], &d))
            );
            Ok(Verdict::Diverged)
        }
        None => {
            say!(
                "no divergence: {} steps, {} explained by latitude",
                ex.lines.len(),
                ex.latitude
            );
            Ok(Verdict::Clean)
        }
    }
}

fn shrink_cmd(a: ShrinkArgs) -> Result<Verdict, Failure> {
    let t = read_trace(&a.file)?;
    let mut s = setup(&a.target, &Recorded::trace(&a.file, &t))?;
    say!(
        "conform {} shrink {} against {} profile {} retry-timeout {} state {} shrink-time {}s",
        env!("CARGO_PKG_VERSION"),
        a.file.display(),
        s.url,
        s.profile.name,
        s.retry,
        if s.reach.check_state { "on" } else { "off" },
        a.shrink_time
    );
    let mut checker = s.checker();
    let opts = ShrinkOptions {
        check_state: s.reach.check_state,
        time: Duration::from_secs(a.shrink_time),
        candidates: None,
        headline: false,
    };
    let mut out = std::io::stdout();
    let shrunk = replay::shrink_file(
        &mut s.target,
        &mut checker,
        &t,
        &a.file,
        &opts,
        a.out.as_deref(),
        &mut out,
    );
    let shrunk = shrunk.map_err(|e| match e {
        ShrinkFileError::Target(e) => fault(e),
        ShrinkFileError::Save(m) => Failure::Io(m),
    })?;
    match shrunk {
        ShrunkFile::NoDivergence(_) => {
            say!(
                "{} does not diverge against {}: nothing to shrink",
                a.file.display(),
                s.url
            );
            if s.reach.target.is_none() {
                let hint = t
                    .header
                    .target
                    .as_deref()
                    .unwrap_or("the server it diverged against");
                say!("(no --target: that was the embedded reference server; the trace was recorded against {hint})");
            }
            Ok(Verdict::Clean)
        }
        ShrunkFile::Shrunk {
            original,
            result: r,
            path,
        } => {
            say!(
                "shrunk {original} → {} steps in {:.1}s ({} candidates{}): {}",
                r.best.lines.len(),
                r.elapsed.as_secs_f64(),
                r.tried,
                if r.timed_out {
                    ", time budget reached"
                } else {
                    ""
                },
                path.display()
            );
            if let Some((i, d)) = &r.best.divergence {
                let shown = runner::render::divergence(&r.best.lines[*i], d);
                let _ = write!(out, "{}", runner::render::paint(&shown));
            }
            say!("replay: {}", s.reach.replay_command(&path));
            match &r.fault {
                Some(e) => Err(fault(format!(
                    "{e} (while shrinking; the smallest form found so far is saved above)"
                ))),
                None => Ok(Verdict::Diverged),
            }
        }
    }
}

fn golden_cmd(a: GoldenArgs) -> Result<Verdict, Failure> {
    let opts = golden::GoldenOptions {
        seed: a.seed,
        count: a.count,
        steps: a.steps,
        with_state: a.with_state,
        retry_timeout: a.retry_timeout,
    };
    let existing = golden::existing(&a.out);
    if !existing.is_empty() && !a.bless {
        return Err(bad(format!(
            "{} already holds {} golden files; pass --bless to replace them (review with git diff), or choose another --out",
            a.out.display(),
            existing.len()
        )));
    }
    let files = golden::build(&opts);
    golden::write(&a.out, &files)
        .map_err(|e| bad(format!("cannot write {}: {e}", a.out.display())))?;
    let traces: Vec<_> = files.iter().map(|f| f.trace.clone()).collect();
    let coverage = golden::coverage(&traces);
    let steps: usize = traces.iter().map(|t| t.lines.len()).sum();
    say!(
        "wrote {} golden files ({steps} steps) to {}",
        files.len(),
        a.out.display()
    );
    say!(
        "branch coverage: {}/{} reachable",
        coverage.reachable_hit(),
        coverage.reachable_total
    );
    let missed = coverage.missed();
    if !missed.is_empty() {
        let names: Vec<&str> = missed.iter().map(|b| b.name()).collect();
        say!("missed: {}", names.join(", "));
    }
    Ok(Verdict::Clean)
}

fn check_cmd(a: CheckArgs) -> Result<Verdict, Failure> {
    let files = match verify::golden_files(&a.path) {
        Ok(f) if !f.is_empty() => f,
        Ok(_) => return Err(bad(format!("no .ndjson files in {}", a.path.display()))),
        Err(e) => return Err(bad(format!("{}: {e}", a.path.display()))),
    };
    let recorded = Recorded {
        no_state: false,
        retry: verify::recorded_retry_timeouts(&files),
    };
    let mut s = setup(&a.target, &recorded)?;
    say!(
        "conform {} check {} ({} files) against {} profile {} baseline {} retry-timeout {} state {}",
        env!("CARGO_PKG_VERSION"),
        a.path.display(),
        files.len(),
        s.url,
        s.profile.name,
        s.baseline.as_ref().map_or("none", |b| b.name.as_str()),
        s.retry,
        if s.reach.check_state { "on" } else { "off" },
    );
    let cfg = verify::CheckConfig {
        profile: s.profile.clone(),
        deviations: s.deviations.clone(),
        reach: s.reach.clone(),
    };
    let mut out = std::io::stdout();
    let summary = verify::check_all(&mut s.target, &files, &cfg, &mut out);
    let not_checked = files.len() - summary.cases - summary.malformed.len();
    say!(
        "{} files, {} passed, {} failed, {} target faults, {} malformed{}{}",
        files.len(),
        summary.cases - summary.divergences - summary.faults - summary.skipped,
        summary.divergences,
        summary.faults,
        summary.malformed.len(),
        if summary.skipped > 0 {
            format!(
                ", {} skipped (kinds the profile leaves out: {})",
                summary.skipped,
                summary.omitted_kinds.join(", ")
            )
        } else {
            String::new()
        },
        if not_checked > 0 {
            format!(", {not_checked} not checked")
        } else {
            String::new()
        }
    );
    if summary.verdict() == Verdict::Empty {
        say!("nothing was checked: every file was skipped");
    }
    if summary.unrecorded > 0 {
        say!(
            "  {} steps had a part their golden line does not record (a response, or the state when compared): judged by the model",
            summary.unrecorded
        );
    }
    let written = write_reports(&summary, a.junit.as_deref(), a.report.as_deref());
    finish(summary.verdict(), written)
}

fn export_cmd(a: ExportArgs) -> Result<Verdict, Failure> {
    let t = read_trace(&a.file)?;
    let Format::Spec = a.format;
    let result = match &a.out {
        Some(p) => std::fs::File::create(p).and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            let n = export::spec_format(&t, &mut w)?;
            w.flush()?;
            Ok(n)
        }),
        None => export::spec_format(&t, &mut std::io::stdout().lock()),
    };
    let n = result.map_err(bad)?;
    if let Some(p) = &a.out {
        eprintln!("wrote {n} lines to {}", p.display());
    }
    Ok(Verdict::Clean)
}

fn mutants_cmd(a: MutantsArgs) -> Result<Verdict, Failure> {
    let bugs: Vec<&'static Deviation> = if a.mutant.is_empty() {
        deviate::all().collect()
    } else {
        deviate::catalogue::resolve(&a.mutant).map_err(bad)?
    };
    let baseline = match &a.baseline {
        Some(b) => Baseline::load(b).map_err(bad)?.1,
        None => Vec::new(),
    };
    let cfg = mutants::HuntConfig {
        seed: a.seed,
        steps: a.steps,
        budget_steps: a.budget_steps,
        slow_budget: a.slow_budget,
        shrink_time: Duration::from_secs(a.shrink_time),
        shrink_candidates: (a.shrink_candidates > 0).then_some(a.shrink_candidates),
        baseline: baseline.clone(),
        probe_pct: 0,
        shrink: true,
        profile: match &a.profile {
            Some(p) => Profile::load(p).map_err(bad)?,
            None => Profile::default(),
        },
    };
    // No flag and no recording here: the profile's, or the default.
    let named = a.profile.is_some().then_some(&cfg.profile);
    let retry = RetryTimeout::resolve(None, named, &[]).map_err(bad)?;
    if a.versus_clean {
        return detection_cmd(&a, bugs, &cfg);
    }
    say!(
        "conform {} mutants: {} bugs, seed {} steps {} budget {} steps, shrink {}s or {} candidates, profile {} retry-timeout {}, {}{}",
        env!("CARGO_PKG_VERSION"),
        bugs.len(),
        a.seed,
        a.steps,
        a.budget_steps,
        a.shrink_time,
        a.shrink_candidates,
        cfg.profile.name,
        retry,
        if a.http { "over HTTP" } else { "in process" },
        a.baseline
            .as_ref()
            .map(|b| format!(", with baseline {b}"))
            .unwrap_or_default()
    );
    let mut rows = Vec::new();
    for bug in bugs {
        if baseline.contains(&bug) {
            say!(
                "  {:<34} in the baseline: a known departure there, not a planted bug",
                bug.name
            );
            continue;
        }
        let row = if a.http {
            let mut names = vec![bug.name.to_string()];
            names.extend(
                baseline
                    .iter()
                    .filter(|d| **d != bug)
                    .map(|d| d.name.to_string()),
            );
            let probing = mutants::probe_only(bug);
            let server = serve::spawn(ServeOptions {
                mutants: names,
                retry_timeout: cfg.profile.retry_timeout,
                validate: !probing,
                ..ServeOptions::default()
            })
            .map_err(|e| fault(format!("cannot serve {}: {e}", bug.name)))?;
            let mut t = HttpTarget::new(&server.url(), Duration::from_secs(5)).map_err(fault)?;
            let cfg = mutants::HuntConfig {
                probe_pct: if probing { 10 } else { 0 },
                ..cfg.clone()
            };
            mutants::hunt_on(bug, &mut t, &cfg)
        } else {
            mutants::hunt_through_baseline(bug, &cfg)
        };
        say!("  {:<34} {}", row.name, mutants::outcome(&row));
        rows.push(row);
    }
    let _ = write!(std::io::stdout(), "{}", mutants::table(&rows));
    let verdict = mutants::verdict(&rows);
    match &a.report {
        Some(p) => finish(
            verdict,
            mutants::write_report(p, &rows).map_err(|e| io(p, e)),
        ),
        None => Ok(verdict),
    }
}

/// Within this factor of the clean server's steps to detection, a
/// baseline does not blind the harness.
const DETECTION_BOUND: f64 = 2.0;

fn detection_cmd(
    a: &MutantsArgs,
    bugs: Vec<&'static Deviation>,
    cfg: &mutants::HuntConfig,
) -> Result<Verdict, Failure> {
    say!(
        "conform {} mutants --versus-clean: steps to detection, clean vs baseline {}, seeds {}..{}, budget {} steps",
        env!("CARGO_PKG_VERSION"),
        a.baseline.as_deref().unwrap_or_default(),
        a.seed,
        a.seed.wrapping_add(a.seeds - 1),
        a.budget_steps
    );
    let rows: Vec<mutants::Detection> = bugs
        .into_iter()
        .filter(|b| !cfg.baseline.contains(b))
        .map(|b| mutants::detection(b, cfg, a.seeds))
        .collect();
    let _ = write!(
        std::io::stdout(),
        "{}",
        mutants::detection_table(&rows, a.budget_steps, DETECTION_BOUND)
    );
    let over = rows
        .iter()
        .any(|r| !r.unobservable && r.ratio(a.budget_steps) > DETECTION_BOUND);
    Ok(if over {
        Verdict::Diverged
    } else {
        Verdict::Clean
    })
}

fn baseline_cmd(a: BaselineArgs) -> Result<Verdict, Failure> {
    let (b, devs) = Baseline::load(&a.baseline).map_err(bad)?;
    say!(
        "baseline {}: {} ({} deviations, {} known by signature)",
        b.name,
        b.target,
        devs.len(),
        b.known.len()
    );
    for d in devs {
        say!(
            "  {:<34} {:<10} {:<46} {}",
            d.name,
            d.class.name(),
            d.spec,
            d.summary
        );
    }
    for k in &b.known {
        say!("  known: {}: {}", k.signature, k.reason);
    }
    Ok(Verdict::Clean)
}
