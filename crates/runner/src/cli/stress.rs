//! `conform stress` and `conform check-history`: parse, call
//! [`runner::stress::run`] or [`runner::lin::check`], print, map the verdict.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use deviate::Deviant;
use model::state::ServerConfig;
use runner::baseline::Baseline;
use runner::lin::{self, history, report, LinOptions, Stats, Verdict as LinVerdict};
use runner::profile::Profile;
use runner::report::Verdict;
use runner::stress::process::ServerProcess;
use runner::stress::replay::Replayed;
use runner::stress::{self, StressConfig, StressVerdict};

use super::args::{CheckHistoryArgs, RacesArgs, ReplayHistoryArgs, StressArgs};
use super::commands::{random_seed, setup, Recorded};
use super::error::{bad, fault, Failure};

macro_rules! say {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

pub(super) fn stress_cmd(a: StressArgs) -> Result<Verdict, Failure> {
    let mut s = setup(&a.target, &Recorded::default())?;
    let seed = a.seed.unwrap_or_else(random_seed);
    let cfg = StressConfig {
        reach: s.reach.clone(),
        target: s.url.clone(),
        seed,
        clients: a.clients as usize,
        epochs: a.epochs as usize,
        ops: a.ops as usize,
        rival_pct: a.rival_pct,
        profile: s.profile.clone(),
        deviations: s.deviations.clone(),
        lin: LinOptions {
            budget: a.search_budget,
            ..LinOptions::default()
        },
        out_dir: a.out_dir,
        shrink: !a.no_shrink,
        shrink_time: Duration::from_secs(a.shrink_time),
        shrink_reruns: (a.shrink_reruns > 0).then_some(a.shrink_reruns as usize),
        attempts: a.attempts as usize,
        crash_pct: a.crash_pct,
        server_cmd: a.server_cmd.clone(),
    };
    let mut process = match &a.server_cmd {
        Some(cmd) => {
            let url = a.target.target.as_deref().ok_or_else(|| {
                bad("--server-cmd needs --target: the address the server listens on")
            })?;
            Some(ServerProcess::start(cmd, url).map_err(fault)?)
        }
        None => None,
    };
    if a.crash_pct > 0 && process.is_none() {
        return Err(bad(
            "--crash-pct needs --server-cmd: the harness must own the process to crash it",
        ));
    }
    say!(
        "conform {} (spec {}) stress: seed {} clients {} epochs {} ops {} rival-pct {} crash-pct {} target {} profile {} baseline {} retry-timeout {} state {} shrink {} attempts {} search-budget {} out-dir {}",
        env!("CARGO_PKG_VERSION"),
        model::SPEC_COMMIT,
        cfg.seed,
        cfg.clients,
        cfg.epochs,
        cfg.ops,
        cfg.rival_pct,
        cfg.crash_pct,
        if s.reach.target.is_none() { format!("{} (embedded)", cfg.target) } else { cfg.target.clone() },
        cfg.profile.name,
        s.baseline.as_ref().map_or("none", |b| b.name.as_str()),
        cfg.profile.retry_timeout,
        if cfg.reach.check_state { "on" } else { "off" },
        if cfg.shrink { format!("{}s/{} re-runs", a.shrink_time, a.shrink_reruns) } else { "off".into() },
        cfg.attempts,
        cfg.lin.budget,
        cfg.out_dir.display(),
    );
    let mut out = std::io::stdout();
    if process.is_some() && a.crash_pct > 0 && !cfg.profile.durable {
        say!(
            "crash faults off: profile {} does not claim durability (its state lives in memory)",
            cfg.profile.name
        );
    }
    let o = stress::run(&cfg, &mut s.target, process.as_mut(), &mut out);
    if let Some(p) = &process {
        say!(
            "crashes injected: {} (each a SIGKILL and a restart)",
            p.restarts
        );
    }
    print_stats(&o.stats, o.checking_us);
    say!(
        "sent {} operations in {:.2} s ({:.0} ops/s); checked in {:.2} s",
        o.ops,
        o.sending_us as f64 / 1e6,
        o.ops as f64 / (o.sending_us.max(1) as f64 / 1e6),
        o.checking_us as f64 / 1e6
    );
    Ok(match o.verdict {
        StressVerdict::Linearizable => {
            say!("green: every epoch linearizable");
            Verdict::Clean
        }
        StressVerdict::NotLinearizable { file, shrunk } => {
            say!(
                "history saved: {} (timeline: {})",
                file.display(),
                file.with_extension("html").display()
            );
            let shown = shrunk.as_ref().unwrap_or(&file);
            say!(
                "check it again offline: {} check-history {}{}",
                runner::repro::program(),
                shown.display(),
                profile_flags(&cfg)
            );
            say!(
                "replay it against the target: {}",
                cfg.replay_command(shown)
            );
            say!("reproduce the run: {}", cfg.rerun_command());
            say!("not linearizable: {}", shown.display());
            Verdict::Diverged
        }
        StressVerdict::Undecided(why) => {
            say!("reproduce the run: {}", cfg.rerun_command());
            say!("undecided (not green): {why}");
            Verdict::Diverged
        }
        StressVerdict::Fault(e, file) => {
            eprintln!("error: {e}");
            if let Some(f) = file {
                eprintln!("history so far saved: {}", f.display());
            }
            Verdict::Fault
        }
    })
}

fn profile_flags(cfg: &StressConfig) -> String {
    let mut f = String::new();
    if let Some(p) = &cfg.reach.profile {
        f.push_str(&format!(" --profile {p}"));
    }
    if let Some(b) = &cfg.reach.baseline {
        f.push_str(&format!(" --baseline {b}"));
    }
    f
}

fn print_stats(st: &Stats, checking_us: u64) {
    say!(
        "epochs {} · operations {} ({} indeterminate) · crashes {} · widest epoch {} · pinned epochs {} · components {} ({} epochs split, largest {}) · configurations explored {} (memo hits {}) · most carried {} · {:.0} ops/s checked",
        st.epochs,
        st.ops,
        st.indeterminate,
        st.crashes,
        st.widest_epoch,
        st.pinned_epochs,
        st.components,
        st.split_epochs,
        st.largest_component,
        st.nodes,
        st.memo_hits,
        st.most_configs,
        st.ops as f64 / (checking_us.max(1) as f64 / 1e6)
    );
}

/// Read a history file; a malformed one is bad input naming `FILE:LINE`.
fn read_history(file: &Path) -> Result<history::History, Failure> {
    let text =
        std::fs::read_to_string(file).map_err(|e| bad(format!("{}: {e}", file.display())))?;
    history::parse(&text).map_err(|e| {
        bad(format!(
            "malformed history {}:{}: {}",
            file.display(),
            e.line,
            e.message
        ))
    })
}

/// The profile a history's header names, when it is a built-in one.
fn header_profile(h: &history::History) -> Option<&str> {
    h.header
        .options
        .get("profile")
        .and_then(|v| v.as_str())
        .filter(|p| runner::profile::BUILT_IN.iter().any(|(n, _)| n == p))
}

pub(super) fn check_history_cmd(a: CheckHistoryArgs) -> Result<Verdict, Failure> {
    let h = read_history(&a.file)?;
    let mut profile = match a.profile.as_deref().or(header_profile(&h)) {
        Some(p) => Profile::load(p).map_err(bad)?,
        None => Profile::default(),
    };
    profile.retry_timeout = a.retry_timeout.unwrap_or_else(|| h.header.retry_timeout());
    let header_baseline = h.header.options.get("baseline").and_then(|v| v.as_str());
    let deviations = match a.baseline.as_deref().or(header_baseline) {
        Some(b) => Baseline::load(b).map_err(bad)?.1,
        None => Vec::new(),
    };
    let model = Deviant::new(
        ServerConfig {
            retry_timeout: profile.retry_timeout,
        },
        deviations,
    );
    let opts = LinOptions {
        budget: a.search_budget,
        ..LinOptions::default()
    };
    say!(
        "conform {} (spec {}) check-history {}: {} clients, {} epochs, {} operations, profile {} retry-timeout {}",
        env!("CARGO_PKG_VERSION"),
        model::SPEC_COMMIT,
        a.file.display(),
        h.header.clients,
        h.epochs.len(),
        h.len(),
        profile.name,
        profile.retry_timeout
    );
    let started = std::time::Instant::now();
    let checked = lin::check(&h, model, &profile.skip_components, opts);
    let us = started.elapsed().as_micros() as u64;
    print_stats(&checked.stats, us);
    say!("checked in {:.3} s", us as f64 / 1e6);
    Ok(match checked.verdict {
        LinVerdict::Linearizable => {
            say!("green: every epoch linearizable");
            Verdict::Clean
        }
        LinVerdict::NotLinearizable(f) => {
            say!("{}", report::render(&f));
            let page = stress::html::write_beside(&a.file, &h, Some(&f));
            if let Ok(p) = page {
                say!("timeline: {}", p.display());
            }
            say!("not linearizable: epoch {}", f.epoch);
            Verdict::Diverged
        }
        LinVerdict::Undecided { epoch, why } => {
            say!("undecided (not green): epoch {epoch}: {why}");
            Verdict::Diverged
        }
    })
}

pub(super) fn races_cmd(a: RacesArgs) -> Result<Verdict, Failure> {
    // A name that is no bug is a typo, not a bug nobody found.
    runner::serve::races::resolve(&a.race).map_err(bad)?;
    runner::serve::durability::Bugs::resolve(&a.durability_bug).map_err(bad)?;
    let conform = std::env::current_exe().map_err(|e| {
        bad(format!(
            "cannot find this binary to serve the durability bugs: {e}"
        ))
    })?;
    let o = stress::hunt::HuntOptions {
        runs: a.runs,
        epochs: a.epochs as usize,
        clients: a.clients as usize,
        shrink_time: Duration::from_secs(a.shrink_time),
        shrink_reruns: (a.shrink_reruns > 0).then_some(a.shrink_reruns as usize),
        shrink_goal: (a.shrink_goal > 0).then_some(a.shrink_goal as usize),
        out_dir: a.out_dir,
        conform,
        race_window: Duration::from_millis(a.race_window_ms),
        search_budget: a.search_budget,
    };
    say!(
        "conform {} races: runs {} epochs {} clients {} shrink-time {}s shrink-reruns {} shrink-goal {} search-budget {}",
        env!("CARGO_PKG_VERSION"),
        o.runs,
        o.epochs,
        o.clients,
        a.shrink_time,
        a.shrink_reruns,
        a.shrink_goal,
        o.search_budget
    );
    let mut out = std::io::stdout();
    let only_durability = a.race.is_empty() && !a.durability_bug.is_empty();
    let only_races = !a.race.is_empty() && a.durability_bug.is_empty();
    let mut rows = Vec::new();
    if !only_durability {
        rows.extend(stress::hunt::hunt_races(&a.race, &o, &mut out));
    }
    if !only_races {
        rows.extend(stress::hunt::hunt_durability(
            &a.durability_bug,
            &o,
            &mut out,
        ));
    }
    say!("{}", stress::hunt::table(&rows));
    let missed = rows.iter().filter(|r| !r.found).count();
    say!("{} of {} found", rows.len() - missed, rows.len());
    Ok(if missed == 0 {
        Verdict::Clean
    } else {
        Verdict::Diverged
    })
}

pub(super) fn replay_history_cmd(a: ReplayHistoryArgs) -> Result<Verdict, Failure> {
    let h = read_history(&a.file)?;
    let mut t = a.target.clone();
    t.profile = t.profile.or(header_profile(&h).map(str::to_string));
    t.baseline = t.baseline.or(h
        .header
        .options
        .get("baseline")
        .and_then(|v| v.as_str())
        .map(str::to_string));
    let check_state = h
        .header
        .options
        .get("checkState")
        .and_then(|v| v.as_bool())
        .unwrap_or(true);
    let recorded = Recorded::history(&a.file, h.header.retry_timeout(), check_state);
    let mut s = setup(&t, &recorded)?;
    let mut cfg = StressConfig::new(&s.url, s.profile.clone(), s.deviations.clone());
    cfg.reach = s.reach.clone();
    cfg.seed = h.header.seed.unwrap_or(0);
    cfg.clients = h.header.clients;
    cfg.attempts = a.attempts as usize;
    cfg.out_dir = a.out_dir;
    cfg.server_cmd = a.server_cmd.clone();
    cfg.lin.budget = a.search_budget;
    let crashes = h.epochs.iter().any(|e| e.crashed);
    let mut process =
        match &a.server_cmd {
            Some(cmd) => {
                let url = t.target.as_deref().ok_or_else(|| {
                    bad("--server-cmd needs --target: the address the server listens on")
                })?;
                Some(ServerProcess::start(cmd, url).map_err(fault)?)
            }
            None if crashes => return Err(bad(
                "this history crashed its target: replaying it needs --server-cmd (and --target)",
            )),
            None => None,
        };
    say!(
        "conform {} (spec {}) replay-history {}: {} clients, {} epochs, {} operations, target {} profile {} retry-timeout {} attempts {}",
        env!("CARGO_PKG_VERSION"),
        model::SPEC_COMMIT,
        a.file.display(),
        h.header.clients,
        h.epochs.len(),
        h.len(),
        s.url,
        cfg.profile.name,
        cfg.profile.retry_timeout,
        cfg.attempts
    );
    let mut out = std::io::stdout();
    let r = stress::replay::replay(&cfg, &mut s.target, process.as_mut(), &h, &mut out);
    Ok(match r {
        Replayed::Reproduced { attempt, file, .. } => {
            say!(
                "history saved: {} (timeline: {})",
                file.display(),
                file.with_extension("html").display()
            );
            say!("not linearizable at attempt {attempt}: {}", file.display());
            Verdict::Diverged
        }
        Replayed::NotReproduced { attempts } => {
            say!("green: linearizable in each of {attempts} re-runs");
            Verdict::Clean
        }
        Replayed::Undecided(why) => {
            say!("undecided (not green): {why}");
            Verdict::Diverged
        }
        Replayed::Fault(e) => {
            eprintln!("error: {e}");
            Verdict::Fault
        }
    })
}
