//! What a steered case aims at: the branches and markers the campaign has
//! not reached yet.
//!
//! A kept prefix brings a case near something rare; the last step to it is
//! still left to the dice. An aimed generator
//! ([`crate::Generator::aimed_at`]) closes that gap the way a
//! coverage-guided fuzzer's feedback would, but before sending anything:
//! for each of its steps it draws several candidates, tries each on its
//! own model (a [`model::machine::Machine::trial`], undone), and takes one
//! that reaches a branch or marker still wanted, or one after which the
//! settlement of a list it grew would ([`follow_ups`]: the lists a loop
//! walks grow one element a step, so the step that adds the element that
//! makes a mix is taken for the settlement that would walk it). It never
//! sends a step of its own: every step taken is one the generator drew,
//! so an aimed case is as well formed and as varied as any other.

use std::collections::BTreeSet;

use rustc_hash::FxHashSet;

use model::api::{PromiseSettleReq, Request, TaskFenceAction, TaskFulfillReq};
use model::branch::Branch;
use model::machine::Machine;
use model::types::{PromiseState, TaskState, Time};

use crate::{Op, Step};

/// The branches and markers a case still wants to reach.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Aim {
    /// Hashed, not ordered: an aimed step looks up every branch and marker
    /// of each candidate it tries, and nothing reads the set in order.
    wanted: FxHashSet<Branch>,
    /// The request kinds with a boundary marker still wanted (a marker's
    /// name starts with its handler's kind): only their requests are
    /// retimed ([`instants`]).
    boundary_kinds: BTreeSet<&'static str>,
    /// Aimed steps in a row, over the campaign's cases, that led nowhere
    /// ([`Aim::pct`]).
    dry: u64,
}

/// Aimed steps in a row that may lead nowhere while every step is still
/// aimed; one more, and steps are aimed less often ([`Aim::pct`]). Under
/// a baseline some wants are out of reach for good (the deviant model
/// never takes them), so the aim never empties; past this many dry steps
/// the campaign stops paying a dozen trials a step for them.
pub const DRY_FREE: u64 = 16;
/// The least percent of steps aimed however long the aim has been dry: a
/// want that is only rare, not out of reach, is still met now and then,
/// and meeting it makes every step aimed again.
pub const DRY_FLOOR_PCT: u64 = 2;

impl Aim {
    /// Aimed at `wanted`.
    pub fn new(wanted: impl IntoIterator<Item = Branch>) -> Aim {
        let mut aim = Aim {
            wanted: wanted.into_iter().collect(),
            boundary_kinds: BTreeSet::new(),
            dry: 0,
        };
        aim.sort_boundaries();
        aim
    }

    fn sort_boundaries(&mut self) {
        self.boundary_kinds = (self.wanted.iter())
            .filter(|b| is_boundary(b))
            .filter_map(|b| b.name().split('/').next())
            .collect();
    }

    /// Whether a boundary marker of requests of `kind` is still wanted.
    pub(crate) fn wants_boundary_of(&self, kind: &str) -> bool {
        self.boundary_kinds.contains(kind)
    }

    /// Every reachable branch and marker of the model not in `seen`.
    pub fn unreached(seen: impl Fn(&Branch) -> bool) -> Aim {
        // Listed once: every case of a campaign asks, and `reachable` is
        // a scan of the unreachable lists.
        static REACHABLE: std::sync::LazyLock<Vec<Branch>> = std::sync::LazyLock::new(|| {
            let every = model::branch::ALL.iter().chain(model::marker::ALL);
            every.copied().filter(|b| b.reachable()).collect()
        });
        Aim::new(REACHABLE.iter().copied().filter(|b| !seen(b)))
    }

    /// This aim, after `dry` aimed steps in a row that led nowhere (a
    /// campaign's count, carried from case to case).
    pub fn with_dry(mut self, dry: u64) -> Aim {
        self.dry = dry;
        self
    }

    /// Aimed steps in a row that led nowhere.
    pub fn dry(&self) -> u64 {
        self.dry
    }

    /// Count an aimed step: it led to something wanted, or nowhere.
    pub(crate) fn led(&mut self, somewhere: bool) {
        self.dry = if somewhere { 0 } else { self.dry + 1 };
    }

