//! `conform stress`: many clients drive one target at once, epoch by epoch
//! (ARCHITECTURE.md, "The concurrent run"); each epoch's history is checked
//! for linearizability against the model as soon as its barrier is read
//! ([`crate::lin`]), and the next epoch is generated from the state found.
//! A history no order explains is saved (NDJSON and an HTML timeline),
//! shrunk by re-running ([`shrink`]), and printed with the commands that
//! check it again offline and replay it against the target.

mod clients;
pub mod html;
pub mod hunt;
pub mod process;
pub mod replay;
pub mod scenario;
pub mod shrink;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use deviate::{Deviant, Deviation};
use gen::epoch::{plan, EpochConfig};
use gen::{GenConfig, Generator};
use model::state::ServerConfig;
use serde_json::{json, Map};

use crate::lin::history::{Barrier, Epoch, Fault, History, HistoryHeader, FORMAT};
use crate::lin::shown::Recorder;
use crate::lin::{report, LinOptions, Linearizer, Stats, Verdict};
use crate::profile::Profile;
use crate::repro::Reach;
use crate::target::{Client, Target, TargetError};

pub use clients::{Clock, Pace, Sending};

/// The first `now` of a concurrent run: 2100-01-01. Far past the wall
/// clock, so a restarted server that runs its background loops on the wall
/// clock until it hears `debug.start` finds nothing due; fixed, so a seed
/// names the same run on every day.
pub const START: u64 = 4_102_444_800_000;

/// Everything `conform stress` was asked.
#[derive(Clone, Debug)]
pub struct StressConfig {
    /// How printed commands reach the target again.
    pub reach: Reach,
    /// The target's URL, for the history header.
    pub target: String,
    /// Run seed.
    pub seed: u64,
    /// Clients at once.
    pub clients: usize,
    /// Epochs.
    pub epochs: usize,
    /// The generator's steps per epoch (rivals on top).
    pub ops: usize,
    /// Percent of steps joined by a rival.
    pub rival_pct: u64,
    /// The target's profile.
    pub profile: Profile,
    /// The baseline's deviations, applied to the model.
    pub deviations: Vec<&'static Deviation>,
    /// Search limits.
    pub lin: LinOptions,
    /// Where failing histories go.
    pub out_dir: PathBuf,
    /// Shrink a failing history by re-running it.
    pub shrink: bool,
    /// Time ceiling of the shrink.
    pub shrink_time: Duration,
    /// Re-runs the shrink may make (each attempt of each candidate is one):
    /// the budget that does not depend on the machine's load (`None`: only
    /// `shrink_time` bounds it).
    pub shrink_reruns: Option<usize>,
    /// Attempts per candidate when re-running (races are timing-dependent).
    pub attempts: usize,
    /// Percent of epochs in which the target is killed (SIGKILL) and
    /// restarted, when the harness owns its process and the profile says
    /// it is durable.
    pub crash_pct: u64,
    /// How the target's process is started, when the harness owns it.
    pub server_cmd: Option<String>,
}

impl StressConfig {
    /// The defaults of `conform stress` for `url` under `profile` and
    /// `deviations`: 4 clients, 100 epochs of 8 operations, 40% rivals, no
    /// crashes, a 30 s shrink with 8 attempts per candidate.
    pub fn new(url: &str, profile: Profile, deviations: Vec<&'static Deviation>) -> StressConfig {
        StressConfig {
            reach: Reach {
                target: Some(url.to_string()),
                profile: None,
                baseline: None,
                retry_timeout: profile.retry_timeout,
                timeout_ms: crate::repro::DEFAULT_TIMEOUT_MS,
                check_state: true,
                allow_remote: false,
                pipeline: crate::target::DEFAULT_PIPELINE,
            },
            target: url.to_string(),
            seed: 1,
            clients: 4,
            epochs: 100,
            ops: 8,
            rival_pct: 40,
            profile,
            deviations,
            lin: LinOptions::default(),
            out_dir: PathBuf::from("traces/failures"),
            shrink: true,
            shrink_time: Duration::from_secs(30),
            shrink_reruns: None,
            attempts: 8,
            crash_pct: 0,
            server_cmd: None,
        }
    }

    pub(crate) fn model(&self) -> Deviant {
        Deviant::new(
            ServerConfig {
                retry_timeout: self.profile.retry_timeout,
            },
            self.deviations.clone(),
        )
    }

