//! The `conform` command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Differential conformance harness for the Resonate protocol.
///
/// Exit codes: 0 no divergence, 1 divergence found, 2 bad usage or bad
/// input file, 3 target unreachable or misbehaving, 4 a file asked for
/// (report, JUnit, shrunk trace) could not be written.
#[derive(Parser, Debug)]
#[command(name = "conform", version, about)]
pub struct Cli {
    /// Colour diffs: `auto` (on a terminal, unless NO_COLOR is set),
    /// `always` or `never`.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// When to colour output.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set (as cargo does).
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve the model over HTTP (the reference server).
    Serve(ServeArgs),
    /// Generate cases and run them against a target and the model.
    Run(RunArgs),
    /// Re-run a saved trace against a target and the model.
    Replay(ReplayArgs),
    /// Shrink a saved diverging trace against a live target.
    Shrink(ShrinkArgs),
    /// Write golden trace files carrying the model's expected answers.
    Golden(GoldenArgs),
    /// Check a target against golden trace files.
    Check(CheckArgs),
    /// Convert a trace to another format.
    Export(ExportArgs),
    /// Hunt every planted bug of the catalogue and tabulate the kills.
    Mutants(MutantsArgs),
    /// Show what a baseline contains: its deviations and known signatures.
    Baseline(BaselineArgs),
    /// Drive a target with many clients at once and check the history is
    /// linearizable against the model.
    Stress(StressArgs),
    /// Check a saved concurrent history again, offline.
    CheckHistory(CheckHistoryArgs),
    /// Hunt the planted races and durability bugs of the reference server
    /// with the concurrent run, and tabulate what was found.
    Races(RacesArgs),
    /// Merge the JSON reports of the jobs of a partitioned run
    /// (`run --partition K/N`) into the report of the whole run.
    MergeReports(MergeReportsArgs),
    /// Re-run a saved history (the counterexample a stress run saved)
    /// against a target, and check it again.
    ReplayHistory(ReplayHistoryArgs),
    /// Triage a new server: roll every divergence up by what differs and
    /// propose its profile, dialect rules and baseline (the first command
    /// to run against a new server).
    Triage(TriageArgs),
}

/// `conform merge-reports`.
#[derive(Args, Debug)]
pub struct MergeReportsArgs {
    /// The jobs' JSON reports (`run --partition K/N --report FILE`), one
    /// per partition.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Write the merged JSON report here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Write the merged JUnit XML report here.
    #[arg(long)]
    pub junit: Option<PathBuf>,
}

/// `conform replay-history`.
#[derive(Args, Debug)]
pub struct ReplayHistoryArgs {
    /// The history file (`conform-history/1`): the shrunk history a stress
    /// run saved, or any other.
    pub file: PathBuf,
    /// Target and comparison options (the profile and baseline default to
    /// the header's, when built in).
    #[command(flatten)]
    pub target: TargetArgs,
    /// Re-runs before the history counts as not reproduced (a race shows
    /// in some interleavings only).
    #[arg(long, default_value_t = 8, value_parser = within::<u64>(1, 1000))]
    pub attempts: u64,
    /// How to start the target (a shell command; with `--target`, where it
    /// listens): needed to replay a crash.
    #[arg(long)]
    pub server_cmd: Option<String>,
    /// Directory for the history of a failing re-run.
    #[arg(long, default_value = "traces/failures")]
    pub out_dir: PathBuf,
    /// Configurations one epoch's search may explore before it gives up.
    #[arg(long, default_value_t = 2_000_000, value_parser = within::<u64>(1, u64::MAX))]
    pub search_budget: u64,
}

