//! One function per subcommand; each returns the exit code.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use runner::check::Checker;
use runner::exec::{execute, ExecOptions};
use runner::profile::Profile;
use runner::report::{self, Summary};
use runner::run::{self, RunConfig};
use runner::serve::{self, ServeOptions, ServerHandle};
use runner::shrink::{shrink, ShrinkOptions};
use runner::target::Target;
use runner::{export, golden, trace, verify};

use super::args::*;
use super::{BAD_INPUT, DIVERGED, OK, TARGET_FAULT};

/// `println!` that does not panic when stdout is closed (`| head`).
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `print!` that does not panic when stdout is closed.
macro_rules! say_raw {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}

/// Run the parsed command.
pub fn dispatch(cli: Cli) -> i32 {
    match cli.command {
        Command::Serve(a) => serve_cmd(a),
        Command::Run(a) => run_cmd(a),
        Command::Replay(a) => replay_cmd(a),
        Command::Shrink(a) => shrink_cmd(a),
        Command::Golden(a) => golden_cmd(a),
        Command::Check(a) => check_cmd(a),
        Command::Export(a) => export_cmd(a),
    }
}

fn fail(code: i32, msg: impl std::fmt::Display) -> i32 {
    eprintln!("error: {msg}");
    code
}

/// The profile from `--profile`, its retry timeout overridden by
/// `--retry-timeout`, else by `header_retry` (a trace header's value).
fn profile(t: &TargetArgs, header_retry: Option<u64>) -> Result<Profile, String> {
    let mut p = match &t.profile {
        Some(path) => Profile::load(path)?,
        None => Profile::default(),
    };
    // The flag wins, then what the trace was run with, then the profile.
    if let Some(r) = t.retry_timeout.or(header_retry) {
        p.retry_timeout = r;
    }
    Ok(p)
}

/// The target URL, starting the embedded reference server when none is given.
fn target_url(t: &TargetArgs, p: &Profile) -> Result<(String, Option<ServerHandle>), String> {
    match &t.target {
        Some(url) => Ok((url.clone(), None)),
        None => {
            let h = serve::spawn(ServeOptions {
                retry_timeout: p.retry_timeout,
                ..ServeOptions::default()
            })
            .map_err(|e| format!("could not start the embedded reference server: {e}"))?;
            Ok((h.url(), Some(h)))
        }
    }
}

/// `--target` must be an http(s) URL on a loopback address: anything
/// else is bad usage (exit 2), never a request.
fn check_target_flag(t: &TargetArgs) -> Result<(), i32> {
    let Some(url) = &t.target else { return Ok(()) };
    let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
    if !scheme_ok {
        return Err(fail(
            BAD_INPUT,
            format!("--target {url}: expected an http:// URL such as http://127.0.0.1:8001"),
        ));
    }
    if !runner::target::is_loopback_url(url) {
        return Err(fail(
            BAD_INPUT,
            format!(
                "--target {url}: only loopback addresses (127.0.0.0/8, ::1, localhost) are targets"
            ),
        ));
    }
    Ok(())
}

/// A connected target (and the embedded server behind it, if any).
struct Connection {
    target: Target,
    url: String,
    _server: Option<ServerHandle>,
}

/// Connect to `--target` (or start the embedded server); exit 3 on failure.
fn connect(t: &TargetArgs, p: &Profile) -> Result<Connection, i32> {
    check_target_flag(t)?;
    let (url, server) = target_url(t, p).map_err(|e| fail(TARGET_FAULT, e))?;
    let target = Target::new(&url, Duration::from_millis(t.timeout_ms))
        .map_err(|e| fail(TARGET_FAULT, e))?;
    Ok(Connection {
        target,
        url,
        _server: server,
    })
}

/// A saved trace, its profile (retry timeout from the header unless given)
/// and a connection: what `replay` and `shrink` start from.
fn open_trace(file: &Path, t: &TargetArgs) -> Result<(trace::Trace, Profile, Connection), i32> {
    let tr = read_trace(file)?;
    let p = profile(t, Some(tr.header.retry_timeout())).map_err(|e| fail(BAD_INPUT, e))?;
    let c = connect(t, &p)?;
    Ok((tr, p, c))
}

