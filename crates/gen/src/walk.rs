//! Walks: the steps that walk the longest lists the state holds now.
//!
//! A loop's "all" and "mix" of several need a list of two or more whose
//! elements part ways, and the list is built one element a step: two
//! awaiters of one pending promise, two listeners, a claimant holding two
//! tasks. Such states do come, but the step that walks the list seldom
//! follows while it stands: a random settle names another promise, a
//! random heartbeat one task. An aimed step that no candidate it drew led
//! anywhere also tries these, each on the model and undone, and takes the
//! first that reaches a branch or marker still wanted
//! ([`crate::Generator::aimed_further`]):
//!
//! - for each pending promise awaited or listened to by two or more: its
//!   settlement by a client, by its task's `task.fulfill` (the task
//!   acquired, or acquired first when it is pending), and the tick at its
//!   deadline (the three sites of the settlement cascade);
//! - for each claimant holding two or more tasks: one heartbeat naming
//!   them all at their versions.
//!
//! A walk is a short sequence: its last step walks the list, the ones
//! before it make that step possible (the acquire before a fulfill). The
//! lists are read off the generator's index (the awaited and listened
//! promises, the acquired tasks), a few at most, so a look costs a few
//! model steps.

use model::api::{
    PromiseCreateReq, PromiseRegisterCallbackReq, PromiseRegisterListenerReq, PromiseSettleReq,
    Request, TaskAcquireReq, TaskCreateReq, TaskFulfillReq, TaskHeartbeatReq, TaskRef,
    TaskSuspendReq,
};
use model::machine::Machine;
use model::types::{PromiseState, TaskState, Time};

use crate::pools::World;
use crate::{Op, Step};

/// The most lists of each kind looked at in one step.
pub(crate) const LISTS: usize = 8;
/// The most tasks one heartbeat names.
const REFS: usize = 4;
/// The lease a walk's acquire asks for (and the deadline of the promise
/// of a task it creates, from `now`).
const TTL: u64 = 60_000;
/// The task address of a promise a walk creates.
const ADDRESS: &str = "poll://any@workers";

/// Steps whose last walks a list; the ones before make it possible.
pub(crate) type Walk = Vec<Step>;

/// The walks of the lists `w` holds at `now`.
pub(crate) fn walks(w: World, now: Time) -> Vec<Walk> {
    let mut out = Vec::new();
    let mut ids: Vec<&str> = (w.ix.awaited().iter().take(LISTS))
        .chain(w.ix.listened().iter().take(LISTS))
        .map(|id| &**id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let long =
            w.m.state
                .get_promise(id)
                .is_some_and(|p| p.callbacks.len() + p.listeners.len() >= 2);
        if long {
            let spare = crate::pools::fresh_child(w, crate::pools::origin(id));
            out.extend(settlements_of(w.m, id, now, &spare));
        }
    }
    for (pid, tasks) in held(w).into_iter().filter(|(_, t)| t.len() >= 2) {
        out.push(vec![heartbeat(w.m, pid, &tasks, now)]);
    }
    out
}

