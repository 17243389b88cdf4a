//! The state-aware generator: one model, one step at a time.
//!
//! Each step first advances `now` ([`crate::clock`]), then is a tick (about
//! one step in nine) or a request whose kind is drawn from fixed weights and
//! whose fields are chosen by reading the model. The step is applied to the
//! generator's own machine before the next is chosen, so every choice sees
//! the state the previous steps built.

use model::api::Request;
use model::machine::Machine;
use model::state::ServerConfig;
use model::types::{TaskState, Time};
use proptest::prelude::{any, Strategy};
use proptest::test_runner::TestRng;

use crate::dice::{seeded_rng, Dice};
use crate::{apply, clock, promise_ops, schedule_ops, task_claim, task_ops};
use crate::{GenConfig, Op, Step};

/// Request kinds with their base weights. Kinds that build depth
/// (task.create, acquire, fence, suspend) weigh most; the 501 searches
/// least. [`weights`] scales them by the state.
const KINDS: [(u64, Kind); 21] = [
    (8, Kind::PromiseCreate),
    (4, Kind::PromiseGet),
    (5, Kind::PromiseSettle),
    (5, Kind::PromiseRegisterCallback),
    (3, Kind::PromiseRegisterListener),
    (1, Kind::PromiseSearch),
    (3, Kind::TaskGet),
    (8, Kind::TaskCreate),
    (8, Kind::TaskAcquire),
    (9, Kind::TaskFence),
    (4, Kind::TaskHeartbeat),
    (10, Kind::TaskSuspend),
    (6, Kind::TaskFulfill),
    (4, Kind::TaskRelease),
    (3, Kind::TaskHalt),
    (3, Kind::TaskContinue),
    (1, Kind::TaskSearch),
    (3, Kind::ScheduleGet),
    (3, Kind::ScheduleCreate),
    (2, Kind::ScheduleDelete),
    (1, Kind::ScheduleSearch),
];

/// Percent of steps that are ticks.
const TICK_PCT: u64 = 11;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    PromiseCreate,
    PromiseGet,
    PromiseSettle,
    PromiseRegisterCallback,
    PromiseRegisterListener,
    PromiseSearch,
    TaskGet,
    TaskCreate,
    TaskAcquire,
    TaskFence,
    TaskHeartbeat,
    TaskSuspend,
    TaskFulfill,
    TaskRelease,
    TaskHalt,
    TaskContinue,
    TaskSearch,
    ScheduleGet,
    ScheduleCreate,
    ScheduleDelete,
    ScheduleSearch,
}

/// A reference model plus the clock: chooses each step by reading the
/// model, then applies it.
#[derive(Clone, Debug)]
pub struct Generator {
    machine: Machine,
    now: Time,
    kinds: crate::Kinds,
    probe_pct: u64,
}

impl Generator {
    /// An empty model with `cfg.retry_timeout`, its clock at `cfg.start`.
    pub fn new(cfg: &GenConfig) -> Self {
        Generator {
            machine: Machine::new(ServerConfig {
                retry_timeout: cfg.retry_timeout,
            }),
            now: cfg.start,
            kinds: cfg.kinds,
            probe_pct: cfg.probe_pct,
        }
    }

    /// The model after every step generated so far.
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// The `now` of the last step (`cfg.start` before the first).
    pub fn now(&self) -> Time {
        self.now
    }

    /// Choose the next step from the model state, apply it to the model,
    /// and return it.
    pub fn next_step(&mut self, rng: &mut TestRng) -> Step {
        self.now = clock::advance(&self.machine, self.now, rng);
        let op = if rng.chance(TICK_PCT) || self.kinds.is_empty() {
            Op::Tick
        } else {
            // Validation probes, when asked for.
            let probe = (self.probe_pct > 0 && rng.chance(self.probe_pct))
                .then(|| crate::probe::probe(&self.machine, self.now, rng))
                .flatten()
                .filter(|r| self.kinds.contains(r.kind()));
            // Half the time, on a deadline, ask about what is due at it.
            let aimed = probe.or_else(|| {
                rng.chance(50)
                    .then(|| crate::focus::at_deadline(&self.machine, self.now, rng))
                    .flatten()
                    .filter(|r| self.kinds.contains(r.kind()))
            });
            Op::Request(aimed.unwrap_or_else(|| self.request(rng)))
        };
        let step = Step { now: self.now, op };
        apply(&mut self.machine, &step);
        self.machine.clear_hits();
        step
    }