fn serve_cmd(a: ServeArgs) -> i32 {
    if a.list_mutants {
        for m in serve::mutant_names() {
            say!("{m:<26} {}", serve::mutant_description(m));
        }
        return OK;
    }
    if !a.bind.is_loopback() {
        return fail(
            BAD_INPUT,
            format!(
                "--bind {}: the reference server binds loopback addresses only",
                a.bind
            ),
        );
    }
    let opts = ServeOptions {
        port: a.port,
        bind: a.bind,
        retry_timeout: a.retry_timeout,
        materialize: a.materialize,
        mutant: a.mutant,
    };
    match serve::run_blocking(opts) {
        Ok(()) => OK,
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => fail(BAD_INPUT, e),
        Err(e) => fail(
            BAD_INPUT,
            format!("cannot serve on {}:{}: {e}", a.bind, a.port),
        ),
    }
}

fn run_cmd(a: RunArgs) -> i32 {
    if let Err(c) = check_target_flag(&a.target) {
        return c;
    }
    let p = match profile(&a.target, None) {
        Ok(p) => p,
        Err(e) => return fail(BAD_INPUT, e),
    };
    let (url, _embedded) = match target_url(&a.target, &p) {
        Ok(x) => x,
        Err(e) => return fail(TARGET_FAULT, e),
    };
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    let cfg = RunConfig {
        target: url,
        embedded: a.target.target.is_none(),
        seed,
        cases: a.cases,
        only_case: a.case,
        steps: a.steps,
        profile: p,
        profile_path: a.target.profile.clone(),
        check_state: !a.target.no_state,
        fail_fast: a.fail_fast,
        out_dir: a.out_dir,
        request_timeout: Duration::from_millis(a.target.timeout_ms),
        shrink: !a.no_shrink,
        shrink_time: Duration::from_secs(a.shrink_time),
        progress: !a.no_progress,
    };
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "conform {} (spec {}) run: seed {} cases {} steps {} target {} profile {} retry-timeout {} state {} shrink {} timeout-ms {} fail-fast {} out-dir {}",
        env!("CARGO_PKG_VERSION"),
        model::SPEC_COMMIT,
        cfg.seed,
        cfg.only_case.map_or(cfg.cases.to_string(), |c| format!("#{c}")),
        cfg.steps,
        if cfg.embedded { format!("{} (embedded)", cfg.target) } else { cfg.target.clone() },
        cfg.profile.name,
        cfg.profile.retry_timeout,
        if cfg.check_state { "on" } else { "off" },
        if cfg.shrink { format!("{}s", a.shrink_time) } else { "off".into() },
        cfg.request_timeout.as_millis(),
        if cfg.fail_fast { "on" } else { "off" },
        cfg.out_dir.display(),
    );
    let summary = run::run(&cfg, &mut out);
    run::print_summary(&summary, &mut out);
    if summary.divergences + summary.faults > 0 {
        let _ = writeln!(out, "reproduce the run: {}", cfg.run_command(None));
    }
    write_reports(&summary, a.junit.as_deref(), a.report.as_deref());
    run::exit_code(&summary)
}

fn write_reports(s: &Summary, junit: Option<&Path>, json: Option<&Path>) {
    if let Some(p) = junit {
        if let Err(e) = report::write_junit(p, s) {
            eprintln!("error: cannot write {}: {e}", p.display());
        }
    }
    if let Some(p) = json {
        if let Err(e) = report::write_json(p, s) {
            eprintln!("error: cannot write {}: {e}", p.display());
        }
    }
}

/// Read a trace, mapping a malformed file to exit code 2.
fn read_trace(path: &Path) -> Result<trace::Trace, i32> {
    trace::read(path).map_err(|e| {
        if e.line == 0 {
            fail(
                BAD_INPUT,
                format!("cannot read trace {}: {}", e.file, e.message),
            )
        } else {
            fail(BAD_INPUT, format!("malformed trace: {e}"))
        }
    })
}

