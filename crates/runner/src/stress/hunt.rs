//! Hunting the planted concurrency bugs: each race of the reference
//! server (`serve::races`) and each durability bug of its persistent mode
//! (`serve::durability`) in turn, with the concurrent run's defaults, as
//! `conform mutants` hunts the sequential catalogue. A bug is found when a
//! run ends in a history no order explains; the figures are the operations
//! sent until then, the seconds, and the size of the shrunk history.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::process::ServerProcess;
use super::{run, StressConfig, StressVerdict};
use crate::lin::history;
use crate::profile::Profile;
use crate::serve::{self, durability, races, ServeOptions};
use crate::target::HttpTarget;

/// The hunt's default [`HuntOptions::search_budget`]: a tenth of the
/// concurrent run's own ([`crate::lin::LinOptions`]). A race's failing
/// epoch is refuted within it; what needs more is left undecided and the
/// next seed tried, rather than spending many minutes in one search.
pub const SEARCH_BUDGET: u64 = 200_000;

/// The default re-runs of a shrink ([`HuntOptions::shrink_reruns`],
/// `conform stress --shrink-reruns`): what a shrink may spend is counted
/// in re-runs, so a loaded machine gets as many re-runs as an idle one,
/// only slower (each re-run's outcome still depends on timing; the time
/// is a ceiling above it).
pub const SHRINK_RERUNS: usize = 1_000;

/// How a planted concurrency bug fared.
#[derive(Clone, Debug, PartialEq)]
pub struct Hunted {
    /// The bug's name.
    pub name: String,
    /// Its Lean line (a race), or the property it breaks (a durability bug).
    pub spec: String,
    /// Whether a run found it.
    pub found: bool,
    /// The seed of the run that found it.
    pub seed: u64,
    /// Operations sent until it was found (all runs).
    pub ops: usize,
    /// Seconds until it was found.
    pub secs: f64,
    /// Operations in the smallest shrunk history (prefix and concurrent
    /// epoch).
    pub shrunk_ops: Option<usize>,
    /// The seed of the run whose shrink that history is: with a shrink
    /// goal ([`HuntOptions::shrink_goal`]) a later seed than the first
    /// find's may give it.
    pub shrunk_seed: Option<u64>,
    /// Clients the shrunk history's concurrent epoch uses.
    pub shrunk_clients: Option<usize>,
}

/// Hunt options.
#[derive(Clone, Debug)]
pub struct HuntOptions {
    /// Runs per bug (seeds from 1), each of `epochs` epochs.
    pub runs: u64,
    /// Epochs per run.
    pub epochs: usize,
    /// Clients.
    pub clients: usize,
    /// Time ceiling of each found bug's shrink.
    pub shrink_time: Duration,
    /// Re-runs each shrink may make (`None`: only `shrink_time` bounds it).
    pub shrink_reruns: Option<usize>,
    /// Operations a shrunk history should come down to: a shrink that
    /// stops above it (its re-runs on a loaded machine seldom showed the
    /// race again, so few candidates could be kept) sends the hunt on to
    /// the next seeds for a smaller one, the smallest kept (`None`: the
    /// first shrunk history ends the hunt).
    pub shrink_goal: Option<usize>,
    /// Where histories go.
    pub out_dir: PathBuf,
    /// The `conform` binary, for the durability bugs' server processes.
    pub conform: PathBuf,
    /// The window between a racy handler's check and its write: wider
    /// windows show a race in more interleavings (and make its shrink's
    /// re-runs reproduce it more often).
    pub race_window: Duration,
    /// Configurations one epoch's check may explore
    /// ([`crate::lin::LinOptions::budget`]): a history the search cannot
    /// decide within it is undecided, never found, and the hunt moves on
    /// to the next seed, so a hunt's time stays bounded on a slow machine.
    pub search_budget: u64,
}

/// Hunt every race (or those named).
pub fn hunt_races(names: &[String], o: &HuntOptions, out: &mut dyn Write) -> Vec<Hunted> {
    races::all()
        .filter(|r| names.is_empty() || names.iter().any(|n| n == r.name))
        .map(|r| {
            let server = serve::spawn(ServeOptions {
                races: vec![r.name.to_string()],
                race_window: o.race_window,
                ..ServeOptions::default()
            });
            match server {
                Ok(server) => {
                    let url = server.url();
                    hunt_one(r.name, r.spec, &url, None, 0, o, out)
                }
                Err(e) => {
                    let _ = writeln!(out, "{}: could not serve: {e}", r.name);
                    not_found(r.name, r.spec)
                }
            }
        })
        .collect()
}

