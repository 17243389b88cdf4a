//! The state-aware generator: one model, one step at a time.
//!
//! Each step first advances `now` ([`crate::clock`]), then is a tick (about
//! one step in nine, more when a deadline has just come due) or a request:
//! about what just came due ([`crate::focus`]), or of a kind drawn from
//! fixed weights with fields chosen by reading the model. The step is applied to the
//! generator's own machine before the next is chosen, so every choice sees
//! the state the previous steps built.
//!
//! The model is the spec's unless the generator is given a [`Stepper`]: a
//! run against a baseline generates from the model with the baseline's
//! deviations, the same model its checker expects the target to be, so the
//! clock lands on deadlines that are armed *there* and requests name what
//! exists *there* (a baseline that settles expired promises on read, or arms
//! no timeout for some promises, would otherwise send the generator after
//! objects the target no longer has).

mod aimed;
mod frozen;
mod kinds;
mod stepper;

use model::machine::Machine;
use model::state::ServerConfig;
use model::types::Time;
use proptest::prelude::{any, Strategy};
use proptest::test_runner::TestRng;

use crate::dice::{seeded_rng, Dice};
use crate::focus::Due;
use crate::index::Index;
use crate::pools::World;
use crate::{clock, GenConfig, Op, Step};
use kinds::{build, request};

pub use kinds::{BUILD, FAVOUR};
pub use stepper::Stepper;

/// Percent of steps that are ticks.
const TICK_PCT: u64 = 11;
/// The candidates an aimed step tries on the model.
const AIM_TRIES: usize = 12;
/// The steps of its own history a generator that aims further keeps at
/// least (at most twice as many): what a clone replays.
const LOG_MAX: usize = 512;
/// Percent of steps that are ticks when a deadline has just passed.
const TICK_WHEN_PASSED_PCT: u64 = 40;
/// Percent of the other steps then that are requests about what came due.
const FOCUS_PCT: u64 = 50;

/// A reference model plus the clock and the dice: chooses each step by
/// reading the model, then applies it. It is an endless [`Iterator`] of
/// steps (`take(n)` for a case of `n`), so a runner can pull one step at a
/// time and send it before the next is chosen; the same seed gives the
/// same steps however they are pulled.
///
/// A concurrent run that drives several clients at once moves the clock
/// itself, in epochs: [`Generator::advance_clock`] between epochs, then
/// [`Generator::step_frozen`] once per operation at that `now`
/// ([`Generator::step_frozen_writing`] for one a rival joins), from a
/// model the run may hand over ([`Generator::resume`]).
#[derive(Clone, Debug)]
pub struct Generator {
    machine: Machine,
    /// The sorted pools of `machine`'s state, fed by its change feed.
    index: Index,
    stepper: Stepper,
    rng: TestRng,
    /// The `now` before the last advance: what came due since is aimed at.
    since: Time,
    now: Time,
    kinds: crate::Kinds,
    /// Kinds drawn [`FAVOUR`] times as often.
    favour: crate::Kinds,
    probe_pct: u64,
    /// Whether the clock lands on any deadline's instants more often
    /// ([`crate::clock::advance_sharp`]): a case the steering grows.
    sharp: bool,
    /// Steps left in a dense phase ([`Generator::dense`]): the clock takes
    /// small steps and the requests that build are favoured.
    dense: usize,
    /// Whether the branches and markers its steps take are kept for
    /// [`Generator::drain_hits_into`] (the steering learns from them
    /// without replaying the case on a second model).
    recording: bool,
    /// What the campaign has not reached yet, for aimed steps
    /// ([`Generator::aimed_at`]).
    aim: Option<crate::aim::Aim>,
    /// Whether an aimed step whose drawn candidates led nowhere also tries
    /// them retimed, the walkers of long lists and clones of their
    /// elements ([`Generator::aimed_further`]).
    further: bool,
    /// The steps that built the model (kept only when `further`): the
    /// history it was given, then its own steps, [`LOG_MAX`] of the oldest
    /// dropped whenever it reaches twice that (so at most the longer of the
    /// history and `2 * LOG_MAX` steps): what a clone replays
    /// ([`crate::clone::replayed`]).
    log: Vec<Step>,
    /// Steps an aimed step planned (the rest of a clone, then the walk of
    /// its list): the next steps take them first, while they stay well
    /// formed.
    plan: std::collections::VecDeque<Step>,
    /// Whether a mix of awaiters made whole reached nothing wanted
    /// ([`Generator::mixed`]): the model this generator aims with walks
    /// no mix the way the aim wants (a baseline's deviant model), so the
    /// case stops paying for it.
    mix_dry: bool,
    /// [`clock::horizon`] of the state as it stands from the `now` it was
    /// computed from: the candidates of an aimed step all advance from one
    /// `now` on one state (a step taken clears it).
    ahead: (Option<Time>, Vec<Time>),
}

