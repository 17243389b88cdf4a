//! Shrinking a diverging trace to the steps that matter.
//!
//! Every candidate is checked for real: the target is reset and the
//! candidate replayed with its own `now` values; it is kept only if it
//! still diverges **on the same departure** (the same step kind, and
//! every difference of the original divergence, more allowed),
//! so shrinking stays on the same kind of departure, and only if it is
//! smaller (fewer steps, then a shorter time span, then deadlines nearer
//! their steps, then fewer bytes).
//!
//! Before it is run, a candidate is made well-formed again against its own
//! history ([`repair`]): versions that were current in the original are
//! re-pointed at the task's current version, stale ones stay stale by the
//! same distance, and steps the generator's preconditions reject are dropped.
//!
//! The shrink order, each pass repeated until it no longer helps, and the
//! whole sequence repeated until a round changes nothing or the budget
//! (wall time, or candidates run) runs out:
//! 1. cut everything after the diverging step;
//! 2. delete chunks of steps, halves first down to single steps
//!    (delta debugging);
//! 3. delete ticks, and merge adjacent ticks into the later one; merge a
//!    `promise.create` and the first `task.acquire` of its task at version
//!    0 (or the first later `task.create` of its id) into one
//!    `task.create`;
//! 4. pull time down: shrink each gap between consecutive steps (to zero,
//!    then by halves), shifting later steps and the absolute deadlines they
//!    carry by the same amount; then snap each tick back onto a deadline
//!    armed before it (an off-by-one at `now == deadline` shows only
//!    there);
//! 5. simplify values: drop params, values, non-essential tags, heartbeat
//!    refs and suspend actions; a `task.create` made its promise alone
//!    (unclaimed); a fenced create made a plain one; give one request
//!    another pid of the trace (or a fresh one), alone;
//! 6. make a schedule's promises directly: the `schedule.create` removed
//!    and a `promise.create` of each promise its ticks made put before
//!    the tick that made it (the same promise without the schedule, so the
//!    schedule and its ticks can go in the next deletions);
//! 7. move a step earlier among the steps at its `now` (kept whenever the
//!    departure stays), then point one id of a step at another promise of
//!    its origin that a request of the trace creates, kept only if the
//!    deletions it opens make the trace smaller ([`objects`]: what the
//!    generator's clones and list moves built, folded back);
//! 8. rename ids to a canonical small set (`a`, `a.1`, `b`, …) and
//!    rebase time to start at a round number.

mod chunks;
mod objects;
mod passes;

use std::io::Write;
use std::time::{Duration, Instant};

use gen::Step;

use crate::check::{Checker, DiffClass};
use crate::exec::{execute, ExecOptions, Execution, Expect};
use crate::target::{Target, TargetError};

pub use chunks::delete_chunks;

/// Shrinker options.
#[derive(Clone, Copy, Debug)]
pub struct ShrinkOptions {
    /// Compare state too (as the original run did).
    pub check_state: bool,
    /// Stop after this long with the best so far: a ceiling for
    /// interactive runs, where wall time is what the user waits.
    pub time: Duration,
    /// Stop after running this many candidates with the best so far
    /// (`None`: no cap). Unlike `time`, the same on a loaded machine as
    /// on an idle one: a gate that must shrink the same way every run
    /// bounds its shrinks by this and sets `time` as a far ceiling.
    pub candidates: Option<usize>,
    /// Once no smaller trace keeps the class, go on keeping only its
    /// headline ([`same_headline`]). For a target known to hold one
    /// departure (`conform mutants`: one planted bug), where any trace
    /// with the same headline shows that departure; never for a server's
    /// run or triage, which roll departures up by the classes they keep.
    pub headline: bool,
}

/// What shrinking produced.
#[derive(Debug)]
pub struct ShrinkResult {
    /// The smallest diverging execution found (the original when nothing
    /// smaller diverges the same way).
    pub best: Execution,
    /// Candidates tried.
    pub tried: usize,
    /// Wall time.
    pub elapsed: Duration,
    /// Whether a budget (time or candidates) ran out.
    pub timed_out: bool,
    /// A target fault that ended the search (with the best so far): a
    /// fault wins over the divergence being shrunk.
    pub fault: Option<TargetError>,
}

/// The size order: fewer steps, then a shorter time span, then deadlines
/// nearer the steps that set them, then fewer bytes of encoded requests.
pub fn size(steps: &[Step]) -> (usize, u64, u64, usize) {
    let mut bytes = 0;
    let mut reach = 0u64;
    for s in steps {
        if let gen::Op::Request(r) = &s.op {
            bytes += model::wire::encode_request(r).to_string().len();
            let mut r = r.clone();
            for t in model::names::deadlines_mut(&mut r) {
                reach = reach.saturating_add(t.abs_diff(s.now));
            }
        }
    }
    let span = match (steps.first(), steps.last()) {
        (Some(a), Some(b)) => b.now.saturating_sub(a.now),
        _ => 0,
    };
    (steps.len(), span, reach, bytes)
}