    /// The header of the history a run with this configuration writes.
    pub fn header(&self) -> HistoryHeader {
        let mut options = Map::new();
        options.insert("retryTimeout".into(), json!(self.profile.retry_timeout));
        options.insert("checkState".into(), json!(self.reach.check_state));
        options.insert("profile".into(), json!(self.profile.name));
        if let Some(b) = &self.reach.baseline {
            options.insert("baseline".into(), json!(b));
        }
        options.insert("epochs".into(), json!(self.epochs));
        options.insert("ops".into(), json!(self.ops));
        options.insert("rivalPct".into(), json!(self.rival_pct));
        options.insert("crashPct".into(), json!(self.crash_pct));
        HistoryHeader {
            kind: "header".into(),
            format: FORMAT.into(),
            harness: format!("conform {}", env!("CARGO_PKG_VERSION")),
            spec: model::SPEC_COMMIT.into(),
            seed: Some(self.seed),
            clients: self.clients,
            target: self.target.clone(),
            options,
        }
    }

    /// The command that re-runs a saved history `file` against the
    /// target (`conform replay-history`).
    pub fn replay_command(&self, file: &Path) -> String {
        format!(
            "{} replay-history {} --attempts {}{}",
            crate::repro::program(),
            file.display(),
            self.attempts,
            self.reach.flags()
        ) + &self
            .server_cmd
            .as_ref()
            .map_or(String::new(), |c| format!(" --server-cmd '{c}'"))
    }

    /// The command that runs this stress run again.
    pub fn rerun_command(&self) -> String {
        format!(
            "{} stress --seed {} --clients {} --epochs {} --ops {} --rival-pct {} --crash-pct {}{}",
            crate::repro::program(),
            self.seed,
            self.clients,
            self.epochs,
            self.ops,
            self.rival_pct,
            self.crash_pct,
            self.reach.flags()
        ) + &self
            .server_cmd
            .as_ref()
            .map_or(String::new(), |c| format!(" --server-cmd '{c}'"))
    }
}

/// How a stress run ended.
#[derive(Debug)]
pub enum StressVerdict {
    /// Every epoch was linearizable.
    Linearizable,
    /// An epoch no order explains: the saved history and its report.
    NotLinearizable {
        /// The saved history.
        file: PathBuf,
        /// The shrunk one, if the shrink reproduced it.
        shrunk: Option<PathBuf>,
    },
    /// The search gave up.
    Undecided(String),
    /// The target failed; the history so far is saved here.
    Fault(TargetError, Option<PathBuf>),
}

/// A stress run's figures and verdict.
#[derive(Debug)]
pub struct StressOutcome {
    /// The verdict.
    pub verdict: StressVerdict,
    /// The checker's figures.
    pub stats: Stats,
    /// Operations sent.
    pub ops: usize,
    /// CPU-free wall time of the run's sending, µs.
    pub sending_us: u64,
    /// Time spent checking, µs.
    pub checking_us: u64,
    /// The history recorded.
    pub history: History,
}

/// Run the stress test against `target` (started and wiped first). With
/// `process` (the harness owns the target's process) and a durable
/// profile, `cfg.crash_pct` of the epochs crash it at a random moment.
pub fn run(
    cfg: &StressConfig,
    target: &mut dyn Target,
    process: Option<&mut process::ServerProcess>,
    out: &mut dyn Write,
) -> StressOutcome {
    let mut history = History::new(cfg.header());
    let mut o = drive(cfg, target, process, out, &mut history);
    o.history = history;
    o
}

