//! The steered cases' requests, sharpened toward the two bug shapes of
//! issue 17 ([`crate::Generator::sharpened`]; random cases never are, so
//! their traces stay what they were):
//!
//! - **boundaries**: a new promise's or task's deadline, or a new task's
//!   delay, now and then exactly at, one before or one past `now` (the
//!   creation's own comparison), or a few seconds ahead (so the later
//!   requests of the case meet it while it is near); and when a pending promise's deadline is within one
//!   millisecond of `now`, the request is often about it: every handler
//!   that compares that deadline with `now` (read, create again, settle,
//!   listen, callbacks on it and by its task, acquire, fence, heartbeat,
//!   suspend, fulfill, release), at the three instants an off-by-one
//!   turns on;
//! - **loop shapes**: a suspend that awaits only live promises now and
//!   then also awaits a settled or expired one of its origin (a mix of
//!   awaited promises the loop must read as "some settled"); a suspend or
//!   a callback now and then joins a pending promise another task already
//!   awaits, so the settlement's loop over its awaiters walks several,
//!   suspended and not (a settlement's awaiters come one registration at
//!   a time, and two on one promise are otherwise rare: 3 steps in 3,000
//!   of the default runs of seeds 1–3 held one); a heartbeat now and then
//!   names every task its claimant holds in an origin, and a suspend every
//!   awaited promise settled (the loops' "all" of several).

use model::api::*;
use model::types::{PromiseState, TaskState, Time};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::index::window;
use crate::pools::{self, World, DELAY};

/// Percent of new deadlines and delays put on an instant of `now` or soon.
const ON_NOW_PCT: u64 = 20;
/// Percent of steps about a deadline within a millisecond of `now`.
const NEAR_PCT: u64 = 50;
/// Percent of all-live suspends given a settled or expired awaited too.
const MIX_PCT: u64 = 40;
/// Percent of heartbeats naming every task their claimant holds in an
/// origin, and of mixed suspends awaiting only settled or expired ones.
const ALL_PCT: u64 = 30;
/// Percent of suspends (the rest of those not mixed: with [`MIX_PCT`],
/// every suspend of a steered case is sharpened one way or the other),
/// of callbacks, and of the steered steps that nothing near a deadline
/// claimed ([`join`]), that join a promise others await.
const JOIN_PCT: u64 = 60;

/// `req`, sharpened: see the module doc. Only a well-formed result replaces it.
pub(crate) fn sharpen(w: World, req: Request, now: Time, rng: &mut TestRng) -> Request {
    let sharper = match &req {
        Request::PromiseCreate(r) if w.m.state.get_promise(&r.id).is_none() => {
            rng.chance(ON_NOW_PCT).then(|| {
                let mut r = r.clone();
                on_now(&mut r, now, rng);
                Request::PromiseCreate(r)
            })
        }
        Request::TaskCreate(r) if w.m.state.get_promise(&r.action.id).is_none() => {
            rng.chance(ON_NOW_PCT).then(|| {
                let mut r = r.clone();
                r.action.timeout_at = soon(now, rng);
                Request::TaskCreate(r)
            })
        }
        Request::TaskSuspend(r) => match rng.below(100) {
            x if x < MIX_PCT => mixed(w, r, now, rng),
            x if x < MIX_PCT + JOIN_PCT => joined(w, r, rng),
            _ => None,
        },
        Request::PromiseRegisterCallback(r) if rng.chance(JOIN_PCT) => join_callback(w, r, rng),
        Request::TaskHeartbeat(r) if rng.chance(ALL_PCT) => held_by(w, r),
        _ => None,
    };
    match sharper {
        Some(s) if fits(w, &s) => s,
        _ => req,
    }
}

fn fits(w: World, r: &Request) -> bool {
    crate::rules::well_formed_request(r, w.m).is_ok()
}

/// `now`, one before it or one past it.
fn instant(now: Time, rng: &mut TestRng) -> Time {
    match rng.below(3) {
        0 => now,
        1 => now.saturating_add(1),
        _ => now.saturating_sub(1),
    }
}

/// A deadline on an instant of `now`, or (as often) a few seconds ahead:
/// the task or promise then lives, and the clock of a steered case
/// ([`crate::clock::advance_sharp`]) lands on its instants while the
/// requests that compare it still come.
fn soon(now: Time, rng: &mut TestRng) -> Time {
    if rng.chance(50) {
        instant(now, rng)
    } else {
        now.saturating_add(rng.range(200, 5_000))
    }
}