/// The walks of pending promise `id`'s lists at `now`: its settlement by
/// a client, by its task's `task.fulfill` (the task acquired, or acquired
/// first by a walk's claimant when it is pending), by the tick at its
/// deadline (or at `now` if that has passed); and its awaiters moved onto
/// a timer `spare` (a fresh id of its origin) due a millisecond later,
/// then that tick: where the promise's own deadline comes after its
/// awaiters', they would time out first and its timeout would find
/// their tasks fulfilled, so the timeout site walks the list there.
pub(crate) fn settlements_of(m: &Machine, id: &str, now: Time, spare: &str) -> Vec<Walk> {
    let Some(p) = m
        .state
        .get_promise(id)
        .filter(|p| p.state == PromiseState::Pending)
    else {
        return Vec::new();
    };
    let settle = PromiseSettleReq {
        id: p.id.clone(),
        state: PromiseState::Resolved,
        value: Default::default(),
    };
    let at = |r| Step {
        now,
        op: Op::Request(r),
    };
    let fulfill = |version| {
        at(Request::TaskFulfill(TaskFulfillReq {
            id: p.id.clone(),
            version,
            action: settle.clone(),
        }))
    };
    let mut out = vec![vec![at(Request::PromiseSettle(settle.clone()))]];
    match m.state.get_task(&p.id) {
        Some(t) if t.state == TaskState::Acquired => out.push(vec![fulfill(t.version)]),
        Some(t) if t.state == TaskState::Pending => out.push(vec![
            at(Request::TaskAcquire(TaskAcquireReq {
                id: p.id.clone(),
                version: t.version,
                pid: crate::pools::PIDS[0].to_string(),
                ttl: TTL,
            })),
            fulfill(t.version + 1),
        ]),
        _ => {}
    }
    out.push(vec![Step {
        now: p.timeout_at.max(now),
        op: Op::Tick,
    }]);
    // The lists moved onto a fresh promise `spare` of the origin: a timer
    // due a millisecond later, then that tick; a task's promise created
    // claimed, then its fulfill.
    let moved = |create: Request, walk: Step| {
        let mut v = vec![at(create)];
        v.extend(p.callbacks.iter().take(REFS).map(|a| {
            at(Request::PromiseRegisterCallback(
                PromiseRegisterCallbackReq {
                    awaited: spare.to_string(),
                    awaiter: a.clone(),
                },
            ))
        }));
        v.extend(p.listeners.iter().take(REFS).map(|l| {
            at(Request::PromiseRegisterListener(
                PromiseRegisterListenerReq {
                    awaited: spare.to_string(),
                    address: l.clone(),
                },
            ))
        }));
        v.push(walk);
        v
    };
    let due = now.saturating_add(1);
    let promise = |timeout_at, tag: (&str, &str)| PromiseCreateReq {
        id: spare.to_string(),
        timeout_at,
        param: Default::default(),
        tags: [(tag.0.to_string(), tag.1.to_string())].into(),
    };
    let timer = promise(due, (crate::pools::TIMER, "true"));
    out.push(moved(
        Request::PromiseCreate(timer),
        Step {
            now: due,
            op: Op::Tick,
        },
    ));
    let claimed = claimed(spare, now.saturating_add(TTL));
    let fulfilled = at(Request::TaskFulfill(TaskFulfillReq {
        id: spare.to_string(),
        version: 1,
        action: PromiseSettleReq {
            id: spare.to_string(),
            ..settle.clone()
        },
    }));
    out.push(moved(claimed, fulfilled));
    // The rarer sites first: a client's settle is what the dice draw most.
    out.reverse();
    out
}

/// The steps that make a mix of awaiters around acquired task `a` at
/// `now` (none when `a` is not acquired on a promise live a millisecond
/// later): `q` and `t`, fresh ids of `a`'s origin, created as tasks
/// claimed by a walk's claimant, `q` due before `a`, `t` after `q`; `a`
/// suspended on `q`; `t` registered on `q` as a second awaiter, acquired,
/// not suspended. Any settlement of `q` then walks a mix
/// ([`settlements_of`] after these steps). A suspended awaiter is
/// rare in the generator's states (a suspend parks only while what it
/// awaits is pending, and the first settlement resumes it), and the
/// clone of one ([`crate::clone`]) needs one standing; an acquired task
/// is common, so this is the road to the settlement sites' mix that does
/// not wait for one.
pub(crate) fn mixed_awaiters(m: &Machine, a: &str, now: Time, q: &str, t: &str) -> Walk {
    let Some(task) = (m.state.get_task(a)).filter(|x| x.state == TaskState::Acquired) else {
        return Vec::new();
    };
    // `a` must outlive every settlement of `q`: the timer a walk moves the
    // list onto, due a millisecond later, and `q`'s own deadline, kept
    // before `a`'s. `t` outlives `q` (a tie would fire by id, and `t`'s
    // timeout first would scrub it off `q`'s awaiters).
    let Some(deadline) = (m.state.get_promise(a))
        .filter(|p| p.is_live(now.saturating_add(1)))
        .map(|p| p.timeout_at)
    else {
        return Vec::new();
    };
    let q_deadline = now.saturating_add(TTL).min(deadline - 1);
    let at = |r| Step {
        now,
        op: Op::Request(r),
    };
    let callback = |awaiter: &str| PromiseRegisterCallbackReq {
        awaited: q.to_string(),
        awaiter: awaiter.to_string(),
    };
    vec![
        at(claimed(q, q_deadline)),
        at(claimed(t, now.saturating_add(TTL + 1))),
        at(Request::TaskSuspend(TaskSuspendReq {
            id: a.to_string(),
            version: task.version,
            actions: vec![callback(a)],
        })),
        at(Request::PromiseRegisterCallback(callback(t))),
    ]
}