    /// Percent of steps to aim: all until more than [`DRY_FREE`] aimed
    /// steps in a row led nowhere; then `DRY_FREE` in `dry` of them, but
    /// never fewer than [`DRY_FLOOR_PCT`]. Since `dry` counts only aimed
    /// steps, a dry run of `T` steps aims about `√(2 · DRY_FREE · T)` of
    /// them (about 570 of 10,000) until the floor takes over, past 800
    /// dry aimed steps (20,000 steps), and 2% from there.
    pub fn pct(&self) -> u64 {
        if self.dry <= DRY_FREE {
            100
        } else {
            (100 * DRY_FREE / self.dry).max(DRY_FLOOR_PCT)
        }
    }

    /// Whether any of `hits` is still wanted.
    pub fn wants_any<'a>(&self, hits: impl IntoIterator<Item = &'a Branch>) -> bool {
        hits.into_iter().any(|b| self.wanted.contains(b))
    }

    /// Drop what a step reached: the case moves on to what is left.
    pub fn reached<'a>(&mut self, hits: impl IntoIterator<Item = &'a Branch>) {
        let mut boundary = false;
        for b in hits {
            boundary |= self.wanted.remove(b) && is_boundary(b);
        }
        if boundary {
            self.sort_boundaries();
        }
    }

    /// Whether nothing is left to aim at.
    pub fn is_empty(&self) -> bool {
        self.wanted.is_empty()
    }
}

/// Whether `b` is one of a deadline comparison's three instants.
fn is_boundary(b: &Branch) -> bool {
    let n = b.name();
    n.ends_with("/at_now") || n.ends_with("/one_ahead") || n.ends_with("/one_past")
}