/// The creation's deadline on an instant of `now` or soon, or, for a delayed
/// task, its delay (its deadline kept after it).
fn on_now(r: &mut PromiseCreateReq, now: Time, rng: &mut TestRng) {
    if r.tags.contains_key(DELAY) {
        let delay = instant(now, rng);
        r.tags.insert(DELAY.into(), delay.to_string());
        r.timeout_at = r.timeout_at.max(delay.saturating_add(1_000));
    } else {
        r.timeout_at = soon(now, rng);
    }
}

/// A suspend awaiting only live promises, with a settled or expired one
/// of its origin added, if there is one; or (now and then, when there
/// are two) awaiting two settled or expired ones only, the loop's "all".
fn mixed(w: World, r: &TaskSuspendReq, now: Time, rng: &mut TestRng) -> Option<Request> {
    let live = |id: &str| w.m.state.get_promise(id).is_some_and(|p| p.is_live(now));
    if !r.actions.iter().all(|a| live(&a.awaited)) {
        return None;
    }
    let org = w.ix.origin(pools::origin(&r.id));
    let dead: Vec<&str> = org
        .members
        .iter()
        .map(|p| &**p)
        .filter(|p| *p != r.id && !live(p))
        .take(8)
        .collect();
    if dead.len() >= 2 && rng.chance(ALL_PCT) {
        // Every awaited promise settled or expired: the loop's "all".
        let at = rng.below(dead.len() as u64 - 1) as usize;
        let actions = dead[at..at + 2]
            .iter()
            .map(|p| PromiseRegisterCallbackReq {
                awaited: p.to_string(),
                awaiter: r.id.clone(),
            })
            .collect();
        return Some(Request::TaskSuspend(TaskSuspendReq {
            actions,
            ..r.clone()
        }));
    }
    let awaited = rng.pick(&dead)?.to_string();
    let mut actions = r.actions.clone();
    let at = rng.below(actions.len() as u64 + 1) as usize;
    actions.insert(
        at,
        PromiseRegisterCallbackReq {
            awaited,
            awaiter: r.id.clone(),
        },
    );
    Some(Request::TaskSuspend(TaskSuspendReq {
        actions,
        ..r.clone()
    }))
}

/// A heartbeat naming every task its claimant holds in the origin of its
/// first ref, at their versions (the loop's "all" when there are several).
fn held_by(w: World, r: &TaskHeartbeatReq) -> Option<Request> {
    let first = r.tasks.first()?;
    let org = w.ix.origin(pools::origin(&first.id));
    let held: Vec<TaskRef> = org
        .acquired
        .iter()
        .filter_map(|t| w.m.state.get_task(t))
        .filter(|t| t.pid.as_deref() == Some(r.pid.as_str()))
        .take(4)
        .map(|t| TaskRef {
            id: t.id.clone(),
            version: t.version,
        })
        .collect();
    if held.len() < 2 {
        return None;
    }
    Some(Request::TaskHeartbeat(TaskHeartbeatReq {
        pid: r.pid.clone(),
        tasks: held,
    }))
}

/// A pending promise of `origin` that others await, not `not`.
fn awaited_in<'a>(w: World<'a>, origin: &str, not: &str, rng: &mut TestRng) -> Option<&'a str> {
    let org = w.ix.origin(origin);
    let ids: Vec<&str> = org
        .awaited
        .iter()
        .map(|p| &**p)
        .filter(|p| *p != not)
        .take(8)
        .collect();
    rng.pick(&ids).copied()
}

/// A suspend that also awaits a pending promise of its origin another
/// task awaits (at a place of its list the dice choose).
fn joined(w: World, r: &TaskSuspendReq, rng: &mut TestRng) -> Option<Request> {
    let awaited = awaited_in(w, pools::origin(&r.id), &r.id, rng)?;
    if r.actions.iter().any(|a| a.awaited == awaited) {
        return None;
    }
    let mut actions = r.actions.clone();
    let at = rng.below(actions.len() as u64 + 1) as usize;
    actions.insert(
        at,
        PromiseRegisterCallbackReq {
            awaited: awaited.to_string(),
            awaiter: r.id.clone(),
        },
    );
    Some(Request::TaskSuspend(TaskSuspendReq {
        actions,
        ..r.clone()
    }))
}

/// The callback made on a pending promise of its awaiter's origin that
/// another task already awaits.
fn join_callback(w: World, r: &PromiseRegisterCallbackReq, rng: &mut TestRng) -> Option<Request> {
    let awaited = awaited_in(w, pools::origin(&r.awaiter), &r.awaiter, rng)?;
    let p = w.m.state.get_promise(awaited)?;
    if p.callbacks.contains(&r.awaiter) {
        return None;
    }
    Some(Request::PromiseRegisterCallback(
        PromiseRegisterCallbackReq {
            awaited: awaited.to_string(),
            awaiter: r.awaiter.clone(),
        },
    ))
}