/// A task `id` created claimed by a walk's claimant, its promise due at
/// `timeout_at`, for a lease of [`TTL`].
fn claimed(id: &str, timeout_at: Time) -> Request {
    Request::TaskCreate(TaskCreateReq {
        pid: crate::pools::PIDS[0].to_string(),
        ttl: TTL,
        action: PromiseCreateReq {
            id: id.to_string(),
            timeout_at,
            param: Default::default(),
            tags: [(crate::pools::TARGET.to_string(), ADDRESS.to_string())].into(),
        },
    })
}

/// The tasks each claimant holds (a few of them), by claimant.
pub(crate) fn held<'a>(w: World<'a>) -> Vec<(&'a str, Vec<&'a str>)> {
    let mut held: Vec<(&str, Vec<&str>)> = Vec::new();
    let acquired =
        w.ix.in_state(TaskState::Acquired)
            .iter()
            .filter_map(|id| w.m.state.get_task(id))
            .take(LISTS * REFS);
    for t in acquired {
        let Some(pid) = t.pid.as_deref() else {
            continue;
        };
        match held.iter_mut().find(|(p, _)| *p == pid) {
            Some((_, ids)) if ids.len() < REFS => ids.push(&t.id),
            Some(_) => {}
            None => held.push((pid, vec![&t.id])),
        }
    }
    held
}

/// A heartbeat by `pid` naming `tasks` at their versions in `m`.
pub(crate) fn heartbeat(m: &Machine, pid: &str, tasks: &[&str], now: Time) -> Step {
    let tasks = tasks
        .iter()
        .map(|id| TaskRef {
            id: id.to_string(),
            version: m.state.get_task(id).map_or(0, |t| t.version),
        })
        .collect();
    Step {
        now,
        op: Op::Request(Request::TaskHeartbeat(TaskHeartbeatReq {
            pid: pid.to_string(),
            tasks,
        })),
    }
}

