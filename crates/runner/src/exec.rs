//! The one step loop: every command that drives a target (`run`,
//! `replay`, `shrink`, `check`), the latitude tests and the overhead bench
//! replay steps through [`execute`]: observe (send the step, take the
//! snapshot) → check (the model and its latitude) → record (the trace line).

use std::borrow::Borrow;

use serde_json::Value;

use gen::Step;

use model::view::StateView;

use crate::check::{step_kind, Checker, DiffClass, Difference, Divergence};
use crate::compare::{diff_state, normalize_response};
use crate::snapshot::Snap;
use crate::target::{envelope_status, Target, TargetError};
use crate::trace::Line;

/// What to compare.
#[derive(Clone, Copy, Debug)]
pub struct ExecOptions {
    /// Compare `debug.snap` after every step.
    pub check_state: bool,
}

/// What the target's answers are held to.
#[derive(Clone, Copy, Debug)]
pub enum Expect<'a> {
    /// The model's answers, with latitude.
    Model,
    /// Answers recorded in a golden file (`expect`, else `res`, and `state`),
    /// one line per step. A step that matches its record passes; one that
    /// does not is judged by the model with latitude, and from the first
    /// such step on the model alone judges (it has adopted the target's
    /// schedule, which the records did not foresee).
    Recorded(&'a [Line]),
}

/// A validation probe sent and what the target did with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The request kind.
    pub kind: &'static str,
    /// The rule of the Rust server's it breaks.
    pub rule: String,
    /// Whether the target refused it (400).
    pub refused: bool,
}

/// The result of replaying steps until the end, the first divergence or a
/// target fault.
#[derive(Clone, Debug)]
pub struct Execution {
    /// Every step executed, with the target's and the model's responses.
    pub lines: Vec<Line>,
    /// The index (into `lines`) and details of the first divergence.
    pub divergence: Option<(usize, Divergence)>,
    /// A target fault that stopped the replay.
    pub fault: Option<TargetError>,
    /// Steps explained by latitude.
    pub latitude: u64,
    /// The validation probes among the steps, in order.
    pub probes: Vec<Probe>,
}

impl Execution {
    /// The steps executed.
    pub fn steps(&self) -> Vec<Step> {
        self.lines.iter().map(|l| l.step.clone()).collect()
    }
}

/// `start` the target and reset the model, then every step; stops at the
/// first divergence or fault.
pub fn execute(
    target: &mut dyn Target,
    checker: &mut Checker,
    steps: &[Step],
    expect: Expect,
    opts: ExecOptions,
) -> Execution {
    execute_stream(target, checker, steps, expect, opts)
}

/// [`execute`] over steps pulled one at a time (a generator's stream, which
/// chooses each step when it is asked): nothing past the step where the
/// replay stops is pulled.
pub fn execute_stream<S: Borrow<Step>>(
    target: &mut dyn Target,
    checker: &mut Checker,
    steps: impl IntoIterator<Item = S>,
    expect: Expect,
    opts: ExecOptions,
) -> Execution {
    let steps = steps.into_iter();
    let mut ex = Execution {
        lines: Vec::with_capacity(steps.size_hint().0),
        divergence: None,
        fault: None,
        latitude: 0,
        probes: Vec::new(),
    };
    checker.reset();
    if let Err(e) = target.start() {
        ex.fault = Some(e);
        return ex;
    }
    let mut judged_by_model = false;
    // The target's state before the step: a refused request must leave it.
    let mut before = opts
        .check_state
        .then(|| Snap::from_view(StateView::default()));
    for (i, step) in steps.enumerate() {
        let step = step.borrow();
        let (res, snap) = match observe(target, step, opts.check_state) {
            Ok(o) => o,
            Err(e) => {
                ex.lines.push(Line::of(step.clone()));
                ex.fault = Some(e);
                return ex;
            }
        };
        let refused = res.as_ref().and_then(envelope_status) == Some(400);
        if refused {
            if let (Some(b), Some(a)) = (&before, &snap) {
                let trace = refusal_trace(checker, b, a);
                if !trace.is_empty() {
                    let mut line = Line::of(step.clone());
                    line.res = res;
                    line.diverged = true;
                    ex.lines.push(line);
                    let class = DiffClass {
                        kind: step_kind(step),
                        what: vec![Difference::RefusedButChanged],
                    };
                    let d = Divergence {
                        class,
                        response: None,
                        state: trace,
                    };
                    ex.divergence = Some((ex.lines.len() - 1, d));
                    return ex;
                }
            }
        }
        if let Some((kind, rule)) = probe_rule(checker, step) {
            ex.probes.push(Probe {
                kind,
                rule,
                refused,
            });
            if refused {
                // Refused as a server may: the model does not apply it.
                let mut line = Line::of(step.clone());
                line.res = res;
                ex.lines.push(line);
                before = snap;
                continue;
            }
        }
        let recorded = match expect {
            Expect::Recorded(lines) if !judged_by_model => lines.get(i),
            _ => None,
        };
        let record_fits = recorded.is_some_and(|r| fits_record(checker, r, &res, &snap));
        let checked = checker.check(step, res.as_ref(), snap.as_ref());
        let mut line = Line::of(step.clone());
        line.res = res;
        line.expect = checked.expect;
        if record_fits {
            ex.lines.push(line);
            continue;
        }
        judged_by_model |= recorded.is_some();
        ex.latitude += u64::from(checked.used_latitude);
        if let Some(d) = checked.divergence {
            line.diverged = true;
            ex.lines.push(line);
            ex.divergence = Some((ex.lines.len() - 1, d));
            return ex;
        }
        ex.lines.push(line);
        before = snap;
    }
    ex
}

/// The kind and the rule a validation probe breaks, if the step is one.
fn probe_rule(checker: &Checker, step: &Step) -> Option<(&'static str, String)> {
    match &step.op {
        gen::Op::Request(r) => Some((r.kind(), gen::probe_rule(step, &checker.model)?)),
        gen::Op::Tick => None,
    }
}

/// What a refused request changed in the target's state (nothing, if the
/// target is right: a rejected request leaves no trace).
fn refusal_trace(
    checker: &mut Checker,
    before: &Snap,
    after: &Snap,
) -> Vec<crate::compare::StateDiff> {
    diff_state(
        &before.normalized(),
        &after.normalized(),
        &checker.profile.skip_components,
        &mut checker.skipped,
    )
}

/// Send one step to the target; fetch its snapshot when asked.
fn observe(
    target: &mut dyn Target,
    step: &Step,
    snap: bool,
) -> Result<(Option<Value>, Option<Snap>), TargetError> {
    let res = target.send(step)?;
    let snap = if snap { Some(target.snap()?) } else { None };
    Ok((res, snap))
}

/// Whether the target's answer matches a golden line's records: a golden
/// file records the expectation in `res`, a run trace the target's answer
/// there and the model's in `expect`.
fn fits_record(
    checker: &mut Checker,
    rec: &Line,
    res: &Option<Value>,
    snap: &Option<Snap>,
) -> bool {
    let profile = &checker.profile;
    let res_ok = match (rec.expect.as_ref().or(rec.res.as_ref()), res) {
        (Some(want), Some(got)) => normalize_response(want) == normalize_response(got),
        _ => true,
    };
    let state_ok = match (&rec.state, snap) {
        (Some(want), Some(got)) => diff_state(
            want,
            &got.normalized(),
            &profile.skip_components,
            &mut checker.skipped,
        )
        .is_empty(),
        _ => true,
    };
    res_ok && state_ok
}
