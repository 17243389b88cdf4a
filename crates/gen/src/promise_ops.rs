//! Choosing `promise.*` requests from the model state.
//!
//! Existing ids are preferred to new ones (a request on a missing id only
//! shows a 404); new promises vary in tags (none, target, timer, target with
//! a delay in the future or already elapsed) and in deadline (seconds,
//! minutes, already past), so every branch of P-02 is reachable.

use model::api::{
    PromiseCreateReq, PromiseGetReq, PromiseRegisterCallbackReq, PromiseRegisterListenerReq,
    PromiseSearchReq, PromiseSettleReq, Request,
};
use model::types::{PromiseState, Tags, Time};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::pools::{self, World, DELAY, TARGET, TIMER};
use crate::ranked::Skipping;

/// A new promise `id` with chosen tags and deadline. `with_target`:
/// `Some(true)` a target and no delay (a `task.create` action: the servers
/// refuse a delay there), `Some(false)` no target (plain or timer), `None`
/// any mix, delays included.
pub(crate) fn new_promise(
    w: World,
    rng: &mut TestRng,
    now: Time,
    id: String,
    with_target: Option<bool>,
) -> PromiseCreateReq {
    let origin = pools::origin(&id).to_string();
    let mut tags = Tags::new();
    let mut timeout_at = if with_target == Some(true) {
        pools::task_timeout_at(rng, now)
    } else {
        pools::timeout_at(rng, now)
    };
    // A child often has its root's deadline, as the SDKs give it (a child
    // never outlives its parent): deadlines coincide, and come due in one
    // tick.
    let root = (w.m.state)
        .get_promise(&origin)
        .filter(|r| r.id != id && pools::pending(r));
    if let Some(r) = root {
        if r.timeout_at > now && rng.chance(35) {
            timeout_at = r.timeout_at;
        }
    }
    let kind = match with_target {
        Some(true) => 1,
        Some(false) => *rng.pick(&[0, 0, 2]).expect("non-empty"),
        None => rng.weighted(&[(30, 0), (30, 1), (10, 2), (15, 3), (15, 4)]),
    };
    match kind {
        1 => {
            tags.insert(TARGET.into(), pools::target(rng, &origin));
        }
        2 => {
            tags.insert(TIMER.into(), "true".into());
        }
        3 => {
            // A delay (absolute, < timeoutAt) still ahead, or already past.
            tags.insert(TARGET.into(), pools::target(rng, &origin));
            let delay = if rng.chance(60) {
                now + rng.range(1, 20_000)
            } else {
                now.saturating_sub(rng.range(0, 2_000))
            };
            timeout_at = timeout_at.max(delay + rng.range(1_000, 30_000));
            tags.insert(DELAY.into(), delay.to_string());
        }
        4 => {
            tags.insert(TARGET.into(), pools::target(rng, &origin));
            tags.insert(TIMER.into(), "true".into());
        }
        _ => {}
    }
    PromiseCreateReq {
        id,
        timeout_at,
        param: pools::value(rng),
        tags,
    }
}

/// `promise.create`: an existing id (the idempotent branches) or a new root
/// or child.
pub(crate) fn create(w: World, rng: &mut TestRng, now: Time) -> Request {
    if rng.chance(20) {
        if let Some(id) = pools::existing(w, rng, 70) {
            return Request::PromiseCreate(new_promise(w, rng, now, id, None));
        }
    }
    let id = match rng.pick_from(&w.ix.origins()) {
        Some(o) if rng.chance(65) => pools::fresh_child(w, o),
        _ => pools::fresh_root(w),
    };
    Request::PromiseCreate(new_promise(w, rng, now, id, None))
}

/// An existing id (mostly pending), else a missing one.
fn existing_or_missing(w: World, rng: &mut TestRng) -> String {
    if rng.chance(88) {
        if let Some(id) = pools::existing(w, rng, 70) {
            return id;
        }
    }
    pools::fresh_root(w)
}

/// `promise.get`.
pub(crate) fn get(w: World, rng: &mut TestRng) -> Request {
    Request::PromiseGet(PromiseGetReq {
        id: existing_or_missing(w, rng),
    })
}

/// `promise.settle` with a client settlement state, preferring promises
/// someone awaits (the resume cascade).
pub(crate) fn settle(w: World, rng: &mut TestRng) -> Request {
    let id = match pools::awaited_first(w, rng, 70) {
        Some(id) if rng.chance(88) => id,
        _ => pools::fresh_root(w),
    };
    Request::PromiseSettle(PromiseSettleReq {
        id,
        state: pools::settle_state(rng),
        value: pools::value(rng),
    })
}

/// `promise.register_listener` on an existing (mostly pending) promise.
pub(crate) fn register_listener(w: World, rng: &mut TestRng) -> Request {
    Request::PromiseRegisterListener(PromiseRegisterListenerReq {
        awaited: existing_or_missing(w, rng),
        address: rng.pick(&pools::LISTENERS).expect("non-empty").to_string(),
    })
}

/// `promise.register_callback` within one origin: the awaiter mostly a
/// promise with a target (else one without: 422, or missing: 422), the
/// awaited another promise of the origin (mostly pending; missing: 404).
pub(crate) fn register_callback(w: World, rng: &mut TestRng) -> Request {
    // Mostly an origin with at least two promises, so both ends exist.
    let o = match rng.pick_from(&w.ix.pairs()) {
        Some(o) if rng.chance(85) => o.to_string(),
        _ => rng
            .pick_id(&w.ix.origins())
            .unwrap_or_else(|| pools::fresh_root(w)),
    };
    let org = w.ix.origin(&o);
    let fresh = pools::fresh_children(w, &o, 2);
    let awaiter = match rng.below(100) {
        0..=79 => rng.pick_id(&&org.with_target),
        80..=89 => rng.pick_id(&&org.members),
        _ => None,
    }
    .unwrap_or_else(|| fresh[0].clone());
    let others = Skipping::new(&org.members, [awaiter.as_str()]);
    let pending = Skipping::new(&org.pending, [awaiter.as_str()]);
    let awaited = match rng.below(100) {
        0..=74 => rng.pick_from(&pending).or_else(|| rng.pick_from(&others)),
        75..=91 => rng.pick_from(&others),
        _ => None,
    }
    .map(|id| id.to_string())
    .unwrap_or_else(|| {
        if fresh[0] == awaiter {
            fresh[1].clone()
        } else {
            fresh[0].clone()
        }
    });
    Request::PromiseRegisterCallback(PromiseRegisterCallbackReq { awaited, awaiter })
}

/// `promise.search` (501 in the spec).
pub(crate) fn search(rng: &mut TestRng) -> Request {
    let mut r = PromiseSearchReq::default();
    if rng.chance(50) {
        r.state = Some(PromiseState::Pending);
        r.limit = Some(rng.range(1, 20));
    }
    Request::PromiseSearch(r)
}
