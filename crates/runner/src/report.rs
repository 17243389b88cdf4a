//! Machine-readable reports: a JSON summary (`--report`) and JUnit XML
//! (`--junit`, one testcase per case, the diff and replay command in the
//! failure text). Both are documented field by field in the README.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How one case ended.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
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
    /// The target diverged in a way the baseline knows by signature: the
    /// rest of the case was not checked (a blind spot).
    Known {
        /// 1-based step.
        step: usize,
        /// The known signature.
        class: String,
        /// The saved trace.
        trace: PathBuf,
    },
    /// The target did what the spec says where the baseline expected a
    /// deviation: the deviation may be fixed; update the baseline.
    PossiblyFixed {
        /// 1-based step that should have shown the deviation.
        step: usize,
        /// The deviation's name.
        deviation: String,
        /// The saved trace.
        trace: PathBuf,
        /// Ready-to-paste replay command (with the baseline).
        replay: String,
    },
    /// Not run (`check`): the golden file holds requests of kinds the
    /// profile leaves out.
    Skipped {
        /// Those kinds.
        kinds: Vec<String>,
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
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
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
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
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
    /// Baseline name, when one was applied.
    pub baseline: Option<String>,
    /// `run --partition K/N`: which job of the run this report is (`"K/N"`);
    /// absent for a whole run (and a merged one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<crate::partition::Partition>,
    /// Request kinds the profile leaves out (never generated).
    pub omitted_kinds: Vec<String>,
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
    /// Reachable branches in the model, those of the omitted kinds aside.
    pub coverage_total: usize,
    /// Reachable branches never taken (of the kinds generated).
    pub coverage_missed: Vec<String>,
    /// Reachable branches of the omitted kinds: not in the total, never
    /// checked.
    pub coverage_omitted: Vec<String>,
    /// Steps explained by latitude.
    pub latitude: u64,
    /// Snapshot components the target lacks (not compared).
    pub skipped_components: Vec<String>,
    /// Cases that diverged.
    pub divergences: usize,
    /// Cases that hit a target fault.
    pub faults: usize,
    /// Cases that ended on a divergence the baseline knows by signature.
    pub known: usize,
    /// Cases where a baseline deviation did not show (possibly fixed).
    pub possibly_fixed: usize,
    /// `check`: golden files not run, holding kinds the profile leaves out.
    pub skipped: usize,
    /// `check`: steps with a compared part (the response, or the state
    /// when compared) that their golden line does not record, judged by
    /// the model instead.
    pub unrecorded: u64,
    /// Validation probes (`--probe-validation`): per kind and rule, how
    /// many were sent and how many the target refused.
    pub validation: Vec<ProbeStat>,
    /// Input files that could not be read (`check`): each named, none
    /// checked; the others were.
    pub malformed: Vec<Malformed>,
    /// Per case.
    pub case_reports: Vec<CaseReport>,
}

/// An input file that could not be read.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Malformed {
    /// The file.
    pub file: PathBuf,
    /// Why, with the line and column when known.
    pub message: String,
}

/// Validation probes of one kind breaking one rule.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ProbeStat {
    /// The request kind.
    pub kind: String,
    /// The Rust server's rule it breaks.
    pub rule: String,
    /// Probes sent.
    pub sent: usize,
    /// Probes the target refused (the *validation* class); the others were
    /// held to the spec like any request.
    pub refused: usize,
}

impl ProbeStat {
    /// Count probes by kind and rule.
    pub fn tally(probes: &[crate::exec::Probe]) -> Vec<ProbeStat> {
        let mut by: std::collections::BTreeMap<(String, String), (usize, usize)> =
            Default::default();
        for p in probes {
            let e = by.entry((p.kind.to_string(), p.rule.clone())).or_default();
            e.0 += 1;
            e.1 += usize::from(p.refused);
        }
        by.into_iter()
            .map(|((kind, rule), (sent, refused))| ProbeStat {
                kind,
                rule,
                sent,
                refused,
            })
            .collect()
    }
}

/// How a whole run or check ended, for the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing diverged, nothing failed.
    Clean,
    /// Some case diverged.
    Diverged,
    /// An input file was malformed; the others were checked (wins over
    /// divergences).
    BadInput,
    /// The target failed (wins over everything).
    Fault,
    /// Nothing was checked (no step ran, every file skipped): never green.
    Empty,
}

