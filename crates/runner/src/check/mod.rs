//! One step, checked: the model's answer against what a target observed,
//! with the latitude the spec allows.
//!
//! **The latitude rule.** The spec lets the environment fire an armed
//! timeout at any moment after its deadline, and lets a read either project
//! an expired promise or materialise its timeout first. The model fires
//! only at ticks. So when a target's response or snapshot differs from the
//! model's, the checker searches for internal transitions the spec allows at
//! that moment that explain it ([`search`]): some of the due, armed timeouts
//! fired before the request (in some order), and some of those due after
//! it. If one schedule explains both the response and the snapshot, the
//! model adopts it and the step counts as latitude. What no allowed
//! schedule explains is a divergence, reported against the plain schedule
//! (nothing fired). A tick fires every due timeout; only the order and what
//! becomes due during the tick are open.
//!
//! The checker's model is a [`Deviant`]: the spec, or the spec with a
//! baseline's known deviations applied, so a run goes on past what is known.

mod class;
mod search;

use std::collections::BTreeSet;

use serde_json::Value;

use deviate::{Deviant, Deviation};
use gen::{Coverage, Generator, Op, Step};
use model::api::Response;
use model::branch::Branch;
use model::machine::Timer;
use model::state::ServerConfig;
use model::view::StateView;

use crate::compare::typed::same_answer;
use crate::compare::{diff_state, normalize_response, same_response, StateDiff};
use crate::profile::Profile;
use crate::snapshot::{Agreement, Snap};
use crate::target::EnvelopeDeparture;

pub use class::{DiffClass, Difference};
pub use search::{MAX_ATTEMPTS, PHASE_BUDGET};

/// A divergence at one step.
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence {
    /// Its class.
    pub class: DiffClass,
    /// Normalised model and target responses, when they differ.
    pub response: Option<(Value, Value)>,
    /// State differences.
    pub state: Vec<StateDiff>,
    /// The step's answers' departures from the protocol's envelope.
    pub envelope: Vec<EnvelopeDeparture>,
    /// What the target was held to.
    pub judge: Judge,
    /// The Lean branches the model's own schedule took at the step, in the
    /// order it took them (empty where no model answer was compared: a
    /// recorded verdict, a refusal that changed state). Two departures
    /// under one difference (a version kept on a new task and on a
    /// re-acquired one) part here, and triage keys its classes by them.
    pub branches: Vec<Branch>,
}

impl Divergence {
    /// The divergence of a step of `kind` whose answers departed from the
    /// protocol's envelope, whatever the model says: the departures first,
    /// then what the model found (`model`), if anything.
    pub fn of_envelope(
        kind: &str,
        departures: Vec<EnvelopeDeparture>,
        model: Option<Divergence>,
    ) -> Divergence {
        let class = DiffClass::of_envelope(kind, &departures, model.as_ref().map(|d| &d.class));
        let (response, state, branches) = model.map_or((None, Vec::new(), Vec::new()), |d| {
            (d.response, d.state, d.branches)
        });
        Divergence {
            class,
            response,
            state,
            envelope: departures,
            judge: Judge::Model,
            branches,
        }
    }
}

/// What a divergence holds the target to: the model's answer (with its
/// latitude and baseline), or a golden file's record the model does not
/// reproduce (`check`: the records are the verdict).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judge {
    /// The checker's model.
    Model,
    /// A golden file's record.
    Record,
}

impl Judge {
    /// How diffs name this side (`- model`, `- record`).
    pub fn name(self) -> &'static str {
        match self {
            Judge::Model => "model",
            Judge::Record => "record",
        }
    }
}

/// The outcome of checking one step.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The model's answer, typed (`None` for a tick); its envelope is
    /// [`Checker::encode`]'s, built only when something needs it.
    pub answer: Option<Response>,
    /// `Some` when no allowed schedule explains the target.
    pub divergence: Option<Divergence>,
    /// Whether an allowed schedule other than the plain one was adopted.
    pub used_latitude: bool,
}