/// The instants, none before `since`, at which `req` would meet a deadline
/// it names on one of its three instants: one before, at and one past the
/// `timeoutAt` of each pending promise it names (every deadline a handler
/// compares with `now` is such a promise's, [`model::marker`]). What it
/// names is [`named`]'s list, which leaves out `task.fulfill` (a follow-up
/// never needs it), so a fulfill is never retimed: its boundary markers
/// come from the clock and `sharpen::near`. A drawn
/// request sent at one of them instead of its drawn `now` is still the
/// request the generator drew: the clock of a drawn step seldom lands on
/// an instant of the very promise it names.
pub(crate) fn instants(m: &Machine, req: &Request, since: Time) -> Vec<Time> {
    let mut out: Vec<Time> = named(req)
        .into_iter()
        .filter_map(|id| m.state.get_promise(id))
        .filter(|p| p.state == PromiseState::Pending)
        .flat_map(|p| {
            let t = p.timeout_at;
            [t.checked_sub(1), Some(t), t.checked_add(1)]
        })
        .flatten()
        .filter(|&at| at >= since)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The promise ids `req` names (the objects a follow-up is about, the
/// deadlines a retimed request meets).
fn named(req: &Request) -> Vec<&str> {
    match req {
        Request::PromiseGet(r) => vec![&r.id],
        Request::TaskGet(r) => vec![&r.id],
        Request::PromiseCreate(r) => vec![&r.id],
        Request::PromiseSettle(r) => vec![&r.id],
        Request::PromiseRegisterCallback(r) => vec![&r.awaited, &r.awaiter],
        Request::PromiseRegisterListener(r) => vec![&r.awaited],
        Request::TaskCreate(r) => vec![&r.action.id],
        Request::TaskAcquire(r) => vec![&r.id],
        Request::TaskSuspend(r) => {
            let mut v = vec![r.id.as_str()];
            v.extend(r.actions.iter().map(|a| a.awaited.as_str()));
            v
        }
        Request::TaskHeartbeat(r) => r.tasks.iter().map(|t| t.id.as_str()).collect(),
        Request::TaskRelease(r) => vec![&r.id],
        Request::TaskHalt(r) => vec![&r.id],
        Request::TaskContinue(r) => vec![&r.id],
        Request::TaskFence(r) => match &r.action {
            TaskFenceAction::Create(c) => vec![&r.id, &c.id],
            TaskFenceAction::Settle(s) => vec![&r.id, &s.id],
        },
        _ => Vec::new(),
    }
}

/// How many awaiters and listeners each pending promise `req` names has:
/// the lists the settlement loops walk ([`follow_ups`] reads what grew).
pub(crate) fn lists(m: &Machine, req: &Request) -> Vec<(String, usize)> {
    let mut ids = named(req);
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .filter_map(|id| m.state.get_promise(id))
        .filter(|p| p.state == PromiseState::Pending)
        .map(|p| (p.id.clone(), p.callbacks.len() + p.listeners.len()))
        .collect()
}

/// The steps that walk a list `step` grew (read off the model after it,
/// `m`; `before` is [`lists`] before it): for each pending promise whose
/// awaiters or listeners it added to, its settlement by a client, by its
/// task's `task.fulfill` (the task acquired), and by the tick at its
/// deadline. What a settlement loop walks is built one element per step
/// (an awaiter, a listener), so the step that adds the element that makes
/// a shape still wanted (a mix, all of several) is worth taking for the
/// settlement that would then walk it. Only a step that grew a list is
/// looked past, so a look costs a few model steps, not a search.
pub(crate) fn follow_ups(m: &Machine, before: &[(String, usize)], now: Time) -> Vec<Step> {
    let mut out = Vec::new();
    for (id, n) in before {
        let Some(p) = m.state.get_promise(id) else {
            continue;
        };
        if p.state != PromiseState::Pending || p.callbacks.len() + p.listeners.len() <= *n {
            continue;
        }
        let settle = PromiseSettleReq {
            id: id.clone(),
            state: PromiseState::Resolved,
            value: Default::default(),
        };
        out.push(Step {
            now,
            op: Op::Request(Request::PromiseSettle(settle.clone())),
        });
        if let Some(t) = m
            .state
            .get_task(id)
            .filter(|t| t.state == TaskState::Acquired)
        {
            out.push(Step {
                now,
                op: Op::Request(Request::TaskFulfill(TaskFulfillReq {
                    id: id.clone(),
                    version: t.version,
                    action: settle,
                })),
            });
        }
        if p.timeout_at >= now {
            out.push(Step {
                now: p.timeout_at,
                op: Op::Tick,
            });
        }
    }
    out.retain(|s| crate::well_formed(s, m).is_ok());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::api::*;
    use model::machine::Machine;
    use model::state::ServerConfig;

    const T0: u64 = 1_700_000_000_000;

    fn req(m: &mut Machine, r: Request) {
        m.apply(&r, T0);
    }

    /// Every step is aimed while the dry run is short; past it the share
    /// falls as `DRY_FREE / dry`, never below the floor; one aimed step
    /// that leads somewhere makes every step aimed again.
    #[test]
    fn a_dry_aim_aims_less_often_and_a_step_that_leads_restores_it() {
        let mut aim = Aim::unreached(|_| false);
        for _ in 0..DRY_FREE {
            aim.led(false);
        }
        assert_eq!(aim.pct(), 100);
        aim.led(false);
        assert!(aim.pct() < 100);
        let mut last = aim.pct();
        for _ in 0..10 * DRY_FREE {
            aim.led(false);
            assert!(aim.pct() <= last);
            last = aim.pct();
        }
        assert_eq!(
            aim.pct(),
            (100 * DRY_FREE / (11 * DRY_FREE + 1)).max(DRY_FLOOR_PCT)
        );
        let long = aim.clone().with_dry(1_000_000);
        assert_eq!(long.pct(), DRY_FLOOR_PCT);
        aim.led(true);
        assert_eq!((aim.dry(), aim.pct()), (0, 100));
    }

    /// A promise `id` with a target, a minute to live.
    fn target(id: &str) -> PromiseCreateReq {
        PromiseCreateReq {
            id: id.into(),
            timeout_at: T0 + 60_000,
            param: Default::default(),
            tags: [(crate::pools::TARGET.to_string(), "poll://any@w".to_string())].into(),
        }
    }

    /// A second awaiter of `a.c` (task `a` suspended on it) is worth
    /// taking: after it, settling `a.c` walks a mix of awaiters, and the
    /// tick at its deadline would too.
    #[test]
    fn the_follow_ups_of_a_callback_settle_what_it_awaits_and_tick_at_its_deadline() {
        let mut m = Machine::new(ServerConfig::default());
        req(
            &mut m,
            Request::PromiseCreate(PromiseCreateReq {
                tags: Default::default(),
                ..target("a.c")
            }),
        );
        for id in ["a", "a.b"] {
            req(
                &mut m,
                Request::TaskCreate(TaskCreateReq {
                    pid: "p".into(),
                    ttl: 60_000,
                    action: target(id),
                }),
            );
        }
        req(
            &mut m,
            Request::TaskSuspend(TaskSuspendReq {
                id: "a".into(),
                version: 1,
                actions: vec![PromiseRegisterCallbackReq {
                    awaited: "a.c".into(),
                    awaiter: "a".into(),
                }],
            }),
        );
        let step = Step {
            now: T0,
            op: Op::Request(Request::PromiseRegisterCallback(
                PromiseRegisterCallbackReq {
                    awaited: "a.c".into(),
                    awaiter: "a.b".into(),
                },
            )),
        };
        let Op::Request(r) = &step.op else {
            unreachable!()
        };
        let before = lists(&m, r);
        crate::apply(&mut m, &step);
        let next = follow_ups(&m, &before, step.now);
        let settle = next
            .iter()
            .find(|s| matches!(&s.op, Op::Request(Request::PromiseSettle(r)) if r.id == "a.c"));
        let settle = settle.expect("settling the awaited is a follow-up").clone();
        assert!(next
            .iter()
            .any(|s| s.op == Op::Tick && s.now == T0 + 60_000));
        crate::apply(&mut m, &settle);
        assert!(m
            .take_marks()
            .contains(&model::marker::PROMISE_SETTLE_AWAITERS_RESUMED_MIX));
    }

    /// The instants of a request are one before, at and one past the
    /// deadline of each pending promise it names, none before `since`.
    #[test]
    fn the_instants_of_a_request_are_around_the_deadlines_it_names() {
        let mut m = Machine::new(ServerConfig::default());
        req(&mut m, Request::PromiseCreate(target("a.c")));
        req(&mut m, Request::PromiseCreate(target("a")));
        let cb = Request::PromiseRegisterCallback(PromiseRegisterCallbackReq {
            awaited: "a.c".into(),
            awaiter: "a".into(),
        });
        let d = T0 + 60_000;
        assert_eq!(instants(&m, &cb, T0), vec![d - 1, d, d + 1]);
        assert_eq!(instants(&m, &cb, d), vec![d, d + 1]);
        let settle = |id: &str| {
            Request::PromiseSettle(PromiseSettleReq {
                id: id.into(),
                state: PromiseState::Resolved,
                value: Default::default(),
            })
        };
        req(&mut m, settle("a.c"));
        assert_eq!(instants(&m, &cb, T0), vec![d - 1, d, d + 1], "a's only");
        assert!(instants(&m, &settle("a.x"), T0).is_empty());
    }

    /// A kind's boundaries are wanted until its last boundary marker is
    /// reached; a branch reached changes nothing.
    #[test]
    fn a_kind_is_retimed_while_one_of_its_boundaries_is_wanted() {
        use model::marker::*;
        let mut aim = Aim::new([
            PROMISE_GET_TIMEOUT_AT_AT_NOW,
            PROMISE_GET_TIMEOUT_AT_ONE_PAST,
            model::branch::PROMISE_SETTLE_ALREADY_SETTLED_200,
        ]);
        assert!(aim.wants_boundary_of("promise.get"));
        assert!(!aim.wants_boundary_of("promise.settle"));
        aim.reached(&[PROMISE_GET_TIMEOUT_AT_AT_NOW]);
        assert!(aim.wants_boundary_of("promise.get"));
        aim.reached(&[PROMISE_GET_TIMEOUT_AT_ONE_PAST]);
        assert!(!aim.wants_boundary_of("promise.get"));
        assert!(!aim.is_empty());
    }

    /// A step that grows no list (a callback already registered, sent
    /// again) is not looked past.
    #[test]
    fn a_step_that_grows_no_list_has_no_follow_ups() {
        let mut m = Machine::new(ServerConfig::default());
        req(&mut m, Request::PromiseCreate(target("a.c")));
        req(&mut m, Request::PromiseCreate(target("a")));
        let again = Request::PromiseRegisterCallback(PromiseRegisterCallbackReq {
            awaited: "a.c".into(),
            awaiter: "a".into(),
        });
        req(&mut m, again.clone());
        let before = lists(&m, &again);
        assert_eq!(before, vec![("a".to_string(), 0), ("a.c".to_string(), 1)]);
        let step = Step {
            now: T0,
            op: Op::Request(again),
        };
        crate::apply(&mut m, &step);
        assert!(follow_ups(&m, &before, step.now).is_empty());
    }
}