fn check_state(t: &TargetArgs, header: &trace::Header) -> bool {
    !t.no_state
        && header
            .options
            .get("checkState")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(true)
}

fn replay_cmd(a: ReplayArgs) -> i32 {
    // `conn` owns the embedded server, if any: it must live to the end.
    let (t, p, mut conn) = match open_trace(&a.file, &a.target) {
        Ok(x) => x,
        Err(c) => return c,
    };
    let (target, url) = (&mut conn.target, conn.url.clone());
    let mut checker = Checker::new(p);
    let ex = execute(
        target,
        &mut checker,
        &t.steps(),
        ExecOptions {
            check_state: check_state(&a.target, &t.header),
        },
    );
    let embedded = if a.target.target.is_none() {
        " (embedded reference server)"
    } else {
        ""
    };
    say!(
        "replay {} ({} steps) against {url}{embedded}",
        a.file.display(),
        t.lines.len()
    );
    if t.header.spec != model::SPEC_COMMIT {
        say!(
            "note: recorded against spec {}, this model is spec {}",
            t.header.spec,
            model::SPEC_COMMIT
        );
    }
    if let Some(e) = ex.fault {
        return fail(TARGET_FAULT, format!("{e} (at step {})", ex.lines.len()));
    }
    match ex.divergence {
        Some((i, d)) => {
            say!(
                "DIVERGENCE at step {} of {}: {}",
                i + 1,
                t.lines.len(),
                d.class
            );
            say_raw!("{}", runner::render::divergence(&ex.lines[i], &d));
            DIVERGED
        }
        None => {
            say!(
                "no divergence: {} steps, {} explained by latitude",
                ex.lines.len(),
                ex.latitude
            );
            OK
        }
    }
}

fn shrink_cmd(a: ShrinkArgs) -> i32 {
    // `conn` owns the embedded server, if any: it must live to the end.
    let (t, p, mut conn) = match open_trace(&a.file, &a.target) {
        Ok(x) => x,
        Err(c) => return c,
    };
    let (target, url) = (&mut conn.target, conn.url.clone());
    let state = check_state(&a.target, &t.header);
    let mut checker = Checker::new(p.clone());
    let first = execute(
        target,
        &mut checker,
        &t.steps(),
        ExecOptions { check_state: state },
    );
    if let Some(e) = first.fault {
        return fail(TARGET_FAULT, e);
    }
    let Some((_, d)) = first.divergence else {
        say!(
            "{} does not diverge against {url}: nothing to shrink",
            a.file.display()
        );
        if a.target.target.is_none() {
            let hint = t
                .header
                .target
                .as_deref()
                .unwrap_or("the server it diverged against");
            say!("(no --target: that was the embedded reference server; the trace was recorded against {hint})");
        }
        return OK;
    };
    say!(
        "shrinking {} ({} steps, {}) against {url}",
        a.file.display(),
        t.lines.len(),
        d.class
    );
    let mut out = std::io::stdout();
    let opts = ShrinkOptions {
        check_state: state,
        time: Duration::from_secs(a.shrink_time),
        verbose: false,
    };
    let r = shrink(target, &p, &t.steps(), &d.class, &opts, &mut out);
    let Some(best) = r.best else {
        return fail(TARGET_FAULT, "the trace stopped diverging the same way while shrinking (is the target deterministic?)");
    };
    let path = a.out.unwrap_or_else(|| shrunk_path(&a.file));
    let mut h = t.header.clone();
    h.options.insert(
        "shrunkFrom".into(),
        serde_json::json!(a.file.display().to_string()),
    );
    if let Err(e) = trace::write(
        &path,
        &trace::Trace {
            header: h,
            lines: best.lines.clone(),
        },
    ) {
        return fail(BAD_INPUT, format!("cannot write {}: {e}", path.display()));
    }
    say!(
        "shrunk {} → {} steps in {:.1}s ({} candidates{}): {}",
        t.lines.len(),
        best.lines.len(),
        r.elapsed.as_secs_f64(),
        r.tried,
        if r.timed_out {
            ", time budget reached"
        } else {
            ""
        },
        path.display()
    );
    if let Some((i, d)) = &best.divergence {
        say_raw!("{}", runner::render::divergence(&best.lines[*i], d));
    }
    let target_flag = a
        .target
        .target
        .as_ref()
        .map(|u| format!(" --target {u}"))
        .unwrap_or_default();
    say!(
        "replay: {} replay {}{target_flag}",
        run::program(),
        path.display()
    );
    DIVERGED
}