/// The model side of a differential run.
pub struct Checker {
    /// The model, with the deviations it was asked to apply.
    pub model: Deviant,
    /// The target's profile.
    pub profile: Profile,
    /// Snapshot components the target lacks (said once per run).
    pub skipped: BTreeSet<String>,
    /// Branches taken by adopted schedules.
    pub coverage: Coverage,
    /// Whether answers that agree are recognised on the typed path
    /// ([`crate::compare::typed`]) before any JSON is built (default); off,
    /// every answer is encoded and compared as JSON. The verdicts are the
    /// same either way (tests run both).
    pub typed: bool,
}

/// One schedule tried: what the model answered and how it compared.
struct Attempt {
    answer: Option<Response>,
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
    /// A checker with a fresh spec-exact model configured by the profile.
    pub fn new(profile: Profile) -> Checker {
        Checker::with_deviations(profile, Vec::new())
    }

    /// A checker whose model applies `deviations` (a baseline).
    pub fn with_deviations(profile: Profile, deviations: Vec<&'static Deviation>) -> Checker {
        let config = ServerConfig {
            retry_timeout: profile.retry_timeout,
        };
        Checker {
            model: Deviant::new(config, deviations),
            coverage: Coverage::without_kinds(&profile.omit_kinds),
            profile,
            skipped: BTreeSet::new(),
            typed: true,
        }
    }

    /// The model's response envelope for `step` (a request) whose typed
    /// answer was `answer`, as the checker's model encodes it.
    pub fn encode(&self, step: &Step, answer: &Response) -> Option<Value> {
        match &step.op {
            Op::Request(req) => Some(self.model.encode(req, answer, "model")),
            Op::Tick => None,
        }
    }

    /// The trace of `steps` steps named by `seed`, generated under the
    /// profile (its kinds, its retry timeout) from this checker's model: with
    /// a baseline, the generator reads the state the baseline's deviations
    /// leave, so it aims at what the target is expected to hold. The whole
    /// trace at once, for those that need it (tests); `run` and the mutants
    /// hunt pull steered cases from [`Checker::campaign`], whose cases grown
    /// from nothing are these.
    pub fn generate(&self, seed: u64, steps: usize, probe_pct: u64) -> Vec<Step> {
        self.stream(seed, steps, probe_pct).collect()
    }

    /// The steps of [`Checker::generate`], each chosen when it is pulled:
    /// a case starts running before its last step exists.
    pub fn stream(&self, seed: u64, steps: usize, probe_pct: u64) -> std::iter::Take<Generator> {
        gen::stream(
            seed,
            &self.gen_config(steps, probe_pct),
            &self.model.stepper(),
        )
    }

    /// The steered cases of run seed `run_seed` ([`gen::Campaign`]),
    /// generated under the profile from this checker's model as
    /// [`Checker::stream`] generates one: case `i` of `run` and of the
    /// mutants hunt is `campaign.case(i)`, a stream like
    /// [`Checker::stream`]'s (a case grown from nothing is exactly it).
    pub fn campaign(&self, run_seed: u64, steps: usize, probe_pct: u64) -> gen::Campaign {
        let cfg = self.gen_config(steps, probe_pct);
        gen::Campaign::new(run_seed, &cfg, &self.model.stepper())
    }

    /// The generator's settings under this checker's profile, shared by
    /// [`Checker::stream`] and [`Checker::campaign`] so a campaign's case
    /// grown from nothing is exactly the stream's.
    fn gen_config(&self, steps: usize, probe_pct: u64) -> gen::GenConfig {
        gen::GenConfig {
            steps,
            retry_timeout: self.profile.retry_timeout,
            kinds: self.profile.kinds(),
            probe_pct,
            ..gen::GenConfig::default()
        }
    }

    /// A fresh model with this checker's config and deviations (for passes
    /// that replay a trace on the side).
    pub fn fresh_model(&self) -> Deviant {
        Deviant::new(self.model.state.config, self.model.deviations().to_vec())
    }

    /// Forget the model's state (a new case), keeping run-wide counters.
    pub fn reset(&mut self) {
        self.model.reset();
    }

