//! One step, checked: the model's answer against what a target observed,
//! with the latitude the spec allows.
//!
//! **The latitude rule.** The spec lets the environment fire an armed
//! timeout at any moment after its deadline, and lets a read either project
//! an expired promise or materialise its timeout first. The model fires
//! only at ticks. So when a target's response or snapshot differs from the
//! model's, the checker searches for internal transitions the spec allows at
//! that moment that explain it: some of the due, armed timeouts fired before
//! the request (in some order), and some of those due after it. If one
//! schedule explains both the response and the snapshot, the model adopts
//! it and the step counts as latitude. What no allowed schedule explains is
//! a divergence, reported against the plain schedule (nothing fired).
//! A tick fires every due timeout; only the order and what becomes due
//! during the tick are open.

use std::collections::BTreeSet;

use serde_json::Value;

use gen::{Op, Step};
use model::branch::Branch;
use model::machine::{Machine, Timer};
use model::state::{LEASE, RETRY};
use model::view::StateView;

use crate::compare::{diff_state, differing_paths, normalize_response, StateDiff};
use crate::latitude;
use crate::profile::Profile;
use crate::snapshot::Snap;

/// At most this many schedules are tried for one step.
pub const MAX_ATTEMPTS: usize = 512;

/// How a step departed from the model, independent of ids: the shrinker
/// keeps a candidate only if it diverges in the same class.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DiffClass {
    /// The step's kind (`task.acquire`, `debug.tick`).
    pub kind: String,
    /// `status:200->409`, `data:task.version`, `state:tasks.version`, …
    pub what: Vec<String>,
}

impl std::fmt::Display for DiffClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}]", self.kind, self.what.join("; "))
    }
}

/// A divergence at one step.
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence {
    /// Its class.
    pub class: DiffClass,
    /// Normalised model and target responses, when they differ.
    pub response: Option<(Value, Value)>,
    /// State differences.
    pub state: Vec<StateDiff>,
}

/// The outcome of checking one step.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The model's response envelope (`None` for a tick).
    pub expect: Option<Value>,
    /// `Some` when no allowed schedule explains the target.
    pub divergence: Option<Divergence>,
    /// Whether an allowed schedule other than the plain one was adopted.
    pub used_latitude: bool,
}

/// The model side of a differential run.
pub struct Checker {
    /// The model.
    pub model: Machine,
    /// The target's profile.
    pub profile: Profile,
    /// Snapshot components the target lacks (said once per run).
    pub skipped: BTreeSet<String>,
    /// Branches taken by adopted schedules.
    pub hits: BTreeSet<Branch>,
    /// Steps explained by latitude.
    pub latitude: u64,
}

struct Attempt {
    expect: Option<Value>,
    response: Option<(Value, Value)>,
    state: Vec<StateDiff>,
    hits: Vec<Branch>,
}

impl Attempt {
    fn fits(&self) -> bool {
        self.response.is_none() && self.state.is_empty()
    }
}

impl Checker {
    /// A checker with a fresh model configured by the profile.
    pub fn new(profile: Profile) -> Checker {
        let config = model::state::ServerConfig {
            retry_timeout: profile.retry_timeout,
        };
        Checker {
            model: Machine::new(config),
            profile,
            skipped: BTreeSet::new(),
            hits: BTreeSet::new(),
            latitude: 0,
        }
    }

    /// Forget the model's state (a new case), keeping run-wide counters.
    pub fn reset(&mut self) {
        let config = self.model.state.config;
        self.model = Machine::new(config);
    }

    /// Check one step: `res` is the target's response envelope (ignored for
    /// ticks), `snap` its snapshot after the step when state is compared.
    ///
    /// The search runs breadth first within a budget of [`MAX_ATTEMPTS`]:
    /// first every schedule before the step with nothing after it, then, for
    /// each of those whose response fits, the schedules after it.
    pub fn check(&mut self, step: &Step, res: Option<&Value>, snap: Option<&Snap>) -> Checked {
        let mark = self.model.state.checkpoint();
        let plain = self.attempt(step, &[], res, snap);
        if plain.fits() {
            return self.adopt(plain, false);
        }
        self.model.state.rollback(mark);
        let hints = hints(step, &plain);
        let due = self.model.due(step.now);
        let mut pres = vec![Vec::new()];
        pres.extend(match &step.op {
            Op::Tick => latitude::tick_orders(&due, &self.model),
            Op::Request(_) => latitude::around_request(&due, &hints),
        });
        let mut budget = MAX_ATTEMPTS;
        let mut response_fits = Vec::new();
        if plain.response.is_none() {
            response_fits.push(0);
        }
        for (i, pre) in pres.iter().enumerate().skip(1) {
            if budget == 0 {
                break;
            }
            budget -= 1;
            let a = self.attempt(step, pre, res, snap);
            if a.fits() {
                return self.adopt(a, true);
            }
            if a.response.is_none() {
                response_fits.push(i);
            }
            self.model.state.rollback(mark);
        }
        if snap.is_some() {
            for i in response_fits {
                if budget == 0 {
                    break;
                }
                let a = self.attempt(step, &pres[i], res, snap);
                let inner = self.model.state.checkpoint();
                let after = self.model.due(step.now);
                for post in latitude::around_request(&after, &hints) {
                    if budget == 0 {
                        break;
                    }
                    budget -= 1;
                    self.model.clear_hits();
                    self.fire_all(&post, step.now);
                    let state = self.state_diff(snap);
                    if state.is_empty() {
                        let mut hits = a.hits.clone();
                        hits.extend(self.model.take_hits());
                        return self.adopt(Attempt { state, hits, ..a }, true);
                    }
                    self.model.state.rollback(inner);
                }
                self.model.state.rollback(mark);
            }
        }
        // Nothing explains it: report against the plain schedule.
        let plain = self.attempt(step, &[], res, snap);
        let class = classify(step, &plain);
        self.model.state.commit();
        self.hits.extend(plain.hits.iter().copied());
        Checked {
            expect: plain.expect,
            divergence: Some(Divergence {
                class,
                response: plain.response,
                state: plain.state,
            }),
            used_latitude: false,
        }
    }