/// A callback that joins a pending promise someone awaits, made by
/// another live task promise of its origin (one the spec registers: a
/// pending awaiter before its deadline), if there is one (and the dice
/// say so): a second awaiter, suspended or not, for the settlement's loop.
/// Asked for a steered step that nothing near a deadline claimed, so
/// while some promise is awaited it is a large share of a steered case's
/// requests ([`JOIN_PCT`] of those steps): the aimed step takes it only
/// when settling what it joins would reach something new.
pub(crate) fn join(w: World, now: Time, rng: &mut TestRng) -> Option<Request> {
    if !rng.chance(JOIN_PCT) {
        return None;
    }
    let x = rng.pick_from(&w.ix.awaited())?;
    let p = w.m.state.get_promise(x)?;
    let org = w.ix.origin(pools::origin(x));
    let awaiters: Vec<&str> = org
        .with_target
        .iter()
        .map(|a| &**a)
        .filter(|a| *a != p.id && !p.callbacks.iter().any(|c| c == a))
        .filter(|a| w.m.state.get_promise(a).is_some_and(|q| q.is_live(now)))
        .take(8)
        .collect();
    let awaiter = rng.pick(&awaiters)?;
    let r = Request::PromiseRegisterCallback(PromiseRegisterCallbackReq {
        awaited: x.to_string(),
        awaiter: awaiter.to_string(),
    });
    fits(w, &r).then_some(r)
}

/// A request about a pending promise whose deadline is `now`, one past it
/// or one ahead of it, if there is one (and the dice say so).
pub(crate) fn near(w: World, now: Time, rng: &mut TestRng) -> Option<Request> {
    if !rng.chance(NEAR_PCT) {
        return None;
    }
    let mut ids: Vec<&str> =
        w.ix.pending_within(now.saturating_sub(1), now.saturating_add(1))
            .map(|(_, id)| id)
            .collect();
    ids.sort_unstable();
    let id = *rng.pick(&ids)?;
    let p = w.m.state.get_promise(id)?;
    let mut c = Vec::new();
    crate::focus::about_promise(w, p, &mut c);
    by_its_task(w, p.id.as_str(), now, &mut c);
    c.retain(|r| fits(w, r));
    // A kind first, then one of its requests: the few a task asks (fence,
    // release, fulfill) weigh as much as the many callbacks on the promise.
    let mut kinds: Vec<&str> = c.iter().map(Request::kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let kind = *rng.pick(&kinds)?;
    let of_kind: Vec<&Request> = c.iter().filter(|r| r.kind() == kind).collect();
    rng.pick(&of_kind).map(|r| (*r).clone())
}

/// What the task of promise `id` may ask while its deadline is near: a
/// fence (settling a live sibling, or creating a child), a release, a
/// suspend on a live sibling, a callback on one as the awaiter.
fn by_its_task(w: World, id: &str, now: Time, c: &mut Vec<Request>) {
    let Some(t) = w.m.state.get_task(id) else {
        return;
    };
    let org = w.ix.origin(pools::origin(id));
    let sibling = window(&org.deadlines, now.saturating_add(1), Time::MAX)
        .map(|(_, p)| p)
        .find(|p| *p != id)
        .map(str::to_string);
    if let Some(s) = &sibling {
        c.push(Request::PromiseRegisterCallback(
            PromiseRegisterCallbackReq {
                awaited: s.clone(),
                awaiter: id.into(),
            },
        ));
    }
    if t.state != TaskState::Acquired {
        return;
    }
    let version = t.version;
    c.push(Request::TaskRelease(TaskReleaseReq {
        id: id.into(),
        version,
    }));
    c.push(Request::TaskFence(TaskFenceReq {
        id: id.into(),
        version,
        action: TaskFenceAction::Create(PromiseCreateReq {
            id: pools::fresh_child(w, pools::origin(id)),
            timeout_at: now.saturating_add(60_000),
            param: Default::default(),
            tags: Default::default(),
        }),
    }));
    if let Some(s) = sibling {
        c.push(Request::TaskFence(TaskFenceReq {
            id: id.into(),
            version,
            action: TaskFenceAction::Settle(PromiseSettleReq {
                id: s.clone(),
                state: PromiseState::Resolved,
                value: Default::default(),
            }),
        }));
        c.push(Request::TaskSuspend(TaskSuspendReq {
            id: id.into(),
            version,
            actions: vec![PromiseRegisterCallbackReq {
                awaited: s,
                awaiter: id.into(),
            }],
        }));
    }
}
