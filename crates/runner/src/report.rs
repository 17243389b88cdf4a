//! Machine-readable reports: a JSON summary (`--report`) and JUnit XML
//! (`--junit`, one testcase per case, the diff and replay command in the
//! failure text). Both are documented field by field in the README.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// How one case ended.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CaseStatus {
    /// No divergence.
    Pass,
    /// The target diverged.
    Diverged {
        /// 1-based step of the (original) divergence.
        step: usize,
        /// Divergence class.
        class: String,
        /// The rendered diff.
        diff: String,
        /// The saved trace.
        trace: PathBuf,
        /// The shrunk trace, when shrinking ran.
        shrunk: Option<PathBuf>,
        /// Steps in the shrunk trace.
        shrunk_steps: Option<usize>,
        /// Ready-to-paste replay command.
        replay: String,
    },
    /// The target failed (unreachable, timeout, garbage, 5xx).
    Fault {
        /// What went wrong.
        message: String,
        /// The trace so far.
        trace: PathBuf,
    },
}

/// One case.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CaseReport {
    /// A name for the case (the golden file's stem in `check`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Case index.
    pub case: u64,
    /// The case's own seed (derived from the run seed).
    pub seed: u64,
    /// Steps executed.
    pub steps: usize,
    /// Steps explained by latitude.
    pub latitude: u64,
    /// Wall time, seconds.
    pub seconds: f64,
    /// How it ended.
    #[serde(flatten)]
    pub status: CaseStatus,
}

/// The whole run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    /// `conform <version>`.
    pub harness: String,
    /// Spec commit.
    pub spec: String,
    /// Run seed.
    pub seed: u64,
    /// Target URL.
    pub target: String,
    /// Profile name.
    pub profile: String,
    /// Cases run.
    pub cases: usize,
    /// Steps run.
    pub steps: usize,
    /// Steps per second over the whole run.
    pub steps_per_second: f64,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Reachable branches taken / reachable branches.
    pub coverage_hit: usize,
    /// Reachable branches in the model.
    pub coverage_total: usize,
    /// Reachable branches never taken.
    pub coverage_missed: Vec<String>,
    /// Steps explained by latitude.
    pub latitude: u64,
    /// Snapshot components the target lacks (not compared).
    pub skipped_components: Vec<String>,
    /// Cases that diverged.
    pub divergences: usize,
    /// Cases that hit a target fault.
    pub faults: usize,
    /// Per case.
    pub case_reports: Vec<CaseReport>,
}

impl Summary {
    /// A summary of `case_reports`; coverage and skipped components are
    /// left empty for the caller to fill in when it knows them.
    pub fn new(
        seed: u64,
        target: &str,
        profile: &str,
        case_reports: Vec<CaseReport>,
        elapsed: std::time::Duration,
    ) -> Summary {
        let steps: usize = case_reports.iter().map(|r| r.steps).sum();
        let seconds = elapsed.as_secs_f64();
        Summary {
            harness: format!("conform {}", env!("CARGO_PKG_VERSION")),
            spec: model::SPEC_COMMIT.to_string(),
            seed,
            target: target.to_string(),
            profile: profile.to_string(),
            cases: case_reports.len(),
            steps,
            steps_per_second: if seconds > 0.0 {
                steps as f64 / seconds
            } else {
                0.0
            },
            seconds,
            coverage_hit: 0,
            coverage_total: 0,
            coverage_missed: Vec::new(),
            latitude: case_reports.iter().map(|r| r.latitude).sum(),
            skipped_components: Vec::new(),
            divergences: case_reports
                .iter()
                .filter(|r| matches!(r.status, CaseStatus::Diverged { .. }))
                .count(),
            faults: case_reports
                .iter()
                .filter(|r| matches!(r.status, CaseStatus::Fault { .. }))
                .count(),
            case_reports,
        }
    }
}

/// Write the JSON summary.
pub fn write_json(path: &Path, s: &Summary) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, serde_json::to_string_pretty(s)? + "\n")
}

fn xml(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .map(|c| match c {
            '&' => "&amp;".to_string(),
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '"' => "&quot;".to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// Write JUnit XML: one `<testcase>` per case.
pub fn write_junit(path: &Path, s: &Summary) -> std::io::Result<()> {
    let mut x = String::new();
    let _ = writeln!(x, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        x,
        r#"<testsuite name="conform" tests="{}" failures="{}" errors="{}" time="{:.3}">"#,
        s.cases, s.divergences, s.faults, s.seconds
    );
    for c in &s.case_reports {
        let name = c
            .name
            .clone()
            .unwrap_or_else(|| format!("case {} (seed {})", c.case, s.seed));
        let _ = write!(
            x,
            r#"  <testcase classname="conform.{}" name="{}" time="{:.3}""#,
            xml(&s.profile),
            xml(&name),
            c.seconds
        );
        match &c.status {
            CaseStatus::Pass => {
                let _ = writeln!(x, "/>");
            }
            CaseStatus::Diverged {
                step,
                class,
                diff,
                trace,
                replay,
                ..
            } => {
                let _ = writeln!(x, ">");
                let _ = writeln!(
                    x,
                    r#"    <failure message="{}">step {step}: {}&#10;{}&#10;trace: {}&#10;replay: {}</failure>"#,
                    xml(class),
                    xml(class),
                    xml(diff),
                    xml(&trace.display().to_string()),
                    xml(replay)
                );
                let _ = writeln!(x, "  </testcase>");
            }
            CaseStatus::Fault { message, trace } => {
                let _ = writeln!(x, ">");
                let _ = writeln!(
                    x,
                    r#"    <error message="{}">trace so far: {}</error>"#,
                    xml(message),
                    xml(&trace.display().to_string())
                );
                let _ = writeln!(x, "  </testcase>");
            }
        }
    }
    let _ = writeln!(x, "</testsuite>");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, x)
}