/// `conform triage`.
#[derive(Args, Debug)]
pub struct TriageArgs {
    /// Target and comparison options (the profile given is the first
    /// round's; default: the spec's).
    #[command(flatten)]
    pub target: TargetArgs,
    /// Where the proposed files, the triage table, the residue's scaffolds
    /// and the traces go.
    #[arg(long, default_value = "traces/triage")]
    pub out: PathBuf,
    /// Run seed of every round.
    #[arg(long, default_value_t = 1, value_parser = within::<u64>(0, u64::MAX))]
    pub seed: u64,
    /// Cases per round.
    #[arg(long, default_value_t = 20, value_parser = within::<u64>(1, MAX_CASES))]
    pub cases: u64,
    /// Steps per case.
    #[arg(long, default_value_t = 60, value_parser = within::<usize>(1, MAX_STEPS))]
    pub steps: usize,
    /// At most this many rounds (campaigns).
    #[arg(long, default_value_t = 8, value_parser = within::<usize>(1, 20))]
    pub rounds: usize,
    /// Time budget of each shrink, in seconds.
    #[arg(long, default_value_t = 10, value_parser = within::<u64>(0, MAX_SHRINK_SECS))]
    pub shrink_time: u64,
    /// At most this many catalogue deviations together in one proposal.
    #[arg(long, default_value_t = 3, value_parser = within::<usize>(1, 3))]
    pub together: usize,
    /// Infer the baseline without this deviation family (repeat; a file
    /// name under crates/deviate/src/families, e.g. `task_version`): to
    /// measure triage as the catalogue was before the family existed.
    #[arg(long, value_name = "FAMILY")]
    pub catalogue_without: Vec<String>,
    /// Do not replay, after the rounds, every catalogue entry's witness the
    /// proposed baseline lacks (one that diverges without the entry and
    /// passes with it is confirmed by a campaign with it: a departure the
    /// random cases never met).
    #[arg(long)]
    pub no_witnesses: bool,
}

/// `conform races`.
#[derive(Args, Debug)]
pub struct RacesArgs {
    /// Only these races (repeat); default: every race.
    #[arg(long)]
    pub race: Vec<String>,
    /// Only these durability bugs (repeat); default: every one.
    #[arg(long)]
    pub durability_bug: Vec<String>,
    /// Runs per bug (seeds 1, 2, …) before it counts as not found.
    #[arg(long, default_value_t = 1, value_parser = within::<u64>(1, 100))]
    pub runs: u64,
    /// Epochs per run.
    #[arg(long, default_value_t = 100, value_parser = within::<u64>(1, 1_000_000))]
    pub epochs: u64,
    /// Clients.
    #[arg(long, default_value_t = 4, value_parser = within::<u64>(2, 64))]
    pub clients: u64,
    /// Time ceiling of each found bug's shrink, seconds.
    #[arg(long, default_value_t = 120, value_parser = within::<u64>(1, 3600))]
    pub shrink_time: u64,
    /// Re-runs each shrink may make: the budget that does not depend on
    /// the machine's load (0: none but `--shrink-time`).
    #[arg(long, default_value_t = runner::stress::hunt::SHRINK_RERUNS as u64, value_parser = within::<u64>(0, 1_000_000))]
    pub shrink_reruns: u64,
    /// Operations a shrunk history should come down to: a bug whose
    /// shrink stops above it is hunted on the next seeds too (up to
    /// `--runs`) and the smallest history kept (0: the first shrunk one).
    #[arg(long, default_value_t = 0, value_parser = within::<u64>(0, 1_000_000))]
    pub shrink_goal: u64,
    /// Directory for the histories.
    #[arg(long, default_value = "traces/failures")]
    pub out_dir: PathBuf,
    /// The bound of the races' window between check and write, ms (it
    /// closes as soon as a rival was handled).
    #[arg(long, default_value_t = 25, value_parser = within::<u64>(1, 1000))]
    pub race_window_ms: u64,
    /// Configurations one epoch's check may explore; a history it cannot
    /// decide within them is not a find, and the hunt goes on to the next
    /// seed.
    #[arg(long, default_value_t = runner::stress::hunt::SEARCH_BUDGET, value_parser = within::<u64>(1, u64::MAX))]
    pub search_budget: u64,
}