fn shrunk_path(original: &Path) -> PathBuf {
    let stem = original
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    original.with_file_name(format!("{stem}.shrunk.ndjson"))
}

fn golden_cmd(a: GoldenArgs) -> i32 {
    let opts = golden::GoldenOptions {
        seed: a.seed,
        count: a.count,
        steps: a.steps,
        with_state: a.with_state,
        retry_timeout: a.retry_timeout,
    };
    let existing = golden::existing(&a.out);
    if !existing.is_empty() && !a.bless {
        return fail(
            BAD_INPUT,
            format!(
                "{} already holds {} golden files; pass --bless to replace them (review with git diff), or choose another --out",
                a.out.display(),
                existing.len()
            ),
        );
    }
    let files = golden::build(&opts);
    if let Err(e) = golden::write(&a.out, &files) {
        return fail(BAD_INPUT, format!("cannot write {}: {e}", a.out.display()));
    }
    let traces: Vec<_> = files.iter().map(|f| f.trace.clone()).collect();
    let (hit, missed) = golden::coverage(&traces);
    let reachable = model::branch::ALL.iter().filter(|b| b.reachable()).count();
    let steps: usize = traces.iter().map(|t| t.lines.len()).sum();
    say!(
        "wrote {} golden files ({steps} steps) to {}",
        files.len(),
        a.out.display()
    );
    say!(
        "branch coverage: {}/{reachable} reachable",
        hit.iter().filter(|b| b.reachable()).count()
    );
    if !missed.is_empty() {
        say!(
            "missed: {}",
            missed
                .iter()
                .map(|b| b.name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    OK
}

fn check_cmd(a: CheckArgs) -> i32 {
    let p = match profile(&a.target, None) {
        Ok(p) => p,
        Err(e) => return fail(BAD_INPUT, e),
    };
    let files = match verify::golden_files(&a.path) {
        Ok(f) if !f.is_empty() => f,
        Ok(_) => {
            return fail(
                BAD_INPUT,
                format!("no .ndjson files in {}", a.path.display()),
            )
        }
        Err(e) => return fail(BAD_INPUT, format!("{}: {e}", a.path.display())),
    };
    // `conn` owns the embedded server, if any: it must live to the end.
    let mut conn = match connect(&a.target, &p) {
        Ok(c) => c,
        Err(c) => return c,
    };
    let (target, url) = (&mut conn.target, conn.url.clone());
    say!(
        "conform {} check {} ({} files) against {url}",
        env!("CARGO_PKG_VERSION"),
        a.path.display(),
        files.len()
    );
    let started = std::time::Instant::now();
    let mut out = std::io::stdout();
    let reports = match verify::check_all(target, &files, &p, !a.target.no_state, &mut out) {
        Ok(r) => r,
        Err(e) => return fail(BAD_INPUT, format!("malformed trace: {e}")),
    };
    let summary = Summary::new(0, &url, &p.name, reports, started.elapsed());
    say!(
        "{} files, {} passed, {} failed, {} target faults",
        summary.cases,
        summary.cases - summary.divergences - summary.faults,
        summary.divergences,
        summary.faults
    );
    write_reports(&summary, a.junit.as_deref(), a.report.as_deref());
    run::exit_code(&summary)
}

fn export_cmd(a: ExportArgs) -> i32 {
    let t = match read_trace(&a.file) {
        Ok(t) => t,
        Err(c) => return c,
    };
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
    match result {
        Ok(n) => {
            if let Some(p) = &a.out {
                eprintln!("wrote {n} lines to {}", p.display());
            }
            OK
        }
        Err(e) => fail(BAD_INPUT, e),
    }
}