fn drive(
    cfg: &StressConfig,
    target: &mut dyn Target,
    mut process: Option<&mut process::ServerProcess>,
    out: &mut dyn Write,
    history: &mut History,
) -> StressOutcome {
    let mut outcome = StressOutcome {
        verdict: StressVerdict::Linearizable,
        stats: Stats::default(),
        ops: 0,
        sending_us: 0,
        checking_us: 0,
        history: History::new(cfg.header()),
    };
    let fault = |e: TargetError, h: &History, cfg: &StressConfig| {
        let file = save(h, &cfg.out_dir, cfg.seed).ok();
        StressVerdict::Fault(e, file)
    };
    if let Err(e) = target.start() {
        outcome.verdict = fault(e, history, cfg);
        return outcome;
    }
    let mut clients = match target.clients(cfg.clients) {
        Ok(c) => c,
        Err(e) => {
            outcome.verdict = fault(e, history, cfg);
            return outcome;
        }
    };
    let model = cfg.model();
    let gen_cfg = GenConfig {
        retry_timeout: cfg.profile.retry_timeout,
        start: START,
        kinds: cfg.profile.kinds(),
        ..GenConfig::default()
    };
    let stepper = model.stepper();
    let mut lin = Linearizer::new(model, &cfg.profile.skip_components, cfg.lin);
    let mut g = Generator::with_stepper(cfg.seed, &gen_cfg, stepper.clone());
    // Rivals and crashes draw from a stream of their own.
    let mut rng = gen::seeded_rng(gen::case_seed(cfg.seed, u64::MAX));
    let ecfg = EpochConfig {
        clients: cfg.clients,
        ops: cfg.ops,
        rival_pct: cfg.rival_pct,
    };
    let clock = Clock::start();
    let mut rec = Recorder::default();
    let crashes = cfg.profile.durable && cfg.crash_pct > 0;
    for e in 0..cfg.epochs {
        let p = plan(&mut g, &ecfg, e == 0, &mut rng);
        let t0 = clock.micros();
        let crash = match process.as_deref_mut() {
            Some(proc_) if crashes && gen::chance(&mut rng, cfg.crash_pct) => {
                Some((proc_, gen::below(&mut rng, CRASH_WINDOW_US)))
            }
            _ => None,
        };
        let first_id = history.len();
        let sent = match crash {
            None => run_one(
                &mut clients,
                target,
                &p.queues,
                e,
                p.now,
                first_id,
                clock,
                cfg,
                &mut rec,
                Sending::AtOnce(&p.pairs),
            ),
            Some((proc_, delay)) => {
                let r = crash_one(
                    &mut clients,
                    target,
                    proc_,
                    delay,
                    &p.queues,
                    e,
                    p.now,
                    history,
                    clock,
                    cfg,
                    &mut rec,
                    Sending::AtOnce(&p.pairs),
                );
                match target.clients(cfg.clients) {
                    Ok(c) => clients = c,
                    Err(err) => {
                        outcome.verdict = fault(err, history, cfg);
                        return outcome;
                    }
                }
                r
            }
        };
        let epoch = match sent {
            Ok(epoch) => epoch,
            Err((epoch, err)) => {
                history.epochs.push(epoch);
                outcome.verdict = fault(err, history, cfg);
                outcome.stats = lin.stats.clone();
                return outcome;
            }
        };
        outcome.ops += epoch.ops.len();
        let t1 = clock.micros();
        outcome.sending_us += t1 - t0;
        let checked = lin.check_epoch(&epoch);
        outcome.checking_us += clock.micros() - t1;
        history.epochs.push(epoch);
        match checked {
            Ok(()) => {
                let m = (**lin.model()).clone();
                // Each epoch's generator its own dice, named by seed and epoch.
                let seed = gen::case_seed(cfg.seed, e as u64);
                g = Generator::resume(m, p.now, &gen_cfg, &stepper, seed);
            }
            Err(Verdict::NotLinearizable(f)) => {
                outcome.stats = lin.stats.clone();
                let _ = writeln!(out, "{}", report::render(&f));
                let file = match save(history, &cfg.out_dir, cfg.seed) {
                    Ok(f) => f,
                    Err(e) => {
                        outcome.verdict =
                            StressVerdict::Undecided(format!("could not save the history: {e}"));
                        return outcome;
                    }
                };
                let _ = html::write_beside(&file, history, Some(&f));
                let shrunk = if cfg.shrink {
                    let crashed = history.epochs.last().is_some_and(|e| e.crashed);
                    shrink::shrink(
                        cfg,
                        target,
                        process.as_deref_mut(),
                        &f,
                        crashed,
                        &history.header,
                        out,
                    )
                } else {
                    None
                };
                outcome.verdict = StressVerdict::NotLinearizable { file, shrunk };
                return outcome;
            }
            Err(Verdict::Undecided { epoch, why }) => {
                outcome.stats = lin.stats.clone();
                let file = save(history, &cfg.out_dir, cfg.seed).ok();
                outcome.verdict = StressVerdict::Undecided(format!(
                    "epoch {epoch}: {why}{}",
                    file.map_or(String::new(), |f| format!(
                        " (history saved: {})",
                        f.display()
                    ))
                ));
                return outcome;
            }
            Err(Verdict::Linearizable) => unreachable!("an epoch error is never linearizable"),
        }
    }
    outcome.stats = lin.stats.clone();
    outcome
}