    fn adopt(&mut self, a: Attempt, latitude: bool) -> Checked {
        self.model.state.commit();
        self.hits.extend(a.hits.iter().copied());
        if latitude {
            self.latitude += 1;
        }
        Checked {
            expect: a.expect,
            divergence: None,
            used_latitude: latitude,
        }
    }

    /// Fire `pre`, run the step, compare. A tick fires all that is due
    /// (`pre` then fixes the order; when empty the documented order is used).
    fn attempt(
        &mut self,
        step: &Step,
        pre: &[Timer],
        res: Option<&Value>,
        snap: Option<&Snap>,
    ) -> Attempt {
        self.model.clear_hits();
        let expect = match &step.op {
            Op::Request(req) => {
                self.fire_all(pre, step.now);
                let r = self.model.apply(req, step.now);
                Some(model::wire::encode_response(req.kind(), &r, "model"))
            }
            Op::Tick if pre.is_empty() => {
                self.model.tick(step.now);
                None
            }
            Op::Tick => {
                // `pre` is an order of everything due: the whole tick.
                self.fire_all(pre, step.now);
                None
            }
        };
        let response = match (&expect, res) {
            (Some(e), Some(r)) => {
                let (m, t) = (
                    normalize_response(e, &self.profile),
                    normalize_response(r, &self.profile),
                );
                (m != t).then_some((m, t))
            }
            _ => None,
        };
        let state = self.state_diff(snap);
        Attempt {
            expect,
            response,
            state,
            hits: self.model.take_hits(),
        }
    }

    fn fire_all(&mut self, timers: &[Timer], now: u64) {
        for t in timers {
            if is_due(&self.model, t, now) {
                self.model.fire(t, now);
            }
        }
    }

    fn state_diff(&mut self, snap: Option<&Snap>) -> Vec<StateDiff> {
        let Some(snap) = snap else { return Vec::new() };
        let view = StateView::of(&self.model.state);
        if self.profile.ignore_state_fields.is_empty() {
            if let Some(Ok(missing)) = snap.agrees(&view, &self.profile.skip_components) {
                self.skipped.extend(missing.into_iter().map(str::to_string));
                return Vec::new();
            }
        }
        let view = serde_json::to_value(view).expect("view serialises");
        diff_state(&view, &snap.normalized(), &self.profile, &mut self.skipped)
    }
}

/// Whether `t` is armed with a deadline ≤ `now`.
pub fn is_due(m: &Machine, t: &Timer, now: u64) -> bool {
    let s = &m.state;
    let at = match t {
        Timer::Promise(id) => s.promise_timeouts().get(id),
        Timer::TaskRetry(id) => s.task_timeouts(RETRY).get(id),
        Timer::TaskLease(id) => s.task_timeouts(LEASE).get(id),
        Timer::Schedule(id) => s.schedule_timeouts().get(id),
    };
    at.is_some_and(|at| at <= now)
}

fn classify(step: &Step, a: &Attempt) -> DiffClass {
    let kind = match &step.op {
        Op::Request(r) => r.kind().to_string(),
        Op::Tick => "debug.tick".to_string(),
    };
    let mut what = Vec::new();
    if let Some((m, t)) = &a.response {
        if m["status"] != t["status"] {
            what.push(format!("status:{}->{}", m["status"], t["status"]));
        } else {
            let paths = differing_paths(&m["data"], &t["data"]);
            what.push(format!(
                "data:{}",
                paths.into_iter().collect::<Vec<_>>().join(",")
            ));
        }
    }
    let classes: BTreeSet<String> = a
        .state
        .iter()
        .map(|d| format!("state:{}", d.class()))
        .collect();
    what.extend(classes);
    DiffClass { kind, what }
}

/// Ids worth firing first: those the request names and those the plain
/// attempt's state diff mentions (keys are `id`, `id/kind`, `a/b`, `p:notify:addr`).
fn hints(step: &Step, plain: &Attempt) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    if let Op::Request(r) = &step.op {
        let mut r = r.clone();
        ids.extend(
            crate::edit::promise_ids_mut(&mut r)
                .into_iter()
                .map(|s| s.clone()),
        );
    }
    for d in &plain.state {
        let id = d.key.split(':').next().unwrap_or(&d.key);
        ids.extend(id.split('/').map(str::to_string));
        ids.extend(d.key.strip_prefix("execute:").map(str::to_string));
    }
    ids
}