impl Generator {
    /// An empty spec model with `cfg.retry_timeout`, its clock at
    /// `cfg.start`, its dice seeded with `seed` ([`seeded_rng`]).
    pub fn new(seed: u64, cfg: &GenConfig) -> Self {
        Generator::with_stepper(seed, cfg, Stepper::spec())
    }

    /// An empty model with `cfg.retry_timeout` that takes its steps with
    /// `stepper`, its clock at `cfg.start`.
    pub fn with_stepper(seed: u64, cfg: &GenConfig, stepper: Stepper) -> Self {
        let machine = Machine::new(ServerConfig {
            retry_timeout: cfg.retry_timeout,
        });
        Generator::resume(machine, cfg.start, cfg, &stepper, seed)
    }

    /// A generator that goes on from `machine` (a state some other run
    /// reached, with its own config) at `now`, generating `cfg.kinds` with
    /// `cfg.probe_pct` percent probes (`cfg.steps`, `cfg.start` and
    /// `cfg.retry_timeout` are not read). Its pools are built from the
    /// state once, then kept up to date step by step.
    pub fn resume(
        mut machine: Machine,
        now: Time,
        cfg: &GenConfig,
        stepper: &Stepper,
        seed: u64,
    ) -> Self {
        machine.state.watch();
        machine.state.take_touched();
        let index = Index::of(&machine);
        Generator {
            machine,
            index,
            stepper: stepper.clone(),
            rng: seeded_rng(seed),
            since: now,
            now,
            kinds: cfg.kinds,
            favour: cfg.favour,
            probe_pct: cfg.probe_pct,
            sharp: false,
            dense: 0,
            recording: false,
            aim: None,
            further: false,
            log: Vec::new(),
            plan: Default::default(),
            mix_dry: false,
            ahead: (None, Vec::new()),
        }
    }

    /// This generator with its clock sharpened: it lands on the instants
    /// of any deadline ahead (at, one before, one past) more often, where
    /// off-by-one bugs show. The steering grows its cases so
    /// ([`crate::Campaign`]); random cases keep the plain clock.
    pub fn sharpened(mut self) -> Self {
        self.sharp = true;
        self
    }

    /// This generator with a dense phase of `steps` steps first: its clock
    /// takes small steps ([`clock::advance_dense`]) and the kinds that
    /// build what a settlement's loops walk ([`BUILD`]: promises and tasks,
    /// callbacks, suspends) are drawn [`FAVOUR`] times as often, unless the
    /// run favours kinds of its own. A steered case's clock otherwise jumps
    /// onto deadlines about every other step, which keeps its world nearly
    /// empty (in the default runs of seeds 1–6, no live promise at all at
    /// 35% of the steps, one at another 35%): the lists a loop walks grow
    /// one element a step, and a promise with two suspended awaiters,
    /// which a settlement's "all" needs, was never built. The requests
    /// are still sharpened as the case's are (`crate::sharpen`); after the
    /// phase the clock sharpens again.
    pub fn dense(mut self, steps: usize) -> Self {
        self.dense = steps;
        self
    }

    /// This generator's aimed steps ([`Generator::aimed_at`]) looking
    /// further when none of the candidates they drew leads anywhere: each
    /// drawn request of a kind whose boundary markers are still wanted is
    /// tried at the instants of the deadlines it names
    /// ([`crate::aim::instants`]), then the steps that walk the longest
    /// lists the state holds ([`crate::walk`]), then a clone of an element
    /// of such a list followed by its walk ([`crate::clone`]), then a mix
    /// of awaiters made around an acquired task and its settlement
    /// ([`crate::walk::mixed_awaiters`]). `history`
    /// is the steps that built its model (a kept prefix): what a clone
    /// replays, with the steps it takes itself.
    pub fn aimed_further(mut self, history: Vec<Step>) -> Self {
        self.further = true;
        self.log = history;
        self
    }