/// The latest moment after an epoch's start a crash is injected at (µs):
/// an epoch of a few operations per client lasts about this long on
/// loopback, so the kill lands before, among or after its operations.
const CRASH_WINDOW_US: u64 = 3_000;

/// A crash delay meaning: right after every operation of the epoch
/// completed (a shrink's re-run: what was acknowledged must survive).
pub(crate) const CRASH_AFTER: u64 = u64::MAX;

/// Send one epoch while killing the target `delay` µs into it (or, with
/// [`CRASH_AFTER`], as soon as its operations are done); restart it,
/// put it back in debug mode (state kept) and read the barrier. Every
/// operation that did not complete is indeterminate.
#[allow(clippy::too_many_arguments, clippy::result_large_err)]
fn crash_one(
    clients: &mut [Box<dyn Client>],
    target: &mut dyn Target,
    proc_: &mut process::ServerProcess,
    delay: u64,
    queues: &[Vec<gen::Step>],
    index: usize,
    now: u64,
    history: &mut History,
    clock: Clock,
    cfg: &StressConfig,
    rec: &mut Recorder,
    sending: Sending,
) -> Result<Epoch, (Epoch, TargetError)> {
    let first_id = history.len();
    let mut killed_at = 0;
    let sent = if delay == CRASH_AFTER {
        let sent = clients::run_epoch(clients, queues, index, first_id, clock, sending);
        proc_.kill();
        killed_at = clock.micros();
        sent
    } else {
        std::thread::scope(|s| {
            let killer = s.spawn(|| {
                std::thread::sleep(Duration::from_micros(delay));
                proc_.kill();
                clock.micros()
            });
            let sent = clients::run_epoch(clients, queues, index, first_id, clock, sending);
            killed_at = killer.join().expect("the killer thread panicked");
            sent
        })
    };
    history.faults.push(Fault::Crash {
        epoch: index,
        at: killed_at,
    });
    let mut epoch = Epoch {
        index,
        now,
        ops: sent.ops,
        crashed: true,
        barrier: None,
    };
    if let Err(e) = proc_.restart() {
        return Err((epoch, TargetError::Unreachable(e)));
    }
    if let Err(e) = target.resume() {
        return Err((epoch, e));
    }
    history.faults.push(Fault::Restart {
        epoch: index,
        at: clock.micros(),
    });
    let barrier = barrier(target, index, now, clock, cfg, rec);
    match barrier {
        Ok(b) => {
            epoch.barrier = Some(b);
            Ok(epoch)
        }
        Err(e) => Err((epoch, e)),
    }
}

fn barrier(
    target: &mut dyn Target,
    index: usize,
    now: u64,
    clock: Clock,
    cfg: &StressConfig,
    rec: &mut Recorder,
) -> Result<Barrier, TargetError> {
    let snap = if cfg.reach.check_state {
        Some(rec.record(target.snap()?.json().clone()))
    } else {
        rec.forget();
        None
    };
    Ok(Barrier {
        epoch: index,
        now,
        at: clock.micros(),
        snap,
    })
}

/// Send one epoch and read its barrier; on a fault, the epoch so far (the
/// error is large, and rare: once per run at most).
#[allow(clippy::too_many_arguments, clippy::result_large_err)]
fn run_one(
    clients: &mut [Box<dyn Client>],
    target: &mut dyn Target,
    queues: &[Vec<gen::Step>],
    index: usize,
    now: u64,
    first_id: usize,
    clock: Clock,
    cfg: &StressConfig,
    rec: &mut Recorder,
    sending: Sending,
) -> Result<Epoch, (Epoch, TargetError)> {
    let sent = clients::run_epoch(clients, queues, index, first_id, clock, sending);
    let mut epoch = Epoch {
        index,
        now,
        ops: sent.ops,
        crashed: false,
        barrier: None,
    };
    if let Some(e) = sent.fault {
        return Err((epoch, e));
    }
    match barrier(target, index, now, clock, cfg, rec) {
        Ok(b) => {
            epoch.barrier = Some(b);
            Ok(epoch)
        }
        Err(e) => Err((epoch, e)),
    }
}

/// Write `history` under `dir`, named by seed and time.
pub fn save(history: &History, dir: &Path, seed: u64) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!(
        "{}-stress-{seed}.history.ndjson",
        crate::repro::stamp()
    ));
    std::fs::write(&path, history.to_ndjson())?;
    Ok(path)
}
