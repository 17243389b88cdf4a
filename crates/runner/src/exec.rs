//! The one step loop: every command that drives a target (`run`,
//! `replay`, `shrink`, `check`), the latitude tests and the overhead bench
//! replay steps through [`execute`]: observe (send the step, take the
//! snapshot) → check (the model and its latitude) → record (the trace line).

use std::borrow::Borrow;
use std::collections::VecDeque;

use serde_json::Value;

use gen::Step;

use model::api::Response;
use model::view::StateView;

use crate::check::{step_kind, Checker, DiffClass, Difference, Divergence, Judge};
use crate::compare::diff_state;
use crate::recorded::Records;
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
    /// one line per step: the records are the verdict ([`crate::recorded`]).
    /// A mismatch passes only where the record is the spec model's own
    /// answer and the model, with latitude and the baseline, explains the
    /// target; a part a line does not record is judged by the model and
    /// counted ([`Execution::unrecorded`]).
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
    /// [`Expect::Recorded`]: steps with a compared part their line does
    /// not record (judged by the model).
    pub unrecorded: u64,
    /// The steps after the last line that were sent to the target before
    /// the replay stopped (pipelined, [`Target::pipeline_depth`]): the
    /// target applied them (or, after a fault, may have), nothing checked
    /// them, and they are not in `lines`. They cannot change an answer
    /// before them, so `lines` replays exactly.
    pub sent_ahead: usize,
}

impl Execution {
    /// A replay that stopped at `fault` before its first step.
    fn faulted(fault: TargetError) -> Execution {
        Execution {
            lines: Vec::new(),
            divergence: None,
            fault: Some(fault),
            latitude: 0,
            probes: Vec::new(),
            unrecorded: 0,
            sent_ahead: 0,
        }
    }

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
/// replay stops is pulled, but for the steps a pipelined target was sent
/// ahead (fewer than its depth, [`Execution::sent_ahead`]).
pub fn execute_stream<S: Borrow<Step>>(
    target: &mut dyn Target,
    checker: &mut Checker,
    steps: impl IntoIterator<Item = S>,
    expect: Expect,
    opts: ExecOptions,
) -> Execution {
    let before = match begin(target, checker, opts) {
        Ok(before) => before,
        Err(e) => return Execution::faulted(e),
    };
    continue_stream(target, checker, steps, expect, opts, before)
}

/// Resets the model and starts the target: the empty snapshot a state
/// comparison starts from, or the fault that stops the replay at once.
fn begin(
    target: &mut dyn Target,
    checker: &mut Checker,
    opts: ExecOptions,
) -> Result<Option<Snap>, TargetError> {
    checker.reset();
    target.start()?;
    Ok(opts
        .check_state
        .then(|| Snap::from_view(StateView::default())))
}

/// [`execute_stream`] for a caller that reads a clean finish's verdict and
/// step count only and never goes on past a divergence (`run`'s cases),
/// so state is compared over windows of steps too ([`Past::Stop`]): the model's envelopes
/// ([`Line::expect`]) are encoded only when the replay stops at a
/// divergence or a fault, for every line then (what a saved trace
/// records); after a clean finish they are left out, so a step that
/// agrees never builds the model's answer as JSON.
pub fn execute_stream_lean<S: Borrow<Step>>(
    target: &mut dyn Target,
    checker: &mut Checker,
    steps: impl IntoIterator<Item = S>,
    expect: Expect,
    opts: ExecOptions,
) -> Execution {
    let before = match begin(target, checker, opts) {
        Ok(before) => before,
        Err(e) => return Execution::faulted(e),
    };
    let (mut ex, answers) = drive(target, checker, steps, expect, opts, before, Past::Stop);
    if ex.divergence.is_some() || ex.fault.is_some() {
        encode_answers(&mut ex, answers, checker);
    }
    ex
}

/// [`execute_stream`] without the start: the target and the model go on
/// from where they are (triage, past a divergence whose model it pinned to
/// the target's snapshot). `before` is the target's state before the first
/// step (a refused request must leave it), when state is compared.
pub fn continue_stream<S: Borrow<Step>>(
    target: &mut dyn Target,
    checker: &mut Checker,
    steps: impl IntoIterator<Item = S>,
    expect: Expect,
    opts: ExecOptions,
    before: Option<Snap>,
) -> Execution {
    let (mut ex, answers) = drive(target, checker, steps, expect, opts, before, Past::GoOn);
    encode_answers(&mut ex, answers, checker);
    ex
}

/// What the caller does after a divergence, which decides whether steps
/// may be sent past a step whose state is compared.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Past {
    /// It stops, or starts the target afresh: a window of steps goes out
    /// each with its snapshot after it (the server answers in order, so
    /// each shows the state after its step).
    Stop,
    /// It may pin the model to the target's state after the divergent
    /// step and go on from there (triage), which a step sent past it would
    /// already have changed: with state compared, a step goes out with its
    /// snapshot and nothing past them.
    GoOn,
}

/// The model's typed answers of the lines that have one, by line index,
/// not yet encoded into [`Line::expect`].
type Answers = Vec<(usize, Response)>;

/// Encode each of `answers` into its line's `expect`.
fn encode_answers(ex: &mut Execution, answers: Answers, checker: &Checker) {
    for (i, a) in answers {
        let line = &mut ex.lines[i];
        line.expect = checker.encode(&line.step, &a);
    }
}

