//! Replaying a sequence of steps against a target and the model together:
//! the loop shared by `run`, `replay` and `shrink`.

use std::time::Duration;

use serde_json::Value;

use gen::{Op, Step};

use crate::check::{Checker, Divergence};
use crate::snapshot::Snap;
use crate::target::{Target, TargetError};
use crate::trace::Line;

/// What to compare.
#[derive(Clone, Copy, Debug)]
pub struct ExecOptions {
    /// Compare `debug.snap` after every step.
    pub check_state: bool,
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
    /// Time spent waiting on the target.
    pub target_time: Duration,
}

/// `debug.start`, `debug.reset`, then every step; stops at the first
/// divergence or fault.
pub fn execute(
    target: &mut Target,
    checker: &mut Checker,
    steps: &[Step],
    opts: ExecOptions,
) -> Execution {
    let mut ex = Execution {
        lines: Vec::with_capacity(steps.len()),
        divergence: None,
        fault: None,
        latitude: 0,
        target_time: Duration::ZERO,
    };
    checker.reset();
    if let Err(e) = target.start_and_reset() {
        ex.fault = Some(e);
        return ex;
    }
    for step in steps {
        let started = std::time::Instant::now();
        let observed = observe(target, step, opts.check_state);
        ex.target_time += started.elapsed();
        let (res, snap) = match observed {
            Ok(o) => o,
            Err(e) => {
                ex.lines.push(Line::of(step.clone()));
                ex.fault = Some(e);
                return ex;
            }
        };
        let checked = checker.check(step, res.as_ref(), snap.as_ref());
        ex.latitude += u64::from(checked.used_latitude);
        let mut line = Line::of(step.clone());
        line.res = res;
        line.expect = checked.expect;
        if let Some(d) = checked.divergence {
            line.diverged = true;
            ex.lines.push(line);
            ex.divergence = Some((ex.lines.len() - 1, d));
            return ex;
        }
        ex.lines.push(line);
    }
    ex
}

/// Send one step to the target; fetch its snapshot when asked.
fn observe(
    target: &mut Target,
    step: &Step,
    snap: bool,
) -> Result<(Option<Value>, Option<Snap>), TargetError> {
    let res = match &step.op {
        Op::Request(r) => {
            Some(target.call(r.kind(), model::wire::encode_request(r), Some(step.now))?)
        }
        Op::Tick => {
            target.tick(step.now)?;
            None
        }
    };
    let snap = if snap { Some(target.snap()?) } else { None };
    Ok((res, snap))
}