    /// Whether a dense phase ([`Generator::dense`]) has steps left.
    pub fn in_dense_phase(&self) -> bool {
        self.dense > 0
    }

    /// This generator aimed at `aim`: [`crate::aim::Aim::pct`] percent of
    /// its steps (all, until aimed steps keep leading nowhere) are
    /// the first of [`AIM_TRIES`] drawn steps that, tried on the model,
    /// reaches a branch or marker `aim` still wants (else, unless it aims
    /// further ([`Generator::aimed_further`]), the first drawn).
    /// A want reached by a step is dropped, so the case moves on to the
    /// next. The steps stay a function of the seed and the aim (its wants
    /// and its dry run, [`crate::aim::Aim::dry`]).
    pub fn aimed_at(mut self, aim: crate::aim::Aim) -> Self {
        self.aim = Some(aim);
        self
    }

    /// What this generator aims at now, if it aims.
    pub fn aim(&self) -> Option<&crate::aim::Aim> {
        self.aim.as_ref()
    }

    /// Whether the branches and markers of the steps from now on are kept
    /// until [`Generator::drain_hits_into`] takes them (off: forgotten).
    pub fn set_recording(&mut self, on: bool) {
        self.recording = on;
        if !on {
            self.machine.clear_hits();
        }
    }

    /// Move the branches, then the markers, taken by the steps since the
    /// last call onto `out` (nothing unless [`Generator::set_recording`]).
    pub fn drain_hits_into(&mut self, out: &mut Vec<model::branch::Branch>) {
        self.machine.drain_hits_into(out);
    }

    /// The model after every step generated so far.
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// The index the generator keeps of its model (for its own tests).
    #[cfg(test)]
    pub(crate) fn index(&self) -> &Index {
        &self.index
    }

    /// The `now` of the last step (the start before the first), or the one
    /// [`Generator::advance_clock`] moved to.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Choose the next step from the model state, apply it to the model,
    /// and return it: the clock advances ([`Generator::advance_clock`]),
    /// then one step at that `now` ([`Generator::step_frozen`]).
    pub fn next_step(&mut self) -> Step {
        if let Some(step) = self.plan.pop_front() {
            if step.now >= self.now && crate::well_formed(&step, &self.machine).is_ok() {
                self.since = self.now;
                self.now = step.now;
                return self.commit(step.op);
            }
            self.plan.clear();
        }
        if let Some(mut aim) = self.aim.take() {
            let pct = aim.pct();
            let aimed = (!aim.is_empty() && self.rng.chance(pct)).then(|| self.aimed(&mut aim));
            self.aim = Some(aim);
            if let Some((now, op)) = aimed {
                self.since = self.now;
                self.now = now;
                return self.commit(op);
            }
        }
        self.advance_clock();
        self.step_frozen()
    }

    /// Move the clock to the next `now` ([`crate::clock`]: small steps,
    /// onto, just before and just past deadlines) and return it. The next
    /// [`Generator::step_frozen`] aims at what came due on the way.
    pub fn advance_clock(&mut self) -> Time {
        self.since = self.now;
        self.now = self.clock(self.now);
        self.now
    }

    /// A `now` after `from`, drawn by the generator's clock.
    fn clock(&mut self, from: Time) -> Time {
        let w = World {
            m: &self.machine,
            ix: &self.index,
        };
        if self.ahead.0 != Some(from) {
            self.ahead = (Some(from), clock::horizon(w, from));
        }
        let ahead = &self.ahead.1;
        if self.dense > 0 {
            clock::advance_dense(from, ahead, &mut self.rng)
        } else if self.sharp {
            clock::advance_sharp(w, from, ahead, &mut self.rng)
        } else {
            clock::advance(w, from, ahead, &mut self.rng)
        }
    }

    /// One step at the current `now`, the clock left where it is: a tick
    /// (about one step in nine, more when a deadline has just come due) or
    /// a request, chosen by reading the model, then applied to it. Later
    /// frozen steps at the same `now` aim only at what is due exactly then.
    pub fn step_frozen(&mut self) -> Step {
        let op = self.draw(self.since, self.now);
        self.commit(op)
    }

