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
//! settlement of a list it changed would ([`follow_ups`]: the lists a loop
//! walks are built one element a step, an awaiter, a listener or an
//! awaiter's suspend, so the step that makes a mix is taken for the
//! settlement that would walk it). It never sends a step of its own: every
//! step taken is one the generator drew, so an aimed case is as well
//! formed and as varied as any other.

use std::collections::BTreeSet;

use model::api::{PromiseSettleReq, Request, TaskFenceAction, TaskFulfillReq};
use model::branch::Branch;
use model::machine::Machine;
use model::types::{PromiseState, TaskState, Time};

use crate::{Op, Step};

/// The branches and markers a case still wants to reach.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Aim {
    wanted: BTreeSet<Branch>,
}

impl Aim {
    /// Aimed at `wanted`.
    pub fn new(wanted: impl IntoIterator<Item = Branch>) -> Aim {
        Aim {
            wanted: wanted.into_iter().collect(),
        }
    }

    /// Every reachable branch and marker of the model not in `seen`.
    pub fn unreached(seen: impl Fn(&Branch) -> bool) -> Aim {
        let every = model::branch::ALL.iter().chain(model::marker::ALL);
        Aim::new(every.copied().filter(|b| b.reachable() && !seen(b)))
    }

    /// Whether any of `hits` is still wanted.
    pub fn wants_any<'a>(&self, hits: impl IntoIterator<Item = &'a Branch>) -> bool {
        hits.into_iter().any(|b| self.wanted.contains(b))
    }

    /// Drop what a step reached: the case moves on to what is left.
    pub fn reached<'a>(&mut self, hits: impl IntoIterator<Item = &'a Branch>) {
        for b in hits {
            self.wanted.remove(b);
        }
    }

    /// Whether nothing is left to aim at.
    pub fn is_empty(&self) -> bool {
        self.wanted.is_empty()
    }
}