/// `conform stress`.
#[derive(Args, Debug)]
pub struct StressArgs {
    /// Target and comparison options.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Run seed (random when absent; always printed).
    #[arg(long, value_parser = within::<u64>(0, u64::MAX))]
    pub seed: Option<u64>,
    /// Clients sending at once.
    #[arg(long, default_value_t = 4, value_parser = within::<u64>(1, 64))]
    pub clients: u64,
    /// Epochs (windows of one `now`, each closed by a barrier).
    #[arg(long, default_value_t = 100, value_parser = within::<u64>(1, 1_000_000))]
    pub epochs: u64,
    /// The generator's operations per epoch (rivals come on top; at most
    /// 64, so an epoch stays within the checker's 128).
    #[arg(long, default_value_t = 8, value_parser = within::<u64>(1, 64))]
    pub ops: u64,
    /// Percent of operations joined by a rival contending for the same object.
    #[arg(long, default_value_t = 40, value_parser = within::<u64>(0, 100))]
    pub rival_pct: u64,
    /// Directory for failing histories.
    #[arg(long, default_value = "traces/failures")]
    pub out_dir: PathBuf,
    /// Do not shrink a failing history.
    #[arg(long)]
    pub no_shrink: bool,
    /// Time ceiling of the shrink, in seconds.
    #[arg(long, default_value_t = 60, value_parser = within::<u64>(1, 86_400))]
    pub shrink_time: u64,
    /// Re-runs the shrink may make (each attempt of each candidate is
    /// one): the budget that does not depend on the machine's load (0:
    /// none but `--shrink-time`).
    #[arg(long, default_value_t = runner::stress::hunt::SHRINK_RERUNS as u64, value_parser = within::<u64>(0, 1_000_000))]
    pub shrink_reruns: u64,
    /// Re-runs per shrink candidate (a race shows in some interleavings only).
    #[arg(long, default_value_t = 8, value_parser = within::<u64>(1, 1000))]
    pub attempts: u64,
    /// Configurations one epoch's search may explore before it gives up
    /// (undecided: not green).
    #[arg(long, default_value_t = 2_000_000, value_parser = within::<u64>(1, u64::MAX))]
    pub search_budget: u64,
    /// How to start the target (a shell command; with `--target`, where it
    /// listens): the harness then owns the process, and can crash it.
    #[arg(long)]
    pub server_cmd: Option<String>,
    /// Percent of epochs in which the target is killed (SIGKILL) at a
    /// random moment and restarted (needs `--server-cmd`; only for a
    /// profile that claims durability).
    #[arg(long, default_value_t = 0, value_parser = within::<u64>(0, 100))]
    pub crash_pct: u64,
}

/// `conform check-history`.
#[derive(Args, Debug)]
pub struct CheckHistoryArgs {
    /// The history file (`conform-history/1`).
    pub file: PathBuf,
    /// The target's profile (a built-in name or a file); default: the one
    /// named in the header when built in, else `spec`.
    #[arg(long)]
    pub profile: Option<String>,
    /// A baseline of known deviations for the model.
    #[arg(long)]
    pub baseline: Option<String>,
    /// The retry timeout (default: the header's).
    #[arg(long, value_parser = within::<u64>(0, MAX_RETRY_MS))]
    pub retry_timeout: Option<u64>,
    /// Configurations one epoch's search may explore before it gives up.
    #[arg(long, default_value_t = 2_000_000, value_parser = within::<u64>(1, u64::MAX))]
    pub search_budget: u64,
}

/// `conform baseline`.
#[derive(Args, Debug)]
pub struct BaselineArgs {
    /// A built-in baseline (`ts-eager`, `ts-none`, `resonate`, `pg`) or a file.
    pub baseline: String,
}