    /// Check one step: `res` is the target's response envelope (ignored for
    /// ticks), `snap` its snapshot after the step when state is compared.
    pub fn check(&mut self, step: &Step, res: Option<&Value>, snap: Option<&Snap>) -> Checked {
        let mark = self.model.state.checkpoint();
        let plain = self.attempt(step, &[], &[], res, snap);
        if plain.fits() {
            return self.adopt(plain, false);
        }
        self.model.state.rollback(mark);
        if let Some(found) = self.search(step, &plain, res, snap, mark) {
            return self.adopt(found, true);
        }
        // Nothing explains it: report against the plain schedule.
        self.model.state.rollback(mark);
        let plain = self.attempt(step, &[], &[], res, snap);
        let divergence = Divergence {
            class: DiffClass::of(&step_kind(step), plain.response.as_ref(), &plain.state),
            response: plain.response.clone(),
            state: plain.state.clone(),
            envelope: Vec::new(),
            judge: Judge::Model,
            branches: plain.hits.clone(),
        };
        let mut checked = self.adopt(plain, false);
        checked.divergence = Some(divergence);
        checked
    }

    fn adopt(&mut self, a: Attempt, latitude: bool) -> Checked {
        self.model.state.commit();
        self.coverage.hit.extend(a.hits.iter().copied());
        Checked {
            answer: a.answer,
            divergence: None,
            used_latitude: latitude,
        }
    }

    /// Fire `before`, run the step, fire `after`, compare. A tick fires all
    /// that is due: `before` then fixes its order (when empty the model's
    /// own order is used).
    fn attempt(
        &mut self,
        step: &Step,
        before: &[Timer],
        after: &[Timer],
        res: Option<&Value>,
        snap: Option<&Snap>,
    ) -> Attempt {
        self.model.clear_hits();
        let answer = match &step.op {
            Op::Request(req) => {
                self.fire_all(before, step.now);
                Some(self.model.apply(req, step.now))
            }
            Op::Tick if before.is_empty() => {
                self.model.tick(step.now);
                None
            }
            Op::Tick => {
                self.fire_all(before, step.now);
                None
            }
        };
        self.fire_all(after, step.now);
        let response = match (&step.op, &answer, res) {
            (Op::Request(req), Some(a), Some(r)) => self.response_diff(req, a, r),
            _ => None,
        };
        let state = self.state_diff(snap);
        Attempt {
            answer,
            response,
            state,
            hits: self.model.take_hits(),
        }
    }

    /// The normalised model and target responses when they differ. An
    /// answer the typed path finds the same builds no JSON; any other is
    /// encoded and compared as JSON, which names the difference.
    fn response_diff(
        &self,
        req: &model::api::Request,
        answer: &Response,
        res: &Value,
    ) -> Option<(Value, Value)> {
        if self.typed
            && self.model.encodes_plainly()
            && same_answer(req.kind(), answer, res) == Some(true)
        {
            return None;
        }
        let e = self.model.encode(req, answer, "model");
        if same_response(&e, res) {
            return None;
        }
        let (m, t) = (normalize_response(&e), normalize_response(res));
        (m != t).then_some((m, t))
    }

    /// Fire each timer that is still armed and due when its turn comes, so
    /// no schedule ever fires what the spec forbids.
    fn fire_all(&mut self, timers: &[Timer], now: u64) {
        for t in timers {
            if t.is_due(&self.model, now) {
                self.model.fire(t, now);
            }
        }
    }

    fn state_diff(&mut self, snap: Option<&Snap>) -> Vec<StateDiff> {
        let Some(snap) = snap else { return Vec::new() };
        let view = StateView::of(&self.model.state);
        if let Agreement::Same { missing } = snap.agrees(&view, &self.profile.skip_components) {
            self.skipped.extend(missing.into_iter().map(str::to_string));
            return Vec::new();
        }
        let view = serde_json::to_value(view).expect("view serialises");
        diff_state(
            &view,
            &snap.normalized(),
            &self.profile.skip_components,
            &mut self.skipped,
        )
    }
}

/// A step's kind as reports name it.
pub fn step_kind(step: &Step) -> String {
    match &step.op {
        Op::Request(r) => r.kind().to_string(),
        Op::Tick => "debug.tick".to_string(),
    }
}