/// The promise ids `req` names (the objects a follow-up is about).
fn named(req: &Request) -> Vec<&str> {
    match req {
        Request::PromiseGet(r) => vec![&r.id],
        Request::PromiseCreate(r) => vec![&r.id],
        Request::PromiseSettle(r) => vec![&r.id],
        Request::PromiseRegisterCallback(r) => vec![&r.awaited, &r.awaiter],
        Request::PromiseRegisterListener(r) => vec![&r.awaited],
        Request::TaskCreate(r) => vec![&r.action.id],
        Request::TaskAcquire(r) => vec![&r.id],
        Request::TaskGet(r) => vec![&r.id],
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

/// A pending promise's lists as a settlement loop would walk them: its
/// awaiters and listeners, and how many of the awaiters' tasks are
/// suspended (the settlement resumes those).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Lists {
    id: String,
    len: usize,
    suspended: usize,
}

/// The [`Lists`] of each pending promise `req` names, and of each pending
/// promise a task it names awaits (a suspend or a halt of an awaiter
/// changes the shape of the lists it is in without growing them):
/// [`follow_ups`] reads what changed. The promises awaited by the tasks a
/// settlement resumes are not read (a step's reach, not a cascade's).
pub(crate) fn lists(m: &Machine, req: &Request) -> Vec<Lists> {
    let mut ids = named(req);
    let awaited: Vec<&str> = ids.iter().flat_map(|id| m.state.awaited_by(id)).collect();
    ids.extend(awaited);
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter().filter_map(|id| lists_of(m, id)).collect()
}

/// The [`Lists`] of promise `id`, if it is pending.
fn lists_of(m: &Machine, id: &str) -> Option<Lists> {
    let p = m.state.get_promise(id)?;
    (p.state == PromiseState::Pending).then(|| Lists {
        id: p.id.clone(),
        len: p.callbacks.len() + p.listeners.len(),
        suspended: (p.callbacks.iter())
            .filter(|a| m.state.get_task(a).map(|t| t.state) == Some(TaskState::Suspended))
            .count(),
    })
}

/// The steps that walk a list `step` changed (read off the model after it,
/// `m`; `before` is [`lists`] before it): for each pending promise whose
/// awaiters or listeners it added to, or whose count of suspended
/// awaiters it changed (a suspend, a halt, an awaiter settled and
/// scrubbed), its settlement by a client, by its task's
/// `task.fulfill` (the task acquired), and by the tick at its deadline.
/// What a settlement loop walks is built one element per step (an
/// awaiter, a listener, an awaiter's suspend), so the step that makes a
/// shape still wanted (a mix, all of several) is worth taking for the
/// settlement that would then walk it. Only a step that changed a list is
/// looked past, so a look costs a few model steps, not a search.
pub(crate) fn follow_ups(m: &Machine, before: &[Lists], now: Time) -> Vec<Step> {
    let mut out = Vec::new();
    for b in before {
        let Some(after) = lists_of(m, &b.id) else {
            continue;
        };
        if after.len <= b.len && after.suspended == b.suspended {
            continue;
        }
        let id = &b.id;
        let Some(p) = m.state.get_promise(id) else {
            continue;
        };
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

    fn target(id: &str) -> PromiseCreateReq {
        PromiseCreateReq {
            id: id.into(),
            timeout_at: T0 + 60_000,
            param: Default::default(),
            tags: [(crate::pools::TARGET.to_string(), "poll://any@w".to_string())].into(),
        }
    }

    /// Promises `a.c` and `a.d`, tasks `a` and `a.b` (acquired at version
    /// 1), `a` suspended on `a.c`.
    fn one_suspended_on_a_c() -> Machine {
        let mut m = Machine::new(ServerConfig::default());
        for id in ["a.c", "a.d"] {
            req(
                &mut m,
                Request::PromiseCreate(PromiseCreateReq {
                    tags: Default::default(),
                    ..target(id)
                }),
            );
        }
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
        req(&mut m, suspend("a", "a.c"));
        m
    }

    fn suspend(id: &str, on: &str) -> Request {
        Request::TaskSuspend(TaskSuspendReq {
            id: id.into(),
            version: 1,
            actions: vec![PromiseRegisterCallbackReq {
                awaited: on.into(),
                awaiter: id.into(),
            }],
        })
    }

    /// `step`'s follow-ups on `m` (applied to it).
    fn follow(m: &mut Machine, step: &Step) -> Vec<Step> {
        let Op::Request(r) = &step.op else {
            unreachable!()
        };
        let before = lists(m, r);
        crate::apply(m, step);
        follow_ups(m, &before, step.now)
    }

    /// A second awaiter of `a.c` (task `a` suspended on it) is worth
    /// taking: after it, settling `a.c` walks a mix of awaiters, and the
    /// tick at its deadline would too.
    #[test]
    fn the_follow_ups_of_a_callback_settle_what_it_awaits_and_tick_at_its_deadline() {
        let mut m = one_suspended_on_a_c();
        let step = Step {
            now: T0,
            op: Op::Request(Request::PromiseRegisterCallback(
                PromiseRegisterCallbackReq {
                    awaited: "a.c".into(),
                    awaiter: "a.b".into(),
                },
            )),
        };
        let next = follow(&mut m, &step);
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

    /// A suspend of a task already among `a.c`'s awaiters, on another
    /// promise, changes the shape of `a.c`'s list without growing it (both
    /// its awaiters now suspended): settling `a.c` is a follow-up, and it
    /// walks "all" of several.
    #[test]
    fn the_follow_ups_of_a_suspend_settle_what_the_task_already_awaits() {
        let mut m = one_suspended_on_a_c();
        req(
            &mut m,
            Request::PromiseRegisterCallback(PromiseRegisterCallbackReq {
                awaited: "a.c".into(),
                awaiter: "a.b".into(),
            }),
        );
        let step = Step {
            now: T0,
            op: Op::Request(suspend("a.b", "a.d")),
        };
        let next = follow(&mut m, &step);
        let settle = next
            .iter()
            .find(|s| matches!(&s.op, Op::Request(Request::PromiseSettle(r)) if r.id == "a.c"))
            .expect("settling what a.b already awaits is a follow-up")
            .clone();
        crate::apply(&mut m, &settle);
        assert!(m
            .take_marks()
            .contains(&model::marker::PROMISE_SETTLE_AWAITERS_RESUMED_ALL));
    }

    /// A step that changes no list has no follow-ups.
    #[test]
    fn a_step_that_changes_no_list_has_no_follow_ups() {
        let mut m = one_suspended_on_a_c();
        let step = Step {
            now: T0,
            op: Op::Request(Request::PromiseGet(PromiseGetReq { id: "a.c".into() })),
        };
        assert!(follow(&mut m, &step).is_empty());
    }
}
