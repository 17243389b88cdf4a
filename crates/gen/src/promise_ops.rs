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
use model::machine::Machine;
use model::state::PromiseObject;
use model::types::{PromiseState, Tags, Time};
use proptest::test_runner::TestRng;

use crate::dice::Dice;
use crate::pools::{self, DELAY, TARGET, TIMER};

/// A new promise `id` with chosen tags and deadline. `with_target`:
/// `Some(true)` a target and no delay (a `task.create` action: the servers
/// refuse a delay there), `Some(false)` no target (plain or timer), `None`
/// any mix, delays included.
pub(crate) fn new_promise(
    m: &Machine,
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
    let root = m
        .state
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
pub(crate) fn create(m: &Machine, rng: &mut TestRng, now: Time) -> Request {
    if rng.chance(20) {
        if let Some(id) = pools::existing(m, rng, 70) {
            return Request::PromiseCreate(new_promise(m, rng, now, id, None));
        }
    }
    let origins = pools::origins(m);
    let id = match rng.pick(&origins) {
        Some(o) if rng.chance(65) => pools::fresh_child(m, o),
        _ => pools::fresh_root(m),
    };
    Request::PromiseCreate(new_promise(m, rng, now, id, None))
}

/// An existing id (mostly pending), else a missing one.
fn existing_or_missing(m: &Machine, rng: &mut TestRng) -> String {
    if rng.chance(88) {
        if let Some(id) = pools::existing(m, rng, 70) {
            return id;
        }
    }
    pools::fresh_root(m)
}

/// `promise.get`.
pub(crate) fn get(m: &Machine, rng: &mut TestRng) -> Request {
    Request::PromiseGet(PromiseGetReq {
        id: existing_or_missing(m, rng),
    })
}

/// `promise.settle` with a client settlement state, preferring promises
/// someone awaits (the resume cascade).
pub(crate) fn settle(m: &Machine, rng: &mut TestRng) -> Request {
    let id = match pools::awaited_first(m, rng, 70) {
        Some(id) if rng.chance(88) => id,
        _ => pools::fresh_root(m),
    };
    Request::PromiseSettle(PromiseSettleReq {
        id,
        state: pools::settle_state(rng),
        value: pools::value(rng),
    })
}

/// `promise.register_listener` on an existing (mostly pending) promise.
pub(crate) fn register_listener(m: &Machine, rng: &mut TestRng) -> Request {
    Request::PromiseRegisterListener(PromiseRegisterListenerReq {
        awaited: existing_or_missing(m, rng),
        address: rng.pick(&pools::LISTENERS).expect("non-empty").to_string(),
    })
}

/// `promise.register_callback` within one origin: the awaiter mostly a
/// promise with a target (else one without: 422, or missing: 422), the
/// awaited another promise of the origin (mostly pending; missing: 404).
pub(crate) fn register_callback(m: &Machine, rng: &mut TestRng) -> Request {
    // Mostly an origin with at least two promises, so both ends exist.
    let origins = pools::origins(m);
    let pairs: Vec<&String> = origins
        .iter()
        .filter(|o| pools::in_origin(m, o).len() >= 2)
        .collect();
    let o = match rng.pick(&pairs) {
        Some(o) if rng.chance(85) => (*o).clone(),
        _ => rng
            .pick(&origins)
            .cloned()
            .unwrap_or_else(|| pools::fresh_root(m)),
    };
    let members = pools::in_origin(m, &o);
    let with_target: Vec<&PromiseObject> = members
        .iter()
        .copied()
        .filter(|p| p.tags.contains_key(TARGET))
        .collect();
    let fresh = pools::fresh_children(m, &o, 2);
    let awaiter = match rng.below(100) {
        0..=79 => rng.pick(&with_target).map(|p| p.id.clone()),
        80..=89 => rng.pick(&members).map(|p| p.id.clone()),
        _ => None,
    }
    .unwrap_or_else(|| fresh[0].clone());
    let others: Vec<&PromiseObject> = members
        .iter()
        .copied()
        .filter(|p| p.id != awaiter)
        .collect();
    let pending: Vec<&PromiseObject> = others
        .iter()
        .copied()
        .filter(|p| p.state == PromiseState::Pending)
        .collect();
    let awaited = match rng.below(100) {
        0..=74 => rng.pick(&pending).or_else(|| rng.pick(&others)),
        75..=91 => rng.pick(&others),
        _ => None,
    }
    .map(|p| p.id.clone())
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