/// The step loop of [`continue_stream`]; the model's answers are returned
/// typed beside the lines, for the caller to encode.
fn drive<S: Borrow<Step>>(
    target: &mut dyn Target,
    checker: &mut Checker,
    steps: impl IntoIterator<Item = S>,
    expect: Expect,
    opts: ExecOptions,
    before: Option<Snap>,
    past: Past,
) -> (Execution, Answers) {
    let steps = steps.into_iter();
    let mut answers = Answers::new();
    let mut ex = Execution {
        lines: Vec::with_capacity(steps.size_hint().0),
        divergence: None,
        fault: None,
        latitude: 0,
        probes: Vec::new(),
        unrecorded: 0,
        sent_ahead: 0,
    };
    let mut before = before;
    let mut records = match expect {
        Expect::Recorded(lines) => Some(Records::new(lines, checker.profile.retry_timeout)),
        Expect::Model => None,
    };
    // `before`: the target's state before the step; a refused request
    // must leave it.
    // Nothing from the target chooses the next steps (the generator has
    // its own model), so a window of them goes out before the first
    // answer is read, with state compared each with its snapshot after
    // it, unless the caller may go on past a divergence ([`Past`]).
    let depth = if opts.check_state && past == Past::GoOn {
        1
    } else {
        target.pipeline_depth()
    };
    let ahead_of = |target: &mut dyn Target, s: &Step| {
        target.send_ahead(s);
        if opts.check_state {
            target.snap_ahead();
        }
    };
    // Once half a window is answered it is topped up (the new steps sent
    // ahead before the next answer is read): the target works on them
    // while the generator draws the next ones, and answers pile up to be
    // read several to a `recv`, where a window drawn only once empty left
    // the target idle while it was drawn and the harness waiting on every
    // answer of it.
    let mut steps = steps;
    let mut window: VecDeque<S> = VecDeque::with_capacity(depth);
    let mut ahead = false;
    let mut next = 0;
    loop {
        if window.is_empty() {
            window.extend(steps.by_ref().take(depth));
            ahead = window.len() > 1;
            if ahead {
                for s in &window {
                    ahead_of(target, s.borrow());
                }
            }
        }
        let Some(step) = window.pop_front() else {
            break;
        };
        if ahead && window.len() < depth / 2 {
            // `step` is still owed its answer: `depth` in flight at most.
            let had = window.len();
            window.extend(steps.by_ref().take(depth - 1 - had));
            for s in window.iter().skip(had) {
                ahead_of(target, s.borrow());
            }
        }
        ex.sent_ahead = window.len();
        let step = step.borrow();
        let i = next;
        next += 1;
        let (res, snap) = match observe(target, step, opts.check_state, ahead) {
            Ok(o) => o,
            Err(e) => {
                ex.lines.push(Line::of(step.clone()));
                ex.fault = Some(e);
                return (ex, answers);
            }
        };
        let departures = target.departures();
        if !departures.is_empty() {
            // The answer breaks the protocol's envelope: the step diverges,
            // whatever the model makes of the rest of it.
            let checked = checker.check(step, res.as_ref(), snap.as_ref());
            let mut line = Line::of(step.clone());
            line.res = res;
            line.diverged = true;
            ex.lines.push(line);
            answers.extend(checked.answer.map(|a| (ex.lines.len() - 1, a)));
            let d = Divergence::of_envelope(&step_kind(step), departures, checked.divergence);
            ex.divergence = Some((ex.lines.len() - 1, d));
            return (ex, answers);
        }
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
                        envelope: Vec::new(),
                        judge: Judge::Model,
                        branches: Vec::new(),
                    };
                    ex.divergence = Some((ex.lines.len() - 1, d));
                    return (ex, answers);
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
        let checked = checker.check(step, res.as_ref(), snap.as_ref());
        let (divergence, latitude) = match records.as_mut() {
            Some(r) => {
                let verdict = r.judge(i, step, res.as_ref(), snap.as_ref(), &checked, checker);
                ex.unrecorded = r.unrecorded;
                verdict
            }
            None => (checked.divergence, checked.used_latitude),
        };
        let mut line = Line::of(step.clone());
        line.res = res;
        ex.latitude += u64::from(latitude);
        line.diverged = divergence.is_some();
        ex.lines.push(line);
        answers.extend(checked.answer.map(|a| (ex.lines.len() - 1, a)));
        if let Some(d) = divergence {
            ex.divergence = Some((ex.lines.len() - 1, d));
            return (ex, answers);
        }
        before = snap;
    }
    (ex, answers)
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

/// Send one step to the target, or read its answer when it was sent
/// `ahead` (with its snapshot, when one is asked for); fetch its snapshot
/// when asked.
fn observe(
    target: &mut dyn Target,
    step: &Step,
    snap: bool,
    ahead: bool,
) -> Result<(Option<Value>, Option<Snap>), TargetError> {
    if snap && !ahead && target.pipeline_depth() > 1 {
        // The step and the snapshot after it in one write: one round trip
        // a step, not two.
        target.send_ahead(step);
        target.snap_ahead();
    }
    let res = target.send(step)?;
    let snap = if snap { Some(target.snap()?) } else { None };
    Ok((res, snap))
}
