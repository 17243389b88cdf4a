//! The operations of one epoch of a concurrent run: the generator's own
//! steps at one `now`, each now and then joined by a rival that contends
//! with it for the same object, dealt round-robin to the clients so that
//! rivals run at once.
//!
//! The generator steps its model through its own choices one after the
//! other, so later operations build on earlier ones (a create, then the
//! acquire of its task); sent at once, they race. The rivals are the races
//! servers get wrong: acquire ‖ acquire and task.create ‖ task.create of
//! one task, promise.create ‖ promise.create of one promise with another
//! param, settle ‖ settle, suspend ‖ the settlement of what it awaits,
//! callback registration ‖ another awaiter's or the settlement, fence ‖
//! release or a plain create of its promise, fulfill ‖ release, heartbeat ‖
//! the tick that expires its lease, schedule.delete ‖ another delete or the
//! tick that fires it.

use model::api::{
    PromiseCreateReq, PromiseRegisterCallbackReq, PromiseSettleReq, Request, TaskAcquireReq,
    TaskCreateReq, TaskFenceAction, TaskReleaseReq,
};
use model::machine::Machine;
use model::types::{PromiseState, Time, Value};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::generator::Generator;
use crate::{Op, Step};

/// Draws of a step a rival joins, until one writes
/// ([`Generator::step_frozen_writing`]).
pub const WRITING_TRIES: usize = 8;

/// How an epoch is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpochConfig {
    /// Clients sending at once.
    pub clients: usize,
    /// The generator's own steps per epoch (rivals come on top).
    pub ops: usize,
    /// Percent of steps joined by a rival.
    pub rival_pct: u64,
}

impl Default for EpochConfig {
    fn default() -> Self {
        EpochConfig {
            clients: 4,
            ops: 8,
            rival_pct: 40,
        }
    }
}

/// Where an operation of an epoch is: its client, and its place in that
/// client's queue.
pub type Slot = (usize, usize);

/// The kinds a rival can contend with ([`rival`] answers `None` for the
/// others): the only ones [`Generator::step_frozen_writing`] redraws.
pub const CONTENDED: [&str; 10] = [
    "task.acquire",
    "task.create",
    "promise.create",
    "promise.settle",
    "promise.register_callback",
    "task.suspend",
    "task.fence",
    "task.fulfill",
    "task.heartbeat",
    "schedule.delete",
];

/// [`CONTENDED`] as a set, built once.
fn contended() -> crate::Kinds {
    static SET: std::sync::OnceLock<crate::Kinds> = std::sync::OnceLock::new();
    *SET.get_or_init(|| crate::Kinds::of(&CONTENDED).expect("every CONTENDED name is a wire kind"))
}

/// One epoch: its `now`, each client's queue, sent in order, and the pairs
/// of a step and its rival, invoked together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EpochPlan {
    /// The `now` of every operation.
    pub now: Time,
    /// Client `c`'s operations.
    pub queues: Vec<Vec<Step>>,
    /// Each step joined by a rival, and its rival: where they are in the
    /// queues, as (client, place in its queue). The clients invoke the
    /// two at one moment, so they overlap whatever the clients sent
    /// before them.
    pub pairs: Vec<[Slot; 2]>,
}

impl EpochPlan {
    /// Every operation, client by client.
    pub fn len(&self) -> usize {
        self.queues.iter().map(Vec::len).sum()
    }