/// Hunt every durability bug (or those named): `conform serve --log` with
/// the bug, crashed and restarted by the run.
pub fn hunt_durability(names: &[String], o: &HuntOptions, out: &mut dyn Write) -> Vec<Hunted> {
    durability::ALL
        .iter()
        .filter(|b| names.is_empty() || names.iter().any(|n| n == b.name))
        .map(|b| {
            let dir = o
                .out_dir
                .join(format!("log-{}-{}", b.name, std::process::id()));
            let _ = std::fs::create_dir_all(&dir);
            let port = match free_port() {
                Ok(p) => p,
                Err(e) => {
                    let _ = writeln!(out, "{}: no port: {e}", b.name);
                    return not_found(b.name, b.breaks);
                }
            };
            let url = format!("http://127.0.0.1:{port}");
            let cmd = format!(
                "{} serve --port {port} --log {} --durability-bug {}",
                o.conform.display(),
                dir.join("server.log").display(),
                b.name
            );
            hunt_one(b.name, b.breaks, &url, Some(&cmd), 20, o, out)
        })
        .collect()
}

fn not_found(name: &str, spec: &str) -> Hunted {
    Hunted {
        name: name.to_string(),
        spec: spec.to_string(),
        found: false,
        seed: 0,
        ops: 0,
        secs: 0.0,
        shrunk_ops: None,
        shrunk_seed: None,
        shrunk_clients: None,
    }
}

fn free_port() -> std::io::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

fn hunt_one(
    name: &str,
    spec: &str,
    url: &str,
    server_cmd: Option<&str>,
    crash_pct: u64,
    o: &HuntOptions,
    out: &mut dyn Write,
) -> Hunted {
    let started = Instant::now();
    let mut h = not_found(name, spec);
    let mut process = match server_cmd.map(|c| ServerProcess::start(c, url)) {
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => {
            let _ = writeln!(out, "{name}: {e}");
            return h;
        }
        None => None,
    };
    for seed in 1..=o.runs {
        let Ok(mut target) = HttpTarget::new(url, Duration::from_secs(5)) else {
            break;
        };
        let mut cfg = StressConfig::new(url, Profile::default(), Vec::new());
        cfg.seed = seed;
        cfg.clients = o.clients;
        cfg.epochs = o.epochs;
        cfg.out_dir = o.out_dir.clone();
        cfg.shrink_time = o.shrink_time;
        cfg.shrink_reruns = o.shrink_reruns;
        cfg.crash_pct = crash_pct;
        cfg.lin.budget = o.search_budget;
        cfg.server_cmd = server_cmd.map(str::to_string);
        let mut log = Vec::new();
        let r = run(&cfg, &mut target, process.as_mut(), &mut log);
        // The shrink's verdict (its size, or why it kept the whole
        // history) says why a found bug was not shrunk; the run's report
        // is in the saved history.
        for line in String::from_utf8_lossy(&log)
            .lines()
            .filter(|l| l.starts_with("shrink") || l.starts_with("shrunk"))
        {
            let _ = writeln!(out, "{name} (seed {seed}): {line}");
        }
        if !h.found {
            h.ops += r.ops;
        }
        if let StressVerdict::NotLinearizable { shrunk, .. } = r.verdict {
            // The first find is the row's (its seed, steps and time); a
            // find whose failing epoch did not show again when re-run (a
            // race shows in some interleavings only) is not shrunk, and
            // the next seeds are tried for one that is; so is a shrink
            // that stopped above the goal, the smallest history kept.
            if !h.found {
                h.found = true;
                h.seed = seed;
                h.secs = started.elapsed().as_secs_f64();
            }
            if let Some((ops, clients)) = shrunk.as_deref().and_then(size_of) {
                if h.shrunk_ops.is_none_or(|best| ops < best) {
                    h.shrunk_ops = Some(ops);
                    h.shrunk_clients = Some(clients);
                    h.shrunk_seed = Some(seed);
                }
                if o.shrink_goal.is_none_or(|goal| ops <= goal) {
                    break;
                }
            }
        }
    }
    if !h.found {
        h.secs = started.elapsed().as_secs_f64();
    }
    h
}

/// Operations of a saved history and the clients of its last epoch.
fn size_of(path: &Path) -> Option<(usize, usize)> {
    let h = history::parse(&std::fs::read_to_string(path).ok()?).ok()?;
    let last = h.epochs.last()?;
    let mut clients: Vec<usize> = last.ops.iter().map(|o| o.client).collect();
    clients.sort_unstable();
    clients.dedup();
    Some((h.len(), clients.len()))
}

/// The table of a hunt.
pub fn table(rows: &[Hunted]) -> String {
    let mut s = format!(
        "{:<32} {:<48} {:>6} {:>5} {:>7} {:>7} {:>8}\n",
        "bug", "Lean line or property", "found", "seed", "ops", "secs", "shrunk"
    );
    for r in rows {
        s.push_str(&format!(
            "{:<32} {:<48} {:>6} {:>5} {:>7} {:>7.2} {:>8}\n",
            r.name,
            r.spec,
            if r.found { "yes" } else { "NO" },
            if r.found {
                r.seed.to_string()
            } else {
                "-".into()
            },
            r.ops,
            r.secs,
            r.shrunk_ops.map_or("-".into(), |n| format!(
                "{n} ops/{}c{}",
                r.shrunk_clients.unwrap_or(0),
                // The seed of the history, where it is not the find's.
                r.shrunk_seed
                    .filter(|s| *s != r.seed)
                    .map_or(String::new(), |s| format!(" s{s}"))
            )),
        ));
    }
    s
}
