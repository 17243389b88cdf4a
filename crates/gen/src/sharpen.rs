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
//!   awaited promises the loop must read as "some settled").

use model::api::*;
use model::types::{PromiseState, TaskState, Time};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::index::window;
use crate::pools::{self, World, DELAY};
use crate::{well_formed, Op, Step};

/// Percent of new deadlines and delays put on an instant of `now` or soon.
const ON_NOW_PCT: u64 = 20;
/// Percent of steps about a deadline within a millisecond of `now`.
const NEAR_PCT: u64 = 50;
/// Percent of all-live suspends given a settled or expired awaited too.
const MIX_PCT: u64 = 40;

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
        Request::TaskSuspend(r) if rng.chance(MIX_PCT) => mixed(w, r, now, rng),
        _ => None,
    };
    match sharper {
        Some(s) if fits(w, &s, now) => s,
        _ => req,
    }
}

fn fits(w: World, r: &Request, now: Time) -> bool {
    let step = Step {
        now,
        op: Op::Request(r.clone()),
    };
    well_formed(&step, w.m).is_ok()
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
    if let Some(d) = r.tags.get_mut(DELAY) {
        let delay = instant(now, rng);
        *d = delay.to_string();
        r.timeout_at = r.timeout_at.max(delay.saturating_add(1_000));
    } else {
        r.timeout_at = soon(now, rng);
    }
}

/// A suspend awaiting only live promises, with a settled or expired one
/// of its origin added, if there is one.
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
    c.retain(|r| fits(w, r, now));
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