/// Whether a candidate's class keeps to the original departure: the same
/// step kind and every fact ([`DiffClass::facts`]) of the original
/// divergence (a status change, a data path, a field of a component). A
/// smaller trace may show more (the task's lease still armed where the
/// original's task had been halted), and the shrinker follows it there;
/// one that loses a fact shows less of the departure it set out to keep
/// (a class naming a status, a value and a retry timeout shrunk to one
/// naming the status alone is another class), and is never kept.
fn same_departure(candidate: &DiffClass, origin: &DiffClass) -> bool {
    candidate.kind == origin.kind && candidate.facts().is_superset(&origin.facts())
}

/// Whether a candidate keeps the original's headline: the same step kind
/// and every fact of the response (a status change, a data path, an
/// envelope field), whatever it shows of the state. The state's side
/// effects of a response departure depend on what the objects held (the
/// resumes a task had buffered, the callbacks a promise held), so a
/// history that builds less shows fewer of them: for a task acquired in
/// spite of a stale version, the class found on a task holding a resume
/// needs five steps, the same departure on a fresh task two. `None` when
/// the original's response agreed (a departure of the state alone has no
/// headline to keep).
fn same_headline(candidate: &DiffClass, origin: &DiffClass) -> Option<bool> {
    let headline = origin.response_facts();
    if headline.is_empty() {
        return None;
    }
    Some(candidate.kind == origin.kind && candidate.facts().is_superset(&headline))
}

/// Which candidates a pass keeps (when they diverge the same way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Accept {
    /// Smaller only.
    Smaller,
    /// Smaller, or as small (a canonical renaming).
    SameSize,
    /// No more steps (a reshaping that opens deletions).
    SameSteps,
}

struct Shrinker<'a> {
    target: &'a mut dyn Target,
    checker: &'a mut Checker,
    class: DiffClass,
    /// Whether candidates need keep only the class's headline
    /// ([`ShrinkOptions::headline`]).
    headline_only: bool,
    opts: &'a ShrinkOptions,
    /// When the time budget ends; `None` when it ends past what an
    /// `Instant` can hold (no limit then but the shrink's own end).
    deadline: Option<Instant>,
    tried: usize,
    best: Execution,
    best_steps: Vec<Step>,
    out: &'a mut dyn Write,
    last_report: Instant,
    fault: Option<TargetError>,
}

impl Shrinker<'_> {
    fn expired(&self) -> bool {
        self.opts.candidates.is_some_and(|n| self.tried >= n)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Run a candidate; keep it if it is smaller and diverges the same way.
    fn try_candidate(&mut self, candidate: Vec<Step>) -> bool {
        self.try_candidate_sized(candidate, false)
    }

    /// As [`Self::try_candidate`]; with `same_size_ok`, a candidate no larger
    /// than the best (a canonical renaming) is kept too.
    fn try_candidate_sized(&mut self, candidate: Vec<Step>, same_size_ok: bool) -> bool {
        let accept = if same_size_ok {
            Accept::SameSize
        } else {
            Accept::Smaller
        };
        self.try_candidate_as(candidate, accept)
    }

    /// As [`Self::try_candidate`], kept by `accept`.
    fn try_candidate_as(&mut self, candidate: Vec<Step>, accept: Accept) -> bool {
        if self.expired() {
            return false;
        }
        let candidate = gen::repair(
            &candidate,
            &self.best_steps,
            self.checker.profile.retry_timeout,
        );
        let (new, old) = (size(&candidate), size(&self.best_steps));
        let other = candidate != self.best_steps;
        let kept = match accept {
            Accept::Smaller => new < old,
            Accept::SameSize => new < old || (new == old && other),
            Accept::SameSteps => new.0 <= old.0 && other,
        };
        if candidate.is_empty() || !kept {
            return false;
        }
        self.tried += 1;
        let ex = execute(
            self.target,
            self.checker,
            &candidate,
            Expect::Model,
            ExecOptions {
                check_state: self.opts.check_state,
            },
        );
        if ex.fault.is_some() {
            // A fault while shrinking ends the search with the best so
            // far, and is reported: the caller's verdict is a fault.
            self.deadline = Some(Instant::now());
            self.fault = ex.fault;
            return false;
        }
        let Some((at, d)) = &ex.divergence else {
            return false;
        };
        let kept = if self.headline_only {
            same_headline(&d.class, &self.class) == Some(true)
        } else {
            same_departure(&d.class, &self.class)
        };
        if !kept {
            return false;
        }
        self.best_steps = candidate[..=*at].to_vec();
        self.best = ex;
        if self.last_report.elapsed() > Duration::from_secs(2) {
            self.last_report = Instant::now();
            let _ = writeln!(
                self.out,
                "  shrinking: {} candidates tried, {} steps",
                self.tried,
                self.best_steps.len()
            );
        }
        true
    }
}