    /// Whether it has no operation.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Plan the next epoch: advance the clock (not for the first epoch, at
/// `first`), choose `cfg.ops` steps at the new `now` and their rivals,
/// and deal them out.
pub fn plan(g: &mut Generator, cfg: &EpochConfig, first: bool, rng: &mut TestRng) -> EpochPlan {
    let now = if first { g.now() } else { g.advance_clock() };
    let mut ops = Vec::with_capacity(cfg.ops * 2);
    let mut rivalled = Vec::new();
    for _ in 0..cfg.ops {
        let joined = rng.chance(cfg.rival_pct);
        let step = if joined {
            g.step_frozen_writing(WRITING_TRIES, contended())
        } else {
            g.step_frozen()
        };
        let rival = joined
            .then(|| rival(g.machine(), &step, rng))
            .flatten()
            .filter(|r| crate::well_formed(r, g.machine()).is_ok());
        ops.push(step);
        if let Some(r) = rival {
            g.take(&r);
            rivalled.push(ops.len() - 1);
            ops.push(r);
        }
    }
    let clients = cfg.clients.max(1);
    let slot = |i: usize| (i % clients, i / clients);
    // With one client a step and its rival share a queue: nothing to meet.
    let pairs = rivalled
        .into_iter()
        .map(|i| [slot(i), slot(i + 1)])
        .filter(|[a, b]| a.0 != b.0)
        .collect();
    let mut queues = vec![Vec::new(); clients];
    for (i, op) in ops.into_iter().enumerate() {
        queues[i % clients].push(op);
    }
    EpochPlan { now, queues, pairs }
}

/// An operation that contends with `step` for the same object, at its
/// `now`, reading `m` (the model after `step`) for the other party where
/// one is needed.
fn rival(m: &Machine, step: &Step, rng: &mut TestRng) -> Option<Step> {
    let Op::Request(req) = &step.op else {
        return None;
    };
    let settle = |id: &str, rng: &mut TestRng| {
        let state = if rng.chance(50) {
            PromiseState::Resolved
        } else {
            PromiseState::Rejected
        };
        Request::PromiseSettle(PromiseSettleReq {
            id: id.to_string(),
            state,
            value: Value {
                headers: Default::default(),
                data: Some(format!("rival-{}", rng.below(1000))),
            },
        })
    };
    let release = |id: &str, version: u64| {
        Request::TaskRelease(TaskReleaseReq {
            id: id.to_string(),
            version,
        })
    };
    let op = match req {
        Request::TaskAcquire(r) => Op::Request(Request::TaskAcquire(TaskAcquireReq {
            pid: rival_pid(&r.pid),
            ..r.clone()
        })),
        Request::TaskCreate(r) => Op::Request(Request::TaskCreate(TaskCreateReq {
            pid: rival_pid(&r.pid),
            ..r.clone()
        })),
        // Another caller creating the same promise with its own param: the
        // loser must be answered with the winner's.
        Request::PromiseCreate(r) => Op::Request(Request::PromiseCreate(PromiseCreateReq {
            param: rival_value(rng),
            ..r.clone()
        })),
        Request::PromiseSettle(r) => Op::Request(settle(&r.id, rng)),
        Request::PromiseRegisterCallback(r) => {
            // Another awaiter registering on the same promise, or its settlement.
            let origin = |id: &str| id.split('.').next().unwrap_or(id).to_string();
            let other = m
                .state
                .tasks()
                .map(|t| t.id.as_str())
                .filter(|id| *id != r.awaiter && *id != r.awaited)
                .filter(|id| origin(id) == origin(&r.awaited))
                .min();
            match other.filter(|_| rng.chance(50)) {
                Some(awaiter) => Op::Request(Request::PromiseRegisterCallback(
                    PromiseRegisterCallbackReq {
                        awaited: r.awaited.clone(),
                        awaiter: awaiter.to_string(),
                    },
                )),
                None => Op::Request(settle(&r.awaited, rng)),
            }
        }
        Request::TaskSuspend(r) => {
            let a = r
                .actions
                .get(rng.below(r.actions.len().max(1) as u64) as usize)?;
            Op::Request(settle(&a.awaited, rng))
        }
        // A fenced create against a plain create of the same promise, or a
        // fence against the release of its task.
        Request::TaskFence(r) => match &r.action {
            TaskFenceAction::Create(c) if rng.chance(50) => {
                Op::Request(Request::PromiseCreate(PromiseCreateReq {
                    param: rival_value(rng),
                    ..c.clone()
                }))
            }
            _ => Op::Request(release(&r.id, r.version)),
        },
        Request::TaskFulfill(r) => Op::Request(release(&r.id, r.version)),
        // Two deletes of one schedule, or a delete against the tick that
        // fires it.
        Request::ScheduleDelete(_) if rng.chance(50) => Op::Request(req.clone()),
        Request::TaskHeartbeat(_) | Request::ScheduleDelete(_) => Op::Tick,
        _ => return None,
    };
    Some(Step { now: step.now, op })
}

/// A param or value of a rival caller.
fn rival_value(rng: &mut TestRng) -> Value {
    Value {
        headers: Default::default(),
        data: Some(format!("rival-{}", rng.below(1000))),
    }
}

/// Another worker's pid.
fn rival_pid(pid: &str) -> String {
    format!("{pid}-rival")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{seeded_rng, well_formed, GenConfig};

    #[test]
    fn an_epoch_keeps_one_now_and_its_requests_are_well_formed() {
        let cfg = GenConfig::default();
        let mut g = Generator::new(3, &cfg);
        let mut rng = seeded_rng(3);
        let ecfg = EpochConfig::default();
        let mut rivals = 0;
        let mut last = 0;
        for e in 0..200 {
            let p = plan(&mut g, &ecfg, e == 0, &mut rng);
            assert!(p.now >= last);
            last = p.now;
            assert_eq!(p.queues.len(), ecfg.clients);
            rivals += p.len() - ecfg.ops;
            for s in p.queues.iter().flatten() {
                assert_eq!(s.now, p.now);
                assert_eq!(well_formed(s, g.machine()), Ok(()), "{s:?}");
            }
        }
        assert!(rivals > 100, "rivals: {rivals}");
    }

    /// Every rival is paired with the step it contends with: the step
    /// dealt just before it, on another client.
    #[test]
    fn each_rival_is_paired_with_its_step_on_another_client() {
        let mut g = Generator::new(5, &GenConfig::default());
        let mut rng = seeded_rng(5);
        let ecfg = EpochConfig::default();
        for e in 0..200 {
            let p = plan(&mut g, &ecfg, e == 0, &mut rng);
            assert_eq!(p.pairs.len(), p.len() - ecfg.ops, "epoch {e}");
            for [(c, k), (rc, rk)] in &p.pairs {
                assert_ne!(c, rc);
                // Dealt round-robin: the rival is the next operation.
                assert_eq!(rk * ecfg.clients + rc, k * ecfg.clients + c + 1);
            }
        }
    }

    /// [`rival`] joins only the kinds [`CONTENDED`] names, so the redraw
    /// of [`Generator::step_frozen_writing`] is spent on no other kind.
    #[test]
    fn only_contended_kinds_get_a_rival() {
        let mut g = Generator::new(7, &GenConfig::default());
        let mut rng = seeded_rng(7);
        let mut joined = std::collections::BTreeSet::new();
        for e in 0..300 {
            if e > 0 {
                g.advance_clock();
            }
            for _ in 0..8 {
                let step = g.step_frozen();
                if let Op::Request(r) = &step.op {
                    if rival(g.machine(), &step, &mut rng).is_some() {
                        assert!(CONTENDED.contains(&r.kind()), "{}", r.kind());
                        joined.insert(r.kind());
                    }
                }
            }
        }
        assert!(joined.len() >= 8, "{joined:?}");
    }

    /// With one client, a step and its rival share a queue: no pairs.
    #[test]
    fn one_client_has_no_pairs() {
        let mut g = Generator::new(5, &GenConfig::default());
        let mut rng = seeded_rng(5);
        let ecfg = EpochConfig {
            clients: 1,
            ..EpochConfig::default()
        };
        let mut rivals = 0;
        for e in 0..50 {
            let p = plan(&mut g, &ecfg, e == 0, &mut rng);
            assert!(p.pairs.is_empty());
            rivals += p.len() - ecfg.ops;
        }
        assert!(rivals > 10, "rivals were drawn: {rivals}");
    }
}