/// `conform mutants`.
#[derive(Args, Debug)]
pub struct MutantsArgs {
    /// Only these bugs (repeat); default: the whole catalogue.
    #[arg(long)]
    pub mutant: Vec<String>,
    /// A bug found within this many steps in all is found on time.
    #[arg(long, default_value_t = 20_000, value_parser = within::<usize>(1, MAX_BUDGET))]
    pub budget_steps: usize,
    /// Hunt a bug not found on time on until this many steps (a kill then
    /// is reported as slow); not with `--versus-clean`.
    #[arg(long, default_value_t = 400_000, value_parser = within::<usize>(0, MAX_BUDGET))]
    pub slow_budget: usize,
    /// Run seed.
    #[arg(long, default_value_t = 1, value_parser = within::<u64>(0, u64::MAX))]
    pub seed: u64,
    /// Steps per case.
    #[arg(long, default_value_t = 60, value_parser = within::<usize>(1, MAX_STEPS))]
    pub steps: usize,
    /// Time ceiling of each shrink, in seconds.
    #[arg(long, default_value_t = 10, value_parser = within::<u64>(0, MAX_SHRINK_SECS))]
    pub shrink_time: u64,
    /// Candidates each shrink may run: the budget that does not depend on
    /// the machine's load (0: none but `--shrink-time`).
    #[arg(long, default_value_t = runner::mutants::SHRINK_CANDIDATES, value_parser = within::<usize>(0, MAX_BUDGET))]
    pub shrink_candidates: usize,
    /// Also give the target a real server's known deviations, and the
    /// model its baseline (`ts-eager`, `ts-none`, `resonate`, `pg`, or a file).
    #[arg(long)]
    pub baseline: Option<String>,
    /// Run the checker under this profile (a built-in name or a file): its
    /// retry timeout and left-out kinds apply to the served bug too.
    #[arg(long)]
    pub profile: Option<String>,
    /// Serve each bug over HTTP (`conform serve --mutant`) instead of in
    /// this process.
    #[arg(long)]
    pub http: bool,
    /// Write the results as JSON here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// With `--baseline`: measure steps to detection on a clean server and
    /// on one carrying the baseline, over `--seeds` seeds from `--seed`, and
    /// fail when a bug the baseline leaves observable takes over twice as
    /// long (no shrinking).
    #[arg(long, requires = "baseline")]
    pub versus_clean: bool,
    /// Seeds to average over with `--versus-clean`.
    #[arg(long, default_value_t = 8, value_parser = within::<u64>(1, MAX_SEEDS))]
    pub seeds: u64,
}

/// Target selection shared by the commands that talk to a server.
#[derive(Args, Debug, Clone)]
pub struct TargetArgs {
    /// Base URL of the target: `http://` (this build has no TLS), on a
    /// loopback address unless `--allow-remote-target`. Without it, an
    /// embedded reference server (`conform serve`) is started on an
    /// ephemeral port.
    #[arg(long)]
    pub target: Option<String>,
    /// Allow a target that is not on a loopback address (a CI service
    /// container, say). The harness WIPES the target with `debug.reset`
    /// before every case: never point it at a server holding data.
    #[arg(long)]
    pub allow_remote_target: bool,
    /// A target profile: a built-in name (`spec`, `resonate`, `ts-eager`,
    /// `ts-none`, `pg`) or a JSON file: what the spec leaves open for the target.
    #[arg(long)]
    pub profile: Option<String>,
    /// A baseline of known deviations: a built-in name (`ts-eager`,
    /// `ts-none`, `resonate`, `pg`) or a JSON file. The model applies them, so a
    /// run goes on past what is known.
    #[arg(long)]
    pub baseline: Option<String>,
    /// The target's retry timeout in ms (overrides the profile).
    #[arg(long, value_parser = within::<u64>(0, MAX_RETRY_MS))]
    pub retry_timeout: Option<u64>,
    /// Per-request timeout in ms (at least 1).
    #[arg(long, default_value_t = runner::repro::DEFAULT_TIMEOUT_MS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: u64,
    /// Compare responses only, not `debug.snap` after every step.
    #[arg(long)]
    pub no_state: bool,
    /// With `--no-state`, send up to N steps before reading the first
    /// one's answer (HTTP/1.1 pipelining); with state, each with its
    /// `debug.snap` after it (triage: one step and its snapshot at a time);
    /// 1 sends one request at a time, for a server that cannot take
    /// pipelined requests.
    #[arg(long, default_value_t = runner::target::DEFAULT_PIPELINE,
          value_parser = within::<usize>(1, 64))]
    pub pipeline: usize,
}