/// Shrink `first`, an execution against `target` that diverged, keeping
/// its divergence class. `checker` judges every candidate (with the same
/// profile and deviations as the original run). The original is not run
/// again: `first` is what it did.
pub fn shrink(
    target: &mut dyn Target,
    checker: &mut Checker,
    first: Execution,
    opts: &ShrinkOptions,
    out: &mut dyn Write,
) -> ShrinkResult {
    let started = Instant::now();
    let Some((at, d)) = first.divergence.clone() else {
        return ShrinkResult {
            best: first,
            tried: 0,
            elapsed: started.elapsed(),
            timed_out: false,
            fault: None,
        };
    };
    let best_steps = first.lines[..=at].iter().map(|l| l.step.clone()).collect();
    let mut s = Shrinker {
        target,
        checker,
        class: d.class,
        headline_only: false,
        opts,
        deadline: started.checked_add(opts.time),
        tried: 0,
        best_steps,
        best: first,
        out,
        last_report: Instant::now(),
        fault: None,
    };
    rounds(&mut s);
    if opts.headline && !s.class.response_facts().is_empty() && !s.expired() {
        s.headline_only = true;
        rounds(&mut s);
    }
    let timed_out = s.expired();
    ShrinkResult {
        best: s.best,
        tried: s.tried,
        elapsed: started.elapsed(),
        timed_out,
        fault: s.fault,
    }
}

/// The passes, round after round, until a round finds nothing smaller or
/// the budget ends.
fn rounds(s: &mut Shrinker) {
    loop {
        let before = size(&s.best_steps);
        passes::delete_chunks(s);
        passes::ticks(s);
        passes::claims(s);
        passes::time(s);
        passes::snap_ticks(s);
        let unscheduled = passes::unschedule(s);
        if passes::values(s) || unscheduled {
            // A reshaping kept at the same size pays off only through the
            // deletions it opens: look for them in this round.
            passes::delete_chunks(s);
        }
        objects::hoist(s);
        objects::point(s);
        passes::rename(s);
        if s.expired() || size(&s.best_steps) >= before {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Difference;
    use crate::compare::StateChange;

    fn class(what: Vec<Difference>) -> DiffClass {
        DiffClass {
            kind: "promise.create".into(),
            what,
        }
    }

    /// The headline is the response's facts: a candidate keeping them
    /// and the kind keeps it, whatever it shows of the state; a class of
    /// the state alone has none.
    #[test]
    fn a_headline_is_the_kind_and_the_responses_facts() {
        let status = Difference::Status {
            model: Some(409),
            target: Some(200),
        };
        let resumes = Difference::State {
            component: "resumes".into(),
            change: StateChange::Missing,
        };
        let origin = class(vec![status.clone(), resumes.clone()]);
        assert_eq!(
            same_headline(&class(vec![status.clone()]), &origin),
            Some(true)
        );
        assert_eq!(
            same_headline(&class(vec![resumes.clone()]), &origin),
            Some(false)
        );
        let other = Difference::Status {
            model: Some(409),
            target: Some(404),
        };
        assert_eq!(same_headline(&class(vec![other]), &origin), Some(false));
        let mut other_kind = class(vec![status]);
        other_kind.kind = "task.create".into();
        assert_eq!(same_headline(&other_kind, &origin), Some(false));
        assert_eq!(same_headline(&origin, &class(vec![resumes])), None);
    }

    #[test]
    fn a_candidate_keeps_every_fact_of_the_class_it_set_out_to_keep() {
        let status = Difference::Status {
            model: Some(200),
            target: Some(201),
        };
        let state = |component: &str, field: &str| Difference::State {
            component: component.into(),
            change: StateChange::Fields(vec![field.into()]),
        };
        let origin = class(vec![
            status.clone(),
            state("promises", "value"),
            state("taskTimeouts", "timeout"),
        ]);
        // The status alone, or the status and the value: another class.
        assert!(!same_departure(&class(vec![status.clone()]), &origin));
        assert!(!same_departure(
            &class(vec![status.clone(), state("promises", "value")]),
            &origin
        ));
        // Everything, and a side effect more: the same departure.
        let more = class(vec![
            status,
            state("promises", "value"),
            state("taskTimeouts", "timeout"),
            state("messages", "message"),
        ]);
        assert!(same_departure(&more, &origin));
        assert!(same_departure(&origin, &origin));
        let mut other_kind = origin.clone();
        other_kind.kind = "task.create".into();
        assert!(!same_departure(&other_kind, &origin));
    }
}