    fn request(&self, rng: &mut TestRng) -> Request {
        let (m, now) = (&self.machine, self.now);
        let mut w = weights(m);
        w.retain(|(_, k)| self.kinds.contains(k.name()));
        match rng.weighted(&w) {
            Kind::PromiseCreate => promise_ops::create(m, rng, now),
            Kind::PromiseGet => promise_ops::get(m, rng),
            Kind::PromiseSettle => promise_ops::settle(m, rng),
            Kind::PromiseRegisterCallback => promise_ops::register_callback(m, rng),
            Kind::PromiseRegisterListener => promise_ops::register_listener(m, rng),
            Kind::PromiseSearch => promise_ops::search(rng),
            Kind::TaskGet => task_ops::get(m, rng),
            Kind::TaskCreate => task_claim::create(m, rng, now),
            Kind::TaskAcquire => task_claim::acquire(m, rng),
            Kind::TaskFence => task_ops::fence(m, rng, now),
            Kind::TaskHeartbeat => task_ops::heartbeat(m, rng),
            Kind::TaskSuspend => task_ops::suspend(m, rng, now),
            Kind::TaskFulfill => task_ops::fulfill(m, rng),
            Kind::TaskRelease => task_ops::release(m, rng),
            Kind::TaskHalt => task_ops::halt(m, rng),
            Kind::TaskContinue => task_ops::resume(m, rng),
            Kind::TaskSearch => task_ops::search(rng),
            Kind::ScheduleGet => schedule_ops::get(m, rng),
            Kind::ScheduleCreate => schedule_ops::create(m, rng),
            Kind::ScheduleDelete => schedule_ops::delete(m, rng),
            Kind::ScheduleSearch => schedule_ops::search(rng),
        }
    }
}

/// [`KINDS`] scaled by the state: requests that need a held task (fence,
/// suspend, fulfill, release, heartbeat), a pending one (acquire) or a
/// halted one (continue) are drawn a fifth as often while there is none, so
/// most of them land where they can succeed and a few still take the 404 and
/// 409 branches.
impl Kind {
    /// The wire name of the requests of this kind.
    fn name(self) -> &'static str {
        use Kind::*;
        match self {
            PromiseCreate => "promise.create",
            PromiseGet => "promise.get",
            PromiseSettle => "promise.settle",
            PromiseRegisterCallback => "promise.register_callback",
            PromiseRegisterListener => "promise.register_listener",
            PromiseSearch => "promise.search",
            TaskGet => "task.get",
            TaskCreate => "task.create",
            TaskAcquire => "task.acquire",
            TaskFence => "task.fence",
            TaskHeartbeat => "task.heartbeat",
            TaskSuspend => "task.suspend",
            TaskFulfill => "task.fulfill",
            TaskRelease => "task.release",
            TaskHalt => "task.halt",
            TaskContinue => "task.continue",
            TaskSearch => "task.search",
            ScheduleGet => "schedule.get",
            ScheduleCreate => "schedule.create",
            ScheduleDelete => "schedule.delete",
            ScheduleSearch => "schedule.search",
        }
    }
}

fn weights(m: &Machine) -> Vec<(u64, Kind)> {
    let count = |s: TaskState| m.state.tasks().filter(|t| t.state == s).count();
    let (acquired, pending, halted) = (
        count(TaskState::Acquired),
        count(TaskState::Pending),
        count(TaskState::Halted),
    );
    let scale = |present: usize| if present > 0 { 5 } else { 1 };
    KINDS
        .iter()
        .map(|&(w, k)| {
            let s = match k {
                Kind::TaskFence
                | Kind::TaskSuspend
                | Kind::TaskFulfill
                | Kind::TaskRelease
                | Kind::TaskHeartbeat => scale(acquired),
                Kind::TaskAcquire => scale(pending),
                Kind::TaskContinue => scale(halted),
                _ => 5,
            };
            (w * s, k)
        })
        .collect()
}

/// The trace of `cfg.steps` steps named by `seed`: the same seed and
/// config give the same trace on every platform (a ChaCha `TestRng` seeded
/// from `seed`).
pub fn generate(seed: u64, cfg: &GenConfig) -> Vec<Step> {
    let mut rng = seeded_rng(seed);
    let mut g = Generator::new(cfg);
    (0..cfg.steps).map(|_| g.next_step(&mut rng)).collect()
}

/// A proptest strategy over traces: a seed mapped through [`generate`].
///
/// Proptest's own shrinking only walks the seed, which does not make a
/// trace smaller; shrink failing traces with the runner's shrinker, which
/// removes steps and re-checks [`crate::well_formed`] / [`crate::repair`].
pub fn trace_strategy(cfg: GenConfig) -> impl Strategy<Value = Vec<Step>> {
    any::<u64>().prop_map(move |seed| generate(seed, &cfg))
}