    /// Apply `op` at the current `now` to the model and return it as the
    /// step taken: what an aimed generator still wants loses what it
    /// reached, the index follows the state.
    fn commit(&mut self, op: Op) -> Step {
        let step = Step { now: self.now, op };
        self.stepper.step(&mut self.machine, &step);
        if self.further {
            if self.log.len() >= 2 * LOG_MAX {
                self.log.drain(..LOG_MAX);
            }
            self.log.push(step.clone());
        }
        if let Some(aim) = self.aim.as_mut() {
            aim.reached(self.machine.hits_and_marks());
        }
        if !self.recording {
            self.machine.clear_hits();
        }
        let touched = self.machine.state.take_touched();
        self.index.update(&self.machine, touched);
        self.ahead.0 = None;
        self.since = self.now;
        self.dense = self.dense.saturating_sub(1);
        step
    }

    /// One step's operation at `now`, drawn from the model as it stands
    /// (not yet applied).
    fn draw(&mut self, since: Time, now: Time) -> Op {
        let w = World {
            m: &self.machine,
            ix: &self.index,
        };
        let rng = &mut self.rng;
        // A deadline passed: the step is about it more often than not,
        // either the tick that fires it or a request that names it first.
        // Exactly on one, mostly a request (the boundary is the point).
        let due = crate::focus::due(w, since, now);
        let tick_pct = match due {
            Due::Passed => TICK_WHEN_PASSED_PCT,
            Due::Nothing | Due::Exact => TICK_PCT,
        };
        if rng.chance(tick_pct) || self.kinds.is_empty() {
            Op::Tick
        } else {
            // Validation probes, when asked for.
            let probe = (self.probe_pct > 0 && rng.chance(self.probe_pct))
                .then(|| crate::probe::probe(w, now, rng))
                .flatten()
                .filter(|r| self.kinds.contains(r.kind()));
            let aimed = probe.or_else(|| {
                (due != Due::Nothing && rng.chance(FOCUS_PCT))
                    .then(|| crate::focus::just_due(w, since, now, rng))
                    .flatten()
                    .filter(|r| self.kinds.contains(r.kind()))
            });
            // A steered case also aims at deadlines a millisecond away,
            // and sharpens what it chose (`crate::sharpen`).
            let aimed = match aimed {
                None if self.sharp => crate::sharpen::near(w, now, rng)
                    .or_else(|| crate::sharpen::join(w, now, rng))
                    .filter(|r| self.kinds.contains(r.kind())),
                a => a,
            };
            let favour = if self.favour == crate::Kinds::NONE && self.dense > 0 {
                build()
            } else {
                self.favour
            };
            let kinds = self.kinds;
            let req = aimed.unwrap_or_else(|| request(w, kinds, favour, now, rng));
            Op::Request(if self.sharp {
                crate::sharpen::sharpen(w, req, now, rng)
            } else {
                req
            })
        }
    }
}

/// Endless: every call is [`Generator::next_step`].
impl Iterator for Generator {
    type Item = Step;
    fn next(&mut self) -> Option<Step> {
        Some(self.next_step())
    }
}

/// The trace of `cfg.steps` steps named by `seed`: the same seed and
/// config give the same trace on every platform (a ChaCha `TestRng` seeded
/// from `seed`).
pub fn generate(seed: u64, cfg: &GenConfig) -> Vec<Step> {
    generate_with(seed, cfg, &Stepper::spec())
}

/// [`generate`] from a model that steps with `stepper` (a baseline's).
pub fn generate_with(seed: u64, cfg: &GenConfig, stepper: &Stepper) -> Vec<Step> {
    stream(seed, cfg, stepper).collect()
}

/// The steps of [`generate_with`], one at a time: each is chosen when it
/// is pulled, so a runner sends the first before the last exists.
pub fn stream(seed: u64, cfg: &GenConfig, stepper: &Stepper) -> std::iter::Take<Generator> {
    Generator::with_stepper(seed, cfg, stepper.clone()).take(cfg.steps)
}

/// A proptest strategy over traces: a seed mapped through [`generate`].
///
/// Proptest's own shrinking only walks the seed, which does not make a
/// trace smaller; shrink failing traces with the runner's shrinker, which
/// removes steps and re-checks [`crate::well_formed`] / [`crate::repair`].
pub fn trace_strategy(cfg: GenConfig) -> impl Strategy<Value = Vec<Step>> {
    any::<u64>().prop_map(move |seed| generate(seed, &cfg))
}