/// `conform serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Port (0 = ephemeral; the bound address is printed).
    #[arg(long, default_value_t = 0, value_parser = within::<u16>(0, u16::MAX.into()))]
    pub port: u16,
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Retry timeout in ms.
    #[arg(long, default_value_t = model::state::DEFAULT_RETRY_TIMEOUT, value_parser = within::<u64>(0, MAX_RETRY_MS))]
    pub retry_timeout: u64,
    /// Materialise reads: fire the due promise timeouts a request names
    /// before handling it (allowed by the spec) instead of projecting.
    #[arg(long)]
    pub materialize: bool,
    /// Plant a bug from the deviation catalogue (see `--list-mutants`);
    /// repeat to plant several.
    #[arg(long)]
    pub mutant: Vec<String>,
    /// List the planted bugs and exit.
    #[arg(long)]
    pub list_mutants: bool,
    /// Serve without the Rust server's 400 rules (the spec has none), as a
    /// server without them would: validation probes then reach the model.
    #[arg(long)]
    pub no_validation: bool,
    /// Plant a race (see `--list-races`): that handler checks under the
    /// lock, releases it, and writes blindly once a rival request was
    /// handled (at most `--race-window-ms` later); repeat to plant several.
    #[arg(long, conflicts_with = "log")]
    pub race: Vec<String>,
    /// List the planted races and exit.
    #[arg(long)]
    pub list_races: bool,
    /// The bound of the window between a racy handler's check and its
    /// write, in ms: it closes as soon as a rival was handled (a handler
    /// that wrote nothing has none).
    #[arg(long, default_value_t = 25, value_parser = within::<u64>(0, 1_000))]
    pub race_window_ms: u64,
    /// Persistent mode: append every applied step to this NDJSON log before
    /// answering, and replay the log at start.
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Plant a durability bug of the persistent mode (see
    /// `--list-durability-bugs`); repeat to plant several.
    #[arg(long, requires = "log")]
    pub durability_bug: Vec<String>,
    /// List the planted durability bugs and exit.
    #[arg(long)]
    pub list_durability_bugs: bool,
}

/// `conform run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Target and comparison options.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Run seed (random when absent; always printed).
    #[arg(long, value_parser = within::<u64>(0, u64::MAX))]
    pub seed: Option<u64>,
    /// Number of cases.
    #[arg(long, default_value_t = 20, value_parser = within::<u64>(1, MAX_CASES))]
    pub cases: u64,
    /// Run only this case of the seed.
    #[arg(long, value_parser = within::<u64>(0, u64::MAX))]
    pub case: Option<u64>,
    /// Run only job K of N of the cases (cargo-nextest's `count:K/N`, K
    /// from 1): case I is job (I mod N) + 1's. A case is the same in every
    /// job; each job writes its own reports, `conform merge-reports` joins
    /// them.
    #[arg(long, value_name = "K/N", conflicts_with = "case")]
    pub partition: Option<runner::partition::Partition>,
    /// Steps per case.
    #[arg(long, default_value_t = 50, value_parser = within::<usize>(1, MAX_STEPS))]
    pub steps: usize,
    /// Stop at the first failing case.
    #[arg(long)]
    pub fail_fast: bool,
    /// Directory for failing traces.
    #[arg(long, default_value = "traces/failures")]
    pub out_dir: PathBuf,
    /// Write a JUnit XML report here.
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Write a JSON summary here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Do not shrink divergences.
    #[arg(long)]
    pub no_shrink: bool,
    /// Time budget per shrink, in seconds.
    #[arg(long, default_value_t = 60, value_parser = within::<u64>(0, MAX_SHRINK_SECS))]
    pub shrink_time: u64,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// Validation probing: mix in requests the spec accepts but the Rust
    /// server's 400 rules refuse; report which the target refuses, and
    /// hold it to the spec on those it accepts.
    #[arg(long)]
    pub probe_validation: bool,
}

