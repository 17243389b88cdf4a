//! Validation probes: requests the spec accepts but a server's validation
//! may refuse. The Lean handlers take any request; the Rust server's 400
//! rules (`model::wire::validate`) refuse many, and the generator otherwise
//! keeps to them, so a server without those rules would never be tested
//! on such inputs. A probe breaks exactly one rule; whether the target
//! refuses it (the *validation* class) or accepts it (and is then held to
//! the spec on it) is for the runner to find out.
//!
//! | probe | the rule it breaks |
//! |---|---|
//! | a promise whose `resonate:target` is empty | invalid resonate:target address |
//! | a listener at an address no transport reads | invalid listener address |
//! | a `resonate:delay` without a target | resonate:delay requires a resonate:target tag |
//! | a callback whose awaiter is its own awaited | awaited and awaiter must be different promises |
//! | a callback across origins | awaiter and awaited must belong to the same origin |
//! | a suspend with no actions | actions must not be empty |
//! | a suspend awaiting another origin | awaited promises must belong to the task's origin |
//! | a heartbeat of no tasks | tasks must not be empty |
//! | an acquire with a zero lease | ttl must be a positive integer |
//! | a fence settling its own task's promise | action id must not equal the task id |
//! | a task created by an empty pid | process id is required |
//! | a schedule id with a `.` | schedule id must not contain '.' |

use model::api::*;
use model::state::{DELAY, TARGET};
use model::types::{PromiseState, Tags, TaskState, Time};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::pools::{self, World};
use crate::ranked::Minus;

/// One probe, if the state offers what it needs; every probe fails
/// `model::wire::validate` by construction.
pub(crate) fn probe(w: World, now: Time, rng: &mut TestRng) -> Option<Request> {
    let mut c: Vec<Request> = Vec::new();
    let origin =
        w.ix.origins()
            .first()
            .cloned()
            .unwrap_or_else(|| "q".into());
    let fresh = pools::fresh_child(w, &origin);
    let tags = |pairs: &[(&str, &str)]| -> Tags {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let create = |id: &str, tags: Tags| {
        Request::PromiseCreate(PromiseCreateReq {
            id: id.into(),
            timeout_at: now + 60_000,
            param: Default::default(),
            tags,
        })
    };
    c.push(create(&fresh, tags(&[(TARGET, "")])));
    c.push(create(&fresh, tags(&[(DELAY, &(now + 1000).to_string())])));
    c.push(Request::TaskCreate(TaskCreateReq {
        pid: String::new(),
        ttl: 10_000,
        action: PromiseCreateReq {
            id: fresh.clone(),
            timeout_at: now + 60_000,
            param: Default::default(),
            tags: tags(&[(TARGET, pools::LISTENERS[0])]),
        },
    }));
    c.push(Request::TaskHeartbeat(TaskHeartbeatReq {
        pid: pools::PIDS[0].into(),
        tasks: Vec::new(),
    }));
    c.push(Request::ScheduleCreate(ScheduleCreateReq {
        id: "s.1".into(),
        cron: "* * * * *".into(),
        promise_id: "{{.id}}.{{.timestamp}}".into(),
        promise_timeout: 60_000,
        promise_param: Default::default(),
        promise_tags: tags(&[(TARGET, pools::LISTENERS[0])]),
    }));
    let promises = w.ix.promises();
    if let Some(p) = rng.pick_id(&promises) {
        c.push(Request::PromiseRegisterListener(
            PromiseRegisterListenerReq {
                awaited: p.clone(),
                address: "nowhere".into(),
            },
        ));
        c.push(Request::PromiseRegisterCallback(
            PromiseRegisterCallbackReq {
                awaited: p.clone(),
                awaiter: p.clone(),
            },
        ));
    }
    let task = |id: &crate::index::Id| w.m.state.get_task(id).expect("indexed tasks exist");
    if let Some(t) = rng.pick_from(&w.ix.in_state(TaskState::Pending)).map(task) {
        c.push(Request::TaskAcquire(TaskAcquireReq {
            id: t.id.clone(),
            version: t.version,
            pid: pools::PIDS[0].into(),
            ttl: 0,
        }));
    }
    if let Some(t) = rng.pick_from(&w.ix.in_state(TaskState::Acquired)).map(task) {
        c.push(Request::TaskSuspend(TaskSuspendReq {
            id: t.id.clone(),
            version: t.version,
            actions: Vec::new(),
        }));
        c.push(Request::TaskFence(TaskFenceReq {
            id: t.id.clone(),
            version: t.version,
            action: TaskFenceAction::Settle(PromiseSettleReq {
                id: t.id.clone(),
                state: PromiseState::Resolved,
                value: Default::default(),
            }),
        }));
        let elsewhere = Minus::new(promises, &w.ix.origin(pools::origin(&t.id)).members);
        if let Some(p) = rng.pick_id(&elsewhere) {
            c.push(Request::TaskSuspend(TaskSuspendReq {
                id: t.id.clone(),
                version: t.version,
                actions: vec![PromiseRegisterCallbackReq {
                    awaited: p.clone(),
                    awaiter: t.id.clone(),
                }],
            }));
            c.push(Request::PromiseRegisterCallback(
                PromiseRegisterCallbackReq {
                    awaited: p.clone(),
                    awaiter: t.id.clone(),
                },
            ));
        }
    }
    rng.pick(&c).cloned()
}
