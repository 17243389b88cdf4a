//! `check`'s verdict on one step: the answers a golden file records.
//!
//! **The records are the verdict.** A step passes when the target's
//! response and snapshot match the line's records (`expect`, else `res`;
//! `state`). Where they do not:
//!
//! - if the record is what the spec's model records for that step on the
//!   file's own steps (it is *faithful*: `conform golden` wrote it, firing
//!   timeouts only at ticks), the mismatch is judged by the checker's model
//!   with the latitude rule and the baseline, as `run` judges a step: a
//!   target that fired due timeouts in another allowed order, or departs as
//!   its baseline says, passes; anything else diverges. Once the model has
//!   adopted another schedule, later faithful records describe a history
//!   the target did not take, and the model (which took it) judges them;
//! - if the record is not faithful (the file says something the model does
//!   not: an edited or foreign record), nothing the model allows can excuse
//!   a departure from it: the step diverges against the record.
//!
//! A part of a step that its line does not record (a request without
//! `res`/`expect`, a snapshot compared on a line without `state`) is judged
//! by the checker's model and counted ([`Records::unrecorded`]), so the
//! summary says how much of a file the records did not decide.

use std::collections::BTreeSet;

use serde_json::Value;

use gen::{Op, Step};
use model::machine::Machine;
use model::state::ServerConfig;
use model::view::StateView;

use crate::check::{step_kind, Checked, Checker, DiffClass, Divergence, Judge};
use crate::compare::{diff_state, normalize_response, StateDiff};
use crate::snapshot::Snap;
use crate::trace::Line;

/// A file's records, with what the spec's model says of each.
pub struct Records<'a> {
    lines: &'a [Line],
    /// Per line: whether its response record and its state record are the
    /// spec model's own answers on the file's steps.
    faithful: Vec<(bool, bool)>,
    /// Steps with a compared part their line does not record.
    pub unrecorded: u64,
}

/// How one part (response or state) of a step stands against its record.
enum Part<T> {
    /// The target matches the record, or there is nothing to compare.
    Matches,
    /// The model judges it: the record is faithful but the target differs,
    /// or there is no record.
    Model,
    /// The target departs from a record the model does not reproduce.
    Departs(T),
}

impl<'a> Records<'a> {
    /// The records of `lines`, checked against the spec's model replaying
    /// their steps with `retry_timeout` (the one the records were made with).
    pub fn new(lines: &'a [Line], retry_timeout: u64) -> Records<'a> {
        let mut m = Machine::new(ServerConfig { retry_timeout });
        let faithful = lines
            .iter()
            .map(|l| {
                let res = gen::apply(&mut m, &l.step);
                m.clear_hits();
                let response = match (recorded_response(l), res, &l.step.op) {
                    (Some(want), Some(r), Op::Request(req)) => {
                        let model = model::wire::encode_response(req.kind(), &r, "model");
                        normalize_response(want) == normalize_response(&model)
                    }
                    _ => true,
                };
                let state = l.state.as_ref().is_none_or(|want| {
                    let view = serde_json::to_value(StateView::of(&m.state)).expect("serialises");
                    diff_state(&view, want, &[], &mut BTreeSet::new()).is_empty()
                });
                (response, state)
            })
            .collect();
        Records {
            lines,
            faithful,
            unrecorded: 0,
        }
    }

    /// The verdict on step `i` (`res`, `snap`: what the target answered;
    /// `checked`: the checker's judgement of it) and whether latitude was
    /// used: a divergence against the record, the model's (restricted to
    /// the parts the records leave to it), or none.
    pub fn judge(
        &mut self,
        i: usize,
        step: &Step,
        res: Option<&Value>,
        snap: Option<&Snap>,
        checked: &Checked,
        checker: &mut Checker,
    ) -> (Option<Divergence>, bool) {
        let line = self.lines.get(i);
        let (faithful_res, faithful_state) = self.faithful.get(i).copied().unwrap_or((true, true));
        let response = match (line.and_then(recorded_response), res) {
            (Some(want), Some(got)) => {
                let (w, g) = (normalize_response(want), normalize_response(got));
                if w == g {
                    Part::Matches
                } else if faithful_res {
                    Part::Model
                } else {
                    Part::Departs((w, g))
                }
            }
            (None, Some(_)) => Part::Model,
            (_, None) => Part::Matches,
        };
        let state = match (line.and_then(|l| l.state.as_ref()), snap) {
            (Some(want), Some(got)) => {
                let d = diff_state(
                    want,
                    &got.normalized(),
                    &checker.profile.skip_components,
                    &mut checker.skipped,
                );
                if d.is_empty() {
                    Part::Matches
                } else if faithful_state {
                    Part::Model
                } else {
                    Part::Departs(d)
                }
            }
            (None, Some(_)) => Part::Model,
            (_, None) => Part::Matches,
        };
        let unrecorded = matches!((line.and_then(recorded_response), res), (None, Some(_)))
            || (snap.is_some() && line.is_none_or(|l| l.state.is_none()));
        self.unrecorded += u64::from(unrecorded);
        against_record(step, &response, &state)
            .map(|d| (Some(d), false))
            .unwrap_or_else(|| model_verdict(step, &response, &state, checked))
    }
}

/// The response a line records: a run trace's `expect`, else `res`.
fn recorded_response(l: &Line) -> Option<&Value> {
    l.expect.as_ref().or(l.res.as_ref())
}

/// The divergence against the record, when a part departs from one the
/// model does not reproduce.
fn against_record(
    step: &Step,
    response: &Part<(Value, Value)>,
    state: &Part<Vec<StateDiff>>,
) -> Option<Divergence> {
    let response = match response {
        Part::Departs(r) => Some(r.clone()),
        _ => None,
    };
    let state = match state {
        Part::Departs(d) => d.clone(),
        _ => Vec::new(),
    };
    if response.is_none() && state.is_empty() {
        return None;
    }
    Some(Divergence {
        class: DiffClass::of(&step_kind(step), response.as_ref(), &state),
        response,
        state,
        envelope: Vec::new(),
        judge: Judge::Record,
        branches: Vec::new(),
    })
}

/// The model's verdict on the parts the records leave to it: its
/// divergence, without what the records settled.
fn model_verdict(
    step: &Step,
    response: &Part<(Value, Value)>,
    state: &Part<Vec<StateDiff>>,
    checked: &Checked,
) -> (Option<Divergence>, bool) {
    let (res_model, state_model) = (
        matches!(response, Part::Model),
        matches!(state, Part::Model),
    );
    if !res_model && !state_model {
        return (None, false);
    }
    let Some(d) = &checked.divergence else {
        return (None, checked.used_latitude);
    };
    let response = d.response.clone().filter(|_| res_model);
    let state = if state_model {
        d.state.clone()
    } else {
        Vec::new()
    };
    if response.is_none() && state.is_empty() {
        return (None, false);
    }
    let divergence = Divergence {
        class: DiffClass::of(&step_kind(step), response.as_ref(), &state),
        response,
        state,
        envelope: Vec::new(),
        judge: Judge::Model,
        branches: d.branches.clone(),
    };
    (Some(divergence), false)
}