/// `conform replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The trace file.
    pub file: PathBuf,
    /// Target and comparison options (defaults from the trace header).
    #[command(flatten)]
    pub target: TargetArgs,
}

/// `conform shrink`.
#[derive(Args, Debug)]
pub struct ShrinkArgs {
    /// The diverging trace file.
    pub file: PathBuf,
    /// Target and comparison options (defaults from the trace header).
    #[command(flatten)]
    pub target: TargetArgs,
    /// Where to write the shrunk trace (default: beside the original).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Time budget in seconds.
    #[arg(long, default_value_t = 60, value_parser = within::<u64>(0, MAX_SHRINK_SECS))]
    pub shrink_time: u64,
}

/// `conform golden`.
#[derive(Args, Debug)]
pub struct GoldenArgs {
    /// Output directory.
    #[arg(long, default_value = "traces/golden")]
    pub out: PathBuf,
    /// Generated traces to draw scenarios from.
    #[arg(long, default_value_t = 400, value_parser = within::<u64>(1, MAX_COUNT))]
    pub count: u64,
    /// Seed of the pool.
    #[arg(long, default_value_t = 1, value_parser = within::<u64>(0, u64::MAX))]
    pub seed: u64,
    /// Steps per generated trace.
    #[arg(long, default_value_t = 40, value_parser = within::<usize>(1, MAX_STEPS))]
    pub steps: usize,
    /// Record the expected state after every step.
    #[arg(long)]
    pub with_state: bool,
    /// Replace the golden files already in the output directory (without
    /// it, an output directory holding golden files is refused).
    #[arg(long)]
    pub bless: bool,
    /// Retry timeout of the model, in ms.
    #[arg(long, default_value_t = model::state::DEFAULT_RETRY_TIMEOUT, value_parser = within::<u64>(0, MAX_RETRY_MS))]
    pub retry_timeout: u64,
}

/// `conform check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// A golden file or a directory of them.
    pub path: PathBuf,
    /// Target and comparison options.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Write a JUnit XML report here.
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Write a JSON summary here.
    #[arg(long)]
    pub report: Option<PathBuf>,
}

/// Output formats of `conform export`.
#[derive(ValueEnum, Debug, Clone, Copy)]
pub enum Format {
    /// The spec repository's `valid/` NDJSON.
    Spec,
}

/// `conform export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The trace file.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum)]
    pub format: Format,
    /// Output file (default: standard output).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

// ----- the ranges of the numeric flags (README "The CLI") -----

/// `run --cases`: one report per case is kept for the summary.
pub const MAX_CASES: u64 = 1_000_000;
/// `--steps` of `run`, `mutants` and `golden`: a case's trace is held in
/// memory, step by step, while it runs.
pub const MAX_STEPS: u64 = 1_000_000;
/// `golden --count`: the whole pool is generated and replayed at once.
pub const MAX_COUNT: u64 = 100_000;
/// `--shrink-time` (seconds): a day.
pub const MAX_SHRINK_SECS: u64 = 86_400;
/// `--retry-timeout` (ms): a day; deadlines a retry arms stay far inside
/// the wire's `i64` milliseconds.
pub const MAX_RETRY_MS: u64 = 86_400_000;
/// `mutants --budget-steps` and `--slow-budget`.
pub const MAX_BUDGET: u64 = 100_000_000;
/// `mutants --seeds`.
pub const MAX_SEEDS: u64 = 10_000;

/// The parser of a numeric flag allowed in `lo..=hi`: anything else (not
/// an integer, out of the range, past what the type holds) is bad usage
/// (exit 2), and clap's message names the flag and this range.
fn within<T>(lo: u64, hi: u64) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    move |s: &str| {
        s.parse::<u64>()
            .ok()
            .filter(|n| (lo..=hi).contains(n))
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(|| format!("expected an integer in {lo}..={hi}"))
    }
}