impl Summary {
    /// A summary of `case_reports`, with the coverage and skipped
    /// components the run's checker collected.
    pub fn new(
        seed: u64,
        target: &str,
        profile: &str,
        case_reports: Vec<CaseReport>,
        elapsed: std::time::Duration,
        checker: &crate::check::Checker,
    ) -> Summary {
        let steps: usize = case_reports.iter().map(|r| r.steps).sum();
        let seconds = elapsed.as_secs_f64();
        let missed = checker.coverage.missed();
        Summary {
            harness: format!("conform {}", env!("CARGO_PKG_VERSION")),
            spec: model::SPEC_COMMIT.to_string(),
            seed,
            target: target.to_string(),
            profile: profile.to_string(),
            baseline: None,
            partition: None,
            omitted_kinds: checker.profile.omit_kinds.clone(),
            cases: case_reports.len(),
            steps,
            steps_per_second: if seconds > 0.0 {
                steps as f64 / seconds
            } else {
                0.0
            },
            seconds,
            coverage_hit: checker.coverage.reachable_hit(),
            coverage_total: checker.coverage.reachable_total,
            coverage_missed: missed.iter().map(|b| b.name().to_string()).collect(),
            coverage_omitted: (checker.coverage.omitted().iter())
                .map(|b| b.name().to_string())
                .collect(),
            latitude: case_reports.iter().map(|r| r.latitude).sum(),
            skipped_components: checker.skipped.iter().cloned().collect(),
            divergences: case_reports
                .iter()
                .filter(|r| matches!(r.status, CaseStatus::Diverged { .. }))
                .count(),
            faults: case_reports
                .iter()
                .filter(|r| matches!(r.status, CaseStatus::Fault { .. }))
                .count(),
            known: case_reports
                .iter()
                .filter(|r| matches!(r.status, CaseStatus::Known { .. }))
                .count(),
            possibly_fixed: case_reports
                .iter()
                .filter(|r| matches!(r.status, CaseStatus::PossiblyFixed { .. }))
                .count(),
            skipped: case_reports
                .iter()
                .filter(|r| matches!(r.status, CaseStatus::Skipped { .. }))
                .count(),
            unrecorded: 0,
            validation: Vec::new(),
            malformed: Vec::new(),
            case_reports,
        }
    }

    /// How it ended: a fault anywhere wins, then a malformed input, then
    /// divergences; a run that checked nothing is not green.
    pub fn verdict(&self) -> Verdict {
        if self.faults > 0 {
            Verdict::Fault
        } else if !self.malformed.is_empty() {
            Verdict::BadInput
        } else if self.divergences + self.possibly_fixed > 0 {
            Verdict::Diverged
        } else if self.steps == 0 {
            Verdict::Empty
        } else {
            Verdict::Clean
        }
    }

    /// The replay command of the first divergence (or possibly fixed
    /// deviation), if any.
    pub fn first_replay(&self) -> Option<&str> {
        self.case_reports.iter().find_map(|c| match &c.status {
            CaseStatus::Diverged { replay, .. } | CaseStatus::PossiblyFixed { replay, .. } => {
                Some(replay.as_str())
            }
            _ => None,
        })
    }