/// Whether `walk`, tried on `m` and undone with `step`, is well formed
/// step by step and its last step's branches and markers satisfy `wanted`.
pub(crate) fn reaches(
    m: &mut Machine,
    walk: &[Step],
    step: impl Fn(&mut Machine, &Step),
    wanted: impl Fn(&[model::branch::Branch]) -> bool,
) -> bool {
    let Some((last, before)) = walk.split_last() else {
        return false;
    };
    m.trial(|m| {
        for s in before {
            if crate::well_formed(s, m).is_err() {
                return false;
            }
            step(m, s);
        }
        crate::well_formed(last, m).is_ok() && wanted(&m.trial_hits(|m| step(m, last)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Index;
    use model::branch::Branch;
    use model::marker;
    use model::state::ServerConfig;

    const T0: u64 = 1_700_000_000_000;

    fn promise(id: &str, target: bool) -> PromiseCreateReq {
        PromiseCreateReq {
            id: id.into(),
            timeout_at: T0 + 600_000,
            param: Default::default(),
            tags: if target {
                [(crate::pools::TARGET.to_string(), "poll://any@w".to_string())].into()
            } else {
                Default::default()
            },
        }
    }

    fn task(pid: &str, id: &str) -> Request {
        Request::TaskCreate(TaskCreateReq {
            pid: pid.into(),
            ttl: 60_000,
            action: promise(id, true),
        })
    }

    fn marks(m: &mut Machine, walk: &[Step]) -> Vec<Branch> {
        for s in walk {
            crate::apply(m, s);
        }
        m.take_marks()
    }

    /// `a` has a pending task (created with a target, never acquired) and
    /// two awaiters that are not suspended: the walks are its list moved
    /// onto a claimed task's promise then fulfilled, or onto a timer then
    /// ticked; the tick at its deadline; its task acquired then fulfilled
    /// at the acquired version; its settle: each resumes none of the two.
    #[test]
    fn the_walks_of_an_awaited_promise_with_a_pending_task_acquire_it_before_the_fulfill() {
        let mut m = Machine::new(ServerConfig::default());
        m.apply(&Request::PromiseCreate(promise("a", true)), T0);
        for id in ["a.1", "a.2"] {
            m.apply(&task("p1", id), T0);
            let cb = PromiseRegisterCallbackReq {
                awaited: "a".into(),
                awaiter: id.into(),
            };
            m.apply(&Request::PromiseRegisterCallback(cb), T0);
        }
        m.take_marks();
        let ix = Index::of(&m);
        let walks = walks(World { m: &m, ix: &ix }, T0 + 1);
        let kinds: Vec<Vec<&str>> = walks
            .iter()
            .map(|w| {
                w.iter()
                    .map(|s| match &s.op {
                        Op::Request(r) => r.kind(),
                        Op::Tick => "tick",
                    })
                    .collect()
            })
            .collect();
        let moved = |create: &'static str, walk: &'static str| {
            [
                vec![create],
                vec!["promise.register_callback"; 2],
                vec![walk],
            ]
            .concat()
        };
        let want: Vec<Vec<&str>> = vec![
            moved("task.create", "task.fulfill"),
            moved("promise.create", "tick"),
            vec!["tick"],
            vec!["task.acquire", "task.fulfill"],
            vec!["promise.settle"],
            vec!["task.heartbeat"],
        ];
        assert_eq!(kinds, want);
        let none = [
            marker::TASK_FULFILL_AWAITERS_RESUMED_NONE,
            marker::PROMISE_TIMEOUT_AWAITERS_RESUMED_NONE,
            marker::PROMISE_TIMEOUT_AWAITERS_RESUMED_NONE,
            marker::TASK_FULFILL_AWAITERS_RESUMED_NONE,
            marker::PROMISE_SETTLE_AWAITERS_RESUMED_NONE,
        ];
        for (walk, want) in walks.iter().zip(none) {
            let mut m = m.clone();
            assert!(marks(&mut m, walk).contains(&want), "{walk:?}");
        }
        assert_eq!(walks[2][0].now, T0 + 600_000);
        assert_eq!(
            walks[1][3].now,
            T0 + 2,
            "the timer is due a millisecond later"
        );
    }

    /// Around acquired task `a`: `a.1` and `a.2` created claimed, `a`
    /// suspended on `a.1`, `a.2` its second awaiter. Every settlement of
    /// `a.1` then walks a mix at its site: the client's settle, the
    /// fulfill of its task, the tick at its deadline, and the list moved
    /// onto a timer or a claimed task.
    #[test]
    fn a_mix_of_awaiters_made_around_an_acquired_task_is_a_mix_at_every_site() {
        let mut m = Machine::new(ServerConfig::default());
        m.apply(&task("p2", "a"), T0);
        let made = mixed_awaiters(&m, "a", T0 + 1, "a.1", "a.2");
        assert_eq!(made.len(), 4);
        for s in &made {
            assert!(crate::well_formed(s, &m).is_ok(), "{s:?}");
            crate::apply(&mut m, s);
        }
        assert_eq!(m.state.get_task("a").unwrap().state, TaskState::Suspended);
        assert_eq!(m.state.get_promise("a.1").unwrap().callbacks.len(), 2);
        m.take_marks();
        let walks = settlements_of(&m, "a.1", T0 + 1, "a.3");
        let mix = [
            marker::TASK_FULFILL_AWAITERS_RESUMED_MIX,
            marker::PROMISE_TIMEOUT_AWAITERS_RESUMED_MIX,
            marker::PROMISE_TIMEOUT_AWAITERS_RESUMED_MIX,
            marker::TASK_FULFILL_AWAITERS_RESUMED_MIX,
            marker::PROMISE_SETTLE_AWAITERS_RESUMED_MIX,
        ];
        assert_eq!(walks.len(), mix.len(), "{walks:?}");
        for (walk, want) in walks.iter().zip(mix) {
            let mut m = m.clone();
            assert!(marks(&mut m, walk).contains(&want), "{walk:?}");
        }
    }

    /// No mix is made around a task that is not acquired, nor around one
    /// whose promise is not live a millisecond later; `q` is due before
    /// the task's promise, `t` after `q`.
    #[test]
    fn no_mix_is_made_around_a_task_not_acquired_or_past_its_deadline() {
        let mut m = Machine::new(ServerConfig::default());
        m.apply(&Request::PromiseCreate(promise("a", true)), T0);
        m.apply(&task("p1", "b"), T0);
        assert!(mixed_awaiters(&m, "a", T0, "a.1", "a.2").is_empty());
        assert!(mixed_awaiters(&m, "b", T0 + 599_999, "b.1", "b.2").is_empty());
        let made = mixed_awaiters(&m, "b", T0 + 599_998, "b.1", "b.2");
        let deadline = |i: usize| match &made[i].op {
            Op::Request(Request::TaskCreate(r)) => r.action.timeout_at,
            op => panic!("{op:?}"),
        };
        assert_eq!(deadline(0), T0 + 599_999, "q is due before b");
        assert!(deadline(1) > deadline(0), "t outlives q");
    }

    /// A claimant holding two tasks: one heartbeat names both at their
    /// versions and refreshes all of them.
    #[test]
    fn a_claimant_holding_two_tasks_is_walked_by_one_heartbeat_of_both() {
        let mut m = Machine::new(ServerConfig::default());
        m.apply(&task("p1", "a"), T0);
        m.apply(&task("p1", "b"), T0);
        m.apply(&task("p2", "c"), T0);
        m.take_marks();
        let ix = Index::of(&m);
        let walks = walks(World { m: &m, ix: &ix }, T0 + 1);
        assert_eq!(walks.len(), 1, "{walks:?}");
        let Op::Request(Request::TaskHeartbeat(h)) = &walks[0][0].op else {
            panic!("{walks:?}")
        };
        assert_eq!(h.pid, "p1");
        assert_eq!(h.tasks.len(), 2);
        assert!(marks(&mut m, &walks[0]).contains(&marker::TASK_HEARTBEAT_REFS_REFRESHED_ALL));
    }

    /// A walk whose first step is not well formed reaches nothing, and a
    /// walk tried is undone.
    #[test]
    fn a_walk_is_tried_step_by_step_and_undone() {
        let mut m = Machine::new(ServerConfig::default());
        m.apply(&Request::PromiseCreate(promise("a", false)), T0);
        let settle = |id: &str| Step {
            now: T0,
            op: Op::Request(Request::PromiseSettle(PromiseSettleReq {
                id: id.into(),
                state: PromiseState::Resolved,
                value: Default::default(),
            })),
        };
        let bad = Step {
            now: T0,
            op: Op::Request(Request::PromiseRegisterCallback(
                PromiseRegisterCallbackReq {
                    awaited: "a".into(),
                    awaiter: "a".into(),
                },
            )),
        };
        let step = |m: &mut Machine, s: &Step| {
            crate::apply(m, s);
        };
        let any = |h: &[Branch]| !h.is_empty();
        assert!(reaches(&mut m, &[settle("a")], step, any));
        assert!(!reaches(&mut m, &[bad, settle("a")], step, any));
        assert_eq!(
            m.state.get_promise("a").map(|p| p.state),
            Some(PromiseState::Pending)
        );
    }
}