    /// Print the end-of-run summary; its last line says what to do next.
    pub fn print(&self, out: &mut dyn std::io::Write) {
        let _ = writeln!(
            out,
            "summary: {} cases, {} steps, {:.0} steps/s, {:.1}s",
            self.cases, self.steps, self.steps_per_second, self.seconds
        );
        let _ = writeln!(
            out,
            "  branch coverage: {}/{} reachable",
            self.coverage_hit, self.coverage_total
        );
        if !self.coverage_missed.is_empty() {
            const SHOWN: usize = 12;
            let more = self.coverage_missed.len().saturating_sub(SHOWN);
            let shown: Vec<&str> = self
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
            self.latitude
        );
        if !self.skipped_components.is_empty() {
            let _ = writeln!(
                out,
                "  not compared (absent from the target's snapshot): {}",
                self.skipped_components.join(", ")
            );
        }
        if !self.omitted_kinds.is_empty() {
            let _ = writeln!(
                out,
                "  left out (the profile says the target does not implement them): {}",
                self.omitted_kinds.join(", ")
            );
            let _ = writeln!(
                out,
                "  not in the coverage total, never checked: {} branches of those kinds",
                self.coverage_omitted.len()
            );
        }
        if !self.validation.is_empty() {
            let _ = writeln!(out, "  validation probes (refused = the validation class; accepted ones were compared with the spec):");
            for p in &self.validation {
                let _ = writeln!(
                    out,
                    "    {:<28} {:<58} refused {:>3} of {:>3}",
                    p.kind, p.rule, p.refused, p.sent
                );
            }
        }
        if let Some(b) = &self.baseline {
            let _ = writeln!(
                out,
                "  baseline {b}: {} cases ended on a divergence known by signature (not checked past it), {} deviations possibly fixed",
                self.known, self.possibly_fixed
            );
        }
        if !self.malformed.is_empty() {
            let _ = writeln!(
                out,
                "  malformed (not checked): {}",
                self.malformed
                    .iter()
                    .map(|m| m.file.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        let _ = writeln!(
            out,
            "  divergences: {}, target faults: {}",
            self.divergences, self.faults
        );
        let _ = match (self.verdict(), self.first_replay()) {
            (Verdict::Clean, _) => writeln!(out, "green: no divergence"),
            (Verdict::Fault, _) => writeln!(out, "red: the target failed (see TARGET FAULT above)"),
            (Verdict::BadInput, _) => writeln!(
                out,
                "red: {} input files are malformed (see MALFORMED above)",
                self.malformed.len()
            ),
            (Verdict::Diverged, Some(r)) => {
                writeln!(out, "red: reproduce the first divergence with: {r}")
            }
            (Verdict::Diverged, None) => writeln!(out, "red: see the divergences above"),
            (Verdict::Empty, _) => writeln!(out, "red: nothing was checked (no step ran)"),
        };
    }
}

/// Write the JSON summary.
pub fn write_json(path: &Path, s: &Summary) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, serde_json::to_string_pretty(s)? + "\n")
}

/// Write JUnit XML: one `<testcase>` per case; a divergence is a
/// `<failure>` holding the step, class, diff, trace and replay command; a
/// target fault an `<error>`; a malformed input file an `<error>` of its
/// own.
pub fn write_junit(path: &Path, s: &Summary) -> std::io::Result<()> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new("conform");
    suite.set_time(std::time::Duration::from_secs_f64(s.seconds));
    for c in &s.case_reports {
        let name = c
            .name
            .clone()
            .unwrap_or_else(|| format!("case {} (seed {})", c.case, s.seed));
        let status = match &c.status {
            CaseStatus::Pass => TestCaseStatus::success(),
            CaseStatus::Diverged {
                step,
                class,
                diff,
                trace,
                replay,
                ..
            } => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(class.as_str()).set_description(format!(
                    "step {step}: {class}\n{diff}\ntrace: {}\nreplay: {replay}",
                    trace.display()
                ));
                st
            }
            CaseStatus::Known { step, class, trace } => {
                let mut st = TestCaseStatus::skipped();
                st.set_message(format!("known divergence at step {step}: {class}"))
                    .set_description(format!(
                        "not checked past step {step}; trace: {}",
                        trace.display()
                    ));
                st
            }
            CaseStatus::PossiblyFixed {
                step,
                deviation,
                trace,
                replay,
            } => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(format!("baseline deviation {deviation} possibly fixed"))
                    .set_description(format!(
                        "at step {step} the target did what the spec says; update the baseline\ntrace: {}\nreplay: {replay}",
                        trace.display()
                    ));
                st
            }
            CaseStatus::Skipped { kinds } => {
                let mut st = TestCaseStatus::skipped();
                st.set_message(format!(
                    "kinds the profile leaves out: {}",
                    kinds.join(", ")
                ));
                st
            }
            CaseStatus::Fault { message, trace } => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
                st.set_message(message.as_str())
                    .set_description(format!("trace so far: {}", trace.display()));
                st
            }
        };
        let mut tc = TestCase::new(name, status);
        tc.set_classname(format!("conform.{}", s.profile))
            .set_time(std::time::Duration::from_secs_f64(c.seconds));
        suite.add_test_case(tc);
    }
    for m in &s.malformed {
        let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
        st.set_message(format!("malformed: {}", m.message))
            .set_description(format!("not checked: {}", m.file.display()));
        let name = m.file.file_stem().map_or_else(
            || m.file.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        let mut tc = TestCase::new(name, st);
        tc.set_classname(format!("conform.{}", s.profile));
        suite.add_test_case(tc);
    }
    let mut report = Report::new("conform");
    report.add_test_suite(suite);
    let xml = report
        .to_string()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, xml)
}
